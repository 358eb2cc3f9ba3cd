"""Rerun docchat's benchmarks and record their figures.

    python -m bench list                    the benches, in run order, with their arguments
    python -m bench all [--quick] [--only a,b] [--skip a,b] [--no-report]
    python -m bench run NAME [NAME ...] [--quick] [--no-report]
    python -m bench report [--check]        bench/README.md's tables from bench/results/

A bench is a script bench/<name>.py that prints one JSON object as the last line of its
standard output when run with --json, and says how to run it in a module-level literal

    BENCH = {"quick": ["--repeat", "1"], "full": [], "env": {"DOCCHAT_N_THREADS": "1"},
             "timeout_s": 300, "order": 20}

("quick" and "full": its arguments for each kind of run; "env": extra environment; "timeout_s":
the quick run's limit, default 600; "order": lower runs first, default 50). The literal is read
with ast.literal_eval, so listing the benches imports none of them. Scripts without a BENCH of
their own can be named in DEFAULTS below. Each bench runs in its own process (its models and
threads end with it), `python bench/<name>.py --json ARGS` from the repository root with the
root on PYTHONPATH; exit status 0 is "ok", another status with a JSON line is "bounds missed"
(the script's own goals), no JSON line is "failed". bench/results/<name>.json then holds the
commit, date, machine and the script's JSON as "figures" (a failed run's too, with the end of
its standard error), and bench/report.py rewrites the README's tables from those files.
"""
from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
NOT_BENCHES = {"__init__", "__main__", "report"}

# Scripts whose owners have not declared a BENCH yet; a script's own BENCH wins.
DEFAULTS: dict[str, dict] = {
    # The figure of record (test half) at two budgets; the fresh set needs its own fetch.
    "packing": {"quick": ["--sets", "test", "--budgets", "2000,8000",
                          "--methods", "docchat,bm25-chunks,head"],
                "full": ["--sets", "test,tuning,old", "--budgets", "1000,2000,4000,8000,32000",
                         "--methods", "docchat,bm25-chunks,head"],
                "timeout_s": 420, "order": 30},
    # One thread: on a loaded 2-core box a second llama.cpp thread slows decoding ~10x.
    "backend": {"quick": ["--runs", "1", "--prompt-tokens", "500", "--new-tokens", "32",
                          "--threads", "1", "--no-server"],
                "full": [], "timeout_s": 240, "order": 40},
}


@dataclass
class Bench:
    name: str
    script: Path
    quick: list[str]
    full: list[str]
    env: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 600
    order: int = 50

    def argv(self, quick: bool) -> list[str]:
        return [sys.executable, str(self.script.relative_to(ROOT)), "--json",
                *(self.quick if quick else self.full)]


def declared(path: Path) -> dict | None:
    """The script's module-level `BENCH = {...}` literal, or None."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "BENCH" for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def discover(folder: Path = HERE) -> list[Bench]:
    """Every bench/<name>.py with a BENCH (or an entry in DEFAULTS), in run order."""
    found = []
    for path in sorted(folder.glob("*.py")):
        if path.stem in NOT_BENCHES:
            continue
        spec = declared(path) or DEFAULTS.get(path.stem)
        if spec is None:
            continue
        found.append(Bench(path.stem, path, list(spec.get("quick", [])),
                           list(spec.get("full", [])), dict(spec.get("env", {})),
                           float(spec.get("timeout_s", 600)), int(spec.get("order", 50))))
    return sorted(found, key=lambda b: (b.order, b.name))


def git(*args: str) -> str:
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else ""


def commit_state() -> dict:
    changed = [line[3:] for line in git("status", "--porcelain").splitlines() if line.strip()]
    return {"sha": git("rev-parse", "HEAD"), "dirty": bool(changed),
            "dirty_paths": changed[:50], "dirty_count": len(changed)}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict:
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(),
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def last_json(stdout: str) -> dict | None:
    """The last line of stdout that is a JSON object."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def execute(bench: Bench, quick: bool) -> dict:
    """Run one bench in a child process; its result record (not yet written)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update(bench.env)
    argv = bench.argv(quick)
    record = {"bench": bench.name, "order": bench.order, "argv": argv[1:], "quick": quick,
              "env": bench.env, "commit": commit_state(),
              "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "machine": machine()}
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    tail: deque[str] = deque(maxlen=30)

    def relay() -> None:  # the bench's progress stays visible; its end is kept for the record
        for line in proc.stderr:
            line = line.rstrip("\n")
            sys.stderr.write(f"  [{bench.name}] {line}\n")
            tail.append(line)

    relay_thread = threading.Thread(target=relay, daemon=True)
    relay_thread.start()
    timed_out = False
    try:
        stdout, _ = proc.communicate(timeout=bench.timeout_s if quick else None)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, 9)  # the bench and what it started (servers, browsers)
        stdout, _ = proc.communicate()
    relay_thread.join(5)
    figures = last_json(stdout or "")
    record["wall_s"] = round(time.perf_counter() - started, 1)
    record["exit_code"] = proc.returncode
    record["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    if timed_out:
        record["status"] = f"timed out after {bench.timeout_s:g} s"
    elif figures is None:
        record["status"] = "failed"
    else:
        record["status"] = "ok" if proc.returncode == 0 else "bounds missed"
    record["figures"] = figures
    if record["status"] != "ok":
        record["stderr_tail"] = list(tail)
    return record


def write(record: dict, folder: Path = RESULTS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{record['bench']}.json"
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def run_all(benches: list[Bench], quick: bool, report: bool) -> int:
    started = time.perf_counter()
    done = []
    for bench in benches:
        print(f"== {bench.name}: {' '.join(bench.argv(quick)[1:])}", file=sys.stderr, flush=True)
        record = execute(bench, quick)
        path = write(record)
        done.append(record)
        print(f"== {bench.name}: {record['status']} in {record['wall_s']} s -> "
              f"{path.relative_to(ROOT)}", file=sys.stderr, flush=True)
    total = time.perf_counter() - started
    for r in done:
        print(f"{r['bench']:16} {r['status']:24} {r['wall_s']:8.1f} s")
    print(f"{'all':16} {'':24} {total:8.1f} s ({'quick' if quick else 'full'} run)")
    if report:
        from bench import report as report_module

        changed = report_module.update_readme()
        print(f"bench/README.md: {'tables rewritten' if changed else 'tables already current'}")
    return 0 if all(r["status"] == "ok" for r in done) else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the benches and their arguments")
    every = sub.add_parser("all", help="run every bench")
    every.add_argument("--only", default="", help="comma-separated names")
    every.add_argument("--skip", default="", help="comma-separated names")
    some = sub.add_parser("run", help="run the named benches")
    some.add_argument("names", nargs="+")
    for p in (every, some):
        p.add_argument("--quick", action="store_true", help="reduced inputs (minutes)")
        p.add_argument("--no-report", action="store_true", help="leave bench/README.md as it is")
    rep = sub.add_parser("report", help="rewrite bench/README.md's tables from bench/results")
    rep.add_argument("--check", action="store_true", help="exit 1 if they are not current")
    args = ap.parse_args(argv)
    benches = discover()
    if args.command == "list":
        for b in benches:
            env = " ".join(f"{k}={v}" for k, v in b.env.items())
            print(f"{b.name:16} quick: {' '.join(b.quick) or '-'}  (limit {b.timeout_s:g} s)"
                  f"\n{'':16} full:  {' '.join(b.full) or '-'}" + (f"\n{'':16} env: {env}"
                                                                    if env else ""))
        return 0
    if args.command == "report":
        from bench import report as report_module

        return report_module.main(["--check"] if args.check else [])
    by_name = {b.name: b for b in benches}
    if args.command == "run":
        unknown = [n for n in args.names if n not in by_name]
        if unknown:
            ap.error(f"no bench named {', '.join(unknown)}; `python -m bench list` shows them")
        chosen = [by_name[n] for n in args.names]
    else:
        only = {n for n in args.only.split(",") if n}
        skip = {n for n in args.skip.split(",") if n}
        unknown = (only | skip) - set(by_name)
        if unknown:
            ap.error(f"no bench named {', '.join(sorted(unknown))}")
        chosen = [b for b in benches if (not only or b.name in only) and b.name not in skip]
    return run_all(chosen, args.quick, report=not args.no_report)


if __name__ == "__main__":
    sys.exit(main())
