"""Compare page: two documents of the session, their changes redlined, questions and
summaries about what changed. The comparison is stored with the session."""
from __future__ import annotations

import logging
from functools import partial

import streamlit as st

from docchat.comparison.align import Comparison, compare
from docchat.config import Settings
from docchat.library.store import SessionStore
from docchat.ui import compare as ui
from docchat.ui.i18n import init_language, language, t
from docchat.ui.render import escape_text
from docchat.ui.resources import load_backend, run_page
from docchat.ui.sidebar import language_select

logger = logging.getLogger("docchat.compare_page")
st.set_page_config(page_title="docchat · Compare", page_icon="📄", layout="wide")
settings = Settings.from_env()
q = ui.q


@st.cache_resource(max_entries=32, show_spinner=False)
def document(db: str, doc_id: int):
    """A stored document (documents never change once stored)."""
    return SessionStore.open(db).load_document(doc_id)


def stored(store: SessionStore, sid: str, old_id: int, new_id: int) -> Comparison | None:
    data = store.get_comparison(sid, old_id, new_id)
    return Comparison.from_dict(data) if data else None


def main() -> None:
    store = SessionStore.open(settings.db)
    init_language(settings.language)
    with st.sidebar:
        language_select()
    st.title(q("c_title"))
    st.caption(q("c_intro"))
    sid = st.query_params.get("session")
    if not sid or store.session(sid) is None:
        st.info(q("c_no_session"))
        st.page_link("app.py", label=q("c_chat"), icon=":material/chat:")
        for s in [s for s in store.list_sessions()
                  if len(store.session_documents(s["id"])) >= 2][:5]:
            st.page_link("pages/2_Compare.py", label=escape_text(s["title"] or s["id"]),
                         query_params={"session": s["id"]}, icon=":material/compare:")
        return
    doc_ids = store.session_documents(sid)
    if len(doc_ids) < 2:
        st.info(q("c_need_two"))
        st.page_link("app.py", label=q("c_chat"), icon=":material/chat:",
                     query_params={"session": sid})
        return
    docs = [document(str(settings.db), i) for i in doc_ids]
    last = store.get_comparison(sid)
    if last and "c_old" not in st.session_state and {last["old_id"], last["new_id"]} <= set(
            doc_ids):  # a reload or a resumed session opens on its last comparison
        st.session_state["c_old"], st.session_state["c_new"] = last["old_id"], last["new_id"]
    old_id, new_id = ui.pick(docs)
    if old_id == new_id:
        st.warning(q("c_same_doc"))
        return
    old, new = document(str(settings.db), old_id), document(str(settings.db), new_id)
    result = stored(store, sid, old_id, new_id)
    if st.button(q("c_go"), key="c_go", type="primary"):
        result = compare(old, new)
        ui.save(store, sid, result)
    if result is None:
        return
    ui.show(result, old, new)
    if result.verdict == "same":
        return
    st.divider()
    with st.spinner(t("loading_model", language())):
        backend = load_backend(settings.backend, tuple(settings.backend_options().items()))
    ui.summary_box(store, sid, result, old, new, backend)
    ui.ask_box(store, sid, result, old, new, backend)


run_page(main, logger, partial(t, "generic_error", language()))
