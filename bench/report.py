"""bench/README.md's generated tables, from the records in bench/results/*.json.

    python -m bench report [--check]      (or: python bench/report.py [--check])

The README marks each generated table with a pair of comments; what is between them is
replaced, the rest of the file is left alone:

    <!-- results:runs -->      which run each figure comes from: commit, date, machine, load
    <!-- results:headline -->  the headline figures of every bench, one row each
    <!-- results:NAME -->      the rows of one bench (NAME = bench/NAME.py)
    <!-- /results -->

A bench's rows come from HEADLINES[name](figures) below, or, for a bench without an entry
there, from a "headline" list in its own JSON: rows of {"what", "docchat", "reference",
"result", "goal"} (strings). --check exits 1 when the README is not what the records give.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE / "README.md"
COLUMNS = ("what", "docchat", "reference", "result", "goal")
BLOCK = re.compile(r"(<!-- results:([\w-]+) -->\n).*?(<!-- /results -->)", re.S)

Row = dict[str, str]


def met(ok: bool | None) -> str:
    return "–" if ok is None else "met" if ok else "**missed**"


def row(what: str, docchat: object = "–", reference: object = "–", result: object = "–",
        goal: str = "–") -> Row:
    return {"what": what, "docchat": str(docchat), "reference": str(reference),
            "result": str(result), "goal": goal}


def load(folder: Path = RESULTS) -> dict[str, dict]:
    """The runner's records by bench name; a JSON file there that is not one (a script that
    wrote its own output there) is passed over."""
    records = {}
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(record, dict) and record.get("bench") == path.stem and "status" in record:
            records[path.stem] = record
    return dict(sorted(records.items(), key=lambda kv: (kv[1].get("order", 50), kv[0])))


# ---- one function per bench: its figures -> headline rows -----------------------------------

def ingestion_rows(f: dict) -> list[Row]:
    o = f["overall"]
    files = f.get("files", [])
    per = ", ".join(f"{r['file'].removesuffix('.pdf')} {r['ratio']}" for r in files
                    if r["pages"] >= 100)
    return [row(f"pages/s, {o['pages']} pages ({len(files)} PDFs), full ingestion"
                f"{' incl. SQLite + FTS' if o.get('includes_sqlite_store') else ''}, "
                f"median of {o.get('repeat')}",
                o["docchat_pages_s"], f"pdftotext {o['pdftotext_pages_s']}",
                f"**{o['ratio']}x**" + (f" (100+ pages: {per})" if per else ""),
                f">= 1.0x: {met(o['ratio'] >= 1.0)}")]


# The test half and the fresh set were retired to tuning (issue 22): the blind sets, run once
# each, are the figures of record (their "run once" sections below).
PACKING_SETS = {"test": "test half (tuning now)", "fresh": "fresh set (tuning now)",
                "tuning": "tuning half", "old": "old set"}


def packing_rows(f: dict) -> list[Row]:
    rows = []
    goals = f.get("goals", {})
    for name, st in f.get("sets", {}).items():
        recall = st["recall"]
        kinds = list(st["by_kind"])
        if "docchat" not in recall:
            continue
        baselines = [m for m in recall if m != "docchat"]
        for budget in recall["docchat"]:
            ours = recall["docchat"][budget]
            best = max(baselines, key=lambda m: recall[m][budget]["all"], default=None)
            goal = "–"
            if name == "test" and budget == "8000" and "8k_every_kind" in goals:
                missed = [k for k, v in goals["8k_every_kind"].items() if not v["met"]]
                goal = ("every kind >= 0.75 and +25 points over the best baseline: "
                        + ("met" if not missed else f"**missed** for {', '.join(missed)}"))
            elif name == "test" and budget == "2000" and "2k_verbatim" in goals:
                goal = f"verbatim >= 0.93: {met(goals['2k_verbatim']['met'])}"
            theirs = recall[best][budget] if best else None
            rows.append(row(
                f"evidence inside the packed context, {PACKING_SETS.get(name, name)} "
                f"({st['questions']} questions), {int(budget) // 1000}k prompt: "
                + " / ".join(kinds) + " / all",
                " / ".join(f"{ours[k]:.2f}" for k in [*kinds, "all"]),
                f"{best} " + " / ".join(f"{theirs[k]:.2f}" for k in [*kinds, "all"])
                if theirs else "–",
                f"{ours['all'] - theirs['all']:+.2f} (all)" if theirs else "–", goal))
    big = f.get("pack_ms_1000_pages")
    if big:
        warm = big["warm_median_ms"]
        rows.append(row(f"packing time, {big['document']} ({big['pages']:,} pages) stored, warm "
                        f"median at " + " / ".join(f"{int(b) // 1000}k" for b in warm),
                        " / ".join(f"{v:g} ms" for v in warm.values()), "–", "–",
                        f"< 200 ms: {met(max(warm.values()) < 200)}"))
    return rows


def backend_rows(f: dict) -> list[Row]:
    paths = f["paths"]
    raw, ours = paths["raw"], paths["llamacpp"]
    size = f"{f['prompt_tokens']:g}-token prompt, {f['new_tokens']} new tokens, " \
           f"median of {f['runs']}"
    goals = f.get("goals", {})
    return [
        row(f"decode tok/s, {size}", ours["decode_tok_s"],
            f"raw llama-cpp-python {raw['decode_tok_s']}", f"{ours['decode_ratio']}x",
            f">= 0.97x: {met(goals.get('decode_ratio_ge_0.97'))}"),
        row(f"time to first token, {size}", f"{ours['ttft_s']:.2f} s", f"{raw['ttft_s']:.2f} s",
            f"{ours['added_ttft_ms']:+.0f} ms",
            f"<= +30 ms: {met(goals.get('added_ttft_le_30ms'))}"),
        row("docchat's own work before the model starts (chat template + tokenize), median",
            f"{f['pre_generation_ms']} ms", "–", "–",
            f"< 30 ms: {met(f['pre_generation_ms'] < 30)}"),
    ]


def pacing_rows(f: dict) -> list[Row]:
    rows = []
    for source in ("llamacpp", "synthetic"):
        sched = [r for r in f.get("schedule", []) if r["source"] == source]
        if sched:
            worst = max(abs(r["err_vs_target_pct"]) for r in sched)
            rows.append(row(
                f"display inter-token latency vs each preset's schedule ({source} source)",
                " / ".join(f"{r['preset']} {r['display_itl_ms']}" for r in sched) + " ms",
                "targets " + " / ".join(f"{r['target_ms']}" for r in sched) + " ms",
                f"within {worst:.1f}%", f"within 10%: {met(worst <= 10)}"))
    for r in f.get("smooth", []):
        ok = (r["std_cut_pct"] or 0) >= 70 and r["added_pct"] < 10
        rows.append(row(f"smooth preset: cut in ITL std vs the raw stream, time added "
                        f"({r['source']} source, {r['pieces']} pieces)",
                        f"{r['std_cut_pct']}% cut, +{r['added_pct']}% time", "–", "–",
                        f">= 70% cut, < 10% time: {met(ok)}"
                        if r["source"] == "synthetic" else "–"))
    raw = f.get("raw")
    if raw:
        rows.append(row("raw-mode overhead over reading the backend directly",
                        f"+{raw['per_piece_overhead_us']} us/piece",
                        f"{raw['llamacpp_ms_per_piece']} ms/piece",
                        f"{raw['overhead_pct_of_llamacpp']}%",
                        f"< 1%: {met(raw['overhead_pct_of_llamacpp'] < 1)}"))
    return rows


def responsiveness_rows(f: dict) -> list[Row]:
    qs, goals, ok = f["questions"], f["goals"], f["met"]
    first = qs[0]
    doc = f"{f['document']} ({f['pages']} pages), {f['threads']} thread(s)"
    rows = [
        row(f"evidence on screen (packing), {len(qs)} questions, {doc}",
            " / ".join(f"{q['evidence_s']:.2f}" for q in qs) + " s", "–", "–",
            f"<= {goals['evidence_s']:g} s: {met(ok['evidence'])}"),
        row(f"first token, first question, target {f['target_s']:g} s "
            f"({first['prompt_tokens']:,} prompt tokens)",
            f"{first['first_token_s']} s", "–", "–",
            f"<= {goals['first_token_s']:g} s: {met(ok['first_token'])}"),
    ]
    if f.get("follow_up_ratios"):
        rows.append(row("follow-up first token / the first question's",
                        " / ".join("–" if r is None else f"{r:.0%}"
                                   for r in f["follow_up_ratios"]), "–", "–",
                        f"<= {goals['follow_up_ratio']:.0%}: {met(ok['follow_up'])}"))
    stops = {s["phase"]: s["stop_s"] for s in f.get("stops", [])}
    if stops:
        rows.append(row("Stop -> stream ended (" + " / ".join(stops) + ")",
                        " / ".join(f"{v * 1000:.0f} ms" for v in stops.values()), "–", "–",
                        f"<= {goals['stop_s']:g} s: {met(ok['stop'])}"))
    return rows


def fidelity_rows(f: dict) -> list[Row]:
    rows = []
    ocr = f.get("ocr_summary", {})
    for dpi in (150, 300):
        en, zh = ocr.get(f"tesseract_en_{dpi}"), ocr.get(f"tesseract_zh_{dpi}")
        if en or zh:
            ok = bool(en and zh) and en["accuracy"] >= 0.95 and zh["accuracy"] >= 0.90
            rows.append(row(f"OCR character accuracy, scans at {dpi} dpi (English / Chinese, "
                            f"{(en or zh)['pages']} pages each)",
                            " / ".join(f"{x['accuracy']:.3f}" if x else "–" for x in (en, zh)),
                            "page text layer", "–",
                            f">= 0.95 / >= 0.90: {met(ok)}" if dpi == 300 else "–"))
    for r in f.get("ocr_pages", []):
        rows.append(row(f"OCR throughput, {r['file']} at {r['dpi']} dpi, one tesseract per core",
                        f"{r['pages_s']} pages/s", "–", f"accuracy {r['accuracy']}", "–"))
    for r in f.get("forms", []):
        rows.append(row(f"form text, {r['file']} (characters vs pdftotext; values found)",
                        f"{r['ratio']}; {r['values_found']}", "pdftotext", "–",
                        f">= 0.90: {met(r['ratio'] >= 0.90)}"))
    for r in f.get("code", []):
        rows.append(row(f"code indentation kept, {r['file']} ({r['indented']} indented lines)",
                        r["share"], "–", "–", "–"))
    garbage = f.get("garbage")
    if garbage:
        pages_n = sum(r["pages"] for r in garbage)
        rows.append(row(f"garbage-text false positives on {pages_n:,} real text pages "
                        "(as a text layer / as an OCR layer)",
                        f"{sum(r['garbage_as_text_layer'] for r in garbage)} / "
                        f"{sum(r['garbage_as_ocr_layer'] for r in garbage)}", "–", "–", "–"))
    return rows


def summarize_rows(f: dict) -> list[Row]:
    runs = {r["run"]: r for r in f["runs"]}
    ours = runs.get("docchat in-process (llamacpp)")
    raw = runs.get("raw llama-cpp-python (same prompts)")
    names = ", ".join(Path(p).name for p in f["files"])
    ratio = f.get("ratios", {}).get("docchat_vs_raw_seconds")
    n = len(f["files"])
    rows = [row(f"{n} document{'s' if n != 1 else ''} ({names}), "
                f"{f['max_new_tokens']}-token summaries",
                f"{ours['seconds']} s, {ours['documents_per_minute']} docs/min, "
                f"{ours['input_tokens_per_s']} input tok/s" if ours else "–",
                f"raw llama-cpp-python on the same prompts {raw['seconds']} s" if raw else "–",
                f"{ratio}x the time" if ratio else "–", "–")]
    for name, value in f.get("ratios", {}).items():
        if name.startswith("concurrency_"):
            rows.append(row("server concurrency N vs 1, throughput", "–", "–",
                            f"{name}: {value}", "–"))
    return rows


def summary_sharing_rows(f: dict) -> list[Row]:
    busy = f.get("questions_during_run", [])
    idle = f["idle_question"]
    s = f["summary"]
    return [row(f"a question asked during a summary run ({s['steps']} steps, give way: "
                f"{'on' if f['give_way'] else 'off'}): wait in the queue, first token",
                " / ".join(f"{q['queue_s']} s" for q in busy) + "; first token "
                + " / ".join(f"{q['first_token_s']} s" for q in busy) if busy else "–",
                f"idle model: wait {idle['queue_s']} s, first token {idle['first_token_s']} s",
                f"longest wait / longest step: {f.get('max_wait_over_max_step')}", "–")]


def browser_rows(f: dict) -> list[Row]:
    a, b = f["docchat"], f["st.write_stream"]
    bounds = f.get("bounds", {})
    rows = [row("Enter -> first answer character on screen, minus backend TTFT (median)",
                f"{a['overhead_ms_median']} ms", f"bare st.write_stream app "
                f"{b['overhead_ms_median']} ms", f"{f['ratio']['overhead']}x",
                "< 150 ms: " + met(a["overhead_ms_median"] is not None
                                   and a["overhead_ms_median"] < 150)),
            row("fresh page usable (median)", f"{a['usable_ms_median']} ms",
                f"{b['usable_ms_median']} ms", f"{f['ratio']['usable']}x", "–")]
    if bounds:
        share = bounds["follow_up_share"]
        rows.append(row("follow-up's Enter -> first character / the first question's (median)",
                        "–" if share is None else f"{share:.0%}", "–", "–",
                        f"<= {bounds['follow_up_share_max']:.0%}: {met(bounds['follow_up_met'])}"))
        rows.append(row("Stop clicked in a streaming answer -> \"Stopped\" on screen",
                        f"{bounds['stop_s']:.2f} s", "–", "–",
                        f"<= {bounds['stop_s_max']:g} s: {met(bounds['stop_met'])}"))
    return rows


HEADLINES: dict[str, Callable[[dict], list[Row]]] = {
    "ingestion": ingestion_rows, "packing": packing_rows, "backend": backend_rows,
    "pacing": pacing_rows, "responsiveness": responsiveness_rows, "fidelity": fidelity_rows,
    "summarize": summarize_rows, "summary_sharing": summary_sharing_rows,
    "browser": browser_rows,
}


def rows_of(name: str, record: dict) -> list[Row]:
    figures = record.get("figures")
    if record.get("status") not in ("ok", "bounds missed") or not figures:
        return [row(f"no figures: {record.get('status', 'no record')} "
                    f"(bench/results/{name}.json)")]
    if name in HEADLINES:
        try:
            return HEADLINES[name](figures)
        except (KeyError, TypeError, ValueError, ZeroDivisionError, statistics.StatisticsError) \
                as e:  # a figure the run did not produce (a reduced --only, a changed JSON)
            return [row(f"figures not readable by bench/report.py ({type(e).__name__}: {e})")]
    return [{k: str(r.get(k, "–")) for k in COLUMNS} for r in figures.get("headline", [])]


# ---- tables ---------------------------------------------------------------------------------

def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def headline_table(records: dict[str, dict], names: list[str] | None = None) -> str:
    lines = ["| bench | what | docchat | reference | result | goal |",
             "|---|---|---:|---:|---|---|"]
    for name in names or list(records):
        for r in rows_of(name, records[name]):
            lines.append(f"| `{name}.py` | " + " | ".join(cell(r[k]) for k in COLUMNS) + " |")
    return "\n".join(lines)


def runs_table(records: dict[str, dict]) -> str:
    lines = ["| bench | run | status | commit | date (UTC) | machine | load average | wall s |",
             "|---|---|---|---|---|---|---|---:|"]
    for name, r in records.items():
        c, m = r.get("commit", {}), r.get("machine", {})
        sha = c.get("sha", "")[:7] + (f" + {c.get('dirty_count')} uncommitted" if c.get("dirty")
                                      else "")
        load = m.get("load_average", [None])[0]
        after = m.get("load_average_after", [None])[0]
        lines.append(f"| `{name}.py` | {'quick' if r.get('quick') else 'full'} "
                     f"`{cell(' '.join(r.get('argv', [])[2:]))}` | {r.get('status')} | {sha} | "
                     f"{r.get('date', '')[:16].replace('T', ' ')} | {cell(m.get('cpu', '?'))}, "
                     f"{m.get('cores')} cores | {load} -> {after} | {r.get('wall_s')} |")
    total = sum(r.get("wall_s") or 0 for r in records.values())
    lines.append(f"| all | | | | | | | {total:.0f} |")
    return "\n".join(lines)


def render(text: str, records: dict[str, dict]) -> str:
    def block(m: re.Match[str]) -> str:
        name = m.group(2)
        if name == "runs":
            body = runs_table(records)
        elif name == "headline":
            body = headline_table(records)
        elif name in records:
            body = headline_table(records, [name])
        else:
            body = f"(no record: run `python -m bench run {name}`)"
        return f"{m.group(1)}{body}\n{m.group(3)}"

    return BLOCK.sub(block, text)


def update_readme(path: Path = README, folder: Path = RESULTS) -> bool:
    """Rewrite the generated tables; True when the file changed."""
    text = path.read_text(encoding="utf-8")
    new = render(text, load(folder))
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the tables are not current")
    args = ap.parse_args(argv)
    if args.check:
        text = README.read_text(encoding="utf-8")
        current = render(text, load()) == text
        print("bench/README.md tables are " + ("current" if current else
                                               "stale: run `python -m bench report`"))
        return 0 if current else 1
    changed = update_readme()
    print(f"bench/README.md: {'tables rewritten' if changed else 'tables already current'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
