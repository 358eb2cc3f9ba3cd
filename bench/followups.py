"""Follow-up cache reuse through qa.ask on the default backend: a question and three
follow-ups on a 100+ page document, packed either as the app packed them before issue 21
(carry: history + the previous answer's passages, excerpts in the system message) or as an
append-only conversation (append: qa.ask(conversation=...), excerpts with each question).

Per question: prompt tokens, tokens the backend reused from its cache and read anew, time
to the first token, the budget, and (append) the compaction. Each mode runs in its own
process (a fresh backend, an empty cache), one after the other.

    nice python bench/followups.py [--doc PATH] [--modes carry,append] [--target 15]
                                   [--new-tokens 48] [--turns 4] [--n-ctx N] [--json]

With a small window and more turns (``--modes append --n-ctx 2048 --turns 8``) the
conversation fills it, and the turn that compacts (the oldest turns' excerpts dropped in
one step) reports "context compacted: N tokens read again", as the chat page does.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_DOC = ROOT.parent / "shared" / "corpus" / "pdf" / "debian-policy.pdf"
QUESTIONS = [
    "What are the rules for the Version field of a Debian package?",
    "What does the epoch part of a version mean?",
    "And which characters may the upstream_version contain?",
    "How are two version numbers compared?",
    "What must the Maintainer field contain?",
    "And what is the Uploaders field for?",
    "Which priorities can a package have?",
    "What does the Essential field mean?",
    "How are shared libraries named?",
    "What belongs in the copyright file?",
]


def run_mode(mode: str, doc_path: Path, target: float, new_tokens: int, turns: int = 4,
             n_ctx: int | None = None) -> dict:
    """The first `turns` questions in one mode, in this process."""
    from docchat.answer.qa import ask
    from docchat.backends import Message
    from docchat.backends.llamacpp import LlamaCppBackend
    from docchat.config import Settings
    from docchat.context.conversation import Conversation, compaction_note
    from docchat.context.packing import PreviousPassages
    from docchat.library.documents import ingest_path
    from docchat.library.store import SessionStore

    options = Settings.from_env().model_options()
    if n_ctx:
        options["n_ctx"] = n_ctx
    backend = LlamaCppBackend(**options)
    store = SessionStore.open(Path(tempfile.mkdtemp(prefix="docchat-followups-")) / "b.db")
    result = ingest_path(store, doc_path, tokenizer=backend)
    if result.error:
        raise SystemExit(result.error)
    doc = result.document
    history: list = []
    previous, conversation = None, Conversation()
    rows = []
    for question in (QUESTIONS * 2)[:turns]:
        started = time.perf_counter()
        answer = ask([doc], question, backend, history=list(history), preset="raw",
                     overrides={"max_new_tokens": new_tokens}, ttft_target=target,
                     started_at=started, search=store.searcher([doc.id]),
                     previous=previous if mode == "carry" else None,
                     conversation=conversation if mode == "append" else None)
        first = None
        for _ in answer:
            if first is None:
                first = time.perf_counter() - started
        m = answer.metrics
        reused = m.get("prompt_reused") or 0
        rows.append({"question": question, "prompt_tokens": m["prompt_tokens"],
                     "reused": reused, "new": m["prompt_tokens"] - reused,
                     "first_token_s": None if first is None else round(first, 2),
                     "budget": m["budget"]["prompt_budget"],
                     "evidence_sections": len(answer.evidence),
                     "prefill_s": None if m.get("prefill_ms") is None
                     else round(m["prefill_ms"] / 1000, 2),
                     "compacted": m.get("context_compacted"),
                     "note": compaction_note(m)})
        history += [Message("user", question), Message("assistant", answer.text)]
        previous = PreviousPassages.of(answer.packed)
        if answer.packed.turn is not None:
            conversation = conversation.then(answer.packed, answer.text)
    first_s = rows[0]["first_token_s"] or 0
    follow = sorted(r["first_token_s"] for r in rows[1:] if r["first_token_s"] is not None)
    median = follow[len(follow) // 2] if follow else None
    return {"mode": mode, "document": doc_path.name, "pages": len(doc.pages), "rows": rows,
            "window": backend.context_window,
            "follow_up_median_first_token_s": median,
            "follow_up_ratio": round(median / first_s, 2) if median and first_s else None,
            "load_average": round(os.getloadavg()[0], 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", default=str(DEFAULT_DOC))
    ap.add_argument("--modes", default="carry,append")
    ap.add_argument("--target", type=float, default=15.0)
    ap.add_argument("--new-tokens", type=int, default=48)
    ap.add_argument("--turns", type=int, default=4, help="questions asked (cycling)")
    ap.add_argument("--n-ctx", type=int, default=0, help="the model's window (0: trained)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # a single mode, in this process
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_mode(args.one, Path(args.doc), args.target, args.new_tokens,
                                  args.turns, args.n_ctx or None)))
        return
    out = []
    for mode in args.modes.split(","):
        got = subprocess.run([sys.executable, __file__, "--one", mode, "--doc", args.doc,
                              "--target", str(args.target), "--new-tokens",
                              str(args.new_tokens), "--turns", str(args.turns), "--n-ctx",
                              str(args.n_ctx)], capture_output=True, text=True, check=True)
        out.append(json.loads(got.stdout.strip().splitlines()[-1]))
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return
    for r in out:
        print(f"{r['mode']}: {r['document']} ({r['pages']} pages), window {r['window']}, "
              f"load {r['load_average']}; "
              f"follow-ups' median first token {r['follow_up_median_first_token_s']} s "
              f"({r['follow_up_ratio']} of the first question's)")
        for row in r["rows"]:
            print(f"  {row['first_token_s']:>6} s  prompt {row['prompt_tokens']:>5}  reused "
                  f"{row['reused']:>5}  new {row['new']:>5}  budget {row['budget']}  "
                  f"  {row['question']}" + (f"  [{row['note']}]" if row["note"] else ""))


if __name__ == "__main__":
    main()
