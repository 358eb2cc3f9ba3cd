"""Document ingestion: load_document(path) -> Document with cleaned pages and sections."""
from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ingest.clean import clean_pages, strip_running_lines
from ingest.document import Block, Document, Page, Section
from ingest.errors import DocumentError, PasswordRequired
from ingest.ocr import OcrCancelled, OcrProgress, apply_ocr
from ingest.parallel import limited
from ingest.pdf import OCR, check_text_layer, extract_pages
from ingest.segment import document_language
from ingest.structure import structure_pages
from ingest.text import read_text, split_pages_gaps
from ingest.tokens import TokenCounter, count_many, count_tokens, tokenizer_name

__all__ = [
    "SUPPORTED_SUFFIXES", "Block", "Document", "DocumentError", "OcrCancelled", "OcrProgress",
    "Page", "PasswordRequired",
    "Section", "count_tokens", "load_document", "tokenizer_name",
]

logger = logging.getLogger(__name__)

SUPPORTED_SUFFIXES = (".pdf", ".txt", ".text", ".md", ".markdown")
_MARKDOWN = (".md", ".markdown")
_MB = 1024 * 1024


def _check_file(path: Path, max_mb: float) -> int:
    if not path.is_file():
        raise DocumentError(f"No such file: {path}; check the path.")
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        kinds = ", ".join(SUPPORTED_SUFFIXES)
        raise DocumentError(f"{path.name}: unsupported file type {suffix or '(no suffix)'}; "
                            f"docchat reads {kinds}.")
    size = path.stat().st_size
    if size == 0:
        raise DocumentError(f"{path.name} is empty (0 bytes); choose a file with content.")
    if size > max_mb * _MB:
        raise DocumentError(
            f"{path.name} is {size / _MB:.1f} MB, over the {max_mb:g} MB limit; "
            "split it or raise DOCCHAT_MAX_FILE_MB."
        )
    return size


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def load_document(path: str | Path, password: str | None = None, max_mb: float = 200.0,
                  tokenizer: TokenCounter | None = None, *,
                  on_ocr_progress: Callable[[OcrProgress], None] | None = None,
                  cancel: threading.Event | None = None,
                  ocr_max_pages: int | None = None,
                  processes: int | None = None) -> Document:
    """Read a PDF, text or Markdown file into a Document: cleaned pages, sections and token counts.

    Section.tokens counts the section's text (its blocks, not its heading); Document.tokens
    is their sum. PDF pages without a usable text layer (scans; garbage or unmapped text)
    are OCR'd (Page.ocr): on_ocr_progress gets an OcrProgress before the first and after
    each OCR'd page, setting `cancel` stops OCR (OcrCancelled), and ocr_max_pages (default
    DOCCHAT_OCR_MAX_PAGES, else 300; 0 = off) caps the pages OCR'd. Documents with a good text
    layer never start OCR. ``processes`` caps the worker processes that read a long PDF
    (default DOCCHAT_INGEST_PROCESSES, else one per core; 1 = this process only). Raises
    DocumentError (PasswordRequired for encrypted PDFs) with a message for the user.
    """
    with limited(processes):
        return _load(Path(path), password, max_mb, tokenizer, on_ocr_progress, cancel,
                     ocr_max_pages)


def _load(path: Path, password: str | None, max_mb: float, tokenizer: TokenCounter | None,
          on_ocr_progress: Callable[[OcrProgress], None] | None,
          cancel: threading.Event | None, ocr_max_pages: int | None) -> Document:
    _check_file(path, max_mb)
    started = time.perf_counter()
    suffix = path.suffix.lower()
    warnings: list[str] = []
    outline = None
    title = ""
    gaps: list[bool] = []  # a text file's pages cut at a blank line (split_pages_gaps)
    if suffix == ".pdf":
        kind = "pdf"
        raw = extract_pages(path, password)
        hint = apply_ocr(path, password, raw, on_progress=on_ocr_progress, cancel=cancel,
                         max_pages=ocr_max_pages)
        check_text_layer(path.name, raw, hint)
        ocr_flags = [s == OCR for s in raw.status]
        warnings.extend(raw.warnings)
        cleaned = (clean_pages(raw.normalized, normalized=True) if raw.normalized
                   else clean_pages(raw.pages))
        texts, removed = strip_running_lines(cleaned, raw.labels, raw.outline)
        labels = raw.labels
        outline, title = raw.outline, raw.title
    else:
        kind = "markdown" if suffix in _MARKDOWN else "text"
        text, encoding = read_text(path)
        raw_pages, gaps = split_pages_gaps(text)
        texts = clean_pages(raw_pages)
        removed = 0
        if "\f" in text:  # real pages: they may carry running headers
            texts, removed = strip_running_lines(texts)
        labels = [None] * len(texts)
        ocr_flags = [False] * len(texts)
        logger.debug("%s decoded as %s", path.name, encoding)
        if not any(t.strip() for t in texts):
            raise DocumentError(f"{path.name} contains only whitespace; "
                                "choose a file with content.")
    pages = [
        Page(number=i, text=t, label=(lab if lab and lab != str(i) else None), ocr=ocr)
        for i, (t, lab, ocr) in enumerate(zip(texts, labels, ocr_flags), start=1)
    ]
    pages, sections = structure_pages(pages, outline=outline or None,
                                      markdown=kind == "markdown", gaps=gaps)
    counts = count_many([s.text for s in sections], tokenizer)
    sections = [replace(s, tokens=n) for s, n in zip(sections, counts)]
    if not title:
        title = next((s.heading_path[0] for s in sections if s.heading_path), "") or path.stem
    doc = Document(
        path=str(path), sha256=_sha256(path), name=path.name, kind=kind, pages=pages,
        sections=sections, language=document_language([p.text for p in pages]),
        title=title, tokens=sum(counts),
        tokenizer=tokenizer_name(tokenizer), page_labels=any(p.label for p in pages),
        warnings=warnings,
    )
    logger.info("Loaded %s: %d pages, %d sections, %d tokens, %d header/footer lines removed "
                "in %.2fs", path.name, len(pages), len(sections), doc.tokens, removed,
                time.perf_counter() - started)
    return doc
