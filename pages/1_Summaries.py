"""Summaries page: summarise documents (library, uploads, a server folder) in the background,
watch and cancel runs, read summaries with their page references, download them."""
from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

import streamlit as st

from docchat.config import Settings
from docchat.errors import DocchatError
from docchat.library.store import SessionStore
from docchat.summaries.batch import zip_summaries
from docchat.summaries.checks import stored_checks
from docchat.summaries.files import collections, read_collection, run_folder
from docchat.summaries.jobs import RunOptions, run_concurrency
from docchat.ui import summaries as ui
from docchat.ui.i18n import init_language
from docchat.ui.links import clicked_view
from docchat.ui.pageview import open_statement
from docchat.ui.render import escape_text
from docchat.ui.resources import load_backend, run_page
from docchat.ui.sidebar import language_select

logger = logging.getLogger("docchat.summaries_page")
st.set_page_config(page_title="docchat · Summaries", page_icon="📄", layout="wide")
settings = Settings.from_env()
q = ui.q


def new_run(store: SessionStore, backend) -> None:
    """Pick documents and options, then start a run in the background."""
    st.subheader(q("s_new"))
    sources = ["library", "upload"] + (["folder"] if settings.summaries_root else [])
    source = ui.choice(st.radio, q("s_source"), sources, "s_source", lambda s: q(f"s_{s}"),
                    horizontal=True)
    picked = ui.chosen(store, source, settings)
    c1, c2, c3 = st.columns(3)
    lang = ui.choice(c1.selectbox, q("s_lang"), ["auto", "en", "zh"], "s_lang",
                  lambda v: q(f"s_lang_{v}"))
    max_tokens = c2.number_input(q("s_max_tokens"), min_value=16, max_value=4096, step=16,
                                 value=settings.max_new_tokens, key="s_max_tokens")
    password = c3.text_input(q("s_password"), type="password", key="s_password")
    if not st.button(q("s_start"), type="primary", key="s_start_btn",
                     icon=":material/summarize:"):
        return
    if picked is None or not (picked[0] or picked[1]):
        st.warning(q("s_nothing"))
        return
    items, refused, title, store_names = picked
    kind = "folder" if source == "folder" else "batch"
    out = run_folder(settings.summaries_dir, kind, title)
    options = RunOptions(lang=lang, max_new_tokens=int(max_tokens), max_mb=settings.max_file_mb,
                         password=password or None,
                         concurrency=run_concurrency(settings.max_concurrency),
                         ocr_max_pages=settings.ocr_max_pages,
                         processes=settings.ingest_processes)
    try:
        job = ui.registry(str(settings.db)).start(
            items, backend, partial(SessionStore.open, settings.db), out, options, title=title,
            kind=kind, failed=refused, tokenizer=backend, store_names=store_names)
    except DocchatError as e:
        st.error(str(e))
        return
    st.session_state["s_read_folder"] = job.out_dir  # read what this run writes


def runs(db: str) -> None:
    """Every run of this server, newest first: progress, errors, Cancel."""
    jobs = ui.registry(db)
    views = [j.snapshot() for j in jobs.list()]
    # Documents finished per running job at the last draw: when a run ends or another
    # document is done, the whole page is drawn again, so the reading part shows it.
    seen: dict = st.session_state.setdefault("s_seen_running", {})
    if any(v.id in seen and (not v.running or v.finished > seen[v.id]) for v in views):
        seen.clear()
        st.rerun()
    seen.update({v.id: v.finished for v in views if v.running})
    if not views:
        st.caption(q("s_no_runs"))
    for v in views[:6]:
        with st.container(border=True):
            st.markdown(f"**{escape_text(v.title)}**")
            ui.show_progress(v, jobs, key="page")


def read(store: SessionStore, clicked: str | None) -> None:
    """A folder of summaries: its overview on top, one summary with its pages, downloads."""
    st.subheader(q("s_read"))
    base = Path(settings.summaries_dir)
    folders = [str(p) for p in collections(base)]
    for job in ui.registry(str(settings.db)).running():
        if job.out_dir not in folders:
            folders.insert(0, job.out_dir)
    if not folders:
        st.info(q("s_none"))
        return
    if st.session_state.get("s_read_folder") not in folders:
        st.session_state["s_read_folder"] = folders[0]

    def label(folder: str) -> str:
        p = Path(folder)
        return str(p.relative_to(base)) if p != base and p.is_relative_to(base) else p.name

    folder = st.selectbox(q("s_collection"), folders, key="s_read_folder", format_func=label)
    collection = read_collection(folder, store.list_documents())
    if collection.entries:
        st.download_button(q("s_download_all"), zip_summaries(folder), key="s_zip",
                           file_name=f"summaries-{Path(folder).name}.zip",
                           mime="application/zip", icon=":material/folder_zip:")
    if collection.index:
        with st.expander(q("s_overview"), expanded=True):
            st.markdown(ui.index_markdown(collection.index))
    if not collection.entries:
        return
    # Picked by file name: entries arrive while a run goes on, and a file keeps its name.
    entries = {e.file.name: e for e in collection.entries}
    pick = st.selectbox(q("s_read"), list(entries), key=f"s_entry_{folder}",
                        format_func=lambda f: entries[f].name if f in entries else f)
    entry = entries[pick]
    markdown = entry.file.read_text(encoding="utf-8")
    st.download_button(q("s_download"), markdown, file_name=entry.file.name,
                       mime="text/markdown", key="s_download_one", icon=":material/download:")
    doc = ui.stored_document(str(settings.db), entry.doc_id) if entry.doc_id else None
    checks = stored_checks(store, entry.doc_id, markdown) if doc is not None else None
    with st.container(border=True):
        ui.show_summary(markdown, doc, key=entry.file.name, checks=checks)
    # A statement's page link clicked (or followed to this URL): its page, in a dialog.
    view = clicked or st.query_params.get("view")
    if "view" in st.query_params:
        st.query_params.pop("view", None)
    if doc is not None:
        open_statement(checks, [doc], settings.uploads_dir, view)


def main() -> None:
    store = SessionStore.open(settings.db)
    init_language(settings.language)
    with st.sidebar:
        language_select()
        clicked = clicked_view()
    st.title(q("s_title"))
    st.caption(q("s_intro"))
    with st.spinner(q("loading_model")):
        backend = load_backend(settings.backend, tuple(settings.backend_options().items()))
    new_run(store, backend)
    st.subheader(q("s_runs"))
    db = str(settings.db)
    if ui.registry(db).running():
        st.fragment(runs, run_every=1.0)(db)
    else:
        runs(db)
    read(store, clicked)


run_page(main, logger, partial(q, "generic_error"))
