"""`python -m docchat compare OLD NEW`: what changed between two versions of a document."""
from __future__ import annotations

import html
import json
from pathlib import Path

import click

from docchat.comparison.align import Comparison, Pair, compare
from docchat.comparison.redline import shortened, to_html, to_text
from docchat.config import Settings
from docchat.errors import DocchatError, DocumentError
from docchat.library.documents import ingest_path
from docchat.library.store import SessionStore

SAME = "No differences: the two documents have the same sections and the same text."
DIFFERENT = ("These look like different documents: only {share:.0%} of their text aligned "
             "(and {overlap:.0%} of the shorter one's phrases recur in the other). Compare two "
             "versions of one document; --json lists every pair anyway.")


PART = ("(the other version holds this text inside a longer section; the changes are shown "
        "with that section)")


def pages(pair_side) -> str:
    if pair_side is None:
        return "–"
    first, last = pair_side.pages[0], pair_side.pages[-1]
    return f"p. {first}" if first == last else f"p. {first}-{last}"


def describe(c: Comparison) -> str:
    """The headline: counts per status, share aligned, time."""
    s = c.summary()
    counts = ", ".join(f"{s[k]} {k}" for k in ("changed", "moved", "added", "removed",
                                               "unchanged"))
    return f"{c.old_name} -> {c.new_name}: {counts} (aligned {c.aligned:.0%}, {c.seconds:.2f} s)"


def text_report(c: Comparison) -> str:
    """Changed pairs with their pages and a word redline; the unchanged ones counted."""
    lines = [describe(c)]
    if c.verdict == "same":
        return "\n".join(lines + [SAME])
    if c.verdict == "different":
        return "\n".join(lines + [DIFFERENT.format(share=c.aligned, overlap=c.overlap)])
    for p in c.changed:
        lines.append("")
        lines.append(f"{p.status:<9} {p.heading}  (old {pages(p.old)}, new {pages(p.new)})")
        if p.old and p.new and p.old.heading != p.new.heading:
            lines.append(f"          was: {p.old.heading}")
        if p.ops:
            lines.append("    " + to_text(shortened(p.ops)).replace("\n", "\n    "))
        elif p.old and p.new and p.status == "changed":
            lines.append("    " + PART)
    return "\n".join(lines)


def html_report(c: Comparison) -> str:
    """A standalone HTML page: each change redlined with its pages, unchanged folded."""
    e = html.escape
    body = [f"<h1>{e(c.old_name)} → {e(c.new_name)}</h1>", f"<p>{e(describe(c))}</p>"]
    if c.verdict == "same":
        body.append(f"<p>{e(SAME)}</p>")
    elif c.verdict == "different":
        body.append(f"<p><strong>{e(DIFFERENT.format(share=c.aligned, overlap=c.overlap))}"
                    "</strong></p>")
    else:
        for p in c.changed:
            body.append(_html_pair(p))
    unchanged = [p for p in c.pairs if p.status == "unchanged"]
    if unchanged:
        items = "".join(f"<li>{e(p.heading)} (old {e(pages(p.old))}, new {e(pages(p.new))})"
                        "</li>" for p in unchanged)
        body.append(f"<details><summary>{len(unchanged)} unchanged sections</summary>"
                    f"<ul>{items}</ul></details>")
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>{e(c.old_name)} → {e(c.new_name)}</title><style>body{{font-family:"
            "sans-serif;max-width:60em;margin:2em auto;line-height:1.5}} section{{border-top:"
            "1px solid #ccc;padding:.5em 0}}</style></head><body>"
            + "\n".join(body) + "</body></html>\n")


def _html_pair(p: Pair) -> str:
    e = html.escape
    head = f"<h2>{e(p.status)}: {e(p.heading)}</h2><p>old {e(pages(p.old))} · new " \
           f"{e(pages(p.new))}</p>"
    if p.status == "added":
        return f"<section>{head}<p>(new section)</p></section>"
    if p.status == "removed":
        return f"<section>{head}<p>(section removed)</p></section>"
    if not p.ops:
        return f"<section>{head}<p>{e(PART)}</p></section>"
    return f"<section>{head}<p>{to_html(shortened(p.ops))}</p></section>"


@click.command("compare")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True,
              help="Print every aligned pair as JSON instead of text.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the redline as a standalone HTML page here.")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path),
              help="SQLite database (default: data/docchat.db or $DOCCHAT_DB).")
@click.option("--password", help="Password for encrypted PDFs (both files).")
def compare_command(old, new, as_json, html_out, db, password) -> None:
    """Compare two versions of a document: sections aligned, changes redlined.

    Renumbered and moved sections still match. Each pair is unchanged, changed (with the
    inserted and deleted text), moved, added or removed, with its pages in both versions.
    """
    settings = Settings.from_env(db_path=db)
    try:
        store = SessionStore.open(settings.db)
        old_doc, new_doc = (_read(store, path, settings, password) for path in (old, new))
        result = compare(old_doc, new_doc)
    except DocchatError as e:
        raise click.ClickException(str(e)) from None
    if html_out is not None:
        html_out.write_text(html_report(result), encoding="utf-8")
    if as_json:
        click.echo(json.dumps(schema(result), ensure_ascii=False))
    else:
        click.echo(text_report(result))


def _read(store: SessionStore, path: Path, settings: Settings, password: str | None):
    """The stored document with these bytes, or the file ingested now; DocumentError (the
    usual message: encrypted, empty, unsupported) when it cannot be read."""
    r = ingest_path(store, path, password=password, max_mb=settings.max_file_mb,
                    ocr_max_pages=settings.ocr_max_pages, processes=settings.ingest_processes)
    if r.error:
        raise DocumentError(r.error)
    return r.document


def schema(c: Comparison) -> dict:
    """The JSON of issue 24: pairs (status, old/new heading and pages, inserted, deleted)
    and summary, plus the verdict and the share aligned."""
    def side(s) -> dict | None:
        return None if s is None else {"heading": s.heading, "pages": list(s.pages)}

    return {"pairs": [{"status": p.status, "old": side(p.old), "new": side(p.new),
                       "inserted": p.inserted, "deleted": p.deleted} for p in c.pairs],
            "summary": c.summary(), "verdict": c.verdict, "aligned": round(c.aligned, 3),
            "old": c.old_name, "new": c.new_name, "seconds": round(c.seconds, 3)}
