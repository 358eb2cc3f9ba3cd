"""Chinese documents under MiniLM (issue 22): MiniLM reads English only, so a Chinese
document's passages were found by BM25 alone; its companion, the multilingual model, gives
them dense section, passage and part scores from its stored vectors (embeddings.partner),
and warm() computes those vectors after an upload."""
from __future__ import annotations

import numpy as np
from factories import Chars, titled_doc

from docchat.context import embeddings
from docchat.context.embeddings import DenseModel, Embedder, partner
from docchat.context.packing import pack

# A fake multilingual model that knows what a few words mean: each meaning is one
# dimension, whatever words say it; BM25 sees only that the words differ.
MEANINGS = [("半夜", "凌晨", "3 a.m."), ("自动", "按计划", "unattended"),
            ("打印机", "印表机", "printer")]


class Meaning:
    def __init__(self) -> None:
        self.encoded = 0

    def encode(self, texts, max_tokens=None):
        self.encoded += len(texts)
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for i, t in enumerate(texts):
            for k, words in enumerate(MEANINGS):
                out[i, k] = sum(t.count(w) for w in words)
            out[i, 7] = 0.1  # every text points a little the same way
        return out / np.linalg.norm(out, axis=1, keepdims=True)


FAKE_USE = DenseModel("fake-use", "fake-use/1", 8, True, lambda: True, Meaning, None,
                      embeddings.use_section_text)
FILLER = "本节介绍一些与题目无关的设置，例如目录、索引和页眉页脚的格式，以及字体大小。" * 3
BODIES = [("安装", "下载发行版的光盘映像，然后运行安装程序。"),
          ("字体", "系统字体放在共享目录里，所有用户都可以使用。"),
          ("网络", "网卡的地址写在配置文件里，修改后重启服务。"),
          ("用户", "adduser 会新建账户和它的主目录。"),
          ("打印", "CUPS 把文档排队，然后发送到印表机。"),
          ("声音", "声卡的音量用混音器调节。"),
          ("定时任务", "cron 按计划在凌晨执行命令，适合备份和清理。"),
          ("日志", "系统日志写在 /var/log 下面。")]


def zh_doc(name: str = "zh.pdf"):
    return titled_doc(name, BODIES, language="zh", extra=[FILLER, FILLER])


def companion_embedder() -> tuple[Embedder, Embedder]:
    class English:  # MiniLM's stand-in: reads no Chinese document
        def encode(self, texts, max_tokens=None):
            return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)

    other = Embedder(encoder=Meaning(), model=FAKE_USE)
    return Embedder(encoder=English(), companion=other), other


def test_a_chinese_paraphrase_finds_its_passage_by_the_companions_vectors():
    d = zh_doc()
    main, other = companion_embedder()
    assert not main.reads(d) and partner(main) is other
    for kind in embeddings.KINDS:  # as warm() leaves them
        other.vectors(d, kind=kind)
    # the question shares no word with its section's text
    assert_found_by_meaning_only(d, "怎样让电脑在半夜自动做事？", "cron 按计划在凌晨执行命令", main)


def assert_found_by_meaning_only(d, question: str, target: str, embedder) -> None:
    """BM25 alone does not pack the target passage; with the embedder's vectors it does."""
    bm25 = pack([d], question, Chars(1200), max_new_tokens=100, embedder=None)
    dense = pack([d], question, Chars(1200), max_new_tokens=100, embedder=embedder)
    assert target not in bm25.text
    assert target in dense.text


def test_the_companion_is_used_only_once_its_vectors_are_stored():
    """Never at question time: a Chinese document whose companion vectors are not computed
    yet is packed by BM25 alone, and nothing is embedded."""
    d = zh_doc("fresh.pdf")
    main, other = companion_embedder()
    q = "怎样让电脑在半夜自动做事？"
    plain = pack([d], q, Chars(1200), max_new_tokens=100, embedder=None)
    got = pack([d], q, Chars(1200), max_new_tokens=100, embedder=main)
    assert got.text == plain.text
    assert other._encoder.encoded <= 1  # the question at most


def test_warm_computes_the_companions_vectors_for_a_chinese_document():
    d = zh_doc("warm.pdf")
    main, other = companion_embedder()
    thread = embeddings.warm(d, main, yield_to=None)
    assert thread is not None
    thread.join(10)
    assert all(other.ready(d, kind=k) for k in embeddings.KINDS)


EN_FILLER = ("This part describes settings unrelated to the topic, such as the table of "
             "contents, the index and the page headers, and the font sizes. ") * 3
EN_BODIES = [("Installing", "Download the image of the release and run the installer."),
             ("Fonts", "System fonts live in a shared folder that every user can read."),
             ("Network", "The card's address is in a configuration file; restart after edits."),
             ("Users", "adduser creates an account and its home directory."),
             ("Printing", "CUPS queues documents and sends them to the printer."),
             ("Sound", "The volume of the sound card is set with the mixer."),
             ("Periodic tasks", "cron starts commands unattended at 3 a.m., fit for backups."),
             ("Logs", "The system logs are written under /var/log.")]


def test_a_chinese_question_finds_an_english_passage_by_the_companions_vectors():
    """MiniLM reads a Chinese question only as its dictionary translation, so it gets no
    passage scores; the companion reads it, and scores the English document's passages
    (embeddings.CROSS_PASSAGES), whose windows warm() embeds after MiniLM's vectors."""
    d = titled_doc("en.pdf", EN_BODIES, extra=[EN_FILLER, EN_FILLER])
    main, other = companion_embedder()
    assert main.reads(d) and not main.reads_question("怎样让电脑在半夜自动做事？")
    assert [m is other for m, _ in embeddings.companion_jobs(d, main)] == [False, True]
    assert embeddings.companion_jobs(d, main)[1][1] == ("windows",)
    other.vectors(d, kind="windows")
    assert_found_by_meaning_only(d, "怎样让电脑在半夜自动做事？",
                                 "cron starts commands unattended at 3 a.m.", main)


def test_no_companion_for_the_multilingual_model_or_when_switched_off():
    main, other = companion_embedder()
    assert partner(Embedder(encoder=Meaning(), model=FAKE_USE, companion=other)) is None
    main.switched_on = False
    assert partner(main) is None and embeddings.warm(zh_doc("off.pdf"), main) is None


def test_a_new_topic_later_in_a_session_is_searched_by_meaning_as_a_first_question():
    """The chat page packs every question after the first as a turn of the conversation;
    a question on another topic is searched as a first question is (its passages by
    meaning included: here a Chinese question over an English document, which only the
    companion reads), not as an elliptical follow-up, whose meaning leans on the earlier
    turn and gets no passages by meaning."""
    from docchat.context.conversation import Conversation
    from docchat.context.turn_packing import pack_turn

    d = titled_doc("en-session.pdf", EN_BODIES, extra=[EN_FILLER] * 6)
    main, other = companion_embedder()
    other.vectors(d, kind="windows")
    first = pack_turn([d], "Where are the system logs written?", Chars(4000),
                      max_new_tokens=100, context_window=900, embedder=main)
    assert "cron" not in first.text
    conv = Conversation().then(first, "Under /var/log [p. 8].")
    q = "怎样让电脑在半夜自动做事？"  # shares no word with its passage
    second = pack_turn([d], q, Chars(4000), conv, max_new_tokens=100, context_window=2200,
                       new_tokens=600, embedder=main)
    assert second.turn.compacted == 0
    assert "cron starts commands unattended at 3 a.m." in second.turn.message


class EnglishMeaning(Meaning):
    """The companion's stand-in for English: a few paraphrases share a dimension."""
    PAIRS = [("night", "3 a.m."), ("on its own", "unattended"), ("paper", "printer")]

    def encode(self, texts, max_tokens=None):
        self.encoded += len(texts)
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for i, t in enumerate(texts):
            for k, words in enumerate(self.PAIRS):
                out[i, k] = sum(t.lower().count(w) for w in words)
            out[i, 7] = 0.1
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_an_english_question_is_read_by_the_companion_too_where_the_budget_has_room():
    """Two readings of an English question (policy.companion_from): MiniLM's (here a
    stand-in that tells no passage from another) and the multilingual companion's, whose
    vectors of an English document's windows are stored for Chinese questions anyway. From
    companion_from tokens of evidence budget up its passage scores join; below, the
    passages found by MiniLM and the words alone keep the room."""
    from dataclasses import replace

    from docchat.context.policy import POLICY

    d = titled_doc("en2.pdf", EN_BODIES, extra=[EN_FILLER, EN_FILLER])
    main = Embedder(encoder=companion_embedder()[0]._encoder,
                    companion=Embedder(encoder=EnglishMeaning(), model=FAKE_USE))
    q = "What runs jobs at night on its own?"
    assert main.reads(d) and main.reads_question(q)
    main.companion.vectors(d, kind="windows")
    target = "cron starts commands unattended at 3 a.m."
    wide = pack([d], q, Chars(6000), max_new_tokens=100, embedder=main)
    assert target in wide.text
    never = replace(POLICY, companion_from=10**9)
    assert target not in pack([d], q, Chars(6000), max_new_tokens=100, embedder=main,
                              policy=never).text
    # A small budget: the second reading is not used.
    always = replace(POLICY, companion_from=0)
    small = pack([d], q, Chars(2400), max_new_tokens=100, embedder=main)
    assert small.text == pack([d], q, Chars(2400), max_new_tokens=100, embedder=main,
                              policy=never).text
    assert target in pack([d], q, Chars(2400), max_new_tokens=100, embedder=main,
                          policy=always).text
