"""Paced streaming: a backend's text pieces in, display chunks out, on a human schedule.

Modes: ``scheduled`` (a delay in [min_delay, max_delay] per chunk, ``rhythm`` 1 = always the
midpoint, lower = spread over more of the range; pauses after 。？！；： (longer) and .!?;:,
after ，、, and before line starts, as multiples of the mid delay; inside ``` fences delays x
``code_factor``, no pauses), ``smooth`` (``SmoothRate``: the source's own rate, an EMA of its
inter-arrival time (``GapEstimate``) per chunk, nudged x0.6..x1.3 toward keeping 20 mean gap
deviations, at most ``smooth_reserve`` seconds, of text in hand) and ``raw``
(pieces untouched, only timestamped). Delays count from the previous chunk's display.

Lag is in seconds: how long the oldest complete chunk has waited. Past ``max_lag`` the B waiting
chunks (B = most seen since catching up began) are shown max_lag / (2 B) apart, until the lag is
under max_lag / 2 (``CatchUp``); ``max_lag=0`` never catches up (the human-paced presets: a
model writes several times faster than they show, so any lag bound would be hit on every long
answer and turn the schedule into a sprint).

The first chunk is shown the moment its first piece arrives (``first_immediate``), even a
word the model may still continue; later partial words wait for the next piece.

Chunks: English by word (leading whitespace attached), Chinese by jieba word, punctuation and
combining marks stay with their word, code in fences keeps the model's pieces; a trailing partial
word waits for the next piece, so ``"".join(chunks) == "".join(pieces)``. The source is read on a
helper thread (``prefetch=True``) so an in-process model keeps generating while the display waits.
"""

from __future__ import annotations

import logging
import queue
import random
import re
import threading
import time
import unicodedata
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from docchat.answer.metrics import AnswerMetrics, compute_metrics
from docchat.backends import GenerationRequest, GenerationStats
from docchat.errors import DocchatError
from ingest.segment import cut_words

logger = logging.getLogger(__name__)

MODES = ("scheduled", "smooth", "raw")
_FENCE = "```"
_ZH_STOPS = "。？！；："
_EN_STOPS = ".!?;:…"
_COMMAS = "，、,"
_CLOSERS = "\"'”’」』）)]}*_`"
_JOINERS = re.compile("[\u200c\u200d\ufe00-\ufe0f\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f]")
_RESERVE_GAIN = 0.3  # how hard smooth mode steers toward its reserve
_RESERVE_DEVS = 20.0  # smooth mode's reserve: this many mean deviations of the source's gaps
_NUDGE_MIN, _NUDGE_MAX = 0.6, 1.6  # bounds of the reserve's factor on smooth mode's delay
_BURST_SPAN = 0.5  # catching up shows the B waiting chunks within this share of max_lag
_CAUGHT_UP = 0.5  # catching up ends once the lag is at most this share of max_lag
_JOIN_TIMEOUT = 5.0  # seconds to wait for the reader thread after a stop


@dataclass(frozen=True)
class PacingConfig:
    """When chunks are shown. Delays in seconds; pauses are multiples of the mid delay."""

    mode: str = "scheduled"
    min_delay: float = 0.10
    max_delay: float = 0.25
    rhythm: float = 1.0  # 1 = even (always the midpoint); 0 = uniform over [min, max]
    first_immediate: bool = True  # show the first chunk as soon as it is complete
    pause_zh: float = 2.0  # extra after 。？！；：
    pause_en: float = 1.2  # extra after .!?;:
    pause_comma: float = 0.6  # extra after ，、,
    pause_line: float = 0.5  # extra before a chunk that starts a new line
    code_factor: float = 0.4  # delay multiplier inside ``` fences
    max_lag: float = 3.0  # seconds behind the model before catching up; 0 = never
    smooth_alpha: float = 0.05  # EMA weight of the newest inter-arrival time (smooth mode)
    smooth_reserve: float = 0.6  # seconds of text smooth mode tries to keep in hand; 0 = none
    seed: int | None = 0  # rhythm's random sequence; None = different every time
    tick: float = 0.02  # longest single sleep, so a stop is noticed quickly

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise DocchatError(
                f"Unknown pacing mode {self.mode!r}: choose one of {', '.join(MODES)}."
            )
        if not 0 <= self.min_delay <= self.max_delay:
            raise DocchatError(
                "Pacing delays must satisfy 0 <= min_delay <= max_delay; fix the preset."
            )
        if (
            not 0 <= self.rhythm <= 1
            or not 0 < self.smooth_alpha <= 1
            or self.tick <= 0
            or min(self.max_lag, self.code_factor, self.smooth_reserve) < 0
        ):
            raise DocchatError(
                "Pacing needs rhythm in [0, 1], smooth_alpha in (0, 1], tick > 0 and "
                "max_lag, code_factor, smooth_reserve >= 0; fix the preset."
            )

    @property
    def mid_delay(self) -> float:
        return (self.min_delay + self.max_delay) / 2


@dataclass(frozen=True)
class Shown:
    """One displayed chunk: when it was complete, when shown, and the delay behind it."""

    text: str
    code: bool
    ready_at: float
    shown_at: float
    nominal: float  # the schedule's expected delay (no rhythm jitter, no catch-up)
    delay: float  # the delay actually applied
    catching_up: bool


@dataclass
class GapEstimate:
    """The source's inter-arrival time (seconds): a bias-corrected EMA of the gaps and one of
    their absolute deviations from the mean before them; the n-th gap weighs
    max(alpha, 1 / n), so the first 1 / alpha gaps get a plain mean (likewise the n-th
    deviation, from the second gap on)."""

    alpha: float
    mean: float | None = None  # None until the first gap
    dev: float = 0.0
    count: int = 0

    def weight(self) -> float:
        """The weight the next gap gets."""
        return max(self.alpha, 1 / (self.count + 1))

    def add(self, gap: float) -> None:
        if self.mean is None:  # the first gap sets the mean: no deviation from it yet
            self.mean, self.count = gap, 1
            return
        mean, w = self.mean, self.weight()
        self.count += 1
        self.mean = mean + w * (gap - mean)
        self.dev += max(self.alpha, 1 / (self.count - 1)) * (abs(gap - mean) - self.dev)


def reserve_nudge(want: float, held: float) -> float:
    """Factor on smooth mode's delay for held seconds of text in hand against a reserve of
    want seconds: above 1 (slower) with less in hand, below 1 with more, in
    [_NUDGE_MIN, _NUDGE_MAX]; with nothing in hand it is 1 + _RESERVE_GAIN (1.3), so the
    upper bound binds only for a gain above 0.6."""
    return min(_NUDGE_MAX, max(_NUDGE_MIN, 1 + _RESERVE_GAIN * (want - held) / want))


@dataclass
class SmoothRate:
    """Smooth mode's delay per chunk: the source's time per piece times the pieces in a chunk
    (by characters), nudged toward a reserve of text in hand (at most ``reserve`` seconds,
    _RESERVE_DEVS mean deviations of the source's gaps; 0 = no reserve)."""

    gaps: GapEstimate
    reserve: float = 0.0
    pieces: int = 0
    chars_in: int = 0
    chunks: int = 0
    chars_out: int = 0

    def add_piece(self, piece: str, gap: float | None) -> None:
        """A source piece that arrived gap seconds after the previous one (None: the first)."""
        if gap is not None:
            self.gaps.add(gap)
        self.pieces += 1
        self.chars_in += len(piece)

    def add_chunk(self, text: str) -> None:
        self.chunks += 1
        self.chars_out += len(text)

    def reserve_target(self) -> float:
        """Seconds of text to keep in hand for a stall: more for a jumpier source."""
        return min(self.reserve, _RESERVE_DEVS * self.gaps.dev)

    def delay(self, in_hand: int) -> float:
        """Seconds before the next chunk with in_hand chunks waiting; 0 before any estimate."""
        if self.gaps.mean is None or not self.chunks or not self.chars_in:
            return 0.0
        chunk_size = self.chars_out / self.chunks
        d = self.gaps.mean * chunk_size * self.pieces / self.chars_in
        if self.reserve > 0:
            want = self.reserve_target()
            if want > 0:
                d *= reserve_nudge(want, in_hand * d)
        return d


@dataclass
class CatchUp:
    """Catching up after falling behind: once the oldest waiting chunk has waited over max_lag
    seconds, the B waiting chunks (B = the most seen waiting since it began) are shown
    max_lag * _BURST_SPAN / B apart, until the lag is at most max_lag * _CAUGHT_UP.
    max_lag = 0 never catches up."""

    max_lag: float
    burst: int = 0  # B; 0 = not catching up

    @property
    def active(self) -> bool:
        return self.burst > 0

    def update(self, lag: float, waiting: int) -> None:
        """The oldest waiting chunk has waited lag seconds; waiting chunks are ready."""
        if self.max_lag <= 0:
            return
        if lag > self.max_lag:
            self.burst = max(self.burst, waiting)
        elif lag <= self.max_lag * _CAUGHT_UP:
            self.burst = 0

    def delay(self, base: float) -> float:
        """The delay before the next chunk: base, or the catch-up spacing if shorter."""
        if not self.burst:
            return base
        return min(base, self.max_lag * _BURST_SPAN / self.burst)


def split_words(text: str) -> list[str]:
    """Display words of text, losslessly: whitespace leads a word; punctuation and marks
    trail one."""
    out: list[str] = []
    lead = ""
    for p in cut_words(text):
        if p.isspace():
            lead += p
            continue
        attaches = (
            unicodedata.category(p[0]) in ("Mn", "Me")
            or _JOINERS.match(p) is not None
            or not any(c.isalnum() or c.isspace() for c in p)
        )  # punctuation, emoji
        if out and not lead and attaches:
            out[-1] += p
        else:
            out.append(lead + p)
        lead = ""
    if lead:
        out.append(lead)
    return out


class _Chunker:
    """Source pieces in, display chunks (text, in_code) out; holds back a trailing partial word."""

    def __init__(self) -> None:
        # skip: in code, the leading characters that are the opening fence itself
        self.buf, self.code, self.skip = "", False, 0

    def feed(self, piece: str, final: bool = False) -> list[tuple[str, bool]]:
        self.buf += piece
        out: list[tuple[str, bool]] = []
        while True:
            if self.code:
                end = self.buf.find(_FENCE, self.skip)
                if end >= 0:  # closing fence: code up to it, then back to prose
                    end += len(_FENCE)
                    out.append((self.buf[:end], True))
                    self.buf, self.code, self.skip = self.buf[end:], False, 0
                    continue
                # Backticks at the end may be the start of the closing fence.
                tail = self.buf[self.skip :]
                keep = 0 if final else min(len(tail) - len(tail.rstrip("`")), len(_FENCE) - 1)
                text = self.buf[: len(self.buf) - keep]
                if text:
                    out.append((text, True))
                    self.skip = max(0, self.skip - len(text))
                self.buf = self.buf[len(text) :]
                return out
            start = self.buf.find(_FENCE)
            if start >= 0:  # the fence ends the prose before it, so no word is partial
                out.extend((w, False) for w in split_words(self.buf[:start]))
                self.buf, self.code, self.skip = self.buf[start:], True, len(_FENCE)
                continue
            words = split_words(self.buf)
            # Simple heuristic to avoid showing incomplete words: the last one may go on.
            self.buf = "" if final or not words else words.pop()
            out.extend((w, False) for w in words)
            return out

    def release(self) -> list[tuple[str, bool]]:
        """The prose held back as a possibly partial word, now (for a first chunk that must
        not wait for the next piece); never text that may open a code fence."""
        if self.code or not self.buf or "`" in self.buf:
            return []
        text, self.buf = self.buf, ""
        return [(text, False)]


def _pause(cfg: PacingConfig, prev: str, text: str) -> float:
    """Extra delay (in mid delays) before text, given the chunk shown before it."""
    core = prev.rstrip()
    gap = prev[len(core) :] + text[: len(text) - len(text.lstrip())]
    last = core.rstrip(_CLOSERS)[-1:] or "x"
    p = (
        cfg.pause_zh
        if last in _ZH_STOPS
        else cfg.pause_en
        if last in _EN_STOPS
        else cfg.pause_comma
        if last in _COMMAS
        else 0.0
    )
    if "\n" in gap:
        p = max(p, cfg.pause_line)
    return p


def _close(source: object) -> None:
    close = getattr(source, "close", None)
    if close is not None:
        close()


class _ThreadFeed:
    """Reads the source on a helper thread, stamping each piece on arrival."""

    def __init__(self, source: Iterator[str], clock: Callable[[], float]) -> None:
        self._source, self._clock = source, clock
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._read, name="docchat-pacer", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        last = None
        try:
            for piece in self._source:
                t = self._clock()
                self._q.put((t, piece, None if last is None else t - last))
                last = t
                if self._halt.is_set():
                    break
        except BaseException as e:  # thread boundary: re-raised in the caller by take()
            self._q.put(e)
        finally:
            try:
                _close(self._source)
            finally:
                self._q.put(None)

    def take(
        self, timeout: float, sleep: Callable[[float], object] | None = None
    ) -> tuple[list[tuple[float, str, float | None]], bool]:
        """Pieces that arrived (waiting up to timeout; via an injected sleep if any) and
        whether it ended."""
        items: list[tuple[float, str, float | None]] = []
        if timeout > 0 and sleep is not None and self._q.empty():
            sleep(timeout)
            timeout = 0
        try:
            x = self._q.get(timeout=timeout) if timeout > 0 else self._q.get_nowait()
            while True:
                if x is None:
                    return items, True
                if isinstance(x, BaseException):
                    raise x
                items.append(x)
                x = self._q.get_nowait()
        except queue.Empty:
            return items, False

    def close(self) -> None:
        self._halt.set()
        self._thread.join(_JOIN_TIMEOUT)
        if self._thread.is_alive():
            logger.warning(
                "Backend stream did not stop within %.0f s of a stop request", _JOIN_TIMEOUT
            )


class _PullFeed:
    """Pulls one piece from the source whenever the pacer needs more text."""

    def __init__(self, source: Iterator[str], clock: Callable[[], float]) -> None:
        self._source, self._clock = source, clock
        self._started = False

    def take(
        self, timeout: float, sleep: object = None
    ) -> tuple[list[tuple[float, str, float | None]], bool]:
        # The source only works while pulled, so its inter-arrival time is the pull's length.
        start = self._clock()
        try:
            piece = next(self._source)
        except StopIteration:
            return [], True
        t = self._clock()
        dt, self._started = (None if not self._started else t - start), True
        return [(t, piece, dt)], False

    def close(self) -> None:
        _close(self._source)


class Pacer:
    """Paces one answer at a time; after it, ``metrics()`` reports on both sides."""

    def __init__(
        self,
        config: PacingConfig | None = None,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], object] | None = None,
        prefetch: bool = True,
    ) -> None:
        self.config = config or PacingConfig()
        self.clock = clock
        self._sleep_fn = sleep  # None: wait on the stop event, so a stop wakes it at once
        self.prefetch = prefetch
        self._reset(threading.Event(), None, clock())

    def _reset(
        self, stop: threading.Event, stats: GenerationStats | None, started_at: float
    ) -> None:
        self.stop, self.stats, self.started_at = stop, stats, started_at
        self.model_times: list[float] = []  # arrival of each source piece
        self.display_times: list[float] = []  # when each chunk was handed to the display
        self.shown: list[Shown] = []  # scheduled and smooth modes only
        self.ended_at: float | None = None
        self.stopped = False  # set by a stop, or by closing the pacer before the source ended

    def pace(
        self,
        source: Iterable[str],
        stop: threading.Event | None = None,
        request: GenerationRequest | None = None,
        started_at: float | None = None,
    ) -> Iterator[str]:
        """Yield display chunks of source; setting stop (default: request.cancel) ends it
        at once."""
        if stop is None:
            stop = request.cancel if request is not None else threading.Event()
        self._reset(
            stop,
            request.stats if request is not None else None,
            self.clock() if started_at is None else started_at,
        )
        it = iter(source)
        return self._raw(it) if self.config.mode == "raw" else self._paced(it)

    def metrics(self, stats: GenerationStats | None = None) -> AnswerMetrics:
        """Metrics of the last answer; stats defaults to the request's given to pace()."""
        return compute_metrics(
            self.started_at,
            self.model_times,
            self.display_times,
            stats or self.stats,
            self.stopped,
            self.ended_at,
        )

    def _sleep(self, seconds: float) -> None:
        (self._sleep_fn or self.stop.wait)(seconds)

    def _raw(self, it: Iterator[str]) -> Iterator[str]:
        clock, stop, stamps = self.clock, self.stop, self.model_times
        finished, unshown = False, 0
        try:
            for piece in it:
                stamps.append(clock())
                if stop.is_set():
                    unshown = 1
                    break
                yield piece
            else:
                finished = True
        finally:
            self._finish(finished, len(stamps) - unshown)
            _close(it)

    def _finish(self, finished: bool, shown_raw: int | None = None) -> None:
        self.ended_at = self.clock()
        self.stopped = self.stop.is_set() or not finished
        if shown_raw is not None:
            self.display_times = self.model_times[:shown_raw]
        if not finished:
            self.stop.set()  # the same event is the backend's request.cancel

    def _paced(self, it: Iterator[str]) -> Iterator[str]:
        cfg, clock, stop = self.config, self.clock, self.stop
        smooth = cfg.mode == "smooth"
        rng = random.Random(cfg.seed)
        chunker = _Chunker()
        ready: deque[tuple[str, float, bool]] = deque()
        # The reserve needs prefetch: a pulled source makes nothing while the display waits.
        rate = SmoothRate(GapEstimate(cfg.smooth_alpha), cfg.smooth_reserve if self.prefetch else 0)
        catch_up = CatchUp(cfg.max_lag)
        feed = (_ThreadFeed if self.prefetch else _PullFeed)(it, clock)
        ended = finished = False
        prev, last_shown = "", None

        def absorb(timeout: float) -> bool:
            items, done = feed.take(timeout, self._sleep_fn)
            for t, piece, dt in items:
                self.model_times.append(t)
                rate.add_piece(piece, dt)
                for text, code in chunker.feed(piece):
                    ready.append((text, t, code))
                    rate.add_chunk(text)
            if done:
                ready.extend((text, clock(), code) for text, code in chunker.feed("", final=True))
            elif items and not ready and last_shown is None and cfg.first_immediate:
                # The first words on screen must not wait for the model's next token.
                ready.extend((text, items[-1][0], code) for text, code in chunker.release())
            return done

        try:
            while not stop.is_set():
                if not ready:
                    if ended:
                        finished = True
                        break
                    ended = absorb(cfg.tick)
                    continue
                text, ready_at, code = ready[0]
                first = last_shown is None
                if first and cfg.first_immediate:
                    nominal = base = 0.0
                elif smooth:
                    nominal = base = rate.delay(len(ready))
                else:
                    nominal, base = self._plan(prev, text, code, rng)
                anchor = ready_at if last_shown is None else last_shown
                while True:
                    now = clock()
                    if not first:
                        if smooth:
                            nominal = base = rate.delay(len(ready))
                        catch_up.update(now - ready_at, len(ready))
                    delay = catch_up.delay(base)
                    if now >= anchor + delay or stop.is_set():
                        break
                    self._sleep(min(cfg.tick, anchor + delay - now))
                    if self.prefetch and not ended:
                        ended = absorb(0)
                if stop.is_set():
                    break
                ready.popleft()
                shown_at = clock()
                self.display_times.append(shown_at)
                self.shown.append(
                    Shown(text, code, ready_at, shown_at, nominal, delay, catch_up.active)
                )
                prev, last_shown = text, shown_at
                yield text
        finally:
            self._finish(finished)
            feed.close()

    def _plan(self, prev: str, text: str, code: bool, rng: random.Random) -> tuple[float, float]:
        """(nominal, actual) delay before text: the rhythm jitter is drawn once per chunk."""
        cfg = self.config
        mid, half = cfg.mid_delay, (cfg.max_delay - cfg.min_delay) / 2
        base = mid + (1 - cfg.rhythm) * half * rng.uniform(-1.0, 1.0)
        if code:
            return mid * cfg.code_factor, base * cfg.code_factor
        extra = _pause(cfg, prev, text) * mid
        return mid + extra, base + extra
