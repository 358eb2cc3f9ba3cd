"""ask(): pack the documents for the question, stream the backend's answer through the pacer."""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence

from docchat.backends import Backend, GenerationRequest, Message
from ingest.document import Document

logger = logging.getLogger(__name__)


@dataclass
class Answer:
    """An answer being streamed: iterate for display chunks; read the fields afterwards."""

    chunks: Iterator[str]
    cancel: threading.Event
    backend: str
    model: str
    packed: object | None = None  # PackedContext
    text: str = ""
    stopped: bool = False
    metrics: dict = field(default_factory=dict)
    done: bool = False

    def __iter__(self) -> Iterator[str]:
        return self.chunks

    def stop(self) -> None:
        """Stop the display at once and cancel the backend."""
        self.cancel.set()
