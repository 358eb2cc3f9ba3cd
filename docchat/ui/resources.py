"""Resources every page of the app shares, cached once per server process.

One definition for all pages: Streamlit keys st.cache_resource by the function's module,
name and source, so a copy in each page could drift and load a second model with its own
queue (then chat answers and summary steps would no longer take turns).
"""
from __future__ import annotations

import logging
import threading
from typing import Callable

import streamlit as st

from docchat.backends import Backend, get_backend
from docchat.errors import DocchatError


@st.cache_resource(show_spinner=False)
def load_backend(name: str, options: tuple) -> Backend:
    """The backend, loaded once per process and shared by every session and page."""
    return get_backend(name, **dict(options))


def run_page(main: Callable[[], None], logger: logging.Logger,
             generic: Callable[[], str]) -> None:
    """A page's edge: run main(); a DocchatError is shown as it is (it says what to do),
    anything else is logged with its traceback and the page shows generic() instead (never
    a traceback on the page; Streamlit's rerun and stop are BaseException and pass)."""
    try:
        main()
    except DocchatError as e:
        st.error(str(e))
    except Exception:
        logger.exception("page failed")
        st.error(generic())


@st.cache_resource
def generations(db: str):
    """Answers in flight in this process (docchat.answer.chat.Generations)."""
    from docchat.answer.chat import Generations

    return Generations()


@st.cache_resource(max_entries=32, show_spinner=False)
def document(db: str, doc_id: int):
    """A stored document (documents never change once stored)."""
    from docchat.library.store import SessionStore

    return SessionStore.open(db).load_document(doc_id)


@st.cache_resource
def prefetched(db: str) -> dict:
    """(session, documents) -> the prompt prefix sent to the backend to warm
    (docchat.answer.session.warm)."""
    return {}


@st.cache_resource
def warm_words() -> threading.Thread:
    """Load jieba's dictionary (1-2 s) and the bilingual dictionary (1 s cached, ~10 s the
    first time) in the background once, not in the first question's packing or evidence."""
    from docchat.context import dictionary
    from ingest.segment import cut_words

    def load() -> None:
        cut_words("预热中文分词")
        dictionary.warm()

    thread = threading.Thread(target=load, daemon=True, name="docchat-words")
    thread.start()
    return thread
