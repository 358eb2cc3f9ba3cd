"""PDF text extraction with pypdfium2: page text, printed page labels, the outline, OCR checks."""
from __future__ import annotations

import ctypes
import logging
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ingest.clean import is_garbage, normalize_page
from ingest.errors import DocumentError, PasswordRequired
from ingest.layout import (
    char_runs,
    free_text_notes,
    indent_code,
    merge_lines,
    needs_code,
    needs_tables,
    tables_as_markdown,
    text_lines,
)
from ingest.parallel import processes, run_split

logger = logging.getLogger(__name__)


class _NoXfaNotice(logging.Filter):
    """Drop pypdfium2's advice to rebuild PDFium with XFA: the AcroForm fields are read."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("init_forms() called on XFA pdf")


logging.getLogger("pypdfium2._helpers.document").addFilter(_NoXfaNotice())

OCR_HINT = "run `ocrmypdf in.pdf out.pdf` first and load out.pdf"
FORCE_OCR_HINT = "run `ocrmypdf --force-ocr in.pdf out.pdf` and load out.pdf"
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
    # normalize_page(text) of each page, done by the (parallel) readers; clean_pages goes
    # on from it.
    normalized: list[str] = field(default_factory=list)
    # Per page: OK, GARBAGE/IMAGE (no usable text layer: an OCR candidate), OCR (text read
    # by OCR, see ingest.ocr) or BROKEN.
    status: list[str] = field(default_factory=list)

    def pages_with(self, status: str) -> list[int]:
        """1-based numbers of the pages with this status."""
        return [i for i, s in enumerate(self.status, start=1) if s == status]


def open_pdf(path: str | Path, password: str | None = None) -> pdfium.PdfDocument:
    """Open a PDF, turning PDFium's error codes into messages that say what to do."""
    name = Path(path).name
    try:
        pdf = pdfium.PdfDocument(str(path), password=password or None)
    except pdfium.PdfiumError as e:
        code = getattr(e, "err_code", None)
        if code == pdfium_c.FPDF_ERR_PASSWORD:
            if password:
                raise PasswordRequired(f"Wrong password for {name}; "
                                       "check it and try again.") from None
            raise PasswordRequired(f"{name} is encrypted; give its password "
                                   "(--password, or the password box).") from None
        if code == pdfium_c.FPDF_ERR_SECURITY:
            raise DocumentError(f"{name} uses an unsupported security handler; "
                                "remove the protection (e.g. `qpdf --decrypt`) "
                                "and load it again.") from None
        raise DocumentError(f"{name} is not a readable PDF (damaged or not a PDF at all); "
                            "re-download or re-export it.") from None
    if pdfium_c.FPDF_GetFormType(pdf.raw) != pdfium_c.FORMTYPE_NONE:
        # Before any page is loaded: PDFium then builds the appearance of every filled
        # field, and flattening (see _load_page) puts the values into the page text.
        pdf.init_forms()
    return pdf


def _is_ocr_layer(page: pdfium.PdfPage) -> bool:
    """True when the page's first text object is invisible text (render mode 3): an OCR layer."""
    count = pdfium_c.FPDFPage_CountObjects(page.raw)
    for i in range(min(count, _OBJECTS_TO_SCAN)):
        obj = pdfium_c.FPDFPage_GetObject(page.raw, i)
        if pdfium_c.FPDFPageObj_GetType(obj) == pdfium_c.FPDF_PAGEOBJ_TEXT:
            return (pdfium_c.FPDFTextObj_GetTextRenderMode(obj)
                    == pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE)
    return False


# TeX's quote ligatures left in a bookmark by hyperref ("2 Old ``solutions''"): the page
# prints them as curly quotes, and the outline, the headings and questions go by the page.
_TEX_QUOTES = (("``", "\u201c"), ("''", "\u201d"))


def _tex_quotes(title: str) -> str:
    if "``" not in title:
        return title
    for tex, printed in _TEX_QUOTES:
        title = title.replace(tex, printed)
    return title


# TeX's math-symbol fonts (Computer Modern's CMSY, Latin Modern's LMSY / LMMathSymbols) hold
# the angle brackets of a metavariable ("\\newbool{<name>}", LaTeX's \\meta) at the codes of
# "h" and "i". Embedded without a Unicode map, as many TeX manuals are, they are read as those
# letters: "\\newbool{hnamei}". A symbol font has no lower-case letters, so an "h" or "i" set in
# one is the bracket the page prints.
_MATH_SYMBOLS = re.compile(rb"(?:^|\+)(?:CMSY|LMSY|LMMathSymbols)", re.I)
# A closing bracket read as "i" ends the metavariable's name ("hnamei}", "hnum1i-", "hitem,
# ...i", or the next one's opening bracket: "hvalueihtrue keylisti"), and few English words
# end in "i": only those are looked up, so pages without the font cost almost nothing (a
# name run into the next word, "hindexith", is left as it is).
_CLOSING_I = re.compile(r"(?<=[A-Za-z0-9.)])i(?![A-Za-gi-z])")
_ANGLES = {"h": "\u27e8", "i": "\u27e9"}
_ANGLE_REACH = 80  # characters from an opening bracket to its closing one, at most


def _in_symbol_font(textpage: pdfium.PdfTextPage, k: int, ch: str, name: ctypes.Array,
                    flags: ctypes.c_int) -> bool:
    """True when character k of the page is ch (the text's offsets are the character
    indexes on most pages, not all: both are checked) set in a math-symbol font."""
    if pdfium_c.FPDFText_GetUnicode(textpage.raw, k) != ord(ch):
        return False
    pdfium_c.FPDFText_GetFontInfo(textpage.raw, k, name, len(name), ctypes.byref(flags))
    return _MATH_SYMBOLS.search(name.value) is not None


def tex_angle_brackets(textpage: pdfium.PdfTextPage, text: str) -> str:
    """text (textpage.get_text_range()) with the angle brackets a TeX symbol font left as
    "h" and "i" restored ("hnamei" -> "\u27e8name\u27e9"); the same length, so the character
    offsets hold. Each "i" that may close a name is looked up, and for one in a symbol font,
    the nearest "h" before it in one (within _ANGLE_REACH characters: a long name may wrap
    to the next line)."""
    name, flags = ctypes.create_string_buffer(128), ctypes.c_int(0)
    out: list[str] | None = None
    opened = -1  # the last opening bracket restored: a closing one is looked for after it
    for m in _CLOSING_I.finditer(text):
        j = m.start()
        if not _in_symbol_font(textpage, j, "i", name, flags):
            continue
        lo = max(opened + 1, j - _ANGLE_REACH)
        k = text.rfind("h", lo, j)
        while k >= 0 and not _in_symbol_font(textpage, k, "h", name, flags):
            k = text.rfind("h", lo, k)
        if k < 0:
            continue
        if out is None:
            out = list(text)
        out[k], out[j] = _ANGLES["h"], _ANGLES["i"]
        opened = j
    return text if out is None else "".join(out)


def _outline(pdf: pdfium.PdfDocument, n_pages: int) -> list[OutlineEntry]:
    entries: list[OutlineEntry] = []
    for mark in pdf.get_toc(max_depth=8):
        dest = mark.get_dest()
        index = dest.get_index() if dest is not None else None
        title = _tex_quotes(" ".join(mark.get_title().split()))
        if index is None or not 0 <= index < n_pages or not title:
            continue
        entries.append(OutlineEntry(title=title, level=mark.level + 1, page=index + 1))
    return entries


def _labels(pdf: pdfium.PdfDocument, n_pages: int) -> list[str | None]:
    labels = [pdf.get_page_label(i) or None for i in range(n_pages)]
    if all(label is None for label in labels):
        return [None] * n_pages
    return labels


# Page status from the readers: why a page's text layer is not used as it is.
OK, GARBAGE, IMAGE, BROKEN, OCR = "", "garbage", "image", "broken", "ocr"
_Row = tuple[str, str, str]  # raw text, normalize_page(raw text), status
# A page with fewer visible characters than this and a large image is a scan: OCR it.
_MIN_CHARS_TEXT_PAGE = 20
# ...when images cover at least this share of the page (a scan covers it all; a manual's
# cover logo, 42% of its page, does not and is not OCR'd).
_MIN_IMAGE_SHARE = 0.6
# Annotations that never carry page text (links, popups of comments).
_NO_TEXT_ANNOTS = frozenset({pdfium_c.FPDF_ANNOT_LINK, pdfium_c.FPDF_ANNOT_POPUP})


def _needs_flatten(page: pdfium.PdfPage) -> bool:
    """True when the page has annotations (form fields, notes, stamps) that may show text."""
    count = pdfium_c.FPDFPage_GetAnnotCount(page.raw)
    for k in range(count):
        annot = pdfium_c.FPDFPage_GetAnnot(page.raw, k)
        try:
            if pdfium_c.FPDFAnnot_GetSubtype(annot) not in _NO_TEXT_ANNOTS:
                return True
        finally:
            pdfium_c.FPDFPage_CloseAnnot(annot)
    return False


def _flattened_text(pdf: pdfium.PdfDocument, i: int,
                    page: pdfium.PdfPage) -> tuple[pdfium.PdfPage, str | None]:
    """Flatten the page's form fields and annotations into its content; (page, text) after.

    Flattening changes only the document in memory (it is never saved). PDFium appends the
    flattened appearances to the content, so their text comes last: each of those lines is
    put back where it sits on the page (after its label, or below the text above it).
    Returns (page, None) when there was nothing to flatten.
    """
    notes = free_text_notes(page)  # read first: flattening drops annotations without an appearance
    textpage = page.get_textpage()
    try:
        before = textpage.get_text_range()
    finally:
        textpage.close()
    code = pdfium_c.FPDFPage_Flatten(page.raw, pdfium_c.FLAT_NORMALDISPLAY)
    flattened = code == pdfium_c.FLATTEN_SUCCESS
    if flattened:
        page.close()  # PDFium reads the flattened content only on a fresh load
        page = pdf[i]
    textpage = page.get_textpage()
    try:
        after = textpage.get_text_range() if flattened else before
        if not after.startswith(before):  # PDFium reordered the text: keep its order
            return page, "\n".join([after, *(n.text for n in notes)])
        start = len(before)
        while start < len(after) and after[start] in "\r\n":
            start += 1
        extra = char_runs(textpage, after[start:], start)
        shown = " ".join(after.split())
        extra += [n for n in notes if n.text not in shown]
        if not extra:
            return page, after
        body = text_lines(textpage, before)
        return page, merge_lines(body, extra) if body else "\n".join(n.text for n in extra)
    finally:
        textpage.close()


def _image_share(page: pdfium.PdfPage) -> float:
    """Share of the page area covered by image objects (top level; capped at 1)."""
    width, height = page.get_size()
    area = max(width * height, 1.0)
    covered = 0.0
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    for k in range(pdfium_c.FPDFPage_CountObjects(page.raw)):
        obj = pdfium_c.FPDFPage_GetObject(page.raw, k)
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_FORM:
            covered += area * _form_image_share(obj)
        elif kind == pdfium_c.FPDF_PAGEOBJ_IMAGE and \
                pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            covered += max(0.0, right.value - left.value) * max(0.0, top.value - bottom.value)
        if covered >= area:
            return 1.0
    return covered / area


def _form_image_share(form: ctypes.c_void_p) -> float:
    """1.0 when a form XObject (scanners wrap their image in one) holds an image, else 0."""
    for k in range(min(pdfium_c.FPDFFormObj_CountObjects(form), _OBJECTS_TO_SCAN)):
        obj = pdfium_c.FPDFFormObj_GetObject(form, k)
        if pdfium_c.FPDFPageObj_GetType(obj) == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            return 1.0
    return 0.0


_UNMAPPED = re.compile("[\x00-\x08\x0e-\x1f\ufffd\ue000-\uf8ff]")
_SPACE = re.compile(r"\s+")


def _unmapped(text: str) -> bool:
    """True when most characters are codes without a Unicode mapping (CID fonts lacking
    ToUnicode come out as control characters, U+FFFD or private-use codes)."""
    if _UNMAPPED.search(text) is None:
        return False  # the common case, at C speed
    return len(_UNMAPPED.findall(text)) > 0.3 * len(_SPACE.sub("", text))


def _read_page(pdf: pdfium.PdfDocument, i: int) -> _Row:
    try:
        page = pdf[i]
    except pdfium.PdfiumError:  # a damaged page object: the other pages are still read
        return "", "", BROKEN
    try:
        text = None
        if _needs_flatten(page):
            page, text = _flattened_text(pdf, i, page)
        if text is None:
            textpage = page.get_textpage()
            try:
                text = tex_angle_brackets(textpage, textpage.get_text_range())
                # Geometry only for pages that may need it: code first (it edits by char index).
                if needs_code(text):
                    text = indent_code(textpage, text)
                if needs_tables(text):
                    text = tables_as_markdown(textpage, text)
            finally:
                textpage.close()
        status = OK
        if text.strip() and (_unmapped(text) or is_garbage(text, ocr_layer=_is_ocr_layer(page))):
            status, text = GARBAGE, ""
        elif len(text.strip()) < _MIN_CHARS_TEXT_PAGE and _image_share(page) >= _MIN_IMAGE_SHARE:
            status = IMAGE
    finally:
        page.close()
    return text, normalize_page(text), status


def _read_pages(pdf: pdfium.PdfDocument, lo: int, hi: int) -> list[_Row]:
    """Rows for pages lo..hi-1; garbage text is returned empty."""
    return [_read_page(pdf, i) for i in range(lo, hi)]


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


def check_text_layer(name: str, raw: PdfText, hint: str | None = None) -> None:
    """Raise DocumentError when too little of the document has a usable text layer (after
    any OCR); `hint` says why pages were not OCR'd. Else warn of garbage pages dropped.
    """
    n = len(raw.pages)
    garbage = raw.pages_with(GARBAGE)
    visible = sum(len(t.strip()) for t in raw.pages)
    with_text = sum(1 for t in raw.pages if t.strip()) + len(garbage)
    too_little = visible < _MIN_CHARS_PER_PAGE * n / 2 and visible < 2000
    if garbage and len(garbage) >= 0.9 * with_text or too_little:
        what = "its page" if n == 1 else "its pages"
        if raw.pages_with(OCR):
            raise DocumentError(f"{name}: OCR found no text on {what} (images without text?); "
                                "check that it is the right file.")
        if garbage:
            raise DocumentError(f"{name} has only a garbage text layer (bad OCR); "
                                f"{hint or FORCE_OCR_HINT}.")
        images = "its page is an image" if n == 1 else "its pages are images"
        raise DocumentError(f"{name} has no text layer ({images}, e.g. a scan); "
                            f"OCR is needed: {hint or OCR_HINT}.")
    if garbage and hint is None:
        raw.warnings.append(f"Dropped page(s) {numbers_text(garbage)}: the text layer is garbage "
                            "(bad OCR); "
                            "re-run OCR with `ocrmypdf --force-ocr` to read them.")


def numbers_text(pages: list[int], most: int = 20) -> str:
    """ "3, 7, 12" (the first `most`, then "and N more")."""
    shown = ", ".join(map(str, pages[:most]))
    return shown + (f" and {len(pages) - most} more" if len(pages) > most else "")


# PDFium is not thread-safe: one document at a time per process (Streamlit runs each
# browser session in its own thread).
PDFIUM_LOCK = threading.Lock()


def extract_pages(path: str | Path, password: str | None = None) -> PdfText:
    """Text of every page (reading order as PDFium gives it), labels, outline and title.

    Long documents are read by one process per core (forked; see ingest.parallel),
    with the same result as reading them here.
    """
    with PDFIUM_LOCK:
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
            jobs = [(pdf if k == 0 else str(path), password, lo, hi)
                    for k, (lo, hi) in enumerate(ranges)]
            results = run_split(_read_range, jobs)
            results = [row for part in results for row in part]
        else:
            results = _read_pages(pdf, 0, n)
        texts = [text for text, _, _ in results]
        status = [state for _, _, state in results]
        broken = [i for i, state in enumerate(status, start=1) if state == BROKEN]
        if len(broken) == n:
            raise DocumentError(f"{name}: no page could be loaded (damaged page objects); "
                                "re-download or re-export it.")
        if broken:
            warnings.append(f"Skipped page(s) {numbers_text(broken)}: PDFium could not load them "
                            "(damaged page "
                            "objects); the other pages were read.")
            logger.warning("%s: skipped damaged page(s) %s", name, numbers_text(broken))
        title = (pdf.get_metadata_value("Title") or "").strip()
        return PdfText(pages=texts, labels=_labels(pdf, n), outline=_outline(pdf, n), title=title,
                       warnings=warnings, normalized=[normal for _, normal, _ in results],
                       status=status)
    finally:
        pdf.close()
