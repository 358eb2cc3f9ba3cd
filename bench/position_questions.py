"""The tuning questions that ask about a collection's first or last entries
(retrieval.asks_position), found at 2k / 4k / 8k with and without the opening or closing
windows they get (relevance.position_windows), in one process on the same stored documents.

    python3 bench/position_questions.py [--json]

Reads the tuning sets from the bench caches of bench/miss_ranks.py (the first group from the
default cache, each later one from its own folder, as GROUPS lists); a group whose cache is
missing is skipped. Prints one line per question and a table of totals.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import miss_ranks, packing  # noqa: E402
from docchat.context import embeddings, relevance  # noqa: E402

BUDGETS = (2000, 4000, 8000)
# (tuning sets, their --cache folder; "" for packing.py's default)
GROUPS = [("tuning,test,fresh,old,tune2,blind,blind2,blind3,blind4,blind5", ""),
          ("blind6,blind7,blind8,blind9", "~/.cache/docchat-eval-b")] + [
    (f"blind{n}", f"~/.cache/docchat-eval-{c}") for n, c in zip(range(10, 18), "cdefghij")]


def measure() -> tuple[list[dict], dict[str, int]]:
    asks = relevance.asks_position
    rows: list[dict] = []
    totals = {f"{mode}-{b}": 0 for mode in ("without", "with") for b in BUDGETS}
    for only, cache in GROUPS:
        folder = os.path.expanduser(cache) if cache else ""
        if folder and not Path(folder).is_dir():
            print(f"skipped {only}: no cache {folder}", file=sys.stderr)
            continue
        args, lib, items, paths = miss_ranks.tuning_sets(only, folder)
        embeddings.configure(argparse.Namespace(embedder=args.embedder))
        counter, _ = packing.make_counter(args.counter)
        items = [it for it in items if asks(it.question)]
        packing.prepare_vectors(items, paths, lib)
        for it in items:
            docs = [lib.get(paths[(it.set, k)]) for k in it.docs]
            row = {"id": it.id, "kind": it.kind}
            for mode, rule in (("without", lambda q: ""), ("with", asks)):
                relevance.asks_position = rule
                try:
                    for b in BUDGETS:
                        packed, _ = packing.docchat_pack(docs, it, b, counter, lib.store,
                                                         previous="append")
                        hit = packing.found(it.evidence, packed.text)
                        row[f"{mode}-{b}"] = hit
                        totals[f"{mode}-{b}"] += hit
                finally:
                    relevance.asks_position = asks
            rows.append(row)
    return rows, totals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="one JSON object")
    own = ap.parse_args()
    sys.argv = sys.argv[:1]  # tuning_sets() parses packing.py's own arguments
    rows, totals = measure()
    if own.json:
        print(json.dumps({"questions": rows, "found": totals}, ensure_ascii=False))
        return
    for r in rows:
        print(r["id"], r["kind"], [int(r[f"without-{b}"]) for b in BUDGETS], "->",
              [int(r[f"with-{b}"]) for b in BUDGETS])
    print(f"\n| {len(rows)} questions | " + " | ".join(f"{b // 1000}k" for b in BUDGETS) + " |")
    print("|---|" + "---:|" * len(BUDGETS))
    for mode in ("without", "with"):
        print(f"| {mode} the position windows | "
              + " | ".join(str(totals[f"{mode}-{b}"]) for b in BUDGETS) + " |")


if __name__ == "__main__":
    main()
