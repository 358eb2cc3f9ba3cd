"""Text cleaning as pure functions: normalisation, hyphen joins, running headers, garbage."""
from __future__ import annotations

import logging
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

from ingest.document import OutlineLike
from ingest.segment import HAN, has_cjk, plain_words

logger = logging.getLogger(__name__)

# Control characters except \t and \n (\r and \f are turned into \n first), DEL, soft
# hyphen, zero-width space/joiners and the byte-order mark.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u00ad\u200b\u200c\u200d\u2060\ufeff]")
_NEWLINES = re.compile(r"\r\n?|\f|\v|\u2028|\u2029|\x85")
_TRAILING_SPACE = re.compile(r"[ \t]+$", re.MULTILINE)
_MANY_BLANKS = re.compile(r"\n{3,}")
# Fullwidth punctuation and the ideographic space are how Chinese is written; NFKC would
# turn "，" into ","; everything else (ligatures, fullwidth letters, superscripts) is folded.
_KEEP_WIDE = "\u3000\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
_WIDE_RUNS = re.compile(f"([{_KEEP_WIDE}]+)")


def nfkc(text: str) -> str:
    """NFKC-normalise text (ligatures like "ﬁ" become "fi") but keep fullwidth CJK punctuation."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text  # (every kept wide character changes under NFKC, so there are none here)
    parts = _WIDE_RUNS.split(text)  # other text at even indices, kept wide runs at odd ones
    if len(parts) == 1:
        return unicodedata.normalize("NFKC", text)
    parts[::2] = [unicodedata.normalize("NFKC", p) for p in parts[::2]]
    return "".join(parts)


def strip_controls(text: str) -> str:
    """Unify line ends (CRLF, CR, form feed -> \\n) and drop other control characters."""
    return _CONTROL.sub("", _NEWLINES.sub("\n", text))


# A word broken at a line end: "manage-\nment". PDFium marks the same break with U+FFFE.
# A match is a run of letters, such a break and more letters (as the regex
# (?<![^\W\d_])([^\W\d_]+)(?:-[ \t]*\n[ \t]*|\ufffe)([^\W\d_]+) would find).
_BREAK = re.compile(r"-[ \t]*\n[ \t]*|\ufffe")
# A break Doxygen's LaTeX output prints as "←-" at the line end (its \+ break points, in
# words, names and URLs alike: "Post←-\nScript", "TEST←-\n_FLAGS", "sourceforge.←-\nnet"):
# the two lines' parts are one word.
_MARKED_BREAK = re.compile(r"\u2190-[ \t]*\n[ \t]*")
_LETTERS = re.compile(r"[^\W\d_]+")
_LETTER_AT_END = re.compile(r"[^\W\d_]\Z")


def _letter_run_start(text: str, end: int) -> int:
    """Start of the run of letters (as [^\\W\\d_]) that ends at `end`; `end` if none."""
    start = end
    while start > 0 and _LETTER_AT_END.match(text, start - 1, start):
        start -= 1
    return start


def join_hyphenated(text: str, vocabulary: str | None = None) -> str:
    """Re-join words broken at line ends: "manage-\\nment" -> "management".

    Rule: only when the second part starts with a lowercase letter. The hyphen is kept
    after an acronym ("CC-\\nlicensed" -> "CC-licensed", "XML-\\nbased") unless the text
    writes the closed form elsewhere and never the hyphenated one ("SCfigure"), and
    ("well-\\nknown" -> "well-known") when the hyphenated form occurs elsewhere in
    `vocabulary` (by default the text itself) and the closed form does not; otherwise it is
    dropped, since line-end hyphens in typeset documents are mostly typographic.
    """
    if "\ufffe" not in text and "-" not in text:
        return text
    if "\u2190-" in text:  # Doxygen's LaTeX marks its breaks "←-": "Post←-\nScript"
        text = _MARKED_BREAK.sub("", text)
    vocab = text if vocabulary is None else vocabulary
    # Same result as substituting that regex, but the scan starts at the (few) breaks
    # instead of trying the pattern at every letter of the page.
    out: list[str] = []
    done = 0  # text[:done] is settled
    for m in _BREAK.finditer(text):
        b, e = m.span()
        start = _letter_run_start(text, b)
        tail = _LETTERS.match(text, e)
        if start == b or start < done or tail is None:
            continue
        head, rest = text[start:b], tail.group(0)
        out.append(text[done:start])
        out.append(_join(head, rest, text[start:tail.end()], vocab))
        done = tail.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _join(head: str, tail: str, whole: str, vocab: str) -> str:
    if not tail[0].islower():
        return f"{head}-{tail}" if "\ufffe" in whole else whole
    closed = head + tail
    if closed in vocab and f"{head}-{tail}" not in vocab:
        return closed  # "SC-\nfigure" where the text writes "SCfigure" elsewhere
    if len(head) > 1 and head.isupper():  # an acronym's compound: "CC-\nlicensed"
        return f"{head}-{tail}"
    if f"{head}-{tail}" in vocab and closed not in vocab:
        return f"{head}-{tail}"
    return closed


def clean_text(text: str, vocabulary: str | None = None) -> str:
    """Full cleaning of one page or file: controls, NFKC, hyphen joins, trailing spaces."""
    return _finish(join_hyphenated(nfkc(strip_controls(text)), vocabulary))


def normalize_page(text: str) -> str:
    """The part of clean_text that needs no other page: controls and NFKC."""
    return nfkc(strip_controls(text))


def clean_pages(texts: Sequence[str], normalized: bool = False) -> list[str]:
    """clean_text on every page, with the whole document as the vocabulary for hyphen joins,
    after strip_line_numbers.

    With normalized=True the texts have been through normalize_page already.
    """
    normal = list(texts) if normalized else [normalize_page(t) for t in texts]
    normal = strip_line_numbers(normal)
    vocabulary = _Words("\n".join(normal))
    return [_finish(join_hyphenated(t, vocabulary)) for t in normal]  # type: ignore[arg-type]


class _Words:
    """`s in words` == `s in text` for any s without whitespace (hyphen-join lookups).

    Such an s lies inside one whitespace-free token, so it is searched in the distinct
    tokens only (a fraction of a long document), built on the first lookup.
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._tokens: str | None = None

    def __contains__(self, s: str) -> bool:
        if self._tokens is None:
            self._tokens = "\n".join(set(self._text.split()))
        return s in self._tokens


def _finish(text: str) -> str:
    text = join_spaced_han(_TRAILING_SPACE.sub("", text))
    return _MANY_BLANKS.sub("\n\n", text).strip("\n")


_HAN_GAP = re.compile(rf"(?<={HAN}) (?={HAN})")
_HAN_PAIR = re.compile(rf"{HAN}(?={HAN})")
_SPACED_HAN_LINE = re.compile(rf"[ \t]*{HAN}(?: {HAN})+[ \t]*")
# A line is spaced out when at least SPACED_GAPS of its neighbouring Chinese characters are
# one space apart and at most one pair in SPACED_SHARE is not: a verse or a phrase list
# ("春眠不觉晓 处处闻啼鸟") has a few gaps between many tight pairs.
SPACED_GAPS = 3
SPACED_SHARE = 4


def join_spaced_han(text: str) -> str:
    """Lines whose Chinese characters a PDF spaced out ("关 于 x 的 不 等 式", a heading
    "摘 要") with those characters joined again ("关于 x 的不等式", "摘要"); spaces next to
    Latin letters, digits and punctuation stay. Searched word by word, a spaced-out line
    matched nothing."""
    if not _HAN_GAP.search(text):
        return text

    def line(s: str) -> str:
        gaps = len(_HAN_GAP.findall(s))
        if not gaps:
            return s
        tight = len(_HAN_PAIR.findall(s))
        if (gaps >= SPACED_GAPS and gaps >= SPACED_SHARE * tight) or \
                _SPACED_HAN_LINE.fullmatch(s):
            return _HAN_GAP.sub("", s)
        return s

    return "\n".join(line(s) for s in text.split("\n"))


# ---- margin line numbers ---------------------------------------------------------------

_LINE_NUMBER = re.compile(r"[ \t]*(\d{1,5})(?:[ \t]|$)")
NUMBERED_LINES = 8  # a page is line-numbered when a run of at least this many lines...
NUMBERED_SHARE = 0.5  # ...and this share of its lines start with counting numbers
_NUMBER_STEP = 3  # a run may skip numbers (a line joined to the one before by a hyphen break)
_RUN_REACH = 100  # a page's numbers continue another page's when they start this close after


def _number_run(lines: list[str]) -> list[tuple[int, int]]:
    """The longest run of (line index, number) with numbers rising by 1 to _NUMBER_STEP."""
    best: dict[int, tuple[int, int]] = {}  # number -> (length, line) of the longest run to it
    back: dict[int, int | None] = {}  # line -> the run's line before it
    numbers: dict[int, int] = {}
    for i, line in enumerate(lines):
        if not line[:1].isdigit() and not line[:1].isspace():
            continue
        m = _LINE_NUMBER.match(line)
        if m is None:
            continue
        v = numbers[i] = int(m.group(1))
        length, before = max((best[v - k] for k in range(1, _NUMBER_STEP + 1) if v - k in best),
                             default=(0, None))
        back[i] = before
        if length + 1 >= best.get(v, (0, 0))[0]:
            best[v] = (length + 1, i)
    if not best:
        return []
    run: list[tuple[int, int]] = []
    at: int | None = max(best.values())[1]
    while at is not None:
        run.append((at, numbers[at]))
        at = back[at]
    return run[::-1]


def _prose(text: str) -> bool:
    """A line of running text: three plain words or more, or Chinese."""
    return len(plain_words(text)) >= 3 or (has_cjk(text) and len(text.strip()) >= 8)


def _continues(first: list[tuple[int, int]], then: list[tuple[int, int]],
               reach: int = _RUN_REACH) -> bool:
    """True when the numbers of run `then` (a later page) start at most `reach` after those
    of run `first` end, or both pages count from 1."""
    gap = then[0][1] - first[-1][1]
    return 0 < gap <= reach or then[0][1] == first[0][1] <= 1


def strip_line_numbers(pages: Sequence[str]) -> list[str]:
    """Pages without margin line numbers (drafts, bills: "129 3. FLOATS", "130 Floats are ...").

    A page is line-numbered when at least NUMBERED_LINES lines and NUMBERED_SHARE of its
    non-blank lines start with numbers counting up (by 1, or skipping up to two), and half of
    those lines are running text (numbered code listings and tables keep their numbers). Its
    numbers are the document's margin numbering, not a table's column, when the next such
    page continues them (or both count from 1). Then a page with a shorter run (3+ lines:
    a page of floats) is stripped too when its numbers go on right where the numbered page
    before it stopped (or the next one starts right after them). A number at a line start is
    removed with one space after it; lines that held only a number become blank.
    """
    split = [p.split("\n") for p in pages]
    runs = [_number_run(lines) for lines in split]
    filled = [sum(1 for line in lines if line.strip()) for lines in split]
    strong = [k for k, run in enumerate(runs)
              if len(run) >= max(NUMBERED_LINES, NUMBERED_SHARE * filled[k])
              and 2 * sum(_prose(_LINE_NUMBER.sub("", split[k][i], count=1)) for i, _ in run)
              >= len(run)]
    numbered: set[int] = set()
    for a, b in zip(strong, strong[1:]):
        if _continues(runs[a], runs[b]):
            numbered |= {a, b}
    if not numbered:
        return list(pages)
    for order in (range(len(pages)), range(len(pages) - 1, -1, -1)):
        last = None  # the numbered page seen last in this pass
        for k in order:
            if k in numbered:
                last = k
            elif len(runs[k]) >= 3 and last is not None:
                a, b = sorted((last, k))
                if _continues(runs[a], runs[b], reach=_NUMBER_STEP):
                    numbered.add(k)
                    last = k
    out = list(pages)
    for k in sorted(numbered):
        lines = split[k]
        run = runs[k]
        for n, (i, v) in enumerate(run):
            line = _LINE_NUMBER.sub("", lines[i], count=1)
            upto = run[n + 1][1] if n + 1 < len(run) else v + 1
            for skipped in range(v + 1, upto):  # "doc\ufffe60 ument": PDFium joined the lines
                line = line.replace(f"\ufffe{skipped} ", "\ufffe", 1)
            lines[i] = line
        out[k] = "\n".join(lines)
    logger.debug("margin line numbers removed on %d page(s)", len(numbered))
    return out


# ---- running headers and footers -------------------------------------------------------

_DIGITS = re.compile(r"\d+")
_ROMAN = re.compile(
    r"\b(?=[mdclxvi])m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})\b"
)
_SPACES = re.compile(r"\s+")
# A line that is only a page number: "12", "- 12 -", "Page 3", "3 / 223", "iv", "Page 1 of 4".
_PAGE_NUMBER_LINE = re.compile(
    r"^[\s\-–—]*(?:page|p\.|seite|第)?\s*(?:\d+|[ivxlcdm]+)\s*(?:(?:/|of|von)\s*\d+)?\s*页?[\s\-–—]*$",
    re.IGNORECASE,
)
ZONE_LINES = 3  # lines at the top and at the bottom of a page that may be headers/footers
# Past a zone whose lines all went, further lines (up to this many from the edge, within the
# page's own half) go while each recurs exactly, at the same distance from the edge, on
# enough pages: a letterhead or a frame printed on every page (pdfx's manual repeats an
# address block, its title and authors and a column of links above every page's text).
DEEP_ZONE_LINES = 30
MIN_SHARE = 0.3  # a header must recur on at least this share of pages...
MIN_PAGES = 3  # ...and on at least this many pages


def _key(line: str) -> str:
    key = _DIGITS.sub("#", line.strip().lower())
    return _SPACES.sub(" ", _ROMAN.sub("#", key))


def _prefix(key: str) -> str | None:
    words = key.split(" ")
    if len(words) < 3:
        return None
    prefix = " ".join(words[:3])
    return prefix if len(prefix) >= 10 else None


def _zones(lines: list[str]) -> tuple[list[int], list[int]]:
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return filled[:ZONE_LINES], filled[::-1][:ZONE_LINES]


def _reaches(lines: list[str]) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(line index, its text) of the lines within DEEP_ZONE_LINES of the top and of the
    bottom, each within the page's own half (so the two never meet)."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    reach = min(DEEP_ZONE_LINES, len(filled) // 2)
    return ([(i, lines[i].strip()) for i in filled[:reach]],
            [(i, lines[i].strip()) for i in filled[::-1][:reach]])


def _furniture(reach: list[tuple[int, str]], zone: str, seen: Counter, need: int) -> list[int]:
    """The lines past the edge zone that go with it, up to the first that does not: each
    the same text at the same distance from the edge on need pages (seen), as a printed
    frame is; a code line or a number that recurs near the top at varying places is not."""
    out = []
    for rank, (i, text) in enumerate(reach[ZONE_LINES:], start=ZONE_LINES):
        if seen[(zone, rank, text)] < need:
            break
        out.append(i)
    return out


def _edge_number(line: str, numbers: set[str]) -> bool:
    """True for a short line that starts or ends with this page's number: "2.5. Priorities 11"."""
    words = line.split()
    return 1 < len(words) <= 12 and (words[0] in numbers or words[-1] in numbers)


_NON_WORD = re.compile(r"[\W_]+")
_TITLE_WORD = re.compile(r"^(?:chapter|appendix|part|section)\s+(?=\S)", re.IGNORECASE)
# A title's number: "2.3.", "10", "B.2", "A" (appendices).
_TITLE_NUMBER = re.compile(r"^((?:\d+|[A-Z])(?:\.\d+)*)\.?\s+(?=\S)")
MIN_TITLE_CHARS = 4  # titles shorter than this ("A", "FAQ") are never matched as running heads


def _title_key(text: str) -> str:
    """A title as running heads print it: "2.3:thepage" for "2.3. The page", "2.3 THE PAGE"
    and "Chapter 2.3 The page"; "~thepage" for "THE PAGE" (no number). Letters and digits
    only, lower case."""
    text = _TITLE_WORD.sub("", text.strip())
    m = _TITLE_NUMBER.match(text)
    if m is None:
        return "~" + _NON_WORD.sub("", text.lower())
    return m.group(1).lower() + ":" + _NON_WORD.sub("", text[m.end():].lower())


_TRAILING_NUMBER = re.compile(r"\s+\d{1,3}\s*$")


def _bare(key: str) -> str:
    """The key without its number."""
    return "~" + key.split(":", 1)[1] if ":" in key else key


class _RunningTitles:
    """Outline titles a page's running head may show: those of the entries (chapter,
    section...) that the page lies in, as _title_key with their number and without it."""

    def __init__(self, outline: Sequence[OutlineLike], lines: list[list[str]]) -> None:
        n = len(lines)
        self.lines = lines
        self.current: list[set[str]] = [set() for _ in range(n)]
        self.starts: list[set[str]] = [set() for _ in range(n)]
        self.first: dict[str, int] = {}  # key -> first page of an entry with that title
        self._keys: dict[int, dict[str, int]] = {}  # see _page_keys
        self._printed_keys: dict[int, set[str]] = {}  # see _printed
        entries = [e for e in outline if 1 <= e.page <= n]
        # Lines longer than every title (and its number, a page number) are never looked at.
        self.longest = min(MAX_TITLE_LINE, max((len(e.title) for e in entries), default=0) + 16)
        ends: list[int] = []  # where each entry runs to: where the next entry as high starts
        stack: list[int] = []  # entries still open, by index
        for k, e in enumerate(entries):
            ends.append(n)
            while stack and entries[stack[-1]].level >= e.level:
                ends[stack.pop()] = e.page
            stack.append(k)
        for e, end in zip(entries, ends):
            key = _title_key(e.title)
            keys = {t for t in (key, _bare(key)) if len(_bare(t)) > MIN_TITLE_CHARS}
            if not keys:
                continue
            self.starts[e.page - 1] |= keys
            for t in keys:
                self.first[t] = min(self.first.get(t, e.page), e.page)
            for page in range(e.page, max(end, e.page) + 1):
                self.current[page - 1] |= keys

    def _page_keys(self, page: int) -> dict[str, int]:
        """Title keys of the page's short lines -> the last line with it."""
        if page not in self._keys:
            self._keys[page] = {_title_key(line): i for i, line in enumerate(self.lines[page - 1])
                                if len(line) <= self.longest and _title_like(line)}
        return self._keys[page]

    def _printed(self, page: int) -> set[str]:
        """_page_keys, and those of lines ending in a number without it (a chapter style may
        put the number after the title: "Document divisions 6")."""
        if page not in self._printed_keys:
            keys = set(self._page_keys(page))
            for line in self.lines[page - 1]:
                if (len(line) <= self.longest and _title_like(line)
                        and _TRAILING_NUMBER.search(line)):
                    keys.add(_title_key(_TRAILING_NUMBER.sub("", line)))
            self._printed_keys[page] = keys
        return self._printed_keys[page]

    def running(self, page: int, i: int, line: str, numbers: set[str]) -> bool:
        """True when line i of the page is the title of an entry the page lies in and that
        title was printed before (on an earlier page since the entry started, or further
        down this page: "2.10. Example" above the heading "2.10 EXAMPLE")."""
        current = self.current[page - 1]
        if not current or len(line) > self.longest:
            return False
        key = _title_key(_without_number(line, numbers))
        if key not in current:
            return False
        if self._page_keys(page).get(key, -1) > i:
            return True
        if key in self.starts[page - 1]:
            return False
        # The heading may print the title without its number ("Two" / "Laying out the page").
        bare = _bare(key)
        return any(key in keys or bare in keys
                   for keys in map(self._printed, range(self.first[key], page)))


MAX_TITLE_LINE = 120  # characters: a longer line is body text, not a running head


def _title_like(line: str) -> bool:
    """A line that may be a heading: not too long, starting with a letter or digit (not a
    code comment such as "# background color")."""
    return len(line) <= MAX_TITLE_LINE and line.lstrip()[:1].isalnum()


def _without_number(line: str, numbers: set[str]) -> str:
    """The line without the page's number (or label) at its start or end."""
    words = line.split()
    if len(words) > 1 and words[-1] in numbers:
        words = words[:-1]
    if len(words) > 1 and words[0] in numbers:
        words = words[1:]
    return " ".join(words)


def strip_running_lines(pages: Sequence[str],
                        labels: Sequence[str | None] | None = None,
                        outline: Sequence[OutlineLike] | None = None) -> tuple[list[str], int]:
    """Remove running headers/footers and bare page numbers; returns (pages, lines removed).

    A line in the first or last three lines of a page is removed when, with digits and
    roman numerals masked, it (or its first three words) recurs in that zone on at least
    30% of the pages and on 3 pages or more; when it is only a page number; when it is a
    short line starting or ending with the page's own number or label; or when it is the
    title of an outline entry (chapter, section) that the page lies in, number and case
    aside: books set the current chapter's title on even pages and the section's on odd
    ones, so those heads change every few pages and recur on too few to count. On the page
    where the entry starts, its title is removed only where it occurs again further down (the
    heading itself): "2.10. Example" above "2.10 EXAMPLE". Past a zone whose lines all went,
    taller page furniture goes on (_furniture, DEEP_ZONE_LINES).
    """
    n = len(pages)
    split = [p.split("\n") for p in pages]
    if n < MIN_PAGES:
        return list(pages), 0
    need = max(MIN_PAGES, math.ceil(MIN_SHARE * n))
    titles = _RunningTitles(outline, split) if outline else None
    seen: Counter[tuple[str, str]] = Counter()
    reaches = [_reaches(lines) for lines in split]
    seen_deep = Counter((zone, rank, text) for top, bottom in reaches
                        for zone, reach in (("top", top), ("bottom", bottom))
                        for rank, (_, text) in enumerate(reach))
    # Per page and zone: [(line index, key, prefix)], computed once for counting and for removal.
    zone_keys: list[tuple[list[tuple[int, str, str | None]], ...]] = []
    for lines in split:
        top, bottom = _zones(lines)
        page_keys: set[tuple[str, str]] = set()
        zones = []
        for zone, idx in (("top", top), ("bottom", bottom)):
            keyed = []
            for i in idx:
                key = _key(lines[i])
                prefix = _prefix(key)
                keyed.append((i, key, prefix))
                page_keys.add((zone, key))
                if prefix:
                    page_keys.add((zone + "*", prefix))
            zones.append(keyed)
        zone_keys.append(tuple(zones))
        seen.update(page_keys)
    out: list[str] = []
    removed = 0
    for number, lines in enumerate(split, start=1):
        numbers = {str(number)}
        if labels and number - 1 < len(labels) and labels[number - 1]:
            numbers.add(str(labels[number - 1]))
        drop: set[int] = set()
        for zone, keyed, reach in zip(("top", "bottom"), zone_keys[number - 1],
                                      reaches[number - 1]):
            titled = False  # a running title was removed: a bare number under it is content
            for rank, (i, key, prefix) in enumerate(keyed):
                line = lines[i]
                if (
                    seen[(zone, key)] >= need
                    or (prefix is not None and seen[(zone + "*", prefix)] >= need)
                    or (_PAGE_NUMBER_LINE.match(line)
                        and not (titled and line.strip() not in numbers))
                    or (rank == 0 and _edge_number(line, numbers))
                ):
                    drop.add(i)
                elif titles is not None and titles.running(number, i, line, numbers):
                    drop.add(i)
                    titled = True
                else:
                    break  # headers sit at the very edge; stop at the first body line
            else:  # the whole zone went: taller page furniture may go on past it
                drop.update(_furniture(reach, zone, seen_deep, need))
        removed += len(drop)
        if drop:
            out.append("\n".join(line for i, line in enumerate(lines) if i not in drop).strip("\n"))
        else:
            out.append(pages[number - 1].strip("\n"))
    return out, removed


# ---- garbage text layers ----------------------------------------------------------------

_TOKEN = re.compile(r"\S+")
_SPACE_RUNS = re.compile(r"\s+")
_NOT_ALNUM = re.compile(r"[\W_]+")
# Dot leaders and bullets in tables of contents and lists are neither words nor noise.
_NEUTRAL = re.compile(r"[.·…•◦▪‣∙_\-–—]+")
_ASCII_KEEP_SPACE = bytes(c for c in range(128) if not chr(c).isspace())  # deleted: all but spaces
_ASCII_NOT_ALNUM = bytes(c for c in range(128) if not chr(c).isalnum())
# Dot leaders glued to words in tables of contents: "Introduction.......1".
_LEADER_RUN = re.compile(r"[.·…_]{3,}")
_EDGE_PUNCT = "()[]{}\"'“”‘’.,;:!?*"


def _unglue_leaders(text: str) -> str:
    """Dot leaders as spaces, so that "Introduction.....1" is two words."""
    if "..." in text or "…" in text or "___" in text or "···" in text:
        return _LEADER_RUN.sub(" ", text)
    return text


def text_quality(text: str) -> float:
    """Share of non-space characters in word-like tokens (mostly letters or digits of any
    script)."""
    total = good = 0
    for tok in _unglue_leaders(text).split():  # the same tokens as \\S+
        n = len(tok)
        if tok.isalnum():  # the common case: a plain word, all letters/digits, never neutral
            total += n
            if n < 40 or max(tok) >= "\u3000":
                good += n
            continue
        if _NEUTRAL.fullmatch(tok):
            continue
        total += n
        alnum = sum(1 for ch in tok if ch.isalnum())
        # Latin "words" over 40 characters are words run together; CJK has no spaces.
        if alnum * 2 > n and (n < 40 or max(tok) >= "\u3000"):
            good += n
    return good / total if total else 0.0


def _wordish(token: str) -> bool:
    """A word, number, command or path: at least two letters/digits making up half of it
    (past any brackets, quotes and punctuation at its edges), or "a", "I", a digit, a CJK character.
    """
    core = token.strip(_EDGE_PUNCT)
    if len(core) == 1:
        return core in "aAI" or core.isdigit() or core >= "\u3000"
    alnum = sum(1 for ch in core if ch.isalnum())
    return alnum >= 2 and alnum * 2 >= len(core)


def word_ratio(text: str) -> float:
    """Share of tokens that are word-like (see _wordish); OCR layers are judged by this.

    Measured on 1,101 real text pages (corpus manuals, papers, forms, htmldoc output), the
    first rule (whole tokens of 2+ letters or plain numbers, threshold 0.75) called 29% of
    them garbage; this one calls 1 (a page of symbol tables) garbage under 0.5.
    """
    tokens = [t for t in _unglue_leaders(text).split() if not _NEUTRAL.fullmatch(t)]
    if not tokens:
        return 0.0
    return sum(1 for t in tokens if _wordish(t)) / len(tokens)


OCR_LAYER_MIN_WORDS = 0.5  # an OCR layer with fewer word-like tokens than this is garbage


def is_garbage(text: str, ocr_layer: bool = False, min_chars: int = 20) -> bool:
    """True when a text layer looks like noise; an OCR layer must be mostly plain words."""
    stripped = text.strip()
    if len(stripped) < min_chars:
        return False
    if ocr_layer:
        return word_ratio(stripped) < OCR_LAYER_MIN_WORDS
    if stripped.isascii():
        # Same counts as the regexes below, by bytes.translate (whitespace as str.isspace).
        raw = stripped.encode("ascii")
        dense = len(raw) - len(raw.translate(None, _ASCII_KEEP_SPACE))
        alnum = len(raw.translate(None, _ASCII_NOT_ALNUM))
    else:
        squeezed = _SPACE_RUNS.sub("", stripped)
        dense, alnum = len(squeezed), len(_NOT_ALNUM.sub("", squeezed))
    if alnum >= 0.75 * dense:
        return False  # fast path: mostly letters and digits
    return text_quality(stripped) < 0.4
