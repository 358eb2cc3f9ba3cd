"""Command line: python -m docchat ingest | pack | ask | verify | compare | summarize."""
from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

import click

from docchat.cli.common import (
    _documents_for,
    _load_backend,
    _open_store,
    _print_ocr_progress,
    _read_history,
    _settings,
    backend_options,
    db_option,
    history_option,
    ingest_all,
    json_option,
    password_option,
)
from docchat.cli.compare import compare_command
from docchat.cli.summarize import summarize_command
from docchat.cli.verify import answer_checks, evidence_rows, verify_command
from docchat.errors import DocchatError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", is_flag=True, help="Log one line per step to stderr.")
@click.version_option("0.1.0", prog_name="docchat")
def cli(verbose: bool) -> None:
    """docchat: ask questions of long documents with a local LLM."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@db_option
@password_option
@click.option("--max-mb", type=float, help="Refuse files larger than this (default 200 MB).")
@click.option("--text", "show_text", is_flag=True,
              help="Print each page's cleaned text after a [p. N] line.")
@json_option
def ingest(paths, db, password, max_mb, show_text, as_json) -> None:
    """Read PDF, text and Markdown files (or folders of them) into the database."""
    settings = _settings(db, max_file_mb=max_mb)
    store = _open_store(settings)
    results = ingest_all(store, paths, settings, password, on_ocr_progress=_print_ocr_progress)
    for r in results:
        if as_json:
            click.echo(json.dumps(r.to_dict(), ensure_ascii=False))
        elif r.error:
            click.echo(f"error: {r.error}", err=True)
        else:
            d = r.document
            again = " (already ingested)" if r.reused else ""
            click.echo(f"{r.path}: {len(d.pages)} pages, {d.tokens:,} tokens ({d.tokenizer}), "
                       f"{len(d.sections)} sections, {r.seconds:.2f}s{again}")
            for w in d.warnings:
                click.echo(f"  warning: {w}", err=True)
        if show_text and r.document is not None:
            for p in r.document.pages:
                click.echo(f"[{p.marker}]")
                click.echo(p.text)
    if any(r.error for r in results):
        sys.exit(1)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-q", "--question", required=True, help="The question to answer.")
@backend_options
@click.option("--preset", default="raw", show_default=True,
              help="Pacing and generation preset: quick, long, code, smooth, raw.")
@click.option("--max-new-tokens", type=int, help="Override the preset's answer length.")
@click.option("--ttft-target", type=float,
              help="Seconds to the first token: read only as much context as the backend "
                   "reads in that time (default 15 or $DOCCHAT_TTFT_TARGET; 0 = whole window).")
@click.option("--whole-window", is_flag=True, help="Read the whole context window.")
@history_option
@db_option
@password_option
@json_option
def ask(paths, question, backend, model, base_url, preset, max_new_tokens, ttft_target,
        whole_window, history_file, db, password, as_json) -> None:
    """Answer a question from the documents, streaming the answer to stdout.

    While the backend reads the context, stderr shows how far it is."""
    from docchat.answer.qa import ask as ask_question

    settings = _settings(db, backend=backend, model=model, base_url=base_url,
                         ttft_target=ttft_target)
    started = time.perf_counter()
    try:
        store = _open_store(settings)
        engine = _load_backend(settings)
        documents = _documents_for(paths, settings, store, password)
        history = _read_history(history_file)
        doc_ids = [d.id for d in documents]
        answer = ask_question(documents, question, engine, history=history, preset=preset,
                              overrides={"max_new_tokens": max_new_tokens} if max_new_tokens
                              else None,
                              search=store.searcher(doc_ids),
                              started_at=started, ttft_target=settings.ttft_target,
                              whole_window=whole_window)
        progress = _ProgressLine(started)
        answer.on_progress = progress.show
        try:
            for chunk in answer:
                progress.end()
                if not as_json:
                    click.echo(chunk, nl=False)
        except KeyboardInterrupt:
            answer.stop()
        finally:
            progress.end()
        if not as_json:
            click.echo()
    except DocchatError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        m = answer.metrics
        click.echo(json.dumps({
            "answer": answer.text, "backend": engine.name, "model": engine.model,
            "prompt_tokens": m.get("prompt_tokens"),
            "completion_tokens": m.get("completion_tokens"),
            "ttft_ms": m.get("model", {}).get("ttft_ms"),
            "decode_tokens_per_s": m.get("decode_tokens_per_s"),
            "stopped": answer.stopped, "preset": preset, "metrics": m,
            "pages": _named(answer.packed.pages, documents),
            "checks": answer_checks(answer.text, answer.packed, documents),
        }, ensure_ascii=False))


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-q", "--question", required=True, help="The question to pack for.")
@click.option("--budget", type=int,
              help="Prompt tokens allowed (default: the backend's window minus the answer).")
@click.option("--max-new-tokens", type=int, default=512, show_default=True,
              help="Tokens kept free for the answer when --budget is not given.")
@history_option
@backend_options
@db_option
@password_option
@json_option
def pack(paths, question, budget, max_new_tokens, history_file, backend, model, base_url, db,
         password, as_json) -> None:
    """Show the context docchat would give the model for a question."""
    from docchat.context.packing import pack as pack_context

    settings = _settings(db, backend=backend, model=model, base_url=base_url)
    try:
        store = _open_store(settings)
        engine = _load_backend(settings)
        documents = _documents_for(paths, settings, store, password)
        doc_ids = [d.id for d in documents]
        window, reserve = ((budget, 0) if budget else (engine.context_window, max_new_tokens))
        packed = pack_context(documents, question, engine, history=_read_history(history_file),
                              search=store.searcher(doc_ids),
                              max_new_tokens=reserve, context_window=window,
                              history_turns=settings.history_turns, store=store)
    except DocchatError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        click.echo(json.dumps({
            "budget": window - reserve, "tokens": packed.tokens, "tokenizer": packed.tokenizer,
            "whole": packed.whole, "documents": [d.name for d in documents],
            "pages": _named(packed.pages, documents),
            "sections": _named(packed.sections, documents),
            "dropped": vars(packed.dropped), "text": packed.text,
            "evidence": evidence_rows(documents, packed, question),
        }, ensure_ascii=False))
    else:
        click.echo(packed.text)
        click.echo(f"\n-- {packed.tokens} of {window - reserve} prompt tokens ({packed.tokenizer}),"
                   f" {len(packed.sections)} sections, {len(packed.pages)} pages"
                   f"{', everything fits' if packed.whole else ''}", err=True)


class _ProgressLine:
    """The backend's reading progress on stderr: one line rewritten in place on a terminal,
    else a line at most every 2 s (and the last one)."""

    def __init__(self, started: float) -> None:
        self.started, self.tty = started, sys.stderr.isatty()
        self.last_at, self.open, self.ended = 0.0, False, False

    def show(self, progress) -> None:
        from docchat.ui.i18n import progress_line

        if self.ended:
            return
        now = time.perf_counter()
        final = progress.total and progress.done >= progress.total
        if not self.tty and not final and now - self.last_at < 2.0:
            return
        self.last_at = now
        line = progress_line(progress, now - self.started)
        if self.tty:
            click.echo("\r\x1b[2K" + line, nl=False, err=True)
            self.open = True
        else:
            click.echo(line, err=True)

    def end(self) -> None:
        if self.open:
            click.echo("\r\x1b[2K", nl=False, err=True)
        self.open, self.ended = False, True


def _named(pairs, documents) -> list[list]:
    """(doc id, n) pairs from the packer as [file name, n] for people and scripts."""
    names = {d.id: d.name for d in documents}
    return [[names.get(k, k), n] for k, n in pairs]


cli.add_command(summarize_command)
cli.add_command(verify_command)
cli.add_command(compare_command)


def main() -> None:
    cli(prog_name="python -m docchat")

