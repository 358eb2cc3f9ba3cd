"""Settings: one dataclass with every default, read from DOCCHAT_* variables."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EMBEDDERS = ("minilm", "use", "off")


def _default_data_dir() -> Path:
    return ROOT / "data"


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=_default_data_dir)
    db_path: Path | None = None  # default: data_dir / "docchat.db"
    backend: str = "llamacpp"
    model: str | None = None  # GGUF path, HF model id/path, or server model name
    model_revision: str | None = None
    base_url: str = "http://127.0.0.1:8000/v1"
    api_key: str | None = None
    n_ctx: int | None = None  # None: the model's trained context
    n_threads: int | None = None  # llama.cpp decode threads (alone: prompt threads too)
    n_threads_batch: int | None = None  # llama.cpp prompt threads; None: leave a core free
    max_concurrency: int = 4  # openai backend: requests in flight
    request_timeout: float = 120.0
    max_file_mb: float = 200.0
    history_turns: int = 3
    max_new_tokens: int = 512
    preset: str = "quick"
    # An answer that repeats itself is stopped there (finish reason "repetition");
    # DOCCHAT_STOP_LOOPS=0 lets it run to max_new_tokens.
    stop_loops: bool = True
    # Target seconds to the first token on in-process backends: the prompt is cut to what the
    # backend reads in that time at its measured prefill rate. 0 = always read the whole window.
    ttft_target: float = 15.0
    # The interface language: "auto" (the browser's: Chinese for a zh-* locale, else English),
    # "en" or "zh" (docchat.ui.i18n.pick_language). The sidebar's picker changes it per session.
    language: str = "auto"
    # Summaries page: folders under this root may be summarised from the browser (None: off).
    summaries_root: Path | None = None
    # Dense section scores beside BM25 when packing: "minilm" (all-MiniLM-L6-v2: English
    # documents only), "use" (the multilingual Universal Sentence Encoder: Chinese and English
    # documents and questions; ~4x slower packing, see bench/README.md) or "off" (BM25 alone).
    embedder: str = "minilm"
    # Worker processes that read a long PDF or index a large Chinese text (None: one per core;
    # 1: the calling process only).
    ingest_processes: int | None = None
    # Pages OCR'd at most per document (0 = no OCR).
    ocr_max_pages: int = 300

    def __post_init__(self) -> None:
        if self.embedder not in EMBEDDERS:
            raise ValueError(f"DOCCHAT_EMBEDDER={self.embedder!r}: choose one of "
                             f"{', '.join(EMBEDDERS)}.")

    @property
    def db(self) -> Path:
        return self.db_path or (self.data_dir / "docchat.db")

    @property
    def uploads_dir(self) -> Path:
        return self.data_dir / "uploads"

    @property
    def summaries_dir(self) -> Path:
        return self.data_dir / "summaries"

    def backend_options(self) -> dict:
        """Keyword arguments for get_backend(self.backend, ...)."""
        return {**self.model_options(), "stop_loops": self.stop_loops}

    def model_options(self) -> dict:
        if self.backend == "openai":
            return {"base_url": self.base_url, "model": self.model, "api_key": self.api_key,
                    "timeout": self.request_timeout, "max_concurrency": self.max_concurrency}
        if self.backend == "llamacpp":
            return {"model_path": self.model, "n_ctx": self.n_ctx, "n_threads": self.n_threads,
                    "n_threads_batch": self.n_threads_batch}
        if self.backend in ("hf", "transformers"):
            return {"path": self.model, "revision": self.model_revision}
        return {}

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides) -> "Settings":
        """Build settings from DOCCHAT_<FIELD> variables, then explicit overrides."""
        env = os.environ if environ is None else environ
        values: dict = {}
        for f in fields(cls):
            raw = env.get(f"DOCCHAT_{f.name.upper()}")
            if raw is None or raw == "":
                continue
            values[f.name] = _convert(f.name, raw)
        # DOCCHAT_DB is the documented short name of db_path; DOCCHAT_MODEL_PATH is the
        # older name of DOCCHAT_MODEL, still accepted.
        if env.get("DOCCHAT_DB"):
            values["db_path"] = Path(env["DOCCHAT_DB"])
        if env.get("DOCCHAT_MODEL_PATH") and "model" not in values:
            values["model"] = env["DOCCHAT_MODEL_PATH"]
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


_INTS = {"n_ctx", "n_threads", "n_threads_batch", "max_concurrency", "history_turns",
         "max_new_tokens", "ingest_processes", "ocr_max_pages"}
_FLOATS = {"request_timeout", "max_file_mb", "ttft_target"}
_PATHS = {"data_dir", "db_path", "summaries_root"}


def _convert(name: str, raw: str):
    if name in _INTS:
        return int(raw)
    if name in _FLOATS:
        return float(raw)
    if name in _PATHS:
        return Path(raw)
    if name == "embedder":
        return raw.strip().lower()
    if name == "stop_loops":
        return raw.strip().lower() not in ("0", "false", "no", "off")
    return raw
