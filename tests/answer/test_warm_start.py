"""The warm start, end to end on the bundled SmolLM2 model: what session.warm reads while the
question is typed is what the first question's prompt starts with, even after that read
changed the measured prefill rate (and so the first-token budget and the outline's)."""
from __future__ import annotations

import pytest
from factories import titled_doc

from docchat.answer import qa, session
from docchat.backends.base import RateMeter
from docchat.backends.llamacpp import LlamaCppBackend

TITLES = [f"Configuring the widget daemon, variant {i}: ports, users and log rotation"
          for i in range(120)]


@pytest.fixture(scope="module")
def backend() -> LlamaCppBackend:
    return LlamaCppBackend(n_ctx=4096, n_threads=1, prefill_batch=128)


def manual():
    return titled_doc("manual.pdf", [(t, f"Variant {i} listens on port {8000 + i}. " * 6)
                                     for i, t in enumerate(TITLES)], doc_id=7)


def rate(backend, tokens_per_s: float) -> None:
    backend.rate_meter = RateMeter(span=backend.rate_meter.span)
    backend.rate_meter.add_work(tokens_per_s * 10, 10.0)


def first_question(backend, doc, warm_start):
    answer = qa.ask([doc], "Which port does variant 7 listen on?", backend,
                    conversation=session.conversation_for([], warm_start), preset="raw",
                    overrides={"max_new_tokens": 4}, ttft_target=8.0)
    "".join(answer)
    return answer


def test_the_first_question_reuses_the_warm_start_after_the_rate_changed(backend):
    doc = manual()
    options = session.AskOptions(preset="raw", overrides={"max_new_tokens": 4},
                                 ttft_target=8.0)
    rate(backend, 120.0)
    done: dict = {}
    backend.llama.reset()
    assert session.warm(backend, session_id="s", documents=[doc], options=options, done=done)
    assert backend.wait_prefetch(120)
    start = session.warmed(done, "s", [doc])
    sent = done[("s", (7,))].messages
    warmed = backend.cached_tokens(sent)
    assert warmed == len(backend._prefix(sent)) > 100
    rate(backend, 300.0)  # the warm read measured a faster machine: a larger budget now
    assert options.budget(backend).prompt_budget > 2 * 8.0 * 120.0 * 0.9

    answer = first_question(backend, doc, start)
    reused = answer.metrics["prompt_reused"]
    assert reused >= warmed  # the whole warm start, not just the instructions
    assert answer.packed.messages[0].content == start.system
    # the warmed tokens are not counted against the first-token target
    assert answer.budget.prompt_budget > options.budget(backend).prompt_budget

    # Before: the first question built its own system message for the new budget, and
    # the prompt left the cache where the outline began.
    backend.llama.reset()
    rate(backend, 120.0)
    backend.prefetch(sent)
    assert backend.wait_prefetch(120)
    rate(backend, 300.0)
    plain = first_question(backend, doc, None)
    assert plain.packed.messages[0].content != start.system
    assert plain.metrics["prompt_reused"] < warmed
