"""Folder summaries: docchat's path vs raw llama-cpp-python, and a server at concurrency 1 vs N.

Usage: python bench/summarize.py [--json] [--max-tokens N] [--concurrency N] [--no-server]
                                 [--no-raw] [FILES...]
Default files (../shared/corpus): pdf/lppl.pdf, pdf/sample-sigconf.pdf, pdf/apssamp.pdf,
text/Apache-2.0.txt.

1. docchat in-process: summarize_folder with the default llama.cpp backend (bundled
   SmolLM2-135M GGUF): ingest, plan, map-reduce, files, SQLite.
2. raw: the very prompts docchat sent, replayed through the same Llama object's
   create_chat_completion, so the ratio is docchat's overhead around the model.
3. server: llama-cpp-python's OpenAI-compatible server (started here through
   `python -m docchat.backends.llamacpp`, --interrupt_requests False) with docchat's
   openai backend, at --concurrency 1 and N.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlite_utils import Database  # noqa: E402

from docchat.backends import get_backend  # noqa: E402
from docchat.library.store import SessionStore  # noqa: E402
from docchat.summaries.batch import summarize_folder  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"

# How `python -m bench all` runs this script (bench/README.md, "Running every bench").
BENCH = {"quick": ["--max-tokens", "32", "--no-server", "--threads", "1",
                   "tests/data/summarize/BSD.txt"],
         "full": ["--max-tokens", "64", "../shared/corpus/pdf/lppl.pdf",
                  "../shared/corpus/text/Apache-2.0.txt"], "timeout_s": 300, "order": 70}
DEFAULT_FILES = ["pdf/lppl.pdf", "pdf/sample-sigconf.pdf", "pdf/apssamp.pdf",
                 "text/Apache-2.0.txt"]


class Recorder:
    """Wraps a backend and keeps every request's messages for the raw replay."""

    def __init__(self, backend) -> None:
        self._backend = backend
        self.requests: list = []

    def __getattr__(self, name):
        return getattr(self._backend, name)

    def stream(self, request):
        self.requests.append((list(request.messages), request.max_new_tokens))
        yield from self._backend.stream(request)


def run_docchat(label: str, files: list[Path], backend, max_tokens: int, concurrency: int,
                out: Path) -> dict:
    store = SessionStore(Database(memory=True))
    start = time.perf_counter()
    results = list(summarize_folder(files, backend, store, out, max_new_tokens=max_tokens,
                                    concurrency=concurrency, force=True))
    seconds = time.perf_counter() - start
    failed = [f"{Path(r.path).name}: {r.error}" for r in results if r.status != "done"]
    return row(label, len(results) - len(failed), seconds,
               sum(r.tokens_in for r in results), sum(r.tokens_out for r in results),
               steps=None, failed=failed,
               modes={Path(r.path).name: r.mode for r in results})


def run_raw(llama, requests: list) -> dict:
    """The same prompts through llama-cpp-python's own chat API, one after another."""
    # Start from an empty KV cache as docchat's run did; later prompts then reuse a
    # shared prefix exactly as they did in docchat's run (same order).
    llama.reset()
    start = time.perf_counter()
    tokens_in = tokens_out = 0
    for messages, max_new in requests:
        reply = llama.create_chat_completion(
            messages=[{"role": m.role, "content": m.content} for m in messages],
            max_tokens=max_new, temperature=0.0, top_p=1.0, repeat_penalty=1.0, seed=0)
        tokens_in += reply["usage"]["prompt_tokens"]
        tokens_out += reply["usage"]["completion_tokens"]
    return row("raw llama-cpp-python (same prompts)", None, time.perf_counter() - start,
               tokens_in, tokens_out, steps=len(requests))


def row(label, docs, seconds, tokens_in, tokens_out, steps=None, **extra) -> dict:
    return {"run": label, "documents": docs, "seconds": round(seconds, 2),
            "documents_per_minute": round(60 * docs / seconds, 2) if docs else None,
            "input_tokens_per_s": round(tokens_in / seconds, 1), "tokens_in": tokens_in,
            "tokens_out": tokens_out, "steps": steps, **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model_path: str, n_ctx: int, threads: int) -> tuple[subprocess.Popen, str]:
    import httpx

    port = free_port()
    cmd = [sys.executable, "-m", "docchat.backends.llamacpp", "--model", model_path,
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
           "--n_threads", str(threads), "--n_threads_batch", str(threads),
           # The default (True) ends a streaming answer early whenever another request
           # arrives; with several in flight that truncates summaries.
           "--interrupt_requests", "False", "--verbose", "False"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("server did not start within 180 s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--max-tokens", type=int, default=128, help="summary length (default 128)")
    ap.add_argument("--concurrency", type=int, default=4, help="server run's N (default 4)")
    ap.add_argument("--no-server", action="store_true", help="skip the server runs")
    ap.add_argument("--no-raw", action="store_true", help="skip the raw replay")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="llama.cpp threads (default: every core; 1 on a loaded machine)")
    args = ap.parse_args(argv)
    files = args.files or [CORPUS / f for f in DEFAULT_FILES]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        ap.error(f"missing files: {', '.join(missing)}")
    threads = args.threads
    runs: list[dict] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        backend = Recorder(get_backend("llamacpp", n_threads=threads))
        model_path, n_ctx = backend.llama.model_path, backend.context_window
        ours = run_docchat("docchat in-process (llamacpp)", files, backend, args.max_tokens,
                           1, Path(tmp) / "inproc")
        ours["steps"] = len(backend.requests)
        runs.append(ours)
        if not args.no_raw:
            runs.append(run_raw(backend.llama, backend.requests))
        del backend
        if not args.no_server:
            proc, base = start_server(model_path, n_ctx, threads)
            try:
                for c in (1, args.concurrency):
                    remote = get_backend("openai", base_url=base, model=model_path,
                                         max_concurrency=c, timeout=1800,
                                         context_window=n_ctx)
                    runs.append(run_docchat(f"docchat openai -> llama server, concurrency {c}",
                                            files, remote, args.max_tokens, c,
                                            Path(tmp) / f"server{c}"))
            finally:
                proc.terminate()
                proc.wait(timeout=30)
            notes.append("llama-cpp-python 0.3.36's server has no parallel slots: one Llama "
                         "behind a lock serves one request at a time, so concurrency only "
                         "queues requests at the server.")
    by = {r["run"]: r for r in runs}
    ratios = {}
    raw = by.get("raw llama-cpp-python (same prompts)")
    if raw:
        ratios["docchat_vs_raw_seconds"] = round(ours["seconds"] / raw["seconds"], 3)
    server = [r for r in runs if r["run"].startswith("docchat openai")]
    if len(server) == 2:
        ratios[f"concurrency_{args.concurrency}_vs_1_throughput"] = round(
            server[0]["seconds"] / server[1]["seconds"], 3)
    report = {"files": [str(f) for f in files], "max_new_tokens": args.max_tokens,
              "cpu_count": os.cpu_count(), "threads": threads, "load_average": os.getloadavg(),
              "context_window": n_ctx,
              "model": Path(model_path).name, "runs": runs, "ratios": ratios, "notes": notes}
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{len(files)} documents, max_new_tokens={args.max_tokens}, {Path(model_path).name}, "
          f"n_ctx={n_ctx}, {threads} threads, load average {os.getloadavg()[0]:.1f}")
    print(f"| {'run':<46} | docs | seconds | docs/min | in tok/s | tokens in | out | steps |")
    print(f"|{'-' * 48}|-----:|--------:|---------:|---------:|----------:|----:|------:|")
    for r in runs:
        print(f"| {r['run']:<46} | {r['documents'] if r['documents'] is not None else '':>4} "
              f"| {r['seconds']:>7.1f} | {r['documents_per_minute'] or '':>8} "
              f"| {r['input_tokens_per_s']:>8.1f} | {r['tokens_in']:>9} | {r['tokens_out']:>3} "
              f"| {r['steps'] if r['steps'] is not None else '':>5} |")
        for f in r.get("failed", []):
            print(f"    not done: {f}")
    for name, value in ratios.items():
        print(f"{name}: {value}")
    for note in notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
