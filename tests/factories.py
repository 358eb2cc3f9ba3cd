"""Shared test helpers: a characters-as-tokens counter, a document builder, wait_for."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ingest.document import Block, Document, Page, Section


class Chars:
    """Counts characters as tokens (enough for packing tests); a backend's counting half."""
    name = "chars"

    def __init__(self, window: int) -> None:
        self.context_window = window

    def count_tokens(self, text: str) -> int:
        return len(text)

    def count_prompt_tokens(self, messages) -> int:
        return sum(len(m.content) + 4 for m in messages)


def titled_doc(name: str, texts: Sequence[tuple[str, str]], language: str = "en",
               doc_id: int | None = None, sha256: str | None = None,
               extra: Sequence[str] = ()) -> Document:
    """One page and one top-level section per (title, body), each body one prose block
    (then one block per `extra` text); sha256 defaults to the name."""
    secs = [Section(i, (title,), 1, i + 1, i + 1, "prose",
                    (Block("prose", body, i + 1),) + tuple(Block("prose", e, i + 1)
                                                           for e in extra))
            for i, (title, body) in enumerate(texts)]
    return Document(path=name, sha256=sha256 or name, name=name, kind="pdf", language=language,
                    pages=[Page(i + 1, "") for i in range(len(texts))], sections=secs, id=doc_id)


def wait_for(predicate: Callable[[], object], timeout: float, poll: float = 0.02):
    """The predicate's first truthy value, polling every poll seconds; AssertionError after
    timeout seconds (for state that background threads change)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError("timed out waiting")
