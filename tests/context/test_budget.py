"""budget.followup_tokens: a follow-up's new tokens cost a share of the first question's
reading, later positions counted dearer."""
from types import SimpleNamespace

import pytest

from docchat.backends.base import RateMeter
from docchat.context.budget import followup_tokens


def test_a_follow_up_after_earlier_turns_gets_fewer_tokens_for_the_same_share_of_time():
    meter = RateMeter(span=3072.0)
    counter = SimpleNamespace(rate_meter=meter)
    first, warmed = 1600, 400
    own = meter.work(warmed, first)  # what the first question itself read
    for prior in (0, 1800, 2600, 4000):
        n = followup_tokens(counter, prior, first, 0.25, warmed)
        assert meter.work(prior, prior + n) == pytest.approx(0.25 * own, rel=0.01)
    later = [followup_tokens(counter, p, first, 0.25, warmed) for p in (1800, 2600, 4000)]
    assert later == sorted(later, reverse=True) and later[0] < 0.25 * (first - warmed)


def test_without_a_span_the_share_is_of_tokens():
    plain = SimpleNamespace(rate_meter=RateMeter())
    assert followup_tokens(plain, 2000, 1600, 0.25, 400) == 300
    assert followup_tokens(object(), 2000, 1600, 0.25) == 400


def test_tokens_for_inverts_work():
    meter = RateMeter(span=3072.0)
    for start, n in ((0, 100), (2000, 350), (6000, 40)):
        assert meter.tokens_for(start, meter.work(start, start + n)) in (n - 1, n)
    assert meter.tokens_for(100, 0) == 0
    assert RateMeter().tokens_for(100, 250.0) == 250
