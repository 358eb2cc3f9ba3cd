"""docchat web app: upload documents, ask about them, read answers with their sources.

Layout only: the widgets live in docchat.ui, starting an answer in docchat.answer.session.
"""
from __future__ import annotations

import logging
import time
import uuid
from functools import partial

import streamlit as st

from docchat.answer import session
from docchat.config import Settings
from docchat.context import embeddings
from docchat.library.store import SessionStore
from docchat.ui import chat as chat_ui
from docchat.ui import sidebar
from docchat.ui.documents import documents_panel
from docchat.ui.i18n import init_language, q
from docchat.ui.links import clicked_view
from docchat.ui.pageview import open_view
from docchat.ui.resources import (
    document,
    generations,
    load_backend,
    prefetched,
    run_page,
    warm_words,
)

# This run began: the moment a question was submitted. The imports above cost microseconds
# here: Python runs them once per process, and a process's first run has no question (it
# draws the chat box).
ASKED_AT = time.perf_counter()

logger = logging.getLogger("docchat.app")
st.set_page_config(page_title="docchat", page_icon="📄", layout="wide")
settings = Settings.from_env()
embeddings.configure(settings)  # DOCCHAT_EMBEDDER=off: BM25 alone


def ask(store: SessionStore, sid: str | None, question: str, docs: list, backend,
        options: session.AskOptions) -> str | None:
    """Start answering at once (the page is drawn while the backend reads the prompt);
    returns a notice to show instead when it cannot start."""
    running = generations(str(settings.db))
    if not docs:
        return q("attach_first")
    if running.get(sid) is not None:
        return q("busy")
    session.start_answer(store=store, running=running, session_id=sid, question=question,
                         documents=docs, backend=backend, options=options,
                         db_path=str(settings.db), asked_at=ASKED_AT,
                         owner=st.session_state["client"],
                         warm_start=session.warmed(prefetched(str(settings.db)), sid, docs),
                         done=prefetched(str(settings.db)))
    sidebar.one_question_only()
    return None


def side(backend, options: session.AskOptions):
    """The sidebar, but for the sessions list, drawn last into the container returned (an
    upload may start a session)."""
    with st.sidebar:
        sidebar.language_select()
        st.button(q("new_session"), on_click=sidebar.go, args=(None,), icon=":material/add:",
                  use_container_width=True)
        sessions_box = st.container()
        st.divider()
        sidebar.preset_sidebar(options.preset)
        sidebar.reading_sidebar(settings)
        st.divider()
        st.caption(q("backend") + ": " + q("backend_info", name=backend.name, model=backend.model,
                                            window=backend.context_window, device=backend.device))
    return sessions_box


def main() -> None:
    init_language(settings.language)
    st.session_state.setdefault("client", uuid.uuid4().hex)
    db = str(settings.db)
    store = SessionStore.open(settings.db)
    running = generations(db)
    sid = st.query_params.get("session")
    if sid and store.session(sid) is None:
        st.toast(q("missing_session"))
        sidebar.go(None)
        sid = None
    question = st.chat_input(q("ask"))
    with st.spinner(q("loading_model")):
        backend = load_backend(settings.backend, tuple(settings.backend_options().items()))
    warm_words()
    remote = session.is_remote(backend)
    options = sidebar.ask_options(settings)
    docs = [document(db, i) for i in store.session_documents(sid)] if sid else []
    notice = ask(store, sid, question, docs, backend, options) if question else None

    sessions_box = side(backend, options)
    with st.sidebar:
        clicked = clicked_view()
    st.title(q("title"))
    sid, docs = documents_panel(store, sid, backend, settings)
    if notice:
        st.warning(notice)
    with sessions_box:
        export_slot = sidebar.sessions_sidebar(store, sid, running, db)
    if not sid:
        st.info(q("no_documents"))
        return
    live = running.get(sid)
    turns = store.turns(sid)
    if docs and live is None and not question:
        session.warm(backend, session_id=sid, documents=docs, options=options,
                     done=prefetched(db), turns=turns)
    # A page link clicked (or followed to this URL): the page, in a dialog, no reload.
    open_view(turns, docs, settings.uploads_dir, clicked=clicked, live=live)
    if chat_ui.show_conversation(turns, docs, db=db, live=live,
                                 client=st.session_state["client"], remote=remote) \
            and export_slot is not None:  # the export holds the answer just finished
        sidebar.export_button(export_slot, db, sid, "export_after")


run_page(main, logger, partial(q, "generic_error"))
