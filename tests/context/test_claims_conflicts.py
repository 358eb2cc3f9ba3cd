"""The claim checker's conflicts: a statement whose words are in a passage while one of its
facts (a number, a name, a negation) is stated otherwise there is "not_found" with the
passage's sentence, never "partly" or "supported"."""
from __future__ import annotations

from docchat.context.claims import (
    EXEMPT,
    NOT_FOUND,
    PARTLY,
    SUPPORTED,
    AnswerCheck,
    Source,
    Statement,
    check_answer,
)

PAGE_3 = ("Setup takes a few minutes. The tenant must pay the rent within 30 days, and the "
          "landlord repairs the heating within 5 working days. Users cannot delete shared "
          "folders, but they can rename them. TraceMonkey is faster than SpiderMonkey on most "
          "benchmarks. The server does not start without a configuration file.")
PAGE_4 = "Version 2.1 was released in March 2023 by the Mozilla team."
DOC = [Source(2, "lease.pdf", 3, "iii", PAGE_3, 100), Source(2, "lease.pdf", 4, "iv", PAGE_4, 0)]
ZH = [Source("合同.pdf", "合同.pdf", 2, "2",
             "租户必须在三十天内支付租金，房东负责在5个工作日内维修暖气。用户不得删除共享文件夹，但可以重命名。"
             "用 Git commit 信息来生成 Debian changelog。", 0)]


def one(answer: str, sources=DOC) -> Statement:
    check = check_answer(answer, sources)
    assert len(check.statements) == 1, check.statements
    return check.statements[0]


def test_true_statements_stay_supported():
    for text in ["The tenant must pay the rent within 30 days.",
                 "The landlord repairs the heating within 5 working days.",
                 "Users can rename shared folders but cannot delete them.",
                 "A configuration file is required to start the server.",
                 "Mozilla released version 2.1 in March 2023."]:
        assert one(text).status == SUPPORTED, text
    for text in ["租户必须在三十天内支付租金。", "用户可以重命名共享文件夹，但不得删除。"]:
        assert one(text, ZH).status == SUPPORTED, text


def test_negation_in_the_second_clause():
    s = one("The tenant must pay the rent within 30 days, and the landlord does not repair "
            "the heating within 5 working days.")
    assert s.status == NOT_FOUND and s.conflict["kind"] == "negation"
    assert "repairs the heating" in s.conflict["says"]
    s = one("Users cannot delete shared folders, but they cannot rename them.")
    assert s.status == NOT_FOUND and s.conflict["kind"] == "negation"
    assert s.conflict["says"] == "can rename them"
    zh = one("租户必须在三十天内支付租金，房东不负责在5个工作日内维修暖气。", ZH)
    assert zh.status == NOT_FOUND and zh.conflict["kind"] == "negation"
    zh = one("用户不得删除共享文件夹，但不可以重命名。", ZH)
    assert zh.status == NOT_FOUND and zh.conflict["kind"] == "negation"


def test_a_negation_the_passage_states_positively():
    s = one("Users can delete shared folders.")
    assert s.status == NOT_FOUND and s.conflict["says"] == "Users cannot delete shared folders"
    assert s.reason == "the document says the opposite: “Users cannot delete shared folders” " \
                       "(p. iii)"
    assert one("用户可以删除共享文件夹。", ZH).conflict["kind"] == "negation"


def test_name_swapped_for_one_the_passages_name_elsewhere():
    # Mozilla is named on page 4 only; the statement puts it where page 3 names TraceMonkey.
    s = one("Mozilla is faster than SpiderMonkey on most benchmarks.")
    assert s.status == NOT_FOUND and s.conflict["kind"] == "name"
    assert s.conflict["says"] == "TraceMonkey" and s.conflict["page"] == 3
    # Two names of the sentence swapped: both are there, each in the other's place.
    s = one("SpiderMonkey is faster than TraceMonkey on most benchmarks.")
    assert s.status == NOT_FOUND and s.conflict["kind"] == "name"
    zh = one("用 Debian commit 信息来生成 Git changelog。", ZH)
    assert zh.status == NOT_FOUND and zh.conflict == {
        "kind": "name", "document": "合同.pdf", "doc_id": "合同.pdf", "page": 2, "label": "2",
        "span": [ZH[0].text.index("用 Git"), len(ZH[0].text)],
        "text": "用 Git commit 信息来生成 Debian changelog。", "says": "Git"}


def test_a_name_in_another_form_of_the_same_word_is_no_conflict():
    """"Flowables" where the heading says "Flowable Objects" is the same name (stems
    compared), not another one in its place; a different name there still conflicts."""
    heading = [Source(1, "r.pdf", 98, "98", "Chapter 10 Writing your own Flowable Objects", 0,
                      "heading")]
    s = one("Chapter 10 is Writing your own Flowables [p. 98].", heading)
    assert s.status == SUPPORTED and s.conflict is None
    s = one("Chapter 10 is Writing your own Canvases [p. 98].", heading)
    assert s.status == NOT_FOUND and s.conflict["says"] == "Flowable"


def test_a_chapter_given_another_number_contradicts_the_heading():
    """A number a label word comes before ("Chapter 7") numbers that thing, whatever word
    follows: "Chapter 8 is Tables" against the heading "Chapter 7 Tables and TableStyles"
    says another number for the same chapter (before, "8 not in the passage" only)."""
    heading = [Source(1, "r.pdf", 84, "84", "Chapter 7 Tables and TableStyles", 0, "heading")]
    s = one("Chapter 8 is Tables and TableStyles [p. 84].", heading)
    assert s.status == NOT_FOUND and s.conflict["says"] == "Chapter 7"
    s = one("The tables chapter is Chapter 9.", heading)
    assert s.status == NOT_FOUND and s.conflict["says"] == "Chapter 7"
    assert one("Chapter 7 is Tables and TableStyles [p. 84].", heading).status == SUPPORTED


def test_changed_number_in_a_two_number_sentence():
    # The second number changed: the first clause still matches, the second says 5.
    s = one("The tenant must pay the rent within 30 days, and the landlord repairs the "
            "heating within 9 working days.")
    assert s.status == NOT_FOUND and s.conflict["kind"] == "number"
    assert s.conflict["says"] == "5 working"
    assert s.reason == "9 not in the passage: the document says 5 working (p. iii)"
    # The two numbers swapped: each is in the sentence, neither in its own clause.
    s = one("The tenant must pay the rent within 5 days, and the landlord repairs the "
            "heating within 30 working days.")
    assert s.status == NOT_FOUND and s.conflict["kind"] == "number"
    zh = one("租户必须在三十天内支付租金，房东负责在9个工作日内维修暖气。", ZH)
    assert zh.status == NOT_FOUND and zh.conflict["kind"] == "number"
    assert zh.conflict["says"] == "5个"


def test_conflict_gives_the_page_label_and_span_of_the_sentence_that_says_otherwise():
    s = one("Version 2.1 was released in March 2024 by the Mozilla team.")
    c = s.conflict
    assert (c["kind"], c["document"], c["doc_id"], c["page"], c["label"]) == (
        "number", "lease.pdf", 2, 4, "iv")
    assert c["says"] == "2023" and c["text"] == PAGE_4 and c["span"] == [0, len(PAGE_4)]
    assert s.reason == "2024 not in the passage: the document says 2023 (p. iv)"
    s = one("The tenant must pay the rent within 60 days.")
    start = PAGE_3.index("The tenant")
    end = PAGE_3.index(" Users")
    assert s.conflict["span"] == [100 + start, 100 + end]  # the source's offset in its page
    assert s.conflict["text"] == PAGE_3[start:end]
    assert s.page is None and s.span is None  # the statement itself is not found


def test_a_conflict_is_never_partly():
    # Half of the words match (score in the partly range) and the number is stated otherwise.
    s = one("The tenant must pay the rent within 60 days, and an agency collects each payment "
            "by bank transfer.")
    assert 0.3 <= s.score < 0.6
    assert s.status == NOT_FOUND and s.conflict["says"] == "30 days"
    # Partial word support without a conflicting fact stays partly.
    s = one("TraceMonkey is faster than SpiderMonkey on most benchmarks, and the vendor "
            "ships it.")
    assert s.status == PARTLY and s.conflict is None and s.score >= 0.6
    assert s.reason == "“and the vendor ships it.” is not in the passage"


def test_the_conflict_travels_in_the_dicts_and_old_dicts_still_load():
    check = check_answer("The tenant must pay the rent within 60 days. Hello!", DOC)
    d = check.to_dict()
    assert d["statements"][0]["conflict"]["says"] == "30 days"
    assert d["statements"][1]["conflict"] is None
    assert AnswerCheck.from_dict(d) == check
    old = {k: v for k, v in d["statements"][0].items() if k != "conflict"}
    loaded = Statement.from_dict(old)
    assert loaded.conflict is None and loaded.status == NOT_FOUND
    assert AnswerCheck.from_dict({"statements": [old]}).total == 1


def test_exempt_sentences_are_still_exempt():
    check = check_answer("The document does not say how long the warranty lasts. I hope "
                         "this helps.\n文档中没有提到这一点。", DOC)
    assert [s.status for s in check.statements] == [EXEMPT] * 3
    assert all(s.conflict is None for s in check.statements)


def test_a_word_negated_by_its_prefix():
    dates = [Source(1, "notes.txt", None, None, "Dates before 1970 are invalid dates in this "
                                                "format. 两个文件的格式不同。", 0)]
    s = one("Dates before 1970 are valid dates in this format.", dates)
    assert s.status == NOT_FOUND and s.conflict["says"] == "invalid"
    assert s.conflict["page"] is None and s.reason.endswith("(notes.txt)")
    assert one("两个文件的格式同。", dates).conflict["says"] == "不同"
    assert one("Dates before 1970 are invalid dates in this format.", dates).status == SUPPORTED


def test_a_command_or_option_written_with_other_arguments_is_not_supported():
    """"Use \\thispagestyle{plain} to hide the page number" shares every word but one with
    a passage that says \\thispagestyle{empty}, and was "supported": the command with its
    argument is a fact of its own, as a path is; the passage's form is named."""
    page = [Source(1, "latex.pdf", 4, "4", "The title page uses \\thispagestyle{empty} to hide "
                   "the page number. Build the manual with make --jobs=2 in its folder.", 0)]
    wrong = check_answer("Use \\thispagestyle{plain} to hide the page number.", page)
    assert wrong.statements[0].status == NOT_FOUND
    assert "the passage has \\thispagestyle{empty}" in wrong.statements[0].reason
    option = check_answer("Build the manual with make --jobs-max in its folder.", page)
    assert option.statements[0].status != SUPPORTED
    right = check_answer("The title page uses \\thispagestyle{empty} to hide the page number.",
                         page)
    assert right.statements[0].status == SUPPORTED
