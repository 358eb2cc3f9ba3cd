"""Per-answer timing metrics, model side (source pieces) and display side (shown chunks).

Conventions (all times in seconds from one clock; reported in milliseconds):
- TTFT is measured from ``started_at``, the moment the user asked (given by the caller).
- Inter-token latency (ITL) is the gap between consecutive items; its std is the
  population standard deviation and its percentiles interpolate linearly (numpy's default).
- ``tokens_per_s`` of a side is items / (last item - started_at), so it includes TTFT;
  ``decode_tokens_per_s`` is (completion tokens - 1) / (last piece - first piece).
- ``prompt_reused`` and ``prefill_ms`` come from the backend (GenerationStats); prompt tokens
  that were not reused are the ones it had to read.
- A value that is undefined (no items, or one item for ITL) is None.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Sequence

from docchat.backends import GenerationStats

_SIDE_KEYS = ("ttft_ms", "itl_ms_mean", "itl_ms_p50", "itl_ms_p95", "itl_ms_std", "tokens_per_s")


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) of values with linear interpolation, or None if empty."""
    if not values:
        return None
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


@dataclass(frozen=True)
class SideMetrics:
    """Latency figures of one stream of timestamped items."""
    ttft_ms: float | None = None
    itl_ms_mean: float | None = None
    itl_ms_p50: float | None = None
    itl_ms_p95: float | None = None
    itl_ms_std: float | None = None
    tokens_per_s: float | None = None

    @classmethod
    def from_times(cls, started_at: float, times: Sequence[float]) -> "SideMetrics":
        """Metrics of items that arrived at the given clock times."""
        if not times:
            return cls()
        gaps = [(b - a) * 1000.0 for a, b in zip(times, times[1:])]
        elapsed = times[-1] - started_at
        mean = std = None
        if gaps:
            mean = sum(gaps) / len(gaps)
            std = math.sqrt(sum((g - mean) ** 2 for g in gaps) / len(gaps))
        return cls(
            ttft_ms=_r((times[0] - started_at) * 1000.0),
            itl_ms_mean=_r(mean),
            itl_ms_p50=_r(percentile(gaps, 50)),
            itl_ms_p95=_r(percentile(gaps, 95)),
            itl_ms_std=_r(std),
            tokens_per_s=_r(len(times) / elapsed) if elapsed > 0 else None,
        )


@dataclass(frozen=True)
class AnswerMetrics:
    """Everything measured about one answer; ``to_dict()`` is what ``ask --json`` and SQLite
    hold."""
    model: SideMetrics
    display: SideMetrics
    queue_ms: float = 0.0
    prompt_tokens: int = 0
    prompt_reused: int = 0  # prompt tokens the backend took from its cache
    prefill_ms: float | None = None  # the backend's own time reading the prompt
    completion_tokens: int = 0
    decode_tokens_per_s: float | None = None
    stopped: bool = False
    total_ms: float | None = None
    finish_reason: str | None = None  # the backend's: stop, length, cancelled, error
    # {"threads": [prompt tokens, seconds]} of the prompt's reading (llama.cpp), else None
    prefill_threads: dict | None = None

    def to_dict(self) -> dict:
        """Plain JSON-ready dict in the documented shape."""
        d = asdict(self)
        d["model"] = {k: d["model"][k] for k in _SIDE_KEYS}
        d["display"] = {k: d["display"][k] for k in _SIDE_KEYS}
        return d

    @classmethod
    def from_dict(cls, data: dict) -> "AnswerMetrics":
        """Rebuild metrics from ``to_dict()`` output (unknown keys are ignored)."""
        names = {f.name for f in fields(cls)} - {"model", "display"}
        return cls(
            model=SideMetrics(**{k: data.get("model", {}).get(k) for k in _SIDE_KEYS}),
            display=SideMetrics(**{k: data.get("display", {}).get(k) for k in _SIDE_KEYS}),
            **{k: data[k] for k in names if k in data},
        )


def compute_metrics(
    started_at: float,
    model_times: Sequence[float],
    display_times: Sequence[float],
    stats: GenerationStats | None = None,
    stopped: bool = False,
    ended_at: float | None = None,
) -> AnswerMetrics:
    """Combine source-piece and display-chunk timestamps with the backend's stats."""
    completion = stats.completion_tokens if stats and stats.completion_tokens else len(model_times)
    decode = None
    if completion > 1 and len(model_times) > 1 and model_times[-1] > model_times[0]:
        decode = _r((completion - 1) / (model_times[-1] - model_times[0]))
    last = max([t for t in (ended_at, *model_times[-1:], *display_times[-1:]) if t is not None],
               default=None)
    return AnswerMetrics(
        model=SideMetrics.from_times(started_at, model_times),
        display=SideMetrics.from_times(started_at, display_times),
        queue_ms=_r(stats.queue_ms) if stats else 0.0,
        prompt_tokens=stats.prompt_tokens if stats else 0,
        prompt_reused=int(getattr(stats, "prompt_reused", 0) or 0) if stats else 0,
        prefill_ms=_r(getattr(stats, "prefill_ms", None)) if stats else None,
        completion_tokens=completion,
        decode_tokens_per_s=decode,
        stopped=bool(stopped or (stats is not None and stats.stopped)),
        total_ms=_r((last - started_at) * 1000.0) if last is not None else None,
        finish_reason=stats.finish_reason if stats else None,
        prefill_threads=_threads(stats),
    )


def _threads(stats: GenerationStats | None) -> dict | None:
    """The read's {"threads": [prompt tokens, seconds]}, None where none were reported."""
    read = getattr(stats, "prefill_threads", None) or {}
    return {str(k): [int(n), round(t, 3)] for k, (n, t) in sorted(read.items())} or None
