"""ask(): pack the documents for the question, stream the backend's answer through the pacer."""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

from docchat.backends import Backend, GenerationRequest
from docchat.packing import PackedContext, pack
from docchat.pacing import Pacer
from docchat.presets import Preset, get_preset
from ingest.document import Document

logger = logging.getLogger(__name__)


@dataclass
class Answer:
    """An answer being streamed: iterate for display chunks; read the fields afterwards."""

    cancel: threading.Event
    backend: str
    model: str
    packed: PackedContext
    preset: Preset
    text: str = ""  # what has been shown so far; the whole answer once done
    stopped: bool = False
    done: bool = False
    metrics: dict = field(default_factory=dict)
    _chunks: Iterator[str] | None = None

    def __iter__(self) -> Iterator[str]:
        assert self._chunks is not None
        return self._chunks

    def stop(self) -> None:
        """Stop the display at once and cancel the backend (it stops computing)."""
        self.cancel.set()

    def close(self) -> None:
        """Stop and release the stream (also what happens when the consumer goes away)."""
        self.cancel.set()
        if self._chunks is not None:
            self._chunks.close()


def resolve_preset(preset: str | Preset, overrides: dict | None = None) -> Preset:
    """A preset by name or as given, with single values overridden."""
    p = get_preset(preset) if isinstance(preset, str) else preset
    changes = {k: v for k, v in (overrides or {}).items() if v is not None}
    return p.with_overrides(**changes) if changes else p


def ask(documents: Sequence[Document], question: str, backend: Backend, *,
        history: Sequence = (), preset: str | Preset = "quick", overrides: dict | None = None,
        search: Callable[[str], list] | None = None, cancel: threading.Event | None = None,
        on_queue: Callable[[int], None] | None = None, started_at: float | None = None,
        history_turns: int = 3, clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], object] | None = None) -> Answer:
    """Pack, then stream the answer paced for display.

    Packing happens here, so ContextTooLong is raised before anything is generated;
    backend errors surface while iterating. ``started_at`` (a ``clock()`` time) is when
    the user asked: time to first token is measured from it.
    """
    started = clock() if started_at is None else started_at
    chosen = resolve_preset(preset, overrides)
    gen = chosen.generation
    packed = pack(documents, question, backend, history=history, search=search,
                  max_new_tokens=int(gen["max_new_tokens"]), history_turns=history_turns)
    cancel = cancel or threading.Event()
    request = GenerationRequest(messages=list(packed.messages), cancel=cancel,
                                on_queue=on_queue, **gen)
    pacer = Pacer(chosen.pacing, clock=clock, sleep=sleep)
    answer = Answer(cancel=cancel, backend=backend.name, model=backend.model, packed=packed,
                    preset=chosen)

    def chunks() -> Iterator[str]:
        try:
            for chunk in pacer.pace(backend.stream(request), request=request,
                                    started_at=started):
                answer.text += chunk
                yield chunk
        finally:
            answer.stopped = pacer.stopped
            answer.metrics = pacer.metrics(request.stats).to_dict()
            answer.done = True
            m = answer.metrics
            logger.info("answer backend=%s prompt=%s completion=%s ttft_ms=%s stopped=%s",
                        backend.name, m.get("prompt_tokens"), m.get("completion_tokens"),
                        m.get("model", {}).get("ttft_ms"), answer.stopped)

    answer._chunks = chunks()
    return answer
