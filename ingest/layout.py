"""Page geometry from PDFium's character boxes: where text lines sit on the page.

Used only on pages that need it (today: pages whose annotations were flattened), so that
other pages pay nothing for it.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c


@dataclass(frozen=True)
class Line:
    """One line of PDFium's text with its box (PDF units, y grows upwards)."""
    text: str
    left: float
    bottom: float
    right: float
    top: float

    @property
    def middle(self) -> float:
        return (self.bottom + self.top) / 2


def text_lines(textpage: pdfium.PdfTextPage, text: str, start: int = 0) -> list[Line]:
    """Lines of `text` (textpage.get_text_range() from char index `start`) with their boxes.

    A line's box joins its first and last visible characters' boxes: two lookups per line.
    """
    out: list[Line] = []
    box = [ctypes.c_double() for _ in range(4)]  # left, right, bottom, top
    pos = 0
    for raw in text.split("\n"):
        line = raw.rstrip("\r")
        first = len(line) - len(line.lstrip())
        last = len(line.rstrip()) - 1
        if last >= first:
            edges = []
            for k in (first, last):
                pdfium_c.FPDFText_GetCharBox(textpage.raw, start + pos + k, *box)
                edges.append([b.value for b in box])
            (l1, r1, b1, t1), (l2, r2, b2, t2) = edges
            out.append(Line(line.strip(), min(l1, l2), min(b1, b2), max(r1, r2), max(t1, t2)))
        pos += len(raw) + 1
    return out


def char_runs(textpage: pdfium.PdfTextPage, text: str, start: int) -> list[Line]:
    """Runs of `text` (the page's text from char index `start`) that sit together on the page.

    A new run starts at a line break, where the next character is not on the same row, or
    where it lies left of the previous one or far to its right. One box lookup per character:
    for short texts (flattened field values) only.
    """
    out: list[Line] = []
    box = [ctypes.c_double() for _ in range(4)]  # left, right, bottom, top
    chars: list[str] = []
    run: list[float] = []  # left, bottom, right, top of the current run

    def flush() -> None:
        if chars and "".join(chars).strip():
            out.append(Line(" ".join("".join(chars).split()), *run))
        chars.clear()

    for k, ch in enumerate(text):
        if ch in "\r\n":
            flush()
            continue
        if ch.isspace():
            if chars:
                chars.append(ch)
            continue
        pdfium_c.FPDFText_GetCharBox(textpage.raw, start + k, *box)
        left, right, bottom, top = (b.value for b in box)
        height = max(top - bottom, 1.0)
        if chars and not (run[1] - height / 2 <= (bottom + top) / 2 <= run[3] + height / 2
                          and run[2] - height <= left <= run[2] + 3 * height):
            flush()
        if not chars:
            run = [left, bottom, right, top]
        else:
            run = [min(run[0], left), min(run[1], bottom), max(run[2], right), max(run[3], top)]
        chars.append(ch)
    flush()
    return out


def free_text_notes(page: pdfium.PdfPage) -> list[Line]:
    """FreeText annotations' /Contents, placed at their rectangle: flattening drops those
    without an appearance stream, and PDFium's own appearance for them carries no
    extractable text. (Callers skip notes whose text the page shows already.)
    """
    out: list[Line] = []
    rect = pdfium_c.FS_RECTF()
    for k in range(pdfium_c.FPDFPage_GetAnnotCount(page.raw)):
        annot = pdfium_c.FPDFPage_GetAnnot(page.raw, k)
        try:
            if pdfium_c.FPDFAnnot_GetSubtype(annot) != pdfium_c.FPDF_ANNOT_FREETEXT:
                continue
            size = pdfium_c.FPDFAnnot_GetStringValue(annot, b"Contents", None, 0)
            if size <= 2 or not pdfium_c.FPDFAnnot_GetRect(annot, rect):
                continue
            buf = ctypes.create_string_buffer(size)
            pdfium_c.FPDFAnnot_GetStringValue(annot, b"Contents", ctypes.cast(buf, ctypes.POINTER(pdfium_c.FPDF_WCHAR)), size)
            text = " ".join(buf.raw[: size - 2].decode("utf-16-le", errors="replace").split())
            if text:
                out.append(Line(text, rect.left, min(rect.bottom, rect.top), rect.right, max(rect.bottom, rect.top)))
        finally:
            pdfium_c.FPDFPage_CloseAnnot(annot)
    return out


def _insert_at(lines: list[Line], extra: Line) -> int:
    """Index in `lines` (reading order) after which `extra` belongs."""
    same_row = [k for k, ln in enumerate(lines) if ln.bottom <= extra.middle <= ln.top and ln.right <= extra.left + 2]
    if same_row:
        return same_row[-1] + 1  # after its label, on the same row
    above = [k for k, ln in enumerate(lines) if ln.middle > extra.middle
             and ln.left < extra.right and extra.left < ln.right]
    if above:
        return above[-1] + 1  # below the nearest text above it in the same column
    above = [k for k, ln in enumerate(lines) if ln.middle > extra.middle]
    return above[-1] + 1 if above else 0


def merge_lines(body: list[Line], extra: list[Line]) -> str:
    """The body's lines in their order, with each extra line (a field value, a note) put after
    the text to its left on the same row (joined to that line), or else below the text above it.
    """
    slots: dict[int, list[Line]] = {}
    for line in extra:
        slots.setdefault(_insert_at(body, line), []).append(line)
    out: list[str] = []
    for k in range(len(body) + 1):
        for line in slots.get(k, ()):
            prev = body[k - 1] if k else None
            if out and prev is not None and prev.bottom <= line.middle <= prev.top:
                out[-1] = f"{out[-1]} {line.text}"
            else:
                out.append(line.text)
        if k < len(body):
            out.append(body[k].text)
    return "\n".join(out)
