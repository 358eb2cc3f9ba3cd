"""Document comparison: synthetic edits on real documents, real version pairs, speed, and the
word-diff library chosen (difflib vs diff-match-patch vs redlines).

Usage: python -m bench run compare   (or: nice python bench/compare.py [--json] [--trials 4]
       [--only synthetic,files,real,speed,libs])

Goals (exit status 1 when missed): precision and recall of changed sections >= 0.95 and
unchanged sections reported as changed <= 2% on every synthetic edit; a 193-page pair
compares in < 5 s after ingest.

- synthetic: each document is ingested once (ingest.load_document), then edited as a
  Document (its sections' blocks): a number changed, a clause (sentence) deleted, a clause
  inserted, a section moved (at least 3 places), every section renumbered (the first number
  of each heading + 1; "k. " put before headings without one). Three sections per trial
  (the move: one), `--trials` seeds. Reported changed = pairs not "unchanged", by old
  section; precision and recall against the sections edited, and the share of unedited
  sections reported as changed.
- real: licence versions from /usr/share/common-licenses (GPL-2/3, LGPL-2.1/3, GFDL-1.2/1.3,
  MPL-1.1/2.0) and debian-policy as text vs PDF: counts per status, share aligned, seconds.
- speed: debian-policy.pdf (193 pages) against an edited copy of itself, after ingest.
- libs: the word diff of each synthetic edit's section by difflib (docchat.comparison.redline),
  diff-match-patch (word mode + diff_cleanupSemantic) and redlines, where installed:
  milliseconds and characters marked changed per character really changed (1.0 = minimal).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

BENCH = {"quick": ["--trials", "1"], "full": ["--trials", "4"], "timeout_s": 300, "order": 60}
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docchat.comparison.align import compare  # noqa: E402
from docchat.comparison.redline import Paragraph, common_ends, diff  # noqa: E402
from ingest import load_document  # noqa: E402
from ingest.document import Block, Document  # noqa: E402
from ingest.segment import cut_words  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpus"
LICENSES = Path("/usr/share/common-licenses")
CACHE = Path(tempfile.gettempdir()) / "docchat-bench-compare"
DOCS = [SHARED / "text" / n for n in ("Apache-2.0.txt", "GPL-3.txt", "MPL-2.0.txt", "lppl.txt",
                                      "fhs-3.0.txt", "debian-policy.txt")]
DOCS += [ROOT / "tests" / "data" / "summarize" / "vimtutor-zh.txt",
         SHARED / "pdf" / "debian-policy.pdf", SHARED / "pdf" / "lppl.pdf"]
CLAUSE = {"en": "The Licensee shall notify the Licensor in writing within 30 days of any "
                "change to these terms.",
          "zh": "被许可人应在任何条款变更后三十日内书面通知许可人。"}
_SENTENCE = re.compile(r"(?<=[.;!?。；！？])\s*")
_DIGITS = re.compile(r"\d+")
_HEAD_NUMBER = re.compile(r"^(\s*(?:[A-Za-z]+\s)?)(\d+)")


def _ingest_version() -> str:
    digest = hashlib.blake2b(digest_size=6)
    for f in sorted((ROOT / "ingest").glob("*.py")):
        digest.update(f.read_bytes())
    return digest.hexdigest()


def load(path: Path) -> Document:
    """path ingested once; later runs read the pickled Document (while ingest/ is the same)."""
    CACHE.mkdir(exist_ok=True)
    cached = CACHE / (path.name + f".{path.stat().st_size}.{_ingest_version()}.pickle")
    if cached.exists():
        return pickle.loads(cached.read_bytes())
    if path.suffix == "" or path.parent == LICENSES:  # the licences have no suffix
        copy = CACHE / (path.name + ".txt")
        shutil.copy(path, copy)
        path = copy
    doc = load_document(path)
    cached.write_bytes(pickle.dumps(doc))
    return doc


def _with_blocks(section, blocks):
    return replace(section, blocks=tuple(blocks))


def _edit_text(doc: Document, i: int, fn) -> Document | None:
    """doc with fn applied to one block of section i (the first block where fn changes it)."""
    s = doc.sections[i]
    for k, b in enumerate(s.blocks):
        new = fn(b.text)
        if new is not None and new != b.text:
            blocks = list(s.blocks)
            blocks[k] = Block(b.kind, new, b.page)
            sections = list(doc.sections)
            sections[i] = _with_blocks(s, blocks)
            return replace(doc, sections=sections)
    return None


_WORD_CHAR = re.compile(r"[^\W_]")


def change_number(text: str) -> str | None:
    m = _DIGITS.search(text)
    return None if m is None else text[:m.start()] + str(int(m.group()) + 1) + text[m.end():]


def delete_clause(text: str) -> str | None:
    """text without its middle sentence, among those of a few words: a part that is only
    markup (vimtutor's closing "**") is no clause, and deleting it no edit."""
    parts = [p for p in _SENTENCE.split(text) if p.strip()]
    worded = [k for k, p in enumerate(parts) if len(_WORD_CHAR.findall(p)) >= 4]
    if len(parts) < 2 or not worded:
        return None
    del parts[worded[len(worded) // 2]]
    return " ".join(parts)


def insert_clause(language: str):
    def fn(text: str) -> str | None:
        parts = [p for p in _SENTENCE.split(text) if p.strip()]
        if not parts:
            return None
        parts.insert(len(parts) // 2 + 1, CLAUSE[language])
        return " ".join(parts)
    return fn


def moved(doc: Document, i: int, rng: random.Random) -> Document:
    sections = list(doc.sections)
    s = sections.pop(i)
    far = [k for k in range(len(sections) + 1) if abs(k - i) >= 3]
    sections.insert(rng.choice(far), s)
    return replace(doc, sections=[replace(x, index=k) for k, x in enumerate(sections)])


def renumbered(doc: Document) -> Document:
    def bump(title: str, k: int) -> str:
        m = _HEAD_NUMBER.match(title)
        if m:
            return title[:m.start(2)] + str(int(m.group(2)) + 1) + title[m.end(2):]
        return f"{k + 1}. {title}" if title else title

    sections = [replace(s, heading_path=tuple(bump(t, s.index) for t in s.heading_path))
                for s in doc.sections]
    return replace(doc, sections=sections)


def edited(doc: Document, kind: str, rng: random.Random, n: int = 3):
    """(new document, old indexes edited) for one trial of an edit kind."""
    fns = {"number": change_number, "delete": delete_clause,
           "insert": insert_clause(doc.language)}
    if kind == "renumber":
        return renumbered(doc), set()
    order = list(range(len(doc.sections)))
    rng.shuffle(order)
    if kind == "move":
        if len(doc.sections) < 5:  # nowhere 3 places away
            return doc, set()
        i = next(i for i in order if len(doc.sections[i].text) >= 200)
        return moved(doc, i, rng), {i}
    truth: set[int] = set()
    for i in order:
        new = _edit_text(doc, i, fns[kind])
        if new is not None:
            doc = new
            truth.add(i)
        if len(truth) == n:
            break
    return doc, truth


def score(doc: Document, new: Document, truth: set[int]) -> dict:
    c = compare(doc, new)
    reported = {p.old.index if p.old else ("added", p.new.index)
                for p in c.pairs if p.status != "unchanged"}
    tp = len(reported & truth)
    fp_unchanged = len({r for r in reported if isinstance(r, int)} - truth)
    return {"tp": tp, "fp": len(reported) - tp, "fn": len(truth) - tp,
            "fp_unchanged": fp_unchanged, "unedited": len(doc.sections) - len(truth),
            "seconds": c.seconds}


def synthetic(docs: dict[str, Document], trials: int) -> dict:
    out = {}
    for kind in ("number", "delete", "insert", "move", "renumber"):
        total = {"tp": 0, "fp": 0, "fn": 0, "fp_unchanged": 0, "unedited": 0}
        for name, doc in docs.items():
            for seed in range(trials):
                new, truth = edited(doc, kind, random.Random(f"{name}/{kind}/{seed}"))
                r = score(doc, new, truth)
                for k in total:
                    total[k] += r[k]
        tp, fp, fn = total["tp"], total["fp"], total["fn"]
        out[kind] = {**total, "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0,
                     "recall": round(tp / (tp + fn), 4) if tp + fn else 1.0,
                     "unchanged_reported": round(total["fp_unchanged"] / total["unedited"], 4)}
    return out


TEXT_FILES = [SHARED / "text" / n for n in ("Apache-2.0.txt", "GPL-3.txt", "MPL-2.0.txt",
                                              "lppl.txt", "fhs-3.0.txt")]
TEXT_FILES.append(ROOT / "tests" / "data" / "summarize" / "vimtutor-zh.txt")


def file_edits(trials: int) -> dict:
    """Edits made to the text file, both versions ingested from their files (as two uploads
    are): found = the edit is in some pair's inserted or deleted text; extra = pairs reported
    changed beyond the edit's own, per unchanged section."""
    out = {}
    for kind in ("number", "delete", "insert"):
        found = extra = sections = n = 0
        for path in TEXT_FILES:
            text = path.read_text(encoding="utf-8")
            old = load(path)
            paras = [m for m in re.finditer(r"[^\n](?:.|\n(?!\n))*", text) if len(m.group()) > 80]
            for seed in range(trials):
                rng = random.Random(f"file/{path.name}/{kind}/{seed}")
                fn = {"number": change_number, "delete": delete_clause,
                      "insert": insert_clause(old.language)}[kind]
                picks = [m for m in paras if fn(m.group()) not in (None, m.group())]
                if not picks:
                    continue
                m = rng.choice(picks)
                edited_text = text[:m.start()] + fn(m.group()) + text[m.end():]
                copy = CACHE / f"edit-{kind}-{seed}-{path.name}"
                copy.write_text(edited_text, encoding="utf-8")
                c = compare(old, load_document(copy))
                copy.unlink()
                reported = [p for p in c.pairs if p.status != "unchanged"]
                marked = " ".join(t for p in reported for t in p.inserted + p.deleted)
                n += 1
                found += bool(reported) and bool(marked.strip())
                extra += max(0, len(reported) - 1)
                sections += len(old.sections) - 1
        out[kind] = {"edits": n, "found": found, "extra_pairs": extra,
                     "extra_share": round(extra / sections, 4) if sections else 0.0}
    return out


REAL = [("GPL-2", "GPL-3"), ("LGPL-2.1", "LGPL-3"), ("GFDL-1.2", "GFDL-1.3"),
        ("MPL-1.1", "MPL-2.0")]


def real() -> list[dict]:
    pairs = [(LICENSES / a, LICENSES / b) for a, b in REAL]
    pairs += [(SHARED / "text" / "debian-policy.txt", SHARED / "pdf" / "debian-policy.pdf"),
              (SHARED / "text" / "lppl.txt", SHARED / "pdf" / "lppl.pdf"),
              (SHARED / "text" / "GPL-3.txt", SHARED / "text" / "Apache-2.0.txt")]
    rows = []
    for a, b in pairs:
        old, new = load(a), load(b)
        c = compare(old, new)
        rows.append({"old": a.name, "new": b.name, "sections": [len(old.sections),
                                                                 len(new.sections)],
                     "verdict": c.verdict, "aligned": round(c.aligned, 3),
                     "overlap": round(c.overlap, 3), **c.summary(),
                     "seconds": round(c.seconds, 3)})
    return rows


def speed(doc: Document) -> dict:
    times = []
    for seed in range(3):
        new, _ = edited(doc, "insert", random.Random(seed), n=10)
        t = time.perf_counter()
        compare(doc, new)
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    compare(doc, doc)
    same = time.perf_counter() - t
    return {"document": doc.name, "pages": len(doc.pages), "sections": len(doc.sections),
            "edited_s": [round(x, 3) for x in times], "same_s": round(same, 3)}


def _true_change(old: str, new: str) -> int:
    """Characters really changed: what is left of each text after their common prefix and
    suffix (one edit per text here)."""
    p, s = common_ends(old, new)
    return max(1, len(old) - p - s + len(new) - p - s)


def _difflib(old: str, new: str) -> int:
    return sum(len(o.text) for o in diff([Paragraph(old, 1)], [Paragraph(new, 1)])
               if o.op != "=")


def _dmp(old: str, new: str) -> int:
    from diff_match_patch import diff_match_patch

    d = diff_match_patch()
    # word mode: each word becomes one character (the library's lines-to-chars trick)
    a, b, vocab = d.diff_linesToChars(old.replace(" ", " \n"), new.replace(" ", " \n"))
    diffs = d.diff_main(a, b, False)
    d.diff_charsToLines(diffs, vocab)
    d.diff_cleanupSemantic(diffs)
    return sum(len(t.replace(" \n", " ")) for op, t in diffs if op != 0)


def _redlines(old: str, new: str) -> int:
    from redlines import Redlines

    return sum(len((c.source_text or "").strip()) + len((c.test_text or "").strip())
               for c in Redlines(old, new).changes)


def libs(docs: dict[str, Document]) -> dict:
    pairs = []
    for name, doc in docs.items():
        for kind in ("number", "delete", "insert"):
            new, truth = edited(doc, kind, random.Random(f"libs/{name}/{kind}"), n=1)
            for i in truth:
                pairs.append((doc.sections[i].text, new.sections[i].text))
    out = {}
    cut_words("预热中文分词")  # jieba's dictionary loads once, outside the timings
    for lib, fn in (("difflib", _difflib), ("diff-match-patch", _dmp), ("redlines", _redlines)):
        try:
            t = time.perf_counter()
            marked = [fn(a, b) / _true_change(a, b) for a, b in pairs]
            ms = (time.perf_counter() - t) * 1000 / len(pairs)
        except ImportError as e:
            out[lib] = {"error": f"not installed ({e})"}
            continue
        out[lib] = {"edits": len(pairs), "ms_per_section": round(ms, 2),
                    "marked_per_changed_median": round(statistics.median(marked), 2),
                    "marked_per_changed_p90": round(sorted(marked)[int(0.9 * len(marked))], 2)}
    return out


def _met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def headline(results: dict) -> list[dict]:
    """Rows for bench/README.md's generated tables (bench/report.py)."""
    rows = []
    syn = results.get("synthetic")
    if syn:
        edits = [k for k in syn if k != "renumber"]
        worst = min(min(syn[k]["precision"], syn[k]["recall"]) for k in edits)
        share = max(v["unchanged_reported"] for v in syn.values())
        rows.append({"what": "synthetic edits (number, clause deleted/inserted, moved, "
                             "renumbered): lowest precision/recall; unchanged reported",
                     "docchat": f"{worst:.2f}; {share:.1%}",
                     "goal": ">= 0.95; <= 2%: " + _met(worst >= 0.95 and share <= 0.02)})
    if results.get("files"):
        f = results["files"]
        found = sum(v["found"] for v in f.values())
        n = sum(v["edits"] for v in f.values())
        rows.append({"what": "edits to the file, re-ingested: found; extra pairs (worst)",
                     "docchat": f"{found}/{n}; {max(v['extra_share'] for v in f.values()):.1%}"})
    if results.get("speed"):
        sp = results["speed"]
        rows.append({"what": f"{sp['document']} ({sp['pages']} pages) vs an edited copy",
                     "docchat": f"{max(sp['edited_s']):.2f} s",
                     "goal": "< 5 s: " + _met(max(sp["edited_s"]) < 5)})
    libs = results.get("libs", {})
    if "difflib" in libs and "marked_per_changed_p90" in libs.get("diff-match-patch", {}):
        rows.append({"what": "word diff: text marked per character changed, p90",
                     "docchat": f"difflib {libs['difflib']['marked_per_changed_p90']}",
                     "reference": f"diff-match-patch "
                                  f"{libs['diff-match-patch']['marked_per_changed_p90']}"})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--trials", type=int, default=4)
    ap.add_argument("--only", default="synthetic,files,real,speed,libs")
    args = ap.parse_args()
    only = set(args.only.split(","))
    docs = {p.name: load(p) for p in DOCS}
    results: dict = {}
    if "synthetic" in only:
        results["synthetic"] = synthetic(docs, args.trials)
    if "files" in only:
        results["files"] = file_edits(args.trials)
    if "real" in only:
        results["real"] = real()
    if "speed" in only:
        results["speed"] = speed(docs["debian-policy.pdf"])
    if "libs" in only:
        results["libs"] = libs(docs)
    results["headline"] = headline(results)
    print(json.dumps(results, indent=None if args.json else 2, ensure_ascii=False))
    if any(r.get("goal", "").endswith("**missed**") for r in results["headline"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
