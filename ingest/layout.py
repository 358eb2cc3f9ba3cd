"""Page geometry from PDFium's text boxes: flattened form values put back in reading order,
tables as Markdown, code indentation.

Each pass runs only on pages that need it (pages with annotations; with a table caption;
with lines that look like code), so that other pages pay nothing for it.
"""

from __future__ import annotations

import ctypes
import re
import threading
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ingest.segment import plain_words
from ingest.structure import CODE_LINE


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
        if chars and not (
            run[1] - height / 2 <= (bottom + top) / 2 <= run[3] + height / 2
            and run[2] - height <= left <= run[2] + 3 * height
        ):
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
            pdfium_c.FPDFAnnot_GetStringValue(
                annot, b"Contents", ctypes.cast(buf, ctypes.POINTER(pdfium_c.FPDF_WCHAR)), size
            )
            text = " ".join(buf.raw[: size - 2].decode("utf-16-le", errors="replace").split())
            if text:
                out.append(
                    Line(
                        text,
                        rect.left,
                        min(rect.bottom, rect.top),
                        rect.right,
                        max(rect.bottom, rect.top),
                    )
                )
        finally:
            pdfium_c.FPDFPage_CloseAnnot(annot)
    return out


def _insert_at(lines: list[Line], extra: Line) -> int:
    """Index in `lines` (reading order) after which `extra` belongs."""
    same_row = [
        k
        for k, ln in enumerate(lines)
        if ln.bottom <= extra.middle <= ln.top and ln.right <= extra.left + 2
    ]
    if same_row:
        return same_row[-1] + 1  # after its label, on the same row
    above = [
        k
        for k, ln in enumerate(lines)
        if ln.middle > extra.middle and ln.left < extra.right and extra.left < ln.right
    ]
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


# ---- tables and code from text rectangles ----------------------------------------------------

# Pages worth a geometry pass: a table caption; a few lines that look like code (structure's
# code-line pattern, or a line ending in ; { }).
_TABLE_CAPTION = re.compile(
    r"^\s*(?:Table|TABLE|Tab\.|表)\s*[0-9一二三四五六七八九十]", re.MULTILINE
)
# structure's code-line pattern, searched over a whole page at once.
_CODE_OR_BRACE = re.compile(
    f"(?:{CODE_LINE.pattern})|[;{{}}][ \\t]*\\r?$", re.VERBOSE | re.MULTILINE
)
_MIN_TABLE_ROWS = 3
# A gap wider than this many text heights separates two cells (word gaps are ~0.3).
_CELL_GAP = 1.2
_FIXED_PITCH = 1  # PDF font descriptor flag bit 1 (FixedPitch)
_MONO_NAME = re.compile(
    r"mono|courier|typewriter|consol|inconsolata|menlo|fixed|code|cmtt|lmtt|(?<![a-z])tt",
    re.IGNORECASE,
)


@dataclass
class _Row:
    segments: list[list[float]]  # [left, bottom, right, top] of text runs separated by wide gaps
    bottom: float
    top: float

    @property
    def height(self) -> float:
        return max(self.top - self.bottom, 1.0)


def needs_tables(text: str) -> bool:
    """True for pages with a table caption ("Table 3", "表 2"): only they get the table pass."""
    return _TABLE_CAPTION.search(text) is not None


def needs_code(text: str) -> bool:
    """True for pages with a line that looks like code (cheap: one regex over the text)."""
    return _CODE_OR_BRACE.search(text) is not None


def _rects(textpage: pdfium.PdfTextPage) -> list[tuple[float, float, float, float]]:
    n = pdfium_c.FPDFText_CountRects(textpage.raw, 0, -1)
    left, top, right, bottom = (ctypes.c_double() for _ in range(4))
    out = []
    for k in range(n):
        pdfium_c.FPDFText_GetRect(textpage.raw, k, left, top, right, bottom)
        out.append((left.value, bottom.value, right.value, top.value))
    return out


def _rows(rects: list[tuple[float, float, float, float]]) -> list[_Row]:
    """Rects (in PDFium's text order) grouped into rows: a rect joins the current row when
    their heights overlap (by a tenth; so a cell wrapped over two lines, set beside
    one-line cells, stays in their row). Within a row, runs split at wide gaps, and a rect
    below or above a run that starts at its left edge joins that run (the same cell).
    """
    rows: list[_Row] = []
    for left, bottom, right, top in rects:
        row = rows[-1] if rows else None
        height = max(top - bottom, 1.0)
        if row is not None and min(row.top, top) - max(row.bottom, bottom) >= 0.1 * min(
            height, row.height
        ):
            same = next(
                (
                    seg
                    for seg in row.segments
                    if abs(seg[0] - left) <= 0.5 * height
                    and not (bottom <= (seg[1] + seg[3]) / 2 <= top)
                ),
                None,
            )
            last = row.segments[-1]
            if same is not None:
                seg = same
            elif left >= last[0] and left - last[2] <= _CELL_GAP * row.height:
                seg = last
            else:
                seg = None
            if seg is None:
                row.segments.append([left, bottom, right, top])
                row.segments.sort(key=lambda s: s[0])
            else:
                seg[0], seg[1], seg[2], seg[3] = (
                    min(seg[0], left),
                    min(seg[1], bottom),
                    max(seg[2], right),
                    max(seg[3], top),
                )
            row.bottom, row.top = min(row.bottom, bottom), max(row.top, top)
        else:
            rows.append(_Row([[left, bottom, right, top]], bottom, top))
    return rows


def _columns(rows: list[_Row]) -> list[float]:
    """Left edges shared by at least half of the rows (cell starts), sorted."""
    tol = 0.6 * sorted(r.height for r in rows)[len(rows) // 2]
    lefts = sorted(s[0] for r in rows for s in r.segments)
    clusters: list[list[float]] = []
    for x in lefts:
        if clusters and x - clusters[-1][-1] <= tol:
            clusters[-1].append(x)
        else:
            clusters.append([x])
    need = max(2, len(rows) // 2)
    return [min(c) for c in clusters if len(c) >= need]


_BOUNDED_CHARS = 2048
_BOUNDED_BUFFER = threading.local()  # one reused UTF-16 buffer per thread


def _bounded(textpage: pdfium.PdfTextPage, seg: list[float]) -> str:
    """Text inside the box, in one PDFium call (a cell is short; longer text is cut)."""
    buf = getattr(_BOUNDED_BUFFER, "buf", None)
    if buf is None:
        buf = _BOUNDED_BUFFER.buf = (ctypes.c_ushort * _BOUNDED_CHARS)()
    n = pdfium_c.FPDFText_GetBoundedText(
        textpage.raw, seg[0] - 0.5, seg[3] + 0.5, seg[2] + 0.5, seg[1] - 0.5, buf, _BOUNDED_CHARS
    )
    return (
        bytes(memoryview(buf).cast("B")[: 2 * max(0, n)])
        .decode("utf-16-le", errors="replace")
        .rstrip("\x00")
    )


def _cell_text(textpage: pdfium.PdfTextPage, seg: list[float]) -> str:
    return " ".join(_bounded(textpage, seg).split()).replace("|", "\\|")


def _table_runs(rows: list[_Row]) -> list[tuple[int, int, list[float]]]:
    """(first row, end row, column lefts) of runs of rows that line up in 2+ columns."""
    runs = []
    i = 0
    while i < len(rows):
        if len(rows[i].segments) < 2:
            i += 1
            continue
        j = i + 1
        while (
            j < len(rows)
            and rows[j - 1].bottom - rows[j].top <= 1.5 * rows[j].height
            and (len(rows[j].segments) >= 2 or _continues(rows[j - 1], rows[j]))
        ):
            j += 1
        while j > i and len(rows[j - 1].segments) < 2:
            j -= 1  # a run ends on a real row
        multi = [r for r in rows[i:j] if len(r.segments) >= 2]
        if len(multi) >= _MIN_TABLE_ROWS:
            cols = _columns(multi)
            if len(cols) >= 2 and sum(_fits(r, cols) for r in multi) >= 0.8 * len(multi):
                runs.append((i, j, cols))
        i = max(j, i + 1)
    return runs


def _continues(prev: _Row, row: _Row) -> bool:
    """A wrapped cell's second line: one run, right below the row before, not in its first cell."""
    return (
        len(row.segments) == 1
        and prev.bottom - row.top < prev.height
        and row.segments[0][0] > prev.segments[0][0] + prev.height
    )


def _fits(row: _Row, cols: list[float]) -> bool:
    tol = row.height
    return all(any(abs(s[0] - c) <= tol or c <= s[0] for c in cols) for s in row.segments) and len(
        row.segments
    ) <= len(cols)


def _column_of(x: float, cols: list[float], tol: float) -> int:
    k = 0
    for n, c in enumerate(cols):
        if x >= c - tol:
            k = n
    return k


def _markdown(
    textpage: pdfium.PdfTextPage, rows: list[_Row], cols: list[float]
) -> tuple[str, list[str]]:
    """The rows as a Markdown table, and each cell's text (to find the rows in the page text)."""
    table: list[list[str]] = []
    pieces: list[str] = []
    for row in rows:
        cells = [""] * len(cols)
        for seg in row.segments:
            text = _cell_text(textpage, seg)
            pieces.append(text)
            k = _column_of(seg[0], cols, row.height)
            cells[k] = f"{cells[k]} {text}".strip()
        if len(row.segments) == 1 and table and row.segments[0][0] > cols[0] + row.height:
            table[-1] = [f"{a} {b}".strip() for a, b in zip(table[-1], cells)]  # a wrapped cell
        else:
            table.append(cells)
    if not _plausible(table):
        return "", []
    lines = ["| " + " | ".join(table[0]) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(r) + " |" for r in table[1:]]
    return "\n".join(lines), pieces


_BULLETS = "•◦▪‣∙●○■□–—-*"


def _line_numbered(table: list[list[str]]) -> bool:
    """True for margin line numbers beside lines of running text (a line-numbered draft)."""
    if len(table[0]) != 2 or not all(r[0].isdecimal() for r in table):
        return False
    numbers = [int(r[0]) for r in table]
    return (all(0 < b - a <= 3 for a, b in zip(numbers, numbers[1:]))
            and 2 * sum(len(plain_words(r[1])) >= 3 for r in table) >= len(table))


def _plausible(table: list[list[str]]) -> bool:
    """False for a list read as a table (a bullet column, cells starting with bullets), a
    table with a column that is mostly empty, or line-numbered text."""
    if _line_numbered(table):
        return False
    rows = len(table)
    for k in range(len(table[0])):
        column = [r[k] for r in table]
        if sum(1 for c in column if not c) * 2 > rows:
            return False
        if sum(1 for c in column if c[:1] in _BULLETS and c) * 2 > rows:
            return False
    return True


def _dense(text: str) -> str:
    return "".join(text.split())


def _span(text: str, pieces: list[str], start: int) -> tuple[int, int] | None:
    """Line-aligned span of `text` (from `start`) holding exactly these pieces, in order."""
    pos = start
    first = last = None
    for piece in pieces:
        probe = piece.replace("\\|", "|")[:40]
        k = text.find(probe, pos)
        if k < 0 or (first is not None and k - pos > 200):
            return None
        first = k if first is None else first
        pos = k + len(probe)
        last = pos
    lo = text.rfind("\n", 0, first) + 1
    hi = text.find("\n", last)
    hi = len(text) if hi < 0 else hi
    want = sum(len(_dense(p.replace("\\|", "|"))) for p in pieces)
    if len(_dense(text[lo:hi])) > 1.15 * want + 10:
        return None  # other text lies between: not the table's own lines
    return lo, hi


def tables_as_markdown(textpage: pdfium.PdfTextPage, text: str) -> str:
    """The page text with its tables (rows of text runs lined up in 2+ columns) as Markdown
    tables. For pages where needs_tables(text) is True.
    """
    rows = _rows(_rects(textpage))
    if len(rows) < _MIN_TABLE_ROWS:
        return text
    out = text
    # Tables first (replacing spans, from the last to the first, keeps earlier offsets valid).
    found: list[tuple[int, int, str]] = []
    pos = 0
    for i, j, cols in _table_runs(rows):
        md, pieces = _markdown(textpage, rows[i:j], cols)
        if not md:
            continue
        span = _span(out, pieces, pos)
        if span is None:
            continue
        found.append((*span, md))
        pos = span[1]
    for lo, hi, md in reversed(found):
        out = f"{out[:lo]}\n{md}\n{out[hi:]}"
    return out


def _mono_start(
    textpage: pdfium.PdfTextPage, index: int, name: ctypes.Array, flags: ctypes.c_int
) -> bool:
    pdfium_c.FPDFText_GetFontInfo(textpage.raw, index, name, len(name), ctypes.byref(flags))
    # Many embedded monospaced fonts lack the FixedPitch flag: their name tells.
    return bool(flags.value & _FIXED_PITCH or _MONO_NAME.search(name.value.decode("latin-1")))


def indent_code(textpage: pdfium.PdfTextPage, text: str) -> str:
    """Leading spaces for the lines of code blocks (runs of 2+ lines whose first character is
    in a fixed-pitch font), from each line's left edge against the block's leftmost line, in
    character pitches. `text` is textpage.get_text_range(): its offsets are character indexes.
    """
    name = ctypes.create_string_buffer(128)
    flags = ctypes.c_int(0)
    x0, y0, x1, y1 = (ctypes.c_double() for _ in range(4))
    starts: list[
        tuple[int, float, float] | None
    ] = []  # (index, x, pitch) of each line's first character
    pos = 0
    for line in text.split("\n"):
        lead = len(line) - len(line.lstrip())
        index = pos + lead
        pos += len(line) + 1
        start = None
        if (
            lead < len(line.rstrip())
            and _mono_start(textpage, index, name, flags)
            and pdfium_c.FPDFText_GetCharOrigin(textpage.raw, index, x0, y0)
            and pdfium_c.FPDFText_GetCharOrigin(textpage.raw, index + 1, x1, y1)
        ):
            pitch = x1.value - x0.value
            if pitch > 0.5 and abs(y1.value - y0.value) < 1.0:
                start = (index, x0.value, pitch)
        starts.append(start)
    edits: list[tuple[int, int]] = []
    i = 0
    while i < len(starts):
        j = i
        while j < len(starts) and starts[j] is not None:
            j += 1
        if j - i >= 2:
            block = starts[i:j]
            pitch = sorted(p for _, _, p in block)[len(block) // 2]
            base = min(x for _, x, _ in block)
            edits += [(index, round((x - base) / pitch)) for index, x, _ in block]
        i = j + 1
    edits = [(index, n) for index, n in edits if 0 < n <= 80]
    if not edits:
        return text
    out = text
    for index, indent in sorted(edits, reverse=True):
        start = out.rfind("\n", 0, index) + 1
        out = out[:start] + " " * indent + out[index:]
    return out
