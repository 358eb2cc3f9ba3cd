"""Background answers: saved while they stream, stoppable, errors kept, one per session."""
from __future__ import annotations

import re
import threading
import time

import pytest

from docchat.answer.chat import (
    GENERIC_ERROR,
    Generation,
    Generations,
    TimedBackend,
    follow,
    history_messages,
    previous_sections,
    source_finder,
)
from docchat.answer.qa import ask
from docchat.backends import GenerationRequest, Message
from docchat.backends.echo import EchoBackend
from docchat.errors import BackendUnavailable, DocchatError
from docchat.library.store import SessionStore
from ingest.document import Document, Page

LONG = " ".join(f"word{i}" for i in range(60)) + " [p. 2]"
DOC = Document(path="d", sha256="d", name="d.txt", kind="text", id=7, sections=[],
               pages=[Page(1, "one"), Page(2, "two")])


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "chat.db"


def factory(backend, question="q"):
    def make(cancel, on_queue):
        return ask([DOC], question, backend, preset="raw", cancel=cancel, on_queue=on_queue)
    return make


def new_turn(db_path, question="q"):
    store = SessionStore.open(db_path)
    sid = store.create_session()
    store.add_turn(sid, "user", question)
    return store, sid, store.add_turn(sid, "assistant", "", status="streaming")


def run(db_path, backend, interval=0.05, sources=None, gens=None):
    store, sid, turn = new_turn(db_path)
    g = Generation(sid, turn, "q")
    gens = gens if gens is not None else Generations()
    gens.start(g, factory(backend), lambda: SessionStore.open(db_path), save_interval=interval,
               sources=sources)
    return store, g


def test_whole_answer_saved_with_metrics_and_sources(db_path):
    store, g = run(db_path, EchoBackend(reply=LONG), sources=source_finder([DOC]))
    assert g.join(10)
    turn = store.turns(g.session_id)[-1]
    assert (turn.content, turn.status) == (LONG, "done")
    assert turn.metrics["sources"] == [{"marker": "[p. 2]", "doc_id": 7, "doc_name": "d.txt",
                                        "page": 2, "label": "2"}]
    assert turn.metrics["app"]["first_chunk_ms"] is not None


def test_text_is_saved_while_streaming(db_path):
    store, g = run(db_path, EchoBackend(reply=LONG, delay=0.02), interval=0.05)
    seen = []
    while not g.done:
        t = store.turns(g.session_id)[-1]
        if t.status == "streaming" and t.content:
            seen.append(t.content)
        time.sleep(0.03)
    assert len(set(seen)) >= 3  # several growing snapshots, each a prefix of the answer
    assert all(LONG.startswith(s) for s in seen)
    assert store.turns(g.session_id)[-1].status == "done"


def test_stop_keeps_partial_text_marked_stopped(db_path):
    store, g = run(db_path, EchoBackend(reply=LONG, delay=0.02))
    for snapshot in follow(g, poll=0.01):
        if len(snapshot.text) > 20:
            g.stop()
    turn = store.turns(g.session_id)[-1]
    assert turn.status == "stopped"
    assert 20 < len(turn.content) < len(LONG) and LONG.startswith(turn.content)
    assert turn.content == g.text


def test_backend_error_saved_and_shown(db_path):
    def broken(cancel, on_queue):
        raise BackendUnavailable("No server at http://x; is it running?")
    store, sid, turn = new_turn(db_path)
    g = Generations().start(Generation(sid, turn, "q"), broken,
                            lambda: SessionStore.open(db_path))
    assert g.join(5)
    assert g.status == "error" and g.error == "No server at http://x; is it running?"
    saved = store.turns(sid)[-1]
    assert saved.status == "error" and saved.metrics["error"] == g.error


def test_unexpected_error_logged_and_generic(db_path, caplog):
    def bug(cancel, on_queue):
        raise ZeroDivisionError("oops")
    store, sid, turn = new_turn(db_path)
    g = Generations().start(Generation(sid, turn, "q"), bug, lambda: SessionStore.open(db_path))
    assert g.join(5)
    assert g.error == GENERIC_ERROR and "ZeroDivisionError" in caplog.text


def test_one_answer_per_session_and_registry_empties(db_path):
    gens = Generations()
    store, g = run(db_path, EchoBackend(reply=LONG, delay=0.01), gens=gens)
    with pytest.raises(DocchatError, match="Stop"):
        gens.start(Generation(g.session_id, 99, "again"), factory(EchoBackend()),
                   lambda: SessionStore.open(db_path))
    assert gens.get(g.session_id) is g
    g.join(10)
    deadline = time.time() + 5
    while len(gens) and time.time() < deadline:
        time.sleep(0.01)
    assert gens.get(g.session_id) is None


def test_second_session_learns_its_queue_position(db_path):
    backend, gens = EchoBackend(reply=LONG, delay=0.01), Generations()
    _, first = run(db_path, backend, gens=gens)
    while not first.text:
        time.sleep(0.005)
    _, second = run(db_path, backend, gens=gens)
    positions = []
    for snap in follow(second, poll=0.005):
        positions.append(snap.ahead)
    assert 1 in positions and second.status == "done"


def test_timed_backend_records_backend_ttft():
    g = Generation("s", 1, "q")
    timed = TimedBackend(EchoBackend(reply="a b c", delay=0.01), g)
    assert timed.context_window == 8192  # everything else passes through
    req = GenerationRequest(messages=[Message("user", "q")])
    assert "".join(timed.stream(req)) == "a b c"
    assert g.backend_ttft_ms is not None and g.backend_ttft_ms >= 5


def test_history_leaves_out_errors_and_empty_answers():
    class T:
        def __init__(self, role, content, status="done"):
            self.role, self.content, self.status = role, content, status
    turns = [T("user", "a"), T("assistant", "b", "stopped"), T("user", "c"),
             T("assistant", "", "error"), T("assistant", "x", "error")]
    assert history_messages(turns) == [Message("user", "a"), Message("assistant", "b"),
                                       Message("user", "c")]


def test_deleted_session_while_answering_is_not_an_error(db_path):
    store, g = run(db_path, EchoBackend(reply=LONG, delay=0.01), interval=0.02)
    while len(g.text) < 10:
        time.sleep(0.005)
    store.delete_session(g.session_id)
    assert g.join(10) and g.status == "done" and store.turns(g.session_id) == []


def test_follow_ends_when_done(db_path):
    _, g = run(db_path, EchoBackend(reply="one two"))
    snaps = list(follow(g, poll=0.01))
    assert snaps[-1].done and snaps[-1].text == "one two"
    assert threading.active_count() < 50


def test_generation_carries_evidence_then_progress_before_the_text(db_path):
    from ingest.document import Block, Section

    text = "The default port is 8731. Nothing else here."
    doc = Document(path="d", sha256="d", name="d.txt", kind="text", id=7,
                   pages=[Page(1, text)],
                   sections=[Section(0, ("Ports",), 1, 1, 1, "prose", (Block("prose", text, 1),))])
    backend = EchoBackend(reply="one two three", prefill_tps=2000)
    store, sid, turn = new_turn(db_path)
    g = Generation(sid, turn, "q")
    seen = []

    def make(cancel, on_queue):
        return ask([doc], "Which port is the default?", backend, preset="raw", cancel=cancel,
                   on_queue=on_queue)

    Generations().start(g, make, lambda: SessionStore.open(db_path))
    for state in follow(g, poll=0.01):
        seen.append((bool(state.evidence), state.progress, state.text))
    assert g.join(10)
    assert seen[-1][2] == "one two three"
    first_text = next(i for i, (_, _, text) in enumerate(seen) if text)
    assert all(ev for ev, _, _ in seen[first_text:])
    reading = [p for _, p, text in seen[:first_text] if p is not None]
    done = [p.done for p in reading]
    assert done and done == sorted(done)  # the reading progress, rising, before the first word
    assert g.progress.done == g.progress.total
    assert g.evidence[0]["sentences"][0]["text"] == "The default port is 8731."
    saved = store.turns(sid)[-1].metrics
    assert saved["evidence"] == g.evidence and saved["sections"] == [[7, 0]]
    assert saved["app"]["evidence_ms"] <= saved["app"]["first_chunk_ms"]


def test_stop_while_reading_saves_at_once_and_frees_the_backend(db_path):
    backend = EchoBackend(reply=LONG, prefill_tps=50)  # seconds of reading
    store, g = run(db_path, backend)
    wait = time.time() + 10
    while g.progress is None and time.time() < wait:
        time.sleep(0.01)
    g.stop()
    assert g.join(2)  # no thread held it up
    assert store.turns(g.session_id)[-1].status == "stopped" and g.text == ""
    assert backend.queue.depth == 0


def test_previous_sections_come_from_the_last_answer():
    class T:
        def __init__(self, role, status="done", metrics=None):
            self.role, self.status, self.metrics, self.content = role, status, metrics, "x"

    turns = [T("user"), T("assistant", metrics={"sections": [[7, 1], [7, 2]]}), T("user"),
             T("assistant", "error", {"sections": [[7, 9]]}), T("user")]
    assert previous_sections(turns) == [(7, 1), (7, 2)]
    assert previous_sections([T("user")]) is None


def test_the_statement_checks_are_saved_with_the_answer(db_path):
    from docchat.answer.chat import mark_finder
    from docchat.library.uploads import ingest_upload

    store = SessionStore.open(db_path)
    doc = ingest_upload(store, "notes.md", b"# Notes\n\nThe lid is **blue**.\n",
                        db_path.parent / "uploads", 5).document
    sid = store.create_session()
    store.add_turn(sid, "user", "What colour is the lid?")
    turn = store.add_turn(sid, "assistant", "", status="streaming")
    g = Generation(sid, turn, "What colour is the lid?")
    reply = "The lid is blue. It was made on the Moon in 1850."

    def make(cancel, on_queue):
        return ask([doc], g.question, EchoBackend(reply=reply), preset="raw", cancel=cancel,
                   on_queue=on_queue)

    Generations().start(g, make, lambda: SessionStore.open(db_path), marks=mark_finder([doc]))
    assert g.join(10)
    checks = store.turns(sid)[-1].metrics["checks"]
    assert [s["status"] for s in checks["statements"]] == ["supported", "not_found"]
    assert checks["supported"] == 1 and checks["total"] == 2
    assert checks["statements"][0]["document"] == "notes.md"


def test_a_failing_checker_still_saves_the_answer(db_path, caplog):
    def broken(text, packed):
        raise ValueError("checker bug")

    store, sid, turn = new_turn(db_path)
    g = Generation(sid, turn, "q")
    Generations().start(g, factory(EchoBackend(reply="fine")), lambda: SessionStore.open(db_path),
                        marks=broken)
    assert g.join(10)
    saved = store.turns(sid)[-1]
    assert saved.status == "done" and saved.content == "fine" and "checks" not in saved.metrics
    assert "checker bug" in caplog.text


def test_finished_length_ends_at_the_last_finished_sentence():
    from docchat.answer.chat import finished_length

    assert finished_length("The port is 8731") == 0
    assert finished_length("The port is 8731. It") == len("The port is 8731.")
    assert finished_length("The port is 8731 [p. 1]. It") == len("The port is 8731 [p. 1].")
    assert finished_length("Version 3.5 is") == 0  # a decimal point ends nothing
    assert finished_length("端口是 8731。它") == len("端口是 8731。")
    assert finished_length("- one\n- tw") == len("- one\n")
    # A list item's number and an abbreviation end no sentence.
    assert finished_length("Steps:\n1. Copy") == len("Steps:\n")
    assert finished_length("It is red. Use a tool, e.g. sudo") == len("It is red.")


class Held:
    """An answer that streams its first part, then waits for the test before the rest (so
    the test sees the answer mid-stream without timing anything)."""

    def __init__(self, answer, first: str, rest: str, release: threading.Event) -> None:
        self._answer, self._first, self._rest, self._release = answer, first, rest, release
        self.packed, self.metrics, self.stopped, self.evidence = answer.packed, {}, False, None

    def __iter__(self):
        yield from re.findall(r"\S+\s*", self._first)  # word pieces, as a backend streams
        assert self._release.wait(20)
        yield from re.findall(r"\s*\S+", self._rest)

    def stop(self) -> None:
        self.stopped = True


def test_the_streamed_answer_is_checked_sentence_by_sentence_before_it_ends(db_path):
    from docchat.answer.chat import mark_finder
    from docchat.library.uploads import ingest_upload

    store = SessionStore.open(db_path)
    doc = ingest_upload(store, "notes.md", b"# Notes\n\nThe lid is **blue**. The box weighs "
                        b"12 kg.\n", db_path.parent / "uploads", 5).document
    sid = store.create_session()
    store.add_turn(sid, "user", "What colour is the lid?")
    turn = store.add_turn(sid, "assistant", "", status="streaming")
    g = Generation(sid, turn, "What colour is the lid?")
    first = "The lid is blue. It was made on the Moon in 1850. The box"
    rest = " weighs 99 kg."
    release = threading.Event()

    def make(cancel, on_queue):
        a = ask([doc], g.question, EchoBackend(reply=first), preset="raw", cancel=cancel,
                on_queue=on_queue)
        return Held(a, first, rest, release)

    Generations().start(g, make, lambda: SessionStore.open(db_path), marks=mark_finder([doc]))
    live = factories_wait(lambda: g.live_check if g.checked and len(
        g.live_check["statements"]) == 2 else None)
    # Mid-stream: the two finished sentences are checked, the unfinished one is not yet.
    assert not g.done and g.checked == len("The lid is blue. It was made on the Moon in 1850.")
    assert [s["status"] for s in live["statements"]] == ["supported", "not_found"]
    release.set()
    assert g.join(10)
    final = store.turns(sid)[-1].metrics["checks"]  # the end's check is the one saved
    assert [s["status"] for s in final["statements"]] == ["supported", "not_found", "not_found"]


def factories_wait(predicate, timeout: float = 20.0):
    import factories

    return factories.wait_for(predicate, timeout, poll=0.01)


def test_an_answer_that_says_the_previous_one_again_is_noted(db_path):
    said = "The default port is 8731, and the server listens on it for every client [p. 2]."
    store, sid, turn = new_turn(db_path)
    g = Generation(sid, turn, "How do I change it?")
    g.previous = said
    Generations().start(g, factory(EchoBackend(reply=said)), lambda: SessionStore.open(db_path))
    assert g.join(10)
    assert store.turns(sid)[-1].metrics["repeats_previous"]
    store, sid, turn = new_turn(db_path)
    g = Generation(sid, turn, "How do I change it?")
    g.previous = said
    Generations().start(g, factory(EchoBackend(reply="Set the port option in the config file "
                                                     "and restart the server [p. 3].")),
                        lambda: SessionStore.open(db_path))
    assert g.join(10)
    assert "repeats_previous" not in store.turns(sid)[-1].metrics


def test_an_answer_that_echoes_the_instruction_is_noted(db_path):
    store, sid, turn = new_turn(db_path)
    g = Generation(sid, turn, "端口是多少？")
    Generations().start(g, factory(EchoBackend(reply="请用中文回答。")),
                        lambda: SessionStore.open(db_path))
    assert g.join(10)
    metrics = store.turns(sid)[-1].metrics
    assert metrics["echo"] and metrics["question_language"] == "zh"
    store, sid, turn = new_turn(db_path)
    g = Generation(sid, turn, "What is the port?")
    Generations().start(g, factory(EchoBackend(reply="The port is 8731 [p. 2].")),
                        lambda: SessionStore.open(db_path))
    assert g.join(10)
    assert "echo" not in store.turns(sid)[-1].metrics
