"""Passages for summaries: sections rendered with [p. N] markers, grouped to fit a prompt.

A group holds whole sections; a section too big for one prompt is split between whole
blocks, so a code block or table is never cut unless it alone exceeds a prompt.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Callable, Sequence

from docchat.context.passages import SUMMARY, page_marker, render_blocks
from ingest.document import Block, Document

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Group:
    """Consecutive passages (whole sections, or whole blocks of one big section)."""
    text: str  # rendered passages with [p. N] markers
    sections: tuple[int, ...]  # Section.index of every section it touches
    pages: str  # page range for the prompt, e.g. "p. 3–p. 7"


def render_section(doc: Document, heading: str, blocks: Sequence[Block]) -> str:
    """Heading, then the blocks with a [p. N] marker wherever the page changes (the summary
    layout of passages.render_blocks)."""
    return render_blocks(doc, heading, blocks, SUMMARY)


def _split_block(block: Block, limit: int, count: Callable[[str], int]) -> list[Block]:
    """Cut one block bigger than a whole prompt between lines (or sentences).

    Only reached when a single block exceeds the entire passage budget: a code block or
    table that big cannot be kept whole, so it is cut between its lines.
    """
    text = block.text.strip()
    if block.kind == "code" and text.startswith("```"):
        text = "\n".join(text.splitlines()[1:-1])
    pieces: list[str] = []
    for piece in (text.splitlines() if "\n" in text
                  else re.split(r"(?<=[.!?。！？；;])\s*", text)):
        n = -(-count(piece) // limit)
        if n <= 1:
            pieces.append(piece)
        else:  # one enormous line: cut it by characters
            step = -(-len(piece) // (n + 1))
            pieces += [piece[i:i + step] for i in range(0, len(piece), step)]
    chunks: list[list[str]] = [[]]
    used = 0
    for piece in pieces:
        tokens = count(piece) + 1
        if chunks[-1] and used + tokens > limit:
            chunks.append([])
            used = 0
        chunks[-1].append(piece)
        used += tokens
    logger.warning("a %s block on page %d is bigger than a whole prompt; cut into %d pieces",
                   block.kind, block.page, len(chunks))
    return [Block(block.kind, "\n".join(c), block.page) for c in chunks if "".join(c).strip()]


@dataclass(frozen=True)
class _Unit:
    text: str
    tokens: int
    section: int
    first_page: int
    last_page: int


def _units(doc: Document, limit: int, count: Callable[[str], int]) -> list[_Unit]:
    """Whole sections; a section over limit becomes runs of whole blocks under it."""
    units: list[_Unit] = []

    def add(section: int, heading: str, blocks: list[Block]) -> None:
        text = render_section(doc, heading, blocks)
        units.append(_Unit(text, count(text), section, blocks[0].page, blocks[-1].page))

    sections = doc.sections or []
    for s in sections:
        blocks = [b for b in s.blocks if b.text.strip()]
        if not blocks:
            continue
        if count(render_section(doc, s.heading, blocks)) <= limit:
            add(s.index, s.heading, blocks)
            continue
        small: list[Block] = []
        for b in blocks:
            if count(render_section(doc, s.heading + " (continued)", [b])) > limit:
                small += _split_block(b, limit * 3 // 4, count)
            else:
                small.append(b)
        heading, run, used = s.heading, [], count(s.heading) + 8
        for b in small:
            tokens = count(b.text) + 8  # the marker and the blank line
            if run and used + tokens > limit:
                add(s.index, heading, run)
                heading = f"{s.heading} (continued)".strip()
                run, used = [], count(heading) + 8
            run.append(b)
            used += tokens
        add(s.index, heading, run)
    if not units:  # a document without sections: go page by page
        for p in doc.pages:
            if p.text.strip():
                for b in _split_block(Block("prose", p.text, p.number), limit * 3 // 4, count):
                    add(0, "", [b])
    return units


def _group(doc: Document, units: Sequence[_Unit]) -> Group:
    first, last = units[0].first_page, units[-1].last_page
    pages = page_marker(doc, first, False) + (
        f"–{page_marker(doc, last, False)}" if last != first else "")
    return Group(text="\n\n".join(u.text for u in units),
                 sections=tuple(dict.fromkeys(u.section for u in units)), pages=pages)


def group_sections(doc: Document, room: int, count: Callable[[str], int],
                   fits: Callable[[Group], bool]) -> list[Group]:
    """Consecutive groups of passages of about room tokens each; fits(group) confirms."""
    runs: list[list[_Unit]] = [[]]
    used = 0
    for unit in _units(doc, room, count):
        if runs[-1] and used + unit.tokens + 2 > room:
            runs.append([])
            used = 0
        runs[-1].append(unit)
        used += unit.tokens + 2

    groups: list[Group] = []
    for run in runs:
        if run:
            groups += _confirmed(doc, run, fits)
    return groups


def _confirmed(doc: Document, units: list[_Unit], fits) -> list[Group]:
    """The estimate adds up pieces; check with the backend's count, halving on overflow."""
    group = _group(doc, units)
    if len(units) == 1 or fits(group):
        return [group]
    half = len(units) // 2
    return _confirmed(doc, units[:half], fits) + _confirmed(doc, units[half:], fits)
