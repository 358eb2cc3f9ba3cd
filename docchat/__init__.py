"""docchat: ask questions of long documents with a local LLM."""
from __future__ import annotations

from docchat.backends import GenerationRequest, Message, get_backend
from docchat.config import Settings
from docchat.errors import DocchatError
from docchat.store import SessionStore

__all__ = ["GenerationRequest", "Message", "get_backend", "Settings", "DocchatError",
           "SessionStore", "ask", "summarize"]


def __getattr__(name: str):
    # ask and summarize import the packer, pacer and backends lazily.
    if name == "ask":
        from docchat.qa import ask
        return ask
    if name == "summarize":
        from docchat.summarize import summarize
        return summarize
    raise AttributeError(name)
