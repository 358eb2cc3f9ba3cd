"""The loop detector on the stream: a looping backend is stopped soon after the loop
starts; real document text (prose, lists, tables, code, Chinese) is never stopped."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from factories import Looping

from docchat.backends import GenerationRequest, Message
from docchat.backends.echo import EchoBackend
from docchat.backends.repetition import NOTE, RepetitionDetector, cut_text, note

DATA = Path(__file__).resolve().parents[1] / "data"
PROSE = ("The compiler records a trace of the hot loop and compiles it to machine code. "
         "Guards check that the types seen while recording still hold. ")
LOOP = "The system handles nested loops by recording an inner trace first. "
LOOP_ZH = "系统通过先记录内层循环的轨迹来处理嵌套循环。"


def ask(max_new_tokens: int = 2000) -> GenerationRequest:
    return GenerationRequest(messages=[Message("user", "How are nested loops handled?")],
                             max_new_tokens=max_new_tokens)


def feed(text: str) -> RepetitionDetector:
    """Text through a detector in word-sized pieces, as a backend streams it."""
    detector = RepetitionDetector()
    for piece in re.findall(r"\s*\S+|\s+", text):
        if detector.feed(piece):
            return detector
    detector.finish()
    return detector


@pytest.mark.parametrize("loop", [LOOP, "It loops. ", LOOP_ZH, "- Item: see the table.\n"])
def test_a_looping_backend_stops_within_64_tokens_of_the_loop(loop):
    backend = Looping(PROSE, loop)
    request = ask()
    text = "".join(backend.stream(request))
    stats = request.stats
    assert stats.finish_reason == "repetition" and not stats.stopped
    assert stats.completion_tokens - backend.loop_start <= 64
    kept = text[: stats.repetition_at]
    # Everything before the loop, and the loop said once: never beyond one repeat.
    assert kept.startswith(PROSE.strip()) and kept.count(loop.strip()) == 1
    assert cut_text(text, stats.repetition_at).endswith(note(kept))


def test_a_loop_with_other_sentences_between_is_cut_at_its_second_saying():
    a = "The authors measured a large speedup on the benchmark programs. "
    text = (PROSE + a + "They used a tracing compiler for it. " + a
            + "The gains differ between the programs. " + a + "And more follows. ")
    detector = feed(text)
    assert detector.cut is not None
    # Stopped at the third saying, cut at the second: said once, and what followed it kept.
    kept = detector.kept()
    assert kept.count(a.strip()) == 1 and kept.endswith("They used a tracing compiler for it.")


def test_the_stream_yields_nothing_after_a_loop_inside_one_piece(monkeypatch):
    backend = EchoBackend()

    def big_pieces(request, prepared):  # a server may send many tokens in one chunk
        request.stats.completion_tokens = 2
        yield PROSE
        yield LOOP * 6 + "The end."

    monkeypatch.setattr(backend, "_pieces", big_pieces)
    request = ask()
    text = "".join(backend.stream(request))
    assert request.stats.finish_reason == "repetition"
    assert text == PROSE + LOOP and request.stats.repetition_at == len(text)

    def loop_begun_before(request, prepared):  # the cut lies in a piece already streamed
        yield PROSE + LOOP + LOOP
        yield LOOP * 6 + "The end. " * 40

    monkeypatch.setattr(backend, "_pieces", loop_begun_before)
    request = ask()
    text = "".join(backend.stream(request))
    assert text == PROSE + LOOP + LOOP and request.stats.repetition_at == len(PROSE + LOOP)


def test_a_stream_without_a_loop_is_untouched_and_the_policy_can_be_turned_off():
    # A passage said twice is repetition real text has (a heading restated), not a loop.
    backend = EchoBackend(reply=PROSE + PROSE)
    request = ask()
    assert "".join(backend.stream(request)) == PROSE * 2
    assert request.stats.finish_reason == "stop" and request.stats.repetition_at is None
    looping = Looping(PROSE, LOOP)
    looping.repetition_policy = None
    request = ask(300)
    "".join(looping.stream(request))
    assert request.stats.finish_reason == "length"


THINGS = ["configuration file", "log folder", "spool queue", "cron table", "mail relay",
          "font cache", "key ring", "swap area", "boot loader", "time zone"]
ZH_THINGS = ["配置文件", "日志目录", "打印队列", "定时任务", "邮件转发", "字体缓存", "密钥环",
             "交换分区", "引导程序", "时区"]


def test_lists_with_repeated_structure_are_not_loops():
    """Items that share their structure and differ in what they name (as real lists do)."""
    steps = "".join(f"- Step {i}: open the {THINGS[i % 10]} and check the settings.\n"
                    for i in range(1, 30))
    table = "| Name | Value | Unit |\n|---|---|---|\n" + "".join(
        f"| row {i} | 0 | 0 |\n" for i in range(40))
    zeros = "| 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |\n" * 12
    numbered = "".join(f"{i}. 第{i}步：打开{ZH_THINGS[i % 10]}并检查设置。\n" for i in range(1, 30))
    code = "```python\n" + "".join(f"    x{i} = compute(a, b, c, d)\n    check(x{i})\n"
                                   for i in range(20)) + "```\n"
    for text in (steps, table, zeros, numbered, code):
        assert feed(text).cut is None, text[:60]


def test_items_that_differ_only_by_their_number_are_a_loop():
    """SmolLM2 on a 193-page manual (2026-12-05): "6.2: Template files and their fields
    [p. 50]", then 6.3, 6.4, ... to the token limit. The words repeat but for the numbers:
    cut after the first saying (before, it ran on: no unit repeated word for word)."""
    head = "1.1 Scope\n\nPackage maintainer scripts and installation procedure [p. 49]\n"
    loop = head + "".join(f"6.{k}: Template files and their fields [p. 50]\n"
                          for k in range(2, 20))
    d = feed(loop)
    assert d.cut is not None
    assert d.kept().count("Template files") == 1
    zh = "".join(f"{i}. 第{i}步：打开配置文件并检查设置。\n" for i in range(1, 30))
    assert feed(zh).cut is not None


def _document_texts() -> list[tuple[str, str]]:
    from ingest import load_document

    names = ["apssamp.pdf", "form_dd0293.pdf", "code-policy.pdf", "table-deb-ref.pdf",
             "headers.pdf", "linn.txt", "scan-zh.txt", "summarize/Apache-2.0.txt",
             "summarize/BSD.txt", "summarize/GPL-3.txt", "summarize/vimtutor-zh.txt"]
    out = []
    for name in names:
        doc = load_document(DATA / name)
        out += [(f"{name} {s.heading}", s.text) for s in doc.sections if s.text.strip()]
    return out


def test_no_false_stop_on_real_document_text():
    texts = _document_texts()
    assert len(texts) > 50
    stopped = [(where, feed(text).kept()[-80:]) for where, text in texts
               if feed(text).cut is not None]
    assert not stopped


def test_the_note_is_written_once_in_english_and_chinese():
    assert note("en") == NOTE["en"] and note("zh") == NOTE["zh"]
    assert note("这是一个中文回答。") == NOTE["zh"] and note("An answer.") == NOTE["en"]
    assert cut_text("abc", None) == "abc"
    assert cut_text("Kept. Loop. Loop.", 6) == f"Kept.\n\n{NOTE['en']}"


def test_a_loop_in_a_numbered_list_with_changing_citations_is_cut():
    """SmolLM2 on debian-policy.pdf (a real answer, shortened): each item is said again
    under a new number and with the next page cited, so the tail is never periodic; the
    numbers and citations between the sayings are not sentences of the window."""
    a = ("A verbatim copy of its distribution license must contain a semicolon, too; see "
         "Section for details on how to check if it is sufficient by using grep -Eir (see "
         "Section).")
    b = ("The filename containing the package's copyright information should be enclosed "
         "with double quotes and placed in parentheses: `[p. {}]`")
    text = "A package's copyright file must contain the following information:\n\n" + "".join(
        f"{2 * i + 1}. {a}\n{2 * i + 2}. {b.format(103 + i)}\n\n" for i in range(8))
    detector = feed(text)
    assert detector.cut is not None
    kept = detector.kept()
    assert kept.count("see Section for details") == 1 and len(kept) < len(text) / 2


def test_a_cycle_of_two_list_items_said_a_third_time_is_cut():
    """SmolLM2 on debian-policy.pdf, "What does the chapter on the Debian archive cover?" (a
    real answer, shortened): two items said again and again under new numbers, with a short
    fragment after each second item; neither item is said four times before the answer runs
    out of tokens, so only the cycle (A B A B A) shows the loop. The cut keeps one saying of
    each, and no dangling list number."""
    a = ("The section where you can find more information about building and installing "
         "Linux distributions [makes it easier for people who want to build their own].")
    b = ("The sections that cover how to install a new package, which is covered by the "
         "chapter on Debian-Archive [nope! 10 times in one]")
    text = ("The chapter on the Debian archive covers a wide range of topics, including:\n"
            "1. The package that contains all the information about packages [p. 7]\n"
            + "".join(f"{2 * i + 2}. {a}\n{2 * i + 3}. {b}\n" for i in range(3))
            + "The chapters covering all these topics are not included here.\n")
    detector = feed(text)
    assert detector.cut is not None
    kept = detector.kept()
    assert kept.count(a) == 1 and kept.count(b) == 1 and kept.endswith(b)
    # Real text that says one sentence between others twice, or a refrain in two places of
    # a longer text, is not a cycle.
    twice = f"1. {a}\n2. {b}\n3. {a}\n4. {b}\n5. Something else entirely follows here now.\n"
    assert feed(twice).cut is None


def test_a_cycle_of_list_items_ended_by_semicolons_and_line_breaks_is_cut():
    """SmolLM2 on debian-policy.pdf, "What does the chapter on the Debian archive cover?" (a
    real answer, shortened): three items, the first two ended by semicolons and the third
    by a line break, said again and again under new numbers, and never with a full stop;
    the answer ran to its 512-token limit. The cut keeps one saying of each."""
    a = "The chapter on the deabi-deb and its contents"
    b = "The section about the Debiase Package (DIP)"
    c = ("The sections related to the Debit Packages – this includes the DPP_DEB file format "
         "that is used by packages like dpkg, which has a different version number than the "
         "original package itself")
    text = ("The chapter on the Debian archive covers a wide range of topics, including:\n\n"
            + f"{a}; 2. {b}; 3. {c}\n"
            + "".join(f"{a}; {3 * i + 5}. {b}; {3 * i + 6}. {c}\n" for i in range(5)))
    detector = feed(text)
    assert detector.cut is not None
    kept = detector.kept()
    assert kept.count(c) <= 2 and len(kept) < len(text) / 2
    # A list of different items, each ended by a semicolon or a line break, is not a loop.
    items = "".join(f"{i}. The {w} package provides the {w} command and its manual pages "
                    f"for the users of the system and its administrators;\n"
                    for i, w in enumerate(["tar", "gzip", "bzip2", "xz", "zstd", "lzma"]))
    assert feed(items).cut is None

