"""Follow-up recall against the new turn's share: what a follow-up's first token costs in
evidence (issue 21: follow-ups' first token <= 25% of the first question's, follow-up recall
not lower than before).

A follow-up that stays on the passages in the window may add at most a share of a first
question's budget in new tokens (``qa.FOLLOWUP_NEW_SHARE``, counted in tokens: the app).
Those tokens are read after the whole conversation, where each costs more (the RateMeter's
attention span), so a share of *reading time* gives fewer tokens the longer the
conversation. This bench packs the follow-up questions of every tuning set (never a blind
one) as the chat page does (``bench/packing.py --followups append``) under each variant and
reports their recall per budget:

- ``tokens:S``: S of the first question's budget, in tokens (``qa.FOLLOWUP_NEW_SHARE = S``,
  ``qa.FOLLOWUP_SHARE_OF = "tokens"``);
- ``time:S``: the tokens that take S of the first question's reading time, read after the
  cached conversation (``FOLLOWUP_SHARE_OF = "time"``: the counter's RateMeter span,
  SmolLM2-135M's 3,073 tokens);
- ``tokens:S+ahead:A[+own:O]``: as ``tokens:S``, with A of the first question's budget read
  ahead after each answer (``qa.READ_AHEAD_SHARE``: turn_packing.read_ahead, taken as read
  by the time the user asks, as when they read the answer first), and a follow-up that
  starts with them adding O of it of its own (``qa.AHEAD_NEW_SHARE``; default S);
- ``before:REV``: the packer and bench of commit REV, from a temporary git worktree, with
  their own follow-up rule (``--followups app``): what the issue calls "today's" follow-up
  recall is ``before:d755020``, the last commit before issue 21's work.

    python bench/followup_share.py [--variants tokens:0.25,time:0.25,time:0.20]
                                   [--budgets 2000,4000,8000] [--json]

Each variant runs bench/packing.py in a child process (the documents' vectors come from its
cache; the first run computes them).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# bench/eval/*.json, tuning now
SETS = ["questions", "fresh", "tune2", "blind", "blind2", "blind3", "blind4", "blind5"]
CHILD = """
import runpy, sys
from docchat.answer import qa
for part in sys.argv[1].split("+"):
    mode, share = part.split(":")
    if mode == "ahead":
        qa.READ_AHEAD_SHARE = float(share)
    elif mode == "own":
        qa.AHEAD_NEW_SHARE = float(share)
    else:
        qa.FOLLOWUP_NEW_SHARE, qa.FOLLOWUP_SHARE_OF = float(share), mode
sys.argv = [sys.argv[2]] + sys.argv[3:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def follow_up_files(out: Path) -> list[Path]:
    """Each tuning set's follow-up questions in a file of its own (blind sets never)."""
    files = []
    for name in SETS:
        path = ROOT / "bench" / "eval" / f"{name}.json"
        spec = json.loads(path.read_text(encoding="utf-8"))
        qs = [q for q in spec["questions"] if q["kind"] == "follow-up"]
        if any(q.get("split") == "blind" for q in qs):
            continue
        spec["questions"] = qs
        f = out / f"fu_{name}.json"
        f.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
        files.append(f)
    return files


def run_variant(variant: str, files: list[Path], budgets: str, tmp: Path) -> dict:
    if variant.startswith("before:"):
        return run_before(variant.split(":", 1)[1], files, budgets, tmp)
    args = [sys.executable, "-c", CHILD, variant, str(ROOT / "bench" / "packing.py"),
            "--sets", "", "--methods", "docchat", "--budgets", budgets,
            "--followups", "append", "--no-timing", "--json"]
    return recall(args, files, ROOT)


def run_before(rev: str, files: list[Path], budgets: str, tmp: Path) -> dict:
    """The bench of an earlier commit on the same follow-up questions, in a worktree (with
    today's fetch scripts where that commit has none: they only fetch the documents)."""
    tree = tmp / f"tree-{rev}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), rev],
                   check=True, capture_output=True)
    try:
        for script in (ROOT / "bench").glob("*.sh"):
            if not (tree / "bench" / script.name).exists():
                shutil.copy2(script, tree / "bench" / script.name)
        args = [sys.executable, str(tree / "bench" / "packing.py"), "--sets", "",
                "--methods", "docchat", "--budgets", budgets, "--followups", "app",
                "--no-timing", "--json"]
        return recall(args, files, tree)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                       check=False, capture_output=True)


def recall(args: list[str], files: list[Path], root: Path) -> dict:
    """Run one bench/packing.py (args) on the follow-up files; follow-up recall per budget."""
    for f in files:
        args = [*args, "--questions", str(f)]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(args, capture_output=True, text=True, env=env, cwd=root)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])}... failed:\n{out.stderr[-3000:]}")
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    per_set, total = {}, {}
    for name, s in summary["sets"].items():
        n = s["questions"]
        per_set[name[3:]] = {"questions": n, "recall": {
            b: r["follow-up"] for b, r in s["recall"]["docchat"].items()}}
        for b, r in s["recall"]["docchat"].items():
            hit, count = total.get(b, (0.0, 0))
            total[b] = (hit + r["follow-up"] * n, count + n)
    return {"sets": per_set, "all": {b: round(h / c, 3) for b, (h, c) in total.items()},
            "questions": sum(c for _, c in total.values()) // max(1, len(total)),
            "git": summary.get("git"), "load_average": summary.get("load_average")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", default="tokens:0.25,time:0.25,time:0.20")
    ap.add_argument("--budgets", default="2000,4000,8000")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = follow_up_files(Path(tmp))
        runs = {v: run_variant(v, files, args.budgets, Path(tmp))
                for v in args.variants.split(",")}
    if args.json:
        print(json.dumps({"budgets": args.budgets.split(","), "runs": runs}))
        return 0
    budgets = args.budgets.split(",")
    names = list(next(iter(runs.values()))["sets"])
    print(f"Follow-up recall by the new turn's share ({next(iter(runs.values()))['questions']}"
          f" follow-up questions of the tuning sets, packed as the chat page packs)\n")
    print(f"{'variant':15} " + " ".join(f"{n + ' ' + b[:-3] + 'k':>13}" for n in ["all", *names]
                                        for b in budgets))
    for v, r in runs.items():
        cells = [r["all"][b] for b in budgets] + [r["sets"][n]["recall"][b]
                                                  for n in names for b in budgets]
        print(f"{v:15} " + " ".join(f"{c:13.2f}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
