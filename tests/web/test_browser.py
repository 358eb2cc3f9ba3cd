"""The app in a real browser: Playwright drives Debian's chromium against `streamlit run`
with the default llama.cpp backend (the bundled SmolLM2). Screenshots and the measured
latencies go to tests/artifacts/ (browser-*.png, browser.json)."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench.browser import LATENCY_JS  # one copy: the bench measures the same

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).parent.parent / "artifacts"
PDF = Path(__file__).parent.parent / "data" / "app" / "guide.pdf"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
CAPTION = '[data-testid="stCaptionContainer"]'
MESSAGE = '[data-testid="stChatMessage"]'
LONG_QUESTION = ("Write a very long, detailed essay about the Frobnicator 3000: explain setup, "
                 "ports, safety and warranty at length, with many examples.")



# Installed before pressing Enter: when the new answer box first showed the evidence, the
# reading progress, and the answer itself (the streaming cursor or the finished metrics).
SEEN_JS = """(n0) => {
  const seen = window.__seen = {t0: null, evidence: null, progress: null, answer: null};
  document.addEventListener('keydown', e => {
    if (e.key === 'Enter' && seen.t0 === null) seen.t0 = performance.now();
  }, true);
  const obs = new MutationObserver(() => {
    if (seen.t0 === null) return;
    const msgs = document.querySelectorAll('[data-testid="stChatMessage"]');
    if (msgs.length < n0 + 2) return;
    const text = msgs[msgs.length - 1].innerText, now = performance.now();
    if (seen.evidence === null && text.includes('Passages that match your question'))
      seen.evidence = now;
    if (seen.progress === null && text.includes('tokens of context')) seen.progress = now;
    if (seen.answer === null && (text.includes('\u258c') || /tokens in/.test(text))) {
      seen.answer = now;
      obs.disconnect();
    }
  });
  obs.observe(document.body, {childList: true, subtree: true, characterData: true});
}"""


# Installed before an upload: every title the documents panel shows, in order.
PANEL_JS = """() => {
  const seen = window.__panel = [];
  const note = () => {
    for (const s of document.querySelectorAll('summary')) {
      const at = s.innerText.indexOf('Documents (');
      const text = at < 0 ? null : s.innerText.slice(at).trim();
      if (text !== null && seen[seen.length - 1] !== text) seen.push(text);
    }
  };
  note();
  new MutationObserver(note).observe(document.body,
                                     {childList: true, subtree: true, characterData: true});
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`streamlit run app.py` on 127.0.0.1 with its data in a temporary folder."""

    def __init__(self, data_dir: Path, **env: str) -> None:
        self.data_dir = data_dir
        self.env = env  # more DOCCHAT_* settings for this server
        self.proc: subprocess.Popen | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def db(self) -> Path:
        return self.data_dir / "docchat.db"

    def start(self) -> "Server":
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("DOCCHAT_")}
        # One llama.cpp thread: on a busy 2-core machine, two spinning threads fighting the
        # browser and the server for the cores run 20x slower than one.
        env.update(DOCCHAT_DATA_DIR=str(self.data_dir), DOCCHAT_PRESET="raw",
                   DOCCHAT_N_THREADS="1", **self.env)
        self.log = open(self.data_dir / f"server-{self.port}.log", "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(self.port),
             "--server.address", "127.0.0.1"], cwd=ROOT, env=env, stdout=self.log,
            stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if httpx.get(self.url + "_stcore/health", timeout=1).text == "ok":
                    return self
            except httpx.HTTPError:
                pass
            assert self.proc.poll() is None, Path(self.log.name).read_text()
            time.sleep(0.2)
        raise AssertionError("streamlit did not start")

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def turns(self, session: str) -> list[tuple]:
        with sqlite3.connect(self.db) as db:
            return db.execute("SELECT role, content, status, metrics FROM turns WHERE session_id=?"
                              " ORDER BY id", [session]).fetchall()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path).start()
    yield s
    s.kill()


@pytest.fixture
def long_server(tmp_path):
    """A server whose answers run to max_new_tokens: SmolLM2's essay loops after ~150-200
    tokens, and the loop stop (tested in tests/backends/test_repetition.py) would end it before
    a Stop click or a killed server lands mid-answer. On a fast runner it did: the essay was cut
    for repeating itself before the click, so "Stopped" never showed (CI at f235e18)."""
    s = Server(tmp_path, DOCCHAT_STOP_LOOPS="0").start()
    yield s
    s.kill()


@pytest.fixture(scope="module")
def results():
    data: dict = {}
    yield data
    path = ARTIFACTS / "browser.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**old, **data}, indent=2))


def open_page(browser, url: str):
    """A fresh context; returns the page once usable and the ms that took."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(url)
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
    wait_idle(page)
    return page, page.evaluate("performance.now()")


def wait_idle(page, timeout: float = 60) -> None:
    """Until the script run ends (the app's script state is "notRunning")."""
    page.wait_for_timeout(100)  # let a rerun that an action triggered begin
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(
        timeout=timeout * 1000)


def upload(page, path: Path = PDF) -> None:
    page.locator("input[type=file]").set_input_files([str(path)])
    page.get_by_text("fits the model's window whole").first.wait_for(timeout=60_000)
    wait_idle(page)


def limit_answers(page, tokens: int) -> None:
    """Set the preset's max_new_tokens through the sidebar."""
    box = page.get_by_label("max_new_tokens")
    if not box.is_visible():
        page.get_by_text("Adjust every value").click()
    box.fill(str(tokens))
    box.press("Enter")
    wait_idle(page)


def session_of(page) -> str:
    return re.search(r"session=(\w+)", page.url).group(1)


def messages(page) -> list[str]:
    return [m.inner_text() for m in page.locator(MESSAGE).all()]


STATUS = re.compile(r"^(Waiting for the model|Reading |Read |The server is reading)"
                    r"|answer\(s\) ahead")


def answer_text(page) -> str:
    """The answer written so far ("" while the box still says what the backend does)."""
    text = answer_body(page)
    return "" if STATUS.search(text) else text


def answer_body(page) -> str:
    body = page.locator(MESSAGE).last.locator('[data-testid="stMarkdownContainer"]').first
    return body.inner_text().replace("\u258c", "").strip()


def ask(page, question: str) -> None:
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(question)
    box.press("Enter")


def wait_answer(page, count: int, timeout: float = 120) -> None:
    """Until the page shows count messages and the last one has its metrics line."""
    page.locator(MESSAGE).nth(count - 1).get_by_text(re.compile("tokens in")).wait_for(
        timeout=timeout * 1000)


def test_upload_ask_stream_stop_reload_and_latency(browser, long_server, results):
    server = long_server
    page, cold_ms = open_page(browser, server.url)
    _, warm_ms = open_page(browser, server.url)
    page.evaluate(PANEL_JS)
    upload(page)
    # The panel's title says the file is being added while it is read, and counts it once
    # it is stored (not "Documents (0)" until the next click).
    page.get_by_text("Documents (1)", exact=True).wait_for(timeout=10_000)
    panel = page.evaluate("window.__panel")
    assert panel == ["Documents (0)", "Documents (0 · 1 being added)", "Documents (1)"], panel
    sid = session_of(page)
    limit_answers(page, 40)
    page.screenshot(path=ARTIFACTS / "browser-uploaded.png")

    # Latency: Enter -> first answer character painted, minus the backend's own TTFT.
    overheads, samples = [], []
    for question in ["What is the default port?", "How long is the warranty?",
                     "What should you never do after midnight?"]:
        n0 = page.locator(MESSAGE).count()
        page.evaluate(LATENCY_JS, n0)
        ask(page, question)
        wait_answer(page, n0 + 2)
        lat = page.evaluate("window.__lat")
        metrics = json.loads(server.turns(sid)[-1][3])
        backend_ttft = metrics["app"]["backend_ttft_ms"]
        on_screen = lat["t1"] - lat["t0"]
        if on_screen >= backend_ttft:  # else the observer fired early: not a sample
            overheads.append(on_screen - backend_ttft)
        samples.append({"enter_to_first_char_ms": round(on_screen, 1),
                        "backend_ttft_ms": backend_ttft,
                        "asked_to_backend_call_ms": metrics["app"]["backend_called_ms"],
                        "asked_to_first_chunk_ms": metrics["app"]["first_chunk_ms"],
                        "overhead_ms": round(on_screen - backend_ttft, 1)})
    page.screenshot(path=ARTIFACTS / "browser-answered.png", full_page=True)

    # A long answer grows on screen; Stop cancels it and keeps the partial text.
    limit_answers(page, 512)
    n0 = page.locator(MESSAGE).count()
    ask(page, LONG_QUESTION)
    page.locator(MESSAGE).nth(n0 + 1).wait_for()
    # Stop as soon as it is seen growing (the loop stop is off on this server: it ended the
    # essay before the click on a fast runner).
    lengths, deadline = [], time.time() + 60
    while time.time() < deadline and (len(set(lengths)) < 3 or lengths[-1] < 80):
        text = answer_text(page) if page.locator(MESSAGE).count() >= n0 + 2 else ""
        if text:
            lengths.append(len(text))
        page.wait_for_timeout(150)
    assert len(set(lengths)) >= 3 and lengths == sorted(lengths), lengths
    page.get_by_role("button", name=re.compile("Stop")).click()
    page.screenshot(path=ARTIFACTS / "browser-streaming.png")
    page.locator(MESSAGE).nth(n0 + 1).locator(CAPTION).get_by_text("Stopped").wait_for(
        timeout=30_000)
    wait_idle(page)
    role, content, status, _ = server.turns(sid)[-1]
    assert status == "stopped" and len(content) >= lengths[-1] * 0.8
    assert page.get_by_role("button", name=re.compile("Stop")).count() == 0
    page.screenshot(path=ARTIFACTS / "browser-stopped.png", full_page=True)

    # The session link resumes the whole conversation in a new tab.
    again, _ = open_page(browser, server.url + f"?session={sid}")
    shown = messages(again)
    turns = server.turns(sid)
    assert len(shown) == len(turns) == 8
    for text, (role, content, _, _) in zip(shown, turns):
        if role == "user":
            assert content in text
    assert "Stopped" in shown[-1]
    again.screenshot(path=ARTIFACTS / "browser-reloaded.png", full_page=True)

    # Export the session as Markdown (a callable made on click lost its id when the tab
    # reran: a click still holding it downloaded nothing).
    exported, url = export(again)
    assert "What is the default port?" in exported and "_(stopped)_" in exported
    for mode in ["Whole window, this session", "As much as the target allows"]:
        again.get_by_text(mode).first.click()  # a rerun
        wait_idle(again)
    assert httpx.get(url, timeout=10).text == exported  # the link a tab holds outlives reruns

    results["latency"] = {
        "preset": "raw",
        "overhead_ms_median": round(statistics.median(overheads), 1) if overheads else None,
        "samples": samples,
        "fresh_page_usable_ms": {"first_load": round(cold_ms, 1), "second": round(warm_ms, 1)},
    }


def export(page) -> tuple[str, str]:
    """The session's Markdown, downloaded with the sidebar's Export button, and its link."""
    wait_idle(page)
    button = page.get_by_role("button", name="Export as Markdown")
    if not button.is_visible():
        page.get_by_text("This session", exact=True).click()
    try:
        with page.expect_download(timeout=30_000) as download:
            button.click()
    except PlaywrightTimeout:  # say what the page showed: this has failed rarely, unexplained
        page.screenshot(path=ARTIFACTS / "browser-export-failed.png", full_page=True)
        error = page.get_by_test_id("stDownloadButtonError")
        raise AssertionError(
            f"no download: buttons {button.count()}, script state "
            f"{page.get_by_test_id('stApp').get_attribute('data-test-script-state')}, "
            f"error {error.all_inner_texts()}") from None
    return Path(download.value.path()).read_text(), download.value.url


def test_three_tabs_ask_at_once_without_mixing(browser, server):
    pages = []
    for _ in range(3):
        page, _ = open_page(browser, server.url)
        upload(page)
        limit_answers(page, 40)
        pages.append(page)
    questions = ["What is the default port?", "How long does the warranty last?",
                 'What does <img src=x onerror="window.__xss=1"> mean here?']
    for page, question in zip(pages, questions):
        ask(page, question)
    seen_queue = False
    deadline = time.time() + 150
    while time.time() < deadline:
        texts = [messages(p) for p in pages]
        seen_queue |= any("answer(s) ahead" in t[-1] for t in texts if len(t) == 2)
        if all(len(t) == 2 and "tokens in" in t[-1] for t in texts):
            break
        pages[0].wait_for_timeout(200)
    for i, page in enumerate(pages):
        page.screenshot(path=ARTIFACTS / f"browser-tab{i + 1}.png")
    assert seen_queue, "no tab said that other answers were ahead of it"
    answers = []
    for page, question in zip(pages, questions):
        user, assistant = messages(page)
        assert question in user
        turns = server.turns(session_of(page))
        assert [t[0] for t in turns] == ["user", "assistant"] and turns[0][1] == question
        assert turns[1][2] == "done"
        words = turns[1][1].split()[:6]
        assert all(w.strip("*_`#") in assistant for w in words), (words, assistant)
        answers.append(turns[1][1])
    assert len({a for a in answers}) == 3, answers
    # The HTML in the question is shown as text and never runs.
    assert pages[2].evaluate("window.__xss") is None
    assert pages[2].locator(f'{MESSAGE} img[src="x"]').count() == 0


def test_killed_server_keeps_question_and_partial_answer(browser, long_server, tmp_path):
    server = long_server
    page, _ = open_page(browser, server.url)
    upload(page)
    sid = session_of(page)
    ask(page, LONG_QUESTION)
    page.locator(MESSAGE).nth(1).wait_for()
    deadline = time.time() + 60
    while time.time() < deadline and len(answer_text(page)) < 60:
        page.wait_for_timeout(100)
    # A second tab opened from the session link follows the answer as it grows.
    follower, _ = open_page(browser, server.url + f"?session={sid}")
    follower.get_by_text("Being written").wait_for(timeout=10_000)
    first = len(messages(follower)[-1])
    follower.wait_for_timeout(1500)
    assert len(messages(follower)[-1]) > first
    on_screen = answer_text(page)
    page.wait_for_timeout(1200)  # the answer is saved at least every second
    server.kill()
    page.screenshot(path=ARTIFACTS / "browser-killed.png")
    with sqlite3.connect(server.db) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    server.start()
    resumed, _ = open_page(browser, server.url + f"?session={sid}")
    user, assistant = messages(resumed)
    assert LONG_QUESTION in user
    role, content, status, _ = server.turns(sid)[-1]
    assert status == "streaming" and len(content) >= len(on_screen) > 0
    # Everything that was on screen before the kill is back.
    assert " ".join(on_screen.split()) in " ".join(assistant.split())
    assert "Interrupted" in assistant
    resumed.screenshot(path=ARTIFACTS / "browser-restarted.png", full_page=True)


def test_evidence_and_progress_first_and_stop_while_reading_frees_the_queue(browser, server,
                                                                            results):
    page, _ = open_page(browser, server.url)
    upload(page)
    limit_answers(page, 24)
    sid = session_of(page)
    page.evaluate(SEEN_JS, 0)
    ask(page, "What is the default port?")
    wait_answer(page, 2)
    seen = page.evaluate("window.__seen")
    page.screenshot(path=ARTIFACTS / "browser-evidence.png", full_page=True)
    assert seen["evidence"] is not None and seen["progress"] is not None, seen
    assert seen["evidence"] < seen["answer"] and seen["progress"] < seen["answer"], seen
    # Kept under the finished answer, collapsed.
    assert page.locator(MESSAGE).nth(1).get_by_text("Passages that match your question").count()
    first = json.loads(server.turns(sid)[-1][3])

    # A second tab, another document: Stop while the model reads it.
    other, _ = open_page(browser, server.url)
    upload(other, ROOT / "README.md")
    other_sid = session_of(other)
    ask(other, "How do I run the tests?")
    other.locator(MESSAGE).nth(1).get_by_text(re.compile("Reading .* tokens of context")).wait_for(
        timeout=120_000)
    other.screenshot(path=ARTIFACTS / "browser-reading.png")
    pressed = time.perf_counter()
    other.get_by_role("button", name=re.compile("Stop")).click()
    # The caption, not any "stopped" in the evidence quoted from README.md.
    other.locator(MESSAGE).nth(1).locator(CAPTION).get_by_text("Stopped").wait_for(
        timeout=30_000)
    stopped_ms = (time.perf_counter() - pressed) * 1000
    role, content, status, metrics = server.turns(other_sid)[-1]
    metrics = json.loads(metrics)
    assert status == "stopped" and content == "" and metrics["completion_tokens"] == 0
    assert metrics["finish_reason"] == "cancelled"
    # The first tab's follow-up is not held up by the stopped one.
    ask(page, "And how long is the warranty?")
    wait_answer(page, 4)
    follow = json.loads(server.turns(sid)[-1][3])
    assert server.turns(sid)[-1][2] == "done"
    results["responsiveness"] = {
        "evidence_ms": round(seen["evidence"] - seen["t0"], 1),
        "progress_ms": round(seen["progress"] - seen["t0"], 1),
        "first_answer_ms": round(seen["answer"] - seen["t0"], 1),
        "first_prompt_tokens": first["prompt_tokens"], "first_reused": first["prompt_reused"],
        "stop_to_stopped_on_screen_ms": round(stopped_ms, 1),
        "follow_up_queue_ms": follow["queue_ms"], "follow_up_prompt_tokens":
        follow["prompt_tokens"], "follow_up_reused": follow["prompt_reused"],
        "follow_up_ttft_ms": follow["model"]["ttft_ms"],
    }


def shown_marks(answer) -> dict[int, str]:
    """Each marked statement's number and status (a statement over lines has a mark each)."""
    return {int(m.get_attribute("data-n")): m.get_attribute("data-status")
            for m in answer.locator(".dc-statement").all()}


def test_statement_marks_survive_a_reload_and_a_page_link_highlights_the_sentence(browser,
                                                                                  server):
    import io

    import pypdfium2 as pdfium
    from PIL import Image

    page, _ = open_page(browser, server.url)
    upload(page)
    limit_answers(page, 40)
    sid = session_of(page)
    ask(page, "What is the default port?")
    wait_answer(page, 2)
    answer = page.locator(MESSAGE).nth(1)
    counted = re.compile(r"\d+ of \d+ statements found in the documents")
    answer.get_by_text(counted).wait_for(timeout=30_000)
    marks = answer.locator(".dc-statement")
    marks.first.wait_for(timeout=30_000)  # the answer's HTML can come after its captions
    statuses = shown_marks(answer)
    checks = json.loads(server.turns(sid)[-1][3])["checks"]["statements"]
    assert statuses == {n: s["status"] for n, s in enumerate(checks) if s["status"] != "exempt"}
    for m in marks.all():  # each mark says what it means on hover
        assert m.get_attribute("title")
    page.screenshot(path=ARTIFACTS / "browser-marks.png", full_page=True)

    # The evidence's page link: the page opens in a dialog in place, with no navigation
    # (the tab's live state, here a variable of its window, survives the click).
    evidence = answer.get_by_text("Passages that match your question")
    link = answer.locator("a.dc-evidence-page").first
    if not link.is_visible():
        evidence.click()
    href = link.get_attribute("href")
    page.evaluate("window.__beforeClick = 'kept'")
    link.click()
    dialog = page.get_by_role("dialog")
    dialog.locator("img").first.wait_for(timeout=60_000)
    wait_idle(page)
    assert page.evaluate("window.__beforeClick") == "kept"
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
    assert "view=" not in page.url and f"session={sid}" in page.url
    page.screenshot(path=ARTIFACTS / "browser-page-view.png")
    highlight = dialog.locator(".dc-highlight")
    assert highlight.get_attribute("data-exact") == "true", href
    boxes = json.loads(highlight.get_attribute("data-boxes"))
    number = int(highlight.get_attribute("data-page"))
    sentence = dialog.locator("mark.dc-passage").inner_text()
    # The image the browser shows: yellow at the centre of every character of the sentence
    # (PDFium's own boxes, computed here), and not yellow at a character outside it.
    src = dialog.locator("img").first.get_attribute("src")
    image = Image.open(io.BytesIO(httpx.get(httpx.URL(server.url).join(src), timeout=10)
                                  .content)).convert("RGB")
    width, height = map(int, highlight.get_attribute("data-size").split(","))
    # The first image is the part of the page around the highlight (page pixels from x0, y0).
    x0, y0, x1, y1 = map(int, highlight.get_attribute("data-focus").split(","))
    assert image.size == (x1 - x0, y1 - y0) and x1 - x0 == width
    image = image.crop((-x0, -y0, width - x0, height - y0))  # back in page pixels
    pdf = pdfium.PdfDocument(str(PDF))
    pdf_page = pdf[number - 1]
    text = pdf_page.get_textpage()
    words = sentence.rstrip(".").split()
    found = text.search(" ".join(words[:4]), match_case=True).get_next()
    assert found is not None, sentence
    top_pt = pdf_page.get_size()[1]
    scale = width / pdf_page.get_size()[0]

    def colour_at(i: int) -> tuple[int, int, int]:
        left, bottom, right, top = text.get_charbox(i)
        return image.getpixel((int((left + right) / 2 * scale),
                               int((top_pt - (top + bottom) / 2) * scale)))

    def yellow(rgb) -> bool:  # the highlight tints both paper and ink: blue well below red
        r, g, b = rgb
        return r - b > 60 and g - b > 40

    lit = [i for i in range(found[0], found[0] + found[1])
           if text.get_text_range(i, 1).strip()]
    inside = [colour_at(i) for i in lit]
    assert all(map(yellow, inside)), (inside, boxes)
    for x0, y0, _x1, y1 in boxes:
        assert yellow(image.getpixel((x0 + 2, (y0 + y1) // 2)))  # the box's own edge
    assert not yellow(image.getpixel((width - 5, y0 + 2)))  # the page above the highlight

    # Closed, then a statement's own page link: the dialog again, still no navigation.
    page.keyboard.press("Escape")
    dialog.wait_for(state="detached", timeout=30_000)
    statement_link = answer.locator(".dc-page a[data-view]").first
    if statement_link.count():
        statement_link.click()
        page.get_by_role("dialog").locator(".dc-context").wait_for(timeout=60_000)
        assert page.evaluate("window.__beforeClick") == "kept"
        page.keyboard.press("Escape")
        page.get_by_role("dialog").wait_for(state="detached", timeout=30_000)
    # A reload: still marked (the marks come from SQLite).
    page.reload()
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
    wait_idle(page)
    again = page.locator(MESSAGE).nth(1)
    again.locator(".dc-statement").first.wait_for(timeout=30_000)
    assert shown_marks(again) == statuses
    assert again.get_by_text(counted).count() == 1
    # The link shared (opened as a URL): the same page view opens from its query parameters.
    page.goto(str(httpx.URL(server.url).join(href)))
    page.get_by_role("dialog").locator(".dc-highlight").wait_for(state="attached",
                                                                 timeout=60_000)
    assert page.get_by_role("dialog").locator("mark.dc-passage").inner_text() == sentence


def test_a_chinese_browser_opens_the_chinese_interface(browser, server):
    """A browser set to Chinese (zh-CN) gets the interface in 简体中文 without touching the
    language picker (the settings' language is "auto"); an English one gets English."""
    for locale, placeholder in [("zh-CN", "就文档提问"), ("en-US", "Ask about your documents")]:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, locale=locale)
        page = context.new_page()
        page.goto(server.url)
        box = page.get_by_test_id("stChatInputTextArea")
        box.wait_for(timeout=60_000)
        assert box.get_attribute("placeholder") == placeholder, locale
        context.close()
