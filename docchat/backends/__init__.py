"""Backend protocol, generation request, registry and the shared one-at-a-time queue.

The registry maps names to import paths so that ``import docchat`` never imports
torch or llama_cpp.
"""
from __future__ import annotations

import contextlib
import importlib
import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Protocol, runtime_checkable

from docchat.errors import BackendUnavailable, ContextTooLong, DocchatError


@dataclass(frozen=True)
class Message:
    role: str  # "system", "user" or "assistant"
    content: str


@dataclass(frozen=True)
class PrefillProgress:
    """How far the backend has read the prompt (passed to GenerationRequest.on_progress)."""
    done: int  # prompt tokens evaluated so far, reused ones included
    total: int  # prompt tokens in all
    reused: int = 0  # tokens taken from the KV cache instead of evaluated
    rate: float | None = None  # measured prefill tokens/s
    eta_s: float | None = None  # seconds left at that rate
    known: bool = True  # False for HTTP servers: progress is not observable


FINISH_REASONS = ("stop", "length", "cancelled", "error", "repetition")


@dataclass
class GenerationStats:
    """Filled in by the backend while it streams; read by the caller afterwards."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    queue_ms: float = 0.0
    first_token_at: float | None = None  # time.perf_counter() of the first piece
    finished_at: float | None = None
    stopped: bool = False  # cancelled before the model finished
    finish_reason: str | None = None  # one of FINISH_REASONS once finished
    prompt_reused: int = 0  # prompt tokens taken from the KV cache
    prefill_ms: float | None = None  # time spent reading the prompt (None: not observed)
    prefill_started_at: float | None = None  # time.perf_counter() when prefill began
    # {thread count: [prompt tokens, seconds]} of this read, where the backend chooses its
    # threads batch by batch (llama.cpp): what a read slower than planned ran on.
    prefill_threads: dict = field(default_factory=dict)
    # finish_reason "repetition": the stream looped from this character of its text on
    # (what comes before says it once; docchat.backends.repetition.cut_text keeps that).
    repetition_at: int | None = None
    prefill_done: int = 0  # prompt tokens in the KV cache so far (updated as it reads)
    # The prompt was too slow to read by request.deadline: the index of the shorter prompt
    # (request.shorter) read instead (None: the whole prompt), and the prompt tokens read
    # and then dropped for it.
    cut: int | None = None
    prompt_dropped: int = 0


class Cancel(threading.Event):
    """A Stop request: a threading.Event that also calls its listeners the moment it is set,
    so a backend can halt work no Python code runs inside (the llama.cpp backend stops a
    prompt batch midway through: llamacpp.MidBatchStop) without a thread polling for it."""

    def __init__(self) -> None:
        super().__init__()
        self._listeners: list[Callable[[], None]] = []
        self._listeners_lock = threading.Lock()

    def set(self) -> None:
        super().set()
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call listener when set (at once if it is); returns what stops listening."""
        with self._listeners_lock:
            self._listeners.append(listener)
        if self.is_set():
            listener()

        def forget() -> None:
            with self._listeners_lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)
        return forget


@dataclass(frozen=True)
class GenerationRequest:
    messages: tuple[Message, ...] | list[Message]
    max_new_tokens: int = 512
    temperature: float = 0.0
    top_p: float = 1.0
    repetition_penalty: float = 1.0
    do_sample: bool = False
    seed: int | None = 0
    cancel: threading.Event = field(default_factory=Cancel)
    stats: GenerationStats = field(default_factory=GenerationStats)
    # Called with the number of generations ahead of this one while it waits.
    on_queue: Callable[[int], None] | None = None
    # Called during prefill: first before any work (done == reused), last with done == total.
    on_progress: Callable[[PrefillProgress], None] | None = None
    # A first-token deadline (a time.perf_counter() time) and shorter prompts (message
    # lists, longest first: the same prompt with fewer excerpts). Where reading the prompt
    # would pass the deadline, an in-process backend reads the longest shorter prompt it
    # can read by then instead, from what the two share (stats.cut says which).
    deadline: float | None = None
    shorter: tuple = ()


@runtime_checkable
class Backend(Protocol):
    name: str  # registry name: "llamacpp", "hf", "openai", "echo"
    model: str  # model path or id, for display
    context_window: int  # tokens the model can attend to
    device: str  # "cpu", "cuda:0", "http://...", for display

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        """Yield text pieces of the answer; stop early once request.cancel is set."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens in text by the model's own tokenizer."""
        ...

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        """Tokens of the whole chat-formatted prompt for these messages."""
        ...

    def prefill_rate(self) -> float | None:
        """Measured prompt-reading speed in tokens/s; None when unknown (HTTP servers)."""
        ...

    def prefetch(self, messages: list[Message]) -> None:
        """Warm the KV cache with these messages' prompt in the background; never blocks."""
        ...


class Foreground:
    """Whether a backend in this process is reading a prompt or generating (or prefetching
    one). Background work on the same cores (an upload's section embedding) waits between its
    batches while it is, rather than compete with llama.cpp's threads, which wait for each
    other at every step (bench/README.md, Responsiveness: after an upload)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        with self._cond:
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()

    @property
    def busy(self) -> bool:
        with self._cond:
            return self._active > 0

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no backend is working (True), or timeout seconds pass (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._active == 0, timeout)


# Set by StreamingBackend while it reads or generates; embeddings.warm() yields to it.
FOREGROUND = Foreground()


def ensure_fits(prompt_tokens: int, max_new_tokens: int, context_window: int) -> None:
    """Raise ContextTooLong unless the prompt plus the answer fit the context window."""
    if prompt_tokens + max_new_tokens > context_window:
        raise ContextTooLong(
            f"The prompt is {prompt_tokens:,} tokens and the answer may add {max_new_tokens:,}, "
            f"but the model's context window is {context_window:,} tokens: select fewer or "
            f"shorter documents, or lower max_new_tokens."
        )


def plain_prompt(messages: list[Message] | tuple[Message, ...]) -> str:
    """Fallback chat format for models without a chat template.

    Each message becomes "System: ...", "User: ..." or "Assistant: ..." separated by a
    blank line, and the prompt ends with "Assistant:" for the model to continue.
    """
    parts = [f"{m.role.capitalize()}: {m.content}" for m in messages]
    return "\n\n".join(parts + ["Assistant:"])


def greedy(request: GenerationRequest) -> bool:
    """True when the request asks for greedy decoding (temperature 0 or do_sample off)."""
    return not request.do_sample or request.temperature <= 0


BACKENDS: dict[str, str] = {
    "llamacpp": "docchat.backends.llamacpp:LlamaCppBackend",
    "hf": "docchat.backends.hf:HFBackend",
    "transformers": "docchat.backends.hf:HFBackend",
    "openai": "docchat.backends.openai_http:OpenAIBackend",
    "echo": "docchat.backends.echo:EchoBackend",
}


def get_backend(name: str, *, stop_loops: bool = True, **options) -> Backend:
    """Instantiate the backend registered under name with its options. ``stop_loops=False``
    lets a stream that repeats itself run on (base.StreamingBackend.repetition_policy)."""
    try:
        target = BACKENDS[name]
    except KeyError:
        raise DocchatError(
            f"Unknown backend {name!r}: choose one of {', '.join(sorted(BACKENDS))}."
        ) from None
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise BackendUnavailable(
            f"The {name} backend needs a package that is not installed ({e.name or e}); "
            f"run: pip install -r requirements.txt"
        ) from e
    backend = getattr(module, attr)(**{k: v for k, v in options.items() if v is not None})
    if not stop_loops:
        backend.repetition_policy = None
    return backend


class GenerationQueue:
    """Runs one generation at a time in arrival order; waiters learn their place.

    In-process backends share one model across all sessions, so they wrap their
    generation in ``with queue.turn(request):``. Background work (the KV-cache prefetch)
    takes turns too but is not counted in the places reported to requests: it gives way
    between batches as soon as a request waits, so nobody waits for it as for an answer.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._tickets = itertools.count()
        self._serving = 0  # ticket number now allowed to run
        self._waiting: list[int] = []
        self._skipped: set[int] = set()  # cancelled while waiting
        self._background: set[int] = set()  # tickets of background work

    @property
    def depth(self) -> int:
        """Generations running or waiting."""
        with self._cond:
            return len(self._waiting)

    def turn(self, request: GenerationRequest, background: bool = False) -> "_Turn":
        return _Turn(self, request, background)

    def _ahead(self, ticket: int) -> int:
        """Requests (not background work) running or waiting before ticket."""
        return sum(1 for t in self._waiting if t < ticket and t not in self._background)


class _Turn:
    def __init__(self, queue: GenerationQueue, request: GenerationRequest,
                 background: bool = False) -> None:
        self.queue = queue
        self.request = request
        self.background = background
        self.ticket = -1

    def __enter__(self) -> "_Turn":
        q, req = self.queue, self.request
        start = time.perf_counter()
        with q._cond:
            self.ticket = next(q._tickets)
            q._waiting.append(self.ticket)
            if self.background:
                q._background.add(self.ticket)
            last_reported = None
            while self.ticket != q._serving:
                ahead = q._ahead(self.ticket)
                if req.on_queue and ahead and ahead != last_reported:
                    last_reported = ahead
                    req.on_queue(ahead)
                if req.cancel.is_set():
                    # Give up our place without running; later tickets must not wait on us.
                    q._waiting.remove(self.ticket)
                    q._background.discard(self.ticket)
                    self._skip = True
                    req.stats.stopped = True
                    req.stats.queue_ms = (time.perf_counter() - start) * 1000
                    return self
                q._cond.wait(timeout=0.1)
        self._skip = False
        req.stats.queue_ms = (time.perf_counter() - start) * 1000
        if req.on_queue:
            req.on_queue(0)
        return self

    @property
    def cancelled(self) -> bool:
        return self._skip

    def __exit__(self, *exc) -> None:
        q = self.queue
        with q._cond:
            if self._skip:
                # A cancelled waiter still holds its place; it is passed over when reached.
                q._skipped.add(self.ticket)
            else:
                q._waiting.remove(self.ticket)
                q._background.discard(self.ticket)
                q._serving += 1
            while q._serving in q._skipped:
                q._skipped.discard(q._serving)
                q._serving += 1
            q._cond.notify_all()
