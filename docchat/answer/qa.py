"""ask(): pack the documents for the question, stream the backend's answer through the pacer.

Before anything is generated, ask() chooses the prompt budget (the first-token budget: what
the backend can read in ``ttft_target`` seconds at its measured prefill rate, at most the
window), packs, and finds the evidence (the packed sections' best sentences), so a caller can
show the passages while the model is still reading.
"""
from __future__ import annotations

import inspect
import logging
import threading
import time
from dataclasses import dataclass, field, fields
from typing import Callable, Iterator, Sequence

from docchat.answer.pacing import Pacer
from docchat.answer.presets import Preset, get_preset
from docchat.backends import Backend, GenerationRequest, Message
from docchat.context.embeddings import DEFAULT as DEFAULT_EMBEDDER
from docchat.context.evidence import Evidence, find_evidence, to_dicts
from docchat.context.packing import PackedContext, normalize_passages, pack, prefix_tokens
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
FOLLOWUP_MIN_EVIDENCE = 64

_REQUEST_FIELDS = {f.name for f in fields(GenerationRequest)}


def _pack_accepts(name: str) -> bool:
    return name in inspect.signature(pack).parameters


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

    def to_dict(self) -> dict:
        return {"window": self.window, "context_window": self.context_window,
                "prompt_budget": self.prompt_budget, "target_s": self.target_s,
                "rate": None if self.rate is None else round(self.rate, 1),
                "whole_window": self.whole_window}


def followup_budget(documents, question: str, backend, history: Sequence, history_turns: int,
                    max_new: int, base: Budget, previous: Sequence, extra: dict) -> Budget:
    """The follow-up's budget: the reused prefix + the new tokens (see FOLLOWUP_NEW_SHARE);
    sets the packer's reuse_allowance and outline_window in extra."""
    from docchat.context.packing import split_history
    from docchat.context.prompts import question_language

    lang = question_language(question)
    reused = prefix_tokens(documents, backend, previous, lang,
                           context_window=base.context_window, max_new_tokens=max_new)
    recent = split_history(history, history_turns).recent
    need = backend.count_prompt_tokens([Message("system", ""), *recent,
                                        Message("user", question)])
    new = max(int(FOLLOWUP_NEW_SHARE * base.prompt_budget), need + FOLLOWUP_MIN_EVIDENCE)
    prompt = reused + new
    extra["outline_window"] = base.context_window
    if prompt + max_new >= base.window:
        extra["reuse_allowance"] = max(0, base.window - max_new - base.prompt_budget)
        return Budget(base.window, base.window, None, base.target_s, base.rate, False)
    extra["reuse_allowance"] = max(0, prompt - base.prompt_budget)
    return Budget(base.window, prompt + max_new, prompt, base.target_s, base.rate, False)


def choose_budget(backend, max_new_tokens: int, ttft_target: float | None,
                  whole_window: bool = False) -> Budget:
    """Prompt budget = min(window, what the backend reads in the target seconds): its
    prefill_tokens(target) where it has one (the rate measured on recent prompts, slowing
    with the prompt's length), else measured prefill rate x target seconds."""
    window = int(backend.context_window)
    rate_fn = getattr(backend, "prefill_rate", None)
    rate = rate_fn() if callable(rate_fn) else None
    if whole_window or not ttft_target or ttft_target <= 0 or not rate:
        return Budget(window, window, None, ttft_target, rate, whole_window)
    fit = getattr(backend, "prefill_tokens", None)
    tokens = fit(ttft_target) if callable(fit) else None
    budget = max(MIN_PROMPT_BUDGET, int(rate * ttft_target) if tokens is None else tokens)
    if budget + max_new_tokens >= window:
        return Budget(window, window, None, ttft_target, rate, False)
    return Budget(window, budget + max_new_tokens, budget, ttft_target, rate, False)


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
        whole_window: bool = False, previous_sections: Sequence | None = None,
        on_progress: Callable[[object], None] | None = None,
        embedding_store=None, previous_passages: Sequence | None = None) -> Answer:
    """Choose the prompt budget, pack, find the evidence, then stream the answer paced.

    Packing happens here, so ContextTooLong is raised before anything is generated (when
    only the first-token budget is too small, the whole window is read instead);
    backend errors surface while iterating. ``started_at`` (a ``clock()`` time) is when
    the user asked: time to first token is measured from it. ``ttft_target`` (seconds)
    caps the prompt at what the backend reads in that time (``whole_window`` lifts it);
    ``previous_sections`` (the last answer's ``packed.sections``) lets the packer keep
    what the backend already read first, so its cache is reused; ``previous_passages`` (the
    last answer's ``packed.passages``; also accepted as 3-item ``previous_sections``) keeps
    its excerpts exactly, and the follow-up's budget then counts only new tokens (the reused
    prefix + FOLLOWUP_NEW_SHARE of the budget). ``embedding_store`` keeps
    the packer's section vectors (docchat.library.store.SessionStore does).
    """
    started = clock() if started_at is None else started_at
    chosen = resolve_preset(preset, overrides)
    gen = chosen.generation
    max_new = int(gen["max_new_tokens"])
    budget = choose_budget(backend, max_new, ttft_target, whole_window)
    extra = {}
    if previous_passages is None and previous_sections and all(
            len(s) > 2 for s in previous_sections):
        previous_passages, previous_sections = previous_sections, None
    if previous_sections and previous_passages is None:
        previous_sections = [tuple(s[:2]) for s in previous_sections]
    if previous_passages and _pack_accepts("previous_passages"):
        prev = normalize_passages(previous_passages)
        extra["previous_passages"] = prev
        if budget.prompt_budget is not None:
            budget = followup_budget(documents, question, backend, history, history_turns,
                                     max_new, budget, prev, extra)
    elif previous_sections and _pack_accepts("previous_sections"):
        extra["previous_sections"] = [tuple(s) for s in previous_sections]
    if embedding_store is not None and _pack_accepts("store"):
        extra["store"] = embedding_store
    dense = dense_ready(documents, embedding_store)
    if not dense:
        extra["embedder"] = None
    def packed_for(budget: Budget) -> PackedContext:
        return pack(documents, question, backend, history=history, search=search,
                    max_new_tokens=max_new, history_turns=history_turns,
                    context_window=budget.context_window, **extra)

    try:
        packed = packed_for(budget)
    except ContextTooLong:
        if budget.prompt_budget is None:
            raise
        # The question and the turns kept do not fit the first-token budget: read the
        # whole window rather than fail (slower than the target, but answered).
        logger.info("prompt over the first-token budget of %s tokens: whole window",
                    budget.prompt_budget)
        budget = Budget(budget.window, budget.window, None, budget.target_s, budget.rate,
                        False)
        extra.pop("reuse_allowance", None)
        extra.pop("outline_window", None)
        packed = packed_for(budget)
    evidence = find_evidence(documents, packed.sections, question)
    cancel = cancel or threading.Event()
    answer = Answer(cancel=cancel, backend=backend.name, model=backend.model, packed=packed,
                    preset=chosen, budget=budget, evidence=evidence,
                    evidence_ms=round((clock() - started) * 1000, 3), on_progress=on_progress)
    hooks = {"on_progress": answer._progress} if "on_progress" in _REQUEST_FIELDS else {}
    request = GenerationRequest(messages=list(packed.messages), cancel=cancel,
                                on_queue=on_queue, **hooks, **gen)
    pacer = Pacer(chosen.pacing, clock=clock, sleep=sleep)

    def chunks() -> Iterator[str]:
        try:
            for chunk in pacer.pace(backend.stream(request), request=request,
                                    started_at=started):
                answer.text += chunk
                yield chunk
        finally:
            answer.stopped = pacer.stopped
            m = pacer.metrics(request.stats).to_dict()
            m["budget"] = budget.to_dict()
            m["dense"] = dense
            m["packed_tokens"] = packed.tokens
            m["evidence_ms"] = answer.evidence_ms
            m["evidence"] = to_dicts(evidence)
            m["sections"] = [list(s) for s in packed.sections]
            m["passages"] = [[k, i, None if b is None else list(b)]
                             for k, i, b in packed.passages]
            m["kept_passages"] = packed.kept
            answer.metrics = m
            answer.done = True
            logger.info("answer backend=%s prompt=%s reused=%s completion=%s ttft_ms=%s "
                        "budget=%s stopped=%s", backend.name, m.get("prompt_tokens"),
                        m.get("prompt_reused"), m.get("completion_tokens"),
                        m.get("model", {}).get("ttft_ms"), budget.prompt_budget, answer.stopped)

    answer._chunks = chunks()
    return answer
