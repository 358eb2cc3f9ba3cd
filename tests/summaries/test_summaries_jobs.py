"""summary_jobs: background runs (progress, ETA, cancel, resume), fair sharing of the
model queue with chat answers, folders under the root only, reading folders of summaries."""
from __future__ import annotations

import os
import shutil
import time
from functools import partial
from pathlib import Path

import factories
import pytest

from docchat.backends import GenerationRequest, Message
from docchat.backends.echo import EchoBackend
from docchat.library.store import SessionStore
from docchat.summaries.batch import StoredDocument
from docchat.summaries.files import (
    FolderRefused,
    collections,
    folder_documents,
    read_collection,
    resolve_folder,
    run_folder,
    subfolders,
)
from docchat.summaries.jobs import RunOptions, SummaryJobs

DATA = Path(__file__).parent.parent / "data" / "summarize"


def wait_for(predicate, timeout: float = 30.0):
    return factories.wait_for(predicate, timeout, poll=0.01)


class Served(EchoBackend):
    """Echo that records what it served, in queue order: "summary" steps and "chat"."""

    def __init__(self, reply: str | None = None, **options) -> None:
        super().__init__(**options)
        self.served: list[str] = []
        self.summary_reply = reply

    def answer_for(self, messages) -> str:
        chat = messages[-1].content.startswith("CHAT")
        self.served.append("chat" if chat else "summary")
        # The summary's reply for its steps, the echo of the question for a chat request.
        return self.summary_reply if self.summary_reply and not chat \
            else super().answer_for(messages)


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "docchat.db"


@pytest.fixture
def docs(tmp_path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name in ("Apache-2.0.txt", "BSD.txt", "invalid.pdf"):
        shutil.copy(DATA / name, root / name)
    return root


def start(jobs, paths, backend, db_path, out, **kw):
    return jobs.start([(p, p.name) for p in paths], backend, partial(SessionStore.open, db_path),
                      out, RunOptions(**kw.pop("options", {})), **kw)


# --- folders under the root ---------------------------------------------------------
def test_folder_traversal_and_links_out_of_the_root_are_refused(tmp_path):
    root = tmp_path / "root"
    (root / "contracts" / "2024").mkdir(parents=True)
    (root / "contracts" / "2024" / "a.txt").write_text("A contract.")
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "s.txt").write_text("secret")
    os.symlink(secret, root / "link")
    os.symlink(secret / "s.txt", root / "contracts" / "2024" / "leak.txt")
    assert resolve_folder(root, "contracts/2024") == (root / "contracts" / "2024").resolve()
    assert resolve_folder(root, "contracts/../contracts") == (root / "contracts").resolve()
    for bad in ("..", "../secret", "contracts/../../secret", str(secret), "/etc", "link",
                "contracts/2024/../../../secret"):
        with pytest.raises(FolderRefused) as refused:
            resolve_folder(root, bad)
        assert refused.value.reason == "outside", bad
        assert "outside the summaries folder" in str(refused.value)
    with pytest.raises(FolderRefused) as missing:
        resolve_folder(root, "nope")
    assert missing.value.reason == "missing"
    # A file linked from outside the root is left out of the folder's documents.
    assert [p.name for p in folder_documents(root, "contracts")] == ["a.txt"]
    with pytest.raises(FolderRefused) as empty:
        (root / "empty").mkdir()
        folder_documents(root, "empty")
    assert empty.value.reason == "empty"
    assert subfolders(root) == ["contracts", "contracts/2024", "empty"]


# --- runs ---------------------------------------------------------------------------
def test_a_run_reports_progress_keeps_going_past_a_bad_file_and_resumes(docs, db_path,
                                                                        tmp_path):
    jobs = SummaryJobs()
    backend = Served(delay=0.01)
    paths = sorted(docs.iterdir())
    job = start(jobs, paths, backend, db_path, tmp_path / "out",
                failed=[("slides.pptx", "slides.pptx: .pptx files are not supported")])
    versions, fractions = [job.version], []
    while not job.done:
        versions.append(job.wait(versions[-1], 1.0))
        fractions.append(job.snapshot().fraction)
    view = job.snapshot()
    assert view.state == "done" and view.finished == view.total == 4
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(set(fractions)) >= 3
    status = {i.name: i.status for i in view.items}
    assert status == {"slides.pptx": "failed", "Apache-2.0.txt": "done", "BSD.txt": "done",
                      "invalid.pdf": "failed"}
    bad = next(i for i in view.items if i.name == "invalid.pdf")
    assert "not a readable PDF" in bad.error
    assert all(Path(i.output).exists() for i in view.items if i.status == "done")
    assert (tmp_path / "out" / "index.md").exists()
    assert jobs.list() == [job]
    # Unchanged documents and settings: nothing is generated again.
    before = len(backend.served)
    again = start(jobs, paths, backend, db_path, tmp_path / "out")
    assert again.join(30)
    assert {i.name: i.status for i in again.snapshot().items} == {
        "Apache-2.0.txt": "skipped", "BSD.txt": "skipped", "invalid.pdf": "failed"}
    assert len(backend.served) == before
    assert jobs.list()[0] is again


def test_eta_and_steps_of_a_map_reduce_document(tmp_path, db_path):
    backend = Served(delay=0.02, context_window=1500)
    jobs = SummaryJobs()
    job = start(jobs, [DATA / "GPL-3.txt", DATA / "BSD.txt"], backend, db_path,
                tmp_path / "out", options={"max_new_tokens": 128})
    view = wait_for(lambda: (v := job.snapshot()).current is not None
                    and v.current.step >= 2 and v)
    assert view.current.steps > 2 and view.current.label.startswith("map ")
    assert view.eta_s is not None and view.eta_s > 0 and 0 < view.fraction < 0.5
    assert job.join(60) and job.snapshot().eta_s == 0.0


def test_cancel_stops_the_step_in_progress_and_the_documents_after_it(tmp_path, db_path):
    backend = Served(delay=0.05, context_window=1500)
    jobs = SummaryJobs()
    job = start(jobs, [DATA / "GPL-3.txt", DATA / "BSD.txt"], backend, db_path,
                tmp_path / "out", options={"max_new_tokens": 128})
    wait_for(lambda: (c := job.snapshot().current) is not None and c.step >= 1)
    job.stop()
    assert job.join(10)
    view = job.snapshot()
    assert view.state == "cancelled"
    assert [i.status for i in view.items] == ["cancelled", "cancelled"]
    assert not list((tmp_path / "out").glob("GPL*.md"))


def test_a_backend_that_is_down_fails_the_run_with_its_message(docs, db_path, tmp_path):
    job = start(SummaryJobs(), [docs / "BSD.txt", docs / "Apache-2.0.txt"], factories.Down(),
                db_path, tmp_path / "out")
    assert job.join(10)
    view = job.snapshot()
    assert view.state == "error" and "No server" in view.error
    assert {i.status for i in view.items} == {"failed"}


def test_one_run_per_folder_at_a_time(docs, db_path, tmp_path):
    jobs = SummaryJobs()
    job = start(jobs, [docs / "Apache-2.0.txt"], Served(delay=0.05), db_path, tmp_path / "o")
    with pytest.raises(Exception, match="still going"):
        start(jobs, [docs / "BSD.txt"], Served(), db_path, tmp_path / "o")
    job.stop()
    job.join(10)


def ask_during_a_step(backend, job, after: float = 0.3) -> tuple[list[int], float, int]:
    """A chat-like request asked while a summary step runs: (places, queue s, served before)."""
    wait_for(lambda: (c := job.snapshot().current) is not None and c.step >= 1)
    running = len(backend.served)
    wait_for(lambda: len(backend.served) > running)  # the next step has begun
    time.sleep(after)
    places: list[int] = []
    request = GenerationRequest(messages=[Message("user", "CHAT: a question?")],
                                on_queue=places.append)
    asked_at = len(backend.served)
    answer = "".join(backend.stream(request))
    assert answer.startswith("Echo: CHAT")
    return places, request.stats.queue_ms / 1000, backend.served.index("chat") - asked_at


LONG = " ".join(f"w{i}" for i in range(100))


def test_a_summary_step_gives_way_to_a_question_then_runs_again(tmp_path, db_path):
    """A question asked during a run waits for part of a step, not for the step or the run."""
    backend = Served(delay=0.02, context_window=1500, reply=LONG)
    job = start(SummaryJobs(), [DATA / "GPL-3.txt"], backend, db_path, tmp_path / "out",
                options={"max_new_tokens": 128})
    places, waited, before = ask_during_a_step(backend, job)
    assert places[0] == 1 and places[-1] == 0  # it was told a step was ahead of it
    assert before == 0 and waited < 1.0  # the step in progress gave way at once
    assert job.join(60) and job.snapshot().state == "done"
    steps = job.snapshot().items[0].steps
    assert backend.served.count("summary") == steps + 1  # the step that gave way, again
    text = Path(job.snapshot().items[0].output).read_text()
    assert LONG in text  # the summary is whole: the step that gave way was redone


def test_without_giving_way_a_question_waits_for_the_step(tmp_path, db_path):
    backend = Served(delay=0.01, context_window=1500, reply=LONG)
    job = start(SummaryJobs(), [DATA / "GPL-3.txt"], backend, db_path, tmp_path / "out",
                options={"max_new_tokens": 128, "give_way": False})
    places, waited, before = ask_during_a_step(backend, job, after=0.1)
    assert places[0] == 1 and before == 0 and waited > 0.3  # the rest of the step
    assert job.join(60) and job.snapshot().state == "done"
    assert backend.served.count("summary") == job.snapshot().items[0].steps


def test_stored_documents_and_the_session_hook(tmp_path, db_path):
    from docchat.library.documents import ingest_path

    store = SessionStore.open(db_path)
    doc_id = ingest_path(store, DATA / "BSD.txt").doc_id
    ended = []
    jobs = SummaryJobs()
    job = jobs.start([(StoredDocument(doc_id, "BSD.txt"), "BSD.txt")], Served(),
                     partial(SessionStore.open, db_path), run_folder(tmp_path, "document", "1"),
                     kind="document", session_id="s1", on_end=ended.append)
    assert job.join(10) and ended == [job] and job.snapshot().session_id == "s1"
    assert jobs.for_document(doc_id) is job and jobs.for_document(doc_id + 1) is None
    assert job.snapshot().items[0].status == "done"


# --- reading ------------------------------------------------------------------------
def test_read_collection_in_index_order_with_names_and_documents(docs, db_path, tmp_path):
    out = run_folder(tmp_path / "summaries", "batch")
    job = start(SummaryJobs(), sorted(docs.iterdir()), Served(), db_path, out)
    assert job.join(30)
    store = SessionStore.open(db_path)
    found = collections(tmp_path / "summaries")
    assert found == [out]
    c = read_collection(out, store.list_documents())
    assert "| invalid.pdf | failed |" in c.index
    assert [e.name for e in c.entries] == ["Apache-2.0.txt", "BSD.txt"]
    ids = {r["name"]: r["id"] for r in store.list_documents()}
    assert [e.doc_id for e in c.entries] == [ids["Apache-2.0.txt"], ids["BSD.txt"]]
    assert run_folder(tmp_path, "folder", "../a/b") == tmp_path / "folders" / "a-b"


def test_eta_counts_the_document_whose_first_step_is_running():
    from docchat.summaries.batch import DocResult, Progress
    from docchat.summaries.jobs import ItemState, SummaryJob

    now = [0.0]
    job = SummaryJob([ItemState("a", "a"), ItemState("b", "b"), ItemState("c", "c")], "out",
                     clock=lambda: now[0])
    assert job.snapshot().eta_s is None  # nothing measured yet
    job.on_progress(Progress("start", "a", 0, 3))
    now[0] = 10.0
    job.on_progress(Progress("step", "a", 0, 3, step=1, steps=2, label="map 1/1"))
    assert job.snapshot().eta_s == 10.0 + 2 * 10.0 * 2  # a's last step, b and c: 2 steps each
    now[0] = 20.0
    job.on_progress(Progress("step", "a", 0, 3, step=2, steps=2, label="reduce"))
    job.on_progress(Progress("done", "a", 1, 3, result=DocResult("a", "done")))
    job.on_progress(Progress("start", "b", 1, 3))
    view = job.snapshot()
    assert view.eta_s == 10.0 * (2 + 2) and view.fraction == pytest.approx(1 / 3)
    assert view.current.name == "b"
    now[0] = 24.0  # the time left counts down while a step runs, by one step at most
    assert job.snapshot().eta_s == 10.0 * 4 - 4.0
    now[0] = 60.0
    assert job.snapshot().eta_s == 10.0 * 4 - 10.0
