"""group_sections: whole sections per group, confirmed by the caller's exact count."""
from __future__ import annotations

from docchat.grouping import group_sections, render_passages
from ingest.document import Block, Document, Page, Section


def _doc(n: int) -> Document:
    return Document(
        path="x.md", sha256="0" * 64, name="x.md", kind="markdown",
        pages=[Page(i + 1, "t") for i in range(n)],
        sections=[Section(i, (f"S{i}",), 1, i + 1, i + 1, "prose",
                          (Block("prose", f"Body of section {i}.", i + 1),)) for i in range(n)])


def _words(text: str) -> int:
    return len(text.split())


def test_groups_keep_order_and_cover_every_section_once():
    doc = _doc(10)
    groups = group_sections(doc, room=40, count=_words, fits=lambda g: True)
    assert [i for g in groups for i in g.sections] == list(range(10))
    assert len(groups) > 1 and groups[0].pages.startswith("p. 1")


def test_a_group_the_exact_count_rejects_is_halved_until_it_fits():
    doc = _doc(8)
    checked = []

    def fits(group):  # an exact count that disagrees with the running estimate
        checked.append(group.sections)
        return len(group.sections) <= 2

    groups = group_sections(doc, room=1000, count=_words, fits=fits)
    assert [g.sections for g in groups] == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert checked[0] == tuple(range(8))


def test_markers_only_where_the_page_changes():
    doc = _doc(2)
    blocks = [Block("prose", "a", 1), Block("prose", "b", 1), Block("table", "c | d", 2)]
    assert render_passages(doc, "H", blocks) == "## H\n\n[p. 1] a\n\nb\n\n[p. 2]\nc | d"
