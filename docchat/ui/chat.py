"""The chat page's answer box: a saved answer with its status, metrics, sources and
evidence; an answer this tab asked for, streamed live; one asked elsewhere, followed."""
from __future__ import annotations

import time

import streamlit as st

from docchat.answer import chat
from docchat.context import citations
from docchat.ui import marks
from docchat.ui.i18n import language, metrics_line, progress_fraction, progress_line, q
from docchat.ui.render import (
    CURSOR,
    escape_text,
    evidence_markdown,
    safe_markdown,
    streaming_markdown,
)
from docchat.ui.resources import generations


def show_answer(text: str, status: str, metrics: dict, docs: list, *, session_id: str = "",
                turn_id: int = 0, language_note: bool = False) -> None:
    """An assistant turn: its text with its statements marked and linked to their pages,
    status, notes, metrics, the count of statements found, the cited pages and evidence.
    An answer that only repeats our instruction, or the previous answer, is not shown as one:
    a note says so."""
    lang = language()
    if metrics.get("error"):
        st.error(metrics["error"])
    repeat = bool(text and metrics.get("repeats_previous"))
    echo = bool(text and metrics.get("echo")) or repeat
    check = marks.check_of(metrics) if text and not echo else None
    said = escape_text(" ".join(text.split())[:120])
    if repeat:
        st.warning(q("mk_repeat", echo=said), icon=":material/repeat:")
    elif echo:
        asked = metrics.get("question_language") or "zh"
        st.warning(q("mk_echo", lang=q(f"lang_{asked}"), echo=said), icon=":material/translate:")
    elif text or not metrics.get("error"):
        if check is not None:
            st.markdown(marks.answer_html(text, check, session_id=session_id, turn_id=turn_id,
                                          lang=lang), unsafe_allow_html=True)
        else:
            st.markdown(safe_markdown(text))
    if status == "stopped":
        st.caption(f":material/stop_circle: {q('stopped')}")
    elif status == "streaming":  # saved mid-answer and no longer being written
        st.caption(f":material/warning: {q('interrupted')}")
    marks.show_notes(metrics, lang, language_note and not echo)
    if metrics.get("model"):
        st.caption(metrics_line(metrics, lang))
    if check is not None:
        marks.show_summary(check, lang)
    show_sources(text, metrics, docs)
    if metrics.get("evidence"):  # what was on screen while the model read
        # Kept collapsed, unless the answer is not one to rely on: fewer than half of its
        # statements found, one contradicting the documents, no answer or another language.
        opened = marks.evidence_open(check) or echo or bool(metrics.get("language_mismatch"))
        with st.expander(q("evidence"), icon=":material/format_quote:", expanded=opened):
            link = None if not session_id else (
                lambda i, j: marks.view_link(session_id, f"t{turn_id}e{i}.{j}"))
            st.markdown(evidence_markdown(metrics["evidence"], link=link),
                        unsafe_allow_html=link is not None)


def show_sources(text: str, metrics: dict, docs: list) -> None:
    """The pages the answer cites, each in an expander with its text."""
    found = (citations.from_dicts(metrics["sources"]) if "sources" in metrics
             else citations.find_sources(text, docs))
    for s in found:
        page = next((d.page(s.page) for d in docs if d.id == s.doc_id), None)
        ocr = f" · {q('ocr_page')}" if page is not None and page.ocr else ""
        with st.expander(escape_text(f"{s.doc_name} · p. {s.label}{ocr}"),
                         icon=":material/description:"):
            st.markdown(safe_markdown(page.text) if page else q("page_missing"))


def live_text(g: chat.Generation, remote: bool = False) -> str:
    """The answer so far (its finished sentences marked as checked so far) or, before its
    first word, what the backend is doing: a line with a figure that moves at every poll
    (tokens read, or at least the seconds waited). HTML of ours around escaped text."""
    if g.text:
        check = marks.check_from(g.live_check) if g.live_check else None
        if check is None:
            return streaming_markdown(g.text)
        body = marks.answer_html(g.text, check, session_id=g.session_id, turn_id=g.turn_id,
                                 lang=language())
        return f"{body} {CURSOR}"
    elapsed = time.perf_counter() - g.submitted_at
    if g.ahead:
        return q("ahead", n=g.ahead) + f" ({elapsed:.1f} s)"
    if g.progress is None and g.evidence_at is not None and remote:
        return q("p_unknown") + f" ({elapsed:.1f} s)"
    return progress_line(g.progress, elapsed, language())


def live_count(g: chat.Generation) -> None:
    """The count of the statements checked so far, under the answer being written."""
    check = marks.check_from(g.live_check) if g.live_check and g.text else None
    if check is not None:
        marks.show_summary(check, language(), live=True)


def show_evidence(g: chat.Generation) -> None:
    """The packed sections' best sentences, shown as soon as packing is done."""
    with st.expander(q("evidence"), expanded=True, icon=":material/format_quote:"):
        if not g.evidence:
            st.markdown(q("evidence_none"))
            return
        st.markdown(evidence_markdown(g.evidence, link=lambda i, j: marks.view_link(
            g.session_id, f"t{g.turn_id}e{i}.{j}")), unsafe_allow_html=True)


def show_live(g: chat.Generation, docs: list, remote: bool = False,
              language_note: bool = False) -> None:
    """Stream an answer this page asked for: block until it ends; Stop cancels it. Its
    statements are marked as they are checked, sentence by sentence."""
    body, count, bar, found, stop = st.empty(), st.empty(), st.empty(), st.empty(), st.empty()
    stop.button(q("stop"), key=f"stop_{g.turn_id}", on_click=g.stop, icon=":material/stop_circle:")
    shown_evidence, bar_on, counted = False, False, None
    # Every poll sends a delta, so a Stop click interrupts at once.
    for _ in chat.follow(g):  # yields g itself whenever it changed
        if g.evidence_at is not None and not shown_evidence:
            with found.container():
                show_evidence(g)
            shown_evidence = True
        body.markdown(live_text(g, remote), unsafe_allow_html=True)
        if g.live_check is not counted:
            counted = g.live_check
            with count.container():
                live_count(g)
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
    count.empty()
    with body.container():
        show_answer(g.text, g.status, g.metrics, docs, session_id=g.session_id,
                    turn_id=g.turn_id, language_note=language_note)


@st.fragment(run_every=0.5)
def follow_elsewhere(db: str, session_id: str, turn_id: int, remote: bool = False) -> None:
    """An answer asked from another tab (or before a reload): refresh it twice a second."""
    g = generations(db).get(session_id)
    if g is None or g.done or g.turn_id != turn_id:
        st.rerun()
    st.caption(q("elsewhere"))
    st.markdown(live_text(g, remote), unsafe_allow_html=True)
    live_count(g)
    if not g.text and (fraction := progress_fraction(g.progress)) is not None:
        st.progress(fraction)
    if g.evidence_at is not None:
        show_evidence(g)
    st.button(q("stop"), key=f"stop_{turn_id}", on_click=g.stop, icon=":material/stop_circle:")


def show_conversation(turns: list, docs: list, *, db: str, live: chat.Generation | None,
                      client: str, remote: bool) -> bool:
    """The session's turns; returns True when this tab just streamed an answer to its end.
    The note that the model did not follow the question's language is shown once: under
    the first answer that did not."""
    noted = next((t.id for t in turns if (t.metrics or {}).get("language_mismatch")), None)
    streamed = False
    for turn in turns:
        with st.chat_message(turn.role):
            if turn.role == "user":
                st.markdown(safe_markdown(turn.content))
            elif live is not None and live.turn_id == turn.id:
                if live.owner == client:
                    show_live(live, docs, remote, language_note=noted is None)
                    streamed = True
                else:
                    follow_elsewhere(db, turn.session_id, turn.id, remote)
            else:
                show_answer(turn.content, turn.status, turn.metrics, docs,
                            session_id=turn.session_id, turn_id=turn.id,
                            language_note=turn.id == noted)
    return streamed
