"""Evidence first: the sentences of the packed sections that best match the question.

Shown as soon as packing is done, before the model has read anything, so a user has the
relevant passages on screen within a second whatever the backend; kept (collapsed) with the
finished answer. Pure and fast: no model, only the packer's own term functions (jieba for
Chinese, content words with Porter stems for English).
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Sequence

from docchat.context.retrieval import content_terms, doc_key, index_terms, translate_terms
from ingest.document import Document, Section
from ingest.segment import cjk_ratio

SECTIONS = 5  # sections shown, best first
SENTENCES = 2  # sentences shown per section
MAX_CHARS = 320  # a longer sentence is cut at a word boundary with "…"
MIN_CHARS = 12  # shorter fragments (page numbers, stray headings) are not evidence
HEADING_BONUS = 0.5  # share of a section's heading score added to each of its sentences

# Sentence ends: Chinese full stops always; Latin ones before whitespace; blank lines and
# list-like line starts.
_SPLIT = re.compile(r"(?<=[。！？；])|(?<=[.!?])\s+(?=[\"'“(\[A-Z0-9\u4e00-\u9fff])"
                    r"|\n\s*\n|\n(?=\s*[-*•·\d])")


@dataclass(frozen=True)
class Sentence:
    text: str
    page: str  # citation label of the page it is on ("12", "iv")
    score: float
    number: int | None = None  # the page's 1-based physical index in the file


@dataclass(frozen=True)
class Evidence:
    """One packed section and its best-matching sentences."""
    doc_id: object
    doc_name: str
    section: int
    heading: str  # "3 Binary packages > 3.2 Version"
    pages: str  # "12" or "12–14" (printed labels where the document has them)
    sentences: tuple[Sentence, ...]
    score: float

    def to_dict(self) -> dict:
        d = asdict(self)
        d["sentences"] = [asdict(s) for s in self.sentences]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Evidence":
        return cls(**{**d, "sentences": tuple(Sentence(**s) for s in d.get("sentences", ()))})


def split_sentences(text: str) -> list[str]:
    """Sentences of text (English and Chinese), whitespace-trimmed, empty ones dropped."""
    return [s.strip() for s in _SPLIT.split(text) if s and s.strip()]


def _clip(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= MAX_CHARS:
        return text
    cut = text[:MAX_CHARS]
    if " " in cut[MAX_CHARS // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(",;: ") + " …"


def _label(doc: Document, number: int) -> str:
    page = doc.page(number)
    return (page.label or str(page.number)) if page is not None else str(number)


def _pages(doc: Document, section: Section) -> str:
    a, b = _label(doc, section.page_start), _label(doc, section.page_end)
    return a if a == b else f"{a}–{b}"


def query_terms(question: str, translate: bool = True) -> list[str]:
    """Index terms of the question's content words, with their other-language words when
    translate is set."""
    words = content_terms(question)
    if translate:
        words += translate_terms(words)
    return list(dict.fromkeys(index_terms(" ".join(words))))


def find_evidence(documents: Sequence[Document], sections: Sequence[tuple[object, int]],
                  question: str, max_sections: int = SECTIONS,
                  per_section: int = SENTENCES) -> list[Evidence]:
    """The packed sections (``PackedContext.sections``) that match the question, each with its
    best sentences, best section first; sections without a matching sentence are left out."""
    # Translate only across languages (the dictionary and jieba take a second to load).
    asked = "zh" if cjk_ratio(question) >= 0.3 else "en"
    qterms = set(query_terms(question, any(d.language != asked for d in documents)))
    if not qterms:
        return []
    by_key: dict[object, Document] = {}
    for i, d in enumerate(documents):
        by_key[doc_key(d, i)] = d
        by_key.setdefault(d.name, d)
    # Candidates: (doc, section, sentence text, page label, terms present).
    candidates: list[tuple[Document, Section, list[tuple[str, str, set[str]]], set[str]]] = []
    df: Counter = Counter()
    for key, index in sections:
        doc = by_key.get(key)
        section = _section(doc, index) if doc is not None else None
        if section is None:
            continue
        found = []
        for block in section.blocks:
            if block.kind == "heading":
                continue
            for s in split_sentences(block.text):
                if len(s) < MIN_CHARS:
                    continue
                present = qterms.intersection(index_terms(s))
                df.update(present)
                found.append((s, _label(doc, block.page), present))
        heading = qterms.intersection(index_terms(" ".join(section.heading_path)))
        candidates.append((doc, section, found, heading))
    n = sum(len(f) for _, _, f, _ in candidates) or 1
    idf = {t: math.log(1 + n / df[t]) for t in df}
    out: list[Evidence] = []
    for doc, section, found, heading in candidates:
        head = HEADING_BONUS * sum(idf.get(t, math.log(1 + n)) for t in heading)
        scored = [(sum(idf[t] for t in present), k, s, page)
                  for k, (s, page, present) in enumerate(found) if present]
        if not scored:
            continue
        best = sorted(scored, key=lambda x: (-x[0], x[1]))[:per_section]
        best.sort(key=lambda x: x[1])  # in reading order
        sentences = tuple(Sentence(_clip(s), page, round(sc + head, 3)) for sc, _, s, page in best)
        score = max(x.score for x in sentences) + 0.1 * sum(x.score for x in sentences)
        out.append(Evidence(doc.id, doc.name, section.index, section.heading,
                            _pages(doc, section), sentences, round(score, 3)))
    out.sort(key=lambda e: -e.score)
    return out[:max_sections]


def _section(doc: Document, index: int) -> Section | None:
    if 0 <= index < len(doc.sections) and doc.sections[index].index == index:
        return doc.sections[index]
    return next((s for s in doc.sections if s.index == index), None)


def to_dicts(evidence: Sequence[Evidence]) -> list[dict]:
    return [e.to_dict() for e in evidence]


def from_dicts(items: Sequence[dict]) -> list[Evidence]:
    return [Evidence.from_dict(d) for d in items or ()]
