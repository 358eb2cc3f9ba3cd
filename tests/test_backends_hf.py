"""transformers backend with a tiny Llama trained here on a tokenizer trained here."""
from __future__ import annotations

import copy
import threading

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from docchat.backends import GenerationRequest, Message, plain_prompt  # noqa: E402
from docchat.backends.hf import HFBackend  # noqa: E402
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


def reference(backend, messages, max_new_tokens=40):
    """The non-streamed greedy answer straight from model.generate."""
    ids = backend.prompt_ids(messages)
    out = backend.hf_model.generate(ids, max_new_tokens=max_new_tokens, do_sample=False,
                                    attention_mask=torch.ones_like(ids),
                                    pad_token_id=backend.tokenizer.eos_token_id)
    return backend.tokenizer.decode(out[0, ids.shape[-1]:], skip_special_tokens=True)


def test_chinese_stream_equals_generate_and_never_splits_characters(backend):
    messages = EXAMPLES[0][0]
    request = ask(messages, max_new_tokens=40)
    pieces = list(backend.stream(request))
    assert "".join(pieces) == reference(backend, messages) == CHINESE
    assert not any("\ufffd" in p for p in pieces)
    stats = request.stats
    assert stats.finish_reason == "stop" and not stats.stopped
    # The byte-level tokenizer spells most characters with several tokens.
    assert stats.completion_tokens == len(backend.tokenizer(CHINESE)["input_ids"]) > len(pieces)
    assert stats.prompt_tokens == backend.count_prompt_tokens(messages)


def test_chat_template_is_applied(tiny):
    model, _, templated = tiny
    backend = HFBackend(model=model, tokenizer=templated)
    messages = EXAMPLES[2][0]
    ids = backend.prompt_ids(messages)[0].tolist()
    assert templated.decode(ids) == "<|system|>Be brief.<|user|>问候<|assistant|>"
    assert "".join(backend.stream(ask(messages, max_new_tokens=20))) == " hello world"


def test_plain_fallback_format(backend):
    messages = [Message("system", "S"), Message("user", "Q")]
    assert backend.tokenizer.decode(backend.prompt_ids(messages)[0]) == \
        "System: S\n\nUser: Q\n\nAssistant:"


def test_cancel_stops_within_one_token(backend):
    request = ask(EXAMPLES[1][0], max_new_tokens=60)
    pieces = []
    for piece in backend.stream(request):
        pieces.append(piece)
        if len(pieces) == 3:
            request.cancel.set()
    assert len(pieces) == 3 and STORY.startswith("".join(pieces))
    assert request.stats.stopped and request.stats.finish_reason == "cancelled"
    assert request.stats.completion_tokens <= 3 + 1


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
    assert text == reference(backend, EXAMPLES[1][0], max_new_tokens=4)


def test_prompt_too_long_raises_before_generating(backend, monkeypatch):
    monkeypatch.setattr(backend.hf_model, "generate", lambda **kw: pytest.fail("generated"))
    request = ask([Message("user", "dragon " * 200)], max_new_tokens=100)
    with pytest.raises(ContextTooLong, match="context window is 256 tokens"):
        next(backend.stream(request))


def test_error_in_generation_thread_reaches_caller(backend, monkeypatch):
    def broken(**kwargs):
        raise ValueError("weights are NaN")

    monkeypatch.setattr(backend.hf_model, "generate", broken)
    with pytest.raises(BackendError, match="weights are NaN"):
        list(backend.stream(ask(EXAMPLES[1][0])))


def test_out_of_memory_once_then_backend_keeps_working(backend, monkeypatch):
    real = backend.hf_model.generate
    calls = []

    def flaky(**kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
        return real(**kwargs)

    monkeypatch.setattr(backend.hf_model, "generate", flaky)
    with pytest.raises(BackendError, match="shorten the documents or lower max_new_tokens"):
        list(backend.stream(ask(EXAMPLES[0][0])))
    assert "".join(backend.stream(ask(EXAMPLES[0][0]))) == CHINESE


def test_silent_model_times_out(tiny, monkeypatch):
    model, plain, _ = tiny
    backend = HFBackend(model=model, tokenizer=plain, timeout=0.2)
    release = threading.Event()
    monkeypatch.setattr(backend.hf_model, "generate", lambda **kw: release.wait(5))
    try:
        with pytest.raises(BackendError, match="produced nothing for 0.2s"):
            list(backend.stream(ask(EXAMPLES[0][0])))
    finally:
        release.set()


def test_chatglm_needs_pinned_transformers(tiny, monkeypatch):
    model, plain, _ = tiny
    glm = copy.deepcopy(model)
    glm.config.model_type = "chatglm"
    monkeypatch.setattr(transformers, "__version__", "4.44.0")
    with pytest.raises(BackendUnavailable, match="pip install transformers==4.40.2"):
        HFBackend(model=glm, tokenizer=plain)
