"""`python -m docchat summarize DIR`: a Markdown summary of every document in a folder."""
from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import click

from docchat.config import Settings
from docchat.errors import DocchatError

logger = logging.getLogger(__name__)

BACKEND_NAMES = ["llamacpp", "hf", "transformers", "openai", "echo"]


class _Display:
    """A folder progress bar on stderr whose label shows the document in progress."""

    def __init__(self, total: int) -> None:
        self.tty = sys.stderr.isatty()
        self.bar = click.progressbar(length=total, label="Summarising", file=sys.stderr,
                                     show_eta=True, show_pos=True,
                                     item_show_func=lambda item: item or "")
        self.current = ""

    def __enter__(self) -> "_Display":
        self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.bar.__exit__(*exc)

    def __call__(self, event) -> None:
        name = Path(event.path).name
        if event.kind == "start":
            self._show(name)
        elif event.kind == "step":
            filled = round(10 * event.step / max(event.steps, 1))
            self._show(f"{name} [{'#' * filled}{'-' * (10 - filled)}] "
                       f"{event.step}/{event.steps} {event.label}")
        elif event.kind == "done":
            self.bar.update(1, "")

    def _show(self, text: str) -> None:
        self.bar.current_item = text[:60]
        self.bar.render_progress()

    def echo(self, line: str, err: bool = False) -> None:
        """Print a line without leaving half a progress bar in front of it."""
        if self.tty and not self.bar.is_hidden:
            click.echo("\r\033[K", nl=False, err=True)
        click.echo(line, err=err)


@click.command("summarize")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the summaries and index.md (default: data/summaries).")
@click.option("--glob", "pattern", default="*", show_default=True,
              help="Only files whose names match this pattern, e.g. '*.pdf'.")
@click.option("--backend", type=click.Choice(BACKEND_NAMES),
              help="Generation backend (default: llamacpp or $DOCCHAT_BACKEND).")
@click.option("--model", help="GGUF path, Hugging Face model id/path, or server model.")
@click.option("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
@click.option("--concurrency", type=click.IntRange(1, 64),
              help="Requests in flight with the openai backend (default 4); "
                   "in-process backends run one at a time.")
@click.option("--lang", type=click.Choice(["auto", "en", "zh"]), default="auto",
              show_default=True, help="Summary language; auto follows each document.")
@click.option("--max-tokens", "max_tokens", type=click.IntRange(16, None),
              help="Longest summary (and map note) in tokens (default 512).")
@click.option("--force", is_flag=True, help="Summarise again even if a summary is stored.")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path),
              help="SQLite database (default: data/docchat.db or $DOCCHAT_DB).")
@click.option("--password", help="Password for encrypted PDFs.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object per document instead of text.")
def summarize_command(folder, out_dir, pattern, backend, model, base_url, concurrency, lang,
                      max_tokens, force, db, password, as_json) -> None:
    """Summarise every PDF, text and Markdown file under FOLDER into Markdown files.

    Documents already summarised with the same settings are skipped (--force redoes
    them); an interrupted run continues where it stopped. Exit status: 0 when every
    document succeeded, 1 when any failed.
    """
    from docchat.backends import get_backend
    from docchat.library.store import SessionStore
    from docchat.summaries.batch import INDEX_NAME, find_documents, summarize_folder

    settings = Settings.from_env(db_path=db, backend=backend, model=model, base_url=base_url,
                                 max_new_tokens=max_tokens, max_concurrency=concurrency)
    out_dir = out_dir or settings.summaries_dir
    files = find_documents(folder, pattern, exclude=out_dir)
    if not files:
        raise click.UsageError(f"No supported files (.pdf, .txt, .md) under {folder} "
                               f"match --glob {pattern!r}.")
    results = []
    try:
        store = SessionStore.open(settings.db)
        engine = get_backend(settings.backend, **settings.backend_options())
        with _Display(len(files)) as display:
            for result in summarize_folder(
                    files, engine, store, out_dir, lang=lang, force=force,
                    concurrency=settings.max_concurrency,
                    max_new_tokens=settings.max_new_tokens, on_progress=display,
                    password=password, max_mb=settings.max_file_mb,
                    ocr_max_pages=settings.ocr_max_pages, processes=settings.ingest_processes):
                results.append(result)
                if as_json:
                    display.echo(json.dumps(result.to_dict(), ensure_ascii=False))
                elif result.status == "failed":
                    display.echo(f"failed   {result.path}: {result.error}", err=True)
                else:
                    display.echo(f"{result.status:<8} {result.path} -> {result.output} "
                                 f"({result.pages} pages, {result.seconds:.1f}s)")
    except KeyboardInterrupt:
        click.echo(f"\nInterrupted: {len(results)} finished summaries are kept in {out_dir}; "
                   f"run the same command again to continue.", err=True)
        sys.exit(130)
    except DocchatError as e:
        raise click.ClickException(str(e)) from None
    failed = sum(r.status == "failed" for r in results)
    if not as_json:
        counts = {s: sum(r.status == s for r in results) for s in ("done", "skipped", "failed")}
        click.echo(", ".join(f"{n} {s}" for s, n in counts.items()) +
                   f"; index: {Path(out_dir) / INDEX_NAME}", err=True)
    if failed:
        sys.exit(1)
