"""Pacer tests: every wait goes through an injected fake clock and sleep; nothing really sleeps."""

from __future__ import annotations

import random
import statistics
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docchat.answer.pacing import (
    _BURST_SPAN,
    _CAUGHT_UP,
    _NUDGE_MAX,
    _NUDGE_MIN,
    _RESERVE_DEVS,
    _RESERVE_GAIN,
    CatchUp,
    GapEstimate,
    Pacer,
    PacingConfig,
    SmoothRate,
    reserve_nudge,
    split_words,
)
from docchat.answer.presets import paced
from docchat.backends import GenerationRequest, Message
from docchat.backends.echo import EchoBackend
from docchat.errors import BackendError, DocchatError

EVEN = dict(min_delay=0.1, max_delay=0.3, rhythm=1.0, max_lag=0)


class FakeClock:
    """A clock that only moves when someone sleeps on it (or a source spends time)."""

    def __init__(self) -> None:
        self.t = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, dt: float) -> None:
        self.slept.append(dt)
        self.t += dt


class VirtualClock:
    """Fake time shared by the pacer and a source on the pacer's reader thread.

    The source calls wait_until(t) before yielding a piece due at t; the pacer's sleep
    advances time and then waits until the source has handed over everything now due, so
    arrival stamps are exact and runs are deterministic.
    """

    def __init__(self) -> None:
        self.t = 0.0
        self.cv = threading.Condition()
        self.running = True  # the source counts as busy until it first waits
        self.due: float | None = None

    def __call__(self) -> float:
        return self.t

    def wait_until(self, t: float, stop: threading.Event | None = None) -> None:
        with self.cv:
            self.running, self.due = False, t
            self.cv.notify_all()
            while self.t < t and not (stop and stop.is_set()):
                self.cv.wait(0.01)  # a stop (the backend's cancel) ends the wait, as in a backend
            self.running, self.due = True, None

    def done(self) -> None:
        with self.cv:
            self.running, self.due = False, None
            self.cv.notify_all()

    def sleep(self, dt: float) -> None:
        end = self.t + dt
        with self.cv:
            while True:
                # Stop at the source's next due time on the way, so its stamps are exact.
                self.cv.wait_for(lambda: not self.running, timeout=10)
                if self.due is not None and self.due <= end:
                    self.t = self.due
                    self.cv.notify_all()
                    self.cv.wait_for(
                        lambda: self.running or self.due is None or self.due > self.t, timeout=10
                    )
                    continue
                self.t = end
                return


def timed_source(
    clock: VirtualClock,
    schedule: list[tuple[float, str]],
    log: list | None = None,
    stop: threading.Event | None = None,
):
    """Yield each piece at its virtual time."""
    try:
        for t, piece in schedule:
            clock.wait_until(t, stop)
            yield piece
    finally:
        if log is not None:
            log.append("closed")
        clock.done()


def spending_source(clock: FakeClock, pieces: list[str], gap: float, log: list | None = None):
    """A pulled source that takes `gap` of fake time to make each piece."""
    try:
        for p in pieces:
            clock.t += gap
            yield p
    finally:
        if log is not None:
            log.append("closed")


def run(pieces, cfg: PacingConfig, clock: FakeClock | None = None, **kw):
    clock = clock or FakeClock()
    pacer = Pacer(cfg, clock=clock, sleep=clock.sleep, prefetch=False)
    out = list(pacer.pace(pieces, **kw))
    return pacer, out, clock


def gaps(pacer: Pacer) -> list[float]:
    t = pacer.display_times
    return [b - a for a, b in zip(t, t[1:])]


WORDS = [f" word{i}" for i in range(40)]


def test_first_chunk_is_immediate():
    pacer, out, clock = run(WORDS, PacingConfig(**EVEN), started_at=0.0)
    assert pacer.display_times[0] == 0.0
    assert pacer.metrics().display.ttft_ms == 0.0


def test_first_chunk_waits_when_not_immediate():
    pacer, _, _ = run(WORDS, PacingConfig(**EVEN, first_immediate=False), started_at=0.0)
    assert pacer.display_times[0] == pytest.approx(0.2)


@pytest.mark.parametrize("rhythm", [0.0, 0.5, 0.9, 1.0])
def test_delays_stay_within_bounds(rhythm):
    cfg = PacingConfig(min_delay=0.1, max_delay=0.25, rhythm=rhythm, max_lag=0, seed=rhythm)
    pacer, out, _ = run(WORDS, cfg)
    assert "".join(out) == "".join(WORDS)
    for g in gaps(pacer):
        assert 0.1 - 1e-9 <= g <= 0.25 + 1e-9
    if rhythm == 1.0:
        assert all(g == pytest.approx(0.175) for g in gaps(pacer))


def test_lower_rhythm_varies_more():
    spread = {}
    for rhythm in (0.3, 0.9):
        pacer, _, _ = run(
            WORDS, PacingConfig(min_delay=0.1, max_delay=0.25, rhythm=rhythm, max_lag=0)
        )
        spread[rhythm] = statistics.pstdev(gaps(pacer))
    assert spread[0.3] > 3 * spread[0.9] > 0


def _gap_after(pacer: Pacer, marker: str) -> float:
    """The delay before the chunk that follows the chunk containing marker."""
    i = next(i for i, s in enumerate(pacer.shown) if marker in s.text)
    return pacer.display_times[i + 1] - pacer.display_times[i]


def test_punctuation_pauses_chinese_longer_than_english():
    text = "我们 看到了。然后 走了，再见 书 Done. And then, more words here\nnext line ok"
    pacer, out, _ = run([text], PacingConfig(**EVEN))
    assert "".join(out) == text
    plain = _gap_after(pacer, "书")
    zh_stop, en_stop = _gap_after(pacer, "。"), _gap_after(pacer, "Done.")
    zh_comma, en_comma = _gap_after(pacer, "，"), _gap_after(pacer, "then,")
    line = _gap_after(pacer, "here")
    assert plain == pytest.approx(0.2)
    assert zh_stop > en_stop > zh_comma > plain
    assert zh_comma == pytest.approx(en_comma)
    assert line > plain
    assert zh_stop == pytest.approx(0.2 * (1 + PacingConfig().pause_zh))


def test_code_fence_is_tighter_and_keeps_model_pieces():
    pieces = [
        "Look",
        " here",
        ":\n",
        "```",
        "py",
        "\n",
        "x",
        " =",
        " 1",
        "\n",
        "``",
        "`\n",
        "Done",
        " now",
    ]
    pacer, out, _ = run(pieces, PacingConfig(**EVEN, code_factor=0.4))
    assert "".join(out) == "".join(pieces)
    code = [s for s in pacer.shown if s.code]
    assert [s.text for s in code] == ["```", "py", "\n", "x", " =", " 1", "\n", "```"]
    code_gaps = [s.delay for s in code[1:]]
    assert all(g == pytest.approx(0.08) for g in code_gaps)
    prose = [s.delay for s in pacer.shown[1:] if not s.code]
    assert min(prose) > max(code_gaps)


def test_catches_up_when_lagging():
    burst = ["".join(f" w{i}" for i in range(100))]  # the model's whole answer at once
    cfg = PacingConfig(**{**EVEN, "max_lag": 1.0})
    pacer, out, clock = run(burst, cfg)
    assert "".join(out) == burst[0]
    assert any(s.catching_up for s in pacer.shown)
    assert clock.t < 3.0  # 100 chunks at 0.2 s would take ~20 s
    lags = [s.shown_at - s.ready_at for s in pacer.shown]
    assert max(lags) <= 1.5 * cfg.max_lag + 0.2  # over max_lag, cleared within max_lag / 2


def test_no_catch_up_when_max_lag_is_zero():
    burst = ["".join(f" w{i}" for i in range(100))]
    pacer, out, clock = run(burst, PacingConfig(**EVEN))
    assert not any(s.catching_up for s in pacer.shown)
    assert clock.t == pytest.approx(99 * 0.2)


def test_holds_back_partial_words():
    pieces = ["Hel", "lo wor", "ld", " 中", "华人民", "共和国", "。"]
    _, out, _ = run(pieces, PacingConfig(**EVEN, first_immediate=False))
    assert out == ["Hello", " world", " 中华人民共和国。"]
    # The first words on screen never wait for the next piece; later partial words do.
    _, out, _ = run(pieces, PacingConfig(**EVEN))
    assert out == ["Hel", "lo", " world", " 中华人民共和国。"]


@pytest.mark.parametrize("first", ["Hel", "默认", "The"])
def test_first_chunk_shown_when_its_piece_arrives(first):
    clock = VirtualClock()
    schedule = [(0.5, first), (0.9, "lo there"), (1.0, " and more")]
    pacer = Pacer(PacingConfig(**EVEN), clock=clock, sleep=clock.sleep)
    out = list(pacer.pace(timed_source(clock, schedule), started_at=0.0))
    assert out[0] == first and "".join(out) == "".join(p for _, p in schedule)
    assert pacer.display_times[0] - pacer.model_times[0] <= 0.02  # within one tick


def test_human_paced_presets_keep_their_schedule_on_long_answers():
    from docchat.answer.presets import PRESETS

    for name in ("quick", "long", "code"):
        assert PRESETS[name].pacing.max_lag == 0
    # A long answer from a fast model: every gap stays within the schedule's range.
    schedule = [(i * 0.01, f" w{i}") for i in range(300)]  # 100 pieces/s
    clock = VirtualClock()
    cfg = PRESETS["quick"].pacing
    pacer = Pacer(cfg, clock=clock, sleep=clock.sleep)
    out = list(pacer.pace(timed_source(clock, schedule), started_at=0.0))
    assert "".join(out) == "".join(p for _, p in schedule)
    assert min(gaps(pacer)) >= cfg.min_delay - 1e-9 and not any(s.catching_up for s in pacer.shown)
    assert pacer.model_times[-1] == pytest.approx(2.99)  # the model was not held back


def test_stop_ends_at_once_and_closes_source():
    stop = threading.Event()
    clock = FakeClock()
    log: list[str] = []

    def sleep(dt):
        clock.sleep(dt)
        if clock.t >= 0.9 - 1e-9:
            stop.set()

    pacer = Pacer(PacingConfig(**EVEN, tick=0.02), clock=clock, sleep=sleep, prefetch=False)
    out = list(pacer.pace(spending_source(clock, WORDS, 0.0, log), stop=stop))
    assert len(out) == 5  # shown at 0.0, 0.2, ..., 0.8; stop came during the wait for the 6th
    assert clock.t == pytest.approx(0.9)  # no waiting out the rest of the delay
    assert log == ["closed"]
    m = pacer.metrics()
    assert m.stopped and m.display.ttft_ms == 0.0


def test_stop_is_the_backend_cancel():
    """One event: the pacer's stop is request.cancel, so the backend stops too."""
    backend = EchoBackend(reply=" ".join(f"w{i}" for i in range(50)))
    request = GenerationRequest([Message("user", "hi")])
    clock = FakeClock()
    pacer = Pacer(PacingConfig(**EVEN), clock=clock, sleep=clock.sleep)
    shown = []
    for chunk in pacer.pace(backend.stream(request), request=request):
        shown.append(chunk)
        if len(shown) == 3:
            request.cancel.set()
    assert len(shown) == 3
    assert pacer.metrics().stopped
    assert request.stats.finished_at is not None  # the backend's generator was closed


@pytest.mark.parametrize("prefetch", [False, True])
def test_closing_the_pacer_closes_the_source_and_sets_stop(prefetch):
    clock = VirtualClock() if prefetch else FakeClock()
    log: list[str] = []
    stop = threading.Event()
    src = (
        timed_source(clock, [(i * 0.05, w) for i, w in enumerate(WORDS)], log, stop)
        if prefetch
        else spending_source(clock, WORDS, 0.05, log)
    )
    gen = Pacer(PacingConfig(**EVEN), clock=clock, sleep=clock.sleep, prefetch=prefetch).pace(
        src, stop=stop
    )
    assert next(gen) == " word0"
    gen.close()
    assert log == ["closed"] and stop.is_set()


def test_source_error_reaches_the_caller_from_the_reader_thread():
    def broken():
        yield "partial"
        raise BackendError("The model crashed; restart docchat.")

    clock = FakeClock()
    with pytest.raises(BackendError):
        list(Pacer(PacingConfig(**EVEN), clock=clock, sleep=clock.sleep).pace(broken()))


def test_raw_mode_is_identity():
    pieces = ["Hel", "lo", " 中", "文", "\n```", "x"]
    clock = FakeClock()
    pacer = Pacer(PacingConfig(mode="raw"), clock=clock, sleep=clock.sleep)
    out = list(pacer.pace(iter(pieces)))
    assert out == pieces and all(a is b for a, b in zip(out, pieces))
    assert clock.slept == [] and pacer.display_times == pacer.model_times
    assert len(pacer.model_times) == len(pieces)


def test_raw_mode_stops():
    stop = threading.Event()
    log: list[str] = []
    clock = FakeClock()
    out = []
    for piece in Pacer(PacingConfig(mode="raw"), clock=clock).pace(
        spending_source(clock, WORDS, 0.1, log), stop=stop
    ):
        out.append(piece)
        stop.set()
    assert out == [" word0"] and log == ["closed"]


def test_smooth_tracks_a_steady_source_rate():
    clock = FakeClock()
    cfg = PacingConfig(mode="smooth", max_lag=0)
    pacer, out, _ = run(spending_source(clock, WORDS, 0.05), cfg, clock=clock)
    assert "".join(out) == "".join(WORDS)
    assert statistics.mean(gaps(pacer)) == pytest.approx(0.05, rel=0.05)
    assert clock.t == pytest.approx(0.05 * len(WORDS), rel=0.05)


def _bursty_schedule(n=200, seed=1):
    """Bursts of 4-12 pieces 5 ms apart, then a 150-400 ms stall (like bench/pacing.py's)."""
    rng, t, out = random.Random(seed), 0.0, []
    while len(out) < n:
        for _ in range(rng.randint(4, 12)):
            out.append((t, f" w{len(out)}"))
            t += 0.005
        t += rng.uniform(0.15, 0.4)
    return out[:n]


def test_smooth_evens_out_bursts_and_stalls():
    schedule = _bursty_schedule()
    source_gaps = [b[0] - a[0] for a, b in zip(schedule, schedule[1:])]
    clock = VirtualClock()
    pacer = Pacer(PacingConfig(mode="smooth", max_lag=2.0), clock=clock, sleep=clock.sleep)
    out = list(pacer.pace(timed_source(clock, schedule), started_at=0.0))
    assert "".join(out) == "".join(p for _, p in schedule)
    assert pacer.model_times == [t for t, _ in schedule]
    display_std = statistics.pstdev(gaps(pacer))
    assert display_std < 0.3 * statistics.pstdev(source_gaps)  # cut by more than 70%
    assert pacer.display_times[-1] < 1.1 * schedule[-1][0]  # adding under 10%


def test_prefetch_lets_the_model_run_ahead_and_catch_up():
    schedule = [(i * 0.01, f" w{i}") for i in range(200)]  # 100 pieces/s, display ~5/s
    clock = VirtualClock()
    pacer = Pacer(PacingConfig(**{**EVEN, "max_lag": 1.0}), clock=clock, sleep=clock.sleep)
    out = list(pacer.pace(timed_source(clock, schedule), started_at=0.0))
    assert "".join(out) == "".join(p for _, p in schedule)
    assert pacer.model_times[-1] == pytest.approx(1.99)  # not slowed down by the display
    assert any(s.catching_up for s in pacer.shown)
    assert pacer.display_times[-1] < 1.99 + 1.5


def test_config_is_validated():
    with pytest.raises(DocchatError):
        PacingConfig(min_delay=0.3, max_delay=0.1)
    with pytest.raises(DocchatError):
        PacingConfig(mode="fast")


def test_paced_accepts_a_preset_name():
    clock = FakeClock()
    out = list(paced(["a b", " c"], "code", clock=clock, sleep=clock.sleep, prefetch=False))
    assert "".join(out) == "a b c" and clock.t > 0


def test_split_words_keeps_graphemes_and_punctuation_together():
    assert split_words("我们是中国人。") == ["我们", "是", "中国", "人。"]
    assert split_words("ok 👍🏽 e\u0301, 中\u0301x") == ["ok", " 👍🏽", " e\u0301,", " 中\u0301x"]


# Text made of the awkward parts: English, Chinese, emoji (with modifiers and ZWJ), fences,
# newlines, combining marks and CJK punctuation.
_ALPHABET = st.sampled_from(
    list("ab Z.,;:!?\n\t`")
    + [
        "```",
        "```py\n",
        "中",
        "国",
        "人",
        "是",
        "我们",
        "。",
        "，",
        "、",
        "！",
        "😀",
        "👍🏽",
        "👨\u200d👩\u200d👧",
        "e\u0301",
        "\u3000",
        "“",
        "”",
        "\r\n",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(_ALPHABET, max_size=40),
    cuts=st.lists(st.integers(0, 200), max_size=12),
    mode=st.sampled_from(["scheduled", "smooth", "raw"]),
    max_lag=st.sampled_from([0.0, 0.3]),
)
def test_output_equals_input_for_any_chunking(parts, cuts, mode, max_lag):
    text = "".join(parts)
    bounds = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    pieces = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    clock = FakeClock()
    pacer = Pacer(
        PacingConfig(mode=mode, max_lag=max_lag), clock=clock, sleep=clock.sleep, prefetch=False
    )
    out = list(pacer.pace(pieces))
    assert "".join(out) == text
    if mode != "raw":
        assert all(out)  # no empty chunks


# The rules behind smooth mode and catching up, one object at a time, on synthetic gaps.


def test_gap_estimate_is_a_plain_mean_then_an_ema():
    est = GapEstimate(alpha=0.25)
    assert est.mean is None and est.weight() == 1.0
    gaps = [0.1, 0.3, 0.2, 0.4]  # the first 1 / alpha gaps weigh 1, 1/2, 1/3, 1/4
    for g in gaps:
        est.add(g)
    assert est.count == 4 and est.mean == pytest.approx(statistics.mean(gaps))
    assert est.weight() == 0.25  # from now on the newest gap weighs alpha
    before = est.mean
    est.add(1.25)
    assert est.mean == pytest.approx(before + 0.25 * (1.25 - before))


def test_gap_estimate_deviation_is_an_ema_of_distance_from_the_mean():
    est = GapEstimate(alpha=0.5)
    for g in (0.2, 0.2):
        est.add(g)
    dev, mean = est.dev, est.mean
    est.add(0.6)  # weight alpha: dev moves halfway toward |0.6 - mean|
    assert est.dev == pytest.approx(dev + 0.5 * (abs(0.6 - mean) - dev))
    assert est.dev > dev


def test_a_steady_source_has_no_deviation_and_needs_no_reserve():
    # The first gap sets the mean; it is no deviation from a mean that did not exist yet.
    est = GapEstimate(alpha=0.05)
    for _ in range(10):
        est.add(0.1)
    assert est.mean == pytest.approx(0.1) and est.dev == pytest.approx(0.0, abs=1e-12)
    rate = _rate([0.1] * 10, ["ab"] * 11, [" ab"], reserve=0.6)
    assert rate.reserve_target() == pytest.approx(0.0, abs=1e-10)
    assert rate.delay(0) == pytest.approx(_rate([0.1] * 10, ["ab"] * 11, [" ab"]).delay(0))


def test_reserve_nudge_steers_toward_the_reserve_within_bounds():
    want = 0.6
    assert reserve_nudge(want, want) == pytest.approx(1.0)  # the reserve is in hand
    assert reserve_nudge(want, 0.0) == pytest.approx(1 + _RESERVE_GAIN)  # none: slow down
    assert reserve_nudge(want, 1.5 * want) < 1.0  # more than enough: speed up
    assert reserve_nudge(want, 100 * want) == _NUDGE_MIN
    held = [i * 0.05 for i in range(100)]
    factors = [reserve_nudge(want, h) for h in held]
    assert all(_NUDGE_MIN <= f <= _NUDGE_MAX for f in factors)
    assert factors == sorted(factors, reverse=True)  # the more in hand, the faster


def _rate(gaps, pieces, chunks, reserve=0.0, alpha=0.05) -> SmoothRate:
    rate = SmoothRate(GapEstimate(alpha), reserve)
    rate.add_piece(pieces[0], None)  # the first piece has no gap
    for piece, gap in zip(pieces[1:], gaps):
        rate.add_piece(piece, gap)
    for chunk in chunks:
        rate.add_chunk(chunk)
    return rate


def test_smooth_rate_is_time_per_piece_times_pieces_per_chunk():
    assert SmoothRate(GapEstimate(0.05)).delay(0) == 0.0  # nothing measured yet
    # Pieces of 2 characters every 0.05 s, chunks of 6 characters: 3 pieces a chunk.
    rate = _rate([0.05] * 5, ["ab"] * 6, [" abcde", " fghij"])
    assert rate.pieces == 6 and rate.chars_in == 12 and rate.chunks == 2
    assert rate.delay(0) == pytest.approx(0.15)
    assert rate.delay(50) == rate.delay(0)  # no reserve: what is in hand does not matter


def test_smooth_rate_reserve_target_follows_the_source_jitter_up_to_the_cap():
    steady = _rate([0.05] * 30, ["ab"] * 31, [" ab"], reserve=0.6)
    jumpy = _rate([0.001, 0.1] * 15, ["ab"] * 31, [" ab"], reserve=0.6)
    slightly = _rate([0.04, 0.06] * 15, ["ab"] * 31, [" ab"], reserve=0.6)
    assert slightly.reserve_target() == pytest.approx(_RESERVE_DEVS * slightly.gaps.dev)
    assert slightly.reserve_target() < 0.6
    assert jumpy.reserve_target() == 0.6  # capped at `reserve` seconds
    assert steady.reserve_target() < slightly.reserve_target()
    assert _rate([0.001, 0.1] * 15, ["ab"] * 31, [" ab"], reserve=0).reserve_target() == 0


def test_smooth_rate_slows_down_to_build_a_reserve_and_speeds_up_with_one():
    rate = _rate([0.001, 0.1] * 15, ["ab"] * 31, [" ab"], reserve=0.6)
    plain = _rate([0.001, 0.1] * 15, ["ab"] * 31, [" ab"]).delay(0)
    assert rate.delay(0) == pytest.approx(plain * (1 + _RESERVE_GAIN))  # nothing in hand
    assert rate.delay(100) == pytest.approx(plain * _NUDGE_MIN)  # far more than needed
    in_hand = [rate.delay(n) for n in range(40)]
    assert in_hand == sorted(in_hand, reverse=True)


def test_catch_up_starts_past_max_lag_with_spacing_max_lag_over_2b():
    c = CatchUp(max_lag=2.0)
    c.update(lag=1.9, waiting=30)
    assert not c.active and c.delay(0.2) == 0.2
    c.update(lag=2.1, waiting=8)
    assert c.active and c.burst == 8
    assert c.delay(0.2) == pytest.approx(2.0 * _BURST_SPAN / 8) == pytest.approx(2.0 / (2 * 8))
    assert c.delay(0.01) == 0.01  # never slower than the schedule
    c.update(lag=2.5, waiting=5)  # fewer waiting now: B stays the most seen
    assert c.burst == 8
    c.update(lag=2.5, waiting=12)
    assert c.burst == 12 and c.delay(1.0) == pytest.approx(2.0 / 24)


def test_catch_up_goes_on_until_the_lag_is_under_half_max_lag():
    c = CatchUp(max_lag=2.0)
    c.update(lag=3.0, waiting=10)
    c.update(lag=1.5, waiting=6)  # under max_lag but not under max_lag / 2: still catching up
    assert c.active and c.burst == 10
    c.update(lag=2.0 * _CAUGHT_UP, waiting=3)
    assert not c.active and c.delay(0.2) == 0.2
    assert _CAUGHT_UP == 0.5


def test_catch_up_is_off_when_max_lag_is_zero():
    c = CatchUp(max_lag=0.0)
    c.update(lag=1000.0, waiting=100)
    assert not c.active and c.delay(0.3) == 0.3


def test_catching_up_chunks_are_shown_max_lag_over_2b_apart():
    words = " ".join(f"w{i}" for i in range(60))
    cfg = PacingConfig(**{**EVEN, "max_lag": 1.0})
    pacer, _, _ = run([words], cfg)
    fast = [s for s in pacer.shown if s.catching_up]
    # The whole answer arrived at once; after 1 s of 0.2 s gaps the lag passes max_lag with
    # w6..w58 waiting (w59 may go on until the source ends), and those B are shown
    # max_lag / (2 B) apart: within max_lag / 2, then the schedule resumes.
    assert [s.text for s in fast] == [f" w{i}" for i in range(6, 59)]
    assert all(s.delay == pytest.approx(1.0 / (2 * len(fast))) for s in fast)
    assert fast[-1].shown_at - fast[0].shown_at < 0.5 * cfg.max_lag
    assert pacer.shown[-1].delay == pytest.approx(0.2) and not pacer.shown[-1].catching_up
