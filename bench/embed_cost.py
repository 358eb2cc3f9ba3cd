"""What a window vector costs: CPU and wall milliseconds per window for MiniLM reading N
wordpieces of each window (embeddings.WINDOW_TOKENS today), on one document's first windows,
the settings alternated in one process so that both meet the same machine.

    python3 bench/embed_cost.py --doc PDF [--tokens 64,128] [--windows 320] [--repeat 2] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DOC = ROOT.parent / "shared" / "corpus" / "pdf" / "debian-policy.pdf"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--doc", type=Path, default=DEFAULT_DOC)
    ap.add_argument("--tokens", default="64,128", help="wordpiece counts to compare")
    ap.add_argument("--windows", type=int, default=320)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from docchat.context import embeddings
    from docchat.library import windows
    from ingest import load_document

    if not embeddings.available():
        raise SystemExit("MiniLM is not installed: pip install -r requirements.txt")
    doc = load_document(str(args.doc))
    units = [(s, a, b) for s in doc.sections for a, b in windows.section_windows(s)]
    texts = [embeddings.window_text(s, a, b) for s, a, b in units[:args.windows]]
    encoder = embeddings.Encoder()
    encoder.encode(texts[:16], 64)  # load and warm
    counts = [int(t) for t in args.tokens.split(",")]
    cpu: dict[int, list[float]] = {t: [] for t in counts}
    wall: dict[int, list[float]] = {t: [] for t in counts}
    for _ in range(args.repeat):
        for t in counts:
            c0, w0 = time.process_time(), time.perf_counter()
            encoder.encode(texts, t)
            cpu[t].append((time.process_time() - c0) / len(texts) * 1000)
            wall[t].append((time.perf_counter() - w0) / len(texts) * 1000)
    rows = [{"wordpieces": t, "cpu_ms_per_window": round(statistics.median(cpu[t]), 1),
             "wall_ms_per_window": round(statistics.median(wall[t]), 1),
             "runs_cpu_ms": [round(x, 1) for x in cpu[t]]} for t in counts]
    out = {"document": args.doc.name, "windows": len(texts), "repeat": args.repeat,
           "load_average": round(os.getloadavg()[0], 2), "rows": rows}
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{args.doc.name}: {len(texts)} windows, {args.repeat} runs each, "
          f"load {out['load_average']}")
    print("| wordpieces | CPU ms / window | wall ms / window |")
    print("|---:|---:|---:|")
    for r in rows:
        print(f"| {r['wordpieces']} | {r['cpu_ms_per_window']} | {r['wall_ms_per_window']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
