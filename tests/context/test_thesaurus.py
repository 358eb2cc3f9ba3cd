"""WordNet synonyms (docchat/context/thesaurus.py): a small WordNet folder written in the
package's own file format, read as /usr/share/wordnet is; the synonym query of
build_queries, and the passage it finds that the question's own words miss."""
from __future__ import annotations

from factories import titled_doc

from docchat.context import thesaurus
from docchat.context.relevance import relevance
from docchat.context.retrieval import build_queries

LICENCE = "  1 This software and database is being provided to you, the LICENSEE\n"


def write_wordnet(folder, senses: dict[str, list[tuple[str, list[str]]]]) -> None:
    """senses: pos -> [(lemma, [words of one sense]), ...], senses of a lemma in order."""
    tags = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
    for pos in thesaurus.POS:
        data = LICENCE
        index: dict[str, list[int]] = {}
        for lemma, words in senses.get(pos, []):
            offset = len(data.encode())
            body = " ".join(f"{w.replace(' ', '_')} 0" for w in words)
            data += f"{offset:08d} 29 {tags[pos]} {len(words):02x} {body} 000 | a gloss\n"
            for w in words:
                index.setdefault(w.replace(" ", "_"), []).append(offset)
            key = lemma.replace(" ", "_")
            if offset not in index.setdefault(key, []):
                index[key].append(offset)
        lines = [LICENCE] + [f"{w} {tags[pos]} {len(o)} 0 {len(o)} 0 "
                             + " ".join(f"{x:08d}" for x in o) + "\n"
                             for w, o in sorted(index.items())]
        (folder / f"data.{pos}").write_text(data)
        (folder / f"index.{pos}").write_text("".join(lines))
    (folder / "verb.exc").write_text("forbade forbid\nforbidden forbid\n")


def small_wordnet(tmp_path):
    write_wordnet(tmp_path, {
        "verb": [("forbid", ["forbid", "prohibit", "interdict", "disallow"]),
                 ("forbid", ["forbid", "foreclose", "preclude"]),
                 ("forbid", ["forbid", "ban"]),
                 ("squeeze", ["squeeze", "compress", "constrict", "crush"])],
        "noun": [("song", ["song", "vocal"]), ("box", ["box"]),
                 ("line break", ["line break", "newline"])],
    })
    return thesaurus.WordNet(tmp_path)


def test_senses_most_frequent_first_and_one_word_synonyms_only(tmp_path):
    net = small_wordnet(tmp_path)
    got = thesaurus.synonyms(["forbid", "song"], net=net)
    # the first two senses of "forbid" (not the third, "ban"), then those of "song"
    assert got == ["prohibit", "interdict", "disallow", "foreclose", "preclude", "vocal"]
    assert thesaurus.synonyms(["forbid"], senses=1, per_word=2, net=net) == ["prohibit",
                                                                             "interdict"]
    # a phrase ("line break") is no synonym; a word with one sense of its own has none
    assert thesaurus.synonyms(["box"], net=net) == []


def test_inflected_words_find_their_base_forms(tmp_path):
    net = small_wordnet(tmp_path)
    assert net.bases("forbade", "verb") == ["forbid"]  # verb.exc
    assert net.bases("squeezing", "verb") == ["squeeze"]  # morphy: -ing -> -e
    assert net.bases("songs", "noun") == ["song"]
    assert "compress" in thesaurus.synonyms(["squeezing"], net=net)
    # the words themselves and their base forms are never their own synonyms
    assert "forbid" not in thesaurus.synonyms(["forbade", "forbid"], net=net)


def test_without_wordnet_there_are_no_synonyms(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCCHAT_WORDNET", str(tmp_path / "missing"))
    assert thesaurus.wordnet() is None and not thesaurus.available()
    assert thesaurus.synonyms(["forbid"]) == []
    d = titled_doc("m.pdf", [("Bars", "Prohibit a break at a measure bar.")])
    assert len(build_queries("How do I forbid breaks?", (), [d], synonym_weight=0.5)) == 1


def test_synonym_query_only_when_asked_and_for_english_questions(tmp_path, monkeypatch):
    small_wordnet(tmp_path)
    monkeypatch.setenv("DOCCHAT_WORDNET", str(tmp_path))
    d = titled_doc("m.pdf", [("Bars", "Prohibit a break at a measure bar.")])
    plain = build_queries("How do I forbid breaks?", (), [d])
    assert [q.synonyms for q in plain] == [False]
    both = build_queries("How do I forbid breaks?", (), [d], synonym_weight=0.5)
    assert [q.synonyms for q in both] == [False, True]
    assert "prohibit" in both[1].text.split() and both[1].weight == 0.5
    assert "forbid" in both[1].text.split()  # the question's own words stay in it
    zh = build_queries("如何禁止换行？", (), [d], synonym_weight=0.5)
    assert not any(q.synonyms for q in zh)


def test_a_passage_in_other_words_is_found_by_its_synonyms(tmp_path, monkeypatch):
    small_wordnet(tmp_path)
    monkeypatch.setenv("DOCCHAT_WORDNET", str(tmp_path))
    d = titled_doc("m.pdf", [
        ("Spacing", "Notes are spaced by the basic unit; squeezing is done elsewhere."),
        ("Line breaks", "To prohibit a line break at a particular bar, use the command."),
        ("Titles", "The title goes at the top of the first page."),
    ])
    q = "How can I forbid one, then?"
    without = relevance([d], q, synonym_weight=0.0)
    with_syn = relevance([d], q, synonym_weight=0.5)
    key = next(iter(with_syn.sections))[0]
    assert (key, 1) not in without.sections  # no word of the question is in it
    best = max(with_syn.sections, key=with_syn.sections.get)
    assert (key, 1) in with_syn.sections and best == (key, 1)
    # the synonyms search, but they are not words the question asked for
    assert "prohibit" not in with_syn.terms
