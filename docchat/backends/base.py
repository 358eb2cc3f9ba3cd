"""One stream lifecycle for every backend, around each backend's own token source.

``StreamingBackend.stream`` owns the queue turn, the stats (prompt and completion
tokens, first-token time, finish reason), cancel, ``GeneratorExit`` and the log line;
a backend supplies ``_prepare`` (tokenize, check the window) and ``_pieces`` (read the
prompt, then yield text pieces), so a fix to Stop or to metrics is made once. It also
holds what in-process backends share: the prefill-rate meter, progress reports and
the background ``prefetch`` that warms the KV cache through the queue.
"""
from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any, Callable, Iterator, Sequence

from docchat.backends import (
    FOREGROUND,
    GenerationQueue,
    GenerationRequest,
    Message,
    PrefillProgress,
    ensure_fits,
)
from docchat.backends.repetition import RepetitionDetector, RepetitionPolicy
from docchat.errors import DocchatError

logger = logging.getLogger(__name__)

# Prefill batches are sized to take about this long: progress is reported, the prompt
# threads rechecked and a warm start gives way to a question between two. Stop no longer
# waits for a batch's end where llama.cpp's abort callback is set (llamacpp.MidBatchStop:
# a stop halts the read in 1-2 ms, idle or beside two half-busy processes), so 0.25 again
# instead of 0.15, which halted in 0.04-0.10 s between batches but read 4-7% slower
# (bench/prefill_batches.py, bench/README.md "Prefill batch length").
BATCH_SECONDS = 0.25
# A read is judged late for its deadline only after this many tokens (its rate by then).
MIN_LATE_TOKENS = 48
MIN_BATCH, MAX_BATCH = 8, 512
# In a prompt's reading ETA, the rate measured on earlier prompts counts as this much reading.
PRIOR_SECONDS = 1.0


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class RateMeter:
    """Prefill tokens/s: a probe, then a running average of real prefills.

    Each sample is (tokens evaluated, seconds, position of the first), reused tokens
    excluded; older samples weigh half as much at each new one, so the rate follows the
    machine's load. Prefills under ``min_tokens`` are too short to time and are ignored.
    With ``span`` (tokens), a token at position p costs (1 + p / span) times one at the start
    (attention reads every earlier token; see ``attention_span``): samples are counted at
    the start-of-prompt rate, and ``tokens_in`` answers for a prompt of its own length, so
    a 64-token probe no longer promises a 2,000-token prompt the same speed.
    """

    def __init__(self, decay: float = 0.5, min_tokens: int = 16,
                 span: float | None = None, questions: int | None = None) -> None:
        self.decay, self.min_tokens, self.span = decay, min_tokens, span
        # questions' prompt reads measured (not probes or warm starts); None: not counted
        self.questions = questions
        self._tokens = self._seconds = 0.0
        self._lock = threading.Lock()

    def add(self, tokens: int, seconds: float, start: int = 0) -> None:
        if tokens < self.min_tokens or seconds <= 0:
            return
        self.add_work(self.work(start, start + tokens), seconds)

    def question_read(self) -> None:
        """A question's prompt read was measured (counted where questions are counted)."""
        if self.questions is not None:
            self.questions += 1

    def add_work(self, work: float, seconds: float) -> None:
        """A sample already counted at the start-of-prompt rate (RateMeter.work)."""
        if work < self.min_tokens or seconds <= 0:
            return
        with self._lock:
            self._tokens = self._tokens * self.decay + work
            self._seconds = self._seconds * self.decay + seconds

    @property
    def rate(self) -> float | None:
        """Tokens/s at the start of a prompt (with span; else the plain average)."""
        with self._lock:
            return self._tokens / self._seconds if self._seconds else None

    def work(self, start: int, end: int) -> float:
        """Tokens start..end counted at the start-of-prompt rate."""
        n = end - start
        return n * (1 + (start + end) / (2 * self.span)) if self.span else n

    def seconds_left(self, start: int, done: int, total: int, elapsed: float,
                     prior_s: float = PRIOR_SECONDS) -> float | None:
        """A prompt's reading ETA: what is left at the rate this prompt has been read so far
        (from start, elapsed seconds ago), the meter's rate counting as prior_s seconds of
        that reading, so one fast or slow first batch does not swing it; later tokens are
        counted dearer (span)."""
        rate = self.read_rate(start, done, elapsed, prior_s)
        return None if rate is None else self.work(done, total) / rate

    def read_rate(self, start: int, done: int, elapsed: float,
                  prior_s: float = PRIOR_SECONDS) -> float | None:
        """The start-of-prompt rate of a prompt read from start to done in elapsed seconds,
        the meter's rate counting as prior_s seconds of it (seconds_left)."""
        prior, read = self.rate, self.work(start, done)
        if prior:
            return (read + prior * prior_s) / (elapsed + prior_s)
        if read > 0 and elapsed > 0:
            return read / elapsed
        return None

    def tokens_in(self, seconds: float, start: int = 0) -> int | None:
        """Prompt tokens read in this many seconds after the first ``start`` are cached
        (0: an empty cache); None when unknown. n solves work(start, start + n) / rate =
        seconds: n / rate * (1 + (2 start + n) / (2 span)) = seconds, so a follow-up's tokens,
        read after the whole conversation, count dearer than a first question's."""
        rate = self.rate
        if not rate:
            return None
        return self.tokens_for(seconds * rate, start)

    def tokens_for(self, work: float, start: int = 0) -> int:
        """Tokens after the first ``start`` that take this much work (RateMeter.work: tokens
        at the start-of-prompt rate): n solves work(start, start + n) = work."""
        if not self.span:
            return int(work)
        b = 1 + max(0, start) / self.span
        return int(self.span * ((b * b + 2 * max(0.0, work) / self.span) ** 0.5 - b))


def attention_span(params: float, layers: int, width: int) -> float | None:
    """Position at which a token's attention costs as much as its weights: a token's matrix
    products take ~2 x params FLOPs, its attention over p earlier tokens ~4 x layers x
    width x p (scores and weighted values; the query width, whatever the KV heads). For
    SmolLM2-135M: 106 M params in the layers, 30 layers of 576 -> 3,072 tokens (measured:
    137 tok/s for a 64-token probe, 2,011 tokens read in 18.4 s; predicted 19.5 s)."""
    if not params or not layers or not width:
        return None
    return params / (2 * layers * width)


def batch_size(rate: float | None, seconds: float = BATCH_SECONDS) -> int:
    """Prompt tokens to evaluate in one uninterruptible step at this rate."""
    if not rate:
        return 32
    return max(MIN_BATCH, min(MAX_BATCH, int(rate * seconds)))


class _Skip:
    cancelled = False


class StreamingBackend:
    """Base of the backends: ``stream`` is written once here.

    Subclasses set ``name``, ``model``, ``context_window``, ``device`` and implement
    ``_prepare(request) -> (prompt_tokens, prepared)`` and ``_pieces(request, prepared)``.
    ``_pieces`` reads the prompt (reporting progress with ``_progress`` and checking
    ``request.cancel`` between batches), then yields text pieces; it sets
    ``stats.completion_tokens`` and, when the model ends or hits max_new_tokens,
    ``stats.finish_reason`` ("stop" or "length"). Everything else is done here.
    In-process backends that can warm their cache also implement ``_prefix(messages)``
    and ``_warm(request, prepared, interrupted)`` and set ``supports_prefetch``.
    """

    name = "?"
    model = "?"
    supports_prefetch = False
    # A stream that loops ends with finish_reason "repetition" (None: never stopped).
    repetition_policy: RepetitionPolicy | None = RepetitionPolicy()

    def __init__(self) -> None:
        self.queue = GenerationQueue()
        self.rate_meter = RateMeter()
        self._prefetch_request: GenerationRequest | None = None
        self._prefetch_thread: threading.Thread | None = None

    # -- hooks ------------------------------------------------------------------

    def _prepare(self, request: GenerationRequest) -> tuple[int, Any]:
        raise NotImplementedError

    def _pieces(self, request: GenerationRequest, prepared: Any) -> Iterator[str]:
        raise NotImplementedError

    def _turn(self, request: GenerationRequest):
        """The right to run: the shared in-process queue (servers override)."""
        return self.queue.turn(request)

    # -- the lifecycle ----------------------------------------------------------

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        """Yield the answer piece by piece; stop early once request.cancel is set."""
        stats = request.stats
        prompt_tokens, prepared = self._prepare(request)
        ensure_fits(prompt_tokens, request.max_new_tokens, self.context_window)
        stats.prompt_tokens = prompt_tokens
        # While this reads and generates, background embedding pauses (FOREGROUND).
        with self._turn(request) as turn, FOREGROUND.active():
            if turn.cancelled or request.cancel.is_set():
                stats.stopped, stats.finish_reason = True, "cancelled"
                stats.finished_at = time.perf_counter()
                return
            start = time.perf_counter()
            source = self._pieces(request, prepared)
            loops = RepetitionDetector(self.repetition_policy) if self.repetition_policy \
                else None
            try:
                for piece in source:
                    if not piece:
                        continue
                    if stats.first_token_at is None:
                        stats.first_token_at = time.perf_counter()
                    if loops is not None and self._loops(loops, piece, stats):
                        before = len(loops.text) - len(piece)  # text streamed so far
                        head = piece[: max(0, stats.repetition_at - before)]
                        if head:
                            yield head  # the part of this piece before the loop
                        break
                    yield piece
                    if request.cancel.is_set():
                        break
                if request.cancel.is_set() and stats.finish_reason not in ("stop", "length",
                                                                        "repetition"):
                    stats.stopped, stats.finish_reason = True, "cancelled"
            except GeneratorExit:
                stats.stopped, stats.finish_reason = True, "cancelled"
                raise
            except BaseException:
                stats.finish_reason = "error"
                raise
            finally:
                source.close()  # its own finally runs now, in this thread
                stats.finished_at = time.perf_counter()
                self._log(stats, stats.finished_at - start)

    @staticmethod
    def _loops(loops: RepetitionDetector, piece: str, stats) -> bool:
        """Feed the detector; on a loop, record where it starts and the finish reason. The
        text streamed before that point (``stats.repetition_at`` characters) says what the
        loop says once; consumers keep only it (repetition.cut_text adds the note)."""
        if not loops.feed(piece):
            return False
        stats.finish_reason, stats.repetition_at = "repetition", loops.cut
        logger.info("stream stopped: the text repeats from character %d", loops.cut)
        return True

    def _log(self, stats, seconds: float) -> None:
        prefill = f", prefill {stats.prefill_ms:.0f} ms" if stats.prefill_ms is not None else ""
        logger.info("%s %s: %d prompt (%d reused) + %d new tokens in %.2fs%s, %s", self.name,
                    self.model, stats.prompt_tokens, stats.prompt_reused,
                    stats.completion_tokens, seconds, prefill, stats.finish_reason)

    # -- prefill helpers --------------------------------------------------------

    def prefill_rate(self) -> float | None:
        """Measured prompt-reading speed in tokens/s; None when unknown."""
        return self.rate_meter.rate

    def prefill_tokens(self, seconds: float, start: int = 0) -> int | None:
        """Prompt tokens this backend reads in that time after ``start`` cached ones (0: an
        empty cache), at the rate measured on recent prompts and for a prompt that long;
        None when unknown."""
        return self.rate_meter.tokens_in(seconds, start)

    def cached_tokens(self, messages: list[Message]) -> int | None:
        """How many of these messages' prompt tokens (up to the end of the last message's
        content, as prefetch() warms them) the KV cache holds now: what a prompt starting
        with them reuses. None for a backend whose cache this process cannot see."""
        if not self.supports_prefetch:
            return None
        if not messages:
            return 0
        return common_prefix(self._cached_ids(), self._prefix(list(messages)))

    def _cached_ids(self) -> list[int]:
        """The token ids in the KV cache (backends that set supports_prefetch)."""
        return []

    def _progress(self, request: GenerationRequest, done: int, total: int, reused: int,
                  started: float) -> None:
        """Report prefill progress: the rate measured so far in this prefill, else the meter's;
        the ETA from both (RateMeter.seconds_left)."""
        request.stats.prefill_done = done
        if request.on_progress is None:
            return
        elapsed = time.perf_counter() - started
        evaluated = done - reused
        rate = evaluated / elapsed if evaluated >= 8 and elapsed > 0 else self.prefill_rate()
        eta = self.rate_meter.seconds_left(reused, done, total, elapsed)
        request.on_progress(PrefillProgress(done=done, total=total, reused=reused,
                                            rate=rate, eta_s=eta, known=True))

    # -- reading the prompt by the deadline -----------------------------------------

    def _read(self, tokens: list[int], upto: int, request: GenerationRequest,
              interrupted: Callable[[], bool]) -> int:
        """Put tokens[:upto] in the KV cache (reusing its prefix); returns how many are
        there now (fewer if interrupted). In-process backends implement it."""
        raise NotImplementedError

    def _prompt_ids(self, messages) -> list[int]:
        """The token ids these messages are read as (for request.shorter)."""
        raise NotImplementedError

    def _read_prompt(self, tokens: list[int], request: GenerationRequest
                     ) -> tuple[list[int], int]:
        """Read all but the prompt's last token (the first decoding step reads it). Where
        the rest would not be read by request.deadline, go on until the end of what the
        prompt shares with the longest of request.shorter that can be read by then (the
        shortest if none can), then read that one instead (stats.cut). Returns (the
        prompt read, tokens of it cached: fewer if cancelled)."""
        stats = request.stats
        forms = _Forms(self, request, tokens) if request.deadline is not None \
            and request.shorter else None
        read = self._read(tokens, len(tokens) - 1, request, self._late(request, tokens, forms))
        started, reused = stats.prefill_started_at, stats.prompt_reused
        if forms is not None and forms.choice is not None and read < len(tokens) - 1 \
                and not request.cancel.is_set():
            stats.cut = forms.choice
            held, tokens = tokens[:read], forms.ids[forms.choice]
            stats.prompt_dropped = read - common_prefix(tokens, held)
            logger.info("prompt too slow for the first-token deadline: read %d of %d tokens, "
                        "then shorter form %d (%d tokens)", read, len(held), stats.cut,
                        len(tokens))
            read = self._read(tokens, len(tokens) - 1, request, request.cancel.is_set)
            stats.prefill_started_at, stats.prompt_reused = started, min(reused, len(tokens))
        stats.prompt_tokens = len(tokens)
        return tokens, read

    def _late(self, request: GenerationRequest, tokens: list[int], forms: "_Forms | None"
              ) -> Callable[[], bool]:
        """read()'s interrupt: Stop; or, where the rest of the prompt would not be read by
        the deadline at the rate this read has gone (at least MIN_LATE_TOKENS in), the end
        of what it shares with the shorter form to read instead (forms.choice)."""
        stats, meter = request.stats, self.rate_meter

        def late() -> bool:
            if request.cancel.is_set():
                return True
            if forms is None or stats.prefill_started_at is None:
                return False
            now = time.perf_counter()
            done, reused = stats.prefill_done, stats.prompt_reused
            rate = meter.read_rate(reused, done, now - stats.prefill_started_at) \
                if done - reused >= MIN_LATE_TOKENS else None
            if rate is None or now + meter.work(done, len(tokens) - 1) / rate \
                    <= request.deadline:
                forms.choice = None
                return False
            forms.choose(now, done, rate, request.deadline)
            return done >= forms.common[forms.choice]
        return late

    # -- warm start -------------------------------------------------------------

    def _prefix(self, messages: list[Message]) -> Any:
        raise NotImplementedError

    def _warm(self, request: GenerationRequest, prepared: Any,
              interrupted: Callable[[], bool]) -> None:
        raise NotImplementedError

    def prefetch(self, messages: list[Message]) -> None:
        """Warm the KV cache with these messages' prompt in the background; never blocks.

        The work takes a turn in the generation queue like any request, so it never
        runs beside a generation, and it gives way between batches as soon as a real
        request waits (which then reuses what was evaluated) or a newer prefetch comes.
        """
        if not self.supports_prefetch or not messages:
            return
        previous = self._prefetch_request
        if previous is not None:
            previous.cancel.set()
        request = GenerationRequest(messages=list(messages), max_new_tokens=0)
        self._prefetch_request = request

        def interrupted() -> bool:
            return request.cancel.is_set() or self.queue.depth > 1

        def work() -> None:
            with self.queue.turn(request, background=True) as turn, FOREGROUND.active():
                if turn.cancelled or interrupted():
                    return
                try:
                    self._warm(request, self._prefix(list(messages)), interrupted)
                except DocchatError as e:  # a background nicety: log, never raise
                    logger.warning("prefetch failed: %s", e)

        self._prefetch_thread = threading.Thread(target=work, name="docchat-prefetch",
                                                 daemon=True)
        self._prefetch_thread.start()

    def wait_prefetch(self, timeout: float = 30.0) -> bool:
        """Wait for the last prefetch to end (for tests and benchmarks); True if it did."""
        thread = self._prefetch_thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True


@contextlib.contextmanager
def no_turn() -> Iterator[_Skip]:
    """A turn that is always granted (backends without a shared model)."""
    yield _Skip()


class _Forms:
    """A request's shorter forms, as token ids, with what each shares with the prompt;
    tokenized when the read first falls behind its deadline."""

    def __init__(self, backend: StreamingBackend, request: GenerationRequest,
                 tokens: list[int]) -> None:
        self.backend, self.request, self.tokens = backend, request, tokens
        self.ids: list[list[int]] = []
        self.common: list[int] = []
        self.choice: int | None = None

    def choose(self, now: float, done: int, rate: float, deadline: float) -> None:
        """The longest form whose part not read yet (reading on until it parts from the
        prompt) can be read by the deadline at rate; the shortest if none can."""
        if not self.ids:
            self.ids = [self.backend._prompt_ids(m) for m in self.request.shorter]
            self.common = [common_prefix(ids, self.tokens) for ids in self.ids]
        work = self.backend.rate_meter.work
        for k, ids in enumerate(self.ids):
            self.choice = k
            if now + work(min(done, self.common[k]), len(ids) - 1) / rate <= deadline:
                return
