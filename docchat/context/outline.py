"""The compact outline of each document: heading paths with page markers, all levels when
they fit, else the top levels first, deepened where the question's hits are."""
from __future__ import annotations

import logging
import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Sequence

from docchat.context.cache import DocumentCache
from docchat.context.passages import TokenCounter, page_marker
from docchat.context.retrieval import (
    ZH_NUMERAL,
    index_terms,
    title_names,
    title_words,
    zh_number,
)
from ingest.document import Document

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Entry:
    depth: int
    line: str
    start: int  # position of the first section under this heading
    end: int  # position after the last section under it


@dataclass(frozen=True)
class Outline:
    text: str
    tokens: int
    dropped: int  # headings left out
    entries: tuple[tuple[Entry, ...], ...]  # per document
    chosen: tuple[tuple[int, ...], ...]  # per document: indexes into entries, by priority
    headers: tuple[str, ...]

    def smaller(self) -> "Outline | None":
        """The outline without its lowest-priority half (then empty; then None)."""
        if any(self.chosen):
            chosen = tuple(c[: len(c) // 2] for c in self.chosen)
            return _render(self.entries, chosen, self.headers, None)
        if self.text:
            return Outline("", 0, self.dropped, self.entries, self.chosen, self.headers)
        return None


_ENTRIES: DocumentCache[tuple[Entry, ...]] = DocumentCache(16, equal=False)  # 2.6 ms, 1,158 pages


def entries_of(doc: Document) -> tuple[Entry, ...]:
    """An entry for every distinct heading path prefix, in document order (cached)."""
    return _ENTRIES.get(doc, _entries)


def _entries(doc: Document) -> tuple[Entry, ...]:
    out: list[list] = []
    open_: dict[tuple[str, ...], int] = {}
    for pos, s in enumerate(doc.sections):
        for k in range(1, len(s.heading_path) + 1):
            path = s.heading_path[:k]
            if path in open_:
                out[open_[path]][3] = pos + 1
                continue
            open_[path] = len(out)
            line = "  " * (k - 1) + f"{path[-1]} {page_marker(doc, s.page_start)}"
            out.append([k, line, pos, pos + 1])
    return tuple(Entry(*e) for e in out)


def build_outline(documents: Sequence[Document], counter: TokenCounter, budget: int,
                  relevance: Sequence[dict[int, float]] | None = None) -> Outline:
    """The outline of every document within budget tokens: shallow levels first, then the
    deeper headings over the sections most relevant to the question (relevance: per
    document, section position -> score)."""
    entries = tuple(entries_of(d) for d in documents)
    headers = tuple(f"{d.name} ({len(d.pages)} pages)" for d in documents)
    cost = sum(counter.text(h) + 2 for h in headers)
    ranked = []  # (depth, -relevance, share of the document before it, doc, entry index)
    for di, es in enumerate(entries):
        rel = relevance[di] if relevance else {}
        hits = sorted(rel)
        for ei, e in enumerate(es):
            score = 0.0
            if hits and e.depth > 1:
                lo, hi = bisect_left(hits, e.start), bisect_left(hits, e.end)
                score = max((rel[hits[k]] for k in range(lo, hi)), default=0.0)
            # Top-level headings of several documents interleave by position.
            key = (e.depth, 0.0, ei / len(es)) if score == 0 else (1.5, -score, 0.0)
            ranked.append((*key, di, ei))
    ranked.sort()
    chosen: list[list[int]] = [[] for _ in documents]
    for depth, _, _, di, ei in ranked:
        c = counter.text(entries[di][ei].line) + 1
        if cost + c > budget:
            if depth >= 2:
                continue
            break
        cost += c
        chosen[di].append(ei)
    return _render(entries, tuple(tuple(c) for c in chosen), headers, counter)


def _render(entries, chosen, headers, counter: TokenCounter | None) -> Outline:
    parts, dropped = [], 0
    for es, picked, head in zip(entries, chosen, headers):
        keep = set(picked)
        lines = [f"- {head}"]
        gap = 0
        for ei, e in enumerate(es):
            if ei in keep:
                if gap and e.depth == 1:
                    lines.append(f"[… {gap} more headings]")
                    gap = 0
                lines.append(e.line)
            else:
                gap += 1
                dropped += 1
        if gap:
            lines.append(f"[… {gap} more headings]")
        parts.append("\n".join(lines))
    text = "\n".join(parts)
    tokens = counter.text(text) if counter is not None else 0
    return Outline(text, tokens, dropped, entries, chosen, headers)


PART_TOP = 3  # a part (heading) scores as the sum of its best sections' scores
PART_ALPHA = 0.6  # the part asked about: the smallest one scoring this share of the best


def entry_title(doc: Document, e: Entry) -> str:
    """The title of outline entry e: its heading at its own depth."""
    return doc.sections[e.start].heading_path[e.depth - 1]


def part_scores(doc: Document, relevance: dict[int, float]) -> list[float]:
    """Score of each heading (entry) of doc for the question: the sum of the PART_TOP best
    section scores under it (relevance: section position -> score)."""
    hits = sorted(relevance)
    out = []
    for e in entries_of(doc):
        lo, hi = bisect_left(hits, e.start), bisect_left(hits, e.end)
        best = sorted((relevance[hits[k]] for k in range(lo, hi)), reverse=True)[:PART_TOP]
        out.append(sum(best))
    return out


def title_terms(title: str) -> set[str]:
    """A heading title's search words (stemmed as the index), without numbers and
    function words: "10.2 Backup and recovery" -> {"backup", "recoveri"}."""
    return {t for t in title_words(title) if not t.isdigit()}


def named_part(documents: Sequence[Document], relevance: Sequence[dict[int, float]],
               named: set[str], with_children: bool = False) -> tuple[int, int] | None:
    """(document, entry) of the heading the question names by its title: all of its title
    words among named (the question's search words, stemmed; translations included), or
    all of one of its other names' (title_names: "撤销（UNDO）" is named by "撤销"). The
    title with most words named first, then the part's score; a one-word title only over
    the question's hits, and not a word of the document's file name ("glossaries" names
    the manual, not its option of that name) nor the document's own apparatus ("目录",
    "Index": a question about "控制目录外观" asks about tables of contents). None if none.
    (A share of the words was tried: "debian 目录下的其他文件" then stood for "debian 目录中
    的必需内容" on a question about the essential files.)"""
    if not named:
        return None
    best, found = None, None
    for di, (d, rel) in enumerate(zip(documents, relevance)):
        es = entries_of(d)
        scores = part_scores(d, rel)
        own = set(index_terms(d.name))
        for ei, (apparatus, names) in enumerate(_ENTRY_NAMES.get(d, _entry_names)):
            if with_children and not _has_children(es, ei):
                continue
            for words in names:
                hit = len(words & named)
                if hit < len(words) or hit == 1 and (
                        scores[ei] <= 0 or words <= own or apparatus):
                    continue
                key = (hit, scores[ei])
                if best is None or key > best:
                    best, found = key, (di, ei)
    return found


def _entry_names(doc: Document) -> list[tuple[bool, tuple[frozenset[str], ...]]]:
    """Per outline entry: whether it is the document's apparatus (_NOT_CHAPTER), and the
    title_terms of each name its title goes by (title_names), the empty ones left out."""
    out = []
    for e in entries_of(doc):
        title = entry_title(doc, e)
        names = (frozenset(title_terms(name)) for name in title_names(title))
        out.append((bool(_NOT_CHAPTER.match(title)), tuple(n for n in names if n)))
    return out


_ENTRY_NAMES: DocumentCache[list] = DocumentCache(16, equal=False)


def _has_children(es: Sequence[Entry], ei: int) -> bool:
    return (ei + 1 < len(es) and es[ei + 1].depth > es[ei].depth
            and es[ei + 1].start < es[ei].end)


def part_asked_about(documents: Sequence[Document], relevance: Sequence[dict[int, float]],
                     with_children: bool = False, named: set[str] | None = None,
                     dense: Sequence[dict[int, float]] | None = None
                     ) -> tuple[int, int] | None:
    """(document, entry) of the part of the documents the question is about: the heading
    it names by title (named_part, when named is given), else of the headings scoring at
    least PART_ALPHA of the best one (scored_parts: headings over the question's best
    sections, and by meaning where dense part scores are given), the one over the fewest
    sections. with_children: only headings with headings under them. None without hits."""
    if named:
        found = named_part(documents, relevance, named, with_children)
        if found is not None:
            return found
    scored = scored_parts(documents, relevance, with_children, dense)
    if not scored:
        return None
    top = max(sc for sc, _, _ in scored)
    near = [(entries_of(documents[di])[ei], sc, di, ei)
            for sc, di, ei in scored if sc >= PART_ALPHA * top]
    if dense and any(dense):
        # By meaning: of the parts near the top, the one whose own text (title, sub-titles,
        # first words) is nearest the question. Sums of section scores favour the largest
        # part (a chapter holds its sections' hits), which the fewest-sections rule below
        # answers by taking the smallest: a section when the question asks for a chapter.
        meant = [x for x in near if x[3] in dense[x[2]]]
        if meant:
            _, _, di, ei = max(meant, key=lambda x: (dense[x[2]][x[3]], x[1]))
            return di, ei
    e, _, di, ei = min(near, key=lambda x: (x[0].end - x[0].start, -x[1], -x[0].depth))
    return di, ei


# Dense part scores (a part embedded as its title, sub-titles and first words) join the
# parts' own scores (scaled by the best part) for the PART_DENSE_TOP best parts, min-max
# scaled from 0 to PART_DENSE_WEIGHT.
PART_DENSE_WEIGHT = 1.0
PART_DENSE_TOP = 10


def scored_parts(documents: Sequence[Document], relevance: Sequence[dict[int, float]],
                 with_children: bool = False, dense: Sequence[dict[int, float]] | None = None
                 ) -> list[tuple[float, int, int]]:
    """(score, document, entry) of every heading scoring above 0: its part score
    (part_scores) over the best one's, plus its dense score scaled as above."""
    scored = []
    for di, (d, rel) in enumerate(zip(documents, relevance)):
        if not rel:
            continue
        es = entries_of(d)
        for ei, sc in enumerate(part_scores(d, rel)):
            if sc > 0 and (not with_children or _has_children(es, ei)):
                scored.append((sc, di, ei))
    if not dense or not any(dense):
        return scored
    top = max((sc for sc, _, _ in scored), default=0.0) or 1.0
    out = {(di, ei): sc / top for sc, di, ei in scored}
    ranked = sorted(((v, di, ei) for di, ds in enumerate(dense) for ei, v in ds.items()),
                    reverse=True)
    hi, lo = ranked[0][0], ranked[min(PART_DENSE_TOP, len(ranked) - 1)][0]
    for v, di, ei in ranked[:PART_DENSE_TOP]:
        if hi > lo and v > lo and (not with_children
                                   or _has_children(entries_of(documents[di]), ei)):
            out[(di, ei)] = out.get((di, ei), 0.0) + PART_DENSE_WEIGHT * (v - lo) / (hi - lo)
    return [(sc, di, ei) for (di, ei), sc in out.items()]


def subtree(doc: Document, ei: int) -> list[int]:
    """Entry ei and the entries under it (indexes into entries_of(doc))."""
    es = entries_of(doc)
    top = es[ei]
    k = ei + 1
    while k < len(es) and es[k].start < top.end and es[k].depth > top.depth:
        k += 1
    return list(range(ei, k))


STRUCTURE_PARTS = 3  # parts a question about structure gets the sub-outlines of


def other_parts(documents: Sequence[Document], relevance: Sequence[dict[int, float]],
                first: tuple[int, int], n: int,
                dense: Sequence[dict[int, float]] | None = None) -> list[tuple[int, int]]:
    """first, then up to n - 1 more parts with headings under them, best part score first,
    none inside or around one already taken, none above first's level (a whole part of the
    book shows little more than its chapter titles)."""
    out = [first]
    depth = entries_of(documents[first[0]])[first[1]].depth
    for _, di, ei in sorted(scored_parts(documents, relevance, True, dense), reverse=True):
        if len(out) >= n:
            break
        e = entries_of(documents[di])[ei]
        apart = all(dj != di or not _overlap(e, entries_of(documents[dj])[ej]) for dj, ej in out)
        if e.depth >= depth and apart:
            out.append((di, ei))
    return out


def _overlap(a: Entry, b: Entry) -> bool:
    return a.start < b.end and b.start < a.end


# A top-level heading that names a Part of the book ("Part II Getting Started", "第二部分",
# "第三篇"): the chapters are one level down.
_PART_TITLE = re.compile(r"^\s*(?:part\s+(?:[ivxlc]+|\d+|[a-z])\b|第\s*\S{1,4}?\s*(?:部分|篇|部))",
                         re.IGNORECASE)


def chapter_depth(doc: Document) -> int:
    """The depth of doc's chapters in its outline: the first level with two or more
    headings that are not Parts (one title heading over the whole text, as many Markdown
    files have, is no chapter), unless none of them is numbered and the next level has
    numbered chapters ("User Guide" over "1. Introduction", "2. Package Options")."""
    return _DEPTHS.get(doc, _chapter_depth)


def _chapter_depth(doc: Document) -> int:
    es = entries_of(doc)
    deepest = max((e.depth for e in es), default=1)

    def titles(depth: int) -> list[str]:
        return [entry_title(doc, e) for e in es if e.depth == depth]

    for depth in range(1, deepest + 1):
        level = titles(depth)
        parts = sum(1 for t in level if _PART_TITLE.match(t))
        if len(level) < 2 or parts * 2 >= len(level):
            continue
        if (depth < deepest and not any(_CHAPTER_NUMBER.match(t) for t in level)
                and sum(1 for t in titles(depth + 1) if _CHAPTER_NUMBER.match(t)) >= 2):
            continue
        return depth
    return 1


_DEPTHS: DocumentCache[int] = DocumentCache(16, equal=False)


def chapter_of(doc: Document, ei: int) -> int:
    """The chapter (an entry at chapter_depth) that holds entry ei; ei itself when it is a
    chapter, a Part, or above the chapters."""
    es = entries_of(doc)
    depth = chapter_depth(doc)
    if es[ei].depth <= depth:
        return ei
    for k in range(ei - 1, -1, -1):
        if es[k].depth == depth and es[k].start <= es[ei].start < es[k].end:
            return k
    return ei


# A chapter's own number at the start of its title: "4 Questions and points", "Chapter 23
# Lyrics", "第3章 绪论" (retrieval.zh_number reads "第三章").
_CHAPTER_NUMBER = re.compile(
    rf"^\s*(?:chapter\s+)?(\d{{1,3}})(?!\d|\.\d)|^\s*第\s*({ZH_NUMERAL}{{1,3}})\s*[章节]",
    re.IGNORECASE)
# Headings around the chapters that are no chapter of the text.
_NOT_CHAPTER = re.compile(r"^\s*(?:(?:table of )?contents|index|bibliography|references|"
                          r"acknowledge?ments?|目录|索引|参考文献|致谢)\s*$", re.IGNORECASE)


def named_chapter(doc: Document, ref: tuple[str, int]) -> int | None:
    """The entry of the chapter ref names (retrieval.named_chapter). Where chapters are
    numbered, the n-th is the one numbered n, the last the one with the highest number; a
    chapter before the first numbered one counts back from it (an introduction whose
    number the extraction lost). Else the n-th (last) chapter, contents, index and the like
    not counted. None if there is no such chapter."""
    es = entries_of(doc)
    depth = chapter_depth(doc)
    chapters = [k for k, e in enumerate(es) if e.depth == depth]
    numbers: dict[int, int] = {}
    for k in chapters:
        m = _CHAPTER_NUMBER.match(entry_title(doc, es[k]))
        value = (int(m.group(1)) if m.group(1) else zh_number(m.group(2))) if m else None
        if value is not None:
            numbers.setdefault(value, k)
    _, n = ref
    if numbers:
        if n == -1:
            return numbers[max(numbers)]
        if n in numbers:
            return numbers[n]
        first = min(numbers)
        at = chapters.index(numbers[first]) - (first - n)
        return chapters[at] if n < first and at >= 0 else None
    pool = [k for k in chapters if not _NOT_CHAPTER.match(entry_title(doc, es[k]))]
    if n == -1:
        return pool[-1] if pool else None
    return pool[n - 1] if 0 < n <= len(pool) else None


def chapter_named(documents: Sequence[Document], ref: tuple[str, int] | None
                  ) -> tuple[int, int] | None:
    """(document, entry) of the chapter the question names by its number or place
    (retrieval.named_chapter) in the first document that has it; None for none."""
    if ref is None:
        return None
    return next(((di, ei) for di, d in enumerate(documents)
                 if (ei := named_chapter(d, ref)) is not None), None)


def focus_outline(documents: Sequence[Document], counter: TokenCounter, budget: int,
                  relevance: Sequence[dict[int, float]], shown: "Outline | None" = None,
                  named: set[str] | None = None, parts: int = 1,
                  dense: Sequence[dict[int, float]] | None = None, more: int = 0,
                  chapter: bool = False, chapter_ref: tuple[str, int] | None = None) -> str:
    """The whole sub-outline, with pages, of the part the question is about (see
    part_asked_about: a chapter, or a section with subsections), its deepest levels left
    out first when it does not fit budget tokens; empty when there is no such part or the
    outline shown already holds all of it. parts > 1 (a question about the documents'
    structure: "which chapter ..., and what are its sections?"): the whole outline where
    it fits budget (and the outline shown is not whole), else the next best parts follow
    (other_parts), each within what the budget has left; a question asked by content often
    scores the right chapter second or third. more: up to this many further parts after
    those, best first, each only where its whole sub-outline fits what is left (a larger
    budget shows more candidate parts instead of leaving its share unused). chapter (the
    question names a chapter as what it asks about): each part is the chapter that holds
    it (chapter_of), not the section in it that matched best. chapter_ref: the question
    names a chapter by its number or place (retrieval.named_chapter): that chapter comes
    first, in the first document that has it."""
    if budget <= 0:
        return ""
    if parts > 1 and shown is not None and shown.dropped:
        whole = build_outline(documents, counter, budget)
        if not whole.dropped:  # the whole outline fits: no part to guess
            return whole.text
    found = chapter_named(documents, chapter_ref)
    if found is None:
        found = part_asked_about(documents, relevance, with_children=True, named=named,
                                 dense=dense)
    if found is None:
        return ""
    if chapter:
        found = (found[0], chapter_of(documents[found[0]], found[1]))
    chosen = (other_parts(documents, relevance, found, parts + more, dense)
              if parts + more > 1 else [found])
    if chapter:
        chosen = list(dict.fromkeys((di, chapter_of(documents[di], ei)) for di, ei in chosen))
    texts: list[str] = []
    left = budget
    for k, (di, ei) in enumerate(chosen):
        text = _sub_outline(documents[di], ei, counter, left, shown.chosen[di] if shown else None,
                            whole=k >= parts)
        if text:
            texts.append(text)
            left -= counter.text(text) + 1
    return "\n".join(texts)


def _sub_outline(doc: Document, ei: int, counter: TokenCounter, budget: int,
                 shown: Sequence[int] | None, whole: bool = False) -> str:
    """The part's sub-outline within budget, its deepest levels left out first (whole: all
    of its levels or nothing)."""
    es = entries_of(doc)
    top = es[ei]
    sub = subtree(doc, ei)
    if budget <= 0 or (shown is not None and set(sub) <= set(shown)):
        return ""
    path = doc.sections[top.start].heading_path[: top.depth]
    marker = page_marker(doc, doc.sections[top.start].page_start)
    head = f"- {doc.name}: {' > '.join(path)} {marker}"
    cut = "  " * (top.depth - 1)
    deepest = max(es[j].depth for j in sub)
    for depth in range(deepest, deepest - 1 if whole else top.depth - 1, -1):
        lines = [head] + [es[j].line[len(cut):] for j in sub[1:] if es[j].depth <= depth]
        text = "\n".join(lines)
        if counter.text(text) <= budget:
            return text
    return ""


def parts_of(doc: Document) -> list[int]:
    """The entries of doc with headings under them (its parts, chapters and sections with
    subsections): what a question about structure is answered with (cached)."""
    return _PARTS.get(doc, lambda d: [ei for ei in range(len(entries_of(d)))
                                      if _has_children(entries_of(d), ei)])


_PARTS: DocumentCache[list[int]] = DocumentCache(16, equal=False)


def part_text(doc: Document, ei: int, chars: int = 400) -> str:
    """What a part is embedded as, for scoring it by meaning ("drawing pictures" for a
    chapter titled "Graphical ..."): its heading path, the titles of the headings right
    under it, then the first words of its body, within chars characters (a Chinese
    character counting twice)."""
    es = entries_of(doc)
    top = es[ei]
    path = doc.sections[top.start].heading_path[: top.depth]
    subs = [doc.sections[es[j].start].heading_path[es[j].depth - 1]
            for j in subtree(doc, ei)[1:] if es[j].depth == top.depth + 1]
    body = " ".join(doc.sections[top.start].text.split())
    text = f"{' > '.join(path)}: {'; '.join(subs)}. {body}"
    used = 0
    for k, ch in enumerate(text):
        used += 2 if "\u3400" <= ch <= "\u9fff" else 1
        if used > chars:
            return text[:k]
    return text
