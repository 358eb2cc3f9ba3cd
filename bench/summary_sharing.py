"""Chat answers during a summary run: how long a question waits for the model.

Usage: python bench/summary_sharing.py [--json] [--n-ctx N] [--max-tokens N] [--questions N]
                                       [--no-give-way] [FILE]
Default file: tests/data/summarize/GPL-3.txt (11 pages: map-reduce in a 2,048-token window).

The default llama.cpp backend (bundled SmolLM2-135M) is loaded once, as the app does. A
question (32 new tokens) is asked first with the model idle, then --questions times while
a SummaryJobs run summarises FILE in the background, each asked right after a summary step
began. Summary steps and chat requests take turns in the one GenerationQueue; a step in its
first half gives way to a waiting question (once; it is then asked again), so the question
waits for part of a step at most (--no-give-way: for the rest of the step). The table shows
the questions' queue wait and first-token time beside the summary steps' durations.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from docchat.backends import GenerationRequest, Message, get_backend  # noqa: E402
from docchat.config import Settings  # noqa: E402
from docchat.library.store import SessionStore  # noqa: E402
from docchat.summaries.jobs import RunOptions, SummaryJobs  # noqa: E402

# How `python -m bench all` runs this script (bench/README.md, "Running every bench").
BENCH = {"quick": ["tests/data/summarize/Apache-2.0.txt", "--questions", "1",
                   "--max-tokens", "32"],
         "full": [], "env": {"DOCCHAT_N_THREADS": "1"}, "timeout_s": 420, "order": 80}
QUESTION = [Message("system", "You answer briefly."),
            Message("user", "In one sentence: what is a software licence?")]


class StepTimer:
    """Wraps the backend: times every summary step (queue wait excluded)."""

    def __init__(self, backend) -> None:
        self._backend = backend
        self.steps: list[float] = []
        self.started = threading.Event()

    def __getattr__(self, name):
        return getattr(self._backend, name)

    def stream(self, request):
        start = time.perf_counter()
        try:
            yield from self._backend.stream(request)
        finally:
            self.steps.append(time.perf_counter() - start - request.stats.queue_ms / 1000)


def ask(backend) -> dict:
    """One chat-like request: its wait in the queue, first token and total (seconds)."""
    places: list[int] = []
    request = GenerationRequest(messages=list(QUESTION), max_new_tokens=32,
                                on_queue=places.append)
    start = time.perf_counter()
    first = None
    for _ in backend.stream(request):
        if first is None:
            first = time.perf_counter() - start
    return {"queue_s": round(request.stats.queue_ms / 1000, 2),
            "first_token_s": round(first or 0.0, 2),
            "total_s": round(time.perf_counter() - start, 2),
            "ahead": max(places) if places else 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?",
                        default=str(ROOT / "tests" / "data" / "summarize" / "GPL-3.txt"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--n-ctx", type=int, default=2048)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--no-give-way", action="store_true",
                        help="summary steps run to their end even when questions wait")
    args = parser.parse_args()

    settings = Settings.from_env(n_ctx=args.n_ctx)
    backend = get_backend(settings.backend, **settings.backend_options())
    idle = ask(backend)
    timed = StepTimer(backend)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "docchat.db"
        job = SummaryJobs().start([(Path(args.file), Path(args.file).name)], timed,
                                  partial(SessionStore.open, db), Path(tmp) / "out",
                                  RunOptions(max_new_tokens=args.max_tokens,
                                             give_way=not args.no_give_way))
        busy = []
        steps_seen = 0
        while not job.done and len(busy) < args.questions:
            view = job.snapshot()
            cur = view.current
            # Ask right after a step ended (the next one has just taken its turn).
            if cur is not None and cur.step > steps_seen:
                steps_seen = cur.step
                time.sleep(0.2)
                busy.append(ask(backend))
            time.sleep(0.05)
        job.join()
        view = job.snapshot()
    steps = timed.steps
    result = {
        "backend": f"{backend.name}: {Path(str(backend.model)).name}",
        "n_ctx": backend.context_window, "n_threads": os.environ.get("DOCCHAT_N_THREADS"),
        "give_way": not args.no_give_way,
        "summary": {"state": view.state, "steps": len(steps),
                    "step_s_mean": round(statistics.mean(steps), 2) if steps else None,
                    "step_s_max": round(max(steps), 2) if steps else None,
                    "seconds": round(view.elapsed_s, 1)},
        "idle_question": idle, "questions_during_run": busy,
        "max_wait_over_max_step": round(max(q["queue_s"] for q in busy) / max(steps), 2)
        if busy and steps else None,
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['backend']}, window {result['n_ctx']}, "
          f"DOCCHAT_N_THREADS={result['n_threads']}, give way: {result['give_way']}")
    s = result["summary"]
    print(f"summary: {s['state']}, {s['steps']} steps, step mean {s['step_s_mean']} s, "
          f"max {s['step_s_max']} s, {s['seconds']} s in all")
    print(f"{'question':<12} {'ahead':>5} {'queue s':>8} {'first token s':>14} {'total s':>8}")
    for label, q in [("idle", idle)] + [(f"during {i + 1}", q) for i, q in enumerate(busy)]:
        print(f"{label:<12} {q['ahead']:>5} {q['queue_s']:>8} {q['first_token_s']:>14} "
              f"{q['total_s']:>8}")
    print(f"longest wait / longest summary step: {result['max_wait_over_max_step']}")


if __name__ == "__main__":
    main()
