"""The chat page's documents panel: uploads with their progress and passwords, documents
read before, removal, and each document's summary action."""
from __future__ import annotations

import streamlit as st

from docchat.config import Settings
from docchat.context import embeddings
from docchat.errors import DocchatError, PasswordRequired
from docchat.library import uploads
from docchat.library.store import SessionStore
from docchat.ui import summaries as summary_ui
from docchat.ui.i18n import q
from docchat.ui.resources import document
from docchat.ui.sidebar import go


def ingest(store: SessionStore, f, backend, session_id: str, settings: Settings,
           password: str | None = None) -> dict:
    """Ingest one uploaded file with progress shown; return what to show about it."""
    ocr = {}
    with st.status(q("reading", name=f.name), expanded=False) as status:
        try:
            bar = None

            def on_ocr(p) -> None:  # scanned pages: OCR progress, in this script thread
                nonlocal bar
                if not p.total:
                    return
                ocr.update(done=p.done, total=p.total)
                status.update(label=q("ocr_status", name=f.name), expanded=True)
                bar = bar or st.progress(0.0)
                eta = q("ocr_eta", s=round(p.eta_s)) if p.eta_s is not None else ""
                bar.progress(p.done / p.total, text=q("ocr_pages", done=p.done,
                                                      total=p.total) + eta)

            up = uploads.ingest_upload(store, f.name, f.getvalue(), settings.uploads_dir,
                                       settings.max_file_mb, password=password,
                                       tokenizer=backend,  # counts by the model's tokenizer
                                       on_ocr_progress=on_ocr,
                                       ocr_max_pages=settings.ocr_max_pages,
                                       processes=settings.ingest_processes)
        except PasswordRequired as e:
            status.update(label=str(e), state="error")
            return {"password": True, "error": str(e)}
        except DocchatError as e:
            status.update(label=str(e), state="error")
            return {"error": str(e)}
        store.attach(session_id, up.document.id)
        # packing will need its vectors: computed once, in the background, kept in the store
        resume_vectors(store, [up.document], backend, settings)
        res = {"doc_id": up.document.id, "reused": up.reused, "ocr": ocr}
        status.update(label=stored_line(up.document, backend, res, settings), state="complete")
    return res


def stored_line(doc, backend, res: dict, settings: Settings) -> str:
    """What an upload became: pages, tokens, fit, and whether it was read before or by OCR."""
    ocr = f" · {q('ocr_pages', **res['ocr'])}" if res.get("ocr") else ""
    return describe(doc, backend, settings) + (f" {q('reused')}" if res.get("reused") else "") \
        + ocr


def describe(doc, backend, settings: Settings) -> str:
    fit = uploads.fit(doc, backend.context_window, settings.max_new_tokens)
    return q("doc_line", name=doc.name, pages=len(doc.pages), tokens=doc.tokens,
             fit=q("fits") if fit.whole else q("packed"))


def uploader_files() -> list:
    """The files in the uploader as this run begins, before the uploader is drawn (none if
    Streamlit cannot tell yet)."""
    try:
        return list(st.session_state.get("uploader") or [])
    except Exception:  # a widget value Streamlit has not registered in this session yet
        return []


def detach(db: str, session_id: str, doc_id: int) -> None:
    SessionStore.open(db).detach(session_id, doc_id)  # callbacks: own connection


def uploads_box(store: SessionStore, sid: str | None, backend, settings: Settings) -> str | None:
    """The uploader and each file's result (reading, stored, refused, password asked);
    returns the session (the first upload starts one)."""
    results = st.session_state.setdefault("ingested", {})
    files = st.file_uploader(q("upload"), accept_multiple_files=True, key="uploader")
    new = [f for f in files or [] if f.file_id not in results]
    bar = st.progress(0.0) if len(new) > 1 else None
    for f in files or []:
        res = results.get(f.file_id)
        if res is None:
            if not sid:
                sid = store.create_session()
                go(sid)
            res = results[f.file_id] = ingest(store, f, backend, sid, settings)
            if bar is not None:
                done = sum(1 for n in new if n.file_id in results)
                bar.progress(done / len(new), text=f"{done}/{len(new)}")
        elif "doc_id" in res:
            st.success(stored_line(document(str(settings.db), res["doc_id"]), backend, res,
                                   settings))
        elif not res.get("password"):
            st.error(res["error"])
        if res.get("password"):
            st.warning(q("password_for", name=f.name) + f" — {res['error']}")
            pw = st.text_input(q("password_for", name=f.name), type="password",
                               key=f"pw_{f.file_id}", label_visibility="collapsed")
            if st.button(q("open"), key=f"open_{f.file_id}") and pw:
                results[f.file_id] = ingest(store, f, backend, sid, settings, password=pw)
                st.rerun()
    if new:  # read (or refused): the panel's title, drawn before, must count them now
        st.rerun()
    return sid


def earlier_box(store: SessionStore, sid: str | None, doc_ids: list) -> None:
    """Documents read before, to add to this session (one is started if needed)."""
    earlier = {d["id"]: d for d in store.list_documents() if d["id"] not in doc_ids}
    if not earlier:
        return
    picked = st.multiselect(q("earlier"), list(earlier), key="earlier",
                            format_func=lambda i: f"{earlier[i]['name']} "
                            f"({earlier[i]['pages']} p., {earlier[i]['tokens']:,} tok)")
    if st.button(q("attach"), disabled=not picked):
        sid = sid or store.create_session()
        for doc_id in picked:
            store.attach(sid, doc_id)
        go(sid)
        st.rerun()


def documents_panel(store: SessionStore, sid: str | None, backend,
                    settings: Settings) -> tuple[str | None, list]:
    """Uploads (with progress and passwords), documents read before, removal; returns the
    session (the first upload starts one) and its documents."""
    db = str(settings.db)
    doc_ids = store.session_documents(sid) if sid else []
    asked = bool(sid) and bool(store.turns(sid))  # open until the first question
    results = st.session_state.setdefault("ingested", {})
    adding = len([f for f in uploader_files() if f.file_id not in results])
    count = f"{len(doc_ids)} · {q('adding', n=adding)}" if adding else f"{len(doc_ids)}"
    with st.expander(q("documents") + f" ({count})", expanded=not doc_ids or not asked):
        sid = uploads_box(store, sid, backend, settings)
        doc_ids = store.session_documents(sid) if sid else []
        earlier_box(store, sid, doc_ids)
        docs = [document(db, i) for i in doc_ids]
        for d in docs:
            c1, c2 = st.columns([6, 1])
            c1.caption(describe(d, backend, settings))
            c2.button(q("remove"), key=f"rm_{d.id}", on_click=detach, args=(db, sid, d.id))
            summary_ui.document_summary(store, d, backend, settings, sid)  # Summarize, summary
    resume_vectors(store, docs, backend, settings)
    return sid, docs


def resume_vectors(store: SessionStore, docs: list, backend, settings: Settings) -> None:
    """Embed in the background the vectors of the documents packing will search (those that
    do not fit whole) that are not stored yet: after an upload, or what an upload left
    unembedded (the server stopped midway, or an upgrade changed a kind of vectors). One
    embedding thread per document (embeddings.warm_missing), whichever asks first."""
    for d in docs:
        if not uploads.fit(d, backend.context_window, settings.max_new_tokens).whole:
            embeddings.warm_missing(d, store, lambda: SessionStore.open(settings.db))
