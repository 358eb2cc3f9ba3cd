"""The one stream lifecycle (StreamingBackend), through the echo backend."""
from __future__ import annotations

import pytest

from docchat.backends import GenerationRequest, Message
from docchat.backends.base import RateMeter, batch_size, common_prefix
from docchat.backends.echo import EchoBackend
from docchat.errors import ContextTooLong


def ask(text: str = "one two three four", **options) -> GenerationRequest:
    return GenerationRequest(messages=[Message("user", text)], **options)


def test_finish_reasons_stop_and_length():
    backend = EchoBackend()
    whole = ask(max_new_tokens=50)
    text = "".join(backend.stream(whole))
    assert text == "Echo: one two three four" and whole.stats.finish_reason == "stop"
    cut = ask(max_new_tokens=2)
    assert "".join(backend.stream(cut)) == "Echo: one"
    assert cut.stats.finish_reason == "length" and not cut.stats.stopped
    assert cut.stats.completion_tokens == 2 and cut.stats.first_token_at <= cut.stats.finished_at


def test_cancel_and_close_are_cancelled():
    backend = EchoBackend()
    request = ask(max_new_tokens=50)
    pieces = []
    for piece in backend.stream(request):
        pieces.append(piece)
        request.cancel.set()
    assert pieces == ["Echo:"] and request.stats.finish_reason == "cancelled"
    assert request.stats.stopped
    closed = ask(max_new_tokens=50)
    stream = backend.stream(closed)
    next(stream)
    stream.close()
    assert closed.stats.finish_reason == "cancelled" and closed.stats.stopped
    assert closed.stats.finished_at is not None and backend.queue.depth == 0


def test_error_in_the_source_is_error_and_frees_the_queue(monkeypatch):
    backend = EchoBackend()

    def broken(request, prepared):
        yield "a"
        raise RuntimeError("boom")

    monkeypatch.setattr(backend, "_pieces", broken)
    request = ask()
    with pytest.raises(RuntimeError, match="boom"):
        list(backend.stream(request))
    assert request.stats.finish_reason == "error" and backend.queue.depth == 0


def test_prompt_too_long_before_the_queue():
    backend = EchoBackend(context_window=10)
    with pytest.raises(ContextTooLong):
        next(backend.stream(ask("word " * 20, max_new_tokens=4)))
    assert backend.queue.depth == 0


def test_simulated_prefill_progress_and_cancel():
    backend = EchoBackend(prefill_tps=2000)
    events = []
    request = ask("word " * 300, max_new_tokens=2, on_progress=events.append)
    list(backend.stream(request))
    dones = [e.done for e in events]
    assert dones[0] == 0 and dones[-1] == request.stats.prompt_tokens and dones == sorted(dones)
    assert backend.prefill_rate() == 2000 and request.stats.prefill_ms > 0

    def stop(progress):
        if progress.done:
            cancelled.cancel.set()

    cancelled = ask("word " * 300, max_new_tokens=2, on_progress=stop)
    assert list(backend.stream(cancelled)) == []
    assert cancelled.stats.finish_reason == "cancelled" and cancelled.stats.first_token_at is None


def test_helpers():
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2 and common_prefix([], [1]) == 0
    assert batch_size(None) == 32 and batch_size(100.0) == 25
    assert batch_size(1.0) == 8 and batch_size(1e6) == 512
    meter = RateMeter()
    assert meter.rate is None
    meter.add(64, 0.5)
    assert meter.rate == 128


def test_foreground_is_busy_while_a_stream_reads_and_generates():
    """Background embedding yields to FOREGROUND: it must be busy from the prompt's reading
    to the stream's end (closed or exhausted), and idle again afterwards."""
    from docchat.backends import FOREGROUND

    backend = EchoBackend()
    seen = []
    request = ask(max_new_tokens=50, on_progress=lambda p: seen.append(FOREGROUND.busy))
    assert not FOREGROUND.busy
    stream = backend.stream(request)
    next(stream)
    assert seen and all(seen) and FOREGROUND.busy  # while reading, and between pieces
    stream.close()
    assert not FOREGROUND.busy and FOREGROUND.wait_idle(0)
    list(backend.stream(ask()))
    assert not FOREGROUND.busy


def test_foreground_busy_while_a_prefetch_warms_the_cache():
    import threading

    from docchat.backends import FOREGROUND
    from docchat.backends.base import StreamingBackend

    inside, release, seen = threading.Event(), threading.Event(), []

    class Warming(StreamingBackend):
        supports_prefetch = True

        def _prefix(self, messages):
            return messages

        def _warm(self, request, prepared, interrupted):
            seen.append(FOREGROUND.busy)
            inside.set()
            release.wait(10)

    backend = Warming()
    backend.prefetch([Message("system", "outline")])
    assert inside.wait(10)
    release.set()
    assert backend.wait_prefetch(10)
    assert seen == [True] and not FOREGROUND.busy
