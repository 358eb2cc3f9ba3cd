"""Statement marks in an answer: escaped text, marks and links only where Markdown shows
them, the count line in both languages, and the export's lines."""
from __future__ import annotations

import re

from docchat.context.claims import Statement, of
from docchat.ui import marks


def st(text: str, answer: str, status: str, **kw) -> Statement:
    start = answer.index(text)
    return Statement(text, start, start + len(text), status, **kw)


def marked(answer: str, *statements: Statement) -> str:
    return marks.answer_html(answer, of(list(statements)), session_id="abc", turn_id=4,
                             lang="en")


def test_marks_wrap_the_escaped_text_and_link_the_page():
    answer = "Port <b>8731</b> is the default. Built on the Moon."
    out = marked(answer, st("Port <b>8731</b> is the default.", answer, "supported",
                            document="g.pdf", page=2, label="1"),
                 st("Built on the Moon.", answer, "not_found"))
    assert "<b>" not in out and "&lt;b&gt;8731&lt;/b&gt;" in out
    assert re.search(r'data-status="supported"[^>]*>Port &lt;b&gt;8731&lt;/b&gt; is the '
                     r'default\.</span> <sup class="dc-page" data-citation=""><a href="\?session'
                     r'=abc&amp;view=t4s0" target="_self" data-view="t4s0">p\. 1</a></sup>', out)
    assert 'data-status="not_found" data-n="1" title="Not found in the documents" ' \
           'style="opacity:0.5">Built on the Moon.</span>' in out


def test_list_markers_stay_outside_and_code_is_never_marked():
    answer = "Steps:\n\n- Run `frob install` now.\n\n```\nThe lid is blue.\n```\n"
    out = marked(answer, st("Run `frob install` now.", answer, "supported", document="g",
                            label="2"),
                 st("The lid is blue.", answer, "supported", document="g", label="2"))
    assert "\n- <span " in out  # still a list item
    assert "<span" not in out.split("```")[1]  # the code block shows as written
    assert out.count('class="dc-statement"') == 1


def test_a_fence_opened_in_a_list_item_and_closed_at_the_margin_keeps_later_prose_marked():
    """SmolLM2 opened a code block inside a list item ("2. ..." / "   ```bash") and closed it
    at the margin. Markdown ends the item (and its block) there and opens a new block at the
    closing fence, so the next item's statement showed as code with its <span> tags as text.
    Fence lines go to the margin: one block, and the prose after it is prose."""
    answer = ("1. Make the tree first.\n2. Use the tool:\n\n   ```bash\n    mkdir -p out\n```"
              "\n\n3. Then run the build again.\n")
    out = marked(answer, st("Then run the build again.", answer, "not_found"))
    lines = out.split("\n")
    fences = [k for k, line in enumerate(lines) if line.startswith("```")]
    assert len(fences) == 2 and lines[fences[0]] == "```bash"  # one block, at the margin
    assert "    mkdir -p out" in lines[fences[0]:fences[1]]  # its code as written
    after = "\n".join(lines[fences[1] + 1:])
    assert '3. <span class="dc-statement" data-status="not_found"' in after
    assert not any(line.strip().startswith("```") for line in lines[fences[1] + 1:])


def test_a_citation_nothing_supports_is_flagged_and_a_wrong_one_corrected():
    answer = "It is 5 years [p. 3]. It is 7 years [p. 3]."
    out = marked(answer, st("It is 5 years [p. 3].", answer, "not_found", cited=["3"],
                            citation="wrong"),
                 st("It is 7 years [p. 3].", answer, "supported", document="g", label="2",
                    cited=["3"], citation="wrong"))
    assert 'data-citation="wrong" title="The cited page does not say this">⚠</sup>' in out
    assert "<s title=\"The model cited p. 3, which does not say this\">p. 3</s> → <a " in out


def test_count_line_legend_and_export():
    answer = "A is 1. B is 2. C is 3. Hello!"
    check = of([st("A is 1.", answer, "supported", document="g.pdf", label="iv"),
                st("B is 2.", answer, "partly", document="g.pdf", label="v"),
                st("C is 3.", answer, "not_found"), st("Hello!", answer, "exempt")])
    assert marks.summary_line(check, "en") == \
        "1 of 3 statements found in the documents (1 more in part)"
    assert marks.summary_line(check, "zh") == "3 句中有 1 句在文档中找到（另有 1 句部分找到）"
    assert marks.mostly_unfound(check) and not marks.mostly_unfound(None)
    assert marks.export_lines(check) == [
        "_1 of 3 statements found in the documents (1 more in part)._", "",
        "- found (g.pdf, p. iv): A is 1.", "- found in part (g.pdf, p. v): B is 2.",
        "- not found: C is 3.", ""]


def test_check_of_reads_the_saved_dict_and_ignores_turns_without_one():
    answer = "A is 1."
    saved = of([st("A is 1.", answer, "supported", document="g", label="1")]).to_dict()
    assert marks.check_of({"checks": saved}).supported == 1
    assert marks.check_of({}) is None and marks.check_of({"checks": {"statements": []}}) is None


CONFLICT = {"kind": "number", "document": "g.pdf", "page": 2, "label": "1",
            "span": [0, 24], "text": "The default port is 8731.", "says": "8731"}


def with_conflict(answer: str):
    """The check of an answer whose second statement contradicts its page, as saved (the
    checker's Statement may or may not have the conflict field: the dict has it)."""
    checked = of([st("The lid is blue.", answer, "supported", document="g.pdf", page=2,
                     label="1"),
                  st("The port is 9999.", answer, "not_found"),
                  st("It was built on the Moon.", answer, "not_found")]).to_dict()
    checked["statements"][1]["conflict"] = dict(CONFLICT)
    return marks.check_from(checked)


def test_a_contradiction_is_struck_through_linked_to_its_page_and_counted():
    answer = "The lid is blue. The port is 9999. It was built on the Moon."
    check = with_conflict(answer)
    assert marks.conflict(check.statements[1]) == CONFLICT
    assert marks.conflict(check.statements[2]) is None and marks.conflicts(check) == 1
    out = marks.answer_html(answer, check, session_id="abc", turn_id=4, lang="en")
    span = re.search(r'<span class="dc-statement dc-conflict" data-status="not_found" '
                     r'data-n="1" data-conflict="number" title="([^"]*)" style="([^"]*)">'
                     r'The port is 9999\.</span>', out)
    assert span, out
    assert span.group(1) == ("Contradicts the document (p. 1): the document says "
                             "\N{LEFT DOUBLE QUOTATION MARK}8731\N{RIGHT DOUBLE QUOTATION MARK}")
    assert "line-through" in span.group(2)
    # Its link opens the page that says otherwise; a plain "not found" stays dimmed.
    assert re.search(r'</span> <sup class="dc-page dc-conflict-page" data-citation="conflict">'
                     r'<a href="\?session=abc&amp;view=t4s1" target="_self" data-view="t4s1"'
                     r'[^>]*>✗ p\. 1</a></sup>', out)
    assert 'data-status="not_found" data-n="2" title="Not found in the documents" ' \
           'style="opacity:0.5">' in out
    assert marks.summary_line(check, "en") == \
        "1 of 3 statements found in the documents; 1 contradicts them"
    assert marks.summary_line(check, "zh") == "3 句中有 1 句在文档中找到；1 句与文档矛盾"
    assert "red, struck through: contradicts the document" in marks.legend(check, "en")
    assert "contradicts" not in marks.legend(marks.check_from(of([st(
        "A.", "A.", "not_found")]).to_dict()), "en")
    # The evidence stays open: the passage that says otherwise is in it.
    assert marks.evidence_open(check) and marks.mostly_unfound(check)
    assert marks.export_lines(check)[3] == ("- contradicts the document (g.pdf, p. 1: it says "
                                            "\u201c8731\u201d): The port is 9999.")


def test_one_contradiction_keeps_the_evidence_open_even_when_most_are_found():
    answer = "The lid is blue. The box is red. The port is 9999."
    checked = of([st("The lid is blue.", answer, "supported", document="g.pdf", label="1"),
                  st("The box is red.", answer, "supported", document="g.pdf", label="1"),
                  st("The port is 9999.", answer, "not_found")]).to_dict()
    checked["statements"][2]["conflict"] = dict(CONFLICT)
    check = marks.check_from(checked)
    assert not marks.mostly_unfound(check) and marks.evidence_open(check)


def test_a_page_link_can_be_plain_text_or_point_elsewhere():
    answer = "The lid is blue."
    check = of([st("The lid is blue.", answer, "supported", document="g.pdf", label="1")])
    assert marks.answer_html(answer, check, lang="en", href=None).endswith(
        '<sup class="dc-page" data-citation="">p. 1</sup>')
    out = marks.answer_html(answer, check, lang="en", href=lambda n: (f"?view=s{n}", f"s{n}"))
    assert '<a href="?view=s0" target="_self" data-view="s0">p. 1</a>' in out
