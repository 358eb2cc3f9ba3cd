"""Starting an answer in a chat session: the options a question is asked with, its prompt
budget, the warm-up of the backend's cache, and the background answer itself.

The app's pages read widgets and call these; nothing here imports streamlit.
"""
from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, field, replace
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


@dataclass(frozen=True)
class Warmed:
    """What a warm start sent: the system message a first question must start with to reuse
    it, and the outline budget it was built with (the budget follows the measured prefill
    rate, which the warm read itself updates)."""
    system: str
    outline_budget: int


def warm(backend, *, session_id: str, documents: Sequence, options: AskOptions,
         done: dict, turns: Sequence = ()) -> bool:
    """Send the prompt prefix the session's next question will start with to the backend to
    read in the background: the conversation as stored (Conversation.from_turns(turns)) for
    a session with answers, else the system message (instructions + outline) a first
    question's prompt starts with. Once per session and set of documents (``done`` maps them
    to the Warmed start, which answer_factory gives the first question), and again when the
    backend's cache no longer holds it (another session asked meanwhile). A question cancels
    or reuses it. Returns whether it was sent."""
    from docchat.context.conversation import Conversation

    fetch = getattr(backend, "prefetch", None)
    key = (session_id, tuple(d.id for d in documents))
    if fetch is None or not documents:
        return False
    if key in done and _held(backend, done[key]):
        return False
    try:
        conversation = Conversation.from_turns(turns)
        if conversation.turns:
            messages, warmed = conversation.messages(), None
        else:
            messages, warmed = _first_prefix(backend, documents, options)
        fetch(messages)
        done[key] = _Sent(messages, warmed, backend.count_prompt_tokens(messages))
    except Exception:  # the edge: a warm start is an optimisation, never an error on the page
        logger.exception("warm start for session %s failed", session_id)
        done[key] = None
        return False
    return True


@dataclass(frozen=True)
class _Sent:
    messages: list  # what was sent to prefetch
    warmed: Warmed | None  # for a session's first question
    tokens: int  # their prompt tokens (counted once, not at every rerun)


def _held(backend, sent) -> bool:
    """The backend's cache still holds what was sent (or the backend does not say)."""
    held = getattr(backend, "cached_tokens", None)
    if sent is None or not callable(held):
        return True
    try:
        n = held(sent.messages)
        return n is None or n >= sent.tokens * 0.9 or _busy(backend)
    except Exception:  # the edge: as above
        logger.exception("cached_tokens failed")
        return True


def _busy(backend) -> bool:
    """A prefetch is still reading (its tokens are not all cached yet)."""
    wait = getattr(backend, "wait_prefetch", None)
    return callable(wait) and not wait(0)


def _first_prefix(backend, documents: Sequence, options: AskOptions) -> tuple[list, Warmed]:
    """The system message a first question's prompt starts with, and how it was built."""
    from docchat.context.packing import warm_prefix

    langs = {d.language for d in documents}
    messages, cap = warm_prefix(list(documents), backend,
                                langs.pop() if len(langs) == 1 else "en",
                                context_window=options.budget(backend).context_window,
                                max_new_tokens=options.max_new_tokens())
    return messages, Warmed(messages[0].content, cap)


def warmed(done: dict, session_id: str, documents: Sequence) -> Warmed | None:
    """The warm start sent for this session's first question, if any."""
    sent = done.get((session_id, tuple(d.id for d in documents)))
    return sent.warmed if sent is not None else None


def conversation_for(turns: Sequence, warm_start: Warmed | None = None, ahead=None):
    """The Conversation a question is packed in: the stored turns as they were sent, with
    ``ahead``, the excerpts read ahead after the last answer (Conversation.ahead); for a
    first question after a warm start, the system message that start sent (and its outline
    budget), so that the prompt starts with what the backend already read."""
    from docchat.context.conversation import Conversation

    conversation = Conversation.from_turns(turns)
    if conversation.turns:
        return replace(conversation, ahead=ahead)
    if conversation.system or warm_start is None:
        return conversation
    return Conversation(system=warm_start.system, outline_budget=warm_start.outline_budget)


def answer_factory(documents: Sequence, question: str, backend, *, turns: Sequence,
                   options: AskOptions, db_path: str, started_at: float | None = None,
                   warm_start: Warmed | None = None, ahead=None) -> chat.AnswerFactory:
    """The call to docchat.answer.qa.ask for one question, run later in the answer's thread.
    The conversation is append-only (docchat/context/conversation.py): the earlier turns
    (``turns``, as stored) are sent exactly as they were, so the backend reads only the new
    turn; a first question starts with its warm start's system message (conversation_for);
    ``ahead``, the excerpts read ahead after the last answer (Conversation.ahead), may start
    the new turn."""
    conversation = conversation_for(turns, warm_start, ahead)
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

        return ask(list(documents), question, backend, conversation=conversation,
                   preset=options.preset, overrides=dict(options.overrides) or None,
                   search=Search(), cancel=cancel, on_queue=on_queue, started_at=started_at,
                   history_turns=options.history_turns, ttft_target=options.ttft_target,
                   whole_window=options.whole_window,
                   embedding_store=opened())

    return make


def start_answer(*, store, running: chat.Generations, session_id: str, question: str,
                 documents: Sequence, backend, options: AskOptions, db_path: str,
                 asked_at: float, owner: str = "",
                 warm_start: Warmed | None = None, done: dict | None = None
                 ) -> chat.Generation:
    """Save the question and an empty answer, then write the answer in the background; the
    page follows the returned Generation. ``asked_at`` (perf_counter) is when the user asked;
    ``warm_start`` what session.warm sent for it (warmed(done, session, documents)).
    ``done``, the warm starts' record: once the answer is saved, what the next question
    would read next is read ahead into the backend's cache (read_ahead_after), and a next
    question finds it there."""
    from docchat.library.store import SessionStore

    turns = store.turns(session_id)
    store.add_turn(session_id, "user", question)
    turn_id = store.add_turn(session_id, "assistant", "", status="streaming")
    g = chat.Generation(session_id, turn_id, question, owner=owner)
    g.submitted_at = asked_at
    # The last answer the model will see in its history (history_messages' turns).
    g.previous = next((m.content for m in reversed(chat.history_messages(turns))
                       if m.role == "assistant"), "")
    ahead = None if done is None else done.get(_ahead_key(session_id, documents))
    make = answer_factory(documents, question, chat.TimedBackend(backend, g), turns=turns,
                          options=options, db_path=db_path, started_at=asked_at,
                          warm_start=warm_start,
                          ahead=ahead[1] if ahead and ahead[0] == len(turns) else None)
    after = None if done is None else read_ahead_after(
        backend, session_id=session_id, documents=documents, options=options,
        db_path=db_path, done=done)
    running.start(g, make, lambda: SessionStore.open(db_path),
                  sources=chat.source_finder(documents), marks=chat.mark_finder(documents),
                  after=after)
    return g


def _ahead_key(session_id: str, documents: Sequence) -> tuple:
    return ("ahead", session_id, tuple(d.id for d in documents))


def read_ahead_after(backend, *, session_id: str, documents: Sequence, options: AskOptions,
                     db_path: str, done: dict) -> Callable[[chat.Generation], None]:
    """What runs once an answer is saved (in its thread): the excerpts the last question
    would have been given next (turn_packing.read_ahead: qa.READ_AHEAD_SHARE of a first
    question's budget), sent to the backend to read while the user reads the answer, and
    kept in ``done`` for the session's next question (with the count of turns it follows).
    Nothing for a stopped or failed answer, a backend without a cache to warm, or no
    target (the whole window)."""
    from docchat.answer import qa

    def after(g: chat.Generation) -> None:
        if g.status != "done" or qa.READ_AHEAD_SHARE <= 0 or not documents or \
                getattr(backend, "prefetch", None) is None:
            return
        try:
            _read_ahead(backend, session_id, documents, options, db_path, done)
        except Exception:  # the edge: a read-ahead is an optimisation, never an error
            logger.exception("reading ahead for session %s failed", session_id)

    return after


def _read_ahead(backend, session_id: str, documents: Sequence, options: AskOptions,
                db_path: str, done: dict) -> None:
    from docchat.context.conversation import Conversation
    from docchat.library.store import SessionStore

    store = SessionStore.open(db_path)
    turns = store.turns(session_id)
    ahead = prefetch_ahead(backend, documents, Conversation.from_turns(turns), options, store,
                           still=lambda: len(store.turns(session_id)) == len(turns))
    if ahead is not None:
        done[_ahead_key(session_id, documents)] = (len(turns), ahead)


def prefetch_ahead(backend, documents: Sequence, conversation, options: AskOptions, store,
                   share: float | None = None, still: Callable[[], bool] = lambda: True):
    """The read-ahead after the conversation's last answer (turn_packing.read_ahead, share
    of a first question's budget: qa.READ_AHEAD_SHARE), sent to the backend's prefetch
    after the conversation unless ``still()`` says a next question came meanwhile (its
    cache must not be replaced by the older conversation); the Ahead sent, or None."""
    from docchat.answer import qa
    from docchat.context.turn_packing import read_ahead

    budget = options.budget(backend)
    share = qa.READ_AHEAD_SHARE if share is None else share
    if not conversation.turns or budget.prompt_budget is None or share <= 0:
        return None
    kwargs: dict = {"search": store.searcher([d.id for d in documents]), "store": store}
    if not qa.dense_ready(documents, store):
        kwargs["embedder"] = None
    ahead = read_ahead(list(documents), backend, conversation,
                       int(share * budget.prompt_budget),
                       max_new_tokens=options.max_new_tokens(), **kwargs)
    if ahead is None or not still():
        return None
    backend.prefetch(replace(conversation, ahead=ahead).messages_ahead())
    return ahead


@dataclass(frozen=True)
class PageTarget:
    """What a page link opens: a document's page and the passage to highlight on it."""
    document: object  # ingest.document.Document
    page: int  # 1-based physical page (for text documents: the page holding the passage)
    passage: str
    span: tuple[int, int] | None = None  # where the passage is in the page's text, if known


_VIEW = re.compile(r"^t(\d+)(?:s(\d+)|e(\d+)\.(\d+))$")


def page_target(turns: Sequence, documents: Sequence, view: str,
                live: dict | None = None) -> PageTarget | None:
    """The page a link names: "t<turn>s<k>" (statement k of an answer's checks) or
    "t<turn>e<i>.<j>" (sentence j of that answer's evidence item i); None when the link no
    longer matches (the session changed, or the document was removed). ``live`` maps the
    turn being written to its metrics so far ({"checks", "evidence"}): its marks are links
    while it streams."""
    m = _VIEW.match(view or "")
    turn = next((t for t in turns if m and t.id == int(m.group(1))), None)
    if turn is None:
        return None
    metrics = (live or {}).get(turn.id) or turn.metrics or {}
    try:
        if m.group(2) is not None:
            return statement_target(metrics["checks"]["statements"][int(m.group(2))],
                                    documents)
        item = metrics["evidence"][int(m.group(3))]
        s = item["sentences"][int(m.group(4))]
        return _target(documents, item.get("doc_id"), None, s.get("number"), None, s["text"])
    except (KeyError, IndexError, TypeError):
        return None


def statement_target(statement: dict, documents: Sequence) -> PageTarget | None:
    """The page of one checked statement (AnswerCheck.to_dict()'s): its support's, or, for
    a statement that contradicts the document, the page that says otherwise."""
    c = statement.get("conflict")
    if c:
        return _target(documents, c.get("doc_id", statement.get("doc_id")), c.get("document"),
                       c.get("page"), c.get("span"), c.get("text") or c.get("says") or "")
    return _target(documents, statement.get("doc_id"), statement.get("document"),
                   statement.get("page"), statement.get("span"), statement.get("support") or "")


def _target(documents: Sequence, doc_id, name: str | None, page: int | None, span,
            passage: str) -> PageTarget | None:
    doc = next((d for i, d in enumerate(documents) if d.id == doc_id or
                (d.id is None and i == doc_id)), None)
    if doc is None and name:
        doc = next((d for d in documents if d.name == name), None)
    if doc is None or not passage:
        return None
    if page is None or doc.page(page) is None:  # a text document: the page that has it
        page = _page_with(doc, passage, span)
    if page is None:
        return None
    text = doc.page(page).text
    if span and 0 <= span[0] < span[1] <= len(text):
        passage = text[span[0]:span[1]]  # the support exactly as the page has it
    else:
        span = None
    return PageTarget(doc, page, passage, tuple(span) if span else None)


def _page_with(doc, passage: str, span) -> int | None:
    from docchat.library.pages import locate

    for p in doc.pages:
        if span and p.text[span[0]:span[1]] == passage[:span[1] - span[0]]:
            return p.number
    return next((p.number for p in doc.pages if locate(p.text, passage)), None)
