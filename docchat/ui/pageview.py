"""The page view: a page link (in an answer or its evidence) opens the page in a dialog, the
PDF page as an image with the supporting sentence highlighted at its characters' boxes, or a
text document's passage in its context. Rendering is docchat.library.pages'."""
from __future__ import annotations

import html
import json
import logging

import streamlit as st

from docchat.answer.session import PageTarget, page_target, statement_target
from docchat.library import pages
from docchat.ui.i18n import q

logger = logging.getLogger(__name__)


@st.cache_data(max_entries=16, show_spinner=False)
def rendered(path: str, number: int, passage: str, page_text: str, ocr: bool,
             language: str | None):
    """A page image with the passage highlighted (cached: a page is opened again and again
    while a conversation goes on; an OCR page is read again for its word boxes)."""
    return pages.render(path, number, passage, page_text=page_text, ocr=ocr,
                        language=language)


def open_view(turns: list, docs: list, uploads_dir, clicked: str | None = None,
              live=None) -> None:
    """Open the page a page link names: ``clicked`` (a click in this tab, through
    docchat.ui.links) or a ?view= link followed (then the link is dropped, so the next rerun
    does not open it again). ``live``: the answer being written (its marks are links too)."""
    view = clicked or st.query_params.get("view")
    if "view" in st.query_params:
        st.query_params.pop("view", None)
    if not view:
        return
    streaming = {} if live is None or live.done else {
        live.turn_id: {"checks": live.live_check, "evidence": live.evidence}}
    target = page_target(turns, docs, view, live=streaming)
    if target is None:
        st.toast(q("pv_missing"))
        return
    show_dialog(target, uploads_dir)


def open_statement(checks: dict | None, docs: list, uploads_dir, view: str | None) -> None:
    """Open the page of statement "s<k>" of a check (a summary's) in the dialog."""
    if not view or not checks or not view.startswith("s") or not view[1:].isdigit():
        return
    statements = checks.get("statements") or []
    k = int(view[1:])
    target = statement_target(statements[k], docs) if k < len(statements) else None
    if target is None:
        st.toast(q("pv_missing"))
        return
    show_dialog(target, uploads_dir)


def show_dialog(target: PageTarget, uploads_dir) -> None:
    page = target.document.page(target.page)
    title = q("pv_title", doc=target.document.name, page=page.label or page.number)
    st.dialog(title, width="large")(show_page)(target, uploads_dir)


def show_page(target: PageTarget, uploads_dir) -> None:
    """The dialog's body: the page image where there is a PDF to render, and the passage
    in the page's text."""
    doc, page = target.document, target.document.page(target.page)
    if doc.kind == "pdf":
        path = pages.document_file(doc, uploads_dir)
        image = None
        if path is not None:
            try:
                image = rendered(str(path), page.number, target.passage, page.text, page.ocr,
                                 doc.language)
            except Exception:  # an encrypted or damaged file: the text view still works
                logger.exception("rendering %s p. %s failed", doc.name, page.number)
        if image is None:
            st.caption(q("pv_no_file"))
        else:
            note = {"text": "pv_exact", "ocr": "pv_ocr", "band": "pv_approx"}.get(
                image.method, "pv_not_on_page")
            st.caption(q(note))
            if image.focus_png is not None:  # the highlight in view first, then the page
                st.image(image.focus_png, use_container_width=True)
                with st.expander(q("pv_whole")):
                    st.image(image.png, use_container_width=True)
            else:
                st.image(image.png, use_container_width=True)
            # Where the highlight is, for anyone (and the browser test) to check.
            focus = ",".join(map(str, image.focus or (0, 0, image.width, image.height)))
            st.markdown(f'<div class="dc-highlight" data-page="{page.number}" '
                        f'data-size="{image.width},{image.height}" data-focus="{focus}" '
                        f'data-exact="{str(image.exact).lower()}" '
                        f'data-boxes="{json.dumps(image.boxes)}"></div>', unsafe_allow_html=True)
    shown = pages.in_context(page.text, target.passage, target.span)
    st.markdown(f"**{q('pv_text')}**")
    st.markdown(f'<div class="dc-context" style="white-space:pre-wrap">'
                f'{html.escape(shown.before)}<mark class="dc-passage">{html.escape(shown.text)}'
                f'</mark>{html.escape(shown.after)}</div>', unsafe_allow_html=True)
