"""transformers backend with a tiny Llama trained here on a tokenizer trained here.

The tiny model's greedy words depend on the CPU's floating point (on an AVX2-only
EPYC it answers other characters than on the machine these tests were first written
on), so no test asserts them: answers are checked against the same backend's own
token ids, and exact text is asserted only where a scripted model (logits that pick
given tokens) produces it deterministically on every CPU.
"""
from __future__ import annotations

import copy
import threading
import time

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from docchat.backends import GenerationRequest, Message, plain_prompt  # noqa: E402
from docchat.backends.hf import Detokenizer, HFBackend  # noqa: E402
from docchat.errors import BackendError, BackendUnavailable, ContextTooLong  # noqa: E402

CHINESE = "你好，世界！我爱北京天安门。"
STORY = " once upon a time a small dragon lived in the mountains and read books all day"
TEMPLATE = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}<|assistant|>"
EXAMPLES = [  # (prompt messages, answer, uses the chat template)
    ([Message("user", "Say hello in Chinese.")], CHINESE, False),
    ([Message("user", "Tell a story.")], STORY, False),
    ([Message("system", "Be brief."), Message("user", "问候")], " hello world", True),
]


def build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<eos>", "<|user|>", "<|system|>", "<|assistant|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    corpus = [STORY, "Say hello in Chinese. Tell a story. User: System: Assistant:",
              "hello world, be brief", "我爱北京"]
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<eos>")


def encode(tokenizer, messages, templated):
    if templated:
        return tokenizer.apply_chat_template([{"role": m.role, "content": m.content}
                                              for m in messages], add_generation_prompt=True)
    return tokenizer(plain_prompt(messages))["input_ids"]


@pytest.fixture(scope="module")
def tiny():
    """A 2-layer Llama that has memorised EXAMPLES (greedy answers are known)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    plain = build_tokenizer()
    templated = copy.deepcopy(plain)
    templated.chat_template = TEMPLATE
    config = LlamaConfig(vocab_size=len(plain), hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                         max_position_embeddings=256, eos_token_id=plain.eos_token_id,
                         pad_token_id=plain.eos_token_id)
    model = LlamaForCausalLM(config)
    rows = []
    for messages, answer, use_template in EXAMPLES:
        prompt = encode(templated if use_template else plain, messages, use_template)
        target = plain(answer, add_special_tokens=False)["input_ids"] + [plain.eos_token_id]
        rows.append((prompt + target, len(prompt)))
    width = max(len(ids) for ids, _ in rows)
    # One right-padded batch; padding and prompts are masked out of the loss.
    ids = torch.tensor([row + [plain.eos_token_id] * (width - len(row)) for row, _ in rows])
    labels = torch.full_like(ids, -100)
    mask = torch.zeros_like(ids)
    for i, (row, n_prompt) in enumerate(rows):
        labels[i, n_prompt:len(row)] = ids[i, n_prompt:len(row)]
        mask[i, :len(row)] = 1
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-2)
    for _ in range(100):
        optimizer.zero_grad()
        model(input_ids=ids, attention_mask=mask, labels=labels).loss.backward()
        optimizer.step()
    model.eval()
    return model, plain, templated


@pytest.fixture
def backend(tiny):
    model, plain, _ = tiny
    return HFBackend(model=model, tokenizer=plain, timeout=30)


def ask(messages, **options):
    options.setdefault("max_new_tokens", 40)
    return GenerationRequest(messages=list(messages), **options)


def own_text(backend) -> str:
    """The backend's last answer decoded in one go (its own non-streamed text)."""
    text = backend.tokenizer.decode(backend.last_output_ids, skip_special_tokens=True)
    return text.replace("\ufffd", "")  # bytes that never formed a character


class Scripted(torch.nn.Module):
    """The tiny model with its logits replaced so that it answers the given tokens.

    Its cache and positions are the real model's; only the choice of token is fixed,
    so the answer is the same on every CPU.
    """

    def __init__(self, model, prompt_len: int, script: list[int], delay: float = 0.0):
        super().__init__()
        self.inner, self.config = model, model.config
        self.prompt_len, self.script, self.delay = prompt_len, script, delay
        self.calls = 0

    @property
    def device(self):
        return self.inner.device

    def forward(self, **options):
        self.calls += 1
        if self.delay:
            time.sleep(self.delay)
        out = self.inner(**options)
        step = int(options["position_ids"][0, -1]) - (self.prompt_len - 1)
        logits = torch.full_like(out.logits, -1e9)
        if 0 <= step < len(self.script):
            logits[..., self.script[step]] = 0.0
        else:
            logits[..., self.config.eos_token_id] = 0.0
        out.logits = logits
        return out


def scripted_backend(tiny, messages, text: str, delay: float = 0.0, **options):
    model, plain, _ = tiny
    probe = HFBackend(model=model, tokenizer=plain, probe_tokens=0)
    prompt_len = probe.count_prompt_tokens(messages)
    script = plain(text, add_special_tokens=False)["input_ids"]
    return HFBackend(model=Scripted(model, prompt_len, script, delay), tokenizer=plain,
                     probe_tokens=0, **options), script


def test_detokenizer_never_splits_characters(tiny):
    _, plain, _ = tiny
    text = CHINESE + STORY + "，世界！"
    ids = plain(text, add_special_tokens=False)["input_ids"]
    alone = [plain.decode([i]) for i in ids]
    assert any("\ufffd" in a for a in alone), "the byte-level tokenizer splits CJK characters"
    detokenizer = Detokenizer(plain)
    pieces = [p for p in (detokenizer.add(i) for i in ids) if p]
    assert "".join(pieces) == text == plain.decode(ids)
    assert not any("\ufffd" in p for p in pieces) and len(pieces) < len(ids)


def test_chinese_stream_equals_generate_and_never_splits_characters(tiny):
    messages = EXAMPLES[0][0]
    backend, script = scripted_backend(tiny, messages, CHINESE)
    request = ask(messages, max_new_tokens=40)
    pieces = list(backend.stream(request))
    assert "".join(pieces) == own_text(backend) == CHINESE
    assert not any("\ufffd" in p for p in pieces)
    stats = request.stats
    assert stats.finish_reason == "stop" and not stats.stopped
    # The byte-level tokenizer spells most characters with several tokens.
    assert stats.completion_tokens == len(script) > len(pieces)
    assert stats.prompt_tokens == backend.count_prompt_tokens(messages)


def test_real_model_stream_equals_its_own_tokens(backend):
    # Whatever the tiny model answers on this CPU (U+FFFD included, on some), the stream
    # is its decoded token ids, with no U+FFFD and no character split.
    for messages, _, _ in EXAMPLES[:2]:
        pieces = list(backend.stream(ask(messages, max_new_tokens=30)))
        assert "".join(pieces) == own_text(backend)
        assert not any("\ufffd" in p for p in pieces)


def test_chat_template_is_applied(tiny):
    model, _, templated = tiny
    backend = HFBackend(model=model, tokenizer=templated)
    messages = EXAMPLES[2][0]
    ids = backend.prompt_ids(messages)[0].tolist()
    assert templated.decode(ids) == "<|system|>Be brief.<|user|>问候<|assistant|>"
    request = ask(messages, max_new_tokens=20)
    assert "".join(backend.stream(request)) == own_text(backend)
    assert request.stats.prompt_tokens == len(ids)


def test_plain_fallback_format(backend):
    messages = [Message("system", "S"), Message("user", "Q")]
    assert backend.tokenizer.decode(backend.prompt_ids(messages)[0]) == \
        "System: S\n\nUser: Q\n\nAssistant:"


def test_cancel_stops_within_one_token(tiny):
    backend, _ = scripted_backend(tiny, EXAMPLES[1][0], STORY)
    request = ask(EXAMPLES[1][0], max_new_tokens=60)
    pieces = []
    for piece in backend.stream(request):
        pieces.append(piece)
        if len(pieces) == 3:
            request.cancel.set()
    assert len(pieces) == 3 and STORY.startswith("".join(pieces))
    assert request.stats.stopped and request.stats.finish_reason == "cancelled"
    assert request.stats.completion_tokens <= 3 + 1


def _timed_cancel(tiny, cancel_inside_model: bool) -> float:
    """Seconds from Stop to the end of the stream, Stop landing in either race order."""
    backend, _ = scripted_backend(tiny, EXAMPLES[1][0], STORY, delay=0.05)
    model = backend.hf_model
    request = ask(EXAMPLES[1][0], max_new_tokens=60)
    stream = backend.stream(request)
    next(stream)
    stopped_at = []
    if cancel_inside_model:
        # The generating side wins: Stop arrives while the model computes the next token
        # and the consumer is already waiting for it.
        calls = model.calls

        def stop_when_busy():
            while model.calls == calls:
                time.sleep(0.001)
            stopped_at.append(time.perf_counter())
            request.cancel.set()

        threading.Thread(target=stop_when_busy, daemon=True).start()
    else:
        # The consuming side wins: Stop is set before the consumer asks for more.
        stopped_at.append(time.perf_counter())
        request.cancel.set()
    rest = list(stream)
    took = time.perf_counter() - stopped_at[0]
    assert len(rest) <= 1 and request.stats.finish_reason == "cancelled"
    assert backend.queue.depth == 0
    return took


def test_stop_never_waits_when_the_model_side_wins(tiny):
    assert _timed_cancel(tiny, cancel_inside_model=True) < 0.5


def test_stop_never_waits_when_the_consumer_side_wins(tiny):
    assert _timed_cancel(tiny, cancel_inside_model=False) < 0.5


def test_close_stops_generation(backend):
    request = ask(EXAMPLES[1][0], max_new_tokens=60)
    stream = backend.stream(request)
    next(stream)
    stream.close()
    assert request.stats.stopped and request.stats.completion_tokens <= 2


def test_max_new_tokens(backend):
    request = ask(EXAMPLES[1][0], max_new_tokens=4)
    text = "".join(backend.stream(request))
    assert request.stats.completion_tokens == 4 and request.stats.finish_reason == "length"
    assert text == own_text(backend) and len(backend.last_output_ids) == 4


def test_prompt_too_long_raises_before_generating(backend, monkeypatch):
    monkeypatch.setattr(backend, "_forward", lambda ids: pytest.fail("computed"))
    request = ask([Message("user", "dragon " * 200)], max_new_tokens=100)
    with pytest.raises(ContextTooLong, match="context window is 256 tokens"):
        next(backend.stream(request))


def test_error_in_the_model_reaches_caller(backend, monkeypatch):
    def broken(**kwargs):
        raise ValueError("weights are NaN")

    monkeypatch.setattr(backend.hf_model, "forward", broken)
    request = ask(EXAMPLES[1][0])
    with pytest.raises(BackendError, match="weights are NaN"):
        list(backend.stream(request))
    assert request.stats.finish_reason == "error" and backend.queue.depth == 0


def test_out_of_memory_once_then_backend_keeps_working(backend, monkeypatch):
    real = backend.hf_model.forward
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
        return real(*args, **kwargs)

    monkeypatch.setattr(backend.hf_model, "forward", flaky)
    with pytest.raises(BackendError, match="shorten the documents or lower max_new_tokens"):
        list(backend.stream(ask(EXAMPLES[0][0])))
    request = ask(EXAMPLES[0][0])
    text = "".join(backend.stream(request))
    assert text == own_text(backend) and request.stats.finish_reason in ("stop", "length")
    assert request.stats.prompt_reused == 0  # the failed request's cache was dropped


# -- prefill: chunks, progress, cancel, KV reuse, rate, prefetch -----------------------

LONG = [Message("user", "Tell a story." + STORY * 6)]


def test_progress_rises_monotonically_to_the_total(tiny):
    model, plain, _ = tiny
    backend = HFBackend(model=model, tokenizer=plain, prefill_chunk=16)
    events = []
    request = ask(LONG, max_new_tokens=2, on_progress=events.append)
    list(backend.stream(request))
    total = request.stats.prompt_tokens
    assert total > 64 and len(events) >= total // 16
    assert events[0].done == 0 and events[-1].done == total
    dones = [e.done for e in events]
    assert dones == sorted(dones) and all(e.total == total and e.known for e in events)
    assert request.stats.prefill_ms > 0


def test_cancel_during_prefill_stops_early(tiny):
    model, plain, _ = tiny
    backend = HFBackend(model=model, tokenizer=plain, prefill_chunk=16)

    def stop_after_first_chunk(progress):
        if progress.done > progress.reused:
            request.cancel.set()

    request = ask(LONG, max_new_tokens=20, on_progress=stop_after_first_chunk)
    assert list(backend.stream(request)) == []
    assert request.stats.finish_reason == "cancelled" and request.stats.completion_tokens == 0
    assert len(backend._cache_ids) == 16 < request.stats.prompt_tokens - 16  # evaluated
    assert backend.queue.depth == 0


def test_follow_up_reuses_the_cached_prefix_with_the_same_logits(tiny):
    model, plain, _ = tiny
    backend = HFBackend(model=model, tokenizer=plain, prefill_chunk=16)
    list(backend.stream(ask(LONG, max_new_tokens=3)))
    follow = LONG + [Message("assistant", "ok"), Message("user", "Again.")]
    request = ask(follow, max_new_tokens=3)
    list(backend.stream(request))
    assert request.stats.prompt_reused >= backend.count_prompt_tokens(LONG) - 3
    # The reused cache gives the logits a fresh read gives.
    ids = backend.prompt_ids(follow)[0].tolist()
    backend._read(ids, len(ids) - 1, ask(follow), lambda: False)
    warm = backend._forward(ids[-1:])
    backend.reset()
    backend._read(ids, len(ids) - 1, ask(follow), lambda: False)
    cold = backend._forward(ids[-1:])
    assert torch.allclose(warm, cold, atol=1e-4)


def test_prefetch_warms_the_cache(tiny):
    model, plain, _ = tiny
    backend = HFBackend(model=model, tokenizer=plain, prefill_chunk=16)
    system = Message("system", STORY * 3)
    backend.prefetch([system])
    assert backend.wait_prefetch(30)
    warmed = len(backend._cache_ids)
    assert warmed >= backend.count_tokens(system.content)
    request = ask([Message("system", system.content + " and more"), Message("user", "Hi.")])
    list(backend.stream(request))
    assert request.stats.prompt_reused >= warmed - 2


def test_cached_tokens_says_what_the_kv_cache_holds(tiny):
    """What qa.turn_budget asks: how much of a prompt's start the cache holds now."""
    model, plain, _ = tiny
    backend = HFBackend(model=model, tokenizer=plain, prefill_chunk=16)
    system = Message("system", STORY * 3)
    assert backend.cached_tokens([system]) == 0  # nothing read yet
    backend.prefetch([system])
    assert backend.wait_prefetch(30)
    assert backend.cached_tokens([system]) == len(backend._prefix([system])) > 0
    other = Message("system", "Something else entirely. " + STORY)
    assert backend.cached_tokens([other]) < backend.cached_tokens([system]) // 4  # the template


def test_prefill_rate_follows_real_prefills(tiny):
    model, plain, _ = tiny
    backend = HFBackend(model=model, tokenizer=plain)
    before = backend.prefill_rate()
    assert before and before > 0  # the probe at load
    request = ask(LONG, max_new_tokens=1)
    list(backend.stream(request))
    measured = request.stats.prompt_tokens / (request.stats.prefill_ms / 1000)
    after = backend.prefill_rate()
    assert after != before and min(before, measured) <= after <= max(before, measured)


def test_chatglm_needs_pinned_transformers(tiny, monkeypatch):
    model, plain, _ = tiny
    glm = copy.deepcopy(model)
    glm.config.model_type = "chatglm"
    monkeypatch.setattr(transformers, "__version__", "4.44.0")
    with pytest.raises(BackendUnavailable, match="pip install transformers==4.40.2"):
        HFBackend(model=glm, tokenizer=plain)


# -- ChatGLM3: the cache kept across turns, the prefix never repeated ------------------

chatglm_standin = pytest.importorskip("tests.backends.chatglm_standin")
GLM_TURN_1 = [Message("system", "Answer from the excerpts. [p. 3] Rivers carry silt."),
              Message("user", "What do rivers carry?")]


def glm_backend(*replies):
    model = chatglm_standin.GLMModel(replies=[chatglm_standin.reply_ids(r) for r in replies])
    return HFBackend(model=model, tokenizer=chatglm_standin.GLMTokenizer(), probe_tokens=0,
                     prefill_chunk=16)


def test_chatglm_prompt_is_build_chat_input_with_the_prefix_once():
    backend = glm_backend()
    tokenizer = backend.tokenizer
    assert backend.stop_token_ids == [2, 64795, 64797]
    history = GLM_TURN_1 + [Message("assistant", "Silt."), Message("user", "And floods?")]
    ids = backend.prompt_ids(history)[0].tolist()
    expected = tokenizer.build_chat_input(
        "And floods?", history=[{"role": m.role, "content": m.content} for m in history[:-1]])
    assert ids == expected["input_ids"][0].tolist()
    prefix = [chatglm_standin.GMASK, chatglm_standin.SOP]
    assert ids[:2] == prefix and not set(prefix) & set(ids[2:])
    # What the official stream_chat appends to its past_key_values for the new turn alone:
    assert tokenizer.build_chat_input("And floods?")["input_ids"][0].tolist()[:2] == prefix


@pytest.mark.parametrize("stored", [lambda a: a, str.strip], ids=["as streamed", "stripped"])
def test_chatglm_follow_up_runs_the_model_on_the_new_turn_only(stored):
    backend = glm_backend("Silt and sand.", "They spread it.")
    model, tokenizer = backend.hf_model, backend.tokenizer
    first = ask(GLM_TURN_1, max_new_tokens=40)
    answer = "".join(backend.stream(first))
    assert answer == "\nSilt and sand." and first.stats.finish_reason == "stop"
    prompt_1 = backend.prompt_ids(GLM_TURN_1)[0].tolist()
    fed_before = len(model.fed)

    follow = GLM_TURN_1 + [Message("assistant", stored(answer)), Message("user", "And floods?")]
    second = ask(follow, max_new_tokens=40)
    assert "".join(backend.stream(second)) == "\nThey spread it."
    new_turn = tokenizer.build_single_message("user", "", "And floods?") + [64796]
    fed = [t for _, t in model.fed[fed_before:]]
    # Turn 2 reads <|user|> "\n" question <|assistant|>, then decodes; nothing before it.
    assert fed[:len(new_turn)] == new_turn
    assert len(fed) == len(new_turn) + len(chatglm_standin.reply_ids("They spread it."))
    own_answer = chatglm_standin.reply_ids("Silt and sand.")
    assert second.stats.prompt_reused == len(prompt_1) + len(own_answer)
    # The model's sequence: [gMASK] sop once, at the start; turn 1's answer as it made it.
    sequence = model.sequence()
    assert sequence[:2] == [chatglm_standin.GMASK, chatglm_standin.SOP]
    assert {chatglm_standin.GMASK, chatglm_standin.SOP}.isdisjoint(sequence[2:])
    assert [p for p, t in model.fed if t == chatglm_standin.GMASK] == [0]
    assert sequence[:len(prompt_1) + len(own_answer)] == prompt_1 + own_answer


def test_chatglm_cache_that_does_not_match_is_dropped_with_the_same_logits():
    backend = glm_backend("Silt and sand.")
    list(backend.stream(ask(GLM_TURN_1, max_new_tokens=40)))
    other = [Message("system", "Answer from the excerpts. [p. 9] Glaciers carve."),
             Message("user", "What do glaciers do?")]
    request = ask(other, max_new_tokens=1)
    ids = backend.prompt_ids(other)[0].tolist()
    list(backend.stream(request))
    shared = next(i for i, (a, b) in enumerate(zip(ids, backend.prompt_ids(GLM_TURN_1)[0]))
                  if a != int(b))
    assert request.stats.prompt_reused == shared < len(ids) // 2
    # The cropped (seq, batch, heads, dim) cache gives the logits a fresh read gives.
    backend._read(ids, len(ids) - 1, ask(other), lambda: False)
    warm = backend._forward(ids[-1:])
    backend.reset()
    backend._read(ids, len(ids) - 1, ask(other), lambda: False)
    assert torch.allclose(warm, backend._forward(ids[-1:]), atol=1e-5)


def test_follow_up_keeps_the_answer_as_generated_where_the_template_respells_it(tiny):
    """A byte-level BPE model that answered in single-character tokens: the next prompt
    spells the answer in merged tokens, yet the follow-up reuses the prompt and the answer."""
    model, _, templated = tiny
    first = [Message("system", "Be brief."), Message("user", "Tell a story.")]
    probe = HFBackend(model=model, tokenizer=templated, probe_tokens=0)
    prompt_1 = probe.prompt_ids(first)[0].tolist()
    script = [templated.convert_tokens_to_ids("Ġ" if c == " " else c) for c in STORY]
    backend = HFBackend(model=Scripted(model, len(prompt_1), script), tokenizer=templated,
                        probe_tokens=0, prefill_chunk=16)
    answer = "".join(backend.stream(ask(first, max_new_tokens=120)))
    assert answer == STORY
    follow = first + [Message("assistant", answer), Message("user", "Again.")]
    respelled = backend.prompt_ids(follow)[0].tolist()
    assert respelled[len(prompt_1):len(prompt_1) + len(script)] != script  # merged tokens
    request = ask(follow, max_new_tokens=3)
    list(backend.stream(request))
    assert request.stats.prompt_reused == len(prompt_1) + len(script)
    assert backend._cache_ids[:request.stats.prompt_reused] == prompt_1 + script


def test_chatglm_an_append_only_conversation_reads_only_each_new_turn():
    """Three turns laid out as docchat's append-only conversation sends them (each turn's
    excerpts with its question; the system message the same throughout): each turn after the
    first runs the model on its own user turn only, the answers stay as the model made them,
    and [gMASK] sop are at position 0 and nowhere else."""
    backend = glm_backend("Silt.", "They spread it.", "Deltas.")
    model, tokenizer = backend.hf_model, backend.tokenizer
    system = Message("system", "Answer from the excerpts; cite pages as [p. N].")
    turns = [("[p. 3] Rivers carry silt.\n\nWhat do rivers carry?", "\nSilt."),
             ("[p. 4] Floods spread soil.\n\nAnd floods?", "\nThey spread it."),
             ("[p. 7] Rivers build deltas.\n\nWhat do they build?", "\nDeltas.")]
    messages = [system]
    for k, (user, reply) in enumerate(turns):
        messages.append(Message("user", user))
        before = len(model.fed)
        request = ask(messages, max_new_tokens=40)
        assert "".join(backend.stream(request)) == reply
        fed = [t for _, t in model.fed[before:]]
        if k:
            new_turn = tokenizer.build_single_message("user", "", user) + [64796]
            assert fed[:len(new_turn)] == new_turn  # nothing before the new turn again
            assert len(fed) == len(new_turn) + len(chatglm_standin.reply_ids(reply.strip()))
        messages.append(Message("assistant", reply))
    sequence = model.sequence()
    assert [p for p, t in model.fed if t in (chatglm_standin.GMASK, chatglm_standin.SOP)] \
        == [0, 1]
    assert sequence[:2] == [chatglm_standin.GMASK, chatglm_standin.SOP]


def _slow(backend, seconds: float):
    """Each forward pass takes at least this long (a slow machine)."""
    forward = backend._forward

    def slow(ids):
        time.sleep(seconds)
        return forward(ids)
    backend._forward = slow
    return backend


def test_a_read_that_would_pass_the_deadline_reads_a_shorter_form_instead(tiny):
    """Reading the whole prompt would pass the first-token deadline: the backend reads the
    shorter form (the same prompt with fewer excerpts) from what the two share, and answers
    as a fresh read of that form does."""
    model, plain, _ = tiny
    question = " Tell a story."
    whole = [Message("user", STORY * 5 + question)]
    short = [Message("user", STORY + question)]
    backend = _slow(HFBackend(model=model, tokenizer=plain, prefill_chunk=8, probe_tokens=0),
                    0.05)
    request = ask(whole, max_new_tokens=8, deadline=time.perf_counter() + 0.6,
                  shorter=(short,))
    text = "".join(backend.stream(request))
    stats = request.stats
    assert stats.cut == 0 and stats.prompt_tokens == backend.count_prompt_tokens(short)
    assert stats.prompt_dropped > 0  # read, then dropped for the shorter form
    fresh = HFBackend(model=model, tokenizer=plain, probe_tokens=0)
    assert text == "".join(fresh.stream(ask(short, max_new_tokens=8)))


def test_a_read_within_its_deadline_reads_the_whole_prompt(tiny):
    model, plain, _ = tiny
    whole = [Message("user", STORY * 5 + " Tell a story.")]
    backend = HFBackend(model=model, tokenizer=plain, prefill_chunk=8, probe_tokens=0)
    request = ask(whole, max_new_tokens=4, deadline=time.perf_counter() + 60,
                  shorter=([Message("user", STORY + " Tell a story.")],))
    "".join(backend.stream(request))
    assert request.stats.cut is None
    assert request.stats.prompt_tokens == backend.count_prompt_tokens(whole)
