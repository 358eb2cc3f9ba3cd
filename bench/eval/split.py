"""Write, split and check the question sets in bench/eval.

Every set is a JSON object: "about", "source" (the fetch script of its documents), "documents"
(key -> file name in the folder that script fills) and "questions", each with "id", "split",
"documents" (keys), "kind", "question", "evidence" (strings that must all be in the packed
context) and, for follow-ups, "history" (the earlier turns, user first, alternating).

    python3 bench/eval/split.py                 check every set (schema, unique ids, evidence)
    python3 bench/eval/split.py --write         (re)assign "split" in the sets listed in RULES
    python3 bench/eval/split.py --retire FILE   a blind set that was looked at becomes tuning

The check extracts each document with ingest.load_document, as docchat does, and looks for every
evidence string in its text with all whitespace removed and case folded, as the bench compares.
Documents come from the folder the set's fetch script fills (its default OUT_DIR); a set whose
documents are not fetched is reported and skipped (--strict fails instead).

Splits are a function of the question id alone: a seeded SHA-256 of the id picks the share, so
adding or rewording questions never moves the others. A blind set has the single share "blind".
For a blind set the check prints totals only (per kind, per language), never a question.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
KINDS = {"verbatim", "paraphrase", "outline", "section", "cross-language", "follow-up",
         "two-section"}
# file -> (seed, {split: share}); the shares of a file add up to 1.
# blind.json to blind11.json were run once each and are spent; blind6.json to blind9.json were
# retired to tuning on 2026-12-05 (their questions are looked at now), once blind10.json, the
# tenth set, had been written for the next figure of record; blind10.json and blind11.json
# were retired the same way later that day, each once the next set was being written.
# blind12.json, the twelfth set, was written on 2026-12-05 for the next figure of record;
# blind13.json, the thirteenth set, was written the same day to follow it; blind14.json, the
# fourteenth set, was written the same day to follow blind13; blind15.json, the fifteenth set,
# was written the same day to follow blind14, run once and retired to tuning once
# blind16.json, the sixteenth set, had been written to follow it. blind16.json was run once
# and retired to tuning the same way, once blind17.json, the seventeenth set, had been
# written to follow it. blind18.json, the eighteenth set, was written on 2026-12-05 to follow
# blind17, which was then run once and retired to tuning the same way. blind19.json, the
# nineteenth set, was written on 2026-12-05 to follow blind18, which was then run once and
# retired to tuning the same way; blind19 was run once on 2026-12-06 and retired to tuning
# before blind20.json, the twentieth set, was written that day to follow it; blind20 was run
# once on 2026-12-06 and retired to tuning the same day, before the next set was written.
# blind21.json, the twenty-first set, was written on 2026-12-06 to follow blind20, run once
# the same day and retired to tuning; blind22.json, the twenty-second set, was written that
# day to follow it, run once the same day and retired to tuning; blind23.json, the
# twenty-third set, was written that day too, run once right after blind22 and retired;
# blind24.json, the twenty-fourth set, was written that day to follow them, run once the same
# day and retired; blind25.json, the twenty-fifth set, was written that day to follow it,
# run once the same day and retired; blind26.json, the twenty-sixth set, was written that day
# too, after blind25, run once at the start of the next session and retired. blind27.json, the
# twenty-seventh set, was written on 2026-12-06 in that next session, after blind26 was retired.
# blind27 was run once the same day and retired. blind28.json, the twenty-eighth set, was
# written on 2026-12-06 too, while blind27 was being run, and was run once and retired at
# the end of that session's work. blind29.json, the twenty-ninth set, was written on 2026-12-06
# after blind28 was retired, and run once and retired the same session, as a second reading
# of the same code as blind28's. blind30.json, the thirtieth set, was written on 2026-12-06
# after blind29 was retired, for the next session, and was run once at the end of that
# session's work and retired. blind31.json, the thirty-first set, was written on 2026-12-06
# too, by a helper session that saw neither the method nor its results, to follow blind30.
# blind32.json, the thirty-second set, was written on 2026-12-06 by another such helper session,
# to follow blind31. blind31 was run once at the end of the next session's work and retired.
# blind33.json, the thirty-third set, was written on 2026-12-06 by another such helper session,
# after blind31 was retired; blind32 was then run once at the end of that session's work
# and retired.
# blind34.json, the thirty-fourth set, was written on 2026-12-06 by another such helper session,
# to follow blind33. blind33 was run once at the end of that session's work and retired.
# blind35.json, the thirty-fifth set, was written on 2026-12-06 by another such helper session,
# to follow blind34. blind34 was then run once in that session, as a second reading of the
# code blind33 read, and retired.
# blind36.json, the thirty-sixth set, was written on 2026-12-06 by another such helper session,
# to follow blind35. blind35 was then run once at the end of that session's work and retired.
# blind37.json, the thirty-seventh set, was written on 2026-12-06 by another such helper session,
# to follow blind36. blind36 was then run once at the end of that session's work and retired.
# blind38.json, the thirty-eighth set, was written on 2026-12-06 by another such helper session,
# to follow blind37. blind37 was then run once at the end of that session's work and retired.
RULES: dict = {
    "blind38.json": (20261238, {"blind": 1.0}),
}
HAN = re.compile(r"[\u3400-\u9fff]")
OUT_DIR = re.compile(r"\$\{XDG_CACHE_HOME:-\$HOME/\.cache\}/([\w.-]+)")


def assign(qid: str, seed: int, shares: dict[str, float]) -> str:
    """The split of question `qid`: a seeded hash of the id, mapped onto the cumulative shares."""
    digest = hashlib.sha256(f"{seed}:{qid}".encode()).digest()
    point = int.from_bytes(digest[:8], "big") / 2**64
    total = 0.0
    for name, share in shares.items():
        total += share
        if point < total:
            return name
    return list(shares)[-1]


def norm(text: str) -> str:
    return re.sub(r"\s+", "", text).casefold()


def is_blind(data: dict) -> bool:
    return bool(data["questions"]) and all(q.get("split") == "blind" for q in data["questions"])


def schema_errors(data: dict) -> list[str]:
    """What is wrong with the set's structure, ids and follow-up histories."""
    errors = [f"missing top-level key {k!r}" for k in ("about", "source", "documents", "questions")
              if k not in data]
    if errors:
        return errors
    seen: Counter[str] = Counter(q.get("id", "") for q in data["questions"])
    errors += [f"id {i!r} used {n} times" for i, n in seen.items() if n > 1]
    for q in data["questions"]:
        errors += question_errors(q, data["documents"], strict=is_blind(data))
    return errors


def question_errors(q: dict, documents: dict, strict: bool) -> list[str]:
    qid = q.get("id", "?")
    errors = [f"{qid}: missing {k!r}" for k in ("id", "split", "documents", "kind", "question",
                                                  "evidence") if k not in q]
    if errors:
        return errors
    if q["kind"] not in KINDS:
        errors.append(f"{qid}: unknown kind {q['kind']!r}")
    errors += [f"{qid}: unknown document {d!r}" for d in q["documents"] if d not in documents]
    evidence = q["evidence"]
    if not evidence or not all(isinstance(e, str) and e.strip() for e in evidence):
        errors.append(f"{qid}: evidence must be non-empty strings")
    history = q.get("history", [])
    roles = [turn.get("role") for turn in history]
    if roles != ["user", "assistant"] * (len(roles) // 2) or len(roles) % 2:
        errors.append(f"{qid}: history must alternate user/assistant turns, user first")
    if strict:
        if not 1 <= len(evidence) <= 4:
            errors.append(f"{qid}: a blind question has 1-4 evidence strings")
        if q["kind"] == "follow-up" and roles.count("user") < 2:
            errors.append(f"{qid}: a blind follow-up is three turns deep (two earlier questions)")
        if q["kind"] != "follow-up" and history:
            errors.append(f"{qid}: only follow-ups carry a history")
    return errors


def docs_folder(data: dict) -> Path | None:
    """The default OUT_DIR of the set's fetch script (~/.cache/<name>), or None."""
    script = ROOT / data.get("source", "")
    if not script.is_file():
        return None
    match = OUT_DIR.search(script.read_text(encoding="utf-8"))
    return Path.home() / ".cache" / match.group(1) if match else None


def evidence_errors(data: dict, folder: Path) -> tuple[list[str], list[str]]:
    """(errors, skipped documents): evidence missing from the extracted text of its document."""
    sys.path.insert(0, str(ROOT))
    import ingest

    texts, skipped = {}, []
    for key, name in data["documents"].items():
        path = folder / name
        if path.is_file():
            texts[key] = norm(ingest.load_document(path).text)
        else:
            skipped.append(str(path))
    errors = []
    for q in data["questions"]:
        keys = [k for k in q.get("documents", []) if k in texts]
        if not keys or len(keys) < len(q.get("documents", [])):
            continue
        for e in q.get("evidence", []):
            if not isinstance(e, str):
                continue
            if not any(norm(e) in texts[k] for k in keys):
                shown = "" if is_blind(data) else f": {e!r}"  # a blind set shows no text
                errors.append(f"{q['id']}: evidence not found in {', '.join(keys)}{shown}")
    return errors, skipped


def summary(name: str, data: dict) -> str:
    """Totals per kind, split and language (Chinese = the question has Han characters)."""
    qs = data["questions"]
    kinds = Counter(q["kind"] for q in qs)
    splits = Counter(q["split"] for q in qs)
    zh = sum(bool(HAN.search(q["question"])) for q in qs)
    per_kind = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
    per_split = ", ".join(f"{k} {n}" for k, n in sorted(splits.items()))
    return (f"{name}: {len(qs)} questions over {len(data['documents'])} documents; "
            f"{zh} Chinese ({zh / max(len(qs), 1):.0%}); kinds: {per_kind}; splits: {per_split}")


def check(paths: list[Path], strict: bool) -> int:
    failed = 0
    owners: dict[str, str] = {}
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        errors = schema_errors(data)
        for q in data.get("questions", []):
            other = owners.setdefault(q.get("id", ""), path.name)
            if other != path.name:
                print(f"warning: {path.name}: id {q['id']!r} also in {other}")
        sound = all(k in data for k in ("source", "documents", "questions"))
        folder = docs_folder(data) if sound else None
        if folder is None and sound:
            errors.append(f"no default folder in {data.get('source')!r}")
        if folder is not None:
            found, skipped = evidence_errors(data, folder)
            errors += found
            if skipped:
                print(f"{path.name}: not fetched, evidence not checked: {', '.join(skipped)} "
                      f"(run {data['source']})")
                failed += strict
        print(summary(path.name, data) if "questions" in data else path.name)
        for error in errors:
            print(f"  error: {path.name}: {error}")
        failed += bool(errors)
    return 1 if failed else 0


def write(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def write_splits() -> None:
    for name, (seed, shares) in RULES.items():
        path = HERE / name
        data = json.loads(path.read_text(encoding="utf-8"))
        for q in data["questions"]:
            q["split"] = assign(q["id"], seed, shares)
        write(path, data)
        print(summary(name, data))


def retire(path: Path) -> None:
    """Mark a blind set as tuning: its questions were seen beyond their totals."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for q in data["questions"]:
        q["split"] = "tuning"
    data["about"] += (" RETIRED: looked at beyond its totals, so it is a tuning set now;"
                      " write a new blind set.")
    RULES.pop(path.name, None)
    write(path, data)
    print(f"{path.name}: retired to tuning; remove it from RULES in {Path(__file__).name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="reassign splits (RULES)")
    parser.add_argument("--retire", type=Path, help="turn this blind set into a tuning set")
    parser.add_argument("--strict", action="store_true", help="fail when documents are missing")
    parser.add_argument("sets", nargs="*", type=Path, help="sets to check (default: all)")
    args = parser.parse_args(argv)
    if args.retire:
        retire(args.retire)
        return 0
    if args.write:
        write_splits()
    return check(args.sets or sorted(HERE.glob("*.json")), args.strict)


if __name__ == "__main__":
    sys.exit(main())
