"""Streamlit widgets for summaries: run progress, reading a summary with its page
references, and the chat page's per-document "Summarize" action. The logic lives in
docchat.summaries.jobs and docchat.summaries.batch; this module only draws and reads widgets."""
from __future__ import annotations

import logging
import re
from functools import partial
from pathlib import Path

import streamlit as st

from docchat.context import citations
from docchat.errors import DocchatError
from docchat.library import uploads
from docchat.library.store import SessionStore
from docchat.summaries.batch import StoredDocument, settings_key
from docchat.summaries.files import FolderRefused, folder_documents, run_folder, subfolders
from docchat.summaries.jobs import JobView, RunOptions, SummaryJob, SummaryJobs, run_concurrency
from docchat.summaries.summarize import output_language
from docchat.ui import marks
from docchat.ui.i18n import language
from docchat.ui.render import escape_text, safe_markdown
from docchat.ui.summary_i18n import duration, t

logger = logging.getLogger(__name__)

_ICONS = {"pending": ":material/schedule:", "running": ":material/progress_activity:",
          "done": ":material/check_circle:", "skipped": ":material/check_circle:",
          "failed": ":material/error:", "cancelled": ":material/cancel:"}


@st.cache_resource
def registry(db: str) -> SummaryJobs:
    """Summary runs in this process, shared by every page and tab."""
    return SummaryJobs()


@st.cache_resource(max_entries=32, show_spinner=False)
def stored_document(db: str, doc_id: int):
    """A stored document (documents never change once stored)."""
    return SessionStore.open(db).load_document(doc_id)


def q(key: str, **values) -> str:
    return t(key, language(), **values)


# --- a new run's documents ------------------------------------------------------------
def chosen(store: SessionStore, source: str, settings) -> tuple[list, list, str, bool] | None:
    """The documents picked for a new run: (items, refused, title, store_names), or None."""
    if source == "library":
        docs = {d["id"]: d for d in store.list_documents()}
        if not docs:
            st.info(q("s_no_library"))
            return None
        picked = st.multiselect(q("s_pick"), list(docs), key="s_pick",
                                format_func=lambda i: f"{docs[i]['name']} ({docs[i]['pages']} p.)")
        items = [(StoredDocument(i, docs[i]["name"]), docs[i]["name"]) for i in picked]
        return items, [], q("s_run_title_library", n=len(items)), True
    if source == "upload":
        files = st.file_uploader(q("upload"), accept_multiple_files=True, key="s_uploader")
        saved = st.session_state.setdefault("s_saved", {})
        items, refused = [], []
        for f in files or []:
            if f.file_id not in saved:
                try:  # saved now; read (and refused if broken) by the run, with the others
                    saved[f.file_id] = uploads.save_upload(f.name, f.getvalue(),
                                                           settings.uploads_dir,
                                                           settings.max_file_mb)
                except DocchatError as e:
                    saved[f.file_id] = e
            if isinstance(saved[f.file_id], Exception):
                refused.append((f.name, str(saved[f.file_id])))
            else:
                items.append((saved[f.file_id], f.name))
        return items, refused, q("s_run_title_library", n=len(items) + len(refused)), True
    root = settings.summaries_root
    st.text_input(q("s_folder_label", root=root), key="s_folder",
                  placeholder=q("s_folder_hint"))
    below = subfolders(root)
    if below:
        st.caption(" · ".join(escape_text(f) for f in below[:30]))
    relative = st.session_state.get("s_folder", "")
    try:
        files = folder_documents(root, relative)
    except FolderRefused as e:
        if relative or e.reason != "empty":
            st.error(q(f"s_folder_{e.reason}", path=escape_text(e.path), root=e.root))
        return None
    folder = Path(root).resolve() / relative
    items = [(p, str(p.resolve().relative_to(folder.resolve()))) for p in files]
    st.caption(f"{len(items)}: " + ", ".join(escape_text(n) for _, n in items[:20]))
    return items, [], relative.strip() or ".", False


def choice(widget, label: str, options: list[str], key: str, fmt, **kw) -> str:
    """A radio or selectbox whose labels follow the interface language: one widget per
    language (its labels never change under it), the choice carried across in state."""
    value = st.session_state.get(key, options[0])
    picked = widget(label, options, index=options.index(value) if value in options else 0,
                    key=f"{key}_{language()}", format_func=fmt, **kw)
    st.session_state[key] = picked
    return picked


# --- progress -----------------------------------------------------------------------
def item_line(item, lang: str) -> str:
    """One document of a run: its name, its state, its step or its place in the queue."""
    detail = item_detail(item, lang)
    return f"{escape_text(item.name)} — {t('st_' + item.status, lang)}" + \
        (f" · {detail}" if detail else "")


def item_detail(item, lang: str) -> str:
    """A running document's step (or place in the queue); a finished one's time."""
    if item.status == "running":
        if item.ahead:
            return t("s_ahead", lang, n=item.ahead)
        if item.steps:
            return t("s_step", lang, step=item.step, steps=item.steps,
                     label=escape_text(item.label))
        return t("s_first_step", lang)
    if item.status in ("done", "skipped") and item.seconds:
        return t("s_took", lang, v=duration(item.seconds))
    return ""


def show_progress(view: JobView, jobs: SummaryJobs, key: str) -> None:
    """A run's bar (documents done, ETA), each document's line and error, and Cancel."""
    lang = language()
    head = t("s_progress", lang, done=view.finished, total=view.total)
    if view.running:
        eta = (t("s_eta", lang, v=duration(view.eta_s)) if view.eta_s is not None
               else t("s_eta_unknown", lang))
        head += f" · {eta} · " + t("s_elapsed", lang, v=duration(view.elapsed_s))
    else:
        head += " · " + t(f"s_state_{view.state}", lang) + " · " + \
            t("s_took", lang, v=duration(view.elapsed_s))
    st.progress(view.fraction, text=head)
    if view.error:
        st.error(view.error)
    for item in view.items:
        if item.status == "failed" and item.error and item.error != view.error:
            st.error(escape_text(named(item.name, item.error)), icon=_ICONS["failed"])
        elif item.status == "cancelled" and not item.step:
            st.caption(f"{_ICONS['cancelled']} {escape_text(item.name)} — "
                       f"{t('s_cancelled_before', lang)}")
        else:
            st.caption(f"{_ICONS[item.status]} {item_line(item, lang)}")
    if view.running:
        job = jobs.get(view.id)
        st.button(q("s_cancel"), key=f"cancel_{key}_{view.id}", icon=":material/stop_circle:",
                  on_click=job.stop if job is not None else None)


def named(name: str, message: str) -> str:
    """A document's error, starting with its name (most messages do already)."""
    return message if message.startswith(name) else f"{name}: {message}"


# --- reading ------------------------------------------------------------------------
def show_summary(markdown: str, doc, key: str, nested: bool = False,
                 checks: dict | None = None) -> None:
    """A summary, rendered safely, then each page it cites, openable as chat sources are.
    With its stored checks, its statements are marked as the chat's answers are: page links
    (they open the page view), not found dimmed, contradictions struck through, the count.

    nested: drawn inside an expander or popover, where expanders may not go, so the
    cited pages are picked from a list instead (and the marks name pages, not links).
    """
    check = marks.check_from(checks) if checks and doc is not None else None
    if check is None:
        st.markdown(safe_markdown(markdown))
    else:
        head = summary_head(markdown)
        if head:
            st.markdown(safe_markdown(head))
        st.markdown(marks.answer_html(checks.get("body") or "", check, lang=language(),
                                      href=None if nested else statement_link),
                    unsafe_allow_html=True)
        marks.show_summary(check, language())
    if doc is None:
        return
    found = citations.find_sources(markdown, [doc])
    if nested and found:
        labels = [f"{s.doc_name} · p. {s.label}" for s in found]
        pick = st.selectbox(q("s_open_page"), range(len(found)), index=None,
                            key=f"page_{key}", format_func=lambda i: labels[i])
        if pick is not None:
            page = doc.page(found[pick].page)
            st.markdown(safe_markdown(page.text) if page else q("page_missing"))
        return
    for s in found:
        page = doc.page(s.page)
        with st.expander(escape_text(f"{s.doc_name} · p. {s.label}"),
                         icon=":material/description:"):
            st.markdown(safe_markdown(page.text) if page else q("page_missing"))


def statement_link(n: int) -> tuple[str, str]:
    """A summary statement's page link on the Summaries page: (URL, view id)."""
    return marks.view_link("", f"s{n}"), f"s{n}"


def summary_head(markdown: str) -> str:
    """A summary file's title and metadata line (what comes before the summary's text)."""
    parts = markdown.split("\n\n", 2)
    if len(parts) == 3 and parts[0].startswith("# ") and parts[1].startswith("_"):
        return f"{parts[0]}\n\n{parts[1]}"
    return ""


_INDEX_LINK = re.compile(r"\[((?:[^\]\\]|\\.)+)\]\([^)\s]+\.md\)")


def index_markdown(index: str) -> str:
    """index.md for the page: its relative links (to files, not pages) as plain names."""
    return safe_markdown(_INDEX_LINK.sub(lambda m: m.group(1), index))


# --- the chat page's documents panel -------------------------------------------------
def document_summary(store: SessionStore, doc, backend, settings, session_id: str | None) -> None:
    """Under one attached document: Summarize, its progress, and its stored summary."""
    db = str(settings.db)
    jobs = registry(db)
    job = jobs.for_document(doc.id)
    if job is not None and not job.done:
        follow_document(db, job.id, doc.id)
        return
    key = settings_key(backend, output_language(doc.language, "auto"), settings.max_new_tokens)
    stored = store.get_summary(doc.id, key)
    st.button(q("s_summarize"), key=f"summarize_{doc.id}", icon=":material/summarize:",
              on_click=start_document,
              args=(db, doc, backend, settings, session_id, language()))
    if (refused := st.session_state.pop(f"summary_error_{doc.id}", None)) is not None:
        st.error(escape_text(refused))
    elif job is not None and job.done:
        item = job.snapshot().items[0]
        if item.status == "failed" and item.error:
            st.error(escape_text(named(doc.name, item.error)))
    if stored is not None:
        with st.popover(q("s_summary_of", name=doc.name), icon=":material/article:",
                        use_container_width=True):
            show_summary(stored["markdown"], doc, key=f"chat_{doc.id}", nested=True,
                         checks=stored.get("checks"))


@st.fragment(run_every=1.0)
def follow_document(db: str, job_id: str, doc_id: int) -> None:
    """A document being summarised: its step, refreshed every second, with Stop."""
    job = registry(db).get(job_id)
    if job is None or job.done:
        st.rerun()  # the whole page: the summary and its turns appear
    view = job.snapshot()
    item = view.items[0]
    st.caption(f"{_ICONS['running']} {q('s_summarizing', name=escape_text(item.name))} "
               f"{item_detail(item, language())}")
    st.progress(view.fraction)
    st.button(q("s_stop"), key=f"stop_summary_{doc_id}", on_click=job.stop,
              icon=":material/stop_circle:")


def start_document(db: str, doc, backend, settings, session_id: str | None,
                   lang: str) -> SummaryJob | None:
    """Summarise one stored document; once it is ready, add it to the session's turns."""
    jobs = registry(db)
    options = RunOptions(max_new_tokens=settings.max_new_tokens, max_mb=settings.max_file_mb,
                         concurrency=run_concurrency(settings.max_concurrency))
    try:
        return jobs.start([(StoredDocument(doc.id, doc.name), doc.name)], backend,
                          partial(SessionStore.open, db),
                          run_folder(settings.summaries_dir, "document", str(doc.id)), options,
                          title=doc.name, kind="document", session_id=session_id,
                          on_end=partial(add_to_session, db, session_id, doc, lang))
    except DocchatError as e:  # a callback: the panel shows it in the run that follows
        st.session_state[f"summary_error_{doc.id}"] = str(e)
        return None


def add_to_session(db: str, session_id: str | None, doc, lang: str, job: SummaryJob) -> None:
    """The finished summary as a question and its answer, so questions can follow it."""
    item = job.snapshot().items[0]
    if not session_id or item.status not in ("done", "skipped") or not item.output:
        return
    store = SessionStore.open(db)
    if store.session(session_id) is None:
        return
    markdown = demote_headings(Path(item.output).read_text(encoding="utf-8"))
    sources = citations.to_dicts(citations.find_sources(markdown, [doc]))
    store.add_turn(session_id, "user", t("s_ask_turn", lang, name=doc.name))
    store.add_turn(session_id, "assistant", markdown,
                   metrics={"sources": sources, "summary": {"doc_id": doc.id,
                                                            "file": Path(item.output).name}})


_HEADING = re.compile(r"^(#{1,4}) ", re.M)


def demote_headings(markdown: str, by: int = 2) -> str:
    """Headings two levels down (# -> ###), so a summary in the chat reads as an answer."""
    return _HEADING.sub(lambda m: "#" * (len(m.group(1)) + by) + " ", markdown)
