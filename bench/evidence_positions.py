"""Where evidence sits in its window: for the tuning sets' questions of some kinds (no
history), how far into its window (docchat/library/windows.py) each evidence string starts,
in characters with whitespace removed, English and Chinese apart. A window's vector reads only
its start (MiniLM: 64 wordpieces, about 45 words; USE: characters), so a string that starts
late is one its window's vector never saw.

Tuning sets only; a blind set is refused (its questions are never looked at one by one).

    python3 bench/evidence_positions.py [--kinds paraphrase] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import packing as bp  # noqa: E402
from bench.miss_ranks import locate, tuning_sets  # noqa: E402
from docchat.library import windows  # noqa: E402
from ingest.segment import has_cjk  # noqa: E402

EDGES = (150, 300, 600)


def bucket(offset: int) -> str:
    return next((f"<{e}" for e in EDGES if offset < e), f">={EDGES[-1]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", default="paraphrase")
    ap.add_argument("--json", action="store_true")
    own = ap.parse_args()
    _, lib, items, paths = tuning_sets()
    kinds = set(own.kinds.split(","))
    counts: Counter = Counter()
    for it in (it for it in items if it.kind in kinds and not it.history):
        docs = [lib.get(paths[(it.set, k)]) for k in it.docs]
        for ev in it.evidence:
            at = locate(docs, ev)
            if at is None or at[2] < 0:
                counts["not in one block"] += 1
                continue
            di, p, b = at
            section = docs[di].sections[p]
            first, last = next((a, z) for a, z in windows.section_windows(section)
                               if a <= b <= z)
            text = bp.squash(windows.window_text(section, first, last))
            lang = "zh" if has_cjk(ev) else "en"
            counts[f"{lang} {bucket(text.find(bp.squash(ev)))}"] += 1
    out = {"kinds": sorted(kinds), "starts": dict(sorted(counts.items()))}
    if own.json:
        print(json.dumps(out))
        return
    print("| evidence | starts at (characters into its window) | strings |")
    print("|---|---|---:|")
    for key, n in out["starts"].items():
        lang, _, where = key.partition(" ")
        print(f"| {lang} | {where} | {n} |")


if __name__ == "__main__":
    main()
