"""What the commands share: options, settings, the store, loading documents and backends."""
from __future__ import annotations

import json
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import click

from docchat.config import Settings
from docchat.context import embeddings
from docchat.library.documents import IngestResult, ingest_path, supported_files
from docchat.library.store import SessionStore

db_option = click.option("--db", type=click.Path(dir_okay=False, path_type=Path),
                         help="SQLite database (default: data/docchat.db or $DOCCHAT_DB).")
password_option = click.option("--password", help="Password for encrypted PDFs.")
history_option = click.option(
    "--history", "history_file", type=click.File("r", encoding="utf-8"),
    help='JSON list of earlier turns: [{"role": "user", "content": "..."}, ...]')
json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print JSON for scripts instead of text.")


def backend_options(f):
    f = click.option("--backend", type=click.Choice(["llamacpp", "hf", "transformers", "openai",
                                                      "echo"]),
                     help="Generation backend (default: llamacpp or $DOCCHAT_BACKEND).")(f)
    f = click.option("--model", help="GGUF path, Hugging Face model id/path, or server model.")(f)
    f = click.option("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")(f)
    return f


def _settings(db: Path | None = None, **overrides) -> Settings:
    """Settings from DOCCHAT_* and the options; the embedder switch takes effect here."""
    settings = Settings.from_env(db_path=db, **overrides)
    embeddings.configure(settings)
    return settings


def _open_store(settings: Settings) -> SessionStore:
    return SessionStore.open(settings.db)


def ingest_all(store: SessionStore, paths, settings: Settings, password: str | None,
               tokenizer=None, show_progress: bool = True,
               on_ocr_progress=None) -> list[IngestResult]:
    """Ingest every file (folders expanded); a bad file never stops the rest."""
    files = list(supported_files(paths))
    results: list[IngestResult] = []
    if not files:
        raise click.UsageError("No supported files (.pdf, .txt, .md) found in the given paths.")
    with click.progressbar(files, label="Ingesting", file=sys.stderr,
                           show_pos=True, item_show_func=lambda p: p.name if p else "",
                           hidden=not show_progress or len(files) < 2) as bar:
        for f in bar:
            results.append(ingest_path(store, f, password=password, max_mb=settings.max_file_mb,
                                       tokenizer=tokenizer, on_ocr_progress=on_ocr_progress,
                                       ocr_max_pages=settings.ocr_max_pages,
                                       processes=settings.ingest_processes))
    return results


def _print_ocr_progress(p) -> None:
    """One stderr line per OCR'd page: "OCR: page 3 (2/10), 12s, about 40s left"."""
    if p.done == 0:
        click.echo(f"OCR: {p.total} page(s) without a text layer...", err=True)
        return
    left = f", about {p.eta_s:.0f}s left" if p.eta_s else ""
    click.echo(f"OCR: page {p.page} ({p.done}/{p.total}), {p.elapsed_s:.0f}s{left}", err=True)


@contextmanager
def waiting(label: str, every: float = 2.0, out=None):
    """Say on stderr what is being waited for: "label..." at once; on a terminal the seconds
    so far every `every` s on the same line; "label: 12.3 s" when it is done."""
    out = out or sys.stderr
    tty = hasattr(out, "isatty") and out.isatty()
    start, done = time.perf_counter(), threading.Event()

    def tick() -> None:
        while not done.wait(every):
            out.write(f"\r{label}... {time.perf_counter() - start:.0f} s")
            out.flush()

    out.write(f"{label}...")
    out.write("" if tty else "\n")
    out.flush()
    ticker = threading.Thread(target=tick, daemon=True) if tty else None
    if ticker is not None:
        ticker.start()
    try:
        yield
    finally:
        done.set()
        if ticker is not None:
            ticker.join()
        out.write(f"{chr(13) if tty else ''}{label}: {time.perf_counter() - start:.1f} s\n")
        out.flush()


def _load_backend(settings: Settings):
    from docchat.backends import get_backend

    with waiting(f"Loading the {settings.backend} backend"
                 + (f" ({settings.model})" if settings.model else "")):
        return get_backend(settings.backend, **settings.backend_options())


def _documents_for(paths, settings: Settings, store: SessionStore, password, tokenizer=None):
    with waiting("Reading the documents"):
        results = ingest_all(store, paths, settings, password, tokenizer=tokenizer,
                             show_progress=False, on_ocr_progress=_print_ocr_progress)
    failed = [r for r in results if r.error]
    if failed:
        raise click.ClickException("; ".join(r.error for r in failed))
    return [r.document for r in results]


def _read_history(history_file) -> list:
    from docchat.backends import Message

    if history_file is None:
        return []
    try:
        raw = json.load(history_file)
        return [Message(role=t["role"], content=t["content"]) for t in raw]
    except (ValueError, KeyError, TypeError) as e:
        raise click.BadParameter(
            f'--history must be a JSON list of {{"role", "content"}} objects ({e}).') from None
