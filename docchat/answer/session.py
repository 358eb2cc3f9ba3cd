"""Starting an answer in a chat session: the options a question is asked with, its prompt
budget, the warm-up of the backend's cache, and the background answer itself.

The app's pages read widgets and call these; nothing here imports streamlit.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Callable, Sequence

from docchat.answer import chat
from docchat.answer.qa import Budget, choose_budget, resolve_preset

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AskOptions:
    """How a question is answered: the preset and its changed values, the first-token target
    (seconds; None or 0: no target) and whether to read the whole window instead."""
    preset: str = "quick"
    overrides: dict = field(default_factory=dict)
    ttft_target: float | None = None
    whole_window: bool = False
    history_turns: int = 3

    def max_new_tokens(self) -> int:
        return int(resolve_preset(self.preset, self.overrides).generation["max_new_tokens"])

    def budget(self, backend) -> Budget:
        """The prompt budget a question asked now would get (qa.ask chooses it the same way)."""
        return choose_budget(backend, self.max_new_tokens(), self.ttft_target, self.whole_window)


def is_remote(backend) -> bool:
    """The backend is an HTTP server: it does not report how far it has read a prompt."""
    return str(getattr(backend, "device", "")).startswith("http")


def warm(backend, *, session_id: str, documents: Sequence, options: AskOptions,
         done: set) -> bool:
    """Send the stable prompt prefix (system prompt + outline) to the backend to read in the
    background, once per session and set of documents (``done`` remembers them: later, the
    cache holds the last question's prompt, which starts with it); a question cancels or
    reuses it. Returns whether it was sent."""
    from docchat.context.packing import prefix_messages

    fetch = getattr(backend, "prefetch", None)
    key = (session_id, tuple(d.id for d in documents))
    if fetch is None or not documents or key in done:
        return False
    done.add(key)
    langs = {d.language for d in documents}
    budget = options.budget(backend)
    try:
        fetch(prefix_messages(list(documents), backend, langs.pop() if len(langs) == 1 else "en",
                              context_window=budget.context_window,
                              max_new_tokens=options.max_new_tokens()))
    except Exception:  # the edge: a warm start is an optimisation, never an error on the page
        logger.exception("warm start for session %s failed", session_id)
        return False
    return True


def answer_factory(documents: Sequence, question: str, backend, *, history: Sequence,
                   options: AskOptions, db_path: str, started_at: float | None = None,
                   previous_sections: Sequence | None = None) -> chat.AnswerFactory:
    """The call to docchat.answer.qa.ask for one question, run later in the answer's thread."""
    doc_ids = [d.id for d in documents]

    def make(cancel: threading.Event, on_queue: Callable[[int], None]):
        from docchat.answer.qa import ask
        from docchat.library.store import SessionStore

        local = threading.local()  # SQLite connections belong to the thread that opened them

        def opened() -> SessionStore:
            if getattr(local, "store", None) is None:
                local.store = SessionStore.open(db_path)
            return local.store

        class Search:  # the store's sections and windows, through this thread's connection
            def __call__(self, query: str):
                return opened().searcher(doc_ids)(query)

            def windows(self, query: str):
                return opened().searcher(doc_ids).windows(query)

        return ask(list(documents), question, backend, history=list(history),
                   preset=options.preset, overrides=dict(options.overrides) or None,
                   search=Search(), cancel=cancel, on_queue=on_queue, started_at=started_at,
                   history_turns=options.history_turns, ttft_target=options.ttft_target,
                   whole_window=options.whole_window, previous_sections=previous_sections,
                   embedding_store=opened())

    return make


def start_answer(*, store, running: chat.Generations, session_id: str, question: str,
                 documents: Sequence, backend, options: AskOptions, db_path: str,
                 asked_at: float, owner: str = "") -> chat.Generation:
    """Save the question and an empty answer, then write the answer in the background; the
    page follows the returned Generation. ``asked_at`` (perf_counter) is when the user asked."""
    from docchat.library.store import SessionStore

    turns = store.turns(session_id)
    history = chat.history_messages(turns)
    store.add_turn(session_id, "user", question)
    turn_id = store.add_turn(session_id, "assistant", "", status="streaming")
    g = chat.Generation(session_id, turn_id, question, owner=owner)
    g.submitted_at = asked_at
    make = answer_factory(documents, question, chat.TimedBackend(backend, g), history=history,
                          options=options, db_path=db_path, started_at=asked_at,
                          previous_sections=chat.previous_sections(turns))
    running.start(g, make, lambda: SessionStore.open(db_path),
                  sources=chat.source_finder(documents), marks=chat.mark_finder(documents))
    return g
