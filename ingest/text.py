"""Plain text and Markdown files: encoding detection and splitting into pseudo-pages."""
from __future__ import annotations

import codecs
import logging
from pathlib import Path

from ingest.errors import DocumentError
from ingest.structure import fences

logger = logging.getLogger(__name__)

PAGE_CHARS = 3000  # target size of a pseudo-page of a text file
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# charset-normalizer names the narrower Chinese codecs; decode with their supersets.
_SUPERSETS = {"gb2312": "gb18030", "gbk": "gb18030", "big5": "big5hkscs", "cp950": "big5hkscs"}


def detect_encoding(data: bytes) -> str:
    """Name of the codec for data: a BOM wins, then UTF-8 if it decodes, then charset-normalizer."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise DocumentError("The file is not text in any encoding docchat knows (binary?); "
                            "convert it to UTF-8 or PDF.")
    name = codecs.lookup(best.encoding).name.replace("_", "-")
    return _SUPERSETS.get(name, name)


def read_text(path: str | Path) -> tuple[str, str]:
    """Decoded text of a file and the encoding used."""
    data = Path(path).read_bytes()
    encoding = detect_encoding(data)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        logger.warning("%s: undecodable bytes in %s replaced", Path(path).name, encoding)
        text = data.decode(encoding, errors="replace")
    if "\x00" in text and text.count("\x00") > len(text) // 100:
        raise DocumentError(f"{Path(path).name} looks binary, not text; "
                            "convert it to UTF-8 text or PDF.")
    return text.lstrip("\ufeff"), encoding


def split_pages(text: str, page_chars: int = PAGE_CHARS) -> list[str]:
    """Cut a text file into pages so that citations like [p. 3] point somewhere useful.

    Text files have no pages. A form feed marks a page where the file has them (as
    pdftotext and man pages do); otherwise pages are about `page_chars` characters, cut
    at a blank line (not inside a Markdown code fence unless it runs past four times that
    size), or at a line end when a single paragraph runs past twice that size.
    """
    return split_pages_gaps(text, page_chars)[0]


def split_pages_gaps(text: str, page_chars: int = PAGE_CHARS) -> tuple[list[str], list[bool]]:
    """split_pages, and for each page after the first whether it was cut at a blank line
    (the blank line itself goes: a page neither ends nor starts with one). The structure
    puts it back between the pages: a title at the top of a page has a blank line above it,
    as in the file."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\f" in text:
        pages = text.split("\f")
        if pages and not pages[-1].strip():
            pages.pop()
        return (pages or [""]), [False] * max(0, len(pages) - 1)
    if len(text) <= page_chars:
        return [text], []
    pages: list[str] = []
    gaps: list[bool] = []
    current: list[str] = []
    size = 0
    in_fence = False
    blank_cut = False
    lines = text.split("\n")
    fenced = dict(fences(lines))
    for k, line in enumerate(lines):
        in_fence = fenced.get(k, in_fence)
        at_break = (not in_fence
                    and (not line.strip() and size >= page_chars or size >= 2 * page_chars)
                    or size >= 4 * page_chars)
        if at_break:
            pages.append("\n".join(current))
            gaps.append(blank_cut)
            current, size = [], 0
            blank_cut = not line.strip()
            if blank_cut:
                continue
        current.append(line)
        size += len(line) + 1
    if current:
        pages.append("\n".join(current))
        gaps.append(blank_cut)
    kept = [(p, g) for p, g in zip(pages, gaps) if p.strip()]
    if not kept:
        return [""], []
    return [p for p, _ in kept], [g for _, g in kept[1:]]
