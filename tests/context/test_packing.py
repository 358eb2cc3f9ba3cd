"""Packing: the window guarantee (real SmolLM2 tokenizer and tiny ones), whole fit, blocks
never cut, page markers, relevance, follow-ups (English and Chinese), fairness across
documents, history shortening before evidence is dropped, the outline."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docchat.backends import Message
from docchat.backends.echo import EchoBackend
from docchat.context import packing, prompts
from docchat.context.packing import PackedContext, pack, split_history
from docchat.context.policy import POLICY
from docchat.context.retrieval import SectionIndex
from docchat.errors import ContextTooLong
from ingest.document import Block, Document, Page, Section

FILLER = ("The system keeps its records in plain files that the administrator can read "
          "and change with any editor, and every change is written to the log. ")
ZH_FILLER = "系统把记录保存在普通文件中，管理员可以用任何编辑器阅读和修改，每次修改都会写入日志。"


class CharBackend:
    """A tiny tokenizer: one token per character; chat framing of 5 tokens a message."""
    name = "chars"
    model = "chars"

    def __init__(self, context_window: int) -> None:
        self.context_window = context_window

    def count_tokens(self, text: str) -> int:
        return len(text)

    def count_prompt_tokens(self, messages) -> int:
        return sum(len(m.content) + 5 for m in messages) + 3


@pytest.fixture(scope="module")
def smollm():
    """The default backend's real tokenizer and chat template, without loading weights."""
    import inspect

    import llama_cpp

    from docchat.backends.llamacpp import LlamaCppBackend, bundled_model_path

    llama = llama_cpp.Llama(model_path=str(bundled_model_path()), vocab_only=True, verbose=False)
    # Weights are not loaded: no prefill-rate probe where the backend makes one.
    params = inspect.signature(LlamaCppBackend).parameters
    return LlamaCppBackend(llama=llama, **({"probe_tokens": 0} if "probe_tokens" in params else {}))


def section(i, path, blocks, level=None):
    blocks = tuple(Block(k, t, p) for k, t, p in blocks)
    return Section(index=i, heading_path=tuple(path), level=level or len(path),
                   page_start=blocks[0].page, page_end=blocks[-1].page, kind="prose",
                   blocks=blocks)


def document(name, sections, pages=None, language="en", labels=None):
    n = pages or max(b.page for s in sections for b in s.blocks)
    labels = labels or {}
    return Document(path=name, sha256=name, name=name, kind="pdf", language=language,
                    pages=[Page(k, "", labels.get(k)) for k in range(1, n + 1)],
                    sections=sections)


def manual(name="manual.pdf", chapters=12, per=6):
    """A long English manual: chapters of sections, two pages each, with code and tables."""
    secs, page = [], 1
    topics = ["mirror", "kernel", "printer", "firewall", "locale", "backup", "cron", "sound",
              "swap", "proxy", "fonts", "quota"]
    for c in range(chapters):
        for k in range(per):
            i = len(secs)
            t = topics[(c + k) % len(topics)]
            blocks = [("prose", f"S{i}a: the {t} settings. " + FILLER * 3 + f"S{i}a.", page),
                      ("code", f"# S{i}b\n$ configure-{t} --level {i}\n$ systemctl restart "
                               f"{t}{i}  # S{i}b.", page),
                      ("prose", f"S{i}c: " + FILLER * 2 + f"End of section {i}. S{i}c.", page + 1),
                      ("table", f"S{i}d | value\n{t}_{i} | on\nretries | {i} S{i}d.", page + 1)]
            secs.append(section(i, (f"{c + 1} Chapter on {topics[c % 12]}",
                                    f"{c + 1}.{k + 1} The {t} setup {i}"), blocks))
            page += 2
    return document(name, secs)


def frob_doc():
    secs = [section(0, ("1 Introduction",), [("prose", FILLER * 4, 1)]),
            section(1, ("2 The frobnicator",), [
                ("prose", FILLER * 2, 2),
                ("prose", "The frobnicator function takes two arguments. The first argument "
                          "names the widget to frobnicate.", 2),
                ("prose", "The second argument sets the wobble factor, a number from 0 to 9.", 2),
            ]),
            section(2, ("3 The quuxifier",), [
                ("prose", FILLER * 2, 3),
                ("prose", "The quuxifier takes two arguments too: its second argument is "
                          "the retry count, and the second argument defaults to 3.", 3)]),
            section(3, ("4 Logging",), [("prose", FILLER * 6, 4)])]
    return document("frob.pdf", secs)


def zh_doc():
    secs = [section(0, ("第一章 简介",), [("prose", ZH_FILLER * 6, 1)]),
            section(1, ("第二章 数据备份",), [
                ("prose", "备份数据有三种方法。第一种方法是用 rsync 把文件复制到另一台机器。", 2),
                ("prose", "第二种方法是用 tar 打包整个目录，再压缩保存到移动硬盘。", 2),
                ("prose", "第三种方法是使用快照。", 3),
            ]),
            section(2, ("第三章 网络",), [("prose", ZH_FILLER * 6 + "网络接口在这里配置。", 4)]),
            section(3, ("第四章 声音",), [("prose", ZH_FILLER * 8, 5)])]
    return document("zh.pdf", secs, language="zh")


def check_fits(p: PackedContext, backend, max_new: int, window: int) -> None:
    assert backend.count_prompt_tokens(p.messages) == p.tokens
    assert p.tokens + max_new <= window


def all_blocks(docs):
    return [b for d in docs for s in d.sections for b in s.blocks]


# --- the window guarantee ------------------------------------------------------------


@pytest.mark.parametrize("window", [700, 1500, 4096, 16384])
def test_exact_window_with_smollm_tokenizer(smollm, window):
    docs = [manual(), zh_doc()]
    history = [Message("user", "Where is the mirror configured?"),
               Message("assistant", "In section 3 [p. 5]. " + FILLER * 3)]
    p = pack(docs, "How do I set the mirror and restart the kernel service?", smollm,
             history=history, max_new_tokens=200, context_window=window)
    check_fits(p, smollm, 200, window)
    assert p.tokenizer == "llamacpp:SmolLM2-135M-Instruct.Q4_1.gguf"
    if not p.whole:
        assert p.tokens >= 0.8 * (window - 200)  # the budget is used, not wasted


@pytest.mark.parametrize("window", [800, 1300, 2500, 9000, 40000])
def test_exact_window_with_char_tokenizer(window):
    b = CharBackend(window)
    p = pack([manual(), zh_doc()], "备份 mirror firewall?", b, max_new_tokens=100)
    check_fits(p, b, 100, window)
    assert p.tokens >= 0.8 * (window - 100) or p.whole


@settings(max_examples=40, deadline=None)
@given(window=st.integers(200, 6000), max_new=st.integers(0, 200), turns=st.integers(0, 6))
def test_window_guarantee_property(window, max_new, turns):
    b = EchoBackend(context_window=window)
    history = []
    for k in range(turns):
        history += [Message("user", f"question {k} about the printer? " * 3),
                    Message("assistant", f"answer {k} " + FILLER)]
    question = "printer setup"
    try:
        p = pack([manual(chapters=4)], question, b, history=history, max_new_tokens=max_new)
    except ContextTooLong:
        bare = pack([], question, EchoBackend(context_window=10**6), max_new_tokens=0)
        assert bare.tokens + max_new > window  # only when the question alone cannot fit
        return
    check_fits(p, b, max_new, window)


def test_question_too_long_raises():
    with pytest.raises(ContextTooLong, match="shorten it"):
        pack([frob_doc()], "word " * 500, CharBackend(300), max_new_tokens=10)


# --- whole fit, blocks, markers ------------------------------------------------------


def test_everything_fits_in_order():
    doc = manual(chapters=2, per=3)
    p = pack([doc], "kernel?", CharBackend(100_000), max_new_tokens=100)
    assert p.whole and p.dropped.sections == 0
    assert p.sections == [("manual.pdf", s.index) for s in doc.sections]
    positions = [p.text.index(b.text) for b in all_blocks([doc])]
    assert positions == sorted(positions)
    assert "[…]" not in p.text.split("## Document excerpts")[1]


@pytest.mark.parametrize("window", range(1200, 6000, 400))
def test_blocks_never_cut(window):
    docs = [manual(chapters=3)]
    p = pack(docs, "How do I restart the firewall?", CharBackend(window), max_new_tokens=50)
    kept = 0
    for b in all_blocks(docs):
        tag = b.text.split()[0].strip(":") if b.kind != "code" else b.text.split()[1]
        if re.search(rf"\b{tag}\b", p.text):  # any part of the block is in ...
            assert b.text in p.text, f"block cut: {tag}"  # ... then all of it
            kept += 1
    assert kept >= 2


def test_page_markers_where_the_page_changes():
    doc = frob_doc()
    doc.sections[1] = section(1, ("2 The frobnicator",), [
        ("prose", "The frobnicator takes two arguments.", 2),
        ("code", "frob(widget, wobble)", 2), ("prose", "The wobble is a number.", 3)])
    doc = document("frob.pdf", doc.sections, labels={2: "xii", 3: "xiii"})
    p = pack([doc], "frobnicator wobble", CharBackend(100_000), max_new_tokens=10)
    text = p.text.split("## Document excerpts")[1]
    assert "#### 2 The frobnicator [p. xii]" in text
    assert text.index("frob(widget, wobble)") < text.index("[p. xiii]") < text.index(
        "The wobble is a number.")
    assert ("frob.pdf", 2) in p.pages and ("frob.pdf", 3) in p.pages
    assert "[p. 1]" in text and "[p. 4]" in text  # unlabelled pages keep their number


def test_partial_section_keeps_most_relevant_blocks_whole():
    blocks = [("prose", FILLER * 3, 1 + k // 3) for k in range(30)]
    blocks[17] = ("code", "def quux_handler(x):\n    return x * 2", 6)
    blocks[25] = ("table", "quux | limit\nalpha | 3", 9)
    big = section(0, ("1 Everything",), blocks)
    doc = document("big.pdf", [big, section(1, ("2 Other",), [("prose", FILLER, 11)])])
    p = pack([doc], "What does quux_handler return and what is the quux limit?",
             CharBackend(2000), max_new_tokens=50)
    assert "def quux_handler(x):\n    return x * 2" in p.text
    assert "quux | limit\nalpha | 3" in p.text
    assert p.dropped.partial_sections == 1 and "[…]" in p.text
    assert ("big.pdf", 6) in p.pages and ("big.pdf", 9) in p.pages


# --- relevance, follow-ups, languages --------------------------------------------------


def test_relevant_section_then_neighbours():
    doc = manual()
    target = next(s for s in doc.sections if "setup 40" in s.title)
    # Neighbours rank at NEIGHBOUR times their hit's score: after the stronger hits.
    p = pack([doc], f"What does configure-{target.title.split()[2]} --level 40 do?",
             CharBackend(10000), max_new_tokens=50)
    got = [i for _, i in p.sections]
    assert 40 in got and (39 in got or 41 in got)
    assert not p.whole and p.dropped.sections > 0


def test_follow_up_question_uses_the_previous_turn():
    docs = [frob_doc()]
    history = [Message("user", "What does the frobnicator function take?"),
               Message("assistant", "Two arguments [p. 2].")]
    b = CharBackend(1200)
    p = pack(docs, "And its second argument?", b, history=history, max_new_tokens=50)
    assert "wobble factor" in p.text and "retry count" not in p.text
    alone = pack(docs, "And its second argument?", b, max_new_tokens=50)
    assert "retry count" in alone.text  # the question alone points elsewhere


def test_chinese_follow_up_and_chinese_prompt():
    doc = zh_doc()
    history = [Message("user", "备份数据有哪些方法？"), Message("assistant", "有三种方法 [p. 2]。")]
    p = pack([doc], "那第二种方法呢？", CharBackend(450), history=history, max_new_tokens=50)
    assert "第二种方法是用 tar 打包整个目录" in p.text
    assert p.language == "zh" and "请用中文回答" in p.messages[0].content
    assert not p.whole


def test_chinese_question_about_english_document():
    net = section(1, ("2 Network interface configuration",), [
        ("prose", "Edit /etc/network/interfaces to configure each network interface.", 2)])
    doc = document("en.pdf", [section(0, ("1 Introduction",), [("prose", FILLER * 5, 1)]),
                              net, section(2, ("3 Sound",), [("prose", FILLER * 5, 3)]),
                              section(3, ("4 Printing",), [("prose", FILLER * 5, 4)])])
    p = pack([doc], "如何配置网络接口？", CharBackend(900), max_new_tokens=50)
    assert "/etc/network/interfaces" in p.text and p.language == "zh"


def test_store_search_and_memory_search_pack_the_same(store):
    docs = [manual(), zh_doc()]
    ids = [store.save_document(d) for d in docs]
    loaded = [store.load_document(i) for i in ids]
    b = CharBackend(3000)
    q = "How do I restart the printer and where is 数据备份?"
    via_store = pack(loaded, q, b, max_new_tokens=50,
                     search=lambda text: store.search_sections(text, ids))
    via_memory = pack(loaded, q, b, max_new_tokens=50)
    assert via_store.sections == via_memory.sections
    assert via_store.text == via_memory.text


# --- several documents, history, outline -----------------------------------------------


def test_documents_share_the_budget_fairly():
    a, z = manual("a.pdf"), zh_doc()
    b = CharBackend(5000)
    p = pack([a, z], "firewall kernel mirror printer 网络", b, max_new_tokens=50)
    per_doc = {name: sum(1 for d, _ in p.sections if d == name) for name in ("a.pdf", "zh.pdf")}
    assert per_doc["a.pdf"] > 0 and per_doc["zh.pdf"] > 0
    # The weakly relevant document still gets its floor share.
    zh_chars = sum(len(s.text) for s in z.sections if ("zh.pdf", s.index) in p.sections)
    assert zh_chars >= 0.15 * 5000


def test_history_split_keeps_last_turns_whole():
    hist = [Message("user" if k % 2 == 0 else "assistant", f"m{k}") for k in range(10)]
    h = split_history(hist, 3)
    assert [m.content for m in h.recent] == [f"m{k}" for k in range(4, 10)]
    assert [m.content for m in h.older] == [f"m{k}" for k in range(4)]


def test_older_turns_are_shortened_before_evidence_is_dropped():
    doc = frob_doc()
    older = [Message("user", "Tell me everything about logging and storage. " + FILLER * 6),
             Message("assistant", "Logging writes files. " + FILLER * 10 + " THE END.")]
    recent = [Message("user", f"recent question {k}? " + FILLER) if k % 2 == 0 else
              Message("assistant", f"recent answer {k}. " + FILLER) for k in range(6)]
    history = older + recent
    doc_chars = sum(len(s.text) for s in doc.sections)
    window = doc_chars + sum(len(m.content) for m in recent) + 1600
    b = CharBackend(window)
    p = pack([doc], "frobnicator?", b, history=history, max_new_tokens=50)
    assert p.whole  # all evidence kept ...
    assert p.dropped.turns_shortened == 2  # ... because the older turns were cut
    contents = [m.content for m in p.messages[1:-1]]
    assert contents[-6:] == [m.content for m in recent]  # the last three turns whole
    assert contents[0].startswith("…") and contents[0].rstrip().endswith("written to the log.")
    assert contents[1].startswith("Logging writes files.") and contents[1].endswith("THE END.")
    # With room for everything, nothing is shortened.
    roomy = pack([doc], "frobnicator?", CharBackend(window * 3), history=history)
    assert roomy.dropped.turns_shortened == 0
    assert [m.content for m in roomy.messages[1:-1]] == [m.content for m in history]


def test_outline_always_present_and_compressed_top_levels_first():
    doc = manual(chapters=12, per=6)
    p = pack([doc], "kernel", CharBackend(3000), max_new_tokens=50)
    outline = p.text.split("## Document excerpts")[0]
    for c in range(12):
        assert re.search(rf"^{c + 1} Chapter on \w+ \[p\. \d+\]$", outline, re.M)
    assert "  1.1 The mirror setup 0" not in outline  # level 2 dropped first
    assert p.dropped.outline_entries > 0
    roomy = pack([doc], "kernel", CharBackend(200_000), max_new_tokens=50)
    assert "  1.1 The mirror setup 0 [p. 1]" in roomy.text


def test_in_memory_index_matches_the_store_ranking(store):
    docs = [manual(), zh_doc()]
    ids = [store.save_document(d) for d in docs]
    loaded = [store.load_document(i) for i in ids]
    index = SectionIndex(loaded)
    for q in ["printer restart", "数据 备份 方法", "configure-kernel level 7 retries"]:
        mine = [(h.doc_id, h.section) for h in index.search(q, limit=10)]
        theirs = [(h.doc_id, h.section) for h in store.search_sections(q, ids, limit=10)]
        assert mine[:5] == theirs[:5], q


def test_outline_targets_the_chapter_asked_about_with_its_whole_sub_outline():
    """The full outline does not fit: the chapter the question is about (scored on its
    headings and its sections' text) comes with every heading under it and their pages,
    while the outline at the top stays the same for every question (the warm prefix)."""
    doc = manual(chapters=12, per=6)
    p = pack([doc], "Which chapter covers disk quotas, and what are its sections?",
             CharBackend(4000), max_new_tokens=50)
    assert p.dropped.outline_entries > 0
    focus = p.text.split("## Outline of the part asked about")[1]
    assert "12 Chapter on quota [p. 133]" in focus
    for k in range(6):
        assert re.search(rf"^  12\.{k + 1} The \w+ setup {66 + k} \[p\. {133 + 2 * k}\]$",
                         focus, re.M)
    assert "Chapter on kernel" not in focus
    other = pack([doc], "kernel", CharBackend(4000), max_new_tokens=50)
    top = p.text.split("## Document excerpts")[0]
    assert top == other.text.split("## Document excerpts")[0]
    # Found by the sections' own text too, not only by the heading titles.
    body = pack([doc], "S70a S70c S70d", CharBackend(4000), max_new_tokens=50)
    assert "12 Chapter on quota" in body.text.split("## Outline of the part asked about")[1]


# --- prompt layout for KV-cache reuse -------------------------------------------------------


def test_layout_puts_what_stays_the_same_first():
    """[system(system prompt, outline, excerpts), *history, user(question)]."""
    docs = [manual(chapters=3, per=3)]
    history = [Message("user", "How is the kernel set up?"),
               Message("assistant", "With configure-kernel [p. 3].")]
    p = pack(docs, "And the printer?", CharBackend(3000), history=history, max_new_tokens=50)
    roles = [m.role for m in p.messages]
    assert roles == ["system", "user", "assistant", "user"]
    system = p.messages[0].content
    assert system.startswith(prompts.system_prompt("en"))
    assert system.index("## Outline of the documents") < system.index("## Document excerpts")
    assert p.messages[-1].content == "And the printer?"
    assert p.text in system


@pytest.mark.parametrize("window", [1500, 2500, 9000, 200_000])
@pytest.mark.parametrize("question", ["How do I restart the printer?", "备份数据有哪些方法？"])
def test_prefix_messages_is_the_start_of_the_packed_prompt(window, question):
    docs = [manual(), zh_doc()]
    b = CharBackend(window)
    lang = prompts.question_language(question)
    prefix = packing.prefix_messages(docs, b, lang, max_new_tokens=50)
    assert [m.role for m in prefix] == ["system"]
    assert f"## {prompts.label(lang, 'outline')}" in prefix[0].content
    for q in (question, question + (" 日志呢？" if lang == "zh" else " And the logs?")):
        p = pack(docs, q, b, max_new_tokens=50)
        assert p.messages[0].content.startswith(prefix[0].content)
    # The same holds when the caller narrows the window (the first-token budget).
    narrow = packing.prefix_messages(docs, b, lang, context_window=window // 2,
                                     max_new_tokens=50)
    p = pack(docs, question, b, max_new_tokens=50, context_window=window // 2)
    assert p.messages[0].content.startswith(narrow[0].content)


def test_prefix_messages_with_the_real_tokenizer(smollm):
    docs = [manual()]
    prefix = packing.prefix_messages(docs, smollm, "en", context_window=4096)
    p = pack(docs, "How is the firewall configured?", smollm, context_window=4096)
    assert p.messages[0].content.startswith(prefix[0].content)
    # Token level: the formatted prefix is (almost all of) the packed prompt's start.
    a, b = smollm.prompt_tokens(prefix), smollm.prompt_tokens(p.messages)
    shared = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), len(a))
    assert shared >= len(a) - 8


def test_follow_up_keeps_the_previous_sections_first_in_their_order():
    docs = [manual()]
    b = CharBackend(6000)
    first = pack(docs, "How do I configure the printer?", b, max_new_tokens=50)
    assert first.sections
    history = [Message("user", "How do I configure the printer?"),
               Message("assistant", "With configure-printer [p. 5].")]
    shuffled = list(reversed(first.sections))  # the order the previous prompt had
    follow = pack(docs, "And how many retries does it make?", b, history=history,
                  max_new_tokens=50, previous_sections=shuffled)
    # Partial sections (their blocks follow the question) come last.
    head = follow.sections[:len(follow.sections) - follow.dropped.partial_sections]
    kept = [s for s in shuffled if s in head]
    assert kept and head[:len(kept)] == kept
    new = head[len(kept):]
    assert new == sorted(new)  # new sections in document order after the kept ones
    # Without previous_sections, whole sections are in document order.
    plain = pack(docs, "And how many retries does it make?", b, history=history,
                 max_new_tokens=50)
    whole = plain.sections[:len(plain.sections) - plain.dropped.partial_sections]
    assert whole == sorted(whole)


def test_follow_up_prompt_starts_with_the_previous_prompt():
    """Where the previous sections are all chosen again, the new system message begins
    with the previous one's outline and excerpts: a backend reuses that prefix."""
    docs = [manual()]
    b = CharBackend(6000)
    q1 = "How do I configure the printer?"
    # BM25 alone: on this generated manual every body is the same filler, which makes dense
    # scores noise (dense scores are tested in test_embeddings.py).
    first = pack(docs, q1, b, max_new_tokens=50, embedder=None)
    history = [Message("user", q1), Message("assistant", "With configure-printer [p. 5].")]
    follow = pack(docs, "And the printer retries?", b, history=history, max_new_tokens=50,
                  previous_sections=first.sections, embedder=None)
    # The first passages they share (same section, same blocks), in the same order.
    n = next((k for k, (x, y) in enumerate(zip(first.passages, follow.passages)) if x != y),
             len(first.passages))
    assert n >= 3
    a, b = first.messages[0].content, follow.messages[0].content
    shared = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    # Everything up to the first passage they do not share is the same text.
    by_index = {s.index: s for s in docs[0].sections}
    end = a.index("#### " + by_index[first.passages[n][1]].heading) if n < len(
        first.passages) else len(a)
    assert shared >= end - 2


def test_question_about_one_section_packs_that_section_whole(monkeypatch):
    """Start, middle and end of the part asked about (five subsections, only the first
    and last using the question's words), not only its best-matching sections and their
    neighbours."""
    secs = [section(0, ("1 Introduction",), [("prose", FILLER * 3, 1)])]
    for k in range(8):
        secs.append(section(len(secs), (f"{k + 2} Notes {k}",), [
            ("prose", (f"Note {k} on backup. " if k < 2 else f"Note {k}. ") + FILLER, k + 2)]))
    steps = ["START: tar and rsync make a backup; the backup is a copy of the files. ",
             "Step two: choose the disk. ", "MIDDLE: cron runs the job every night. ",
             "Step four: label the disk. ",
             "END: to restore a backup, copy the backup files back. "]
    for j, text in enumerate(steps):
        secs.append(section(len(secs), ("10 Keeping copies", f"10.{j + 1} Step {j + 1}"),
                            [("prose", text + FILLER * 2, 11 + len(secs))]))
    secs.append(section(len(secs), ("11 Sound",), [("prose", FILLER * 6, 30)]))
    doc = document("b.pdf", secs)
    q = "Explain the whole backup procedure from start to end."
    # BM25 alone: the generated bodies are the same filler (dense scores would be noise).
    p = pack([doc], q, CharBackend(4800), max_new_tokens=50, embedder=None)
    assert not p.whole
    assert all(x in p.text for x in ("START:", "MIDDLE:", "END:"))
    assert [("b.pdf", i) for i in range(9, 14)] == [s for s in p.sections if 9 <= s[1] < 14]
    assert p.text.index("START:") < p.text.index("MIDDLE:") < p.text.index("END:")
    # Without whole parts (nor their spread), the best sections and their neighbours miss
    # the middle.
    hits = pack([doc], q, CharBackend(4800), max_new_tokens=50, embedder=None,
                policy=replace(POLICY, span_share=0.0, spread_share=0.0))
    assert "MIDDLE:" not in hits.text


def test_follow_up_on_a_large_budget_keeps_the_previous_start_for_reuse():
    """From REUSE_MIN tokens of evidence budget, the previous prompt's first sections stay
    first as they were (up to REUSE_SHARE of the budget), even when the follow-up's own
    best sections are elsewhere; the new ones follow."""

    docs = [manual(chapters=20, per=6)]
    b = CharBackend(16000)
    q1 = "How do I configure the printer?"
    first = pack(docs, q1, b, max_new_tokens=50)
    history = [Message("user", q1), Message("assistant", "With configure-printer [p. 5].")]
    follow = pack(docs, "And the sound card?", b, history=history, max_new_tokens=50,
                  previous_sections=first.sections)
    n = next((k for k, (x, y) in enumerate(zip(first.sections, follow.sections)) if x != y),
             len(first.sections))
    assert n >= 2
    a, c = first.messages[0].content, follow.messages[0].content
    shared = next((k for k, (x, y) in enumerate(zip(a, c)) if x != y), min(len(a), len(c)))
    assert shared > len(packing.prefix_messages(docs, b, "en", max_new_tokens=50)[0].content)
    assert any("sound" in docs[0].sections[i].text for _, i in follow.sections[n:])
    check_fits(follow, b, 50, 16000)


def _excerpts_prefix(packed):
    """The system message up to the end of its excerpts (before the focus outline)."""
    system = packed.messages[0].content
    cut = system.find("\n\n## " + prompts.label(packed.language, "focus"))
    return system if cut < 0 else system[:cut]


def test_follow_up_at_a_small_budget_keeps_the_previous_excerpts_as_a_text_prefix():
    doc = manual()
    backend = CharBackend(1500 + 50)
    first = pack([doc], "How do I restart the firewall service?", backend, max_new_tokens=50,
                 embedder=None)
    assert any(b is not None for _, _, b in first.passages)  # partial sections at 1,500
    history = [Message("user", "How do I restart the firewall service?"),
               Message("assistant", "Run systemctl restart firewall.")]
    follow = pack([doc], "And its retries?", CharBackend(1500 + 50 + 900), max_new_tokens=50,
                  history=history, embedder=None, previous_passages=first.passages,
                  carry_allowance=900, outline_window=1500 + 50)
    assert follow.messages[0].content.startswith(_excerpts_prefix(first))
    assert follow.passages[: len(first.passages)] == first.passages
    assert follow.carried == len(first.passages)
    assert len(follow.passages) > len(first.passages)  # new passages after the kept ones
    assert follow.tokens + 50 <= 1500 + 50 + 900


def test_topic_change_does_not_keep_the_previous_excerpts():
    doc = manual()
    first = pack([doc], "How do I restart the firewall service?", CharBackend(1550),
                 max_new_tokens=50, embedder=None)
    other = pack([doc], "Which fonts and quota limits does the printer spool use?",
                 CharBackend(1550 + 900), max_new_tokens=50, embedder=None,
                 previous_passages=first.passages, carry_allowance=900, outline_window=1550)
    assert other.carried == 0
    assert other.tokens + 50 <= 1550  # the allowance is taken off again
    assert not other.messages[0].content.startswith(_excerpts_prefix(first))
    assert other.passages[0] not in first.passages


# --- precision first at small budgets; the part named by its title ---------------------------


def test_small_budget_takes_the_answering_paragraph_of_a_long_section_first():
    """The answer is one paragraph deep inside a long section on other topics, whose whole
    section ranks below short ones: at a 1k budget its window still goes in (precision
    first), and the prompt holds several sections' best passages, not one section whole."""
    noise = [f"The {t} options are set in the {t} file, and the {t} daemon reads them. "
             + FILLER for t in ("printer", "network", "backup", "font", "sound", "cron")]
    answer = ("A singular matrix message means that fit cannot invert the matrix: "
              "try other starting values.")
    secs = [section(0, ("1 Tips",), [("prose", t, 1) for t in noise * 2 + [answer] + noise])]
    # Short sections whose headings carry the question's words outrank it as sections.
    titles = ["Fit", "Fit options", "Matrix", "Matrix messages", "Messages", "Singular values",
              "Fit messages", "Matrix fit", "Fit matrix", "Singular fit", "Message fit",
              "Singular messages"]
    for k, title in enumerate(titles):
        secs.append(section(1 + k, (f"{2 + k} {title}",), [("prose", FILLER, 2 + k)] * 3))
    secs += [section(13 + k, (f"{14 + k} Chapter {k}",), [("prose", FILLER * 4, 14 + k)])
             for k in range(10)]
    doc = document("m.pdf", secs)
    p = pack([doc], "What does a singular matrix message from fit mean?", CharBackend(1500),
             max_new_tokens=50, embedder=None)
    assert answer in p.text
    assert not p.whole and len(p.sections) >= 2


def data_manual():
    """A chapter named "Data management" whose hits concentrate in one of its parts."""
    def s(i, path, text, page):
        return section(i, path, [("prose", text + " " + FILLER, page)])
    ch = "10 Data management"
    secs = [s(0, ("1 Introduction",), "About this manual.", 1)]
    secs += [s(1 + k, (f"{2 + k} Topic {k}", f"{2 + k}.1 Part {k}"), FILLER, 2 + k)
             for k in range(8)]
    secs += [s(9, (ch,), "This chapter is about data.", 11),
             s(10, (ch, "10.1 Sharing and archiving"), "Copy files with tar.", 12),
             s(11, (ch, "10.2 Backup and recovery"), "Backup data management policy.", 13),
             s(12, (ch, "10.2 Backup and recovery", "10.2.1 Backup policy"),
               "Data backup policy: data data management.", 14),
             s(13, (ch, "10.2 Backup and recovery", "10.2.2 Backup suites"),
               "Backup suites keep data; data management tools.", 15),
             s(14, (ch, "10.3 Source code merge tools"), "diff and patch.", 16),
             s(15, (ch, "10.4 Git"), "Git keeps history.", 17),
             s(16, ("11 Conversion",), "Text conversion tools.", 18)]
    return document("d.pdf", secs)


def test_focus_outline_takes_the_chapter_the_question_names_by_title():
    doc = data_manual()
    b = CharBackend(2200)
    named = pack([doc], "What sections does the data management chapter have?", b,
                 max_new_tokens=50, embedder=None)
    focus = named.text.split("## Outline of the part asked about")[1]
    assert "10 Data management" in focus
    for title in ("10.1 Sharing and archiving", "10.3 Source code merge tools", "10.4 Git"):
        assert title in focus
    # Without the title named, the smallest part holding the hits is chosen (as before),
    # where the whole outline does not fit the share a question about structure gets ...
    from dataclasses import replace
    question = "Which part explains backup policy and suites for data?"
    unnamed = pack([doc], question, b, max_new_tokens=50, embedder=None,
                   policy=replace(packing.POLICY, structure_focus_share=0.2))
    focus = unnamed.text.split("## Outline of the part asked about")[1]
    assert "10.2 Backup and recovery" in focus and "10.4 Git" not in focus
    # ... and where it fits (half the budget by default), the whole outline: no part to guess.
    whole = pack([doc], question, b, max_new_tokens=50, embedder=None)
    focus = whole.text.split("## Outline of the part asked about")[1]
    assert all(e.line.strip() in focus for e in packing.entries_of(doc))


def test_named_part_needs_every_title_word():
    from docchat.context.outline import named_part, title_terms
    from docchat.context.retrieval import index_terms
    doc = data_manual()
    assert title_terms("10.2 Backup and recovery") == {"backup", "recoveri"}
    rel = [{11: 1.0, 12: 1.0}]
    entries = packing.entries_of(doc)
    found = named_part([doc], rel, set(index_terms("the data management chapter")))
    assert found is not None and entries[found[1]].line.startswith("10 Data management")
    # "data" alone names no heading here ("Data management" needs both words).
    assert named_part([doc], rel, set(index_terms("data files"))) is None


# --- the budget arithmetic -------------------------------------------------------------------


def test_evidence_budget_books_what_takes_the_window():
    from docchat.context.packing import EvidenceBudget
    room = EvidenceBudget(limit=2000, fixed=300)
    assert room.avail == 1700
    room.take("outline", 200)
    room.take("headers", 30)
    room.take("outline", 4)
    assert room.spent == {"outline": 204, "headers": 30} and room.avail == 1466
    room.keep_slack()  # 1% of what is left, at least POLICY.slack_min
    assert room.spent["slack"] == 14 and room.avail == 1452
    assert room.share(POLICY.older_share) == 145 and room.share(0.5) == 726
    small = EvidenceBudget(limit=300, fixed=290)
    small.keep_slack()
    assert small.spent["slack"] == POLICY.slack_min and small.avail == 2
    assert EvidenceBudget(limit=100, fixed=200).share(0.5) == 0  # never negative


def test_pack_spends_the_budget_it_books():
    """Excerpts fill what the booked budget leaves: the final prompt is within the limit
    and uses most of it."""
    doc = manual()
    b = CharBackend(3000)
    p = pack([doc], "How is the firewall configured?", b, max_new_tokens=50, embedder=None)
    check_fits(p, b, 50, 3000)
    assert p.tokens >= 0.9 * (3000 - 50)


def test_follow_up_whose_answer_is_in_blocks_a_kept_excerpt_left_out_packs_it_anew():
    """The previous prompt kept two blocks of a long section; the follow-up's best passage
    is another block of it. The kept prefix ends before that section, which is packed again
    with the block the follow-up needs."""
    intro = section(0, ("1 Overview",), [("prose", FILLER * 2, 1)])
    blocks = ([("prose", "The clean target removes every file the build made. " + FILLER, 2)]
              + [("prose", FILLER * 2, 2 + k // 3) for k in range(12)]
              + [("prose", "Build-arch compiles only the architecture-dependent parts: "
                           "configure and compile, nothing installed.", 7)])
    rules = section(1, ("2 The rules file",), blocks)
    other = [section(2 + k, (f"{3 + k} Topic {k}",), [("prose", FILLER, 8 + k)])
             for k in range(20)]
    doc = document("rules.pdf", [intro, rules, *other])
    b = CharBackend(1400)
    first = pack([doc], "What must the clean target do?", b, max_new_tokens=50, embedder=None)
    kept = dict(((i, blk) for _, i, blk in first.passages))
    assert kept.get(1) is not None and len(blocks) - 1 not in kept[1]  # partial, answer out
    history = [Message("user", "What must the clean target do?"),
               Message("assistant", "Remove what the build made.")]
    follow = pack([doc], "And the build-arch target?", CharBackend(1400 + 300),
                  max_new_tokens=50, history=history, embedder=None,
                  previous_passages=first.passages, carry_allowance=300, outline_window=1400)
    assert "architecture-dependent" in follow.text
    assert follow.carried < len(first.passages)
    check_fits(follow, CharBackend(1700), 50, 1700)
    # The allowance was for reusing the cut-off excerpt: it comes off, so the follow-up
    # reads no more new tokens than it was given (the first question's budget here).
    assert follow.tokens + 50 <= 1700 - 200  # the cut-off excerpt cost over 200 tokens


def test_topic_change_after_long_answers_fits_the_first_question_budget():
    """The app's failure: a follow-up window (reused prefix + allowance) let two long recent
    answers fit; the question changed topic, the allowance came off, and the prompt no
    longer fitted ("needs 1301 of the 512 tokens"). The recent turns are now sized for the
    budget that applies: shortened or dropped, and the question is answered."""
    doc = manual()
    first = pack([doc], "How do I restart the firewall service?", CharBackend(1550),
                 max_new_tokens=50, embedder=None)
    long_answer = "Run systemctl restart firewall and check the log. " * 20  # ~1,000 chars
    history = [Message("user", "How do I restart the firewall service?"),
               Message("assistant", long_answer),
               Message("user", "And its retries?"),
               Message("assistant", long_answer)]
    question = "Which fonts and quota limits does the printer spool use?"
    other = pack([doc], question, CharBackend(1550 + 1200), max_new_tokens=50,
                 history=history, embedder=None, previous_passages=first.passages,
                 carry_allowance=1200, outline_window=1550)
    assert other.carried == 0
    assert other.tokens + 50 <= 1550
    assert other.messages[-1].content == question


def test_whole_excerpts_come_best_first_so_a_follow_up_keeps_what_mattered():
    """The excerpts are in order of choice, the best first, not in document order: a
    follow-up keeps a start of them as its reused prefix, and what a prefix that does not
    fit cuts off should be what mattered least. (In document order a follow-up at 8k lost
    the section both questions were about, at the end of the previous excerpts.)"""
    secs = [section(i, (f"{i + 1} Part {i}",), [("prose", f"P{i}: " + FILLER * 3, i + 1)])
            for i in range(8)]
    secs[1] = section(1, ("2 Printing",), [
        ("prose", "P1: to pause the printer queue, see below. " + FILLER * 3, 2)])
    secs[6] = section(6, ("7 Printer queue",), [
        ("prose", "P6: the printer queue, how to pause the printer queue and resume the "
                  "printer queue. " + FILLER * 3, 7)])
    doc = document("guide.pdf", secs)
    p = pack([doc], "How do I pause the printer queue?", CharBackend(3200), max_new_tokens=50,
             embedder=None)
    order = [i for _, i, blocks in p.passages if blocks is None]
    assert 6 in order and 1 in order and not p.whole
    assert order.index(6) < order.index(1)
    text = p.text.split("## Document excerpts")[1]
    assert text.index("P6:") < text.index("P1:")


def test_a_question_about_structure_gets_the_next_best_parts_too():
    """Asked by content ("which chapter explains ...?"), the right chapter often scores
    second or third: a question about structure gets the sub-outlines of the next best
    parts as well (none inside another), within the focus budget; others get one."""
    from docchat.context.outline import focus_outline
    from docchat.context.passages import TokenCounter

    doc = manual(chapters=12, per=6)
    rel = [{24: 0.9, 25: 0.5, 6: 1.0, 40: 0.3}]  # chapters 5, 2 and 7 (positions 24, 6, 40)
    counter = TokenCounter(CharBackend(100_000), "chars")
    one = focus_outline([doc], counter, 5000, rel)
    assert one.count("- manual.pdf:") == 1 and "5 Chapter on locale" in one
    three = focus_outline([doc], counter, 5000, rel, parts=3)
    heads = [line for line in three.splitlines() if line.startswith("- manual.pdf:")]
    assert [h.split(": ")[1].split(" [")[0] for h in heads] == [
        "5 Chapter on locale", "2 Chapter on kernel", "7 Chapter on cron"]
    assert "  2.6 The cron setup 11 [p. 23]" in three
    # The budget runs out: the parts that do not fit are left out, the first stays whole.
    small = focus_outline([doc], counter, len(one) + 20, rel, parts=3)
    assert small.startswith(one) and small.count("- manual.pdf:") == 1
    # pack() asks for them when the question asks about structure (chapters the outline
    # at the top does not already show whole).
    def parts(question):
        p = pack([doc], question, CharBackend(6000), max_new_tokens=50, embedder=None)
        return p.text.split("## Outline of the part asked about")[1].count("- manual.pdf:")

    assert parts("Which chapter covers swap and proxy settings, and what are its sections?") > 1
    assert parts("swap and proxy settings") == 1


def test_a_question_about_structure_gets_more_parts_where_they_fit_whole():
    """A large focus budget shows further candidate parts after the three best (the right
    chapter asked by content is often fourth or fifth), each only with its whole
    sub-outline; a budget that holds one more whole part shows just that one."""
    from docchat.context.outline import focus_outline
    from docchat.context.passages import TokenCounter
    from docchat.context.policy import POLICY

    doc = manual(chapters=12, per=6)
    # chapters 5, 2, 7, 9 and 11 (positions 24, 6, 40, 48, 60), best first
    rel = [{24: 0.9, 25: 0.5, 6: 1.0, 40: 0.3, 48: 0.25, 60: 0.2}]
    counter = TokenCounter(CharBackend(100_000), "chars")

    def heads(text):
        return [h.split(": ")[1].split(" [")[0] for h in text.splitlines()
                if h.startswith("- manual.pdf:")]

    three = focus_outline([doc], counter, 5000, rel, parts=3)
    assert heads(three) == ["5 Chapter on locale", "2 Chapter on kernel", "7 Chapter on cron"]
    five = focus_outline([doc], counter, 5000, rel, parts=3, more=2)
    assert heads(five) == heads(three) + ["9 Chapter on swap", "11 Chapter on fonts"]
    assert five.startswith(three) and "  11.6 The firewall setup 65" in five
    # Room for one more whole part only: the next is not cut to its chapter title.
    four = focus_outline([doc], counter, 5000, rel, parts=3, more=1)
    one_more = focus_outline([doc], counter, counter.text(four) + 20, rel, parts=3, more=2)
    assert one_more == four and heads(four) == heads(three) + ["9 Chapter on swap"]
    assert POLICY.structure_more_parts > 0
    # pack() shows them for a question about structure, in the focus share.
    p = pack([doc], "Which chapter covers swap and proxy settings, and what are its sections?",
             CharBackend(6000), max_new_tokens=50, embedder=None)
    focus = p.text.split("## Outline of the part asked about")[1]
    assert focus.count("- manual.pdf:") > 3


@pytest.mark.parametrize("question, back", [
    ("Do I need a special frame for it?", True),
    ("And which fonts does the printer spool use?", True),
    ("What about quota limits for printer spools?", True),
    ("那在 Mac 上呢？", True),
    ("这个选项在哪些系统上可用？", True),
    ("Where exactly must that file be installed?", True),
    ("Which fonts and quota limits does the printer spool use?", False),
    ("打印机的配额限制怎么设置？", False),
])
def test_refers_back(question, back):
    from docchat.context.retrieval import refers_back
    assert refers_back(question) is back


def test_follow_up_that_points_back_keeps_the_previous_excerpts():
    """Three content words and a pronoun for the previous topic ("... for it?") is a
    follow-up, not a topic change: the previous excerpts stay (a follow-up at 8k had lost
    the bibliography section it asked about)."""
    doc = manual()
    first = pack([doc], "How do I restart the firewall service?", CharBackend(1550),
                 max_new_tokens=50, embedder=None)
    history = [Message("user", "How do I restart the firewall service?"),
               Message("assistant", "Run systemctl restart firewall.")]
    kwargs = dict(max_new_tokens=50, embedder=None, history=history,
                  previous_passages=first.passages, carry_allowance=900, outline_window=1550)
    back = pack([doc], "Do fonts and quota limits matter for it?", CharBackend(1550 + 900),
                **kwargs)
    assert back.carried == len(first.passages)
    assert back.messages[0].content.startswith(_excerpts_prefix(first))
    other = pack([doc], "Do fonts and quota limits matter for the printer spool?",
                 CharBackend(1550 + 900), **kwargs)
    assert other.carried == 0


def test_the_next_best_parts_are_not_above_the_first_parts_level():
    """A whole part of the book would show little more than its chapter titles: the next
    best parts are chapters when the part asked about is a chapter."""
    from docchat.context.outline import entries_of, other_parts, part_asked_about

    secs = []
    for p, chapters in (("I Basics", ("1 Start", "2 Files")), ("II Tools", ("3 Edit", "4 Mail"))):
        for c in chapters:
            for k in (1, 2):
                i = len(secs)
                secs.append(section(i, (p, c, f"{c[0]}.{k} Topic {i}"),
                                    [("prose", FILLER, i + 1)]))
    doc = document("book.pdf", secs)
    rel = [{0: 1.0, 1: 0.5, 4: 0.9, 6: 0.8}]  # sections of 1 Start, 3 Edit and 4 Mail
    first = part_asked_about([doc], rel, with_children=True)
    names = [entries_of(doc)[ei].line.strip().split(" [")[0]
             for _, ei in other_parts([doc], rel, first, 3)]
    assert names == ["1 Start", "3 Edit", "4 Mail"]  # not "II Tools" (score 1.7)


# --- the append-only conversation (issue 21) ---------------------------------------------


def chatml(messages) -> str:
    """A prompt as a chat template renders it (ChatML): what the backend's cache matches."""
    return "".join(f"<|im_start|>{m.role}\n{m.content}<|im_end|>\n" for m in messages)


def test_second_prompt_starts_with_the_whole_first_prompt_plus_its_answer():
    """The system message holds the instructions and the outline; each user turn carries its
    excerpts, then its question; the next prompt is the previous prompt + its answer +
    [new excerpts + question], and a passage already in the window is not sent again."""
    from docchat.context.conversation import Conversation
    from docchat.context.turn_packing import pack_turn

    doc, b = manual(), CharBackend(3000 + 2000)
    first = pack_turn([doc], "How is the firewall configured?", b, max_new_tokens=50,
                      context_window=3000, embedder=None)
    outline = prompts.outline_block(build_outline_text(doc, b, first), "en")
    assert first.messages[0].content == prompts.system_message(outline, "en")
    assert [m.role for m in first.messages] == ["system", "user"]
    assert first.messages[1].content.endswith("## Question\nHow is the firewall configured?")
    assert "#### " in first.messages[1].content  # the excerpts go with the question
    answer = "Edit the firewall rules file [p. 9]."
    conv = Conversation().then(first, answer)
    second = pack_turn([doc], "And how is the printer set up?", b, conv, max_new_tokens=50,
                       context_window=5000, new_tokens=800, embedder=None)
    assert second.messages[:2] == first.messages
    assert second.messages[2] == Message("assistant", answer)
    assert chatml(second.messages).startswith(chatml([*first.messages, second.messages[2]]))
    assert len(second.messages) == 4 and second.turn.compacted == 0
    sent_before = {(k, i) for k, i, _ in first.passages}
    assert second.turn.passages and not sent_before & {(k, i) for k, i, _ in
                                                        second.turn.passages}
    assert second.carried == len(first.passages)  # all still in the window
    check_fits(second, b, 50, 5000)
    third = pack_turn([doc], "And the locale?", b, conv.then(second, "Use lpadmin [p. 5]."),
                      max_new_tokens=50, context_window=6000, new_tokens=800, embedder=None)
    assert third.messages[:4] == [*second.messages[:3], Message("user", second.turn.message)]


def build_outline_text(doc, backend, packed) -> str:
    from docchat.context.outline import build_outline
    from docchat.context.passages import TokenCounter
    return build_outline([doc], TokenCounter(backend, "chars"), packed.turn.outline_budget).text


def test_a_full_window_is_compacted_in_one_step_and_reported():
    """When the earlier turns leave too little room, the oldest turns' excerpts are dropped
    at once (their questions and answers stay, in order), the re-read is reported, and the
    turns after it append again."""
    from docchat.context.conversation import Conversation, compaction_note
    from docchat.context.turn_packing import pack_turn

    doc, b = manual(), CharBackend(6000)
    conv, prompts_ = Conversation(), []
    questions = ["How is the firewall configured?", "And how is the printer set up?",
                 "What about the kernel modules?", "How do backups run?",
                 "Which cron jobs exist?", "And the sound card?"]
    for q in questions:
        p = pack_turn([doc], q, b, conv, max_new_tokens=50, context_window=6000,
                      new_tokens=1500, embedder=None)
        check_fits(p, b, 50, 6000)
        prompts_.append(p)
        conv = conv.then(p, f"Answer about {q.split()[-1]}")
    compacted = [k for k, p in enumerate(prompts_) if p.turn.reread_tokens]
    assert compacted, "six turns of 1,500 tokens cannot all fit 6,000"
    k = compacted[0]
    p = prompts_[k]
    assert p.turn.compacted >= 1 and p.messages[0] == prompts_[0].messages[0]
    users = [m.content for m in p.messages if m.role == "user"]
    assert users[:p.turn.compacted] == questions[:p.turn.compacted]  # questions alone
    assert [m.content for m in p.messages if m.role == "assistant"] == [
        f"Answer about {q.split()[-1]}" for q in questions[:k]]
    assert p.turn.reread_tokens == p.tokens - b.count_prompt_tokens(p.messages[:1])
    metrics = p.turn.to_metrics()
    assert compaction_note(metrics) == (f"context compacted: {p.turn.reread_tokens:,} tokens "
                                        "read again")
    assert compaction_note(prompts_[0].turn.to_metrics()) is None
    assert p.tokens <= 0.75 * (6000 - 50) + 1  # leaves room: the next turns append
    assert k + 1 < len(prompts_) and not prompts_[k + 1].turn.reread_tokens
    after = prompts_[k + 1].messages
    assert after[:len(p.messages)] == p.messages  # appends again after compacting


def test_a_follow_up_in_another_language_keeps_the_system_message_and_says_the_language():
    from docchat.context.conversation import Conversation
    from docchat.context.turn_packing import pack_turn

    doc, b = manual(), CharBackend(8000)
    first = pack_turn([doc], "How is the firewall configured?", b, max_new_tokens=50,
                      context_window=3000, embedder=None)
    conv = Conversation().then(first, "Edit the rules file [p. 9].")
    zh = pack_turn([doc], "防火墙的日志在哪里？", b, conv, max_new_tokens=50,
                   context_window=6000, new_tokens=800, embedder=None)
    assert zh.messages[0] == first.messages[0]  # byte-identical for the session
    assert zh.messages[-1].content.endswith("防火墙的日志在哪里？\n\n请用中文回答。")
    assert zh.turn.question == "防火墙的日志在哪里？"


def test_excerpts_read_ahead_start_the_next_turn_while_it_stays_on_the_topic():
    """read_ahead, after an answer: the excerpts the last question would have got next, as
    the start of a user message (what the backend reads while the user reads the answer).
    A follow-up on the same passages starts its message with exactly them (the prompt
    extends what was read) and still adds its own share of new excerpts; a new topic, or a
    question in another language, leaves them out."""
    from docchat.context.conversation import Conversation
    from docchat.context.turn_packing import pack_turn, read_ahead

    doc, b = manual(), CharBackend(40000)
    first = pack_turn([doc], "How is the firewall configured?", b, max_new_tokens=50,
                      context_window=3000, embedder=None)
    conv = Conversation().then(first, "Edit the firewall rules file [p. 9].")
    ahead = read_ahead([doc], b, conv, 1500, max_new_tokens=50, embedder=None)
    assert ahead is not None and ahead.passages and ahead.text.startswith("## Document excerpts\n")
    sent = {(i, blk) for _, i, blocks in first.passages for blk in (blocks or range(99))}
    assert not sent & {(i, blk) for _, i, blocks in ahead.passages
                       for blk in (blocks or range(99))}
    read = replace(conv, ahead=ahead)
    cached = chatml(read.messages_ahead()).removesuffix("<|im_end|>\n")
    prior = b.count_prompt_tokens(read.messages_ahead())

    def follow(question: str, c: Conversation = read):
        return pack_turn([doc], question, b, c, max_new_tokens=50, context_window=prior + 2000,
                         new_tokens=400, embedder=None)

    on = follow("And which firewall settings does the level change?")
    assert chatml(on.messages).startswith(cached)
    assert on.turn.passages[:len(ahead.passages)] == ahead.passages
    assert on.turn.passages[len(ahead.passages):]  # its own new excerpts too, within its share
    assert on.tokens - prior <= 400 + 8
    assert on.turn.message.endswith("## Question\nAnd which firewall settings does the level "
                                    "change?")
    # Without the read-ahead the same follow-up gets no more than its share.
    assert follow("And which firewall settings does the level change?", conv).tokens - \
        b.count_prompt_tokens(conv.messages()) <= 400 + 8
    for other in ("How are the sound card drivers installed?", "防火墙的规则文件在哪里？"):
        p = follow(other)
        assert not p.turn.message.startswith(ahead.text)
        assert p.messages[:-1] == conv.messages()
        assert not set(ahead.passages) & set(p.turn.passages[:len(ahead.passages)])


def test_a_turn_has_shorter_forms_that_keep_its_first_excerpts():
    """pack_turn gives the turn with only its first new excerpts (best first, partial
    sections too), longest first: what a read cut at the first-token deadline reads."""
    from docchat.context.turn_packing import pack_turn

    doc, b = manual(), CharBackend(3000 + 2000)
    full = pack_turn([doc], "How is the firewall configured?", b, max_new_tokens=50,
                     context_window=3000, embedder=None)
    assert full.shorter and len(full.passages) >= 2
    sizes = [len(s.passages) for s in full.shorter]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] < len(full.passages)
    for s in full.shorter:
        assert s.messages[:-1] == full.messages[:-1]  # the same system message and turns
        assert s.passages == full.passages[:len(s.passages)] and s.tokens < full.tokens
        assert s.turn.message.endswith("## Question\nHow is the firewall configured?")
        assert s.turn.passages == tuple(s.passages)


def test_the_next_question_is_judged_on_what_a_cut_turn_was_packed_with():
    """A read cut at the deadline sent only the turn's first excerpt; a next question about a
    section the cut left out is still about the conversation (a follow-up, the follow-up's
    share of new tokens), not a new topic that reads a first question's budget again."""
    from docchat.context.conversation import Conversation
    from docchat.context.turn_packing import pack_turn

    doc, b = manual(), CharBackend(20000)
    first = pack_turn([doc], "How is the firewall configured?", b, max_new_tokens=50,
                      context_window=3000, embedder=None)
    short = first.shorter[-1]
    left_out = [i for _, i, _ in first.passages if i not in {i for _, i, _ in short.passages}]
    assert left_out
    cut = replace(short, turn=replace(short.turn, chosen=first.turn.passages))
    question = f"What does configure-firewall --level {left_out[-1]} do?"
    sizes = {}
    for name, turn in (("chosen", cut), ("sent only", short)):
        conv = Conversation().then(turn, "Edit the rules.")
        prior = b.count_prompt_tokens(conv.messages())
        p = pack_turn([doc], question, b, conv, max_new_tokens=50,
                      context_window=prior + 3000, new_tokens=400, embedder=None)
        assert [i for _, i, _ in p.turn.passages][0] == left_out[-1]
        sizes[name] = p.tokens - prior
    assert sizes["chosen"] <= 400 + 8 < sizes["sent only"]
