"""Pacing bench: preset schedules, smoothing and raw-mode overhead, in real time.

Sources, side by side in one run: the default llama.cpp backend (bundled SmolLM2) and a
synthetic source that bursts (4-12 pieces 5 ms apart) and stalls (150-400 ms).

1. Schedule: quick/long/code with catching up off (max_lag=0) so the schedule itself is
   measured; display ITL mean against the delay range's midpoint and against the target, the
   schedule's own expected mean (mid delay x code factor + punctuation pauses, per chunk).
   Goal: within 10% of the target.
2. Smoothing: the smooth preset's display ITL std against the same run's source ITL std (goal:
   cut by >= 70%) and the time it adds after the source ends (goal: < 10% of the source's time).
3. Long answers: the quick preset as shipped (no catch-up) against the old 2 s catch-up, on
   a long Chinese answer from a steady fast source (a piece every 14 ms, SmolLM2's decode
   rate here): display ITL against the schedule's target, chunks shown catching up, and the
   first chunk's hold (shown - arrived; goal <= 20 ms) in every run.
4. Raw overhead: reading the backend directly vs through Pacer(raw), per piece on an instant
   source (exact) and as a share of llama.cpp's per-token time (goal < 1%); plus a timed
   llama.cpp pair for reference (noisy: two separate generations).

Usage: python bench/pacing.py [--tokens 200] [--schedule-tokens 60] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from docchat.answer.pacing import Pacer, split_words
from docchat.answer.presets import get_preset
from docchat.backends import GenerationRequest, Message, get_backend

# How `python -m bench all` runs this script (bench/README.md, "Running every bench").
BENCH = {"quick": ["--tokens", "60", "--schedule-tokens", "16", "--long-pieces", "60"],
         "full": [], "env": {"DOCCHAT_N_THREADS": "1"}, "timeout_s": 360, "order": 50}
PROMPT = (
    "Write a few short paragraphs about how rivers shape the land. Use full sentences, "
    "commas, and start a new paragraph now and then."
)
SYNTH_TEXT = (
    "Rivers carve valleys, carry silt, and build deltas. Over time, floods spread soil across "
    "the plain; farmers follow the water.\n"
    "河流塑造了大地。它们切开山谷，搬运泥沙，并在入海口形成三角洲！"
    "人们沿河而居，城市也随之兴起。\nIn short: water moves, and the land answers. "
)


def synthetic(n: int, seed: int = 7):
    """Real-time pieces of mixed text (1-4 characters) in bursts with stalls between."""
    rng = random.Random(seed)
    text = SYNTH_TEXT * (1 + n // 40)
    pos = made = 0
    while made < n:
        for _ in range(rng.randint(4, 12)):
            if made >= n:
                return
            step = rng.randint(1, 4)
            yield text[pos : pos + step]
            pos, made = pos + step, made + 1
            time.sleep(0.005)
        time.sleep(rng.uniform(0.15, 0.4))


def make_source(kind: str, backend, n: int, preset: str = "quick"):
    """(source iterator, request or None) for one run."""
    if kind == "synthetic":
        return synthetic(n), None
    req = get_preset(preset).request([Message("user", PROMPT)], max_new_tokens=n)
    return backend.stream(req), req


LONG_ZH = (
    "河流塑造了大地。它们切开山谷，搬运泥沙，并在入海口形成三角洲！人们沿河而居，城市也随之兴起。"
    "洪水把肥沃的泥土铺满平原；农民跟着水走，开垦新的田地。"
)


def steady(n: int, gap: float = 0.014):
    """A long Chinese answer, 1-3 characters a piece, one piece every gap seconds."""
    text = LONG_ZH * (1 + n // 20)
    rng = random.Random(3)
    pos = 0
    for _ in range(n):
        step = rng.randint(1, 3)
        time.sleep(gap)
        yield text[pos : pos + step]
        pos += step


def first_hold_ms(pacer: Pacer) -> float | None:
    """How long the first chunk waited after its first piece arrived."""
    if not pacer.display_times or not pacer.model_times:
        return None
    return round((pacer.display_times[0] - pacer.model_times[0]) * 1000, 1)


def long_run(max_lag: float | None, n: int) -> dict:
    preset = get_preset("quick")
    cfg = preset.pacing if max_lag is None else preset.with_overrides(max_lag=max_lag).pacing
    pacer = Pacer(cfg)
    for _ in pacer.pace(steady(n)):
        pass
    shown = pacer.shown[1:]
    target = statistics.mean(x.nominal for x in shown) * 1000
    measured = statistics.mean(gaps(pacer.display_times))
    return {
        "preset": "quick",
        "max_lag": cfg.max_lag,
        "pieces": n,
        "chunks": len(pacer.shown),
        "target_ms": round(target, 1),
        "display_itl_ms": round(measured, 1),
        "err_vs_target_pct": round(100 * (measured - target) / target, 1),
        "catching_up_pct": round(100 * sum(x.catching_up for x in shown) / max(len(shown), 1), 1),
        "min_gap_ms": round(min(gaps(pacer.display_times)), 1),
        "first_hold_ms": first_hold_ms(pacer),
    }


def gaps(times: list[float]) -> list[float]:
    return [(b - a) * 1000 for a, b in zip(times, times[1:])]


def schedule_run(kind: str, backend, preset: str, n: int) -> dict:
    cfg = get_preset(preset).with_overrides(max_lag=0).pacing
    source, req = make_source(kind, backend, n, preset)
    pacer = Pacer(cfg)
    for _ in pacer.pace(source, request=req):
        pass
    shown = pacer.shown[1:]
    measured = statistics.mean(gaps(pacer.display_times))
    target = statistics.mean(s.nominal for s in shown) * 1000
    # Chunks that were shown the moment they were complete: the display waited on the source.
    waited = sum(1 for s in shown if s.shown_at - s.ready_at < 0.002)
    return {
        "source": kind,
        "preset": preset,
        "chunks": len(pacer.shown),
        "source_bound_pct": round(100 * waited / max(len(shown), 1), 1),
        "mid_ms": round(cfg.mid_delay * 1000, 1),
        "target_ms": round(target, 1),
        "display_itl_ms": round(measured, 1),
        "err_vs_target_pct": round(100 * (measured - target) / target, 1),
        "err_vs_mid_pct": round(
            100 * (measured - cfg.mid_delay * 1000) / (cfg.mid_delay * 1000), 1
        ),
        "first_hold_ms": first_hold_ms(pacer),
    }


def smooth_run(kind: str, backend, n: int) -> dict:
    source, req = make_source(kind, backend, n)
    t0 = time.perf_counter()
    pacer = Pacer(get_preset("smooth").pacing)
    for _ in pacer.pace(source, request=req, started_at=t0):
        pass
    src_std = statistics.pstdev(gaps(pacer.model_times))
    disp_std = statistics.pstdev(gaps(pacer.display_times))
    src_total = pacer.model_times[-1] - t0
    added = pacer.display_times[-1] - pacer.model_times[-1]
    return {
        "source": kind,
        "pieces": len(pacer.model_times),
        "chunks": len(pacer.display_times),
        "source_itl_std_ms": round(src_std, 1),
        "display_itl_std_ms": round(disp_std, 1),
        "std_cut_pct": round(100 * (1 - disp_std / src_std), 1) if src_std else None,
        "source_total_s": round(src_total, 3),
        "added_s": round(added, 3),
        "added_pct": round(100 * added / src_total, 1),
    }


def raw_overhead(backend, n: int) -> dict:
    pieces = ["tok"] * 200_000
    best = {}
    for name in ("direct", "raw"):
        runs = []
        for _ in range(5):
            t = time.perf_counter()
            if name == "direct":
                for _ in iter(pieces):
                    pass
            else:
                for _ in Pacer(get_preset("raw").pacing).pace(iter(pieces)):
                    pass
            runs.append(time.perf_counter() - t)
        best[name] = min(runs) / len(pieces)
    per_piece_us = (best["raw"] - best["direct"]) * 1e6
    timed = {}
    for name in ("direct", "raw"):
        source, req = make_source("llamacpp", backend, n)
        t = time.perf_counter()
        count = sum(
            1
            for _ in (
                source
                if name == "direct"
                else Pacer(get_preset("raw").pacing).pace(source, request=req)
            )
        )
        timed[name] = (time.perf_counter() - t, count)
    token_ms = timed["direct"][0] / max(timed["direct"][1], 1) * 1000
    return {
        "per_piece_overhead_us": round(per_piece_us, 3),
        "llamacpp_ms_per_piece": round(token_ms, 2),
        "overhead_pct_of_llamacpp": round(100 * per_piece_us / 1000 / token_ms, 4),
        "llamacpp_direct_s": round(timed["direct"][0], 3),
        "llamacpp_raw_s": round(timed["raw"][0], 3),
        "llamacpp_pieces": [timed["direct"][1], timed["raw"][1]],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=200, help="pieces per smoothing/raw run")
    ap.add_argument(
        "--schedule-tokens", type=int, default=60, help="pieces per preset schedule run"
    )
    ap.add_argument("--long-pieces", type=int, default=240, help="pieces of the long answer")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    started = time.perf_counter()
    backend = get_backend("llamacpp")
    for _ in backend.stream(GenerationRequest([Message("user", "Hi")], max_new_tokens=4)):
        pass  # warm up
    split_words("预热中文分词")  # load jieba's dictionary now, not inside the first timed run
    sources = ("llamacpp", "synthetic")
    result = {
        "model": backend.model,
        # Synthetic pieces are 1-4 characters, so it takes ~2.5x as many for the same chunks.
        "schedule": [
            schedule_run(
                k, backend, p, int(args.schedule_tokens * (2.5 if k == "synthetic" else 1))
            )
            for k in sources
            for p in ("quick", "long", "code")
        ],
        "smooth": [smooth_run(k, backend, args.tokens) for k in sources],
        "long": [long_run(lag, args.long_pieces) for lag in (None, 2.0)],
        "raw": raw_overhead(backend, args.tokens),
    }
    result["bench_s"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(result))
        return
    print(f"Pacing bench ({result['model']}, {result['bench_s']} s)\n")
    print(
        f"{'source':10} {'preset':6} {'chunks':>6} {'mid ms':>7} {'target':>7} {'shown':>7} "
        f"{'vs target':>9} {'vs mid':>7} {'src-bound':>9} {'1st hold':>8}"
    )
    for r in result["schedule"]:
        print(
            f"{r['source']:10} {r['preset']:6} {r['chunks']:6} {r['mid_ms']:7} {r['target_ms']:7} "
            f"{r['display_itl_ms']:7} {r['err_vs_target_pct']:8}% {r['err_vs_mid_pct']:6}% "
            f"{r['source_bound_pct']:8}% {r['first_hold_ms']:6}ms"
        )
    print(
        f"\nlong Chinese answer, quick preset: {'max_lag':>7} {'chunks':>6} {'target':>7} "
        f"{'shown':>7} {'vs target':>9} {'catching up':>11} {'min gap':>7} {'1st hold':>8}"
    )
    for r in result["long"]:
        print(
            f"{'':34} {r['max_lag']:7} {r['chunks']:6} {r['target_ms']:7} {r['display_itl_ms']:7} "
            f"{r['err_vs_target_pct']:8}% {r['catching_up_pct']:10}% {r['min_gap_ms']:7} "
            f"{r['first_hold_ms']:6}ms"
        )
    print(
        f"\n{'source':10} {'pieces':>6} {'src std':>8} {'disp std':>8} {'std cut':>8} "
        f"{'src s':>7} {'added s':>8} {'added':>6}"
    )
    for r in result["smooth"]:
        print(
            f"{r['source']:10} {r['pieces']:6} {r['source_itl_std_ms']:8} "
            f"{r['display_itl_std_ms']:8} {r['std_cut_pct']:7}% {r['source_total_s']:7} "
            f"{r['added_s']:8} {r['added_pct']:5}%"
        )
    raw = result["raw"]
    print(
        f"\nraw mode: +{raw['per_piece_overhead_us']} us/piece = "
        f"{raw['overhead_pct_of_llamacpp']}% of llama.cpp's {raw['llamacpp_ms_per_piece']} "
        f"ms/piece; timed pair direct "
        f"{raw['llamacpp_direct_s']} s vs raw {raw['llamacpp_raw_s']} s"
    )


if __name__ == "__main__":
    main()
