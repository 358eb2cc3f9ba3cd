"""Fill the backend's context window: system prompt, question, recent turns and an outline
always; then the sections most relevant to the question, whole, with page markers.

Layout, for KV-cache reuse between turns: [system(system prompt, outline, excerpts, the
sub-outline of the chapter asked about), *history, user(question)]; the outline depends
only on the documents and the window, and a follow-up's excerpts start with the passages it
carries from the previous prompt (prefix_messages() is the stable start before them).

pack() runs in named steps: carry (which of the previous prompt's passages a follow-up
repeats), fit the turns (the recent turns and the question within the limit), choose (the
outline, then every document whole or the passages selection.select() picks), render and
shrink (count the final prompt; shrink until it fits). Its constants are a PackingPolicy
(docchat/context/policy.py).

Words: the *previous* passages or sections are what the last answer's PackedContext held
(given back by the caller); a passage is *carried* when this prompt repeats it exactly as
that prompt had it, so the backend's cache holds it.

pack() is a pure function over Documents, the conversation, the question and a search
function; it does no I/O, except that the default embedder (docchat/embeddings.py) loads
its bundled model and embeds a document's sections on first use when it is installed (and
reads/writes them in the store given). Its guarantee, checked on the final messages with
the backend's own counter: count_prompt_tokens(messages) + max_new_tokens <= context_window.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from docchat.backends import Message
from docchat.context import prompts, selection
from docchat.context.budget import (  # noqa: F401 (split_history, History: re-exported)
    EvidenceBudget,
    History,
    outline_budget,
    split_history,
)
from docchat.context.carry import (  # noqa: F401 (PreviousPassages: re-exported)
    Carry,
    PassageRef,
    PreviousPassages,
    carry,
    existing_passages,
    normalize_passages,
)
from docchat.context.conversation import TurnPacked
from docchat.context.embeddings import DEFAULT as DEFAULT_EMBEDDER
from docchat.context.embeddings import Embedder, EmbeddingStore
from docchat.context.outline import (  # noqa: F401 (entries_of: re-exported)
    STRUCTURE_PARTS,
    Outline,
    build_outline,
    entries_of,
    focus_outline,
)
from docchat.context.passages import Passage, TokenCounter, render_passages
from docchat.context.policy import POLICY, PackingPolicy
from docchat.context.relevance import Relevance, relevance
from docchat.context.retrieval import SearchFn, content_terms, doc_key
from docchat.errors import ContextTooLong
from ingest.document import Document
from ingest.tokens import tokenizer_name

logger = logging.getLogger(__name__)

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
    # (doc id or name, section index, block indexes shown or None for whole), in prompt
    # order: what a follow-up passes back as previous_passages.
    passages: list[PassageRef] = field(default_factory=list)
    carried: int = 0  # the first passages, repeated exactly from previous_passages
    # pack_turn() (an append-only conversation): what this turn sent (its system message,
    # user message, new passages, compaction); the app stores it with the turn.
    turn: TurnPacked | None = None
    # pack_turn(): the same turn with fewer of its new excerpts (the last ones dropped),
    # longest first: what the backend reads instead when the whole prompt would pass the
    # first-token deadline (GenerationRequest.shorter; stats.cut says which).
    shorter: tuple["PackedContext", ...] = ()


def _limits(backend: PromptCounter, context_window: int | None,
            max_new_tokens: int) -> tuple[int, int, int]:
    """(window, prompt tokens allowed, evidence budget before the question and history)."""
    window = int(context_window or backend.context_window)
    limit = window - max_new_tokens
    overhead = backend.count_prompt_tokens([Message("system", ""), Message("user", "")])
    return window, limit, limit - overhead


def prefix_tokens(documents: Sequence[Document], backend: PromptCounter,
                  passages: Sequence, language: str = "en", *,
                  context_window: int | None = None, max_new_tokens: int = 512,
                  policy: PackingPolicy = POLICY) -> int:
    """Estimated tokens of a prompt's system message up to the end of its excerpts when it
    carries passages first: what the backend's KV cache holds of the previous prompt."""
    counter = TokenCounter(backend, tokenizer_name(backend))
    base = backend.count_prompt_tokens(prefix_messages(
        documents, backend, language, context_window=context_window,
        max_new_tokens=max_new_tokens, policy=policy))
    found = existing_passages(documents, _names(documents), normalize_passages(passages))
    if not found:
        return base
    heads = {i for i, _, _ in found}
    return (base + 2 * policy.block_gap
            + counter.text(prompts.context_block("", "-", language))
            + sum(counter.text(prompts.document_header(documents[i].name, language))
                  + policy.header_gap for i in heads)
            + sum(p.cost(counter) for _, _, p in found))


def _names(documents: Sequence[Document]) -> list[object]:
    return [doc_key(d, i) if d.id is not None else d.name for i, d in enumerate(documents)]


def prefix_messages(documents: Sequence[Document], backend: PromptCounter,
                    language: str = "en", *, context_window: int | None = None,
                    max_new_tokens: int = 512, policy: PackingPolicy = POLICY
                    ) -> list[Message]:
    """[system(system prompt + outline)]: the start of what pack() builds for these
    documents with the same window and max_new_tokens (text prefix of its first message)."""
    return warm_prefix(documents, backend, language, context_window=context_window,
                       max_new_tokens=max_new_tokens, policy=policy)[0]


def warm_prefix(documents: Sequence[Document], backend: PromptCounter,
                language: str = "en", *, context_window: int | None = None,
                max_new_tokens: int = 512, policy: PackingPolicy = POLICY
                ) -> tuple[list[Message], int]:
    """(prefix_messages(), the outline budget it was built with): what a warm start sends,
    and what a first question packed in its conversation must keep
    (Conversation(system=..., outline_budget=...))."""
    _, _, budget = _limits(backend, context_window, max_new_tokens)
    counter = TokenCounter(backend, tokenizer_name(backend))
    cap = outline_budget(budget, policy)
    outline = build_outline(documents, counter, cap)
    return [Message("system", prompts.system_message(
        prompts.outline_block(outline.text, language), language))], cap


@dataclass
class _Ask:
    """One pack() call: what it was given, and what follows from it."""
    documents: Sequence[Document]
    question: str
    backend: PromptCounter
    history: Sequence
    search: SearchFn | None
    rewrite: Callable[[str], str] | None
    expand: bool
    embedder: Embedder | None
    store: EmbeddingStore | None
    policy: PackingPolicy
    history_turns: int
    lang: str = field(init=False)
    counter: TokenCounter = field(init=False)
    hist: History = field(init=False)
    names: list = field(init=False)

    def __post_init__(self) -> None:
        self.lang = prompts.question_language(self.question)
        self.counter = TokenCounter(self.backend, tokenizer_name(self.backend))
        self.hist = split_history(self.history, self.history_turns)
        self.names = _names(self.documents)

    def messages(self, turns: list[Message], outline: str = "", excerpts: str = "",
                 focus: str = "") -> list[Message]:
        context = prompts.context_block(outline, excerpts, self.lang, focus)
        return [Message("system", prompts.system_message(context, self.lang)), *turns,
                Message("user", self.question)]

    def relevance(self, budget: int = 0) -> Relevance:
        """The search for the question, for an evidence budget of `budget` tokens (from
        policy.companion_from up, the companion model's passage scores join)."""
        return relevance(self.documents, self.question, self.history, self.search,
                         rewrite=self.rewrite, expand=self.expand, embedder=self.embedder,
                         store=self.store, passage_top=self.policy.passage_top,
                         companion=budget >= self.policy.companion_from,
                         followup_dense_terms=self.policy.followup_dense_terms,
                         history_weight=self.policy.history_weight,
                         own_aspect=self.policy.own_aspect)


@dataclass
class _Choice:
    """What the choose step picked."""
    picked: list[list[Passage]]
    outline: Outline
    older: list[Message]
    qterms: list[str]
    turns_shortened: int = 0
    turns_dropped: int = 0
    focus: str = ""
    carried_first: list[tuple[int, int]] = field(default_factory=list)


def pack(documents: Sequence[Document], question: str, backend: PromptCounter, *,
         history: Sequence = (), search: SearchFn | None = None, max_new_tokens: int = 512,
         history_turns: int = 3, context_window: int | None = None,
         rewrite: Callable[[str], str] | None = None, expand: bool = True,
         embedder: Embedder | None = DEFAULT_EMBEDDER,
         previous_sections: Sequence[tuple[object, int]] = (),
         store: EmbeddingStore | None = None, previous_passages: Sequence = (),
         carry_allowance: int = 0, outline_window: int | None = None,
         policy: PackingPolicy = POLICY) -> PackedContext:
    """Pack documents, history and question into messages that fit the backend's window.

    Messages: [system(system prompt, outline, excerpts, outline of the part asked about),
    *history, user(question)]. previous_sections (the previous answer's
    PackedContext.sections) come first among the excerpts, in their previous order, where
    they are chosen again, so a follow-up's prompt starts with the previous prompt.
    embedder adds dense (embedding) scores for the sections its model reads when it is
    installed (None, or no model: BM25 alone); store keeps its section vectors.

    previous_passages (the previous answer's PackedContext.passages) are carried exactly as
    they were, first, while still_relevant(); the prompt then starts with the previous
    prompt's system message up to the end of its excerpts. carry_allowance: tokens of the
    window granted only for carrying them (taken off again on a topic change).
    outline_window: the window whose outline to use (the first question's, so a follow-up
    given a larger window keeps the same outline)."""
    window, limit, budget = _limits(backend, context_window, max_new_tokens)
    outline_cap = outline_budget(_limits(backend, outline_window, max_new_tokens)[2]
                                 if outline_window else budget, policy)
    ask = _Ask(documents, question, backend, history, search, rewrite, expand, embedder,
               store, policy, history_turns)
    carried = carry(documents, ask.names, question, ask.counter, previous_passages,
                    carry_allowance, ask.relevance, policy)
    limit -= carried.limit_off
    recent, fixed = _fit_turns(ask, limit)
    room = EvidenceBudget(limit, fixed, policy=policy)
    choice = _choose(ask, carried, room, outline_cap, previous_sections)
    turns = [*choice.older, *recent]
    order = selection.order(documents, ask.names, choice.picked, previous_sections,
                            choice.carried_first)
    msgs, tokens, excerpts = _render_and_shrink(ask, choice, turns, order, room.limit)
    return _packed(ask, choice, msgs, tokens, excerpts, order,
                   (window, room.limit, budget, max_new_tokens))


def _fit_turns(ask: _Ask, limit: int) -> tuple[list[Message], int]:
    """Step 2 (after carry()): the recent turns and the question within limit, and their
    tokens. When the recent turns do not fit whole, they are shortened as older turns are,
    then the oldest dropped; the question is answered without them if need be."""
    recent = ask.hist.recent
    fixed = ask.backend.count_prompt_tokens(ask.messages(recent))
    if fixed > limit:
        recent = ask.hist.shortened(ask.hist.recent, ask.counter, policy=ask.policy)
        fixed = ask.backend.count_prompt_tokens(ask.messages(recent))
        while fixed > limit and recent:
            recent = recent[2:] if recent[0].role == "user" and len(recent) > 1 else recent[1:]
            fixed = ask.backend.count_prompt_tokens(ask.messages(recent))
    if fixed > limit:
        raise ContextTooLong(
            f"The question alone needs {fixed} of the {limit} prompt tokens this backend "
            f"allows; shorten it or choose a backend with a larger context window.")
    return recent, fixed


def _choose(ask: _Ask, carry: Carry, room: EvidenceBudget, outline_cap: int,
            previous_sections: Sequence) -> _Choice:
    """Step 3: the outline (always kept: whole if it fits, else the top levels; it depends
    only on the documents and the window, so it is the same for every question: the warm
    prefix), the headers and the slack; then every document whole with the older turns
    whole, or whole with the older turns shortened, or the passages chosen for the
    question."""
    docs, counter, policy = ask.documents, ask.counter, ask.policy
    outline = build_outline(docs, counter, min(outline_cap, room.avail // 2))
    room.take("outline", outline.tokens + policy.block_gap)
    room.take("headers", counter.text(prompts.context_block("", "-", ask.lang)) + sum(
        counter.text(prompts.document_header(d.name, ask.lang)) + policy.header_gap
        for d in docs))
    room.keep_slack()
    whole = selection.whole_cost(docs, counter, room.avail, policy)
    everything = [[Passage.whole(d, s, s.index) for s in d.sections] for d in docs]
    older = ask.hist.older
    choice = _Choice([], outline, older, content_terms(ask.question))
    if whole is not None and whole + counter.messages(older) <= room.avail:
        choice.picked = everything
        return choice
    choice.older = ask.hist.shortened(older, counter, cap=room.share(policy.older_share),
                                      policy=policy)
    choice.turns_shortened = sum(1 for a, b in zip(older, choice.older)
                                 if a.content != b.content)
    choice.turns_dropped = len(older) - len(choice.older)
    room.take("older turns", counter.messages(choice.older))
    if whole is not None and whole <= room.avail:
        choice.picked = everything
    else:
        _choose_passages(ask, carry, room, choice, previous_sections)
    return choice


def _choose_passages(ask: _Ask, carry: Carry, room: EvidenceBudget, choice: _Choice,
                     previous_sections: Sequence) -> None:
    """The passages for the question (selection.select), after the focus outline (the part
    of the documents the question is about, with its whole sub-outline, when the full
    outline did not fit) and the passages carried first."""
    docs, counter, policy = ask.documents, ask.counter, ask.policy
    rel = carry.rel or ask.relevance(room.avail)
    choice.qterms = rel.terms
    positions = selection.positions(docs, rel.sections, policy)
    asked = selection.asked(docs, rel, policy)
    if choice.outline.dropped:
        share = policy.structure_focus_share if rel.structure else policy.focus_share
        choice.focus = focus_outline(docs, counter, room.share(share), positions,
                                     shown=choice.outline, named=rel.named,
                                     parts=STRUCTURE_PARTS if rel.structure else 1,
                                     dense=asked["parts"],
                                     more=policy.structure_more_parts if rel.structure else 0,
                                     chapter=rel.chapter, chapter_ref=rel.chapter_ref)
        if choice.focus:
            room.take("focus", counter.text(prompts.context_block("", "", ask.lang,
                                                                  choice.focus))
                      + policy.block_gap)
    windows = selection.window_positions(docs, rel.windows, policy)
    carried: list[tuple] = []
    if carry.carries:
        used = 0
        for i, pos, p in carry.passages:
            c = p.cost(counter)
            if used + c > room.avail * policy.carry_share:
                break
            carried.append((i, pos, p.blocks))
            choice.carried_first.append((i, p.section.index))
            used += c
    elif not carry.previous:  # (a topic change carries nothing: packed afresh)
        cap = (room.share(policy.carry_sections_share)
               if room.avail >= policy.carry_sections_from else 0)
        carried = selection.carried_sections(docs, ask.names, previous_sections, counter, cap)
    choice.picked = selection.select(docs, positions, rel.terms, counter, room.avail, carried,
                                     windows, policy, **asked)


def _render_and_shrink(ask: _Ask, choice: _Choice, turns: list[Message],
                       order: list[tuple[int, int]], limit: int
                       ) -> tuple[list[Message], int, str]:
    """Step 4: render, count the final prompt once, and shrink until it fits: the passages
    chosen last first, then the focus outline, then the outline by halves."""
    while True:
        excerpts = render_passages(ask.documents, selection.ordered(order, choice.picked),
                                   ask.lang)
        msgs = ask.messages(turns, choice.outline.text, excerpts, choice.focus)
        tokens = ask.backend.count_prompt_tokens(msgs)
        if tokens <= limit:
            return msgs, tokens, excerpts
        if not selection.shrink(choice.picked, ask.counter, tokens - limit, choice.qterms,
                                ask.policy):
            if choice.focus:
                choice.focus = ""
                continue
            smaller = choice.outline.smaller()
            if smaller is None:
                raise ContextTooLong(
                    f"The prompt needs {tokens} of the {limit} tokens this backend allows; "
                    "ask a shorter question or lower max_new_tokens.")
            choice.outline = smaller


def _packed(ask: _Ask, choice: _Choice, msgs: list[Message], tokens: int, excerpts: str,
            order: list[tuple[int, int]], limits: tuple[int, int, int, int]) -> PackedContext:
    """The PackedContext of the final prompt: what went in, what was dropped, and how many
    of its first passages were carried."""
    window, limit, budget, max_new = limits
    docs, names, picked = ask.documents, ask.names, choice.picked
    final = selection.ordered(order, picked)
    chosen = [(names[i], p.section.index) for i, p in final]
    passages = [(names[i], p.section.index, p.blocks) for i, p in final]
    carried = 0
    for (i, idx), (j, p) in zip(choice.carried_first, final):
        if (i, idx) != (j, p.section.index):
            break
        carried += 1
    pages = sorted({(names[i], pg) for i, ps in enumerate(picked) for p in ps for pg in p.pages},
                   key=lambda x: (names.index(x[0]), x[1]))
    total = sum(len(d.sections) for d in docs)
    partial = sum(1 for ps in picked for p in ps if not p.complete)
    dropped = Dropped(sections=total - len(chosen), partial_sections=partial,
                      turns_shortened=choice.turns_shortened,
                      turns_dropped=choice.turns_dropped,
                      outline_entries=choice.outline.dropped)
    text = prompts.context_block(choice.outline.text, excerpts, ask.lang, choice.focus)
    logger.info("packed %d/%d sections, %d tokens of %d (%s)", len(chosen), total, tokens,
                limit, ask.counter.name)
    return PackedContext(messages=msgs, text=text, tokens=tokens, budget=budget,
                         tokenizer=ask.counter.name, pages=pages, sections=chosen,
                         whole=len(chosen) == total and partial == 0, dropped=dropped,
                         context_window=window, max_new_tokens=max_new, language=ask.lang,
                         passages=passages, carried=carried)


