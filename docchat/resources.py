"""Resources every page of the app shares, cached once per server process.

One definition for all pages: Streamlit keys st.cache_resource by the function's module,
name and source, so a copy in each page could drift and load a second model with its own
queue (then chat answers and summary steps would no longer take turns).
"""
from __future__ import annotations

import streamlit as st

from docchat.backends import Backend, get_backend


@st.cache_resource(show_spinner=False)
def load_backend(name: str, options: tuple) -> Backend:
    """The backend, loaded once per process and shared by every session and page."""
    return get_backend(name, **dict(options))
