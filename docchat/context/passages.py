"""Pieces of a packed context: cached token counting, passages (whole sections or their
most relevant blocks) with page markers, and the compact outline of each document."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

from docchat.context import prompts
from ingest.document import Block, Document, Page, Section

logger = logging.getLogger(__name__)

_COUNTS: dict[tuple[str, str], int] = {}
_COUNTS_MAX = 200_000
OMITTED = "[…]"


class TokenCounter:
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


# The name this class had before; tests/summaries/test_grouping.py still imports it.
Counter = TokenCounter

FENCE = "```"


def page_marker(doc: Document, number: int, bracketed: bool = True) -> str:
    """"[p. 12]", or the printed page label where the document has one ("[p. xii]");
    unbracketed ("p. 12") for page ranges. The only page-marker helper of prompts."""
    page = doc.page(number) or Page(number, "")
    return f"[{page.marker}]" if bracketed else page.marker


@dataclass(frozen=True)
class Layout:
    """How a section is laid out in a prompt: the only differences between the sections of
    question prompts (QUESTION) and of summary prompts (SUMMARY)."""
    heading: str  # what starts the heading line: "####" or "##"
    heading_marker: bool  # the heading line ends with the section's first page marker
    joiner: str  # between the lines of a section ("\n") or its paragraphs ("\n\n")
    inline_markers: bool  # a marker starts a prose block's first line (on its own line: False)
    trim: bool  # strip each block's surrounding whitespace (False keeps code's indentation)


QUESTION = Layout("####", heading_marker=True, joiner="\n", inline_markers=False, trim=False)
SUMMARY = Layout("##", heading_marker=False, joiner="\n\n", inline_markers=True, trim=True)


def _fenced(block: Block) -> bool:
    return block.kind == "code" and not block.text.lstrip().startswith(FENCE)


def block_text(block: Block, trim: bool = False) -> str:
    """A block as prompts show it: detected code inside ``` fences (the system prompt asks
    the model to keep code in fences), text already fenced as it is."""
    text = block.text.strip() if trim else block.text
    return f"{FENCE}\n{text}\n{FENCE}" if _fenced(block) else text


def heading_line(doc: Document, heading: str, page: int, layout: Layout = QUESTION) -> str:
    """"#### 2 Usage [p. 3]" (questions), "## 2 Usage" (summaries); "" without a heading."""
    if not heading:
        return ""
    marker = f" {page_marker(doc, page)}" if layout.heading_marker else ""
    return f"{layout.heading} {heading}{marker}"


def render_blocks(doc: Document, heading: str, blocks: Sequence[Block], layout: Layout,
                  page: int = 0, shown: Sequence[int] | None = None) -> str:
    """The one renderer of a section in prompts: its heading line, then its blocks with a
    page marker before the first and wherever the page changes.

    page: the page the heading's marker names (layout.heading_marker: questions give the
    section's first page; the first block then needs no marker of its own, and without a
    heading its marker stands alone on the first line, before any OMITTED). shown: the
    indexes of the blocks shown, in order (None: all); an OMITTED line stands for each run
    of blocks left out, before, between or after them (partial passages of questions)."""
    idx = range(len(blocks)) if shown is None else shown
    lines = [heading_line(doc, heading, page, layout)] if heading else []
    visible = [k for k in idx if blocks[k].text.strip()]
    current = None  # the page the last marker named
    if layout.heading_marker:  # the start is marked up front: in the heading line, or alone
        current = blocks[visible[0]].page if visible else page
        if not heading:
            lines.append(page_marker(doc, current))
    prev = -1
    for k in idx:
        b = blocks[k]
        if shown is not None and k != prev + 1:
            lines.append(OMITTED)
        prev = k
        text = block_text(b, layout.trim)
        if not text.strip():
            continue
        if b.page != current:
            current = b.page
            inline = layout.inline_markers and b.kind not in ("code", "table")
            text = page_marker(doc, b.page) + (" " if inline else "\n") + text
        lines.append(text)
    if shown is not None and prev != len(blocks) - 1:
        lines.append(OMITTED)
    return layout.joiner.join(lines)


@dataclass(frozen=True)
class Passage:
    """A section, whole or as some of its blocks (each block whole, in order)."""
    doc: Document
    section: Section
    blocks: tuple[int, ...] | None = None  # indexes of the blocks shown; None: all
    rank: int = 0  # order of choice: higher ranks are dropped first

    @classmethod
    def whole(cls, doc: Document, section: Section, rank: int = 0) -> "Passage":
        return cls(doc, section, None, rank)

    @classmethod
    def partial(cls, doc: Document, section: Section, scores: Sequence[float], room: int,
                counter: TokenCounter, rank: int = 0) -> "Passage | None":
        """The section's best-scoring blocks that fit in room tokens, or None."""
        order = sorted(range(len(section.blocks)), key=lambda k: (-scores[k], k))
        used = counter.text(_header(doc, section)) + 8
        chosen: list[int] = []
        for k in order:
            if scores[k] < 0 or (scores[k] == 0 and chosen):
                break
            c = counter.text(block_text(section.blocks[k])) + 8
            if used + c <= room:
                chosen.append(k)
                used += c
        if not chosen:
            return None
        return cls(doc, section, tuple(sorted(chosen)), rank)

    @property
    def complete(self) -> bool:
        return self.blocks is None or len(self.blocks) == len(self.section.blocks)

    @property
    def pages(self) -> list[int]:
        idx = range(len(self.section.blocks)) if self.blocks is None else self.blocks
        pages = [self.section.blocks[k].page for k in idx]
        return sorted(set(pages)) or [self.section.page_start]

    def render(self) -> str:
        """Heading with its page marker, then the blocks, with a marker where the page changes
        and an OMITTED line where blocks are left out."""
        s = self.section
        return render_blocks(self.doc, s.heading if s.heading_path else "", s.blocks, QUESTION,
                             s.page_start, self.blocks)

    def cost(self, counter: TokenCounter) -> int:
        """Tokens of the rendered passage (plus its separator)."""
        d, s = self.doc, self.section
        if self.blocks is None and s.tokens > 0 and d.tokenizer and d.tokenizer == counter.name:
            # Ingestion counted the body with this tokenizer: add only heading, markers and
            # the fences around code (two fences and their line breaks per code block).
            extra = sum(counter.text(page_marker(d, p)) + 1 for p in self.pages[1:])
            fences = sum(_fenced(b) for b in s.blocks) * (2 * counter.text(FENCE) + 2)
            return (s.tokens + counter.text(_header(d, s)) + extra + fences
                    + 2 * len(s.blocks) + 2)
        return counter.text(self.render()) + 2


def _header(doc: Document, section: Section) -> str:
    if not section.heading_path:
        return ""
    return heading_line(doc, section.heading, section.page_start, QUESTION)


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
