"""Safe Markdown for st.markdown: raw HTML and Streamlit's extra syntax show as plain text.

Streamlit drops raw HTML it does not render, so ``if a<b and c>d`` would lose "<b and c>";
it also renders ``$...$`` as LaTeX and ``:red[...]`` as colour. Outside code, these
characters are escaped; code spans and code blocks are left as they are, because Markdown
shows them literally and an entity there would show as "&lt;".
"""
from __future__ import annotations

import html
import re
from typing import Callable, Sequence

from docchat.context.evidence import Evidence

CURSOR = "▌"

# A code fence at any indent: a model's answer opens one inside a list item ("2. Run:" /
# "   ```bash") and closes it at the margin, where Markdown would end the item, its code
# block with it, and open a new block at the closing fence, so that the prose after it showed
# as code (statement marks as raw <span> tags). Fence lines are written at the margin, and
# the marks (marks._code_lines) and the renderer see the same blocks.
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")


def fence_opens(line: str) -> str | None:
    """The fence (its backticks or tildes) that line opens, or None."""
    m = _FENCE.match(line)
    return m.group(1) if m else None


def fence_closes(line: str, fence: str) -> bool:
    """Whether line closes the code block that fence opened: the same character, at least
    as many, nothing after them (CommonMark; "```bash" inside a block is code)."""
    m = _FENCE.match(line)
    return bool(m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
                and not line.strip()[len(m.group(1)):].strip())


_BACKTICKS = re.compile(r"`+")
# Characters that start HTML, entities, LaTeX or Streamlit directives/shortcodes.
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "$": "\\$", ":": "\\:"}
# A colon only matters where it opens a directive such as :red[...] or :material/icon:.
_SPECIAL = re.compile(r"[&<>$]|:(?=[A-Za-z-]+\[|material/)")


def escape_text(text: str) -> str:
    """Escape HTML, LaTeX and Streamlit directive characters in text outside code."""
    return _SPECIAL.sub(lambda m: _ESCAPES[m.group(0)[0]], text)


def _escape_inline(line: str) -> str:
    """Escape a line of prose, leaving `code spans` as they are."""
    out, pos = [], 0
    runs = list(_BACKTICKS.finditer(line))
    i = 0
    while i < len(runs):
        opener = runs[i]
        closer = next((r for r in runs[i + 1:] if len(r.group(0)) == len(opener.group(0))), None)
        if closer is None:
            i += 1
            continue
        out.append(escape_text(line[pos:opener.start()]))
        out.append(line[opener.start():closer.end()])
        pos = closer.end()
        i = runs.index(closer) + 1
    out.append(escape_text(line[pos:]))
    return "".join(out)


def safe_markdown(text: str) -> str:
    """Markdown that renders text as written: no raw HTML, no LaTeX, no colour directives."""
    lines = text.split("\n")
    out: list[str] = []
    fence: str | None = None
    prev_blank, prev_code = True, False
    # Inline code spans may cross lines within a paragraph: escape paragraph by paragraph.
    para: list[str] = []

    def flush() -> None:
        if para:
            out.extend(_escape_inline("\n".join(para)).split("\n"))
            para.clear()

    for line in lines:
        if fence is not None:
            if fence_closes(line, fence):
                fence, line = None, line.strip()
            out.append(line)
            continue
        if opened := fence_opens(line):
            flush()
            fence = opened
            out.append(line.strip())
            prev_blank, prev_code = False, False
            continue
        indented = line.startswith("    ") or line.startswith("\t")
        if indented and line.strip() and (prev_blank or prev_code) and not para:
            out.append(line)  # an indented code block: shown literally by Markdown
            prev_blank, prev_code = False, True
            continue
        if not line.strip():
            flush()
            out.append(line)
            prev_blank = True
            continue
        para.append(line)
        prev_blank, prev_code = False, False
    flush()
    return "\n".join(out)


def streaming_markdown(text: str) -> str:
    """Safe Markdown of a growing answer, with the cursor at its end."""
    body = safe_markdown(text)
    return f"{body} {CURSOR}" if body.strip() else CURSOR


_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|~])")
_LIST_START = re.compile(r"^(\s*)([-+*]|\d+[.)])(\s)")


def _plain(text: str) -> str:
    """One line of document text that Markdown shows as written."""
    line = escape_text(_MD_SPECIAL.sub(r"\\\1", " ".join(text.split())))
    return _LIST_START.sub(lambda m: f"{m.group(1)}{m.group(2)[:-1]}\\{m.group(2)[-1]}"
                           f"{m.group(3)}", line)


def evidence_markdown(items: Sequence[dict | Evidence], page_word: str = "p.",
                      link: Callable[[int, int], str] | None = None) -> str:
    """Evidence as Markdown: each section's document, heading and pages, then its sentences
    quoted with their page. With ``link`` (item, sentence -> URL), each sentence's page is
    a link in this tab (HTML: render with unsafe_allow_html; the text itself is escaped)."""
    parts = []
    for i, e in enumerate(items):
        e = Evidence.from_dict(e) if isinstance(e, dict) else e
        head = " · ".join(x for x in (_plain(e.doc_name), _plain(e.heading)) if x)
        quotes = "\n>\n".join(
            f"> {_plain(s.text)} {_page_link(page_word, _plain(s.page), link, i, j)}"
            for j, s in enumerate(e.sentences))
        parts.append(f"**{head}** · {page_word} {_plain(e.pages)}\n\n{quotes}")
    return "\n\n".join(parts)


def _page_link(page_word: str, label: str, link, i: int, j: int) -> str:
    if link is None:
        return f"[{page_word} {label}]"
    href = html.escape(link(i, j))
    return (f'[<a href="{href}" target="_self" class="dc-evidence-page" '
            f'data-view="e{i}.{j}">{page_word} {label}</a>]')
