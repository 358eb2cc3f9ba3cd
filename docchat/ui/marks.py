"""An answer with its statements' checks on screen: each statement found in the documents
gets a link to its page, one not found is dimmed where it stands ("not found in the
documents" on hover), one that contradicts the document (the checker's ``conflict``: a
number, a negation or a name the passage has otherwise) is red and struck through with a
link to the page that says otherwise, a model citation to a page without the support is
corrected, and a line under the answer counts them ("4 of 6 statements found in the
documents; 1 contradicts them").

The answer is escaped as always (docchat.ui.render.safe_markdown); the marks are put in
as private-use characters first and become HTML only after escaping, so nothing the model
wrote is ever read as HTML.
"""
from __future__ import annotations

import html
import re
from urllib.parse import urlencode

import streamlit as st

from docchat.ui.i18n import t
from docchat.ui.render import fence_closes, fence_opens, safe_markdown

_OPEN, _MID, _CLOSE = "\ue000", "\ue001", "\ue002"  # open k: \ue000 k \ue001 ... \ue002
_MARK = re.compile(f"{_OPEN}(\\d+){_MID}")
_LEAD = re.compile(r"^(\s*(?:[-+*]|\d+[.)])\s+|\s*#{1,6}\s+|\s*>\s*)")
_CITATION = re.compile(r"\[[^\]\n]{0,40}\]")
FOUND = ("supported", "partly")


class _WithConflict:
    """A Statement seen with the ``conflict`` its stored dict holds (for a checker whose
    Statement has no such field)."""

    def __init__(self, statement, conflict) -> None:
        self._statement, self.conflict = statement, conflict

    def __getattr__(self, name: str):
        return getattr(self._statement, name)


class _Check:
    """An AnswerCheck whose statements carry their conflicts."""

    def __init__(self, check, statements) -> None:
        self._check, self.statements = check, statements

    def __getattr__(self, name: str):
        return getattr(self._check, name)


def check_of(metrics: dict):
    """The turn's statement checks (docchat.context.claims.AnswerCheck), or None where the
    answer was not checked (older turns, an answer with no text, no checker installed)."""
    return check_from((metrics or {}).get("checks"))


def check_from(data: dict | None):
    """An AnswerCheck from its dict (AnswerCheck.to_dict()), each statement with its
    ``conflict`` where the dict has one; None for no statements."""
    if not data or not data.get("statements"):
        return None
    try:
        from docchat.context.claims import AnswerCheck
    except ImportError:
        return None
    check = AnswerCheck.from_dict(data)
    raw = data["statements"]
    if any(isinstance(d, dict) and d.get("conflict") for d in raw) and any(
            not hasattr(s, "conflict") for s in check.statements):
        return _Check(check, [s if hasattr(s, "conflict") else _WithConflict(s, d.get("conflict"))
                              for s, d in zip(check.statements, raw)])
    return check


def conflict(statement) -> dict | None:
    """What the document says against the statement ({"kind", "document", "page", "label",
    "span", "text", "says"}), or None; a dict whether the checker gives a dict or a record."""
    c = getattr(statement, "conflict", None)
    if not c or isinstance(c, dict):
        return c or None
    return {k: getattr(c, k, None) for k in ("kind", "document", "doc_id", "page", "label",
                                              "span", "text", "says")}


def conflicts(check) -> int:
    """How many statements contradict the documents."""
    return 0 if check is None else sum(conflict(s) is not None for s in check.statements)


def mostly_unfound(check) -> bool:
    """Fewer than half of the statements that state something were found."""
    return check is not None and check.total > 0 and check.supported * 2 < check.total


def evidence_open(check) -> bool:
    """The evidence stays open under the answer: fewer than half of its statements were
    found, or one contradicts the documents (the passage that says otherwise is there)."""
    return mostly_unfound(check) or conflicts(check) > 0


def view_link(session_id: str, view: str) -> str:
    """The page view of one statement or evidence sentence, as a link in this tab."""
    return "?" + urlencode({"session": session_id, "view": view} if session_id else
                           {"view": view})


def _code_lines(text: str) -> set[int]:
    """Indices of the lines inside fenced or indented code (marks are not put there)."""
    out, fence, prev_blank = set(), None, True
    for i, line in enumerate(text.split("\n")):
        opened = fence_opens(line) if fence is None else None
        if fence is not None or opened:
            out.add(i)
            if fence is None:
                fence = opened
            elif fence_closes(line, fence):
                fence = None
        elif (line.startswith("    ") or line.startswith("\t")) and prev_blank:
            out.add(i)
            continue
        prev_blank = not line.strip()
    return out


def _segments(text: str, start: int, end: int, code: set[int]) -> list[tuple[int, int]]:
    """The statement's span cut at line ends, each without its list or quote marker and
    leaving out lines of code."""
    out, pos = [], start
    line = text.count("\n", 0, start)
    while pos < end:
        stop = text.find("\n", pos, end)
        stop = end if stop < 0 else stop
        at_line_start = pos == 0 or text[pos - 1] == "\n"
        lead = _LEAD.match(text, pos) if at_line_start else None
        a = lead.end() if lead and lead.end() <= stop else pos
        b = stop
        while b > a and text[b - 1].isspace():
            b -= 1
        if line not in code and b > a:
            out.append((a, b))
        pos, line = stop + 1, line + 1
    return out


def conflict_title(c: dict, lang: str) -> str:
    """ "Contradicts the document (p. 3): the document says “10x”"."""
    says = " ".join(str(c.get("says") or c.get("text") or "").split())
    if len(says) > 160:
        says = says[:159] + "…"
    if c.get("label") or c.get("page"):
        return t("mk_conflict", lang, page=c.get("label") or c.get("page"), says=says)
    return t("mk_conflict_text", lang, doc=c.get("document") or "", says=says)


def _tag(statement, n: int, lang: str) -> tuple[str, str]:
    """The opening and closing HTML of statement n."""
    c = conflict(statement)
    if c is not None:
        return (f'<span class="dc-statement dc-conflict" data-status="{statement.status}" '
                f'data-n="{n}" data-conflict="{html.escape(str(c.get("kind") or ""))}" '
                f'title="{html.escape(conflict_title(c, lang))}" '
                f'style="color:#c5221f;text-decoration:line-through;'
                f'text-decoration-color:#c5221f">', "</span>")
    title = {"not_found": t("mk_not_found", lang), "partly": t("mk_partly", lang)}.get(
        statement.status, t("mk_found", lang, page=statement.label or "") if statement.label
        else t("mk_found_text", lang))
    style = {"not_found": "opacity:0.5", "partly": "text-decoration:underline dotted"}.get(
        statement.status, "")
    return (f'<span class="dc-statement" data-status="{statement.status}" data-n="{n}" '
            f'title="{html.escape(title)}" style="{style}">', "</span>")


def _link(statement, n: int, href, lang: str) -> str:
    """The page link after a statement: its supporting page (corrected where the model
    cited another), a flag on a citation that nothing supports, or, after a statement that
    contradicts the document, a link to the page that says otherwise."""
    c = conflict(statement)
    if c is not None:
        page = c.get("label") or c.get("page")
        shown = f"p. {page}" if page else (c.get("document") or "")
        title = html.escape(conflict_title(c, lang))
        return (f' <sup class="dc-page dc-conflict-page" data-citation="conflict">'
                f'{_anchor(href, n, "✗ " + shown, "color:#c5221f", title)}</sup>')
    if statement.status in FOUND and (statement.label or statement.document):
        shown = f"p. {statement.label}" if statement.label else statement.document
        fix = ""
        if statement.citation == "wrong":
            cited = ", ".join(statement.cited)
            fix = (f'<s title="{html.escape(t("mk_corrected", lang, cited=cited))}">'
                   f'p. {html.escape(cited)}</s> → ')
        return (f' <sup class="dc-page" data-citation="{statement.citation or ""}">{fix}'
                f'{_anchor(href, n, shown)}</sup>')
    if statement.citation == "wrong":
        return (f' <sup class="dc-page" data-citation="wrong" title='
                f'"{html.escape(t("mk_unsupported_citation", lang))}">⚠</sup>')
    return ""


def _anchor(href, n: int, shown: str, style: str = "", title: str = "") -> str:
    """A link to statement n's page view (href: n -> (URL, view id), or None: plain text)."""
    if href is None:
        return html.escape(shown)
    url, view = href(n)
    extra = (f' style="{style}"' if style else "") + (f' title="{title}"' if title else "")
    return (f'<a href="{html.escape(url)}" target="_self" data-view="{html.escape(view)}"'
            f'{extra}>{html.escape(shown)}</a>')


def answer_html(text: str, check, *, session_id: str = "", turn_id: int = 0, lang: str,
                href=...) -> str:
    """The answer as safe Markdown with each checked statement marked and linked (href:
    statement number -> (URL, view id) of its page link; by default the chat turn's; None:
    pages named, not linked)."""
    if href is ...:
        def href(n: int) -> tuple[str, str]:
            return view_link(session_id, f"t{turn_id}s{n}"), f"t{turn_id}s{n}"
    code = _code_lines(text)
    inserts: list[tuple[int, int, str]] = []  # (position, order, marker)
    tags: dict[int, tuple[str, str]] = {}
    for n, s in enumerate(check.statements):
        if s.status == "exempt" or not (0 <= s.start < s.end <= len(text)):
            continue
        parts = _segments(text, s.start, s.end, code)
        for k, (a, b) in enumerate(parts):
            m = len(tags)
            tags[m] = _tag(s, n, lang)
            last = k == len(parts) - 1
            tags[m] = (tags[m][0], tags[m][1] + (_link(s, n, href, lang) if last else ""))
            inserts += [(a, 1, f"{_OPEN}{m}{_MID}"), (b, 0, f"{_CLOSE}{m}{_MID}")]
    out, pos = [], 0
    for at, _, marker in sorted(inserts):
        out += [text[pos:at], marker]
        pos = at
    out.append(text[pos:])
    body = safe_markdown("".join(out))
    body = _MARK.sub(lambda m: tags[int(m.group(1))][0], body)
    return re.sub(f"{_CLOSE}(\\d+){_MID}", lambda m: tags[int(m.group(1))][1], body)


def summary_line(check, lang: str) -> str:
    """ "4 of 6 statements found in the documents; 1 contradicts them" (with the ones found
    in part)."""
    line = t("mk_summary", lang, n=check.supported, total=check.total)
    if check.partly:
        line += t("mk_summary_partly", lang, n=check.partly)
    against = conflicts(check)
    if against:
        line += t("mk_summary_conflict" if against == 1 else "mk_summary_conflicts", lang,
                  n=against)
    return line


def legend(check, lang: str) -> str:
    """What the marks mean (the contradiction's mark only where there is one)."""
    return t("mk_legend", lang) + (t("mk_legend_conflict", lang) if conflicts(check) else "")


def show_summary(check, lang: str, live: bool = False) -> None:
    """The count under the answer, and the legend of the marks (live: of the sentences
    checked so far, while the answer streams)."""
    if check is None or check.total == 0:
        return
    icon = ":material/report:" if evidence_open(check) else ":material/fact_check:"
    line = summary_line(check, lang) + (f" ({t('mk_live', lang)})" if live else "")
    st.caption(f"{icon} {line} · {legend(check, lang)}")


def show_notes(metrics: dict, lang: str, language_note: bool = False) -> None:
    """What the answer's end says about it: cut for repeating itself, and (once per
    session) that the model did not answer in the question's language."""
    if metrics.get("finish_reason") == "repetition":
        st.caption(f":material/content_cut: {t('mk_repetition', lang)}")
    if language_note and metrics.get("language_mismatch"):
        shown = t("mk_language_evidence", lang) if metrics.get("evidence") else ""
        st.info(t("mk_language", lang) + shown, icon=":material/translate:")


def export_lines(check) -> list[str]:
    """The checks in the Markdown export: the count, then each statement's mark."""
    if check is None or check.total == 0:
        return []
    lines = [f"_{summary_line(check, 'en')}._", ""]
    for s in check.statements:
        if s.status == "exempt":
            continue
        c = conflict(s)
        if c is not None:
            page = c.get("label") or c.get("page")
            where = f"{c.get('document') or ''}, p. {page}" if page else (c.get("document") or "")
            says = " ".join(str(c.get("says") or c.get("text") or "").split())
            lines.append(f"- contradicts the document ({where}: it says \u201c{says}\u201d): "
                         f"{' '.join(s.text.split())}")
            continue
        where = "" if s.status not in FOUND else (
            f" ({s.document}, p. {s.label})" if s.label else f" ({s.document})")
        mark = {"supported": "found", "partly": "found in part"}.get(s.status, "not found")
        fix = f"; cited p. {', '.join(s.cited)}, corrected" if s.citation == "wrong" and \
            s.label else ("; the cited page does not say this" if s.citation == "wrong" else "")
        lines.append(f"- {mark}{where}{fix}: {' '.join(s.text.split())}")
    return lines + [""]
