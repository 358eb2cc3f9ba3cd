"""A question in British spelling finds a document in American spelling and the other way
round: the index stems "colour" and "color" apart (retrieval.spelling_variants)."""
from __future__ import annotations

import pytest

from docchat.context.relevance import relevance
from docchat.context.retrieval import build_queries, spelling_variants
from ingest.document import Block, Document, Page, Section

FILLER = "The package is loaded in the preamble and its options are given in brackets. "


def _section(i: int, path: tuple[str, ...], body: str) -> Section:
    return Section(i, path, len(path), i + 1, i + 1, "prose", (Block("prose", body, i + 1),))


def _doc(colour: str, licence: str) -> Document:
    bodies = [
        ("1 Frames", "The key frame sets the width of the line drawn around the box."),
        ("2 Backgrounds", f"The key bg sets the background {colour} of the box; any named "
                          f"{colour} works. " + FILLER * 2),
        ("3 Titles", "The key font sets the font of the title of the box."),
        ("4 Shadows", "The key shadow sets the shadow drawn below the box."),
        ("5 Terms of use", f"This software is free under a {licence} of its own."),
    ]
    secs = [_section(i, (title,), body) for i, (title, body) in enumerate(bodies)]
    return Document(path="boxes.pdf", sha256=colour, name="boxes.pdf", kind="pdf",
                    language="en", pages=[Page(i + 1, "") for i in range(len(secs))],
                    sections=secs)


def _first(doc: Document, question: str) -> int:
    rel = relevance([doc], question)
    return max(rel.sections.items(), key=lambda kv: kv[1])[0][1]


@pytest.mark.parametrize("doc_words,question,expected", [
    (("color", "license"), "Which key sets the colour of the box?", 1),
    (("colour", "licence"), "Which key sets the color of the box?", 1),
    (("color", "license"), "Which licence covers the box package?", 4),
    (("colour", "licence"), "Which license covers the box package?", 4),
])
def test_either_spelling_finds_the_other(doc_words, question, expected):
    assert _first(_doc(*doc_words), question) == expected


def test_without_the_variants_the_other_spelling_is_not_found(monkeypatch):
    """The case the variants are for: without them a British question misses."""
    import docchat.context.retrieval as R
    monkeypatch.setattr(R, "spelling_variants", lambda words: [])
    doc = _doc("color", "license")
    assert _first(doc, "Which key sets the colour of the box?") != 1
    assert _first(doc, "Which licence covers the box package?") != 4


def test_variants_both_ways_and_not_for_other_words():
    assert spelling_variants(["colour", "behaviours", "licence", "organised", "centre",
                              "catalogue", "analyse"]) == [
        "color", "behaviors", "license", "organized", "center", "catalog", "analyze"]
    assert spelling_variants(["color", "license", "organize", "catalog"]) == [
        "colour", "licence", "organise", "catalogue"]
    # Short, non-ASCII, already present, or nothing to turn.
    assert spelling_variants(["hour", "your", "颜色", "analysis", "raise", "box"]) == []
    assert spelling_variants(["color", "colour"]) == []
    # They join the query after the question's own words.
    assert build_queries("What colour is the frame?")[0].text.split()[-1] == "color"
