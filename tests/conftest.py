"""Shared fixtures: an in-memory store, an isolated data dir, the echo backend.

Also a watchdog for hung tests. pytest-timeout's signal method (pytest.ini) fails a
test that runs past its timeout, with every thread's stack, and the run goes on, but
only once its SIGALRM handler runs in the main thread, between two bytecodes. A main
thread blocked in C code that retries on EINTR, or with SIGALRM delivered elsewhere,
never gets there, and the whole run hangs until CI's limit. The watchdog re-sends
SIGALRM to the main thread itself a little after the timeout, and if that does not
end the test either, dumps every thread's stack and exits with status 1 (as
pytest-timeout's thread method does), so a hang always ends the run with stacks.
"""
from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlite_utils import Database

from docchat.backends.echo import EchoBackend
from docchat.library.store import SessionStore

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU; skipped where none is")
    config.addinivalue_line("markers", "browser: drives a real chromium through playwright")


WATCHDOG_RESEND_S = 10  # after the timeout: re-send SIGALRM to the main thread
WATCHDOG_EXIT_S = 60  # after the timeout: dump stacks and exit


class _Watchdog:
    def __init__(self) -> None:
        self.item, self.started, self.timeout, self.resent = None, 0.0, 0.0, False
        self.lock = threading.Lock()
        self.main = threading.main_thread().ident
        threading.Thread(target=self._run, name="docchat-test-watchdog", daemon=True).start()

    def start(self, item, timeout: float) -> None:
        with self.lock:
            self.item, self.started, self.timeout, self.resent = (
                item, time.monotonic(), timeout, False)

    def stop(self) -> None:
        with self.lock:
            self.item = None

    def _run(self) -> None:
        while True:
            time.sleep(1.0)
            with self.lock:
                item, over = self.item, time.monotonic() - self.started - self.timeout
                if item is None or over < WATCHDOG_RESEND_S:
                    continue
                if not self.resent:
                    self.resent = True
                    if callable(signal.getsignal(signal.SIGALRM)):  # pytest-timeout's handler
                        signal.pthread_kill(self.main, signal.SIGALRM)
                    continue
                if over < WATCHDOG_EXIT_S:
                    continue
            capture = item.config.pluginmanager.getplugin("capturemanager")
            if capture is not None:  # write to the real stderr, not pytest's capture file
                capture.suspend_global_capture(in_=True)
            sys.stderr.write(f"\n+++ {item.nodeid} hung: {over:.0f}s past its {self.timeout:g}s "
                             f"timeout and deaf to SIGALRM; every thread's stack, then exit +++\n")
            sys.stderr.flush()
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
            sys.stderr.flush()
            os._exit(1)


_watchdog: _Watchdog | None = None


def _timeout_of(item) -> float:
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    return float(item.config.getoption("timeout", None) or 0)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _watchdog
    timeout = _timeout_of(item)
    if timeout > 0 and hasattr(signal, "pthread_kill"):
        _watchdog = _watchdog or _Watchdog()
        _watchdog.start(item, timeout)
    try:
        yield
    finally:
        if _watchdog is not None:
            _watchdog.stop()


def pytest_collection_modifyitems(config, items):
    try:
        import torch
        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if has_gpu:
        return
    skip = pytest.mark.skip(reason="no CUDA GPU on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def env(tmp_path, monkeypatch):
    """Point docchat's data and database at a temporary folder for every test."""
    monkeypatch.setenv("DOCCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DOCCHAT_DB", str(tmp_path / "data" / "docchat.db"))
    monkeypatch.delenv("DOCCHAT_BACKEND", raising=False)
    return tmp_path


@pytest.fixture
def db() -> Database:
    return Database(memory=True)


@pytest.fixture
def store(db) -> SessionStore:
    return SessionStore(db)


@pytest.fixture
def echo_backend() -> EchoBackend:
    return EchoBackend()


@pytest.fixture
def data_dir() -> Path:
    return DATA
