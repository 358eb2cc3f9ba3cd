"""The chat page's sidebar: language, sessions (rename, export, delete), the answer style
with each of its values, and how much context to read."""
from __future__ import annotations

from dataclasses import fields

import streamlit as st

from docchat.answer.pacing import MODES
from docchat.answer.presets import GENERATION_FIELDS, PRESETS
from docchat.answer.session import AskOptions
from docchat.config import Settings
from docchat.library.store import SessionStore
from docchat.ui import marks
from docchat.ui.i18n import LANGUAGES, language, q
from docchat.ui.render import escape_text

READING_MODES = ("budget", "next", "session")


def go(session_id: str | None) -> None:
    """Open a session (None: a new one, started by the first upload)."""
    st.session_state.pop("confirm_delete", None)
    if session_id:
        st.query_params["session"] = session_id
    else:
        st.query_params.pop("session", None)


def language_select() -> None:
    """The interface language (its first value: docchat.ui.i18n.init_language)."""
    st.selectbox(q("language"), list(LANGUAGES), format_func=LANGUAGES.get, key="lang")


def preset_values(name: str) -> dict:
    """Every adjustable value of a preset: its pacing fields, then its generation values."""
    preset = PRESETS[name]
    return {**{f.name: getattr(preset.pacing, f.name) for f in fields(preset.pacing)},
            **{k: preset.generation[k] for k in GENERATION_FIELDS}}


def chosen_preset(default: str) -> tuple[str, dict]:
    """The preset and the values changed in the sidebar (read before the sidebar is drawn)."""
    state = st.session_state
    name = state.get("preset", default)
    name = name if name in PRESETS else "quick"
    return name, {k: state[f"ov_{name}_{k}"] for k, v in preset_values(name).items()
                  if f"ov_{name}_{k}" in state and state[f"ov_{name}_{k}"] != v}


def ask_options(settings: Settings) -> AskOptions:
    """How the next question is answered, as the sidebar's widgets say (read before the
    sidebar is drawn: a question starts at once)."""
    preset, overrides = chosen_preset(settings.preset)
    return AskOptions(preset=preset, overrides=overrides,
                      ttft_target=float(st.session_state.get("ttft_target",
                                                             settings.ttft_target)),
                      whole_window=st.session_state.get("reading", "budget") != "budget",
                      history_turns=settings.history_turns)


def preset_sidebar(name: str) -> None:
    """The preset picker and a widget for each of its values."""
    lang = language()
    st.selectbox(q("preset"), list(PRESETS), key="preset", index=list(PRESETS).index(name),
                 format_func=lambda n: PRESETS[n].label(lang))
    with st.expander(q("adjust")):
        for key, default in preset_values(name).items():
            wkey = f"ov_{name}_{key}"
            if key == "mode":
                st.selectbox(key, MODES, key=wkey, index=MODES.index(default))
            elif isinstance(default, bool):
                st.checkbox(key, value=default, key=wkey)
            elif isinstance(default, int) or (key == "seed" and default is None):
                st.number_input(key, value=default, step=1, key=wkey, min_value=0)
            else:
                st.number_input(key, value=float(default), step=0.01, key=wkey, min_value=0.0,
                                format="%.3f")


def reading_sidebar(settings: Settings) -> None:
    """The first-token target and the choice to read the whole window instead."""
    st.number_input(q("ttft_target"), min_value=0.0, max_value=600.0, step=5.0,
                    value=float(settings.ttft_target), key="ttft_target", help=q("ttft_help"))
    st.radio(q("reading_mode"), READING_MODES, key="reading",
             format_func=lambda m: q(f"rm_{m}"))


def one_question_only() -> None:
    """"Whole window, next question only" was used by the question just asked."""
    if st.session_state.get("reading") == "next":
        st.session_state["reading"] = "budget"


def sessions_sidebar(store: SessionStore, sid: str | None, running, db: str):
    """Sessions newest first; rename, export and delete (with confirmation) the current one.
    Returns the export button's place (None without a session)."""
    st.subheader(q("sessions"))
    for s in store.list_sessions():
        st.button(escape_text(s["title"]) or q("untitled"), key=f"s_{s['id']}", on_click=go,
                  args=(s["id"],), use_container_width=True,
                  type="primary" if s["id"] == sid else "secondary")
    if not sid:
        return None
    st.page_link("pages/2_Compare.py", label=q("compare_link"), query_params={"session": sid},
                 icon=":material/compare:")
    with st.expander(q("this_session")):
        title = st.text_input(q("rename"), value=store.session(sid)["title"], key=f"title_{sid}")
        if st.button(q("save_title")) and title.strip():
            store.rename_session(sid, title)
            st.rerun()
        slot = st.empty()
        export_button(slot, db, sid, "export")
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


def export_button(slot, db: str, sid: str, key: str) -> None:
    """The session as Markdown, made in this run. Not a callable made on click: Streamlit
    forgets a callable's id once the tab reruns, and a click that still holds it (pressed
    while the page is drawn again) downloads nothing. The same text is the same file, so the
    link a tab holds stays good across reruns."""
    slot.download_button(q("export"), export(db, sid), key=key,
                         file_name=f"docchat-{sid}.md", mime="text/markdown",
                         on_click="ignore", icon=":material/download:")


def export(db: str, session_id: str) -> str:
    """The session's Markdown, each answer followed by its statements' checks."""
    return SessionStore.open(db).export_markdown(
        session_id, notes=lambda turn: marks.export_lines(marks.check_of(turn.metrics)))
