"""A printed table of contents or an index is navigation, not evidence (issue 22): the outline
every prompt carries already gives the structure, so its blocks rank low as passages
(selection.contents_blocks, policy.contents_weight), while a change log whose entries end
with page references, and ordinary prose, keep their scores."""
from __future__ import annotations

from docchat.context.passages import TokenCounter
from docchat.context.policy import POLICY
from docchat.context.retrieval import doc_key
from docchat.context.selection import contents_blocks, positions, select, window_positions
from ingest.document import Document
from tests.factories import Chars, prose_doc

TOC = "\n".join(f"{k}.{j} {title} . . . . . . . . . . . . {10 * k + j}"
                for k, title in enumerate(["Printer queues", "Font setup", "Mail delivery"], 1)
                for j in range(1, 5))
INDEX = "\n".join(f"\\{name} . . . . . . {k * 7}" for k, name in
                  enumerate(["printerqueue", "fontsetup", "maildelivery", "spoolfolder",
                             "queuename", "fontpath", "mailhost", "relayhost"], 1))
CHANGES = "\n".join(f"v1.{k}: printer queues now drained on stop . . . . . . {k + 3}"
                    for k in range(8))
BODY = ("Printer queues are configured in the spool folder: each queue has a name, a device "
        "and a filter, and the administrator drains a queue before the printer is removed.")


def _doc() -> Document:
    return prose_doc([("Contents", [TOC]), ("1 Printer queues", [BODY, BODY]),
                      ("2 Fonts", [BODY]), ("Change history", [CHANGES]), ("Index", [INDEX])],
                     sha256="toc")


def test_contents_and_index_blocks_are_found_but_not_a_change_log_or_prose():
    assert contents_blocks(_doc()) == frozenset({(0, 0), (4, 0)})


def test_contents_rank_below_the_sections_they_list():
    doc = _doc()
    key = doc_key(doc, 0)
    got = positions([doc], {(key, 0): 2.0, (key, 1): 1.0, (key, 3): 1.5})[0]
    assert got[0] == 2.0 * POLICY.contents_weight < got[1] == 1.0
    assert got[3] == 1.5  # the change log keeps its score
    windows = window_positions([doc], {(key, 0, 0, 0): 2.0, (key, 1, 0, 1): 1.0})
    assert windows[0][:2] == (0, 1)
    assert POLICY.contents_weight < 0.5


def test_a_small_budget_holds_the_section_not_its_contents_line():
    """The contents scored best (it repeats every title the question names): the packed
    passages hold the section the question is about instead."""
    doc = _doc()
    key = doc_key(doc, 0)
    pos = positions([doc], {(key, 0): 2.0, (key, 1): 1.2, (key, 2): 0.3})
    counter = TokenCounter(Chars(), "chars")
    chosen = select([doc], pos, ["printer", "queues"], counter, 700, policy=POLICY)
    assert [p.section.index for p in chosen[0]][:1] == [1]
    assert all(p.section.index != 0 for p in chosen[0])
