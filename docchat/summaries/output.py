"""A summary's title and its Markdown file: the document's own title, the metadata line,
the checked statements and their legend."""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from docchat.context.citations import MAX_RANGE
from docchat.summaries.checks import mark_statements
from ingest.document import Document

if TYPE_CHECKING:
    from docchat.summaries.summarize import Summary

_HASH_NAME = re.compile(r"[0-9a-f]{64}")
# Titles that name a file or a tool, not the document ("Microsoft Word - draft.docx").
_JUNK_TITLE = re.compile(r"^(?:microsoft \w+ - |untitled\b|document\d*$)|\.(?:docx?|tex|dvi|"
                         r"pdf|odt|rtf|ps)$", re.I)
# First headings that are a section, not the document: "1. Introduction", "I. FIRST...".
_SECTION_HEADING = re.compile(r"^(?:(?:\d+(?:\.\d+)*|[IVXLC]+|[A-Z])[.)]?\s|abstract\b|"
                              r"introduction\b|contents\b|摘要|目录|第.{1,3}[章节])", re.I)
# Page-1 lines that are not a title: dates, identifiers, addresses, notices.
_NOT_TITLE = re.compile(r"(?:arxiv|doi|https?://|www\.|@|©|copyright|preprint|submitted|"
                        r"accepted|received|draft|version \d|page \d|^\(?dated?\b)", re.I)
_FOOTNOTE_MARKS = re.compile(r"[\s∗*†‡§¶¹²³⁴⁵]+$")
MAX_TITLE_CHARS = 150
MAX_TITLE_WORDS = 16


def document_title(doc: Document) -> str:
    """The document's own title, for prompts and headings: its metadata title, unless that
    is only a stand-in (the file's stem, a hash-named upload's stem, a tool's name, or the
    first section heading, which ingest takes when the file names no title); then the title
    printed at the top of page 1 (the text before the first heading); then the metadata
    title if it is not a numbered section ("1. Introduction" names a paper's first part, not
    the paper), else the document's name."""
    stem = Path(doc.path).stem if doc.path else ""
    title = (doc.title or "").strip()
    if title == stem and _HASH_NAME.fullmatch(stem):
        title = ""  # an upload stored under its hash: its name stands in
    first = next((s.heading_path[0] for s in doc.sections if s.heading_path), "")
    stand_in = not title or title == stem or title == first or bool(_JUNK_TITLE.search(title))
    if not stand_in:
        return title
    printed = page_one_title(doc)
    if printed:
        return printed
    if title and not (title == first and _SECTION_HEADING.match(title)) \
            and not _JUNK_TITLE.search(title):
        return title
    return doc.name


def page_one_title(doc: Document) -> str:
    """The title printed at the top of the first page: the first line of the text before
    the first heading, with a line that continues it ("Manuscript Title:" / "with Forced
    Linebreak"), without footnote marks; "" when that line does not look like a title."""
    lead = [s for s in doc.sections if s.level == 0 and not s.heading_path]
    if lead:
        first_page = lead[0].page_start
        text = "\n".join(b.text for b in lead[0].blocks if b.page == first_page)
    elif not doc.sections and doc.pages:
        text = doc.pages[0].text
    else:
        return ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    title = lines[0]
    if len(lines) > 1 and (title.endswith((":", "-", "–")) or lines[1][:1].islower()):
        title = f"{title} {lines[1]}"
    title = _FOOTNOTE_MARKS.sub("", title).strip(" :-–")
    return title if _title_like(title) else ""


def _title_like(line: str) -> bool:
    letters = sum(ch.isalpha() for ch in line)
    if letters < 3 or len(line) > MAX_TITLE_CHARS or _NOT_TITLE.search(line):
        return False
    if re.search(r"[\u3400-\u9fff]", line):
        return len(line) <= 40 and not line.endswith(("。", "，", "；"))
    return len(line.split()) <= MAX_TITLE_WORDS and not re.search(r"[a-z]{2}[.;,]$", line)


_HEADINGS = re.compile(r"^\s*#+\s*(overview|summary|概述|摘要|总结)\s*:?\s*$", re.I)


def one_line_overview(text: str, limit: int = 160) -> str:
    """The first line of prose after an Overview heading (else the first prose line)."""
    lines = [ln.strip() for ln in text.splitlines()]
    start = next((i + 1 for i, ln in enumerate(lines) if _HEADINGS.match(ln)), 0)
    prose = [ln for ln in lines[start:] + lines[:start] if ln and not ln.startswith("#")]
    for ln in prose or [ln.lstrip("#") for ln in lines]:
        plain = re.sub(r"^(?:[>*+-]|\d+[.)])\s*", "", ln).replace("**", "").strip()
        if plain:
            return plain if len(plain) <= limit else plain[: limit - 1].rstrip() + "…"
    return ""


def render_markdown(doc: Document, summary: Summary, backend_label: str = "") -> str:
    """The summary file: title, one metadata line, then the backend's summary with its
    statements checked (page markers, not-found marks and the legend line)."""
    pages = len(doc.pages)
    cut = summary.loops
    if summary.language == "zh":
        how = "一次生成" if summary.mode == "single" else f"分 {summary.groups} 部分归并"
        meta = f"{doc.name} · {pages} 页 · {how}"
        loops = f" · {cut} 步因重复而截断" if cut else ""
        title = f"# 摘要：{document_title(doc)}"
    else:
        how = "single pass" if summary.mode == "single" else \
            f"map-reduce over {summary.groups} parts"
        meta = f"{doc.name} · {pages} page{'s' if pages != 1 else ''} · {how}"
        loops = f" · {cut} step{'s' if cut != 1 else ''} cut where the model repeated itself" \
            if cut else ""
        title = f"# Summary: {document_title(doc)}"
    if backend_label:
        meta += f" · {backend_label}"
    span = page_span(doc)
    if span:
        meta += f" · {span}"
    body = mark_statements(summary.text.strip(), summary.check, summary.language)
    return f"{title}\n\n_{meta}{loops}_\n\n{body.strip()}\n"


def page_span(doc: Document) -> str:
    """Page markers for the pages summarised: even a summary citing none opens its pages."""
    if not doc.pages:
        return ""

    def label(page) -> str:
        return str(page.label or page.number) if doc.page_labels else str(page.number)

    first, last = doc.pages[0], doc.pages[-1]
    if first is last:
        return f"[p. {label(first)}]"
    if not doc.page_labels and last.number - first.number < MAX_RANGE:
        return f"[pp. {first.number}-{last.number}]"
    return f"[p. {label(first)}] – [p. {label(last)}]"
