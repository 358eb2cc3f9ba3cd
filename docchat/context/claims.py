"""Answers you can check: each statement of an answer matched to the passage, among those the
model was given, that supports it.

check_answer() splits an answer into statements (sentences and list items, English and
Chinese), scores each against windows of one to three sentences of the passages (the share of
its content words, weighted by how rare they are in the passages: jieba words for Chinese,
Porter stems for English; plus the dense model's cosine where an embedder is given), and then
checks its facts clause by clause (clauses.py): each clause of the statement aligned with the
window's clause holding its words, and within aligned clauses the negation (the words each cue
governs), the numbers (value, unit, what they count, their order) and the names (in their
place). Then the window as a whole: every number and name of the statement must be in it.
Pure, deterministic and fast (no model unless an embedder is passed): a 1,000-token answer
against an 8k-token context takes well under 200 ms.

Statuses, judged on the windows that match within MARGIN of the best:
- "not_found" with a conflict (Statement.conflict): an aligned clause states one of the
  statement's facts otherwise (another number for the same thing, the opposite polarity,
  another name in that place): "2.5x" where the passage says "10x". It wins over a window
  that only partly matches, and over a supporting one whose clauses match the statement
  clearly less closely (CLOSER_BY): the statement contradicts the passage it is about.
- "supported": support >= SUPPORTED_AT, every clause aligned, its numbers and names in or
  beside their clause (a name the passages make their subject may be missing there).
- "partly": partial word support and no conflicting fact: support >= PARTLY_AT, or a clause
  no passage clause holds, a number that is only in another sentence, a name not in or
  beside its clause. Never a contradiction.
- "not_found" without a conflict: too few of its words, a number that is in no window, a
  name the documents do not have.
- "exempt": no fact stated.
AnswerCheck.supported counts "supported" only; total counts all but "exempt".
A model citation ("[p. 3]") is "ok" when a cited page supports the statement, else "wrong" and
the statement's page is the one that does (or None). The app may show a corrected link
("corrected" is for it to record); the checker never changes a status for a citation.
"""
from __future__ import annotations

import heapq
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Sequence

from docchat.context import clauses, facts
from docchat.context.retrieval import index_terms, translate_terms
from docchat.context.sources import Source, sources_for  # noqa: F401 (the claims API)
from ingest.segment import cjk_ratio

SUPPORTED, PARTLY, NOT_FOUND, EXEMPT = "supported", "partly", "not_found", "exempt"
SUPPORTED_AT = 0.6  # weighted share of a statement's words in its support
PARTLY_AT = 0.3
PARTLY_WORDS = 2  # of a statement's words in its window, at least, for partial support
CANDIDATES = 6  # best single sentences widened into windows, per statement
WIDEN_COST = 0.03  # a window of more sentences must score this much more per sentence
SUBJECT_NAMED = 3  # sentences naming a name that make it the passages' subject
LEFT_OUT_PER = 4  # content words of a statement per word its support may lack
MARGIN = 0.15  # windows this far below the best match do not compete with it
DENSE_SHARE = 0.4  # of the score, from the embedder's cosine where one is given


@dataclass(frozen=True)
class Statement:
    text: str
    start: int  # span in the answer text
    end: int
    status: str  # "supported" | "partly" | "not_found" | "exempt"
    document: str | None = None
    doc_id: object = None
    page: int | None = None
    label: str | None = None
    span: tuple[int, int] | None = None  # char span of the support within its page text
    score: float = 0.0
    cited: list[str] = field(default_factory=list)  # page labels cited in this statement
    citation: str | None = None  # "ok" | "wrong" | "corrected" | None (nothing cited)
    reason: str | None = None  # why it is not supported: "2.5x is not in the passage"
    support: str | None = None  # the supporting sentences
    # Where the passage says otherwise (status "not_found"): {"kind": "number" | "negation" |
    # "name", "document", "doc_id", "page", "label", "span" (in the page text), "text" (that
    # sentence), "says" ("10x")}.
    conflict: dict | None = None

    def to_dict(self) -> dict:
        return {"text": self.text, "status": self.status, "document": self.document,
                "page": self.page, "label": self.label,
                "span": list(self.span) if self.span else None, "score": self.score,
                "start": self.start, "end": self.end, "doc_id": self.doc_id,
                "cited": list(self.cited), "citation": self.citation, "reason": self.reason,
                "support": self.support, "conflict": self.conflict}

    @classmethod
    def from_dict(cls, d: dict) -> "Statement":
        span = d.get("span")
        return cls(text=d.get("text", ""), start=int(d.get("start", 0)),
                   end=int(d.get("end", 0)), status=d.get("status", NOT_FOUND),
                   document=d.get("document"), doc_id=d.get("doc_id"), page=d.get("page"),
                   label=d.get("label"), span=tuple(span) if span else None,
                   score=float(d.get("score", 0.0)), cited=list(d.get("cited") or ()),
                   citation=d.get("citation"), reason=d.get("reason"),
                   support=d.get("support"), conflict=d.get("conflict") or None)


@dataclass(frozen=True)
class AnswerCheck:
    statements: list[Statement]
    supported: int  # statements with status "supported" ("partly" does not count)
    total: int  # statements that are not exempt

    @property
    def partly(self) -> int:
        return sum(s.status == PARTLY for s in self.statements)

    def to_dict(self) -> dict:
        return {"statements": [s.to_dict() for s in self.statements],
                "supported": self.supported, "total": self.total, "partly": self.partly}

    @classmethod
    def from_dict(cls, d: dict) -> "AnswerCheck":
        statements = [Statement.from_dict(s) for s in (d or {}).get("statements", ())]
        return of(statements)


def of(statements: list[Statement]) -> AnswerCheck:
    return AnswerCheck(statements, sum(s.status == SUPPORTED for s in statements),
                       sum(s.status != EXEMPT for s in statements))


# --- support -----------------------------------------------------------------------------

class _Passages:
    """The sources' sentences with their terms and facts, and an inverted index."""

    def __init__(self, sources: Sequence[Source]) -> None:
        self.sources = list(sources)
        self.spans: list[tuple[int, int, int]] = []  # (source, start, end)
        self.terms: list[set[str]] = []
        self.postings: dict[str, list[int]] = defaultdict(list)
        for i, s in enumerate(self.sources):
            for a, b in facts.sentence_spans(s.text, lines=s.kind in ("code", "table")):
                k = len(self.spans)
                self.spans.append((i, a, b))
                words = set(index_terms(s.text[a:b]))
                self.terms.append(words)
                for t in words:
                    self.postings[t].append(k)
        n = len(self.spans) or 1
        self.idf = {t: math.log(1 + n / len(p)) for t, p in self.postings.items()}
        self.unseen = math.log(1 + n)
        text = " ".join(s.text for s in self.sources)
        self.zh = cjk_ratio(text) >= 0.3
        self._names: dict[str, int] | None = None
        self._name_words: set[str] | None = None
        self._squashed: str | None = None
        self.joined = [self.adjacent(k) for k in range(len(self.spans))]
        self._facts: dict[int, tuple] = {}
        self._clauses: dict[int, list] = {}

    @property
    def squashed(self) -> str:
        """All the passages, lower-cased, without whitespace (made on first use)."""
        if self._squashed is None:
            self._squashed = facts.squashed(" ".join(s.text for s in self.sources))
        return self._squashed

    def text(self, lo: int, hi: int) -> str:
        return " ".join(self.sources[self.spans[k][0]].text[self.spans[k][1]:self.spans[k][2]]
                        for k in range(lo, hi + 1))

    def adjacent(self, k: int) -> bool:
        """Whether sentence k+1 continues sentence k's passage (same document, same or next
        page), so a window may hold both."""
        if k + 1 >= len(self.spans):
            return False
        a, b = self.sources[self.spans[k][0]], self.sources[self.spans[k + 1][0]]
        return a.doc_id == b.doc_id and (a.page is None or b.page in (a.page, a.page + 1))

    @property
    def name_words(self) -> set[str]:
        """The content words of the documents' names ("debian-policy.pdf": debian, policy,
        pdf): an answer that names a document says nothing by that alone."""
        if self._name_words is None:
            self._name_words = {w for s in {s.document for s in self.sources}
                                for w in facts.content_words(s or "")}
        return self._name_words

    @property
    def names(self) -> dict[str, int]:
        """Each name of the passages and the number of sentences naming it (made once, on
        the first statement with a name its support lacks)."""
        if self._names is None:
            found = facts.name_words("\n".join(s.text for s in self.sources))[0]
            self._names = defaultdict(int)
            for n in found:
                self._names[n] += 1
        return self._names

    def window_names(self, lo: int, hi: int) -> set[str]:
        """The window's names, with the words opening its sentences that the passages use
        as names elsewhere."""
        found, initials = facts.name_words(self.text(lo, hi))
        return set(found) | {w for w in initials if w in self.names}

    def weight(self, term: str) -> float:
        """How rare term is in the passages (its idf; unseen terms the rarest)."""
        return self.idf.get(term, self.unseen)

    def clauses_of(self, k: int) -> list:
        """Sentence k's clauses with their facts (clauses.split), made once."""
        got = self._clauses.get(k)
        if got is None:
            got = self._clauses[k] = clauses.split(self.text(k, k), _words, known=self.names,
                                                   sentence=self._head(k))
        return got

    def _head(self, k: int) -> int:
        """The first piece of the sentence that sentence k belongs to: a sentence cut where
        its source ends (at a page break) goes on in the next source."""
        while k > 0 and self.joined[k - 1] and self.spans[k - 1][0] != self.spans[k][0] \
                and not _ENDED.search(self.text(k - 1, k - 1)):
            k -= 1
        return k

    def facts_of(self, k: int):
        got = self._facts.get(k)
        if got is None:
            t = self.text(k, k)
            got = self._facts[k] = (facts.numbers(t), t.lower())
        return got


_ENDED = re.compile(r"[.!?。！？…:：;；]['\"”’)）]*\s*$")
_CACHE: dict[tuple, _Passages] = {}
CACHE_SIZE = 4  # passage indexes kept: a streamed answer is checked again and again


def passages(sources: Sequence[Source]) -> _Passages:
    """The index of these sources, built once while the same sources come back."""
    key = tuple(sources)
    got = _CACHE.get(key)
    if got is None:
        if len(_CACHE) >= CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        got = _CACHE[key] = _Passages(sources)
    return got


@dataclass
class _Match:
    lo: int
    hi: int
    score: float
    core: int  # the window's sentence that matches the statement best
    reason: str | None = None
    status: str = NOT_FOUND
    conflict: clauses.Conflict | None = None  # a fact its window states otherwise
    closeness: float = 0.0  # how closely its clauses match the statement's (clauses.compare)
    absent: tuple[int, ...] = ()  # the statement's words (group indexes) the window lacks
    words: int = 0  # the statement's words (groups) in all


def _groups(words: list[str], translate: bool) -> list[set[str]]:
    """Each content word as the index terms that match it (its translations too)."""
    out = []
    for w in words:
        g = set(index_terms(w))
        if translate:
            for t in translate_terms([w]):
                g.update(index_terms(t))
        if g:
            out.append(g)
    return out


def _candidates(p: _Passages, groups, weights) -> list[_Match]:
    """Windows of one to three sentences around the sentences that match the statement
    best, scored by the weighted share of its words they hold (one bit per word)."""
    masks: dict[int, int] = defaultdict(int)
    for bit, g in enumerate(groups):
        hits = p.postings.get(next(iter(g)), ()) if len(g) == 1 else \
            {k for t in g for k in p.postings.get(t, ())}
        for k in hits:
            masks[k] |= 1 << bit
    total = sum(weights) or 1.0
    memo: dict[int, float] = {}

    def cover(mask: int) -> float:
        got = memo.get(mask)
        if got is None:
            got = memo[mask] = sum(w for bit, w in enumerate(weights) if mask >> bit & 1) / total
        return got

    scores = {k: cover(m) for k, m in masks.items()}
    out = []
    for k in heapq.nsmallest(CANDIDATES, scores, key=lambda k: (-scores[k], k)):
        for lo, hi in ((k, k), (k - 1, k), (k, k + 1), (k - 1, k + 1)):
            if lo < 0 or hi >= len(p.spans) or not all(p.joined[j] for j in range(lo, hi)):
                continue
            mask = 0
            for j in range(lo, hi + 1):
                mask |= masks.get(j, 0)
            core = max(range(lo, hi + 1), key=lambda j: (scores.get(j, 0.0), -abs(j - k)))
            absent = tuple(b for b in range(len(groups)) if not mask >> b & 1)
            out.append(_Match(lo, hi, cover(mask) - WIDEN_COST * (hi - lo), core,
                              absent=absent, words=len(groups)))
    return out


def _judge(m: _Match, claim: facts.Claim, mine: list, p: _Passages,
           words: Sequence[str] = ()) -> _Match:
    """The match's status from its score and the claim's facts in its window: clause by
    clause (clauses.py; mine: the claim's clauses, clauses.prepare()d), then the window's
    numbers and names."""
    status = SUPPORTED if m.score >= SUPPORTED_AT else PARTLY if m.score >= PARTLY_AT \
        else NOT_FOUND
    if status == PARTLY and m.words - len(m.absent) < PARTLY_WORDS:
        status = NOT_FOUND  # one word in common is chance ("description" for "问题描述")
    if status == NOT_FOUND:
        return _Match(m.lo, m.hi, m.score, m.core, "not found in the documents" if m.score > 0
                      else None, NOT_FOUND)
    theirs = [c for k in range(m.lo, m.hi + 1) for c in p.clauses_of(k)]
    verdict = clauses.compare((), theirs, p.weight, prepared=mine)
    if verdict.conflict is not None:
        return _Match(m.lo, m.hi, m.score, m.core, _says(p, verdict.conflict), NOT_FOUND,
                      verdict.conflict, verdict.closeness)
    window = [p.facts_of(k) for k in range(m.lo, m.hi + 1)]
    text = " ".join(w[1] for w in window)
    missing = facts.missing_numbers(set(claim.numbers), set().union(*(w[0] for w in window)))
    named = set(claim.names) | {w for w in claim.initials if w in p.names}
    terms = set().union(*(p.terms[k] for k in range(m.lo, m.hi + 1)))
    absent = [n for n in sorted(named) if not _has_word(text, n)
              and not set(index_terms(n)) <= terms]  # "Flowables" for "Flowable" is there
    unknown = [n for n in absent if n not in p.names or facts.is_month(n)]
    reason = None
    here = facts.squashed(text)
    idents = sorted(i for i in claim.identifiers if i not in here)
    if missing:
        status, reason = NOT_FOUND, f"{', '.join(missing)} not in the passage"
    elif unknown:
        status, reason = NOT_FOUND, f"{', '.join(unknown)} not in the documents"
    elif any(i not in p.squashed for i in idents):
        idents = [i for i in idents if i not in p.squashed]
        status, reason = NOT_FOUND, f"{', '.join(idents)} not in the documents"
        if other := next(filter(None, (facts.other_form(i, text) for i in idents)), None):
            reason += f": the passage has {other}"
    elif idents:
        status, reason = PARTLY, f"{', '.join(idents)} not in that passage"
    elif status == SUPPORTED:
        reason = _partly(verdict, p) or _words_left_out(m, words, p)
        status = PARTLY if reason else SUPPORTED
    return _Match(m.lo, m.hi, m.score, m.core, reason, status, None, verdict.closeness,
                  m.absent)


def _words_left_out(m: _Match, words: Sequence[str], p: _Passages) -> str | None:
    """A short statement is supported only with all its words in the passage, a longer one
    may lack one word in every LEFT_OUT_PER (a synonym, a word of the model's own): "The
    package is installed in the Debian archive" against "... packages in the Debian
    archive" says something the passage does not. A word the passages hold elsewhere is no
    synonym but another thing they speak of: "Reports are written to the spool folder"
    against "Backups are written to the spool folder" is never supported."""
    left = [words[b] for b in m.absent if b < len(words)]
    # (Latin words only: jieba cuts a Chinese phrase by its context, so a word of the
    # statement may be cut otherwise in its passage and whole elsewhere.)
    swapped = [w for w in left if w.isascii() and any(t in p.postings for t in index_terms(w))]
    if not left or (not swapped and len(m.absent) <= (len(words) - 1) // LEFT_OUT_PER):
        return None
    return f"“{'”, “'.join((swapped or left)[:3])}” not in the passage"


def _partly(verdict: clauses.Verdict, p: _Passages) -> str | None:
    """Why a statement whose words are there is only partly supported: a clause the passage
    does not hold, or a number or a name that is not in or beside its clause (a name the
    passages make their subject may be left out there: "It reaches 25x")."""
    if verdict.unaligned:
        return f"“{_short(verdict.unaligned[0])}” is not in the passage"
    if verdict.far_numbers:
        return f"{', '.join(verdict.far_numbers)} is in another sentence"
    if verdict.far_words:
        return f"“{'”, “'.join(verdict.far_words[:3])}” in another sentence"
    names = [n for n in verdict.far_names if p.names.get(n.lower(), 0) < SUBJECT_NAMED]
    if names:
        return f"{', '.join(names)} not in that sentence"
    return None


def _short(text: str, words: int = 8) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "") if parts else text


def _says(p: _Passages, conflict: clauses.Conflict) -> str:
    source = p.sources[p.spans[conflict.clause.sentence][0]]
    where = f"p. {source.label or source.page}" if source.page is not None else source.document
    if conflict.kind == "negation":
        return f"the document says the opposite: “{conflict.says}” ({where})"
    return f"{conflict.mine} not in the passage: the document says {conflict.says} ({where})"


def _conflict_dict(p: _Passages, conflict: clauses.Conflict) -> dict:
    i, a, b = p.spans[conflict.clause.sentence]
    s = p.sources[i]
    return {"kind": conflict.kind, "document": s.document, "doc_id": s.doc_id, "page": s.page,
            "label": s.label,
            "span": [s.offset + a, s.offset + b], "text": " ".join(s.text[a:b].split()),
            "says": conflict.says}


def _words(text: str) -> list[str]:
    return [t for t in index_terms(text) if t not in _STOP_TERMS]


_STOP_TERMS = frozenset(index_terms(" ".join(facts.FUNCTION_WORDS)))


def _has_word(text: str, word: str) -> bool:
    at = text.find(word)
    while at >= 0:
        before = text[at - 1] if at else " "
        if not (before.isalnum()):
            return True
        at = text.find(word, at + 1)
    return False


_RANK = {SUPPORTED: 3, PARTLY: 1, NOT_FOUND: 0}
CONFLICT_RANK = 2  # a window that says otherwise outranks one that only partly matches
CLOSER_BY = 0.05  # and a supporting one where it matches the statement this much closer


def _best(matches: list[_Match], p: _Passages, cited: list[str]) -> _Match | None:
    """The match that tells the statement's status: a clean one before one that says
    otherwise before one that only partly matches, unless the one whose clauses match the
    statement's clearly more closely says otherwise: then it does."""
    if not matches:
        return None
    # The statement is about the passages it matches best: a fact-clean window elsewhere
    # that matches clearly less does not hide the best one's contradiction.
    top = max(m.score for m in matches)
    matches = [m for m in matches if m.score >= top - MARGIN]

    def key(m: _Match):
        on_cited = _label(p, m) in cited
        rank = CONFLICT_RANK if m.conflict is not None else _RANK[m.status]
        return (rank, on_cited, round(m.score, 6), round(m.closeness, 6), -(m.hi - m.lo),
                -m.lo)
    best = max(matches, key=key)
    if best.status == SUPPORTED and len(matches) > 1:
        closest = max(matches, key=lambda m: (m.closeness, m.conflict is not None))
        if closest.conflict is not None and closest.closeness > best.closeness + CLOSER_BY:
            return closest
    return best


def _label(p: _Passages, m: _Match) -> str | None:
    s = p.sources[p.spans[_core_sentence(p, m)][0]]
    return (s.label or "").lower() or (str(s.page) if s.page is not None else None)


def _core_sentence(p: _Passages, m: _Match) -> int:
    return m.core


def _span(p: _Passages, m: _Match) -> tuple[Source, tuple[int, int]]:
    """The core sentence's source and the window's span within that source's page text."""
    i = p.spans[_core_sentence(p, m)][0]
    parts = [p.spans[k] for k in range(m.lo, m.hi + 1) if p.spans[k][0] == i]
    s = p.sources[i]
    return s, (s.offset + parts[0][1], s.offset + parts[-1][2])


def check_answer(answer: str, sources: Sequence[Source], *, embedder=None) -> AnswerCheck:
    """Each statement of answer, with the passage among sources that supports it (see the
    module's docstring for the statuses). Never raises on an empty answer, a text document
    without pages, or an answer in another language than the sources."""
    answer = answer or ""
    p = passages(sources)
    translate = None
    pending: list[tuple[int, int, list[str], facts.Claim, list[_Match], list, list]] = []
    out: list[Statement | None] = []
    for start, end, cited in facts.split_statements(answer):
        text = answer[start:end]
        c = facts.claim(facts.masked(text))
        words = facts.content_words(c.text)
        # One content word besides the documents' names, and no number, states nothing that
        # can be checked: a heading or an outline line said back ("manual.pdf: Files").
        if facts.exempt(c.text, len(set(words) - p.name_words) > 1 or (
                bool(words) and bool(facts.numbers(c.text)))):
            out.append(Statement(text, start, end, EXEMPT, cited=cited))
            continue
        if translate is None:  # words of the other language only across languages
            translate = (cjk_ratio(answer) >= 0.3) != p.zh and bool(p.spans)
        pairs = [(w, g[0]) for w in words for g in (_groups([w], translate),) if g]
        kept, groups = [w for w, _ in pairs], [g for _, g in pairs]
        weights = [max(p.idf.get(t, p.unseen) for t in g) for g in groups]
        mine = clauses.prepare(clauses.split(
            c.text, _words, known=p.names,
            groups=lambda piece, tr=translate: _groups(facts.content_words(piece), tr)), p.weight)
        pending.append((start, end, cited, c, _candidates(p, groups, weights), mine,
                        [] if translate else kept))  # across languages words go missing
        out.append(None)
    _add_dense(pending, p, embedder)
    it = iter(pending)
    return of([s if s is not None else _statement(answer, next(it), p) for s in out])


def _add_dense(pending, p: _Passages, embedder) -> None:
    """Blend the embedder's cosine into each candidate's score (nothing without one)."""
    if embedder is None or not getattr(embedder, "enabled", False) or not pending:
        return
    windows = sorted({(m.lo, m.hi) for item in pending for m in item[4]})
    texts = [item[3].text for item in pending] + [p.text(a, b) for a, b in windows]
    vecs = embedder.query_encoder().encode(texts)
    row = {w: vecs[len(pending) + i] for i, w in enumerate(windows)}
    for n, item in enumerate(pending):
        for m in item[4]:
            cos = float(vecs[n] @ row[(m.lo, m.hi)])
            m.score = (1 - DENSE_SHARE) * m.score + DENSE_SHARE * max(0.0, cos)


def _statement(answer: str, item, p: _Passages) -> Statement:
    start, end, cited, claim, matches, mine, kept = item
    text = answer[start:end]
    top = max((m.score for m in matches), default=0.0)
    best = _best([_judge(m, claim, mine, p, kept) for m in matches
                  if m.score >= top - MARGIN], p, cited)
    if best is None or best.score <= 0:
        reason = "not found in the documents"
        return Statement(text, start, end, NOT_FOUND, cited=cited,
                         citation="wrong" if cited else None, reason=reason)
    source, span = _span(p, best)
    label = _label(p, best)
    citation = None
    if cited:
        citation = "ok" if best.status != NOT_FOUND and label in cited else "wrong"
    found = best.status != NOT_FOUND
    return Statement(text, start, end, best.status, source.document, source.doc_id,
                     source.page if found else None, source.label if found else None,
                     span if found else None, round(best.score, 3), cited, citation,
                     best.reason, p.text(best.lo, best.hi) if found else None,
                     _conflict_dict(p, best.conflict) if best.conflict else None)
