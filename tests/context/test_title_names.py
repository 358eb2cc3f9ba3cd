"""A heading goes by more than one name: a translated manual keeps the original beside the
translation ("撤销（UNDO）", "特殊段 SPECIAL SECTIONS"), a title ends in its abbreviation
("Portable Document Format (PDF)"). A question that names either names the heading; a title's
function words ("Processing using BibTeX") are not words the question must repeat; and a
chapter named by its number ("第 3 节") is the part asked about, whatever the search ranks
first."""
from __future__ import annotations

from docchat.context.outline import entries_of, named_part, title_terms
from docchat.context.passages import TokenCounter
from docchat.context.policy import POLICY
from docchat.context.relevance import add_titled
from docchat.context.retrieval import doc_key, index_terms, named_chapter, title_names
from docchat.context.selection import select
from ingest.document import Block, Document, Page, Section
from tests.factories import Chars, prose_doc

FILLER_ZH = "按下组合键之后，编辑器会在屏幕底部显示提示，用户可以继续输入或者放弃这次操作。"


def _zh_doc(titles: list[str]) -> Document:
    secs = [Section(i, (t,), 1, i + 1, i + 1, "prose", (Block("prose", FILLER_ZH * 3, i + 1),))
            for i, t in enumerate(titles)]
    return Document(path="t.txt", sha256="t", name="t.txt", kind="text", language="zh",
                    pages=[Page(i + 1, "") for i in range(len(secs))], sections=secs)


def test_title_names_split_a_bracketed_or_second_language_name():
    assert title_names("撤销（UNDO）") == ["撤销（UNDO）", "撤销", "UNDO"]
    assert title_names("Portable Document Format (PDF)")[1:] == ["Portable Document Format",
                                                                 "PDF"]
    assert title_names("特殊段 SPECIAL SECTIONS")[1:] == ["特殊段", "SPECIAL SECTIONS"]
    assert title_names("[homes] 个人目录段")[1:] == ["[homes]", "个人目录段"]
    assert title_names("2.3 过滤器") == ["2.3 过滤器"]
    assert title_names("Backup and recovery") == ["Backup and recovery"]


def test_a_question_naming_the_translation_names_the_bilingual_heading():
    doc = _zh_doc(["基本的光标控制（BASIC CURSOR CONTROL）", "撤销（UNDO）", "文件（FILE）",
                   "版权声明（COPYING）", "特殊段 SPECIAL SECTIONS"])
    rel = [{k: 1.0 for k in range(5)}]
    es = entries_of(doc)
    found = named_part([doc], rel, set(index_terms("快速指南的“撤销”一节完整讲了什么？")))
    assert found is not None and es[found[1]].line.startswith("撤销")
    found = named_part([doc], rel, set(index_terms("手册页“特殊段”部分讲了哪些内容？")))
    assert found is not None and es[found[1]].line.startswith("特殊段")
    # ... and the original's words name it too.
    found = named_part([doc], rel, set(index_terms("What does the undo section say?")))
    assert found is not None and es[found[1]].line.startswith("撤销")


def test_title_function_words_are_not_asked_for():
    assert title_terms("Processing using BibTeX") == {"process", "bibtex"}
    doc = prose_doc([("2.14 Bibliography", ["The bibliography is set by the class. "]),
                     ("2.14.1 Processing using BibTeX", ["Run bibtex after latex. "]),
                     ("References", ["A list of works. "])])
    named = set(index_terms("What does the section on processing references with BibTeX "
                            "cover?"))
    rel = [{0: 1.0, 1: 1.0, 2: 1.0}]
    found = named_part([doc], rel, named)
    assert found is not None and entries_of(doc)[found[1]].line.startswith("2.14.1")
    key = doc_key(doc, 0)
    out = add_titled({(key, i): 1.0 for i in range(3)}, [doc], [key], named, weight=0.5)
    assert out[(key, 1)] > out[(key, 0)]


def test_a_chapter_named_by_its_number_is_the_part_even_ranked_low():
    assert named_chapter("codebox 第 3 节的选项总体上能调哪些东西？") == ("number", 3)
    assert named_chapter("第 3.2 节讲了什么") is None
    titles = ["第1节 简介", "第2节 用户接口", "第3节 选项说明", "第4节 排版样例"]
    body = ("The options set the box's colours, rules and labels. " * 6,)
    secs = [Section(i, (t,), 1, i + 1, i + 1, "prose", (Block("prose", body[0], i + 1),))
            for i, t in enumerate(titles)]
    doc = Document(path="c.pdf", sha256="c", name="c.pdf", kind="pdf", language="zh",
                   pages=[Page(i + 1, "") for i in range(4)], sections=secs)
    counter = TokenCounter(Chars(), "chars")
    positions = [{1: 3.0, 3: 2.0, 2: 0.1}]  # the search ranks 第2节 first, 第3节 last
    small = len(body[0]) + 120  # room for about one section
    picked = select([doc], positions, ["选项"], counter, small * 2, policy=POLICY,
                    chapter_ref=("number", 3))
    assert 2 in {p.section.index for p in picked[0]}
    without = select([doc], positions, ["选项"], counter, small, policy=POLICY)
    assert 2 not in {p.section.index for p in without[0]}


def test_one_word_naming_skips_the_documents_own_name_and_apparatus():
    """"glossaries 手册里讲多语言支持的那一节" names the manual by its file name, and "控制目录
    外观" asks about tables of contents: neither names the option "glossaries" nor the
    document's own "目录" page."""
    secs = [Section(0, ("目录",), 1, 1, 1, "prose", (Block("prose", FILLER_ZH, 1),)),
            Section(1, ("glossaries",), 1, 2, 2, "prose", (Block("prose", FILLER_ZH, 2),)),
            Section(2, ("排版",), 1, 3, 3, "prose", (Block("prose", FILLER_ZH, 3),))]
    doc = Document(path="glossaries-user.pdf", sha256="g", name="glossaries-user.pdf",
                   kind="pdf", language="zh", pages=[Page(i + 1, "") for i in range(3)],
                   sections=secs)
    rel = [{0: 1.0, 1: 1.0, 2: 1.0}]
    assert named_part([doc], rel, set(index_terms("glossaries 手册里控制目录外观的那一节"))) is None
    found = named_part([doc], rel, set(index_terms("glossaries 手册里讲排版的那一节")))
    assert found is not None and entries_of(doc)[found[1]].line.startswith("排版")


def test_words_naming_the_documents_kind_are_no_search_words():
    """"bash 中文手册页" names the document, not a topic: every translated manual page ends
    in a colophon made of those words, which then outranked the section asked about."""
    from docchat.context.retrieval import build_queries
    words = build_queries("bash 中文手册页关于“别名”的那一节都说了些什么？")[0].text.split()
    assert "别名" in words and not {"中文", "手册", "页", "一节"} & set(words)
    assert build_queries("minicom(1) 中文版的杂项一节讲了哪些事？")[0].text.split()[:3] == [
        "minicom", "1", "杂项"]
    assert "中文" in build_queries("中文支持怎么设置？")[0].text.split()  # a topic here
