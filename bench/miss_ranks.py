"""Where docchat's misses rank: for each tuning question (no history) whose evidence is not all
in the packed context, where each missing evidence string's place ranked in the scores the
selection was given.

For every missing string: its section's rank among the fused section scores, and the rank of
the first window holding it in the whole question's windows, in each part's windows (a question
that asks several things) and in the windows by meaning alone ("-": in none of them). Then the
totals: strings missed, those in no window ranking at all, those in no section ranking.

Tuning sets only (the sets bench/packing.py tunes on); a blind set is refused: its questions
are never looked at one by one.

    python3 bench/miss_ranks.py --kinds paraphrase --budgets 8000 [--verbose] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import packing as bp  # noqa: E402
from docchat.context import embeddings, selection  # noqa: E402

TUNING_QUESTIONS = ["bench/eval/tune2.json"] + [f"bench/eval/blind{s}.json"
                                               for s in ("", "2", "3", "4", "5", "6", "7", "8",
                                                         "9", "10", "11", "12", "13", "14", "15",
                                                         "16", "17", "18", "19", "20",
                                                         "21", "22", "23", "24", "25", "26",
                                                         "27", "28", "29", "30", "31",
                                                         "32", "33", "34", "35", "36",
                                                         "37")]


class Spy:
    """selection.select, recording what it was given and chose for the last pack."""

    def __init__(self) -> None:
        self.real, self.last = selection.select, {}

    def __call__(self, documents, positions, qterms, counter, avail, carry=(), windows=(),
                 policy=selection.POLICY, present=None, **kw):
        out = self.real(documents, positions, qterms, counter, avail, carry, windows, policy,
                        present, **kw)
        self.last = {"positions": positions, "windows": windows,
                     "aspects": kw.get("aspects", []), "meant": kw.get("meant", []),
                     "out": out}
        return out


def locate(docs, evidence: str) -> tuple[int, int, int] | None:
    """(document, section position, block; -1: across blocks) holding the evidence."""
    want = bp.squash(evidence)
    for di, d in enumerate(docs):
        for p, s in enumerate(d.sections):
            for b, block in enumerate(s.blocks):
                if want in bp.squash(block.text):
                    return di, p, b
            if want in bp.squash(" ".join(block.text for block in s.blocks)):
                return di, p, -1
    return None


def tuning_sets(only: str = "", cache: str = ""):
    """(bench/packing.py's args, its document library, the tuning questions, their documents'
    paths), refusing to go on if a blind set is among TUNING_QUESTIONS. only: the set names
    to keep (comma-separated, e.g. "blind8,blind9"; "": all); cache: bench/packing.py's
    --cache folder ("": its default)."""
    wanted = set(only.split(",")) if only else set()
    builtin = [s for s in ("tuning", "test", "fresh", "old") if not wanted or s in wanted]
    # Only the sets kept are loaded, so only their documents are fetched and ingested.
    files = [q for q in TUNING_QUESTIONS if not wanted or Path(q).stem in wanted]
    sys.argv = [sys.argv[0], "--sets", ",".join(builtin), "--methods", "docchat",
                "--followups", "append", "--no-timing"] + [
        a for q in files for a in ("--questions", q)] + (
        ["--cache", cache] if cache else [])
    args = bp.parse_args()
    if any(bp.blind(Path(q).stem) for q in TUNING_QUESTIONS):
        raise SystemExit("a blind set is in the list: its questions are not looked at")
    lib = bp.Library(Path(args.cache))
    items, paths = bp.load_sets(args, builtin, bp.EvalDir(args.eval_dir))
    return args, lib, items, paths


def window_rank(windows, at: tuple[int, int, int]) -> int | None:
    di, p, b = at
    return next((k for k, w in enumerate(windows)
                 if w[0] == di and w[1] == p and (b < 0 or w[2] <= b <= w[3])), None)


def packed_blocks(out, at: tuple[int, int, int]) -> str:
    """How the section holding a missing string went in: "-" (not at all), "whole", or
    "shown/all" blocks."""
    di, p, _ = at
    for passage in out[di]:
        if passage.section.index == p:
            if passage.blocks is None:
                return "whole"
            return f"{len(passage.blocks)}/{len(passage.section.blocks)}"
    return "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", default="paraphrase")
    ap.add_argument("--budgets", default="8000")
    ap.add_argument("--verbose", action="store_true", help="one line per missing string")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", default="", help="tuning sets to keep, e.g. blind8,blind9")
    ap.add_argument("--cache", default="", help="bench/packing.py's --cache folder")
    own = ap.parse_args()
    args, lib, items, paths = tuning_sets(own.only, own.cache)
    embeddings.configure(argparse.Namespace(embedder=args.embedder))
    counter, _ = bp.make_counter(args.counter)
    kinds = set(own.kinds.split(","))
    items = [it for it in items if it.kind in kinds and not it.history]
    bp.prepare_vectors(items, paths, lib)
    spy = Spy()
    selection.select = spy
    totals = {"questions": 0, "missed_questions": 0, "missed_strings": 0,
              "in_no_window_ranking": 0, "in_no_section_ranking": 0,
              "section_in_part": 0}
    for it in items:
        docs = [lib.get(paths[(it.set, k)]) for k in it.docs]
        for budget in (int(b) for b in own.budgets.split(",")):
            totals["questions"] += 1
            spy.last = {}
            packed, _ = bp.docchat_pack(docs, it, budget, counter, lib.store,
                                        previous="append")
            if bp.found(it.evidence, packed.text) or not spy.last:
                continue
            totals["missed_questions"] += 1
            seen = spy.last
            for ev in it.evidence:
                if bp.squash(ev) in bp.squash(packed.text):
                    continue
                at = locate(docs, ev)
                if at is None:
                    continue
                totals["missed_strings"] += 1
                scores = seen["positions"][at[0]]
                ranked = sorted(scores, key=lambda k: -scores[k])
                section = ranked.index(at[1]) if at[1] in ranked else None
                win, meant = window_rank(seen["windows"], at), window_rank(seen["meant"], at)
                parts = [window_rank(w, at) for w in seen["aspects"]]
                if win is None and meant is None and all(r is None for r in parts):
                    totals["in_no_window_ranking"] += 1
                if section is None:
                    totals["in_no_section_ranking"] += 1
                shown = packed_blocks(seen["out"], at)
                if shown not in ("-", "whole"):
                    totals["section_in_part"] += 1
                if own.verbose:
                    print(f"{it.set} {budget} {it.id} [{it.kind}] {ev[:50]!r}: section "
                          f"{section if section is not None else '-'}, window "
                          f"{win if win is not None else '-'}, parts {parts}, meaning "
                          f"{meant if meant is not None else '-'}, packed {shown}", file=sys.stderr)
    if own.json:
        print(json.dumps({"kinds": sorted(kinds), "budgets": own.budgets, **totals}))
        return
    print("| questions | missed | strings missed | in no window ranking | in no section ranking"
          " | their section in part |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {totals['questions']} | {totals['missed_questions']} | {totals['missed_strings']}"
          f" | {totals['in_no_window_ranking']} | {totals['in_no_section_ranking']}"
          f" | {totals['section_in_part']} |")


if __name__ == "__main__":
    main()
