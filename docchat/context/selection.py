"""Choosing the passages of a packed prompt within a token budget, ordering them, and
shrinking them when the rendered prompt overflows: the "choose" and "shrink" steps of
docchat/context/packing.py. Constants: docchat/context/policy.py.

Windows are (document, section position, first block, last block, score), best first. A
passage is *carried* when it is repeated exactly as an earlier turn's prompt had it."""
from __future__ import annotations

import logging
import math
import re
import statistics
from collections import Counter
from itertools import islice, takewhile
from typing import Iterable, Iterator, Sequence

from docchat.context.cache import DocumentCache
from docchat.context.outline import chapter_named, entries_of, part_asked_about
from docchat.context.passages import Passage, TokenCounter, block_text
from docchat.context.policy import POLICY, PackingPolicy
from docchat.context.retrieval import block_scores, doc_key, index_terms, window_text
from ingest.document import Document

logger = logging.getLogger(__name__)

HIT, NEAR, START = "hit", "neighbour", "start"
Window = tuple[int, int, int, int, float]


def select(documents: Sequence[Document], positions: list[dict[int, float]],
           qterms: list[str], counter: TokenCounter, avail: int,
           carry: Sequence[tuple] = (), windows: Sequence[Window] = (),
           policy: PackingPolicy = POLICY,
           present: dict[tuple[int, int], set[int] | None] | None = None,
           whole: bool = False, named: set[str] | None = None,
           parts: Sequence[dict[int, float]] | None = None,
           aspects: Sequence[Sequence[Window]] = (),
           meant: Sequence[Window] = (),
           meaning: Sequence[dict[int, list[float]]] = (),
           chapter_ref: tuple[str, int] | None = None,
           own_terms: frozenset = frozenset()) -> list[list[Passage]]:
    """Choose passages per document, in this order (see Selection): the carried ones, the
    part asked about whole (or, when the question asks about a part as a whole and it does
    not fit, a spread of it), the best windows (passage hits, in the order that covers the
    question's words), then hits and their neighbours by score (a window's section grows to
    whole where it fits), then the start.

    present: (document, section position) -> blocks shown (None: whole) of the passages
    already in the window (an append-only conversation's earlier turns): never chosen again;
    a window outside the blocks shown of a partial one adds those blocks alone. whole: the
    question asks about a part as a whole; named, parts: the question's title words and the
    dense part scores (part_positions), by which such a question finds its part. aspects:
    the windows (best first) of each part of a question that asks several things. meant:
    the best windows by meaning alone (best first), after the best windows from
    policy.meant_from tokens up. meaning: per document, section position -> each block's
    cosine to the question (meaning_blocks): a section that goes in partly shows the blocks
    that match the question's words or its meaning (Selection.block_scores). chapter_ref:
    the chapter the question names by its number or place (retrieval.named_chapter): the
    part it asks about. own_terms: a follow-up's own words (Relevance.own_terms)."""
    sel = Selection(documents, positions, qterms, counter, avail, policy, present, windows,
                    meaning, own_terms)
    sel.carry(carry)
    sel.take_part(whole, named, parts, chapter_ref)
    sel.take_windows(windows, aspects)
    # Also for a question taken to ask about a part as a whole: the rule reads words ("one
    # whole number" is no part), and the meant windows only take what the spread left.
    if avail >= policy.meant_from:
        sel.take_meant(meant)
    for i in range(len(documents)):
        sel.fill(i, sel.shares[i] - sel.breadth[i], capped=avail >= policy.partial_from)
    for i in sorted(range(len(documents)), key=lambda k: -sel.relevance[k]):
        sel.fill(i, avail - sel.used)
    return [[c[p] for p in sorted(c)] for c in sel.chosen]


class Selection:
    """The passages being chosen within avail tokens: per document, section position ->
    Passage, with the tokens used and the order of choice (rank: higher goes first when
    the prompt must shrink)."""

    def __init__(self, documents: Sequence[Document], positions: list[dict[int, float]],
                 qterms: list[str], counter: TokenCounter, avail: int,
                 policy: PackingPolicy = POLICY,
                 present: dict[tuple[int, int], set[int] | None] | None = None,
                 windows: Sequence[Window] = (),
                 meaning: Sequence[dict[int, list[float]]] = (),
                 own_terms: frozenset = frozenset()) -> None:
        self.documents, self.positions, self.policy = documents, positions, policy
        self.weights = ({t: policy.own_term_weight for t in own_terms}
                        if policy.own_term_weight != 1.0 else {})
        self.meaning = list(meaning) or [{} for _ in documents]
        # Each section's best window (document, position) -> window: where a hit does not
        # go in whole, the blocks it shows start from there (fill()).
        self.best_window: dict[tuple[int, int], Window] = {}
        for w in windows:
            self.best_window.setdefault((w[0], w[1]), w)
        self.present = present or {}
        self.qterms, self.counter, self.avail = qterms, counter, avail
        self.chosen: list[dict[int, Passage]] = [{} for _ in documents]
        self.used, self.rank = 0.0, 0
        self.carried: set[tuple[int, int]] = set()  # repeated as they were: never grown
        self.queues = [queue(d, hits, policy) for d, hits in zip(documents, positions)]
        # A document's relevance: its three best section scores. Half the budget is split
        # evenly (policy.doc_floor), half by relevance.
        self.relevance = [sum(sorted(hits.values(), reverse=True)[:3]) for hits in positions]
        n, total, floor = len(documents), sum(self.relevance), policy.doc_floor
        self.shares = [avail * (floor / n + (1 - floor) * r / total) if total
                       else avail / n for r in self.relevance]
        self.breadth = [0.0] * n  # tokens each document's first windows took

    def _next_rank(self) -> int:
        self.rank += 1
        return self.rank

    def _put(self, di: int, p: int, passage: Passage) -> float:
        had = self.chosen[di][p].cost(self.counter) if p in self.chosen[di] else 0
        self.chosen[di][p] = passage
        delta = passage.cost(self.counter) - had
        self.used += delta
        return delta

    def _grown(self, di: int, p: int, blocks: set[int], room: float, rank: int
               ) -> Passage | None:
        """The section's best blocks in room tokens, those already chosen (and blocks, when
        given) first; None unless it holds more blocks than before."""
        d, section = self.documents[di], self.documents[di].sections[p]
        current = self.chosen[di].get(p)
        had_blocks = set(current.blocks) if current is not None else set()
        scores = self.block_scores(di, p)
        scores = [self.policy.chosen_block_score if b in had_blocks
                  else sc if not blocks or b in blocks else -1.0
                  for b, sc in enumerate(scores)]
        had = current.cost(self.counter) if current is not None else 0
        passage = Passage.partial(d, section, scores, int(room + had), self.counter, rank)
        if passage is None or len(passage.blocks) <= len(had_blocks):
            return None
        return passage

    def block_scores(self, di: int, p: int) -> list[float]:
        """Each block's score for a section that goes in partly: its words' (tf-idf within
        the section, retrieval.block_scores) plus, where the blocks' cosines to the question
        are known, policy.meaning_block_weight x the best word score for the section's
        best block by meaning, scaled down to nothing at the section's median cosine (a
        paraphrase shares few words with its answer, whose block would otherwise score 0
        and never go in)."""
        section = self.documents[di].sections[p]
        words = block_scores(section.blocks, self.qterms, self.weights)
        return with_meaning(words, self.meaning[di].get(p), self.policy.meaning_block_weight)

    def carry(self, carry: Sequence[tuple]) -> None:
        """The carried passages (document, position[, blocks]), as they were."""
        for di, p, *blocks in carry:
            self.carried.add((di, p))
            d = self.documents[di]
            self._put(di, p, Passage(d, d.sections[p], blocks[0] if blocks else None,
                                     self._next_rank()))

    def take_part(self, whole: bool = False, named: set[str] | None = None,
                  parts: Sequence[dict[int, float]] | None = None,
                  chapter_ref: tuple[str, int] | None = None) -> None:
        """A question about one part (a section with its subsections): that part whole,
        start, middle and end, where it takes at most policy.span_share of the budget; when
        it does not fit and the question asks about the part as a whole (whole: the part it
        names by title, else by meaning), a spread of it in that share (spread()). Another
        question gets its part whole only under policy.part_for_all. A chapter the question
        names by its number or place (chapter_ref) is the part, even of one section."""
        if not whole and not self.policy.part_for_all:
            return
        part = chapter_named(self.documents, chapter_ref)
        by_number = part is not None
        if part is None:
            part = (part_asked_about(self.documents, self.positions, named=named, dense=parts)
                    if whole else
                    part_asked_about(self.documents, self.positions))
        if part is None:
            return
        di, ei = part
        d = self.documents[di]
        e = entries_of(d)[ei]
        span = [Passage.whole(d, d.sections[p], 0) for p in range(e.start, e.end)]
        cap = self.policy.span_share * self.avail
        if sum(x.cost(self.counter) for x in span) > cap:
            if whole and self.avail >= self.policy.spread_from:
                self._take_spread(di, range(e.start, e.end),
                                  self.policy.spread_share * self.avail)
            return
        if e.end - e.start <= 1 and not by_number:
            return
        for p, x in zip(range(e.start, e.end), span):
            if (di, p) in self.present:  # already in the window
                continue
            if p not in self.chosen[di]:  # carried from the previous prompt as it was
                self._put(di, p, Passage(x.doc, x.section, None, self._next_rank()))

    def _take_spread(self, di: int, positions: range, cap: float) -> None:
        """spread() of the sections at positions (those not in the window yet) in cap."""
        d = self.documents[di]
        todo = [p for p in positions if (di, p) not in self.present
                and p not in self.chosen[di]]
        for p, blocks in spread(d, todo, self.qterms, self.counter, cap, self.policy):
            section = d.sections[p]
            self._put(di, p, Passage(d, section, None if len(blocks) == len(section.blocks)
                                     else blocks, self._next_rank()))

    def take_windows(self, windows: Sequence[Window],
                     aspects: Sequence[Sequence[Window]] = ()) -> None:
        """Precision first: the best windows (the paragraphs that match the question best,
        wherever their sections rank), in the order that covers the question's words
        (covering()), up to policy.breadth_top of them plus the aspect_top of each part of
        a question that asks several things (those parts' windows no longer take the whole
        question's places), in breadth_share of each document's share; a window too long
        for what is left keeps its best blocks. (Each section's best window before a second
        one of any was tried for two-section questions: it cost three of the test and fresh
        sets' 21 follow-ups at 4k.)"""
        top = self.policy.breadth_top + sum(min(len(a), self.policy.aspect_top)
                                            for a in aspects)
        self._take(covering(self.documents, windows, self.qterms, self.policy, aspects), top)

    def take_meant(self, windows: Sequence[Window]) -> None:
        """Then, where the budget has room (policy.meant_from), up to policy.meant_top of the
        best windows by meaning alone that are not in yet (a paraphrase shares few words
        with its answer, whose window the fused scores may rank below the first few), in
        what is left of breadth_share of each document's share."""
        self._take(windows, self.policy.meant_top, new_only=True)

    def _take(self, windows: Sequence[Window], top: int, new_only: bool = False) -> None:
        """Up to top of windows, in their order (see take_windows); new_only: none whose
        blocks are all in already, and those are not counted."""
        taken, share = 0, self.policy.breadth_share
        for di, p, first, last, _ in windows:
            if taken >= top:
                break
            d = self.documents[di]
            section = d.sections[p]
            current = self.chosen[di].get(p)
            if (current is not None and current.complete) or (di, p) in self.carried:
                continue
            if new_only and current is not None and set(range(first, last + 1)) <= set(
                    current.blocks or ()):
                continue
            blocks = set(current.blocks if current else ()) | set(range(first, last + 1))
            if (di, p) in self.present:  # in the window: only blocks it does not show yet
                shown = self.present[(di, p)]
                blocks -= set(range(len(section.blocks))) if shown is None else shown
                if not blocks:
                    continue
            rank = self._next_rank()
            passage = Passage(d, section, None if len(blocks) == len(section.blocks)
                              else tuple(sorted(blocks)), current.rank if current else rank)
            had = current.cost(self.counter) if current else 0
            room = min(share * self.shares[di] - self.breadth[di], self.avail - self.used)
            if passage.cost(self.counter) - had > room:
                passage = self._grown(di, p, blocks, room, passage.rank)
                if passage is None:
                    continue
            self.breadth[di] += self._put(di, p, passage)
            taken += 1

    def fill(self, i: int, cap: float, capped: bool = False) -> None:
        """Document i's queue within cap tokens: hits whole (or their best blocks when they
        do not fit, a chosen window kept), neighbours whole, then sections from the start
        (giving up after policy.max_misses that do not fit; the first in part when nothing of
        the document is in, policy.opening_when_unmatched). capped: a hit that goes in
        partly takes at most policy.partial_share of the budget (the first pass)."""
        spent, misses, policy = 0.0, 0, self.policy
        d = self.documents[i]
        for kind, p in self.queues[i]:
            current = self.chosen[i].get(p)
            if (i, p) in self.present or current is not None and (
                    current.complete or kind == START or (i, p) in self.carried):
                continue
            room = min(cap - spent, self.avail - self.used)
            if room <= policy.min_room or (kind == START and misses >= policy.max_misses):
                break
            if kind == START and capped and policy.partial_share < 1:
                break  # the hits shown in part grow first (the next pass)
            rank = self._next_rank()
            had = current.cost(self.counter) if current is not None else 0
            passage = Passage.whole(d, d.sections[p], current.rank if current else rank)
            if passage.cost(self.counter) - had > room:
                if kind == HIT and room + had >= policy.min_partial:
                    if capped:
                        room = min(room, max(policy.partial_share * self.avail - had,
                                             policy.min_partial))
                    w = self.best_window.get((i, p))
                    grown = None if w is None else self._grown(
                        i, p, set(range(w[2], w[3] + 1)), room, passage.rank)
                    passage = grown or self._grown(i, p, set(), room, passage.rank)
                    if passage is None:
                        continue
                elif (kind == START and policy.opening_when_unmatched and not self.chosen[i]
                      and not any(k[0] == i for k in self.present)
                      and room >= policy.min_partial):  # its opening, not nothing
                    section = d.sections[p]
                    opening = [float(len(section.blocks) - k) for k in range(len(section.blocks))]
                    passage = Passage.partial(d, section, opening, int(room), self.counter, rank)
                    if passage is None:
                        misses += 1
                        continue
                else:
                    misses += kind == START
                    continue
            spent += self._put(i, p, passage)


def queue(doc: Document, hits: dict[int, float], policy: PackingPolicy = POLICY
          ) -> list[tuple[str, int]]:
    """(kind, section position) in the order a document's sections are tried: hits and
    their neighbours by score (a neighbour ranks at policy.neighbour of its hit's score: a
    section is often continued by the next), then every section from the start."""
    prio = dict(hits)
    for p, sc in hits.items():
        for q in (p + 1, p - 1):
            if 0 <= q < len(doc.sections) and prio.get(q, 0.0) < policy.neighbour * sc:
                prio[q] = policy.neighbour * sc
    order = [(HIT if p in hits else NEAR, p) for p in sorted(prio, key=lambda p: (-prio[p], p))]
    return order + [(START, p) for p in range(len(doc.sections))]


def shrink(picked: list[list[Passage]], counter: TokenCounter, overflow: int,
           qterms: list[str], policy: PackingPolicy = POLICY) -> bool:
    """Free overflow tokens from the passages chosen last: cut the last one down to its
    best blocks, or drop it; False when there is nothing left to drop."""
    need = overflow + policy.shrink_margin
    while need > 0:
        candidates = [(p.rank, i, k) for i, ps in enumerate(picked) for k, p in enumerate(ps)]
        if not candidates:
            return False
        _, i, k = max(candidates)
        p = picked[i][k]
        cost = p.cost(counter)
        smaller = None
        if cost - need >= policy.min_partial and len(p.section.blocks) > 1:
            scores = block_scores(p.section.blocks, qterms)
            if p.blocks is not None:  # keep within the blocks already chosen
                scores = [sc if b in p.blocks else -1.0 for b, sc in enumerate(scores)]
            smaller = Passage.partial(p.doc, p.section, scores, cost - need, counter, p.rank)
        if smaller is not None and smaller.cost(counter) < cost:
            picked[i][k] = smaller
            need -= cost - smaller.cost(counter)
        else:
            picked[i].pop(k)
            need -= cost + policy.passage_gap
    return True


def order(documents: Sequence[Document], names: Sequence[object],
          picked: list[list[Passage]], previous: Sequence[tuple[object, int]],
          first: Sequence[tuple[int, int]] = (), by_rank: bool = False,
          scores: dict | None = None) -> list[tuple[int, int]]:
    """The excerpts' order as (document position, section index): the carried passages
    first (first), then the previous prompt's sections that are chosen again whole, in
    their previous order; then the other whole sections in their order of choice, the best
    first (a follow-up carries a start of this order, so what is cut off when that start
    does not fit is what mattered least; in document order, a follow-up at 8k lost the
    section both questions were about); then the partial ones (their blocks follow the
    question, so they would end the shared prefix wherever they stood). by_rank: the
    partial ones too in their order of choice (a turn of an append-only conversation is
    never sent again in another form, and a read cut short at the first-token deadline
    keeps the excerpts that come first). scores ((document position, section index) ->
    the question's fused score): within a document, the best scored first, then in order
    of choice (a window chosen early for its words may sit in a section the search ranks
    lower than a whole one chosen after it)."""
    whole = {(i, p.section.index) for i, ps in enumerate(picked) for p in ps
             if p.complete or by_rank}
    parts = sorted((i, p.section.index) for i, ps in enumerate(picked) for p in ps
                   if not p.complete)
    where = {name: i for i, name in enumerate(names)}
    where.update({doc_key(d, i): i for i, d in enumerate(documents)})
    present = {(i, p.section.index) for i, ps in enumerate(picked) for p in ps}
    out: list[tuple[int, int]] = [c for c in first if c in present]
    for key, idx in previous:
        i = where.get(key)
        if i is not None and (i, idx) in whole and (i, idx) not in out:
            out.append((i, idx))
    placed = set(out)
    rank = {(i, p.section.index): p.rank for i, ps in enumerate(picked) for p in ps}
    first_rank = {}  # a document's excerpts stay together (one header), the best one first
    for (i, _), r in rank.items():
        first_rank[i] = min(r, first_rank.get(i, r))
    score = scores or {}
    chosen = sorted((c for c in whole if c not in placed),
                    key=lambda c: (first_rank[c[0]], c[0], -score.get(c, 0.0), rank[c], c))
    return out + chosen + [c for c in parts if c not in placed and c not in whole]


def ordered(order: list[tuple[int, int]], picked: list[list[Passage]]
            ) -> list[tuple[int, Passage]]:
    """The chosen passages in the excerpts' order (those shrunk away are left out)."""
    by_key = {(i, p.section.index): p for i, ps in enumerate(picked) for p in ps}
    return [(i, by_key[(i, idx)]) for i, idx in order if (i, idx) in by_key]


def positions(documents: Sequence[Document], scores: dict, policy: PackingPolicy = POLICY
              ) -> list[dict[int, float]]:
    """Scores keyed per document by section position; a section that is mostly a printed
    table of contents or an index (contents_blocks) at policy.contents_weight of its score."""
    out = []
    for i, d in enumerate(documents):
        key = doc_key(d, i)
        pos = {s.index: k for k, s in enumerate(d.sections)}
        known = _known(d)
        out.append({pos[idx]: sc * _contents_factor(d, pos[idx], policy, known)
                    for (dk, idx), sc in scores.items() if dk == key and idx in pos})
    return out


# A contents or index line: it ends with a page number (or a roman one) after a space, a dot
# or an ellipsis; many have dot leaders. A section titled as a table of contents needs no
# leaders. A change log's entries end with page references too, and they are content.
_LEADER = re.compile(r"^.*?(?:(?:\.[ \t]*){3,}|…{2,}|·{3,})", re.MULTILINE)
_PAGE_END = re.compile(r"(?:[ \t.…])(?:\d{1,4}|[ivxlc]{1,6})[ \t]*$", re.IGNORECASE | re.MULTILINE)
_BLANK = re.compile(r"\n\s*\n")
_CONTENTS_TITLE = re.compile(r"^\s*(?:table\s+of\s+)?contents\s*$"
                             r"|^\s*(?:目\s*录|目\s*次)(?:\s+目\s*录)?\s*$", re.IGNORECASE)
_CHANGES = re.compile(r"\b(?:change|history|revision|release|news)|修改|版本|更新|变更|历史|修订",
                      re.IGNORECASE)
_CONTENTS: DocumentCache[dict] = DocumentCache(32, equal=False)  # position -> blocks


def contents_blocks(doc: Document) -> frozenset[tuple[int, int]]:
    """(section position, block) of the blocks that are a printed table of contents, an
    index or a list of figures: at least three lines, most of them (60%) ending with a page
    number, and many (30%) with dot leaders or in a section titled as contents. The outline
    every prompt carries gives the structure already; as a passage such a block repeats
    the titles a question names (so it ranks high) and answers nothing."""
    known = _known(doc)
    return frozenset((k, j) for k in range(len(doc.sections))
                     for j in _section_contents(doc, k, known))


def _known(doc: Document) -> dict:
    """The contents blocks found so far per section position (looked up once per call of
    positions() or window_positions(): a lookup checks the document's every section)."""
    return _CONTENTS.get(doc, lambda d: {})


def _section_contents(doc: Document, k: int, known: dict) -> frozenset[int]:
    """The contents blocks of section k (contents_blocks), computed once per section into
    known (_known(doc)): only the sections a question's search ranks are looked at (a
    1,158-page manual whole: about 100 ms)."""
    got = known.get(k)
    if got is None:
        got = known[k] = _contents(doc.sections[k])
    return got


def _contents(s) -> frozenset[int]:
    if _CHANGES.search(" ".join(s.heading_path or ())):
        return frozenset()
    titled = _CONTENTS_TITLE.match(s.heading or "") is not None
    out = set()
    for j, b in enumerate(s.blocks):
        text = b.text
        if text.count("\n") < 2:  # fewer than three lines (most prose blocks)
            continue
        ends = len(_PAGE_END.findall(text))
        if ends < 3:
            continue
        lines = len(_BLANK.sub("\n", text).strip("\n").split("\n"))
        if ends >= 0.6 * lines and (titled or len(_LEADER.findall(text)) >= 0.3 * lines):
            out.add(j)
    return frozenset(out)


def _contents_factor(doc: Document, k: int, policy: PackingPolicy, known: dict,
                     first: int = 0, last: int | None = None) -> float:
    """policy.contents_weight where blocks first..last of section k are mostly
    (policy.contents_share of their characters) contents_blocks, else 1."""
    if policy.contents_weight == 1.0:
        return 1.0
    toc = _section_contents(doc, k, known)
    if not toc:
        return 1.0
    blocks = doc.sections[k].blocks
    span = range(first, len(blocks) if last is None else last + 1)
    total = sum(len(blocks[j].text) for j in span) or 1
    marked = sum(len(blocks[j].text) for j in span if j in toc)
    return policy.contents_weight if marked / total >= policy.contents_share else 1.0


def to_grow(carried: Sequence[tuple[int, int, Passage]], windows: Sequence[Window],
            policy: PackingPolicy = POLICY, terms: Iterable[str] = ()
            ) -> set[tuple[int, int]]:
    """The carried excerpts (document, section position) that a follow-up's best windows
    for its own words (the history's would find the previous topic again) fall in, away
    from every block they hold (a window that holds a carried block is covered by it), or,
    under policy.grow_unsent, with a block they do not hold that has one of terms (the
    question's own words as the index stems them: the match is in the part not sent)."""
    partial = {(i, pos): (set(p.blocks), p) for i, pos, p in carried if not p.complete}
    words = set(terms) if policy.grow_unsent else set()
    out = set()
    for di, pos, first, last, _ in islice(strong_windows(windows, policy), policy.breadth_top):
        held, passage = partial.get((di, pos), (None, None))
        if held is None:
            continue
        span = set(range(first, last + 1))
        if not held & span or (words and any(
                words & set(index_terms(passage.section.blocks[b].text))
                for b in sorted(span - held) if b < len(passage.section.blocks))):
            out.add((di, pos))
    return out


def strong_windows(windows: Sequence[Window], policy: PackingPolicy = POLICY
                   ) -> Iterator[Window]:
    """The best windows (best first) scoring at least policy.window_floor of the best."""
    best = windows[0][4] if windows else 0.0
    return takewhile(lambda w: w[4] >= policy.window_floor * best, windows)


def covering(documents: Sequence[Document], windows: Sequence[Window], qterms: Sequence[str],
             policy: PackingPolicy = POLICY, aspects: Sequence[Sequence[Window]] = ()
             ) -> list[Window]:
    """The candidate windows (the policy.cover_pool best, scoring at least cover_floor of
    the best) in the order that covers the question: each next one the window of most
    value, its score over the best one's times (cover_base + the weight of the question's
    words it holds that no window before it held, over the weight of all), at same_section
    of that when its section has one already. A word weighs log(1 + n / windows holding
    it): the words every candidate holds are the common topic, the rare ones the question's
    other aspects (a two-part question's second place). Greedy coverage, as maximal
    marginal relevance, so the second-best place in another section gets in. aspects (the
    windows of each part of a question that asks several things, best first): after the
    best window, each part's best one and the whole question's second, then each part's
    second and the whole question's third, up to policy.aspect_top rounds, then the rest
    as above."""
    if not windows:  # the question's words are nowhere: its parts' windows alone
        return list(dict.fromkeys(w for ws in aspects for w in ws[:policy.aspect_top]))
    best = windows[0][4] or 1.0
    pool = [w for w in windows[:policy.cover_pool] if w[4] >= policy.cover_floor * best]
    seeds = [pool[0]]
    for r in range(policy.aspect_top):
        whole = [pool[r + 1]] if aspects and r + 1 < len(pool) else []
        for w in [ws[r] if r < len(ws) else None for ws in aspects] + whole:
            if w is not None and all(w[:4] != x[:4] for x in seeds):
                seeds.append(w)
    pool = seeds + [w for w in pool if all(w[:4] != x[:4] for x in seeds)]
    qset = set(index_terms(" ".join(qterms)))
    held = [set(index_terms(window_text(documents[w[0]].sections[w[1]], w[2], w[3]))) & qset
            for w in pool]
    df = Counter(t for h in held for t in h)
    weight = {t: math.log(1 + len(pool) / c) for t, c in df.items()}
    total = sum(weight.values()) or 1.0
    covered: set[str] = set()
    places: set[tuple[int, int]] = set()
    for k in range(len(seeds)):
        covered |= held[k]
        places.add((pool[k][0], pool[k][1]))
    left, out = list(range(len(seeds), len(pool))), list(seeds)

    def value(k: int) -> float:
        w = pool[k]
        gain = sum(weight[t] for t in held[k] - covered) / total
        v = w[4] / best * (policy.cover_base + gain)
        return v * policy.same_section if (w[0], w[1]) in places else v

    while left:
        k = max(left, key=lambda k: (value(k), -k))
        left.remove(k)
        out.append(pool[k])
        covered |= held[k]
        places.add((pool[k][0], pool[k][1]))
    return out


def spread(doc: Document, positions: Sequence[int], qterms: Sequence[str],
           counter: TokenCounter, cap: float, policy: PackingPolicy = POLICY
           ) -> list[tuple[int, tuple[int, ...]]]:
    """A spread of a part too long to go in whole (the sections at positions, in order):
    (section position, blocks shown) within about cap tokens. First the part's first and
    last blocks, then the first block of each of its sections (their headings), then, in rounds
    of ever finer segments of the part's blocks (thirds, sixths, ...), the block that
    matches the question best in each segment that has none yet (the earliest on a tie):
    its start, its sub-headings and the best places of its middle and end, not a prefix."""
    flat = [(p, b) for p in positions for b in range(len(doc.sections[p].blocks))]
    if not flat:
        return []
    scores = {p: block_scores(doc.sections[p].blocks, qterms) for p in positions}
    chosen: set[tuple[int, int]] = set()
    used = 0.0

    def take(p: int, b: int) -> None:
        nonlocal used
        if (p, b) in chosen:
            return
        section = doc.sections[p]
        cost = counter.text(block_text(section.blocks[b])) + 8
        if not any(q == p for q, _ in chosen):  # the section's heading line
            cost += counter.text(Passage(doc, section, ()).render()) + 2
        if used + cost <= cap:
            chosen.add((p, b))
            used += cost

    take(*flat[0])
    take(*flat[-1])
    for p in [p for p in positions if doc.sections[p].blocks][:policy.spread_headings]:
        take(p, 0)
    segments = policy.spread_segments
    while len(chosen) < len(flat) and cap - used > policy.min_partial and segments <= len(flat):
        for j in range(segments):
            seg = range(j * len(flat) // segments, (j + 1) * len(flat) // segments)
            if seg and not chosen.intersection(flat[k] for k in seg):
                take(*flat[max(seg, key=lambda k: (scores[flat[k][0]][flat[k][1]], -k))])
        segments *= 2
    out: dict[int, list[int]] = {}
    for p, b in sorted(chosen):
        out.setdefault(p, []).append(b)
    return [(p, tuple(bs)) for p, bs in out.items()]


def asked(documents: Sequence[Document], rel, policy: PackingPolicy = POLICY) -> dict:
    """select()'s keyword arguments that follow from the question's Relevance: whether it
    asks about a part as a whole, the title words it names, the dense part scores per
    document (part_positions; focus_outline takes them too) and each of its parts' windows."""
    return {"whole": rel.whole, "named": rel.named,
            "parts": part_positions(documents, rel.parts),
            "aspects": [window_positions(documents, a, policy) for a in rel.aspects],
            "meant": window_positions(documents, getattr(rel, "meant", {}), policy),
            "meaning": meaning_blocks(documents, getattr(rel, "meaning", {})),
            "chapter_ref": getattr(rel, "chapter_ref", None),
            "own_terms": getattr(rel, "own_terms", frozenset())}


def with_meaning(words: list[float], cosines: Sequence[float] | None, weight: float
                 ) -> list[float]:
    """Block scores by words plus weight x (the best word score, or 1 where no block has
    a word of the question) for the best block by meaning, scaled from 0 at the median
    cosine: blocks at or below the median gain nothing."""
    if not cosines or weight <= 0 or len(cosines) != len(words):
        return words
    hi, mid = max(cosines), statistics.median(cosines)
    if hi <= mid:
        return words
    top = max(words, default=0.0) or 1.0
    return [w + weight * top * max(0.0, (c - mid) / (hi - mid)) for w, c in zip(words, cosines)]


def meaning_blocks(documents: Sequence[Document], meaning: dict
                   ) -> list[dict[int, list[float]]]:
    """Window cosines ((doc key, section index, first, last) -> cosine) as, per document,
    section position -> each block's cosine: the best of the windows that hold it (a block
    in no scored window gets the section's lowest)."""
    spans: list[dict[int, list]] = [{} for _ in documents]
    for i, k, first, last, sc in _placed(documents, meaning):
        spans[i].setdefault(k, []).append((first, last, sc))
    out: list[dict[int, list[float]]] = [{} for _ in documents]
    for i, d in enumerate(documents):
        for k, found in spans[i].items():
            n = len(d.sections[k].blocks)
            best: list[float | None] = [None] * n
            for first, last, sc in found:
                for b in range(max(first, 0), min(last, n - 1) + 1):
                    if best[b] is None or sc > best[b]:
                        best[b] = sc
            low = min(sc for _, _, sc in found)
            out[i][k] = [low if v is None else v for v in best]
    return out


def part_positions(documents: Sequence[Document], parts: dict) -> list[dict[int, float]]:
    """Dense part scores ((doc key, outline entry) -> score) per document: entry -> score."""
    where = {doc_key(d, i): i for i, d in enumerate(documents)}
    out: list[dict[int, float]] = [{} for _ in documents]
    for (key, ei), sc in parts.items():
        i = where.get(key)
        if i is not None:
            out[i][ei] = sc
    return out


def window_positions(documents: Sequence[Document], windows: dict,
                     policy: PackingPolicy = POLICY) -> list[Window]:
    """Window scores as (document, section position, first, last, score), best first; a
    window of contents (contents_blocks) at policy.contents_weight of its score."""
    known = [_known(d) for d in documents]
    out = [(i, k, first, last, sc * _contents_factor(documents[i], k, policy, known[i], first,
                                                     last))
           for i, k, first, last, sc in _placed(documents, windows)]
    return sorted(out, key=lambda w: (-w[4], w[0], w[1], w[2]))


def _placed(documents: Sequence[Document], windows: dict) -> Iterator[Window]:
    """Window scores ((doc key, section index, first, last) -> score) as (document, section
    position, first, last, score), for the windows of these documents' sections."""
    where = {doc_key(d, i): i for i, d in enumerate(documents)}
    pos = [{s.index: k for k, s in enumerate(d.sections)} for d in documents]
    for (key, idx, first, last), sc in windows.items():
        i = where.get(key)
        if i is not None and idx in pos[i]:
            yield i, pos[i][idx], first, last, sc


def whole_cost(documents: Sequence[Document], counter: TokenCounter, avail: int,
               policy: PackingPolicy = POLICY) -> int | None:
    """Tokens of every document rendered whole, or None when that clearly cannot fit."""
    chars = sum(_chars(d) for d in documents)
    if chars / policy.max_chars_per_token > avail:
        return None
    total = 0
    for d in documents:
        for s in d.sections:
            total += Passage.whole(d, s).cost(counter)
            if total > avail:
                return None
    return total


_CHARS: DocumentCache[int] = DocumentCache(32, equal=False)  # 1.2 ms, 1,158 pages


def _chars(doc: Document) -> int:
    """Characters of a document's section text (cached)."""
    return _CHARS.get(doc, lambda d: sum(len(b.text) for s in d.sections for b in s.blocks))


def carried_sections(documents: Sequence[Document], names: Sequence[object],
                     previous: Sequence[tuple[object, int]], counter: TokenCounter, cap: int
                     ) -> list[tuple[int, int]]:
    """The longest start of the previous prompt's sections (document, position) that fits
    in cap tokens: carried whole and first, so the backend reuses what it read for them (a
    follow-up is mostly about the same part); see policy.carry_sections_from."""
    where = {name: i for i, name in enumerate(names)}
    out, used = [], 0
    for name, idx in previous:
        i = where.get(name)
        if i is None:
            break
        pos = next((k for k, s in enumerate(documents[i].sections) if s.index == idx), None)
        if pos is None:
            break
        c = Passage.whole(documents[i], documents[i].sections[pos]).cost(counter)
        if used + c > cap:
            break
        out.append((i, pos))
        used += c
    return out
