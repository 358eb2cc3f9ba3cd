"""Follow-ups: the passages of the previous prompt given back (PreviousPassages), and which
of them a follow-up carries (carry(): pack()'s first step).

A passage is *carried* when the follow-up's prompt repeats it exactly as the previous prompt
had it (same section, same blocks, same place), so the backend's KV cache holds it."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from docchat.context import selection
from docchat.context.passages import Passage, TokenCounter
from docchat.context.policy import POLICY, PackingPolicy
from docchat.context.relevance import Relevance
from docchat.context.retrieval import content_terms, doc_key, refers_back
from ingest.document import Document

logger = logging.getLogger(__name__)

# (doc id or name, section index, block indexes shown or None for whole)
PassageRef = tuple[object, int, "tuple[int, ...] | None"]


@dataclass(frozen=True)
class PreviousPassages:
    """The passages of the last answer's prompt, given back for a follow-up: exact (from
    PackedContext.passages, with the blocks shown: carried exactly as they were while still
    relevant) or sections only (PackedContext.sections, or turns stored before passages were
    kept: put first where they are chosen again, whole)."""
    refs: tuple[PassageRef, ...]
    exact: bool = True

    @classmethod
    def of(cls, packed) -> "PreviousPassages":
        """A PackedContext's passages."""
        return cls(tuple(packed.passages), True)

    @classmethod
    def from_metrics(cls, metrics: Mapping | None) -> "PreviousPassages | None":
        """From an answer's stored metrics (qa.ask writes "passages" and "sections")."""
        metrics = metrics or {}
        if metrics.get("passages"):
            return cls(tuple(normalize_passages(metrics["passages"])), True)
        if metrics.get("sections"):
            return cls(tuple(normalize_passages(metrics["sections"])), False)
        return None

    @classmethod
    def from_list(cls, items: Sequence) -> "PreviousPassages":
        """The older untyped form (qa.ask's previous_sections): 3-item entries throughout
        are passages, else sections."""
        exact = bool(items) and all(len(s) > 2 for s in items)
        return cls(tuple(normalize_passages(items if exact else [s[:2] for s in items])),
                   exact)

    def to_list(self) -> list:
        """JSON form: [[doc, section, blocks or None], ...]."""
        return passages_json(self.refs)


def passages_json(refs: Sequence[PassageRef]) -> list:
    """Passage refs as JSON: [[doc, section, blocks or None], ...] (normalize_passages
    reads them back)."""
    return [[k, i, None if b is None else list(b)] for k, i, b in refs]


def normalize_passages(previous: Sequence) -> list[PassageRef]:
    """(doc key, section index, blocks or None) from PackedContext.passages or sections
    (whole), also after a JSON round trip (lists)."""
    out = []
    for item in previous or ():
        key, idx = item[0], int(item[1])
        key = tuple(key) if isinstance(key, list) else key
        blocks = item[2] if len(item) > 2 else None
        out.append((key, idx, None if blocks is None else tuple(int(b) for b in blocks)))
    return out


def existing_passages(documents: Sequence[Document], names: Sequence[object], previous: Sequence
              ) -> list[tuple[int, int, Passage]]:
    """The longest start of the previous passages that still exist, as (document, section
    position, passage)."""
    where = {name: i for i, name in enumerate(names)}
    where.update({doc_key(d, i): i for i, d in enumerate(documents)})
    out = []
    for key, idx, blocks in previous:
        i = where.get(key)
        if i is None:
            break
        d = documents[i]
        pos = next((k for k, s in enumerate(d.sections) if s.index == idx), None)
        if pos is None or (blocks is not None and (not blocks or max(blocks) >= len(
                d.sections[pos].blocks))):
            break
        out.append((i, pos, Passage(d, d.sections[pos], blocks, 0)))
    return out


def leans_back(question: str, policy: PackingPolicy = POLICY) -> bool:
    """The question means little without the earlier turns: elliptical (at most
    policy.elliptical_terms content words) or pointing back ("... for it?", "And ...",
    "……呢？")."""
    return len(content_terms(question)) <= policy.elliptical_terms or refers_back(question)


def still_relevant(documents: Sequence[Document], fused: dict, previous: Sequence,
                   question: str, policy: PackingPolicy = POLICY) -> bool:
    """Whether a follow-up is still about the previous prompt's excerpts: the question
    elliptical (at most policy.elliptical_terms content words) or pointing back at it
    (refers_back: "... for it?", "And ...", "……呢？"), or its own search still finding
    them: their sections hold the question's best fused hit, or policy.carry_held of its
    policy.carry_top best. A topic change packs afresh."""
    if not previous:
        return False
    if leans_back(question, policy):
        return True
    keys = {doc_key(d, i): i for i, d in enumerate(documents)}
    top = sorted(fused.items(), key=lambda kv: -kv[1])[:policy.carry_top]
    held = {(i, documents[i].sections[pos].index) for i, pos, _ in previous}
    ranks = [k for k, ((key, idx), _) in enumerate(top) if (keys.get(key), idx) in held]
    return bool(ranks) and (ranks[0] == 0 or len(ranks) >= policy.carry_held)


@dataclass
class Carry:
    """A follow-up's carried passages, decided before anything else (so that the turns are
    sized for the budget that applies)."""
    previous: list[PassageRef]  # the previous passages given
    passages: list[tuple[int, int, Passage]]  # the ones carried, if carries
    carries: bool  # still relevant: carried; else a topic change, packed afresh
    rel: Relevance | None  # the search, already run to decide
    limit_off: int  # tokens of the allowance taken off the limit again


def carry(documents: Sequence[Document], names: Sequence[object], question: str,
          counter: TokenCounter, previous_passages: Sequence, allowance: int,
          search: Callable[[], Relevance], policy: PackingPolicy = POLICY) -> Carry:
    """pack()'s first step: whether a follow-up carries the previous passages, and which. It carries
    them while still relevant, up to (not including) the first one whose left-out blocks
    hold the follow-up's best windows (that section is packed anew); the allowance was
    granted for carrying what is cut off, so that part of it comes off the limit: the
    follow-up still reads about as many new tokens as it was given. On a topic change the
    whole allowance comes off (packed afresh within the first question's budget).
    search: the question's Relevance (run only for a follow-up)."""
    previous = normalize_passages(previous_passages)
    if not previous:
        return Carry(previous, [], False, None, 0)
    existing = existing_passages(documents, names, previous)
    rel = search()
    if not (existing and still_relevant(documents, rel.sections, existing, question, policy)):
        return Carry(previous, existing, False, rel, allowance)
    own = selection.window_positions(documents, rel.own_windows, policy)
    grow = selection.to_grow(existing, own, policy, rel.named)
    cut = next((k for k, (i, pos, _) in enumerate(existing) if (i, pos) in grow),
               len(existing))
    off = min(allowance, sum(p.cost(counter) for _, _, p in existing[cut:]))
    return Carry(previous, existing[:cut], True, rel, off)
