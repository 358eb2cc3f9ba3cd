"""Summaries of many documents: resumable, one Markdown file each, an index.md, SQLite.

``summarize_folder`` is the API behind ``python -m docchat summarize`` and the app's
summary runs (docchat.summaries.jobs: the Summaries page, a document's Summarize action).
A document whose content and summary settings already have a stored summary is skipped;
each finished summary is written (file, then database) before the next one starts, so an
interrupted run loses only the documents in progress.
"""
from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import queue
import re
import tempfile
import threading
import time
import unicodedata
import zipfile
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from docchat.backends import Backend, GenerationRequest
from docchat.errors import BackendUnavailable, DocchatError, DocumentError
from docchat.library.documents import file_sha256, load_or_ingest
from docchat.library.store import SessionStore
from docchat.summaries.summarize import (
    PROMPT_VERSION,
    Summary,
    SummaryCancelled,
    output_language,
    render_markdown,
    summarize_document,
)
from ingest.document import Document

logger = logging.getLogger(__name__)

INDEX_NAME = "index.md"
# Backends that serve several requests at once; in-process ones run one at a time.
CONCURRENT_BACKENDS = frozenset({"openai"})


@dataclass
class DocResult:
    """The outcome for one document of a folder run."""
    path: str
    status: str  # "done", "skipped", "failed", "cancelled" (or "pending" in the index)
    pages: int | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    output: str | None = None  # the summary's Markdown file
    error: str | None = None
    overview: str = ""
    doc_id: int | None = None
    mode: str | None = None  # "single" or "map-reduce"
    name: str = ""  # display name (an upload's original name); default: the file's

    def to_dict(self) -> dict:
        """The --json line: path, status, pages, tokens, seconds, output, error."""
        return {"path": self.path, "status": self.status, "pages": self.pages,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "seconds": round(self.seconds, 3), "output": self.output, "error": self.error}


@dataclass(frozen=True)
class Progress:
    """One progress event; on_progress always receives it in the caller's thread."""
    kind: str  # "start" (a document begins), "step" (a generation ended), "done"
    path: str
    finished: int  # documents finished so far
    total: int
    step: int = 0  # generations done for this document
    steps: int = 0  # generations expected for this document (grows if reduce recurses)
    label: str = ""  # "map 2/5", "reduce", ...
    result: DocResult | None = None  # with kind == "done"


ProgressCallback = Callable[[Progress], None]


@dataclass(frozen=True)
class StoredDocument:
    """A document already in the store, summarised without its file (the app's library)."""
    doc_id: int
    name: str = ""

    def __str__(self) -> str:
        return f"stored:{self.doc_id}"


Item = Path | StoredDocument  # what summarize_folder takes: files and stored documents


def find_documents(root: str | Path, pattern: str = "*",
                   exclude: str | Path | None = None) -> list[Path]:
    """Supported files under root (recursively) whose names match pattern, sorted."""
    from ingest import SUPPORTED_SUFFIXES

    root = Path(root)
    skip = Path(exclude).resolve() if exclude is not None else None
    found = []
    for path in root.rglob(pattern):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if not path.is_file() or path.suffix.lower() not in SUPPORTED_SUFFIXES:
            continue
        if skip is not None and path.resolve().is_relative_to(skip):
            continue  # our own summaries when --out lies inside the folder
        found.append(path)
    return sorted(found)


def settings_key(backend: Backend, language: str, max_new_tokens: int) -> str:
    """Hash of what shapes a summary: backend, model, language, prompts, length."""
    payload = {"backend": backend.name, "model": Path(str(backend.model)).name,
               "language": language, "prompt_version": PROMPT_VERSION,
               "max_new_tokens": int(max_new_tokens)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def output_name(name: str, sha256: str) -> str:
    """A safe file name for a document's summary: its stem plus a short content hash."""
    stem = unicodedata.normalize("NFKC", Path(name.replace("\\", "/")).stem)
    stem = re.sub(r"[^\w.-]+", "-", stem).strip(".-_")[:60].rstrip(".-_") or "document"
    return f"{stem}-{sha256[:8]}.md"


def summary_checks(summary: Summary) -> dict | None:
    """What the store keeps of a summary's check: AnswerCheck.to_dict() and "body", the
    summary text its statements' start/end refer to."""
    if summary.check is None:
        return None
    return {"body": summary.text, **summary.check.to_dict()}


def write_atomic(path: Path, text: str) -> None:
    """Write text to path via a temporary file and os.replace: never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def render_index(results: list[DocResult], root: str = "") -> str:
    """index.md: one row per document with a link, status, pages and a one-line overview."""
    counts = {s: sum(r.status == s for r in results) for s in
              ("done", "skipped", "failed", "cancelled", "pending")}
    lines = [f"# Summaries{' of ' + root if root else ''}", "",
             ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "No documents.", "",
             "| Document | Status | Pages | Overview |", "|---|---|---:|---|"]
    where = [os.path.abspath(r.path) for r in results]
    base = os.path.commonpath([os.path.dirname(w) for w in where]) if where else ""
    for r, absolute in zip(results, where):
        name = r.name or os.path.relpath(absolute, base)
        cell = f"[{_cell(name)}]({Path(r.output).name})" if r.output else _cell(name)
        note = r.overview if r.status in ("done", "skipped") else (r.error or "")
        pages = "" if r.pages is None else str(r.pages)
        lines.append(f"| {cell} | {r.status} | {pages} | {_cell(note)} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", text).replace("|", "\\|")


def zip_summaries(out_dir: str | Path) -> bytes:
    """A zip of index.md and every summary file in out_dir."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(Path(out_dir).glob("*.md")):
            zf.write(path, arcname=path.name)
    return buffer.getvalue()


class _Limited:
    """A backend that lets at most n generations stream at once (shared by all threads)."""

    def __init__(self, backend: Backend, n: int) -> None:
        self._backend = backend
        self._slots = threading.BoundedSemaphore(n)

    def __getattr__(self, name: str):
        return getattr(self._backend, name)

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        with self._slots:
            yield from self._backend.stream(request)


@dataclass
class _Job:
    path: str  # the item's key: str(path) or str(StoredDocument)
    doc: Document
    sha256: str
    key: str
    started: float
    name: str  # shown and used for the summary's file name
    file: str  # the file summarised (a stored document's original path)


def summarize_folder(paths: Iterable[str | Path | StoredDocument], backend: Backend,
                     store: SessionStore, out_dir: str | Path, *, lang: str = "auto",
                     force: bool = False, concurrency: int = 1, max_new_tokens: int = 512,
                     on_progress: ProgressCallback | None = None,
                     cancel: threading.Event | None = None, password: str | None = None,
                     max_mb: float = 200.0, names: Mapping[str, str] | None = None,
                     tokenizer=None,
                     on_queue: Callable[[int], None] | None = None,
                     yield_to: Callable[[], bool] | None = None,
                     ocr_max_pages: int | None = None,
                     processes: int | None = None) -> Iterator[DocResult]:
    """Summarise each file, yielding a DocResult as each finishes (in completion order).

    concurrency > 1 applies to HTTP backends only (documents and map steps in parallel,
    at most that many requests in flight); in-process backends run one at a time.
    Setting cancel stops after the generations in progress; closing the iterator too.
    names maps str(path) to a display name, for files stored under other names (uploads);
    a StoredDocument is summarised from the store (its DocResult.path is str(item)).
    tokenizer counts the tokens of newly ingested files; on_queue(ahead) reports each
    generation's place in an in-process backend's queue while it waits; yield_to() tells
    a step to give way to requests waiting behind it (see summarize_document).
    ocr_max_pages and processes (Settings.ocr_max_pages, Settings.ingest_processes) apply
    to newly ingested files, as for library.load_or_ingest.
    """
    items: list[Item] = [p if isinstance(p, StoredDocument) else Path(p) for p in paths]
    run = _FolderRun(backend, store, Path(out_dir), lang, force, max_new_tokens,
                     on_progress, cancel or threading.Event(), password, max_mb,
                     {str(p): (names or {}).get(str(p), "")
                      or (p.name if isinstance(p, StoredDocument) else "") for p in items})
    run.tokenizer, run.on_queue, run.yield_to = tokenizer, on_queue, yield_to
    run.ocr_max_pages, run.processes = ocr_max_pages, processes
    paths = items
    n = concurrency if backend.name in CONCURRENT_BACKENDS else 1
    if concurrency > n:
        logger.info("the %s backend runs one generation at a time; ignoring concurrency=%d",
                    backend.name, concurrency)
    run.begin(paths)
    if n <= 1:
        yield from run.sequential(paths)
    else:
        yield from run.concurrent(paths, n)


class _FolderRun:
    def __init__(self, backend: Backend, store: SessionStore, out_dir: Path, lang: str,
                 force: bool, max_new_tokens: int, on_progress: ProgressCallback | None,
                 cancel: threading.Event, password: str | None, max_mb: float,
                 names: dict[str, str]) -> None:
        self.backend, self.store, self.out_dir = backend, store, out_dir
        self.lang, self.force, self.max_new_tokens = lang, force, max_new_tokens
        self.on_progress, self.cancel = on_progress, cancel
        self.password, self.max_mb, self.names = password, max_mb, names
        self.rows: dict[str, DocResult] = {}
        self.finished = 0
        self.tokenizer = None
        self.on_queue: Callable[[int], None] | None = None
        self.yield_to: Callable[[], bool] | None = None
        self.ocr_max_pages: int | None = None
        self.processes: int | None = None

    def emit(self, kind: str, path: Path | str, **fields) -> None:
        if self.on_progress:
            self.on_progress(Progress(kind, str(path), self.finished, len(self.rows), **fields))

    def begin(self, paths: list[Item]) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for p in paths:  # a stored document is known by its name, not its key
            if isinstance(p, StoredDocument) and not self.names[str(p)]:
                self.names[str(p)] = (self.store.document_row(p.doc_id) or {}).get("name", "")
        self.rows = {str(p): DocResult(str(p), "pending", name=self.names[str(p)])
                     for p in paths}
        self.write_index()

    def write_index(self) -> None:
        write_atomic(self.out_dir / INDEX_NAME, render_index(list(self.rows.values())))

    def finish(self, result: DocResult) -> DocResult:
        result.name = self.names.get(result.path, "")
        self.rows[result.path] = result
        self.finished += 1
        self.write_index()
        logger.info("summary %s: %s in %.2fs", result.path, result.status, result.seconds)
        self.emit("done", result.path, result=result)
        return result

    def prepare(self, item: Item) -> _Job | DocResult:
        """Skip what is already summarised; otherwise ingest (or reload) the document."""
        start = time.perf_counter()
        key = str(item)
        self.emit("start", key)
        if isinstance(item, StoredDocument):
            row = self.store.document_row(item.doc_id)
            if row is None:
                return DocResult(key, "failed", error=f"{self.names[key] or key} is no longer "
                                 f"in the library; add the file again.")
            sha, doc_id, file_name = row["sha256"], item.doc_id, row["name"]
        else:
            try:
                sha = file_sha256(item)
            except OSError as e:
                return DocResult(key, "failed", error=f"{item}: cannot be read "
                                 f"({e.strerror or e}); check that it exists and is readable.")
            doc_id, file_name = self.store.find_document(sha), item.name
        name = self.names[key] or file_name
        if doc_id is not None and not self.force:
            row = self.store.document_row(doc_id) or {}
            stored = self.store.get_summary(doc_id, self.key_for(row.get("language") or "en"))
            if stored is not None:
                out = self.out_dir / output_name(name, sha)
                if not out.exists():  # e.g. a new --out folder: write the stored summary
                    write_atomic(out, stored["markdown"])
                return DocResult(key, "skipped", pages=row.get("pages"), output=str(out),
                                 overview=stored["meta"].get("overview", ""), doc_id=doc_id,
                                 seconds=time.perf_counter() - start,
                                 mode=stored["meta"].get("mode"))
        if isinstance(item, StoredDocument):
            doc = self.store.load_document(item.doc_id)
        else:
            try:
                doc, _ = load_or_ingest(self.store, item, sha, password=self.password,
                                        max_mb=self.max_mb, tokenizer=self.tokenizer,
                                        name=self.names[key] or None,
                                        ocr_max_pages=self.ocr_max_pages,
                                        processes=self.processes)
            except DocumentError as e:
                # An upload is stored under its hash; the user knows it by its own name.
                message = str(e).replace(item.name, name) if self.names[key] else str(e)
                logger.info("ingest %s: %s", item, message)
                return DocResult(key, "failed", error=message,
                                 seconds=time.perf_counter() - start)
        return _Job(key, doc, sha, self.key_for(doc.language), start, name,
                    doc.path if isinstance(item, StoredDocument) else key)

    def key_for(self, doc_language: str) -> str:
        return settings_key(self.backend, output_language(doc_language, self.lang),
                            self.max_new_tokens)

    def save(self, job: _Job, summary: Summary) -> DocResult:
        doc = job.doc
        label = f"{self.backend.name}: {Path(str(self.backend.model)).name}"
        markdown = render_markdown(doc, summary, label)
        out = self.out_dir / output_name(job.name, job.sha256)
        write_atomic(out, markdown)
        result = DocResult(job.path, "done", pages=len(doc.pages),
                           tokens_in=summary.tokens_in, tokens_out=summary.tokens_out,
                           seconds=time.perf_counter() - job.started, output=str(out),
                           overview=summary.overview, doc_id=doc.id, mode=summary.mode)
        self.store.save_summary(doc.id, job.key, markdown, {
            "path": job.file, "output": out.name, "overview": summary.overview,
            "language": summary.language, "mode": summary.mode, "groups": summary.groups,
            "steps": summary.steps, "tokens_in": summary.tokens_in,
            "tokens_out": summary.tokens_out, "seconds": round(result.seconds, 3),
            "backend": self.backend.name, "model": Path(str(self.backend.model)).name,
            "max_new_tokens": self.max_new_tokens, "prompt_version": PROMPT_VERSION,
            "loops": summary.loops}, checks=summary_checks(summary))
        return result

    def outcome(self, job: _Job, value: Summary | BaseException) -> DocResult:
        """The result for a finished job; errors that doom the whole run are raised."""
        if isinstance(value, Summary):
            return self.save(job, value)
        seconds = time.perf_counter() - job.started
        if isinstance(value, SummaryCancelled):
            return DocResult(job.path, "cancelled", pages=len(job.doc.pages),
                             seconds=seconds, error=str(value))
        if isinstance(value, DocchatError) and not isinstance(value, BackendUnavailable):
            return DocResult(job.path, "failed", pages=len(job.doc.pages),
                             seconds=seconds, error=str(value))
        raise value

    def summarize(self, job: _Job, backend: Backend, concurrency: int,
                  on_step: Callable[[int, int, str], None]) -> Summary:
        return summarize_document(job.doc, backend, self.lang,
                                  max_new_tokens=self.max_new_tokens, on_step=on_step,
                                  cancel=self.cancel, concurrency=concurrency,
                                  on_queue=self.on_queue, yield_to=self.yield_to)

    def sequential(self, paths: list[Item]) -> Iterator[DocResult]:
        for path in paths:
            if self.cancel.is_set():
                return
            prepared = self.prepare(path)
            if isinstance(prepared, DocResult):
                yield self.finish(prepared)
                continue

            def on_step(done: int, expected: int, label: str, path: str = str(path)) -> None:
                self.emit("step", path, step=done, steps=expected, label=label)

            try:
                value: Summary | BaseException = self.summarize(prepared, self.backend, 1,
                                                                on_step)
            except DocchatError as e:
                value = e
            yield self.finish(self.outcome(prepared, value))

    def concurrent(self, paths: list[Item], n: int) -> Iterator[DocResult]:
        backend = _Limited(self.backend, n)
        events: queue.Queue = queue.Queue()
        pending, in_flight = deque(paths), 0

        def work(job: _Job) -> None:
            def on_step(done: int, expected: int, label: str) -> None:
                events.put(("step", job, (done, expected, label)))

            try:
                events.put(("result", job, self.summarize(job, backend, n, on_step)))
            except BaseException as e:  # thread boundary: re-raised in the caller's thread
                events.put(("result", job, e))

        with ThreadPoolExecutor(max_workers=n, thread_name_prefix="summarize") as pool:
            try:
                while pending or in_flight:
                    while pending and in_flight < n and not self.cancel.is_set():
                        prepared = self.prepare(pending.popleft())
                        if isinstance(prepared, DocResult):
                            yield self.finish(prepared)
                        else:
                            pool.submit(work, prepared)
                            in_flight += 1
                    if not in_flight:
                        return
                    kind, job, value = events.get()
                    if kind == "step":
                        self.emit("step", job.path, step=value[0], steps=value[1],
                                  label=value[2])
                        continue
                    in_flight -= 1
                    yield self.finish(self.outcome(job, value))
            except BaseException:
                self.cancel.set()  # Ctrl-C or an abandoned iterator: stop the workers
                raise
