"""One generation at a time, in arrival order, on a shared in-process backend."""
from __future__ import annotations

import threading
import time

import pytest

from docchat.backends import GenerationRequest, Message
from docchat.backends.llamacpp import LlamaCppBackend


@pytest.fixture(scope="module")
def backend() -> LlamaCppBackend:
    return LlamaCppBackend(n_ctx=512, n_threads=1)


def ask(text: str, **options) -> GenerationRequest:
    return GenerationRequest(messages=[Message("user", text)], max_new_tokens=4, **options)


def wait_for(condition, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_second_request_waits_its_turn(backend):
    places: list[int] = []
    first, second = ask("Say hi."), ask("Say bye.", on_queue=places.append)
    running = backend.stream(first)
    next(running)  # the first now holds the model
    results = {}
    worker = threading.Thread(target=lambda: results.update(b="".join(backend.stream(second))))
    worker.start()
    wait_for(lambda: places)
    assert places == [1] and second.stats.first_token_at is None
    rest = list(running)
    worker.join(60)
    assert rest is not None and results["b"]
    assert places == [1, 0]
    assert second.stats.first_token_at > first.stats.finished_at
    assert second.stats.queue_ms > 0


def test_cancelled_waiter_leaves_without_blocking_others(backend):
    first, quitter = ask("Say hi."), ask("Say bye.", on_queue=lambda n: None)
    third_places: list[int] = []
    third = ask("Say yes.", on_queue=third_places.append)
    running = backend.stream(first)
    next(running)
    outputs: dict[str, list[str]] = {}
    workers = []
    for name, request in (("quitter", quitter), ("third", third)):
        worker = threading.Thread(
            target=lambda n=name, r=request: outputs.update({n: list(backend.stream(r))}))
        worker.start()
        workers.append(worker)
        time.sleep(0.05)  # arrival order: quitter, then third
    wait_for(lambda: third_places == [2])
    quitter.cancel.set()
    wait_for(lambda: "quitter" in outputs)
    assert outputs["quitter"] == [] and quitter.stats.stopped
    list(running)
    for worker in workers:
        worker.join(60)
    assert outputs["third"] and third_places[-1] == 0
    assert backend.queue.depth == 0
