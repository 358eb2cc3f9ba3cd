from __future__ import annotations

import threading

import pytest
from factories import RecordingBackend, titled_doc

from docchat.answer.qa import MIN_PROMPT_BUDGET, ask, dense_ready, resolve_preset
from docchat.backends import Message
from docchat.backends.echo import EchoBackend
from docchat.errors import ContextTooLong
from ingest.document import Document


@pytest.fixture(autouse=True)
def no_packing_reserve(monkeypatch):
    """Each test starts with no packing time measured (qa.PREP is the process's)."""
    from docchat.answer import qa

    monkeypatch.setattr(qa, "PREP", qa.PrepTime())


@pytest.fixture
def unmeasured_packing(monkeypatch):
    """No packing time reserved, and none measured by the test's own questions: a test
    that expects a budget of exactly rate x target would otherwise get less after a first
    question packed slowly (0.3 s on a loaded machine made 1,500 tokens 1,455)."""
    from docchat.answer import qa

    monkeypatch.setattr(qa, "PREP", qa.PrepTime(prior=0.0))
    monkeypatch.setattr(qa.PREP, "add", lambda seconds: None)


def doc(n_pages=3, words=30) -> Document:
    return titled_doc("d.txt", [(f"{i + 1} Part", f"Page {i + 1} text " + "word " * words)
                                for i in range(n_pages)],
                      sha256="0" * 64, kind="text", tokens=words + 3, tokenizer="echo")


def test_answer_streams_and_reports_metrics():
    answer = ask([doc()], "What is on page two?", EchoBackend(), preset="raw")
    text = "".join(answer)
    assert text == answer.text and text.startswith("Echo: What is on page two?")
    assert "[p. 1]" in answer.packed.text  # the pages went into the prompt with markers
    assert answer.done and not answer.stopped
    m = answer.metrics
    assert m["completion_tokens"] == len(text.split()) and m["prompt_tokens"] > 0
    assert m["model"]["ttft_ms"] is not None and m["display"]["ttft_ms"] is not None
    assert answer.packed.whole and answer.backend == "echo"


def test_stop_keeps_partial_text_and_cancels_backend():
    backend = EchoBackend(reply=" ".join(f"w{i}" for i in range(200)))
    answer = ask([doc()], "q", backend, preset="raw")
    got = []
    for chunk in answer:
        got.append(chunk)
        if len(got) == 5:
            answer.stop()
    assert answer.stopped and answer.text == "".join(got)
    assert 5 <= len(got) <= 6
    assert answer.metrics["stopped"] is True
    assert answer.metrics["completion_tokens"] <= 7  # the backend stopped computing too


def test_context_too_long_raised_before_generation():
    backend = EchoBackend(context_window=60)
    with pytest.raises(ContextTooLong):
        ask([doc()], "word " * 100, backend, preset="raw")
    assert backend.queue.depth == 0


def test_preset_and_overrides_reach_the_request():
    backend = RecordingBackend(reply="one two three four five")
    answer = ask([doc()], "q", backend, preset="raw",
                 overrides={"max_new_tokens": 3, "temperature": 0.7})
    assert len("".join(answer).split()) == 3
    assert (backend.last.max_new_tokens, backend.last.temperature) == (3, 0.7)
    assert resolve_preset("quick", {"max_new_tokens": None}).generation["max_new_tokens"] == 512


def test_history_is_sent_to_the_backend():
    backend = RecordingBackend()
    history = [Message("user", "First question?"), Message("assistant", "First answer.")]
    "".join(ask([doc()], "And then?", backend, history=history, preset="raw"))
    [(sent, _)] = backend.requests
    assert [m.role for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1].content == "First question?"


def test_queue_position_reported_while_another_answer_runs():
    backend = EchoBackend(reply="a b c d e f", delay=0.05)
    first = ask([doc()], "q1", backend, preset="raw")
    it = iter(first)
    next(it)  # the first answer now holds the backend
    positions = []
    second = ask([doc()], "q2", backend, preset="raw", on_queue=positions.append)
    t = threading.Thread(target=lambda: "".join(second))
    t.start()
    rest = "".join(it)
    t.join(10)
    assert rest and second.text == "a b c d e f"
    assert positions[0] == 1 and positions[-1] == 0
    assert second.metrics["queue_ms"] > 0


def big_doc(n_sections=60, words=80) -> Document:
    """Many sections, each about one topic word, so packing must choose."""
    topics = ["port", "warranty", "vector", "network", "install"]
    texts = []
    for i in range(n_sections):
        topic = topics[i % len(topics)]
        texts.append((f"{i + 1} {topic.title()}",
                      f"The {topic} rule number {i} says this. " + "filler " * words))
    return titled_doc("big.txt", texts, sha256="1" * 64, kind="text", tokens=words + 10,
                      tokenizer="echo")


@pytest.mark.parametrize("rate", [150.0, 300.0])
def test_prompt_budget_follows_the_measured_prefill_rate(rate):
    backend = EchoBackend(context_window=8192)
    backend.prefill_rate = lambda: rate  # what the backend measured
    answer = ask([big_doc()], "What is the port rule?", backend, preset="raw", ttft_target=10)
    "".join(answer)
    b = answer.metrics["budget"]
    # read in what the target leaves after the packing (measured on earlier questions)
    assert 9 <= b["read_s"] <= 10 and b["target_s"] == 10 and b["rate"] == rate
    assert b["prompt_budget"] == int(rate * b["read_s"])
    assert answer.packed.tokens <= b["prompt_budget"]
    assert answer.budget.context_window == b["prompt_budget"] + 512
    assert answer.metrics["prompt_tokens"] == answer.packed.tokens


def test_the_reading_gets_the_target_less_the_wait_and_the_packing(monkeypatch):
    """The first token comes at the target, not the target plus what came before reading:
    the seconds since the user asked and the packing time of the last questions are
    reserved (at most half the target)."""
    from docchat.answer import qa

    now = [100.0]
    backend = EchoBackend(context_window=8192)
    backend.prefill_rate = lambda: 100.0
    qa.PREP.add(1.5)  # the last questions took 1.5 s to pack
    answer = ask([big_doc()], "What is the port rule?", backend, preset="raw", ttft_target=10,
                 started_at=98.0, clock=lambda: now[0])  # asked 2 s ago
    assert answer.budget.read_s == 6.5 and answer.budget.prompt_budget == 650
    late = ask([big_doc()], "What is the port rule?", backend, preset="raw", ttft_target=10,
               started_at=80.0, clock=lambda: now[0])
    assert late.budget.read_s == 5.0  # never less than half the target
    assert qa.PREP.seconds == 0.375  # both packed in no (fake) time: halved at each


def test_prompt_budget_is_what_the_backend_reads_in_the_target_for_a_prompt_that_long():
    """A backend that knows its reading slows with the prompt's length (prefill_tokens: the
    rate of recent prompts, attention's cost) sets the budget, not rate x target: 300 tok/s
    at the start of a prompt but 2,000 tokens in 10 s."""
    backend = EchoBackend(context_window=8192)
    backend.prefill_rate = lambda: 300.0
    asked = []
    backend.prefill_tokens = lambda seconds: asked.append(seconds) or 2000
    answer = ask([big_doc()], "What is the port rule?", backend, preset="raw", ttft_target=10)
    "".join(answer)
    assert asked == [answer.budget.read_s] and answer.budget.prompt_budget == 2000
    assert answer.packed.tokens <= 2000 and answer.metrics["budget"]["rate"] == 300.0


def test_whole_window_unknown_rate_or_no_target_reads_the_window():
    slow = EchoBackend(context_window=8192)
    slow.prefill_rate = lambda: 120.0
    budgeted = ask([big_doc()], "port?", slow, preset="raw", ttft_target=10)
    whole = ask([big_doc()], "port?", slow, preset="raw", ttft_target=10, whole_window=True)
    assert budgeted.packed.tokens <= 1200 < whole.packed.tokens
    assert whole.budget.prompt_budget is None and whole.budget.whole_window
    unknown = ask([big_doc()], "port?", EchoBackend(), preset="raw", ttft_target=10)
    assert unknown.budget.prompt_budget is None  # echo without prefill_tps: rate unknown
    assert unknown.packed.tokens == whole.packed.tokens
    off = ask([big_doc()], "port?", slow, preset="raw", ttft_target=0)
    assert off.budget.prompt_budget is None


def test_a_very_slow_backend_still_gets_a_useful_budget():
    backend = EchoBackend(context_window=8192)
    backend.prefill_rate = lambda: 5.0  # 50 tokens in 10 s would leave no evidence
    answer = ask([big_doc()], "port?", backend, preset="raw", ttft_target=10)
    assert answer.budget.prompt_budget == MIN_PROMPT_BUDGET == 512


def test_evidence_is_ready_before_the_answer_is_read():
    answer = ask([big_doc()], "What does the warranty rule say?", EchoBackend(), preset="raw")
    assert answer.evidence and not answer.text  # ready at once, nothing generated yet
    assert all("warranty" in s.text for e in answer.evidence for s in e.sentences)
    assert answer.evidence_ms is not None and answer.evidence_ms >= 0
    "".join(answer)
    assert answer.metrics["evidence"][0]["sentences"][0]["text"].startswith("The warranty rule")
    assert answer.metrics["sections"] == [list(s) for s in answer.packed.sections]


def test_progress_events_rise_to_the_total_before_the_first_token():
    seen, first_token_at = [], []
    backend = EchoBackend(reply="one two", prefill_tps=4000)
    answer = ask([big_doc(n_sections=10)], "port?", backend, preset="raw",
                 on_progress=lambda p: seen.append((p, first_token_at[:])))
    for _ in answer:
        first_token_at.append(True)
    done = [p.done for p, _ in seen]
    assert len(done) >= 3 and done == sorted(done) and done[-1] == seen[-1][0].total
    assert all(not before for _, before in seen)  # every event came before the first token
    assert answer.progress.done == answer.progress.total == answer.metrics["prompt_tokens"]
    assert answer.metrics["prefill_ms"] is not None


def test_stop_during_prefill_ends_before_any_token():
    backend = EchoBackend(reply="one two", prefill_tps=200)
    answer = ask([big_doc(n_sections=10)], "port?", backend, preset="raw")
    answer.on_progress = lambda p: p.done >= 40 and answer.stop()
    t = threading.Thread(target=lambda: "".join(answer))
    t.start()
    t.join(5)
    assert not t.is_alive() and answer.text == "" and answer.stopped
    assert answer.progress.done < answer.progress.total
    assert backend.queue.depth == 0  # the queue is free for the next question


def test_previous_sections_reach_the_packer(monkeypatch):
    import docchat.answer.qa as qa

    seen = {}
    real = qa.pack

    def pack(*args, previous_sections=None, **kw):
        seen["previous"] = previous_sections
        return real(*args, **kw)

    monkeypatch.setattr(qa, "pack", pack)
    "".join(ask([big_doc()], "port?", EchoBackend(), preset="raw",
                previous_sections=[[None, 3], ["big.txt", 5]]))
    assert seen["previous"] == [(None, 3), ("big.txt", 5)]  # JSON lists back to tuples


def test_question_does_not_wait_for_section_vectors_still_being_computed(monkeypatch):
    import docchat.answer.qa as qa

    class Embedder:
        enabled = True

        def __init__(self, ready):
            self._ready = ready

        def ready(self, doc, store=None):
            return self._ready

    seen = {}
    real = qa.pack

    def pack(*args, **kw):
        seen["embedder"] = kw.get("embedder", "default")
        return real(*args, **kw)

    monkeypatch.setattr(qa, "pack", pack)
    assert dense_ready([big_doc()], embedder=Embedder(True))
    assert not dense_ready([big_doc()], embedder=Embedder(False))
    monkeypatch.setattr(qa, "DEFAULT_EMBEDDER", Embedder(False))
    answer = ask([big_doc()], "port?", EchoBackend(), preset="raw")
    assert seen["embedder"] is None and answer.evidence  # BM25 alone, evidence at once
    "".join(answer)
    assert answer.metrics["dense"] is False
    monkeypatch.setattr(qa, "DEFAULT_EMBEDDER", Embedder(True))
    "".join(ask([big_doc()], "port?", EchoBackend(), preset="raw"))
    assert seen["embedder"] == "default"


def test_follow_up_budget_counts_only_new_tokens(unmeasured_packing):
    from docchat.answer.qa import FOLLOWUP_NEW_SHARE
    from docchat.context.packing import prefix_tokens
    from docchat.context.prompts import label

    backend = EchoBackend(context_window=8192)
    backend.prefill_rate = lambda: 150.0
    first = ask([big_doc()], "What is the port rule?", backend, preset="raw", ttft_target=10)
    "".join(first)
    history = [Message("user", "What is the port rule?"), Message("assistant", first.text)]
    prev = first.metrics["passages"]  # as chat stores it (JSON lists)
    follow = ask([big_doc()], "And its exceptions?", backend, preset="raw", ttft_target=10,
                 history=history, previous_sections=prev)
    reused = prefix_tokens([big_doc()], backend, prev, context_window=1500 + 512,
                           max_new_tokens=512)
    assert follow.budget.prompt_budget == reused + int(FOLLOWUP_NEW_SHARE * 1500)
    assert follow.packed.carried == len(prev)
    assert follow.packed.messages[0].content.startswith(
        first.packed.messages[0].content.split("\n\n## " + label("en", "focus"))[0])
    assert follow.packed.tokens - reused <= int(FOLLOWUP_NEW_SHARE * 1500) + 8


def test_a_question_over_the_first_token_budget_reads_the_whole_window():
    """A question longer than the time budget (a slow machine, a pasted log): the answer
    comes from the whole window instead of a "prompt needs N of 512 tokens" error; over the
    whole window it is still ContextTooLong."""
    backend = EchoBackend(context_window=8192)
    backend.prefill_rate = lambda: 5.0  # budget: MIN_PROMPT_BUDGET tokens
    question = "Why does this log fail on the port rule? " + "log " * 600
    answer = ask([big_doc()], question, backend, preset="raw", ttft_target=10)
    assert answer.budget.prompt_budget is None
    assert MIN_PROMPT_BUDGET < answer.packed.tokens <= 8192 - 512
    assert answer.packed.messages[-1].content == question
    "".join(answer)
    with pytest.raises(ContextTooLong):
        ask([big_doc()], "log " * 9000, backend, preset="raw", ttft_target=10)


def test_chinese_documents_count_for_dense_readiness_with_the_multilingual_model():
    """The multilingual model embeds Chinese documents too: while a Chinese upload's vectors are
    still being computed, its first question goes by BM25 instead of waiting."""
    from docchat.context import embeddings

    zh = titled_doc("zh.txt", [("备份", "用 rsync 备份主目录。")], language="zh")
    use = embeddings.Embedder(model=embeddings.USE)
    minilm = embeddings.Embedder(model=embeddings.MINILM)
    assert not dense_ready([zh], embedder=use)  # nothing embedded or stored yet
    assert dense_ready([zh], embedder=minilm)  # MiniLM leaves Chinese to BM25
    use.vectors(zh)
    assert dense_ready([zh], embedder=use)


def test_follow_up_budget_is_returned_with_what_the_packer_is_told():
    """followup_budget returns its budget, allowance and outline window (no dict filled)."""
    from docchat.answer.qa import FollowUp, choose_budget, followup_budget
    from docchat.context.packing import pack

    backend = EchoBackend(context_window=8192)
    backend.prefill_rate = lambda: 150.0
    base = choose_budget(backend, 512, 10)
    first = pack([big_doc()], "What is the port rule?", backend, max_new_tokens=512,
                 context_window=base.context_window)
    got = followup_budget([big_doc()], "And its exceptions?", backend, [], 3, 512, base,
                          first.passages)
    assert isinstance(got, FollowUp) and got.outline_window == base.context_window
    assert got.carry_allowance == got.budget.prompt_budget - base.prompt_budget > 0


def test_previous_passages_are_a_typed_value():
    """PreviousPassages: exact passages (with blocks) or sections only, from a PackedContext
    or from stored metrics; ask(previous=...) carries exact ones."""
    from docchat.context.packing import PreviousPassages

    backend = EchoBackend(context_window=8192)
    backend.prefill_rate = lambda: 150.0
    first = ask([big_doc()], "What is the port rule?", backend, preset="raw", ttft_target=10)
    "".join(first)
    stored = PreviousPassages.from_metrics(first.metrics)
    assert stored == PreviousPassages.of(first.packed) and stored.exact
    sections = PreviousPassages.from_metrics({"sections": first.metrics["sections"]})
    assert not sections.exact and [r[:2] for r in sections.refs] == first.packed.sections
    assert PreviousPassages.from_metrics({}) is None
    history = [Message("user", "What is the port rule?"), Message("assistant", first.text)]
    follow = ask([big_doc()], "And its exceptions?", backend, preset="raw", ttft_target=10,
                 history=history, previous=stored)
    assert follow.packed.carried == len(stored.refs)
    assert follow.packed.passages[:len(stored.refs)] == list(stored.refs)


def test_an_append_only_conversation_through_ask_and_the_stored_turns(unmeasured_packing):
    """ask(conversation=...) sends the earlier turns exactly as the stored metrics say they
    were sent: the follow-up's prompt starts with the first prompt plus its answer, and its
    budget is the earlier turns plus a first question's budget."""
    from types import SimpleNamespace as Turn

    from docchat.context.conversation import Conversation

    backend = EchoBackend(context_window=8192)
    backend.prefill_rate = lambda: 150.0
    first = ask([big_doc()], "What is the port rule?", backend, preset="raw", ttft_target=10,
                conversation=Conversation())
    "".join(first)
    m = first.metrics
    assert m["turn_message"] == first.packed.messages[-1].content
    assert m["system_message"] == first.packed.messages[0].content
    stored = [Turn(role="user", content="What is the port rule?", status="done", metrics={}),
              Turn(role="assistant", content=first.text, status="done", metrics=m)]
    conv = Conversation.from_turns(stored)
    assert conv == Conversation().then(first.packed, first.text)
    follow = ask([big_doc()], "And its exceptions?", backend, preset="raw", ttft_target=10,
                 conversation=conv)
    sent = follow.packed.messages
    assert sent[:3] == [*first.packed.messages, Message("assistant", first.text)]
    prior = backend.count_prompt_tokens(sent[:3])
    assert follow.budget.prompt_budget == prior + 1500
    assert follow.packed.tokens - prior <= int(0.25 * 1500) + 8  # still about the port rule


@pytest.mark.parametrize("loop, language", [("It loops here again. ", "en"),
                                            ("系统通过先记录内层循环的轨迹来处理嵌套循环。", "zh")])
def test_a_looping_answer_keeps_the_text_before_the_loop_and_says_it_was_cut(loop, language):
    from factories import Looping

    from docchat.backends.repetition import NOTE
    prose = "The guide covers setup and ports. " if language == "en" else "本指南介绍安装和端口。"
    question = "What is this guide about?" if language == "en" else "这份指南讲什么？"
    answer = ask([doc()], question, Looping(prose, loop), preset="raw")
    streamed = "".join(answer)
    assert answer.metrics["finish_reason"] == "repetition"
    kept = answer.text[: -len(NOTE[language])].rstrip()
    assert streamed.startswith(kept)  # what was shown, less any loop after it
    assert kept.count(loop.strip()) == 1  # the kept answer says it once
    assert kept.startswith(prose.strip()) and answer.text.endswith(NOTE[language])


def test_a_first_question_plans_its_reading_with_a_margin_until_one_is_measured():
    """A backend that counts its questions' reads (llama.cpp, transformers) has only the
    idle probe to go by before the first: that one plans FIRST_READ_SHARE of the time left
    (the page is drawn on the same cores meanwhile); once a question's read is measured, the
    whole of it. Before any question, packing is reserved at PrepTime's prior."""
    from docchat.answer import qa
    from docchat.backends.base import RateMeter

    backend = EchoBackend(context_window=8192)
    backend.prefill_rate = lambda: 100.0
    backend.rate_meter = RateMeter(questions=0)
    first = qa.choose_budget(backend, 256, 10.0, reserve_s=qa.PrepTime().seconds)
    assert first.read_s == round((10.0 - 0.5) * qa.FIRST_READ_SHARE, 1)
    assert first.prompt_budget == int(100.0 * first.read_s)
    backend.rate_meter.questions = 1
    later = qa.choose_budget(backend, 256, 10.0, reserve_s=0.5)
    assert later.read_s == 9.5 and later.prompt_budget == 950
    backend.rate_meter = RateMeter()  # a backend that does not count: no margin
    assert qa.choose_budget(backend, 256, 10.0).read_s == 10.0


def test_a_read_cut_at_the_deadline_keeps_what_the_model_read():
    """The request carries the first-token deadline and the turn's shorter forms; where the
    backend reads one of those instead (stats.cut), the answer's packed context, the turn
    stored with it and its evidence are that form's (what the model read)."""
    from docchat.context.conversation import Conversation

    class Cutting(EchoBackend):
        def stream(self, request):
            assert request.deadline is not None and len(request.shorter) >= 1
            request.stats.cut = len(request.shorter) - 1  # the shortest form
            self.read = request.shorter[-1]
            yield from super().stream(request)

    backend = Cutting(context_window=8192)
    backend.prefill_rate = lambda: 150.0
    answer = ask([big_doc()], "What is the port rule?", backend, preset="raw",
                 ttft_target=10, conversation=Conversation())
    full = answer.packed
    "".join(answer)
    short = full.shorter[-1]
    assert answer.packed.messages == short.messages == list(backend.read)
    assert answer.packed.passages == short.passages
    # What the turn was about stays known: the next question's topic is judged on it.
    assert answer.packed.turn.chosen == full.turn.passages != short.turn.passages
    assert len(short.passages) < len(full.passages) and short.tokens < full.tokens
    # pack_turn estimated the form's tokens; the answer's packed context has them counted.
    assert answer.packed.tokens == backend.count_prompt_tokens(short.messages)
    m = answer.metrics
    assert m["cut"]["to_tokens"] == answer.packed.tokens
    assert m["turn_message"] == short.messages[-1].content
    assert m["passages"] == [[k, i, None if b is None else list(b)] for k, i, b in short.passages]
    assert m["cut"]["passages_dropped"] == len(full.passages) - len(short.passages)
    kept = set(short.sections)
    assert all((e["doc_id"], e["section"]) in kept or (e["doc_name"], e["section"]) in kept
               for e in m["evidence"])
    from types import SimpleNamespace as Turn
    stored = Conversation.from_turns([
        Turn(role="user", content="What is the port rule?", status="done", metrics={}),
        Turn(role="assistant", content=answer.text, status="done", metrics=m)])
    assert stored == Conversation().then(answer.packed, answer.text)
    assert stored.present() == list(short.passages)
    assert stored.about() == list(full.turn.passages)


def test_no_deadline_without_a_first_token_target():
    backend = RecordingBackend(context_window=8192)
    from docchat.context.conversation import Conversation

    "".join(ask([big_doc()], "What is the port rule?", backend, preset="raw",
                conversation=Conversation()))
    assert backend.last.deadline is None and backend.last.shorter == ()
