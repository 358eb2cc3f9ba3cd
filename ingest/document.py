"""Records for an ingested document: pages, blocks and sections."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

# Kinds of content a block or section can hold.
KINDS = ("prose", "code", "table", "list", "heading")


class OutlineLike(Protocol):
    """A bookmark of a PDF's outline, as ingest.pdf reads it: title, depth (1 = top) and
    1-based page."""
    title: str
    level: int
    page: int


@dataclass(frozen=True)
class Page:
    number: int  # 1-based physical page index
    text: str  # cleaned text
    label: str | None = None  # printed page label ("iv", "12") where the PDF has one
    ocr: bool = False  # the text was read by OCR from the page image (answers citing it say so)

    @property
    def marker(self) -> str:
        """Citation marker for this page, e.g. "p. 12"."""
        return f"p. {self.label or self.number}"

    @property
    def citation(self) -> str:
        """The marker, with "(OCR)" when the text was read by OCR: "p. 12 (OCR)"."""
        return f"{self.marker} (OCR)" if self.ocr else self.marker


@dataclass(frozen=True)
class Block:
    """A unit that is never cut: a paragraph, a whole code block, a whole table, a list."""
    kind: str
    text: str
    page: int  # physical page where the block starts


@dataclass(frozen=True)
class Section:
    index: int  # order within the document, 0-based
    heading_path: tuple[str, ...]  # ("3 Binary packages", "3.2 Version")
    level: int  # depth of the heading (1 = top); 0 for text before the first heading
    page_start: int
    page_end: int
    kind: str  # dominant kind: prose, code, table, list, or mixed
    blocks: tuple[Block, ...]
    tokens: int = 0

    @property
    def title(self) -> str:
        return self.heading_path[-1] if self.heading_path else ""

    @property
    def heading(self) -> str:
        return " > ".join(self.heading_path)

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


@dataclass
class Document:
    path: str
    sha256: str
    name: str  # file name as given
    kind: str  # pdf, text, markdown
    pages: list[Page]
    sections: list[Section]
    language: str = "en"  # "en" or "zh": dominant script
    title: str = ""
    tokens: int = 0
    tokenizer: str = ""
    page_labels: bool = False  # True when printed labels differ from physical numbers
    warnings: list[str] = field(default_factory=list)
    id: int | None = None  # row id once stored

    @property
    def text(self) -> str:
        return "\n\n".join(p.text for p in self.pages)

    def page(self, number: int) -> Page | None:
        if 1 <= number <= len(self.pages) and self.pages[number - 1].number == number:
            return self.pages[number - 1]
        return next((p for p in self.pages if p.number == number), None)
