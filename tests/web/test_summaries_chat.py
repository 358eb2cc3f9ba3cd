"""The chat page's "Summarize" action on an attached document (AppTest, echo backend)."""
from __future__ import annotations

import time
from pathlib import Path

import factories
import pytest
from factories import SCRIPT, Scripted
from streamlit.testing.v1 import AppTest

from docchat.config import Settings
from docchat.library.store import SessionStore
from docchat.summaries.batch import settings_key
from docchat.ui import summaries as summary_ui

APP = str(Path(__file__).resolve().parents[2] / "app.py")
DATA = Path(__file__).parent.parent / "data" / "summarize"
BSD = ("BSD.txt", (DATA / "BSD.txt").read_bytes(), "text/plain")


@pytest.fixture(autouse=True)
def chat_env(monkeypatch):
    yield from factories.scripted_app(monkeypatch)


def jobs():
    return summary_ui.registry(str(Settings.from_env().db))


def store() -> SessionStore:
    return SessionStore.open(Settings.from_env().db)


def uploaded() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30).run()
    at.file_uploader[0].set_value([BSD]).run()
    assert not at.exception
    return at


def summarize_button(at: AppTest):
    return next(b for b in at.button if (b.key or "").startswith("summarize_"))


def test_summarize_an_attached_document_then_ask_about_it():
    SCRIPT.update(reply="## Overview\nA licence with three conditions [p. 1].")
    at = uploaded()
    sid = at.query_params["session"]
    [doc_id] = store().session_documents(sid)
    summarize_button(at).click().run()
    assert not at.exception
    job = jobs().for_document(doc_id)
    assert job is not None and job.join(10)
    at.run()
    # Stored with the document, shown in the documents panel ...
    key = settings_key(Scripted(), "en", Settings.from_env().max_new_tokens)
    stored = store().get_summary(doc_id, key)
    assert stored is not None and "three conditions" in stored["markdown"]
    popover = at.get("popover")[0]
    assert "Summary of BSD.txt" in str(popover.proto)
    shown = " ".join(m.value for m in popover.get("markdown"))
    assert "three conditions" in shown
    if stored.get("checks"):  # its statements marked as in the chat, pages named (no links
        assert 'class="dc-statement"' in shown and "<a " not in shown  # in a popover)
    # ... and in the conversation, with its cited page openable like an answer's sources.
    user, answer = at.chat_message
    assert user.markdown[0].value == "Summarize BSD.txt."
    assert "three conditions" in answer.markdown[0].value
    assert answer.markdown[0].value.startswith("### Summary: ")  # an answer, not a page title
    ref = next(e for e in answer.expander if e.label == "BSD.txt · p. 1")
    assert "Redistribution and use" in ref.markdown[0].value
    # A question follows it in the session: the summary is in the history it is asked with.
    SCRIPT.clear()
    at.chat_input[0].set_value("What are the conditions?").run()
    deadline = time.time() + 20
    while time.time() < deadline and store().turns(sid)[-1].status != "done":
        time.sleep(0.05)
    turns = store().turns(sid)
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]
    assert turns[-1].status == "done" and "What are the conditions?" in turns[-1].content


def test_progress_in_the_panel_and_stop():
    SCRIPT.update(reply=" ".join(f"word{i}" for i in range(200)), delay=0.03)
    at = uploaded()
    sid = at.query_params["session"]
    summarize_button(at).click().run()
    [doc_id] = store().session_documents(sid)
    job = jobs().for_document(doc_id)
    at.run()
    assert any("Summarising BSD.txt" in c.value for c in at.caption)
    at.button(key=f"stop_summary_{doc_id}").click().run()
    assert job.join(10) and job.snapshot().state == "cancelled"
    at.run()
    assert not at.exception and len(store().turns(sid)) == 0  # nothing half-made is added
    assert summarize_button(at) is not None


def test_a_failed_summary_shows_its_message_in_the_panel(monkeypatch):
    from docchat.errors import BackendError

    def fail(self, request):
        raise BackendError("The model failed: out of memory; try a smaller document.")
        yield

    monkeypatch.setattr(Scripted, "stream", fail)
    at = uploaded()
    summarize_button(at).click().run()
    [doc_id] = store().session_documents(at.query_params["session"])
    assert jobs().for_document(doc_id).join(10)
    at.run()
    assert any("out of memory" in e.value for e in at.error)
