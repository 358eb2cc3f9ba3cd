"""bench/backend.py's issue-21 studies: decode threads, server-side reuse, first-token budget.

  threads  docchat's decode (DecodeThreadChooser) against raw llama-cpp-python decoding
           with 1 thread and with every core, interleaved ours/raw/ours/raw, idle, with
           one core kept busy by a spinning process, and with every core half busy (a
           browser's share); prompt reading likewise (ThreadChooser against Llama.eval).
  reuse    llama-cpp-python's server (python -m docchat.backends.llamacpp): a first
           question and a follow-up through OpenAIBackend, for the append-only layout (each
           turn's excerpts in its user message) and for excerpts gathered in the system
           message; reuse from the usage the server reports, else from its own log
           (llama_perf_context_print's "prompt eval ... / N tokens": N evaluated).
  flash    prompt reading by position, llama.cpp's flash attention off and on.
  budget   the first question's budget: what the load-time probe says is read in the
           target (15 s), then the time to first token of a prompt that long, cold cache.
Every result carries the load average: on a shared machine the figures are noisy.
"""
from __future__ import annotations

import contextlib
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from docchat.backends import GenerationRequest, Message
from docchat.backends.llamacpp import LlamaCppBackend
from docchat.backends.threads import usable_cores


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _raw_decode(backend: LlamaCppBackend, prompt: list[int], n: int, threads: int) -> float:
    """Raw llama-cpp-python, as the default bench's raw path: create_completion(stream=True)
    with `threads` threads; tokens/s after the first piece."""
    llama = backend.llama
    llama._ctx.set_n_threads(threads, threads)
    backend._threads_set = None  # docchat sets its own threads again next time
    llama.reset()
    chunks = llama.create_completion(prompt, max_tokens=n, temperature=0.0,
                                     repeat_penalty=1.0, stream=True)
    first, count = None, 0
    for chunk in chunks:
        if chunk["choices"][0]["text"]:
            count += 1
            first = first or time.perf_counter()
    end = time.perf_counter()
    return (count - 1) / (end - first) if first and end > first else 0.0


def _ours_decode(backend: LlamaCppBackend, messages: list[Message], n: int) -> tuple[float, int]:
    """docchat's stream: (tokens/s after the first piece, decode threads it ended on)."""
    backend.llama.reset()
    request = GenerationRequest(messages=messages, max_new_tokens=n)
    first, count = None, 0
    for _ in backend.stream(request):
        count += 1
        first = first or time.perf_counter()
    end = time.perf_counter()
    # Pieces, as the raw path counts its chunks (a piece is a token, or a finished character).
    return (count - 1) / (end - first) if first and end > first else 0.0, backend.decode_threads


class HalfBusy:
    """Every core half busy (a process per core spinning 5 ms of each 10): the share of
    both cores a browser showing the page takes, which no thread count can step around.
    processes: how many such processes (default: one per usable core)."""

    CODE = ("import time\nwhile True:\n    t = time.perf_counter()\n"
            "    while time.perf_counter() - t < 0.005: pass\n    time.sleep(0.005)")

    def __init__(self, processes: int | None = None) -> None:
        self.count = usable_cores() if processes is None else processes

    def __enter__(self):
        self.processes = [subprocess.Popen([sys.executable, "-c", self.CODE])
                          for _ in range(self.count)]
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        for p in self.processes:
            p.kill()
            p.wait()


def _raw_read(backend: LlamaCppBackend, tokens: list[int], threads: int) -> float:
    """Raw Llama.eval of the prompt from an empty cache with `threads` threads; tokens/s."""
    llama = backend.llama
    llama._ctx.set_n_threads(threads, threads)
    backend._threads_set = None
    llama.reset()
    t = time.perf_counter()
    llama.eval(tokens)
    return len(tokens) / (time.perf_counter() - t)


def _ours_read(backend: LlamaCppBackend, tokens: list[int]) -> tuple[float, list[int]]:
    """docchat's read (_read: batches, prompt threads by ThreadChooser); (tokens/s, the
    thread counts of its batches)."""
    backend.llama.reset()
    t = time.perf_counter()
    backend._read(tokens, len(tokens), GenerationRequest(messages=[]), lambda: False)
    return len(tokens) / (time.perf_counter() - t), [b[0] for b in backend.read_batches]


def study_threads(args, busy_factory) -> dict:
    """Decode and prompt reading: ours (threads chosen by measurement) / raw 1 thread / raw
    every core, interleaved, under each load (idle, one core busy, every core half busy)."""
    cores = usable_cores()
    backend = LlamaCppBackend(n_ctx=2048, probe_tokens=0)
    messages = [Message("user", "Write a long story about rivers, valleys and the sea.")]
    prompt = backend.prompt_tokens(messages)
    text = (backend_probe_text() * (args.study_prompt // 16 + 2)).encode()
    read_tokens = backend.llama.tokenize(text, add_bos=True)[:args.study_prompt]
    _raw_decode(backend, prompt, 8, cores)  # warm-up: page the weights in
    _ours_decode(backend, messages, 8)
    loads = {"idle": contextlib.nullcontext, "one core busy": busy_factory,
             "every core half busy": HalfBusy}
    rows = []
    for load, guard in loads.items():
        if args.loads and load not in args.loads:
            continue
        with guard():
            rows.append(_threads_row(backend, load, messages, prompt, read_tokens, args, cores))
    return {"study": "threads", "model": backend.model, "cores": cores,
            "new_tokens": args.new_tokens, "prompt_tokens": len(read_tokens), "runs": args.runs,
            "candidates": backend.decode_chooser.candidates,
            "prompt_candidates": backend.threads.candidates, "rows": rows}


def backend_probe_text() -> str:
    from docchat.backends.llamacpp import PROBE_TEXT
    return PROBE_TEXT


def _threads_row(backend, load, messages, prompt, read_tokens, args, cores) -> dict:
    raw_all = f"raw {cores} threads"
    runs: dict[str, list[float]] = {"ours": [], "raw 1 thread": [], raw_all: []}
    reads: dict[str, list[float]] = {"ours": [], "raw 1 thread": [], raw_all: []}
    ours_threads, ours_read_threads = [], []
    for _ in range(args.runs):
        rate, threads = _ours_decode(backend, messages, args.new_tokens)
        runs["ours"].append(rate)
        ours_threads.append(threads)
        runs["raw 1 thread"].append(_raw_decode(backend, prompt, args.new_tokens, 1))
        runs[raw_all].append(_raw_decode(backend, prompt, args.new_tokens, cores))
        rate, used = _ours_read(backend, read_tokens)
        reads["ours"].append(rate)
        ours_read_threads.append(used)
        reads["raw 1 thread"].append(_raw_read(backend, read_tokens, 1))
        reads[raw_all].append(_raw_read(backend, read_tokens, cores))
        print(f"{load}: decode " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in runs.items())
              + "; read " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in reads.items())
              + f" tok/s (ours decoded on {threads} threads, read on {used}; "
              f"load avg {load_average()})", file=sys.stderr, flush=True)

    def med(d):
        return {k: round(statistics.median(v), 1) for k, v in d.items()}

    best = max(statistics.median(v) for k, v in runs.items() if k != "ours")
    best_read = max(statistics.median(v) for k, v in reads.items() if k != "ours")
    return {"load": load, "load_average": load_average(),
            "decode_tok_s": med(runs), "read_tok_s": med(reads),
            "runs": {k: [round(x, 1) for x in v] for k, v in runs.items()},
            "read_runs": {k: [round(x, 1) for x in v] for k, v in reads.items()},
            "ours_threads": ours_threads, "ours_read_threads": ours_read_threads,
            "ours_x_best_raw": round(statistics.median(runs["ours"]) / best, 3),
            "ours_read_x_best_raw": round(statistics.median(reads["ours"]) / best_read, 3),
            "chooser_rates": {k: round(v, 1) for k, v in backend.decode_chooser.rates.items()},
            "prompt_chooser_rates": {k: round(v, 1) for k, v in backend.threads.rates.items()}}


def _positions_read(llama, tokens: list[int], at: list[int], n: int) -> list[float]:
    """tokens/s of reading tokens[a:a + n] after tokens[:a] for each a in at (one pass)."""
    llama.reset()
    rates, pos = [], 0
    for a in at:
        if a > pos:
            llama.eval(tokens[pos:a])
        t = time.perf_counter()
        llama.eval(tokens[a:a + n])
        rates.append(len(tokens[a:a + n]) / (time.perf_counter() - t))
        pos = a + n
    return rates


def study_flash(args) -> dict:
    """Prompt reading by position with llama.cpp's flash attention off and on: 256 tokens
    read after 0, 2,000 and 4,000 earlier ones, 1 and every core, interleaved, medians of
    args.runs (the cost of a follow-up's tokens late in the window)."""
    from docchat.backends.llamacpp import PROBE_TEXT, bundled_model_path, load_llama

    cores, at, n = usable_cores(), [0, 2000, 4000], 256
    models = {fa: load_llama(bundled_model_path(), 4608, 1, 1, flash_attn=fa)
              for fa in (False, True)}
    text = (PROBE_TEXT * 400).encode()
    tokens = models[False].tokenize(text, add_bos=True)[:at[-1] + n]
    runs: dict[str, list[list[float]]] = {}
    for m in models.values():
        m.eval(tokens[:64])  # page the weights in
    for _ in range(args.runs):
        for threads in sorted({1, cores}):
            for fa, llama in models.items():
                llama._ctx.set_n_threads(threads, threads)
                key = f"flash_attn {'on' if fa else 'off'}, {threads} thread(s)"
                runs.setdefault(key, []).append(_positions_read(llama, tokens, at, n))
                print(key, [round(x) for x in runs[key][-1]], f"load avg {load_average()}",
                      file=sys.stderr, flush=True)
    rows = {k: [round(statistics.median(r[i] for r in v), 1) for i in range(len(at))]
            for k, v in runs.items()}
    return {"study": "flash", "positions": at, "tokens": n, "runs": args.runs,
            "tok_s": rows, "load_average": load_average()}


PERF_LINE = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")


def _evaluated_since(log: Path, offset: int) -> tuple[int | None, int]:
    """Prompt tokens the server evaluated in its last request (its log after offset)."""
    text = log.read_bytes()[offset:].decode(errors="replace")
    found = PERF_LINE.findall(text)
    return (int(found[-1]) if found else None), offset + len(text.encode())


def _turn(backend, messages: list[Message], log: Path, offset: int) -> tuple[dict, str, int]:
    request = GenerationRequest(messages=messages, max_new_tokens=48)
    start = time.perf_counter()
    first, pieces = None, []
    for piece in backend.stream(request):
        first = first or time.perf_counter()
        pieces.append(piece)
    time.sleep(0.3)  # the server writes its timings after the stream ends
    evaluated, offset = _evaluated_since(log, offset)
    stats = request.stats
    reported = stats.prompt_reused or None  # from usage / timings, where the server says
    # Else: the prompt's size (docchat's count: the server's tokenizer, plus an estimate
    # for the chat format) less what the server's log says it evaluated.
    reused = reported if reported is not None else (
        max(0, stats.prompt_tokens - evaluated) if evaluated is not None else None)
    return ({"ttft_s": round((first or time.perf_counter()) - start, 3),
             "prompt_tokens": stats.prompt_tokens, "evaluated": evaluated, "reused": reused,
             "reuse_from": "usage" if reported is not None else "server log"},
            "".join(pieces), offset)


def _layouts(excerpts: list[str], questions: list[str], answer: str, layout: str):
    """Turn 2's messages for a layout, given turn 1's answer."""
    system = "Answer from the excerpts; cite pages as [p. N]."
    if layout == "append-only":
        return [Message("system", system),
                Message("user", f"{excerpts[0]}\n\nQuestion: {questions[0]}"),
                Message("assistant", answer),
                Message("user", f"{excerpts[1]}\n\nQuestion: {questions[1]}")]
    return [Message("system", f"{system}\n\n{excerpts[0]}\n\n{excerpts[1]}"),
            Message("user", questions[0]), Message("assistant", answer),
            Message("user", questions[1])]


def study_reuse(args, start_server) -> dict:
    """A first question and a follow-up against llama-cpp-python's server, two layouts."""
    from docchat.backends.openai_http import OpenAIBackend

    filler = ("Rivers carve valleys, carry silt and build deltas. Floods spread soil across "
              "the plain, and farmers follow the water to new fields. ")
    log_dir = Path(args.log_dir or "/tmp")
    log = log_dir / f"docchat-bench-server-{os.getpid()}.log"
    process, url = start_server(args.threads, 4096, log=log)
    results = {}
    try:
        backend = OpenAIBackend(url, context_window=4096, timeout=600)
        offset = 0
        for run, layout in enumerate(("append-only", "context in system")):
            excerpts = [f"[p. {3 + i}] Run {run}.{i}. " + filler * 12 for i in range(2)]
            questions = ["What do rivers carry?", "And what do floods do?"]
            first_messages = (_layouts(excerpts, questions, "", layout)[:2]
                              if layout == "append-only" else
                              [Message("system", "Answer from the excerpts; cite pages as "
                                                 f"[p. N].\n\n{excerpts[0]}"),
                               Message("user", questions[0])])
            first, answer, offset = _turn(backend, first_messages, log, offset)
            follow_messages = _layouts(excerpts, questions, answer, layout)
            follow, _, offset = _turn(backend, follow_messages, log, offset)
            results[layout] = {"first": first, "follow_up": follow}
    finally:
        process.terminate()
        process.wait(timeout=30)
    return {"study": "reuse", "server": "llama-cpp-python", "load_average": load_average(),
            "layouts": results}


def study_budget(args, build_messages) -> dict:
    """The load-time probe's budget for target seconds, then that prompt's real TTFT."""
    start = time.perf_counter()
    backend = LlamaCppBackend(n_ctx=8192)
    load_s = time.perf_counter() - start
    budget = backend.prefill_tokens(args.target)
    runs = []
    for run in range(args.runs):
        messages = build_messages(backend, budget, run=5000 + run)
        backend.llama.reset()
        request = GenerationRequest(messages=messages, max_new_tokens=2)
        t = time.perf_counter()
        next(iter(backend.stream(request)), None)
        runs.append({"ttft_s": round(time.perf_counter() - t, 2),
                     "prompt_tokens": request.stats.prompt_tokens})
    ttft = statistics.median(r["ttft_s"] for r in runs)
    return {"study": "budget", "model": backend.model, "target_s": args.target,
            "load_s": round(load_s, 2), "probe_rate_tok_s": round(backend.prefill_rate(), 1),
            "budget_tokens": budget, "runs": runs, "ttft_s": ttft,
            "ttft_x_target": round(ttft / args.target, 3),
            "within_20pct": abs(ttft / args.target - 1) <= 0.2,
            "load_average": load_average()}


def print_result(result: dict) -> None:
    """The new studies as short tables."""
    if result["study"] == "threads":
        print(f"{result['model']}: tok/s, decode {result['new_tokens']} tokens and read a "
              f"{result['prompt_tokens']}-token prompt, median of {result['runs']} interleaved "
              f"runs, {result['cores']} cores; decode candidates {result['candidates']}, "
              f"prompt {result['prompt_candidates']}")
        for r in result["rows"]:
            for what, key, x in (("decode", "decode_tok_s", "ours_x_best_raw"),
                                 ("read", "read_tok_s", "ours_read_x_best_raw")):
                cells = ", ".join(f"{k} {v}" for k, v in r[key].items())
                print(f"  {r['load']:<21} {what:<6} {cells}; ours / best raw {r[x]}")
            print(f"  {'':<21} ours decoded on {r['ours_threads']} threads; read batches' "
                  f"threads {[sorted(set(t)) for t in r['ours_read_threads']]}; load avg "
                  f"{r['load_average']}")
    elif result["study"] == "flash":
        print(f"{result['tokens']} prompt tokens read after {result['positions']} earlier ones, "
              f"tok/s, median of {result['runs']} (load avg {result['load_average']})")
        for k, v in result["tok_s"].items():
            print(f"  {k:<28} {v}")
    elif result["study"] == "reuse":
        print(f"llama-cpp-python server (load avg {result['load_average']})")
        for layout, turns in result["layouts"].items():
            for name, t in turns.items():
                print(f"  {layout:<18} {name:<10} TTFT {t['ttft_s']:>6.2f} s, evaluated "
                      f"{t['evaluated']}, reused {t['reused']} of ~{t['prompt_tokens']} "
                      f"prompt tokens ({t['reuse_from']})")
    else:
        print(f"{result['model']}: probe {result['probe_rate_tok_s']} tok/s (load "
              f"{result['load_s']} s); budget for {result['target_s']} s: "
              f"{result['budget_tokens']} tokens; TTFT {result['ttft_s']} s = "
              f"{result['ttft_x_target']} x target (load avg {result['load_average']})")
