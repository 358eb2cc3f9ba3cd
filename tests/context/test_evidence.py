"""Evidence first: the packed sections' sentences that best match the question."""
from __future__ import annotations

from docchat.context.evidence import (
    Evidence,
    find_evidence,
    from_dicts,
    split_sentences,
    to_dicts,
)
from docchat.ui.render import evidence_markdown
from ingest.document import Block, Document, Page, Section


def doc(sections: list[tuple[str, str, int]], doc_id=3, name="manual.pdf") -> Document:
    pages = [Page(n, f"page {n}", label=f"{n + 10}") for n in range(1, 6)]
    secs = [Section(i, ("Manual", heading), 2, page, page, "prose",
                    tuple(Block("prose", para, page) for para in text.split("\n\n")))
            for i, (heading, text, page) in enumerate(sections)]
    return Document(path=name, sha256="x", name=name, kind="pdf", pages=pages, sections=secs,
                    id=doc_id)


MANUAL = doc([
    ("Installing", "Run the installer. It copies files to the disk.\n\nReboot afterwards.", 1),
    ("Network ports", "The server listens on port 8731 by default. Change the port in "
                      "settings.ini if another program uses it. Firewalls must allow it.", 2),
    ("Warranty", "The warranty lasts two years. It does not cover water damage.", 3),
    ("Vectors", "Use c() to create a vector. Assign it to a name with <- as in x <- c(1, 2).", 4),
])


def test_best_sentences_of_the_chosen_sections_first():
    chosen = [(3, 0), (3, 1), (3, 2)]  # the packer's (doc key, section index) pairs
    found = find_evidence([MANUAL], chosen, "Which port does the server listen on?")
    assert [e.heading for e in found] == ["Manual > Network ports"]
    best = found[0]
    assert best.doc_name == "manual.pdf" and best.pages == "12"  # printed page label
    assert best.sentences[0].text == "The server listens on port 8731 by default."
    assert all("port" in s.text.lower() for s in best.sentences)
    # Only the sections that were packed: "Vectors" (section 3) was not.
    assert not find_evidence([MANUAL], chosen, "How do I create a vector?")
    assert find_evidence([MANUAL], chosen + [(3, 3)], "How do I create a vector?")[0].section == 3


def test_sections_ranked_by_match_and_limited():
    found = find_evidence([MANUAL], [(3, i) for i in range(4)],
                          "port warranty installer vector", max_sections=2, per_section=1)
    assert len(found) == 2 and all(len(e.sentences) == 1 for e in found)
    assert found[0].score >= found[1].score


def test_no_content_words_no_evidence():
    assert find_evidence([MANUAL], [(3, 1)], "what is it?") == []


def test_chinese_question_matches_chinese_sentences():
    zh = doc([("网络", "服务器默认监听端口 8731。如果端口被占用，请在配置文件中修改。"
                       "防火墙必须放行。", 1),
              ("保修", "保修期为两年。进水损坏不在保修范围内。", 2)], doc_id=None, name="手册.txt")
    found = find_evidence([zh], [("手册.txt", 0), ("手册.txt", 1)], "服务器默认使用哪个端口？")
    assert found[0].heading == "Manual > 网络"
    assert found[0].sentences[0].text.startswith("服务器默认监听端口")


def test_split_sentences_english_and_chinese():
    assert split_sentences("One is here. Two is there! 三在这里。四呢？") == [
        "One is here.", "Two is there!", "三在这里。", "四呢？"]
    assert split_sentences("e.g. this stays whole") == ["e.g. this stays whole"]


def test_round_trip_and_markdown_shows_text_as_written():
    found = find_evidence([MANUAL], [(3, 3)], "How do I assign a vector to a name?")
    again = from_dicts(to_dicts(found))
    assert again == found and isinstance(again[0], Evidence)
    md = evidence_markdown(to_dicts(found))
    assert "**manual.pdf · Manual &gt; Vectors** · p. 14" in md
    assert "&lt;-" in md and "<-" not in md  # HTML-like text shown, never interpreted
    assert "[p. 14]" in md


def test_cross_language_question_finds_translated_terms():
    zh = doc([("网络", "服务器默认监听端口 8731。防火墙必须放行。", 1)], doc_id=5, name="手册.txt")
    zh.language = "zh"
    found = find_evidence([zh], [(5, 0)], "Which port does the server use?")
    assert found and "端口" in found[0].sentences[0].text


def paper(blocks: list[tuple[str, str, int]], heading: str = "Results") -> Document:
    """A PDF-like document: one section of (kind, text, page) blocks on 12 pages."""
    pages = [Page(n, f"page {n}") for n in range(1, 13)]
    sec = Section(0, (heading,), 1, blocks[0][2], blocks[-1][2], "prose",
                  tuple(Block(kind, text, page) for kind, text, page in blocks))
    return Document(path="p.pdf", sha256="y", name="p.pdf", kind="pdf", pages=pages,
                    sections=[sec], id=9)


def shown(doc: Document, question: str) -> list:
    return [s for e in find_evidence([doc], [(9, 0)], question) for s in e.sentences]


def test_sentences_not_cut_at_line_or_page_breaks():
    doc = paper([("prose", "Tracing has a cost. We measured less than a\n1% increase in runtime "
                           "for the tracing monitor", 9),
                 ("prose", "on the SunSpider benchmarks.", 10)])
    first = shown(doc, "How much does tracing increase runtime?")[0]
    assert first.text == ("We measured less than a 1% increase in runtime for the tracing "
                          "monitor on the SunSpider benchmarks.")
    assert (first.page, first.number) == ("9", 9)
    assert split_sentences("less than a\n1% increase.") == ["less than a\n1% increase."]


def test_boilerplate_ranks_down():
    doc = paper([("prose", "The U.S. Government is authorized to reproduce and distribute "
                           "reprints of this tracing paper notwithstanding any copyright "
                           "notation. Keywords: tracing JIT, loops, reach, speedups.", 1),
                 ("prose", "Our tracing JIT reaches speedups on loops.", 2)])
    assert shown(doc, "What does the tracing JIT reach on loops, and tracing speedups?")[
        0].text == "Our tracing JIT reaches speedups on loops."
    # Asked about the notice itself, it is not held down.
    assert "copyright" in shown(doc, "Who may reproduce reprints despite the copyright?")[0].text


def test_how_much_question_prefers_a_sentence_with_a_number_and_best_comes_first():
    doc = paper([("prose", "The authors measure speedups on benchmark programs with a "
                           "profiler. They measured speedups of 10x on certain benchmark "
                           "programs.", 3)])
    first = shown(doc, "What speedups did the authors measure on benchmark programs?")[0]
    assert first.text == "They measured speedups of 10x on certain benchmark programs."
    # Not a how-much question: the sentence with more of its words comes first.
    assert shown(doc, "Do the authors measure speedups on benchmark programs?")[0].text == (
        "The authors measure speedups on benchmark programs with a profiler.")


def test_the_sentence_of_the_window_that_means_the_question_comes_first(monkeypatch):
    """Two sentences hold the question's one word alike; the window whose vector (packing
    computed it: the default embedder has it at hand) means what is asked ranks its sentence
    first. Without window vectors: reading order."""
    import re

    import numpy as np

    from docchat.context import embeddings

    same = {"lasts": "duration", "long": "duration", "years": "duration"}

    class Meaning:
        def encode(self, texts):
            out = np.zeros((len(texts), 384), dtype=np.float32)
            for i, t in enumerate(texts):
                for w in re.findall(r"[a-z]+", t.lower()):
                    out[i, sum(map(ord, same.get(w, w))) % 384] += 1.0
            return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    filler = " ".join(f"Filler sentence number {k} about the box." for k in range(20))
    manual = doc([("Warranty", f"The warranty card is in the box. {filler}\n\n"
                               "The warranty lasts two years.", 3)])
    question = "Is my warranty protection long?"
    plain = find_evidence([manual], [(3, 0)], question)
    assert plain[0].sentences[0].text == "The warranty card is in the box."
    embedder = embeddings.Embedder(encoder=Meaning())
    monkeypatch.setattr(embeddings, "DEFAULT", embedder)
    embedder.vectors(manual, kind="windows")
    assert len(embedder.units(manual, "windows")) == 2
    found = find_evidence([manual], [(3, 0)], question)
    assert found[0].sentences[0].text == "The warranty lasts two years."


def test_chinese_function_words_bring_no_translated_noise():
    """由 ("by", "from") is grammar, not topic: its dictionary senses (follow, because, due)
    must not outrank the section a Chinese question asks about in an English manual."""
    from docchat.context.evidence import query_terms

    terms = query_terms("软件包的版本号由哪几部分组成？")
    assert "version" in terms and not {"follow", "becaus", "due", "由", "哪几"} & set(terms)
    manual = doc([
        ("Procedures", "Follow these steps because the due dates are fixed by the board.", 1),
        ("Version", "A version number consists of three parts: epoch, upstream version and "
                    "revision.", 2),
    ], doc_id=7)
    found = find_evidence([manual], [(7, 0), (7, 1)], "软件包的版本号由哪几部分组成？")
    assert found and found[0].heading.endswith("Version")
