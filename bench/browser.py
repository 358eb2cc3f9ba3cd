"""Browser-measured latency of the app next to a bare st.write_stream app, same backend.

    python bench/browser.py [--json] [--questions N]

For each app, in headless Debian chromium (/usr/bin/chromium) driven by Playwright:
- overhead: time from pressing Enter to the first answer character painted, minus the
  backend's own time to first token (llama.cpp + bundled SmolLM2, one thread, 40 new tokens);
- usable: time for a fresh browser context to load the page until the chat box is there and
  the script run has ended.
docchat runs with the raw preset (no pacing), so both sides show pieces as they come.

Bounds, docchat only; the bench exits 1 when one is missed (the JSON says which):
- follow-up: the median follow-up's Enter -> first character on screen is at most
  FOLLOW_UP_SHARE of the first question's (the follow-ups reuse the first prompt's cache);
- stop: "Stopped" is on screen at most STOP_S after Stop is clicked in a streaming answer.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
PDF = ROOT / "tests" / "data" / "app" / "guide.pdf"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
QUESTIONS = ["What is the default port?", "How long is the warranty?",
             "What should you never do after midnight?", "How do you install it?",
             "What is this guide about?", "Which command installs it?"]
LONG_QUESTION = ("Write a very long, detailed essay about this guide: explain setup, ports, "
                 "safety and warranty at length, with many examples.")
FOLLOW_UP_SHARE = 0.6
STOP_S = 3.0
# How `python -m bench all` runs this script (bench/README.md, "Running every bench").
BENCH = {"quick": ["--questions", "3"], "full": [], "timeout_s": 420, "order": 90}

# Installed before pressing Enter: the time of the keydown, and of the first animation frame
# after the new answer's first character is in the page.
LATENCY_JS = """(n0) => {
  const lat = window.__lat = {t0: null, t1: null, text: null};
  document.addEventListener('keydown', e => {
    if (e.key === 'Enter' && lat.t0 === null) lat.t0 = performance.now();
  }, true);
  const obs = new MutationObserver(() => {
    if (lat.t0 === null || lat.text !== null) return;
    const msgs = document.querySelectorAll('[data-testid="stChatMessage"]');
    if (msgs.length < n0 + 2) return;
    const body = msgs[msgs.length - 1].querySelector('[data-testid="stMarkdownContainer"]');
    const text = body ? body.innerText.replace('\u258c', '').trim() : '';
    // Before the first token the box says what the backend does ("Waiting for the model",
    // "Reading N tokens of context", "N answer(s) ahead"); that is not the answer.
    if (text && !/^(Waiting for the model|Reading |Read |The server is reading)/.test(text)
        && !/answer\\(s\\) ahead/.test(text)) {
      lat.text = text;
      requestAnimationFrame(() => { lat.t1 = performance.now(); });
      obs.disconnect();
    }
  });
  obs.observe(document.body, {childList: true, subtree: true, characterData: true});
}"""


def start(script: str, data_dir: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCCHAT_")}
    env.update(DOCCHAT_DATA_DIR=str(data_dir), DOCCHAT_PRESET="raw", DOCCHAT_N_THREADS="1",
               PYTHONPATH=str(ROOT))  # streamlit puts only the script's own folder on the path
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", script, "--server.port",
                             str(port), "--server.address", "127.0.0.1"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    for _ in range(300):
        try:
            if httpx.get(url + "_stcore/health", timeout=1).text == "ok":
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"{script} did not start")


def idle(page) -> None:
    page.wait_for_timeout(100)
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(
        timeout=120_000)


def open_page(browser, url: str):
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(url)
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=120_000)
    idle(page)
    return page, page.evaluate("performance.now()")


def limit_answers(page, tokens: int) -> None:
    """The preset's max_new_tokens, set in the sidebar (its values shown)."""
    box = page.get_by_label("max_new_tokens")
    box.fill(str(tokens))
    box.press("Enter")
    idle(page)


def ask(page, question: str) -> int:
    """Type the question and press Enter, the latency observer installed first; the number of
    messages before it."""
    n0 = page.locator('[data-testid="stChatMessage"]').count()
    page.evaluate(LATENCY_JS, n0)
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(question)
    box.press("Enter")
    return n0


def measure(browser, url: str, docchat: bool, questions: int, db: Path | None) -> dict:
    usable = [open_page(browser, url)[1] for _ in range(3)]
    page, _ = open_page(browser, url)
    if docchat:
        page.locator("input[type=file]").set_input_files([str(PDF)])
        page.get_by_text("fits the model's window whole").first.wait_for(timeout=120_000)
        idle(page)
        page.get_by_text("Adjust every value").click()
        limit_answers(page, 40)
    overheads, ttfts, on_screen = [], [], []
    for question in (QUESTIONS * 3)[:questions]:
        n0 = ask(page, question)
        last = page.locator('[data-testid="stChatMessage"]').nth(n0 + 1)
        last.get_by_text(re.compile("tokens in")).wait_for(timeout=300_000)
        lat = page.evaluate("window.__lat")
        if docchat:
            import sqlite3
            with sqlite3.connect(db) as con:
                metrics = json.loads(con.execute(
                    "SELECT metrics FROM turns ORDER BY id DESC LIMIT 1").fetchone()[0])
            ttft = metrics["app"]["backend_ttft_ms"]
        else:
            ttft = float(re.search(r"backend_ttft_ms=([\d.]+)", last.inner_text()).group(1))
        ttfts.append(ttft)
        overhead = lat["t1"] - lat["t0"] - ttft
        if overhead < 0:  # the observer fired before any token (a status line); not a sample
            print(f"skipped a sample: {overhead:.0f} ms", file=sys.stderr)
            on_screen.append(None)
            continue
        on_screen.append(lat["t1"] - lat["t0"])
        overheads.append(overhead)
        idle(page)
    stop = stop_ms(page) if docchat else None
    return {"first_char_ms": [None if x is None else round(x, 1) for x in on_screen],
            "stop_ms": stop,
            "overhead_ms": [round(x, 1) for x in overheads],
            "overhead_ms_median": round(statistics.median(overheads), 1) if overheads else None,
            "backend_ttft_ms_median": round(statistics.median(ttfts), 1),
            "usable_ms": [round(x, 1) for x in usable],
            "usable_ms_median": round(statistics.median(usable), 1)}


def stop_ms(page) -> float:
    """Ask for a long answer, click Stop once its first characters are on screen: ms until
    "Stopped" is."""
    limit_answers(page, 400)
    n0 = ask(page, LONG_QUESTION)
    page.wait_for_function("window.__lat.t1 !== null", timeout=300_000)
    pressed = time.perf_counter()
    page.get_by_role("button", name=re.compile("Stop")).click()
    page.locator('[data-testid="stChatMessage"]').nth(n0 + 1).locator(
        '[data-testid="stCaptionContainer"]').get_by_text("Stopped").wait_for(
        timeout=60_000)
    return round((time.perf_counter() - pressed) * 1000, 1)


def bounds(docchat: dict) -> dict:
    """The bounds of the module docstring, measured and met or not."""
    first, *follow = docchat["first_char_ms"]
    follow = [x for x in follow if x is not None]
    share = statistics.median(follow) / first if follow and first else None
    return {"follow_up_share": None if share is None else round(share, 3),
            "follow_up_share_max": FOLLOW_UP_SHARE,
            "follow_up_met": share is not None and share <= FOLLOW_UP_SHARE,
            "stop_s": docchat["stop_ms"] / 1000, "stop_s_max": STOP_S,
            "stop_met": docchat["stop_ms"] / 1000 <= STOP_S}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--questions", type=int, default=5, help="at least 2: a first and follow-ups")
    args = ap.parse_args()
    if args.questions < 2:
        ap.error("--questions must be at least 2 (the first question and a follow-up)")
    from playwright.sync_api import sync_playwright

    results = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for name, script in (("docchat", "app.py"),
                             ("st.write_stream", "bench/apps/write_stream.py")):
            data = Path(tmp) / name
            proc, url = start(script, data)
            try:
                results[name] = measure(browser, url, name == "docchat", args.questions,
                                        data / "docchat.db")
            finally:
                os.kill(proc.pid, signal.SIGTERM)
                proc.wait(20)
        browser.close()
    a, b = results["docchat"], results["st.write_stream"]
    results["ratio"] = {
        "overhead": round(a["overhead_ms_median"] / b["overhead_ms_median"], 2)
        if a["overhead_ms_median"] and b["overhead_ms_median"] else None,
        "usable": round(a["usable_ms_median"] / b["usable_ms_median"], 2)}
    results["bounds"] = bounds(a)
    ok = results["bounds"]["follow_up_met"] and results["bounds"]["stop_met"]
    if args.json:
        print(json.dumps(results))
        return 0 if ok else 1
    print("| measure (median) | docchat | st.write_stream | ratio |\n|---|---:|---:|---:|")
    print(f"| Enter -> first char on screen - backend TTFT, ms | {a['overhead_ms_median']} "
          f"| {b['overhead_ms_median']} | {results['ratio']['overhead']} |")
    print(f"| fresh page usable, ms | {a['usable_ms_median']} | {b['usable_ms_median']} "
          f"| {results['ratio']['usable']} |")
    print(f"| backend TTFT, ms (for scale) | {a['backend_ttft_ms_median']} "
          f"| {b['backend_ttft_ms_median']} | |")
    bound = results["bounds"]
    print(f"\nfollow-up first character / first question's: {bound['follow_up_share']} "
          f"(bound {FOLLOW_UP_SHARE}: {'met' if bound['follow_up_met'] else 'MISSED'}); "
          f"Stop -> 'Stopped' {bound['stop_s']:.2f} s (bound {STOP_S:g} s: "
          f"{'met' if bound['stop_met'] else 'MISSED'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
