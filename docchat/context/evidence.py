"""Evidence first: the sentences of the packed sections that best match the question.

Shown as soon as packing is done, before the model has read anything, so a user has the
relevant passages on screen within a second whatever the backend; kept (collapsed) with the
finished answer. Pure and fast: no model, only the packer's own term functions (jieba for
Chinese, content words with Porter stems for English).

Sentences are whole: a line break inside wrapped prose does not end one, and a prose block
that stops mid-sentence continues into the next (a page or column break). A sentence scores
the weights of the question's words it holds, plus a bonus for the question's word pairs in
order; very long ones (tables, run-on lists) shrink, boilerplate (copyright and licence
notices, acknowledgements, funding lines, keyword and category lines, tables of contents,
"See Section ...") keeps a fifth unless the question asks about it, and a question that asks
how much or how many prefers sentences with a number. Each section shows its best sentences
best first; the sections under a heading that carries a dotted number of the question (the
release or section it names: "3.4.0") come first, their opening sentences where none holds
a word of the question. Dense re-ranking (MiniLM cosines of the 16 best sentences) was
measured on the tuning sets and lowered both figures (0.43/0.25 -> 0.41/0.20), at 1-3 s per
question on this box, so it is not used; the passage vectors packing already scored are (a
sentence of a window that means what the question asks ranks up: DENSE_BONUS below), at no
model cost.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Sequence

from docchat.context import facts
from docchat.context.facts import sentence_spans
from docchat.context.retrieval import (
    STOPWORDS,
    content_terms,
    doc_key,
    dotted_numbers,
    index_terms,
    numbered_depth,
    translate_terms,
)
from ingest.document import Document, Section
from ingest.segment import cjk_ratio

SECTIONS = 5  # sections shown, best first
SENTENCES = 2  # sentences shown per section
MAX_CHARS = 320  # a longer sentence is cut at a word boundary with "…"
MIN_CHARS = 12  # shorter fragments (page numbers, stray headings) are not evidence
HEADING_BONUS = 0.5  # share of a section's heading score added to each of its sentences

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
    """Sentences of text (English and Chinese), whitespace-trimmed, empty ones dropped; a line
    break inside wrapped prose does not end one (facts.sentence_spans)."""
    return [text[a:b] for a, b in sentence_spans(text)]


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


# Chinese function words the packer's stop list keeps (dropping them there moved nothing on
# the tuning sets: 732/944/1037 against 732/944/1038 found at 2k/4k/8k), whose dictionary
# senses are noise among a section's sentences: 由 ("by, from") translates to "follow",
# "because", "due", and an English manual's sentences with those words outranked the
# version section a question "软件包的版本号由哪几部分组成？" asked about.
_FUNCTION_WORDS = frozenset("由 从 于 以 为 将 哪几 几".split())


def query_terms(question: str, translate: bool = True) -> list[str]:
    """Index terms of the question's content words, with their other-language words when
    translate is set."""
    words = [w for w in content_terms(question) if w not in _FUNCTION_WORDS]
    if translate:
        words += translate_terms(words)
    return list(dict.fromkeys(index_terms(" ".join(words))))


def find_evidence(documents: Sequence[Document], sections: Sequence[tuple[object, int]],
                  question: str, max_sections: int = SECTIONS,
                  per_section: int = SENTENCES) -> list[Evidence]:
    """The packed sections (``PackedContext.sections``) that match the question, each with its
    best sentences (best first), best section first; sections without a matching sentence
    are left out."""
    # Translate only across languages (the dictionary and jieba take a second to load).
    asked = "zh" if cjk_ratio(question) >= 0.3 else "en"
    qterms = query_terms(question, any(d.language != asked for d in documents))
    if not qterms:
        return []
    by_key: dict[object, Document] = {}
    own_key = {id(d): doc_key(d, i) for i, d in enumerate(documents)}
    for i, d in enumerate(documents):
        by_key[doc_key(d, i)] = d
        by_key.setdefault(d.name, d)
    wanted = set(qterms)
    numbers = dotted_numbers(question)
    dense = _passage_meaning(documents, question, sections)
    candidates: list[tuple[Document, Section, list[_Candidate], set[str], bool]] = []
    df: Counter = Counter()
    for key, index in sections:
        doc = by_key.get(key)
        section = _section(doc, index) if doc is not None else None
        if section is None:
            continue
        found = []
        near = _window_meaning(dense, own_key[id(doc)], section)
        for text, page, block in _units(section):
            for a, b in sentence_spans(text):
                s = text[a:b]
                if len(s) < MIN_CHARS:
                    continue
                words = index_terms(s)
                present = wanted.intersection(words)
                df.update(present)
                found.append(_Candidate(s, page, present, words, near.get(block, 0.0)))
        heading = wanted.intersection(index_terms(" ".join(section.heading_path)))
        candidates.append((doc, section, found, heading,
                           numbered_depth(numbers, section) is not None))
    n = sum(len(f) for _, _, f, _, _ in candidates) or 1
    idf = {t: math.log(1 + n / df[t]) for t in df}
    rank = _Ranker(question, qterms, idf, n)
    # The sections under a heading that names the question's release or section number
    # ("3.4.0") go first: the question asks about them, whatever other releases' notes say.
    out = sorted(((numbered, e) for doc, section, found, heading, numbered in candidates
                  if (e := _evidence(doc, section, found, heading, rank, per_section,
                                     numbered)) is not None),
                 key=lambda x: (-x[0], -x[1].score))
    return [e for _, e in out[:max_sections]]


@dataclass
class _Candidate:
    text: str
    page: int  # physical page the sentence starts on
    present: set  # the question's terms it holds
    words: list  # its index terms, in order
    meaning: float = 0.0  # its window's dense score, 0..1 (_passage_meaning)


# Boilerplate: notices, thanks, running matter, keyword lines, tables of contents.
_BOILERPLATE = re.compile("|".join([
    r"copyright|©|\(c\)\s*\d{4}|all rights reserved|permission (?:is (?:hereby )?granted|to "
    r"(?:make|copy|use|reproduce))|licen[cs]ed? (?:under|to)|under the terms of the",
    r"government is authori[sz]ed|reproduce and distribute reprints|notwithstanding any "
    r"copyright|views and conclusions contained",
    r"acknowledg|we (?:would like to |also )?thank|(?:is|was) (?:partly |partially )?"
    r"(?:supported|funded) (?:in part )?by|grant (?:no|number)",
    r"^\W*(?:keywords?|index terms|categories and subject descriptors|general terms|acm "
    r"reference format|ccs concepts)\b|\barxiv:|\bdoi:|\bisbn\b",
    r"(?:\.\s?){5,}", r"^\W*see (?:also )?(?:section|chapter|page|appendix)\b",
    r"版权所有|版权声明|致谢|感谢.{0,20}(?:支持|帮助|资助)|关键词[:：]|关键字[:：]|资助",
]), re.IGNORECASE)
_LICENCE_QUESTION = re.compile(r"licen[cs]|copyright|warrant|permission|thank|acknowledg|"
                               r"fund|grant|许可|版权|授权|致谢|资助", re.IGNORECASE)
_BOILER_HEADING = re.compile(r"acknowledg|references|bibliography|致谢|参考文献", re.IGNORECASE)
# Questions that ask for a quantity: sentences with a number rank up.
_QUANTITY = re.compile(r"\bhow (?:much|many|long|fast|large|big|often|far|old)\b|"
                       r"\bwhat (?:speed-?ups?|percentage|share|fraction|ratio|size|number)\b|"
                       r"\b(?:speed-?ups?|how much faster)\b|多少|几[个次种天年倍]|多长|多大|"
                       r"多快|多久|比例|倍", re.IGNORECASE)
BOILERPLATE = 0.2  # score share kept by a boilerplate sentence
NUMBER_BONUS = 1.5  # factor for a sentence with a number, when the question asks how much
LONG_WORDS = 40  # index terms beyond which a sentence's score shrinks (a table, a list)
PHRASE_BONUS = 0.5


_STOP_TERMS = frozenset(index_terms(" ".join(STOPWORDS)))


class _Ranker:
    """A sentence's score: the weights of the question's words it holds, with a bonus for
    the question's word pairs in order, shrunk for very long sentences and boilerplate, and
    grown for numbers when the question asks how much."""

    def __init__(self, question: str, qterms: list[str], idf: dict, n: int) -> None:
        self.idf, self.unseen = idf, math.log(1 + n)
        self.pairs = set(zip(qterms, qterms[1:]))
        self.quantity = _QUANTITY.search(question) is not None
        self.notices_asked = _LICENCE_QUESTION.search(question) is not None

    def score(self, c: _Candidate, boiler_section: bool) -> float:
        if not c.present:
            return 0.0
        score = sum(self.idf[t] for t in c.present) + DENSE_BONUS * c.meaning * self.unseen
        content = [w for w in c.words if w not in _STOP_TERMS]
        score += PHRASE_BONUS * sum(min(self.idf.get(a, 0), self.idf.get(b, 0))
                                    for a, b in zip(content, content[1:]) if (a, b) in self.pairs)
        if len(c.words) > LONG_WORDS:
            score *= (LONG_WORDS / len(c.words)) ** 0.5
        if not self.notices_asked and (boiler_section or _BOILERPLATE.search(c.text)):
            score *= BOILERPLATE
        if self.quantity and facts.numbers(c.text):
            score *= NUMBER_BONUS
        return score


def _evidence(doc: Document, section: Section, found: list[_Candidate], heading: set,
              rank: _Ranker, per_section: int, numbered: bool = False) -> Evidence | None:
    """A section's best sentences and its score. numbered: a heading over it carries a
    dotted number of the question (the release or section it names): where none of its
    sentences holds a word of the question, its opening sentences stand for it."""
    boiler = _BOILER_HEADING.search(section.heading) is not None
    head = HEADING_BONUS * sum(rank.idf.get(t, rank.unseen) for t in heading)
    scored = [(rank.score(c, boiler), k, c) for k, c in enumerate(found)]
    best = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1]))[:per_section]
    if not best and numbered:
        best = [(0.0, k, c) for k, c in enumerate(found)][:per_section]
    if not best:
        return None
    sentences = tuple(Sentence(_clip(c.text), _label(doc, c.page), round(sc + head, 3), c.page)
                      for sc, _, c in best)
    score = max(x.score for x in sentences) + 0.1 * sum(x.score for x in sentences)
    return Evidence(doc.id, doc.name, section.index, section.heading, _pages(doc, section),
                    sentences, round(score, 3))


_ENDS = (".", "!", "?", ":", "。", "！", "？", "：", "；", ";", "”", "\"", ")")


def _units(section: Section) -> list[tuple[str, int, int]]:
    """The section's text blocks (no headings) as (text, page, block index), a prose block
    that stops mid-sentence joined with the next one (a sentence cut by a page or column
    break), each line of code and tables apart."""
    out: list[tuple[str, int, int]] = []
    joinable = False
    for k, block in enumerate(section.blocks):
        if block.kind == "heading" or not block.text.strip():
            joinable = False
            continue
        text = block.text.strip()
        if block.kind in ("code", "table"):  # each line is a unit: a command, a row
            out += [(line.strip(), block.page, k) for line in text.split("\n")
                    if line.strip()]
            joinable = False
            continue
        if joinable and (text[0].islower() or text[0].isdigit()):
            out[-1] = (out[-1][0] + " " + text, out[-1][1], out[-1][2])
        else:
            out.append((text, block.page, k))
        joinable = block.kind == "prose" and not out[-1][0].endswith(_ENDS)
    return out


# Passage meaning: the dense scores of the windows (docchat/library/windows.py) of the
# packed sections, where the embedder has their vectors at hand (packing just used them: no
# model runs here, the question's vector is the one packing computed). The DENSE_TOP best
# windows are scaled from 0 to 1; a sentence that holds words of the question gains
# DENSE_BONUS times that, times the weight of a word seen once. On bench/answers.py (d)
# (tuning / tune2, shown and first): without 0.46 / 0.25 and 0.39 / 0.25; 0.5 0.46 / 0.27
# and 0.39 / 0.25; 1.0 for every sentence 0.48 / 0.25 and 0.39 / 0.19 (verbatim first 0.8
# -> 0.7); 1.0 only for sentences without a word of the question 0.42 / 0.25 and 0.39 / 0.25.
DENSE_BONUS = 0.5
DENSE_TOP = 10


def _passage_meaning(documents: Sequence[Document], question: str,
                     sections: Sequence[tuple[object, int]]) -> dict[tuple, float]:
    """(doc key, section index, first, last) -> 0..1 for the best windows of the packed
    sections; empty without stored window vectors (or the embedder)."""
    from docchat.context import embeddings
    embedder = embeddings.DEFAULT
    if not embedder.enabled:
        return {}
    keys = [doc_key(d, i) for i, d in enumerate(documents)]
    names = {d.name: k for d, k in zip(documents, keys)}
    wanted = {(names.get(k, k), idx) for k, idx in sections}
    scores = embedder.scores(question, documents, keys, kind="windows", only_ready=True)
    scores = {w: v for w, v in scores.items() if w[:2] in wanted}
    if not scores:
        return {}
    ranked = sorted(scores.values(), reverse=True)
    hi, lo = ranked[0], ranked[min(DENSE_TOP, len(ranked) - 1)]
    if hi <= lo:
        return {}
    return {w: (v - lo) / (hi - lo) for w, v in scores.items() if v > lo}


def _window_meaning(dense: dict[tuple, float], key: object, section: Section
                    ) -> dict[int, float]:
    """Block index -> its window's scaled dense score, for one section."""
    out: dict[int, float] = {}
    for (k, idx, first, last), v in dense.items():
        if idx == section.index and k == key:
            for b in range(first, last + 1):
                out[b] = v
    return out


def _section(doc: Document, index: int) -> Section | None:
    if 0 <= index < len(doc.sections) and doc.sections[index].index == index:
        return doc.sections[index]
    return next((s for s in doc.sections if s.index == index), None)


def to_dicts(evidence: Sequence[Evidence]) -> list[dict]:
    return [e.to_dict() for e in evidence]


def from_dicts(items: Sequence[dict]) -> list[Evidence]:
    return [Evidence.from_dict(d) for d in items or ()]
