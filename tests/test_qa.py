from __future__ import annotations

import threading

import pytest

from docchat.backends import Message
from docchat.backends.echo import EchoBackend
from docchat.errors import ContextTooLong
from docchat.qa import ask, resolve_preset
from ingest.document import Block, Document, Page, Section


def doc(n_pages=3, words=30) -> Document:
    pages = [Page(i + 1, f"Page {i + 1} text " + "word " * words) for i in range(n_pages)]
    sections = [Section(i, (f"{i + 1} Part",), 1, i + 1, i + 1, "prose",
                        (Block("prose", p.text, p.number),), tokens=words + 3)
                for i, p in enumerate(pages)]
    return Document(path="d.txt", sha256="0" * 64, name="d.txt", kind="text", pages=pages,
                    sections=sections, tokens=(words + 3) * n_pages, tokenizer="echo")


def test_answer_streams_and_reports_metrics():
    answer = ask([doc()], "What is on page two?", EchoBackend(), preset="raw")
    text = "".join(answer)
    assert text == answer.text and text.startswith("Echo: What is on page two?")
    assert "[p. 1]" in text  # the echo backend quotes the first page marker it was given
    assert answer.done and not answer.stopped
    m = answer.metrics
    assert m["completion_tokens"] == len(text.split()) and m["prompt_tokens"] > 0
    assert m["model"]["ttft_ms"] is not None and m["display"]["ttft_ms"] is not None
    assert answer.packed.whole and answer.backend == "echo"


def test_stop_keeps_partial_text_and_cancels_backend():
    backend = EchoBackend(reply=" ".join(f"w{i}" for i in range(200)))
    answer = ask([doc()], "q", backend, preset="raw")
    got = []
    for chunk in answer:
        got.append(chunk)
        if len(got) == 5:
            answer.stop()
    assert answer.stopped and answer.text == "".join(got)
    assert 5 <= len(got) <= 6
    assert answer.metrics["stopped"] is True
    assert answer.metrics["completion_tokens"] <= 7  # the backend stopped computing too


def test_context_too_long_raised_before_generation():
    backend = EchoBackend(context_window=60)
    with pytest.raises(ContextTooLong):
        ask([doc()], "word " * 100, backend, preset="raw")
    assert backend.queue.depth == 0


def test_preset_and_overrides_reach_the_request():
    seen = {}

    class Recording(EchoBackend):
        def stream(self, request):
            seen["max_new_tokens"] = request.max_new_tokens
            seen["temperature"] = request.temperature
            yield from super().stream(request)

    answer = ask([doc()], "q", Recording(), preset="raw",
                 overrides={"max_new_tokens": 3, "temperature": 0.7})
    assert len("".join(answer).split()) == 3
    assert seen == {"max_new_tokens": 3, "temperature": 0.7}
    assert resolve_preset("quick", {"max_new_tokens": None}).generation["max_new_tokens"] == 512


def test_history_is_sent_to_the_backend():
    sent = {}

    class Recording(EchoBackend):
        def stream(self, request):
            sent["messages"] = list(request.messages)
            yield from super().stream(request)

    history = [Message("user", "First question?"), Message("assistant", "First answer.")]
    "".join(ask([doc()], "And then?", Recording(), history=history, preset="raw"))
    roles = [m.role for m in sent["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert sent["messages"][1].content == "First question?"


def test_queue_position_reported_while_another_answer_runs():
    backend = EchoBackend(reply="a b c d e f", delay=0.05)
    first = ask([doc()], "q1", backend, preset="raw")
    it = iter(first)
    next(it)  # the first answer now holds the backend
    positions = []
    second = ask([doc()], "q2", backend, preset="raw", on_queue=positions.append)
    t = threading.Thread(target=lambda: "".join(second))
    t.start()
    rest = "".join(it)
    t.join(10)
    assert rest and second.text == "a b c d e f"
    assert positions[0] == 1 and positions[-1] == 0
    assert second.metrics["queue_ms"] > 0
