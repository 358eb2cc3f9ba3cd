from __future__ import annotations

import os

import pytest

from docchat.errors import DocumentError
from ingest import parallel

PARENT = os.getpid()


def square_with_pid(x: int) -> tuple[int, bool]:
    return x * x, os.getpid() != PARENT


def fail_in_child(x: int) -> int:
    if os.getpid() != PARENT:
        raise DocumentError(f"bad part {x}; fix it.")
    return x


def die_in_child(x: int) -> int:
    if os.getpid() != PARENT:
        os._exit(3)  # a crash (segfault, OOM kill) rather than an exception
    return -x


@pytest.fixture
def two(monkeypatch):
    monkeypatch.setenv("DOCCHAT_INGEST_PROCESSES", "2")


def test_first_job_runs_here_and_the_rest_in_children(two):
    assert parallel.processes(3) == 2
    out = parallel.run_split(square_with_pid, [(1,), (2,), (3,)])
    assert [v for v, _ in out] == [1, 4, 9]
    assert [child for _, child in out] == [False, True, True]


def test_child_errors_are_raised_here(two):
    with pytest.raises(DocumentError, match="bad part 2"):
        parallel.run_split(fail_in_child, [(1,), (2,)])


def test_dead_child_is_redone_here(two, caplog):
    assert parallel.run_split(die_in_child, [(1,), (2,)]) == [-1, -2]
    assert "redoing its part here" in caplog.text


def test_serial_when_disabled_or_one_core(monkeypatch):
    monkeypatch.setenv("DOCCHAT_INGEST_PROCESSES", "1")
    assert parallel.processes(4) == 1
    assert [c for _, c in parallel.run_split(square_with_pid, [(1,), (2,)])] == [False, False]
    monkeypatch.setenv("DOCCHAT_INGEST_PROCESSES", "2")
    monkeypatch.setattr(parallel, "ENABLED", False)
    assert parallel.processes(4) == 1
    monkeypatch.setattr(parallel, "ENABLED", True)
    monkeypatch.setattr(parallel, "_fork_context", lambda: None)  # e.g. Windows
    assert [c for _, c in parallel.run_split(square_with_pid, [(1,), (2,)])] == [False, False]


def fail_here(x: int) -> int:
    if os.getpid() == PARENT:
        raise DocumentError("the caller's part failed; fix it.")
    return x


def test_error_in_callers_part_stops_children(two):
    import multiprocessing

    with pytest.raises(DocumentError, match="caller's part failed"):
        parallel.run_split(fail_here, [(1,), (2,)])
    assert not multiprocessing.active_children()


def test_explicit_limit_then_limited_then_environment(monkeypatch):
    monkeypatch.setenv("DOCCHAT_INGEST_PROCESSES", "5")
    assert parallel.process_limit() == 5
    with parallel.limited(2):
        assert parallel.process_limit() == 2
        assert parallel.process_limit(3) == 3
        with parallel.limited(None):  # None: no change
            assert parallel.process_limit() == 2
    assert parallel.process_limit() == 5
    monkeypatch.delenv("DOCCHAT_INGEST_PROCESSES")
    assert parallel.process_limit() == parallel.cores()
    with parallel.limited(1):
        assert parallel.processes(4) == 1
