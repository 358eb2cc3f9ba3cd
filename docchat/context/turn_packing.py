"""pack_turn(): one turn of an append-only conversation (docchat/context/conversation.py).

The prompt is [system(instructions + outline), the earlier turns exactly as sent with their
answers, user(new excerpts + question)]. Steps: compact (when the earlier turns and the
question leave less than policy.min_new_evidence tokens, drop the oldest turns' excerpts in
one step), choose (the passages for the question that are not in the window yet, within the
turn's share), render and shrink.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from docchat.backends import Message
from docchat.context import prompts, selection
from docchat.context.budget import EvidenceBudget, outline_budget
from docchat.context.carry import existing_passages, leans_back, still_relevant
from docchat.context.conversation import Ahead, Conversation, TurnPacked
from docchat.context.embeddings import DEFAULT as DEFAULT_EMBEDDER
from docchat.context.embeddings import Embedder, EmbeddingStore
from docchat.context.outline import STRUCTURE_PARTS, Outline, build_outline, focus_outline
from docchat.context.packing import (
    Dropped,
    PackedContext,
    PromptCounter,
    _Ask,
    _limits,
    _names,
)
from docchat.context.passages import Passage, render_passages
from docchat.context.policy import POLICY, PackingPolicy
from docchat.context.retrieval import SearchFn, content_terms, doc_key
from docchat.errors import ContextTooLong
from ingest.document import Document

logger = logging.getLogger(__name__)

# A turn that compacts fills at most this share of the prompt limit, so that the next turns
# append again (measured: in a 3,072-token window whose first question took 2,947, every
# follow-up compacted and read ~2,340 tokens again).
COMPACT_FILL = 0.75
# Tokens a question adds to a prompt beyond its text (chat template, headers): room left
# when a read-ahead is packed within the conversation's own tokens.
TEMPLATE_ROOM = 64
# The shorter forms of a turn (PackedContext.shorter), as shares of its new excerpts'
# tokens: a read cut at the first-token deadline keeps the most of them it can read.
SHORTER_SHARES = (0.85, 0.7, 0.55, 0.4, 0.25)


@dataclass
class _Window:
    """The earlier turns as this prompt sends them, and what compaction did."""
    prior: list[Message]  # system and the earlier turns with their answers
    compacted: int  # first turns sent without their excerpts
    reread: bool  # compacted now: the prompt differs from the cached one after the system
    present: dict[tuple[int, int], set[int] | None] = field(default_factory=dict)


def pack_turn(documents: Sequence[Document], question: str, backend: PromptCounter,
              conversation: Conversation = Conversation(), *,
              search: SearchFn | None = None, max_new_tokens: int = 512,
              context_window: int | None = None, new_tokens: int | None = None,
              rewrite: Callable[[str], str] | None = None, expand: bool = True,
              embedder: Embedder | None = DEFAULT_EMBEDDER,
              store: EmbeddingStore | None = None,
              policy: PackingPolicy = POLICY) -> PackedContext:
    """Pack one turn of the conversation within context_window (default: the backend's).

    The first turn builds the system message (instructions + outline, as prefix_messages()
    does for this window); later turns send the conversation's, byte for byte. new_tokens:
    the most tokens the new user message may take while the question is still about the
    passages in the window (a topic change may use the rest of context_window)."""
    window, limit, budget = _limits(backend, context_window, max_new_tokens)
    ask = _Ask(documents, question, backend, conversation.history(), search, rewrite, expand,
               embedder, store, policy, 3)
    cap = conversation.outline_budget or outline_budget(budget, policy)
    outline = build_outline(documents, ask.counter, cap)
    system = conversation.system or prompts.system_message(
        prompts.outline_block(outline.text, ask.lang), ask.lang)
    win = _compact(ask, conversation, system, limit)
    fixed = backend.count_prompt_tokens([*win.prior, Message("user", question)])
    if fixed > limit:
        raise ContextTooLong(
            f"The question alone needs {fixed} of the {limit} prompt tokens this backend "
            f"allows; shorten it or choose a backend with a larger context window.")
    room = EvidenceBudget(limit, fixed, policy=policy)
    if win.reread and int(COMPACT_FILL * limit) - fixed >= policy.min_new_evidence:
        # Compacted now: this turn may not fill the window again, or every later turn
        # would compact (and read the whole conversation again) too.
        room.take("after compaction", max(0, room.avail - (int(COMPACT_FILL * limit) - fixed)))
    # Later in a session, a question that does not lean on the earlier turns (elliptical or
    # pointing back) is searched as a first question is (its own words, passages and parts
    # by meaning): the earlier turns' words find the earlier topic again. It is still about
    # the window only if that search says so.
    standalone = bool(ask.history) and (not leans_back(question, policy) or (
        policy.standalone_terms and len(content_terms(question)) >= policy.standalone_terms))
    rel = (replace(ask, history=()) if standalone else ask).relevance(room.avail)
    here = existing_passages(documents, ask.names, conversation.present(win.compacted))
    # What the window is about: its passages, and those a read cut at the deadline left out.
    about = existing_passages(documents, ask.names, conversation.about(win.compacted))
    on_topic = bool(here) and still_relevant(documents, rel.sections, about, question, policy)
    lead = _lead(ask, conversation, win, on_topic, here)
    if conversation.ahead is not None:  # qa.turn_budget gave room for them besides the share
        cost = ask.counter.text(conversation.ahead.text) + policy.block_gap
        if room.avail - cost < policy.min_new_evidence:
            lead = []  # the window is too full for them and new excerpts
        room.take("read ahead" if lead else "read ahead, not used", cost)
    if new_tokens is not None and on_topic:
        asked = fixed - backend.count_prompt_tokens(win.prior)  # the question's own tokens
        room.take("follow-up share", max(0, room.avail - (new_tokens - asked)))
    room.take("headers", ask.counter.text(prompts.context_block("", "-", ask.lang)) + sum(
        ask.counter.text(prompts.document_header(d.name, ask.lang)) + policy.header_gap
        for d in documents))
    room.keep_slack()
    # A section may be in the window in parts, from several turns. One that holds none of
    # the question's best windows (its own words) is left as it is (None: not grown); one
    # whose unsent blocks hold them gets those blocks (selection.to_grow).
    own = selection.window_positions(documents, rel.own_windows, policy)
    grow = selection.to_grow(here, own, policy, rel.named)
    for i, pos, p in here:
        win.present[(i, pos)] = (None if (i, pos) not in grow
                                 else _union(win.present.get((i, pos), set()), p.blocks))
    for i, pos, p in lead:  # sent now: never chosen again (a section not grown stays so)
        win.present[(i, pos)] = _union(win.present.get((i, pos), set()), p.blocks)
    carried = _carried(ask, conversation, win, rel, room) if win.reread else []
    picked, focus = _choose(ask, rel, room, win, outline, carried)
    where = {doc_key(d, i): i for i, d in enumerate(documents)}
    scores = {(where[k], idx): sc for (k, idx), sc in rel.sections.items() if k in where}
    order = selection.order(documents, ask.names, picked, (), by_rank=True, scores=scores)
    msgs, tokens, user = _render(ask, win, picked, order, focus, limit, rel.terms, lead)
    limits = (window, limit, budget, max_new_tokens, cap)
    packed = _turn_packed(ask, conversation, win, msgs, tokens, user, picked, order, outline,
                          limits, lead)
    return replace(packed, shorter=tuple(
        _turn_packed(ask, conversation, win, m, t, u, p, order, outline, limits, lead)
        for m, t, u, p in _shorter(ask, win, picked, order, focus, (msgs, tokens), lead)))


def read_ahead(documents: Sequence[Document], backend: PromptCounter,
               conversation: Conversation, tokens: int, *, max_new_tokens: int = 512,
               **kwargs) -> Ahead | None:
    """What to read ahead for the next turn once an answer has ended: the excerpts the last
    question would have been given next (pack_turn of that question again, with tokens
    more for its new excerpts: the continuation of its sections, then its next best), as
    the start of a user message. None where there is nothing (no turns, no new excerpt) or
    where the window is too full to add them without compacting."""
    if not conversation.turns or tokens <= 0:
        return None
    question = conversation.turns[-1].question
    prior = backend.count_prompt_tokens([*conversation.messages(), Message("user", question)])
    packed = pack_turn(documents, question, backend, conversation,
                       context_window=prior + tokens + TEMPLATE_ROOM + max_new_tokens,
                       max_new_tokens=max_new_tokens, new_tokens=tokens, **kwargs)
    turn = packed.turn
    if turn.compacted != conversation.compacted or not turn.passages:
        return None
    found = existing_passages(documents, _names(documents), turn.passages)
    if len(found) != len(turn.passages):
        return None
    lang = prompts.question_language(question)
    text = _ahead_text(documents, found, lang)
    parts = [_ahead_text(documents, found[:k], lang) for k in range(1, len(found) + 1)]
    ends = tuple(len(t) for t in parts) if all(text.startswith(t) for t in parts) else ()
    return Ahead(turn.passages, text, ends)


def _ahead_text(documents: Sequence[Document], found: Sequence[tuple], lang: str) -> str:
    """The start of a user message holding these passages ((document, position, Passage),
    as _render puts them first)."""
    return prompts.context_block("", render_passages(documents, [(i, p) for i, _, p in found],
                                                     lang), lang)


def _union(had: set[int] | None, blocks: tuple[int, ...] | None) -> set[int] | None:
    """The blocks of a section shown once these are added (None: all of it)."""
    return None if blocks is None or had is None else had | set(blocks)


def _lead(ask: _Ask, conversation: Conversation, win: _Window, on_topic: bool,
          here: Sequence[tuple]) -> list[tuple[int, int, Passage]]:
    """The passages read ahead (conversation.ahead) that this turn starts with: all of
    them, where the question is still about the window's passages (here), nothing was
    compacted, none of them is in the window already and they render as they were read
    (in the question's language); else none."""
    ahead = conversation.ahead
    if ahead is None or not on_topic or win.reread or not conversation.turns:
        return []
    found = existing_passages(ask.documents, ask.names, ahead.passages)
    if len(found) != len(ahead.passages) or _ahead_text(ask.documents, found,
                                                        ask.lang) != ahead.text:
        return []
    shown: dict[tuple[int, int], set[int] | None] = {}
    for i, pos, p in here:
        shown[(i, pos)] = _union(shown.get((i, pos), set()), p.blocks)
    for i, pos, p in found:
        if (i, pos) not in shown:
            continue
        had = shown[(i, pos)]
        if had is None or p.blocks is None or set(p.blocks) & had:
            return []  # already in the window: the prompt would repeat it
    return found


def _compact(ask: _Ask, conversation: Conversation, system: str, limit: int) -> _Window:
    """The earlier turns within limit, leaving policy.min_new_evidence tokens for the new
    turn's excerpts: as sent, or else with the oldest turns' excerpts dropped in one step,
    down to policy.compact_to of the limit (so that the next turns append again)."""
    def prior(k: int) -> list[Message]:
        return [Message("system", system), *conversation.messages(k)[1:]]

    k = conversation.compacted
    need = ask.backend.count_prompt_tokens([*prior(k), Message("user", ask.question)])
    if need + ask.policy.min_new_evidence <= limit or not conversation.turns:
        return _Window(prior(k), k, False)
    target = int(ask.policy.compact_to * limit)
    while k < len(conversation.turns):
        k += 1
        need = ask.backend.count_prompt_tokens([*prior(k), Message("user", ask.question)])
        if need <= target:
            break
    logger.info("context compacted: the first %d turns without their excerpts", k)
    return _Window(prior(k), k, True)


def _carried(ask: _Ask, conversation: Conversation, win: _Window, rel, room: EvidenceBudget
             ) -> list[tuple]:
    """After compacting: the passages whose excerpts were just dropped, the latest turn's
    first, carried into the new turn while the question is still about them (within
    policy.carry_share), as a follow-up carried its previous passages before issue 21:
    the prompt is read again from the system message on anyway."""
    dropped = [r for t in reversed(conversation.turns[conversation.compacted:win.compacted])
               for r in t.passages]
    found = [x for r in dropped
             for x in existing_passages(ask.documents, ask.names, [r])]
    if not found or not still_relevant(ask.documents, rel.sections, found, ask.question,
                                       ask.policy):
        return []
    out, used, seen = [], 0, set()
    for i, pos, p in found:
        c = p.cost(ask.counter)
        if (i, pos) in seen or (i, pos) in win.present:
            continue
        if used + c > room.avail * ask.policy.carry_share:
            break
        out.append((i, pos, p.blocks))
        seen.add((i, pos))
        used += c
    return out


def _choose(ask: _Ask, rel, room: EvidenceBudget, win: _Window, outline: Outline,
            carried: list[tuple]) -> tuple[list[list[Passage]], str]:
    """The new passages (not in the window yet; after carried ones), and the sub-outline of
    the part asked about where the outline in the system message is not whole."""
    docs, counter, policy = ask.documents, ask.counter, ask.policy
    if not win.present and not carried:
        whole = selection.whole_cost(docs, counter, room.avail, policy)
        if whole is not None and whole <= room.avail:
            return [[Passage.whole(d, s, s.index) for s in d.sections] for d in docs], ""
    positions = selection.positions(docs, rel.sections, policy)
    asked = selection.asked(docs, rel, policy)
    focus = ""
    if outline.dropped:  # as packing.pack: more room for a structure question, the part
        share = policy.structure_focus_share if rel.structure else policy.focus_share
        focus = focus_outline(docs, counter, room.share(share), positions,  # asked by meaning
                              shown=outline, named=rel.named,
                              parts=STRUCTURE_PARTS if rel.structure else 1,
                              dense=asked["parts"],
                              more=policy.structure_more_parts if rel.structure else 0,
                              chapter=rel.chapter, chapter_ref=rel.chapter_ref)
        if focus and _sent_before(focus, win):
            focus = ""  # an earlier turn in the window shows the same part's outline
        if focus:
            room.take("focus", counter.text(prompts.context_block("", "", ask.lang, focus))
                      + policy.block_gap)
    windows = selection.window_positions(docs, rel.windows, policy)
    picked = selection.select(docs, positions, rel.terms, counter, max(0, room.avail),
                              carried, windows, policy, win.present, **asked)
    return picked, focus


def _sent_before(focus: str, win: _Window) -> bool:
    """The focus outline is in an earlier turn's user message that the window still holds
    as sent (a compacted turn sends only its question)."""
    return any(m.role == "user" and focus in m.content for m in win.prior[1:])


def _user(ask: _Ask, excerpts: str, focus: str, system: str) -> str:
    """The new user message: the new excerpts, the focus outline, then the question (with
    the language to answer in when the session's system message names another)."""
    context = prompts.context_block("", excerpts, ask.lang, focus)
    question = ask.question
    if not system.startswith(prompts.system_prompt(ask.lang)):
        question = f"{question}\n\n{prompts.answer_language(ask.lang)}"
    return prompts.user_message(question, context, ask.lang)


def _render(ask: _Ask, win: _Window, picked: list[list[Passage]], order: list, focus: str,
            limit: int, qterms: list[str], lead: Sequence[tuple] = ()
            ) -> tuple[list[Message], int, str]:
    """Render the new user message (the passages read ahead first, as they were read),
    count the prompt, and shrink the new passages (then drop the focus outline) until it
    fits."""
    first = [(i, p) for i, _, p in lead]
    while True:
        excerpts = render_passages(ask.documents, [*first, *selection.ordered(order, picked)],
                                   ask.lang)
        user = _user(ask, excerpts, focus, win.prior[0].content)
        msgs = [*win.prior, Message("user", user)]
        tokens = ask.backend.count_prompt_tokens(msgs)
        if tokens <= limit:
            return msgs, tokens, user
        if not selection.shrink(picked, ask.counter, tokens - limit, qterms, ask.policy):
            if not focus:
                raise ContextTooLong(
                    f"The prompt needs {tokens} of the {limit} tokens this backend allows; "
                    "ask a shorter question or lower max_new_tokens.")
            focus = ""


def _shorter(ask: _Ask, win: _Window, picked: list[list[Passage]], order: list, focus: str,
             whole: tuple[list[Message], int], lead: Sequence[tuple] = ()
             ) -> list[tuple[list[Message], int, str, list[list[Passage]]]]:
    """The turn with only its first new excerpts, about SHORTER_SHARES of theirs in
    tokens (at least one excerpt; distinct, longest first): (messages, tokens, user
    message, picked). A form's tokens are estimated from its share of the whole turn's
    characters (whole: its messages and prompt tokens): they matter only once a read is
    cut to the form (the backend tokenizes the forms then, and qa._cut_to counts the one
    read), and counting each in full took most of a 32k pack (584 against 206 ms,
    bench/turn_forms.py)."""
    ordered = selection.ordered(order, picked)
    costs = [p.cost(ask.counter) for _, p in ordered]
    total, out, seen = sum(costs), [], set()
    for share in SHORTER_SHARES:
        k, used = 0, 0
        while k < len(costs) and used + costs[k] <= share * total:
            used += costs[k]
            k += 1
        k = max(1, k)
        if k >= len(ordered) or k in seen:
            continue
        seen.add(k)
        kept = ordered[:k]
        excerpts = render_passages(ask.documents, [(i, p) for i, _, p in lead] + kept,
                                   ask.lang)
        user = _user(ask, excerpts, focus, win.prior[0].content)
        msgs = [*win.prior, Message("user", user)]
        part = [[p for i, p in kept if i == d] for d in range(len(picked))]
        out.append((msgs, _form_tokens(msgs, whole), user, part))
    return out


def _form_tokens(msgs: list[Message], whole: tuple[list[Message], int]) -> int:
    """A shorter form's prompt tokens, estimated by its share of the whole turn's
    characters (whole: its messages and prompt tokens)."""
    chars = sum(len(m.content) for m in whole[0]) or 1
    return max(1, round(whole[1] * sum(len(m.content) for m in msgs) / chars))


def _turn_packed(ask: _Ask, conversation: Conversation, win: _Window, msgs: list[Message],
                 tokens: int, user: str, picked: list[list[Passage]], order: list,
                 outline: Outline, limits: tuple, lead: Sequence[tuple] = ()
                 ) -> PackedContext:
    """The PackedContext of the turn: what the window holds (earlier turns' passages and
    the new ones: those read ahead first) and what this turn sent (PackedContext.turn)."""
    window, limit, budget, max_new, cap = limits
    docs, names = ask.documents, ask.names
    shown = [(i, p) for i, _, p in lead] + selection.ordered(order, picked)
    new = [(names[i], p.section.index, p.blocks) for i, p in shown]
    earlier = conversation.present(win.compacted)
    passages = [*earlier, *new]
    where = {n: i for i, n in enumerate(names)}
    pages = {(names[i], pg) for i, p in shown for pg in p.pages}
    for i, _, p in existing_passages(docs, names, earlier):
        pages.update((names[i], pg) for pg in p.pages)
    sections = list(dict.fromkeys((k, idx) for k, idx, _ in passages))
    total = sum(len(d.sections) for d in docs)
    partial = sum(1 for _, _, b in passages if b is not None)
    reread = tokens - ask.backend.count_prompt_tokens(win.prior[:1]) if win.reread else 0
    sent = [t.sent for t in conversation.turns[win.compacted:]]
    text = "\n\n".join([prompts.outline_block(outline.text, ask.lang), *sent, user])
    turn = TurnPacked(ask.question, win.prior[0].content, user, tuple(new), win.compacted,
                      reread, cap)
    logger.info("packed turn %d: %d new passages, %d tokens of %d, %d compacted",
                len(conversation.turns) + 1, len(new), tokens, limit, win.compacted)
    return PackedContext(
        messages=msgs, text=text, tokens=tokens, budget=budget, tokenizer=ask.counter.name,
        pages=sorted(pages, key=lambda x: (where.get(x[0], 0), x[1])), sections=sections,
        whole=len(sections) == total and partial == 0,
        dropped=Dropped(sections=total - len(sections), partial_sections=partial,
                        outline_entries=outline.dropped),
        context_window=window, max_new_tokens=max_new, language=ask.lang,
        passages=passages, carried=len(earlier), turn=turn)
