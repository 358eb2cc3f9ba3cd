"""Dense section scores: section texts, fusion with BM25, the LRU and store caches, the
BM25 fallback when the model package is missing, and the real bundled model."""
from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from factories import Chars, titled_doc

from docchat.context import embeddings
from docchat.context.embeddings import Embedder, section_text
from docchat.context.packing import pack
from docchat.context.retrieval import add_dense
from ingest.document import Block, Document, Page, Section


class FakeEncoder:
    """Bag of words hashed into 384 dimensions; counts the texts it encodes."""

    def __init__(self) -> None:
        self.encoded = 0

    def encode(self, texts):
        self.encoded += len(texts)
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z]+", t.lower()):
                out[i, sum(map(ord, w)) % 384] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def doc(texts, language="en", name="m.pdf"):
    filler = " ".join(f"filler{k} words here." for k in range(15))
    return titled_doc(name, texts, language=language, sha256=name + str(len(texts)),
                      extra=[filler])


MANUAL = [("Archiving", "Use tar to bundle many files into one archive file."),
          ("Printing", "CUPS queues documents and sends them to the printer."),
          ("Periodic tasks", "cron executes commands on a schedule, for example nightly."),
          ("Fonts", "TrueType and OpenType fonts are installed system wide."),
          ("Users", "adduser creates an account with its home directory.")]


def test_section_text_is_heading_path_then_first_words():
    s = Section(0, ("Admin", "Backup"), 2, 1, 1, "prose", (Block("prose", "a b c d e", 1),))
    assert section_text(s, 3) == "Admin > Backup: a b c"
    assert section_text(s, 0) == "Admin > Backup"


def test_add_dense_lifts_only_the_top_sections_scaled_to_the_weight():
    fused = {("d", 0): 2.0, ("d", 1): 1.0}
    dense = {("d", k): 0.9 - 0.1 * k for k in range(6)}
    out = add_dense(fused, dense, weight=1.0, top=3)
    assert out[("d", 0)] == pytest.approx(3.0) and out[("d", 1)] == pytest.approx(1 + 2 / 3)
    assert out[("d", 2)] == pytest.approx(1 / 3) and ("d", 3) not in out
    assert add_dense(fused, {}, 1.0) == fused and add_dense(fused, dense, 0.0) == fused


def test_embedder_caches_per_document_and_in_the_store(store):
    enc = FakeEncoder()
    d = doc(MANUAL)
    e = Embedder(store, enc)
    first = e.scores("nightly schedule", [d], [0])
    assert enc.encoded == len(MANUAL) + 1 and max(first, key=first.get) == (0, 2)
    e.scores("printer queue", [d], [0])
    assert enc.encoded == len(MANUAL) + 2  # sections from the in-process cache
    again = Embedder(store, enc)
    assert again.scores("nightly schedule", [d], [0]) == first
    assert enc.encoded == len(MANUAL) + 3  # sections from the store


def test_no_dense_scores_for_chinese_questions_or_documents():
    e = Embedder(None, FakeEncoder())
    assert e.scores("如何打印文件？", [doc(MANUAL)], [0]) == {}
    assert e.scores("printer", [doc(MANUAL, language="zh")], [0]) == {}


def test_missing_package_falls_back_to_bm25(monkeypatch):
    monkeypatch.setitem(sys.modules, embeddings.PACKAGE, None)  # as if not installed
    assert not embeddings.available() and not Embedder().enabled
    d = doc(MANUAL)
    q = "How do I get a job to run by itself every night?"
    plain = pack([d], q, Chars(1500), max_new_tokens=100, embedder=None)
    fallback = pack([d], q, Chars(1500), max_new_tokens=100, embedder=Embedder())
    assert fallback.sections == plain.sections and fallback.text == plain.text


class Pointing:
    """Encodes the question and the "Fonts" section alike, every other text elsewhere."""

    def encode(self, texts):
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, 0 if ("Fonts" in t or "?" in t) else 1 + i % 5] = 1.0
        return out


def test_pack_ranks_what_the_embedder_finds_with_the_bm25_hits():
    d = doc(MANUAL)
    q = "What does the printer queue do?"
    bm25 = pack([d], q, Chars(1500), max_new_tokens=100, embedder=None)
    fused = pack([d], q, Chars(1500), max_new_tokens=100, embedder=Embedder(None, Pointing()))
    assert ("m.pdf", 1) in bm25.sections and ("m.pdf", 3) not in bm25.sections
    assert ("m.pdf", 1) in fused.sections and ("m.pdf", 3) in fused.sections


def test_bundled_model_bridges_a_paraphrase_bm25_misses():
    assert embeddings.available()  # pinned in requirements.txt
    d = doc(MANUAL, name="real.pdf")
    q = "How do I get a job to run by itself every night?"
    e = Embedder()
    dense = e.scores(q, [d], [0])
    assert max(dense, key=dense.get) == (0, 2)
    bm25 = pack([d], q, Chars(1500), max_new_tokens=100, embedder=None)
    fused = pack([d], q, Chars(1500), max_new_tokens=100, embedder=e)
    assert ("real.pdf", 2) in fused.sections and ("real.pdf", 2) not in bm25.sections


def test_warm_embeds_english_documents_in_the_background():
    from docchat.context.embeddings import Embedder, warm
    from ingest.document import Block, Section

    class Counting:
        calls = 0

        def encode(self, texts, max_tokens=128):
            import numpy as np
            Counting.calls += 1
            return np.ones((len(texts), 384), dtype=np.float32)

    def doc(lang):
        s = Section(0, ("Intro",), 1, 1, 1, "prose", (Block("prose", "hello world", 1),))
        return Document(path="x", sha256=lang * 32, name="x", kind="text",
                        pages=[Page(1, "hello world")], sections=[s], language=lang)

    embedder = Embedder(encoder=Counting())
    assert warm(doc("zh"), embedder) is None
    thread = warm(doc("en"), embedder)
    thread.join(10)
    assert Counting.calls == 2  # its section, then its one window (no part has parts)
    embedder.vectors(doc("en"))  # cached: not encoded again
    embedder.vectors(doc("en"), kind="windows")
    assert Counting.calls == 2


def test_stored_vectors_are_reused_after_a_restart(store):
    """pack(store=...) writes the section vectors to SQLite; a new embedder (a restarted
    process) reads them there and embeds only the question."""
    d = doc(MANUAL, name="stored.pdf")
    q = "How do I get a job to run by itself every night?"
    first = FakeEncoder()
    pack([d], q, Chars(1500), max_new_tokens=100, embedder=Embedder(encoder=first),
         store=store)
    assert first.encoded == len(MANUAL) + 1
    assert store.get_embeddings(d.sha256, embeddings.STORED_AS) is not None
    second = FakeEncoder()
    p = pack([d], q, Chars(1500), max_new_tokens=100, embedder=Embedder(encoder=second),
             store=store)
    assert second.encoded == 1  # the question only: no section embedded again
    assert p.sections


def test_cli_pack_embeds_a_stored_document_once(tmp_path, monkeypatch):
    """`python -m docchat pack` twice on a stored document: the second run (a fresh
    process's embedder) never builds the torch encoder that embeds sections."""
    from click.testing import CliRunner

    from docchat.cli import cli
    from docchat.library.store import SessionStore

    src = tmp_path / "manual.md"
    filler = " ".join(f"Filler sentence {k} says nothing in particular." for k in range(40))
    src.write_text("\n\n".join(f"# {t}\n\n{b} {filler}" for t, b in MANUAL),
                   encoding="utf-8")
    db = tmp_path / "t.db"
    monkeypatch.setenv("DOCCHAT_BACKEND", "echo")
    monkeypatch.setenv("DOCCHAT_EMBEDDER", "minilm")
    fresh = Embedder()
    monkeypatch.setattr(embeddings, "DEFAULT", fresh)
    import docchat.context.packing as packing
    monkeypatch.setattr(packing.pack, "__kwdefaults__",
                        {**packing.pack.__kwdefaults__, "embedder": fresh})
    args = ["pack", str(src), "-q", "Which tool runs commands every night?", "--db", str(db),
            "--budget", "900", "--json"]
    out = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    s = SessionStore.open(db)
    sha = s.list_documents()[0]["sha256"]
    assert s.get_embeddings(sha, embeddings.STORED_AS) is not None

    class Boom:
        def __init__(self):
            raise AssertionError("sections embedded again")

    restarted = Embedder()
    monkeypatch.setattr(embeddings, "Encoder", Boom)
    monkeypatch.setattr(packing.pack, "__kwdefaults__",
                        {**packing.pack.__kwdefaults__, "embedder": restarted})
    again = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert again.exit_code == 0, again.output
    assert restarted._query_encoder is not None  # dense scores were used, from the store


def test_numpy_question_encoder_matches_the_torch_encoder():
    texts = ["How do I get a job to run by itself every night?", "x",
             "What must the build-arch target of debian/rules do? " * 12]
    a = embeddings.QueryEncoder().encode(texts)
    b = embeddings.Encoder().encode(texts)
    assert a.shape == b.shape == (3, 384)
    assert np.abs(a - b).max() < 1e-4
    assert "torch" in sys.modules  # (the torch encoder above); the numpy one needs none


def test_warm_writes_to_a_store_opened_in_its_thread(tmp_path):
    from docchat.library.store import SessionStore

    d = doc(MANUAL, name="warmed.pdf")
    db = tmp_path / "w.db"
    thread = embeddings.warm(d, Embedder(encoder=FakeEncoder()),
                             open_store=lambda: SessionStore.open(db))
    thread.join(10)
    assert SessionStore.open(db).get_embeddings(d.sha256, embeddings.STORED_AS) is not None


# --- the multilingual model (DOCCHAT_EMBEDDER=use) --------------------------------------


@pytest.fixture(scope="module")
def use_embedder():
    assert embeddings.use_available()  # pinned in requirements.txt
    return Embedder(model=embeddings.USE)


def test_multilingual_model_matches_across_chinese_and_english(use_embedder):
    """A Chinese question finds the English section it asks about, an English question the
    Chinese one, with no dictionary in between; Chinese documents are embedded too."""
    en = doc(MANUAL, name="en.pdf")
    zh = doc([("归档", "用 tar 把许多文件打包成一个归档文件。"),
              ("打印", "CUPS 把文档排队并发送到打印机。"),
              ("定时任务", "cron 按计划执行命令，例如每天夜里。"),
              ("字体", "TrueType 和 OpenType 字体安装在整个系统中。")], language="zh",
             name="zh.pdf")
    assert use_embedder.reads(zh) and not Embedder().reads(zh)
    got = use_embedder.scores("哪个工具每天夜里自动执行命令？", [en], ["en"])
    assert max(got, key=got.get) == ("en", 2)  # Periodic tasks: cron
    got = use_embedder.scores("Which program sends documents to the printer?", [zh], ["zh"])
    assert max(got, key=got.get) == ("zh", 1)  # 打印
    v = use_embedder.vectors(zh)
    assert v.shape == (4, 512) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-3)


def test_multilingual_section_text_is_cut_by_characters():
    s = Section(0, ("数据", "备份"), 2, 1, 1, "prose", (Block("prose", "备" * 500, 1),))
    text = embeddings.use_section_text(s)
    assert text.startswith("数据 > 备份: ") and text.count("备") - 1 == embeddings.USE_CHARS // 2


def test_cli_pack_with_the_multilingual_model_embeds_sections_once(tmp_path, monkeypatch):
    """DOCCHAT_EMBEDDER=use: a second `pack` on the stored document encodes the question only."""
    from click.testing import CliRunner

    import docchat.context.packing as packing
    from docchat.cli import cli

    src = tmp_path / "手册.md"
    filler = " ".join(f"Filler sentence {k} says nothing in particular." for k in range(40))
    src.write_text("\n\n".join(f"# {t}\n\n{b} {filler}" for t, b in MANUAL),
                   encoding="utf-8")
    monkeypatch.setenv("DOCCHAT_BACKEND", "echo")
    monkeypatch.setenv("DOCCHAT_EMBEDDER", "use")
    args = ["pack", str(src), "-q", "哪个工具每天夜里执行命令？", "--db", str(tmp_path / "u.db"),
            "--budget", "400", "--json"]
    encoded: list[int] = []
    real = embeddings.UseEncoder.encode

    def counting(self, texts, max_tokens=None):
        encoded.append(len(texts))
        return real(self, texts, max_tokens)

    monkeypatch.setattr(embeddings.UseEncoder, "encode", counting)
    for _ in range(2):
        fresh = Embedder(model=embeddings.USE)  # a new process's embedder
        monkeypatch.setattr(embeddings, "DEFAULT", fresh)
        monkeypatch.setattr(packing.pack, "__kwdefaults__",
                            {**packing.pack.__kwdefaults__, "embedder": fresh})
        out = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert out.exit_code == 0, out.output
    assert encoded == [1, len(MANUAL), 1]  # question and sections, then the question only


def test_warm_embeds_at_the_lowest_cpu_priority(tmp_path):
    """The background embedding after an upload must not slow the backend reading a
    question's prompt: its thread runs niced (19) where the OS allows it."""
    import os
    import threading

    seen: list[int] = []

    class Niced(FakeEncoder):
        def encode(self, texts):
            seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
            return super().encode(texts)

    d = doc(MANUAL, name="niced.pdf")
    thread = embeddings.warm(d, Embedder(encoder=Niced()))
    thread.join(10)
    assert seen == [19, 19]  # the sections, then the windows
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) != 19  # caller as it was


def test_configure_does_not_wait_for_a_background_embedding(monkeypatch):
    """The app calls configure() on every rerun; while an upload's sections are embedded in
    the background (holding the embedder's lock) the page must not wait for them (it did:
    13 s before the first question showed anything)."""
    import threading

    from docchat.config import Settings

    e = Embedder()
    monkeypatch.setattr(embeddings, "DEFAULT", e)
    held, release = threading.Event(), threading.Event()

    def hold():
        with e._lock:
            held.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(5)
    done = threading.Event()
    threading.Thread(target=lambda: (embeddings.configure(Settings.from_env({})), done.set()),
                     daemon=True).start()
    returned = done.wait(5)  # while the lock is still held
    release.set()
    t.join(5)
    assert returned and e.switched_on and e.model is embeddings.MINILM


def test_a_question_does_not_wait_for_another_documents_background_embedding():
    """An upload's sections are being embedded (slowly) in the background; a question on a
    document whose vectors are already cached is scored without waiting for it."""
    import threading

    started, release = threading.Event(), threading.Event()

    class Slow(FakeEncoder):
        def encode(self, texts):
            if len(texts) > 1:  # sections, not a question
                started.set()
                release.wait(10)
            return super().encode(texts)

    e = Embedder(encoder=Slow())
    ready = doc(MANUAL, name="ready.pdf")
    release.set()
    e.vectors(ready)  # cached
    release.clear()
    uploading = doc(MANUAL[:3], name="new.pdf")
    t = threading.Thread(target=e.vectors, args=(uploading,), daemon=True)
    t.start()
    assert started.wait(5)
    done = threading.Event()
    got: dict = {}
    threading.Thread(target=lambda: (got.update(e.scores("cron nightly", [ready], ["r"])),
                                     done.set()), daemon=True).start()
    answered = done.wait(5)  # while the other document is still being embedded
    release.set()
    t.join(5)
    assert answered and max(got, key=got.get) == ("r", 2)


def test_warm_waits_for_the_foreground_before_each_batch(monkeypatch):
    """Between batches the background embedding waits while a backend works (yield_to), so
    the two do not share the cores; every batch waits, not only the first."""
    events: list[str] = []

    class Gate:
        def wait_idle(self, timeout=None):
            events.append("wait")
            return True

    class Recording(FakeEncoder):
        def encode(self, texts):
            events.append(f"encode {len(texts)}")
            return super().encode(texts)

    monkeypatch.setattr(embeddings, "BATCH", 2)
    d = doc(MANUAL, name="batches.pdf")
    e = Embedder(encoder=Recording())
    embeddings.warm(d, e, yield_to=Gate()).join(10)
    def batches(n):
        return ["wait", "encode 2"] * (n // 2) + ["wait", "encode 1"] * (n % 2)
    n, w = len(d.sections), len(e.units(d, "windows"))
    assert n > 4 and events == batches(n) + batches(w) + batches(len(e.units(d, "parts")))
    assert np.allclose(e.vectors(d), FakeEncoder().encode([section_text(s)
                                                          for s in d.sections]))


def test_warm_pauses_while_a_backend_streams_and_resumes_after():
    """By default warm() yields to docchat.backends.FOREGROUND: while an answer is being
    read and generated nothing is embedded; once the stream ends the vectors come."""
    from docchat.backends import GenerationRequest, Message
    from docchat.backends.echo import EchoBackend

    encoder = FakeEncoder()
    d = doc(MANUAL, name="paused.pdf")
    e = Embedder(encoder=encoder)
    stream = EchoBackend().stream(GenerationRequest([Message("user", "a b c")]))
    next(stream)  # the backend is generating
    thread = embeddings.warm(d, e)
    thread.join(0.3)
    paused = thread.is_alive() and encoder.encoded == 0
    stream.close()
    thread.join(10)
    windows = len(e.units(d, "windows"))
    assert paused and not thread.is_alive() and encoder.encoded == len(d.sections) + windows
    assert e.ready(d) and e.ready(d, kind="windows")


def test_warm_without_yielding_embeds_beside_a_stream():
    from docchat.backends import GenerationRequest, Message
    from docchat.backends.echo import EchoBackend

    encoder = FakeEncoder()
    d = doc(MANUAL, name="beside.pdf")
    stream = EchoBackend().stream(GenerationRequest([Message("user", "a b c")]))
    next(stream)
    e = Embedder(encoder=encoder)
    embeddings.warm(d, e, yield_to=None).join(10)
    stream.close()
    assert encoder.encoded == len(d.sections) + len(e.units(d, "windows"))


class Synonyms(FakeEncoder):
    """FakeEncoder that reads some words as one meaning (a paraphrase shares no word with
    its passage, but lands near it)."""
    SAME = {"drawing": "graphic", "pictures": "graphic", "plots": "graphic",
            "graphical": "graphic", "mistakes": "error", "errors": "error",
            "debugging": "error", "bugs": "error"}

    def encode(self, texts):
        return super().encode([" ".join(self.SAME.get(w, w)
                                        for w in re.findall(r"[a-z]+", t.lower()))
                               for t in texts])


def long_doc():
    """One long section whose fourth paragraph (its own window) is about pictures."""
    paras = [f"Paragraph {k} talks about matrices and vectors in some detail. " * 12
             for k in range(6)]
    paras[4] = "Graphical output: the figure window shows plots of your data. " * 4
    s = Section(0, ("Basics",), 1, 1, 1, "prose",
                tuple(Block("prose", p, 1) for p in paras))
    other = Section(1, ("Strings",), 1, 2, 2, "prose",
                    (Block("prose", "Strings hold text; concatenate them. " * 8, 2),))
    return Document(path="l.pdf", sha256="long", name="l.pdf", kind="pdf", language="en",
                    pages=[Page(1, ""), Page(2, "")], sections=[s, other])


def test_passage_vectors_find_a_paraphrased_window_once_they_are_ready(store):
    """Passage-level dense scores: the window about pictures ranks first for "drawing
    pictures" (no word in common) once the window vectors are computed (warm(), or the
    store); before that the question never waits for them: nothing is embedded but the
    question and the sections."""
    from docchat.context.relevance import relevance
    enc = Synonyms()
    d = long_doc()
    e = Embedder(store, enc)
    before = relevance([d], "drawing pictures", embedder=e, store=store)
    assert enc.encoded == len(d.sections) + 1 and not before.windows
    e.vectors(d, store, kind="windows")
    windows = e.units(d, "windows")
    assert len(windows) > 2 and enc.encoded == len(d.sections) + 1 + len(windows)
    after = relevance([d], "drawing pictures", embedder=Embedder(store, enc), store=store)
    best = max(after.windows, key=after.windows.get)
    assert best[1] == 0 and d.sections[0].blocks[best[2]].text.startswith("Graphical")
    assert enc.encoded == len(d.sections) + 2 + len(windows)  # stored: not embedded again


def test_part_vectors_choose_the_chapter_asked_about_by_meaning(store):
    """A question about structure whose words are in no title: the part whose title, sub-
    titles and first words mean the same gets its sub-outline (dense part scores)."""
    from docchat.context.outline import focus_outline, part_text, parts_of
    from docchat.context.passages import TokenCounter
    from docchat.context.relevance import relevance
    from docchat.context.selection import part_positions
    secs, k = [], 0
    for chapter, subs in [("Matrices", ["Creating", "Indexing", "Slicing"]),
                          ("Graphical Output", ["Figure windows", "Axes", "Colours"]),
                          ("Strings", ["Concatenation", "Searching", "Regexps"])]:
        for sub in subs:
            secs.append(Section(k, (chapter, sub), 2, k + 1, k + 1, "prose",
                                (Block("prose", f"About {sub.lower()} here. " * 5, k + 1),)))
            k += 1
    d = Document(path="b.pdf", sha256="book", name="b.pdf", kind="pdf", language="en",
                 pages=[Page(i + 1, "") for i in range(k)], sections=secs)
    assert [part_text(d, ei).split(":")[0] for ei in parts_of(d)] == [
        "Matrices", "Graphical Output", "Strings"]
    e = Embedder(store, Synonyms())
    e.vectors(d, store, kind="parts")
    q = "Which chapter is about drawing pictures, and what are its sections?"
    rel = relevance([d], q, embedder=e, store=store)
    best = max(rel.parts, key=rel.parts.get)
    assert best == (0, parts_of(d)[1]) and len(rel.parts) == 3
    # The sections' scores point at Strings (its words), the parts' meaning at Graphical
    # Output: the part's own meaning decides.
    lexical = [{6: 1.0, 7: 0.9, 4: 0.3}]
    counter = TokenCounter(Chars(), "chars")
    assert focus_outline([d], counter, 10_000, lexical).startswith("- b.pdf: Strings")
    focus = focus_outline([d], counter, 10_000, lexical, dense=part_positions([d], rel.parts))
    assert focus.splitlines()[0].startswith("- b.pdf: Graphical Output")


def test_a_follow_up_is_scored_with_the_turn_before_it_too():
    """"And in colour?" means little alone: with the previous user turn as context a unit
    scores the better of the question alone and the two together."""
    d = doc([("Graphical output", "Figures show your data."), ("Strings", "Text values.")])
    e = Embedder(None, Synonyms())
    alone = e.scores("And in colour?", [d], [0])
    after = e.scores("And in colour?", [d], [0], context="How do I make plots?")
    assert after[(0, 0)] > alone[(0, 0)] and after[(0, 1)] >= alone[(0, 1)]
    assert max(after, key=after.get) == (0, 0)


def test_vectors_an_upload_left_unembedded_are_computed_when_its_session_opens(tmp_path):
    """A server stopped while an upload was embedded (or an upgrade that changed a kind of
    vectors) leaves a document without some of them: warm_missing embeds the rest in the
    background, once, and then knows the document is complete."""
    import threading

    from docchat.library.store import SessionStore

    d = doc(MANUAL, name="resumed.pdf")
    db = tmp_path / "r.db"
    store = SessionStore.open(db)
    gate = threading.Event()

    class Gated(FakeEncoder):
        def encode(self, texts):
            gate.wait(10)
            return super().encode(texts)

    embedder = Embedder(encoder=Gated())
    sections = FakeEncoder().encode(embedder.texts(d, "sections"))
    store.put_embeddings(d.sha256, embedder.stored_as("sections"), sections.tobytes())
    assert not embedder.ready(d, store, "windows")

    def opener():
        return SessionStore.open(db)

    thread = embeddings.warm_missing(d, store, opener, embedder)
    assert thread is not None
    assert embeddings.warm_missing(d, store, opener, embedder) is None  # already at work
    gate.set()
    thread.join(10)
    assert all(embedder.ready(d, store, kind) for kind in embeddings.KINDS)
    assert embeddings.warm_missing(d, store, opener, embedder) is None  # nothing missing
