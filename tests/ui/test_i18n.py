"""The interface language a browser session starts in."""
from __future__ import annotations

from docchat.config import Settings
from docchat.ui.i18n import pick_language


def test_the_browser_language_is_the_default_and_a_set_language_wins():
    assert Settings().language == "auto"
    assert pick_language("auto", "zh-CN") == "zh"
    assert pick_language("auto", "zh-TW") == "zh"
    assert pick_language("auto", "en-US") == "en"
    assert pick_language("auto", None) == "en"
    assert pick_language("en", "zh-CN") == "en"
    assert pick_language("zh", "en-GB") == "zh"
