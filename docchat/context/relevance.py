"""What the search found for a question: fused section scores (BM25, best window, dense),
window scores, and the words that score blocks; the packer's one call into retrieval."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from docchat.context import embeddings
from docchat.context.cache import DocumentCache
from docchat.context.embeddings import Embedder, EmbeddingStore, partner
from docchat.context.policy import POLICY
from docchat.context.retrieval import (
    SearchFn,
    SectionIndex,
    add_dense,
    add_windows,
    asks_chapter,
    asks_position,
    asks_structure,
    asks_whole,
    aspects,
    build_queries,
    content_terms,
    doc_key,
    dotted_numbers,
    fused_scores,
    index_terms,
    named_chapter,
    numbered_depth,
    title_names,
    title_words,
    window_scores,
    without_structure_words,
)
from ingest.document import Document

logger = logging.getLogger(__name__)

# Dense passage (window) scores join the BM25 window scores for the best windows by meaning
# (PackingPolicy.passage_top of them), min-max scaled from 0 to PASSAGE_WEIGHT (as add_dense
# does for sections).
PASSAGE_WEIGHT = 1.0
# The best windows by meaning alone kept for select()'s large budgets (policy.meant_*).
MEANT_TOP = 20
# A section whose own title the question names (all of its title words among the
# question's: "the rules for the Version field" names "5.6.12 Version") gains TITLE_WEIGHT
# of the best fused score, shared among the found sections of the same title words. Only a
# section the search found otherwise.
TITLE_WEIGHT = 0.5


@dataclass(frozen=True)
class Relevance:
    """What the search found for a question (and its recent turns)."""
    sections: dict  # (doc key, section index) -> fused score: BM25, best window, dense
    windows: dict  # (doc key, section index, first block, last block) -> window score
    own_windows: dict  # the same for the question's own words only (not the history's)
    terms: list[str]  # the queries' content words (block scoring)
    named: set[str]  # the first query's words as the index stems them (titles it names)
    structure: bool = False  # the question asks which part is about something, or its parts
    parts: dict = field(default_factory=dict)  # (doc key, outline entry) -> dense score
    whole: bool = False  # the question asks about a part as a whole (retrieval.asks_whole)
    # A question that asks several things (retrieval.aspects): each part's window scores;
    # for a question about a collection's first or last entries, also those windows
    # (position_windows).
    aspects: list = field(default_factory=list)
    # The question's best windows by meaning alone (cosine; MEANT_TOP of them per model):
    # where the budget has room, they go in after the best fused windows (select(meant=)).
    meant: dict = field(default_factory=dict)
    # Every scored window's cosine to the question (the better of the models that scored
    # it): which blocks of a section that goes in partly mean what the question asks
    # (selection.meaning_blocks), where the question shares few words with them.
    meaning: dict = field(default_factory=dict)
    # The question names a chapter as what it asks about (retrieval.asks_chapter): the part
    # whose sub-outline it gets is that chapter (outline.focus_outline(chapter=)).
    chapter: bool = False
    # ... and names it by its number or place (retrieval.named_chapter).
    chapter_ref: tuple | None = None
    # A follow-up's own search words, as the index stems them (its `named`, not its
    # history's): blocks of a section that goes in partly weigh them policy.own_term_weight
    # times.
    own_terms: frozenset = frozenset()


def relevance(documents: Sequence[Document], question: str, history: Sequence = (),
              search: SearchFn | None = None, *, rewrite: Callable[[str], str] | None = None,
              expand: bool = True, embedder: Embedder | None = None,
              store: EmbeddingStore | None = None,
              passage_top: int = POLICY.passage_top, companion: bool = False,
              followup_dense_terms: int = POLICY.followup_dense_terms,
              history_weight: float = POLICY.history_weight,
              own_aspect: int = POLICY.own_aspect) -> Relevance:
    """Search the documents for the question: queries from it and the recent user turns
    (translated where a document's language differs), fused section scores, window scores
    (search.windows where the search has them, else the in-memory index) joined as each
    section's best window, and dense scores where the embedder is enabled. A question that
    changes the topic later in a session is searched as a first question is: with no
    history (pass history=()). passage_top: how many of the best windows by meaning have
    their cosines join their window scores. companion: the multilingual companion's passage
    scores join too where the embedder's model reads the question (policy.companion_from:
    the budgets that have room for more passages). followup_dense_terms, history_weight,
    own_aspect: see the policy."""
    queries = build_queries(question, history, documents, rewrite=rewrite, expand=expand,
                            history_weight=history_weight)
    searcher = search or SectionIndex(documents)
    fused = fused_scores(searcher, queries)
    by_window = getattr(searcher, "windows", None) or SectionIndex(documents).windows
    hits = [by_window(q.text) for q in queries]  # each query searched once
    windows = window_scores(by_window, queries, hits)
    own = window_scores(by_window, queries[:1], hits[:1]) if len(queries) > 1 else windows
    parts: dict = {}
    meant: dict = {}
    meaning: dict = {}
    keys = [doc_key(d, i) for i, d in enumerate(documents)]
    opts = {"store": store, "queries": queries}
    # Sections, passages and parts are scored by meaning from the question's topic: the
    # words asking for structure or a form ("summarize the whole section of the X guide on
    # ...") name no topic, and they pull the encoder toward pages that talk about the
    # document itself.
    topic = without_structure_words(question).strip() or question
    if embedder is not None and embedder.enabled:
        fused = add_dense(fused, embedder.scores(topic, documents, keys, **opts))
    # Passages and parts by meaning, where their vectors are at hand (warm() computes them
    # in the background after the sections'; until then BM25 alone finds them). Not for a
    # follow-up: an elliptical question ("And the lowercase one?") means little alone, and
    # with the previous turn it finds the previous topic again (on the test and fresh sets'
    # 21 follow-ups at 8k: 18 found without, 16 with; the previous turn as context
    # (Embedder.scores(context=)) 17). Nor by a model that reads the question only as its
    # dictionary translation (a Chinese question, MiniLM): a bag of translated words is no
    # sentence, and its passages crowded out BM25's; the multilingual companion reads such
    # a question itself (_passage_models).
    history_asked = any(getattr(m, "role", "") == "user" for m in history)
    followup = history_asked and not (
        followup_dense_terms and len(content_terms(topic)) >= followup_dense_terms)
    for model, docs, dkeys, with_parts in _passage_models(documents, keys, embedder,
                                                          question, companion):
        if model.reads_question(question) and not followup:
            passages = model.scores(topic, docs, dkeys, kind="windows", only_ready=True,
                                    **opts)
            windows = add_dense(windows, passages, PASSAGE_WEIGHT, passage_top)
            own = add_dense(own, passages, PASSAGE_WEIGHT, passage_top)
            meant.update(sorted(passages.items(), key=lambda kv: -kv[1])[:MEANT_TOP])
            for key, v in passages.items():
                meaning[key] = max(v, meaning.get(key, v))
        if with_parts:
            parts.update(model.scores(topic, docs, dkeys, kind="parts", only_ready=True,
                                      **opts))
    fused = add_windows(fused, windows)
    named = set(index_terms(queries[0].text)) if queries else set()
    fused = add_titled(fused, documents, keys, named)
    fused, windows, own = add_numbered(numbered_text(question, history), documents, keys,
                                       fused, windows, own)
    parted = _aspects(documents, question, history, by_window, expand, embedder, store,
                      passage_top, companion)
    if where := asks_position(question):
        parted.append(position_windows(documents, keys, where))
    if own_aspect and len(queries) > 1:  # a follow-up's own words: a part of its own
        parted.append(dict(sorted(own.items(), key=lambda kv: -kv[1])[:own_aspect]))
    return Relevance(fused, windows, own, content_terms(" ".join(q.text for q in queries)),
                     named, asks_structure(question), parts, asks_whole(question), parted,
                     meant, meaning, asks_chapter(question), named_chapter(question),
                     frozenset(named) if history_asked else frozenset())


# The opening (or closing) windows a question about a collection's first (last) entries
# gets (retrieval.asks_position): about 1,800 characters, four to eight short poems or
# list entries.
POSITION_WINDOWS = 3


def position_windows(documents: Sequence[Document], keys: Sequence[object], where: str,
                     count: int = POSITION_WINDOWS) -> dict[tuple[object, int, int, int], float]:
    """The first (where="start") or last count windows of each document, as window scores
    (a part of the question of its own, see Relevance.aspects), the one nearest the edge
    best."""
    out: dict[tuple[object, int, int, int], float] = {}
    for doc, key in zip(documents, keys):
        spans = embeddings.window_units(doc)
        chosen = spans[:count] if where == "start" else spans[-count:][::-1]
        for k, (idx, first, last) in enumerate(chosen):
            out[(key, idx, first, last)] = 1.0 - k / (count + 1)
    return out


_TITLES: DocumentCache[list] = DocumentCache(16, equal=False)


_NUMBERING = re.compile(r"^\s*(?:(?:chapter|section|part|appendix)\s+)?(?:\d+|[A-Z])(?:[.\-]\d+)*"
                       r"[.):]?\s+|^\s*第\s*\S{1,4}?\s*[章节部篇]\s*", re.IGNORECASE)


def _titles(doc: Document) -> list[tuple[int, tuple[frozenset, ...]]]:
    """(section index, the search words of each name its own title goes by (title_names):
    numbers in it kept, its own numbering not) of each titled section of doc."""
    out = []
    for s in doc.sections:
        title = _NUMBERING.sub("", s.title, count=1) if s.heading_path else ""
        names = (frozenset(title_words(name)) for name in title_names(title))
        names = tuple(dict.fromkeys(n for n in names if n))
        if names:
            out.append((s.index, names))
    return out


def add_titled(fused: dict[tuple[object, int], float], documents: Sequence[Document],
               keys: Sequence[object], named: set[str], weight: float | None = None
               ) -> dict[tuple[object, int], float]:
    """fused plus, for each section the question names by its own title (all of the
    title's words among named, the question's search words as the index stems them, or
    all of one of its other names': title_names), weight x the best fused score, shared
    by the sections of the same title words that the search found (ten found sections
    called "Examples" gain a tenth each). Only sections already in fused."""
    weight = TITLE_WEIGHT if weight is None else weight
    if not named or not fused or weight <= 0:
        return fused
    groups: dict[frozenset, list] = {}
    for d, key in zip(documents, keys):
        for idx, names in _TITLES.get(d, _titles):
            words = max((n for n in names if n <= named), key=len, default=None)
            if words is not None and (key, idx) in fused:
                groups.setdefault(words, []).append((key, idx))
    if not groups:
        return fused
    top = max(fused.values())
    out = dict(fused)
    for found in groups.values():
        for k in found:
            out[k] += weight * top / len(found)
    return out


# A release or section the question names by its dotted number ("rsync 3.5.0", "section
# 4.2", "第 3.2 节"): the sections under a heading that carries that number gain
# NUMBER_WEIGHT of the best score, shared among the headings that carry it. Numbers in
# text are split into their digits by the index (3, 5, 0: words found everywhere in
# release notes), so the search alone does not tell 3.5.0's notes from 3.4.0's.
NUMBER_WEIGHT = 0.5


def numbered_text(question: str, history: Sequence = ()) -> str:
    """Where a question's release or section number is: the question, or for a follow-up
    that names none ("And the security fixes?") the latest user turn that does ("What
    changed in 3.4.0?")."""
    if dotted_numbers(question):
        return question
    users = [m.content for m in history if getattr(m, "role", "") == "user"]
    return next((u for u in reversed(users) if dotted_numbers(u)), "")


def numbered_groups(doc: Document, numbers: set[str]) -> dict[tuple, list[int]]:
    """Sections of doc under a heading that carries one of numbers, grouped by that heading
    (its heading path down to it): {heading path: section indices}."""
    out: dict[tuple, list[int]] = {}
    for s in doc.sections:
        if (depth := numbered_depth(numbers, s)) is not None:
            out.setdefault(tuple(s.heading_path[:depth + 1]), []).append(s.index)
    return out


def add_numbered(question: str, documents: Sequence[Document], keys: Sequence[object],
                 fused: dict, *window_maps: dict, weight: float | None = None) -> tuple:
    """fused and each of window_maps with the sections (their windows) under headings that
    carry a dotted number of the question raised by weight x the map's best score, shared
    among those headings. Only units already scored."""
    weight = NUMBER_WEIGHT if weight is None else weight
    numbers = dotted_numbers(question)
    if not numbers or not fused or weight <= 0:
        return (fused, *window_maps)
    groups = [{(key, idx) for idx in idxs}
              for d, key in zip(documents, keys)
              for idxs in numbered_groups(d, numbers).values()]
    if not groups:
        return (fused, *window_maps)
    share = weight / len(groups)
    marked = {k for g in groups for k in g}
    top = max(fused.values())
    out = [{k: v + share * top * (k in marked) for k, v in fused.items()}]
    for scores in window_maps:
        best = max(scores.values(), default=0.0)
        out.append({k: v + share * best * (k[:2] in marked) for k, v in scores.items()})
    return tuple(out)


def _passage_models(documents: Sequence[Document], keys: Sequence[object],
                    embedder: Embedder | None, question: str, companion: bool = False
                    ) -> list[tuple[Embedder, list[Document], list[object], bool]]:
    """(model, documents, their keys, whether it scores their parts) for the passage and
    part scores by meaning: the embedder for the documents its model reads; its companion
    (embeddings.partner, the multilingual model) for the others (MiniLM: the Chinese
    documents, which had no scores by meaning at all), and, where the embedder's model
    does not read the question, for its documents' passages too; with companion, for them
    also where it does (two readings of an English question: MiniLM's and the multilingual
    model's). Only stored vectors are used. The companion's section scores are left out: on
    the tuning sets they cost 2k and 4k recall (the passages alone: 487 / 620 / 685 of 792
    at 2k / 4k / 8k; with its section scores 479 / 614 / 685)."""
    if embedder is None or not embedder.enabled:
        return []
    out = [(embedder, list(documents), list(keys), True)]
    other = partner(embedder)
    if other is None:
        return out
    unread = [k for k, d in enumerate(documents) if not embedder.reads(d)]
    if unread:
        out.append((other, [documents[k] for k in unread], [keys[k] for k in unread], True))
    read = [k for k, d in enumerate(documents) if embedder.reads(d)]
    if embeddings.CROSS_PASSAGES and read and question \
            and (companion or not embedder.reads_question(question)):
        out.append((other, [documents[k] for k in read], [keys[k] for k in read], False))
    return out


def _aspects(documents: Sequence[Document], question: str, history: Sequence, by_window,
             expand: bool, embedder: Embedder | None, store: EmbeddingStore | None,
             passage_top: int = POLICY.passage_top, companion: bool = False) -> list[dict]:
    """Window scores of each part of a question that asks several things (BM25, with
    dense passage scores where the model reads the question, as for the whole question);
    none for a follow-up (its parts lean on the previous turn)."""
    if any(getattr(m, "role", "") == "user" for m in history):
        return []
    out = []
    all_keys = [doc_key(d, i) for i, d in enumerate(documents)]
    for part in aspects(question):
        queries = build_queries(part, (), documents, expand=expand)[:1]
        if not queries:
            continue
        scores = window_scores(by_window, queries)
        for model, docs, keys, _ in _passage_models(documents, all_keys, embedder, part,
                                                    companion):
            if model.reads_question(part):
                dense = model.scores(part, docs, keys, kind="windows", only_ready=True,
                                     store=store, queries=queries)
                scores = add_dense(scores, dense, PASSAGE_WEIGHT, passage_top)
        if scores:
            out.append(scores)
    return out
