"""group_sections: whole sections per group, confirmed by the caller's exact count."""
from __future__ import annotations

from factories import Chars, blocks_doc, titled_doc

from docchat.context.passages import SUMMARY, Counter, Passage, page_marker, render_blocks
from docchat.summaries.grouping import group_sections, render_section
from ingest.document import Block, Document, Section


def _doc(n: int) -> Document:
    return titled_doc("x.md", [(f"S{i}", f"Body of section {i}.") for i in range(n)],
                      kind="markdown")


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
    assert render_section(doc, "H", blocks) == "## H\n\n[p. 1] a\n\nb\n\n[p. 2]\nc | d"


# --- the one renderer: both layouts, code fenced in both -------------------------------

def _code_doc() -> Document:
    blocks = [Block("prose", "Call it like this:", 1), Block("code", "frob(x)\n  return 1", 1),
              Block("prose", "Then check.", 2), Block("code", "```\nalready()\n```", 2)]
    return blocks_doc([blocks], labels={1: "iv"}, titles=["1 Usage"])


def test_question_and_summary_layouts_share_one_renderer_with_code_fenced():
    doc = _code_doc()
    s = doc.sections[0]
    question = Passage.whole(doc, s).render()
    assert question == ("#### 1 Usage [p. iv]\nCall it like this:\n```\nfrob(x)\n  return 1\n```"
                        "\n[p. 2]\nThen check.\n```\nalready()\n```")
    assert render_section(doc, s.heading, s.blocks) == (
        "## 1 Usage\n\n[p. iv] Call it like this:\n\n```\nfrob(x)\n  return 1\n```\n\n"
        "[p. 2] Then check.\n\n```\nalready()\n```")
    assert render_blocks(doc, s.heading, s.blocks, SUMMARY) == render_section(
        doc, s.heading, s.blocks)
    partial = Passage(doc, s, (1, 3)).render()
    assert partial == ("#### 1 Usage [p. iv]\n[…]\n```\nfrob(x)\n  return 1\n```\n[…]\n"
                       "[p. 2]\n```\nalready()\n```")
    assert page_marker(doc, 1) == "[p. iv]" and page_marker(doc, 9, bracketed=False) == "p. 9"


def test_the_fast_cost_of_a_whole_section_counts_the_fences():
    doc = _code_doc()
    doc.tokenizer = "chars"
    counter = Counter(Chars(), "chars")
    blocks = tuple(Block("code", f"f({k})", 1) for k in range(6))  # fences outweigh the slack
    s = Section(0, ("1 Usage",), 1, 1, 1, "code", blocks, tokens=counter.text(
        "\n\n".join(b.text for b in blocks)))
    doc.sections[0] = s
    passage = Passage.whole(doc, s)
    assert passage.cost(counter) >= counter.text(passage.render()) + 2
