"""Deterministic backend for tests only: answers by quoting its prompt."""
from __future__ import annotations

import re
import time
from typing import Iterator

from docchat.backends import GenerationQueue, GenerationRequest, Message

_PIECE = re.compile(r"\s*\S+|\s+")
_MARKER = re.compile(r"\[p\. [^\]]+\]")


class EchoBackend:
    """Replies "Echo: <question>" plus the first page marker in its context.

    ``reply`` fixes the answer text instead; ``delay`` sleeps between pieces so
    tests can exercise Stop and the queue.
    """

    name = "echo"

    def __init__(self, reply: str | None = None, delay: float = 0.0,
                 context_window: int = 8192, model: str = "echo") -> None:
        self.reply = reply
        self.delay = float(delay)
        self.context_window = int(context_window)
        self.model = model
        self.device = "cpu"
        self.queue = GenerationQueue()

    def count_tokens(self, text: str) -> int:
        return len(_PIECE.findall(text))

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        return sum(self.count_tokens(m.content) + 4 for m in messages) + 2

    def answer_for(self, messages: list[Message]) -> str:
        if self.reply is not None:
            return self.reply
        question = next((m.content for m in reversed(messages) if m.role == "user"), "")
        # Only the documents' markers, not the system prompt's example of one.
        context = "\n".join(m.content for m in messages if m.role != "system")
        marker = _MARKER.search(context)
        last_line = question.strip().splitlines()[-1] if question.strip() else ""
        return f"Echo: {last_line}" + (f" {marker.group(0)}" if marker else "")

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        stats = request.stats
        with self.queue.turn(request) as turn:
            if turn.cancelled:
                return
            stats.prompt_tokens = self.count_prompt_tokens(list(request.messages))
            pieces = _PIECE.findall(self.answer_for(list(request.messages)))
            try:
                for piece in pieces[: request.max_new_tokens]:
                    if request.cancel.is_set():
                        stats.stopped = True
                        break
                    if self.delay:
                        time.sleep(self.delay)
                    if stats.first_token_at is None:
                        stats.first_token_at = time.perf_counter()
                    stats.completion_tokens += 1
                    yield piece
                else:
                    stats.finish_reason = "stop"
            finally:
                stats.finished_at = time.perf_counter()
