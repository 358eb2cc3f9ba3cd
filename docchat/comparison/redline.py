"""Word-level diff of two texts, with the page each change is on, and its rendering.

Paragraphs are matched first (difflib over whole paragraphs), then words within the
paragraphs that differ, so a 200-page section costs a paragraph diff, not a word diff.
English is split into words and punctuation; Chinese runs into jieba words. Short equal
runs between two changes (a word or two, or punctuation only) are folded into the change,
as diff-match-patch's semantic cleanup does, so "the fee is 30 days" -> "the charge is 31
days" reads as two replacements, not a salad of one-word edits.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Sequence

from ingest.segment import cut_words, has_cjk

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_TOKEN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[^\W_]+|[^\w\s]|_+")
_SPACE = re.compile(r"\s+")
_ALNUM = re.compile(r"[^\W_]+")
# Equal runs of at most this many words between two changes join the change.
SHORT_EQUAL = 2
# Words of unchanged text kept on each side of a change when a redline is shortened.
CONTEXT_WORDS = 25
# Past this many words on a side, difflib's autojunk heuristic keeps the word diff fast.
AUTOJUNK_WORDS = 20_000
# A run of paragraphs that differs with more words than this on a side is matched by
# sentences before words (difflib's word diff grows with the square of the run).
SENTENCE_WORDS = 400
_SENTENCE_END = re.compile(r"(?<=[.;:!?。；！？])\s+")


@dataclass(frozen=True)
class Op:
    """One run of a redline: "=" unchanged, "-" deleted (old text), "+" inserted (new text);
    old_page / new_page: the physical page of each version where the run starts."""
    op: str
    text: str
    old_page: int | None = None
    new_page: int | None = None

    def to_list(self) -> list:
        return [self.op, self.text, self.old_page, self.new_page]

    @classmethod
    def from_list(cls, row: Sequence) -> "Op":
        return cls(row[0], row[1], row[2], row[3])


@dataclass(frozen=True)
class Paragraph:
    text: str
    page: int | None


def normalize(text: str) -> str:
    """Text as compared: runs of whitespace are one space (PDF and text line breaks differ)."""
    return _SPACE.sub(" ", text).strip()


def tokens(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) of each word or punctuation mark; Chinese is cut by jieba."""
    out = []
    for m in _TOKEN.finditer(text):
        word = m.group(0)
        if _CJK.fullmatch(word) and len(word) > 1:
            pos = m.start()
            for piece in cut_words(word):
                out.append((piece, pos, pos + len(piece)))
                pos += len(piece)
        else:
            out.append((word, m.start(), m.end()))
    return out


def words(text: str) -> list[str]:
    """The words compared (lower case): for similarity between sections."""
    if not has_cjk(text):
        return _ALNUM.findall(text.lower())
    return [w.lower() for w, _, _ in tokens(text) if w[0].isalnum() or has_cjk(w)]


def diff(old: Sequence[Paragraph], new: Sequence[Paragraph]) -> list[Op]:
    """The redline from old paragraphs to new ones."""
    return _merge(_runs(old, new, by_sentence=False))


def _runs(old: Sequence[Paragraph], new: Sequence[Paragraph], by_sentence: bool) -> list[Op]:
    """Equal units kept, the rest diffed by words; a long run that differs (a text and a PDF
    break their paragraphs elsewhere) is matched by sentences first, so no word diff is
    ever larger than about SENTENCE_WORDS words a side."""
    a = [normalize(p.text) for p in old]
    b = [normalize(p.text) for p in new]
    ops: list[Op] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            ops.extend(Op("=", normalize(q.text), p.page, q.page)
                       for p, q in zip(old[i1:i2], new[j1:j2]))
        elif not by_sentence and _long(a[i1:i2], b[j1:j2]):
            ops.extend(_runs(_sentences(old[i1:i2]), _sentences(new[j1:j2]), by_sentence=True))
        else:
            ops.extend(_word_diff(old[i1:i2], new[j1:j2]))
    return ops


def _long(a: Sequence[str], b: Sequence[str]) -> bool:
    return max(sum(len(t.split()) for t in a), sum(len(t.split()) for t in b)) > SENTENCE_WORDS


def _sentences(paragraphs: Sequence[Paragraph]) -> list[Paragraph]:
    return [Paragraph(t, p.page) for p in paragraphs
            for t in _SENTENCE_END.split(normalize(p.text)) if t]


def _joined(paragraphs: Sequence[Paragraph]) -> tuple[str, list[tuple[int, int | None]]]:
    """The paragraphs as one text, and (start offset, page) of each."""
    text, starts = "", []
    for p in paragraphs:
        if text:
            text += "\n\n"
        starts.append((len(text), p.page))
        text += normalize(p.text)
    return text, starts


def _page_at(starts: list[tuple[int, int | None]], offset: int) -> int | None:
    page = starts[0][1] if starts else None
    for start, p in starts:
        if start > offset:
            break
        page = p
    return page


def _word_diff(old: Sequence[Paragraph], new: Sequence[Paragraph]) -> list[Op]:
    a_text, a_starts = _joined(old)
    b_text, b_starts = _joined(new)
    a, b = tokens(a_text), tokens(b_text)
    if not a or not b:
        out = []
        if a_text:
            out.append(Op("-", a_text, _page_at(a_starts, 0), _page_at(b_starts, 0)))
        if b_text:
            out.append(Op("+", b_text, _page_at(a_starts, 0), _page_at(b_starts, 0)))
        return out
    regions = _cleaned(_opcodes([w for w, _, _ in a], [w for w, _, _ in b]))
    out: list[Op] = []
    for tag, i1, i2, j1, j2 in regions:
        a_at = a[i1][1] if i1 < len(a) else len(a_text)
        b_at = b[j1][1] if j1 < len(b) else len(b_text)
        pages = dict(old_page=_page_at(a_starts, a_at), new_page=_page_at(b_starts, b_at))
        if tag == "equal":
            out.append(Op("=", _span(b_text, b, j1, j2), **pages))
            continue
        if i2 > i1:
            out.append(Op("-", _span(a_text, a, i1, i2), **pages))
        if j2 > j1:
            out.append(Op("+", _span(b_text, b, j1, j2), **pages))
    return out


def common_ends(x, y) -> tuple[int, int]:
    """The lengths of the common head and of the common tail (not overlapping the head) of
    two sequences (word lists or strings)."""
    head = 0
    while head < min(len(x), len(y)) and x[head] == y[head]:
        head += 1
    tail = 0
    while tail < min(len(x), len(y)) - head and x[-1 - tail] == y[-1 - tail]:
        tail += 1
    return head, tail


def _opcodes(x: list[str], y: list[str]) -> list[tuple]:
    """difflib's opcodes of two word lists; the common head and tail are cut off first
    (one edit in a long paragraph then costs no more than the edit)."""
    head, tail = common_ends(x, y)
    mid_x, mid_y = x[head:len(x) - tail], y[head:len(y) - tail]
    junk = max(len(mid_x), len(mid_y)) > AUTOJUNK_WORDS
    ops = [] if not head else [("equal", 0, head, 0, head)]
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, mid_x, mid_y, autojunk=junk).get_opcodes():
        ops.append((tag, head + i1, head + i2, head + j1, head + j2))
    if tail:
        ops.append(("equal", len(x) - tail, len(x), len(y) - tail, len(y)))
    return ops


def _span(text: str, toks: list[tuple[str, int, int]], i: int, j: int) -> str:
    return text[toks[i][1]:toks[j - 1][2]] if j > i else ""


def _cleaned(opcodes: list[tuple]) -> list[tuple]:
    """Fold short equal runs that sit between two changes into one change."""
    regions: list[list] = []
    for tag, i1, i2, j1, j2 in opcodes:
        tag = "equal" if tag == "equal" else "change"
        regions.append([tag, i1, i2, j1, j2])
    merged: list[list] = []
    for k, r in enumerate(regions):
        between = 0 < k < len(regions) - 1
        if r[0] == "equal" and between and r[2] - r[1] <= SHORT_EQUAL:
            r = ["change", *r[1:]]
        if merged and merged[-1][0] == r[0] == "change":
            merged[-1][2], merged[-1][4] = r[2], r[4]
        else:
            merged.append(r)
    return [tuple(r) for r in merged]


def _merge(ops: list[Op]) -> list[Op]:
    """Adjacent runs of the same kind as one (paragraphs joined by a blank line)."""
    out: list[Op] = []
    for op in ops:
        if not op.text:
            continue
        if out and out[-1].op == op.op:
            last = out[-1]
            out[-1] = Op(op.op, last.text + "\n\n" + op.text, last.old_page, last.new_page)
        else:
            out.append(op)
    return out


def shortened(ops: Sequence[Op], context: int = CONTEXT_WORDS) -> list[Op]:
    """The redline with long unchanged runs cut to `context` words around each change."""
    out = []
    for k, op in enumerate(ops):
        if op.op != "=":
            out.append(op)
            continue
        pieces = op.text.split(" ")
        if len(pieces) <= 2 * context + 1:
            out.append(op)
            continue
        head = " ".join(pieces[:context]) if k > 0 else ""
        tail = " ".join(pieces[-context:]) if k < len(ops) - 1 else ""
        text = (head + " … " if head else "… ") + tail if tail else head + " …"
        out.append(Op("=", text.strip(), op.old_page, op.new_page))
    return out


def to_html(ops: Sequence[Op]) -> str:
    """An inline redline: deletions struck through in red, insertions underlined in green."""
    parts = []
    for op in ops:
        text = html.escape(op.text).replace("\n\n", "<br><br>")
        if op.op == "-":
            parts.append(f'<del style="{DEL_STYLE}">{text}</del>')
        elif op.op == "+":
            parts.append(f'<ins style="{INS_STYLE}">{text}</ins>')
        else:
            parts.append(text)
    return " ".join(parts)


def to_text(ops: Sequence[Op]) -> str:
    """A plain-text redline: [-deleted-] {+inserted+}, as `git diff --word-diff` writes it."""
    marks = {"-": "[-{}-]", "+": "{{+{}+}}", "=": "{}"}
    return " ".join(marks[op.op].format(op.text) for op in ops)


DEL_STYLE = "background:#fdd;color:#900;text-decoration:line-through"
INS_STYLE = "background:#dfd;color:#060;text-decoration:underline"
