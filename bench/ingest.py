"""Ingestion speed: docchat's full path (extract+clean+structure+tokens+SQLite) vs pdftotext.

Usage: python bench/ingest.py [--json] [--repeat N] [FILES...]
Default files: every PDF in ../shared/corpus/pdf plus the two Debian Reference manuals
(fetched with ../shared/corpus/fetch-debian-reference.sh). Needs `pdftotext`
(apt-get install -y poppler-utils).
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ingest  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"


def default_files() -> list[Path]:
    files = sorted((CORPUS / "pdf").glob("*.pdf"))
    fetch = CORPUS / "fetch-debian-reference.sh"
    if fetch.exists():
        out = subprocess.run([str(fetch)], capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
        files += [Path(out) / "debian-reference.en.pdf", Path(out) / "debian-reference.zh-cn.pdf"]
    return files


def store_factory(tmp: Path):
    """SessionStore.open(...).save_document, or None while the lead's store lacks it."""
    try:
        from docchat.store import SessionStore
    except ImportError:
        return None
    if not hasattr(SessionStore, "open") or not hasattr(SessionStore, "save_document"):
        return None
    return lambda k: SessionStore.open(tmp / f"bench-{k}.db")


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--repeat", type=int, default=3, help="runs per file; the fastest counts")
    args = ap.parse_args(argv)
    if not shutil.which("pdftotext"):
        sys.exit("pdftotext not found; apt-get install -y poppler-utils")
    files = args.files or default_files()
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        open_store = store_factory(tmp)
        counter = iter(range(10**6))
        for path in files:
            doc = ingest.load_document(path)  # warm-up, and the page count

            def ours() -> None:
                d = ingest.load_document(path)
                if open_store is not None:
                    open_store(next(counter)).save_document(d)

            ours_s = best_of(args.repeat, ours)
            ref_s = best_of(args.repeat, lambda: subprocess.run(
                ["pdftotext", "-enc", "UTF-8", str(path), str(tmp / "out.txt")], check=True))
            n = len(doc.pages)
            rows.append({"file": path.name, "pages": n, "sections": len(doc.sections), "tokens": doc.tokens,
                         "docchat_s": round(ours_s, 3), "pdftotext_s": round(ref_s, 3),
                         "docchat_pages_s": round(n / ours_s, 1), "pdftotext_pages_s": round(n / ref_s, 1),
                         "ratio": round(ref_s / ours_s, 2)})
    pages = sum(r["pages"] for r in rows)
    ours_total = sum(r["docchat_s"] for r in rows)
    ref_total = sum(r["pdftotext_s"] for r in rows)
    overall = {"pages": pages, "docchat_pages_s": round(pages / ours_total, 1),
               "pdftotext_pages_s": round(pages / ref_total, 1), "ratio": round(ref_total / ours_total, 2),
               "includes_sqlite_store": open_store is not None}
    if args.json:
        print(json.dumps({"files": rows, "overall": overall}))
        return 0
    print(f"{'file':32} {'pages':>5} {'docchat p/s':>11} {'pdftotext p/s':>13} {'ratio':>6}")
    for r in rows:
        print(f"{r['file']:32} {r['pages']:5} {r['docchat_pages_s']:11.0f} {r['pdftotext_pages_s']:13.0f} {r['ratio']:6.2f}")
    print(f"{'overall':32} {pages:5} {overall['docchat_pages_s']:11.0f} {overall['pdftotext_pages_s']:13.0f} "
          f"{overall['ratio']:6.2f}")
    print("ratio = docchat pages/s / pdftotext pages/s; docchat includes "
          + ("the SQLite store step" if open_store else "no store step (docchat.store not ready)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
