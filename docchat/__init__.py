"""docchat: ask questions of long documents with a local LLM.

The public API is loaded lazily: ``import docchat`` imports nothing else, so the CLI starts
fast and ``docchat.errors`` can be imported without the store or the backends.
"""
from __future__ import annotations

import importlib

_API = {
    "ask": "docchat.answer.qa",
    "get_backend": "docchat.backends",
    "GenerationRequest": "docchat.backends",
    "Message": "docchat.backends",
    "Settings": "docchat.config",
    "DocchatError": "docchat.errors",
    "SessionStore": "docchat.library.store",
    "summarize_document": "docchat.summaries.summarize",
    "summarize_folder": "docchat.summaries.batch",
    "compare": "docchat.comparison.align",
    "check_answer": "docchat.context.claims",
    "load_document": "ingest",
}

__all__ = sorted(_API)


def __getattr__(name: str):
    try:
        module = _API[name]
    except KeyError:
        raise AttributeError(f"module 'docchat' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
