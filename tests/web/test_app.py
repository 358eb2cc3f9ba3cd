"""The Streamlit app through AppTest, with the echo backend (or a scripted echo)."""
from __future__ import annotations

import re
import threading
from pathlib import Path

import factories
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from docchat.backends import BACKENDS
from docchat.config import Settings
from docchat.errors import BackendUnavailable
from docchat.library.store import SessionStore
from docchat.library.uploads import ingest_upload

APP = str(Path(__file__).resolve().parents[2] / "app.py")
DATA = Path(__file__).parent.parent / "data" / "app"
GUIDE = ("guide.pdf", (DATA / "guide.pdf").read_bytes(), "application/pdf")
NOTES = ("notes.md", "# Notes\n\nThe lid is **blue**.\n".encode(), "text/markdown")
LONG = " ".join(f"w{i}" for i in range(400))

SCRIPT = factories.SCRIPT  # what the scripted backend does; tests set it before asking


class ScriptedBackend(factories.Scripted):
    """The scripted echo, which can also fail to load, fail, and report a prefill rate."""
    created = 0

    def __init__(self) -> None:
        if SCRIPT.get("load_error"):
            raise BackendUnavailable(SCRIPT["load_error"])
        super().__init__()

    def prefill_rate(self):
        return SCRIPT.get("prefill_tps")

    def prefetch(self, messages):
        SCRIPT.setdefault("prefetched", []).append(list(messages))

    def stream(self, request):
        self.prefill_tps = SCRIPT.get("prefill_tps")  # echo "reads" the prompt at this rate
        SCRIPT.setdefault("requests", []).append(request)
        if SCRIPT.get("fail"):
            raise SCRIPT["fail"]
        out = ""
        for piece in super().stream(request):
            out += piece
            yield piece
            held = SCRIPT.get("hold")  # (text, event): once text is out, wait for the test
            if held and held[0] in out and not held[1].is_set():
                assert held[1].wait(30)


@pytest.fixture(autouse=True)
def app_env(monkeypatch):
    monkeypatch.setenv("DOCCHAT_BACKEND", "echo")
    monkeypatch.setitem(BACKENDS, "scripted", f"{__name__}:ScriptedBackend")
    SCRIPT.clear()
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setenv("DOCCHAT_BACKEND", "scripted")
    return SCRIPT


def app(session: str | None = None, timeout: float = 30) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=timeout)
    if session:
        at.query_params["session"] = session
    return at.run()


def store() -> SessionStore:
    return SessionStore.open(Settings.from_env().db)


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def without_marks(markdown: str) -> str:
    """An answer's Markdown without the statement marks and page links put around it."""
    return re.sub(r"<[^>]+>", "", re.sub(r"<sup .*?</sup>", "", markdown))


def uploaded(*files) -> AppTest:
    at = app()
    at.file_uploader[0].set_value(list(files)).run()
    assert not at.exception
    return at


def asked(question: str, *files) -> AppTest:
    at = uploaded(*(files or (GUIDE,)))
    at.chat_input[0].set_value(question).run()
    assert not at.exception
    return at


def wait_for(predicate, timeout: float = 20.0):
    return factories.wait_for(predicate, timeout, poll=0.02)


def test_fresh_page_shows_hint_backend_and_no_session():
    at = app()
    assert not at.exception and not at.error
    assert "Add a document above" in texts(at.info)[0]
    assert any("echo" in c for c in texts(at.sidebar.caption))
    assert at.query_params.get("session") is None and store().list_sessions() == []


def test_upload_several_files_shows_progress_then_pages_tokens_and_fit():
    at = uploaded(GUIDE, NOTES)  # read with a status each, then the page is drawn again
    shown = {s.value.split(":")[0]: s.value for s in at.success}
    assert set(shown) == {"guide.pdf", "notes.md"} and not at.status
    assert "3 pages" in shown["guide.pdf"] and "fits the model's window whole" in shown["guide.pdf"]
    sid = at.query_params["session"]
    assert len(store().session_documents(sid)) == 2
    at.run()  # later runs show the result without ingesting again
    assert len(at.success) == 2 and not at.status and len(store().list_documents()) == 2
    at.file_uploader[0].set_value([GUIDE]).run()  # the same bytes again
    assert any("(read before)" in s.value for s in at.success)


def test_bad_files_get_clear_messages_and_no_traceback():
    at = uploaded(("slides.pptx", b"PK\x03\x04", "application/octet-stream"),
                  ("empty.txt", b"", "text/plain"),
                  ("broken.pdf", b"%PDF-1.4\n%%EOF\n", "application/pdf"))
    labels = texts(at.error)
    assert len(labels) == 3 and not at.status and not at.exception
    assert any("slides.pptx" in x and "upload a PDF, TXT or Markdown" in x for x in labels)
    assert any("empty.txt is empty" in x for x in labels)
    assert any(x.startswith("broken.pdf") for x in labels)
    assert at.expander[0].label == "Documents (0)"
    at.run()
    assert len(at.error) == 3 and not at.exception


def test_encrypted_pdf_asks_for_its_password():
    at = uploaded(("locked.pdf", (DATA / "guide-locked.pdf").read_bytes(), "application/pdf"))
    assert "locked.pdf is encrypted" in at.warning[0].value

    def try_password(password: str) -> None:
        next(w for w in at.text_input if w.key.startswith("pw_")).input(password)
        next(b for b in at.button if (b.key or "").startswith("open_")).click()
        at.run()

    try_password("wrong")
    assert any("Wrong password" in w.value for w in at.warning)
    try_password("secret")
    assert not at.exception and len(at.success) == 1
    assert store().session_documents(at.query_params["session"])


def test_document_read_before_is_attached_without_uploading():
    s = store()
    ingest_upload(s, "guide.pdf", GUIDE[1], Settings.from_env().uploads_dir, 5)
    at = app()
    at.multiselect(key="earlier").select(s.list_documents()[0]["id"]).run()
    at.button[[b.label for b in at.button].index("Add to session")].click().run()
    sid = at.query_params["session"]
    assert s.session_documents(sid) == [s.list_documents()[0]["id"]]
    assert any("guide.pdf: 3 pages" in c for c in texts(at.caption))


def test_remove_document_from_session():
    at = uploaded(GUIDE, NOTES)
    sid = at.query_params["session"]
    at.button(key=f"rm_{store().session_documents(sid)[0]}").click().run()
    assert not at.exception and len(store().session_documents(sid)) == 1
    assert len(store().list_documents()) == 2  # still there to attach again


def test_question_without_documents_asks_for_one_first():
    at = app()
    at.chat_input[0].set_value("hello?").run()
    assert "Add a document first" in at.warning[0].value and not at.chat_message


def test_ask_saves_both_turns_and_shows_metrics_and_sources(scripted):
    scripted["reply"] = "The default port is 8731 [p. 1]. See also [guide.pdf p. i]."
    at = asked("What is the default port?")
    user, answer = at.chat_message
    assert user.markdown[0].value == "What is the default port?"
    assert "8731" in answer.markdown[0].value
    assert any("first token" in c and "tokens in" in c for c in texts(answer.caption))
    labels = [e.label for e in answer.expander]
    # The cited pages, then (collapsed) the passages shown while the model read.
    assert labels == ["guide.pdf · p. 1", "guide.pdf · p. i", "Passages that match your question"]
    assert "default port is 8731" in answer.expander[0].markdown[0].value
    assert "port" in answer.expander[2].markdown[0].value.lower()
    turns = store().turns(at.query_params["session"])
    assert [(t.role, t.status) for t in turns] == [("user", "done"), ("assistant", "done")]
    assert turns[1].metrics["model"]["ttft_ms"] is not None
    assert [s["page"] for s in turns[1].metrics["sources"]] == [2, 1]


def test_html_in_question_and_answer_shows_as_text(scripted):
    scripted["reply"] = "<script>alert(1)</script> ok"
    at = asked("<img src=x onerror=alert(2)>")
    user, answer = at.chat_message
    assert user.markdown[0].value == "&lt;img src=x onerror=alert(2)&gt;"
    shown = answer.markdown[0].value  # marked as a statement (HTML of ours), its text escaped
    assert "&lt;script&gt;alert(1)&lt;/script&gt; ok" in shown and "<script" not in shown


def test_session_title_resume_from_sidebar_and_from_url():
    at = asked("First question about the guide?")
    sid = at.query_params["session"]
    fresh = app()
    button = next(b for b in fresh.sidebar.button if b.label == "First question about the guide?")
    button.click().run()
    assert fresh.query_params["session"] == sid
    assert fresh.chat_message[0].markdown[0].value == "First question about the guide?"
    linked = app(session=sid)
    assert len(linked.chat_message) == 2 and linked.chat_message[1].name == "assistant"


def test_sessions_listed_newest_first():
    s = store()
    older = s.create_session("older")
    s.add_turn(older, "user", "old one")
    newer = s.create_session("newer")
    s.add_turn(newer, "user", "new one")
    labels = [b.label for b in app().sidebar.button][1:3]
    assert labels == ["newer", "older"]


def test_unknown_session_in_url_starts_fresh():
    at = app(session="nope")
    assert not at.exception and at.query_params.get("session") is None
    assert "no longer exists" in at.toast[0].value


def test_rename_session():
    at = asked("Question?")
    at.sidebar.text_input[0].input("My guide chat")
    next(b for b in at.sidebar.button if b.label == "Rename").click().run()
    assert store().session(at.query_params["session"])["title"] == "My guide chat"
    assert "My guide chat" in [b.label for b in at.sidebar.button]


def test_delete_session_needs_confirmation():
    at = asked("Question?")
    sid = at.query_params["session"]
    next(b for b in at.sidebar.button if b.label == "Delete session").click().run()
    assert "cannot be undone" in at.sidebar.warning[0].value
    next(b for b in at.sidebar.button if b.label == "Cancel").click().run()
    assert store().session(sid) is not None and not at.sidebar.warning
    next(b for b in at.sidebar.button if b.label == "Delete session").click().run()
    next(b for b in at.sidebar.button if b.label == "Yes, delete").click().run()
    assert store().session(sid) is None and at.query_params.get("session") is None
    assert not at.exception


def test_export_button_offers_the_session_as_markdown():
    at = asked("Question for export?")
    (button,) = [b for b in at.sidebar.get("download_button")]
    assert button.label == "Export as Markdown"
    assert "Question for export?" in store().export_markdown(at.query_params["session"])


def test_stop_from_another_tab_keeps_partial_answer(scripted):
    scripted.update(reply=LONG, delay=0.02)
    at = uploaded(GUIDE)
    sid = at.query_params["session"]
    asking = threading.Thread(target=lambda: at.chat_input[0].set_value("long?").run(timeout=60))
    asking.start()
    wait_for(lambda: any(t.status == "streaming" and len(t.content) > 20
                         for t in store().turns(sid)))
    other = app(session=sid)  # a second tab follows the answer live
    assert "Being written" in texts(other.chat_message[1].caption)[0]
    other.button(key=[b.key for b in other.button if (b.key or "").startswith("stop_")][0])\
        .click().run()
    asking.join(30)
    assert not asking.is_alive() and not at.exception
    answer = store().turns(sid)[-1]
    assert answer.status == "stopped" and 0 < len(answer.content) < len(LONG)
    assert LONG.startswith(answer.content)
    assert "Stopped" in " ".join(texts(at.chat_message[1].caption))
    other.run()
    assert "Stopped" in " ".join(texts(other.chat_message[1].caption))


def stopped_from_another_tab(sid: str) -> bool:
    """Click Stop on a new tab of the session; True once its answer is no longer streaming.
    A tab drawn while another AppTest tears its runtime down can fail to draw (a loaded
    machine): it is drawn again rather than read as a session without a Stop button."""
    if all(t.status != "streaming" for t in store().turns(sid)):
        return True
    w = app(session=sid)
    stop = [b for b in w.button if (b.key or "").startswith("stop_")]
    if stop:
        stop[0].click().run()
    return False


def test_answers_ahead_shown_while_another_session_generates(scripted):
    scripted.update(reply=LONG, delay=0.02)
    first, second = uploaded(GUIDE), uploaded(GUIDE)
    runs = [threading.Thread(target=lambda a=a: a.chat_input[0].set_value("q?").run(timeout=60))
            for a in (first, second)]
    runs[0].start()
    sid1, sid2 = first.query_params["session"], second.query_params["session"]
    wait_for(lambda: any(t.content for t in store().turns(sid1)))
    runs[1].start()
    wait_for(lambda: len(store().turns(sid2)) == 2)
    # A tab following the second session is told that one answer is ahead of it.
    wait_for(lambda: any("1 answer(s) ahead" in m for m in texts(app(session=sid2).markdown)))
    for sid in (sid1, sid2):
        wait_for(lambda sid=sid: stopped_from_another_tab(sid))
    for r in runs:
        r.join(30)
    assert {t.status for t in store().turns(sid2)} <= {"done", "stopped"}


def test_backend_error_becomes_a_message(scripted):
    scripted["fail"] = BackendUnavailable("No server at http://127.0.0.1:9; is it running?")
    at = asked("Anyone there?")
    assert not at.exception
    assert at.chat_message[1].error[0].value == "No server at http://127.0.0.1:9; is it running?"
    assert store().turns(at.query_params["session"])[-1].status == "error"


def test_unexpected_error_is_logged_not_shown(scripted, caplog):
    scripted["fail"] = ZeroDivisionError("division by zero")
    at = asked("Crash?")
    assert not at.exception
    message = at.chat_message[1].error[0].value
    assert "went wrong" in message and "ZeroDivisionError" not in message
    assert "ZeroDivisionError" in caplog.text


def test_backend_that_cannot_load_shows_what_to_do(scripted):
    scripted["load_error"] = "No model file at /x.gguf: set DOCCHAT_MODEL to a .gguf file."
    at = app()
    assert not at.exception
    assert at.error[0].value.startswith("No model file at /x.gguf")


def test_upload_limit_of_the_server_matches_ingestion():
    import tomllib
    config = tomllib.loads((Path(APP).parent / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == Settings().max_file_mb
    assert config["server"]["address"] == "127.0.0.1"
    assert config["browser"]["gatherUsageStats"] is False


def test_backend_loaded_once_for_all_sessions(scripted):
    ScriptedBackend.created = 0
    asked("one?")
    app()
    asked("two?")
    assert ScriptedBackend.created == 1


def test_chinese_interface():
    at = app()
    at.sidebar.selectbox(key="lang").select("zh").run()
    assert at.title[0].value == "docchat 文档问答"
    assert at.chat_input[0].placeholder == "就文档提问"
    assert "请先在上方添加文档" in at.info[0].value


def test_preset_and_its_values_reach_the_backend(scripted):
    scripted["reply"] = "one two three four five six"
    at = uploaded(GUIDE)
    at.sidebar.selectbox(key="preset").select("raw").run()
    at.sidebar.number_input(key="ov_raw_max_new_tokens").set_value(3).run()
    at.chat_input[0].set_value("count?").run()
    assert without_marks(at.chat_message[1].markdown[0].value) == "one two three"


def test_evidence_and_progress_before_the_first_token_and_stop_while_reading(scripted):
    scripted.update(reply="The default port is 8731 [p. 1].", prefill_tps=40)  # ~15 s to read
    at = uploaded(GUIDE)
    sid = at.query_params["session"]
    asking = threading.Thread(
        target=lambda: at.chat_input[0].set_value("What is the default port?").run(timeout=60))
    asking.start()

    def reading_tab():
        tab = app(session=sid)  # a second tab follows the answer live
        if len(tab.chat_message) == 2 and "tokens of context" in " ".join(
                texts(tab.chat_message[1].markdown)):
            return tab
        return None

    tab = wait_for(reading_tab)
    box = tab.chat_message[1]
    line = next(m for m in texts(box.markdown) if "tokens of context" in m)
    assert re.search(r"Reading [\d,]+ tokens of context: [\d,]+ done, ~.+ left \(.+ s\)", line)
    assert box.get("progress")  # the bar
    assert [e.label for e in box.expander] == ["Passages that match your question"]
    assert "8731" in box.expander[0].markdown[0].value  # the passage, before any answer
    assert store().turns(sid)[-1].content == ""  # no answer token yet
    tab.button(key=[b.key for b in tab.button if (b.key or "").startswith("stop_")][0])\
        .click().run()
    asking.join(30)
    assert not asking.is_alive() and not at.exception
    request = scripted["requests"][-1]
    assert request.stats.finish_reason == "cancelled" and request.stats.completion_tokens == 0
    turn = store().turns(sid)[-1]
    assert turn.status == "stopped" and turn.content == ""
    assert "Stopped" in " ".join(texts(at.chat_message[1].caption))
    # The backend is free at once: another session's question is answered.
    scripted["prefill_tps"] = None
    other = asked("And the warranty?")
    assert store().turns(other.query_params["session"])[-1].status == "done"
    assert "8731" in other.chat_message[1].markdown[0].value


def test_budget_and_reuse_in_metrics_and_whole_window_for_one_question(scripted):
    scripted.update(reply="Port 8731 [p. 1].", prefill_tps=1000)
    at = uploaded(GUIDE)
    at.sidebar.number_input(key="ttft_target").set_value(2.0).run()
    at.chat_input[0].set_value("What is the default port?").run()
    assert any("budget" in c for c in texts(at.chat_message[1].caption))
    at.sidebar.radio(key="reading").set_value("next").run()
    at.chat_input[0].set_value("And again, reading everything?").run()
    assert not at.exception
    first, second = [t.metrics for t in store().turns(at.query_params["session"])[1::2]]
    assert first["budget"]["target_s"] == 2.0 and first["budget"]["rate"] == 1000.0
    assert second["budget"]["whole_window"] and second["budget"]["prompt_budget"] is None
    assert at.sidebar.radio(key="reading").value == "budget"  # for one question only
    assert first["sections"] and first["evidence"]


def test_follow_up_appends_to_the_first_prompt_and_warm_start_runs_once(scripted):
    # The chat page packs append-only: the follow-up's prompt is the first prompt, its
    # answer, then the new turn, so the backend's cache holds everything before the new turn.
    scripted["reply"] = "Port 8731 [p. 1]."
    at = uploaded(GUIDE)
    at.chat_input[0].set_value("What is the default port?").run()
    at.chat_input[0].set_value("And the warranty?").run()
    first, second = (r.messages for r in SCRIPT["requests"][:2])
    assert [(m.role, m.content) for m in second[:len(first)]] == [
        (m.role, m.content) for m in first]
    assert second[len(first)].role == "assistant"
    assert second[len(first)].content.startswith("Port 8731")
    assert second[-1].role == "user" and second[-1].content.endswith("And the warranty?")
    # The stable prefix was sent to warm the backend once, when the document was attached
    # (not again on later runs: by then the cache holds the last prompt, which starts with it).
    at.run()
    app(session=at.query_params["session"])  # a reload
    (warmed,) = SCRIPT["prefetched"]
    assert [m.role for m in warmed] == ["system"]
    assert first[0].content == warmed[0].content  # the session's system message, as warmed


def test_a_scanned_pdf_is_read_by_ocr_with_page_progress():
    scan = ("linn.pdf", (Path(__file__).parent.parent / "data" / "linn.pdf").read_bytes(),
            "application/pdf")
    at = uploaded(scan)
    assert not at.exception and not at.error
    assert "OCR: 1 of 1 pages" in at.success[0].value  # the last progress the upload showed
    doc = store().load_document(store().session_documents(at.query_params["session"])[0])
    assert doc.pages[0].ocr and len(doc.pages[0].text) > 500


def test_a_cited_ocr_page_says_it_was_read_by_ocr(scripted):
    scripted["reply"] = "The scan says so [p. 1]."
    scan = ("linn.pdf", (Path(__file__).parent.parent / "data" / "linn.pdf").read_bytes(),
            "application/pdf")
    at = uploaded(scan)
    at.chat_input[0].set_value("What does the page say?").run()
    assert not at.exception
    answer = wait_for(lambda: (at.run(), [m for m in at.chat_message if m.expander])[1])[-1]
    assert answer.expander[0].label == "linn.pdf · p. 1 · read by OCR: check the scan"


def test_document_count_is_right_as_soon_as_the_upload_is_stored():
    at = uploaded(GUIDE, NOTES)
    assert [e.label for e in at.expander][0] == "Documents (2)"
    assert len(at.success) == 2 and not at.status


CHECKED = ("The default port is 8731 [p. 2]. The warranty lasts 7 years. "
           "The Frobnicator was built on the Moon by Acme in 1850.")


def statuses(markdown: str) -> list[str]:
    return re.findall(r'class="dc-statement[^"]*" data-status="(\w+)" data-n="(\d+)"', markdown)


def test_statements_are_marked_linked_counted_and_kept_after_a_reload(scripted):
    from docchat.ui.sidebar import export

    scripted["reply"] = CHECKED
    at = asked("What is the default port?")
    sid, answer = at.query_params["session"], at.chat_message[1]
    shown = answer.markdown[0].value
    assert statuses(shown) == [("supported", "0"), ("supported", "1"), ("not_found", "2")]
    turn = store().turns(sid)[-1]
    # The model cited p. 2 for the port; the page that says it is p. 1: corrected, linked.
    assert re.search(r"<s [^>]*>p\. 2</s> → <a href=\"\?session=" + sid + rf"&amp;view=t{turn.id}s0"
                     r"\" target=\"_self\"[^>]*>p\. 1</a>", shown)
    assert f'view=t{turn.id}s1" target="_self" data-view="t{turn.id}s1">p. 2</a>' in shown
    assert 'title="Not found in the documents" style="opacity:0.5">The Frobnicator was built' \
        in shown
    assert any("2 of 3 statements found in the documents" in c and "dimmed" in c
               for c in texts(answer.caption))
    evidence = answer.expander[-1]
    assert evidence.label == "Passages that match your question" and not evidence.proto.expanded
    assert f'view=t{turn.id}e0.0' in evidence.markdown[0].value  # its pages are links too
    assert turn.metrics["checks"]["supported"] == 2 and turn.metrics["checks"]["total"] == 3
    again = app(session=sid)  # a reload: the marks come from the turn saved in SQLite
    assert again.chat_message[1].markdown[0].value == shown
    assert any("2 of 3 statements" in c for c in texts(again.chat_message[1].caption))
    exported = export(str(Settings.from_env().db), sid)
    assert "_2 of 3 statements found in the documents._" in exported
    assert "- found (guide.pdf, p. 1); cited p. 2, corrected: The default port is 8731" \
        in exported
    assert "- not found: The Frobnicator was built on the Moon by Acme in 1850." in exported


def test_evidence_stays_open_when_fewer_than_half_are_found(scripted):
    scripted["reply"] = "The Frobnicator was built on the Moon in 1850. Acme painted it purple."
    at = asked("What is the default port?")
    answer = at.chat_message[1]
    assert [s for s, _ in statuses(answer.markdown[0].value)] == ["not_found", "not_found"]
    assert any("0 of 2 statements found" in c for c in texts(answer.caption))
    assert answer.expander[-1].label == "Passages that match your question"
    assert answer.expander[-1].proto.expanded


def opened(sid: str, view: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update(session=sid, view=view)
    at.run()
    assert not at.exception
    return at


def dialog(at: AppTest):
    (block,) = [b for b in at._tree.children[2].children.values() if b.type == "dialog"]
    return block


def test_a_page_link_opens_the_page_with_the_supporting_sentence_highlighted(scripted):
    import pypdfium2 as pdfium

    scripted["reply"] = CHECKED
    at = asked("What is the default port?")
    sid = at.query_params["session"]
    turn = store().turns(sid)[-1]
    view = opened(sid, f"t{turn.id}s0")
    assert view.query_params.get("view") is None  # opened once, not again at every rerun
    box = dialog(view)
    assert box.get("imgs") or box.get("image")
    mark = next(m.value for m in box.get("markdown") if "dc-highlight" in m.value)
    assert 'data-page="2"' in mark and 'data-exact="true"' in mark
    boxes = json_attr(mark, "data-boxes")
    # The highlight covers the characters of "The default port is 8731." on physical page 2.
    pdf = pdfium.PdfDocument(str(DATA / "guide.pdf"))
    page = pdf[1]
    text = page.get_textpage()
    found = text.search("The default port is 8731", match_case=True).get_next()
    height = page.get_size()[1]
    for i in range(found[0], found[0] + found[1]):
        left, bottom, right, top = text.get_charbox(i)
        cx, cy = (left + right) / 2 * 1.6, (height - (top + bottom) / 2) * 1.6
        assert any(x0 <= cx <= x1 and y0 <= cy <= y1 for x0, y0, x1, y1 in boxes), (i, boxes)
    last = text.get_charbox(found[0] + found[1] + 3)  # "Keep", after the sentence: not lit
    assert not any(x0 <= (last[0] + last[2]) / 2 * 1.6 <= x1 for x0, _, x1, _ in boxes)
    context = next(m.value for m in box.get("markdown") if "dc-context" in m.value)
    assert '<mark class="dc-passage">The default port is 8731.</mark>' in context
    # An evidence sentence's page opens the same way.
    evidence = opened(sid, f"t{turn.id}e0.0")
    assert 'data-exact="true"' in next(m.value for m in dialog(evidence).get("markdown")
                                       if "dc-highlight" in m.value)
    gone = opened(sid, "t999s0")  # a link that no longer matches says so
    assert "no longer matches" in gone.toast[0].value


def json_attr(html: str, name: str):
    import json

    return json.loads(re.search(name + r'="([^"]*)"', html).group(1))


def test_a_text_document_shows_the_passage_in_its_context(scripted):
    scripted["reply"] = "The lid is blue."
    at = asked("What colour is the lid?", NOTES)
    sid = at.query_params["session"]
    shown = at.chat_message[1].markdown[0].value
    turn = store().turns(sid)[-1]
    assert statuses(shown) == [("supported", "0")]
    assert f'data-view="t{turn.id}s0">notes.md</a>' in shown  # no pages: the document's name
    box = dialog(opened(sid, f"t{turn.id}s0"))
    assert not (box.get("imgs") or box.get("image"))
    context = next(m.value for m in box.get("markdown") if "dc-context" in m.value)
    assert '<mark class="dc-passage">The lid is **blue**.</mark>' in context


def test_a_loop_cut_and_the_language_note_once(scripted):
    scripted["reply"] = "The default port is 8731 and it is the port. " * 12
    at = asked("端口是多少？")
    answer = at.chat_message[1]
    turn = store().turns(at.query_params["session"])[-1]
    assert turn.metrics["finish_reason"] == "repetition"
    assert any("The answer was cut: it repeated itself." in c for c in texts(answer.caption))
    # Saved and shown as qa.ask kept it: the sentence once, then the note (in Chinese, the
    # question's language), not the repeats the stream showed before the loop was seen.
    assert turn.content.count("The default port is 8731") == 1, turn.content
    assert turn.content.endswith("[回答在此截断：模型开始重复同样的内容。]")
    assert "回答在此截断" in " ".join(texts(answer.markdown))
    assert turn.metrics.get("language_mismatch")
    assert "did not answer in the question's language" in answer.info[0].value
    scripted["reply"] = "The warranty lasts 7 years."
    at.chat_input[0].set_value("保修期多长？").run()
    assert len(at.chat_message) == 4
    assert len([i for m in at.chat_message for i in m.info]) == 1  # said once in a session


LIVE = ("The default port is 8731 [p. 2]. The Frobnicator was built on the Moon in 1850. "
        "The warranty lasts 99 years. And then")


def test_statements_are_marked_while_the_answer_streams(scripted):
    release = threading.Event()
    scripted.update(reply=LIVE + " some more words.", hold=("And then", release))
    at = uploaded(GUIDE)
    sid = at.query_params["session"]
    asking = threading.Thread(
        target=lambda: at.chat_input[0].set_value("What is the default port?").run(timeout=60))
    asking.start()
    try:
        def marked_tab():  # a second tab follows the answer live, marks included
            tab = app(session=sid)
            shown = " ".join(texts(tab.chat_message[1].markdown)) if len(
                tab.chat_message) == 2 else ""
            return (tab, shown) if len(statuses(shown)) == 3 else None

        tab, shown = wait_for(marked_tab)
        # Mid-answer (the backend holds "And then"): the three finished sentences are
        # checked and marked (a supported one linked to its page; the invented one and the
        # one with another number than the page's not found), the unfinished rest is not.
        assert store().turns(sid)[-1].status == "streaming"
        assert [s for s, _ in statuses(shown)] == ["supported", "not_found", "not_found"]
        # The number the page states otherwise (7 years): a contradiction, struck through.
        assert re.search(r'class="dc-statement dc-conflict" data-status="not_found" '
                         r'data-n="2" data-conflict="number"[^>]*>The warranty lasts 99 years',
                         shown)
        turn = store().turns(sid)[-1]
        assert f'data-view="t{turn.id}s0">p. 1</a>' in shown  # its printed label
        # The unfinished sentence, shown unmarked after the contradiction's page link.
        assert re.search(r"99 years\.</span>(?: <sup [^>]*>.*?</sup>)? And", shown)
        live = " ".join(texts(tab.chat_message[1].caption))
        assert "1 of 3 statements found in the documents; 1 contradicts them (checked so far)" \
            in live
        # The live mark's link opens its page while the answer is still being written.
        view = opened(sid, f"t{turn.id}s0")
        assert 'data-exact="true"' in next(m.value for m in dialog(view).get("markdown")
                                           if "dc-highlight" in m.value)
    finally:
        release.set()
        asking.join(30)
    assert not asking.is_alive() and not at.exception
    final = store().turns(sid)[-1]
    assert final.status == "done" and final.metrics["checks"]["total"] == 4
    assert "checked so far" not in " ".join(texts(at.chat_message[1].caption))


def test_a_contradiction_is_marked_counted_kept_after_a_reload_and_exported(scripted):
    from docchat.ui.sidebar import export

    scripted["reply"] = "The default port is 8731. The default port is 9999."
    at = asked("What is the default port?")
    sid = at.query_params["session"]
    turn = store().turns(sid)[-1]
    statements = turn.metrics["checks"]["statements"]
    assert [s["status"] for s in statements] == ["supported", "not_found"]
    # The checker's conflict: the page states another number; saved with the turn.
    conflict = statements[1]["conflict"]
    assert conflict["kind"] == "number" and conflict["says"] == "8731"
    assert (conflict["page"], conflict["label"]) == (2, "1")
    shown = at.chat_message[1].markdown[0].value  # as streamed, then finished
    again = app(session=sid)  # a reload: the marks come from SQLite
    answer = again.chat_message[1]
    assert answer.markdown[0].value == shown
    assert 'class="dc-statement dc-conflict" data-status="not_found" data-n="1" ' \
           'data-conflict="number"' in shown
    assert "Contradicts the document (p. 1): the document says \u201c8731\u201d" in shown
    assert f'data-view="t{turn.id}s1" style="color:#c5221f"' in shown
    caption = next(c for c in texts(answer.caption) if "statements found" in c)
    assert "1 of 2 statements found in the documents; 1 contradicts them" in caption
    assert "red, struck through: contradicts the document" in caption
    assert answer.expander[-1].label == "Passages that match your question"
    assert answer.expander[-1].proto.expanded  # the passage that says otherwise, in view
    exported = export(str(Settings.from_env().db), sid)
    assert "_1 of 2 statements found in the documents; 1 contradicts them._" in exported
    assert ("- contradicts the document (guide.pdf, p. 1: it says \u201c8731\u201d): "
            "The default port is 9999.") in exported
    # Its link opens the page that says otherwise, the sentence highlighted.
    box = dialog(opened(sid, f"t{turn.id}s1"))
    assert 'data-page="2"' in next(m.value for m in box.get("markdown")
                                   if "dc-highlight" in m.value)
    context = next(m.value for m in box.get("markdown") if "dc-context" in m.value)
    assert '<mark class="dc-passage">The default port is 8731.</mark>' in context


def test_an_answer_that_only_repeats_the_previous_one_is_not_shown_as_one(scripted):
    reply = "The default port is 8731, and the server listens on it for every client."
    scripted["reply"] = reply
    at = asked("What is the default port?")
    at.chat_input[0].set_value("And how do I change it?").run()
    assert not at.exception and len(at.chat_message) == 4
    turns = store().turns(at.query_params["session"])
    assert "repeats_previous" not in turns[1].metrics and not at.chat_message[1].warning
    assert turns[-1].metrics["repeats_previous"] and turns[-1].content == reply  # kept
    (warning,) = at.chat_message[3].warning
    assert warning.value.startswith("The model did not answer this question: it only repeated "
                                    "its previous answer")


def test_an_answer_that_echoes_the_instruction_is_not_shown_as_one(scripted):
    scripted["reply"] = "请用中文回答。"
    at = asked("默认端口是多少？")
    answer = at.chat_message[1]
    turn = store().turns(at.query_params["session"])[-1]
    assert turn.metrics["echo"] and turn.content == "请用中文回答。"  # kept as written
    (warning,) = answer.warning
    assert warning.value.startswith("The model could not answer in Chinese: it only repeated "
                                    "the instruction it was given (“请用中文回答。”).")
    assert not [m for m in texts(answer.markdown) if m.strip() == "请用中文回答。"]
    assert not answer.info  # said once, in the warning
    assert answer.expander[-1].label == "Passages that match your question"
    assert answer.expander[-1].proto.expanded and "8731" in answer.expander[-1].markdown[0].value


def test_an_answer_in_another_language_says_so_and_keeps_the_evidence_open(scripted):
    scripted["reply"] = "The default port is 8731 [p. 2]."
    at = asked("默认端口是多少？")
    answer = at.chat_message[1]
    assert "did not answer in the question's language" in answer.info[0].value
    assert "The passages that match your question are shown below." in answer.info[0].value
    assert answer.expander[-1].proto.expanded
