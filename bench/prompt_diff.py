"""Packed prompts of the tuning sets, written to JSON, and a byte-for-byte diff of two such
files: proof that a refactor of the packer leaves every prompt as it was.

    python bench/prompt_diff.py dump OUT.json [--budgets 1000,2000,4000,8000]
                                [--counter llamacpp|cl100k] [--embedder minilm|use|off]
                                [--eval-dir DIR] [--tune2-dir DIR] [--cache DIR]
    python bench/prompt_diff.py diff BEFORE.json AFTER.json

dump packs every question of the tuning sets (bench/eval/tuning.json, bench/eval/tune2.json
and the tuning split of bench/eval/questions.json; never the blind sets) at each budget,
follow-ups chained as bench/packing.py packs them (bench.packing.docchat_pack: each user turn
of the history packed in turn with the previous turn's passages), and records every pack()
call: its messages, and the PackedContext's other fields (tokens, sections, passages, ...).
A question asked identically in two sets (tuning.json is the tuning split written alone) is
packed once. Run it on the code before a change and after it (a `git worktree` of the old
commit runs the old code), with the same --counter and --embedder: diff must find no
difference. Keep the files outside the repository (/tmp).

diff prints how many prompts differ (messages compared byte for byte), and for the first few
the first differing message and character; other PackedContext fields are compared where both
files have them (a renamed field is reported, not failed on). Exit status 1 when a prompt
differs.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SETS = (("tuning.json", None), ("tune2.json", None), ("questions.json", "tuning"))


def _plain(value):
    """JSON-able form of a PackedContext field (dataclasses as dicts, tuples as lists)."""
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def _record(packed) -> dict:
    out = {"messages": [[m.role, m.content] for m in packed.messages]}
    for f in dataclasses.fields(packed):
        if f.name != "messages":
            out[f.name] = _plain(getattr(packed, f.name))
    return out


def _items(bp, args):
    """(set name, Item, {doc key: path}) for every tuning question, duplicates once."""
    eval_dir = bp.fetched(ROOT / "bench" / "fetch_eval_docs.sh", args.eval_dir)
    tune2_dir = bp.fetched(ROOT / "bench" / "fetch_tune2_docs.sh", args.tune2_dir)
    seen, out = set(), []
    for name, split in SETS:
        path = ROOT / "bench" / "eval" / name
        documents, items = bp.read_set(path, Path(name).stem, split=split)
        folder = tune2_dir if name == "tune2.json" else eval_dir
        for it in items:
            paths = [folder / documents[k] for k in it.docs]
            key = (tuple(map(str, paths)), it.question,
                   tuple((m.role, m.content) for m in it.history))
            if key in seen:
                continue
            seen.add(key)
            out.append((it, paths))
    return out


def dump(args) -> None:
    import bench.packing as bp
    from docchat.context import embeddings

    embeddings.configure(argparse.Namespace(embedder=args.embedder))
    counter, counter_name = bp.make_counter(args.counter)
    calls: list = []
    real = bp.pack

    @functools.wraps(real)
    def recording(*a, **kw):
        packed = real(*a, **kw)
        calls.append(_record(packed))
        return packed

    bp.pack = recording
    lib = bp.Library(Path(args.cache))
    budgets = [int(b) for b in args.budgets.split(",")]
    prompts = []
    items = _items(bp, args)
    for it, paths in items:
        docs = [lib.get(p) for p in paths]
        for budget in budgets:
            calls.clear()
            bp.docchat_pack(docs, it, budget, counter, lib.store)
            prompts.append({"set": it.set, "id": it.id, "budget": budget,
                            "packs": list(calls)})
    out = {"counter": counter_name, "embedder": args.embedder,
           "dense": bool(embeddings.DEFAULT.enabled), "budgets": budgets,
           "questions": len(items), "prompts": prompts}
    Path(args.out).write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
    n = sum(len(p["packs"]) for p in prompts)
    print(f"{len(items)} questions x {len(budgets)} budgets: {n} packed prompts "
          f"({counter_name}, dense scores {'on' if out['dense'] else 'off'}) -> {args.out}")


def _first_difference(a: list, b: list) -> str:
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            if x[0] != y[0]:
                return f"message {k}: role {x[0]!r} vs {y[0]!r}"
            at = next((i for i, (c, d) in enumerate(zip(x[1], y[1])) if c != d),
                      min(len(x[1]), len(y[1])))
            return (f"message {k} ({x[0]}), char {at}: {x[1][max(0, at - 40):at + 60]!r} vs "
                    f"{y[1][max(0, at - 40):at + 60]!r}")
    return f"{len(a)} vs {len(b)} messages"


def diff(args) -> int:
    before = json.loads(Path(args.before).read_text(encoding="utf-8"))
    after = json.loads(Path(args.after).read_text(encoding="utf-8"))
    for key in ("counter", "embedder", "dense", "budgets"):
        if before[key] != after[key]:
            print(f"not comparable: {key} {before[key]!r} vs {after[key]!r}")
            return 2
    b_by = {(p["set"], p["id"], p["budget"]): p for p in before["prompts"]}
    a_by = {(p["set"], p["id"], p["budget"]): p for p in after["prompts"]}
    if set(b_by) != set(a_by):
        print(f"different questions: {len(set(b_by) ^ set(a_by))} not in both")
        return 1
    differ, fields, packs = [], {}, 0
    for key, bp in b_by.items():
        ap = a_by[key]
        if len(bp["packs"]) != len(ap["packs"]):
            differ.append((key, f"{len(bp['packs'])} vs {len(ap['packs'])} packs"))
            continue
        for n, (x, y) in enumerate(zip(bp["packs"], ap["packs"])):
            packs += 1
            if x["messages"] != y["messages"]:
                differ.append((key, f"pack {n}: " + _first_difference(x["messages"],
                                                                      y["messages"])))
            for f in (set(x) | set(y)) - {"messages"}:
                if f not in x or f not in y:
                    fields.setdefault(f, "only in " + ("before" if f in x else "after"))
                elif x[f] != y[f]:
                    fields[f] = "differs"
    print(f"{packs} packed prompts ({before['counter']}, dense "
          f"{'on' if before['dense'] else 'off'}, budgets {before['budgets']}): "
          f"{len(differ)} differ")
    for key, why in differ[:10]:
        print(f"  {key}: {why}")
    for f, why in sorted(fields.items()):
        print(f"  field {f}: {why}")
    return 1 if differ else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump", help="pack the tuning sets and write the prompts")
    d.add_argument("out")
    d.add_argument("--budgets", default="1000,2000,4000,8000")
    d.add_argument("--counter", default="llamacpp", choices=["llamacpp", "cl100k"])
    d.add_argument("--embedder", default="minilm", choices=["minilm", "use", "off"])
    d.add_argument("--eval-dir")
    d.add_argument("--tune2-dir")
    d.add_argument("--cache", default=os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "docchat-eval"))
    c = sub.add_parser("diff", help="compare two dumps")
    c.add_argument("before")
    c.add_argument("after")
    args = ap.parse_args()
    if args.cmd == "dump":
        dump(args)
    else:
        sys.exit(diff(args))


if __name__ == "__main__":
    main()
