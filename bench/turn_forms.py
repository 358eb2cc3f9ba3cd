"""What a turn's shorter forms cost: pack_turn on the 1,158-page Octave manual (loaded from
bench/packing.py's store), a first question, with and without the shorter forms that a read
cut at the first-token deadline reads (turn_packing.SHORTER_SHARES), side by side in one run.

Reported per budget: the median of --repeat warm packs (the first pack of each budget is
not counted), the number of forms and their prompt tokens. Counts with SmolLM2's tokenizer.

Usage: python bench/turn_forms.py [--budgets 2000,8000] [--repeat 5] [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUESTION = "How do I set a breakpoint in a function?"


def timed(pack, repeat: int) -> tuple[float, object]:
    """Median milliseconds of repeat packs after one untimed, and the last pack."""
    p = pack()
    ms = []
    for _ in range(repeat):
        t = time.perf_counter()
        p = pack()
        ms.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(ms), 1), p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budgets", default="2000,8000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    import bench.packing as bp
    import docchat.context.turn_packing as tp
    from docchat.context.conversation import Conversation

    sys.argv = [sys.argv[0]]
    opts = bp.parse_args()
    counter, _ = bp.make_counter("llamacpp")
    lib = bp.Library(Path(opts.cache))
    doc = lib.get(bp.EvalDir(opts.eval_dir)() / "octave.pdf")
    shares, rows = tp.SHORTER_SHARES, []
    for budget in (int(b) for b in args.budgets.split(",")):
        def pack(budget=budget):
            return tp.pack_turn([doc], QUESTION, counter, Conversation(),
                                search=lib.store.searcher([doc.id]), store=lib.store,
                                max_new_tokens=512, context_window=budget + 512)
        tp.SHORTER_SHARES = ()
        without, _ = timed(pack, args.repeat)
        tp.SHORTER_SHARES = shares
        with_forms, p = timed(pack, args.repeat)
        rows.append({"budget": budget, "ms_without_forms": without, "ms_with_forms": with_forms,
                     "prompt_tokens": p.tokens, "forms": [s.tokens for s in p.shorter]})
    out = {"document": doc.name, "pages": len(doc.pages), "question": QUESTION, "rows": rows}
    if args.json:
        print(json.dumps(out))
        return
    print(f"{doc.name} ({len(doc.pages)} pages), pack_turn median of {args.repeat} warm packs")
    print("| budget | without forms | with forms | prompt tokens | forms (tokens) |")
    print("|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['budget']} | {r['ms_without_forms']} ms | {r['ms_with_forms']} ms | "
              f"{r['prompt_tokens']} | {', '.join(map(str, r['forms'])) or '-'} |")


if __name__ == "__main__":
    main()
