"""Tables as Markdown, code indentation and two-column papers, on real pages.

The files and their sources: tests/data/README.md.
"""

from __future__ import annotations

from pathlib import Path

import ingest

DATA = Path(__file__).parent.parent / "data"


def test_table_becomes_markdown_and_one_block():
    doc = ingest.load_document(DATA / "table-deb-ref.pdf")
    text = doc.pages[0].text
    assert "| package | popcon | size | POSIX shell | description |\n|---|---|---|---|---|" in text
    # a cell wrapped over two lines stays in its row
    assert (
        "| bash | V:821, I:999 | 7163 | Yes | "
        "Bash: the GNU Bourne Again SHell (de facto standard) |"
        in text
    )
    assert (
        "| sash | V:0, I:6 | 1158 | Yes | "
        "Stand-alone shell with builtin commands (Not meant for standard"
        in text
    )
    assert "| file type | reaction to enter key |" in text
    tables = [b for s in doc.sections for b in s.blocks if b.kind == "table"]
    shells = next(b for b in tables if "| package |" in b.text)
    assert (
        "| posh |" in shells.text and "| bash-completion |" in shells.text
    )  # the whole table, one block
    assert "Debian Reference" not in shells.text and "Table 1.13" not in shells.text
    prose = "\n".join(b.text for s in doc.sections for b in s.blocks if b.kind == "prose")
    assert "Since the login shell may be used" in prose and "|" not in prose


def test_code_keeps_its_indentation():
    doc = ingest.load_document(DATA / "code-policy.pdf")
    lines = doc.pages[0].text.splitlines()
    assert "ifneq (,$(filter noopt,$(DEB_BUILD_OPTIONS)))" in lines
    assert "    CFLAGS += -O0" in lines and "    INSTALL_PROGRAM += -s" in lines
    assert "        # Code to run the package test suite." in lines
    assert "endif" in lines  # not indented
    # prose around it is untouched
    assert any(line.startswith("The following makefile snippet") for line in lines)


def test_text_pages_without_tables_or_code_are_unchanged():
    from ingest.pdf import extract_pages

    raw = extract_pages(DATA / "headers.pdf")
    assert not any("|" in p for p in raw.pages)


def test_two_column_paper_reads_column_by_column():
    doc = ingest.load_document(DATA / "apssamp.pdf")
    assert len(doc.pages) == 7
    first = doc.pages[0].text
    # The left column is read whole before the right one, although "A. Second-level heading"
    # (right column) sits on the same row as "I. FIRST-LEVEL HEADING" (left column).
    assert "This sample document demonstrates proper use of\nREVTEX 4.2" in first
    assert first.index("as in the word “via” above.") < first.index(
        "A. Second-level heading: Formatting"
    )
    assert first.index("A. Second-level heading") < first.index("B. Citations")
    top = [s.title for s in doc.sections if s.level == 1]
    assert top[:4] == [
        "I. FIRST-LEVEL HEADING:",
        "II. MATH AND EQUATIONS",
        "III. CROSS-REFERENCING",
        "IV. FLOATS: FIGURES, TABLES, VIDEOS, ETC.",
    ]


def test_lists_and_sparse_columns_are_not_tables():
    from ingest.layout import _plausible

    assert _plausible([["bash", "7163"], ["dash", "191"], ["zsh", "2436"]])
    assert not _plausible([["", "• the first"], ["", "• the second"], ["", "• the third"]])
    assert not _plausible([["•", "the first"], ["•", "the second"], ["•", "the third"]])
    assert not _plausible([["a", ""], ["b", ""], ["c", "x"]])
