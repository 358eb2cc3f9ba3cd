"""Backend bench: docchat's generation paths against raw llama-cpp-python, in one run.

Side by side on the bundled SmolLM2 GGUF with a ~2,000-token prompt and 128 new tokens:
1. raw: Llama.create_completion(stream=True) on the very prompt tokens docchat feeds;
2. llamacpp: docchat's LlamaCppBackend.stream on the same Llama instance;
3. openai: docchat's OpenAIBackend against llama-cpp-python's server (same GGUF, a
   subprocess started here; its token counts come over HTTP).
Runs alternate raw/llamacpp/openai; each run's prompt opens with its own run number, and
the KV cache is reset before each in-process run, so every run evaluates the whole prompt
(the server would otherwise reuse the previous run's prompt from its cache). Reported: medians of time to first token (TTFT)
and decode speed (tokens after the first / time after the first).
Goals: llamacpp decode >= 0.97 x raw, and <= 30 ms added TTFT.

Usage: python bench/backend.py [--runs 3] [--prompt-tokens 2000] [--new-tokens 128]
       [--threads N] [--no-server] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from docchat.backends import GenerationRequest, Message  # noqa: E402
from docchat.backends.llamacpp import LlamaCppBackend, bundled_model_path  # noqa: E402

FILLER = ("Rivers carve valleys, carry silt and build deltas. Over time floods spread soil "
          "across the plain, and farmers follow the water to new fields. ")


def build_messages(backend: LlamaCppBackend, prompt_tokens: int, run: int) -> list[Message]:
    """A question after a context trimmed to make the whole prompt about prompt_tokens."""
    words = [f"Run {run}."] + (FILLER * (prompt_tokens // 20 + 10)).split(" ")
    question = "\n\nQuestion: what do rivers do to the land? Answer in detail."
    lo, hi = 1, len(words)
    while lo < hi:  # largest context that keeps the prompt within prompt_tokens
        mid = (lo + hi + 1) // 2
        msgs = [Message("user", " ".join(words[:mid]) + question)]
        if backend.count_prompt_tokens(msgs) <= prompt_tokens:
            lo = mid
        else:
            hi = mid - 1
    return [Message("user", " ".join(words[:lo]) + question)]


def timed(pieces) -> tuple[float, float, int]:
    """(TTFT seconds, seconds after the first piece, pieces) of an iterator of pieces."""
    start = time.perf_counter()
    first, count = None, 0
    for _ in pieces:
        count += 1
        if first is None:
            first = time.perf_counter()
    end = time.perf_counter()
    return (first or end) - start, end - (first or end), count


def run_raw(backend: LlamaCppBackend, tokens: list[int], new: int) -> dict:
    backend.llama.reset()
    chunks = backend.llama.create_completion(tokens, max_tokens=new, temperature=0.0,
                                             repeat_penalty=1.0, stream=True)
    ttft, rest, n = timed(c for c in chunks if c["choices"][0]["text"])
    return {"ttft": ttft, "tokens": n, "decode": (n - 1) / rest if rest else 0.0}


def run_docchat(backend, messages, new: int, reset: bool = True) -> dict:
    if reset:
        backend.llama.reset()
    request = GenerationRequest(messages=messages, max_new_tokens=new)
    ttft, rest, _ = timed(backend.stream(request))
    n = request.stats.completion_tokens
    return {"ttft": ttft, "tokens": n, "decode": (n - 1) / rest if rest else 0.0}


def start_server(threads: int, n_ctx: int):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "docchat.backends.llamacpp", "--model", str(bundled_model_path()),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
         "--n_threads", str(threads), "--n_threads_batch", str(threads),
         "--interrupt_requests", "False", "--cache", "False"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import httpx

    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(600):
        try:
            if httpx.get(url + "/models", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("llama-cpp-python server did not start")


def median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--prompt-tokens", type=int, default=2000)
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--no-server", action="store_true", help="skip the openai path")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    n_ctx = args.prompt_tokens + args.new_tokens + 64
    backend = LlamaCppBackend(n_ctx=n_ctx, n_threads=args.threads)
    prompts = [build_messages(backend, args.prompt_tokens, run) for run in range(3 * args.runs + 1)]
    server = openai_backend = None
    if not args.no_server:
        from docchat.backends.openai_http import OpenAIBackend

        server, url = start_server(args.threads, n_ctx)
        openai_backend = OpenAIBackend(url, context_window=n_ctx, timeout=600)
    results: dict[str, list[dict]] = {"raw": [], "llamacpp": [], "openai": []}
    try:
        # Warm-up (untimed): page in the weights, start the server's threads.
        short = [Message("user", "Say hi.")]
        run_raw(backend, backend.prompt_tokens(short), 4)
        run_docchat(backend, short, 4)
        if openai_backend is not None:
            run_docchat(openai_backend, short, 4, reset=False)
        fresh = iter(prompts)
        for _ in range(args.runs):
            results["raw"].append(
                run_raw(backend, backend.prompt_tokens(next(fresh)), args.new_tokens))
            results["llamacpp"].append(run_docchat(backend, next(fresh), args.new_tokens))
            if openai_backend is not None:
                results["openai"].append(
                    run_docchat(openai_backend, next(fresh), args.new_tokens, reset=False))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)

    sizes = [backend.count_prompt_tokens(m) for m in prompts]
    # What docchat does before the model starts that the raw path does not: render the chat
    # template and tokenize (raw gets the tokens ready-made). Deterministic, so it resolves
    # the TTFT difference that prefill noise hides.
    prep = []
    for m in prompts:
        t = time.perf_counter()
        backend.prompt_tokens(m)
        prep.append((time.perf_counter() - t) * 1000)
    summary = {"model": backend.model, "prompt_tokens": statistics.median(sizes),
               "new_tokens": args.new_tokens, "threads": args.threads, "runs": args.runs,
               "pre_generation_ms": round(statistics.median(prep), 2), "paths": {}}
    raw_decode, raw_ttft = median(results["raw"], "decode"), median(results["raw"], "ttft")
    for name, rows in results.items():
        if not rows:
            continue
        decode, ttft = median(rows, "decode"), median(rows, "ttft")
        summary["paths"][name] = {
            "ttft_s": round(ttft, 4), "decode_tok_s": round(decode, 2),
            "tokens": rows[0]["tokens"], "decode_ratio": round(decode / raw_decode, 3),
            "added_ttft_ms": round((ttft - raw_ttft) * 1000, 1),
            "runs": [{k: round(v, 4) for k, v in r.items()} for r in rows]}
    llamacpp = summary["paths"]["llamacpp"]
    summary["goals"] = {"decode_ratio_ge_0.97": llamacpp["decode_ratio"] >= 0.97,
                        "added_ttft_le_30ms": llamacpp["added_ttft_ms"] <= 30}
    if args.json:
        print(json.dumps(summary))
        return
    print(f"{summary['model']}: {summary['prompt_tokens']:g} prompt tokens, {args.new_tokens} new, "
          f"{args.threads} threads, median of {args.runs} runs")
    print(f"{'path':<10}{'TTFT s':>10}{'decode tok/s':>14}{'x raw':>8}{'+TTFT ms':>10}")
    for name, row in summary["paths"].items():
        print(f"{name:<10}{row['ttft_s']:>10.3f}{row['decode_tok_s']:>14.2f}"
              f"{row['decode_ratio']:>8.3f}{row['added_ttft_ms']:>10.1f}")
    print(f"docchat's work before the model starts (template + tokenize): "
          f"{summary['pre_generation_ms']:.2f} ms median")
    print("goals:", ", ".join(f"{k}={'met' if v else 'MISSED'}"
                              for k, v in summary["goals"].items()))


if __name__ == "__main__":
    main()
