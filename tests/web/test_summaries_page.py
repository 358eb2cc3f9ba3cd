"""The Summaries page (pages/1_Summaries.py) through AppTest, with the echo backend."""
from __future__ import annotations

import io
import threading
import time
import zipfile
from pathlib import Path

import factories
import pytest
from factories import SCRIPT, Scripted
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from docchat.config import Settings
from docchat.library.store import SessionStore
from docchat.library.uploads import ingest_upload
from docchat.ui import summaries as summary_ui

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "1_Summaries.py")
APP = str(ROOT / "app.py")
DATA = Path(__file__).parent.parent / "data" / "summarize"


def upload(name: str, source: str | None = None) -> tuple[str, bytes, str]:
    return (name, (DATA / (source or name)).read_bytes(), "application/octet-stream")


BSD, APACHE = upload("BSD.txt"), upload("Apache-2.0.txt")
BAD = upload("broken.pdf", "invalid.pdf")
GPL = upload("GPL-3.txt")


@pytest.fixture(autouse=True)
def page_env(monkeypatch):
    yield from factories.scripted_app(monkeypatch)


@pytest.fixture
def downloads(monkeypatch) -> dict:
    """The bytes behind each download button, by its URL."""
    offered: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        offered[self.get_url(file_id)] = bytes(path_or_data)
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return offered


def page(timeout: float = 30) -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=timeout).run()


def jobs():
    return summary_ui.registry(str(Settings.from_env().db))


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def progress(at: AppTest) -> list[str]:
    return [p.proto.text for p in at.get("progress")]


def wait_for(predicate, timeout: float = 30.0):
    return factories.wait_for(predicate, timeout, poll=0.05)


def start_upload_run(at: AppTest, *files) -> AppTest:
    at.radio(key="s_source_en").set_value("upload").run()
    at.file_uploader(key="s_uploader").set_value(list(files)).run()
    at.button(key="s_start_btn").click().run()
    assert not at.exception
    return at


def test_run_over_three_documents_with_a_bad_one_then_rerun_skips_and_zip(downloads):
    SCRIPT.update(delay=0.03, reply="## Overview\nA licence [p. 1]. "
                  + " ".join(f"word{i}" for i in range(30)))
    at = start_upload_run(page(), BSD, BAD, APACHE)
    job = jobs().list()[0]
    seen = []
    while not job.done:  # reloads while the run goes on show its progress advance
        seen.append(progress(page())[0])
        time.sleep(0.1)
    assert any(s.startswith(("0/3", "1/3", "2/3")) for s in seen)
    assert len(set(seen)) >= 2 and seen == sorted(seen, key=lambda s: s.split()[0])
    at = page()
    assert progress(at)[0].startswith("3/3 documents · finished")
    errors = texts(at.error)
    assert len(errors) == 1 and errors[0].startswith("broken.pdf is not a readable PDF")
    assert any("BSD.txt — done" in c for c in texts(at.caption))
    # The summaries appear: the folder's overview on top, then one summary to read.
    overview = at.expander[0]
    assert overview.label == "Overview (index.md)"
    assert "2 done, 1 failed" in overview.markdown[0].value
    picker = at.selectbox(key=f"s_entry_{job.out_dir}")
    assert picker.options == ["BSD.txt", "Apache-2.0.txt"]
    assert any(m.startswith("# Summary:") and "_BSD.txt ·" in m for m in texts(at.markdown))
    apache = next(i for i in job.snapshot().items if i.name == "Apache-2.0.txt")
    picker.select(Path(apache.output).name).run()
    assert any(m.startswith("# Summary:") and "_Apache-2.0.txt ·" in m for m in texts(at.markdown))
    # The zip holds every summary and the index.
    zipped = next(b for b in at.get("download_button") if b.proto.label == "Download all (zip)")
    names = zipfile.ZipFile(io.BytesIO(downloads[zipped.proto.url])).namelist()
    assert sorted(names) == sorted(["index.md"] + [Path(i.output).name for i in
                                                   job.snapshot().items if i.output])
    assert len(names) == 3
    one = next(b for b in at.get("download_button") if b.proto.label == "Download Markdown")
    assert downloads[one.proto.url].decode().startswith("# Summary:")
    # A second run skips what is finished: nothing is generated again.
    start_upload_run(at, BSD, BAD, APACHE)
    again = jobs().list()[0]
    assert again is not job and again.join(30)
    assert [i.status for i in again.snapshot().items] == ["skipped", "failed", "skipped"]
    assert sum("unchanged: kept" in c for c in texts(page().caption)) == 2


def test_cancel_from_another_tab_stops_the_run():
    SCRIPT.update(delay=0.05, window=1500)
    at = page()
    at.number_input(key="s_max_tokens").set_value(128).run()
    start_upload_run(at, GPL, BSD)
    job = jobs().list()[0]
    wait_for(lambda: (c := job.snapshot().current) is not None and c.step >= 1)
    other = page()
    assert "map " in " ".join(texts(other.caption))  # the current document's map steps
    assert "left" in progress(other)[0]  # and an ETA
    other.button(key=f"cancel_page_{job.id}").click().run()
    assert job.join(10) and job.snapshot().state == "cancelled"
    at = page()
    assert "cancelled" in progress(at)[0]
    captions = " ".join(texts(at.caption))
    assert "GPL-3.txt — cancelled" in captions and "Cancelled before it started" in captions
    assert not [b for b in at.button if (b.key or "").startswith("cancel_")]


def test_documents_from_the_library_and_their_page_references(downloads):
    s = SessionStore.open(Settings.from_env().db)
    doc = ingest_upload(s, "BSD.txt", BSD[1], Settings.from_env().uploads_dir, 5).document
    SCRIPT.update(reply="It is a licence [p. 1]. <script>alert(1)</script>")
    at = page()
    at.multiselect(key="s_pick").select(doc.id).run()
    at.button(key="s_start_btn").click().run()
    assert jobs().list()[0].join(10)
    at = page()
    assert any(m.startswith("# Summary:") for m in texts(at.markdown))
    body = " ".join(texts(at.markdown))
    assert "&lt;script&gt;" in body and "<script>" not in body
    ref = next(e for e in at.expander if e.label == "BSD.txt · p. 1")
    assert "Redistribution and use in source and binary forms" in ref.markdown[0].value


def test_a_folder_outside_the_root_is_refused(tmp_path, monkeypatch):
    root = tmp_path / "shared"
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "BSD.txt").write_bytes(BSD[1])
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "s.txt").write_text("do not read")
    monkeypatch.setenv("DOCCHAT_SUMMARIES_ROOT", str(root))
    at = page()
    at.radio(key="s_source_en").set_value("folder").run()
    for bad in ("../secret", str(tmp_path / "secret"), "contracts/../../secret"):
        at.text_input(key="s_folder").input(bad).run()
        assert "only folders under it can be summarised" in at.error[0].value, bad
        at.button(key="s_start_btn").click().run()
        assert "Choose at least one document" in at.warning[0].value and not jobs().list()
    at.text_input(key="s_folder").input("contracts").run()
    assert not at.error
    at.button(key="s_start_btn").click().run()
    job = jobs().list()[0]
    assert job.join(10) and [i.status for i in job.snapshot().items] == ["done"]
    assert Path(job.out_dir).is_relative_to(Settings.from_env().summaries_dir)


def test_no_folder_choice_without_a_root():
    at = page()
    assert at.radio(key="s_source_en").options == ["From the library", "Upload"]


def test_chinese_interface_keeps_the_choices_made():
    at = page()
    at.radio(key="s_source_en").set_value("upload").run()
    at.sidebar.selectbox(key="lang").select("zh").run()
    assert not at.exception
    assert at.title[0].value == "文档摘要"
    assert at.button(key="s_start_btn").label == "开始总结"
    assert at.radio(key="s_source_zh").value == "upload"
    assert at.radio(key="s_source_zh").options == ["文档库", "上传"]


def test_the_page_and_the_chat_share_one_backend():
    Scripted.created = 0
    AppTest.from_file(APP, default_timeout=30).run()
    page()
    assert Scripted.created == 1


def test_a_run_waiting_behind_a_chat_answer_shows_its_place_in_the_queue():
    from docchat.backends import GenerationRequest, Message

    SCRIPT.update(reply=" ".join(f"word{i}" for i in range(100)), delay=0.02)
    at = page()
    shared = Scripted.last  # the one backend the page loaded
    chat = threading.Thread(target=lambda: "".join(shared.stream(GenerationRequest(
        messages=[Message("user", "a chat question")]))))
    chat.start()
    wait_for(lambda: shared.queue.depth == 1)
    start_upload_run(at, BSD)
    wait_for(lambda: any("1 generation(s) ahead" in c for c in texts(page().caption)))
    chat.join(30)
    assert jobs().list()[0].join(30)



def test_an_encrypted_pdf_opens_with_the_runs_password():
    locked = ("locked.pdf", (DATA.parent / "app" / "guide-locked.pdf").read_bytes(),
              "application/pdf")
    at = page()
    start_upload_run(at, locked)
    assert jobs().list()[0].join(10)
    assert "locked.pdf is encrypted" in page().error[0].value
    at.text_input(key="s_password").input("secret").run()
    at.button(key="s_start_btn").click().run()
    job = jobs().list()[0]
    assert job.join(10) and [i.status for i in job.snapshot().items] == ["done"]


def test_a_summary_shows_its_statement_marks_and_its_page_links_open_the_page(downloads):
    import re

    s = SessionStore.open(Settings.from_env().db)
    doc = ingest_upload(s, "BSD.txt", BSD[1], Settings.from_env().uploads_dir, 5).document
    SCRIPT.update(reply="Redistribution and use in source and binary forms are permitted. "
                        "It was written on the Moon in 1850.")
    at = page()
    at.multiselect(key="s_pick").select(doc.id).run()
    at.button(key="s_start_btn").click().run()
    assert jobs().list()[0].join(10)
    at = page()
    stored = next(iter(s.db["summaries"].rows_where("doc_id = ?", [doc.id])))
    checks = __import__("json").loads(stored["checks"])
    body = next(m for m in texts(at.markdown) if 'class="dc-statement"' in m)
    shown = re.findall(r'class="dc-statement[^"]*" data-status="(\w+)" data-n="(\d+)"', body)
    assert [st for st, _ in shown] == ["supported", "not_found"]
    assert [st for st, _ in shown] == [x["status"] for x in checks["statements"]
                                       if x["status"] != "exempt"]
    assert '<a href="?view=s0" target="_self" data-view="s0">BSD.txt</a>' in body
    assert 'title="Not found in the documents" style="opacity:0.5">It was written on the Moon' \
        in body
    assert any("1 of 2 statements found in the documents" in c and "dimmed" in c
               for c in texts(at.caption))
    # The file (the download, the export) carries the marks as text.
    one = next(b for b in at.get("download_button") if b.proto.label == "Download Markdown")
    exported = downloads[one.proto.url].decode()
    assert "*(not found in the document)*" in exported
    assert "_1 of 2 statements found in the documents._" in exported
    # The link, followed: the passage in its context, highlighted.
    view = AppTest.from_file(PAGE, default_timeout=30)
    view.query_params["view"] = "s0"
    view.run()
    assert not view.exception
    (box,) = [b for b in view._tree.children[2].children.values() if b.type == "dialog"]
    context = next(m.value for m in box.get("markdown") if "dc-context" in m.value)
    assert '<mark class="dc-passage">Redistribution and use in source and binary forms' \
        in context
