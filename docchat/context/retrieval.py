"""Query building and scoring: queries from the question and the conversation, translated
through CC-CEDICT where a document is in the other language, an in-memory BM25 that ranks like
the store's FTS5 index (same words, same stemming, same formula), and block scoring
inside one section."""
from __future__ import annotations

import logging
import math
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Protocol, Sequence

from docchat.context import dictionary
from docchat.context.cache import DocumentCache
from docchat.library.windows import (  # noqa: F401 (re-exported)
    WINDOW_CHARS,
    WindowHit,
    section_windows,
    window_text,
)
from ingest.document import Block, Document
from ingest.segment import has_cjk, terms

logger = logging.getLogger(__name__)

# FTS5's bm25() constants and the store's column weights (heading 3.0, body 1.0).
K1, B = 1.2, 0.75
HEADING_WEIGHT, BODY_WEIGHT = 3.0, 1.0


class Hit(Protocol):
    doc_id: object
    section: int
    score: float


SearchFn = Callable[[str], Sequence[Hit]]


@dataclass(frozen=True)
class SectionHit:
    doc_id: object  # Document.id, or the document's position when it has none
    section: int
    score: float


# Question words and function words that carry no topic. Chinese entries are jieba words.
STOPWORDS = frozenset("""
a an the and or of to in on at for from by with about as is are was were be been being do does
did doing have has had it its this that these those there here what which who whom whose when
where why how can could should would will shall may might must i me my we our you your he she
they them their his her not no yes if then than so too very just also any some each every all
both more most other such only own same into over under again further once please tell explain
describe show give list say said one ones thing things way ways use used using get does isn
whats hows wheres explains explained explaining describes described describing discusses
discussed discussing covers covered covering deals dealing mentions mentioned
的 了 是 在 和 与 或 及 吗 呢 吧 啊 么 什么 怎么 怎样 如何 哪些 哪个 哪 为什么 为何
是否 可以 能 能否 请 请问 一下 这 那 这个 那个 这些 那些 有 没有 有没有 中 里 上 下 对
把 被 给 让 我 你 他 她 它 我们 你们 他们 要 会 就 都 也 还 又 并 而 及其 以及 其 之 所
等 说 讲 介绍 说明 告诉 关于 一个 一种 使用 用
哪里 哪儿 哪种 哪类 多少 啥 为啥 何时 什么样 怎么样 部分 讲讲 说说 谈谈 聊聊
says everything
""".split())

# How a question asks about a document's structure or refers to the document itself: "which
# chapter ... and what are its sections?", "in the beamer guide", "哪一章讲……？有哪些节？".
# These words name no topic, and in a manual they match the pages that talk about its own
# chapters ("How to Read this User's Guide"). Only the phrases go: "how do I number sections"
# keeps its "sections", "设置章节标题" its 章节.
_UNIT = r"(?:chapter|section|subsection|part|appendix|entry|topic)s?"
_DOC = r"(?:manual|guide|user'?s guide|handbook|documentation|document|book|paper|article)"
_WHICH_UNIT = rf"\b(?:which|what)\s+(?:\w+\s+)?{_UNIT}\b"
_FORM = (r"\b(?:summari[sz]e|summary|overview|in\s+(?:full|its\s+entirety)(?=\s*[.?!,;:]|$)|"
         rf"start\s+to\s+finish|(?:whole|entire|full|complete)\s+(?:sub)?{_UNIT})\b"
         r"|完整(?!性)(?:地)?|(?:(?:那|这)?一)?整(?:节|章)|从头到尾|(?:讲|说|过)一遍|概括(?:一下)?|总结(?:一下)?"
         r"|(?:那|这)(?:一)?(?:部分|小节|节|章)")
# How a part's contents are sorted: "是按什么主题分类的", "怎么分组的".
_ZH_SORTED = (r"(?:按|根据|以)(?:什么|哪些|哪几|哪种)\S{0,4}?(?:分类|分组|划分|组织|编排|排列)"
              r"|(?:怎么|如何|怎样)(?:分类|分组|划分|编排)")
_ABOUT = (r"(?:on|about|that|which|where|for|covering|dealing|describing|explaining|devoted|"
          r"with|listing)\b")
_ORGANISED = r"\bhow\s+is\s+(?:it|that|this)\s+(?:organi[sz]ed|structured|divided|laid out)\b"
STRUCTURE_PHRASES = re.compile("|".join([
    _WHICH_UNIT,
    rf"\b(?:its|their|the chapter'?s|the section'?s)\s+(?:own\s+)?(?:sub)?{_UNIT}\b",
    rf"\bwhat\s+(?:\w+\s+)?(?:sub)?{_UNIT}\s+(?:does|do|is|are)\b",
    _ORGANISED,
    r"\bwhat\s+does\s+it\s+(?:contain|cover|include|have)\b",
    r"\b(?:cover|contain|include)s?(?=\s*[?？.]*\s*$)",
    _ZH_SORTED,
    rf"\b(?:the|this|that)\s+(?:[\w.+-]+(?:['’]s|s['’])?\s+){{0,2}}{_DOC}(?:['’]s)?\b",
    # The unit word of a part named by its subject ("the chapter on ...", "the manual's
    # section about ..."): the subject stays.
    rf"\b(?:sub)?(?:chapter|section|part|appendix)s?(?=\s+{_ABOUT})",
    # The form asked for, not its topic: "summarize the whole section on ...", "in full",
    # "把……那部分完整讲一遍".
    _FORM,
    r"(?:哪一|哪个|哪几|哪些|哪)(?:个)?(?:章|节|小节|部分|篇|部)",
    r"(?:有|分|包括|包含)?(?:哪些|哪几)(?:个)?(?:小节|节|章|部分|内容)",
    r"各(?:小节|节|章|部分)",
    r"(?:手册|文档|指南|文件)(?:里|中|内)|(?:手册|指南)的",
    # The document's own kind and language ("bash 中文手册页", "minicom(1) 中文版"): every
    # translated manual page ends in a colophon made of these words.
    r"中文(?:版|手册页?|页|文档|说明书?|译本)|手册页|\bman(?:ual)?\s+pages?\b",
    r"(?:那|这)?一(?:节|小节|章)",
]), re.IGNORECASE)


# The subset of those phrases that asks for structure (not just names the document): also
# the parts asked for by a list ("What are the main chapters of ...", "List all the
# subsections of ...", "the overall structure of this document", "……那一章都有哪些条目？",
# "分成哪几个大类？").
_UNITS = r"(?:chapter|section|subsection|part|appendix|appendices|clause|entry|topic)s?"
_ZH_UNIT = r"(?:小节|节|章|部分|篇|大类|类|条目|小标题|附录|子命令|组|段)"
STRUCTURE_QUESTION = re.compile("|".join([
    _WHICH_UNIT,
    rf"\b(?:its|their)\s+(?:own\s+)?(?:sub)?{_UNIT}\b",
    _ORGANISED,
    rf"\b(?:what|which)\s+(?:are|were)\s+(?:the|its|their)\s+(?:[\w-]+\s+){{0,2}}(?:sub)?{_UNITS}\b",
    rf"\b(?:list|give me|show me|name)\s+(?:all\s+)?(?:of\s+)?(?:the|its)\s+(?:[\w-]+\s+)?"
    rf"(?:sub)?{_UNITS}\b",
    rf"\bone\s+(?:sub)?{_UNITS}\s+each\b",
    r"\b(?:overall\s+)?structure\s+of\s+(?:this|the|that)\b",
    r"(?:哪一|哪个|哪)(?:个)?(?:章|节|小节|部分|篇)",
    rf"(?:哪些|哪几)(?:个|大)?{_ZH_UNIT}",
    r"各(?:小节|节|章)",
    r"(?:分成|分为|分了|组成)(?:了)?(?:哪些|哪几)",
    _ZH_SORTED,
    r"(?:章|节|部分|类|附录)(?:里|中)?(?:都|一共|依次)?(?:有|介绍了|回答了|收了|包括)(?:了)?(?:哪些|哪几)",
]), re.IGNORECASE)


# A part named by what it is about, not by its title: "the chapter on ...", "the part about
# ...", "the section that ...", "讲……的那一章", "那部分". Unless the question asks about it as
# a whole (asks_whole), it asks what the part holds: its sub-outline answers it.
REFERS_TO_PART = re.compile(
    rf"\b(?:the|this|that|which|what)\s+(?:[\w'’-]+\s+){{0,2}}(?:sub)?"
    rf"(?:chapter|section|part|appendix)\s+{_ABOUT}"
    r"|(?:那|这)(?:一)?(?:个)?(?:章|节|小节|部分|篇|附录)", re.IGNORECASE)


def asks_structure(question: str) -> bool:
    """Whether the question asks which part of a document is about something, or what its
    parts are ("Which chapter covers ..., and what are its sections?", "讲……的是哪一章？"),
    or what a part named by its subject holds (REFERS_TO_PART)."""
    return STRUCTURE_QUESTION.search(question) is not None or (
        REFERS_TO_PART.search(question) is not None and not asks_whole(question))


# A question that asks about a part as a whole (its start, middle and end, not one fact in
# it): "Summarize the whole section on ...", "Walk me through everything it says about ...",
# "请完整介绍……那一节", "整体讲了什么". Such a question gets a spread of the part when the part
# does not go in whole (selection.spread); any other gets the part's best passages.
WHOLE_QUESTION = re.compile(
    r"\b(?:whole|entire|entirety|everything|overview|summari[sz]e|summary|start to finish|"
    r"from (?:the |its )?(?:start|beginning|opening)|all (?:of )?(?:the|its) (?:points|parts|"
    r"steps|rules))\b|walk (?:me |us )?through"
    r"|完整|整节|整章|整个|整体|全部|概括|总结|从头到尾|一直(?:讲|说)到", re.IGNORECASE)


# A question that names a chapter as what it asks about ("Which chapter covers ...?", "the
# chapter on ...", "讲……的那一章有哪些小节？"): the part to show is a chapter, not the section
# in it that matches best (outline.chapter_of).
CHAPTER_QUESTION = re.compile(r"\bchapters?\b|章(?!程)", re.IGNORECASE)


def asks_chapter(question: str) -> bool:
    """Whether the question names a chapter as the part it asks about."""
    return CHAPTER_QUESTION.search(question) is not None


# A chapter the question names by its place or its number: "the opening chapter", "the
# last, miscellaneous chapter", "chapter 4", "第 4 章", "第二章", "最后一章"
# (outline.named_chapter finds it in a document).
_ORDINALS = {"first": 1, "opening": 1, "introductory": 1, "1st": 1, "second": 2, "2nd": 2,
             "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5, "last": -1,
             "final": -1, "closing": -1, "concluding": -1}
_ORDINAL_CHAPTER = re.compile(rf"\b({'|'.join(_ORDINALS)}),?\s+(?:[\w-]+,?\s+){{0,2}}chapter\b",
                              re.IGNORECASE)
_NUMBERED_CHAPTER = re.compile(r"\bchapter\s+(\d{1,3})\b", re.IGNORECASE)
_ZH_DIGITS = "一二三四五六七八九"
ZH_NUMERAL = r"[一二三四五六七八九十两\d]"  # a character of a chapter's number (zh_number)
_ZH_CHAPTER = re.compile(rf"第\s*({ZH_NUMERAL}{{1,3}})\s*[章节]|(最后|末)\s*一?\s*章|首章")


def zh_number(text: str) -> int | None:
    """1-99 written in Chinese or Arabic digits ("十二", "二十", "3"); None otherwise."""
    if text.isdigit():
        return int(text)
    text = text.replace("两", "二")
    if "十" in text:
        tens, _, ones = text.partition("十")
        if len(tens) > 1 or len(ones) > 1:
            return None
        value = (_ZH_DIGITS.index(tens) + 1 if tens else 1) * 10
        return value + (_ZH_DIGITS.index(ones) + 1 if ones else 0)
    return _ZH_DIGITS.index(text) + 1 if len(text) == 1 and text in _ZH_DIGITS else None


def named_chapter(question: str) -> tuple[str, int] | None:
    """("number", n) for a chapter named by its number ("chapter 4", "第四章"), ("place",
    n) for one named by its place (1 the first, -1 the last); None for neither."""
    if m := _NUMBERED_CHAPTER.search(question):
        return "number", int(m.group(1))
    if m := _ORDINAL_CHAPTER.search(question):
        return "place", _ORDINALS[m.group(1).lower()]
    if m := _ZH_CHAPTER.search(question):
        if m.group(1):
            n = zh_number(m.group(1))
            return ("number", n) if n else None
        return "place", -1 if m.group(2) else 1
    return None


# A release or section named by its dotted number ("rsync 3.5.0", "section 4.2", "第 3.2
# 节", "v2.1"): whole, so "2.10" is not "2.10.0" and "a3.2" is no number.
_DOTTED = re.compile(r"(?<![A-Za-z0-9_.])v?(\d+(?:\.\d+)+)(?![A-Za-z0-9_]|\.\d)")


def dotted_numbers(text: str) -> set[str]:
    """The dotted numbers in text (versions, section numbers): "3.5.0", "4.2"."""
    return set(_DOTTED.findall(text))


def numbered_depth(numbers: set[str], section) -> int | None:
    """The depth in section's heading path of the first heading that carries one of numbers
    (0: the top-level one), or None."""
    if numbers:
        for depth, title in enumerate(section.heading_path):
            if numbers & dotted_numbers(title):
                return depth
    return None


def asks_whole(question: str) -> bool:
    """Whether the question asks about a part as a whole (see WHOLE_QUESTION)."""
    return WHOLE_QUESTION.search(question) is not None


# A question about the order of a collection's entries: its first ones ("Which poems open
# the collection?", "the first few entries", "最前面收的几首诗", "第一篇") or its last ones
# ("the final entries", "最后几首"). Their words name no topic (a fortune file, an anthology,
# a list of mailing lists has no chapter to find), so the search alone ranks the first
# entries no higher than any other: the opening (or closing) windows of each document go in
# as a part of the question of their own (relevance.position_windows). Other entries, items
# of a text's own ("the first argument", "the last step"), are no entries of the document.
_ENTRIES = (r"(?:poems?|songs?|verses?|entries|entry|quotes?|quotations?|"
            r"fortunes?|sayings?|stories|story|tales?|letters?|essays?|articles?|records?)")
_WHOLE_TEXT = (r"(?:document|file|collection|anthology|book|volume|selection|list|text|"
               r"manual|guide)")
_HOW_MANY = r"(?:(?:few|several|couple\s+of|two|three|four|five|six|\d+)\s+)?"
_ZH_DOC = r"(?:文档|全书|这本书|本书|诗集|词集|合集|集子|选集|手册|全文)"
_ZH_COUNT = r"[一两二三四五六七八九十几]?"
_ZH_ENTRY = r"(?:首|篇|则|封)"


def _position_pattern(first: str, edge: str, verb: str, zh: str) -> re.Pattern[str]:
    return re.compile("|".join([
        rf"\b(?:{first})\s+{_HOW_MANY}(?:[\w-]+\s+)?{_ENTRIES}\b",
        rf"\b(?:{edge})\s+of\s+(?:the|this|that)\s+(?:[\w-]+\s+)?{_WHOLE_TEXT}\b",
        rf"\b(?:{verb})\s+(?:the|this|that)\s+(?:[\w-]+\s+)?{_WHOLE_TEXT}\b",
        rf"\b{_ENTRIES}\s+(?:comes?|came|appears?|is|are)\s+(?:{first.split('|')[0]})\b",
        rf"\b(?:the|this|that)\s+(?:[\w-]+\s+)?{_WHOLE_TEXT}\s+(?:{verb})\b",
        zh,
    ]), re.IGNORECASE)


POSITION_START = _position_pattern(
    "first|opening|earliest", "beginning|start|opening|top", "opens?|starts?|begins?",
    rf"最前面?(?=[的收是那一两二三四五六七八九十几])|最开头|开篇|卷首|打头|(?:第一|头|前){_ZH_COUNT}{_ZH_ENTRY}"
    rf"|{_ZH_DOC}(?:的)?(?:最)?(?:开头|起首)")
POSITION_END = _position_pattern(
    "last|final|closing", "end|close|bottom", "ends?|closes?|finish(?:es)?",
    rf"最后面?{_ZH_COUNT}{_ZH_ENTRY}|最末{_ZH_COUNT}{_ZH_ENTRY}|压轴"
    rf"|{_ZH_DOC}(?:的)?(?:最)?(?:末尾|结尾|最后|末了)")


def asks_position(question: str) -> str:
    """"start" for a question about a collection's first entries, "end" for its last ones
    (both: "start"), "" for any other (see POSITION_START)."""
    if POSITION_START.search(question):
        return "start"
    return "end" if POSITION_END.search(question) else ""


# Where a question that asks several things splits into its parts (aspects()): sentence
# ends, and a comma before "and", "but" or "or" ("How do I remove R itself, and how a single
# package?", "……吗？……呢？"). A part needs ASPECT_TERMS content words to be searched alone.
ASPECT_SPLIT = re.compile(
    r"[？?！!。；;]+|,\s*(?:and|but|or)\s+"
    # "... compute and what are ... meant to achieve?", "the chapter on X and the Y chapter"
    r"|\s+and\s+(?=(?:what|how|which|where|why|who|whom|when|whether|the)\s)"
    # "……怎么加引用标签，又怎么在正文里引用它？", "……，和后面……怎么衔接？"
    r"|，\s*(?=又|还|再|并且|而且|以及|同时|另外|和|跟|与)"
    # "how does A compare with B", "A versus B", "how does A relate to B", "in the guidelines
    # and again among the pitfalls", "the sections on A and on B"
    r"|\s+(?:compared?\s+(?:with|to)|versus|vs\.?|relates?\s+to|differs?\s+from|"
    r"ties?\s+in\s+with|and\s+again)\s+"
    r"|\s+and\s+(?=(?:its|on|in|for|among|inside|within)\s)", re.IGNORECASE)
ASPECT_TERMS = 2
# Two things asked about one by one ("日历函数系统和 TCP 函数系统各自的已知问题分别是什么",
# "在选项说明和已知毛病里各是怎么讲的"): the question once with each of them, the words after the
# second (what is asked of both) kept in each.
_BOTH = re.compile(r"和|与|跟|以及")
_EACH_WORDS = r"分别|各自|各(?=是|怎|有|讲|说|为|用|在)"
_EACH = re.compile(_EACH_WORDS + r"|两处")
_EACH_END = re.compile(_EACH_WORDS + r"|[，,？?。；;]")  # where the second thing ends


def aspects(question: str) -> list[str]:
    """The parts of a question that asks several things, each to be searched alone so that
    each part's best passage is found (the second part's words weigh little in the whole
    question's scores); [] when it asks one thing."""
    parts = [p.strip() for p in ASPECT_SPLIT.split(question)]
    parts = [p for p in parts if len(content_terms(without_structure_words(p))) >= ASPECT_TERMS]
    if len(parts) < 2:
        parts = [p for p in _one_by_one(question)
                 if len(content_terms(without_structure_words(p))) >= ASPECT_TERMS]
    return parts if len(parts) > 1 else []


def _one_by_one(question: str) -> list[str]:
    """"A 和 B 各自/分别 ……" as "A ……" and "B ……" (see _BOTH); [] for another question."""
    both = _BOTH.search(question)
    if both is None or not _EACH.search(question, both.end()):
        return []
    end = _EACH_END.search(question, both.end())
    rest = question[end.start():] if end else ""
    return [question[:both.start()] + rest, question[both.end():]]


# A question that points back at what was just discussed: a pronoun for it ("Do I need a
# special frame for it?", "Where must that file go?"; "that" also joins clauses, and such a
# question is then taken for a follow-up, as every later question was before ae674cb), or
# the openings and endings of a follow-up ("And ...", "What about ...", "那在 Mac 上呢？",
# "用 XeLaTeX 呢？").
REFERS_BACK = re.compile(
    r"\b(?:it|its|they|them|their|this|that|these|those)\b|^\s*(?:and|so|what about|how about)\b"
    r"|它|这个|那个|这些|那些|这种|那种|该|其|此|^\s*那|呢\s*[？?]?\s*$", re.IGNORECASE)


def refers_back(question: str) -> bool:
    """Whether the question continues the conversation's topic (see REFERS_BACK)."""
    return REFERS_BACK.search(question) is not None


# The words of a question for a part's parts (STRUCTURE_QUESTION: "List all the subsections
# of ...", "What are the big parts ...") that name no topic: the units and their sizes.
_LIST_FORM = re.compile(rf"\b(?:list|give me|show me|name|all|main|major|big|top-level|"
                        rf"overall|(?:sub)?{_UNITS})\b", re.IGNORECASE)


def without_structure_words(text: str) -> str:
    """text without the phrases that ask about structure or name the document (see
    STRUCTURE_PHRASES), nor the units and sizes a question for a list of parts names
    (_LIST_FORM); the words that name a topic stay."""
    text = STRUCTURE_QUESTION.sub(lambda m: _LIST_FORM.sub(" ", m.group(0)), text)
    return STRUCTURE_PHRASES.sub(" ", text)


def content_terms(text: str) -> list[str]:
    """Search terms of text without question words and function words, in order, unique."""
    return list(dict.fromkeys(t for t in terms(text) if t not in STOPWORDS and len(t.strip()) > 0))


def translate_terms(words: Iterable[str], raw: str = "") -> list[str]:
    """Words of the other language for these search words, from CC-CEDICT (see
    docchat/dictionary.py); raw, the text they came from, lets English phrases match."""
    return dictionary.translate(list(words), raw)


# British and American spellings of one word ("colour" and "color", "licence" and
# "license", "organise" and "organize"): the index stems each as it is written, so a
# question in one spelling does not find a document in the other. Each rule turns one
# spelling into the other, both ways; a form no document uses matches nothing.
_SPELLINGS = [(re.compile(a), b) for a, b in [
    (r"^(\w{2,})our(s|ed|ing|ite|ites|able|ably|ful|less|er|ers|ism)?$", r"\1or\2"),
    (r"^(\w{2,}[^aeiou])or(s|ed|ing|ite|ites|able|ably|ful|less|er|ers|ism)?$", r"\1our\2"),
    (r"^(\w{2,}[^aeiouy])is(e|es|ed|ing|ation|ations|er|ers)$", r"\1iz\2"),
    (r"^(\w{2,}[^aeiouy])iz(e|es|ed|ing|ation|ations|er|ers)$", r"\1is\2"),
    (r"^(\w+)ys(e|es|ed|ing|er|ers)$", r"\1yz\2"),
    (r"^(\w+)yz(e|es|ed|ing|er|ers)$", r"\1ys\2"),
    (r"^(licen|defen|offen|preten)c(e|es|ed|ing)$", r"\1s\2"),
    (r"^(licen|defen|offen|preten)s(e|es|ed|ing)$", r"\1c\2"),
    (r"^(\w{2,})tre(s|d)?$", r"\1ter\2"),
    (r"^(\w{2,})ter(s|ed)?$", r"\1tre\2"),
    (r"^(\w{2,})ogue(s)?$", r"\1og\2"),
    (r"^(\w{2,})og(s)?$", r"\1ogue\2"),
]]


def spelling_variants(words: Iterable[str]) -> list[str]:
    """The other (British or American) spellings of words, not among them: "colour" gives
    "color", "licence" "license", "organised" "organized", "catalog" "catalogue"."""
    words = list(dict.fromkeys(words))
    seen = set(words)
    out: list[str] = []
    for w in words:
        if len(w) < 5 or not w.isascii() or not w.isalpha():
            continue
        for pattern, repl in _SPELLINGS:
            v = pattern.sub(repl, w)
            if v != w and v not in seen and v not in out:
                out.append(v)
    return out


@dataclass(frozen=True)
class Query:
    """One search: its text for the search function and its weight in the fused score."""
    text: str
    weight: float


def build_queries(question: str, history: Sequence = (), documents: Sequence[Document] = (),
                  recent_user_turns: int = 2, rewrite: Callable[[str], str] | None = None,
                  expand: bool = True, history_weight: float = 1.0) -> list[Query]:
    """Queries for a question: its own words, then with the recent user turns (weight
    history_weight), so that a follow-up ("and the second one?") still finds its topic.
    Where a document's language differs from the question's (and expand is on), dictionary
    translations join the words (the first query's text then carries them, e.g. for the
    dense scores). rewrite is an optional hook (e.g. the backend rephrasing)."""
    words = content_terms(without_structure_words(question)) or content_terms(question)
    if rewrite is not None:
        words += [w for w in content_terms(rewrite(question)) if w not in words]
    words += spelling_variants(words)
    q_zh = has_cjk(question)
    cross = expand and any((d.language == "zh") != q_zh for d in documents)
    if cross:
        words += [w for w in translate_terms(words, question) if w not in words]
    queries = [Query(" ".join(words), 1.0)] if words else []
    users = [m.content for m in history if getattr(m, "role", "") == "user"][-recent_user_turns:]
    if users:
        context = content_terms(without_structure_words(" ".join(users)))
        context += spelling_variants(context)
        if cross:
            context += translate_terms(context, " ".join(users))
        extra = [w for w in dict.fromkeys(context) if w not in words]
        if extra:
            queries.append(Query(" ".join(words + extra), history_weight))
    return queries


def fused_scores(search: SearchFn, queries: Sequence[Query]) -> dict[tuple[object, int], float]:
    """Run each query; add its scores normalised by its best hit, times its weight:
    {(doc, section index): score}."""
    return _fused(search, queries, lambda h: (h.doc_id, h.section))


def window_scores(search: Callable[[str], Sequence], queries: Sequence[Query],
                  hits: Sequence[Sequence] | None = None
                  ) -> dict[tuple[object, int, int, int], float]:
    """fused_scores over windows: {(doc, section index, first block, last block): score};
    hits: each query's window hits when the caller has searched already."""
    return _fused(search, queries, lambda h: (h.doc_id, h.section, h.first, h.last), hits)


def _fused(search: Callable[[str], Sequence], queries: Sequence[Query],
           key: Callable[[object], tuple], found: Sequence[Sequence] | None = None
           ) -> dict[tuple, float]:
    fused: dict[tuple, float] = {}
    for k, q in enumerate(queries):
        hits = found[k] if found is not None else search(q.text)
        if not hits:
            continue
        top = max(h.score for h in hits) or 1.0
        for h in hits:
            unit = key(h)
            fused[unit] = fused.get(unit, 0.0) + q.weight * h.score / top
    return fused


# A section's best window joins its fused score (the MaxP of passage retrieval), scaled by
# the best window overall, times WINDOW_WEIGHT.
WINDOW_WEIGHT = 0.5


def add_windows(fused: dict[tuple[object, int], float],
                windows: dict[tuple[object, int, int, int], float],
                weight: float = WINDOW_WEIGHT) -> dict[tuple[object, int], float]:
    """fused plus weight * each section's best window score over the best window's."""
    if not windows or weight <= 0:
        return fused
    top = max(windows.values()) or 1.0
    best: dict[tuple[object, int], float] = {}
    for (key, idx, _, _), sc in windows.items():
        best[(key, idx)] = max(best.get((key, idx), 0.0), sc)
    out = dict(fused)
    for k, sc in best.items():
        out[k] = out.get(k, 0.0) + weight * sc / top
    return out


_STEMS: dict[str, tuple[str, ...]] = {}
_TOKENIZER = "porter unicode61 remove_diacritics 2"  # as the store's sections_fts


def index_terms(text: str, skip: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Words of text as the store's FTS5 index sees them: segment.terms, then the index's
    own tokenizer (Porter stemming, diacritics removed), so both rank alike. skip: words
    left out before stemming (STOPWORDS: "using" would be "us" after)."""
    words = [w for w in terms(text) if w not in skip]
    missing = [w for w in dict.fromkeys(words) if w not in _STEMS]
    if missing:
        _STEMS.update(_fts_tokens(missing))
    return [t for w in words for t in _STEMS[w]]


def title_words(title: str) -> list[str]:
    """A title's search words as the index stems them, without function words (taken out
    before stemming and after: "using" would be "us")."""
    return [t for t in index_terms(title, skip=STOPWORDS) if t not in STOPWORDS]


# A heading title that ends in another name in brackets: "撤销（UNDO）" (the original of a
# translation), "Portable Document Format (PDF)" (an abbreviation).
_ALIAS = re.compile(r"^(?P<main>.*?\S)\s*[（(\[](?P<alias>[^()（）\[\]]+)[)）\]]\s*$")


# A title in two languages, one after the other: "特殊段 SPECIAL SECTIONS" (a translated
# manual page keeps the original heading), "[homes] 个人目录段".
_HAN, _LATIN = "\u3400-\u9fff", "A-Za-z"
_TWO_LANGUAGES = re.compile(
    rf"^(?P<a>[^{_LATIN}]*[{_HAN}][^{_LATIN}]*?)\s+(?P<b>[^{_HAN}]*[{_LATIN}][^{_HAN}]*)$"
    rf"|^(?P<c>[^{_HAN}]*[{_LATIN}][^{_HAN}]*?)\s+(?P<d>[^{_LATIN}]*[{_HAN}][^{_LATIN}]*)$")


def title_names(title: str) -> list[str]:
    """The names a heading title goes by: the title itself and, where it ends in another
    name in brackets, the title before them and the name in them ("撤销（UNDO）" ->
    "撤销（UNDO）", "撤销", "UNDO"), or where it is one name in Chinese and one in a
    Latin script, each ("特殊段 SPECIAL SECTIONS"), so a question that names either
    names the heading."""
    m = _ALIAS.match(title)
    if m is not None:
        return [title, m["main"], m["alias"]]
    m = _TWO_LANGUAGES.match(title.strip())
    if m is not None:
        return [title] + [x for x in m.group("a", "b", "c", "d") if x]
    return [title]


def _fts_tokens(words: list[str]) -> dict[str, tuple[str, ...]]:
    """Tokens of each word by SQLite's own FTS5 tokenizer (an in-memory database)."""
    if len(_STEMS) > 500_000:
        _STEMS.clear()
    con = sqlite3.connect(":memory:")
    try:
        con.execute(f"CREATE VIRTUAL TABLE t USING fts5(w, tokenize='{_TOKENIZER}')")
        con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        con.executemany("INSERT INTO t(rowid, w) VALUES (?, ?)", enumerate(words))
        out: dict[str, list[str]] = {w: [] for w in words}
        for row, term in con.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
            out[words[row]].append(term)
    finally:
        con.close()
    return {w: tuple(t) for w, t in out.items()}


class _Postings:
    """Term statistics of one document's search units (its sections, or its windows),
    built once and reused."""

    def __init__(self, doc: Document, windows: bool = False) -> None:
        self.postings: dict[str, list[tuple[int, float]]] = {}
        self.lengths: list[int] = []
        self.units: list[tuple[int, int, int]] = []  # (section index, first block, last block)
        for s in doc.sections:
            if windows:
                units = [((s.index, a, b), "", window_text(s, a, b))
                         for a, b in section_windows(s)]
            else:
                units = [((s.index, 0, len(s.blocks) - 1), " ".join(s.heading_path), s.text)]
            for unit, heading, body in units:
                row = len(self.units)
                head, words = Counter(index_terms(heading)), Counter(index_terms(body))
                self.lengths.append(sum(head.values()) + sum(words.values()))
                self.units.append(unit)
                for t in head.keys() | words.keys():
                    w = HEADING_WEIGHT * head.get(t, 0) + BODY_WEIGHT * words.get(t, 0)
                    self.postings.setdefault(t, []).append((row, w))

# A document's postings take 0.6-0.8 s to build on a 1,158-page manual: kept for the 16
# documents (8 x sections and windows) most recently searched.
_POSTINGS: DocumentCache[_Postings] = DocumentCache(16)


def _postings(doc: Document, windows: bool = False) -> _Postings:
    return _POSTINGS.get(doc, lambda d: _Postings(d, windows), variant=windows)


class SectionIndex:
    """In-memory BM25 over the sections of documents, ranking as the store's FTS5 does;
    windows() searches their windows (section_windows) as the store's windows_fts does."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.documents = list(documents)
        self.keys = [doc_key(d, i) for i, d in enumerate(documents)]
        self.parts = [_postings(d) for d in documents]
        self._windows: list[_Postings] | None = None

    def search(self, query: str, limit: int = 100) -> list[SectionHit]:
        """Sections matching any word of query, best first (score: higher is better)."""
        return [SectionHit(self.keys[pi], self.parts[pi].units[row][0], s)
                for (pi, row), s in _bm25(self.parts, query, limit)]

    __call__ = search

    def windows(self, query: str, limit: int = 100) -> list[WindowHit]:
        """Windows of sections matching any word of query, best first."""
        if self._windows is None:
            self._windows = [_postings(d, windows=True) for d in self.documents]
        return [WindowHit(self.keys[pi], *self._windows[pi].units[row], s)
                for (pi, row), s in _bm25(self._windows, query, limit)]


def _bm25(parts: Sequence[_Postings], query: str, limit: int
          ) -> list[tuple[tuple[int, int], float]]:
    """FTS5's bm25() over the units of parts: ((part, row), score), best first."""
    words = sorted(set(index_terms(query)))
    n = sum(len(p.lengths) for p in parts)
    if not words or not n:
        return []
    avgdl = sum(sum(p.lengths) for p in parts) / n
    scores: dict[tuple[int, int], float] = {}
    for w in words:
        lists = [(pi, p.postings.get(w, ())) for pi, p in enumerate(parts)]
        df = sum(len(lst) for _, lst in lists)
        if not df:
            continue
        idf = math.log((n - df + 0.5) / (df + 0.5))
        idf = idf if idf > 0 else 1e-6
        for pi, lst in lists:
            lengths = parts[pi].lengths
            for row, f in lst:
                norm = K1 * (1 - B + B * lengths[row] / avgdl)
                key = (pi, row)
                scores[key] = scores.get(key, 0.0) + idf * f * (K1 + 1) / (f + norm)
    return sorted(scores.items(), key=lambda kv: -kv[1])[:limit]


def doc_key(doc: Document, position: int) -> object:
    """How hits name a document: its store id, or its position when it has none."""
    return doc.id if doc.id is not None else position


def block_scores(blocks: Sequence[Block], query_terms: Sequence[str],
                 weights: dict[str, float] | None = None) -> list[float]:
    """Relevance of each block of one section to the query terms (tf-idf within the section);
    weights: index term -> factor (1 for a term not in it)."""
    if not blocks:
        return []
    qset = set(index_terms(" ".join(query_terms)))
    counts = [Counter(t for t in index_terms(b.text) if t in qset) for b in blocks]
    df = Counter(t for c in counts for t in c)
    n = len(blocks)
    idf = {t: math.log(1 + n / d) for t, d in df.items()}
    weights = weights or {}
    return [sum(idf[t] * (1 + math.log(f)) * weights.get(t, 1.0) for t, f in c.items())
            for c in counts]


# Dense scores join the fused BM25 scores for their best DENSE_TOP sections, scaled from 0
# (the DENSE_TOP-th best) to DENSE_WEIGHT (the best): a section that only the embedding
# finds can rank with the lexical hits without the long tail of weak cosines adding noise.
DENSE_WEIGHT = 1.0
DENSE_TOP = 10


def add_dense(fused: dict[tuple[object, int], float], dense: dict[tuple[object, int], float],
              weight: float = DENSE_WEIGHT, top: int = DENSE_TOP
              ) -> dict[tuple[object, int], float]:
    """fused plus weight * the dense scores of the top sections, min-max scaled."""
    if not dense or weight <= 0:
        return fused
    ranked = sorted(dense.values(), reverse=True)
    hi, lo = ranked[0], ranked[min(top, len(ranked) - 1)]
    if hi <= lo:
        return fused
    out = dict(fused)
    for key, v in dense.items():
        if v > lo:
            out[key] = out.get(key, 0.0) + weight * (v - lo) / (hi - lo)
    return out
