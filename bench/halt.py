"""When the model halts after Stop: per-thread CPU of the process that runs it.

The model's threads (llama.cpp computes in the thread that calls it, plus its worker
threads when it reads or decodes with more than one) run at nearly a whole core each while
it reads or decodes. ``HaltWatch`` samples every thread's CPU time of a process (its
/proc/PID/task/TID/schedstat, in nanoseconds; else /proc stat ticks) every few ms; at
``mark()`` (the Stop click, or ``Answer.stop()``), the threads that ran more than
BUSY_SHARE of a core in the second before are the model's, and ``halted_after()`` is the
time from the mark to the end of the last WINDOW_S window in which those threads still
ran more than RUN_SHARE of a core in all. A thread that then does the answer's own
bookkeeping (metrics, saving the turn) counts as the model still running, so the figure
is an upper bound on the model's halting.

Used by bench/responsiveness.py (the bench's own process) and bench/browser.py (the
``streamlit run`` server's process).
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

BUSY_SHARE = 0.3  # of a core, in the second before the mark: a model thread
RUN_SHARE = 0.5  # of a core, summed over those threads in a window: still running
WINDOW_S = 0.05
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds of each thread of pid, now."""
    out: dict[int, float] = {}
    task = Path(f"/proc/{pid}/task")
    try:
        tids = os.listdir(task)
    except OSError:
        return out
    for tid in tids:
        try:
            out[int(tid)] = int((task / tid / "schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            try:
                fields = (task / tid / "stat").read_text().rsplit(")", 1)[1].split()
                out[int(tid)] = (int(fields[11]) + int(fields[12])) / TICK
            except (OSError, ValueError, IndexError):
                continue
    return out


class HaltWatch:
    """Samples a process's threads' CPU in the background (see the module doc)."""

    def __init__(self, pid: int | None = None, every_s: float = 0.005,
                 keep_s: float = 30.0) -> None:
        self.pid = pid or os.getpid()
        self.every_s, self.keep_s = every_s, keep_s
        self.samples: list[tuple[float, dict[int, float]]] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="halt-watch", daemon=True)
        self._me = None

    def __enter__(self) -> "HaltWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(2)

    def _run(self) -> None:
        self._me = threading.get_native_id()
        while not self._stop.is_set():
            now, cpu = time.perf_counter(), thread_cpu(self.pid)
            cpu.pop(self._me, None)  # the sampler itself
            with self._lock:
                self.samples.append((now, cpu))
                while self.samples and self.samples[0][0] < now - self.keep_s:
                    self.samples.pop(0)
            time.sleep(self.every_s)

    def mark(self) -> float:
        """The moment of Stop (perf_counter)."""
        return time.perf_counter()

    def _at(self, t: float) -> dict[int, float]:
        with self._lock:
            before = [c for s, c in self.samples if s <= t]
        return before[-1] if before else {}

    def model_threads(self, mark: float, before_s: float = 1.0) -> list[int]:
        """Threads that ran more than BUSY_SHARE of a core in the before_s before mark."""
        a, b = self._at(mark - before_s), self._at(mark)
        return [tid for tid, cpu in b.items() if cpu - a.get(tid, 0.0) > BUSY_SHARE * before_s]

    def halted_after(self, mark: float, quiet_s: float = 0.5,
                     timeout_s: float = 10.0) -> dict:
        """Wait until the model's threads have been quiet for quiet_s (at most timeout_s);
        {"halt_s": seconds from mark to the end of their last busy window (None: never
        quiet), "threads": how many were the model's, "busy_before": their share of a core
        in the second before}."""
        tids = self.model_threads(mark)
        deadline = mark + timeout_s
        while True:
            time.sleep(WINDOW_S)
            with self._lock:
                after = [(s, c) for s, c in self.samples if s >= mark - WINDOW_S]
            last_busy = self._last_busy(after, tids)
            now = time.perf_counter()
            if now - max(last_busy, mark) >= quiet_s or now > deadline or not tids:
                break
        a, b = self._at(mark - 1.0), self._at(mark)
        busy = sum(b.get(t, 0.0) - a.get(t, 0.0) for t in tids)
        quiet = tids and now - max(last_busy, mark) >= quiet_s  # no model thread: unknown
        return {"halt_s": round(max(0.0, last_busy - mark), 3) if quiet else None,
                "threads": len(tids), "busy_before": round(busy, 2)}

    @staticmethod
    def _last_busy(samples: list[tuple[float, dict[int, float]]], tids: list[int]) -> float:
        """The end of the last WINDOW_S window in which tids ran more than RUN_SHARE of a
        core (a thread that has ended counts as idle)."""
        last, start = 0.0, 0
        for i, (t, cpu) in enumerate(samples):
            while samples[start][0] < t - WINDOW_S and start < i:
                start += 1
            t0, c0 = samples[start]
            if t - t0 <= 0:
                continue
            ran = sum(max(0.0, cpu.get(x, c0.get(x, 0.0)) - c0.get(x, 0.0)) for x in tids)
            if ran / (t - t0) > RUN_SHARE:
                last = t
        return last
