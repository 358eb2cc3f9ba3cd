"""Shared test helpers: a characters-as-tokens counter, document builders, recording and
scripted echo backends, wait_for."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from docchat.backends.echo import _PIECE, EchoBackend
from docchat.errors import BackendUnavailable
from ingest.document import Block, Document, Page, Section


class Chars:
    """Counts characters as tokens (enough for packing tests); a backend's counting half."""
    name = "chars"

    def __init__(self, window: int = 8192) -> None:
        self.context_window = window

    def count_tokens(self, text: str) -> int:
        return len(text)

    def count_prompt_tokens(self, messages) -> int:
        return sum(len(m.content) + 4 for m in messages)


def titled_doc(name: str, texts: Sequence[tuple[str, str]], language: str = "en",
               doc_id: int | None = None, sha256: str | None = None,
               extra: Sequence[str] = (), kind: str = "pdf", tokens: int = 0,
               tokenizer: str = "") -> Document:
    """One page and one top-level section per (title, body), each body one prose block
    (then one block per `extra` text); sha256 defaults to the name. tokens: each section's
    stored token count (the document's is their sum), counted by `tokenizer`."""
    secs = [Section(i, (title,), 1, i + 1, i + 1, "prose",
                    (Block("prose", body, i + 1),) + tuple(Block("prose", e, i + 1)
                                                           for e in extra), tokens=tokens)
            for i, (title, body) in enumerate(texts)]
    return Document(path=name, sha256=sha256 or name, name=name, kind=kind, language=language,
                    pages=[Page(i + 1, "") for i in range(len(texts))], sections=secs, id=doc_id,
                    tokens=tokens * len(texts), tokenizer=tokenizer)


def blocks_doc(sections: Sequence[Sequence[Block]], labels: Mapping[int, str] | None = None,
               titles: Sequence[str] = ()) -> Document:
    """A Markdown document with one top-level section per list of blocks (titled from
    `titles`, else "Section i"), spanning its blocks' pages; labels: printed page labels."""
    pages = sorted({b.page for blocks in sections for b in blocks})
    return Document(
        path="x.md", sha256="0" * 64, name="x.md", kind="markdown",
        pages=[Page(n, "text", (labels or {}).get(n)) for n in pages],
        sections=[Section(i, (titles[i] if i < len(titles) else f"Section {i}",), 1,
                          blocks[0].page, blocks[-1].page, "mixed", tuple(blocks))
                  for i, blocks in enumerate(sections)])


class RecordingBackend(EchoBackend):
    """Echo that records every prompt and numbers its answers (NOTE0, NOTE1, ...)."""

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.requests: list = []  # (messages, max_new_tokens) per request
        self.last = None  # the latest GenerationRequest
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()

    def answer_for(self, messages) -> str:
        if self.reply is not None:
            return self.reply
        with self._lock:
            n = len(self.requests) - 1
        return f"NOTE{n} " + super().answer_for(messages)

    @contextmanager
    def _serving(self, request):
        with self._lock:
            self.requests.append((list(request.messages), request.max_new_tokens))
            self.last = request
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._lock:
                self.in_flight -= 1

    def stream(self, request):
        with self._serving(request):
            yield from super().stream(request)

    def prompts(self) -> list[str]:
        return [m[-1].content for m, _ in self.requests]

    def assert_all_fit(self) -> None:
        for messages, max_new in self.requests:
            assert self.count_prompt_tokens(messages) + max_new <= self.context_window


class ParallelBackend(RecordingBackend):
    """Pretends to be an HTTP backend that serves requests concurrently."""
    name = "openai"

    def stream(self, request):
        # Echo's queue runs one request at a time; a server does not.
        with self._serving(request):
            time.sleep(0.05)
            text = self.answer_for(list(request.messages))
            request.stats.prompt_tokens = self.count_prompt_tokens(list(request.messages))
            request.stats.completion_tokens = len(text.split())
            yield text


class Interrupting(RecordingBackend):
    """Recording echo whose request number `at` (from 0) is a Ctrl-C: KeyboardInterrupt."""

    def __init__(self, at: int, **options) -> None:
        super().__init__(**options)
        self.at = at

    def stream(self, request):
        if len(self.requests) == self.at:
            raise KeyboardInterrupt
        yield from super().stream(request)


class Looping(RecordingBackend):
    """Recording echo that writes `prose`, then says `loop` again and again until
    max_new_tokens, as a small model stuck in a loop does; one piece is one token, and
    `loop_start` is the token at which the loop begins (its first saying)."""

    def __init__(self, prose: str, loop: str, **options) -> None:
        super().__init__(reply=prose + loop * 400, **options)
        self.loop_start = len(_PIECE.findall(prose))


class Down(EchoBackend):
    """A server that is not there: every request raises BackendUnavailable."""

    def stream(self, request):
        raise BackendUnavailable("No server at http://127.0.0.1:9; is vLLM running?")
        yield


# What Scripted does; a test sets it before the app (or page) asks, its fixture clears it.
SCRIPT: dict = {}


class Scripted(EchoBackend):
    """The echo backend with a reply, a delay (read at each request) and a context window
    chosen by the test in SCRIPT; registered in BACKENDS for AppTest as "factories:Scripted"."""
    created = 0
    last: Scripted | None = None

    def __init__(self) -> None:
        type(self).created += 1
        type(self).last = self
        super().__init__(context_window=SCRIPT.get("window", 8192))

    def stream(self, request):
        self.reply, self.delay = SCRIPT.get("reply"), SCRIPT.get("delay", 0.0)
        yield from super().stream(request)


def scripted_app(monkeypatch) -> Iterator[None]:
    """For an autouse fixture of AppTest files: the app's backend is Scripted, SCRIPT and
    the cached resources start empty; afterwards the summary runs still going are stopped."""
    import streamlit as st

    from docchat.backends import BACKENDS
    from docchat.config import Settings
    from docchat.ui import summaries as summary_ui

    monkeypatch.setitem(BACKENDS, "scripted", "factories:Scripted")
    monkeypatch.setenv("DOCCHAT_BACKEND", "scripted")
    SCRIPT.clear()
    st.cache_resource.clear()
    yield
    for job in summary_ui.registry(str(Settings.from_env().db)).running():
        job.stop()
        job.join(10)
    st.cache_resource.clear()


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


def prose_doc(sections: Sequence[tuple[str, Sequence[str]]], sha256: str = "m") -> Document:
    """An English PDF-like document: one section per (title, block texts), section k on
    page k + 1, every block prose."""
    secs = [Section(i, (title,), 1, i + 1, i + 1, "prose",
                    tuple(Block("prose", t, i + 1) for t in texts))
            for i, (title, texts) in enumerate(sections)]
    return Document(path="m.pdf", sha256=sha256, name="m.pdf", kind="pdf", language="en",
                    pages=[Page(i + 1, "") for i in range(len(sections))], sections=secs)
