"""`python -m docchat verify PATHS... -q Q --answer-file F`: check any answer text against the
context the packer would give the model for Q; every statement supported, partly or not found,
with the page that supports it. Needs no model: the echo backend's counter sizes the pack
unless --backend names one."""
from __future__ import annotations

import json
from pathlib import Path

import click

from docchat.errors import DocchatError

DEFAULT_WINDOW = 8192  # the echo counter's window when neither --budget nor --backend is given
ANSWER_RESERVE = 512  # tokens kept free for the answer, as `docchat pack` keeps by default
STATUS_WORDS = {"supported": "found", "partly": "partly", "not_found": "NOT FOUND",
                "exempt": "-"}


def _check(cli_helpers, paths, question, answer_text, budget, backend, db, password, history):
    """The AnswerCheck of answer_text against the pack for question, and the documents."""
    from docchat.context.claims import check_answer, sources_for
    from docchat.context.embeddings import DEFAULT
    from docchat.context.packing import pack as pack_context

    settings = cli_helpers._settings(db, backend=backend)
    store = cli_helpers._open_store(settings)
    if backend:
        engine = cli_helpers._load_backend(settings)
    else:
        from docchat.backends.echo import EchoBackend

        engine = EchoBackend(context_window=budget or DEFAULT_WINDOW)
    documents = cli_helpers._documents_for(paths, settings, store, password)
    window, reserve = (budget, 0) if budget else (engine.context_window, ANSWER_RESERVE)
    packed = pack_context(documents, question, engine, history=history,
                          search=store.searcher([d.id for d in documents]),
                          max_new_tokens=reserve, context_window=window,
                          history_turns=settings.history_turns, store=store)
    check = check_answer(answer_text, sources_for(packed, documents),
                         embedder=DEFAULT if settings.embedder != "off" else None)
    return check, packed


def _table(check) -> str:
    rows = []
    for s in check.statements:
        where = f"{s.document} p. {s.label}" if s.label else (s.document or "")
        cited = f" (cited p. {', '.join(s.cited)}: {s.citation})" if s.cited else ""
        text = " ".join(s.text.split())
        text = text if len(text) <= 70 else text[:69] + "…"
        why = f" [{s.reason}]" if s.reason and s.status != "supported" else ""
        rows.append(f"{STATUS_WORDS[s.status]:<9} {s.score:5.2f}  {where:<24} {text}{cited}{why}")
    rows.append(f"{check.supported} of {check.total} statements found in the documents"
                f"{f' ({check.partly} partly)' if check.partly else ''}")
    return "\n".join(rows)


@click.command("verify")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-q", "--question", required=True, help="The question the answer answers.")
@click.option("--answer-file", "answer_file", required=True,
              type=click.File("r", encoding="utf-8"),
              help="The answer to check (a file, or - for stdin).")
@click.option("--budget", type=int,
              help="Prompt tokens of the pack (default: 8192 minus 512 for the answer, or the "
                   "--backend's window).")
@click.option("--backend", type=click.Choice(["llamacpp", "hf", "transformers", "openai",
                                              "echo"]),
              help="Pack with this backend's token counter and window (default: no model "
                   "needed, the echo counter).")
@click.option("--history", "history_file", type=click.File("r", encoding="utf-8"),
              help='JSON list of earlier turns: [{"role": "user", "content": "..."}, ...]')
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path),
              help="SQLite database (default: data/docchat.db or $DOCCHAT_DB).")
@click.option("--password", help="Password for encrypted PDFs.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts instead of text.")
def verify_command(paths, question, answer_file, budget, backend, history_file, db, password,
                   as_json) -> None:
    """Check an answer against the passages docchat would give the model for a question:
    each statement supported, partly supported or not found, with its page."""
    import docchat.cli.common as helpers

    answer_text = answer_file.read()
    history = helpers._read_history(history_file)
    try:
        check, packed = _check(helpers, paths, question, answer_text, budget, backend, db,
                               password, history)
    except DocchatError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        out = check.to_dict()
        out["tokens"] = packed.tokens
        click.echo(json.dumps(out, ensure_ascii=False))
    else:
        click.echo(_table(check))


def answer_checks(answer_text: str, packed, documents) -> dict:
    """`docchat ask --json`'s "checks": the answer's statements against its own pack."""
    from docchat.context.claims import check_answer, sources_for
    from docchat.context.embeddings import DEFAULT

    return check_answer(answer_text, sources_for(packed, documents),
                        embedder=DEFAULT if DEFAULT.switched_on else None).to_dict()


def evidence_rows(documents, packed, question: str) -> list[dict]:
    """`docchat pack --json`'s "evidence": the sentences in the order the app shows them."""
    from docchat.context.evidence import find_evidence

    return [{"text": s.text, "document": e.doc_name, "page": s.number, "label": s.page,
             "heading": e.heading, "section": e.section, "score": s.score}
            for e in find_evidence(documents, packed.sections, question) for s in e.sentences]
