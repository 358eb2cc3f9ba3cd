"""Split CPU-bound ingestion work across cores with forked worker processes.

The parent runs the first job itself and forks one child per other job. Fork (not spawn
or forkserver) never re-imports ``__main__``, so callers need no ``if __name__ ==
"__main__"`` guard, and children start in milliseconds with every module already loaded
(PDFium, jieba's dictionary). Where fork is unavailable (Windows), in a daemonic process,
or when a child dies, the job runs in the parent instead: results never depend on the path.
Callers size `jobs` with processes(). The process count is, first to last: the `limit`
argument of processes(), the innermost `with limited(n)` (load_document(processes=n) uses
it), DOCCHAT_INGEST_PROCESSES, one per core.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")
# Longest a child may take before its job is redone in the parent (a stuck child is killed).
CHILD_TIMEOUT_S = 600.0
# Set to False (or DOCCHAT_INGEST_PROCESSES=1) to run everything in the calling process.
ENABLED = True
ENV = "DOCCHAT_INGEST_PROCESSES"
# The process count set by limited() for this thread/context (None: not set).
_LIMIT: ContextVar[int | None] = ContextVar("ingest_processes", default=None)


def cores() -> int:
    """CPU cores this process may use (affinity-aware), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _fork_context() -> Any | None:
    if sys.platform == "win32" or "fork" not in multiprocessing.get_all_start_methods():
        return None
    return multiprocessing.get_context("fork")


@contextmanager
def limited(limit: int | None) -> Iterator[None]:
    """Within the block, ingestion uses at most `limit` processes (None or 0: no change)."""
    if not limit or limit < 0:
        yield
        return
    token = _LIMIT.set(limit)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def process_limit(limit: int | None = None) -> int:
    """The most processes ingestion may use: `limit`, else limited()'s, else
    DOCCHAT_INGEST_PROCESSES, else one per core (values below 1 count as not set)."""
    if limit is not None and limit > 0:
        return limit
    chosen = _LIMIT.get()
    if chosen is not None:
        return chosen
    env = os.environ.get(ENV, "").strip()
    return int(env) if env.isdecimal() and int(env) > 0 else cores()


def processes(wanted: int, limit: int | None = None) -> int:
    """How many processes run_split would use for `wanted` jobs (1 = serial); `limit` as
    for process_limit()."""
    limit = process_limit(limit)
    if not ENABLED or _fork_context() is None or multiprocessing.current_process().daemon:
        return 1  # daemonic processes (pool workers) may not have children
    if threading.current_thread() is not threading.main_thread():
        # A fork copies only this thread: a lock another thread holds (PDFium's, logging's)
        # would stay locked forever in the child. Servers (Streamlit) ingest serially.
        return 1
    return max(1, min(wanted, limit))


def _child(fn: Callable[..., Any], args: tuple, conn: Any) -> None:
    try:
        result = ("ok", fn(*args))
    except BaseException as e:  # process boundary: hand the error to the parent to re-raise
        result = ("error", e)
    try:
        conn.send(result)
    except Exception as e:  # unpicklable error or result: say what it was
        conn.send(("error", RuntimeError(f"{type(e).__name__}: {e}")))
    finally:
        conn.close()


def run_split(fn: Callable[..., T], jobs: Sequence[tuple]) -> list[T]:
    """[fn(*job) for job in jobs], the first in this process and the rest in forked children.

    `fn` must be a module-level function; results and exceptions travel back pickled.
    """
    if len(jobs) <= 1 or processes(len(jobs)) <= 1:
        return [fn(*job) for job in jobs]
    ctx = _fork_context()
    started = []
    for job in jobs[1:]:
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(fn, job, send), daemon=True)
        try:
            proc.start()
        except OSError as e:  # out of processes or memory: do it here
            logger.warning("could not fork an ingestion worker (%s); running serially", e)
            recv.close()
            send.close()
            started.append((job, None, None))
            continue
        send.close()
        started.append((job, proc, recv))
    try:
        results = [fn(*jobs[0])]
    except BaseException:
        for _, proc, recv in started:  # the caller's part failed: the rest is moot
            if proc is not None:
                recv.close()
                proc.kill()
                proc.join()
        raise
    for job, proc, recv in started:
        results.append(_collect(fn, job, proc, recv))
    return results


def _collect(fn: Callable[..., T], job: tuple, proc: Any, recv: Any) -> T:
    if proc is None:
        return fn(*job)
    status, value = "lost", "gave no answer"
    try:
        if recv.poll(CHILD_TIMEOUT_S):
            status, value = recv.recv()
        else:
            value = "timed out"
    except (EOFError, OSError) as e:
        value = f"died ({e or type(e).__name__})"
    finally:
        recv.close()
        if status != "ok" and proc.is_alive():
            proc.kill()
        proc.join()
    if status == "ok":
        return value
    if status == "error":
        raise value
    logger.warning("ingestion worker %s (exit code %s); redoing its part here", value,
                   proc.exitcode)
    return fn(*job)
