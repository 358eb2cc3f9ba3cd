"""The one stream lifecycle (StreamingBackend), through the echo backend."""
from __future__ import annotations

import pytest

from docchat.backends import GenerationRequest, Message
from docchat.backends.base import BATCH_SECONDS, RateMeter, batch_size, common_prefix
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
    assert batch_size(None) == 32 and batch_size(100.0) == int(100 * BATCH_SECONDS)
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


def test_a_prefetch_queued_behind_an_answer_gives_way_to_a_question_waiting_after_it():
    """A read-ahead queued behind an answer must not run once the next question waits: it
    would replace that question's cache with the older conversation."""
    import threading
    import time

    from docchat.backends.base import StreamingBackend

    warmed = []

    class Warming(EchoBackend):
        supports_prefetch = True
        prefetch = StreamingBackend.prefetch  # the real one (echo's only records)

        def _prefix(self, messages):
            return messages

        def _warm(self, request, prepared, interrupted):
            warmed.append(prepared)

    backend = Warming(reply="one two three four")
    first = backend.stream(ask(max_new_tokens=4))
    next(first)  # holds the backend's turn
    backend.prefetch([Message("user", "read ahead")])
    second = threading.Thread(target=lambda: list(backend.stream(ask(max_new_tokens=2))))
    second.start()
    for _ in range(200):
        if backend.queue.depth >= 3:
            break
        time.sleep(0.01)
    first.close()
    second.join(10)
    assert backend.wait_prefetch(10) and warmed == []
    backend.prefetch([Message("user", "read ahead")])  # with nothing after it: read
    assert backend.wait_prefetch(10) and warmed == [[Message("user", "read ahead")]]


def test_rate_meter_with_a_span_budgets_long_prompts_at_their_own_speed():
    """A 64-token probe at 137 tok/s does not promise 15 s x 137 = 2,055 tokens: with the
    model's attention span each later token costs more, and a prompt as long as a
    measured one reads in the time it took (2,011 tokens in 18.4 s)."""
    plain, spanned = RateMeter(), RateMeter(span=3072)
    for meter in (plain, spanned):
        meter.add(64, 64 / 137)
    assert plain.tokens_in(15) == 2055
    assert 1500 < spanned.tokens_in(15) < 1750
    measured = RateMeter(span=3072)
    measured.add(2011, 18.4)
    assert measured.tokens_in(18.4) == pytest.approx(2011, abs=2)
    later = RateMeter(span=3072)  # the same tokens read after a 1,000-token reused prefix
    later.add(1011, 18.4 * 1011 * (1 + 1505 / 3072) / (2011 * (1 + 1005.5 / 3072)), 1000)
    assert later.tokens_in(18.4) == pytest.approx(2011, abs=2)
    assert RateMeter(span=3072).tokens_in(15) is None


def test_reading_eta_blends_this_prompts_rate_with_the_measured_one():
    """The ETA shown while a prompt is read: one fast first batch (100 tokens in 0.25 s
    where 100 tok/s was measured before) must not promise 2.25 s for the 900 left; after
    many seconds of reading, this prompt's own rate decides."""
    import time

    from docchat.backends.base import StreamingBackend

    backend = StreamingBackend()
    backend.rate_meter.add(100, 1.0)
    seen = []
    request = ask(on_progress=seen.append)
    backend._progress(request, 100, 1000, 0, time.perf_counter() - 0.25)
    assert seen[-1].eta_s == pytest.approx(900 / (200 / 1.25), rel=0.02)  # not 2.25 s
    backend._progress(request, 500, 1000, 0, time.perf_counter() - 20.0)
    assert seen[-1].eta_s == pytest.approx(500 / (600 / 21), rel=0.02)  # ~25 tok/s now
    spanned = RateMeter(span=1000)
    # Halfway through at a steady pace, the second half (later, dearer tokens) takes longer.
    assert spanned.seconds_left(0, 1000, 2000, 10.0) > 10.0 * 1.5
