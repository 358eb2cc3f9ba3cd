"""ask(): pack the documents for the question, stream the backend's answer through the pacer.

Before anything is generated, ask() chooses the prompt budget (the first-token budget: what
the backend can read in ``ttft_target`` seconds at its measured prefill rate, at most the
window), packs, and finds the evidence (the packed sections' best sentences), so a caller can
show the passages while the model is still reading.
"""
from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass, field, fields, replace
from typing import Callable, Iterator, Sequence

from docchat.answer.pacing import Pacer
from docchat.answer.presets import Preset, get_preset
from docchat.backends import Backend, Cancel, GenerationRequest, Message
from docchat.backends.repetition import cut_text, loop_at
from docchat.context.conversation import Conversation
from docchat.context.embeddings import DEFAULT as DEFAULT_EMBEDDER
from docchat.context.evidence import Evidence, find_evidence, to_dicts
from docchat.context.packing import (
    PackedContext,
    PreviousPassages,
    pack,
    prefix_tokens,
    split_history,
)
from docchat.context.policy import POLICY
from docchat.context.prompts import question_language
from docchat.context.turn_packing import pack_turn
from docchat.errors import ContextTooLong
from ingest.document import Document

logger = logging.getLogger(__name__)

# A budget under this many prompt tokens leaves too little room for evidence to be worth
# answering from; a backend slower than MIN_PROMPT_BUDGET / target tokens/s gets this floor.
MIN_PROMPT_BUDGET = 512
# A follow-up that keeps the previous prompt's excerpts reads only what is new: its budget is
# the reused prefix (system prompt, outline and the kept excerpts, in the backend's cache)
# plus FOLLOWUP_NEW_SHARE of a first question's budget (about a quarter of its first-token
# time), never less than the history and question need plus FOLLOWUP_MIN_EVIDENCE tokens.
FOLLOWUP_NEW_SHARE = 0.25
# What the share is of: "tokens" (of the first question's budget) or "time" (of its reading
# time: the tokens that take that share, read after the cached conversation, where each costs
# more the longer the conversation: RateMeter.tokens_for; "tokens" for a backend without a
# meter). bench/followup_share.py measures follow-up recall under each.
FOLLOWUP_SHARE_OF = "tokens"
FOLLOWUP_MIN_EVIDENCE = 64
# Excerpts read ahead for the next turn (turn_packing.read_ahead, while the user reads the
# answer) are used when the backend's cache holds at least this share of their tokens. A
# question asked before then starts with the passages read so far (the longest run of the
# first ones the cache holds: _read_part), and takes an own share between AHEAD_NEW_SHARE
# and FOLLOWUP_NEW_SHARE by the share of the read-ahead they hold.
AHEAD_HELD = 0.9
# How much to read ahead, as a share of a first question's budget in tokens (0: never).
# A follow-up's own new tokens after excerpts read ahead (None: FOLLOWUP_NEW_SHARE): less,
# for the excerpts it starts with are read already. Without them (a new topic, a question
# asked before they were read) it keeps FOLLOWUP_NEW_SHARE. bench/followup_share.py
# (2026-12-04, 159 follow-ups of the tuning sets; bench/README.md "Read-ahead"): 0.30 read
# ahead and 0.10 of its own keep follow-up recall at 2k/4k/8k at 0.561/0.774/0.837, above
# the 0.530/0.748/0.836 of the packer before issue 21, with a third of the tokens to read
# when the follow-up is asked.
READ_AHEAD_SHARE = 0.30
AHEAD_NEW_SHARE: float | None = 0.10
TEMPLATE_SLACK = 16  # chat-template tokens a new message adds beyond its own count
# The first question a backend reads has only the load-time probe and the warm start to go
# by, both read with nothing else going on; in the app the page is drawn while the question
# is read (its rerun, the evidence, the waiting box), on the same two cores. Measured
# 2026-12-02 on a 2-core Intel Xeon (bench/responsiveness.py and bench/browser.py --doc,
# debian-policy.pdf): the first question's read took 1.00x its plan through the chat page's
# code and 1.23x in chromium, so it plans for this share of the time left
# (later questions go by the rate measured on the questions read before them).
FIRST_READ_SHARE = 0.9

# A read that would pass this share of the first-token target from when the user asked is
# cut to a shorter form of the turn (GenerationRequest.deadline): the goal is the target
# within 20%, and each excerpt cut is evidence the answer cannot use.
DEADLINE_SHARE = 1.1

_REQUEST_FIELDS = {f.name for f in fields(GenerationRequest)}

def dense_ready(documents: Sequence[Document], store=None, embedder=None) -> bool:
    """Whether the section vectors of the documents the embedder reads (the multilingual
    model: all; MiniLM: the English ones) are at hand. While an upload's are
    still being computed in the background, a question is packed by BM25 alone rather than
    wait for them (a 200-page manual takes a minute on a busy 2-core machine)."""
    embedder = embedder if embedder is not None else DEFAULT_EMBEDDER
    ready = getattr(embedder, "ready", None)
    if ready is None or not embedder.enabled:
        return True
    reads = getattr(embedder, "reads", lambda d: d.language != "zh")
    return all(ready(d, store) for d in documents if reads(d) and d.sections)


@dataclass(frozen=True)
class Budget:
    """The prompt budget chosen for one question, and why."""
    window: int  # the backend's context window
    context_window: int  # what the packer was given: min(window, prompt budget + answer)
    prompt_budget: int | None  # None: the whole window (no target, rate unknown, or asked for)
    target_s: float | None
    rate: float | None  # measured prefill tokens/s when chosen
    whole_window: bool  # the user asked to read the whole window
    # Seconds of the target left for reading the prompt: the target less what comes before
    # the reading (the wait since the user asked, packing and evidence); None: target_s.
    read_s: float | None = None

    def to_dict(self) -> dict:
        return {"window": self.window, "context_window": self.context_window,
                "prompt_budget": self.prompt_budget, "target_s": self.target_s,
                "rate": None if self.rate is None else round(self.rate, 1),
                "whole_window": self.whole_window, "read_s": self.read_s}


@dataclass(frozen=True)
class FollowUp:
    """A follow-up's budget, and what the packer is told with it."""
    budget: Budget
    carry_allowance: int  # tokens of the window granted only for carrying the passages
    outline_window: int  # the first question's window: the follow-up keeps its outline


def followup_budget(documents, question: str, backend, history: Sequence, history_turns: int,
                    max_new: int, base: Budget, previous: Sequence) -> FollowUp:
    """The follow-up's budget: the carried prefix + the new tokens (FOLLOWUP_NEW_SHARE of
    the first question's budget, at least what the turns and question need plus
    FOLLOWUP_MIN_EVIDENCE); the whole window where that does not fit."""
    lang = question_language(question)
    carried = prefix_tokens(documents, backend, previous, lang,
                            context_window=base.context_window, max_new_tokens=max_new)
    recent = split_history(history, history_turns).recent
    need = backend.count_prompt_tokens([Message("system", ""), *recent,
                                        Message("user", question)])
    new = max(int(FOLLOWUP_NEW_SHARE * base.prompt_budget), need + FOLLOWUP_MIN_EVIDENCE)
    prompt = carried + new
    if prompt + max_new >= base.window:
        return FollowUp(Budget(base.window, base.window, None, base.target_s, base.rate, False),
                        max(0, base.window - max_new - base.prompt_budget), base.context_window)
    return FollowUp(Budget(base.window, prompt + max_new, prompt, base.target_s, base.rate,
                           False), max(0, prompt - base.prompt_budget), base.context_window)


def turn_budget(backend, conversation: Conversation, question: str, max_new: int,
                base: Budget) -> tuple[Budget, int | None]:
    """A turn of an append-only conversation: (budget, new_tokens). What the backend's KV
    cache holds of the earlier turns (all of them, for a backend that does not say) is not
    read again, so the budget is that plus what the backend reads after it in the first-token
    target (a topic change may use it all; later positions count dearer where the backend
    knows it); while the question is still about the passages in the window, its new user
    message takes at most new_tokens (FOLLOWUP_NEW_SHARE of the first question's budget, at
    least the question plus FOLLOWUP_MIN_EVIDENCE). A first question whose session's system
    message was warmed (session.warm: conversation.system set, no turns) counts the part the
    cache holds the same way. The whole window where that does not fit (then the packer
    compacts if it must)."""
    if base.prompt_budget is None or not (conversation.turns or conversation.system):
        return base, None
    messages = conversation.messages()
    prior = backend.count_prompt_tokens(messages)
    # A backend that does not say holds the earlier turns (the last prompt and its answer),
    # but nothing of a warm start it may not have had time to read.
    cached = _cached(backend, messages, prior, prior if conversation.turns else 0)
    if not conversation.turns and not cached:
        return base, None  # the warm start has not read anything yet: a plain first question
    prompt = cached + max(0, _readable(backend, base, cached))
    if not conversation.turns:
        return _fitted(base, max(prompt, base.prompt_budget), max_new), None
    need = backend.count_prompt_tokens([Message("user", question)])
    ahead = conversation.ahead
    new = max(_new_share(backend, base.prompt_budget, prior, ahead.read if ahead else 0.0),
              need + FOLLOWUP_MIN_EVIDENCE)
    # Never so little that the packer compacts only because reading is slow now (a busy
    # machine): it compacts when the turns and question leave less than min_new_evidence.
    floor = prior + need + POLICY.min_new_evidence + TEMPLATE_SLACK
    # Excerpts read ahead come on top: already read, so the turn may hold them besides its
    # share; the packer takes that room away again where it does not use them.
    extra = backend.count_prompt_tokens([Message("user", ahead.text)]) if ahead else 0
    return _fitted(base, max(prompt, prior + new, floor) + extra, max_new), new


def ahead_held(backend, conversation: Conversation, base: Budget | None = None,
               max_new: int = 0) -> Conversation:
    """The conversation with its excerpts read ahead only where the backend's cache holds
    them (AHEAD_HELD of their tokens at least; a backend that does not say is taken to):
    a question asked before the read-ahead was done would read them on top of its own. It
    keeps the first passages that were read (Ahead.first) instead, where there are some.
    Given the first question's budget (base), only where the window still has room for a
    follow-up's own share after them (else that turn would compact, and send them no
    more)."""
    ahead = conversation.ahead
    if ahead is None:
        return conversation
    messages = conversation.messages_ahead()
    total = backend.count_prompt_tokens(messages)
    extra = total - backend.count_prompt_tokens(conversation.messages())
    held = _cached(backend, messages, total, total)
    room = True
    if base is not None and base.prompt_budget is not None:
        share = int(FOLLOWUP_NEW_SHARE * base.prompt_budget)
        room = total + share + POLICY.min_new_evidence + max_new <= base.window
    if room and held >= total - (1 - AHEAD_HELD) * extra:
        return conversation
    return replace(conversation, ahead=_read_part(backend, conversation, held) if room else None)


def _read_part(backend, conversation: Conversation, reach: int):
    """The first passages read ahead that the backend's cache holds (Ahead.first; None:
    not even the first one): a read-ahead cut short by a question. The cache holds the
    read-ahead's tokens up to `reach` (ahead_held's count of messages_ahead()); a run of
    first passages whose own prompt (up to the end of its text, as cached_tokens counts)
    the cache matches less far than that ends before the cut, so it was read whole (but
    for a token or two where its end tokenizes differently alone); one that goes past the
    cut matches exactly as far."""
    ahead, head = conversation.ahead, conversation.messages()
    for k in range(len(ahead.ends) - 1, 0, -1):
        part = ahead.first(k)
        if _cached(backend, [*head, Message("user", part.text)], 1 << 30, reach) < reach:
            return part
    return None


def _new_share(backend, first_budget: int, start: int, ahead: float = 0.0) -> int:
    """A follow-up's new tokens: FOLLOWUP_NEW_SHARE of a first question's budget, less
    towards AHEAD_NEW_SHARE by the share of a read-ahead the turn starts with (`ahead`: 1.0
    all of it), in tokens or (FOLLOWUP_SHARE_OF = "time") in reading time, read after
    ``start`` earlier tokens."""
    low = FOLLOWUP_NEW_SHARE if AHEAD_NEW_SHARE is None else AHEAD_NEW_SHARE
    share = FOLLOWUP_NEW_SHARE - (FOLLOWUP_NEW_SHARE - low) * ahead
    meter = getattr(backend, "rate_meter", None)
    if FOLLOWUP_SHARE_OF != "time" or meter is None or not getattr(meter, "span", None):
        return int(share * first_budget)
    return meter.tokens_for(share * meter.work(0, first_budget), start)


def _cached(backend, messages: list[Message], prior: int, assume: int) -> int:
    """The tokens of these messages (prior in all) the backend's cache holds now
    (backend.cached_tokens); ``assume`` for a backend that does not say."""
    held = getattr(backend, "cached_tokens", None)
    if not callable(held):
        return assume
    try:
        n = held(messages)
        return assume if n is None else min(prior, int(n))
    except Exception:  # the edge: a budget estimate, never an error on the page
        logger.exception("cached_tokens failed")
        return assume


def _readable(backend, base: Budget, start: int) -> int:
    """Prompt tokens the backend reads in the first-token target after ``start`` cached ones
    (its prefill_tokens(target, start) where it has one), else the first question's budget."""
    fit = getattr(backend, "prefill_tokens", None)
    seconds = base.read_s or base.target_s
    if callable(fit) and seconds:
        try:
            tokens = fit(seconds, start)
        except TypeError:  # a backend whose prefill_tokens takes no start
            tokens = None
        if tokens is not None:
            return int(tokens)
    return int(base.prompt_budget or 0)


def _fitted(base: Budget, prompt: int, max_new: int) -> Budget:
    """A budget of prompt tokens (+ the answer) within the window; the whole window where
    that does not fit."""
    if prompt + max_new >= base.window:
        return Budget(base.window, base.window, None, base.target_s, base.rate, False,
                      base.read_s)
    return Budget(base.window, prompt + max_new, prompt, base.target_s, base.rate, False,
                  base.read_s)


def choose_budget(backend, max_new_tokens: int, ttft_target: float | None,
                  whole_window: bool = False, reserve_s: float = 0.0) -> Budget:
    """Prompt budget = min(window, what the backend reads in the target seconds less
    ``reserve_s``, what comes before the reading; at least half the target): its
    prefill_tokens(seconds) where it has one (the rate measured on recent prompts, slowing
    with the prompt's length), else measured prefill rate x seconds."""
    window = int(backend.context_window)
    rate_fn = getattr(backend, "prefill_rate", None)
    rate = rate_fn() if callable(rate_fn) else None
    if whole_window or not ttft_target or ttft_target <= 0 or not rate:
        return Budget(window, window, None, ttft_target, rate, whole_window)
    reserve = math.floor(max(0.0, reserve_s) * 10) / 10  # in tenths: a few ms change nothing
    read = max(ttft_target / 2, ttft_target - reserve)
    if getattr(getattr(backend, "rate_meter", None), "questions", None) == 0:
        read *= FIRST_READ_SHARE  # no question read yet: the probe's rate, idle
    read = round(read, 1)
    fit = getattr(backend, "prefill_tokens", None)
    tokens = fit(read) if callable(fit) else None
    budget = max(MIN_PROMPT_BUDGET, int(rate * read) if tokens is None else tokens)
    if budget + max_new_tokens >= window:
        return Budget(window, window, None, ttft_target, rate, False, read)
    return Budget(window, budget + max_new_tokens, budget, ttft_target, rate, False, read)


class PrepTime:
    """Seconds from choosing a question's budget to its evidence being ready (packing and
    the evidence search), averaged over the last questions: reserved out of the first-token
    target, so the prompt is read in what is left of it."""

    def __init__(self, decay: float = 0.5, prior: float = 0.5) -> None:
        # prior: before any question, what packing a 100-200 page document and drawing its
        # evidence took (0.27 s through the chat page's code, 0.7 s in chromium)
        self.decay, self.seconds = decay, prior
        self._seen = False

    def add(self, seconds: float) -> None:
        self.seconds = seconds if not self._seen else (
            self.decay * self.seconds + (1 - self.decay) * seconds)
        self._seen = True


PREP = PrepTime()


@dataclass
class Answer:
    """An answer being streamed: iterate for display chunks; read the fields afterwards.

    ``evidence`` is ready when ask() returns; ``progress`` follows the backend's reading of
    the prompt (PrefillProgress); ``on_progress`` (settable after ask()) is told each event.
    """

    cancel: threading.Event
    backend: str
    model: str
    packed: PackedContext
    preset: Preset
    budget: Budget | None = None
    evidence: list[Evidence] = field(default_factory=list)
    evidence_ms: float | None = None  # asked -> evidence ready
    progress: object = None  # the latest PrefillProgress, if the backend reports any
    on_progress: Callable[[object], None] | None = None
    # A read cut at the first-token deadline (qa._cut_to): the full and the read form's
    # sizes; None while the whole prompt is read.
    cut: dict | None = None
    text: str = ""  # what has been shown so far; the whole answer once done
    stopped: bool = False
    done: bool = False
    metrics: dict = field(default_factory=dict)
    _chunks: Iterator[str] | None = None

    def __iter__(self) -> Iterator[str]:
        assert self._chunks is not None
        return self._chunks

    def stop(self) -> None:
        """Stop the display at once and cancel the backend (it stops computing)."""
        self.cancel.set()

    def close(self) -> None:
        """Stop and release the stream (also what happens when the consumer goes away)."""
        self.cancel.set()
        if self._chunks is not None:
            self._chunks.close()

    def _progress(self, progress) -> None:
        self.progress = progress
        if self.on_progress is not None:
            self.on_progress(progress)


def resolve_preset(preset: str | Preset, overrides: dict | None = None) -> Preset:
    """A preset by name or as given, with single values overridden."""
    p = get_preset(preset) if isinstance(preset, str) else preset
    changes = {k: v for k, v in (overrides or {}).items() if v is not None}
    return p.with_overrides(**changes) if changes else p


def ask(documents: Sequence[Document], question: str, backend: Backend, *,
        history: Sequence = (), preset: str | Preset = "quick", overrides: dict | None = None,
        search: Callable[[str], list] | None = None, cancel: threading.Event | None = None,
        on_queue: Callable[[int], None] | None = None, started_at: float | None = None,
        history_turns: int = 3, clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], object] | None = None, ttft_target: float | None = None,
        whole_window: bool = False, previous: PreviousPassages | None = None,
        on_progress: Callable[[object], None] | None = None,
        embedding_store=None, previous_sections: Sequence | None = None,
        conversation: Conversation | None = None) -> Answer:
    """Choose the prompt budget, pack, find the evidence, then stream the answer paced.

    Packing happens here, so ContextTooLong is raised before anything is generated (when
    only the first-token budget is too small, the whole window is read instead);
    backend errors surface while iterating. ``started_at`` (a ``clock()`` time) is when
    the user asked: time to first token is measured from it. ``ttft_target`` (seconds)
    caps the prompt at what the backend reads in that time (``whole_window`` lifts it).
    ``previous`` (PreviousPassages.of(the last answer's packed), or .from_metrics(its stored
    metrics)) lets the packer carry what the backend already read: exact passages are
    carried as they were, and the follow-up's budget then counts only new tokens (the
    carried prefix + FOLLOWUP_NEW_SHARE of the budget); sections only are put first where
    chosen again. ``previous_sections`` is the older form of ``previous`` (a list of
    sections or passages, as stored in metrics). ``embedding_store`` keeps the packer's
    section vectors (docchat.library.store.SessionStore does).

    ``conversation`` (Conversation.from_turns(the stored turns); Conversation() for a first
    question) packs append-only instead (docchat/context/conversation.py): the earlier
    turns are sent exactly as before, the new excerpts go with the question, and history
    and previous are not used. The answer's metrics then hold what this turn sent.
    """
    started = clock() if started_at is None else started_at
    chosen = resolve_preset(preset, overrides)
    max_new = int(chosen.generation["max_new_tokens"])
    if previous is None and previous_sections:
        previous = PreviousPassages.from_list(previous_sections)
    chosen_at = clock()
    budget = choose_budget(backend, max_new, ttft_target, whole_window,
                           reserve_s=chosen_at - started + PREP.seconds)
    if conversation is not None:
        plan = _turn_plan(documents, question, backend, conversation, search=search,
                          max_new=max_new, budget=budget, store=embedding_store)
    else:
        plan = _plan(documents, question, backend, history=history, search=search,
                     max_new=max_new, history_turns=history_turns, budget=budget,
                     previous=previous, store=embedding_store)
    packed = plan.pack()
    evidence = find_evidence(documents, packed.sections, question)
    PREP.add(clock() - chosen_at)
    answer = Answer(cancel=cancel or Cancel(), backend=backend.name,
                    model=backend.model, packed=packed, preset=chosen, budget=plan.budget,
                    evidence=evidence, evidence_ms=round((clock() - started) * 1000, 3),
                    on_progress=on_progress)
    hooks = {"on_progress": answer._progress} if "on_progress" in _REQUEST_FIELDS else {}
    if "deadline" in _REQUEST_FIELDS:
        hooks.update(_deadline(packed, plan.budget, started, clock))
    request = GenerationRequest(messages=list(packed.messages), cancel=answer.cancel,
                                on_queue=on_queue, **hooks, **chosen.generation)
    answer._chunks = _stream(answer, backend, request, Pacer(chosen.pacing, clock=clock,
                                                              sleep=sleep), started, plan)
    return answer


@dataclass
class _Plan:
    """How ask() packs: the pack() call at a budget, and the whole-window retry."""
    documents: Sequence[Document]
    question: str
    backend: Backend
    budget: Budget
    options: dict  # pack()'s keyword arguments besides context_window
    dense: bool  # dense scores used (the documents' section vectors are ready)
    # pack_turn with its conversation; None: pack (looked up when called, so that a test
    # replacing qa.pack sees the call)
    packer: Callable[..., PackedContext] | None = None

    def pack(self) -> PackedContext:
        """Pack at the budget; when the question and the turns kept do not fit the
        first-token budget, read the whole window rather than fail (slower than the
        target, but answered)."""
        packer = self.packer or pack
        try:
            return packer(self.documents, self.question, self.backend,
                          context_window=self.budget.context_window, **self.options)
        except ContextTooLong:
            if self.budget.prompt_budget is None:
                raise
        logger.info("prompt over the first-token budget of %s tokens: whole window",
                    self.budget.prompt_budget)
        b = self.budget
        self.budget = Budget(b.window, b.window, None, b.target_s, b.rate, False)
        self.options.pop("carry_allowance", None)
        self.options.pop("outline_window", None)
        return packer(self.documents, self.question, self.backend,
                      context_window=self.budget.context_window, **self.options)


def _plan(documents: Sequence[Document], question: str, backend: Backend, *,
          history: Sequence, search, max_new: int, history_turns: int, budget: Budget,
          previous: PreviousPassages | None, store) -> _Plan:
    """pack()'s arguments for this question: the follow-up's budget and carried passages
    (exact passages), or the previous sections to put first; BM25 alone while the section
    vectors are still being computed."""
    options: dict = {"history": history, "search": search, "max_new_tokens": max_new,
                     "history_turns": history_turns}
    if previous is not None and previous.exact and previous.refs:
        options["previous_passages"] = list(previous.refs)
        if budget.prompt_budget is not None:
            follow = followup_budget(documents, question, backend, history, history_turns,
                                     max_new, budget, previous.refs)
            budget = follow.budget
            options.update(carry_allowance=follow.carry_allowance,
                           outline_window=follow.outline_window)
    elif previous is not None and previous.refs:
        options["previous_sections"] = [r[:2] for r in previous.refs]
    if store is not None:
        options["store"] = store
    dense = dense_ready(documents, store)
    if not dense:
        options["embedder"] = None
    return _Plan(documents, question, backend, budget, options, dense)


def _turn_plan(documents: Sequence[Document], question: str, backend: Backend,
               conversation: Conversation, *, search, max_new: int, budget: Budget,
               store) -> _Plan:
    """pack_turn()'s arguments: the turn's budget (turn_budget) and its conversation."""
    conversation = ahead_held(backend, conversation, budget, max_new)
    budget, new_tokens = turn_budget(backend, conversation, question, max_new, budget)
    options: dict = {"search": search, "max_new_tokens": max_new, "new_tokens": new_tokens,
                     "store": store}
    dense = dense_ready(documents, store)
    if not dense:
        options["embedder"] = None

    def packer(documents, question, backend, **kw) -> PackedContext:
        return pack_turn(documents, question, backend, conversation, **kw)

    return _Plan(documents, question, backend, budget, options, dense, packer)


def _deadline(packed: PackedContext, budget: Budget, started: float, clock) -> dict:
    """The request's first-token deadline (DEADLINE_SHARE of the target from when the user
    asked, on the backend's clock) and the turn's shorter forms to read instead where the
    prompt would pass it; none without a target, for the whole window, or on another
    clock (tests)."""
    if not packed.shorter or budget.prompt_budget is None or not budget.target_s \
            or clock is not time.perf_counter:
        return {}
    return {"deadline": started + DEADLINE_SHARE * budget.target_s,
            "shorter": tuple(list(s.messages) for s in packed.shorter)}


def _cut_to(answer: Answer, stats, backend: Backend) -> None:
    """Where the backend read a shorter form of the prompt (stats.cut), the answer's packed
    context and evidence become that form's: what the model read, what is stored with the
    turn, and what its statements are checked against. The form's tokens are counted now
    (pack_turn estimates them: most forms are never read; a cut is rare, and the form is
    shorter than the prompt counted at packing)."""
    cut = getattr(stats, "cut", None)
    packed = answer.packed
    if cut is None or cut >= len(packed.shorter):  # whole, or cut already (no forms left)
        return
    short = packed.shorter[cut]
    short = replace(short, tokens=backend.count_prompt_tokens(short.messages))
    if short.turn is not None and packed.turn is not None:  # what the turn was about
        short = replace(short, turn=replace(short.turn, chosen=packed.turn.passages))
    kept = set(short.sections)
    answer.evidence = [e for e in answer.evidence
                       if (e.doc_id, e.section) in kept or (e.doc_name, e.section) in kept]
    answer.packed = short
    answer.cut = {"from_tokens": packed.tokens, "to_tokens": short.tokens,
                  "passages_dropped": len(packed.passages) - len(short.passages),
                  "tokens_read_then_dropped": stats.prompt_dropped}
    logger.info("read cut at the first-token deadline: %d of %d prompt tokens",
                short.tokens, packed.tokens)


def _stream(answer: Answer, backend: Backend, request: GenerationRequest, pacer: Pacer,
            started: float, plan: _Plan) -> Iterator[str]:
    """The answer's display chunks, paced; the metrics once the stream ends."""
    try:
        for chunk in pacer.pace(backend.stream(request), request=request, started_at=started):
            if not answer.text:
                _cut_to(answer, request.stats, backend)
            answer.text += chunk
            yield chunk
    finally:
        _cut_to(answer, request.stats, backend)
        answer.stopped = pacer.stopped
        answer.text = _without_loop(answer.text, request.stats, answer.packed.language)
        answer.metrics = _metrics(pacer.metrics(request.stats).to_dict(), answer, plan)
        answer.done = True
        m, budget = answer.metrics, plan.budget
        logger.info("answer backend=%s prompt=%s reused=%s completion=%s ttft_ms=%s "
                    "budget=%s stopped=%s", backend.name, m.get("prompt_tokens"),
                    m.get("prompt_reused"), m.get("completion_tokens"),
                    m.get("model", {}).get("ttft_ms"), budget.prompt_budget, answer.stopped)


def _without_loop(text: str, stats, language: str | None) -> str:
    """A looping answer's text up to where the loop began, and the note that says it was cut
    there (the stream already stopped at the loop; the words shown before it say it once)."""
    cut = loop_at(stats)
    if cut is None or cut > len(text):
        return text
    return cut_text(text, cut, language if language in ("en", "zh") else None)


def _metrics(m: dict, answer: Answer, plan: _Plan) -> dict:
    """The pacer's metrics, with the budget, the packing and the evidence."""
    packed = answer.packed
    m["budget"] = plan.budget.to_dict()
    m["dense"] = plan.dense
    m["packed_tokens"] = packed.tokens
    m["evidence_ms"] = answer.evidence_ms
    m["evidence"] = to_dicts(answer.evidence)
    m["sections"] = [list(s) for s in packed.sections]
    m["passages"] = PreviousPassages.of(packed).to_list()
    m["carried_passages"] = packed.carried
    if packed.turn is not None:
        m.update(packed.turn.to_metrics())
    if answer.cut:
        m["cut"] = answer.cut
    return m
