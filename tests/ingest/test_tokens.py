from __future__ import annotations

from factories import Chars

from ingest.tokens import count_many, count_tokens, tokenizer_name


class FakeBackend(Chars):
    name = "llamacpp"
    model = "/models/SmolLM2-135M-Instruct.Q4_1.gguf"


def test_default_is_cl100k():
    assert tokenizer_name() == "cl100k_base"
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0


def test_special_token_text_is_plain_text():
    assert count_tokens("see <|endoftext|> here") > 3


def test_backend_tokenizer():
    backend = FakeBackend()
    assert count_tokens("abc", backend) == 3
    assert tokenizer_name(backend) == "llamacpp:SmolLM2-135M-Instruct.Q4_1.gguf"


def test_count_many_matches_single_counts():
    texts = ["word " * 5000, "中文文本" * 3000, "", "x"]
    assert count_many(texts) == [count_tokens(t) for t in texts]
    assert count_many(["ab", "c"], FakeBackend()) == [2, 1]
