"""Which stored bench documents an ingestion change restructures: re-ingest every document of
bench/packing.py's caches with this checkout's `ingest` and compare its sections' heading paths
with the ones stored under an earlier ingestion key (nothing is written); with --text, their
blocks' kinds, texts and pages too (a change to the extracted text, not only to the headings).

    python3 bench/sections_diff.py --key OLDKEY [--text] [--json] CACHE [CACHE ...]

OLDKEY: the `bench-OLDKEY.db` to compare with (the ingestion key before the change,
`bench.packing.ingest_key()` at that commit). Prints one line per document ("same" or "DIFF"
with the section counts and up to three new heading paths) and the totals.
"""
from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest import load_document  # noqa: E402


def compare(cache: Path, key: str, text: bool = False):
    """(path, stored sections, new sections or None if it failed, error) per document
    stored in cache's bench-KEY.db: a section is its heading path, and with text its
    blocks as (kind, text, page) too."""
    db = sqlite3.connect(f"file:{cache / f'bench-{key}.db'}?mode=ro", uri=True)
    try:
        docs = db.execute("select id, path from documents order by id").fetchall()
        for doc_id, path in docs:
            old = [(tuple(json.loads(h)),) + ((tuple(map(tuple, json.loads(b))),) if text else ())
                   for h, b in db.execute("select heading_path, blocks from sections"
                                          " where doc_id=? order by idx", [doc_id])]
            try:
                new = [(tuple(s.heading_path),)
                       + ((tuple((b.kind, b.text, b.page) for b in s.blocks),) if text else ())
                       for s in load_document(Path(path)).sections]
            except Exception as e:  # a document that no longer loads is a difference too
                yield path, old, None, str(e)
                continue
            yield path, old, new, ""
    finally:
        db.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--key", required=True, help="the stored ingestion key to compare with")
    ap.add_argument("--text", action="store_true", help="compare the blocks' texts too")
    ap.add_argument("--json", action="store_true", help="one JSON object")
    ap.add_argument("caches", nargs="+", type=Path)
    args = ap.parse_args()
    rows = []
    for cache in args.caches:
        for path, old, new, error in compare(cache.expanduser(), args.key, args.text):
            changed = new is None or new != old
            heads = set(h[0] for h in old)
            added = [] if new is None else sorted(set(h[0] for h in new) - heads)[:3]
            rows.append({"cache": str(cache), "path": path, "changed": changed,
                         "sections": [len(old), None if new is None else len(new)],
                         "new_headings": [" > ".join(h) for h in added], "error": error})
            if not args.json:
                r = rows[-1]
                print("DIFF" if changed else "same", cache, path, *r["sections"],
                      r["new_headings"] or "", error, flush=True)
    total = {"documents": len(rows), "changed": sum(r["changed"] for r in rows)}
    if args.json:
        print(json.dumps({"key": args.key, "documents": rows, **total}, ensure_ascii=False))
    else:
        print(f"\n{total['changed']} of {total['documents']} stored documents changed")


if __name__ == "__main__":
    main()
