"""Metrics math on known timestamps."""
from __future__ import annotations

import json
import math

import pytest

from docchat.backends import GenerationStats
from docchat.metrics import AnswerMetrics, SideMetrics, compute_metrics, percentile

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
    stats = GenerationStats(prompt_tokens=42, completion_tokens=5, queue_ms=12.5, stopped=False)
    m = compute_metrics(10.0, [10.2, 10.3, 10.4, 10.5, 10.6], [10.2, 10.5, 10.9], stats, ended_at=11.0)
    d = m.to_dict()
    assert set(d) == {"model", "display", "queue_ms", "prompt_tokens", "completion_tokens",
                      "decode_tokens_per_s", "stopped", "total_ms"}
    assert set(d["model"]) == set(d["display"]) == SIDE_KEYS
    assert d["decode_tokens_per_s"] == pytest.approx(10.0)  # 4 tokens over 0.4 s after the first
    assert d["model"]["ttft_ms"] == pytest.approx(200.0) and d["display"]["itl_ms_mean"] == pytest.approx(350.0)
    assert d["prompt_tokens"] == 42 and d["completion_tokens"] == 5 and d["queue_ms"] == 12.5
    assert d["total_ms"] == pytest.approx(1000.0) and d["stopped"] is False
    json.dumps(d)


def test_round_trip_through_json():
    m = compute_metrics(0.0, [0.1, 0.15, 0.3], [0.1, 0.3, 0.5], GenerationStats(stopped=True), stopped=False)
    again = AnswerMetrics.from_dict(json.loads(json.dumps(m.to_dict())))
    assert again == m and again.stopped


def test_without_stats_counts_pieces():
    m = compute_metrics(0.0, [0.1, 0.2], [0.1, 0.2], None, stopped=True)
    assert m.completion_tokens == 2 and m.prompt_tokens == 0 and m.stopped
    assert m.total_ms == pytest.approx(200.0)
