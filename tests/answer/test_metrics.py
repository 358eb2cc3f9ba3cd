"""Metrics math on known timestamps."""

from __future__ import annotations

import json
import math

import pytest

from docchat.answer.metrics import AnswerMetrics, SideMetrics, compute_metrics, percentile
from docchat.backends import GenerationStats

SIDE_KEYS = {"ttft_ms", "itl_ms_mean", "itl_ms_p50", "itl_ms_p95", "itl_ms_std", "tokens_per_s"}


def test_percentile_interpolates_linearly_like_numpy():
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 50) == 25.0
    assert percentile(values, 95) == pytest.approx(38.5)
    assert percentile(values, 0) == 10.0 and percentile(values, 100) == 40.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None


def test_side_metrics_on_known_times():
    # started at 0; items at 0.5, 0.6, 0.8, 1.1, 1.5 -> gaps 100, 200, 300, 400 ms
    m = SideMetrics.from_times(0.0, [0.5, 0.6, 0.8, 1.1, 1.5])
    assert m.ttft_ms == 500.0
    assert m.itl_ms_mean == 250.0
    assert m.itl_ms_p50 == 250.0
    assert m.itl_ms_p95 == pytest.approx(385.0)
    assert m.itl_ms_std == pytest.approx(math.sqrt(12500), abs=1e-3)  # population std
    assert m.tokens_per_s == pytest.approx(5 / 1.5, abs=1e-3)


def test_side_metrics_with_too_few_items():
    assert SideMetrics.from_times(0.0, []) == SideMetrics()
    one = SideMetrics.from_times(1.0, [1.25])
    assert one.ttft_ms == 250.0 and one.itl_ms_mean is None and one.itl_ms_std is None


def test_answer_metrics_shape_and_decode_rate():
    stats = GenerationStats(
        prompt_tokens=42,
        completion_tokens=5,
        queue_ms=12.5,
        stopped=False,
        prompt_reused=30,
        prefill_ms=80.0,
        finish_reason="stop",
    )
    m = compute_metrics(
        10.0, [10.2, 10.3, 10.4, 10.5, 10.6], [10.2, 10.5, 10.9], stats, ended_at=11.0
    )
    d = m.to_dict()
    assert set(d) == {
        "model",
        "display",
        "queue_ms",
        "prompt_tokens",
        "prompt_reused",
        "prefill_ms",
        "completion_tokens",
        "decode_tokens_per_s",
        "stopped",
        "total_ms",
        "finish_reason",
        "prefill_threads",
    }
    assert d["prefill_threads"] is None  # no thread counts reported
    assert (d["prompt_reused"], d["prefill_ms"], d["finish_reason"]) == (30, 80.0, "stop")
    assert set(d["model"]) == set(d["display"]) == SIDE_KEYS
    assert d["decode_tokens_per_s"] == pytest.approx(10.0)  # 4 tokens over 0.4 s after the first
    assert d["model"]["ttft_ms"] == pytest.approx(200.0) and d["display"][
        "itl_ms_mean"
    ] == pytest.approx(350.0)
    assert d["prompt_tokens"] == 42 and d["completion_tokens"] == 5 and d["queue_ms"] == 12.5
    assert d["total_ms"] == pytest.approx(1000.0) and d["stopped"] is False
    json.dumps(d)


def test_round_trip_through_json():
    m = compute_metrics(
        0.0, [0.1, 0.15, 0.3], [0.1, 0.3, 0.5], GenerationStats(stopped=True), stopped=False
    )
    again = AnswerMetrics.from_dict(json.loads(json.dumps(m.to_dict())))
    assert again == m and again.stopped


def test_without_stats_counts_pieces():
    m = compute_metrics(0.0, [0.1, 0.2], [0.1, 0.2], None, stopped=True)
    assert m.completion_tokens == 2 and m.prompt_tokens == 0 and m.stopped
    assert m.total_ms == pytest.approx(200.0)


def test_metrics_line_shows_reuse_prefill_and_budget():
    from docchat.ui.i18n import metrics_line

    m = {
        "model": {"ttft_ms": 900.0},
        "prompt_tokens": 1800,
        "completion_tokens": 20,
        "prompt_reused": 1500,
        "prefill_ms": 2400.0,
        "budget": {"prompt_budget": 1800, "target_s": 15.0, "rate": 120.0},
    }
    line = metrics_line(m)
    assert "1,800 tokens in" in line and "1,500 reused" in line and "read in 2.4 s" in line
    assert "budget 1,800 tokens (15 s at 120 tokens/s)" in line
    whole = metrics_line({**m, "budget": {"prompt_budget": None}})
    assert "whole window" in whole
    assert "预算 1,800 词元" in metrics_line(m, "zh")
    assert "left out" not in line
    cut = {**m, "cut": {"passages_dropped": 3, "from_tokens": 2400, "to_tokens": 1800}}
    assert "3 excerpts left out to answer on time" in metrics_line(cut)
    assert "略去 3 段摘录" in metrics_line(cut, "zh")


def test_progress_line_always_has_a_moving_figure():
    from docchat.backends import PrefillProgress
    from docchat.ui.i18n import progress_fraction, progress_line

    p = PrefillProgress(done=3100, total=7537, reused=0, rate=125.0, eta_s=35.4)
    assert progress_line(p, 12.3) == (
        "Reading 7,537 tokens of context: 3,100 done, ~35 s left (12 s)"
    )
    assert progress_fraction(p) == pytest.approx(3100 / 7537)
    reused = PrefillProgress(done=5000, total=6000, reused=4800, rate=100.0, eta_s=10.0)
    assert "4,800 already read before" in progress_line(reused, 1.0)
    assert progress_line(None, 1.25) == "Waiting for the model… (1.2 s)"
    assert progress_line(None, 1.25) != progress_line(None, 1.35)  # the clock moves
    unknown = PrefillProgress(done=0, total=0, known=False)
    assert "does not report its progress" in progress_line(unknown, 3.0)
    assert progress_fraction(unknown) is None
    server = PrefillProgress(done=0, total=5200, known=False)
    assert progress_line(server, 3.0) == (
        "The server is reading 5,200 tokens of context (it does not report how far it is)… (3.0 s)"
    )
    assert progress_fraction(server) is None  # no bar that would not move
    assert progress_line(PrefillProgress(10, 10), 4.0).startswith("Read 10 tokens")
