"""Summary runs in the background of the server process: progress, ETA, cancel.

The Summaries page and the chat page's "Summarize" action start a ``SummaryJob`` in one
``SummaryJobs`` registry per process (held with ``st.cache_resource``, like
``chat.Generations``). A daemon thread runs ``docchat.summaries.batch.summarize_folder`` (the CLI's
resumable run: a document whose content and settings already have a summary is skipped),
so a reload or another tab finds the job and its progress, and Cancel reaches it. Each
generation step takes its own turn in the backend's queue, so chat questions asked during
a run wait for one step at most, never for the whole run.
"""
from __future__ import annotations

import itertools
import logging
import threading
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from docchat.backends import Backend, Cancel, GenerationQueue
from docchat.errors import DocchatError
from docchat.summaries.batch import (
    CONCURRENT_BACKENDS,
    DocResult,
    Item,
    Progress,
    StoredDocument,
    summarize_folder,
)
from docchat.watch import Watched

logger = logging.getLogger(__name__)

GENERIC_ERROR = "The summary run failed unexpectedly; see the server log."
FINAL = ("done", "skipped", "failed", "cancelled")

# --- job state ----------------------------------------------------------------------
@dataclass
class ItemState:
    """One document of a run, as the page shows it."""
    key: str  # str(item): the path, or "stored:<id>"
    name: str
    status: str = "pending"  # pending, running, done, skipped, failed, cancelled
    step: int = 0
    steps: int = 0
    label: str = ""
    ahead: int | None = None  # generations ahead of this document's step in the queue
    error: str | None = None
    output: str | None = None  # the summary's Markdown file
    doc_id: int | None = None
    seconds: float = 0.0
    overview: str = ""


@dataclass(frozen=True)
class JobView:
    """A consistent copy of a job for drawing: never changes under the page."""
    id: str
    title: str
    kind: str
    state: str  # running, done, cancelled, error
    out_dir: str
    items: tuple[ItemState, ...]
    error: str | None
    elapsed_s: float
    eta_s: float | None
    session_id: str | None

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def finished(self) -> int:
        return sum(i.status in FINAL for i in self.items)

    @property
    def current(self) -> ItemState | None:
        return next((i for i in self.items if i.status == "running"), None)

    @property
    def fraction(self) -> float:
        """Documents done plus the running one's share of its steps, over all documents."""
        if not self.items:
            return 1.0
        cur = self.current
        part = cur.step / cur.steps if cur is not None and cur.steps else 0.0
        return min(1.0, (self.finished + part) / self.total)

    @property
    def running(self) -> bool:
        return self.state == "running"


class SummaryJob(Watched):
    """One run: its documents' states, a cancel flag, and a condition to wait on."""

    _ids = itertools.count(1)

    def __init__(self, items: Sequence[ItemState], out_dir: str | Path, title: str = "",
                 kind: str = "batch", session_id: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.id = f"{next(self._ids)}-{uuid.uuid4().hex[:6]}"
        self.title, self.kind, self.session_id = title, kind, session_id
        self.out_dir = str(out_dir)
        self.items = [replace(i) for i in items]
        self._by_key = {i.key: i for i in self.items}
        self.state = "running"
        self.error: str | None = None
        self.cancel = Cancel()
        self._clock = clock
        self.started_at = clock()
        self.finished_at: float | None = None
        self._step_seconds: list[float] = []  # each generation step, queue wait included
        self._last_mark: float | None = None  # start of the step in progress
        self._steps_per_doc: list[int] = []  # generations of each document summarised

    # -- reading
    def snapshot(self) -> JobView:
        with self._cond:
            now = self.finished_at if self.finished_at is not None else self._clock()
            return JobView(self.id, self.title, self.kind, self.state, self.out_dir,
                           tuple(replace(i) for i in self.items), self.error,
                           now - self.started_at, self._eta(now), self.session_id)

    def _eta(self, now: float) -> float | None:
        """Seconds left: mean step time x steps left (this document's, then the others'),
        less the time the step in progress has run (at least 1 s while running)."""
        if self.state != "running":
            return 0.0
        if not self._step_seconds:
            return None
        per_step = sum(self._step_seconds) / len(self._step_seconds)
        cur = next((i for i in self.items if i.status == "running"), None)
        per_doc = (sum(self._steps_per_doc) / len(self._steps_per_doc) if self._steps_per_doc
                   else (cur.steps if cur is not None and cur.steps else 1))
        if cur is None:
            left = 0.0
        elif cur.steps:
            left = max(0, cur.steps - cur.step)
        else:  # its first step is running: as many steps as the documents before it
            left = per_doc
        waiting = sum(i.status == "pending" for i in self.items)
        running_for = 0.0
        if left and self._last_mark is not None:
            running_for = min(per_step, max(0.0, now - self._last_mark))
        return max(1.0, per_step * (left + waiting * per_doc) - running_for)

    # -- writing (from the run's thread)
    def stop(self) -> None:
        """Cancel: the step in progress is stopped and no other document starts."""
        self.cancel.set()
        self._bump()

    def _bump(self) -> None:
        with self._cond:
            self._changed()

    def on_progress(self, event: Progress) -> None:
        with self._cond:
            item = self._by_key.get(event.path)
            if item is None:
                return
            now = self._clock()
            if event.kind == "start":
                item.status, item.step, item.steps, item.label = "running", 0, 0, ""
                self._last_mark = now
            elif event.kind == "step":
                if self._last_mark is not None:
                    self._step_seconds.append(now - self._last_mark)
                self._last_mark = now
                item.step, item.steps, item.label, item.ahead = (event.step, event.steps,
                                                                 event.label, None)
            elif event.kind == "done" and event.result is not None:
                self._record(item, event.result)
                self._last_mark = None
            self._changed()

    def on_queue(self, ahead: int) -> None:
        with self._cond:
            cur = next((i for i in self.items if i.status == "running"), None)
            if cur is not None:
                cur.ahead = ahead
            self._changed()

    def _record(self, item: ItemState, result: DocResult) -> None:
        item.status, item.error, item.output = result.status, result.error, result.output
        item.doc_id, item.seconds, item.overview = result.doc_id, result.seconds, result.overview
        item.ahead = None
        if result.status == "done" and item.step:
            self._steps_per_doc.append(item.step)
        if result.status in ("done", "skipped"):
            item.step = item.steps = max(item.step, item.steps, 1)

    def _finish(self, error: str | None = None) -> None:
        with self._cond:
            for item in self.items:
                if item.status in ("pending", "running"):
                    if error:
                        item.status, item.error = "failed", error
                    else:
                        item.status = "cancelled"
            self.error = error
            self.state = "error" if error else ("cancelled" if self.cancel.is_set() else "done")
            self.finished_at = self._clock()
            self._finished.set()
            self._changed()


@dataclass
class RunOptions:
    """What shapes a run besides its documents (the CLI's options)."""
    lang: str = "auto"
    max_new_tokens: int = 512
    concurrency: int = 1
    max_mb: float = 200.0
    password: str | None = None
    give_way: bool = True  # steps give way to questions waiting for an in-process model
    ocr_max_pages: int | None = None  # Settings.ocr_max_pages (None: ingest's default)
    processes: int | None = None  # Settings.ingest_processes


def waiting_behind(backend: Backend) -> Callable[[], bool] | None:
    """For an in-process backend: "is anyone waiting behind the generation running now?"."""
    queue = getattr(backend, "queue", None)
    if backend.name in CONCURRENT_BACKENDS or not isinstance(queue, GenerationQueue):
        return None  # a server: it queues (and batches) requests itself
    return lambda: queue.depth > 1


def run_concurrency(max_concurrency: int) -> int:
    """Requests a run keeps in flight to a server: all but one, kept for chat answers."""
    return max(1, int(max_concurrency) - 1)


class SummaryJobs:
    """Summary runs in this process, newest first; finished ones are kept (up to keep)."""

    def __init__(self, keep: int = 20) -> None:
        self._lock = threading.Lock()
        self._jobs: list[SummaryJob] = []
        self.keep = keep

    def list(self) -> list[SummaryJob]:
        with self._lock:
            return list(reversed(self._jobs))

    def get(self, job_id: str | None) -> SummaryJob | None:
        return next((j for j in self.list() if j.id == job_id), None)

    def running(self) -> list[SummaryJob]:
        return [j for j in self.list() if not j.done]

    def for_document(self, doc_id: int) -> SummaryJob | None:
        """The newest single-document job (the chat page's action) for doc_id."""
        key = str(StoredDocument(doc_id))
        return next((j for j in self.list() if j.kind == "document"
                     and j.items and j.items[0].key == key), None)

    def start(self, items: Sequence[tuple[Item, str]], backend: Backend,
              open_store: Callable[[], object], out_dir: str | Path,
              options: RunOptions | None = None, *, title: str = "", kind: str = "batch",
              session_id: str | None = None, failed: Sequence[tuple[str, str]] = (),
              on_end: Callable[[SummaryJob], None] | None = None,
              tokenizer=None, store_names: bool = True) -> SummaryJob:
        """Start summarising items ((item, display name) pairs) in a daemon thread.

        failed holds (name, message) for documents refused before the run (a bad upload):
        they are shown with the run's other documents. store_names: the display names are
        also the names of newly stored documents (uploads, stored under their hash).
        Raises DocchatError when a run still going writes into the same folder.
        """
        options = options or RunOptions()
        out = str(Path(out_dir))
        states = [ItemState(f"refused:{k}:{name}", name, status="failed", error=message)
                  for k, (name, message) in enumerate(failed)]
        states += [ItemState(str(item), name) for item, name in items]
        job = SummaryJob(states, out, title=title, kind=kind, session_id=session_id)
        with self._lock:
            if any(j.out_dir == out and not j.done for j in self._jobs):
                raise DocchatError("A summary run into this folder is still going; wait for "
                                   "it or cancel it.")
            self._jobs.append(job)
            finished = [j for j in self._jobs if j.done]
            for old in finished[: max(0, len(self._jobs) - self.keep)]:
                self._jobs.remove(old)
        names = {str(item): name for item, name in items} if store_names else {}
        thread = threading.Thread(
            target=_run, name=f"docchat-summaries-{job.id}", daemon=True,
            args=(job, [item for item, _ in items], names, backend, open_store, Path(out),
                  options, tokenizer, on_end))
        thread.start()
        return job


def _run(job: SummaryJob, items: list[Item], names: dict[str, str], backend: Backend,
         open_store: Callable[[], object], out_dir: Path, options: RunOptions, tokenizer,
         on_end: Callable[[SummaryJob], None] | None) -> None:
    """The job's thread: the CLI's resumable run, its events into the job; never raises."""
    error = None
    try:
        if items:
            store = open_store()  # SQLite connections belong to the thread that opened them
            for _ in summarize_folder(
                    items, backend, store, out_dir, lang=options.lang,
                    concurrency=options.concurrency, max_new_tokens=options.max_new_tokens,
                    on_progress=job.on_progress, cancel=job.cancel,
                    password=options.password, max_mb=options.max_mb, names=names,
                    tokenizer=tokenizer, on_queue=job.on_queue,
                    yield_to=waiting_behind(backend) if options.give_way else None,
                    ocr_max_pages=options.ocr_max_pages, processes=options.processes):
                pass  # each result reached the job through its "done" event
    except DocchatError as e:  # e.g. BackendUnavailable: no document can be summarised
        error = str(e)
    except Exception:  # a thread boundary: log it, show the user a short message
        logger.exception("summary run %s failed", job.id)
        error = GENERIC_ERROR
    finally:
        job._finish(error)
        logger.info("summary run %s: %s, %d documents", job.id, job.state, len(job.items))
        if on_end is not None:
            try:
                on_end(job)
            except Exception:
                logger.exception("after summary run %s", job.id)
