"""What an answer's statement asserts, for the claim checker (claims.py): sentence spans of
English and Chinese text, citation markers, the facts that must occur in a statement's support
(numbers with their units, names and defined terms), negation polarity, and the sentences that
state no fact at all ("The document does not say.", "I hope this helps", "文档中没有提到")."""
from __future__ import annotations

import re
from dataclasses import dataclass

from docchat.backends.repetition import NOTE, SUMMARY_NOTE
from docchat.context import prompts
from docchat.context.citations import MARKER
from docchat.context.retrieval import STOPWORDS
from ingest.segment import terms

# Sentence ends. Chinese ones always; Latin ones before whitespace and a sentence opener,
# except after an abbreviation or an initial. Blank lines and list items end a sentence too;
# a single line break inside prose does not ("We measured less than a\n1% increase").
_CJK_END = re.compile(r"[。！？；][”’\"')）】]*")
_LATIN_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s+[\"'“‘(\[\x00A-Z0-9\u4e00-\u9fff])")
_BREAK = re.compile(r"\n[ \t]*\n\s*|\n(?=[ \t]*(?:[-*+•·▪◦‣●]|\d{1,3}[.)])[ \t]+\S)")
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|et al|etc|cf|vs|viz|approx|fig|figs|eq|eqs|sec|secs|ch|no|nos|vol|"
    r"pp?|dr|mr|mrs|ms|prof|inc|ltd|jr|sr|st|resp|ref|refs|art|para)|(?<![\w.])[A-Z])\.$",
    re.IGNORECASE)
SHORT_LINE = 0.6  # of the longest line: a shorter line ends its sentence (passages only)
# A line that cannot end a sentence: it stops on a function word, a comma or a hyphen.
_GOES_ON = re.compile(r"(?:\b(?:a|an|the|of|to|in|on|at|for|from|by|with|than|and|or|as|is|"
                      r"are|was|were|be|that|which|into|per|its|their|our)|[,\-–])\s*$",
                      re.IGNORECASE)
_CONTINUES = re.compile(r"\s*(?:and|or|but|of|to|in|on|at|for|from|by|with|than|as|that|which|"
                        r"the|a|an|is|are|was|were|be|it|its|their|whose|where|when|while)\b")
# A list item's marker at the start of a line: "- ", "* ", "1. ", "2) ", "•".
BULLET = re.compile(r"[ \t]*(?:[-*+•·▪◦‣●]|\d{1,3}[.)、]|[(（]\d{1,3}[)）])[ \t]+")


def abbreviation_at(text: str, dot: int) -> bool:
    """Whether the full stop at text[dot] ends an abbreviation ("e.g.", "Fig.", "J.")."""
    return _ABBREV.search(text, max(0, dot - 8), dot + 1) is not None


def sentence_spans(text: str, lines: bool = False) -> list[tuple[int, int]]:
    """(start, end) of each sentence of text, whitespace trimmed, empty ones dropped. lines:
    every line break ends a sentence (answers); else only blank lines and list items do
    (passages, whose lines are wrapped prose)."""
    cuts = {0, len(text)}
    for m in _CJK_END.finditer(text):
        cuts.add(m.end())
    for m in _LATIN_END.finditer(text):
        if not abbreviation_at(text, m.start()):
            cuts.add(m.end())
    for m in (re.finditer(r"\n", text) if lines else _BREAK.finditer(text)):
        if lines and _wrapped(text, m.start()):
            continue
        cuts.add(m.start())
        cuts.add(m.end())
    if not lines and "\n" in text:
        cuts.update(_short_line_ends(text))
    return trimmed_spans(text, cuts)


def trimmed_spans(text: str, cuts, lead: str = "") -> list[tuple[int, int]]:
    """The pieces of text between consecutive cuts, without the whitespace around them (and
    without the characters of lead at their start); empty ones dropped."""
    bounds = sorted(cuts)
    out = []
    for a, b in zip(bounds, bounds[1:]):
        while a < b and (text[a].isspace() or text[a] in lead):
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
    return out


# A line that ends a statement however the next one starts: closing punctuation, a
# citation, a heading, a table row, a bold title, a Chinese character (Chinese lines
# without a full stop are items of their own).
_LINE_ENDS = re.compile(r"(?:[.!?:;。！？：；]['\")\]」』”）]*|\[[^\]\n]{1,40}\]|\x00"
                        r"|^\s*(?:#|\|).*|^\s*\*\*[^*]+\*\*|\||[\u3400-\u9fff\uff00-\uffef])\s*$")
# A line that starts a statement of its own: a list item, heading, table row, quote or fence.
_LINE_STARTS = re.compile(r"\s*(?:#|\||>|```|$)|" + BULLET.pattern)


def _wrapped(text: str, at: int) -> bool:
    """Whether the line break at `at` in an answer only wraps a sentence ("installed in
    /usr/share/doc/\nPACKAGE/copyright."): the line before it ends no statement and the
    line after it starts none."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at + 1)
    before, after = text[start:at], text[at + 1:end if end >= 0 else len(text)]
    if not before.strip() or _LINE_ENDS.search(before):
        return False
    return not _LINE_STARTS.match(after)


def _short_line_ends(text: str) -> list[int]:
    """Line breaks after a line much shorter than the text's wrapped lines (a table row, a
    caption, a command and its comment) end a sentence, unless the line stops on a function
    word or the next one starts with one ("the bm package\nand the \\bm{#1} command");
    wrapped prose lines do not."""
    rows = text.split("\n")
    width = max(len(r.rstrip()) for r in rows)
    if width < 30:
        return []
    out, at = [], 0
    for r, after in zip(rows, rows[1:]):
        at += len(r) + 1
        if (len(r.rstrip()) < SHORT_LINE * width and not _GOES_ON.search(r)
                and not _CONTINUES.match(after)):
            out.append(at - 1)
    return out


def masked(text: str) -> str:
    """text with each citation marker replaced by as many NUL characters (offsets kept), so
    that "[p. 3]" neither ends a sentence nor counts as words."""
    return MARKER.sub(lambda m: "\x00" * len(m.group(0)), text)


_LABEL_SPLIT = re.compile(r"\s*[,;、，]\s*(?:pp?\.\s*)?", re.IGNORECASE)
_RANGE = re.compile(r"^(\d{1,5})\s*[-–—~]\s*(\d{1,5})$")


def cited_labels(text: str) -> list[str]:
    """The page labels cited in text, lower-cased, in order: "[pp. 3-5]" gives 3, 4, 5."""
    out: list[str] = []
    for m in MARKER.finditer(text):
        for part in _LABEL_SPLIT.split(m.group("labels").strip()):
            part = part.strip().rstrip(".").lower()
            r = _RANGE.match(part)
            if r and 0 <= int(r.group(2)) - int(r.group(1)) < 20:
                out += [str(n) for n in range(int(r.group(1)), int(r.group(2)) + 1)]
            elif part:
                out.append(part)
    return list(dict.fromkeys(out))


# Numbers with the unit that changes what they mean: a percentage, a factor ("10x",
# "10 times", "10-fold", "10倍"). Digits inside words ("v2", "SmolLM2") are not facts.
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
    r"(?:\s*(%|％|percent\b|per\s?cent\b|x(?![A-Za-z])|×|times\b|-?fold\b|倍|个百分点))?",
    re.IGNORECASE)
_WORD_NUMBERS = {w: str(i) for i, w in enumerate(
    "zero _ two three four five six seven eight nine ten eleven twelve".split()) if w != "_"}
_WORD_NUMBERS.update(twenty="20", thirty="30", forty="40", fifty="50", sixty="60",
                     seventy="70", eighty="80", ninety="90", hundred="100", thousand="1000",
                     twice="2x", double="2x", triple="3x", half="0.5")
_WORD_NUMBER = re.compile(r"\b(" + "|".join(_WORD_NUMBERS) + r")\b", re.IGNORECASE)
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
# A Chinese numeral before a measure word: 三十天, 两倍, 五个 (not 一些, 统一, 万一).
_ZH_NUMBER = re.compile(r"([零一二两三四五六七八九十百千]+)"
                        r"(?=[天日月年周个次倍人项条页种岁元小分秒%])")
_PERCENT = ("%", "％", "percent", "per cent", "percent", "个百分点")


def _zh_value(s: str) -> int | None:
    total, digit = 0, None
    for ch in s:
        if ch in _ZH_DIGITS:
            digit = _ZH_DIGITS[ch]
        else:
            unit = {"十": 10, "百": 100, "千": 1000}[ch]
            total += (1 if digit is None else digit) * unit
            digit = None
    value = total + (digit or 0)
    return value if value >= 2 or len(s) > 1 else None


def _unit(raw: str | None) -> str:
    if not raw:
        return ""
    raw = " ".join(raw.lower().split())
    return "%" if raw in _PERCENT else "x"


def numbers(text: str) -> set[tuple[str, str]]:
    """The numbers of text as (value, unit): "1,000" -> ("1000", ""), "2.50x" -> ("2.5",
    "x"), "25 percent" -> ("25", "%"), "ten" -> ("10", ""), "三十天" -> ("30", "")."""
    return {(v, u) for v, u, _, _ in number_spans(text)}


def number_spans(text: str) -> list[tuple[str, str, int, int]]:
    """(value, unit, start, end) of each number of text, in order (see numbers())."""
    out: list[tuple[str, str, int, int]] = []
    for m in _NUMBER.finditer(text):
        value = m.group(1).replace(",", "")
        frac = (m.group(2) or "").rstrip("0").rstrip(".")
        out.append((str(int(value)) + frac if value.isdecimal() else value + frac,
                    _unit(m.group(3)), m.start(), m.end()))
    for m in _WORD_NUMBER.finditer(text):
        v = _WORD_NUMBERS[m.group(1).lower()]
        out.append((v[:-1], "x", m.start(), m.end()) if v.endswith("x")
                   else (v, "", m.start(), m.end()))
    for m in _ZH_NUMBER.finditer(text):
        v = _zh_value(m.group(1))
        if v is not None:
            times = text[m.end():m.end() + 1] == "倍"
            out.append((str(v), "x" if times else "", m.start(), m.end() + times))
    return sorted(out, key=lambda n: n[2])


def missing_numbers(claim: set[tuple[str, str]], support: set[tuple[str, str]]) -> list[str]:
    """The claim's numbers that its support lacks: the same value with the same unit, or
    without one on either side ("a speedup of 10" supports "10x"; "10%" does not)."""
    out = []
    for value, unit in sorted(claim):
        units = {u for v, u in support if v == value}
        if not units or (unit and unit not in units and "" not in units):
            out.append(value + unit)
    return out


# Capitalised words that are names or defined terms ("SpiderMonkey", "Google", "JIT",
# "Licensee"), not the first word of a sentence unless it could not start one (CamelCase,
# acronyms); months and weekdays are names too.
_NAME = re.compile(r"(?<![\w'’])([A-Z][A-Za-z0-9]*(?:[-'’][A-Za-z0-9]+)*)")
_MONTHS = frozenset("january february march april may june july august september october "
                    "november december monday tuesday wednesday thursday friday saturday "
                    "sunday".split())
_NOT_NAMES = frozenset("i a an the this that these those it its they their there here "
                       "however also in on at for of to by with from as and or but if when "
                       "yes no ok note see table figure section chapter page appendix".split())


def names(text: str) -> set[str]:
    """The names and defined terms in text, lower-cased (see _NAME)."""
    return set(name_words(text)[0])


def name_words(text: str) -> tuple[list[str], set[str]]:
    """(each name of text, as often as it occurs; the capitalised words that open a sentence,
    which may be names or not: "Asymptote can read ...", "Speedups were ..."), lower-cased."""
    found = name_spans(text)
    return [n[0] for n in found if not n[3]], {n[0] for n in found if n[3]}


def name_spans(text: str) -> list[tuple[str, str, int, bool]]:
    """(lower-cased, as written, start, opens a sentence) of each capitalised word of text
    that is or may be a name (see name_words)."""
    out: list[tuple[str, str, int, bool]] = []
    starts = {a for a, _ in sentence_spans(text, lines=True)}
    for m in _NAME.finditer(text):
        word = m.group(1)
        low = word.lower()
        if low in _NOT_NAMES or low in STOPWORDS or len(word) < 2:
            continue
        at_start = m.start() in starts or _after_opening(text, m.start())
        inner_caps = any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word)
        out.append((low, word, m.start(), at_start and not inner_caps and low not in _MONTHS))
    return out


def _after_opening(text: str, i: int) -> bool:
    """Whether position i starts a sentence after a bullet, a bold mark or a colon."""
    before = text[max(0, i - 4):i].rstrip(" *_\"'“(")
    return not before or before[-1] in ".:!?\n。：" or before.endswith("\x00")


def is_month(name: str) -> bool:
    return name in _MONTHS


# Negation cues (English and Chinese), longest first so that a cue's span ends where the
# words it governs begin ("不得使用": 不得, then 使用).
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|neither|nor|cannot|without|nothing|nobody|nowhere|unable|"
    r"fail(?:s|ed|ing)?\s+to|lacks?|lacking)\b|n['’]t\b"
    r"|不可以|不能够|不应该|不应当|不得|不可|不能|不必|不用|不要|不|没有|没|无需|无须|无法|无|未|非|勿"
    r"|别|禁止|切勿",
    re.IGNORECASE)
# Words that contain a negation cue but do not negate: "not only", 不同 (different), 无论,
# 特别 (especially), "No. 5".
_NOT_NEGATION = re.compile(
    r"\bnot only\b|\bno doubt\b|\bno matter\b|\bnonetheless\b|\bnevertheless\b"
    r"|\bno\.(?=\s*\d)|\bwhether or not\b|\bnot to mention\b"
    r"|不同|不过|不仅|不断|不少|不久|不但|不管|不论|不错|不妨|不禁|无论|并非只|未来|未必|非常|非得"
    r"|无线|除非|是非|特别|区别|分别|类别|级别|识别|个别|告别|差别|辨别|性别|派别|鉴别|判别|别的|别人"
    r"|别名|别处|别称",
    re.IGNORECASE)


def negation_cues(text: str) -> list[tuple[int, int]]:
    """(start, end) of each negation cue of text ("does not require", 不得, 无需, "fails to")."""
    kept = _NOT_NEGATION.sub(lambda m: " " * len(m.group(0)), text)
    return [m.span() for m in _NEGATION.finditer(kept)]


def negated(text: str) -> bool:
    """Whether text says something is not so ("does not require", 不得, 无需)."""
    return bool(negation_cues(text))


# Sentences that state no fact about the documents.
# A sentence that ends with a question mark, citations and closing quotes aside.
_QUESTION = re.compile(r"[?？]\s*(?:\[[^\]]*\]\s*|[\"'”’)）]\s*)*$")
_EXEMPT = re.compile("|".join([
    r"\b(?:i\s+hope|hope\s+(?:this|that|it)\s+helps|let\s+me\s+know|feel\s+free|"
    r"happy\s+to\s+help|glad\s+to\s+help|(?:any\s+)?(?:other|more|further)\s+questions)\b",
    r"^\W*(?:hello|hi|hey|thanks|thank\s+you|you['’]re\s+welcome|sure|certainly|of\s+course|"
    r"great\s+question|good\s+question|ok(?:ay)?)\W*$",
    r"\b(?:documents?|text|context|excerpts?|passages?|paper|sources?|manual|files?|report|"
    r"information|materials?)\b[^.]*\b(?:not|no|n['’]t|neither)\b[^.]*\b(?:say|said|mention|"
    r"state|specif|contain|provide|include|discuss|describ|give|cover|address|detail|answer|"
    r"enough|found|available|inform)",
    r"\b(?:not|never)\s+(?:mentioned|stated|specified|found|provided|given|discussed|covered|"
    r"described|addressed)\s+in\s+the\b",
    r"\bi\s+(?:can['’]?not|can['’]t|do\s+not|don['’]t|am\s+unable|['’]m\s+unable|could\s+not|"
    r"couldn['’]t)\s+(?:find|answer|determine|see|tell|say|confirm)",
    r"\b(?:no|not\s+enough|insufficient)\s+information\b",
    r"(?:文档|文件|资料|上下文|材料|原文|文中|手册)\S{0,6}(?:没有|未|并未|没)\S{0,4}"
    r"(?:提到|提及|说明|涉及|给出|介绍|包含|记载|描述|相关)",
    r"无法(?:回答|确定|找到|判断)|没有(?:相关|足够|具体)?(?:的)?信息|未(?:提及|提到|说明)",
    r"希望(?:这|以上|对你|对您|能|我的)|^\W*(?:你好|您好|谢谢|不客气|好的)\W*$|如有(?:其他|任何)",
]), re.IGNORECASE)
_LEAD_IN = re.compile(r"^\W*(?:#{1,6}\s.*|[^.!?。！？]{0,60}[:：]\W*|\*\*[^*]{0,60}\*\*\W*)$")


@dataclass(frozen=True)
class Claim:
    """What one statement asserts: its words (without citation markers) and its facts."""
    text: str
    numbers: frozenset
    names: frozenset
    negated: bool
    initials: frozenset = frozenset()  # capitalised words that open a sentence
    identifiers: frozenset = frozenset()  # paths, snake_case, camelCase: see identifiers()


# Lead-ins that attribute a statement to the documents and add no fact of their own.
_ATTRIBUTION = re.compile(
    r"^(?:(?:according\s+to|as\s+(?:stated|described|explained|noted|shown)\s+in|based\s+on|"
    r"per|in)\s+the\s+(?:provided\s+)?(?:documents?|text|context|passages?|excerpts?|paper|"
    r"manual|guide|article|sources?)(?:\s+provided)?\s*,\s*"
    r"|the\s+(?:documents?|text|context|passages?|excerpts?|paper|manual|guide|article|"
    r"authors?)\s+(?:says?|states?|notes?|explains?|mentions?|describes?|shows?|writes?)"
    r"(?:\s+that)?\s*,?\s*"
    r"|(?:根据|按照|据)?(?:文档|文件|手册|原文|文中|资料|上下文)(?:中)?(?:指出|提到|说明|表明|显示|"
    r"所述|记载|写道)?[，,：:]\s*)", re.IGNORECASE)


def claim(text: str) -> Claim:
    text = " ".join(text.replace("\x00", " ").split())
    text = _ATTRIBUTION.sub("", text, count=1) or text
    found, initials = name_words(text)
    return Claim(text, frozenset(numbers(text)), frozenset(found), negated(text),
                 frozenset(initials), frozenset(identifiers(text)))


_TOKEN = re.compile(r"[^\s\"'`(),;\[\]<>{}，。；：、（）]+")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
# A TeX command with the arguments written against it ("\vspace{3in}", "\thispagestyle{empty}",
# "\maketitle") and a long option with its value ("--no-install-recommends", "--jobs=4"):
# "\vspace{3in}" where the passage has "\vspace{2in}" says something else.
_TEX_CALL = re.compile(r"\\[A-Za-z@]{2,}\*?(?:\[[^\]\s]{0,40}\])?(?:\{[^{}\s]{1,40}\})*")
_LONG_OPTION = re.compile(r"(?<![\w-])--[A-Za-z][\w-]+(?:=[^\s,;)\]]+)?")
_ARGUMENTS = re.compile(r"[{\[=*]")  # where a command's or an option's arguments begin


def identifiers(text: str) -> set[str]:
    """The identifiers of text, lower-cased: a path ("/usr/share/doc/PACKAGE", "~/.config",
    "a/b/c"), a snake_case or camelCase name ("DEBIAN_FRONTEND", "maxNewTokens"), a TeX
    command with its arguments or a long option with its value. Each must be in a statement's
    support as written (spaces aside): a path, a command or an option value the document does
    not give is a fact of its own. "and/or" and "input/output" are words, not paths."""
    out = {m.group().rstrip(".").lower() for pattern in (_TEX_CALL, _LONG_OPTION)
           for m in pattern.finditer(text)}
    for m in _TOKEN.finditer(text):
        token = m.group().rstrip(".,:;!?")
        if len(token) < 3 or not any(c.isalpha() for c in token) or "://" in token:
            continue
        path = token[0] in "/~" or token.startswith("./") or token.count("/") >= 2
        if path or "_" in token.strip("_") or _CAMEL.search(token):
            out.add(token.lower())
    return out


def other_form(identifier: str, text: str) -> str | None:
    """The same TeX command or long option as identifier, written with other arguments or
    another value in text ("\\vspace{2in}" for "\\vspace{3in}"), or None."""
    head = _ARGUMENTS.split(identifier, maxsplit=1)[0]
    if not head.startswith(("\\", "--")):
        return None
    for pattern in (_TEX_CALL, _LONG_OPTION):
        for m in pattern.finditer(text):
            form = m.group().rstrip(".")
            if form.lower() != identifier and \
                    _ARGUMENTS.split(form.lower(), maxsplit=1)[0] == head:
                return form
    return None


def squashed(text: str) -> str:
    """text lower-cased without whitespace: a PDF line break inside a path ("/usr/share/
    doc/package") does not hide it."""
    return "".join(text.lower().split())


# docchat's own notes in an answer or a summary ("[The answer was cut here: ...]").
_OUR_NOTES = frozenset(n.strip("[]") for n in (*NOTE.values(), *SUMMARY_NOTE.values()))
# The labels of our prompt's blocks ("Outline of the part asked about", "文档摘录"): a model
# that says its prompt back states nothing.
_OUR_LABELS = frozenset(prompts.label(lang, key).lower() for lang in ("en", "zh")
                        for key in ("outline", "excerpts", "question", "document", "focus"))


def exempt(text: str, has_terms: bool) -> bool:
    """Whether a statement states no fact: no content words and no number, a courtesy, a
    lead-in line ("Here are the speedups:", "## Summary"), "the document does not say" or
    one of docchat's own notes (where a looping answer was cut)."""
    text = " ".join(text.replace("\x00", " ").split())
    if text.strip("[] ") in _OUR_NOTES or text.strip("#*:：[] ").lower() in _OUR_LABELS:
        return True
    if not has_terms and not numbers(text):
        return True
    if _LEAD_IN.match(text) and not numbers(text):
        return True
    if _QUESTION.search(text):  # a question asserts nothing (a small model often asks back)
        return True
    return _EXEMPT.search(text) is not None


# --- statements --------------------------------------------------------------------------

def split_statements(answer: str) -> list[tuple[int, int, list[str]]]:
    """(start, end, cited labels) of each statement of an answer: its sentences and list
    items, without list markers; markers that open a sentence ("10x. [p. 1] The ...") are
    cited by the sentence before."""
    work = masked(answer)
    out: list[tuple[int, int, list[str]]] = []
    for a, b in sentence_spans(work, lines=True):
        lead = a
        while lead < b and (work[lead] == "\x00" or work[lead].isspace()):
            lead += 1
        if lead > a and out and answer[out[-1][1]:a].strip() == "":
            out[-1] = (out[-1][0], out[-1][1], out[-1][2] + cited_labels(answer[a:lead]))
        bullet = BULLET.match(work, lead)
        start = bullet.end() if bullet else lead
        if start >= b or not work[start:b].replace("\x00", "").strip(" *_#>.,;:"):
            continue
        out.append((start, b, cited_labels(answer[start:b])))
    return out


# The search stopwords that carry a statement's meaning ("only the frames mentioned in the
# list", "all", "more"): questions drop them, statements keep them.
_MEANINGFUL = frozenset(
    "list mentioned mentions only use used using show covered covering covers dealing deals "
    "describe described describes describing discussed discusses discussing explain "
    "explained explaining explains further give get more most other same once one ones all "
    "each every both some any over under own again too very thing things way ways 部分 多少"
    .split())
# Conjunctions that join clauses (clauses.py cuts there) name nothing either.
_JOINING = frozenset("but yet while whereas although though because unless however therefore "
                     "thus hence 但 但是 然而 而且 并且 而是 因为 所以 如果".split())
FUNCTION_WORDS = (frozenset(STOPWORDS) - _MEANINGFUL) | _JOINING


def content_words(text: str) -> list[str]:
    """The words of text that name something: jieba words and lower-cased words, without
    function words, in order, unique."""
    words = [t for t in terms(text) if t not in FUNCTION_WORDS and t.strip()]
    return list(dict.fromkeys(words))
