"""Fill the backend's context window: system prompt, question, recent turns and an outline
always; then the sections most relevant to the question, whole, with page markers.

Layout, for KV-cache reuse between turns: [system(system prompt, outline, excerpts, the
sub-outline of the chapter asked about), *history, user(question)]; the outline depends
only on the documents and the window, and a follow-up's excerpts start with the previous
prompt's sections that are chosen again (prefix_messages() is that stable start).

pack() is a pure function over Documents, the conversation, the question and a search
function; it does no I/O, except that the default embedder (docchat/embeddings.py) loads
its bundled model and embeds a document's sections on first use when it is installed (and
reads/writes them in the store given). Its guarantee, checked on the final messages with
the backend's own counter: count_prompt_tokens(messages) + max_new_tokens <= context_window.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from itertools import islice, takewhile
from typing import Callable, Iterator, Protocol, Sequence

from docchat.backends import Message
from docchat.context import prompts
from docchat.context.embeddings import DEFAULT as DEFAULT_EMBEDDER
from docchat.context.embeddings import Embedder, EmbeddingStore
from docchat.context.outline import (
    STRUCTURE_PARTS,
    build_outline,
    entries_of,
    focus_outline,
    part_asked_about,
)
from docchat.context.passages import Counter, Passage, render_passages
from docchat.context.retrieval import (
    SearchFn,
    SectionIndex,
    add_dense,
    add_windows,
    asks_structure,
    block_scores,
    build_queries,
    content_terms,
    doc_key,
    fused_scores,
    index_terms,
    refers_back,
    window_scores,
)
from docchat.errors import ContextTooLong
from ingest.document import Document
from ingest.tokens import tokenizer_name

logger = logging.getLogger(__name__)

# Share of the evidence budget the outline may take, and a floor per document when
# several documents share the budget.
OUTLINE_SHARE = 0.15
DOC_FLOOR = 0.5  # half the budget is split evenly, half by relevance
NEIGHBOUR = 0.4  # a hit's neighbours rank at this share of its score (tuning half: 0.4 > 0.6)
HIT, NEAR, START = "hit", "neighbour", "start"
MIN_PARTIAL = 48  # tokens: below this, a partial section is not worth its header
MIN_ROOM = 8  # tokens: stop filling below this
MAX_MISSES = 16  # filling from the start stops after this many sections that do not fit
REUSE_SHARE = 0.5  # of the evidence budget: the previous prompt's first sections kept as is
REUSE_MIN = 5000  # tokens of evidence budget below which nothing is kept for reuse
SPAN_SHARE = 0.5  # of the evidence budget: the most a part packed whole may take
FOCUS_SHARE = 0.2  # of the evidence budget: the sub-outline of the chapter asked about
BREADTH_TOP = 6  # windows taken first, at most
BREADTH_SHARE = 0.5  # of the evidence budget: the most the first windows may take
WINDOW_FLOOR = 0.5  # of the best window's score: weaker windows are not taken first
KEPT_BLOCK = 1e9  # block score that keeps a chosen window's blocks when a section grows
# A follow-up keeps the previous prompt's excerpts exactly as they were (same sections, same
# blocks, same order; the backend's cache holds them) while they are still relevant: one of
# them among the new question's REUSE_TOP best fused hits, or the question elliptical (at
# most ELLIPTICAL_TERMS content words: "and its elements?"). They take at most KEEP_SHARE of
# the evidence budget; new passages follow them.
REUSE_TOP = 8
ELLIPTICAL_TERMS = 2
KEEP_SHARE = 0.85


class PromptCounter(Protocol):
    context_window: int

    def count_tokens(self, text: str) -> int: ...

    def count_prompt_tokens(self, messages: list[Message]) -> int: ...


@dataclass(frozen=True)
class Dropped:
    """What did not fit."""
    sections: int = 0  # sections left out entirely
    partial_sections: int = 0  # sections of which only some blocks went in
    turns_shortened: int = 0  # older messages cut to their head/tail
    turns_dropped: int = 0  # older messages left out
    outline_entries: int = 0  # headings left out of the outline


@dataclass(frozen=True)
class PackedContext:
    messages: list[Message]
    text: str  # the document context block: outline and excerpts
    tokens: int  # prompt tokens of messages by the backend's counter
    budget: int  # context window - max_new_tokens - the chat format's overhead
    tokenizer: str
    pages: list[tuple[object, int]]  # (doc id or name, physical page) included
    sections: list[tuple[object, int]]  # (doc id or name, section index) included
    whole: bool  # every document went in whole
    dropped: Dropped = field(default_factory=Dropped)
    context_window: int = 0
    max_new_tokens: int = 0
    language: str = "en"
    # (doc id or name, section index, kept block indexes or None for whole), in prompt order:
    # what a follow-up passes back as previous_passages.
    passages: list[tuple[object, int, tuple[int, ...] | None]] = field(default_factory=list)
    kept: int = 0  # passages kept as they were from previous_passages (the reused prefix)


@dataclass(frozen=True)
class History:
    """The conversation split into the recent exchanges (kept whole) and older messages."""
    recent: list[Message]
    older: list[Message]

    @staticmethod
    def shortened(messages: Sequence[Message], counter: Counter,
                  cap: int | None = None) -> list[Message]:
        """Older messages cut short (user: its end; assistant: head and tail); then the
        oldest dropped until they fit cap tokens."""
        out = [Message(m.role, _shorten(m.content, m.role, counter)) for m in messages]
        if cap is not None:
            while out and counter.messages(out) > cap:
                out.pop(0)
        return out


def split_history(history: Sequence, turns: int) -> History:
    """Split messages (anything with role and content) at the start of the last turns
    exchanges; an exchange opens with a user message."""
    msgs = [Message(m.role, m.content) for m in history
            if getattr(m, "role", None) in ("user", "assistant") and m.content]
    starts = [i for i, m in enumerate(msgs) if m.role == "user"]
    if turns <= 0:
        return History([], msgs)
    cut = starts[-turns] if len(starts) >= turns else 0
    return History(msgs[cut:], msgs[:cut])


USER_KEEP, ASSISTANT_KEEP = 60, 40  # tokens kept of an older user / assistant message


def _shorten(text: str, role: str, counter: Counter) -> str:
    keep = USER_KEEP if role == "user" else ASSISTANT_KEEP
    if counter.text(text) <= (keep if role == "user" else 2 * keep) + 8:
        return text
    chars = max(16, len(text) * keep // max(1, counter.text(text)))
    while True:
        head, tail = text[:chars], text[-chars:]
        # Cut at a space where there is one near the cut, not inside a word.
        if " " in head[chars // 2:]:
            head = head[: head.rindex(" ")]
        if " " in tail[: chars // 2]:
            tail = tail[tail.index(" ") + 1:]
        if role == "user":
            out = "… " + tail.lstrip()
        else:
            out = head.rstrip() + " … " + tail.lstrip()
        if counter.text(out) <= (keep if role == "user" else 2 * keep) + 8 or chars <= 8:
            return out
        chars = chars * 3 // 4


# Token arithmetic of the evidence budget (EvidenceBudget): framing between the context's
# blocks and after each document header, the slack kept for passage joins, and the share
# the older (shortened) turns may take.
BLOCK_GAP = 4  # tokens: the blank lines around a block of the context (outline, focus)
HEADER_GAP = 2  # tokens: after a document's header line
SLACK_SHARE, SLACK_MIN = 0.01, 8  # kept free: per-passage counts miss a few tokens at joins
OLDER_SHARE = 0.1  # of the evidence budget: the most the older turns may take, shortened
PASSAGE_GAP = 2  # tokens: the blank line between two passages
SHRINK_MARGIN = 4  # tokens freed beyond an overflow, so one shrink step usually suffices


@dataclass
class EvidenceBudget:
    """The prompt tokens left for excerpts, and what took the rest: pack()'s arithmetic.

    limit: the prompt tokens allowed (window - max_new_tokens); fixed: the system prompt,
    the recent turns and the question. Each take() books tokens against a name (outline,
    headers, slack, older turns, focus); avail is what remains for the excerpts."""
    limit: int
    fixed: int
    spent: dict[str, int] = field(default_factory=dict)

    @property
    def avail(self) -> int:
        return self.limit - self.fixed - sum(self.spent.values())

    def take(self, what: str, tokens: int) -> None:
        self.spent[what] = self.spent.get(what, 0) + int(tokens)

    def share(self, fraction: float) -> int:
        """fraction of what is available now, in whole tokens."""
        return int(max(0, self.avail) * fraction)

    def keep_slack(self) -> None:
        """Keep SLACK_SHARE (at least SLACK_MIN tokens) free: the estimates miss a few
        tokens where passages join, and this saves re-counting the whole prompt (a second
        of llama.cpp tokenizing a 32k prompt on a busy machine)."""
        self.take("slack", max(SLACK_MIN, self.avail // int(1 / SLACK_SHARE)))


def outline_budget(budget: int) -> int:
    """Tokens the outline may take for a prompt budget: OUTLINE_SHARE of it, rounded down
    to two significant bits (256, 384, 512, 768, ...), so that small changes of the window
    (the first-token budget follows a measured prefill rate) keep the same outline and the
    warm prefix stays valid."""
    raw = int(max(0, budget) * OUTLINE_SHARE)
    if raw < 64:
        return raw
    step = 1 << (raw.bit_length() - 2)
    return raw // step * step


def _budget(backend: PromptCounter, context_window: int | None,
            max_new_tokens: int) -> tuple[int, int, int]:
    """(window, prompt tokens allowed, evidence budget before the question and history)."""
    window = int(context_window or backend.context_window)
    limit = window - max_new_tokens
    overhead = backend.count_prompt_tokens([Message("system", ""), Message("user", "")])
    return window, limit, limit - overhead


def normalize_passages(previous: Sequence) -> list[tuple[object, int, tuple[int, ...] | None]]:
    """(doc key, section index, blocks or None) from PackedContext.passages or sections
    (whole), also after a JSON round trip (lists)."""
    out = []
    for item in previous or ():
        key, idx = item[0], int(item[1])
        key = tuple(key) if isinstance(key, list) else key
        blocks = item[2] if len(item) > 2 else None
        out.append((key, idx, None if blocks is None else tuple(int(b) for b in blocks)))
    return out


def prefix_tokens(documents: Sequence[Document], backend: PromptCounter,
                  previous_passages: Sequence, language: str = "en", *,
                  context_window: int | None = None, max_new_tokens: int = 512) -> int:
    """Estimated tokens of a prompt's system message up to the end of its excerpts when it
    kept previous_passages first: what the backend's KV cache holds of the previous prompt."""
    counter = Counter(backend, tokenizer_name(backend))
    base = backend.count_prompt_tokens(prefix_messages(
        documents, backend, language, context_window=context_window,
        max_new_tokens=max_new_tokens))
    passages = _resolve(documents, _names(documents), normalize_passages(previous_passages))
    if not passages:
        return base
    heads = {i for i, _, _ in passages}
    return (base + 2 * BLOCK_GAP + counter.text(prompts.context_block("", "-", language))
            + sum(counter.text(prompts.document_header(documents[i].name, language))
                  + HEADER_GAP for i in heads)
            + sum(p.cost(counter) for _, _, p in passages))


def _names(documents: Sequence[Document]) -> list[object]:
    return [doc_key(d, i) if d.id is not None else d.name for i, d in enumerate(documents)]


def _resolve(documents: Sequence[Document], names: Sequence[object], previous: Sequence
             ) -> list[tuple[int, int, Passage]]:
    """The previous passages that still exist, as (document, section position, passage)."""
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


def still_relevant(documents: Sequence[Document], fused: dict, previous: Sequence,
                   question: str) -> bool:
    """Whether a follow-up is still about the previous prompt's excerpts: one of their
    sections among the REUSE_TOP best fused hits of the question, the question elliptical
    (at most ELLIPTICAL_TERMS content words), or pointing back at it (refers_back: "... for
    it?", "And ...", "……呢？"). A topic change packs afresh."""
    if not previous:
        return False
    if len(content_terms(question)) <= ELLIPTICAL_TERMS or refers_back(question):
        return True
    keys = {doc_key(d, i): i for i, d in enumerate(documents)}
    top = sorted(fused.items(), key=lambda kv: -kv[1])[:REUSE_TOP]
    hits = {(keys.get(k), idx) for (k, idx), _ in top}
    return any((i, documents[i].sections[pos].index) in hits for i, pos, _ in previous)


def prefix_messages(documents: Sequence[Document], backend: PromptCounter,
                    language: str = "en", *, context_window: int | None = None,
                    max_new_tokens: int = 512) -> list[Message]:
    """[system(system prompt + outline)]: the start of what pack() builds for these
    documents with the same window and max_new_tokens (text prefix of its first message)."""
    _, _, budget = _budget(backend, context_window, max_new_tokens)
    counter = Counter(backend, tokenizer_name(backend))
    outline = build_outline(documents, counter, outline_budget(budget))
    return [Message("system", prompts.system_message(
        prompts.outline_block(outline.text, language), language))]


def pack(documents: Sequence[Document], question: str, backend: PromptCounter, *,
         history: Sequence = (), search: SearchFn | None = None, max_new_tokens: int = 512,
         history_turns: int = 3, context_window: int | None = None,
         rewrite: Callable[[str], str] | None = None, expand: bool = True,
         embedder: Embedder | None = DEFAULT_EMBEDDER,
         previous_sections: Sequence[tuple[object, int]] = (),
         store: EmbeddingStore | None = None, previous_passages: Sequence = (),
         reuse_allowance: int = 0, outline_window: int | None = None) -> PackedContext:
    """Pack documents, history and question into messages that fit the backend's window.

    Messages: [system(system prompt, outline, excerpts, outline of the part asked about),
    *history, user(question)]. previous_sections (the previous answer's
    PackedContext.sections) come first among the excerpts, in their previous order, where
    they are chosen again, so a follow-up's prompt starts with the previous prompt.
    embedder adds dense (embedding) scores for the sections its model reads when it is
    installed (None, or no model: BM25 alone); store keeps its section vectors.

    previous_passages (the previous answer's PackedContext.passages) are kept exactly as
    they were, first, while still_relevant(); the prompt then starts with the previous
    prompt's system message up to the end of its excerpts. reuse_allowance: tokens of the
    window granted only for keeping them (taken off again on a topic change).
    outline_window: the window whose outline to use (the first question's, so a follow-up
    given a larger window keeps the same outline)."""
    window, limit, budget = _budget(backend, context_window, max_new_tokens)
    outline_cap = outline_budget(
        _budget(backend, outline_window, max_new_tokens)[2] if outline_window else budget)
    prev = normalize_passages(previous_passages)
    kept_first: list[tuple[int, int]] = []
    lang = prompts.question_language(question)
    tok = tokenizer_name(backend)
    counter = Counter(backend, tok)
    hist = split_history(history, history_turns)
    names = _names(documents)
    # A follow-up keeps the previous excerpts while still relevant; on a topic change it is
    # packed afresh within the first question's budget. Decided first, so that the turns
    # kept are sized for the budget that applies.
    rel: Relevance | None = None
    resolved = _resolve(documents, names, prev) if prev else []
    keeps_previous = False
    if prev:
        rel = relevance(documents, question, history, search, rewrite=rewrite,
                        expand=expand, embedder=embedder, store=store)
        keeps_previous = bool(resolved) and still_relevant(documents, rel.sections, resolved,
                                                           question)
        if not keeps_previous:
            limit -= reuse_allowance
        else:
            # The kept prefix ends before an excerpt whose left-out blocks hold the
            # follow-up's best windows (that section is packed anew); the allowance was
            # granted for reusing what is cut off, so that part of it comes off too: the
            # follow-up still reads about as many new tokens as it was given.
            grow = _to_grow(resolved, _window_positions(documents, rel.own_windows))
            cut = next((k for k, (i, pos, _) in enumerate(resolved) if (i, pos) in grow),
                       len(resolved))
            limit -= min(reuse_allowance, sum(p.cost(counter) for _, _, p in resolved[cut:]))
            resolved = resolved[:cut]

    def messages_for(turns: list[Message], text_outline: str, excerpts: str,
                     focus: str = "") -> list[Message]:
        context = prompts.context_block(text_outline, excerpts, lang, focus)
        return [Message("system", prompts.system_message(context, lang)), *turns,
                Message("user", question)]

    recent = hist.recent
    fixed = backend.count_prompt_tokens(messages_for(recent, "", ""))
    if fixed > limit:
        # Even the recent turns do not fit whole: shorten them as older turns are, then
        # drop the oldest of them; the question is answered without them if need be.
        recent = hist.shortened(hist.recent, counter)
        fixed = backend.count_prompt_tokens(messages_for(recent, "", ""))
        while fixed > limit and recent:
            recent = recent[2:] if recent[0].role == "user" and len(recent) > 1 else recent[1:]
            fixed = backend.count_prompt_tokens(messages_for(recent, "", ""))
    if fixed > limit:
        raise ContextTooLong(
            f"The question alone needs {fixed} of the {limit} prompt tokens this backend "
            f"allows; shorten it or choose a backend with a larger context window.")
    room = EvidenceBudget(limit, fixed)

    # The outline is always kept: whole if it fits, else the top levels. It depends only on
    # the documents and the window, so it is the same for every question (the warm prefix).
    outline = build_outline(documents, counter, min(outline_cap, room.avail // 2))
    room.take("outline", outline.tokens + BLOCK_GAP)
    # The excerpts' heading and each document's header line.
    room.take("headers", counter.text(prompts.context_block("", "-", lang)) + sum(
        counter.text(prompts.document_header(d.name, lang)) + HEADER_GAP for d in documents))
    room.keep_slack()
    # Whole fit: every document, in order, and the older turns whole.
    whole_cost = _whole_cost(documents, counter, room.avail)
    older_whole = counter.messages(hist.older)
    older, turns_shortened, turns_dropped = hist.older, 0, 0
    qterms = content_terms(question)
    focus = ""
    picked: list[list[Passage]]
    if whole_cost is not None and whole_cost + older_whole <= room.avail:
        picked = [[Passage.whole(d, s, s.index) for s in d.sections] for d in documents]
    else:
        older = hist.shortened(hist.older, counter, cap=room.share(OLDER_SHARE))
        turns_shortened = sum(1 for a, b in zip(hist.older, older) if a.content != b.content)
        turns_dropped = len(hist.older) - len(older)
        room.take("older turns", counter.messages(older))
        if whole_cost is not None and whole_cost <= room.avail:
            picked = [[Passage.whole(d, s, s.index) for s in d.sections] for d in documents]
        else:
            rel = rel or relevance(documents, question, history, search, rewrite=rewrite,
                                   expand=expand, embedder=embedder, store=store)
            fused, qterms = rel.sections, rel.terms
            positions = _positions(documents, fused)
            if outline.dropped:
                # The part of the documents the question is about, with its whole
                # sub-outline (the full outline did not fit).
                focus = focus_outline(documents, counter, room.share(FOCUS_SHARE), positions,
                                      shown=outline, named=rel.named,
                                      parts=STRUCTURE_PARTS if rel.structure else 1)
                if focus:
                    room.take("focus", counter.text(prompts.context_block("", "", lang, focus))
                              + BLOCK_GAP)
            windows = _window_positions(documents, rel.windows)
            if keeps_previous:
                keep, used_keep = [], 0
                for i, pos, p in resolved:  # cut before an excerpt to grow (see above)
                    c = p.cost(counter)
                    if used_keep + c > room.avail * KEEP_SHARE:
                        break
                    keep.append((i, pos, p.blocks))
                    kept_first.append((i, p.section.index))
                    used_keep += c
            elif prev:
                keep = []  # a topic change: packed afresh (the allowance is off already)
            else:
                keep = _reused(documents, names, previous_sections, counter,
                               room.share(REUSE_SHARE) if room.avail >= REUSE_MIN else 0)
            picked = _select(documents, fused, qterms, counter, room.avail, positions, keep,
                             windows)
    turns = [*older, *recent]
    limit = room.limit
    order = _order(documents, names, picked, previous_sections, kept_first)

    # Render, count the final prompt once, and shrink until it fits.
    while True:
        excerpts = render_passages(documents, _ordered(order, picked), lang)
        msgs = messages_for(turns, outline.text, excerpts, focus)
        tokens = backend.count_prompt_tokens(msgs)
        if tokens <= limit:
            break
        if not _shrink(picked, counter, tokens - limit, qterms):
            if focus:
                focus = ""
                continue
            outline = outline.smaller()
            if outline is None:
                raise ContextTooLong(
                    f"The prompt needs {tokens} of the {limit} tokens this backend allows; "
                    "ask a shorter question or lower max_new_tokens.")

    final = _ordered(order, picked)
    chosen = [(names[i], p.section.index) for i, p in final]
    passages = [(names[i], p.section.index, p.blocks) for i, p in final]
    n_kept = 0
    for (i, idx), (j, p) in zip(kept_first, final):
        if (i, idx) != (j, p.section.index):
            break
        n_kept += 1
    pages = sorted({(names[i], pg) for i, ps in enumerate(picked) for p in ps for pg in p.pages},
                   key=lambda x: (names.index(x[0]), x[1]))
    total = sum(len(d.sections) for d in documents)
    partial = sum(1 for ps in picked for p in ps if not p.complete)
    whole = len(chosen) == total and partial == 0
    dropped = Dropped(sections=total - len(chosen), partial_sections=partial,
                      turns_shortened=turns_shortened, turns_dropped=turns_dropped,
                      outline_entries=outline.dropped)
    text = prompts.context_block(outline.text, excerpts, lang, focus)
    logger.info("packed %d/%d sections, %d tokens of %d (%s)", len(chosen), total, tokens,
                limit, tok)
    return PackedContext(messages=msgs, text=text, tokens=tokens, budget=budget, tokenizer=tok,
                         pages=pages, sections=chosen, whole=whole, dropped=dropped,
                         context_window=window, max_new_tokens=max_new_tokens, language=lang,
                         passages=passages, kept=n_kept)


@dataclass(frozen=True)
class Relevance:
    """What the search found for a question (and its recent turns)."""
    sections: dict  # (doc key, section index) -> fused score: BM25, best window, dense
    windows: dict  # (doc key, section index, first block, last block) -> window score
    own_windows: dict  # the same for the question's own words only (not the history's)
    terms: list[str]  # the queries' content words (block scoring)
    named: set[str]  # the first query's words as the index stems them (titles it names)
    structure: bool = False  # the question asks which part is about something, or its parts


def relevance(documents: Sequence[Document], question: str, history: Sequence = (),
              search: SearchFn | None = None, *, rewrite: Callable[[str], str] | None = None,
              expand: bool = True, embedder: Embedder | None = None,
              store: EmbeddingStore | None = None) -> Relevance:
    """Search the documents for the question: queries from it and the recent user turns
    (translated where a document's language differs), fused section scores, window scores
    (search.windows where the search has them, else the in-memory index) joined as each
    section's best window, and dense scores where the embedder is enabled."""
    queries = build_queries(question, history, documents, rewrite=rewrite, expand=expand)
    searcher = search or SectionIndex(documents)
    fused = fused_scores(searcher, queries)
    by_window = getattr(searcher, "windows", None) or SectionIndex(documents).windows
    hits = [by_window(q.text) for q in queries]  # each query searched once
    windows = window_scores(by_window, queries, hits)
    own = window_scores(by_window, queries[:1], hits[:1]) if len(queries) > 1 else windows
    fused = add_windows(fused, windows)
    if embedder is not None and embedder.enabled:
        keys = [doc_key(d, i) for i, d in enumerate(documents)]
        fused = add_dense(fused, embedder.scores(question, documents, keys, store=store,
                                                 queries=queries))
    named = set(index_terms(queries[0].text)) if queries else set()
    return Relevance(fused, windows, own, content_terms(" ".join(q.text for q in queries)),
                     named, asks_structure(question))


def _order(documents: Sequence[Document], names: Sequence[object],
           picked: list[list[Passage]], previous: Sequence[tuple[object, int]],
           first: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """The excerpts' order as (document position, section index): the previous prompt's
    sections that are chosen again whole, in their previous order; then the other whole
    sections in their order of choice, the best first (a follow-up keeps a start of this
    order as its reused prefix, so what is cut off when that prefix does not fit is what
    mattered least; in document order, a follow-up at 8k lost the section both questions
    were about); then the partial ones (their blocks follow the question, so they would
    end the shared prefix wherever they stood)."""
    whole = {(i, p.section.index) for i, ps in enumerate(picked) for p in ps if p.complete}
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
    kept = set(out)
    rank = {(i, p.section.index): p.rank for i, ps in enumerate(picked) for p in ps}
    first_rank = {}  # a document's excerpts stay together (one header), the best one first
    for (i, _), r in rank.items():
        first_rank[i] = min(r, first_rank.get(i, r))
    chosen = sorted((c for c in whole if c not in kept),
                    key=lambda c: (first_rank[c[0]], c[0], rank[c], c))
    return out + chosen + [c for c in parts if c not in kept]


def _ordered(order: list[tuple[int, int]], picked: list[list[Passage]]
             ) -> list[tuple[int, Passage]]:
    """The chosen passages in the excerpts' order (those shrunk away are left out)."""
    by_key = {(i, p.section.index): p for i, ps in enumerate(picked) for p in ps}
    return [(i, by_key[(i, idx)]) for i, idx in order if (i, idx) in by_key]


def _positions(documents: Sequence[Document], scores: dict) -> list[dict[int, float]]:
    """Scores keyed per document by section position."""
    out = []
    for i, d in enumerate(documents):
        key = doc_key(d, i)
        pos = {s.index: k for k, s in enumerate(d.sections)}
        out.append({pos[idx]: sc for (dk, idx), sc in scores.items()
                    if dk == key and idx in pos})
    return out


def _to_grow(resolved: Sequence[tuple[int, int, Passage]],
             windows: Sequence[tuple[int, int, int, int, float]]) -> set[tuple[int, int]]:
    """The previous excerpts (document, section position) that a follow-up's best windows
    for its own words (the history's would find the previous topic again) fall in, away
    from every block they kept (a window that holds a kept block is covered by it)."""
    partial = {(i, pos): set(p.blocks) for i, pos, p in resolved if not p.complete}
    out = set()
    for di, pos, first, last, _ in islice(_strong_windows(windows), BREADTH_TOP):
        kept = partial.get((di, pos))
        if kept is not None and not kept & set(range(first, last + 1)):
            out.add((di, pos))
    return out


def _strong_windows(windows: Sequence[tuple[int, int, int, int, float]]
                    ) -> Iterator[tuple[int, int, int, int, float]]:
    """The best windows (best first) scoring at least WINDOW_FLOOR of the best one."""
    best = windows[0][4] if windows else 0.0
    return takewhile(lambda w: w[4] >= WINDOW_FLOOR * best, windows)


def _window_positions(documents: Sequence[Document], windows: dict
                      ) -> list[tuple[int, int, int, int, float]]:
    """Window scores as (document, section position, first, last, score), best first."""
    where = {doc_key(d, i): i for i, d in enumerate(documents)}
    pos = [{s.index: k for k, s in enumerate(d.sections)} for d in documents]
    out = []
    for (key, idx, first, last), sc in windows.items():
        i = where.get(key)
        if i is not None and idx in pos[i]:
            out.append((i, pos[i][idx], first, last, sc))
    return sorted(out, key=lambda w: (-w[4], w[0], w[1], w[2]))


def _whole_cost(documents: Sequence[Document], counter: Counter, avail: int) -> int | None:
    """Tokens of every document rendered whole, or None when that clearly cannot fit."""
    chars = sum(_chars(d) for d in documents)
    # No tokenizer averages more than ~8 characters per token on real text.
    if chars / 8 > avail:
        return None
    total = 0
    for d in documents:
        for s in d.sections:
            total += Passage.whole(d, s).cost(counter)
            if total > avail:
                return None
    return total


_CHARS: dict[int, tuple[Document, int]] = {}


def _chars(doc: Document) -> int:
    """Characters of a document's section text (cached: 60 ms on a 1,158-page manual)."""
    hit = _CHARS.get(id(doc))
    if hit is None or hit[0] is not doc:
        if len(_CHARS) >= 32:
            _CHARS.pop(next(iter(_CHARS)))
        hit = _CHARS[id(doc)] = (doc, sum(len(b.text) for s in doc.sections for b in s.blocks))
    return hit[1]


def _reused(documents: Sequence[Document], names: Sequence[object],
            previous: Sequence[tuple[object, int]], counter: Counter, cap: int
            ) -> list[tuple[int, int]]:
    """The longest start of the previous prompt's sections (document, position) that fits
    in cap tokens: kept whole and first, so the backend reuses what it read for them (a
    follow-up is mostly about the same part). On the tuning half's follow-ups it cost one
    question of ten at a 2k and a 4k budget and gained one at 8k and two at 32k: hence
    only from REUSE_MIN tokens of evidence budget up."""
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


def _select(documents: Sequence[Document], scores: dict, qterms: list[str], counter: Counter,
            avail: int, positions: list[dict[int, float]] | None = None,
            keep: Sequence[tuple] = (),
            windows: Sequence[tuple[int, int, int, int, float]] = ()) -> list[list[Passage]]:
    """Choose passages per document, in this order (see _Selection): the kept ones (the
    previous prompt's), the part asked about whole, the best windows (passage hits), then
    hits and their neighbours by score (a window's section grows to whole where it fits),
    then the start.

    windows: (document, section position, first block, last block, score), best first."""
    sel = _Selection(documents, positions if positions is not None
                     else _positions(documents, scores), qterms, counter, avail)
    sel.keep(keep)
    sel.take_part()
    sel.take_windows(windows)
    for i in range(len(documents)):
        sel.fill(i, sel.shares[i] - sel.breadth[i])
    for i in sorted(range(len(documents)), key=lambda k: -sel.relevance[k]):
        sel.fill(i, avail - sel.used)
    return [[c[p] for p in sorted(c)] for c in sel.chosen]


class _Selection:
    """The passages being chosen within avail tokens: per document, section position ->
    Passage, with the tokens used and the order of choice (rank: higher goes first when
    the prompt must shrink)."""

    def __init__(self, documents: Sequence[Document], positions: list[dict[int, float]],
                 qterms: list[str], counter: Counter, avail: int) -> None:
        self.documents, self.positions = documents, positions
        self.qterms, self.counter, self.avail = qterms, counter, avail
        self.chosen: list[dict[int, Passage]] = [{} for _ in documents]
        self.used, self.rank = 0.0, 0
        self.frozen: set[tuple[int, int]] = set()  # kept as they were: never grown
        self.queues = [_queue(d, hits) for d, hits in zip(documents, positions)]
        # A document's relevance: its three best section scores. Half the budget is split
        # evenly (DOC_FLOOR), half by relevance.
        self.relevance = [sum(sorted(hits.values(), reverse=True)[:3]) for hits in positions]
        n, total = len(documents), sum(self.relevance)
        self.shares = [avail * (DOC_FLOOR / n + (1 - DOC_FLOOR) * r / total) if total
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
        kept = set(current.blocks) if current is not None else set()
        scores = block_scores(section.blocks, self.qterms)
        scores = [KEPT_BLOCK if b in kept else sc if not blocks or b in blocks else -1.0
                  for b, sc in enumerate(scores)]
        had = current.cost(self.counter) if current is not None else 0
        passage = Passage.partial(d, section, scores, int(room + had), self.counter, rank)
        if passage is None or len(passage.blocks) <= len(kept):
            return None
        return passage

    def keep(self, keep: Sequence[tuple]) -> None:
        """The previous prompt's passages, as they were."""
        for di, p, *blocks in keep:
            self.frozen.add((di, p))
            d = self.documents[di]
            self._put(di, p, Passage(d, d.sections[p], blocks[0] if blocks else None,
                                     self._next_rank()))

    def take_part(self) -> None:
        """A question about one part (a section with its subsections): that part whole,
        start, middle and end, where it takes at most SPAN_SHARE of the budget."""
        part = part_asked_about(self.documents, self.positions)
        if part is None:
            return
        di, ei = part
        d = self.documents[di]
        e = entries_of(d)[ei]
        span = [Passage.whole(d, d.sections[p], 0) for p in range(e.start, e.end)]
        if e.end - e.start <= 1 or sum(x.cost(self.counter) for x in span) > (
                SPAN_SHARE * self.avail):
            return
        for p, x in zip(range(e.start, e.end), span):
            if p not in self.chosen[di]:  # kept from the previous prompt as it was
                self._put(di, p, Passage(x.doc, x.section, None, self._next_rank()))

    def take_windows(self, windows: Sequence[tuple[int, int, int, int, float]]) -> None:
        """Precision first: the best windows (the paragraphs that match the question best,
        wherever their sections rank), up to BREADTH_TOP of them, at least WINDOW_FLOOR of
        the best one's score, in BREADTH_SHARE of each document's share; a window too long
        for what is left keeps its best blocks."""
        taken = 0
        for di, p, first, last, _ in _strong_windows(windows):
            if taken >= BREADTH_TOP:
                break
            d = self.documents[di]
            section = d.sections[p]
            current = self.chosen[di].get(p)
            if (current is not None and current.complete) or (di, p) in self.frozen:
                continue
            blocks = set(current.blocks if current else ()) | set(range(first, last + 1))
            rank = self._next_rank()
            passage = Passage(d, section, None if len(blocks) == len(section.blocks)
                              else tuple(sorted(blocks)), current.rank if current else rank)
            had = current.cost(self.counter) if current else 0
            room = min(BREADTH_SHARE * self.shares[di] - self.breadth[di],
                       self.avail - self.used)
            if passage.cost(self.counter) - had > room:
                passage = self._grown(di, p, blocks, room, passage.rank)
                if passage is None:
                    continue
            self.breadth[di] += self._put(di, p, passage)
            taken += 1

    def fill(self, i: int, cap: float) -> None:
        """Document i's queue within cap tokens: hits whole (or their best blocks when they
        do not fit, a chosen window kept), neighbours whole, then sections from the start
        (giving up after MAX_MISSES that do not fit)."""
        spent, misses = 0.0, 0
        d = self.documents[i]
        for kind, p in self.queues[i]:
            current = self.chosen[i].get(p)
            if current is not None and (current.complete or kind == START
                                        or (i, p) in self.frozen):
                continue
            room = min(cap - spent, self.avail - self.used)
            if room <= MIN_ROOM or (kind == START and misses >= MAX_MISSES):
                break
            rank = self._next_rank()
            had = current.cost(self.counter) if current is not None else 0
            passage = Passage.whole(d, d.sections[p], current.rank if current else rank)
            if passage.cost(self.counter) - had > room:
                if kind == HIT and room + had >= MIN_PARTIAL:
                    passage = self._grown(i, p, set(), room, passage.rank)
                    if passage is None:
                        continue
                else:
                    misses += kind == START
                    continue
            spent += self._put(i, p, passage)


def _queue(doc: Document, hits: dict[int, float]) -> list[tuple[str, int]]:
    """(kind, section position) in the order a document's sections are tried: hits and
    their neighbours by score (a neighbour ranks at NEIGHBOUR of its hit's score: a section
    is often continued by the next), then every section from the start."""
    prio = dict(hits)
    for p, sc in hits.items():
        for q in (p + 1, p - 1):
            if 0 <= q < len(doc.sections) and prio.get(q, 0.0) < NEIGHBOUR * sc:
                prio[q] = NEIGHBOUR * sc
    order = [(HIT if p in hits else NEAR, p) for p in sorted(prio, key=lambda p: (-prio[p], p))]
    return order + [(START, p) for p in range(len(doc.sections))]


def _shrink(picked: list[list[Passage]], counter: Counter, overflow: int,
            qterms: list[str]) -> bool:
    """Free overflow tokens from the passages chosen last: cut the last one down to its
    best blocks, or drop it; False when there is nothing left to drop."""
    need = overflow + SHRINK_MARGIN
    while need > 0:
        candidates = [(p.rank, i, k) for i, ps in enumerate(picked) for k, p in enumerate(ps)]
        if not candidates:
            return False
        _, i, k = max(candidates)
        p = picked[i][k]
        cost = p.cost(counter)
        smaller = None
        if cost - need >= MIN_PARTIAL and len(p.section.blocks) > 1:
            scores = block_scores(p.section.blocks, qterms)
            if p.blocks is not None:  # keep within the blocks already chosen
                scores = [sc if b in p.blocks else -1.0 for b, sc in enumerate(scores)]
            smaller = Passage.partial(p.doc, p.section, scores, cost - need, counter, p.rank)
        if smaller is not None and smaller.cost(counter) < cost:
            picked[i][k] = smaller
            need -= cost - smaller.cost(counter)
        else:
            picked[i].pop(k)
            need -= cost + PASSAGE_GAP
    return True
