"""Sections and blocks from page text: headings (outline or text), code, tables, lists, prose."""
from __future__ import annotations

import bisect
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from ingest.document import Block, OutlineLike, Page, Section

logger = logging.getLogger(__name__)

MAX_HEADING_CHARS = 100
MAX_BLOCK_CHARS = 4000  # a prose paragraph longer than this is cut at a line end


@dataclass
class _Heading:
    start: int  # first line of the heading
    end: int  # first line after it
    rank: float  # raw depth; compressed to 1..n levels later
    title: str


# ---- headings found in text ------------------------------------------------------------------

_ZH_NUM = "一二三四五六七八九十百千零〇两0-9０-９"
_MD_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
# A Markdown heading is marked as one: it may be longer than a guessed one (biblatex's release
# notes title a change with a 131-character sentence). A backslash escape in it ("man\_db-2.3.20")
# is the character it escapes (not in a code span).
_MD_HEADING_CHARS = 300
# "####General Notes": an ATX heading without its space (CommonMark wants one; Noto CJK's
# release notes write seven so), taken in a document that writes other ATX headings: two to
# six hashes, then a capital letter or a Han character.
_MD_ATX_TIGHT = re.compile(r"^ {0,3}(#{2,6})([A-Z\u4e00-\u9fff].*?)(?:[ \t]+#+)?[ \t]*$")
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
# A Markdown heading written as an HTML element on a line of its own ('<h2 id="x">Tutorial</h2>'),
# as READMEs do for an anchor to jump to; its title without the tags inside.
_MD_HTML = re.compile(r"^ {0,3}<h([1-6])(?:\s[^>]*)?>(.+?)</h\1>[ \t]*$", re.IGNORECASE)
_HTML_TAG = re.compile(r"<[^>]+>")


def _md_title(title: str) -> str:
    """A Markdown heading's title with its backslash escapes resolved outside code spans."""
    parts = title.split("`")
    return "`".join(_MD_ESCAPE.sub(r"\1", p) if k % 2 == 0 else p for k, p in enumerate(parts))


# A Markdown bullet item: a "---" under it is a thematic break, not a heading's underline.
# (A numbered line keeps its underline: "1. Introduction" over "====" is meant as a title.)
_MD_LIST_ITEM = re.compile(r"^[ \t]*[-*+][ \t]")
# "2.3 Title", "2. Title", and in Chinese "2．标题" or "2、标题" (a full-width point or an
# enumeration comma, no space).
_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,3}){0,5})(?:\.?[ \t]+|[．、][ \t]*)(\S.*)$")
_CHAPTER = re.compile(
    r"^(chapter|appendix|part)[ \t]+([0-9]{1,3}|[ivxlc]{1,6}|[a-z])\b[.:]?[ \t]*(.*)$",
    re.IGNORECASE,
)
_ZH_HEADINGS = (
    (re.compile(f"^第 ?[{_ZH_NUM}]+ ?[部篇卷]"), 0.0),
    (re.compile(f"^第 ?[{_ZH_NUM}]+ ?章"), 1.0),  # "第 1 章" in DocBook's text output
    (re.compile(f"^第 ?[{_ZH_NUM}]+ ?节"), 2.0),
    (re.compile(r"^[一二三四五六七八九十]{1,3}、"), 2.5),
    (re.compile(r"^[（(][一二三四五六七八九十]{1,3}[）)]"), 3.5),
)
_SETEXT = re.compile(r"^[ \t]*([=\-*~^#+])\1{2,}[ \t]*$")
# A bare link or path on a line of its own ("wiki.creativecommons.org/Considerations_for_
# licensees" at the end of a paragraph, CC BY 4.0's preamble) is no title over a rule. Found
# where a text file's page cut dropped the blank line between the two; structure_pages(gaps=)
# now puts such a blank line back, and this stays for pages that meet without one (form-feed
# pages, a cut inside a long paragraph).
_BARE_LINK = re.compile(r"^\S*(?:/|://)\S*$|^www\.\S+$")
# AsciiDoc section titles ("== Exploring Git history", "==== update script ===="), in a plain
# text that has at least _ADOC_MIN of them; the title keeps its marks, as the text prints it.
# Such a text's two-line titles have an underline as long as the title (2 characters either
# way): a listing's 48-dash delimiter under its first code line is none.
_ADOC_TITLE = re.compile(r"^(={1,5})[ \t]+((?:[^\W_]|[\"“`']).*?)(?:[ \t]+=+)?[ \t]*$")
_ADOC_MIN = 3  # of them at level 1 or deeper ("== ..."): one "=" starts a formula's line too
# ... each after a blank line (or first), as AsciiDoc wants: in a PDF's text "== NULL, ..."
# and "= 0 indicates false" are a sentence's lines (CFITSIO's guide), not titles.
_ADOC_UNDERLINE_SLACK = 2
# A LaTeX source read as plain text (a manual shipped as its .tex file): its sectioning
# commands on lines of their own are its headings, \part to \paragraph, the title keeping
# the command as the text prints it. Only in a text that is a LaTeX document (its first line
# other than comments starts with \documentclass or \begin{document}): a plain text quoting
# such lines in its examples (the CJK package's README) is not one.
_TEX_DOCUMENT = re.compile(r"^\s*\\(?:documentclass|begin\{document\})")
_TEX_HEADING = re.compile(
    r"^\s*\\(part|chapter|section|subsection|subsubsection|paragraph)\*?(?:\[[^\]]*\])?"
    r"\{.+\}\s*(?:%.*)?$")
_TEX_RANKS = {"part": 0.0, "chapter": 1.0, "section": 2.0, "subsection": 3.0,
              "subsubsection": 4.0, "paragraph": 5.0}
# A manual page rendered to text (man, groff -Tutf8): its first line names the page at both
# ends ("BASH(1)   General Commands Manual   BASH(1)"), its section titles stand at column 0
# ("NAME", "描述(DESCRIPTION)"), its subsection titles at column 3 over a body at column 7 (at
# column 5 in a page written with the mdoc macros, as ssh(1) is). The name may hold a space
# (manpages-zh's "lilybbs faq(7)").
_MAN_HEADER = re.compile(r"^(\S(?:[^()]*?\S)?)\((\d\w*)\)\s{2,}(?:.*\s{2,})?\1\(\2\)\s*$")
# A page rendered without that header (mail(1) of manpages-zh has no .Dt) still opens with
# its NAME section: the title at column 0 ("NAME", "NAME(名称)", "名称"), the body indented.
_MAN_NAME = re.compile(r"^(?:NAME|名称|名字)(?![A-Za-z])")
_MAN_SUBSECTION = re.compile(r"^ {3}\S")
_MAN_BODY = re.compile(r"^ {4,}\S")
_MAN_NUDGED = re.compile(r"^ {1,2}\S")
# The header's and footer's end: the page's name and section ("... BASH(1)"); an mdoc page's
# footer has three columns instead ("BSD      September 25, 1999      BSD").
_MAN_TITLE_END = re.compile(r"\S+\(\d\w*\)$")
_MAN_FOOTER = re.compile(r"\S {3,}\S.* {3,}\S")
# A Vim help file ("*usr_41.txt*  For Vim version 9.0." on its first line): a line under a
# rule of "=" is a section's title ("*41.1*  Introduction  *vim-script-intro*"), a line
# under a rule of "-" a subsection's.
_VIM_HELP = re.compile(r"^\*[\w.-]+\.txt\*\s")
_VIM_RULE = re.compile(r"^(=|-)\1{39,}\s*$")
# An Org / Emacs outline-mode text (Emacs's DEBUG, NEWS): "** Preliminaries", "*** Configuring
# GDB"; the stars give the level. Only in a text with at least _ORG_MIN such lines of two or
# more stars (a bullet list's single "* " items alone are no outline).
_ORG_HEADING = re.compile(r"^(\*{1,8})[ \t]+\S")
_ORG_DEEP = re.compile(r"^\*{2,8}[ \t]+\S")
_ORG_MIN = 3
# A text that titles each part on the line under a long rule (vimtutor, in every language:
# "~~~~" then "Lesson 1.1:  MOVING THE CURSOR", "第一讲第一节：移动光标"; a banner of "=" around
# its own title). It is such a text when at least _RULED_MIN rules have a title under them
# (a short line, then a blank line) and most of its rules do: underlines (setext) and rules
# between paragraphs have a blank line or a paragraph under them.
_RULE = re.compile(r"^[ \t]*([=~\-*#_])\1{39,}[ \t]*$")
_RULED_MIN = 4
_RULED_TITLE_CHARS = 60
_RULE_EDGE = re.compile(r"^[=~\-*#_ \t]+|[=~\-*#_ \t]+$")
_LEADERS = re.compile(r"\.\s?\.\s?\.|…")
# One ellipsis ending a title ("5 But how do I . . .") or opening one ("5.1 . . . prevent
# paragraph indentation?": the chapter's question finished by each section) is part of the
# title; more dots are a contents line's leaders.
_CLOSING_ELLIPSIS = re.compile(r"\s*(?:\.\s?\.\s?\.|…)$")
_OPENING_ELLIPSIS = re.compile(r"^(?:\.\s?\.\s?\.|…)\s*(?=\w)")
_TRAILING_PAGE = re.compile(r"\s\d{1,4}$")
# A title after a full-width point ("2．文献综述") is short and no sentence: "1．学位论文要求对
# 实验原理……阐述，以便评阅人" is a list item's text.
_ZH_CLAUSE = re.compile(r"[，。；]")
_ZH_TITLE_CHARS = 30
_SENTENCE_END = re.compile(r"[.,;。，；]$")
# A fence opens or closes a code block: three backticks with no backtick after them on the
# line ("```\usepackage{x}```" is inline code, CommonMark), or three tildes, but not a rule
# of 40 or more tildes alone (vimtutor's, between its lessons: see _RULE).
FENCE = re.compile(r"^ {0,3}(```+(?!.*`)|~~~(?!~{37,}[ \t]*$))")
# A line of tildes alone about as long as the line above it (from 0.8 to 1.5 times) underlines
# that line as a title (valgrind's NEWS: "Release 3.17.0 (...)" over "~~~~"): no fence opens
# there. A fence that opens under a line of text is shorter ("Example:" over "~~~") or under
# a line that introduces it ("This is a paragraph introducing:" in doxygen's manual).
_TILDES = re.compile(r"^ {0,3}(~{3,})[ \t]*$")


def fences(lines: Sequence[str]) -> Iterator[tuple[int, bool]]:
    """The lines that open or close a code fence (FENCE), as (index, opens), in order: not an
    underline of tildes (_TILDES) where no fence is open."""
    open_ = False
    for i, line in enumerate(lines):
        if not FENCE.match(line):
            continue
        if not open_ and (m := _TILDES.match(line)) and i and (above := lines[i - 1].strip()):
            if (0.8 * len(above) <= len(m.group(1)) <= 1.5 * len(above)
                    and not above.endswith((":", "：")) and not FENCE.match(lines[i - 1])):
                continue
        open_ = not open_
        yield i, open_


_CANDIDATE_START = re.compile(f"[0-9#cCaApPIVXA-H第（({_ZH_NUM}]")
# Papers (APS, IEEE): "I. INTRODUCTION" above "A. Background" above "1. Details".
_ROMAN_HEAD = re.compile(r"^([IVX]{1,6})\.[ \t]+(\S.*)$")
_LETTER_HEAD = re.compile(r"^([A-H])\.[ \t]+(\S.*)$")
# Appendix sections under a letter heading: "A.1. Proposal", "B.2.3 Tables".
_LETTER_NUMBERED = re.compile(r"^([A-H])\.(\d{1,2}(?:\.\d{1,3}){0,4})\.?[ \t]+(\S.*)$")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10}


def _roman(numeral: str) -> int:
    total = 0
    for k, ch in enumerate(numeral):
        value = _ROMAN_VALUES[ch]
        total += -value if k + 1 < len(numeral) and _ROMAN_VALUES[numeral[k + 1]] > value else value
    return total


def _title_ok(title: str, max_words: int = 12) -> bool:
    core = _CLOSING_ELLIPSIS.sub("", title)
    opened = _OPENING_ELLIPSIS.match(core)
    core = core[opened.end():] if opened else core
    if not core:
        return False
    first = core[0]
    if opened:  # ". . . prevent paragraph indentation?" finishes its chapter's "How do I . . ."
        if not first.isalpha():
            return False
    elif not (first.isalpha() and not first.islower()) and first not in "\"'“(":
        return False
    if _LEADERS.search(core) or _TRAILING_PAGE.search(core) or _SENTENCE_END.search(core):
        return False
    return len(core.split()) <= max_words


def _plausible_next(prev: tuple[int, ...] | None, num: tuple[int, ...]) -> bool:
    """True when num can follow prev in a numbering (sibling, child or ancestor step, small
    gaps)."""
    if prev is None:
        return True
    for k in range(len(prev)):
        if num[:k] == prev[:k] and len(num) == k + 1 and 0 < num[k] - prev[k] <= 2:
            return True
        if (len(num) == k + 2 and num[:k] == prev[:k] and 0 < num[k] - prev[k] <= 2
                and num[k + 1] == 1):
            return True
    return (num[: len(prev)] == prev and len(num) > len(prev)
            and all(x == 1 for x in num[len(prev):]))


# A title ended by a period, alone or before its clause's text ("1. Definitions.", "2. Grant of
# Copyright License. Subject to ..."): licences and contracts number their sections this way.
_RUN_IN = re.compile(r"([^.,;:!?]{2,80})\.(?:[ \t]+([A-Z\"“(].*))?")
_SMALL_WORDS = frozenset(
    "a an and as at but by for from in into its nor of on or the this to vs with".split())


def _run_in_title(title: str) -> bool:
    """True for a phrase in title case ("Grant of Copyright License", "Definitions"): short,
    every word capitalised but small ones, and no initials ("Knuth D" is a reference)."""
    words = title.split()
    if not words or len(words) > 10 or not title[0].isupper():
        return False
    for word in words:
        letters = word.lstrip("\"“‘'(")
        if not letters or letters[0].isdigit():
            continue
        if (letters[0].islower() and word not in _SMALL_WORDS) or (
                len(letters) == 1 and letters.isupper() and word is not words[0]):
            return False
    return True


def _runs_on(raw: str, text_start: int, nxt: str, wrap: int) -> bool:
    """True for a numbered line that is a list item, not a heading: it nearly fills the line
    (3/4 of the text's usual width) and the next line goes on with it, starting in lower case
    or indented to where the item's own text starts; or it leaves a bracket open, or ends
    with a colon above a list."""
    if not nxt.strip():
        return False
    if raw.rstrip().endswith((":", "：")) and _LIST_ITEM.match(nxt):
        return True  # "7. Term limit:" above its own list
    if raw.count("(") > raw.count(")"):
        return True  # "... the Current Maintainer (and the" / "Copyright Holder, ...)"
    if len(raw.rstrip()) < 0.75 * wrap:
        return False
    column = len(raw) - len(raw.lstrip()) + text_start  # where "A person ..." starts in raw
    return nxt.lstrip()[0].islower() or len(nxt) - len(nxt.lstrip()) == column > 0


def _continues_above(prev: str, raw: str, wrap: int) -> bool:
    """True when a full line starting with a number follows a full line cut mid-sentence (it
    ends in a lower-case word or a comma): the middle of a paragraph ("under section" / "7.
    This requirement modifies ..."), not a heading."""
    end = prev.rstrip()[-1:]
    return (len(prev.rstrip()) >= 0.75 * wrap and len(raw.rstrip()) >= 0.75 * wrap
            and (end.islower() or end == ","))


def _text_width(lines: list[str]) -> int:
    """The usual length of a full line of text (90th percentile of non-blank lines)."""
    lengths = sorted(len(line.rstrip()) for line in lines if line.strip())
    return lengths[int(0.9 * (len(lengths) - 1))] if lengths else 0


@dataclass
class _Numbering:
    """What the headings above say about the next one: the last number of each style."""
    num: tuple[int, ...] | None = None  # last "2.3" heading's numbers
    roman: int = 0  # last "IV." heading's number (0: none yet)
    letter: int = 0  # last "B." heading's number (0: none yet)
    sub: tuple[int, ...] | None = None  # last "A.1" heading's numbers under its letter
    indent: int = 0  # of the last numbered heading: a sibling or parent is not indented deeper
    base: float = 0.0  # added to a numbered heading's depth: 1 under a chapter whose own
    # sections number from 1 again ("Chapter 2. Getting Started" / "1. Core Concepts")
    # After a table of contents found below numbered headings, or a Chinese heading ("（五）正文"):
    # their last number. The next heading either goes on from it or numbers from 1 again; a
    # listing taken for contents (typeset pseudocode's "1 while ...", "2 if ...") makes no
    # "2 This one is not" a heading.
    resume: tuple[int, ...] | None = None

    def last(self) -> tuple[int, ...] | None:
        """The last number seen: the last numbered heading's, else the one resumed from."""
        return self.num if self.num is not None else self.resume

    def plausible(self, num: tuple[int, ...]) -> bool:
        """Whether a heading numbered num can come next."""
        if self.num is None and self.resume is not None:
            return _plausible_next(self.resume, num) or all(x <= 1 for x in num)
        return _plausible_next(self.num, num)


def _adoc_title(lines: list[str], i: int) -> re.Match[str] | None:
    """The AsciiDoc section title on line i: "== Title" after a blank line (or first), or
    after its block anchor or attributes ("[[introduction]]", "[appendix]")."""
    above = lines[i - 1].strip() if i > 0 else ""
    if above and not (above.startswith("[") and above.endswith("]")):
        return None
    return _ADOC_TITLE.match(lines[i])


def _marked_up(lines: list[str]) -> str:
    """How a plain text marks its headings up, if it does: "tex" (a LaTeX source), "man" (a
    manual page rendered to text), "vim" (a Vim help file), "org" (an Org outline), "ruled"
    (titles under rules), or ""."""
    first = next((line for line in lines if line.strip() and not line.lstrip().startswith("%")),
                 "")
    if _TEX_DOCUMENT.match(first) and sum(1 for line in lines if _TEX_HEADING.match(line)) >= 2:
        return "tex"
    if _MAN_HEADER.match(first.rstrip()) or _MAN_NAME.match(first) and _MAN_BODY.match(
            _next_text(lines, lines.index(first))):
        return "man"
    if _VIM_HELP.match(first):
        return "vim"
    if sum(1 for line in lines if _ORG_DEEP.match(line)) >= _ORG_MIN:
        return "org"
    rules = [i for i, line in enumerate(lines) if _RULE.match(line)]
    titled = sum(1 for i in rules if _ruled_title(lines, i + 1))
    return "ruled" if titled >= _RULED_MIN and 2 * titled > len(rules) else ""


def _ruled_title(lines: list[str], i: int) -> str:
    """The title on line i when it stands under a rule (see _RULE), else "": a short line
    that is no rule and no sentence, with a blank line, a rule or the end under it."""
    if not 0 < i < len(lines) or not _RULE.match(lines[i - 1]) or _RULE.match(lines[i]):
        return ""
    title = " ".join(_RULE_EDGE.sub("", lines[i]).split())
    below = lines[i + 1] if i + 1 < len(lines) else ""
    ok = 0 < len(title) <= _RULED_TITLE_CHARS and not _SENTENCE_END.search(title) \
        and (not below.strip() or _RULE.match(below))
    return title if ok else ""


def _marked_heading(mode: str, lines: list[str], i: int) -> _Heading | None:
    """The heading on line i of a text marked up as mode (_marked_up), or None."""
    raw = lines[i]
    line = raw.strip()
    if mode == "tex" and (m := _TEX_HEADING.match(raw)):
        return _Heading(i, i + 1, _TEX_RANKS[m.group(1)], line)
    if mode == "vim" and i > 0 and (m := _VIM_RULE.match(lines[i - 1])) \
            and not _VIM_RULE.match(raw):  # titles under the rules
        return _Heading(i, i + 1, 1.0 if m.group(1) == "=" else 2.0, " ".join(line.split()))
    if mode == "org" and (m := _ORG_HEADING.match(raw)):
        return _Heading(i, i + 1, float(len(m.group(1))), line)
    if mode == "ruled" and (title := _ruled_title(lines, i)):
        return _Heading(i, i + 1, 1.0, title)
    if mode == "man":  # titles by their column; the page's header and footer name the page
        # Lines at column 0 one after another are no titles but the rows of an example the
        # page does not indent (proc(5)'s /proc/net tables).
        if _man_title_line(raw) and not (i > 0 and _man_title_line(lines[i - 1])) \
                and not (i + 1 < len(lines) and _man_title_line(lines[i + 1])):
            return _Heading(i, i + 1, 1.0, line)
        if _MAN_SUBSECTION.match(raw) and _MAN_BODY.match(_next_text(lines, i)):
            return _Heading(i, i + 1, 2.0, line)
        # A section title that its source put one or two spaces in (pppd(8) in Chinese: " 常用
        # 选项 FREQUENTLY USED OPTIONS", its options' first part), over body text; not a row
        # of an example's columns (zipinfo(1)'s " -rw-rws---  1.5 unx  2802 ...").
        if (_MAN_NUDGED.match(raw) and _man_title_line(line) and "  " not in line
                and _MAN_BODY.match(_next_text(lines, i))
                and not (i > 0 and lines[i - 1].strip())):
            return _Heading(i, i + 1, 1.0, line)
    return None


# A FAQ's question as a man page prints it: a line of its own in the body's column, with a
# question mark that ends a sentence ("What is Perl? 什么是 Perl", "1.  如果……会怎样？"),
# not ending as a sentence of the body does. perlfaq1(7) and epoll(7) in Chinese print their
# questions so; none was a heading.
_MAN_QUESTION = re.compile(r"^ {4,}\S.{0,98}(?:[?？](?=\s|$|[^\x00-\x7f])).*$")
_MAN_QUESTION_END = re.compile(r"[.,;:。，；：]$")
_MAN_QUESTIONS_MIN = 3


def _man_lines(lines: list[str], pattern: re.Pattern[str],
               not_ending: re.Pattern[str] | None = None) -> set[int]:
    """The lines of a man page that match pattern on a line of their own (between blank
    lines, at most 100 characters, not ending as not_ending says), where it has at least
    _MAN_QUESTIONS_MIN of them: its FAQ questions (_MAN_QUESTION) or its titles in two
    languages (_MAN_TWO_TITLES)."""
    found = {i for i in range(1, len(lines) - 1)
             if not lines[i - 1].strip() and not lines[i + 1].strip()
             and len(lines[i].strip()) <= 100 and pattern.match(lines[i])
             and not (not_ending and not_ending.search(lines[i].strip()))}
    return found if len(found) >= _MAN_QUESTIONS_MIN else set()


# A subsection title as a translated man page prints it in the body's column: the original
# English title and its Chinese translation on a line of their own ("Security Bugs 安全问题",
# "Inheriting the windpipes 继承气管": perlsec(1) and perlboot(1) in Chinese), not a tag and
# its text (two spaces between them: "b      特殊块文件") nor a sentence.
_MAN_TWO_TITLES = re.compile(r"^ {4,}[A-Za-z@$][\w@$'&/,()\-]*(?: [\w@$'&/,()\-]+)+"
                             r" [\u3400-\u9fff][\u3400-\u9fff\w()（）、 ]*$")


def _man_title_line(raw: str) -> bool:
    """Whether a line of a man page stands at column 0 as a section title does: not blank,
    and not the page's header or footer."""
    line = raw.strip()
    return bool(line) and raw[0] != " " and not _MAN_TITLE_END.search(line) \
        and not _MAN_FOOTER.search(line)


def _next_text(lines: list[str], i: int) -> str:
    """The next non-blank line after line i ("" at the end)."""
    return next((line for line in lines[i + 1:] if line.strip()), "")


# A release's line in a plain-text NEWS file: its version and date alone on the line ("5.4.1
# (2023-01-11)", "Version 2.3 - 2021-05-02", "v1.2.0 [2020-01-31]"). The versions go down
# the file, so the numbering rule took only the first (xz's release notes: every older
# release sat in that one section of 15,000 tokens).
_RELEASE = re.compile(r"^(?:version[ \t]+|release[ \t]+|v)?\d+(?:\.\d+){1,3}[a-z0-9~+-]*[ \t]*"
                      r"(?:[-–:][ \t]*)?[(\[]?\d{4}-\d{2}-\d{2}[)\]]?$", re.IGNORECASE)
_RELEASES_MIN = 2


def _release_lines(lines: list[str]) -> dict[int, float]:
    """{line: rank} of the release lines (_RELEASE) of a text that has at least
    _RELEASES_MIN, at column 0 with a blank line or the text's edge above: one level
    below a title underlined before the first of them, else level 1."""
    found = [i for i, raw in enumerate(lines)
             if raw[:1].isalnum() and (i == 0 or not lines[i - 1].strip())
             and _RELEASE.match(raw.strip())]
    if len(found) < _RELEASES_MIN:
        return {}
    titled = any(_SETEXT.match(lines[k]) for k in range(1, found[0]))
    return dict.fromkeys(found, 2.0 if titled else 1.0)


def _text_headings(lines: list[str], markdown: bool, mode: str = "",
                   fenced: dict[int, bool] | None = None) -> list[_Heading]:
    """The headings of a text without an outline; mode is _marked_up(lines) (markdown: "");
    fenced: dict(fences(lines)), where the caller has it."""
    heads: list[_Heading] = []
    wrap = _text_width(lines)
    seen = _Numbering()
    in_fence = False
    n = len(lines)
    adoc = not markdown and sum(1 for i, line in enumerate(lines) if line.startswith("==")
                                and _adoc_title(lines, i)) >= _ADOC_MIN
    setext_ranks: dict[str, int] = ({"=": 1, "-": 2} if markdown else
                                    dict(zip("=-~^+", range(1, 6))) if adoc else {})
    contents = set() if markdown else _contents_lines(lines)
    listed = _listed_titles(lines, contents)
    outdented = set() if markdown else _outdented_lines(lines)
    repeated = set() if markdown else _repeated_numbered(lines, contents)
    atx = _MD_ATX_TIGHT if markdown and any(_MD_ATX.match(raw) for raw in lines) else None
    releases = {} if markdown or adoc or mode else _release_lines(lines)
    subtitles = (_man_lines(lines, _MAN_QUESTION, _MAN_QUESTION_END)
                 | _man_lines(lines, _MAN_TWO_TITLES)) if mode == "man" else set()
    fenced = dict(fences(lines)) if fenced is None else fenced
    for i, raw in enumerate(lines):
        if i in fenced:
            in_fence = fenced[i]
            continue
        line = raw.strip()
        if in_fence or not line or len(line) > (_MD_HEADING_CHARS if markdown
                                                 else MAX_HEADING_CHARS):
            continue
        if i in contents:
            if i + 1 not in contents:  # its last entry: the body numbers from 1 again
                under = heads[-1] if heads and _CHAPTER.match(heads[-1].title) else None
                seen = _Numbering(base=under.rank if under else 0.0,
                                  resume=seen.last())
            continue
        if markdown and ((m := _MD_ATX.match(raw)) or (atx and (m := atx.match(raw)))):
            heads.append(_Heading(i, i + 1, float(len(m.group(1))),
                                  _md_title(m.group(2).strip())))
            continue
        if markdown and (m := _MD_HTML.match(raw)) and \
                (title := _HTML_TAG.sub("", m.group(2)).strip()):
            heads.append(_Heading(i, i + 1, float(m.group(1)), title))
            continue
        if adoc and (m := _adoc_title(lines, i)):
            heads.append(_Heading(i, i + 1, float(len(m.group(1))), line))
            continue
        if mode:  # headings marked up: no guessing from numbers, indents or underlines
            if head := _marked_heading(mode, lines, i):
                heads.append(head)
            elif i in subtitles:
                above = next((h.rank for h in reversed(heads) if h.start not in subtitles), 0.0)
                heads.append(_Heading(i, i + 1, min(above + 1.0, 3.0), line))
            continue
        nxt = lines[i + 1] if i + 1 < n else ""
        if (m := _SETEXT.match(nxt)) and not _SETEXT.match(raw) and i + 1 not in fenced \
                and (i == 0 or not lines[i - 1].strip() or markdown) \
                and len(nxt.strip()) >= min(3, len(line)) and line[0] not in "|+" \
                and not _BARE_LINK.match(line) \
                and not (markdown and _MD_LIST_ITEM.match(raw)) \
                and (not adoc or abs(len(nxt.strip()) - len(line)) <= _ADOC_UNDERLINE_SLACK):
            rank = setext_ranks.setdefault(m.group(1), len(setext_ranks) + 1)
            if num := _NUMBERED.match(line):
                seen.num = tuple(int(x) for x in num.group(1).split("."))
            heads.append(_Heading(i, i + 2, float(rank),
                                  _md_title(line) if markdown else line))
            continue
        if markdown or adoc:  # headings marked up: no guessing from numbers and indents
            continue
        if i in releases:
            heads.append(_Heading(i, i + 1, releases[i], line))
        elif _CANDIDATE_START.match(line) and i not in repeated \
                and (head := _plain_heading(lines, i, wrap, seen, listed)):
            heads.append(head)
        elif i in outdented:
            heads.append(_outdented_heading(lines[i], i, outdented[i]))
    return heads


# A numbered line that comes again within this many lines (outside a table of contents) is
# an example's or a list's line, not a heading: pseudo's manual prints "1 Eeny", "2 Meeny",
# "3 Miny", "4 Moe" four times over as typeset pseudocode.
_REPEAT_WINDOW = 30


def _repeated_numbered(lines: list[str], contents: set[int]) -> set[int]:
    """The numbered lines ("1 Eeny") whose text is on another line within _REPEAT_WINDOW
    lines, that other line not in a table of contents, and those of a numbered listing."""
    numbered = {i: m for i, raw in enumerate(lines)
                 if i not in contents and (m := _NUMBERED.match(raw.strip()))}
    at: dict[str, list[int]] = {}
    for i in numbered:
        at.setdefault(lines[i].strip(), []).append(i)
    out: set[int] = set()
    for found in at.values():
        for a, b in zip(found, found[1:]):
            if b - a <= _REPEAT_WINDOW:
                out.update((a, b))
    # And numbered lines one right under the other, numbered one after the other at the
    # same depth ("10 Maybe we're continuing ...", "11 Anyway, let's keep going!"): the lines
    # of a numbered listing, as chapters do not follow each other without a line of body.
    for i, a in numbered.items():
        b = numbered.get(i + 1)
        if b and "." not in a.group(1) + b.group(1) \
                and int(b.group(1)) == int(a.group(1)) + 1:
            out.update((i, i + 1))
    return out


# A text dumped from HTML (lynx, w3m: Debian's web pages, bug tracker documents) indents
# its paragraphs by a few spaces and its headings less: "Sending the bug report" at column
# 0 (h2), "  Pseudo-headers" at 2 (h3), the body at 3. Such a text has most of its lines at
# one indent of 2 to 8 columns; a line of its own (blank lines around it) less indented,
# short, not a sentence and not a line the text repeats (a page header), is a heading.
_BODY_SHARE = 0.6  # of the non-blank lines at the body's indent
_BODY_MIN = 0.15  # of the non-blank lines at the least of a body's indents
_OUTDENTED_MIN = 3  # such lines, for the rule to apply
_OUTDENTED_WORDS = 14
_NOT_TITLE_START = re.compile(r"^[*\-+•·|#>\[(<=_~0-9]")  # a number: the numbered rule's
_COLUMNS = re.compile(r"\S {3,}\S")  # "RFC 9110     HTTP Semantics     June 2022"
_FIELD = re.compile(r"^[A-Za-z][\w-]*:\s")  # "Forwarded: foo@example.com", an example's line
_CLAUSE_END = re.compile(r"[.,;:。，；：]$")


def _outdented_lines(lines: list[str]) -> dict[int, int]:
    """The heading lines of a text laid out as above ({line: the body's indent}), found
    once; none where the text is not laid out so."""
    counts: dict[int, int] = {}
    seen: dict[str, int] = {}
    for raw in lines:
        if raw.strip():
            k = len(raw) - len(raw.lstrip(" "))
            counts[k] = counts.get(k, 0) + 1
            key = " ".join(raw.split()).casefold()
            seen[key] = seen.get(key, 0) + 1
    total = sum(counts.values())
    if not total:
        return {}
    body = max(counts, key=counts.get)
    if not 2 <= body <= 8 or counts[body] < _BODY_SHARE * total:
        # Or the body is laid out at several indents (a list's names at 2, their fields at
        # 6, wrapped values at 20): the least of them that holds _BODY_MIN of the lines, with
        # _BODY_SHARE of all lines at it or deeper.
        body = min((k for k in range(2, 9) if counts.get(k, 0) >= _BODY_MIN * total),
                   default=0)
        if not body or sum(c for k, c in counts.items() if k >= body) < _BODY_SHARE * total:
            return {}
    repeated = {t for t, c in seen.items() if c >= 3}
    out = {k: body for k in range(len(lines)) if _outdented(lines, k, body, repeated)}
    return out if len(out) >= _OUTDENTED_MIN else {}


def _outdented(lines: list[str], i: int, body: int, repeated: set[str]) -> bool:
    raw = lines[i]
    line = raw.strip()
    if not line or len(raw) - len(raw.lstrip(" ")) >= body or "\t" in raw[:body]:
        return False
    if (i and lines[i - 1].strip()) or (i + 1 < len(lines) and lines[i + 1].strip()):
        return False  # a line of its own, blank lines around it
    if (len(line) > MAX_HEADING_CHARS or len(line.split()) > _OUTDENTED_WORDS
            or _NOT_TITLE_START.match(line) or _COLUMNS.search(line) or _FIELD.match(line)
            or _CLAUSE_END.search(line)):
        return False
    return " ".join(line.split()).casefold() not in repeated


def _outdented_heading(raw: str, i: int, body: int) -> _Heading:
    """Line i (raw), one of _outdented_lines, as a heading ranked by its indent (column 0
    first)."""
    indent = len(raw) - len(raw.lstrip(" "))
    return _Heading(i, i + 1, 1.0 + indent / body, raw.strip())


# A table of contents in a plain text: numbered, chapter or appendix lines under a title
# that says so ("Table of Contents", "List of Tables", "目录"), or CONTENTS_MIN of them in a
# row whose first comes back later as a line of its own (the heading it lists). DocBook's
# text output has one at the top and one under each chapter heading. It goes on over blank
# lines and entries wrapped onto the next line, up to the body: a line of text after a
# blank one, an entry it already holds (the body's first heading) or a chapter heading that
# it does not list. Its lines are no headings; the body's headings number from 1 again.
_CONTENTS_TITLE = re.compile(
    r"^(?:table\s+of\s+)?contents\b|^list\s+of\s+(?:tables|figures|examples|listings|illustrations)"
    r"\b|^目\s*录|^图\s*目\s*录|^表\s*目\s*录", re.IGNORECASE)
_CONTENTS_MIN = 3  # entries in a row, where no title says that they are contents


_PAGE_NO = r"(?:\d{1,4}|[ivxlc]{1,7})"  # a contents entry's page number, arabic or roman
_PAGE_REF = re.compile(rf"(?:\s*(?:\.\s?){{2,}}|\s*…+)(?:\s*{_PAGE_NO})?$"
                       r"|\s+\d{1,4}$", re.IGNORECASE)  # " . . . 12", " . . . ix", " 12"
# The rest of an entry whose title filled the line: its leaders and page number alone (SCons'
# guide; where the page number is cut off at the page's edge, the leaders alone).
_LEADERS_ONLY = re.compile(rf"^(?:(?:\.\s?){{3,}}|…+)\s*{_PAGE_NO}?$", re.IGNORECASE)
# Leaders up to a page number: an entry without a number ("Preface ........ ix"); a line
# that ends in an ellipsis ("Loading...") is none.
_LEADERED_PAGE = re.compile(rf"(?:(?:\.\s?){{2,}}|…+)\s*{_PAGE_NO}$", re.IGNORECASE)
_WRAPPED_MAX = 2  # lines of one wrapped entry


def _contents_entry(line: str) -> bool:
    """A line that may list a heading: numbered ("2.3 Title"), chapter or appendix, its
    title starting with a letter (not "4 + 1 = (x": a formula's line); or any title that
    leaders lead to its page number ("Preface ........ ix")."""
    raw = line.strip()
    s = _entry_key(raw)  # leaders can fill the line: measure the title
    if not s or len(s) > MAX_HEADING_CHARS:
        return False
    m = _NUMBERED.match(s) or _LETTER_NUMBERED.match(s)
    if m:
        return s[m.start(m.lastindex)].isalpha() or s[m.start(m.lastindex)] in "\"'“/\\"
    if _CHAPTER.match(s):
        return True
    return s[0].isalpha() and bool(_LEADERED_PAGE.search(raw))


def _entry_key(text: str) -> str:
    """An entry as the heading it lists: without its page number and leaders."""
    return _PAGE_REF.sub("", text)


_NUMBER_DOT = re.compile(r"^(?:(?:chapter|appendix)\s+)?(\d{1,2}(?:\.\d{1,3}){0,5}|[a-h])[.:]?\s+")


def _listing_key(text: str) -> str:
    """A title as the contents list it and the body prints it alike: "2. Simple Builds ...
    5" and "2 Simple Builds" are both "2 simple builds", "D. Tools ... 298" and "Appendix D.
    Tools" both "d tools"."""
    key = _NUMBER_DOT.sub(r"\1 ", " ".join(_entry_key(text.strip()).split()).casefold())
    return key.rstrip(". ")  # "1. Greetings!." in the body of PARI's tutorial


def _listed_titles(lines: list[str], contents: set[int]) -> frozenset[str]:
    """The numbered titles that the tables of contents (line numbers `contents`) list, an
    entry wrapped onto a second line ("17. Extending SCons: Writing" / "Your Own Builders
    ..... 119") joined."""
    out = set()
    for k in sorted(contents):
        entry = lines[k].strip()
        if not ((_NUMBERED.match(entry) or _CHAPTER.match(entry) or _LETTER_HEAD.match(entry))
                and _contents_entry(lines[k])):
            continue
        text = lines[k]
        if k + 1 in contents and lines[k + 1].strip() and not _contents_entry(lines[k + 1]) \
                and not _LEADERS_ONLY.match(lines[k + 1].strip()):
            text = f"{text} {lines[k + 1]}"
        out.add(_listing_key(text))
    return frozenset(out)


def _listed_end(lines: list[str], i: int, listed: frozenset[str]) -> int:
    """The end of the numbered heading on line i whose title the contents list: i + 1, or
    i + 2 where its title wraps onto the next line; 0 where they do not list it."""
    if not listed:
        return 0
    key = _listing_key(lines[i])
    if key in listed:
        return i + 1
    if i + 1 < len(lines) and lines[i + 1].strip() and \
            _listing_key(f"{lines[i]} {lines[i + 1]}") in listed:
        return i + 2
    return 0


def _contents_lines(lines: list[str]) -> set[int]:
    """The line numbers of the tables of contents in a plain text (see above)."""
    norm = [" ".join(line.split()).casefold() for line in lines]
    last = {t: k for k, t in enumerate(norm) if t}
    out: set[int] = set()
    i, n = 0, len(lines)
    while i < n:
        if not _contents_entry(lines[i]):
            i += 1
            continue
        end, run = _contents_from(lines, norm, last, i)
        out.update(range(i, end))
        i = max(end, run)
    return out


def _listed_nowhere(lines: list[str], norm: list[str], last: dict, k: int) -> bool:
    """A chapter heading that no line after it repeats: the body's, not an entry."""
    return bool(_CHAPTER.match(lines[k].strip())) and last[norm[k]] == k


def _contents_from(lines: list[str], norm: list[str], last: dict, i: int) -> tuple[int, int]:
    """(the end of the table of contents that starts at line i, an entry (i if none); the
    end of the entries in a row from i)."""
    title = next((norm[k] for k in range(i - 1, max(-1, i - 4), -1) if norm[k]), "")
    run = i + 1
    while run < len(lines) and _contents_entry(lines[run]) \
            and not _listed_nowhere(lines, norm, last, run):
        run += 1
    if not ((_CONTENTS_TITLE.match(title) and len(title.split()) <= 5)
            or (run - i >= _CONTENTS_MIN and last[norm[i]] >= run)):
        return i, run
    entries, end, blank, wrapped = set(), i, False, 0
    depth = len(lines[i]) - len(lines[i].lstrip())
    for j in range(i, len(lines)):
        line = lines[j]
        if not norm[j]:
            blank = True
            continue
        if j > i and _LEADERS_ONLY.match(norm[j]):
            end, blank = j + 1, False  # the leaders of the entry above
            continue
        if _contents_entry(line):
            key = _listing_key(norm[j])
            if key in entries or (j > i and _listed_nowhere(lines, norm, last, j)):
                break
            entries.add(key)
            depth, end, wrapped = len(line) - len(line.lstrip()), j + 1, 0
        elif (blank or len(line) - len(line.lstrip()) < depth or wrapped == _WRAPPED_MAX
              or _SENTENCE_END.search(norm[j]) or norm[j].endswith((":", "：", "。"))):
            break  # a paragraph or a title: the body (or another list)
        else:
            wrapped += 1  # kept where another entry follows
        blank = False
    return (end if len(entries) >= 2 else i), run


def _plain_heading(lines: list[str], i: int, wrap: int, seen: _Numbering,
                   listed: frozenset[str] = frozenset()) -> _Heading | None:
    """Line i of a plain text as a numbered, lettered, chapter or Chinese heading, if it is one
    (`seen` is updated with its number; listed: _listed_titles)."""
    raw = lines[i]
    line = raw.strip()
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    if (m := _ROMAN_HEAD.match(line)) and _roman(m.group(1)) == seen.roman + 1:
        title, end = line, i + 1
        following = nxt.strip()
        if line.endswith(",") and following.isupper() and len(following) <= 60:
            title, end = f"{line} {following}", i + 2  # "IV. FLOATS: FIGURES," / "TABLES"
        rest = title[len(m.group(1)) + 1:].strip()
        if _title_ok(rest.rstrip(".") if rest.isupper() else rest):  # "...VIDEOS, ETC."
            seen.roman, seen.letter, seen.num = seen.roman + 1, 0, None
            return _Heading(i, end, 0.5, title)
    if (m := _LETTER_NUMBERED.match(line)) and seen.letter \
            and ord(m.group(1)) - 64 == seen.letter:  # under "A. Standard Resolution ..."
        num = tuple(int(x) for x in m.group(2).split("."))
        if (_title_ok(m.group(3)) and _plausible_next(seen.sub, num)
                and not _runs_on(raw, m.start(3), nxt, wrap)):
            seen.sub = num
            return _Heading(i, i + 1, 1.0 + len(num), line)
        return None
    if (m := _LETTER_HEAD.match(line)) and ord(m.group(1)) - 64 == seen.letter + 1 \
            and (seen.roman or seen.letter or m.group(1) == "A") and _title_ok(m.group(2)):
        seen.letter, seen.num, seen.sub = seen.letter + 1, None, None
        return _Heading(i, i + 1, 0.75, line)
    if m := _NUMBERED.match(line):
        return _numbered_heading(lines, i, m, wrap, seen, listed)
    if m := _CHAPTER.match(line):
        return _chapter_heading(line, i, m, nxt, seen, _listed_end(lines, i, listed) == i + 2)
    if len(line) <= 40 and not _SENTENCE_END.search(line):
        for pattern, rank in _ZH_HEADINGS:
            if pattern.match(line):
                # Numbered headings below it ("（五）正文" / "1．绪论") number from 1 again, a
                # level deeper, or go on from the last one ("6．……" / "（五）" / "7．……").
                seen.num, seen.base, seen.resume = None, rank, seen.last()
                return _Heading(i, i + 1, rank, line)
    return None


def _numbered_heading(lines: list[str], i: int, m: re.Match[str], wrap: int,
                      seen: _Numbering, listed: frozenset[str] = frozenset()) -> _Heading | None:
    """A numbered heading ("2.3 Title"; m is _NUMBERED's match of line i), or a run-in one
    ("2. Title. Body text"). A title the table of contents lists (`listed`) may number from 1
    again (a preface's "1." to "5.", then chapter 1) and take its wrapped line along."""
    raw = lines[i]
    line = raw.strip()
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    num = tuple(int(x) for x in m.group(1).split("."))
    indent = len(raw) - len(raw.lstrip())
    if line[m.end(1)] in "．、" and (len(m.group(2)) > _ZH_TITLE_CHARS
                                    or _ZH_CLAUSE.search(m.group(2))):
        return None
    end = _listed_end(lines, i, listed)
    restart = bool(end) and all(x == 1 for x in num)  # where the contents number from 1 again
    if (not (seen.plausible(num) or restart)
            or (seen.num and len(num) <= len(seen.num) and indent > seen.indent + 1)
            or _continues_above(lines[i - 1] if i else "", raw, wrap)
            or _breaks_numbering(lines, i, seen.num, num)):
        return None
    title = " ".join(part.strip() for part in lines[i:end])
    named = title[m.start(2):].rstrip(".")  # the contents list it: any case, a closing period
    if end and _title_ok(named[:1].upper() + named[1:]):
        seen.num, seen.indent = num, indent
        return _Heading(i, end, seen.base + len(num), title)
    if run_in := _RUN_IN.fullmatch(m.group(2)):
        if _run_in_title(run_in.group(1)):  # "2. Grant of Copyright License. Subject"
            seen.num, seen.indent = num, indent
            title = line[:m.start(2)] + run_in.group(1) + "."
            end = i if run_in.group(2) else i + 1  # the run-in text stays in the body
            return _Heading(i, end, seen.base + len(num), title)
    if ((_title_ok(m.group(2)) or _entry_title(m.group(2), seen.num, num))
            and not _runs_on(raw, m.start(2), nxt, wrap)):
        seen.num, seen.indent = num, indent
        return _Heading(i, i + 1, seen.base + len(num), line)
    return None


_ENTRY_WORDS = 6  # a lower-case entry title ("1.2 a due") has at most this many words


def _entry_title(title: str, prev: tuple[int, ...] | None, num: tuple[int, ...]) -> bool:
    """A glossary's or dictionary's entry in lower case ("1.157 hemiola" right after "1.156
    ..."): short, no sentence, and numbered as the very next sibling of the heading above
    it, at the second level or deeper (a body line starting "2 and" follows no "1")."""
    return (prev is not None and len(num) >= 2 and len(num) == len(prev)
            and num[:-1] == prev[:-1] and num[-1] == prev[-1] + 1
            and title[0].islower() and len(title.split()) <= _ENTRY_WORDS
            and not (_LEADERS.search(title) or _SENTENCE_END.search(title)))


_LOOKAHEAD_LINES = 60


def _breaks_numbering(lines: list[str], i: int, prev: tuple[int, ...] | None,
                      num: tuple[int, ...]) -> bool:
    """True when a numbered line that steps up (num shallower than prev: a figure's "2" above
    an "N", or item "2." of a list, in a glossary's chapter 1) is followed by the numbering it
    would break: within _LOOKAHEAD_LINES, prev's numbering goes on at its own level ("1.250
    ...") before any heading under num ("2.1 ...") comes."""
    if prev is None or len(num) >= len(prev):
        return False
    for raw in lines[i + 1: i + 1 + _LOOKAHEAD_LINES]:
        m = _NUMBERED.match(raw.strip())
        if not (m and m.group(2)[0].isalpha()):
            continue
        nxt = tuple(int(x) for x in m.group(1).split("."))
        if nxt[:len(num)] == num and len(nxt) > len(num):
            return False
        if len(nxt) == len(prev) and nxt[:-1] == prev[:-1] and _plausible_next(prev, nxt):
            return True
    return False


def _chapter_heading(line: str, i: int, m: re.Match[str], nxt: str,
                     seen: _Numbering, wrapped: bool = False) -> _Heading | None:
    """A chapter or part heading ("Chapter 3 Binary packages", "Part II"), or "Chapter 3" with
    its title on the next line; wrapped: the contents list its title with the next line's
    words ("Appendix D. Functions and" / "Environment Methods")."""
    rest = m.group(3)
    if rest and not _title_ok(rest):
        return None
    if m.group(2).isdecimal():
        seen.num = (int(m.group(2)),)
    seen.base = 0.0
    title, end = line, i + 1
    if (wrapped or not rest) and nxt.strip() and len(nxt.strip()) <= 80 \
            and (wrapped or _title_ok(nxt.strip())):
        title, end = f"{line} {nxt.strip()}", i + 2  # "Chapter 3" / "Binary packages"
    rank = 0.0 if m.group(1).lower() == "part" else 0.5 if seen.roman else 1.0
    return _Heading(i, end, rank, title)


# ---- headings from a PDF outline ------------------------------------------------------------

_NON_WORD = re.compile(r"[\W_]+")
_CHAPTER_PREFIX = re.compile(
    r"^(?:(?:chapter|appendix|part|section)(?:\s+\w+)?|[A-Z]{2,12}|\d{1,3}|第.{1,4}[章部篇])$",
    re.IGNORECASE,
)


def _norm(text: str, logos: bool = True) -> str:
    """text's letters and digits, lower case; logos: the XeTeX logo's reversed E ("XƎTEX")
    read as the e a bookmark spells ("XeTeX"), for finding a bookmark's title on its page."""
    low = text.lower()
    return _NON_WORD.sub("", low.replace("ǝ", "e") if logos else low)


# A chapter's number printed on its own line above the title: "Chapter 70", "Part II",
# "Appendix B", "第3章" (not a number alone: it may be the page's).
_NUMBER_ABOVE = re.compile(
    r"^(?:(?:chapter|appendix|part)\s+(?:\d{1,3}|[ivxlc]{1,6}|[a-z])|第\s*\S{1,4}?\s*[章部篇])$",
    re.IGNORECASE)
# A title that starts with its own number: "1 Introduction", "A.2 Tools", "IV OpenType", "第3章".
_TITLE_NUMBER = re.compile(
    r"^\s*(?:\d|[A-Z](?:[.\s]|$)|[IVXLC]{1,6}\b|(?:chapter|appendix|part)\b|第)", re.IGNORECASE)


def _with_printed_number(above: str, title: str) -> str:
    """The bookmark's title with the chapter number printed on the line above it ("Chapter
    70" over "Tables of Marks"), as the page shows it: "Chapter 70 Tables of Marks".
    Bookmarks often leave the number out (hyperref's default), and the text refers to
    chapters by it ("described in Chapter 72"). Unchanged when the title is numbered
    already ("1 Introduction", "IV OpenType") or the line above is no chapter number."""
    number = above.strip()
    if not _NUMBER_ABOVE.match(number) or _TITLE_NUMBER.match(title):
        return title
    return f"{number} {title}"


# Markup characters: a line that ends with a bookmark's title and has some the title has not
# ("\\tcbuselibrary{poster}" for "Library `poster'", "\\PoemTitle{Fleas}", "key=dot") marks
# where the heading is, but does not name it.
_MARKUP = set("\\{}<>=;")


# A running head with its page number glued to its title ("169Lua callbacks" over "9 LUA
# callbacks", "13Introduction" over "Introduction": ConTeXt's manuals).
_GLUED_FOLIO = re.compile(r"^\d+[^\W\d_]")


def _find_title(lines: list[str], lo: int, hi: int, title: str
                ) -> tuple[int, int, bool] | None:
    """(first line, end, printed) of the first line (or two) on the bookmark's page that
    ends with its title after at most 12 other characters (a number: "1.1 Scope"; the title
    starting on the first line where it takes two); printed
    is False for a line of markup (_MARKUP), which the bookmark's title names instead.
    A running head (_GLUED_FOLIO) is taken only when no other line names the title."""
    want = _norm(title)
    if not want:
        return None
    glued = None
    for i in range(lo, hi):
        got = _norm(lines[i])
        if not got:
            continue
        span = 0
        if got.endswith(want) and (len(got) - len(want) <= 12):
            span = 1
        elif i + 1 < hi and len(got) >= 3:
            both = got + _norm(lines[i + 1])
            extra = len(both) - len(want)  # a number before the title: "2. 项目的…" / "…内容）；"
            if both.endswith(want) and 0 <= extra <= 12 and len(got) - extra >= 3:
                span = 2
        if span:
            raw = " ".join(lines[i:i + span])
            found = i, i + span, not _markup(raw, title)
            if not (span == 1 and got != want and _GLUED_FOLIO.match(raw.strip())):
                return found
            glued = glued or found
    return glued


# A command named in a heading as prose does ("3 The \documentclass command", "6 Escaping
# the indentation: \uplevel and \fullwidth"): hyperref's bookmark leaves the backslash
# out, the page prints it; such a line is the heading as printed, not markup.
_COMMAND = re.compile(r"\\([A-Za-z@]+)")


def _markup(raw: str, title: str) -> bool:
    """Whether the line raw is markup that names the bookmark's title (see _MARKUP): it has
    markup characters the title has not, other than the backslashes of commands the title
    names by their names."""
    extra = (_MARKUP & set(raw)) - set(title)
    if extra != {"\\"}:
        return bool(extra)
    low = title.lower()
    return not all(name.lower() in low for name in _COMMAND.findall(raw))


@dataclass(frozen=True)
class _Entry:
    """A bookmark as _repaired() gives it back."""
    title: str
    level: int
    page: int


_PART_TITLE = re.compile(r"^part[ \t]+([ivxlc]{1,6}|[0-9]{1,3})\b", re.IGNORECASE)


def _in_order(pages: list[int]) -> set[int]:
    """Indexes of a longest run of pages that never goes back (the bookmarks whose
    destinations agree with their order)."""
    tails: list[int] = []  # index of the last item of the best run of each length
    ends: list[int] = []  # their pages
    prev: list[int] = [-1] * len(pages)
    for i, page in enumerate(pages):
        k = bisect.bisect_right(ends, page)
        prev[i] = tails[k - 1] if k else -1
        if k == len(tails):
            tails.append(i)
            ends.append(page)
        else:
            tails[k], ends[k] = i, page
    keep, i = set(), tails[-1] if tails else -1
    while i >= 0:
        keep.add(i)
        i = prev[i]
    return keep


def _repaired(lines: list[str], line_pages: list[int], first_line: dict[int, int],
              outline: Sequence[OutlineLike]) -> list[OutlineLike]:
    """The bookmarks with two faults of broken outlines mended (PSTricks's user guide has
    both):
    - a destination out of the bookmarks' order ("Lines and polygons" pointing 220 pages
      past its printed chapter): its title is looked for between the pages of the in-order
      bookmarks around it and moved to the page that prints it (left as it was where none
      does);
    - "Part" bookmarks at different depths (Parts III-XIII nested under Part II): each
      such Part, with the bookmarks up to the next Part, is moved to the first Part's
      depth."""
    entries = [_Entry(e.title, e.level, e.page) for e in outline]
    keep = _in_order([e.page for e in entries])
    n = len(lines)
    # The in-order bookmarks' pages never go back: the one kept last before a bookmark has
    # the largest page before it, the next one kept after it the smallest after it.
    before, after = [1] * len(entries), [None] * len(entries)
    for i in range(1, len(entries)):
        before[i] = entries[i - 1].page if i - 1 in keep else before[i - 1]
    for i in range(len(entries) - 2, -1, -1):
        after[i] = entries[i + 1].page if i + 1 in keep else after[i + 1]
    for i, e in enumerate(entries):
        if i in keep:
            continue
        lo = first_line.get(before[i])
        hi = n if after[i] is None else first_line.get(after[i] + 1, n)
        if lo is None:
            continue
        found = _find_title(lines, lo, hi, e.title)
        if found is not None:
            entries[i] = replace(e, page=line_pages[found[0]])
    parts = [i for i, e in enumerate(entries) if _PART_TITLE.match(e.title.strip())]
    if parts:
        base = entries[parts[0]].level
        for k, i in enumerate(parts):
            shift = entries[i].level - base
            if not shift:
                continue
            stop = parts[k + 1] if k + 1 < len(parts) else len(entries)
            for j in range(i, stop):
                entries[j] = replace(entries[j], level=max(1, entries[j].level - shift))
    return entries


def _outline_headings(lines: list[str], line_pages: list[int], first_line: dict[int, int],
                      outline: Sequence[OutlineLike]) -> list[_Heading]:
    heads: list[_Heading] = []
    pos = 0
    n = len(lines)
    outline = _repaired(lines, line_pages, first_line, outline)
    for entry in sorted(outline, key=lambda e: e.page):
        page_start = first_line.get(entry.page)
        if page_start is None:
            continue
        lo = max(pos, page_start)
        hi = first_line.get(entry.page + 1, n)
        found = _find_title(lines, lo, max(hi, lo), entry.title)
        if found is None:
            start = end = lo
            title = entry.title
        else:
            start, end, printed = found
            title = entry.title
            if printed and _norm(lines[start], False) != _norm(entry.title, False) \
                    and end == start + 1:
                title = lines[start].strip()  # keeps the number: "1.1 Scope"
            elif printed and (m := _NUMBERED.match(lines[start].strip())) \
                    and not _norm(entry.title).startswith(_norm(m.group(1))):
                # A title wrapped over two lines keeps its number too ("1. 项目的立项依据（…").
                title = f"{lines[start].strip()[:m.start(2)].strip()} {entry.title}"
            # "CHAPTER" / "ONE" printed above the chapter title belong to the heading.
            above = start
            for _ in range(2):
                if (start > lo and line_pages[start - 1] == entry.page
                        and _CHAPTER_PREFIX.match(lines[start - 1].strip())):
                    start -= 1
            if start < above:
                title = _with_printed_number(lines[above - 1], title)
        heads.append(_Heading(start, end, float(entry.level), title))
        pos = end
    return _numbered_siblings(heads)


def _numbered_siblings(heads: list[_Heading]) -> list[_Heading]:
    """Chapters printed with consecutive numbers ("6 Lines and polygons", "7 Arcs, circles
    and ellipses") with no other heading at their depth or above between them are siblings:
    a bookmark deeper than the chapter before it (an outline whose depths drift) gets that
    chapter's depth. (Beamer's "1 Welcome" before "Part I" and "2 Installation" inside it
    stay as they are: the Part is between them.)"""
    last: tuple[int, float] | None = None  # (number, rank) of the last chapter numbered so
    for h in heads:
        m = _NUMBERED.match(h.title)
        if not m or "." in m.group(1):
            if last is not None and h.rank <= last[1]:
                last = None
            continue
        number = int(m.group(1))
        if last is not None and number == last[0] + 1 and h.rank > last[1]:
            h.rank = last[1]
        last = (number, h.rank)
    return heads


# ---- blocks ----------------------------------------------------------------------------------

# Every alternative is anchored at the line start (tried with .match, once per line);
# a line whose last non-space character is ; { or } is code too (see _tag).
_CODE_LINE = re.compile(
    r"""^\s*(?:\$|\#|>>>|\.\.\.)\s
    |^\s*(?:from\s+[\w.]+\s+)?import\s+[\w.*]+
    |^\s*(?:def|class|return|elif|else|for|while|try|except|with|raise|yield|var|let|const|function|
         public|private|static|void|int|char|\#include|\#define|sudo|apt-get|apt|if)\b.*[:;{}()=]\s*$
    |^\s*[\w.\[\]'"]+\s*[-+*/|&]?=\s*\S
    |^\s*[\w.]+\(.*\)[;,]?\s*$
    |^\s*[})\]]+[;,)]*\s*$""",
    re.VERBOSE,
)
_INDENTED = re.compile(r"^(?:\ {4}|\t)\s*\S")
# Code by its syntax or by its indentation (ingest.layout looks for pages with code with it).
CODE_LINE = re.compile(f"(?:{_CODE_LINE.pattern})|{_INDENTED.pattern}", re.VERBOSE)
_TABLE_LINE = re.compile(
    r"\S(?: {2,}|\t)\S(?:.*\S)?(?: {2,}|\t)\S|^\s*\|.*\|\s*$"
    r"|^\s*\+[-=+]{3,}\+\s*$|^\s*=+(?: +=+)+\s*$"
)
_LIST_ITEM = re.compile(
    r"^\s*(?:[•◦▪‣∙●○■□\-–—*+]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)]|\([ivx]{1,4}\))\s+\S"
)
_PARA_END = re.compile(r"[.!?:。！？：][\"”’)]?$")




def _continues(item: str, line: str) -> bool:
    """Whether line, tagged code only for its indentation, is a wrapped line of the list
    item that starts with item: indented at least as far as the item's marker and not code
    by its syntax. Plain-text licences and charters wrap their lettered clauses so; tagged
    as code, "b) Use a suitable shared library mechanism for linking with the" ended its
    item and the rest of the sentence became a code block."""
    stripped = line.rstrip()
    if not _INDENTED.match(line) or stripped[-1] in ";{}" or _CODE_LINE.match(line):
        return False
    return len(line) - len(line.lstrip()) >= len(item) - len(item.lstrip())


def _tag(line: str) -> str:
    stripped = line.rstrip()
    if not stripped:
        return "blank"
    if FENCE.match(line):
        return "fence"
    # Each alternative of _TABLE_LINE needs one of these; most lines skip the regex.
    if (("  " in line or "\t" in line or "|" in line or "+" in line or "=" in line)
            and _TABLE_LINE.search(line)):
        return "table"
    if _LIST_ITEM.match(line):
        return "list"
    if stripped[-1] in ";{}" or CODE_LINE.match(line):
        return "code"
    return "text"


# A table drawn with box characters (systemctl(1)'s, rendered by groff).
_BOX = re.compile(r"[\u2500-\u257f]")


def _man_tag(line: str) -> str:
    """_tag for a manual page rendered to text: its body is indented and justified (runs of
    spaces pad its lines), so neither indentation nor gaps make code or a table there (bash's
    "-c string" option, its description's second line at column 17, was cut in two by a code
    block); a line with box characters is a table's."""
    if not line.strip():
        return "blank"
    if _BOX.search(line):
        return "table"
    return "list" if _LIST_ITEM.match(line) else "text"


def _body_indent(lines: list[str]) -> int:
    """The indentation of a plain text's body when it is indented as a whole (licences,
    charters and texts rendered from roff indent every paragraph by up to 8 spaces): the most
    common one among its lines, if it is over _INDENTED's 4 (at 4, a text may be a licence's
    clauses or a code block, as in Markdown; below, no line is code by its indentation)."""
    widths = Counter(len(line) - len(line.lstrip(" ")) for line in lines if line.strip())
    common = widths.most_common(1)[0][0] if widths else 0
    return common if common > 4 else 0


def _outdent(lines: list[str], start: int, k: int) -> bool:
    """Whether line k is no deeper than the run of code or table lines from start: after a
    blank line, where a run longer than MAX_BLOCK_CHARS ends (CJK.txt's parameter list,
    indented as a whole, was one 10,900-character block that no budget under 3,000 tokens
    could show; a program breaks there between two of its top-level parts)."""
    if k >= len(lines) or not lines[k].strip():
        return False
    depth = len(lines[start]) - len(lines[start].lstrip())
    return len(lines[k]) - len(lines[k].lstrip()) <= depth


def _block_tags(lines: list[str], lo: int, hi: int, man: bool, indent: int,
                fenced: dict[int, bool]) -> list[str]:
    """Each line's tag for _blocks (_tag, or _man_tag for a man page); a line of tildes that
    opens no fence (fenced: dict(fences(lines)); a title's underline) is "underline"."""
    if man:
        return [_man_tag(lines[i]) for i in range(lo, hi)]
    pad = " " * indent
    tags = [_tag(lines[i][indent:] if indent and lines[i].startswith(pad) else lines[i])
            for i in range(lo, hi)]
    return ["underline" if t == "fence" and lo + k not in fenced else t
            for k, t in enumerate(tags)]


def _run_end(lines: list[str], tag: Callable[[int], str], start: int, hi: int) -> int:
    """The last line of the run of code or table lines (tag(start)) from start: across single
    blank lines and one plain-looking line inside code ("hello(c)"); past MAX_BLOCK_CHARS it
    ends at a blank line before an outdented line (_outdent)."""
    t, i, size = tag(start), start, 0
    while i < hi:
        size += len(lines[i]) + 1
        nxt = tag(i + 1)
        if nxt == "blank" and size > MAX_BLOCK_CHARS and _outdent(lines, start, i + 2):
            break
        if nxt == t or (nxt == "blank" and tag(i + 2) == t):
            i += 1
        elif (t == "code" and nxt in ("text", "list") and tag(i + 2) == "code"
              and len(lines[i + 1]) < 60):
            i += 1
        else:
            break
    return i


def _blocks(lines: list[str], pages: list[int], lo: int, hi: int,
            breaks: _CjkBreaks | None = None, man: bool = False,
            indent: int = 0, fenced: dict[int, bool] | None = None) -> list[Block]:
    """The blocks of lines[lo:hi]. A text whose body is indented by indent spaces
    (_body_indent) is tagged as if it were not: only deeper lines are code by indentation
    (the Mozilla licence's clauses, at column 5, were code blocks). fenced: dict(fences(lines))
    (the whole text's: a tilde line at a section's top is judged by the line above it)."""
    fenced = dict(fences(lines)) if fenced is None else fenced
    tags = _block_tags(lines, lo, hi, man, indent, fenced)
    wrap = max((len(lines[i].rstrip()) for i in range(lo, hi)), default=0)
    blocks: list[Block] = []
    i = lo

    def emit(kind: str, start: int, stop: int) -> None:
        text = "\n".join(lines[start:stop]).strip("\n")
        if breaks is not None and kind in ("prose", "list") and not text.isascii():
            text = breaks.join(start, stop, tags, lo).strip("\n")
        if text.strip():
            blocks.append(Block(kind=kind, text=text, page=pages[start]))

    def tag(j: int) -> str:
        return tags[j - lo] if lo <= j < hi else "blank"

    while i < hi:
        t = tag(i)
        if t == "blank":
            i += 1
            continue
        start = i
        if t == "fence":
            i += 1
            while i < hi and tag(i) != "fence":
                i += 1
            emit("code", start, min(i + 1, hi))
            i += 1
            continue
        if (t in ("table", "code") and tag(i + 1) in (t, "blank")
                and tag(i + 2 if tag(i + 1) == "blank" else i + 1) == t):
            i = _run_end(lines, tag, start, hi)
            emit(t, start, i + 1)
            i += 1
            continue
        kind = "list" if t == "list" else "prose"
        size = 0
        while i < hi:
            line = lines[i]
            size += len(line) + 1
            nxt = tag(i + 1)
            if kind == "list" and nxt == "code" and _continues(lines[start], lines[i + 1]):
                nxt = "text"  # the item's wrapped lines, indented under it
            if nxt == "underline":  # a title with its underline: a block of its own
                i += 1
                break
            if tag(i + 2) == "underline" and nxt != "blank":
                break  # the next line is such a title
            if (nxt in ("blank", "fence") or (nxt == "list" and kind == "prose")
                    or (nxt == "code" and tag(i + 2) == "code")):
                break
            if nxt == "table" and tag(i + 2) == "table":
                break
            if (kind == "list" and nxt == "text" and _PARA_END.search(line.rstrip())
                    and len(line.rstrip()) < 0.85 * wrap):
                break
            if (kind == "prose" and _PARA_END.search(line.rstrip())
                    and len(line.rstrip()) < 0.85 * wrap):
                break
            if size > MAX_BLOCK_CHARS:
                break
            i += 1
        emit(kind, start, i + 1)
        i += 1
    return blocks


# ---- line breaks inside Chinese paragraphs ---------------------------------------------------

# Han ideographs (with extension A and compatibility ideographs) and Japanese kana: scripts
# written without spaces between words.
_HAN = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# CJK punctuation (。、《》「」【】, the ideographic space) and fullwidth forms (，：；（）！？).
_WIDE_PUNCT = "\u3000-\u303f\uff00-\uffef"
_HAN_CHAR = re.compile(f"[{_HAN}]")
_WIDE_CHAR = re.compile(f"[{_HAN}{_WIDE_PUNCT}]")
_WIDE_PUNCT_CHAR = re.compile(f"[{_WIDE_PUNCT}]")
_QUOTES = "“”‘’—…·"  # typeset wide next to Chinese, narrow next to Latin
_SENTENCE_FINAL = "。！？：；"
# A line is full (its paragraph goes on) from this share of its page's usual line width; a
# break after a full line ending a sentence ("。") needs the larger share. Measured on six
# Chinese manuals: the breaks inside words come after lines at 0.78-1.1 of the width; shorter
# lines are headings ("提示"), captions, table rows and contents lines (0.06-0.7).
_FULL_LINE = 0.75
_FULL_SENTENCE = 0.9
_MIN_WIDTH_LINES = 4  # a page's usual width is measured from at least this many Chinese lines


def _width(line: str) -> int:
    """Display width: Chinese characters and fullwidth punctuation count 2, others 1."""
    return len(line) if line.isascii() else len(line) + len(_WIDE_CHAR.findall(line))


def _script(ch: str) -> str:
    if _HAN_CHAR.match(ch):
        return "han"
    if _WIDE_PUNCT_CHAR.match(ch):
        return "punct"
    if ch in _QUOTES:
        return "quote"
    return "latin" if ch.isalnum() or (ch.isascii() and ch.isprintable()) else "other"


def cjk_separator(left: str, right: str) -> str | None:
    """What a line break between the characters `left` and `right` becomes inside a paragraph
    with Chinese text: "" between two Chinese characters or CJK punctuation ("文\n档" was one
    word), " " between a Chinese character and Latin text, None (keep the break) otherwise.

    Chinese and Latin take a space between them: W3C's Requirements for Chinese Text Layout
    (clreq) asks for a quarter-em gap there, xeCJK and ctex put it in, and the documents read
    here carry it as a space ("引擎是 XeTeX"), so a break at that spot is kept as one space.
    Fullwidth punctuation has its spacing built in: next to Latin it takes none ("，LaTeX").
    """
    kinds = {_script(left), _script(right)}
    if kinds <= {"han", "punct"}:
        return ""
    if "quote" in kinds and kinds & {"han", "punct"}:
        return ""  # "“" / "文档" ("—", "…" too): set wide in Chinese text
    if "punct" in kinds:
        return ""  # "，" / "LaTeX"
    if kinds == {"han", "latin"}:
        return " "
    return None


class _CjkBreaks:
    """Joins the lines of prose and list blocks where a Chinese paragraph was wrapped, and
    remembers each join (line index -> separator) so that the page text can follow suit.

    A break is joined only when the line before it is full (see _FULL_LINE) and the line after
    it does not start a list item or a table row: headings, captions, table cells and contents
    lines are short, and stay on lines of their own. A line that ends a
    sentence is kept apart from a short line without end punctuation after it (a heading).
    """

    def __init__(self, lines: list[str], pages: list[int]) -> None:
        self.lines = lines
        self.pages = pages
        self.joined: dict[int, str] = {}  # line index -> separator put before it
        self._wraps: dict[int, float] = {}
        self._fallback: float | None = None

    def _wrap(self, page: int) -> float:
        """The usual width of a full line of Chinese text on this page (90th percentile)."""
        if page not in self._wraps:
            if self._fallback is None:  # (first use: every page's width, in one pass)
                widths: dict[int, list[int]] = {}
                for line, pg in zip(self.lines, self.pages):
                    if not line.isascii() and _HAN_CHAR.search(line):
                        widths.setdefault(pg, []).append(_width(line.strip()))
                for pg, ws in widths.items():
                    if len(ws) >= _MIN_WIDTH_LINES:
                        ws.sort()
                        self._wraps[pg] = ws[int(0.9 * (len(ws) - 1))]
                known = sorted(self._wraps.values())
                self._fallback = known[len(known) // 2] if known else 0.0
            self._wraps.setdefault(page, self._fallback)
        return self._wraps[page]

    def _separator(self, i: int, tag_before: str, tag_after: str) -> str | None:
        before, after = self.lines[i - 1].rstrip(), self.lines[i].strip()
        if not before or not after or tag_after in ("list", "table") or tag_before == "table":
            return None  # (a line tagged code in a prose block is one indented line of text)
        sep = cjk_separator(before[-1], after[0])
        if sep is None or not (_HAN_CHAR.search(before) or _HAN_CHAR.search(after)):
            return None  # (no Chinese: "。" for a bullet in an English OCR layer)
        wrap = self._wrap(self.pages[i - 1])
        width = _width(before.strip())
        if before[-1] in _SENTENCE_FINAL:
            if width < _FULL_SENTENCE * wrap:
                return None
            if _width(after) < _FULL_LINE * wrap and after[-1] not in _SENTENCE_FINAL + "，、":
                return None  # "。" then a short line without end punctuation: a heading
        elif width < _FULL_LINE * wrap:
            return None
        return sep

    def join(self, start: int, stop: int, tags: list[str], lo: int) -> str:
        """Lines start..stop-1 (one block; tags[k - lo] is line k's tag) as the block's text."""
        lines = self.lines
        out = [lines[start]]
        for i in range(start + 1, stop):
            sep = None
            if not (lines[i - 1].rstrip()[-1:] + lines[i].lstrip()[:1]).isascii():
                sep = self._separator(i, tags[i - 1 - lo], tags[i - lo])
            if sep is None:
                out.append("\n")
                out.append(lines[i])
            else:
                self.joined[i] = sep
                out[-1] = out[-1].rstrip()
                out.append(sep)
                out.append(lines[i].lstrip())
        return "".join(out)

    def page_texts(self, pages: Sequence[Page], first_line: dict[int, int]) -> list[Page]:
        """The pages with the same joins made in their text (a join across pages has no
        break in either page's text to remove)."""
        if not self.joined:
            return list(pages)
        out = []
        for page in pages:
            lo = first_line[page.number]
            n = page.text.count("\n") + 1
            hits = [i for i in range(lo + 1, lo + n) if i in self.joined]
            if not hits:
                out.append(page)
                continue
            parts = [self.lines[lo]]
            for i in range(lo + 1, lo + n):
                sep = self.joined.get(i)
                if sep is None:
                    parts.append("\n")
                    parts.append(self.lines[i])
                else:
                    parts[-1] = parts[-1].rstrip()
                    parts.append(sep)
                    parts.append(self.lines[i].lstrip())
            out.append(replace(page, text="".join(parts)))
        return out


def _section_kind(blocks: Sequence[Block]) -> str:
    if not blocks:
        return "prose"
    sizes: dict[str, int] = {}
    for b in blocks:
        sizes[b.kind] = sizes.get(b.kind, 0) + len(b.text)
    kind, size = max(sizes.items(), key=lambda kv: kv[1])
    return kind if size >= 0.7 * sum(sizes.values()) else "mixed"


def build_sections(pages: Sequence[Page], outline: Sequence[OutlineLike] | None = None,
                   markdown: bool = False) -> list[Section]:
    """Cut cleaned pages into sections (a heading's own text up to the next heading) of blocks."""
    return structure_pages(pages, outline, markdown)[1]


def structure_pages(pages: Sequence[Page], outline: Sequence[OutlineLike] | None = None,
                    markdown: bool = False, gaps: Sequence[bool] = ()
                    ) -> tuple[list[Page], list[Section]]:
    """build_sections, and the pages with the same line breaks removed as the blocks: inside
    a Chinese paragraph a break between Chinese characters goes, one between Chinese and Latin
    text becomes a space (see cjk_separator and _CjkBreaks). Headings, code, tables and the
    start of list items keep their lines. gaps[k]: page k + 2 was cut from the page before
    at a blank line (a text file's pages, ingest.text.split_pages_gaps): the blank line
    stands between them again, so that a title at the top of a page has one above it.
    """
    lines: list[str] = []
    line_pages: list[int] = []
    first_line: dict[int, int] = {}
    for k, page in enumerate(pages):
        if k and k <= len(gaps) and gaps[k - 1] and lines and lines[-1].strip():
            lines.append("")
            line_pages.append(line_pages[-1])
        first_line[page.number] = len(lines)
        page_lines = page.text.split("\n")
        lines.extend(page_lines)
        line_pages.extend([page.number] * len(page_lines))
    if not lines:
        return list(pages), []
    breaks = _CjkBreaks(lines, line_pages)
    mode = "" if outline or markdown else _marked_up(lines)
    indent = 0 if outline or markdown else _body_indent(lines)
    fenced = dict(fences(lines))  # once, for the headings and every section's blocks
    heads = (_outline_headings(lines, line_pages, first_line, outline) if outline
             else _text_headings(lines, markdown, mode, fenced))
    levels = {rank: level for level, rank in enumerate(sorted({h.rank for h in heads}), start=1)}
    sections: list[Section] = []
    path: list[tuple[int, str]] = []  # (level, title) stack
    bounds = [(0, 0, 0, "")] + [(h.start, h.end, levels[h.rank], h.title) for h in heads]
    for k, (start, end, level, title) in enumerate(bounds):
        stop = bounds[k + 1][0] if k + 1 < len(bounds) else len(lines)
        if level:
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, title))
        blocks = _blocks(lines, line_pages, end, max(stop, end), breaks, man=mode == "man",
                         indent=indent, fenced=fenced)
        if not level and not blocks:
            continue  # nothing before the first heading
        first = line_pages[min(start, len(lines) - 1)]
        last = line_pages[min(max(stop - 1, start), len(lines) - 1)]
        sections.append(Section(
            index=len(sections), heading_path=tuple(t for _, t in path), level=level,
            page_start=first, page_end=max(first, last), kind=_section_kind(blocks),
            blocks=tuple(blocks),
        ))
    return breaks.page_texts(pages, first_line), sections
