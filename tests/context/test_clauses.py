"""Clauses of a statement and its support, and the facts compared within aligned clauses."""
from __future__ import annotations

from docchat.context import clauses, facts
from docchat.context.retrieval import index_terms

STOP = frozenset(index_terms(" ".join(facts.FUNCTION_WORDS)))


def words(text: str) -> list[str]:
    return [t for t in index_terms(text) if t not in STOP]


def split(text: str, **kw):
    return clauses.split(text, words, **kw)


def test_clauses_and_the_words_a_negation_governs():
    (used,) = split("X is used, not Y.")  # "not Y" is too short a clause of its own
    # "not" governs Y only (the comma ends the words it governs) ...
    assert [s[0] for s in used.scopes] == [("y",)]
    # ... and here the verb phrase, modal verbs left out.
    (frame,) = split("The frame will not be automatically broken up")
    assert frame.scopes[0][0][:2] == ("automat", "broken")
    assert [c.text for c in split("The lid is red, but the box is blue and the cord is "
                                  "green")] == ["The lid is red", "but the box is blue",
                                                "and the cord is green"]
    # Cue words are no words of the clause; Chinese cues end where their words begin.
    assert "cannot" not in split("Users cannot delete shared folders")[0].terms
    (zh,) = split("用户不可以用布尔值函数测试")
    assert zh.scopes[0][2] == "不可以" and "以用" not in zh.terms


def test_numbers_keep_their_unit_and_what_they_count():
    (c,) = split("Pay within 30 days, 10x faster, 25 percent")[:1]
    assert [(n.value, n.unit, n.said) for n in c.numbers] == [("30", "", "30 days")]
    nums = [n for x in split("Pay within 30 days, and it is 10x faster") for n in x.numbers]
    assert [(n.value, n.unit, n.role) for n in nums] == [("30", "", "dai"), ("10", "x", "")]
    (zh,) = split("每6小时运行一次")
    assert zh.numbers[0].said == "6小时"


def compare(statement: str, support: str):
    known = facts.names(support)  # words that open a sentence count as names if these
    mine = split(statement, groups=lambda p: [[w] for w in words(p)], known=known)
    theirs = [c for k, s in enumerate(support.split(". "))
              for c in split(s, sentence=k, known=known)]
    return clauses.compare(mine, theirs, lambda t: 1.0)


def test_conflicts_within_aligned_clauses():
    assert compare("X is used", "X is used, not Y").conflict is None
    got = compare("Y is used", "X is used, not Y").conflict
    assert (got.kind, got.says) == ("negation", "not Y")
    got = compare("The tenant pays 20 euros, and the landlord pays 10 euros",
                  "The tenant pays 10 euros, and the landlord pays 20 euros")
    assert got.conflict.kind == "number" and got.conflict.mine == "20"
    assert got.conflict.says == "10 euros"
    got = compare("Use Debian commit messages to make the Git changelog",
                  "Use Git commit messages to make the Debian changelog")
    assert got.conflict.kind == "name" and got.conflict.says == "Git"
    # A list in another order is no conflict.
    assert compare("Linux and Windows are supported", "Windows and Linux are supported"
                   ).conflict is None


def test_unaligned_clauses_and_far_facts():
    got = compare("X is used, and the vendor ships it daily", "X is used, not Y")
    assert got.conflict is None and got.unaligned == ["and the vendor ships it daily"]
    got = compare("Lines are plotted by Octave", "Lines are plotted by the function. "
                  "The function is fast. It is written in Octave")
    assert got.conflict is None and got.far_names == ["Octave"]
