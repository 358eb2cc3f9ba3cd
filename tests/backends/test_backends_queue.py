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


def test_background_work_is_not_reported_as_answers_ahead():
    """The app's warm-up prefetch holds the queue at start; the first question must not
    read "1 answer(s) ahead of yours" for it. A real request ahead still counts."""
    from docchat.backends import GenerationQueue
    q = GenerationQueue()
    running: list[str] = []
    done = {name: threading.Event() for name in ("warm", "first", "second")}

    def take_turn(request, name, background=False):
        with q.turn(request, background=background):
            running.append(name)
            done[name].wait(10)

    warm = GenerationRequest(messages=[Message("user", "warm")], max_new_tokens=0)
    first_places: list[int] = []
    second_places: list[int] = []
    first = ask("Hi?", on_queue=first_places.append)
    second = ask("Next?", on_queue=second_places.append)
    threads = [threading.Thread(target=take_turn, args=(warm, "warm", True))]
    threads[0].start()
    wait_for(lambda: running == ["warm"])
    threads.append(threading.Thread(target=take_turn, args=(first, "first")))
    threads[1].start()
    wait_for(lambda: q.depth == 2)
    threads.append(threading.Thread(target=take_turn, args=(second, "second")))
    threads[2].start()
    wait_for(lambda: q.depth == 3 and second_places)
    time.sleep(0.2)
    assert first_places == []  # only background work ahead: no place reported
    assert second_places == [1]  # one real request ahead of it (the warm-up not counted)
    done["warm"].set()
    wait_for(lambda: running == ["warm", "first"])
    assert first_places == [0]  # its turn
    done["first"].set()
    wait_for(lambda: running == ["warm", "first", "second"])
    done["second"].set()
    for t in threads:
        t.join(5)
    assert second_places == [1, 0]
