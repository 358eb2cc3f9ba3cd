from __future__ import annotations

from pathlib import Path

from docchat.config import Settings


def test_defaults_are_the_llamacpp_backend_and_data_dir():
    s = Settings.from_env({})
    assert s.backend == "llamacpp" and s.model is None
    assert s.db == s.data_dir / "docchat.db" and s.data_dir.name == "data"
    assert s.max_file_mb == 200.0
    assert s.backend_options() == {"model_path": None, "n_ctx": None, "n_threads": None,
                                   "n_threads_batch": None}


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
