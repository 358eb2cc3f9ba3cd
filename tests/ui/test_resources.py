"""The pages' shared edge (docchat.ui.resources.run_page): user errors shown as they are,
anything else logged and replaced by the generic message, Streamlit's control flow passed."""
from __future__ import annotations

import logging

import pytest

from docchat.errors import DocumentError
from docchat.ui import resources


@pytest.fixture
def shown(monkeypatch):
    out: list[str] = []
    monkeypatch.setattr(resources.st, "error", lambda text: out.append(str(text)))
    return out


def test_user_error_is_shown_as_it_is(shown):
    def main():
        raise DocumentError("scan.pdf has no text layer: turn on OCR in the settings.")
    resources.run_page(main, logging.getLogger("t"), lambda: "generic")
    assert shown == ["scan.pdf has no text layer: turn on OCR in the settings."]


def test_other_errors_are_logged_and_the_page_says_the_generic_message(shown, caplog):
    def main():
        raise KeyError("session_state")
    with caplog.at_level(logging.ERROR, logger="t"):
        resources.run_page(main, logging.getLogger("t"), lambda: "Something went wrong")
    assert shown == ["Something went wrong"]
    assert "KeyError" in caplog.text  # the traceback is in the server log, not on the page


def test_streamlit_control_flow_passes_through(shown):
    class Rerun(BaseException):  # st.rerun / st.stop raise BaseException subclasses
        pass

    def main():
        raise Rerun()
    with pytest.raises(Rerun):
        resources.run_page(main, logging.getLogger("t"), lambda: "generic")
    assert shown == []
