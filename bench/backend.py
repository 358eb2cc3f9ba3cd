"""Backend bench: docchat's generation paths against raw llama-cpp-python, in one run.

Side by side on the bundled SmolLM2 GGUF with a ~2,000-token prompt and 128 new tokens:
1. raw: Llama.create_completion(stream=True) on the very prompt tokens docchat feeds;
2. llamacpp: docchat's LlamaCppBackend.stream on the same Llama instance;
3. openai: docchat's OpenAIBackend against llama-cpp-python's server (same GGUF, a
   subprocess started here; its token counts come over HTTP).
Runs alternate raw/llamacpp/openai; each run's prompt opens with its own run number, and
the KV cache is reset before each in-process run, so every run evaluates the whole prompt
(the server would otherwise reuse the previous run's prompt from its cache). Reported:
medians of time to first token (TTFT) and decode speed (tokens after the first / time
after the first).
Goals: llamacpp decode >= 0.97 x raw, and <= 30 ms added TTFT.

Usage: python bench/backend.py [--runs 3] [--prompt-tokens 2000] [--new-tokens 128]
       [--threads N] [--no-server] [--json]

Studies (each a table, or one JSON object with --json):
  --study threads  docchat's decode (threads chosen by measurement) against raw
                   llama-cpp-python with 1 thread and with every core, interleaved, idle
                   and with one core kept busy by a spinning process (bench/backend_studies.py)
  --study threads-fixed  prefill and decode tok/s with 1 and 2 threads (n_threads_batch
                   for the prompt, n_threads for decoding), idle and with one core busy:
                   the data behind default_threads().
  --study reuse    a first question and a follow-up against llama-cpp-python's server, the
                   append-only layout against excerpts in the system message: reuse from
                   the usage it reports, else from its log.
  --study budget   the load-time probe's prompt budget for --target seconds (15), then the
                   real time to first token of a prompt that long.
  --study prefill  docchat's batched, interruptible prefill against raw llama-cpp-python
                   (one Llama.eval of the whole prompt) at several prompt lengths; prefill
                   rate by batch size; Stop latency during prefill and during decoding;
                   a follow-up's reused prefix and its time to first token.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from docchat.backends import GenerationRequest, Message
from docchat.backends.llamacpp import LlamaCppBackend, bundled_model_path

ROOT = Path(__file__).resolve().parent.parent

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


def start_server(threads: int, n_ctx: int, log: Path | None = None):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "docchat.backends.llamacpp", "--model", str(bundled_model_path()),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
         "--n_threads", str(threads), "--n_threads_batch", str(threads),
         "--interrupt_requests", "False", "--cache", "False"],
        cwd=ROOT, stdout=subprocess.DEVNULL,
        stderr=log.open("wb") if log is not None else subprocess.DEVNULL)
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


class Busy:
    """One process spinning on a core while the block runs (a busy shared machine)."""

    def __enter__(self):
        self.process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        self.process.kill()
        self.process.wait()


def filler_tokens(backend: LlamaCppBackend, n: int) -> list[int]:
    text = (FILLER * (n // 20 + 10)).encode()
    return backend.llama.tokenize(text, add_bos=True)[:n]


def raw_prefill(backend: LlamaCppBackend, tokens: list[int], batch: int | None = None) -> float:
    """Seconds for Llama.eval to read tokens from a cold cache, in batches of batch."""
    llama = backend.llama
    llama.reset()
    start = time.perf_counter()
    if batch is None:
        llama.eval(tokens)
    else:
        for i in range(0, len(tokens), batch):
            llama.eval(tokens[i:i + batch])
    return time.perf_counter() - start


def raw_decode(backend: LlamaCppBackend, n: int) -> float:
    """Tokens/s of greedy decoding n tokens after a short prompt."""
    llama = backend.llama
    tokens = filler_tokens(backend, 64)
    llama.reset()
    steps = llama.generate(tokens, temp=0.0, top_p=1.0, min_p=0.0, repeat_penalty=1.0)
    next(steps)
    start = time.perf_counter()
    for _ in range(n):
        next(steps)
    took = time.perf_counter() - start
    steps.close()
    return n / took


def study_threads(args) -> dict:
    import llama_cpp

    backend = LlamaCppBackend(n_ctx=2048, n_threads=2, n_threads_batch=2, probe_tokens=0)
    tokens = filler_tokens(backend, args.study_prompt)
    raw_prefill(backend, tokens[:64])  # warm-up: page the weights in
    rows = []
    for load in ("idle", "one core busy"):
        guard = Busy() if load != "idle" else contextlib.nullcontext()
        with guard:
            for threads in (1, 2):
                llama_cpp.llama_set_n_threads(backend.llama.ctx, threads, threads)
                prefill = [len(tokens) / raw_prefill(backend, tokens) for _ in range(args.runs)]
                decode = [raw_decode(backend, args.new_tokens) for _ in range(args.runs)]
                rows.append({"load": load, "threads": threads,
                             "prefill_tok_s": round(statistics.median(prefill), 1),
                             "decode_tok_s": round(statistics.median(decode), 1)})
    return {"study": "threads", "model": backend.model, "cores": os.cpu_count(),
            "prompt_tokens": len(tokens), "new_tokens": args.new_tokens, "runs": args.runs,
            "rows": rows}


def stop_latency(backend: LlamaCppBackend, tokens_in_prompt: int, during: str,
                 after_s: float = 1.0) -> dict:
    """Seconds from Stop (another thread, as the app's button) to the end of the stream.

    during="prefill": Stop after_s into reading the prompt; "decode": after_s after the
    first piece.
    """
    import threading

    messages = build_messages(backend, tokens_in_prompt, run=int(time.time() * 1000))
    backend.llama.reset()
    state: dict = {}

    def stop() -> None:
        state["at"] = time.perf_counter()
        request.cancel.set()

    def on_progress(p) -> None:
        if during == "prefill" and "timer" not in state:
            state["timer"] = threading.Timer(after_s, stop)
            state["timer"].start()

    request = GenerationRequest(messages=messages, max_new_tokens=400, on_progress=on_progress)
    for _ in backend.stream(request):
        if during == "decode" and "timer" not in state:
            state["timer"] = threading.Timer(after_s, stop)
            state["timer"].start()
    end = time.perf_counter()
    state["timer"].cancel()
    if "at" not in state:
        return {"stop_s": None, "evaluated": backend.llama.n_tokens,
                "prompt_tokens": request.stats.prompt_tokens, "note": "ended before Stop"}
    return {"stop_s": round(end - state["at"], 4), "evaluated": backend.llama.n_tokens,
            "prompt_tokens": request.stats.prompt_tokens,
            "completion_tokens": request.stats.completion_tokens}


def study_prefill(args) -> dict:
    backend = LlamaCppBackend(n_ctx=8192, n_threads=args.decode_threads,
                              n_threads_batch=args.threads)
    probe = backend.prefill_rate()
    tokens = filler_tokens(backend, 4096)
    raw_prefill(backend, tokens[:64])
    by_batch = []
    for batch in (16, 32, 64, 128, 512):
        took = statistics.median(raw_prefill(backend, tokens[:1024], batch)
                                 for _ in range(args.runs))
        by_batch.append({"batch": batch, "tok_s": round(1024 / took, 1),
                         "batch_s": round(took / (1024 / batch), 3)})
    lengths = []
    for n in args.lengths:
        raw = statistics.median(raw_prefill(backend, tokens[:n]) for _ in range(args.runs))
        ours = []
        for run in range(args.runs):
            messages = build_messages(backend, n, run=1000 + run)
            backend.llama.reset()
            request = GenerationRequest(messages=messages, max_new_tokens=1)
            list(backend.stream(request))
            ours.append((request.stats.prefill_ms / 1000, request.stats.prompt_tokens))
        took = statistics.median(t for t, _ in ours)
        lengths.append({"prompt_tokens": n, "raw_s": round(raw, 3),
                        "docchat_s": round(took, 3), "ratio": round(took / raw, 3),
                        "docchat_batch": backend.batch_tokens})
    # A follow-up: same system prompt, one more turn.
    system = build_messages(backend, args.lengths[-1], run=7)[0]
    first = GenerationRequest(messages=[system, Message("user", "What do rivers do?")],
                              max_new_tokens=16)
    backend.llama.reset()
    answer = "".join(backend.stream(first))
    follow = GenerationRequest(messages=[system, Message("user", "What do rivers do?"),
                                         Message("assistant", answer),
                                         Message("user", "And floods?")], max_new_tokens=4)
    t = time.perf_counter()
    next(iter(backend.stream(follow)), None)
    follow_ttft = time.perf_counter() - t
    stops = {during: [stop_latency(backend, args.lengths[-1], during) for _ in range(args.runs)]
             for during in ("prefill", "decode")}
    return {"study": "prefill", "model": backend.model, "threads_batch": args.threads,
            "threads_decode": args.decode_threads, "probe_rate_tok_s": round(probe or 0, 1),
            "rate_after_tok_s": round(backend.prefill_rate() or 0, 1),
            "by_batch_1024_tokens": by_batch, "lengths": lengths,
            "follow_up": {"prompt_tokens": follow.stats.prompt_tokens,
                          "reused": follow.stats.prompt_reused,
                          "first_question_prefill_s": round(first.stats.prefill_ms / 1000, 3),
                          "follow_up_ttft_s": round(follow_ttft, 3)},
            "stop": {k: {"median_s": statistics.median(r["stop_s"] for r in v
                                                       if r["stop_s"] is not None),
                         "max_s": max(r["stop_s"] for r in v if r["stop_s"] is not None),
                         "runs": v}
                     for k, v in stops.items()}}


def print_study(result: dict) -> None:
    if result["study"] == "threads":
        print(f"{result['model']}: {result['prompt_tokens']} prompt tokens, "
              f"{result['new_tokens']} decoded, median of {result['runs']}, "
              f"{result['cores']} cores")
        print(f"{'load':<16}{'threads':>8}{'prefill tok/s':>15}{'decode tok/s':>14}")
        for r in result["rows"]:
            print(f"{r['load']:<16}{r['threads']:>8}{r['prefill_tok_s']:>15.1f}"
                  f"{r['decode_tok_s']:>14.1f}")
        return
    print(f"{result['model']}: prompt threads {result['threads_batch']}, decode threads "
          f"{result['threads_decode']}; probe rate {result['probe_rate_tok_s']} tok/s, "
          f"running average after the runs {result['rate_after_tok_s']} tok/s")
    print(f"{'batch':>6}{'tok/s':>8}{'s/batch':>9}   (1,024 tokens, raw Llama.eval)")
    for r in result["by_batch_1024_tokens"]:
        print(f"{r['batch']:>6}{r['tok_s']:>8.1f}{r['batch_s']:>9.3f}")
    print(f"{'prompt':>7}{'raw s':>8}{'docchat s':>11}{'x raw':>7}{'batch':>7}")
    for r in result["lengths"]:
        print(f"{r['prompt_tokens']:>7}{r['raw_s']:>8.2f}{r['docchat_s']:>11.2f}"
              f"{r['ratio']:>7.2f}{r['docchat_batch']:>7}")
    f = result["follow_up"]
    print(f"follow-up: {f['reused']} of {f['prompt_tokens']} prompt tokens reused; first "
          f"question prefill {f['first_question_prefill_s']:.2f} s, follow-up TTFT "
          f"{f['follow_up_ttft_s']:.2f} s")
    for k, v in result["stop"].items():
        print(f"Stop during {k}: median {v['median_s'] * 1000:.0f} ms, max "
              f"{v['max_s'] * 1000:.0f} ms "
              f"(evaluated {[r['evaluated'] for r in v['runs']]} of "
              f"{v['runs'][0]['prompt_tokens']} prompt tokens)")


def run_study(args) -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bench import backend_studies as studies

    new = {"threads": lambda: studies.study_threads(args, Busy),
           "reuse": lambda: studies.study_reuse(args, start_server),
           "budget": lambda: studies.study_budget(args, build_messages),
           "flash": lambda: studies.study_flash(args)}
    if args.study in new:
        result = new[args.study]()
        show = studies.print_result
    else:
        result = (study_threads if args.study == "threads-fixed" else study_prefill)(args)
        show = print_study
    if args.json:
        print(json.dumps(result))
    else:
        show(result)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", choices=("threads", "threads-fixed", "prefill", "reuse", "flash",
                                            "budget"))
    parser.add_argument("--target", type=float, default=15.0, help="budget study: seconds")
    parser.add_argument("--log-dir", help="reuse study: where the server's log goes (/tmp)")
    parser.add_argument("--study-prompt", type=int, default=1024,
                        help="threads study: prompt tokens")
    parser.add_argument("--lengths", type=int, nargs="+", default=[512, 2048, 4096],
                        help="prefill study: prompt lengths")
    parser.add_argument("--decode-threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--loads", nargs="*", default=None,
                        help="threads study: only these loads ('idle', 'one core busy', "
                             "'every core half busy')")
    parser.add_argument("--prompt-tokens", type=int, default=2000)
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--no-server", action="store_true", help="skip the openai path")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.study:
        run_study(args)
        return

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
