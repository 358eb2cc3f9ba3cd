"""summarize_folder: files, index, store, resume, force, failures, concurrency, zip."""
from __future__ import annotations

import io
import shutil
import threading
import zipfile
from pathlib import Path

import pytest
from factories import Down, Interrupting, ParallelBackend, RecordingBackend

from docchat.backends.echo import EchoBackend
from docchat.errors import BackendUnavailable
from docchat.summaries.batch import (
    DocResult,
    find_documents,
    output_name,
    render_index,
    settings_key,
    summarize_folder,
    zip_summaries,
)

DATA = Path(__file__).parent.parent / "data" / "summarize"


@pytest.fixture
def folder(tmp_path) -> Path:
    """Three good documents (one Chinese, one PDF) and a broken PDF."""
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    for name in ("Apache-2.0.txt", "BSD.txt", "invalid.pdf"):
        shutil.copy(DATA / name, root / name)
    shutil.copy(DATA / "lppl.pdf", root / "sub" / "lppl.pdf")
    shutil.copy(DATA / "vimtutor-zh.txt", root / "sub" / "vimtutor-zh.txt")
    return root


def _run(folder: Path, backend, store, out: Path, **options) -> list[DocResult]:
    return list(summarize_folder(find_documents(folder), backend, store, out, **options))


def test_find_documents_recurses_and_skips_hidden_and_output(folder, tmp_path):
    (folder / ".hidden.txt").write_text("x")
    (folder / "notes.docx").write_text("x")
    out = folder / "summaries"
    out.mkdir()
    (out / "old-summary.md").write_text("# x")
    names = [p.name for p in find_documents(folder, exclude=out)]
    assert names == ["Apache-2.0.txt", "BSD.txt", "invalid.pdf", "lppl.pdf", "vimtutor-zh.txt"]
    assert [p.name for p in find_documents(folder, "*.pdf")] == ["invalid.pdf", "lppl.pdf"]


def test_a_bad_file_is_reported_and_the_rest_are_summarised(folder, store, tmp_path):
    out = tmp_path / "out"
    results = _run(folder, RecordingBackend(), store, out)
    status = {Path(r.path).name: r.status for r in results}
    assert status == {"Apache-2.0.txt": "done", "BSD.txt": "done", "invalid.pdf": "failed",
                      "lppl.pdf": "done", "vimtutor-zh.txt": "done"}
    bad = next(r for r in results if r.status == "failed")
    assert "not a readable PDF" in bad.error and bad.output is None
    index = (out / "index.md").read_text()
    for r in results:
        if r.status == "done":
            text = Path(r.output).read_text()
            assert Path(r.output).parent == out and text.startswith(("# Summary:", "# 摘要："))
            assert f"]({Path(r.output).name})" in index
            stored = store.get_summary(r.doc_id, settings_key(RecordingBackend(),
                                                              "zh" if "vim" in r.path else "en",
                                                              512))
            assert stored["markdown"] == text and stored["meta"]["overview"] == r.overview
            assert r.tokens_in > 0 and r.tokens_out > 0 and r.pages > 0
    assert "| invalid.pdf | failed |" in index and "4 done, 1 failed" in index
    assert "sub/lppl.pdf" in index
    chinese = next(r for r in results if "vim" in r.path)
    assert Path(chinese.output).read_text().startswith("# 摘要：")


def test_second_run_skips_and_force_redoes(folder, store, tmp_path):
    out = tmp_path / "out"
    first = RecordingBackend()
    _run(folder, first, store, out)
    assert len(first.requests) == 4
    again = RecordingBackend()
    results = _run(folder, again, store, out)
    assert again.requests == []
    assert sorted(r.status for r in results) == ["failed", "skipped", "skipped", "skipped",
                                                 "skipped"]
    forced = RecordingBackend()
    results = _run(folder, forced, store, out, force=True)
    assert len(forced.requests) == 4 and sum(r.status == "done" for r in results) == 4


def test_other_settings_are_a_different_summary(folder, store, tmp_path):
    out = tmp_path / "out"
    _run(folder, RecordingBackend(), store, out)
    other = RecordingBackend()
    _run(folder, other, store, out, max_new_tokens=128)
    assert len(other.requests) == 4
    english = RecordingBackend()
    _run(folder, english, store, out, max_new_tokens=128, lang="en")
    assert len(english.requests) == 1  # only the Chinese document changes language


def test_an_interrupted_run_keeps_finished_summaries_and_resumes(folder, store, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        _run(folder, Interrupting(at=2), store, out)  # Ctrl-C at the third document
    kept = sorted(p.name for p in out.glob("*.md"))
    assert len(kept) == 3 and "index.md" in kept  # two summaries and the index
    assert "pending" in (out / "index.md").read_text()
    assert not list(out.glob(".*.tmp"))
    rest = RecordingBackend()
    results = _run(folder, rest, store, out)
    assert len(rest.requests) == 2
    assert sorted(r.status for r in results) == ["done", "done", "failed", "skipped", "skipped"]


def test_a_deleted_summary_file_is_rewritten_from_the_store(folder, store, tmp_path):
    out = tmp_path / "out"
    done = [r for r in _run(folder, RecordingBackend(), store, out) if r.status == "done"]
    Path(done[0].output).unlink()
    again = RecordingBackend()
    _run(folder, again, store, out)
    assert again.requests == [] and Path(done[0].output).read_text().startswith("#")


def test_an_unreachable_backend_stops_the_run(folder, store, tmp_path):
    with pytest.raises(BackendUnavailable):
        _run(folder, Down(), store, tmp_path / "out")


def test_cancel_stops_before_the_next_document(folder, store, tmp_path):
    cancel = threading.Event()
    seen = []

    def on_progress(event):
        seen.append(event)
        if event.kind == "done":
            cancel.set()

    results = _run(folder, RecordingBackend(), store, tmp_path / "out", cancel=cancel,
                   on_progress=on_progress)
    assert [r.status for r in results] == ["done"]
    assert [e.kind for e in seen] == ["start", "step", "done"]
    assert seen[1].step == 1 and seen[1].steps == 1 and seen[1].label == "single pass"


def test_concurrency_puts_several_requests_in_flight(folder, store, tmp_path):
    backend = ParallelBackend(context_window=1500)
    threads = set()
    results = _run(folder, backend, store, tmp_path / "out", concurrency=3,
                   on_progress=lambda e: threads.add(threading.get_ident()))
    assert backend.max_in_flight == 3
    assert sum(r.status == "done" for r in results) == 4
    assert threads == {threading.get_ident()}  # progress arrives in the caller's thread


def test_in_process_backends_run_one_at_a_time(folder, store, tmp_path):
    backend = RecordingBackend(context_window=1500)
    _run(folder, backend, store, tmp_path / "out", concurrency=4)
    assert backend.max_in_flight == 1


@pytest.mark.parametrize("name,expected", [
    ("../../etc/passwd", "passwd-abcdef12.md"),
    ("年度 报告.pdf", "年度-报告-abcdef12.md"),
    ("..", "document-abcdef12.md"),
    ("a|b:c*?.md", "a-b-c-abcdef12.md"),
])
def test_output_names_are_safe(name, expected):
    assert output_name(name, "abcdef1234" + "0" * 54) == expected


def test_settings_key_changes_with_what_shapes_a_summary():
    echo = EchoBackend()
    key = settings_key(echo, "en", 512)
    assert key == settings_key(EchoBackend(), "en", 512)
    assert len({key, settings_key(echo, "zh", 512), settings_key(echo, "en", 256),
                settings_key(EchoBackend(model="other"), "en", 512)}) == 4


def test_zip_holds_the_index_and_every_summary(folder, store, tmp_path):
    out = tmp_path / "out"
    _run(folder, RecordingBackend(), store, out)
    names = zipfile.ZipFile(io.BytesIO(zip_summaries(out))).namelist()
    assert "index.md" in names and len(names) == 5


def test_index_escapes_table_cells():
    row = DocResult("/d/a|b.txt", "done", pages=2, output="/o/a-b-1.md", overview="x | y\nz")
    assert "| [a\\|b.txt](a-b-1.md) | done | 2 | x \\| y z |" in render_index([row])


def test_display_names_for_files_stored_under_hashes(tmp_path, store):
    upload = tmp_path / "uploads" / ("ab" * 32 + ".txt")
    upload.parent.mkdir()
    shutil.copy(DATA / "BSD.txt", upload)
    [result] = summarize_folder([upload], RecordingBackend(), store, tmp_path / "out",
                                names={str(upload): "BSD licence.txt"})
    assert result.name == "BSD licence.txt"
    assert Path(result.output).name.startswith("BSD-licence-")
    assert "[BSD licence.txt](BSD-licence-" in (tmp_path / "out" / "index.md").read_text()


def test_index_names_relative_to_the_common_folder_even_for_mixed_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = [DocResult("docs/a.txt", "pending"), DocResult(str(tmp_path / "docs/sub/b.txt"),
                                                           "pending")]
    index = render_index(rows)
    assert "| a.txt | pending |" in index and "| sub/b.txt | pending |" in index


def test_stored_documents_are_summarised_without_their_files(folder, store, tmp_path):
    from docchat.library.documents import ingest_path
    from docchat.summaries.batch import StoredDocument

    copy = tmp_path / "gone" / "BSD.txt"
    copy.parent.mkdir()
    shutil.copy(folder / "BSD.txt", copy)
    doc_id = ingest_path(store, copy).doc_id
    copy.unlink()  # the library keeps the document; its file may be gone
    item = StoredDocument(doc_id)
    backend = RecordingBackend()
    [result] = summarize_folder([item], backend, store, tmp_path / "out")
    assert result.status == "done" and result.path == str(item) and result.doc_id == doc_id
    assert result.name == "BSD.txt" and Path(result.output).name.startswith("BSD-")
    assert "[BSD.txt](BSD-" in (tmp_path / "out" / "index.md").read_text()
    # The same content given as a file is the same summary: skipped.
    again = RecordingBackend()
    [skipped] = summarize_folder([folder / "BSD.txt"], again, store, tmp_path / "out")
    assert skipped.status == "skipped" and again.requests == []
    [missing] = summarize_folder([StoredDocument(999, "old.pdf")], backend, store,
                                 tmp_path / "out")
    assert missing.status == "failed" and "old.pdf is no longer in the library" in missing.error


def test_uploads_are_stored_and_reported_under_their_own_names(tmp_path, store):
    good = tmp_path / "uploads" / ("ab" * 32 + ".txt")
    bad = tmp_path / "uploads" / ("cd" * 32 + ".pdf")
    good.parent.mkdir()
    shutil.copy(DATA / "BSD.txt", good)
    shutil.copy(DATA / "invalid.pdf", bad)
    names = {str(good): "licence.txt", str(bad): "scan.pdf"}
    results = {r.path: r for r in summarize_folder([bad, good], RecordingBackend(), store,
                                                   tmp_path / "out", names=names)}
    assert results[str(good)].status == "done"
    assert store.load_document(results[str(good)].doc_id).name == "licence.txt"
    assert results[str(bad)].status == "failed" and "scan.pdf" in results[str(bad)].error
    assert bad.name not in results[str(bad)].error


def test_queue_places_reach_on_queue(folder, store, tmp_path):
    places = []
    backend = RecordingBackend()
    _run(folder, backend, store, tmp_path / "out", on_queue=places.append)
    assert places and set(places) == {0}  # nobody else was waiting


def _spy_on_ingest(monkeypatch) -> list[tuple[str, int | None, int]]:
    """Record (file name, ocr_max_pages, process limit) for each file ingest reads."""
    import ingest
    from ingest import parallel

    seen = []
    original = ingest.load_document

    def spy(path, **kw):
        seen.append((Path(path).name, kw.get("ocr_max_pages"), parallel.process_limit()))
        return original(path, **kw)

    monkeypatch.setattr(ingest, "load_document", spy)
    return seen


def test_ocr_and_process_settings_reach_ingest(folder, store, tmp_path, monkeypatch):
    seen = _spy_on_ingest(monkeypatch)
    scan = tmp_path / "scan" / "linn.pdf"  # a page without a text layer
    scan.parent.mkdir()
    shutil.copy(DATA.parent / "linn.pdf", scan)
    results = _run(folder, RecordingBackend(), store, tmp_path / "out", ocr_max_pages=0,
                   processes=7)
    [failed] = summarize_folder([scan], RecordingBackend(), store, tmp_path / "out",
                                ocr_max_pages=0, processes=7)
    assert failed.status == "failed" and "OCR" in failed.error  # not read by OCR: limit 0
    assert sum(r.status == "done" for r in results) == 4
    assert sorted(seen) == sorted((n, 0, 7) for n in ("Apache-2.0.txt", "BSD.txt", "invalid.pdf",
                                                      "lppl.pdf", "vimtutor-zh.txt", "linn.pdf"))


def test_summary_runs_pass_their_ocr_and_process_options(folder, tmp_path, monkeypatch):
    from functools import partial

    from docchat.library.store import SessionStore
    from docchat.summaries.jobs import RunOptions, SummaryJobs

    seen = _spy_on_ingest(monkeypatch)
    job = SummaryJobs().start([(folder / "BSD.txt", "BSD.txt")], RecordingBackend(),
                              partial(SessionStore.open, tmp_path / "d.db"), tmp_path / "out",
                              RunOptions(ocr_max_pages=5, processes=6))
    job.join(30)
    assert job.done and seen == [("BSD.txt", 5, 6)]


def test_the_check_is_stored_with_the_summary_and_written_in_its_file(store, tmp_path):
    from factories import Looping

    from docchat.context.claims import AnswerCheck

    root = tmp_path / "docs"
    root.mkdir()
    shutil.copy(DATA.parent / "apssamp.pdf", root / "apssamp.pdf")
    reply = ("## Overview\nREVTeX requires version 8.31a or later of natbib.\n"
             "The authors work with a team at Google.\n")
    [result] = _run(root, RecordingBackend(reply=reply), store, tmp_path / "out")
    key = settings_key(RecordingBackend(), "en", 512)
    stored = store.get_summary(result.doc_id, key)
    check = AnswerCheck.from_dict(stored["checks"])
    assert (check.supported, check.total) == (1, 2)
    first = next(s for s in check.statements if s.status == "supported")
    assert stored["checks"]["body"][first.start:first.end] == first.text and first.page == 2
    text = Path(result.output).read_text()
    assert text.startswith("# Summary: Manuscript Title: with Forced Linebreak\n")
    assert "Google. *(not found in the document)*" in text
    assert "_1 of 2 statements found in the documents._" in text
    assert stored["markdown"] == text and stored["meta"]["loops"] == 0
    # A summary that loops: cut, counted and noted; its check covers the kept text only.
    looping = Looping("## Overview\nA sample paper. ", "It is cut here, once and for all. ")
    [again] = _run(root, looping, store, tmp_path / "out2", force=True)
    stored = store.get_summary(again.doc_id, key)
    assert stored["meta"]["loops"] == 1
    assert Path(again.output).read_text().count("It is cut here, once and for all.") == 1
