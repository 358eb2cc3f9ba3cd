"""Responsiveness bench: evidence, first token, cache reuse and Stop on the default backend.

On the bundled SmolLM2 (llama.cpp) and a 100+ page document from ../shared/corpus, as a user
of the app would meet them (docchat.answer.qa.ask, preset raw, the default first-token target):
1. the warm start (the session's system message read while the question is typed, as the
   chat page does), then a first question and three follow-ups as the chat page asks them
   (append-only: the conversation from the stored turns): time from the question to the
   evidence, to the first answer token, prompt tokens new vs reused, prefill time, the budget;
2. side by side, raw llama-cpp-python on a second Llama load of the same GGUF: plain
   ``Llama.eval`` of the same prompt tokens, from an empty cache (what reading the whole
   prompt costs) and of the same new tokens after the same reused prefix;
3. Stop during prefill (a whole-window question, stopped once the backend has read a
   quarter) and during decode (after 5 answer pieces): time from Stop to the end of the
   stream, and how long a second request then waited in the queue.
4. after an upload (``--after-upload``, each variant in a fresh process, one after the
   other): ingest into a new store, start what the app starts after an upload (the sections'
   background embedding, ``embeddings.warm``, and the backend's prefetch of the prompt prefix),
   wait ``--typing`` seconds, then ask the first question with the app's budget: prompt
   tokens, time to first token, whether it met the target, the reading ETAs shown, the load
   average; then, once the embedding is done, a second question (dense scores back?).
   Variants: "yielding" (the embedding pauses while the backend reads or generates, the
   default) and "not yielding" (``embeddings.warm(..., yield_to=None)``, as before).
After each answer, what the chat page reads ahead for the next question is read while the
user reads (``--read-ahead``, ``--reading``: the next question comes once it is read).
Goals: evidence <= 1 s; first token <= 15 s at the default target; each follow-up's first
token <= 25% of the first question's; Stop <= 0.5 s in either phase.

Usage: python bench/responsiveness.py [--doc PATH] [--target 15] [--new-tokens 48] [--json]
       python bench/responsiveness.py --after-upload [--typing 3] [--repeat 1] [--json]
       python bench/responsiveness.py --pairs 3   (the yielding alone, interleaved pairs)
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from docchat.answer.qa import ask
from docchat.backends import GenerationRequest, Message
from docchat.config import Settings
from docchat.context import embeddings
from docchat.library.documents import ingest_path
from docchat.library.store import SessionStore

ROOT = Path(__file__).resolve().parent.parent

CORPUS = ROOT.parent / "shared" / "corpus" / "pdf"
DEFAULT_DOC = CORPUS / "debian-policy.pdf"

# How `python -m bench all` runs this script (bench/README.md, "Running every bench").
BENCH = {"quick": ["--questions", "2", "--no-raw", "--new-tokens", "16"], "full": [],
         "env": {"DOCCHAT_N_THREADS": "1"}, "timeout_s": 420, "order": 60}
QUESTIONS = {
    "debian-policy.pdf": [
        "What are the rules for the Version field of a Debian package?",
        "What does the epoch part of a version mean?",
        "And which characters may the upstream_version contain?",
        "How are two version numbers compared?",
    ],
    "reportlab-userguide.pdf": [
        "How do I draw a string on a canvas?",
        "How do I change the font of that string?",
        "And how do I set its colour?",
        "How do I save the PDF file at the end?",
    ],
}
GOALS = {"evidence_s": 1.0, "first_token_s": 15.0, "follow_up_ratio": 0.25, "stop_s": 0.5}


@dataclass(frozen=True)
class StoredTurn:
    """A turn as docchat.library.store keeps it (what Conversation.from_turns reads)."""
    role: str
    content: str
    status: str = "done"
    metrics: dict | None = None


def run_question(documents, question, backend, store, turns, target, new_tokens,
                 whole_window=False, warm_start=None, ahead=None):
    """Ask one question as the chat page does (append-only: the conversation from the stored
    turns and, for the first question, the warm start's system message, and what was read
    ahead after the last answer: docchat.answer.session.answer_factory); (result row,
    answer)."""
    from docchat.answer.session import conversation_for

    doc_ids = [d.id for d in documents]
    conversation = conversation_for(turns, warm_start, ahead)
    started = time.perf_counter()
    answer = ask(documents, question, backend, conversation=conversation,
                 preset="raw", overrides={"max_new_tokens": new_tokens}, ttft_target=target,
                 whole_window=whole_window, started_at=started,
                 search=store.searcher(doc_ids), embedding_store=store)
    first = None
    for _ in answer:
        if first is None:
            first = time.perf_counter() - started
    m = answer.metrics
    row = {"question": question, "evidence_s": round(answer.evidence_ms / 1000, 3),
           "evidence_sections": len(answer.evidence),
           "first_token_s": None if first is None else round(first, 2),
           "prompt_tokens": m["prompt_tokens"], "reused": m.get("prompt_reused", 0),
           "new": m["prompt_tokens"] - (m.get("prompt_reused") or 0),
           "prefill_s": None if m.get("prefill_ms") is None else round(m["prefill_ms"] / 1000, 2),
           "budget": m["budget"]["prompt_budget"], "rate": m["budget"]["rate"],
           "read_s": m["budget"].get("read_s"), "prefill_threads": m.get("prefill_threads"),
           "completion_tokens": m["completion_tokens"],
           "read_ahead_used": bool(ahead is not None and answer.packed is not None
                                   and answer.packed.turn is not None
                                   and answer.packed.turn.message.startswith(ahead.text))}
    return row, answer


def read_ahead_while_reading(backend, doc, turns, store, args) -> tuple[dict | None, object]:
    """What the chat page reads ahead after an answer (session.prefetch_ahead), read while
    the user reads the answer (up to --reading seconds); (its figures, the Ahead)."""
    from docchat.answer import session
    from docchat.context.conversation import Conversation

    options = session.AskOptions(preset="raw", overrides={"max_new_tokens": args.new_tokens},
                                 ttft_target=args.target)
    t = time.perf_counter()
    ahead = session.prefetch_ahead(backend, [doc], Conversation.from_turns(turns), options,
                                   store, share=args.read_ahead)
    if ahead is None:
        return None, None
    read = backend.wait_prefetch(args.reading)
    return {"tokens": backend.count_tokens(ahead.text), "passages": len(ahead.passages),
            "seconds": round(time.perf_counter() - t, 2), "done": read}, ahead


def raw_prefill(raw, tokens: list[int], reused: int) -> dict:
    """Plain Llama.eval: the whole prompt from an empty cache, and the new part after the
    same reused prefix."""
    raw.reset()
    t = time.perf_counter()
    raw.eval(tokens)
    full = time.perf_counter() - t
    new = None
    if reused:
        raw.reset()
        raw.eval(tokens[:reused])
        t = time.perf_counter()
        raw.eval(tokens[reused:])
        new = time.perf_counter() - t
    return {"raw_full_s": round(full, 2), "raw_new_s": round(new if new is not None else full, 2)}


def stop_run(documents, question, backend, store, phase: str, new_tokens: int,
             target: float) -> dict:
    """Stop during prefill or decode: seconds from Stop to the model halting (the last
    llama.cpp eval returning, and the threads' CPU falling: bench/halt.py), to the stream's
    end (when the page would show "Stopped")."""
    if str(ROOT) not in sys.path:  # bench.halt, when run as a script
        sys.path.insert(0, str(ROOT))
    from bench.halt import HaltWatch

    doc_ids = [d.id for d in documents]
    cancel = threading.Event()
    reading, pieces = threading.Event(), []
    answer = ask(documents, question, backend, preset="raw", cancel=cancel,
                 overrides={"max_new_tokens": 256 if phase == "decode" else new_tokens},
                 whole_window=phase == "prefill", ttft_target=target,
                 search=store.searcher(doc_ids), embedding_store=store)
    events = []

    def progress(p) -> None:
        events.append(p)
        if phase == "prefill" and p.total and p.done - p.reused >= 0.25 * (p.total - p.reused):
            reading.set()

    answer.on_progress = progress
    ended, evals = {}, []
    llama = getattr(backend, "llama", None)
    real_eval = getattr(llama, "eval", None)
    if real_eval is not None:  # Llama.generate and the prefill both call self.eval
        def timed_eval(tokens):
            real_eval(tokens)
            evals.append(time.perf_counter())
        llama.eval = timed_eval

    def consume() -> None:
        for chunk in answer:
            pieces.append(chunk)
            if len(pieces) == 5:
                reading.set()
        ended["at"] = time.perf_counter()

    with HaltWatch() as watch:
        thread = threading.Thread(target=consume)
        thread.start()
        reading.wait(180)
        time.sleep(0.3)  # let the watch see the model running
        stopped_at = watch.mark()
        answer.stop()
        thread.join(60)
        cpu = watch.halted_after(stopped_at)
    if real_eval is not None:
        del llama.eval
    stats = answer.metrics
    last_eval = max(evals) if evals else None
    return {"phase": phase, "stop_s": round(ended.get("at", float("nan")) - stopped_at, 3),
            "eval_halt_s": None if last_eval is None else round(max(0.0, last_eval
                                                                    - stopped_at), 3),
            "cpu_halt_s": cpu["halt_s"], "model_threads": cpu["threads"],
            "pieces_before_stop": len(pieces), "progress_events": len(events),
            "prompt_tokens": stats.get("prompt_tokens"),
            "read_when_stopped": events[-1].done if events else None,
            "finish_reason": answer.metrics.get("finish_reason")}


def after_upload(doc_path: Path, target: float, new_tokens: int, typing: float,
                 yielding: bool, first_only: bool = False) -> dict:
    """One "after upload" run in this process (see the module doc, 4.), asked as the chat
    page asks: the warm start (session.warm) while the question is typed, then append-only
    turns (the first question starts with what the warm start sent). first_only: the first
    question only, while the vectors are still being computed (no wait for them)."""
    from docchat.answer import session
    from docchat.backends.llamacpp import LlamaCppBackend

    settings = Settings.from_env()
    load_before = os.getloadavg()[0]
    backend = LlamaCppBackend(**settings.model_options())
    rate_at_start = backend.prefill_rate()
    db = Path(tempfile.mkdtemp(prefix="docchat-upload-")) / "bench.db"
    store = SessionStore.open(db)
    t = time.perf_counter()
    result = ingest_path(store, doc_path, tokenizer=backend)
    if result.error:
        raise SystemExit(result.error)
    doc = result.document
    ingest_s = time.perf_counter() - t
    uploaded = time.perf_counter()
    # What app.py starts after an upload: the background embedding (vectors written to the
    # store) and, on the rerun that draws the page, the prefetch of the prompt prefix.
    kwargs = {} if yielding else {"yield_to": None}
    if "yield_to" not in inspect.signature(embeddings.warm).parameters:
        kwargs = {}  # before the yielding embedding existed
    thread = embeddings.warm(doc, open_store=lambda: SessionStore.open(db), **kwargs)
    options = session.AskOptions(preset="raw", overrides={"max_new_tokens": new_tokens},
                                 ttft_target=target)
    done: dict = {}
    session.warm(backend, session_id="upload", documents=[doc], options=options, done=done)
    time.sleep(typing)
    questions = QUESTIONS.get(doc_path.name, QUESTIONS["debian-policy.pdf"])
    rows, turns = [], []
    for k, q in enumerate((questions[0],) if first_only else (questions[0], questions[3])):
        if k == 1 and thread is not None:
            thread.join()  # the second question: once the vectors are in
        embedded_s = None if thread is None or thread.is_alive() else \
            round(time.perf_counter() - uploaded, 1)
        etas = []
        started = time.perf_counter()
        conversation = session.conversation_for(turns, session.warmed(done, "upload", [doc]))
        answer = ask([doc], q, backend, preset="raw", overrides={"max_new_tokens": new_tokens},
                     ttft_target=target, started_at=started, search=store.searcher([doc.id]),
                     embedding_store=store, conversation=conversation,
                     on_progress=lambda p, etas=etas, started=started: etas.append(
                         (round(time.perf_counter() - started, 1),
                          None if p.eta_s is None else round(p.eta_s, 1))))
        first = None
        for _ in answer:
            if first is None:
                first = time.perf_counter() - started
        m = answer.metrics
        rows.append({"question": q, "first_token_s": None if first is None else round(first, 2),
                     "met": first is not None and first <= target,
                     "prompt_tokens": m["prompt_tokens"], "reused": m.get("prompt_reused", 0),
                     "prefill_s": None if m.get("prefill_ms") is None
                     else round(m["prefill_ms"] / 1000, 2),
                     "budget": m["budget"]["prompt_budget"], "rate": m["budget"]["rate"],
                     "dense": m["dense"], "embedding_done_s": embedded_s,
                     "load_1min": round(os.getloadavg()[0], 2),
                     "etas": [e for e in etas if e[1] is not None]})
        turns += [StoredTurn("user", q), StoredTurn("assistant", answer.text,
                                                    metrics=answer.metrics)]
    if thread is not None and not first_only:
        thread.join()
    return {"variant": "yielding" if yielding else "not yielding",
            "threads": settings.n_threads, "rate_at_start": round(rate_at_start or 0, 1),
            "ingest_s": round(ingest_s, 2), "typing_s": typing, "load_before": load_before,
            "embedding_s": round(time.perf_counter() - uploaded, 1), "questions": rows}


def yield_pairs(pairs: int) -> list[dict]:
    """Interleaved pairs in one process: the same 700-token prompt read from an empty cache
    while MiniLM embeds 64-section batches in a loop at nice 19 (as warm() does), the loop
    not yielding, then yielding to FOREGROUND; 1.5 s before each, so a batch is in flight
    when the prompt comes."""
    from docchat.backends import FOREGROUND
    from docchat.backends.llamacpp import PROBE_TEXT, LlamaCppBackend

    backend = LlamaCppBackend(**Settings.from_env().model_options())
    encoder = embeddings.Embedder().encoder()
    texts = [f"Section {i} > heading: " + PROBE_TEXT * 3 for i in range(embeddings.BATCH)]
    encoder.encode(texts)
    stop, yielding, batches = threading.Event(), threading.Event(), [0]

    def loop() -> None:
        while not stop.is_set():
            if yielding.is_set():
                FOREGROUND.wait_idle(120)
            encoder.encode(texts)
            batches[0] += 1

    threading.Thread(target=embeddings._quietly, args=(loop,), daemon=True).start()
    rows = []
    for _ in range(pairs):
        for y in (False, True):
            (yielding.set if y else yielding.clear)()
            time.sleep(1.5)
            backend.llama.reset()
            request = GenerationRequest([Message("user", PROBE_TEXT * 30)], max_new_tokens=1)
            before = batches[0]
            list(backend.stream(request))
            rows.append({"yielding": y, "prompt": request.stats.prompt_tokens,
                         "prefill_s": round(request.stats.prefill_ms / 1000, 2),
                         "batches_beside": batches[0] - before,
                         "load_1min": round(os.getloadavg()[0], 1)})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    stop.set()
    return rows


def after_upload_runs(args) -> None:
    """Each variant in a fresh process (cold caches, nothing embedded), one after the other:
    "after" (this checkout, or --after PATH), "after, not yielding" (the same code, the
    embedding not pausing) and, with --before PATH (a checkout of the code before, e.g. a
    git worktree), "before"."""
    here = str(ROOT)
    after = str(args.after or here)
    variants = [("after", after, "yielding")] + (
        [] if args.only_yielding else [("after, not yielding", after, "not-yielding")])
    if args.before:
        variants.insert(0, ("before", str(args.before), "not-yielding"))
    runs = []
    for _ in range(args.repeat):
        for label, tree, variant in variants:
            cmd = [sys.executable, __file__, "--doc", str(args.doc), "--target", str(args.target),
                   "--new-tokens", str(args.new_tokens), "--typing", str(args.typing),
                   "--variant", variant, *(["--first-only"] if args.first_only else [])]
            env = {**os.environ, "PYTHONPATH": str(tree)}
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env,
                                 cwd=tree).stdout
            run = json.loads(out.strip().splitlines()[-1])
            run["variant"], run["code"] = label, tree
            runs.append(run)
            print(json.dumps(run), file=sys.stderr, flush=True)  # as it comes
    if args.json:
        print(json.dumps({"document": args.doc.name, "target_s": args.target, "runs": runs}))
        return
    print(f"After an upload: {args.doc.name}, target {args.target:g} s, first question "
          f"{args.typing:g} s after the upload, threads {runs[0]['threads'] or 'default'}\n")
    print(f"{'variant':19} {'load':>5} {'probe':>6} {'#':>2} {'budget':>6} {'prompt':>6} "
          f"{'reused':>6} {'1st tok':>7} {'met':>4} {'dense':>5} {'embedded':>8}  ETAs shown")
    for r in runs:
        for k, q in enumerate(r["questions"]):
            etas = " ".join(f"{e}" for _, e in q["etas"][:12])
            print(f"{r['variant']:19} {q['load_1min']:5.2f} {r['rate_at_start']:6.0f} {k:2} "
                  f"{q['budget'] or 'whole':>6} {q['prompt_tokens']:6,} {q['reused']:6,} "
                  f"{q['first_token_s'] or 0:6.2f}s {'yes' if q['met'] else 'NO':>4} "
                  f"{'yes' if q['dense'] else 'no':>5} {r['embedding_s']:7.1f}s  {etas}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", type=Path, default=DEFAULT_DOC, help="a 100+ page PDF")
    ap.add_argument("--target", type=float, default=Settings().ttft_target,
                    help="first-token target in seconds (the default setting)")
    ap.add_argument("--new-tokens", type=int, default=48, help="answer tokens per question")
    ap.add_argument("--questions", type=int, default=0,
                    help="ask only the first N questions (at least 2: one follow-up); 0: all")
    ap.add_argument("--no-raw", action="store_true", help="skip the raw llama-cpp-python side")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--no-warm", action="store_true",
                    help="no warm start (the app reads the session's system message while the "
                         "question is typed)")
    ap.add_argument("--store", type=Path,
                    help="a SessionStore file kept between runs: the document's vectors, once "
                         "computed there, are read back (default: a new one)")
    ap.add_argument("--after-upload", action="store_true",
                    help="only the after-upload scenario, both variants (4. above)")
    ap.add_argument("--typing", type=float, default=3.0,
                    help="seconds from the upload to the first question (after-upload)")
    ap.add_argument("--repeat", type=int, default=1, help="after-upload rounds")
    ap.add_argument("--before", type=Path, help="after-upload: a checkout of the code before")
    ap.add_argument("--after", type=Path, help="after-upload: the code after (default: here)")
    ap.add_argument("--pairs", type=int, default=0,
                    help="only: N interleaved pairs, a prefill beside a background embedding "
                         "not yielding / yielding")
    ap.add_argument("--first-only", action="store_true",
                    help="--after-upload: the first question only, while the vectors are "
                         "still being computed (a 1,000-page upload: minutes)")
    ap.add_argument("--only-yielding", action="store_true",
                    help="--after-upload: the app's variant only (the embedding yielding)")
    ap.add_argument("--read-ahead", type=float, default=None,
                    help="share of a first question's budget read ahead after each answer "
                         "(default: the app's, qa.READ_AHEAD_SHARE; 0: none)")
    ap.add_argument("--reading", type=float, default=20.0,
                    help="seconds the user reads an answer before the next question, at most "
                         "(the read-ahead is read meanwhile; the next question comes as soon "
                         "as it is done)")
    ap.add_argument("--variant", choices=("yielding", "not-yielding"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.variant:  # one after-upload run, in the process after_upload_runs started
        print(json.dumps(after_upload(args.doc, args.target, args.new_tokens, args.typing,
                                      args.variant == "yielding", args.first_only)))
        sys.stdout.flush()
        os._exit(0)  # --first-only: the embedding thread may still be at work; leave it
    if args.after_upload:
        after_upload_runs(args)
        return
    if args.pairs:
        print(json.dumps(yield_pairs(args.pairs)))
        return
    from docchat.backends.llamacpp import LlamaCppBackend, bundled_model_path, load_llama

    settings = Settings.from_env()
    db = args.store or Path(tempfile.mkdtemp(prefix="docchat-resp-")) / "bench.db"
    store = SessionStore.open(db)
    t = time.perf_counter()
    backend = LlamaCppBackend(settings.model, settings.n_ctx, settings.n_threads)
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    result = ingest_path(store, args.doc, tokenizer=backend)
    if result.error:
        raise SystemExit(result.error)
    doc = result.document
    ingest_s = time.perf_counter() - t
    # As the app does after an upload: embed the sections in the background (the packer's
    # dense scores need them); here we wait for it, so the questions measure packing alone.
    t = time.perf_counter()
    thread = embeddings.warm(doc, open_store=lambda: SessionStore.open(db))
    if thread is not None:
        thread.join()
    embed_s = time.perf_counter() - t
    questions = QUESTIONS.get(args.doc.name, QUESTIONS["debian-policy.pdf"])
    if args.questions:
        questions = questions[:max(2, args.questions)]
    rate_at_start = backend.prefill_rate() if hasattr(backend, "prefill_rate") else None

    warmed, warm_start = None, None
    if not args.no_warm:  # as the chat page does once the document is in the session
        from docchat.answer import session

        options = session.AskOptions(preset="raw", overrides={"max_new_tokens": args.new_tokens},
                                     ttft_target=args.target)
        t = time.perf_counter()
        done: dict = {}
        if session.warm(backend, session_id="bench", documents=[doc], options=options,
                        done=done):
            warm_start = session.warmed(done, "bench", [doc])
            backend.wait_prefetch(120)  # the user typing the question meanwhile
            warmed = {"tokens": int(backend.llama.n_tokens),
                      "seconds": round(time.perf_counter() - t, 2)}
    rows, turns, answers, ahead = [], [], [], None
    for k, q in enumerate(questions):
        row, answer = run_question([doc], q, backend, store, turns, args.target,
                                   args.new_tokens, warm_start=None if turns else warm_start,
                                   ahead=ahead)
        rows.append(row)
        answers.append(answer)
        turns += [StoredTurn("user", q), StoredTurn("assistant", answer.text,
                                                    metrics=answer.metrics)]
        if k + 1 < len(questions):  # as the chat page does once the answer is saved
            row["read_ahead"], ahead = read_ahead_while_reading(backend, doc, turns, store,
                                                                args)
    if not args.no_raw:
        raw = load_llama(settings.model or bundled_model_path(), settings.n_ctx,
                         settings.n_threads)
        for row, answer in zip(rows, answers):
            tokens = backend.prompt_tokens(answer.packed.messages)
            row.update(raw_prefill(raw, tokens, row["reused"]))
        del raw
    stops = [stop_run([doc], questions[0], backend, store, phase, args.new_tokens, args.target)
             for phase in ("prefill", "decode")]

    first = rows[0]["first_token_s"] or float("nan")
    follow = [r["first_token_s"] / first if r["first_token_s"] else None for r in rows[1:]]
    out = {
        "model": backend.model, "document": args.doc.name, "pages": len(doc.pages),
        "doc_tokens": doc.tokens, "window": backend.context_window,
        "threads": settings.n_threads or os.cpu_count(), "target_s": args.target,
        "prefill_rate_at_start": rate_at_start, "load_s": round(load_s, 2),
        "ingest_s": round(ingest_s, 2), "embed_s": round(embed_s, 2),
        "warm_start": warmed, "questions": rows, "stops": stops,
        "read_ahead_share": read_ahead_share(args),
        "follow_up_ratios": [None if f is None else round(f, 3) for f in follow],
        "goals": GOALS,
        "met": {
            "evidence": all(r["evidence_s"] <= GOALS["evidence_s"] for r in rows),
            "first_token": first <= GOALS["first_token_s"],
            "follow_up": all(f is not None and f <= GOALS["follow_up_ratio"] for f in follow),
            "stop": all(s["stop_s"] <= GOALS["stop_s"] and halt_s(s) <= GOALS["stop_s"]
                        for s in stops),
        },
    }
    if args.json:
        print(json.dumps(out))
        return
    print(f"Responsiveness bench: {out['model']}, {out['document']} ({out['pages']} pages, "
          f"{out['doc_tokens']:,} tokens), window {out['window']:,}, {out['threads']} thread(s), "
          f"target {args.target:g} s, "
          f"prefill rate at start {rate_at_start and round(rate_at_start)}"
          f" tokens/s; ingest {out['ingest_s']} s, embeddings {out['embed_s']} s (after upload, "
          f"in the background in the app); warm start {out['warm_start']}\n")
    print(f"{'#':2} {'evidence':>8} {'1st tok':>8} {'prompt':>7} {'new':>6} {'reused':>7} "
          f"{'prefill':>8} {'raw full':>8} {'raw new':>8} {'budget':>7}")
    for i, r in enumerate(rows):
        print(f"{i:2} {r['evidence_s']:7.3f}s {r['first_token_s'] or 0:7.2f}s "
              f"{r['prompt_tokens']:7,} {r['new']:6,} {r['reused']:7,} "
              f"{(r['prefill_s'] or 0):7.2f}s {r.get('raw_full_s', 0):7.2f}s "
              f"{r.get('raw_new_s', 0):7.2f}s {r['budget'] or 'whole':>7}")
    for i, r in enumerate(rows):
        if r.get("read_ahead"):
            a = r["read_ahead"]
            print(f"after #{i}: read ahead {a['tokens']:,} tokens ({a['passages']} passages) in "
                  f"{a['seconds']} s{'' if a['done'] else ' (not done)'}; used by #{i + 1}: "
                  f"{'yes' if rows[i + 1]['read_ahead_used'] else 'no'}")
    print("\nfollow-up first token / first question's: "
          + ", ".join("–" if f is None else f"{f:.0%}" for f in follow))
    for s in stops:
        print(f"Stop during {s['phase']:7}: model halted {ms(s['eval_halt_s'])} (last eval), "
              f"{ms(s['cpu_halt_s'])} (CPU of {s['model_threads']} thread(s)); stream ended "
              f"{ms(s['stop_s'])} after Stop "
              f"(read {s['read_when_stopped']} of {s['prompt_tokens']} prompt tokens, "
              f"{s['pieces_before_stop']} pieces shown)")
    print("\ngoals met: " + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in out["met"].items()))


def read_ahead_share(args) -> float:
    from docchat.answer import qa

    return qa.READ_AHEAD_SHARE if args.read_ahead is None else args.read_ahead


def halt_s(stop: dict) -> float:
    """The model's halt after Stop: the later of the two measures (inf: not seen)."""
    got = [x for x in (stop["eval_halt_s"], stop["cpu_halt_s"]) if x is not None]
    return max(got) if got else float("inf")


def ms(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds * 1000:.0f} ms"


if __name__ == "__main__":
    main()
