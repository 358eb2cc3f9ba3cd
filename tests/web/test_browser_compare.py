"""The Compare page in a real browser: Playwright drives Debian's chromium against
`streamlit run` with the default llama.cpp backend (the bundled SmolLM2), one thread:
compare two versions, open a change, ask about it. Screenshots and timings go to
tests/artifacts/ (browser-compare-*.png, browser-compare.json)."""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from test_browser import ARGS, CHROMIUM, MESSAGE, Server, wait_idle

from docchat.library.documents import ingest_path
from docchat.library.store import SessionStore

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

ARTIFACTS = Path(__file__).parent.parent / "artifacts"
SECTIONS = [("1. Scope", "This agreement covers the supply of widgets to the Buyer."),
            ("2. Fees", "The Buyer pays the fee within 30 days of the invoice date."),
            ("3. Delivery", "The Seller delivers the widgets to the warehouse in Leeds."),
            ("4. Law", "This agreement is governed by the laws of England and Wales.")]


def versions(tmp_path: Path) -> str:
    """A session in the server's database with two versions of a contract (30 -> 60 days)."""
    store = SessionStore.open(tmp_path / "docchat.db")
    sid = store.create_session("contract versions")
    new = list(SECTIONS)
    new[1] = ("2. Fees", SECTIONS[1][1].replace("30 days", "60 days"))
    for name, sections in (("contract-v1.md", SECTIONS), ("contract-v2.md", new)):
        path = tmp_path / name
        path.write_text("\n\n".join(f"# {t}\n\n{b}" for t, b in sections), encoding="utf-8")
        store.attach(sid, ingest_path(store, path).doc_id)
    return sid


@pytest.fixture
def server(tmp_path):
    sid = versions(tmp_path)
    s = Server(tmp_path).start()
    s.session = sid
    yield s
    s.kill()


def test_compare_open_a_change_and_ask_about_it(server):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    timings: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        start = time.perf_counter()
        page.goto(server.url + f"Compare?session={server.session}")
        page.get_by_role("heading", name="Compare two versions").wait_for(timeout=90_000)
        wait_idle(page, 90)
        timings["page_usable_s"] = round(time.perf_counter() - start, 2)

        clicked = time.perf_counter()
        page.get_by_role("button", name="Compare", exact=True).click()
        change = page.get_by_text("changed · 2. Fees").first
        change.wait_for(timeout=30_000)
        timings["click_to_changes_s"] = round(time.perf_counter() - clicked, 2)
        wait_idle(page, 120)
        assert page.get_by_text("3 unchanged sections").count() == 1

        deleted = page.locator("del", has_text="30").first
        assert not deleted.is_visible()  # changes start closed, a list to scan
        change.click()  # open the change: the redline shows what went and what came
        deleted.wait_for(timeout=10_000)
        assert page.locator("ins", has_text="60").first.is_visible()
        page.screenshot(path=ARTIFACTS / "browser-compare-redline.png", full_page=True)

        box = page.locator('input[aria-label="Ask about the changes"]')
        box.fill("How many days does the Buyer have to pay now?")
        asked = time.perf_counter()
        page.get_by_role("button", name="Ask", exact=True).click()
        answer = page.locator(MESSAGE).nth(1)
        answer.wait_for(timeout=60_000)
        wait_idle(page, 300)
        timings["ask_to_answer_s"] = round(time.perf_counter() - asked, 2)
        text = answer.inner_text().strip()
        assert text, "the answer is empty"
        page.screenshot(path=ARTIFACTS / "browser-compare-answer.png", full_page=True)

        # stored with the session: a reload shows the comparison and the answer again
        page.reload()
        page.get_by_text("changed · 2. Fees").first.wait_for(timeout=90_000)
        page.get_by_text("How many days does the Buyer have to pay now?").wait_for(
            timeout=30_000)
        browser.close()
    with sqlite3.connect(server.db) as db:
        data = json.loads(db.execute("SELECT data FROM comparisons").fetchone()[0])
    assert data["questions"][0]["answer"].strip()
    assert data["summary"]["changed"] == 1 and data["summary"]["unchanged"] == 3
    timings["answer"] = data["questions"][0]["answer"][:200]
    (ARTIFACTS / "browser-compare.json").write_text(json.dumps(timings, indent=2))
