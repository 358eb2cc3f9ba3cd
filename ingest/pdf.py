"""PDF text extraction with pypdfium2: page text, printed page labels, the outline, OCR checks."""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ingest.errors import DocumentError, PasswordRequired
from ingest.clean import is_garbage, normalize_page
from ingest.parallel import processes, run_split

logger = logging.getLogger(__name__)

OCR_HINT = "run `ocrmypdf in.pdf out.pdf` first and load out.pdf"
# Objects looked at to find a page's first text object (is it an invisible OCR layer?).
_OBJECTS_TO_SCAN = 64
# A document with fewer visible characters than this per page has no usable text layer.
_MIN_CHARS_PER_PAGE = 20
# Documents with at least this many pages are read by several processes (one per core):
# below it, forking (~20 ms) costs more than it saves.
PARALLEL_MIN_PAGES = 64
# Share of the pages the calling process reads itself; it also reads the outline and labels.
_PARENT_SHARE = 0.45


@dataclass(frozen=True)
class OutlineEntry:
    """A bookmark: its title, depth (1 = top) and 1-based physical target page."""
    title: str
    level: int
    page: int


@dataclass
class PdfText:
    """Raw text of each page plus what the PDF says about itself."""
    pages: list[str]
    labels: list[str | None]
    outline: list[OutlineEntry]
    title: str = ""
    warnings: list[str] = field(default_factory=list)
    # normalize_page(text) of each page, done by the (parallel) readers; clean_pages goes on from it.
    normalized: list[str] = field(default_factory=list)


def open_pdf(path: str | Path, password: str | None = None) -> pdfium.PdfDocument:
    """Open a PDF, turning PDFium's error codes into messages that say what to do."""
    name = Path(path).name
    try:
        return pdfium.PdfDocument(str(path), password=password or None)
    except pdfium.PdfiumError as e:
        code = getattr(e, "err_code", None)
        if code == pdfium_c.FPDF_ERR_PASSWORD:
            if password:
                raise PasswordRequired(f"Wrong password for {name}; check it and try again.") from None
            raise PasswordRequired(f"{name} is encrypted; give its password (--password, or the password box).") from None
        if code == pdfium_c.FPDF_ERR_SECURITY:
            raise DocumentError(f"{name} uses an unsupported security handler; remove the protection (e.g. `qpdf --decrypt`) and load it again.") from None
        raise DocumentError(f"{name} is not a readable PDF (damaged or not a PDF at all); re-download or re-export it.") from None


def _is_ocr_layer(page: pdfium.PdfPage) -> bool:
    """True when the page's first text object is invisible text (render mode 3): an OCR layer."""
    count = pdfium_c.FPDFPage_CountObjects(page.raw)
    for i in range(min(count, _OBJECTS_TO_SCAN)):
        obj = pdfium_c.FPDFPage_GetObject(page.raw, i)
        if pdfium_c.FPDFPageObj_GetType(obj) == pdfium_c.FPDF_PAGEOBJ_TEXT:
            return pdfium_c.FPDFTextObj_GetTextRenderMode(obj) == pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE
    return False


def _outline(pdf: pdfium.PdfDocument, n_pages: int) -> list[OutlineEntry]:
    entries: list[OutlineEntry] = []
    for mark in pdf.get_toc(max_depth=8):
        dest = mark.get_dest()
        index = dest.get_index() if dest is not None else None
        title = " ".join(mark.get_title().split())
        if index is None or not 0 <= index < n_pages or not title:
            continue
        entries.append(OutlineEntry(title=title, level=mark.level + 1, page=index + 1))
    return entries


def _labels(pdf: pdfium.PdfDocument, n_pages: int) -> list[str | None]:
    labels = [pdf.get_page_label(i) or None for i in range(n_pages)]
    if all(label is None for label in labels):
        return [None] * n_pages
    return labels


_Row = tuple[str, str, bool]  # raw text, normalize_page(raw text), is_garbage


def _read_pages(pdf: pdfium.PdfDocument, lo: int, hi: int) -> list[_Row]:
    """Rows for pages lo..hi-1; garbage text is returned empty."""
    out: list[_Row] = []
    for i in range(lo, hi):
        page = pdf[i]
        try:
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_range()
            finally:
                textpage.close()
            bad = bool(text.strip()) and is_garbage(text, ocr_layer=_is_ocr_layer(page))
        finally:
            page.close()
        text = "" if bad else text
        out.append((text, normalize_page(text), bad))
    return out


def _read_range(source: str | pdfium.PdfDocument, password: str | None, lo: int,
                hi: int) -> list[_Row]:
    """_read_pages for one process: the caller passes its open document, a worker a path.

    A worker opens the file itself: a forked copy of an open document would share the
    parent's file offset.
    """
    if isinstance(source, pdfium.PdfDocument):
        return _read_pages(source, lo, hi)
    pdf = open_pdf(source, password)
    try:
        return _read_pages(pdf, lo, hi)
    finally:
        pdf.close()


def _split(n: int, parts: int) -> list[tuple[int, int]]:
    """Page ranges for `parts` processes; the first (the caller's) is a little smaller."""
    first = round(n * _PARENT_SHARE) if parts == 2 else n // parts
    bounds = [0, first] + [first + (n - first) * k // (parts - 1) for k in range(1, parts)]
    return [(bounds[k], bounds[k + 1]) for k in range(parts)]


# PDFium is not thread-safe: one document at a time per process (Streamlit runs each
# browser session in its own thread).
_PDFIUM_LOCK = threading.Lock()


def extract_pages(path: str | Path, password: str | None = None) -> PdfText:
    """Text of every page (reading order as PDFium gives it), labels, outline and title.

    Long documents are read by one process per core (forked; see ingest.parallel),
    with the same result as reading them here.
    """
    with _PDFIUM_LOCK:
        return _extract_pages(path, password)


def _extract_pages(path: str | Path, password: str | None = None) -> PdfText:
    name = Path(path).name
    pdf = open_pdf(path, password)
    try:
        n = len(pdf)
        if n == 0:
            raise DocumentError(f"{name} has no pages; re-export it.")
        warnings: list[str] = []
        parts = min(processes(2), n) if n >= PARALLEL_MIN_PAGES else 1
        if parts > 1:
            ranges = _split(n, parts)
            jobs = [(pdf if k == 0 else str(path), password, lo, hi) for k, (lo, hi) in enumerate(ranges)]
            results = run_split(_read_range, jobs)
            results = [row for part in results for row in part]
        else:
            results = _read_pages(pdf, 0, n)
        texts = [text for text, _, _ in results]
        garbage = [i + 1 for i, (_, _, bad) in enumerate(results) if bad]
        if garbage:
            pages = ", ".join(map(str, garbage))
            warnings.append(
                f"Dropped page(s) {pages}: the text layer is garbage (bad OCR); "
                "re-run OCR with `ocrmypdf --force-ocr` to read them."
            )
        visible = sum(len(t.strip()) for t in texts)
        with_text = sum(1 for t in texts if t.strip()) + len(garbage)
        if garbage and len(garbage) >= 0.9 * with_text or visible < _MIN_CHARS_PER_PAGE * n / 2 and visible < 2000:
            if garbage:
                raise DocumentError(f"{name} has only a garbage text layer (bad OCR); run `ocrmypdf --force-ocr in.pdf out.pdf` and load out.pdf.")
            what = "its page is an image" if n == 1 else "its pages are images"
            raise DocumentError(f"{name} has no text layer ({what}, e.g. a scan); OCR is needed: {OCR_HINT}.")
        title = (pdf.get_metadata_value("Title") or "").strip()
        return PdfText(pages=texts, labels=_labels(pdf, n), outline=_outline(pdf, n), title=title, warnings=warnings,
                       normalized=[normal for _, normal, _ in results])
    finally:
        pdf.close()
