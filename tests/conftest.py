"""Shared fixtures: an in-memory store, an isolated data dir, the echo backend."""
from __future__ import annotations

from pathlib import Path

import pytest
from sqlite_utils import Database

from docchat.backends.echo import EchoBackend
from docchat.store import SessionStore

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU; skipped where none is")
    config.addinivalue_line("markers", "browser: drives a real chromium through playwright")


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
