"""A question that names a release or a section by its dotted number ("rsync 3.4.0", "section
4.2") finds the sections under the heading that carries it: the index splits 3.4.0 into 3, 4
and 0, words every release's notes share (relevance.add_numbered)."""
from __future__ import annotations

from docchat.backends import Message
from docchat.context.relevance import add_numbered, numbered_groups, numbered_text, relevance
from docchat.context.retrieval import doc_key, dotted_numbers
from ingest.document import Block, Document, Page, Section

FILLER = ("Thanks to everyone who tested the release candidates and sent patches; the "
          "tarball is signed with the usual key. ")


def _section(i: int, path: tuple[str, ...], body: str) -> Section:
    return Section(i, path, len(path), i + 1, i + 1, "prose", (Block("prose", body, i + 1),))


def _notes() -> Document:
    """Release notes: each release a heading with its number and date, then the same
    subsection titles. Newer releases fix more bugs, so their bug-fix sections say "fixed"
    and "bug" more often than 3.4.0's does."""
    secs: list[Section] = []
    releases = [("3.5.0", 6), ("3.4.1", 5), ("3.4.0", 1), ("3.3.0", 4), ("2.10.0", 3)]
    for number, bugs in releases:
        head = f"NEWS for tool {number} (release {len(secs) + 7} of the 2.x and 3.x line)"
        secs.append(_section(len(secs), (head,), ""))
        secs.append(_section(len(secs), (head, "BUG FIXES:"), " ".join(
            f"Fixed a bug where the receiver crashed on input {k} of the 3.0 protocol."
            for k in range(bugs)) + " " + FILLER))
        secs.append(_section(len(secs), (head, "ENHANCEMENTS:"),
                             "Added an option to compress the file list. " + FILLER))
    return Document(path="NEWS.md", sha256="news", name="NEWS.md", kind="markdown",
                    language="en", pages=[Page(i + 1, "") for i in range(len(secs))],
                    sections=secs)


QUESTION = "Which bugs were fixed in tool 3.4.0?"


def _ranked(doc: Document, question: str) -> list[int]:
    rel = relevance([doc], question)
    return [idx for (_, idx), _ in sorted(rel.sections.items(), key=lambda kv: -kv[1])]


def test_the_release_the_question_numbers_ranks_first():
    doc = _notes()
    assert _ranked(doc, QUESTION)[0] == 7  # 3.4.0's bug fixes, not 3.5.0's longer list
    # Its windows lead too: a passage of 3.4.0's notes, not of the releases around it.
    rel = relevance([doc], QUESTION)
    best = max(rel.windows.items(), key=lambda kv: kv[1])[0]
    assert best[1] in (6, 7, 8)


def test_without_the_number_the_longer_bug_list_wins(monkeypatch):
    """The case the boost is for: with it off, a release with more fixes ranks first."""
    import docchat.context.relevance as R
    monkeypatch.setattr(R, "NUMBER_WEIGHT", 0.0)
    assert _ranked(_notes(), QUESTION)[0] != 7


def test_a_follow_up_keeps_the_release_of_the_turn_before():
    """"And which bugs did it fix?" after a question about 3.4.0 is about 3.4.0's notes."""
    doc = _notes()
    history = [Message("user", "What came with tool 3.4.0?"),
               Message("assistant", "An option to compress the file list.")]
    rel = relevance([doc], "And which bugs were fixed?", history)
    ranked = [idx for (_, idx), _ in sorted(rel.sections.items(), key=lambda kv: -kv[1])]
    assert ranked[0] == 7
    assert numbered_text("And which bugs were fixed?", history) == history[0].content
    # Its own number wins; none anywhere, none.
    assert numbered_text("And in 3.5.0?", history) == "And in 3.5.0?"
    assert numbered_text("And which bugs were fixed?", history[1:]) == ""


def test_dotted_numbers_whole_not_parts():
    assert dotted_numbers("rsync 3.5.0 (13 Aug 2026)") == {"3.5.0"}
    assert dotted_numbers("第3.2节里说了什么？v2.1 呢") == {"3.2", "2.1"}
    assert dotted_numbers("Section 4.2. Scope") == {"4.2"}
    assert dotted_numbers("version 3 of 12 pages") == set()
    assert dotted_numbers("a3.2 or 3.2b") == set()  # part of a word or a name


def test_groups_are_the_sections_under_the_numbered_heading():
    doc = _notes()
    groups = numbered_groups(doc, {"3.4.0"})
    assert list(groups.values()) == [[6, 7, 8]]
    # "2.10" is not "2.10.0", and "3.0" in a body is no heading.
    assert numbered_groups(doc, {"2.10"}) == {}
    assert numbered_groups(doc, {"3.0"}) == {}


def test_the_gain_is_shared_and_only_for_scored_units():
    doc = _notes()
    key = doc_key(doc, 0)
    fused = {(key, i): 1.0 for i in range(9)}  # 3.4.0's last section (8) is scored, 9+ not
    windows = {(key, 7, 0, 0): 2.0, (key, 1, 0, 0): 1.0}
    out, wins = add_numbered("What changed in 3.4.0 and 3.3.0?", [doc], [key], fused, windows,
                             weight=0.5)
    assert out[(key, 7)] == 1.25  # two numbered headings share 0.5 x the best score
    assert out[(key, 1)] == 1.0 and (key, 10) not in out
    assert wins[(key, 7, 0, 0)] == 2.5 and wins[(key, 1, 0, 0)] == 1.0
    # A question with no dotted number changes nothing.
    same, = add_numbered("What changed lately?", [doc], [key], fused)
    assert same is fused


def test_the_evidence_shown_first_is_the_numbered_release():
    """The sentences put on screen before the answer: 3.4.0's notes first, though none of
    their sentences shares a word with the question and 3.5.0's do."""
    from docchat.context.evidence import find_evidence

    doc = _notes()
    packed = [(doc_key(doc, 0), i) for i in (1, 2, 7, 8)]  # 3.5.0's and 3.4.0's sections
    question = "What bugs did tool 3.4.0 fix in the receiver?"
    shown = find_evidence([doc], packed, question)
    assert shown[0].section == 7
    assert shown[0].sentences[0].text.startswith("Fixed a bug where the receiver")
    # 3.4.0's enhancements share no word with the question: shown for the number alone,
    # their opening sentences.
    assert 8 in [e.section for e in shown]
    assert [e.section for e in find_evidence([doc], packed, "What bugs did tool fix?")][0] == 1
