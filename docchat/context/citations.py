"""Page citations in answers: find "[p. 12]", "[p. iv]", "[pp. 3-5]" or "[report.pdf p. 3]"
and map each to a document and a physical page."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from ingest.document import Document

# "[p. 12]", "[pp. 3-5]", "[p. 3, p. 5]", "[report.pdf p. 3]", "[report.pdf, p. 3]", "【p. 3】"
MARKER = re.compile(
    r"[\[【]\s*(?:(?P<doc>[^\[\]【】\n]{1,200}?)[\s,:;]+)?"
    r"(?P<pp>pp?\.|pages?)\s*(?P<labels>[^\[\]【】\n]{1,60}?)\s*[\]】]",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"\s*[,;、，]\s*(?:pp?\.\s*)?", re.IGNORECASE)
_RANGE = re.compile(r"^(\d{1,5})\s*[-–—~]\s*(\d{1,5})$")
MAX_RANGE = 20  # pages a cited range may expand to


@dataclass(frozen=True)
class Source:
    """One cited page: the marker as written and the page it points to."""
    marker: str
    doc_id: int | None
    doc_name: str
    page: int  # physical page, 1-based
    label: str  # the page as cited ("iv", "12")


def _labels(raw: str) -> list[str]:
    out: list[str] = []
    for part in _SPLIT.split(raw.strip()):
        part = part.strip().rstrip(".")
        if not part:
            continue
        m = _RANGE.match(part)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if a <= b and b - a < MAX_RANGE:
                out += [str(n) for n in range(a, b + 1)]
            else:
                out += [m.group(1), m.group(2)]
        else:
            out.append(part)
    return out


def _page_for(doc: Document, label: str) -> int | None:
    """Physical page cited by label: a printed label first, then a plain page number."""
    wanted = label.strip().lower()
    for page in doc.pages:
        if page.label is not None and page.label.strip().lower() == wanted:
            return page.number
    if wanted.isdecimal():  # no page printed with that label: a physical page number
        page = doc.page(int(wanted))
        if page is not None:
            return page.number
    return None


def _named(documents: Sequence[Document], name: str) -> list[Document]:
    """Documents whose name (or name without suffix) matches the one cited."""
    key = name.strip().strip("\"'").lower()
    if not key:
        return []
    exact = [d for d in documents if d.name.lower() == key]
    if exact:
        return exact
    stem = [d for d in documents if d.name.lower().rsplit(".", 1)[0] == key.rsplit(".", 1)[0]]
    if stem:
        return stem
    return [d for d in documents if key in d.name.lower() or d.name.lower() in key]


def find_sources(text: str, documents: Sequence[Document],
                 context_pages: Iterable[tuple[object, int]] | None = None) -> list[Source]:
    """Every page cited in text, in order of first citation, mapped to its document.

    Without a document name, a marker points to each document that has that page; when
    context_pages (doc id or name, physical page) is given, only to pages the model saw.
    """
    seen: set[tuple[int | None, str, int]] = set()
    allowed = None
    if context_pages is not None:
        allowed = {(d, p) for d, p in context_pages}
    out: list[Source] = []
    for m in MARKER.finditer(text):
        docs = list(documents)
        if m.group("doc"):
            named = _named(documents, m.group("doc"))
            if named:
                docs = named
            elif m.group("pp").lower().startswith("page"):
                continue  # "[see page 3]" style prose, not a citation
        for label in _labels(m.group("labels")):
            hits = []
            for doc in docs:
                number = _page_for(doc, label)
                if number is not None:
                    hits.append((doc, number))
            if allowed is not None and len(hits) > 1:
                seen_by_model = [(d, n) for d, n in hits
                                 if (d.id, n) in allowed or (d.name, n) in allowed]
                hits = seen_by_model or hits
            for doc, number in hits:
                key = (doc.id, doc.name, number)
                if key in seen:
                    continue
                seen.add(key)
                out.append(Source(marker=m.group(0), doc_id=doc.id, doc_name=doc.name,
                                  page=number, label=label))
    return out


def to_dicts(sources: Iterable[Source]) -> list[dict]:
    """JSON-ready sources, for storing with the answer."""
    return [{"marker": s.marker, "doc_id": s.doc_id, "doc_name": s.doc_name, "page": s.page,
             "label": s.label} for s in sources]


def from_dicts(rows: Iterable[dict]) -> list[Source]:
    """Sources back from to_dicts()."""
    return [Source(marker=r["marker"], doc_id=r.get("doc_id"), doc_name=r.get("doc_name", ""),
                   page=int(r["page"]), label=str(r.get("label", r["page"]))) for r in rows]
