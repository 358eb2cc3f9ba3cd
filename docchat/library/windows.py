"""Windows: the passage unit that the store indexes and retrieval ranks."""
from __future__ import annotations

from dataclasses import dataclass

from ingest.document import Section

# Windows: runs of consecutive blocks of one section of about WINDOW_CHARS characters (a
# Chinese character counts twice: it carries about a word), the unit that passage-level
# search ranks. Searching windows finds the paragraph that answers a question inside a long
# section whose whole-section score is diluted by its other topics.
WINDOW_CHARS = 600


def _weight(text: str) -> int:
    return len(text) + sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")


def section_windows(section: Section) -> list[tuple[int, int]]:
    """(first block, last block) of each window of a section, in order, covering every
    block once; a block longer than a window is a window of its own."""
    out: list[tuple[int, int]] = []
    start, size = 0, 0
    for k, b in enumerate(section.blocks):
        w = _weight(b.text)
        if k > start and size + w > WINDOW_CHARS:
            out.append((start, k - 1))
            start, size = k, 0
        size += w
    if section.blocks:
        out.append((start, len(section.blocks) - 1))
    return out


def window_text(section: Section, first: int, last: int) -> str:
    return "\n\n".join(b.text for b in section.blocks[first:last + 1])


@dataclass(frozen=True)
class WindowHit:
    doc_id: object
    section: int  # Section.index
    first: int  # first block of the window
    last: int  # last block (inclusive)
    score: float  # higher is better
