"""qa.turn_budget: what a turn of the append-only conversation may read in the first-token
target, counting what the backend's cache already holds (the earlier turns, a warm start)."""
from __future__ import annotations

from docchat.answer.qa import FOLLOWUP_NEW_SHARE, TEMPLATE_SLACK, Budget, turn_budget
from docchat.backends import Message
from docchat.backends.base import RateMeter
from docchat.context.conversation import Conversation, SentTurn
from docchat.context.policy import POLICY

TARGET = 10.0


class Meter:
    """A backend seen by turn_budget: one token per 4 characters, prompts read at 100
    tokens/s at the start and dearer later (span 2,000), and a cache holding `held` tokens
    (None: it does not say)."""

    def __init__(self, held: int | None = None, span: float = 2000.0) -> None:
        self.held = held
        self.meter = RateMeter(span=span)
        self.meter.add_work(1000, 10.0)  # 100 tokens/s at the start of a prompt

    name = model = "meter"
    context_window = 8192

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    def count_prompt_tokens(self, messages) -> int:
        return sum(len(m.content) // 4 + 4 for m in messages)

    def prefill_tokens(self, seconds: float, start: int = 0) -> int | None:
        return self.meter.tokens_in(seconds, start)

    def cached_tokens(self, messages) -> int | None:
        return None if self.held is None else min(self.held, self.count_prompt_tokens(messages))


def base(backend) -> Budget:
    tokens = backend.prefill_tokens(TARGET)
    return Budget(8192, tokens + 256, tokens, TARGET, 100.0, False)


def conversation(turns: int = 2) -> Conversation:
    return Conversation("S" * 400, tuple(SentTurn(f"q{i}", "E" * 6000 + f"q{i}", "A" * 800)
                                         for i in range(turns)))


def test_a_first_question_reads_what_the_target_allows():
    backend = Meter()
    b = base(backend)
    assert turn_budget(backend, Conversation(), "Port?", 256, b) == (b, None)
    assert 800 < b.prompt_budget < 1000  # the later tokens of a long prompt count dearer


def test_a_warm_start_the_cache_holds_is_not_read_again():
    backend = Meter(held=10 ** 6)
    warm = Conversation(system="S" * 2000, outline_budget=96)  # 504 tokens, cached
    b = base(backend)
    got, new = turn_budget(backend, warm, "Port?", 256, b)
    assert new is None
    after = backend.prefill_tokens(TARGET, 504)
    assert got.prompt_budget == 504 + after > b.prompt_budget
    assert after < b.prompt_budget  # read after the system message: dearer per token
    # not read yet (the question came too soon), or evicted: a plain first question
    backend.held = 0
    assert turn_budget(backend, warm, "Port?", 256, b) == (b, None)
    # a backend that does not say is not credited with a warm start it may not have read
    backend.held = None
    assert turn_budget(backend, warm, "Port?", 256, b) == (b, None)


class Spanned(Meter):
    """As Meter, with the meter where turn_budget looks for the cost of later positions."""

    @property
    def rate_meter(self) -> RateMeter:
        return self.meter


def test_a_follow_up_counts_the_cached_conversation_and_reads_at_its_position():
    backend = Meter(held=10 ** 6)
    conv = conversation()
    b = base(backend)
    prior = backend.count_prompt_tokens(conv.messages())
    got, new = turn_budget(backend, conv, "And the other one?", 256, b)
    assert new == int(FOLLOWUP_NEW_SHARE * b.prompt_budget)
    assert got.prompt_budget == prior + backend.prefill_tokens(TARGET, prior)
    assert backend.prefill_tokens(TARGET, prior) < b.prompt_budget


def test_a_follow_up_whose_cache_was_taken_reads_its_turns_again_within_the_target():
    backend = Meter(held=0)  # another session's question evicted this conversation
    conv = conversation(turns=1)
    b = base(backend)
    prior = backend.count_prompt_tokens(conv.messages())
    got, _ = turn_budget(backend, conv, "And the other one?", 256, b)
    # the whole prompt is read from the start: no more than a first question reads, unless
    # the turns and the new share alone need more (never less than that)
    need = backend.count_prompt_tokens([Message("user", "And the other one?")])
    assert got.prompt_budget == max(b.prompt_budget, prior + int(FOLLOWUP_NEW_SHARE *
                                                                 b.prompt_budget),
                                    prior + need + POLICY.min_new_evidence + TEMPLATE_SLACK)
    held_all = turn_budget(Meter(held=10 ** 6), conv, "And the other one?", 256, b)[0]
    assert got.prompt_budget < held_all.prompt_budget


def test_a_backend_that_does_not_say_keeps_the_earlier_turns_cached():
    backend = Meter(held=None)
    conv = conversation()
    b = base(backend)
    prior = backend.count_prompt_tokens(conv.messages())
    got, _ = turn_budget(backend, conv, "And?", 256, b)
    assert got.prompt_budget == prior + backend.prefill_tokens(TARGET, prior)


def test_rate_meter_tokens_after_a_cached_prefix_take_the_target():
    meter = RateMeter(span=2000.0)
    meter.add_work(1000, 10.0)
    for start in (0, 500, 4000):
        n = meter.tokens_in(10.0, start)
        assert abs(meter.work(start, start + n) / meter.rate - 10.0) < 0.05
    assert meter.tokens_in(10.0, 4000) < meter.tokens_in(10.0, 500) < meter.tokens_in(10.0)


def test_a_follow_up_on_a_busy_machine_still_appends():
    """Reading slowed to a crawl (a starved process: 512-token first budgets, a tiny time
    share): the budget still leaves the packer its minimum room after the turns, so it
    appends instead of compacting (and reading the whole conversation again)."""
    from factories import titled_doc

    from docchat.context.turn_packing import pack_turn

    backend = Spanned(held=10 ** 6)
    backend.meter = RateMeter(span=2000.0)
    backend.meter.add_work(30, 1.0)  # 30 tokens/s
    b = Budget(8192, 512 + 256, 512, TARGET, 30.0, False)
    conv = conversation(turns=1)
    prior = backend.count_prompt_tokens(conv.messages())
    got, new = turn_budget(backend, conv, "And the other one?", 256, b)
    assert got.prompt_budget >= prior + POLICY.min_new_evidence
    doc = titled_doc("m.txt", [(f"Part {i}", "The other one is blue. " * 40) for i in range(9)])
    packed = pack_turn([doc], "And the other one?", backend, conv, max_new_tokens=256,
                       context_window=got.context_window, new_tokens=new, embedder=None)
    assert packed.turn.compacted == 0 and packed.turn.reread_tokens == 0


def test_a_share_of_reading_time_gives_fewer_new_tokens_the_longer_the_conversation(
        monkeypatch):
    """FOLLOWUP_SHARE_OF = "time": the new turn may take the tokens that read in that share
    of the first question's reading time, read after the whole cached conversation (dearer
    per token the deeper); "tokens" gives the same count at any depth."""
    from docchat.answer import qa

    backend = Spanned(held=10 ** 6)
    b = base(backend)
    monkeypatch.setattr(qa, "FOLLOWUP_SHARE_OF", "time")
    short, long_ = conversation(turns=1), conversation(turns=2)
    new_short = turn_budget(backend, short, "And the other one?", 256, b)[1]
    new_long = turn_budget(backend, long_, "And the other one?", 256, b)[1]
    assert new_long < new_short < int(FOLLOWUP_NEW_SHARE * b.prompt_budget)
    for conv, new in ((short, new_short), (long_, new_long)):
        start = backend.count_prompt_tokens(conv.messages())
        first_s = backend.meter.work(0, b.prompt_budget) / backend.meter.rate
        took = backend.meter.work(start, start + new) / backend.meter.rate
        assert abs(took - FOLLOWUP_NEW_SHARE * first_s) < 0.05
    # never less than the question and a little evidence, however deep
    need = backend.count_prompt_tokens([Message("user", "And the other one?")])
    deep = turn_budget(backend, conversation(turns=8), "And the other one?", 256, b)[1]
    assert deep == need + qa.FOLLOWUP_MIN_EVIDENCE
    monkeypatch.setattr(qa, "FOLLOWUP_SHARE_OF", "tokens")
    assert turn_budget(backend, long_, "And the other one?", 256, b)[1] == int(
        FOLLOWUP_NEW_SHARE * b.prompt_budget)
    # a backend without a meter's positions keeps the share in tokens
    monkeypatch.setattr(qa, "FOLLOWUP_SHARE_OF", "time")
    assert turn_budget(Meter(held=10 ** 6), long_, "And the other one?", 256, b)[1] == int(
        FOLLOWUP_NEW_SHARE * b.prompt_budget)


def test_excerpts_read_ahead_come_on_top_of_the_share_only_while_the_cache_holds_them(
        monkeypatch):
    """A read-ahead (Conversation.ahead) is room besides the follow-up's share, and is used
    only where the backend's cache holds it: a question asked before it was read would
    read it on top of its own excerpts."""
    from dataclasses import replace

    from docchat.answer import qa
    from docchat.answer.qa import ahead_held
    from docchat.context.conversation import Ahead

    monkeypatch.setattr(qa, "AHEAD_NEW_SHARE", None)  # the same share with or without

    conv = conversation()
    ahead = replace(conv, ahead=Ahead((("doc", 3, None),), "## Excerpts\n" + "X" * 2000))
    prior = Meter().count_prompt_tokens(conv.messages())
    extra = Meter().count_prompt_tokens([Message("user", ahead.ahead.text)])
    for held in (None, 10 ** 6):
        backend = Meter(held=held)
        assert ahead_held(backend, ahead) is ahead
        without, new = turn_budget(backend, conv, "And the other one?", 256, base(backend))
        got, new_ahead = turn_budget(backend, ahead, "And the other one?", 256, base(backend))
        assert new_ahead == new and got.prompt_budget == without.prompt_budget + extra
    # the cache holds the conversation but only a little of what was read ahead
    backend = Meter(held=prior + extra // 4)
    assert ahead_held(backend, ahead).ahead is None
    assert ahead_held(backend, conv) is conv


def test_excerpts_read_ahead_are_left_out_where_the_window_has_no_room_for_a_share_after():
    from dataclasses import replace

    from docchat.answer.qa import ahead_held
    from docchat.context.conversation import Ahead

    conv = conversation()
    ahead = replace(conv, ahead=Ahead((("doc", 3, None),), "## Excerpts\n" + "X" * 2000))
    backend = Meter()
    total = backend.count_prompt_tokens(ahead.messages_ahead())
    roomy = Budget(total + 2000, 1256, 1000, TARGET, 100.0, False)
    assert ahead_held(backend, ahead, roomy, 256) is ahead
    full = Budget(total + 300, 1256, 1000, TARGET, 100.0, False)  # no room for 250 + 256
    assert ahead_held(backend, ahead, full, 256).ahead is None


def test_a_follow_up_after_excerpts_read_ahead_adds_its_own_smaller_share(monkeypatch):
    from dataclasses import replace

    from docchat.answer import qa
    from docchat.context.conversation import Ahead

    monkeypatch.setattr(qa, "AHEAD_NEW_SHARE", 0.1)
    backend = Meter(held=10 ** 6)
    conv = conversation()
    ahead = replace(conv, ahead=Ahead((("doc", 3, None),), "## Excerpts\n" + "X" * 2000))
    b = base(backend)
    assert turn_budget(backend, conv, "And the other one?", 256, b)[1] == int(
        FOLLOWUP_NEW_SHARE * b.prompt_budget)
    assert turn_budget(backend, ahead, "And the other one?", 256, b)[1] == int(
        0.1 * b.prompt_budget)


def test_a_read_ahead_cut_short_by_the_question_is_used_as_far_as_it_was_read(monkeypatch):
    """Asked while the read-ahead was still being read: the follow-up starts with the first
    passages the cache holds (not none of them), and its own share lies between the share
    after a whole read-ahead and the share without one, by how much of it was read."""
    from dataclasses import replace

    from docchat.answer import qa
    from docchat.answer.qa import ahead_held
    from docchat.context.conversation import Ahead

    monkeypatch.setattr(qa, "AHEAD_NEW_SHARE", 0.1)
    conv = conversation()
    texts = ["## Excerpts\n" + "A" * 800, "\n\n" + "B" * 800, "\n\n" + "C" * 800,
             "\n\n" + "D" * 800]
    ends = tuple(len("".join(texts[:k])) for k in range(1, 5))
    refs = tuple(("doc", k, None) for k in range(4))
    whole = Ahead(refs, "".join(texts), ends)
    ahead = replace(conv, ahead=whole)
    meter = Meter()
    prior = meter.count_prompt_tokens(conv.messages())
    two = meter.count_prompt_tokens([*conv.messages(), Message("user", whole.text[:ends[1]])])
    # read up to a little way into the third passage
    backend = Meter(held=two + 50)
    got = ahead_held(backend, ahead).ahead
    assert got is not None and got.passages == refs[:2] and got.text == whole.text[:ends[1]]
    assert got.ends == ends[:2] and abs(got.read - ends[1] / len(whole.text)) < 1e-9
    b = base(backend)
    new = turn_budget(backend, replace(conv, ahead=got), "And the other one?", 256, b)[1]
    assert int(0.1 * b.prompt_budget) < new < int(FOLLOWUP_NEW_SHARE * b.prompt_budget)
    assert new == int((FOLLOWUP_NEW_SHARE - (FOLLOWUP_NEW_SHARE - 0.1) * got.read)
                      * b.prompt_budget)
    # the first passage and a little of the second: the first one only; not quite all of
    # the first: none
    one = meter.count_prompt_tokens([*conv.messages(), Message("user", whole.text[:ends[0]])])
    assert ahead_held(Meter(held=one + 10), ahead).ahead.passages == refs[:1]
    assert ahead_held(Meter(held=one - 3), ahead).ahead is None
    # not even the first passage, or a read-ahead without its passages' ends: none
    assert ahead_held(Meter(held=prior + 20), ahead).ahead is None
    assert ahead_held(Meter(held=two + 50), replace(conv, ahead=replace(
        whole, ends=()))).ahead is None
