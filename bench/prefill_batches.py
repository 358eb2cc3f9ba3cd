"""Prefill batch length: reading rate and Stop latency of docchat's batched prompt read.

The llama.cpp backend reads a prompt in batches sized to take about BATCH_SECONDS each
(docchat/backends/llamacpp.py, _read). Stop halts a batch midway (MidBatchStop, llama.cpp's
abort callback), or, where that callback cannot be set, between batches, where shorter
batches halt sooner and cost some reading speed. For each batch length and each way of
stopping (--stops: midway, between), interleaved over --runs rounds, on the bundled
SmolLM2 GGUF:

- rate: a --tokens prompt read from an empty cache, tokens/s;
- halt: the same read stopped (request.cancel set, as the chat page's Stop does) at a random
  moment 0.3-1.5 s in; seconds from the stop to the read returning (what a Stop click waits
  for, after it reaches the server).

--busy N keeps N processes spinning 5 ms of every 10 (bench/backend_studies.HalfBusy: a
browser's share of the cores), as the chat page runs beside chromium.

    python3 bench/prefill_batches.py [--seconds 0.25,0.15] [--stops midway,between] [--runs 4]
                                     [--busy 0] [--json]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.backend_studies import HalfBusy  # noqa: E402
from docchat.backends import GenerationRequest, Message, llamacpp  # noqa: E402
from docchat.backends.llamacpp import LlamaCppBackend, MidBatchStop  # noqa: E402
from docchat.backends.threads import ThreadChooser  # noqa: E402


def _fresh_chooser(backend: LlamaCppBackend, seconds: float, sizes: dict) -> None:
    """A chooser for this batch length, its sizes carried over from an earlier read of the same
    length (as the app's long-lived backend has them), the cache emptied."""
    backend.threads = ThreadChooser(llamacpp.prompt_thread_candidates(None, None), seconds,
                                    (llamacpp.MIN_BATCH, llamacpp.MAX_BATCH))
    backend.threads.sizes.update(sizes.get(seconds, {}))
    backend.batch_tokens = None
    backend.llama.reset()


def read_once(backend: LlamaCppBackend, tokens: list[int], seconds: float, sizes: dict,
              stop_after: float | None, stopper: MidBatchStop) -> dict:
    """One read; stop_after: seconds into it when Stop comes (None: read to the end)."""
    _fresh_chooser(backend, seconds, sizes)
    backend.stopper = stopper
    request = GenerationRequest([Message("user", "x")])
    stop_at: list[float] = []
    if stop_after is not None:
        def stop() -> None:
            time.sleep(stop_after)
            stop_at.append(time.perf_counter())
            request.cancel.set()
        threading.Thread(target=stop, daemon=True).start()
    started = time.perf_counter()
    done = backend._read(tokens, len(tokens), request, request.cancel.is_set)
    ended = time.perf_counter()
    sizes[seconds] = dict(backend.threads.sizes)
    out = {"tokens": done, "seconds": round(ended - started, 3),
           "batches": len(backend.read_batches),
           "max_batch_s": round(max((b[3] for b in backend.read_batches), default=0.0), 3)}
    if stop_after is not None and stop_at:
        out["halt_s"] = round(ended - stop_at[0], 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", default="0.25,0.15", help="batch lengths to compare")
    ap.add_argument("--stops", default="midway,between",
                    help="midway: the backend's own Stop; between: at batch ends only")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--busy", type=int, default=0, help="processes half busy meanwhile")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    backend = LlamaCppBackend()
    stoppers = {"midway": backend.stopper, "between": MidBatchStop(None)}
    lengths = [(float(s), way) for s in args.seconds.split(",")
               for way in args.stops.split(",")]
    text = (Path(__file__).resolve().parent / "README.md").read_text(encoding="utf-8")
    tokens = backend.llama.tokenize(text.encode())[:args.tokens]
    rng = random.Random(0)
    sizes: dict = {}
    rows: dict[tuple, dict[str, list]] = {c: {"rate": [], "halt": [], "max_batch": []}
                                          for c in lengths}
    with HalfBusy(args.busy) if args.busy else contextlib.nullcontext():
        for s, way in lengths:  # one read each first: the chooser's sizes, as after the probe
            read_once(backend, tokens[:600], s, sizes, None, stoppers[way])
        for _ in range(args.runs):
            for s, way in lengths:
                r = read_once(backend, tokens, s, sizes, None, stoppers[way])
                rows[s, way]["rate"].append(r["tokens"] / r["seconds"])
                rows[s, way]["max_batch"].append(r["max_batch_s"])
                h = read_once(backend, tokens, s, sizes, rng.uniform(0.3, 1.5), stoppers[way])
                rows[s, way]["halt"].append(h.get("halt_s"))
    result = {"bench": "prefill_batches", "model": backend.model, "tokens": len(tokens),
              "runs": args.runs, "busy": args.busy, "cores": os.cpu_count(),
              "load_average": [round(x, 2) for x in os.getloadavg()], "lengths": {}}
    for s, way in lengths:
        row = rows[s, way]
        halts = [h for h in row["halt"] if h is not None]
        result["lengths"][f"{s}/{way}"] = {
            "rate_median": round(statistics.median(row["rate"]), 1),
            "rates": [round(x, 1) for x in row["rate"]],
            "halt_median_s": round(statistics.median(halts), 3) if halts else None,
            "halt_max_s": round(max(halts), 3) if halts else None,
            "max_batch_s": round(max(row["max_batch"]), 3)}
    if args.json:
        print(json.dumps(result))
        return
    print(f"{len(tokens)}-token read, {args.runs} rounds, {args.busy} half-busy processes")
    print("| batch s / stop | tok/s (median) | halt median s | halt max s | longest batch s |")
    print("|---|---:|---:|---:|---:|")
    for key, r in result["lengths"].items():
        print(f"| {key} | {r['rate_median']} | {r['halt_median_s']} | {r['halt_max_s']} | "
              f"{r['max_batch_s']} |")


if __name__ == "__main__":
    main()
