"""How many threads llama.cpp reads prompts and decodes with, chosen by measured speed.

llama.cpp's threads spin-wait for each other at every step, so a thread whose core is
taken by another process (the browser showing the app, an upload's embedding) stalls all
of them: no fixed count is right both idle and busy. Both choosers try each candidate,
keep the fastest by an exponential average of tokens/s, and recheck the others now and
then, so a machine that became busy (or idle) is noticed within seconds.
"""
from __future__ import annotations

import os
import time


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity, as taskset or a container sets it),
    else os.cpu_count()."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_threads(n_threads: int | None = None,
                    n_threads_batch: int | None = None) -> tuple[int, int]:
    """(decode threads, prompt threads to start with): the given values, else defaults.

    llama.cpp's threads spin-wait for each other at every step, so a thread whose core
    is taken by another process stalls all of them. Measured on a 2-core box
    (bench/backend.py --study threads; bench/README.md): decoding with 2 threads fell
    from 84 tok/s idle to 38 with one core busy while 1 thread kept 58, and with other
    work on both cores 2 threads decoded at 2.6 tok/s against 33 for 1 thread, but idle 2
    threads decode 15-20% faster (issue 21). So decoding starts at the safe count,
    (cores - 1) // 2 (at most 4, at least 1), and DecodeThreadChooser moves to whichever
    candidate decodes fastest, measured window by window. Reading a prompt: idle, 2 threads
    read 180 tok/s against 86 for 1, busy, 27 against 42; prompt threads start at every
    core and ThreadChooser keeps whichever of its candidates reads fastest, measured batch
    by batch. n_threads alone fixes both, as before.
    """
    cores = usable_cores()
    if n_threads and not n_threads_batch:
        return n_threads, n_threads
    decode = n_threads or max(1, min(4, (cores - 1) // 2))
    return decode, n_threads_batch or cores


def prompt_thread_candidates(n_threads: int | None, n_threads_batch: int | None) -> list[int]:
    """Prompt-thread counts ThreadChooser may pick from: one when the user chose it."""
    if n_threads_batch or n_threads:
        return [n_threads_batch or n_threads]
    cores = usable_cores()
    return sorted({cores, max(1, cores - 1), max(1, cores // 2)}, reverse=True)


class IdleCores:
    """How many cores of the machine sat idle between two calls (/proc/stat: idle and
    iowait time of all CPUs); None where that cannot be read. Each call also sets others:
    the cores that other processes kept busy meanwhile (busy cores less this process's own
    CPU time per second), None where unknown."""

    def __init__(self, path: str = "/proc/stat", clock=time.monotonic,
                 own_cpu=time.process_time) -> None:
        self.path = path
        self.cores = os.cpu_count() or 1
        self.clock, self.own_cpu = clock, own_cpu
        self.others: float | None = None
        self._last = self._read()
        self._when, self._cpu = clock(), own_cpu()

    def _read(self) -> tuple[int, int] | None:
        try:
            with open(self.path) as f:
                v = [int(x) for x in f.readline().split()[1:9]]
            return v[3] + v[4], sum(v)
        except (OSError, ValueError, IndexError):
            return None

    def __call__(self) -> float | None:
        now, last = self._read(), self._last
        when, cpu = self.clock(), self.own_cpu()
        wall, own = when - self._when, cpu - self._cpu
        self._last, self._when, self._cpu = now, when, cpu
        self.others = None
        if now is None or last is None or now[1] <= last[1]:
            return None
        idle = self.cores * (now[0] - last[0]) / (now[1] - last[1])
        if wall > 0:
            self.others = max(0.0, self.cores - idle - own / wall)
        return idle


class _Chooser:
    """What both choosers share: measured rates per thread count, the fastest used, the
    others rechecked with back-off, and a larger count rechecked at once when the cores it
    needs beyond the current count were idle meanwhile (IdleCores), and never while they
    are busy (its threads would spin waiting for each other) but once every MAX_EVERY. A
    smaller count than the fastest is rechecked only while other processes keep cores busy
    (its one advantage: fewer threads to stall), else once every MAX_EVERY: on an idle
    machine those rechecks cost the decode 4-5% (bench/README.md, Decode against raw)."""

    EXPLORE_EVERY, MAX_EVERY = 8, 64
    FREE_EVERY = 4  # a larger count with idle cores for it: at most once in this many steps
    FREE_SHARE = 0.7  # of each extra thread's core idle meanwhile
    BUSY_SHARE = 0.3  # of a core kept busy by other processes: a smaller count may win
    ALPHA = 0.5

    def __init__(self, candidates: list[int], cores: int | None = None) -> None:
        self.candidates = list(candidates) or [1]
        self.cores = cores or usable_cores()
        self.rates: dict[int, float] = {}
        self.tried_at: dict[int, int] = {}
        self.steps = 0
        self._every = {c: self.EXPLORE_EVERY for c in self.candidates}
        self._due = {c: 0 for c in self.candidates}

    def best(self) -> int | None:
        known = [c for c in self.candidates if c in self.rates]
        return max(known, key=lambda c: self.rates[c]) if known else None

    def pick(self, idle: float | None = None, others: float | None = None) -> int:
        """The count to use next; idle: cores that sat idle during the last step, others:
        cores other processes kept busy then (None: unknown, then rechecks follow the
        back-off alone)."""
        for c in self.candidates:
            if c not in self.rates:
                return c
        best = self.best()
        if idle is not None:
            free = [c for c in self.candidates if c > best and self._fits(c, best, idle, others)
                    and self.steps - self.tried_at.get(c, -self.MAX_EVERY)
                    >= max(self.FREE_EVERY, self._every[c] // 4)]
            if free:
                return max(free)
        long_ago = {c: self.steps - self.tried_at.get(c, 0) >= self.MAX_EVERY
                    for c in self.candidates}
        due = [c for c in self.candidates if c != best and self.steps >= self._due[c]
               and (c > best or others is None or others >= self.BUSY_SHARE or long_ago[c])
               and (idle is None or c < best or self._fits(c, best, idle, others)
                    or long_ago[c])]
        return min(due, key=lambda c: self._due[c]) if due else best

    def _fits(self, c: int, best: int, idle: float, others: float | None) -> bool:
        """Whether c threads found their cores idle: the extra ones, and (idle cores between
        two reads count this process's own, idle while the model waited for a question)
        all c of them left free by other processes (a loop on the other core: 8 tokens
        read with 2 threads took 1.4 s)."""
        return idle >= self.FREE_SHARE * (c - best) and (
            others is None or self.cores - others >= c - (1 - self.FREE_SHARE))

    def _record(self, threads: int, rate: float) -> None:
        was = self.best()
        self.steps += 1
        old = self.rates.get(threads)
        others = [r for c, r in self.rates.items() if c != threads]
        if old is None or (threads == was and others and rate < max(others)) or (
                threads != was and was is not None and rate > self.rates[was]):
            self.rates[threads] = rate  # the choice fell behind, or another beat it: now
        else:
            self.rates[threads] = (1 - self.ALPHA) * old + self.ALPHA * rate
        self.tried_at[threads] = self.steps
        best = self.best()
        if best != was:  # a new leader: recheck the others at the base interval
            self._every = {c: self.EXPLORE_EVERY for c in self.candidates}
            self._due = {c: self.steps + self.EXPLORE_EVERY for c in self.candidates}
        elif threads != best:  # rechecked and still slower: look again later
            self._every[threads] = min(self.MAX_EVERY, 2 * self._every[threads])
            self._due[threads] = self.steps + self._every[threads]


class ThreadChooser(_Chooser):
    """Chooses how many threads read prompts, batch by batch, from the speed each count was
    measured to read, and how many tokens each batch of that count holds.

    Each candidate is tried on one batch first; then the fastest is used (_Chooser: the
    others rechecked after EXPLORE_EVERY batches, twice as long after each recheck that
    finds them still slower, a larger count at once when cores were idle for it and not
    while they are busy). Each count has its own batch size, sized to take `seconds` at its
    own measured speed, so a recheck of a count that collapsed (two spinning threads beside
    a browser) is a short batch. Rates are exponential averages, so one noisy batch cannot
    decide, except that a batch in which the current choice read slower than another
    count's rate (or another read faster than the choice's) hands over at once.
    """

    EXPLORE_EVERY, MAX_EVERY = 6, 96

    def __init__(self, candidates: list[int], seconds: float = 0.25,
                 sizes: tuple[int, int] = (8, 512), cores: int | None = None) -> None:
        super().__init__(candidates, cores)
        self.seconds, (self.min_size, self.max_size) = seconds, sizes
        self.sizes: dict[int, int] = {}

    @property
    def batches(self) -> int:
        return self.steps

    def size(self, threads: int, default: int) -> int:
        """Tokens for the next batch read with this many threads."""
        return self.sizes.get(threads, default)

    def record(self, threads: int, tokens: int, seconds: float, full: bool = True) -> None:
        """A batch of tokens read in seconds; full: it held size(threads) tokens (a short last
        batch says little about the rate, and does not resize)."""
        if tokens <= 0 or seconds <= 0 or not full or threads not in self._due:
            return
        self._record(threads, tokens / seconds)
        # Later batches attend to more context: follow the measured time.
        size = int((tokens * tokens * self.seconds / seconds) ** 0.5)
        self.sizes[threads] = max(self.min_size, min(self.max_size, size))


def decode_thread_candidates(n_threads: int | None) -> list[int]:
    """Decode-thread counts DecodeThreadChooser may pick from, the old fixed default first
    ((cores - 1) // 2, 1 to 4: safe under load); one when the user chose it."""
    if n_threads:
        return [n_threads]
    cores = usable_cores()
    safe = max(1, min(4, (cores - 1) // 2))
    return [safe] + sorted({max(1, cores // 2), max(1, cores - 1), cores} - {safe})


class DecodeThreadChooser(_Chooser):
    """Chooses decode threads from measured tokens/s, window by window while answering.

    Decoding runs one token per step; a window is WINDOW tokens or WINDOW_S seconds,
    whichever ends first, so a candidate that collapses under load (2 threads with one core
    busy: 2.6 tok/s against 33 for 1) costs one short window, not a stalled answer. Each
    candidate is measured once, then the fastest is used (_Chooser: a slower one rechecked
    after EXPLORE_EVERY windows, twice as long after each recheck that finds it still
    slower, up to MAX_EVERY; a larger count at once when cores were idle for it, not while
    they are busy), so on an idle machine the rechecks cost a few percent at most. The
    current choice is measured all the time: when it slows below another, that one takes
    over at once.
    """

    WINDOW, WINDOW_S = 16, 0.3
    MIN_TOKENS = 4  # a shorter and quicker (end-of-answer) window is not recorded

    @property
    def windows(self) -> int:
        return self.steps

    def record(self, threads: int, tokens: int, seconds: float) -> None:
        if tokens <= 0 or seconds <= 0 or threads not in self._due:
            return
        if tokens < self.MIN_TOKENS and seconds < self.WINDOW_S:
            return  # the short tail of an answer
        self._record(threads, tokens / seconds)
