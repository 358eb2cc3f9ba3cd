"""The Summaries page in a real browser: Playwright drives Debian's chromium against
`streamlit run` with the default llama.cpp backend (the bundled SmolLM2), one thread.
Screenshots and timings go to tests/artifacts/ (browser-summaries-*.png,
browser-summaries.json)."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from test_browser import ARGS, CHROMIUM, Server, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

ARTIFACTS = Path(__file__).parent.parent / "artifacts"
DATA = Path(__file__).parent.parent / "data"
FILES = [DATA / "summarize" / "BSD.txt", DATA / "app" / "guide.pdf"]
PROGRESS = '[data-testid="stProgress"]'


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path).start()
    yield s
    s.kill()


def progress_text(page) -> str:
    bars = page.locator(PROGRESS)
    return bars.first.inner_text() if bars.count() else ""


def test_upload_summarize_reload_read_and_open_a_page(server):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    timings: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        start = time.perf_counter()
        page.goto(server.url + "Summaries")
        page.get_by_role("heading", name="Summaries").first.wait_for(timeout=90_000)
        wait_idle(page, 90)
        timings["page_usable_s"] = round(time.perf_counter() - start, 2)

        page.get_by_text("Upload", exact=True).click()
        wait_idle(page)
        page.locator("input[type=file]").set_input_files([str(f) for f in FILES])
        page.get_by_text("guide.pdf").first.wait_for(timeout=30_000)
        box = page.get_by_label("Longest summary (tokens)")
        box.fill("64")
        box.press("Enter")
        wait_idle(page)
        clicked = time.perf_counter()
        page.get_by_role("button", name="Summarise").click()
        page.locator(PROGRESS).first.wait_for(timeout=30_000)
        timings["click_to_progress_s"] = round(time.perf_counter() - clicked, 2)
        first = progress_text(page)
        page.screenshot(path=ARTIFACTS / "browser-summaries-running.png", full_page=True)
        assert re.match(r"[01]/2 documents", first), first

        # Reload mid-run: the run goes on in the server and the new page follows it.
        page.reload()
        page.locator(PROGRESS).first.wait_for(timeout=60_000)
        after_reload = progress_text(page)
        seen = [after_reload]
        deadline = time.time() + 300
        while time.time() < deadline and "finished" not in seen[-1]:
            page.wait_for_timeout(250)
            seen.append(progress_text(page))
        timings["click_to_finished_s"] = round(time.perf_counter() - clicked, 2)
        assert "2/2 documents · finished" in seen[-1], seen[-5:]
        running = [s for s in seen if "left" in s or "measuring" in s]
        assert running, f"the run had ended before the reload: {seen[:3]}"
        done_counts = [int(s.split("/")[0]) for s in seen if re.match(r"\d/2", s)]
        assert done_counts == sorted(done_counts) and done_counts[-1] == 2
        wait_idle(page)

        # Read a summary and open one of its page references.
        page.get_by_text("Overview (index.md)").wait_for()
        assert page.get_by_text(re.compile(r"2 done")).count() >= 1
        page.get_by_role("heading", name=re.compile("Summary: ")).first.wait_for(timeout=30_000)
        ref = page.get_by_text(re.compile(r"^BSD\.txt · p\. 1$")).first
        ref.click()
        page.get_by_text(re.compile("Redistribution and use in source and binary forms"))\
            .first.wait_for(timeout=10_000)
        page.screenshot(path=ARTIFACTS / "browser-summaries-read.png", full_page=True)
        with sqlite3_connect(server.db) as db:
            rows = db.execute("SELECT markdown FROM summaries").fetchall()
        assert len(rows) == 2 and all(r[0].startswith("# Summary:") for r in rows)
        browser.close()
    timings["progress_samples"] = seen[:3] + seen[-2:]
    (ARTIFACTS / "browser-summaries.json").write_text(json.dumps(timings, indent=2))


def sqlite3_connect(path: Path):
    import sqlite3

    return sqlite3.connect(path)
