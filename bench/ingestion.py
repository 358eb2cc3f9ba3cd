"""Ingestion speed: docchat's full path (extract+clean+structure+tokens+SQLite) vs pdftotext.

Usage: python bench/ingestion.py [--json] [--repeat N] [FILES...]
Default files: every PDF in ../shared/corpus/pdf plus the two Debian Reference manuals
(fetched with ../shared/corpus/fetch-debian-reference.sh). Needs `pdftotext`
(apt-get install -y poppler-utils).

Each file: one untimed warm-up, then N timed rounds of (docchat, pdftotext) interleaved,
median of each. jieba's segmentation cache is cleared before every docchat run, so repeats
do not reuse the previous run's work; the very first docchat run of the process (which
pays jieba's dictionary load when the document has Chinese) is reported as first_s.
pdftotext uses one core; docchat forks one process per core for long documents
("cores" column).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ingest
from ingest import parallel, segment
from ingest.pdf import PARALLEL_MIN_PAGES

ROOT = Path(__file__).resolve().parent.parent

CORPUS = ROOT.parent / "shared" / "corpus"

# How `python -m bench all` runs this script (bench/README.md, "Running every bench").
BENCH = {"quick": ["--repeat", "1"], "full": [], "timeout_s": 300, "order": 10}


def default_files() -> list[Path]:
    files = sorted((CORPUS / "pdf").glob("*.pdf"))
    fetch = CORPUS / "fetch-debian-reference.sh"
    if fetch.exists():
        out = subprocess.run([str(fetch)], capture_output=True, text=True,
                             check=True).stdout.strip().splitlines()[-1]
        files += [Path(out) / "debian-reference.en.pdf", Path(out) / "debian-reference.zh-cn.pdf"]
    return files


def store_factory(tmp: Path):
    """SessionStore.open(...), or None while the lead's store lacks save_document."""
    try:
        from docchat.library.store import SessionStore
    except ImportError:
        return None
    if not hasattr(SessionStore, "open") or not hasattr(SessionStore, "save_document"):
        return None
    return lambda k: SessionStore.open(tmp / f"bench-{k}.db")


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per file; the median counts")
    args = ap.parse_args(argv)
    if not shutil.which("pdftotext"):
        sys.exit("pdftotext not found; apt-get install -y poppler-utils")
    files = args.files or default_files()
    rows = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        open_store = store_factory(tmp)
        counter = iter(range(10**6))

        def ours(path: Path) -> float:
            # A fresh, already open database per run: opening and migrating it is not ingestion.
            store = open_store(next(counter)) if open_store is not None else None
            segment.clear_cache()

            def run() -> None:
                d = ingest.load_document(path)
                if store is not None:
                    store.save_document(d)
            return timed(run)

        def ref(path: Path) -> float:
            return timed(lambda: subprocess.run(
                ["pdftotext", "-enc", "UTF-8", str(path), str(tmp / "out.txt")], check=True))

        for path in files:
            # the process's first run of this file: warm-up, untimed in the median
            first_s = ours(path)
            doc = ingest.load_document(path)
            ours_t, ref_t = [], []
            for _ in range(args.repeat):
                ours_t.append(ours(path))
                ref_t.append(ref(path))
            ours_s, ref_s = statistics.median(ours_t), statistics.median(ref_t)
            n = len(doc.pages)
            cores = parallel.processes(2) if n >= PARALLEL_MIN_PAGES else 1
            rows.append({"file": path.name, "pages": n, "sections": len(doc.sections),
                         "tokens": doc.tokens, "cores": cores, "first_s": round(first_s, 3),
                         "docchat_s": round(ours_s, 3), "pdftotext_s": round(ref_s, 3),
                         "docchat_pages_s": round(n / ours_s, 1),
                         "pdftotext_pages_s": round(n / ref_s, 1),
                         "ratio": round(ref_s / ours_s, 2)})
    pages = sum(r["pages"] for r in rows)
    ours_total = sum(r["docchat_s"] for r in rows)
    ref_total = sum(r["pdftotext_s"] for r in rows)
    overall = {"pages": pages, "docchat_pages_s": round(pages / ours_total, 1),
               "pdftotext_pages_s": round(pages / ref_total, 1),
               "ratio": round(ref_total / ours_total, 2),
               "includes_sqlite_store": open_store is not None, "repeat": args.repeat,
               "cpu_cores": parallel.cores(),
               "load_avg_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)]}
    if args.json:
        print(json.dumps({"files": rows, "overall": overall}))
        return 0
    print(f"{'file':28} {'pages':>5} {'cores':>5} {'first s':>7} {'docchat p/s':>11} "
          f"{'pdftotext p/s':>13} {'ratio':>6}")
    for r in rows:
        print(f"{r['file']:28} {r['pages']:5} {r['cores']:5} {r['first_s']:7.2f} "
              f"{r['docchat_pages_s']:11.0f} {r['pdftotext_pages_s']:13.0f} {r['ratio']:6.2f}")
    print(f"{'overall':28} {pages:5} {'':5} {'':7} {overall['docchat_pages_s']:11.0f} "
          f"{overall['pdftotext_pages_s']:13.0f} {overall['ratio']:6.2f}")
    print("ratio = docchat pages/s / pdftotext pages/s (medians of " + str(args.repeat)
          + " runs); docchat includes "
          + ("the SQLite store step" if open_store
             else "no store step (docchat.library.store not ready)")
          + f"; pdftotext uses 1 core, docchat the 'cores' column; load average "
            f"{load_before:.1f} -> "
          + f"{os.getloadavg()[0]:.1f} on {parallel.cores()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
