"""The Compare view's widgets: pick two documents, the comparison (changes first, redlined
inline or side by side, unchanged folded), questions and summaries about the changes."""
from __future__ import annotations

import html
from typing import Sequence

import streamlit as st

from docchat.comparison import ask as compare_ask
from docchat.comparison.align import Comparison, Pair
from docchat.comparison.redline import DEL_STYLE, INS_STYLE, shortened, to_html
from docchat.library.store import SessionStore
from docchat.ui.i18n import language, translate
from docchat.ui.render import escape_text, safe_markdown

STRINGS: dict[str, dict[str, str]] = {
    "c_title": {"en": "Compare two versions", "zh": "比较两个版本"},
    "c_intro": {"en": "Choose two documents of this session: the sections are aligned (also "
                      "when renumbered or moved) and each change is redlined.",
                "zh": "选择本会话的两份文档：按章节对齐（重新编号或移动的章节也能对上），"
                      "并逐处标出修改。"},
    "c_need_two": {"en": "This session has fewer than two documents: add both versions on "
                         "the chat page, then come back.",
                   "zh": "本会话的文档少于两份：请先在聊天页添加两个版本，再回到这里。"},
    "c_no_session": {"en": "Open a session on the chat page first (add both versions there).",
                     "zh": "请先在聊天页打开一个会话（在那里添加两个版本）。"},
    "c_chat": {"en": "Chat page", "zh": "聊天页"},
    "c_old": {"en": "Old version", "zh": "旧版本"},
    "c_new": {"en": "New version", "zh": "新版本"},
    "c_go": {"en": "Compare", "zh": "比较"},
    "c_same_doc": {"en": "Choose two different documents.", "zh": "请选择两份不同的文档。"},
    "c_headline": {"en": "{changed} changed · {moved} moved · {added} added · {removed} "
                         "removed · {unchanged} unchanged ({aligned:.0%} aligned, {s:.2f} s)",
                   "zh": "修改 {changed} · 移动 {moved} · 新增 {added} · 删除 {removed} · "
                         "未变 {unchanged}（对齐 {aligned:.0%}，{s:.2f} 秒）"},
    "c_no_diff": {"en": "No differences: the two documents have the same sections and text.",
                  "zh": "没有差异：两份文档的章节和文字完全相同。"},
    "c_different": {"en": "These look like different documents: only {share:.0%} of their "
                          "text aligned. Choose two versions of one document.",
                    "zh": "这两份看起来是不同的文档：只有 {share:.0%} 的文字能对齐。"
                          "请选择同一文档的两个版本。"},
    "c_show_anyway": {"en": "Show the pairs anyway", "zh": "仍然显示各章节"},
    "c_view": {"en": "View", "zh": "显示方式"},
    "c_inline": {"en": "Inline redline", "zh": "行内修订"},
    "c_side": {"en": "Side by side", "zh": "并排"},
    "c_unchanged": {"en": "{n} unchanged sections", "zh": "{n} 个未变章节"},
    "c_pages": {"en": "old {old} · new {new}", "zh": "旧 {old} · 新 {new}"},
    "c_p": {"en": "p. {a}", "zh": "第 {a} 页"},
    "c_pp": {"en": "p. {a}-{b}", "zh": "第 {a}-{b} 页"},
    "c_absent": {"en": "–", "zh": "–"},
    "c_was": {"en": "Was: {h}", "zh": "原为：{h}"},
    "c_moved_same": {"en": "Moved; the text is the same.", "zh": "已移动，文字相同。"},
    "c_part": {"en": "The other version holds this text inside a longer section; the changes "
                     "are shown with that section.",
               "zh": "另一版本把这段文字放在一个更长的章节里；修改显示在那个章节中。"},
    "c_added_text": {"en": "New section:", "zh": "新增章节："},
    "c_removed_text": {"en": "Removed section:", "zh": "删除的章节："},
    "unchanged": {"en": "unchanged", "zh": "未变"}, "changed": {"en": "changed", "zh": "修改"},
    "moved": {"en": "moved", "zh": "移动"}, "added": {"en": "added", "zh": "新增"},
    "removed": {"en": "removed", "zh": "删除"},
    "c_ask": {"en": "Ask about the changes", "zh": "就修改提问"},
    "c_ask_btn": {"en": "Ask", "zh": "提问"},
    "c_summarise": {"en": "Summarise the changes", "zh": "总结修改"},
    "c_summary": {"en": "Summary of the changes", "zh": "修改总结"},
    "c_left_out": {"en": "{n} more changes were not summarised.",
                   "zh": "另有 {n} 处修改未总结。"},
    "c_checked": {"en": "{ok} of {n} statements found in the two versions",
                  "zh": "{n} 条陈述中有 {ok} 条在两个版本中找到依据"},
    "c_nothing": {"en": "Nothing changed: nothing to ask or summarise.",
                  "zh": "没有修改：无可提问或总结。"},
}
MARKS = {"supported": "✅", "partly": "🟡", "not_found": "❌", "exempt": "·"}


def q(key: str, **values) -> str:
    return translate(STRINGS, key, language(), **values)


def pages(side) -> str:
    if side is None:
        return q("c_absent")
    a, b = side.pages[0], side.pages[-1]
    return q("c_p", a=a) if a == b else q("c_pp", a=a, b=b)


def pick(docs: Sequence) -> tuple:
    """Two selectboxes (old, new) over the session's documents; the stored choice first."""
    ids = [d.id for d in docs]
    names = {d.id: d.name for d in docs}
    c1, c2 = st.columns(2)
    old = c1.selectbox(q("c_old"), ids, key="c_old", format_func=names.get)
    rest = [i for i in ids if i != old] + [old]
    new = c2.selectbox(q("c_new"), rest, key="c_new", format_func=names.get)
    return old, new


def headline(c: Comparison) -> None:
    st.caption(q("c_headline", **c.summary(), aligned=c.aligned, s=c.seconds))
    if c.verdict == "same":
        st.success(q("c_no_diff"))
    elif c.verdict == "different":
        st.warning(q("c_different", share=c.aligned))


def show(c: Comparison, old, new) -> None:
    """The comparison: changed pairs first, each openable, then the unchanged folded."""
    headline(c)
    if c.verdict == "different" and not st.toggle(q("c_show_anyway"), key="c_anyway"):
        return
    side = st.radio(q("c_view"), ["inline", "side"], key="c_view", horizontal=True,
                    format_func=lambda v: q("c_inline" if v == "inline" else "c_side"))
    for p in c.changed:
        label = f"{q(p.status)} · {p.heading} · {q('c_pages', old=pages(p.old), new=pages(p.new))}"
        with st.expander(escape_text(label)):  # opened one by one: a list to scan first
            pair_body(p, old, new, side == "side")
    unchanged = [p for p in c.pairs if p.status == "unchanged"]
    if unchanged:
        with st.expander(q("c_unchanged", n=len(unchanged))):
            st.markdown("\n".join(f"- {escape_text(p.heading) or '–'} · "
                                  f"{q('c_pages', old=pages(p.old), new=pages(p.new))}"
                                  for p in unchanged))


def pair_body(p: Pair, old, new, side_by_side: bool) -> None:
    if p.old and p.new and p.old.heading != p.new.heading:
        st.caption(escape_text(q("c_was", h=p.old.heading)))
    if not p.ops:
        if p.status == "moved":
            st.caption(q("c_moved_same"))
            return
        if p.old and p.new:  # one version holds it inside another section (merges.parts)
            st.caption(q("c_part"))
            return
        doc, s, key = (new, p.new, "c_added_text") if p.new else (old, p.old, "c_removed_text")
        st.caption(q(key))
        st.markdown(safe_markdown(compare_ask.clip(compare_ask.section_text(doc, s.index))))
        return
    ops = shortened(p.ops)
    if not side_by_side:
        st.markdown(f"<div class='redline'>{to_html(ops)}</div>", unsafe_allow_html=True)
        return
    left, right = st.columns(2)
    left.markdown(_side_html(ops, "-"), unsafe_allow_html=True)
    right.markdown(_side_html(ops, "+"), unsafe_allow_html=True)


def _side_html(ops, mark: str) -> str:
    style = DEL_STYLE if mark == "-" else INS_STYLE
    tag = "del" if mark == "-" else "ins"
    parts = []
    for o in ops:
        text = html.escape(o.text).replace("\n\n", "<br><br>")
        if o.op == "=":
            parts.append(text)
        elif o.op == mark:
            parts.append(f'<{tag} style="{style}">{text}</{tag}>')
    return " ".join(parts)


def save(store: SessionStore, sid: str, c: Comparison) -> None:
    store.put_comparison(sid, c.old_id, c.new_id, c.to_dict())


def ask_box(store: SessionStore, sid: str, c: Comparison, old, new, backend) -> None:
    """Earlier questions with their answers, then a box for a new one, streamed."""
    st.subheader(q("c_ask"))
    asked = c.extra.setdefault("questions", [])
    for item in asked:
        with st.chat_message("user"):
            st.markdown(safe_markdown(item["question"]))
        with st.chat_message("assistant"):
            st.markdown(safe_markdown(item["answer"]))
    with st.form("c_ask_form", clear_on_submit=True):
        question = st.text_input(q("c_ask"), key="c_question", label_visibility="collapsed")
        go = st.form_submit_button(q("c_ask_btn"))
    if go and question.strip():
        if not c.changed:
            st.info(q("c_nothing"))
            return
        with st.chat_message("user"):
            st.markdown(safe_markdown(question))
        messages = compare_ask.ask_messages(c, old, new, question, backend)
        with st.chat_message("assistant"):
            answer = st.write_stream(compare_ask.stream(backend, messages))
        asked.append({"question": question, "answer": answer if isinstance(answer, str)
                      else "".join(map(str, answer))})
        save(store, sid, c)


def summary_box(store: SessionStore, sid: str, c: Comparison, old, new, backend) -> None:
    """The stored summary of the changes, or a button that makes it (streamed)."""
    done = c.extra.get("change_summary")
    if done is None:
        if not st.button(q("c_summarise"), key="c_summarise", disabled=not c.changed):
            return
        live = st.empty()
        seen: dict[str, str] = {}

        def on_piece(key: str, piece: str) -> None:
            seen[key] = seen.get(key, "") + piece
            live.markdown(safe_markdown(seen[key]) + " ▌")

        done = compare_ask.summarise(c, old, new, backend, on_piece=on_piece)
        live.empty()
        c.extra["change_summary"] = done
        save(store, sid, c)
    st.subheader(q("c_summary"))
    checked(done["overall"], done.get("check"))
    for s in done["sections"]:
        st.markdown(f"**{escape_text(s['heading'])}** ({q(s['status'])})")
        checked(s["summary"], s.get("check"))
    if done.get("left_out"):
        st.caption(q("c_left_out", n=done["left_out"]))


def checked(text: str, check: dict | None) -> None:
    """A summary with each statement marked supported, partly or not found."""
    if not check or not check.get("statements"):
        st.markdown(safe_markdown(text))
        return
    marked = [f"{MARKS.get(s['status'], '')} {s['text']}" for s in check["statements"]]
    st.markdown(safe_markdown(" ".join(marked)))
    st.caption(q("c_checked", ok=check.get("supported", 0), n=check.get("total", 0)))
