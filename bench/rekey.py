"""Carry bench caches over to a new ingestion key after an ingestion change: copy each cache's
`bench-OLDKEY.db` to `bench-NEWKEY.db` (NEWKEY: this checkout's `bench.packing.ingest_key()`)
and delete from the copy the documents that `bench/sections_diff.py --text` reported as
changed ("DIFF"), so that they are ingested again, and their vectors computed again, on first
use; the others keep their stored ingestion and vectors (re-ingesting a whole cache takes half
an hour on 2 cores). A cache already holding `bench-NEWKEY.db` is left alone.

    python3 bench/sections_diff.py --key OLDKEY --text CACHE... > LOG
    python3 bench/rekey.py --key OLDKEY LOG

Run it only when the LOG is of this checkout's ingestion (the comparison re-ingests with it).
"""
from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Tables keyed by a stored document's id (the full-text tables too: they are not cascaded).
DOC_TABLES = ("pages", "sections", "window_docs", "sections_fts", "windows_fts")


def read_log(lines) -> dict[Path, dict[str, bool]]:
    """sections_diff.py's lines as cache -> {document path: changed}."""
    out: dict[Path, dict[str, bool]] = {}
    for line in lines:
        parts = line.split()
        if len(parts) >= 3 and parts[0] in ("same", "DIFF"):
            out.setdefault(Path(parts[1]), {})[parts[2]] = parts[0] == "DIFF"
    return out


def carry(cache: Path, old: str, new: str, changed: set[str]) -> int:
    """Copy bench-old.db to bench-new.db without the changed documents; how many were
    dropped (-1: the new database exists already)."""
    target = cache / f"bench-{new}.db"
    if target.exists():
        return -1
    src = sqlite3.connect(f"file:{cache / f'bench-{old}.db'}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
        dropped = 0
        for doc_id, sha, path in dst.execute("select id, sha256, path from documents").fetchall():
            if path not in changed:
                continue
            for table in DOC_TABLES:
                dst.execute(f"delete from {table} where doc_id=?", [doc_id])
            dst.execute("delete from documents where id=?", [doc_id])
            if not dst.execute("select 1 from documents where sha256=?", [sha]).fetchone():
                dst.execute("delete from embeddings where sha256=?", [sha])
            dropped += 1
        dst.commit()
        return dropped
    finally:
        src.close()
        dst.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--key", required=True, help="the ingestion key the LOG compared with")
    ap.add_argument("log", type=Path, help="bench/sections_diff.py --text's output")
    args = ap.parse_args()
    from bench.packing import ingest_key

    new = ingest_key()
    if new == args.key:
        raise SystemExit(f"the ingestion key is still {new}: nothing to carry over")
    for cache, docs in read_log(args.log.read_text(encoding="utf-8").splitlines()).items():
        changed = {p for p, diff in docs.items() if diff}
        got = carry(cache, args.key, new, changed)
        print(f"{cache}: " + (f"bench-{new}.db exists, left alone" if got < 0 else
                              f"{len(docs) - got} documents carried to {new}, {got} dropped"))


if __name__ == "__main__":
    main()
