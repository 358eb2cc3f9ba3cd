"""Deterministic backend for tests only: answers by quoting its prompt."""
from __future__ import annotations

import re
import time
from typing import Iterator

from docchat.backends import GenerationRequest, Message, PrefillProgress
from docchat.backends.base import StreamingBackend

_PIECE = re.compile(r"\s*\S+|\s+")
_MARKER = re.compile(r"\[p\. [^\]]+\]")


class EchoBackend(StreamingBackend):
    """Replies "Echo: <question>" plus the first page marker in its context.

    ``reply`` fixes the answer text instead; ``delay`` sleeps between pieces so
    tests can exercise Stop and the queue. ``prefill_tps`` makes it "read" the prompt
    at that many tokens/s first (in 0.05 s steps, reporting progress, cancellable),
    and is what ``prefill_rate()`` reports.
    """

    name = "echo"

    def __init__(self, reply: str | None = None, delay: float = 0.0,
                 context_window: int = 8192, model: str = "echo",
                 prefill_tps: float | None = None) -> None:
        super().__init__()
        self.reply = reply
        self.delay = float(delay)
        self.prefill_tps = float(prefill_tps) if prefill_tps else None
        self.prefetched: list[list[Message]] = []  # what prefetch() was asked to warm
        self.context_window = int(context_window)
        self.model = model
        self.device = "cpu"

    def count_tokens(self, text: str) -> int:
        return len(_PIECE.findall(text))

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        return sum(self.count_tokens(m.content) + 4 for m in messages) + 2

    def prefill_rate(self) -> float | None:
        return self.prefill_tps

    def prefetch(self, messages: list[Message]) -> None:
        """Records the request only (echo has no cache to warm)."""
        self.prefetched.append(list(messages))

    def _prefill(self, request: GenerationRequest, total: int) -> bool:
        """Simulated prompt reading; False if cancelled meanwhile."""
        stats, rate = request.stats, self.prefill_tps
        stats.prefill_started_at = start = time.perf_counter()
        report = request.on_progress or (lambda progress: None)
        report(PrefillProgress(0, total, 0, rate, total / rate if rate else None))
        done = 0
        while rate and done < total:
            if request.cancel.is_set():
                stats.prefill_ms = (time.perf_counter() - start) * 1000
                return False
            step = min(total - done, max(1, int(rate * 0.05)))
            time.sleep(step / rate)
            done += step
            report(PrefillProgress(done, total, 0, rate, (total - done) / rate))
        if not rate:
            report(PrefillProgress(total, total, 0, None, 0.0))
        stats.prefill_ms = (time.perf_counter() - start) * 1000
        return True

    def answer_for(self, messages: list[Message]) -> str:
        if self.reply is not None:
            return self.reply
        question = next((m.content for m in reversed(messages) if m.role == "user"), "")
        # Only the documents' markers, not the system prompt's example of one.
        context = "\n".join(m.content for m in messages if m.role != "system")
        marker = _MARKER.search(context)
        last_line = question.strip().splitlines()[-1] if question.strip() else ""
        return f"Echo: {last_line}" + (f" {marker.group(0)}" if marker else "")

    def _prepare(self, request: GenerationRequest) -> tuple[int, list[Message]]:
        messages = list(request.messages)
        return self.count_prompt_tokens(messages), messages

    def _pieces(self, request: GenerationRequest, messages: list[Message]) -> Iterator[str]:
        stats = request.stats
        pieces = _PIECE.findall(self.answer_for(messages))
        if not self._prefill(request, stats.prompt_tokens):
            return
        for piece in pieces[: request.max_new_tokens]:
            if request.cancel.is_set():
                return
            if self.delay:
                time.sleep(self.delay)
            stats.completion_tokens += 1
            yield piece
        stats.finish_reason = "length" if len(pieces) > request.max_new_tokens else "stop"
