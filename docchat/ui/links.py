"""Page links that open the page view in place: a click on a page link (an answer's, its
evidence's, a summary's) becomes a trigger value of a small custom component instead of a
navigation, so the browser tab keeps its session and nothing reloads. The link's href
(``?session=…&view=…``) still works when copied, opened in a new tab or followed without
JavaScript: the page then opens it from the query parameters (docchat.ui.pageview).
"""
from __future__ import annotations

import streamlit as st

# Runs in the page (components v2 use no iframe). One click listener for the document,
# installed once; each mount hands it the current trigger setter. A click with a modifier
# key (a new tab or window) is left to the browser.
_JS = """
export default function (component) {
  const { setTriggerValue, parentElement } = component;
  window.__docchatView = setTriggerValue;
  if (parentElement && parentElement.host) parentElement.host.style.display = "none";
  if (!window.__docchatViewHook) {
    window.__docchatViewHook = true;
    document.addEventListener("click", (e) => {
      if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey
          || e.altKey) return;
      const a = e.target && e.target.closest ? e.target.closest("a[data-view]") : null;
      const send = window.__docchatView;
      if (!a || !send) return;
      const view = new URL(a.getAttribute("href"), window.location.href)
        .searchParams.get("view");
      if (!view) return;
      e.preventDefault();
      window.__docchatViewsOpened = (window.__docchatViewsOpened || 0) + 1;
      send("view", view);
    }, true);
  }
  return () => {
    if (window.__docchatView === setTriggerValue) window.__docchatView = null;
  };
}
"""

_mount = st.components.v2.component("docchat_page_links", html="<span></span>", js=_JS)


def clicked_view(key: str = "docchat_page_links") -> str | None:
    """Mount the link listener; the view a page link named in the click that started this
    run (None in any other run)."""
    result = _mount(key=key, on_view_change=lambda: None)
    view = getattr(result, "view", None)
    return view if isinstance(view, str) and view else None
