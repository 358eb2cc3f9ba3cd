"""The passages a model was given, as the claim checker (claims.py) reads them: each block of
a PackedContext's passages located in its page's text, so that a statement's support has a
page, a printed label and a character span to highlight."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from docchat.context.retrieval import doc_key
from ingest.document import Document


@dataclass(frozen=True)
class Source:
    """One passage the model was given: one page's part of an excerpt."""
    doc_id: object  # store id or name, as PackedContext uses
    document: str  # the document's display name
    page: int | None  # 1-based physical page index in the file (None: text without pages)
    label: str | None  # printed page label used in citations ("iv", "12"); None if no pages
    text: str  # the passage text
    offset: int = 0  # where text starts in that page's full text (for highlighting)
    kind: str = "prose"  # the block's kind: each line of "code" and "table" stands alone


def sources_for(context, documents: Sequence[Document]) -> list[Source]:
    """The passages of a PackedContext as Sources, in prompt order: each kept block located
    in its page's text (a block that runs onto the next page gives a Source on each); then
    the headings the prompt shows (heading_sources())."""
    by_key: dict[object, Document] = {}
    for i, d in enumerate(documents):
        by_key[doc_key(d, i)] = d
        by_key.setdefault(d.name, d)
    passages = list(getattr(context, "passages", None) or ())
    if not passages:  # an older context: its sections, whole
        passages = [(key, index, None) for key, index in context.sections]
    out: list[Source] = []
    for key, index, kept in passages:
        doc = by_key.get(key)
        section = _section(doc, index) if doc is not None else None
        if section is None:
            continue
        blocks = section.blocks if kept is None else [section.blocks[k] for k in kept
                                                      if 0 <= k < len(section.blocks)]
        for block in blocks:
            if block.text.strip():
                out += _block_sources(doc, key, block)
    return out + heading_sources(context, documents, passages, out)


# Characters a Latin title needs to be taken as shown when found in the text (Han: 2).
MIN_FOUND_TITLE = 4


def heading_sources(context, documents: Sequence[Document], passages: Sequence,
                    have: Sequence[Source] = ()) -> list[Source]:
    """The section titles the model was shown, as Sources of kind "heading" (in document
    order, each at its section's first page): every title on an excerpt's heading line
    (its section's and its parents'), and every title of the outline, i.e. each one in
    the context's text. An answer about a document's structure ("Chapter 7 is Tables and
    TableStyles") is checked against them: without them it was "not found" though the
    outline the model read says it. Titles already among the passages' blocks are left
    out."""
    text = getattr(context, "text", "") or ""
    seen = {(s.doc_id, s.text.strip()) for s in have if s.kind == "heading"}
    keys = {key for key, _, _ in passages}
    out: list[Source] = []
    for i, d in enumerate(documents):
        key = doc_key(d, i)
        if key not in keys and d.name not in keys and not text:
            continue
        shown = [_section(d, index) for k, index, _ in passages if k in (key, d.name)]
        on_lines = {t for s in shown if s is not None for t in s.heading_path}
        for section in d.sections:
            title = section.title.strip()
            # A title of a few letters ("C", an index's) is in any text: only from a line.
            short = len(title) < (MIN_FOUND_TITLE if title.isascii() else 2)
            if (not title or (key, title) in seen
                    or (title not in on_lines and (short or title not in text))):
                continue
            seen.add((key, title))
            out.append(_heading_source(d, key, section, title))
    return out


def _heading_source(doc: Document, key, section, title: str) -> Source:
    paged = doc.kind == "pdf"
    page = doc.page(section.page_start)
    if page is None:
        return Source(key, doc.name, None, None, title, 0, "heading")
    label = (page.label or str(page.number)) if paged else None
    return Source(key, doc.name, page.number if paged else None, label, title,
                  max(page.text.find(title), 0), "heading")


def _section(doc: Document, index: int):
    if 0 <= index < len(doc.sections) and doc.sections[index].index == index:
        return doc.sections[index]
    return next((s for s in doc.sections if s.index == index), None)


def _block_sources(doc: Document, key, block) -> list[Source]:
    paged = doc.kind == "pdf"
    number = block.page
    rest = block.text
    out: list[Source] = []
    while rest.strip():
        page = doc.page(number)
        if page is None:
            break
        label = (page.label or str(page.number)) if paged else None
        lines = rest.split("\n")
        at = page.text.find(rest)
        k = len(lines)
        while at < 0 and k > 1:  # the block runs onto the next page: its first k lines
            k -= 1
            at = page.text.find("\n".join(lines[:k]))
        part = "\n".join(lines[:k]) if at >= 0 else rest
        out.append(Source(key, doc.name, page.number if paged else None, label, part,
                          max(at, 0), block.kind))
        rest = "\n".join(lines[k:]) if at >= 0 else ""
        number += 1
    if not out:
        out.append(Source(key, doc.name, block.page if paged else None,
                          str(block.page) if paged else None, block.text, 0, block.kind))
    return out
