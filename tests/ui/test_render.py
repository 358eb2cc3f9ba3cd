"""Safe Markdown: raw HTML, LaTeX and directives show as text; code stays literal."""
from __future__ import annotations

from docchat.ui.render import CURSOR, escape_text, safe_markdown, streaming_markdown


def test_script_and_img_tags_are_escaped():
    out = safe_markdown('Hi <script>alert(1)</script> and <img src=x onerror="alert(2)">')
    assert "<" not in out and ">" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "&lt;img src=x onerror=\"alert(2)\"&gt;" in out


def test_comparison_text_is_kept_not_swallowed_as_a_tag():
    assert safe_markdown("if a<b and c>d") == "if a&lt;b and c&gt;d"


def test_ampersand_dollar_and_directives():
    assert escape_text("AT&T costs $5 and $10") == "AT&amp;T costs \\$5 and \\$10"
    assert safe_markdown(":red[alarm] at 10:30") == "\\:red[alarm] at 10:30"
    assert safe_markdown("an icon :material/home:") == "an icon \\:material/home:"


def test_inline_code_is_left_alone():
    out = safe_markdown("use `a<b && $x` then <b>")
    assert out == "use `a<b && $x` then &lt;b&gt;"


def test_inline_code_with_double_backticks_and_unmatched_backtick():
    assert safe_markdown("``x ` <y>`` and ` <z>") == "``x ` <y>`` and ` &lt;z&gt;"


def test_fenced_code_is_left_alone_including_unclosed_fence():
    text = "Run:\n```html\n<div>$x & y</div>\n```\nthen <b>\n~~~\n<i>still code"
    out = safe_markdown(text).split("\n")
    assert out[2] == "<div>$x & y</div>"
    assert out[4] == "then &lt;b&gt;"
    assert out[6] == "<i>still code"


def test_indented_code_block_after_blank_line_is_literal():
    text = "Example:\n\n    <tag> & $v\n\nAfter <x>"
    out = safe_markdown(text).split("\n")
    assert out[2] == "    <tag> & $v"
    assert out[4] == "After &lt;x&gt;"


def test_indented_continuation_of_a_paragraph_is_escaped():
    assert safe_markdown("para\n    <tag>").split("\n")[1] == "    &lt;tag&gt;"


def test_streaming_markdown_ends_with_cursor():
    assert streaming_markdown("") == CURSOR
    assert streaming_markdown("Hello <x>") == f"Hello &lt;x&gt; {CURSOR}"
