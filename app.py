"""docchat web app: upload documents, ask about them, read answers with their sources."""
from __future__ import annotations

import time

ASKED_AT = time.perf_counter()  # this run began: the moment a question was submitted

import logging  # noqa: E402
import threading  # noqa: E402
import uuid  # noqa: E402
from dataclasses import fields  # noqa: E402
from functools import partial  # noqa: E402

import streamlit as st  # noqa: E402

from docchat.answer import chat, qa  # noqa: E402
from docchat.context import citations, embeddings, packing  # noqa: E402
from docchat.library import uploads  # noqa: E402
from docchat.ui import summaries as summary_ui  # noqa: E402
from docchat.ui.render import evidence_markdown  # noqa: E402
from docchat.config import Settings  # noqa: E402
from docchat.errors import DocchatError, PasswordRequired  # noqa: E402
from docchat.ui.i18n import LANGUAGES, metrics_line, progress_fraction, progress_line, t  # noqa: E402
from docchat.answer.presets import GENERATION_FIELDS, PRESETS  # noqa: E402
from docchat.ui.render import escape_text, safe_markdown, streaming_markdown  # noqa: E402
from docchat.ui.resources import load_backend, run_page  # noqa: E402
from docchat.library.store import SessionStore  # noqa: E402

logger = logging.getLogger("docchat.app")
REMOTE = False  # the backend is an HTTP server: it does not report how far it has read
st.set_page_config(page_title="docchat", page_icon="📄", layout="wide")
settings = Settings.from_env()
embeddings.configure(settings)  # DOCCHAT_EMBEDDER=off: BM25 alone


@st.cache_resource
def generations(db: str) -> chat.Generations:
    """Answers in flight in this process."""
    return chat.Generations()


@st.cache_resource(max_entries=32, show_spinner=False)
def document(db: str, doc_id: int):
    """A stored document (documents never change once stored)."""
    return SessionStore.open(db).load_document(doc_id)


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


@st.cache_resource
def prefetched(db: str) -> set:
    """(session, documents) whose stable prompt prefix was sent to the backend to warm."""
    return set()


def q(key: str, **values) -> str:
    return t(key, st.session_state.get("lang", settings.language), **values)


def go(session_id: str | None) -> None:
    st.session_state.pop("confirm_delete", None)
    if session_id:
        st.query_params["session"] = session_id
    else:
        st.query_params.pop("session", None)


def show_answer(text: str, status: str, metrics: dict, docs: list) -> None:
    """An assistant turn: its text, status, metrics and openable sources."""
    if metrics.get("error"):
        st.error(metrics["error"])
    if text or not metrics.get("error"):
        st.markdown(safe_markdown(text))
    if status == "stopped":
        st.caption(f":material/stop_circle: {q('stopped')}")
    elif status == "streaming":  # saved mid-answer and no longer being written
        st.caption(f":material/warning: {q('interrupted')}")
    if metrics.get("model"):
        st.caption(metrics_line(metrics, st.session_state.get("lang", "en")))
    found = (citations.from_dicts(metrics["sources"]) if "sources" in metrics
             else citations.find_sources(text, docs))
    for s in found:
        page = next((d.page(s.page) for d in docs if d.id == s.doc_id), None)
        ocr = f" · {q('ocr_page')}" if page is not None and page.ocr else ""
        with st.expander(escape_text(f"{s.doc_name} · p. {s.label}{ocr}"),
                         icon=":material/description:"):
            st.markdown(safe_markdown(page.text) if page else q("page_missing"))
    if metrics.get("evidence"):  # what was on screen while the model read, kept collapsed
        with st.expander(q("evidence"), icon=":material/format_quote:"):
            st.markdown(evidence_markdown(metrics["evidence"]))


def live_text(g: chat.Generation) -> str:
    """The answer so far or, before its first word, what the backend is doing: a line with
    a figure that moves at every poll (tokens read, or at least the seconds waited)."""
    if g.text:
        return streaming_markdown(g.text)
    elapsed = time.perf_counter() - g.submitted_at
    if g.ahead:
        return q("ahead", n=g.ahead) + f" ({elapsed:.1f} s)"
    lang = st.session_state.get("lang", "en")
    if g.progress is None and g.evidence_at is not None and REMOTE:
        return q("p_unknown") + f" ({elapsed:.1f} s)"
    return progress_line(g.progress, elapsed, lang)


def show_evidence(g: chat.Generation) -> None:
    """The packed sections' best sentences, shown as soon as packing is done."""
    with st.expander(q("evidence"), expanded=True, icon=":material/format_quote:"):
        st.markdown(evidence_markdown(g.evidence) if g.evidence else q("evidence_none"))


def show_live(g: chat.Generation, docs: list) -> None:
    """Stream an answer this page asked for: block until it ends; Stop cancels it."""
    body, bar, found, stop = st.empty(), st.empty(), st.empty(), st.empty()
    stop.button(q("stop"), key=f"stop_{g.turn_id}", on_click=g.stop, icon=":material/stop_circle:")
    shown_evidence, bar_on = False, False
    # Every poll sends a delta, so a Stop click interrupts at once.
    for _ in chat.follow(g):  # yields g itself whenever it changed
        if g.evidence_at is not None and not shown_evidence:
            with found.container():
                show_evidence(g)
            shown_evidence = True
        body.markdown(live_text(g))
        fraction = None if g.text else progress_fraction(g.progress)
        if fraction is not None:
            bar.progress(fraction)
            bar_on = True
        elif bar_on:
            bar.empty()
            bar_on = False
    stop.empty()
    bar.empty()
    found.empty()
    with body.container():
        show_answer(g.text, g.status, g.metrics, docs)


@st.fragment(run_every=0.5)
def follow_elsewhere(session_id: str, turn_id: int) -> None:
    """An answer asked from another tab (or before a reload): refresh it twice a second."""
    g = generations(str(settings.db)).get(session_id)
    if g is None or g.done or g.turn_id != turn_id:
        st.rerun()
    st.caption(q("elsewhere"))
    st.markdown(live_text(g))
    if not g.text and (fraction := progress_fraction(g.progress)) is not None:
        st.progress(fraction)
    if g.evidence_at is not None:
        show_evidence(g)
    st.button(q("stop"), key=f"stop_{turn_id}", on_click=g.stop, icon=":material/stop_circle:")


def ingest(store: SessionStore, f, backend, session_id: str, password: str | None = None) -> dict:
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
        if not uploads.fit(up.document, backend.context_window, settings.max_new_tokens).whole:
            # packing will need its section vectors: computed once, kept in the store
            embeddings.warm(up.document, open_store=lambda: SessionStore.open(settings.db))
        res = {"doc_id": up.document.id, "reused": up.reused, "ocr": ocr}
        status.update(label=stored_line(up.document, backend, res), state="complete")
    return res


def stored_line(doc, backend, res: dict) -> str:
    """What an upload became: pages, tokens, fit, and whether it was read before or by OCR."""
    ocr = f" · {q('ocr_pages', **res['ocr'])}" if res.get("ocr") else ""
    return describe(doc, backend) + (f" {q('reused')}" if res.get("reused") else "") + ocr


def describe(doc, backend) -> str:
    fit = uploads.fit(doc, backend.context_window, settings.max_new_tokens)
    return q("doc_line", name=doc.name, pages=len(doc.pages), tokens=doc.tokens,
             fit=q("fits") if fit.whole else q("packed"))


def preset_values(name: str) -> dict:
    """Every adjustable value of a preset: its pacing fields, then its generation values."""
    preset = PRESETS[name]
    return {**{f.name: getattr(preset.pacing, f.name) for f in fields(preset.pacing)},
            **{k: preset.generation[k] for k in GENERATION_FIELDS}}


def chosen_preset() -> tuple[str, dict]:
    """The preset and the values changed in the sidebar (read before the sidebar is drawn)."""
    name = st.session_state.get("preset", settings.preset)
    name = name if name in PRESETS else "quick"
    state = st.session_state
    return name, {k: state[f"ov_{name}_{k}"] for k, v in preset_values(name).items()
                  if f"ov_{name}_{k}" in state and state[f"ov_{name}_{k}"] != v}


def preset_sidebar(name: str) -> None:
    """The preset picker and a widget for each of its values."""
    lang = st.session_state.get("lang", "en")
    st.selectbox(q("preset"), list(PRESETS), key="preset", index=list(PRESETS).index(name),
                 format_func=lambda n: PRESETS[n].label(lang))
    with st.expander(q("adjust")):
        for key, default in preset_values(name).items():
            wkey = f"ov_{name}_{key}"
            if key == "mode":
                modes = ["scheduled", "smooth", "raw"]
                st.selectbox(key, modes, key=wkey, index=modes.index(default))
            elif isinstance(default, bool):
                st.checkbox(key, value=default, key=wkey)
            elif isinstance(default, int) or (key == "seed" and default is None):
                st.number_input(key, value=default, step=1, key=wkey, min_value=0)
            else:
                st.number_input(key, value=float(default), step=0.01, key=wkey, min_value=0.0,
                                format="%.3f")


READING_MODES = ("budget", "next", "session")


def reading_sidebar() -> None:
    """The first-token target and the choice to read the whole window instead."""
    st.number_input(q("ttft_target"), min_value=0.0, max_value=600.0, step=5.0,
                    value=float(settings.ttft_target), key="ttft_target", help=q("ttft_help"))
    st.radio(q("reading_mode"), READING_MODES, key="reading",
             format_func=lambda m: q(f"rm_{m}"))


def warm(backend, sid: str, docs: list, context_window: int, max_new_tokens: int) -> None:
    """Send the stable prompt prefix (system prompt + outline) to the backend to read in the
    background, once per session and set of documents (later, the cache holds the last
    question's prompt, which starts with it); a question cancels or reuses it."""
    make = packing.prefix_messages
    fetch = getattr(backend, "prefetch", None)
    key = (sid, tuple(d.id for d in docs))
    done = prefetched(str(settings.db))
    if fetch is None or key in done:
        return
    done.add(key)
    langs = {d.language for d in docs}
    try:
        fetch(make(docs, backend, langs.pop() if len(langs) == 1 else "en",
                   context_window=context_window, max_new_tokens=max_new_tokens))
    except Exception:  # the edge: a warm start is an optimisation, never an error on the page
        logger.exception("warm start for session %s failed", sid)


def sessions_sidebar(store: SessionStore, sid: str | None, running: chat.Generations):
    """Sessions newest first; rename, export and delete (with confirmation) the current one.
    Returns the export button's place (None without a session)."""
    st.subheader(q("sessions"))
    for s in store.list_sessions():
        st.button(escape_text(s["title"]) or q("untitled"), key=f"s_{s['id']}", on_click=go,
                  args=(s["id"],), use_container_width=True,
                  type="primary" if s["id"] == sid else "secondary")
    if not sid:
        return None
    with st.expander(q("this_session")):
        title = st.text_input(q("rename"), value=store.session(sid)["title"], key=f"title_{sid}")
        if st.button(q("save_title")) and title.strip():
            store.rename_session(sid, title)
            st.rerun()
        slot = st.empty()
        export_button(slot, sid, "export")
        if st.button(q("delete"), icon=":material/delete:"):
            st.session_state["confirm_delete"] = sid
        if st.session_state.get("confirm_delete") == sid:
            st.warning(q("confirm_delete"))
            if st.button(q("yes_delete"), type="primary"):
                if (g := running.get(sid)) is not None:
                    g.stop()
                    g.join(10)
                store.delete_session(sid)
                go(None)
                st.rerun()
            st.button(q("cancel"), on_click=st.session_state.pop, args=("confirm_delete",))
    return slot


def export_button(slot, sid: str, key: str) -> None:
    """The session as Markdown, made in this run. Not a callable made on click: Streamlit
    forgets a callable's id once the tab reruns, and a click that still holds it (pressed
    while the page is drawn again) downloads nothing. The same text is the same file, so the
    link a tab holds stays good across reruns."""
    slot.download_button(q("export"), export(str(settings.db), sid), key=key,
                         file_name=f"docchat-{sid}.md", mime="text/markdown",
                         on_click="ignore", icon=":material/download:")


def export(db: str, session_id: str) -> str:
    return SessionStore.open(db).export_markdown(session_id)


def detach(session_id: str, doc_id: int) -> None:
    SessionStore.open(settings.db).detach(session_id, doc_id)  # callbacks: own connection


def uploader_files() -> list:
    """The files in the uploader as this run begins, before the uploader is drawn (none if
    Streamlit cannot tell yet)."""
    try:
        return list(st.session_state.get("uploader") or [])
    except Exception:  # a widget value Streamlit has not registered in this session yet
        return []


def documents_panel(store: SessionStore, sid: str | None, backend) -> tuple[str | None, list]:
    """Uploads (with progress and passwords), documents read before, removal; returns the
    session (the first upload starts one) and its documents."""
    doc_ids = store.session_documents(sid) if sid else []
    asked = bool(sid) and bool(store.turns(sid))  # open until the first question
    results = st.session_state.setdefault("ingested", {})
    adding = len([f for f in uploader_files() if f.file_id not in results])
    count = f"{len(doc_ids)} · {q('adding', n=adding)}" if adding else f"{len(doc_ids)}"
    with st.expander(q("documents") + f" ({count})", expanded=not doc_ids or not asked):
        files = st.file_uploader(q("upload"), accept_multiple_files=True, key="uploader")
        new = [f for f in files or [] if f.file_id not in results]
        bar = st.progress(0.0) if len(new) > 1 else None
        for f in files or []:
            res = results.get(f.file_id)
            if res is None:
                if not sid:
                    sid = store.create_session()
                    go(sid)
                res = results[f.file_id] = ingest(store, f, backend, sid)
                if bar is not None:
                    done = sum(1 for n in new if n.file_id in results)
                    bar.progress(done / len(new), text=f"{done}/{len(new)}")
            elif "doc_id" in res:
                st.success(stored_line(document(str(settings.db), res["doc_id"]), backend, res))
            elif not res.get("password"):
                st.error(res["error"])
            if res.get("password"):
                st.warning(q("password_for", name=f.name) + f" — {res['error']}")
                pw = st.text_input(q("password_for", name=f.name), type="password",
                                   key=f"pw_{f.file_id}", label_visibility="collapsed")
                if st.button(q("open"), key=f"open_{f.file_id}") and pw:
                    results[f.file_id] = ingest(store, f, backend, sid, password=pw)
                    st.rerun()
        if new:  # read (or refused): the panel's title, drawn before, must count them now
            st.rerun()
        doc_ids = store.session_documents(sid) if sid else []
        earlier = {d["id"]: d for d in store.list_documents() if d["id"] not in doc_ids}
        if earlier:
            picked = st.multiselect(q("earlier"), list(earlier), key="earlier",
                                    format_func=lambda i: f"{earlier[i]['name']} "
                                    f"({earlier[i]['pages']} p., {earlier[i]['tokens']:,} tok)")
            if st.button(q("attach"), disabled=not picked):
                sid = sid or store.create_session()
                for doc_id in picked:
                    store.attach(sid, doc_id)
                go(sid)
                st.rerun()
        docs = [document(str(settings.db), i) for i in doc_ids]
        for d in docs:
            c1, c2 = st.columns([6, 1])
            c1.caption(describe(d, backend))
            c2.button(q("remove"), key=f"rm_{d.id}", on_click=detach, args=(sid, d.id))
            summary_ui.document_summary(store, d, backend, settings, sid)  # Summarize, summary

    return sid, docs


def main() -> None:
    st.session_state.setdefault("client", uuid.uuid4().hex)
    store = SessionStore.open(settings.db)
    running = generations(str(settings.db))
    sid = st.query_params.get("session")
    if sid and store.session(sid) is None:
        st.toast(q("missing_session"))
        go(None)
        sid = None
    question = st.chat_input(q("ask"))
    with st.spinner(q("loading_model")):
        backend = load_backend(settings.backend, tuple(settings.backend_options().items()))
    warm_words()
    global REMOTE
    REMOTE = str(getattr(backend, "device", "")).startswith("http")
    preset, overrides = chosen_preset()
    ttft_target = float(st.session_state.get("ttft_target", settings.ttft_target))
    reading = st.session_state.get("reading", "budget")
    docs = [document(str(settings.db), i) for i in store.session_documents(sid)] if sid else []
    notice = None
    if question:  # start at once: the page is drawn while the backend reads the prompt
        if not docs:
            notice = q("attach_first")
        elif running.get(sid) is not None:
            notice = q("busy")
        else:
            turns = store.turns(sid)
            history = chat.history_messages(turns)
            store.add_turn(sid, "user", question)
            turn_id = store.add_turn(sid, "assistant", "", status="streaming")
            g = chat.Generation(sid, turn_id, question, owner=st.session_state["client"])
            g.submitted_at = ASKED_AT
            if reading == "next":  # for this one question only
                st.session_state["reading"] = "budget"
            running.start(g, chat.answer_factory(docs, question, chat.TimedBackend(backend, g),
                                                 history, preset, overrides, str(settings.db),
                                                 ASKED_AT, settings.history_turns,
                                                 ttft_target=ttft_target,
                                                 whole_window=reading != "budget",
                                                 previous_sections=chat.previous_sections(turns)),
                          lambda: SessionStore.open(settings.db),
                          sources=chat.source_finder(docs))

    with st.sidebar:
        st.selectbox(q("language"), list(LANGUAGES), format_func=LANGUAGES.get, key="lang",
                     index=list(LANGUAGES).index(settings.language)
                     if settings.language in LANGUAGES else 0)
        st.button(q("new_session"), on_click=go, args=(None,), icon=":material/add:",
                  use_container_width=True)
        sessions_box = st.container()  # filled last: an upload may start a session
        st.divider()
        preset_sidebar(preset)
        reading_sidebar()
        st.divider()
        st.caption(q("backend") + ": " + q("backend_info", name=backend.name, model=backend.model,
                                            window=backend.context_window, device=backend.device))

    st.title(q("title"))
    sid, docs = documents_panel(store, sid, backend)
    if notice:
        st.warning(notice)
    with sessions_box:
        export_slot = sessions_sidebar(store, sid, running)
    if not sid:
        st.info(q("no_documents"))
        return
    live = running.get(sid)
    if docs and live is None and not question:
        max_new = int(qa.resolve_preset(preset, overrides).generation["max_new_tokens"])
        budget = qa.choose_budget(backend, max_new, ttft_target, reading != "budget")
        warm(backend, sid, docs, budget.context_window, max_new)
    for turn in store.turns(sid):
        with st.chat_message(turn.role):
            if turn.role == "user":
                st.markdown(safe_markdown(turn.content))
            elif live is not None and live.turn_id == turn.id:
                if live.owner == st.session_state["client"]:
                    show_live(live, docs)
                    if export_slot is not None:  # the export holds the answer just finished
                        export_button(export_slot, sid, "export_after")
                else:
                    follow_elsewhere(sid, turn.id)
            else:
                show_answer(turn.content, turn.status, turn.metrics, docs)


run_page(main, logger, partial(q, "generic_error"))
