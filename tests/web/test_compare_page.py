"""The Compare page (pages/2_Compare.py) through AppTest, with the scripted echo backend."""
from __future__ import annotations

from pathlib import Path

import factories
import pytest
from factories import SCRIPT
from streamlit.testing.v1 import AppTest

from docchat.config import Settings
from docchat.library.documents import ingest_path
from docchat.library.store import SessionStore

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGE = "pages/2_Compare.py"
SECTIONS = [("1. Scope", "This agreement covers the supply of widgets to the Buyer."),
            ("2. Fees", "The Buyer pays the fee within 30 days of the invoice date."),
            ("3. Delivery", "The Seller delivers the widgets to the warehouse in Leeds."),
            ("4. Law", "This agreement is governed by the laws of England and Wales.")]


PROMPTS: list[str] = []  # the last message of every request the page made


@pytest.fixture(autouse=True)
def page_env(monkeypatch):
    original = factories.Scripted.stream

    def recording(self, request):
        PROMPTS.append(request.messages[-1].content)
        yield from original(self, request)

    monkeypatch.setattr(factories.Scripted, "stream", recording)
    PROMPTS.clear()
    yield from factories.scripted_app(monkeypatch)


def write(path: Path, sections) -> Path:
    path.write_text("\n\n".join(f"# {t}\n\n{b}" for t, b in sections), encoding="utf-8")
    return path


@pytest.fixture
def session(tmp_path) -> str:
    """A session holding two versions: v2 renumbers nothing, changes 30 to 60 days and
    moves the law section first."""
    store = SessionStore.open(Settings.from_env().db)
    new = [SECTIONS[3]] + SECTIONS[:3]
    new[2] = ("2. Fees", SECTIONS[1][1].replace("30 days", "60 days"))
    sid = store.create_session("contract")
    for name, sections in (("v1.md", SECTIONS), ("v2.md", new)):
        r = ingest_path(store, write(tmp_path / name, sections))
        assert r.ok, r.error
        store.attach(sid, r.doc_id)
    return sid


def page(sid: str | None) -> AppTest:
    """The Compare page within the app (app.py the entrypoint, as `streamlit run app.py`)."""
    at = AppTest.from_file(APP, default_timeout=30)
    at.switch_page(PAGE)
    if sid:
        at.query_params["session"] = sid
    return at.run()


def html_blocks(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_compare_shows_changes_first_then_asks_and_summarises(session):
    at = page(session)
    assert not at.exception
    assert at.selectbox(key="c_old").label == "Old version"
    assert at.selectbox(key="c_new").label == "New version"
    at.button(key="c_go").click().run()
    assert not at.exception
    labels = [e.label for e in at.expander]
    # the changes first, in the new version's order: the law section now opens it
    assert labels[0] == "moved · 4. Law · old p. 1 · new p. 1"
    assert labels[1] == "changed · 2. Fees · old p. 1 · new p. 1"
    assert labels[-1] == "2 unchanged sections"
    text = html_blocks(at)
    assert ">30</del>" in text and ">60</ins>" in text
    assert any(c.value.startswith("1 changed · 1 moved · 0 added · 0 removed · 2 unchanged")
               for c in at.caption)

    at.radio(key="c_view").set_value("side").run()
    assert not at.exception and ">60</ins>" in html_blocks(at)

    SCRIPT["reply"] = "The payment term went from 30 to 60 days [new p. 1]."
    at.text_input(key="c_question").input("What happened to the payment term?")
    at.button(key="FormSubmitter:c_ask_form-Ask").click().run()
    assert not at.exception
    prompt = PROMPTS[-1]
    assert "OLD VERSION (v1.md" in prompt and "NEW VERSION (v2.md" in prompt
    assert "within 30 days" in prompt and "within 60 days" in prompt
    assert "Leeds" not in prompt
    assert "60 days" in html_blocks(at)

    SCRIPT["reply"] = "The Buyer pays the fee within 60 days of the invoice date."
    at.button(key="c_summarise").click().run()
    assert not at.exception
    assert "Summary of the changes" in [h.value for h in at.subheader]
    assert any("statements found in the two versions" in c.value for c in at.caption)
    assert "✅" in html_blocks(at)


def test_a_reload_shows_the_stored_comparison_and_answers(session):
    at = page(session)
    at.button(key="c_go").click().run()
    SCRIPT["reply"] = "Sixty days."
    at.text_input(key="c_question").input("How long now?")
    at.button(key="FormSubmitter:c_ask_form-Ask").click().run()
    SCRIPT["reply"] = "The fee is now due within 60 days."
    at.button(key="c_summarise").click().run()
    again = page(session)  # a new browser session: nothing in session_state
    assert not again.exception
    assert "Summary of the changes" in [h.value for h in again.subheader]
    assert "The fee is now due within 60 days." in html_blocks(again)
    assert not [b for b in again.button if b.key == "c_summarise"]  # made once, kept
    assert any(e.label.startswith("changed · 2. Fees") for e in again.expander)
    assert "How long now?" in html_blocks(again) and "Sixty days." in html_blocks(again)


def test_chinese_interface(session):
    at = AppTest.from_file(APP, default_timeout=30)
    at.switch_page(PAGE)
    at.query_params["session"] = session
    at.session_state["lang"] = "zh"
    at.run()
    at.button(key="c_go").click().run()
    assert not at.exception
    assert at.title[0].value == "比较两个版本"
    assert any(e.label.startswith("修改 · 2. Fees") for e in at.expander)
    assert any("未变" in e.label for e in at.expander)


def test_without_a_session_or_two_documents_the_page_says_what_to_do(tmp_path):
    at = page(None)
    assert not at.exception and not at.error
    assert "Open a session on the chat page" in at.info[0].value
    store = SessionStore.open(Settings.from_env().db)
    sid = store.create_session()
    store.attach(sid, ingest_path(store, write(tmp_path / "one.md", SECTIONS)).doc_id)
    at = page(sid)
    assert not at.exception and not at.error
    assert "fewer than two documents" in at.info[0].value


def test_the_same_document_and_unrelated_documents(tmp_path, session):
    at = page(session)
    at.selectbox(key="c_new").set_value(at.selectbox(key="c_old").value).run()
    assert "Choose two different documents." in at.warning[0].value
    store = SessionStore.open(Settings.from_env().db)
    sid = store.create_session()
    data = ROOT / "tests" / "data" / "summarize"
    for name in ("GPL-3.txt", "Apache-2.0.txt"):
        store.attach(sid, ingest_path(store, data / name).doc_id)
    at = page(sid)
    at.button(key="c_go").click().run()
    assert not at.exception
    assert "These look like different documents" in at.warning[0].value
    assert not [e for e in at.expander if e.label.startswith("changed")]


def test_without_a_session_the_sessions_with_two_documents_are_offered(session):
    at = page(None)
    assert not at.exception
    links = [e.proto for e in at.get("page_link")]
    assert [link.label for link in links][-1] == "contract"
    assert session in links[-1].query_string
