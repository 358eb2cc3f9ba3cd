"""What a summary says, checked: loops cut, bare citation runs dropped, statements matched.

A generated step is cleaned (``clean_step``): a loop the stream stopped for
(finish_reason "repetition") is cut where its first repeat begins, and lines that are only
reference markers ("[2]", "[3] [4]", one per line after a paper's bibliography) go. The
final summary is then checked statement by statement against the document's text
(``check_summary``, with docchat.context.claims.check_answer), and the Markdown file
carries the result (``mark_statements``): a page marker after each supported statement
that has none, a marker after each statement not found (or that contradicts the document:
what the page says instead), and a legend line. The store keeps the check with the summary
(``stored_checks`` finds it again for a summary file), so the app marks it as the chat does.
"""
from __future__ import annotations

import json
import logging
import re
from types import SimpleNamespace

from docchat.backends.repetition import SUMMARY_NOTE, cut_text, loop_at
from docchat.context import claims
from docchat.context.claims import AnswerCheck, Source, Statement, check_answer, sources_for
from docchat.context.retrieval import doc_key
from ingest.document import Document

logger = logging.getLogger(__name__)

# A line holding nothing but numeric reference markers: "[12]", "- [3] [4]", "[5, 6]".
_CITATION_LINE = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?(?:\[\d+(?:\s*[,–-]\s*\d+)*\][ \t,;.]*)+$",
    re.MULTILINE)
_BLANKS = re.compile(r"\n{3,}")

NOT_FOUND = {"en": "*(not found in the document)*", "zh": "*（文档中未找到）*"}


def legend(found: int, total: int, language: str = "en", against: int = 0) -> str:
    """The line under a checked summary: "4 of 6 statements found in the documents; 1
    contradicts them" (found: AnswerCheck.supported; statements supported only in part are
    not counted; against: statements that contradict the document)."""
    if language == "zh":
        line = f"{total} 条陈述中有 {found} 条可在文档中找到"
        return line + (f"；{against} 条与文档矛盾" if against else "")
    line = f"{found} of {total} statement{'s' if total != 1 else ''} found in the documents"
    if against:
        line += f"; {against} contradict{'s' if against == 1 else ''} them"
    return line


def conflict_of(statement) -> dict | None:
    """The checker's ``conflict`` of a statement (what the document says against it) as a
    dict, or None; the checker may give a dict or a record, or have no such field."""
    c = getattr(statement, "conflict", None)
    if not c or isinstance(c, dict):
        return c or None
    return {k: getattr(c, k, None) for k in ("kind", "document", "doc_id", "page", "label",
                                              "span", "text", "says")}


def stored_checks(store, doc_id: int, markdown: str) -> dict | None:
    """The statement checks the store keeps with the summary whose file text is markdown
    ({"body": the summary text, **AnswerCheck.to_dict()}), or None (an older summary, or a
    file written by another run since)."""
    for row in store.db["summaries"].rows_where("doc_id = ?", [doc_id]):
        if row.get("checks") and row["markdown"] == markdown:
            return json.loads(row["checks"])
    return None


def drop_citation_runs(text: str) -> str:
    """text without the lines that hold only bare reference markers ("[2]", "[3] [4]")."""
    cleaned = _CITATION_LINE.sub("", text)
    return _BLANKS.sub("\n\n", cleaned) if cleaned != text else text


def clean_step(text: str, stats, *, note: str | None = None) -> tuple[str, bool]:
    """A step's text without the loop it stopped for and without bare citation runs;
    (text, looped). With note (a language), the cut is marked with SUMMARY_NOTE."""
    cut = loop_at(stats)
    looped = cut is not None
    if looped:
        text = cut_text(text, cut, note, SUMMARY_NOTE) if note else text[:cut]
    return drop_citation_runs(text).strip(), looped


def document_sources(doc: Document) -> list[Source]:
    """The whole document as claims.Source passages: every block of every section, located
    in its page (or each page's text when the document has no sections)."""
    key = doc_key(doc, 0)
    sources = sources_for(SimpleNamespace(passages=None, sections=[
        (key, s.index) for s in doc.sections]), [doc]) if doc.sections else []
    if not sources:
        paged = doc.kind == "pdf"
        sources = [Source(key, doc.name, p.number if paged else None,
                          (p.label or str(p.number)) if paged else None, p.text)
                   for p in doc.pages if p.text.strip()]
    return sources


def check_summary(doc: Document, text: str) -> AnswerCheck:
    """claims.AnswerCheck of the summary text against the whole document it summarises."""
    return check_answer(text, document_sources(doc))


def mark_statements(text: str, check: AnswerCheck | None, language: str = "en") -> str:
    """The summary with its check written in: "[p. N]" after a supported statement that does
    not cite that page, a not-found marker after a statement the document lacks, and the
    legend line at the end (nothing changes when no statement was checked)."""
    if check is None or not check.total:
        return text
    out = text
    for s in sorted(check.statements, key=lambda s: s.start, reverse=True):
        mark = _mark(s, language)
        if mark:
            end = s.start + len(text[s.start:s.end].rstrip())
            out = out[:end] + " " + mark + out[end:]
    against = sum(conflict_of(s) is not None for s in check.statements)
    return f"{out.rstrip()}\n\n_{legend(check.supported, check.total, language, against)}._\n"


def _mark(statement: Statement, language: str) -> str:
    if statement.status == claims.EXEMPT:
        return ""
    c = conflict_of(statement)
    if c is not None:
        page = c.get("label") or c.get("page")
        says = " ".join(str(c.get("says") or c.get("text") or "").split()).replace("*", "")
        if language == "zh":
            where = f"第 {page} 页" if page else "文档"
            return f"*（与文档矛盾：{where}写的是“{says}”）*"
        where = f"p. {page}" if page else "it"
        return f"*(contradicts the document: {where} says “{says}”)*"
    if statement.status == claims.NOT_FOUND:
        return NOT_FOUND["zh" if language == "zh" else "en"]
    if statement.label is None or statement.label in statement.cited:
        return ""  # a text document has no pages to point to; or the model cited it
    return f"[p. {statement.label}]"
