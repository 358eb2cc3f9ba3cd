"""llama.cpp backend against the real bundled SmolLM2-135M GGUF."""
from __future__ import annotations

import pytest

from docchat.backends import GenerationRequest, Message
from docchat.backends.llamacpp import LlamaCppBackend, bundled_model_path
from docchat.errors import BackendUnavailable, ContextTooLong

CHINESE = "你好，世界！我爱北京天安门。"


@pytest.fixture(scope="module")
def backend() -> LlamaCppBackend:
    # One thread: OpenMP workers spin badly when the CI box's two cores are shared.
    return LlamaCppBackend(n_ctx=1024, n_threads=1)


def ask(text: str, **options) -> GenerationRequest:
    return GenerationRequest(messages=[Message("user", text)], **options)


def fresh(backend: LlamaCppBackend, request: GenerationRequest) -> list[str]:
    # Forget the KV cache: a replayed prefix is evaluated in other batch shapes, which
    # can flip near-tied greedy choices of a 4-bit model.
    backend.llama.reset()
    return list(backend.stream(request))


def test_defaults_to_bundled_model_and_trained_context():
    backend = LlamaCppBackend(n_threads=1)
    assert backend.model == bundled_model_path().name
    assert backend.context_window == int(backend.llama.metadata["llama.context_length"]) == 8192
    assert backend.name == "llamacpp" and backend.device == "cpu"


def test_stream_equals_llama_cpp_chat_completion(backend):
    question = "Name three colours."
    request = ask(question, max_new_tokens=12)
    streamed = "".join(fresh(backend, request))
    backend.llama.reset()
    raw = backend.llama.create_chat_completion(
        [{"role": "user", "content": question}], temperature=0.0, max_tokens=12)
    assert streamed == raw["choices"][0]["message"]["content"]
    assert request.stats.prompt_tokens == raw["usage"]["prompt_tokens"]
    assert request.stats.completion_tokens == raw["usage"]["completion_tokens"]
    assert request.stats.finish_reason == raw["choices"][0]["finish_reason"]


def test_chinese_answer_never_splits_a_character(backend):
    request = ask("Repeat exactly: 你好，世界。我爱北京天安门。", max_new_tokens=40)
    pieces = fresh(backend, request)
    assert "".join(pieces) == CHINESE
    assert not any("\ufffd" in piece for piece in pieces)
    # SmolLM2 spells most CJK characters with two or three byte tokens.
    assert request.stats.completion_tokens > len(pieces)
    assert request.stats.finish_reason == "stop"


def test_cancel_stops_generation_within_one_token(backend):
    request = ask("Write a long story about a dragon.", max_new_tokens=200)
    pieces = []
    backend.llama.reset()
    for piece in backend.stream(request):
        pieces.append(piece)
        if len(pieces) == 3:
            request.cancel.set()
    stats = request.stats
    assert len(pieces) == 3
    assert stats.stopped and stats.finish_reason == "cancelled"
    assert stats.completion_tokens <= 3 + 1
    # Evaluated tokens: the prompt and the sampled tokens before the one not yet fed back.
    assert backend.llama.n_tokens <= stats.prompt_tokens + stats.completion_tokens


def test_close_stops_generation(backend):
    request = ask("Write a long story about a dragon.", max_new_tokens=200)
    backend.llama.reset()
    stream = backend.stream(request)
    next(stream), next(stream)
    stream.close()
    assert request.stats.stopped and request.stats.finished_at is not None
    assert backend.llama.n_tokens <= request.stats.prompt_tokens + 2


def test_max_new_tokens_and_token_counts(backend):
    request = ask("Count from one to fifty in words.", max_new_tokens=5)
    pieces = fresh(backend, request)
    stats = request.stats
    assert stats.completion_tokens == 5 and stats.finish_reason == "length"
    assert stats.prompt_tokens == backend.count_prompt_tokens(list(request.messages))
    assert stats.first_token_at <= stats.finished_at
    assert backend.count_tokens("".join(pieces)) <= 5 + 1
    assert backend.count_tokens(CHINESE) == len(
        backend.llama.tokenize(CHINESE.encode(), add_bos=False, special=False))


def test_seeded_sampling_is_reproducible(backend):
    options = dict(max_new_tokens=6, do_sample=True, temperature=1.0, top_p=0.95)
    first = "".join(fresh(backend, ask("Say something.", seed=7, **options)))
    again = "".join(fresh(backend, ask("Say something.", seed=7, **options)))
    assert first == again


def test_prompt_too_long_raises_before_generating(backend):
    backend.llama.reset()
    request = ask("Hello " * 900, max_new_tokens=200)
    with pytest.raises(ContextTooLong) as e:
        next(backend.stream(request))
    message = str(e.value)
    assert f"{backend.context_window:,}" in message and "max_new_tokens" in message
    assert f"{backend.count_prompt_tokens(list(request.messages)):,}" in message
    assert backend.llama.n_tokens == 0 and request.stats.completion_tokens == 0


def test_missing_model_file(tmp_path):
    with pytest.raises(BackendUnavailable, match="No model file at"):
        LlamaCppBackend(model_path=tmp_path / "absent.gguf")


def test_broken_gguf(tmp_path):
    path = tmp_path / "broken.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 60)
    with pytest.raises(BackendUnavailable, match="not a GGUF model llama.cpp can load"):
        LlamaCppBackend(model_path=path)
