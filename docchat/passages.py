"""Pieces of a packed context: cached token counting, passages (whole sections or their
most relevant blocks) with page markers, and the compact outline of each document."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

from docchat import prompts
from ingest.document import Document, Section

logger = logging.getLogger(__name__)

_COUNTS: dict[tuple[str, str], int] = {}
_COUNTS_MAX = 200_000
OMITTED = "[…]"


class Counter:
    """The backend's count_tokens, cached per (tokenizer, text) across calls."""

    def __init__(self, backend, name: str) -> None:
        self.backend = backend
        self.name = name

    def text(self, text: str) -> int:
        if not text:
            return 0
        key = (self.name, text)
        n = _COUNTS.get(key)
        if n is None:
            if len(_COUNTS) >= _COUNTS_MAX:
                _COUNTS.clear()
            n = _COUNTS[key] = int(self.backend.count_tokens(text))
        return n

    def messages(self, messages: Sequence) -> int:
        """Estimate for messages inside a prompt: content plus a few tokens of framing."""
        return sum(self.text(m.content) + 6 for m in messages)


def page_marker(doc: Document, number: int) -> str:
    """"[p. 12]", or the printed page label where the document has one."""
    page = doc.page(number)
    return f"[{page.marker}]" if page is not None else f"[p. {number}]"


@dataclass(frozen=True)
class Passage:
    """A section, whole or as some of its blocks (kept whole, in order)."""
    doc: Document
    section: Section
    blocks: tuple[int, ...] | None = None  # indexes of the blocks kept; None: all
    rank: int = 0  # order of choice: higher ranks are dropped first

    @classmethod
    def whole(cls, doc: Document, section: Section, rank: int = 0) -> "Passage":
        return cls(doc, section, None, rank)

    @classmethod
    def partial(cls, doc: Document, section: Section, scores: Sequence[float], room: int,
                counter: Counter, rank: int = 0) -> "Passage | None":
        """The section's best-scoring blocks that fit in room tokens, or None."""
        order = sorted(range(len(section.blocks)), key=lambda k: (-scores[k], k))
        used = counter.text(_header(doc, section)) + 8
        kept: list[int] = []
        for k in order:
            if scores[k] < 0 or (scores[k] == 0 and kept):
                break
            c = counter.text(section.blocks[k].text) + 8
            if used + c <= room:
                kept.append(k)
                used += c
        if not kept:
            return None
        return cls(doc, section, tuple(sorted(kept)), rank)

    @property
    def complete(self) -> bool:
        return self.blocks is None or len(self.blocks) == len(self.section.blocks)

    @property
    def pages(self) -> list[int]:
        idx = range(len(self.section.blocks)) if self.blocks is None else self.blocks
        pages = [self.section.blocks[k].page for k in idx]
        return sorted(set(pages)) or [self.section.page_start]

    def render(self) -> str:
        """Heading with its page marker, then the blocks, with a marker where the page changes."""
        s = self.section
        lines = [_header(self.doc, s)] if s.heading_path else []
        page = s.blocks[self.blocks[0] if self.blocks else 0].page if s.blocks else s.page_start
        if not s.heading_path:
            lines.append(page_marker(self.doc, page))
        prev = -1
        for k in (range(len(s.blocks)) if self.blocks is None else self.blocks):
            b = s.blocks[k]
            if prev >= 0 and k != prev + 1:
                lines.append(OMITTED)
            elif self.blocks and prev < 0 and k > 0:
                lines.append(OMITTED)
            if b.page != page:
                page = b.page
                lines.append(page_marker(self.doc, page))
            lines.append(b.text)
            prev = k
        if self.blocks is not None and prev != len(s.blocks) - 1:
            lines.append(OMITTED)
        return "\n".join(lines)

    def cost(self, counter: Counter) -> int:
        """Tokens of the rendered passage (plus its separator)."""
        d, s = self.doc, self.section
        if self.blocks is None and s.tokens > 0 and d.tokenizer and d.tokenizer == counter.name:
            # Ingestion counted the body with this tokenizer: add only heading and markers.
            extra = sum(counter.text(page_marker(d, p)) + 1 for p in self.pages[1:])
            return s.tokens + counter.text(_header(d, s)) + extra + 2 * len(s.blocks) + 2
        return counter.text(self.render()) + 2


def _header(doc: Document, section: Section) -> str:
    if not section.heading_path:
        return ""
    return f"#### {section.heading} {page_marker(doc, section.page_start)}"


def render_passages(documents: Sequence[Document], ordered: Sequence[tuple[int, Passage]],
                    language: str = "en") -> str:
    """The excerpts block: passages in the given order as (document position, passage), a
    document header where the document changes and a gap marker where a section does not
    follow the one before it. Appending passages only appends text (no closing marker), so
    a follow-up that keeps the previous passages first shares the previous prompt's prefix."""
    chunks: list[str] = []
    prev_doc, prev_idx = None, None
    for i, p in ordered:
        if i != prev_doc:
            chunks.append(prompts.document_header(documents[i].name, language))
            prev_doc, prev_idx = i, None
        first = documents[i].sections[0].index if documents[i].sections else 0
        if (prev_idx is None and p.section.index != first) or (
                prev_idx is not None and p.section.index != prev_idx + 1):
            chunks.append(OMITTED)
        chunks.append(p.render())
        prev_idx = p.section.index
    return "\n\n".join(chunks)
