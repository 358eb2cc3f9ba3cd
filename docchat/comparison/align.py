"""Compare two versions of a document: align their sections, classify and redline each pair.

Sections are aligned in passes, surest first: the same text (wherever it moved, whatever its
number), then the same title without its number (unique on both sides), then the most
similar words, then what is left between two aligned neighbours in order. Each pair is then
unchanged, changed (with its redline: redline.diff), moved (off the longest run of pairs in
the same order), added or removed. A renumbered section whose text is the same is unchanged:
its two headings show the numbers. Pages of both versions are kept for every run of text.
"""
from __future__ import annotations

import hashlib
import re
import time
from bisect import bisect_left
from collections import Counter as Bag
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Sequence

from docchat.comparison.merges import contained, dice, parts, shared_runs
from docchat.comparison.redline import Op, Paragraph, diff, normalize, words
from ingest.document import Document, Section

STATUSES = ("unchanged", "changed", "moved", "added", "removed")
_RULE = re.compile(r"[\s=\-_*~#]+")  # a heading's underline, a rule: layout, not words
# Number forms stripped from a heading to compare titles: "3.2", "A.1", "IV.", "Section 4",
# "第三章", "一、".
_NUMBER = re.compile(
    r"^\s*(?:(?i:section|article|chapter|part|appendix|annex|clause|schedule|§)\s*"
    r"(?:\d+|[IVXLC]+|[ivxlc]+)\b(?:\.\d+)*[.:]?|\d+(?:\.\d+)*\.?(?=\s|$)"
    r"|[A-Z](?:\.\d+)+\.?|[IVXLC]+\.(?=\s)"
    r"|第[一二三四五六七八九十百千零〇\d]+[章节条款部编]|[一二三四五六七八九十]+、)\s*")


@dataclass(frozen=True)
class ComparePolicy:
    """Thresholds of the alignment, each with its reason."""
    pair_similarity: float = 0.5   # words in common (Dice) for a pair found by content alone
    gap_similarity: float = 0.2    # between two aligned neighbours, in order: a rewrite
    common_words: int = 40         # words in more sections than this are not candidates
    candidates: int = 8            # most similar old sections scored for each new one
    gap_pairs: int = 4000          # a larger gap is scored by titles only (speed)
    different_below: float = 0.35  # share aligned under which the documents may be unrelated
    # ... and unrelated when under this share of the shorter one's 5-word runs is shared:
    # licence versions share 0.25-0.98 (GPL-2/3 0.35, LGPL-2.1/3 0.25), unrelated licences
    # 0.03-0.04 (GPL-3 and Apache-2.0, MPL-2.0, LPPL).
    different_overlap: float = 0.1
    shingle: int = 5


POLICY = ComparePolicy()


@dataclass(frozen=True)
class Side:
    """One version's section of a pair."""
    index: int
    heading: str
    pages: tuple[str, ...]  # printed labels (physical numbers where there are none)
    first_page: int
    last_page: int

    def to_dict(self) -> dict:
        return {"heading": self.heading, "pages": list(self.pages), "index": self.index,
                "first_page": self.first_page, "last_page": self.last_page}

    @classmethod
    def from_dict(cls, d: dict | None) -> "Side | None":
        if d is None:
            return None
        return cls(d["index"], d["heading"], tuple(d["pages"]), d["first_page"], d["last_page"])


@dataclass(frozen=True)
class Pair:
    status: str  # one of STATUSES
    old: Side | None
    new: Side | None
    ops: tuple[Op, ...] = ()  # the redline; empty when the text is the same
    similarity: float = 1.0

    @property
    def inserted(self) -> list[str]:
        return [o.text for o in self.ops if o.op == "+"]

    @property
    def deleted(self) -> list[str]:
        return [o.text for o in self.ops if o.op == "-"]

    @property
    def heading(self) -> str:
        return (self.new or self.old).heading

    def to_dict(self) -> dict:
        return {"status": self.status,
                "old": self.old.to_dict() if self.old else None,
                "new": self.new.to_dict() if self.new else None,
                "inserted": self.inserted, "deleted": self.deleted,
                "similarity": round(self.similarity, 3),
                "ops": [o.to_list() for o in self.ops]}

    @classmethod
    def from_dict(cls, d: dict) -> "Pair":
        return cls(d["status"], Side.from_dict(d["old"]), Side.from_dict(d["new"]),
                   tuple(Op.from_list(o) for o in d.get("ops", ())), d.get("similarity", 1.0))


@dataclass(frozen=True)
class Comparison:
    old_name: str
    new_name: str
    pairs: tuple[Pair, ...]
    aligned: float  # share of both versions' text in pairs that are alike (0..1)
    overlap: float = 1.0  # share of the shorter version's 5-word runs also in the other
    seconds: float = 0.0
    old_id: int | None = None
    new_id: int | None = None
    extra: dict = field(default_factory=dict, compare=False)  # summaries, questions (stored)

    @property
    def verdict(self) -> str:
        """"same" (no differences), "different" (unrelated documents) or "changed"."""
        if all(p.status == "unchanged" for p in self.pairs):
            return "same"
        unrelated = (self.aligned < POLICY.different_below
                     and self.overlap < POLICY.different_overlap)
        return "different" if unrelated else "changed"

    @property
    def changed(self) -> list[Pair]:
        return [p for p in self.pairs if p.status != "unchanged"]

    def summary(self) -> dict[str, int]:
        counts = Bag(p.status for p in self.pairs)
        return {s: counts.get(s, 0) for s in STATUSES}

    def to_dict(self) -> dict:
        return {"old": self.old_name, "new": self.new_name, "old_id": self.old_id,
                "new_id": self.new_id, "verdict": self.verdict, "aligned": round(self.aligned, 3),
                "overlap": round(self.overlap, 3),
                "seconds": round(self.seconds, 3), "summary": self.summary(),
                "pairs": [p.to_dict() for p in self.pairs], **self.extra}

    @classmethod
    def from_dict(cls, d: dict) -> "Comparison":
        known = {"old", "new", "old_id", "new_id", "verdict", "aligned", "overlap", "seconds",
                 "summary", "pairs"}
        return cls(d["old"], d["new"], tuple(Pair.from_dict(p) for p in d["pairs"]),
                   d["aligned"], d.get("overlap", 1.0), d.get("seconds", 0.0), d.get("old_id"),
                   d.get("new_id"),
                   {k: v for k, v in d.items() if k not in known})


@dataclass
class _View:
    """What alignment reads of one section."""
    section: Section
    title: str  # without its number, lower case, spaces collapsed
    path: str   # the heading path so
    body: str   # normalized text
    digest: str
    _words: set[str] | None = None

    @property
    def words(self) -> set[str]:
        if self._words is None:
            self._words = set(words(self.title + " " + self.body))
        return self._words


def title_key(title: str) -> str:
    """A heading without its number, lower case: "3.2 Version" -> "version"."""
    return normalize(_NUMBER.sub("", title, count=1)).lower().rstrip(".:")


def _view(section: Section) -> _View:
    body = normalize(section.text)
    return _View(section, title_key(section.title),
                 " > ".join(title_key(t) for t in section.heading_path), body,
                 hashlib.blake2b(body.encode(), digest_size=12).hexdigest())


def compare(old: Document, new: Document, policy: ComparePolicy = POLICY) -> Comparison:
    """Align and redline two versions of a document."""
    started = time.perf_counter()
    a = [_view(s) for s in old.sections]
    b = [_view(s) for s in new.sections]
    match = _align(a, b, policy)
    moved = _moved(match)
    merged, split = parts(a, b, match)
    pairs: list[tuple[float, Pair]] = []
    for j, i in match.items():
        olds = sorted([i] + [k for k, to in merged.items() if to == j])
        news = sorted([j] + [k for k, to in split.items() if to == i])
        pairs.append((float(j), _pair(old, new, [a[k] for k in olds], [b[k] for k in news],
                                      moved=j in moved)))
    for i, j in merged.items():  # a part of a new section: beside that section's pair
        pairs.append((j + 0.25, _part(old, new, a[i], b[j], old_side=True)))
    for j, i in split.items():
        pairs.append((float(j), _part(old, new, a[i], b[j], old_side=False)))
    matched_old = set(match.values()) | set(merged)
    for i, v in enumerate(a):
        if i not in matched_old:
            pairs.append((_removed_at(i, match, moved), Pair("removed", _side(old, v.section),
                                                             None, (), 0.0)))
    for j, v in enumerate(b):
        if j not in match and j not in split:
            pairs.append((j, Pair("added", None, _side(new, v.section), (), 0.0)))
    pairs.sort(key=lambda t: t[0])
    done = [p for _, p in pairs]
    aligned = _aligned_share(done, a, b)
    overlap = (shared_runs(" ".join(v.body for v in a), " ".join(v.body for v in b),
                           policy.shingle) if aligned < policy.different_below else 1.0)
    return Comparison(old.name, new.name, tuple(done), aligned, overlap,
                      time.perf_counter() - started, old.id, new.id)


def _align(a: list[_View], b: list[_View], policy: ComparePolicy) -> dict[int, int]:
    """new index -> old index for every aligned pair."""
    match: dict[int, int] = {}
    by_digest: dict[str, list[int]] = defaultdict(list)
    for i, v in enumerate(a):
        if v.body:
            by_digest[v.digest].append(i)
    used: set[int] = set()
    for j, v in enumerate(b):  # 1. the same text
        free = [i for i in by_digest.get(v.digest, ()) if i not in used] if v.body else []
        if free:  # a text found twice: the same heading first, then the nearest place
            at = j * len(a) / max(1, len(b))
            i = min(free, key=lambda i: (a[i].path != v.path, a[i].title != v.title,
                                         abs(i - at)))
            match[j] = i
            used.add(i)
    for key in ("path", "title"):  # 2. the same heading, unique on both sides
        left = _unique(a, used, key)
        right = _unique(b, set(match), key)
        for value, j in right.items():
            i = left.get(value)
            if i is not None and i not in used and j not in match:
                match[j] = i
                used.add(i)
    _by_content(a, b, match, used, policy)  # 3. the most similar words
    _in_gaps(a, b, match, used, policy)  # 4. in order between aligned neighbours
    return match


def _unique(views: list[_View], used: set[int], key: str) -> dict[str, int]:
    seen = Bag(getattr(v, key) for i, v in enumerate(views) if i not in used)
    return {getattr(v, key): i for i, v in enumerate(views)
            if i not in used and getattr(v, key) and seen[getattr(v, key)] == 1}


def _by_content(a: list[_View], b: list[_View], match: dict[int, int], used: set[int],
                policy: ComparePolicy) -> None:
    left = [i for i in range(len(a)) if i not in used and a[i].body]
    right = [j for j in range(len(b)) if j not in match and b[j].body]
    if not left or not right:
        return
    index: dict[str, list[int]] = defaultdict(list)
    for i in left:
        for w in a[i].words:
            index[w].append(i)
    scored = []
    for j in right:
        hits = Bag()
        for w in b[j].words:
            olds = index.get(w, ())
            if len(olds) <= policy.common_words:
                hits.update(olds)
        for i, _ in hits.most_common(policy.candidates):
            s = dice(a[i].words, b[j].words)
            if s >= policy.pair_similarity:
                scored.append((s, j, i))
    for _, j, i in sorted(scored, reverse=True):
        if j not in match and i not in used:
            match[j] = i
            used.add(i)


def _in_gaps(a: list[_View], b: list[_View], match: dict[int, int], used: set[int],
             policy: ComparePolicy) -> None:
    """Pair what is left between the same two aligned neighbours, in order, when alike."""
    moved = _moved(match)  # anchors in order only: a moved pair would cross the gaps
    anchors = sorted((j, i) for j, i in match.items() if j not in moved)
    bounds = [(-1, -1)] + anchors + [(len(b), len(a))]
    for (j0, i0), (j1, i1) in zip(bounds, bounds[1:]):
        olds = [i for i in range(i0 + 1, i1) if i not in used]
        news = [j for j in range(j0 + 1, j1) if j not in match]
        if len(olds) * len(news) > policy.gap_pairs:  # unrelated text: titles only
            olds = [i for i in olds if a[i].title in {b[j].title for j in news}]
        for j in news:
            best = max(olds, key=lambda i: dice(a[i].words, b[j].words), default=None)
            if best is None:
                break
            if _alike_in_gap(a[best], b[j], policy):
                match[j] = best
                used.add(best)
                olds = [i for i in olds if i > best]


def _alike_in_gap(x: _View, y: _View, policy: ComparePolicy) -> bool:
    """The same title, or alike words under titles that share a word (or both untitled): a
    section rewritten in place. "3. Delivery" replaced by "3. Insurance" is not one."""
    if x.title and x.title == y.title:
        return True
    if (x.title or y.title) and not set(words(x.title)) & set(words(y.title)):
        return False
    return dice(x.words, y.words) >= policy.gap_similarity


def _moved(match: dict[int, int]) -> set[int]:
    """New indexes of pairs off the longest run in the same order in both versions."""
    order = sorted(match)
    olds = [match[j] for j in order]
    tails: list[int] = []
    tail_at: list[int] = []
    back = [-1] * len(olds)
    for k, i in enumerate(olds):
        pos = bisect_left(tails, i)
        if pos == len(tails):
            tails.append(i)
            tail_at.append(k)
        else:
            tails[pos], tail_at[pos] = i, k
        back[k] = tail_at[pos - 1] if pos else -1
    keep = set()
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        keep.add(order[k])
        k = back[k]
    return set(order) - keep


def _removed_at(i: int, match: dict[int, int], moved: set[int]) -> float:
    """A removed section goes after the pair that came before it in the old version."""
    before = [(i0, j) for j, i0 in match.items() if i0 < i and j not in moved]
    return max(before)[1] + 0.5 if before else -0.5


def _side(doc: Document, section: Section) -> Side:
    labels = []
    for n in range(section.page_start, section.page_end + 1):
        page = doc.page(n)
        labels.append(page.label if page is not None and page.label else str(n))
    return Side(section.index, section.heading, tuple(labels), section.page_start,
                section.page_end)


def _paragraphs(section: Section) -> list[Paragraph]:
    title = _NUMBER.sub("", section.title, count=1).strip()
    out = [Paragraph(title, section.page_start)] if title else []
    return out + [Paragraph(b.text, b.page) for b in section.blocks if b.text.strip()]


def _pair(old: Document, new: Document, xs: list[_View], ys: list[_View], moved: bool) -> Pair:
    """The pair of xs[0] and ys[0]; more than one on a side: the sections one version cuts
    in two (merges.parts), diffed together."""
    x, y = xs[0], ys[0]
    same = [v.body for v in xs] == [v.body for v in ys] and x.title == y.title
    status = "moved" if moved else ("unchanged" if same else "changed")
    if same:
        return Pair(status, _side(old, x.section), _side(new, y.section))
    ops = diff([p for v in xs for p in _paragraphs(v.section)],
               [p for v in ys for p in _paragraphs(v.section)])
    kept = sum(len(o.text) for o in ops if o.op == "=")
    total = sum(len(o.text) for o in ops) + kept
    if all(o.op == "=" or _RULE.fullmatch(o.text) for o in ops):
        # only the cut moved, or a heading's underline became text: the same words
        status, ops = ("moved" if moved else "unchanged"), []
    return Pair(status, _side(old, x.section), _side(new, y.section), tuple(ops),
                2 * kept / total if total else 1.0)


def _part(old: Document, new: Document, x: _View, y: _View, old_side: bool) -> Pair:
    """A section that the other version holds inside y (old_side) or x: unchanged when its
    text is there word for word (its changes, if any, are in the pair of the whole)."""
    part, whole = (x, y) if old_side else (y, x)
    same = part.body in whole.body
    return Pair("unchanged" if same else "changed", _side(old, x.section),
                _side(new, y.section), (), 1.0 if same else contained(part.body, whole.body))


def _aligned_share(pairs: Sequence[Pair], a: list[_View], b: list[_View]) -> float:
    """Share of both versions' text that sits in pairs at least half alike (a section in
    several pairs, as a part, counted once)."""
    size_a = {v.section.index: len(v.body) + len(v.title) + 1 for v in a}
    size_b = {v.section.index: len(v.body) + len(v.title) + 1 for v in b}
    total = sum(size_a.values()) + sum(size_b.values())
    alike = [p for p in pairs if p.old and p.new and p.similarity >= 0.5]
    kept = (sum(size_a[i] for i in {p.old.index for p in alike})
            + sum(size_b[j] for j in {p.new.index for p in alike}))
    return kept / total if total else 1.0

