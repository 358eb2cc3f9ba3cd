"""Precision first at small budgets (issue 22): the best windows in the order that covers
the question's aspects (selection.covering), many of them when the best section does not
go in whole, and a spread of a part asked about as a whole (selection.spread), for the first
question (pack) and for every turn of the chat page (pack_turn)."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest

from docchat.backends import Message
from docchat.context.conversation import Conversation
from docchat.context.packing import pack
from docchat.context.passages import Passage, TokenCounter
from docchat.context.policy import POLICY
from docchat.context.relevance import relevance
from docchat.context.retrieval import (
    asks_position,
    asks_structure,
    asks_whole,
    aspects,
    doc_key,
    index_terms,
)
from docchat.context.selection import (
    Selection,
    covering,
    meaning_blocks,
    select,
    spread,
    to_grow,
    with_meaning,
)
from docchat.context.turn_packing import pack_turn
from ingest.document import Document
from tests.factories import Chars, prose_doc, titled_doc

FILLER = ("The system keeps its records in plain files that the administrator can read "
          "and change with any editor, and every change is written to the log. ")


def _doc(sections: list[tuple[str, list[str]]]) -> Document:
    return prose_doc(sections)


def test_covering_puts_the_other_aspect_second():
    """Three windows on the first aspect outscore the one on the second: covering takes the
    second aspect's window right after the best one, not after every window on the first."""
    doc = _doc([("1 Gears", [f"The alpha gear turns {k} times. " + FILLER for k in range(3)]),
                ("2 Logs", ["The beta log is kept in the spool folder. " + FILLER])])
    windows = [(0, 0, 0, 0, 9.0), (0, 0, 1, 1, 8.5), (0, 0, 2, 2, 8.0), (0, 1, 0, 0, 6.0)]
    order = covering([doc], windows, ["alpha", "gear", "beta", "log"], POLICY)
    assert order[0] == windows[0]
    assert order[1] == windows[3]
    assert sorted(order) == sorted(windows)


def test_covering_keeps_the_score_order_for_one_aspect():
    doc = _doc([("1 Gears", [f"The alpha gear turns {k} times. " + FILLER for k in range(3)])])
    windows = [(0, 0, 1, 1, 9.0), (0, 0, 0, 0, 8.5), (0, 0, 2, 2, 8.0)]
    assert covering([doc], windows, ["alpha", "gear"], POLICY) == windows


def test_the_second_place_gets_in_when_the_best_section_has_many_windows():
    """Twelve windows of one long section outscore the one window of the question's other
    aspect: the packed passages still hold that window (before: the first section's
    blocks, or that section whole, and nothing else)."""
    gears = [f"The alpha gear is set with the crank, turn {k}. " + FILLER for k in range(20)]
    other = [FILLER * 2 for _ in range(6)]
    logs = other[:3] + ["The beta log is kept in the spool folder of the host. " + FILLER] + other
    doc = _doc([("1 Alpha gear", gears), ("2 Printing", other), ("3 Sound", other),
                ("4 Fonts", other), ("5 Housekeeping", logs), ("6 Quotas", other)])
    windows = sorted([(0, 0, k, k, 10.0 - 0.2 * k) for k in range(12)] + [(0, 4, 3, 3, 6.0)],
                     key=lambda w: -w[4])
    counter = TokenCounter(Chars(), "chars")
    for avail in (1500, 2500, 4000):
        picked = select([doc], [{0: 10.0, 1: 2.0, 4: 1.5}],
                        ["alpha", "gear", "set", "beta", "log", "kept"], counter, avail, (),
                        windows)
        got = {p.section.index: p for p in picked[0]}
        assert 4 in got and 3 in got[4].blocks
        assert 0 in got and 0 in (got[0].blocks or (0,))


def test_each_part_of_a_question_that_asks_two_things_gets_its_best_window():
    """The second part's best window scores below the pool's floor in the whole
    question's ranking: as a part's best window (aspects) it still comes second."""
    doc = _doc([("1 Gears", [f"The alpha gear turns {k} times. " + FILLER for k in range(4)]),
                ("2 Logs", ["The beta log is kept in the spool folder. " + FILLER])])
    windows = [(0, 0, k, k, 9.0 - k * 0.1) for k in range(4)] + [(0, 1, 0, 0, 1.0)]
    qterms = ["alpha", "gear", "beta", "log"]
    assert (0, 1, 0, 0, 1.0) not in covering([doc], windows, qterms, POLICY)
    order = covering([doc], windows, qterms, POLICY, [[windows[0]], [(0, 1, 0, 0, 3.0)]])
    assert order[:2] == [windows[0], (0, 1, 0, 0, 3.0)]


def test_each_part_gets_its_next_best_windows_too():
    """A part's best window is often a near miss (the right words, the wrong place): its
    second and third best follow round by round, though the whole question's ranking
    leaves them out of its pool, each round with the whole question's next window (the
    parts' windows no longer crowd out the whole question's second and third)."""
    doc = _doc([("1 Gears", [f"The alpha gear turns {k} times. " + FILLER for k in range(4)]),
                ("2 Logs", [f"The beta log line {k}. " + FILLER for k in range(3)])])
    windows = [(0, 0, k, k, 9.0 - k * 0.1) for k in range(4)]
    second = [(0, 1, 0, 0, 3.0), (0, 1, 1, 1, 2.9), (0, 1, 2, 2, 2.8)]
    qterms = ["alpha", "gear", "beta", "log"]
    order = covering([doc], windows, qterms, POLICY, [[windows[0]], second])
    assert order[:4] == [windows[0], second[0], windows[1], second[1]]
    assert set(second[1:POLICY.aspect_top]) <= set(order[3:2 * POLICY.aspect_top + 1])
    assert POLICY.aspect_top >= 2


def test_aspects_splits_a_question_that_asks_several_things():
    assert aspects("How do I remove R itself, and how do I remove a single package?") == [
        "How do I remove R itself", "how do I remove a single package"]
    assert aspects("这本书是写给哪些人看的？中文版翻译概念时又向哪本书看齐？") == [
        "这本书是写给哪些人看的", "中文版翻译概念时又向哪本书看齐"]
    assert aspects("Which option sets the paper size?") == []
    assert aspects("Why? Because of the paper size option.") == []
    # Two questions joined by "and" before a question word or a second noun phrase, and a
    # Chinese comma before 又/和/还 ...: each part is searched alone.
    assert aspects("What do the low index functions compute and what are Tietze "
                   "transformations meant to achieve?") == [
        "What do the low index functions compute",
        "what are Tietze transformations meant to achieve"]
    assert aspects("How do the chapter on storing dates and the calc chapter fit together?") == [
        "How do the chapter on storing dates", "the calc chapter fit together"]
    assert aspects("带编号的代码盒子怎么加引用标签，又怎么在正文里引用它？") == [
        "带编号的代码盒子怎么加引用标签", "又怎么在正文里引用它"]
    assert aspects("How do I install R and the packages?") == []  # one thing asked
    # Two things compared, or asked about one by one: each with what is asked of both.
    assert aspects("How does guarding data with a bit operation compare with masking "
                   "interrupts?") == ["How does guarding data with a bit operation",
                                      "masking interrupts"]
    assert aspects("日历函数系统和 TCP 函数系统各自的已知问题分别是什么？") == [
        "日历函数系统各自的已知问题分别是什么？", " TCP 函数系统各自的已知问题分别是什么？"]
    assert aspects("备份和恢复要用哪些命令？") == []  # no "each": one thing asked


def _two_places() -> Document:
    """A long section on the first aspect near the start, the second aspect's one paragraph
    deep in another long section far away, other sections between."""
    gears = [f"The alpha gear is set with the crank, turn {k}. " + FILLER * 2 for k in range(12)]
    other = [FILLER * 2 for _ in range(6)]
    logs = other[:3] + ["The beta log is kept in the spool folder of the host. "
                        + FILLER] + other
    return _doc([("1 Alpha gear", gears), ("2 Printing", other), ("3 Sound", other),
                 ("4 Fonts", other), ("5 Housekeeping", logs), ("6 Quotas", other)])


def test_small_budget_packs_both_places_of_a_two_part_question():
    doc = _two_places()
    question = "How is the alpha gear set, and where is the beta log kept?"
    p = pack([doc], question, Chars(2600), max_new_tokens=100, embedder=None)
    assert "alpha gear is set" in p.text
    assert "beta log is kept" in p.text
    t = pack_turn([doc], question, Chars(2600), Conversation(), max_new_tokens=100,
                  embedder=None)
    assert "alpha gear is set" in t.text and "beta log is kept" in t.text


def _long_part() -> Document:
    body = [f"Paragraph {k} of the text. " + FILLER * 2 for k in range(60)]
    body[0] = "The quota rules start here: every user gets a share of the disk. " + FILLER
    return _doc([("1 Introduction", [FILLER * 3]), ("2 Disk quota rules", body),
                 ("3 Printing", [FILLER * 3])])


def test_a_part_asked_about_as_a_whole_gets_its_start_middle_and_end():
    """The part does not fit, and only its start holds the question's words: it still
    shows its start, a paragraph of its middle and its end (not only its start)."""
    doc = _long_part()
    question = "Summarize the whole section on the disk quota rules."
    for p in (pack([doc], question, Chars(7000), max_new_tokens=100, embedder=None),
              pack_turn([doc], question, Chars(7000), Conversation(), max_new_tokens=100,
                        embedder=None)):
        shown = {int(k) for k in re.findall(r"Paragraph (\d+) of the text", p.text)}
        assert "quota rules start here" in p.text
        assert 59 in shown and shown & set(range(20, 40))
    # Below policy.spread_from tokens of budget, the best blocks of the best hits instead.
    small = pack([doc], question, Chars(2600), max_new_tokens=100, embedder=None)
    assert "Paragraph 59 of the text" not in small.text


def test_spread_stays_within_its_cap_and_spans_the_part():
    doc = _long_part()
    counter = TokenCounter(Chars(), "chars")
    got = spread(doc, [1], ["quota"], counter, 1200, POLICY)
    (pos, blocks), = got
    assert pos == 1 and blocks[0] == 0
    assert 59 in blocks and any(20 <= b < 40 for b in blocks)
    assert spread(doc, [1], ["quota"], counter, 0, POLICY) == []
    shown = sum(counter.text(doc.sections[1].blocks[b].text) + 8 for b in blocks)
    assert shown <= 1200


def test_asks_whole():
    assert asks_whole("Summarize the whole section on quotas.")
    assert asks_whole("Walk me through the installation, start to finish.")
    assert asks_whole("请完整介绍 update 那一部分")
    assert asks_whole("开头那一节整体讲了什么？")
    assert not asks_whole("Which option sets the paper size?")
    assert not asks_whole("怎么设置纸张大小？")


def test_asks_structure_when_the_parts_are_asked_for_by_a_list():
    """Questions that ask for a part's parts as a list get the structure share of the focus
    outline (before: only "which chapter ...", "its sections" and a few Chinese forms)."""
    for q in ("What are the subsections of the part about portability?",
              "What are the main chapters of this guide after the introduction?",
              "List all the subsections of the part on latency.",
              "Give me the overall structure of this document.",
              "Which tools does the manual cover, one subsection each?",
              "专门讲怎么修各种排版毛病的那一章都有哪些条目？",
              "这份 FAQ 分成哪几个大类？",
              "第 4 章依次介绍了哪些子命令？",
              "Gmsh 手册的常见问题附录是按什么主题分类的？"):
        assert asks_structure(q), q
    for q in ("What are the smoothing options of the plot command?",
              "Which file must my code include for the user-break check?",
              "怎么设置纸张大小？"):
        assert not asks_structure(q), q


def test_asks_structure_of_a_part_named_by_its_subject():
    """A part named by what it is about ("the chapter on ...", "讲……的那一章") is asked
    about for what it holds, unless the question asks about it as a whole (then it gets a
    spread of the part instead)."""
    for q in ("What does the chapter on large-format conference displays cover?",
              "How is the chapter on defining your own commands organized?",
              "Which tools does the manual compare itself with in the chapter on competitors?",
              "讲日常给机器打补丁、升级的那一章，都回答了哪些问题？",
              "演示各种项目怎么打包的那一章覆盖了哪些构建方式？",
              "What does the ngspice manual's chapter on launching the program cover?"):
        assert asks_structure(q) and not asks_whole(q), q
    for q in ("Summarize the whole section on keeping objects safe.",
              "请完整介绍 update 那一部分",
              "How do I number sections in an article?",
              "How do I change the part of the header that shows the date?"):
        assert not asks_structure(q), q


def test_windows_by_meaning_alone_get_in_where_the_budget_has_room():
    """A paraphrase shares few words with its answer: the window nearest the question by
    meaning (meant) is not among the fused windows. From policy.meant_from tokens up it goes
    in after the best windows; below, the budget stays with the fused windows and hits."""
    gears = [f"The alpha gear is set with the crank, turn {k}. " + FILLER for k in range(20)]
    other = [FILLER * 2 for _ in range(6)]
    answer = other[:3] + ["Rotate the wheel by hand until it clicks into place. " + FILLER] + other
    doc = _doc([("1 Alpha gear", gears)] + [(f"{k} Other", other) for k in range(2, 13)]
               + [("13 Housekeeping", answer)])
    windows = [(0, 0, k, k, 10.0 - 0.2 * k) for k in range(12)]
    meant = [(0, 0, 0, 0, 0.9), (0, 12, 3, 3, 0.8)]  # the first is in already: not counted
    counter = TokenCounter(Chars(), "chars")

    def picked(avail, policy=POLICY):
        got = select([doc], [{0: 10.0, 1: 2.0}], ["alpha", "gear", "set"], counter, avail, (),
                     windows, policy, meant=meant)
        return {p.section.index: p for p in got[0]}

    big = picked(POLICY.meant_from + 500)
    assert 12 in big and 3 in big[12].blocks and len(big[12].blocks) < len(answer)
    assert 12 not in picked(POLICY.meant_from - 500)
    assert 12 not in picked(POLICY.meant_from + 500, replace(POLICY, meant_top=0))
    # a question taken to ask about a part as a whole ("... one whole number ...") too
    got = select([doc], [{0: 10.0, 1: 2.0}], ["alpha", "gear", "set"], counter,
                 POLICY.meant_from + 500, (), windows, POLICY, meant=meant, whole=True)
    assert 12 in {p.section.index for p in got[0]}


def test_a_turns_excerpts_come_best_scored_first_then_in_order_of_choice():
    """In a turn (order(by_rank=True, scores=...)), partial passages stand with the whole
    ones, the best scored first: a read cut at the first-token deadline keeps the start, so
    a window chosen early in a section the search ranks lower must not push the best
    section back."""
    from docchat.context.passages import Passage
    from docchat.context.selection import order
    from tests.factories import titled_doc

    d = titled_doc("m.pdf", [(f"S{k}", f"Body {k}. More {k}.") for k in range(4)],
                   extra=["Second block."])
    s = d.sections
    picked = [[Passage(d, s[0], None, 1), Passage(d, s[2], (1,), 2),
               Passage(d, s[1], None, 3), Passage(d, s[3], (0,), 4)]]
    scores = {(0, 0): 2.3, (0, 1): 2.1, (0, 2): 1.9, (0, 3): 1.2}
    assert order([d], ["m.pdf"], picked, (), by_rank=True, scores=scores) == [
        (0, 0), (0, 1), (0, 2), (0, 3)]
    # In order of choice without scores; partial ones last without by_rank.
    assert order([d], ["m.pdf"], picked, (), by_rank=True) == [(0, 0), (0, 2), (0, 1), (0, 3)]
    assert order([d], ["m.pdf"], picked, ()) == [(0, 0), (0, 1), (0, 2), (0, 3)]


def test_the_parts_windows_come_on_top_of_the_whole_questions():
    """breadth_top windows of the whole question, plus each part's aspect_top: with one
    window allowed and two parts, the whole question's best and both parts' best go in
    (before: the whole question's best and the first part's only)."""
    doc = _doc([(f"{k} Part", [f"Topic {k} text. " + FILLER]) for k in range(1, 6)])
    windows = [(0, k, 0, 0, 9.0 - k) for k in range(5)]
    parts = [[(0, 3, 0, 0, 5.0)], [(0, 4, 0, 0, 5.0)]]
    policy = POLICY.__class__(breadth_top=1, aspect_top=1, part_for_all=False)
    counter = TokenCounter(Chars(), "chars")
    sel = Selection([doc], [{}], ["topic"], counter, 10_000, policy)
    sel.take_windows(windows, parts)
    assert set(sel.chosen[0]) == {0, 3, 4}


def _anthology() -> Document:
    """A fortune file of poems: one section, no headings, every entry alike."""
    poems = [f"《无题・其{k}》\n作者：诗人{k % 7}\n春风又绿江南岸，明月何时照我还。\n"
             f"山高水长第{k}回，云深不知处。" for k in range(80)]
    return _doc([("", poems)])


def test_a_question_about_the_first_or_last_entries_gets_them():
    """A collection's first poems share no word with the question ("which poems open the
    collection?"): the search ranks them no higher than the other 78, and a small budget
    showed none of them. Its opening (closing) windows go in as a part of the question."""
    doc = _anthology()
    first, last = ["《无题・其0》", "《无题・其1》"], ["《无题・其79》", "《无题・其78》"]
    for question, wanted, unwanted in (
            ("这本诗集最前面收的几首诗分别叫什么？", first, last[0]),
            ("Which poems close the collection?", last, first[0])):
        for p in (pack([doc], question, Chars(2600), max_new_tokens=100, embedder=None),
                  pack_turn([doc], question, Chars(2600), Conversation(), max_new_tokens=100,
                            embedder=None)):
            assert all(w in p.text for w in wanted), question
            assert unwanted not in p.text


def test_asks_position_reads_first_and_last_entries_not_other_firsts():
    assert asks_position("这本诗集最前面收的几首诗分别叫什么？") == "start"
    assert asks_position("Which entry comes first?") == "start"
    assert asks_position("What are the final three poems?") == "end"
    assert asks_position("最后几首是谁写的？") == "end"
    assert asks_position("How does the collection end?") == "end"
    for other in ("What is the first argument of \\foo?", "What is the last step?",
                  "如何把目录放在最前面？", "以分号结尾的命令有哪些？", "第一个参数是什么？"):
        assert asks_position(other) == "", other


def test_a_question_that_matches_nothing_still_gets_the_documents_opening():
    """No word of "Who wrote them?" is in a one-section collection too long to go in whole:
    nothing matched, and the prompt held no excerpt at all. The document's opening, as much
    as fits, is better than nothing to answer from."""
    doc = _anthology()
    for p in (pack([doc], "Who wrote them?", Chars(2600), max_new_tokens=100, embedder=None),
              pack_turn([doc], "Who wrote them?", Chars(2600), Conversation(),
                        max_new_tokens=100, embedder=None)):
        assert "《无题・其0》" in p.text and "作者：诗人0" in p.text


def test_a_partial_section_shows_its_block_by_meaning():
    """A long hit that does not go in whole shows its blocks with the question's words and,
    where the blocks' cosines are known, the block that means what the question asks (a
    paraphrase sharing no word with it): before, a block without a question word scored 0
    and never went in, however much room was left."""
    blocks = [f"The alpha gear is set with the crank, turn {k}. " + FILLER for k in range(2)]
    blocks += [FILLER * 2 for _ in range(10)]
    blocks[8] = "Shutting the machine down safely takes three minutes of cooling. " + FILLER
    doc = _doc([("1 Alpha gear", blocks), ("2 Other", [FILLER])])
    counter = TokenCounter(Chars(), "chars")
    cosines = [0.2] * 12
    cosines[8] = 0.7
    meaning = meaning_blocks([doc], {(doc_key(doc, 0), 0, 8, 8): 0.7,
                                     **{(doc_key(doc, 0), 0, k, k): 0.2
                                        for k in range(12) if k != 8}})
    assert meaning[0][0] == cosines

    def shown(meaning, policy=POLICY):
        picked = select([doc], [{0: 10.0}], ["alpha", "gear", "crank"], counter, 1200, (),
                        [(0, 0, 0, 0, 5.0)], policy, meaning=meaning)
        got = {p.section.index: p for p in picked[0]}
        return set(got[0].blocks or range(12))

    assert 8 in shown(meaning)
    assert {0, 1} <= shown(meaning)
    assert 8 not in shown(())  # no cosines known: words alone
    assert 8 not in shown(meaning, replace(POLICY, meaning_block_weight=0.0))


def test_with_meaning_leaves_blocks_at_or_below_the_median_alone():
    words = [3.0, 0.0, 1.0, 0.0]
    got = with_meaning(words, [0.1, 0.2, 0.3, 0.9], 1.0)
    assert got == pytest.approx([3.0, 0.0, 1.0 + 3.0 * 0.05 / 0.65, 3.0])
    assert with_meaning(words, None, 1.0) == words
    assert with_meaning(words, [0.5] * 4, 1.0) == words
    assert with_meaning([0.0, 0.0], [0.1, 0.9], 1.0) == [0.0, 1.0]


class _Cosines:
    """An embedder stand-in that reads everything and gives preset window cosines."""
    enabled = True
    companion = None
    model = type("Model", (), {"multilingual": True})()

    def __init__(self, windows: dict) -> None:
        self.windows = windows

    def reads(self, doc) -> bool:
        return True

    def reads_question(self, question: str) -> bool:
        return True

    def scores(self, question, documents, keys, kind="sections", **kw) -> dict:
        return dict(self.windows) if kind == "windows" else {}


def test_a_window_past_the_tenth_by_meaning_gains_its_cosine():
    """Dense passage scores join the window scores of the policy's passage_top best windows
    by meaning (50): the one ranked 15th by meaning now gains from its cosine (before, only
    the 10 best did, and a paraphrase's window ranked there stayed at its BM25 score)."""
    from docchat.context.relevance import relevance

    sections = [(f"{k} Part", [f"The gear number {k} is kept here. " + FILLER]) for k in range(30)]
    doc = _doc(sections)
    key = doc_key(doc, 0)
    stub = _Cosines({(key, k, 0, 0): 0.9 - 0.01 * k for k in range(30)})
    question = "Where is the gear of part fifteen?"
    target = (key, 14, 0, 0)
    words = relevance([doc], question).windows[target]

    def gain(**kw) -> float:
        return relevance([doc], question, embedder=stub, **kw).windows[target] - words

    assert gain(passage_top=10) == 0
    assert gain() > 0.3


def test_a_long_hit_shown_in_part_leaves_room_for_the_hits_after_it():
    """A hit too long to go in whole (a 60-paragraph option list that mentions the question's
    words everywhere) showed its best blocks in all the room left, and the short section
    ranked after it (the exit status) was left out, or got what slack was left. From
    policy.partial_from up it takes at most policy.partial_share of the budget on the first
    pass; what is left grows it."""
    options = [f"The option -{k} of the client sets the alpha gear of the server. " + FILLER
               for k in range(60)]
    status = ["It returns 3 when the alpha gear fails. " + FILLER] + [FILLER] * 3
    doc = _doc([("1 Options", options), ("2 Exit status", status)])
    counter = TokenCounter(Chars(), "chars")
    avail = max(POLICY.partial_from, 6000)

    def picked(policy=POLICY):
        got = select([doc], [{0: 10.0, 1: 6.0}], ["alpha", "gear"], counter, avail, (), (),
                     policy)
        return {p.section.index: p for p in got[0]}

    got = picked()
    assert 1 in got and got[1].complete and 0 in got and not got[0].complete
    assert sum(p.cost(counter) for p in got.values()) > 0.8 * avail  # the rest still used
    before = picked(replace(POLICY, partial_share=1.0))  # the slack's one block at most
    assert 1 not in before or not before[1].complete


def test_a_follow_ups_own_words_are_a_part_of_the_question_of_their_own():
    """A follow-up searched with its history (policy.own_aspect): the best window of its
    own words' query is an aspect of the question, taken right after the best window, so
    that the history's words do not crowd out what the question itself asks. A first
    question has no such part."""
    doc = titled_doc("tmux.pdf", [
        ("Clients and sessions", "Clients attach to sessions. Each session is named; sessions "
         "may be detached and attached again by clients."),
        ("Session options", "Options set per session: the status line, the base index."),
        ("Windows and panes", "A window may be linked to more than one session."),
        ("Buffers", "Paste buffers hold copied text.")])
    history = [Message("user", "How do clients and sessions work?"),
               Message("assistant", "Clients attach to sessions.")]
    question = "Can one window be linked twice?"
    rel = relevance([doc], question, history, embedder=None, own_aspect=1)
    best_own = max(rel.own_windows, key=rel.own_windows.get)
    assert rel.aspects == [{best_own: rel.own_windows[best_own]}]
    assert best_own[1] == 2  # "Windows and panes"
    assert relevance([doc], question, history, embedder=None, own_aspect=0).aspects == []
    assert relevance([doc], question, embedder=None, own_aspect=1).aspects == []


def test_a_section_in_the_window_in_part_grows_where_the_window_holds_an_unsent_match():
    """A follow-up's best window (its own words) that holds a block already sent grows the
    section under policy.grow_unsent where a block of it not sent yet has one of the
    question's words (a follow-up on one of wget's options found the best window in that
    option's section, whose first block an earlier turn had shown, and got nothing more of
    it); without such a block, or with the old rule, the window counts as covered."""
    doc = titled_doc("guide.pdf", [("Printing", "Print and screen versions differ.")],
                     extra=["Chapters open on a right-hand page when the option is on."])
    sent = [(0, 0, Passage(doc, doc.sections[0], (0,), 1))]
    window = [(0, 0, 0, 1, 1.0)]
    terms = index_terms("right-hand page option")
    grows, old = replace(POLICY, grow_unsent=True), replace(POLICY, grow_unsent=False)
    assert to_grow(sent, window, grows, terms) == {(0, 0)}
    assert to_grow(sent, window, grows, index_terms("colour screen")) == set()
    assert to_grow(sent, window, old, terms) == set()
    assert to_grow(sent, [(0, 0, 1, 1, 1.0)], old) == {(0, 0)}  # away from sent blocks
