"""A hit section too long to go in whole shows the blocks of its best window first (issue 22):
the window's score holds what the search found by meaning or by translated words, which the
block scores (the question's own words alone) miss; before, the blocks that shared the
question's words went in, and the window the search ranked was left out."""
from __future__ import annotations

from docchat.context.passages import TokenCounter
from docchat.context.policy import POLICY
from docchat.context.selection import select
from ingest.document import Block, Document, Page, Section
from tests.factories import Chars

WORDY = "The thesis option sets the full time mode of the student in the option list. "
PLAIN = "Leave the page layout to the class defaults unless the school asks otherwise. "
CODE = "\\DeclareBoolOption[true]{fulltime}"


def _doc() -> Document:
    blocks = [WORDY * 2] + [PLAIN * 2 for _ in range(6)] + [CODE, PLAIN] + [PLAIN * 2] * 3
    secs = [Section(0, ("1 Options",), 1, 1, 1, "prose",
                    tuple(Block("prose", t, 1) for t in blocks)),
            Section(1, ("2 Fonts",), 1, 2, 2, "prose", (Block("prose", PLAIN, 2),))]
    return Document(path="t.pdf", sha256="hitwin", name="t.pdf", kind="pdf", language="en",
                    pages=[Page(1, ""), Page(2, "")], sections=secs)


def test_a_partial_hit_starts_from_its_best_window():
    doc = _doc()
    counter = TokenCounter(Chars(), "chars")
    # The search ranked section 0 first and, within it, the window of blocks 7-8 (the
    # option's code: found by meaning); the question's words are in block 0 only.
    windows = [(0, 0, 7, 8, 2.0)]
    policy = POLICY.__class__(breadth_top=0)  # no window taken first: the fill alone
    chosen = select([doc], [{0: 3.0, 1: 0.1}], ["full", "time", "student", "option"], counter,
                    420, windows=windows, policy=policy)
    shown = next(p for p in chosen[0] if p.section.index == 0)
    assert shown.blocks is not None and 7 in shown.blocks
