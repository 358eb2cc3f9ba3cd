from __future__ import annotations

from pathlib import Path

import pytest

from docchat.config import Settings


def test_defaults_are_the_llamacpp_backend_and_data_dir():
    s = Settings.from_env({})
    assert s.backend == "llamacpp" and s.model is None
    assert s.db == s.data_dir / "docchat.db" and s.data_dir.name == "data"
    assert s.max_file_mb == 200.0
    assert s.backend_options() == {"model_path": None, "n_ctx": None, "n_threads": None,
                                   "n_threads_batch": None, "stop_loops": True}


def test_environment_and_overrides():
    env = {"DOCCHAT_BACKEND": "openai", "DOCCHAT_BASE_URL": "http://127.0.0.1:9/v1",
           "DOCCHAT_MODEL": "glm", "DOCCHAT_DB": "/tmp/x.db", "DOCCHAT_MAX_CONCURRENCY": "8",
           "DOCCHAT_MAX_FILE_MB": "1.5"}
    s = Settings.from_env(env, model="other", backend=None)
    assert s.backend == "openai" and s.model == "other"
    assert s.db == Path("/tmp/x.db") and s.max_concurrency == 8 and s.max_file_mb == 1.5
    assert s.backend_options()["base_url"] == "http://127.0.0.1:9/v1"


def test_model_path_alias():
    s = Settings.from_env({"DOCCHAT_MODEL_PATH": "/m.gguf"})
    assert s.backend_options()["model_path"] == "/m.gguf"


def test_embedder_ingest_processes_and_ocr_switches():
    s = Settings.from_env({})
    assert (s.embedder, s.ingest_processes, s.ocr_max_pages) == ("minilm", None, 300)
    s = Settings.from_env({"DOCCHAT_EMBEDDER": "OFF", "DOCCHAT_INGEST_PROCESSES": "3",
                           "DOCCHAT_OCR_MAX_PAGES": "0"})
    assert (s.embedder, s.ingest_processes, s.ocr_max_pages) == ("off", 3, 0)
    with pytest.raises(ValueError, match="DOCCHAT_EMBEDDER"):
        Settings.from_env({"DOCCHAT_EMBEDDER": "bert"})


def test_embedder_off_switches_the_default_embedder_off(monkeypatch):
    from docchat.context import embeddings

    monkeypatch.setattr(embeddings.DEFAULT, "switched_on", True)
    assert embeddings.configure(Settings.from_env({"DOCCHAT_EMBEDDER": "off"})) is \
        embeddings.DEFAULT
    assert not embeddings.DEFAULT.enabled
    embeddings.configure(Settings.from_env({}))
    assert embeddings.DEFAULT.switched_on


def test_ingest_settings_reach_load_document(monkeypatch, tmp_path):
    import ingest
    from docchat.library import documents as library
    from docchat.library.store import SessionStore
    from docchat.library.uploads import ingest_upload
    from ingest import parallel

    seen = []
    original = ingest.load_document

    def spy(path, **kw):
        seen.append((kw["ocr_max_pages"], parallel.process_limit()))
        return original(path, **kw)

    monkeypatch.setattr(ingest, "load_document", spy)
    store = SessionStore.open(tmp_path / "d.db")
    ingest_upload(store, "a.txt", b"Hello there.\n", tmp_path / "up", 1.0,
                  ocr_max_pages=0, processes=3)
    (tmp_path / "b.txt").write_text("Another text.\n")
    assert library.ingest_path(store, tmp_path / "b.txt", ocr_max_pages=7, processes=2).ok
    assert seen == [(0, 3), (7, 2)]


def test_stop_loops_is_on_unless_turned_off(monkeypatch):
    from docchat.backends import get_backend

    assert Settings.from_env({}).stop_loops
    off = Settings.from_env({"DOCCHAT_STOP_LOOPS": "0", "DOCCHAT_BACKEND": "echo"})
    assert not off.stop_loops and off.backend_options() == {"stop_loops": False}
    assert get_backend("echo", **off.backend_options()).repetition_policy is None
    assert get_backend("echo").repetition_policy is not None
