"""A page as the reader sees it: the PDF page rendered to an image (pypdfium2) with a passage
highlighted at its characters' boxes, or a text document's passage in its context.

The passage comes from the page's cleaned text (what the model read), which is not byte for
byte PDFium's text layer (lines joined, hyphens, ligatures, form fields put back in order):
it is found in the text layer by its letters and digits alone, and PDFium's rectangles for
those characters (one per line run: FPDFText_CountRects/GetRect) are the highlight. Pages read
by OCR have no text layer and the ingest keeps no word boxes: the page is read again by
tesseract for its word boxes (TSV, at the ingest's resolution, so its words are the stored
text's), and where the passage is not found among them, the highlight is a band at its place
in the page's text, and the view says it is approximate.
"""
from __future__ import annotations

import io
import logging
import os
import subprocess
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ingest.document import Document

logger = logging.getLogger(__name__)

SCALE = 1.6  # pixels per PDF point (115 dpi): a 612-pt page is ~980 px wide
HIGHLIGHT = (255, 214, 0, 110)  # translucent yellow over the page
PAD = 1.5  # points around each rectangle


@dataclass(frozen=True)
class PageImage:
    """One rendered page and where the passage is on it."""
    png: bytes
    width: int  # pixels
    height: int
    boxes: list[tuple[int, int, int, int]] = field(default_factory=list)  # left, top, right, bottom
    exact: bool = False  # boxes are the passage's own characters (False: approximate or none)
    method: str = ""  # "text" (PDFium's characters), "ocr" (tesseract's words), "band", ""
    found: bool = False  # the passage was located on the page at all
    focus: tuple[int, int, int, int] | None = None  # the part of the page around the boxes
    focus_png: bytes | None = None  # that part alone, shown first (the whole page scrolls)


def document_file(doc: Document, uploads_dir: Path | None = None) -> Path | None:
    """The file a stored document was read from: its path, else the upload kept under the
    data dir (<sha256><suffix>); None when neither is there any more."""
    candidates = [Path(doc.path)] if doc.path else []
    if uploads_dir is not None and doc.sha256:
        suffix = Path(doc.path or doc.name).suffix.lower() or ".pdf"
        candidates.append(Path(uploads_dir) / f"{doc.sha256}{suffix}")
    return next((p for p in candidates if p.is_file()), None)


def _letters(text: str, base: int = 0) -> tuple[str, list[int]]:
    """text's letters and digits, lowercased and NFKC-normalised (ligatures split), with the
    index in text of each."""
    out, where = [], []
    for i, ch in enumerate(text):
        for c in unicodedata.normalize("NFKC", ch).lower():
            if c.isalnum():
                out.append(c)
                where.append(base + i)
    return "".join(out), where


def locate(haystack: str, needle: str) -> tuple[int, int] | None:
    """Where needle is in haystack, comparing letters and digits only (whitespace, hyphens
    and punctuation are what cleaning changes): (start, end) in haystack, or None. Where the
    whole is not found, its first and last 24 letters are tried (a word the cleaning
    changed in the middle)."""
    hay, where = _letters(haystack)
    pin, _ = _letters(needle)
    if not pin or not hay:
        return None
    at = hay.find(pin)
    if at >= 0:
        return where[at], _past_punctuation(haystack, where[at + len(pin) - 1] + 1)
    if len(pin) < 60:
        return None
    head, tail = hay.find(pin[:24]), -1
    if head >= 0:
        tail = hay.find(pin[-24:], head)
    if head < 0 or tail < 0 or tail - head > 2 * len(pin):
        return None
    return where[head], _past_punctuation(haystack, where[tail + 23] + 1)


def _past_punctuation(text: str, end: int) -> int:
    """end moved over the marks that close the passage ("." "**." ")."), up to a space."""
    while end < len(text) and not text[end].isspace() and not text[end].isalnum():
        end += 1
    return end


def render(path: Path, number: int, passage: str | None, *, page_text: str = "",
           ocr: bool = False, language: str | None = None, password: str | None = None,
           scale: float = SCALE) -> PageImage:
    """Page ``number`` (1-based) of the PDF at path as a PNG with ``passage`` highlighted.
    On an OCR page (``ocr``), tesseract's word boxes (``language`` "en", "zh" or None);
    ``page_text`` (the stored, cleaned text) places the approximate band where they fail."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path), password=password)
    try:
        page = pdf[number - 1]
        width_pt, height_pt = page.get_size()
        rects, method = [], ""
        if passage:
            rects = _ocr_rects(page, passage, language) if ocr else _text_rects(page, passage)
            method = ("ocr" if ocr else "text") if rects else ""
        if passage and not rects:
            rects = _band(page_text, passage, width_pt, height_pt)
            method = "band" if rects else ""
        image = page.render(scale=scale, rotation=0).to_pil().convert("RGBA")
        boxes = [_pixels(r, height_pt, scale) for r in rects]
        drawn = _draw(image, boxes)
        focus = _focus(boxes, image.width, image.height)
        return PageImage(_png(drawn), image.width, image.height, boxes,
                         exact=method in ("text", "ocr"), method=method, found=bool(rects),
                         focus=focus, focus_png=_png(drawn.crop(focus)) if focus else None)
    finally:
        pdf.close()


def _ocr_rects(page, passage: str, language: str | None) -> list:
    """Rectangles (points) over the words of passage that tesseract reads on the page image,
    one per line; [] where tesseract is missing, fails or does not read the passage there."""
    from ingest import ocr

    image = ocr.render_pgm(page)
    scale = int(image.split(b"\n", 2)[1].split()[0]) / page.get_size()[0]  # PGM width / pt
    have_zh = "chi_sim" in ocr.languages()
    lang = "chi_sim+eng" if language == "zh" and have_zh else (
        "eng+chi_sim" if language is None and have_zh else "eng")
    try:
        out = subprocess.run(["tesseract", "stdin", "stdout", "-l", lang, "--psm", "3", "tsv"],
                             input=image, capture_output=True, timeout=ocr.PAGE_TIMEOUT_S,
                             env={**os.environ, "OMP_THREAD_LIMIT": "1"})
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    words = _tsv_words(out.stdout.decode("utf-8", errors="replace"))
    joined, starts = "", []
    for w in words:
        starts.append(len(joined))
        joined += w[0] + " "
    span = locate(joined, passage)
    if span is None:
        return []
    lines: dict = {}
    for w, at in zip(words, starts):
        if at < span[1] and at + len(w[0]) > span[0]:
            x0, y0, x1, y1 = w[2]
            box = lines.setdefault(w[1], [x0, y0, x1, y1])
            box[:] = [min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)]
    height = page.get_size()[1]
    return [(x0 / scale, height - y1 / scale, x1 / scale, height - y0 / scale)
            for x0, y0, x1, y1 in lines.values()]


def _tsv_words(tsv: str) -> list[tuple[str, tuple, tuple[int, int, int, int]]]:
    """(text, line key, pixel box) of each word in tesseract's TSV output."""
    out = []
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12 or cols[0] != "5" or not cols[11].strip():
            continue
        left, top, width, height = map(int, cols[6:10])
        out.append((cols[11].strip(), tuple(cols[1:5]), (left, top, left + width, top + height)))
    return out


def _text_rects(page, passage: str) -> list[tuple[float, float, float, float]]:
    """PDFium's rectangles (left, bottom, right, top in points) over the passage's
    characters in the page's text layer; [] where it is not found there."""
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        if count <= 0:
            return []
        raw = textpage.get_text_range(0, count)
        # get_text_range can return a few characters more or fewer than count (generated
        # spaces, CRLF); index per character for a map that matches PDFium's indices.
        chars = [textpage.get_text_range(i, 1) if len(raw) != count else raw[i]
                 for i in range(count)]
        span = locate("".join(c[:1] or " " for c in chars), passage)
        if span is None:
            return []
        n = textpage.count_rects(span[0], span[1] - span[0])
        return [tuple(textpage.get_rect(i)) for i in range(n)]
    finally:
        textpage.close()


def _band(page_text: str, passage: str, width_pt: float, height_pt: float) -> list:
    """An approximate place for the passage: a band across the page at its share of the
    page's text (OCR pages, or where the text layer does not have it)."""
    span = locate(page_text, passage) if page_text else None
    if span is None:
        return []
    top = 1 - span[0] / max(1, len(page_text))
    bottom = 1 - span[1] / max(1, len(page_text))
    margin = 0.08  # most pages keep about this much of their height blank above and below
    usable = height_pt * (1 - 2 * margin)
    hi = height_pt * margin + usable * top
    lo = height_pt * margin + usable * bottom
    return [(width_pt * 0.06, max(0.0, lo - 6), width_pt * 0.94, min(height_pt, hi + 6))]


def _pixels(rect, height_pt: float, scale: float) -> tuple[int, int, int, int]:
    left, bottom, right, top = rect
    return (int((left - PAD) * scale), int((height_pt - top - PAD) * scale),
            int(round((right + PAD) * scale)), int(round((height_pt - bottom + PAD) * scale)))


def _draw(image, boxes):
    from PIL import Image, ImageDraw

    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for box in boxes:
        draw.rectangle(box, fill=HIGHLIGHT)
    return Image.alpha_composite(image, overlay).convert("RGB")


def _png(image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _focus(boxes, width: int, height: int, share: float = 0.15):
    """The page's full width from a little above the first box to a little below the last
    (``share`` of the page's height each side), or None without boxes."""
    if not boxes:
        return None
    pad = int(share * height)
    top = max(0, min(b[1] for b in boxes) - pad)
    bottom = min(height, max(b[3] for b in boxes) + pad)
    return (0, top, width, bottom)


@dataclass(frozen=True)
class Passage:
    """A passage in its context: the text before, the passage, the text after."""
    before: str
    text: str
    after: str
    found: bool


def in_context(page_text: str, passage: str, span: tuple[int, int] | None = None,
               around: int = 600) -> Passage:
    """The passage within its page's text (span where the checker gave one and it still
    holds the passage, else found by its letters), with ``around`` characters each side."""
    if span is None or not (0 <= span[0] < span[1] <= len(page_text)) or \
            locate(page_text[span[0]:span[1]], passage) is None:
        span = locate(page_text, passage) if passage else None
    if span is None:
        return Passage(page_text[:2 * around], "", "", False)
    a, b = span
    lo, hi = max(0, a - around), min(len(page_text), b + around)
    return Passage(("…" if lo else "") + page_text[lo:a], page_text[a:b],
                   page_text[b:hi] + ("…" if hi < len(page_text) else ""), True)
