"""Page markers in answers map to documents and physical pages."""
from __future__ import annotations

from docchat.context.citations import find_sources, from_dicts, to_dicts
from ingest.document import Document, Page


def doc(name: str, labels: list[str | None], doc_id: int) -> Document:
    pages = [Page(number=i + 1, text=f"{name} page {i + 1}", label=lab)
             for i, lab in enumerate(labels)]
    return Document(path=name, sha256=name, name=name, kind="pdf", pages=pages, sections=[],
                    page_labels=any(lab is not None for lab in labels), id=doc_id)


BOOK = doc("book.pdf", ["i", "ii", "1", "2", "3"], 1)
NOTES = doc("notes.txt", [None, None, None], 2)


def pages(sources):
    return [(s.doc_name, s.page, s.label) for s in sources]


def test_plain_number_and_roman_label():
    found = find_sources("See [p. 2] and the preface [p. ii].", [BOOK])
    assert pages(found) == [("book.pdf", 4, "2"), ("book.pdf", 2, "ii")]


def test_number_without_label_falls_back_to_physical_page():
    assert pages(find_sources("[p. 3]", [NOTES])) == [("notes.txt", 3, "3")]


def test_unknown_page_is_ignored():
    assert find_sources("[p. 99] and [p. xl]", [NOTES]) == []


def test_lists_ranges_and_repeats_are_unique_in_order():
    found = find_sources("[pp. 1-3] then [p. 2, p. 1] and [p. 3; 2]", [NOTES])
    assert pages(found) == [("notes.txt", 1, "1"), ("notes.txt", 2, "2"), ("notes.txt", 3, "3")]


def test_document_name_in_marker_picks_that_document():
    found = find_sources("A [notes.txt p. 1]; B [book.pdf, p. 1]; C [notes p. 2]", [BOOK, NOTES])
    assert pages(found) == [("notes.txt", 1, "1"), ("book.pdf", 3, "1"), ("notes.txt", 2, "2")]


def test_marker_without_name_points_to_every_document_with_that_page():
    found = find_sources("[p. 1]", [BOOK, NOTES])
    assert pages(found) == [("book.pdf", 3, "1"), ("notes.txt", 1, "1")]


def test_context_pages_disambiguate():
    found = find_sources("[p. 1]", [BOOK, NOTES], context_pages=[(2, 1), (2, 2)])
    assert pages(found) == [("notes.txt", 1, "1")]


def test_fullwidth_brackets_and_case():
    assert pages(find_sources("答案【P. 2】。", [NOTES])) == [("notes.txt", 2, "2")]


def test_prose_mentioning_a_page_in_brackets_is_not_a_citation_of_another_doc():
    assert find_sources("[see page 2]", [NOTES]) == []


def test_round_trip_through_dicts():
    found = find_sources("[p. ii]", [BOOK])
    assert from_dicts(to_dicts(found)) == found
