"""Presets: the values the issue specifies, overrides, labels, requests."""
from __future__ import annotations

import pytest

from docchat.answer.pacing import Pacer
from docchat.answer.presets import GENERATION_FIELDS, PRESETS, get_preset
from docchat.backends import Message
from docchat.errors import DocchatError


@pytest.mark.parametrize("name, lo, hi, rhythm, gen", [
    ("quick", 0.100, 0.250, 0.9,
     {"max_new_tokens": 512, "temperature": 0.3, "repetition_penalty": 1.2}),
    ("long", 0.300, 0.400, 0.6, {"max_new_tokens": 1024, "temperature": 0.1, "top_p": 0.85}),
    ("code", 0.120, 0.200, 0.95, {"max_new_tokens": 768, "temperature": 0.5, "do_sample": True}),
])
def test_scheduled_presets_match_the_spec(name, lo, hi, rhythm, gen):
    p = get_preset(name)
    assert p.pacing.mode == "scheduled"
    assert (p.pacing.min_delay, p.pacing.max_delay, p.pacing.rhythm) == (lo, hi, rhythm)
    assert set(p.generation) == set(GENERATION_FIELDS)
    assert {k: p.generation[k] for k in gen} == gen


def test_smooth_and_raw():
    smooth, raw = get_preset("smooth"), get_preset("raw")
    assert smooth.pacing.mode == "smooth" and smooth.pacing.rhythm == 1.0
    assert smooth.pacing.pause_zh == smooth.pacing.pause_en == 0
    assert raw.pacing.mode == "raw"


def test_every_preset_has_labels_in_both_languages():
    for p in PRESETS.values():
        assert p.label("en") == p.label_en and p.label("zh-CN") == p.label_zh
        assert p.label_en.isascii() and not p.label_zh.isascii()


def test_overrides_change_one_value_and_leave_the_original():
    quick = get_preset("quick")
    tuned = quick.with_overrides(max_delay=0.3, temperature=0.0, max_lag=0)
    assert (tuned.pacing.max_delay == 0.3 and tuned.pacing.min_delay == 0.1
            and tuned.pacing.max_lag == 0)
    assert tuned.generation["temperature"] == 0.0 and tuned.generation["repetition_penalty"] == 1.2
    assert quick.pacing.max_delay == 0.25 and quick.generation["temperature"] == 0.3
    assert get_preset("long", top_p=0.9).generation["top_p"] == 0.9


def test_bad_names_are_user_errors():
    with pytest.raises(DocchatError, match="choose one of"):
        get_preset("fastest")
    with pytest.raises(DocchatError, match="Unknown preset setting"):
        get_preset("quick").with_overrides(speed=2)
    with pytest.raises(DocchatError):
        get_preset("quick").with_overrides(min_delay=0.5)  # above max_delay


def test_request_carries_the_generation_values():
    req = get_preset("code").request([Message("user", "hi")], max_new_tokens=10)
    assert (req.max_new_tokens, req.temperature, req.do_sample) == (10, 0.5, True)
    assert Pacer(get_preset("code").pacing).config.code_factor > 0
