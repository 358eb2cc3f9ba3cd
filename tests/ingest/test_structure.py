from __future__ import annotations

from dataclasses import dataclass

from ingest.document import Page
from ingest.structure import MAX_BLOCK_CHARS, _marked_up, build_sections


@dataclass
class Entry:
    title: str
    level: int
    page: int


def pages(*texts: str) -> list[Page]:
    return [Page(number=i, text=t) for i, t in enumerate(texts, start=1)]


def test_markdown_headings_fences_and_tables():
    md = ("Intro line.\n\n# Title\n\nSome prose here.\n\n## Code\n\n"
          "```python\ndef f():\n\n    return 1\n```\n\n"
          "## Table\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n### Deep\n\n- one\n- two\n")
    secs = build_sections(pages(md), markdown=True)
    assert [s.heading_path for s in secs] == [(), ("Title",), ("Title", "Code"), ("Title", "Table"),
                                             ("Title", "Table", "Deep")]
    assert secs[0].level == 0 and secs[1].level == 1 and secs[4].level == 3
    code = secs[2].blocks
    assert (len(code) == 1 and code[0].kind == "code" and "return 1" in code[0].text
            and secs[2].kind == "code")
    assert secs[3].blocks[0].kind == "table" and secs[3].blocks[0].text.count("\n") == 3
    assert secs[4].kind == "list"


def test_numbered_headings_and_false_ones():
    text = ("1 Introduction\nThis manual has rules.\n1.1 Scope\nIt covers packages.\n"
            "1. If you are not the maintainer of the work, you may still distribute it.\n"
            "2022 was a good year for releases\n"
            "1.2 Versions\nSee below.\n2 Binary packages\nMore text.\n7 Unrelated numbered line\n"
            "2.1 Version\nLast.")
    secs = build_sections(pages(text))
    assert [s.title for s in secs] == ["1 Introduction", "1.1 Scope", "1.2 Versions",
                                       "2 Binary packages", "2.1 Version"]
    assert secs[1].heading_path == ("1 Introduction", "1.1 Scope") and secs[1].level == 2
    assert "7 Unrelated numbered line" in secs[3].text


def test_toc_lines_are_not_headings():
    secs = build_sections(pages("Contents\n1 About this manual 3\n1.1 Scope . . . . . . . 3\n"
                                "2 Archive 9"))
    assert [s.level for s in secs] == [0]


def test_chapter_and_appendix():
    secs = build_sections(pages("Chapter 3\nBinary packages\nText.\n3.1 Names\nMore.\n"
                                "Appendix A Extra\nEnd."))
    assert [s.title for s in secs] == ["Chapter 3 Binary packages", "3.1 Names", "Appendix A Extra"]
    assert [s.level for s in secs] == [1, 2, 1]


def test_chinese_headings():
    text = ("第一章 总则\n本章说明。\n一、适用范围\n内容。\n"
            "（一）软件包\n细节。\n第二章 细则\n更多。")
    secs = build_sections(pages(text))
    assert [s.heading_path for s in secs] == [
        ("第一章 总则",), ("第一章 总则", "一、适用范围"),
        ("第一章 总则", "一、适用范围", "（一）软件包"), ("第二章 细则",),
    ]


def test_outline_maps_titles_to_lines_and_pages():
    p = pages("Front matter\n",
              "CHAPTER\nONE\nABOUT THIS MANUAL\nIntro text.\n1.1 Scope\nScope text.",
              "More scope text.\nLast words.")
    outline = [Entry("About this manual", 1, 2), Entry("Scope", 2, 2), Entry("Missing title", 1, 3)]
    secs = build_sections(p, outline=outline)
    assert [s.heading_path for s in secs] == [(), ("About this manual",),
                                             ("About this manual", "1.1 Scope"),
                                             ("Missing title",)]
    assert secs[1].text == "Intro text."
    assert secs[2].page_start == 2 and secs[2].page_end == 2 and secs[2].text == "Scope text."
    assert secs[3].page_start == 3 and "More scope text." in secs[3].text
    assert "CHAPTER" not in secs[0].text


def test_outline_title_is_not_taken_from_a_line_of_code_that_ends_with_it():
    # tcolorbox.pdf: the bookmark "Library `poster'" whose chapter page prints "21 Library" /
    # "LIBposter" (no line ends with the title) and, below, the code line that loads it: the
    # section is named by the bookmark, not by the code.
    p = pages("Front matter\n",
              "21 Library\nLIBposter\nThe main purpose of this library is posters.\n"
              "\\tcbuselibrary{poster}\nMore about posters.\n21.1 Overview\nOverview text.")
    outline = [Entry("Library `poster'", 1, 2), Entry("Overview", 2, 2)]
    secs = build_sections(p, outline=outline)
    assert [s.heading_path[-1:] for s in secs] == [(), ("Library `poster'",),
                                                  ("21.1 Overview",)]
    assert secs[1].text == "More about posters."
    # The same for "\\PoemTitle{Fleas}" and "key=dot"; "4.20 \\tcbox Specials" keeps its
    # line (the bookmark has the backslash too).
    p = pages("Intro\n", "\\PoemTitle{Fleas}\nAdam had 'em.\nkey=dot\nA dot.\n"
              "4.20 \\tcbox Specials\nSpecial keys.")
    secs = build_sections(p, outline=[Entry("Fleas", 1, 2), Entry("dot", 1, 2),
                                      Entry("\\tcbox Specials", 1, 2)])
    assert [s.title for s in secs[1:]] == ["Fleas", "dot", "4.20 \\tcbox Specials"]
    assert [s.text for s in secs[1:]] == ["Adam had 'em.", "A dot.", "Special keys."]
    # A command named in a heading as prose (exam.cls's manual: the bookmark "The
    # documentclass command" over the printed "3 The \\documentclass command") is the
    # heading as printed, number and backslash kept; a command the title does not name
    # ("\\section Fleas") is still markup.
    p = pages("Intro\n", "3 The \\documentclass command\nTo use the class.\n"
              "6.2.1 Using \\uplevel and \\fullwidth\nTwo commands.\n\\section Fleas\nItchy.")
    secs = build_sections(p, outline=[Entry("The documentclass command", 1, 2),
                                      Entry("Using uplevel and fullwidth", 2, 2),
                                      Entry("Fleas", 2, 2)])
    assert [s.title for s in secs[1:]] == ["3 The \\documentclass command",
                                           "6.2.1 Using \\uplevel and \\fullwidth", "Fleas"]
    assert [s.text for s in secs[1:]] == ["To use the class.", "Two commands.", "Itchy."]
    # A heading after a number still wins over a later line with the title alone.
    p = pages("Intro\n", "1.1 Scope\nScope text.\nScope\nA table cell above.")
    secs = build_sections(p, outline=[Entry("Scope", 1, 2)])
    assert secs[1].title == "1.1 Scope" and secs[1].text.startswith("Scope text.")


def test_pdf_code_run_and_aligned_table():
    text = ("Example program follows.\n from reportlab.pdfgen import canvas\n def hello(c):\n"
            " c.drawString(100,100,\"Hello\")\n c = canvas.Canvas(\"hello.pdf\")\n"
            " hello(c)\n c.save()\n"
            "The code above makes a file.\n"
            "Name      Size    Owner\nfoo       12      root\nbar       7       user\n")
    secs = build_sections(pages(text))
    kinds = [b.kind for b in secs[0].blocks]
    assert kinds == ["prose", "code", "prose", "table"]
    assert secs[0].blocks[1].text.count("\n") == 5 and secs[0].kind == "mixed"


def test_code_block_spanning_pages_stays_whole():
    secs = build_sections(pages("# A\n\n```\nline1\n", "line2\n```\nafter"), markdown=True)
    code = [b for b in secs[0].blocks if b.kind == "code"]
    assert (len(code) == 1 and "line1" in code[0].text and "line2" in code[0].text
            and code[0].page == 1)
    assert secs[0].page_start == 1 and secs[0].page_end == 2


def test_paper_roman_and_letter_headings():
    text = ("I. INTRODUCTION\nWe study things.\nA. Background\nSome words.\nB. Method\n"
            "1. Details\nMore words.\nE. Beutler, M. A. Lichtman, B. W. Coller, and T. S.\n"
            "II. RESULTS,\nDISCUSSION\nIt works.\nIV. Skipped number\n")
    sections = build_sections([Page(number=1, text=text)])
    paths = [s.heading_path for s in sections]
    assert ("I. INTRODUCTION", "A. Background") in paths
    assert ("I. INTRODUCTION", "B. Method", "1. Details") in paths
    assert ("II. RESULTS, DISCUSSION",) in paths
    assert not any("Beutler" in h or "Skipped" in h for p in paths for h in p)


# A plain-text rule book: numbered headings at the left, numbered list items indented below them.
RULES = """\
1. Introduction

   The Project is an association of individuals who have made common
   cause to create a free operating system.

2. Decision-making bodies and individuals

   Each decision in the Project is made by one or more of the following:
    1. The Developers, by way of General Resolution or an election;
    2. The Project Leader.

  2.1. General rules

    1. Nothing in this constitution imposes an obligation on anyone to do
       work for the Project. A person who does not want to do a task need
       not do it.
    2. A person may leave the Project or resign from a particular post
       they hold, at any time, by stating so publicly.
    3. Make decisions about property held in trust for purposes related to
       Debian.
    4. Make a reasonable attempt to trace the Current Maintainer (and the
       Copyright Holder, if the two differ) through an Internet search.
    5. Appoint the Chair of the Technical Committee.
    6. Term limit:
         1. On January 1st of each year the term of any member who has
            served more than 42 months ends.

3. Individual Developers

  3.1. Powers

   An individual Developer may make any technical or nontechnical decision
   with regard to their own work. Together, the Developers may:
    4. Appoint the Chair of the Technical Committee.

A. Standard Resolution Procedure

  A.0. Proposal

   The formal procedure begins when a draft resolution is proposed.

  A.1. Discussion and Amendment

   The discussion period starts when a draft resolution is proposed.
"""


def test_numbered_list_items_are_not_headings():
    sections = build_sections(pages(RULES))
    assert [s.heading_path for s in sections] == [
        ("1. Introduction",),
        ("2. Decision-making bodies and individuals",),
        ("2. Decision-making bodies and individuals", "2.1. General rules"),
        ("3. Individual Developers",),
        ("3. Individual Developers", "3.1. Powers"),
        ("A. Standard Resolution Procedure",),
        ("A. Standard Resolution Procedure", "A.0. Proposal"),
        ("A. Standard Resolution Procedure", "A.1. Discussion and Amendment"),
    ]
    rules = sections[2].text
    assert "leave the Project" in rules and "Term limit:" in rules and "42 months" in rules


def test_numbered_line_in_the_middle_of_a_paragraph_is_not_a_heading():
    text = ("6. Scope\n"
            "    b) The work must carry prominent notices stating that it is\n"
            "    released under this License and any conditions added under section\n"
            "    7.  This requirement modifies the requirement in section 4 to\n"
            "    keep intact all notices.\n"
            "7. Versions\nShort.")
    assert [s.title for s in build_sections(pages(text))] == ["6. Scope", "7. Versions"]


def test_licence_sections_titled_by_their_first_words():
    text = ("Apache License\n\n"
            "   1. Definitions.\n\n      \"License\" shall mean the terms and conditions.\n\n"
            "   2. Grant of Copyright License. Subject to the terms and conditions of\n"
            "      this License, each Contributor hereby grants to You a license.\n\n"
            "   3. Knuth D. The TeXbook. Addison-Wesley.\n\n"
            "   3. Redistribution. You may reproduce and distribute copies.\n")
    sections = build_sections(pages(text))
    assert [s.title for s in sections[1:]] == ["1. Definitions.", "2. Grant of Copyright License.",
                                               "3. Redistribution."]
    assert sections[2].text.startswith("   2. Grant of Copyright License. Subject to the terms")
    assert "Knuth" in sections[2].text


def test_wrapped_list_items_at_the_headings_margin():
    # As PDF text comes (no indentation) or a plain text file with items at the left margin.
    text = ("1. Scope\n"
            "Each decision in the Project is made by one or more of the bodies below.\n"
            "2. A person may leave the Project or resign from a particular post\n"
            "they hold, at any time, by stating so publicly, in writing or by mail.\n"
            "2. Make a reasonable attempt to trace the Current Maintainer (and the\n"
            "Copyright Holder, if the two differ) through an Internet search, or more.\n"
            "2. The Project Leader's Delegates may choose not to admit new\n"
            "   Developers, or expel existing Developers who abuse the rules here.\n"
            "2. Term limit:\n"
            "- one year for the leader of the Project, two for the committee\n"
            "2. Versions\n"
            "Text.")
    assert [s.title for s in build_sections(pages(text))] == ["1. Scope", "2. Versions"]


def test_indented_wrapped_list_items_stay_one_list_block():
    """Plain-text licences and charters indent their clauses and wrap them under the item:
    the wrapped lines are the item's, not a code block (the LGPL's "b) Use a suitable
    shared library mechanism for linking with the / Library." was cut in two and its second
    half fenced as code). Indented code after a blank line, or marked by its syntax, is
    still code."""
    text = ("Terms\n\n"
            "    a) Accompany the work with the complete corresponding\n"
            "    machine-readable source code for the Library.\n\n"
            "    b) Use a suitable shared library mechanism for linking with the\n"
            "    Library.  A suitable mechanism is one that uses at run time a\n"
            "    copy of the library already present on the user's computer.\n\n"
            "         2. If such a resolution is sponsored by at least 2K Developers,\n"
            "            the resolution puts the decision immediately on hold (provided\n"
            "            that resolution itself says so).\n\n"
            "Run it so:\n\n"
            "    make install\n"
            "    make check\n\n"
            "    c) Build it with these two lines:\n"
            "       x = build(y);\n"
            "       run(x);\n")
    blocks = [b for s in build_sections(pages(text)) for b in s.blocks]
    items = [b for b in blocks if b.kind == "list"]
    assert [b.text.split()[0] for b in items] == ["a)", "b)", "2.", "c)"]
    assert "linking with the\n    Library.  A suitable mechanism" in items[1].text
    assert items[2].text.endswith("that resolution itself says so).")
    code = [b.text for b in blocks if b.kind == "code"]
    assert code == ["    make install\n    make check", "       x = build(y);\n       run(x);"]


def test_a_contents_list_at_the_top_of_a_text_is_no_headings_and_the_body_numbers_again():
    """A FAQ whose contents list repeats its chapter headings: the list's lines are not
    headings (they held no text, and the body's "1 ..." after "9 ..." was refused as a
    numbering step back, so every answer ended up under the last chapter)."""
    chapters = ["USING THE FONTS", "WEB FONTS", "MODIFYING FONTS", "ABOUT THE LICENSE"]
    toc = "\n".join(f"{k}  {t}" for k, t in enumerate(chapters, 1))
    body = "\n".join(f"{k}  {t}\n\n{k}.1  Can I do this?\nYes, you can do it with care.\n"
                     f"\n{k}.2  What about that?\nThat is allowed as well, with a notice.\n"
                     for k, t in enumerate(chapters, 1))
    text = f"Frequently asked questions\n\nCONTENTS OF THIS FAQ\n{toc}\nAPPENDIX A - EXAMPLE\n\n" \
           f"{body}\nAPPENDIX A - EXAMPLE\nAn example log.\n"
    secs = build_sections(pages(text))
    assert [s.title for s in secs if s.level == 1] == [f"{k}  {t}"
                                                       for k, t in enumerate(chapters, 1)]
    assert len([s for s in secs if s.level == 2]) == 8  # each chapter's two questions
    assert [s.heading_path for s in secs if s.level == 2][-1] == ("4  ABOUT THE LICENSE",
                                                                  "4.2  What about that?")
    assert "3  MODIFYING FONTS" in secs[0].text  # the list stays, as text of the front matter


def test_a_chapter_whose_sections_number_from_one_under_its_own_contents_list():
    """DocBook's text output: a contents list at the top, then each chapter lists its
    sections under its heading and numbers them from 1 again. The sections go under their
    chapter; the next chapter's heading ends the contents list just above it."""
    top = ("Table of Contents\n\n1. Introduction\n    1. Home Page\n    2. Mailing Lists\n"
           "2. Getting Started\n    1. Core Concepts\n    2. Screens and Menus\n\n"
           "List of Tables\n\n1.1. Conventions for terms\n2.1. Common keys\n2.2. Pager keys\n")
    ch1 = ("Chapter 1. Introduction\n\nTable of Contents\n\n1. Home Page\n2. Mailing Lists\n\n"
           "Mutt is a small mail client.\n\n1. Home Page\n\nThe homepage is mutt.org.\n\n"
           "2. Mailing Lists\n\nSubscribe by mail.\n")
    ch2 = ("Chapter 2. Getting Started\n\nTable of Contents\n\n1. Core Concepts\n"
           "2. Screens and Menus\n    2.1. Index\n    2.2. Pager\n\nThis section is for new users."
           "\n\n1. Core Concepts\n\nMutt is text based.\n\n2. Screens and Menus\n\nMenus list."
           "\n\n2.1. Index\n\nThe index lists messages.\n\n2.2. Pager\n\nThe pager shows one.\n")
    secs = build_sections(pages(top + "\n" + ch1 + "\n" + ch2))
    assert [s.heading_path for s in secs if s.level] == [
        ("Chapter 1. Introduction",),
        ("Chapter 1. Introduction", "1. Home Page"),
        ("Chapter 1. Introduction", "2. Mailing Lists"),
        ("Chapter 2. Getting Started",),
        ("Chapter 2. Getting Started", "1. Core Concepts"),
        ("Chapter 2. Getting Started", "2. Screens and Menus"),
        ("Chapter 2. Getting Started", "2. Screens and Menus", "2.1. Index"),
        ("Chapter 2. Getting Started", "2. Screens and Menus", "2.2. Pager")]
    assert "The homepage is mutt.org." in secs[2].text


def test_a_numbered_procedure_is_no_contents_list():
    """Consecutive numbered lines that come back nowhere, under no contents title, are left
    to the heading rules as before."""
    from ingest.structure import _contents_lines
    text = ("1 Setup\nFollow these steps.\n1. Install the package\n2. Edit the file\n"
            "3. Restart the service\nDone.\n2 Usage\nRun it.\n")
    assert _contents_lines(text.split("\n")) == set()
    assert _contents_lines(("Contents\n" + text).split("\n")) == set()  # not right above


def test_a_glossarys_lower_case_entries_are_headings_and_a_figure_digit_is_not():
    # A music glossary: entries "1.2 a due" in lower case, numbered one after another; a
    # time signature's "2" over an "N", and a list's "2. Epimoria ...", in the middle of
    # chapter 1 break no numbering; chapter 2 still comes.
    text = ("1 Musical terms A-Z\nLanguages in this order.\n1.1 A\nThe note A.\n"
            "1.2 a due\nTwo players on one part.\n1.3 accent\nThe stress of one tone.\n"
            "3\n2 N\nand is therefore a polymeter.\n1.4 adagio\nSlow tempo.\n"
            "1. Multiplex, if the major number is an exact multiple of the minor; and\n"
            "2. Epimoria or Superparticular [orig. Epimoria seu]. If the major number is\n"
            "3. Superpartiens, if the major number is one less than twice the minor.\n"
            "1.5 al fine\nTo the end.\n"
            "2 Duration names notes and rests\nTables of note names.\n3 Pitch names\nC D E.")
    secs = build_sections(pages(text))
    assert [s.title for s in secs] == [
        "1 Musical terms A-Z", "1.1 A", "1.2 a due", "1.3 accent", "1.4 adagio", "1.5 al fine",
        "2 Duration names notes and rests", "3 Pitch names"]
    assert secs[2].heading_path == ("1 Musical terms A-Z", "1.2 a due")
    assert "2 N" in secs[3].text and "2. Epimoria" in secs[4].text


def test_lower_case_numbered_lines_out_of_sequence_stay_text():
    text = ("1 Setup\nIntro.\n1.1 Install\nRun it.\n1.3 and then the rest\nfollows.\n"
            "2 and 3 are the usual values\nEnd.")
    secs = build_sections(pages(text))
    assert [s.title for s in secs] == ["1 Setup", "1.1 Install"]


def test_headings_of_a_text_dumped_from_html_by_their_indent():
    # lynx/w3m: the body at 3 columns, h2 at 0, h3 at 2; a mail header example at 0 and a
    # running line repeated on every page are no headings.
    body = "   {} text of the paragraph goes on here,\n   and ends on its second line.\n"
    text = ("                 How to report a bug\n\n" + body.format("Intro") + "\n"
            "Important things to note\n\n" + body.format("Notes") + "\n"
            "  What package does your bug report belong to?\n\n" + body.format("Which") + "\n"
            "  Don't file bugs upstream\n\n" + body.format("Upstream") + "\n"
            "Debian bug tracking system\n\n" + body.format("One") + "\n"
            "Sending the bug report via e-mail\n\n" + body.format("Mail") + "\n"
            "Forwarded: foo@example.com\n\n" + body.format("Example") + "\n"
            "Debian bug tracking system\n\n" + body.format("Two") + "\n"
            "Debian bug tracking system\n\n" + body.format("Three"))
    secs = build_sections(pages(text))
    assert [s.heading_path for s in secs] == [
        (), ("Important things to note",),
        ("Important things to note", "What package does your bug report belong to?"),
        ("Important things to note", "Don't file bugs upstream"),
        ("Sending the bug report via e-mail",)]
    assert "Forwarded: foo@example.com" in secs[4].text


def test_numbered_and_outdented_headings_of_an_indented_text_share_their_levels():
    text = "".join(f"{t}\n\n    Body of {t} runs on\n    over two lines.\n\n"
                   for t in ("1 Overview", "1.1 Scope", "2 Usage", "Notes", "3 Limits",
                             "Credits", "See also"))
    secs = build_sections(pages(text))
    assert [s.heading_path for s in secs] == [
        ("1 Overview",), ("1 Overview", "1.1 Scope"), ("2 Usage",), ("Notes",), ("3 Limits",),
        ("Credits",), ("See also",)]


def test_a_bookmark_title_wrapped_over_two_numbered_lines_keeps_its_number_and_body():
    # The bookmark says "Research plan and expected results (...)"; the page prints "5. " before
    # it and wraps it: the heading is found there, with its number, and the body follows it.
    p = pages("4. Features of the project\nNone yet.\n"
              "5. Research plan and expected results (including the\n"
              "planned exchanges and visits)\nA year by year plan.\n")
    outline = [Entry("Features of the project", 1, 1),
               Entry("Research plan and expected results (including the planned exchanges "
                     "and visits)", 1, 1)]
    secs = build_sections(p, outline=outline)
    assert [s.title for s in secs] == [
        "4. Features of the project",
        "5. Research plan and expected results (including the planned exchanges and visits)"]
    assert [s.text for s in secs] == ["None yet.", "A year by year plan."]


def test_a_bookmark_title_gets_the_chapter_number_printed_above_it():
    # GAP's reference manual: the bookmark says "Tables of Marks", the page prints "Chapter 70"
    # above it, and the text refers to chapters by number ("described in Chapter 72").
    p = pages("Front matter\n",
              "Chapter 70\nTables of Marks\nThe concept of a table of marks.\n"
              "70.1 More about Tables of Marks\nDetails.",
              "第3章\n系统设计\n本章介绍系统的设计。",
              "CHAPTER\nONE\nABOUT THIS MANUAL\nIntro text.")
    outline = [Entry("Tables of Marks", 1, 2), Entry("70.1 More about Tables of Marks", 2, 2),
               Entry("系统设计", 1, 3), Entry("About this manual", 1, 4)]
    secs = build_sections(p, outline=outline)
    assert [s.heading_path for s in secs] == [
        (), ("Chapter 70 Tables of Marks",),
        ("Chapter 70 Tables of Marks", "70.1 More about Tables of Marks"),
        ("第3章 系统设计",), ("About this manual",)]
    assert secs[1].text == "The concept of a table of marks."
    assert secs[3].text == "本章介绍系统的设计。"


def test_broken_bookmarks_are_mended_by_the_printed_headings():
    """PSTricks's user guide: chapter bookmarks whose destinations point far past the pages
    that print them, Parts at drifting depths, a chapter one level below the one before it.
    Each chapter lands on the page that prints it, every Part at the top, and consecutive
    chapter numbers are siblings (before: chapters 2 and 3 were lost at the end of the
    document and Part II nested under Part I's last chapter)."""
    p = pages("Part I Basics\n1 Intro\nWelcome text.",
              "2 Lines\nHow to draw lines.",
              "3 Arcs\nHow to draw arcs.",
              "Part II More\n4 Styles\nLine styles.",
              "Index\nlines, 2\narcs, 3")
    outline = [Entry("Part I Basics", 1, 1), Entry("Intro", 2, 1),
               Entry("Lines", 2, 5), Entry("Arcs", 3, 5),  # destinations on the index page
               Entry("Part II More", 3, 4), Entry("Styles", 4, 4), Entry("Index", 1, 5)]
    secs = build_sections(p, outline=outline)
    assert [s.heading_path for s in secs] == [
        ("Part I Basics",), ("Part I Basics", "1 Intro"), ("Part I Basics", "2 Lines"),
        ("Part I Basics", "3 Arcs"), ("Part II More",), ("Part II More", "4 Styles"),
        ("Index",)]
    assert [s.page_start for s in secs] == [1, 1, 2, 3, 4, 4, 5]
    assert secs[2].text == "How to draw lines."


def test_numbered_listing_lines_are_not_headings():
    """pseudo's manual (no bookmarks) typesets pseudocode with numbered lines: "1 Eeny" ...
    "4 Moe" four times over, "10 Maybe we're continuing ..." right above "11 Anyway ...".
    They took the chapters' places, and "3 Boxes and floats" after them broke the numbering
    and was lost. Lines repeated nearby, or numbered one right under the other, are a
    listing's."""
    run = "1 Eeny\n2 Meeny\n3 Miny\n4 Moe\n"
    p = pages("1 Introduction\nThe pseudo package typesets pseudocode.",
              "2 Overview\nThe environment numbers its lines:\n" + run * 4 + "That is all.",
              "3 Boxes and floats\nAlgorithms go in boxes.\n"
              "10 Maybe we are continuing\n11 Anyway, keep going\nThe end.")
    secs = build_sections(p)
    assert [s.heading_path for s in secs] == [
        ("1 Introduction",), ("2 Overview",), ("3 Boxes and floats",)]
    assert "1 Eeny" in secs[1].text and "11 Anyway" in secs[2].text


def test_a_listing_taken_for_contents_does_not_restart_the_numbering():
    """Typeset pseudocode ("1 while ...", "2 if ...", printed again later) looks like a table
    of contents, after which numbering may start again from 1. In pseudo's manual that let a
    listing's "2 This one is not" become a chapter, and "6 Implementation" after it broke the
    numbering and was lost with all its sections. After such a block the next heading goes
    on from the last one, or starts again at 1."""
    code = "1 while a is not b\n2 if a > b\n3 a = a - b\n4 else b = b - a\n5 return a\n"
    prose = "The package typesets pseudocode the way textbooks print it, line by line.\n"
    p = pages("1 Introduction\n" + prose * 3, "2 Overview\n" + prose * 3,
              "3 Boxes and floats\n" + prose * 3,
              "4 Reference\n4.1 Line structure\nEuclid, typeset:\n" + code
              + "Lines run on:\n\n2 This one is not\nSo much for that.",
              "5 Implementation\n5.1 Variable declarations\nEuclid again:\n" + code + "Done.")
    secs = build_sections(p)
    assert [s.heading_path[-1] for s in secs] == [
        "1 Introduction", "2 Overview", "3 Boxes and floats", "4 Reference",
        "4.1 Line structure", "5 Implementation", "5.1 Variable declarations"]
    assert "2 This one is not" in secs[4].text


def test_a_table_of_contents_below_a_heading_lets_the_body_number_from_one_again():
    p = pages("1 About this manual\nRead it in order.\n\nContents\n1 Getting started\n"
              "2 Usage\n3 Reference\n\n1 Getting started\nInstall it first.",
              "2 Usage\nCall it.\n3 Reference\nAll keys.")
    secs = build_sections(p)
    assert [s.heading_path[-1] for s in secs] == [
        "1 About this manual", "1 Getting started", "2 Usage", "3 Reference"]


def test_an_ellipsis_belongs_to_the_title():
    """pseudo's FAQ chapter is "5 But how do I . . ." and each of its sections finishes the
    question: "5.1 . . . prevent paragraph indentation after pseudo?". Dots as leaders (more
    than one ellipsis, or a page number after them) still mark a contents line."""
    p = pages("4 Reference\nAll keys.",
              "5 But how do I . . .\nSome things are not built in.\n"
              "5.1 . . . prevent paragraph indentation after pseudo?\nLeave out the blank line.\n"
              "5.2 . . . use tabularx?\nLoad it first.",
              "6 Implementation\nWe begin.\n6.1 Notes . . . . . . . . 12\nText.")
    secs = build_sections(p)
    assert [s.heading_path[-1] for s in secs] == [
        "4 Reference", "5 But how do I . . .",
        "5.1 . . . prevent paragraph indentation after pseudo?", "5.2 . . . use tabularx?",
        "6 Implementation"]


def test_outdented_group_titles_over_a_body_laid_out_at_several_indents():
    """The Debian mailing-list introduction: group titles at column 0 over list names at 2,
    their fields at 6 and wrapped values at 20. No single indent holds most lines, but all
    but the titles are indented."""
    def entry(name: str) -> str:
        return (f"  {name}@lists.example.org\n\n      Description : Support for users of {name}.\n"
                "                    (High-volume mailing list.)\n"
                "      Moderated   : no\n      Subscription: open\n\n")
    text = ("User lists\n\n" + "".join(entry(n) for n in ("alpha", "beta", "gamma"))
            + "Development lists\n\n  Lists where developers talk.\n\n"
            + "".join(entry(n) for n in ("delta", "epsilon"))
            + "Lists hosted for other projects\n\n" + entry("zeta"))
    secs = build_sections(pages(text))
    assert [s.heading_path for s in secs] == [
        ("User lists",), ("Development lists",), ("Lists hosted for other projects",)]


def test_chinese_numbered_headings_with_a_full_width_point_nest_under_their_heading():
    """A Chinese regulation numbers the parts of "（五）正文" as "1．绪论(前言)", "2．文献综述"
    (a full-width point, no space): they were body text, and a later "7 结论" became a
    chapter above everything after it. They are headings a level below the heading they
    follow, numbering from 1 again there; a numbered sentence (a comma or a full stop in
    it) stays text."""
    p = pages("一、学位论文的一般格式\n（五）正文\n正文是学位论文的主体。\n"
              "1．绪论(前言)\n本研究课题国内外已有的重要文献的扼要概括。\n"
              "2．文献综述\n在查阅国内外文献的基础上，综述前人工作情况。\n"
              "3．实验原理、方法，装置和步骤都要有较详细的阐述\n以便评阅人审核。\n"
              "4 结论\n结论是最终的总体的结论。",
              "（六）致谢\n对给予指导的老师表示感谢。\n（七）参考文献\n"
              "1．著录标准\n按照国家标准著录。")
    secs = build_sections(p)
    assert [s.heading_path for s in secs] == [
        ("一、学位论文的一般格式",),
        ("一、学位论文的一般格式", "（五）正文"),
        ("一、学位论文的一般格式", "（五）正文", "1．绪论(前言)"),
        ("一、学位论文的一般格式", "（五）正文", "2．文献综述"),
        ("一、学位论文的一般格式", "（五）正文", "4 结论"),
        ("一、学位论文的一般格式", "（六）致谢"),
        ("一、学位论文的一般格式", "（七）参考文献"),
        ("一、学位论文的一般格式", "（七）参考文献", "1．著录标准")]


def test_asciidoc_titles_are_headings_and_listing_delimiters_are_not_underlines():
    """Git's user manual is AsciiDoc as a .txt: "== Exploring Git history" and "=== How to
    merge" were body text, while a code line above a listing's 48-dash delimiter became a
    chapter (as a two-line title) and a numbered line of a list another. The marked-up titles
    are the headings (their level from the marks); nothing is guessed from numbers."""
    dashes = "-" * 48
    text = ("= Git User Manual\n\nGit is a fast distributed revision control system.\n\n"
            "[[introduction]]\n== Introduction\n\nThis manual is designed to be readable.\n\n"
            f"{dashes}\n$ git clone git://git.kernel.org/pub/scm/git/git.git\n{dashes}\n\n"
            "== Exploring Git history\n\nGit stores compressed snapshots.\n\n"
            "=== How to merge\n\nYou can rejoin two diverging branches.\n\n"
            f"\tif (mkdir(\".git\", 0755) < 0) {{\n{dashes}\n\n"
            "1. The index contains all the information necessary to generate a tree\n\n"
            "==== update script ====\n\nThe script updates a branch.\n")
    secs = build_sections(pages(text))
    assert [s.heading_path[-1] for s in secs] == [
        "= Git User Manual", "== Introduction", "== Exploring Git history", "=== How to merge",
        "==== update script ===="]
    assert secs[3].heading_path == ("= Git User Manual", "== Exploring Git history",
                                    "=== How to merge")


def test_a_latex_source_read_as_text_has_its_sectioning_commands_for_headings():
    """zhcon's manual ships as its LaTeX source (saved as text): "\\section{下载和安装}" was
    body text and the manual one section. In a LaTeX document (its first line other than
    comments starts with \\documentclass or \\begin{document}) the sectioning commands are the
    headings, levels from the command; a text that only quotes such lines (the CJK package's
    README) keeps guessing as before."""
    text = ("\\documentclass[a4paper]{article}\n\\begin{document}\n\\title{手册}\n"
            "\\section{介绍}\n\\subsection{简介}\nzhcon 是一个中文平台。\n"
            "\\section*{下载和安装} % 安装\n\\subsection[短]{系统需求}\n需要 Linux。\n"
            "1. Numbered line in a list\nMore text.\n\\end{document}\n")
    secs = build_sections(pages(text))
    assert [s.heading_path for s in secs if s.heading_path] == [
        ("\\section{介绍}",), ("\\section{介绍}", "\\subsection{简介}"),
        ("\\section*{下载和安装} % 安装",),
        ("\\section*{下载和安装} % 安装", "\\subsection[短]{系统需求}")]
    assert "1. Numbered line in a list" in secs[-1].text
    quoted = ("Use these commands:\n\\documentclass{article}\n\\section{Intro}\nand\n"
              "\\section{Usage}\nin your file.\n")
    assert all(not s.heading_path for s in build_sections(pages(quoted)))


def test_a_man_page_rendered_to_text_has_its_section_titles_for_headings():
    """A manual page rendered by groff (manpages-zh's bash page) had no headings: its section
    titles stand at column 0, its subsections at column 3 over a body at column 7, and the
    first and last lines name the page. Those columns are the headings now; the options
    list's lines at column 7 are body."""
    text = ("BASH(1)            General Commands Manual            BASH(1)\n\n\n\nNAME\n"
            "       bash - GNU Bourne-Again SHell\n\n描述(DESCRIPTION)\n"
            "       Bash 是一个 shell。\n"
            "\nshell语法(\"SHELL GRAMMAR\")\n   Simple Commands 简单命令\n"
            "       简单命令是一系列单词。\n\n       -c string 如果有 -c 选项\n\n"
            "GNU Bash-2.05b              2002 July 15                  BASH(1)\n")
    secs = build_sections(pages(text))
    assert [s.heading_path for s in secs if s.heading_path] == [
        ("NAME",), ("描述(DESCRIPTION)",), ('shell语法("SHELL GRAMMAR")',),
        ('shell语法("SHELL GRAMMAR")', "Simple Commands 简单命令")]
    assert "-c string" in secs[-1].text and "GNU Bash-2.05b" in secs[-1].text


def test_an_mdoc_man_page_has_its_subsections_and_no_footer_heading():
    """ssh(1) is written with the mdoc macros: its body is at column 5, not 7, so its
    subsections at column 3 ("SSH 协议第一版") were body text, and its footer ("BSD   September
    25, 1999   BSD") was a section of its own."""
    text = ("SSH(1)                    BSD General Commands Manual                   SSH(1)\n\n"
            "描述 (DESCRIPTION)\n     ssh 用于登录远程主机.\n\n   SSH 协议第一版\n"
            "     第一, 如果本地主机已经列在远程主机的文件中.\n\n   SSH 协议第二版\n"
            "     它也使用加密.\n\n"
            "BSD                           September 25, 1999                           BSD\n")
    secs = build_sections(pages(text))
    assert [s.heading_path for s in secs if s.heading_path] == [
        ("描述 (DESCRIPTION)",), ("描述 (DESCRIPTION)", "SSH 协议第一版"),
        ("描述 (DESCRIPTION)", "SSH 协议第二版")]
    assert "September 25, 1999" in secs[-1].text


def test_a_man_page_without_its_header_and_with_unindented_rows():
    """manpages-zh's mail(1) is rendered with no header line (no .Dt): it opens with its NAME
    title, and was one section of 6,800 tokens. proc(5) prints /proc/net rows at column 0,
    after an indented line: each row was a section title, and the rest of the description
    sat under the last row."""
    text = ("\nNAME(名称)\n     mail — 发送和接收邮件\n\nSYNOPSIS(总览)\n     mail [-iInv]\n\n"
            "INTRODUCTION(介绍)\n     Mail 是一个智能化的邮件处理系统.\n\n"
            "   Sending mail(发送邮件)\n     要发送一条消息给一个或更多的人.\n\nBUGS\n"
            "     少有.\n")
    secs = build_sections(pages(text))
    assert [s.heading_path for s in secs if s.heading_path] == [
        ("NAME(名称)",), ("SYNOPSIS(总览)",), ("INTRODUCTION(介绍)",),
        ("INTRODUCTION(介绍)", "Sending mail(发送邮件)"), ("BUGS",)]
    proc = ("PROC(5)            File Formats Manual            PROC(5)\n\n描述\n"
            "       /proc 是一个伪文件系统.\n              tcp    格式如下:\n"
            "sl  local_address rem_address   st tx_queue\n1: 01642C89:0201 0C642C89:03FF 01\n"
            "1: 00000000:0801 00000000:0000 0A\n\n              unix   列出了套接字.\n\n"
            "又见\n       mount(8)\n")
    secs = build_sections(pages(proc))
    assert [s.heading_path for s in secs if s.heading_path] == [("描述",), ("又见",)]
    assert "1: 00000000:0801" in secs[-2].text and "unix   列出了套接字" in secs[-2].text
    # A page whose name holds a space ("lilybbs faq(7)") in its header line.
    faq = ("lilybbs faq(7)          Miscellaneous Information Manual          lilybbs faq(7)\n\n"
           "NAME\n       lilybbs-faq - linux 入门\n\nQUESTIONS 问题与解答\n"
           "   不需要任何命令的简单介绍\n       历史 (APUE 提到了)\n")
    assert [s.heading_path for s in build_sections(pages(faq)) if s.heading_path] == [
        ("NAME",), ("QUESTIONS 问题与解答",), ("QUESTIONS 问题与解答", "不需要任何命令的简单介绍")]
    # A text that merely starts with the word is no man page.
    plain = "Name the files you want.\n     Then run the tool.\n\nUsage\nmore\n"
    assert _marked_up(plain.splitlines()) == ""


def test_markdown_headings_keep_long_titles_and_lose_their_escapes():
    """biblatex's release notes title one change with a 131-character heading, which was
    dropped as too long for a heading; man-db's release notes escape the underscore in
    "man\\_db-2.3.20" headings. A code span keeps its backslashes."""
    long = ("In order to standardise terminology, some commands and options have dropped the "
            '"scheme" naming convention and switched to "template"')
    md = (f"# RELEASE NOTES\n\n## {long}\n\nText.\n\nman\\_db-2.3.20 (7 September 2001)\n"
          "==================================\n\nMore.\n\n## `\\_x` and \\*y\\*\n\nEnd.\n")
    secs = build_sections(pages(md), markdown=True)
    assert [s.heading_path[-1] for s in secs] == [
        "RELEASE NOTES", long, "man_db-2.3.20 (7 September 2001)", "`\\_x` and *y*"]


def test_a_man_page_body_is_prose_not_code_or_a_table():
    """groff indents and justifies a man page's body: the second line of bash's "-c string"
    option (at column 17) was a code block with the next option, cutting the sentence in two,
    and justified lines ("如果有    -c    选项") were tables. Lines with box characters stay a
    table."""
    text = ("BASH(1)            General Commands Manual            BASH(1)\n\nOPTIONS\n"
            "       -c string 如果有    -c    选项，那么命令将从    string    中读取。"
            "如果    string   后面有参数\n                 (argument)，它们将用于给位置参数赋值。\n"
            "       -i        如果有 -i 选项，shell 将交互地执行。\n\n"
            "       ┌─────┬─────┐\n       │ a   │ b   │\n       └─────┴─────┘\n")
    secs = build_sections(pages(text))
    kinds = [(b.kind, b.text.split()[0]) for b in secs[-1].blocks]
    assert kinds == [("prose", "-c"), ("prose", "-i"), ("table", "┌─────┬─────┐")]
    assert "后面有参数 (argument)，它们" in secs[-1].blocks[0].text


def test_a_text_indented_as_a_whole_is_prose_where_it_is_not_deeper():
    """The Mozilla Public License indents its clauses by five spaces: each clause's wrapped
    lines were code blocks. Lines indented deeper than the body are still code."""
    clause = ('     1.{n}. "Term {n}" means each entity that creates or contributes to\n'
              "     the creation of Modifications under term {n}.\n\n")
    text = ("1. Definitions.\n\n" + "".join(clause.format(n=n) for n in range(1, 7))
            + "     Build it so:\n\n          make install\n          make check\n")
    blocks = [b for s in build_sections(pages(text)) for b in s.blocks]
    assert [b.kind for b in blocks] == ["prose"] * 7 + ["code"]
    assert blocks[0].text.endswith("the creation of Modifications under term 1.")


def test_vim_help_and_org_outline_texts_have_their_headings():
    """Vim's user manual chapters (usr_41.txt) title each section on the line under a rule
    of "=", and Emacs's DEBUG file is an Org outline ("** Preliminaries", "*** Configuring
    GDB"): both were one or two sections. A text of "* " bullet items alone stays as it was."""
    rule = "=" * 78
    vim = ("*usr_41.txt*\tFor Vim version 9.0.\n\n|41.1|\tIntroduction\n\n"
           f"{rule}\n*41.1*\tIntroduction\t\t*vim-script-intro*\n\nLet us start.\n\n"
           f"{rule}\n*41.2*\tVariables\n\nA variable name.\n\n{'-' * 78}\nScopes\n\nText.\n")
    secs = build_sections(pages(vim))
    assert [s.heading_path for s in secs if s.heading_path] == [
        ("*41.1* Introduction *vim-script-intro*",), ("*41.2* Variables",),
        ("*41.2* Variables", "Scopes")]
    org = ("Debugging GNU Emacs\n\n** Preliminaries\n\nSkip it.\n\n*** Configuring GDB\n\n"
           "Use gdbinit.\n\n*** Running Emacs from GDB\n\nRun it.\n\n** Getting control\n\n"
           "Put a breakpoint.\n* a bullet-like top heading\n")
    secs = build_sections(pages(org))
    assert [s.heading_path[-1] for s in secs if s.heading_path] == [
        "** Preliminaries", "*** Configuring GDB", "*** Running Emacs from GDB",
        "** Getting control", "* a bullet-like top heading"]
    bullets = "Notes\n\n* one item\n* two items\n** a nested item\n\nMore text.\n"
    assert not any("item" in " ".join(s.heading_path) for s in build_sections(pages(bullets)))


def test_a_text_that_titles_its_parts_under_rules_has_them_for_headings():
    """vimtutor (Chinese here) puts each lesson's title on the line under a rule of 78 "~":
    those rules were taken for code fences, so every other lesson was code, and numbered
    steps ("2. 然后输入：") were headings instead. A text whose rules mostly have no title
    under them (underlines, breaks between paragraphs) keeps its other headings."""
    rule = "~" * 78
    banner = "=" * 79
    lessons = "".join(f"{rule}\n\t\t\t第一讲第{n}节：{title}\n\n\n  1. 按下键。\n\n"
                      f"  2. 然后输入：\t\t:q! <回车>\n     这种方式的退出。\n\n"
                      for n, title in zip("一二三四", ["移动光标", "进入和退出", "删除", "插入"]))
    title = "=   欢 迎 阅 读   《 V I M  教  程 》   ="
    text = f"{banner}\n{title}\n{banner}\n\n  本教程。\n\n{lessons}"
    secs = build_sections(pages(text))
    assert [s.heading_path for s in secs if s.heading_path] == [
        ("欢 迎 阅 读 《 V I M 教 程 》",), ("第一讲第一节：移动光标",),
        ("第一讲第二节：进入和退出",), ("第一讲第三节：删除",), ("第一讲第四节：插入",)]
    assert all(s.kind != "code" for s in secs[2:]) and "2. 然后输入：" in secs[-1].text
    breaks = "".join(f"Part {n}\n{'=' * 40}\n\nText of it.\n\n{'-' * 60}\nMore text.\n\n"
                     f"{'=' * 60}\nA paragraph of\ntwo lines.\n\n" for n in range(1, 6))
    assert [s.heading_path for s in build_sections(pages(breaks)) if s.heading_path] == [
        (f"Part {n}",) for n in range(1, 6)]


def test_the_xetex_logo_on_the_page_matches_its_bookmark():
    """unicode-math's appendix prints "D XƎTEX math font dimensions" (the logo's reversed E)
    where its bookmark says "XeTeX": the printed heading, with its letter, is the title."""
    p = pages("Front matter\n", "Tables above.\nD XƎTEX math font dimensions\nThese are.")
    secs = build_sections(p, outline=[Entry("XeTeX math font dimensions", 1, 2)])
    assert secs[1].title == "D XƎTEX math font dimensions" and secs[1].text == "These are."


def test_a_running_head_with_its_page_number_glued_is_not_the_heading():
    """ConTeXt's manuals (LuaTeX's) print the running head "169Lua callbacks" (folio and
    title run together) above the chapter heading "9 LUA callbacks" on its first page: the
    heading is the title, and the chapter keeps its number."""
    p = pages("Front matter\n",
              "169Lua callbacks\n9 LUA callbacks\nThis library registers callbacks.\n",
              "Lua callbacks170\nMore of them.\n", "13Introduction\nIntroduction\nThis is it.")
    secs = build_sections(p, outline=[Entry("9 LUA callbacks", 1, 2),
                                      Entry("Introduction", 1, 4)])
    assert [s.title for s in secs if s.heading_path] == ["9 LUA callbacks", "Introduction"]
    assert secs[1].text.startswith("This library") and secs[2].text == "This is it."


def test_atx_headings_without_their_space_in_a_document_that_writes_atx_headings():
    """Noto CJK's release notes write "####General Notes" and "###Noto Sans CJK 1.004":
    headings by intent where the document writes other ATX headings; a "#hashtag" line or
    a "##" without a capital after it stays text."""
    md = ("### Prior Release Notes\n\nIntro.\n\n####General Notes\n\nGeneral text.\n\n"
          "###Noto 1.004 Release Notes\n\n#hashtag line\n\n##lower case\n")
    secs = build_sections(pages(md), markdown=True)
    assert [s.heading_path for s in secs] == [
        ("Prior Release Notes",), ("Prior Release Notes", "General Notes"),
        ("Noto 1.004 Release Notes",)]
    assert "#hashtag line" in secs[-1].text and "##lower case" in secs[-1].text
    plain = "Some text.\n\n####General Notes\n\nMore.\n"
    assert [s.heading_path for s in build_sections(pages(plain), markdown=True)] == [()]


def test_markdown_headings_written_as_html_elements():
    """A README that writes some headings as HTML elements (for an anchor to jump to) has
    them in its outline: before, its tutorial sat under the previous "## Links" heading."""
    md = ("# Package\n\nAbout it.\n\n## Links\n\n- [home](https://example.org)\n\n"
          '<h2 id="jumptotutorial">Tutorial/使用入门</h2>\n\nLoad it first.\n\n'
          '<H3 id="load"><a name="x"></a>0. Loading/宏包加载</H3>\n\n\\usepackage{x}\n\n'
          "Inline <h2>not a heading</h2> in a sentence.\n\n\t- ![a test](example/a.png)\n---\n")
    secs = build_sections(pages(md), markdown=True)
    assert [s.heading_path for s in secs] == [
        ("Package",), ("Package", "Links"), ("Package", "Tutorial/使用入门"),
        ("Package", "Tutorial/使用入门", "0. Loading/宏包加载")]
    assert "not a heading" in secs[-1].text
    # A "---" under a list item is a thematic break: the item is no heading.
    assert "example/a.png" in secs[-1].text


def test_inline_code_between_triple_backticks_opens_no_code_block():
    """A README line "```\\usepackage[...]{biblatex}```" is inline code (a fence's info
    string has no backtick): before, it opened a code block that swallowed every heading
    up to the next lone fence (gb7714's "4.2" and "4.3" were lost inside "4.1")."""
    md = ("# Guide\n\n## 4.1 Install\n\nLoad it:\n\n```\\usepackage[x=y]{biblatex}```\n\n"
          "## 4.2 Format\n\nText.\n\n```latex\n## not a heading\n```\n\n## 4.3 Cite\n\nMore.\n")
    secs = build_sections(pages(md), markdown=True)
    assert [s.heading_path[-1] for s in secs] == ["Guide", "4.1 Install", "4.2 Format",
                                                  "4.3 Cite"]
    assert "## not a heading" in secs[2].text


def test_lines_of_a_sentence_starting_with_equals_signs_are_no_asciidoc_titles():
    """CFITSIO's guide (a PDF without bookmarks) breaks sentences before "== NULL" and "= 0
    indicates false": taken for AsciiDoc titles, they were its 11 sections and its numbered
    headings were lost. AsciiDoc titles stand after a blank line (or an anchor)."""
    body = ("1.1 A Brief Overview\nCFITSIO is a library. The HDU is chosen when hdupos\n"
            "== NULL, identified by the number.\nThe value\n= 0 indicates false, and any "
            "other value\n= true. The keyword\n== NULL when it is not found. The name\n"
            "== EXTNAME of the extension.\n"
            "1.2 Sources of Software\nThe software is free.\n")
    secs = build_sections(pages(body))
    assert [s.title for s in secs if s.heading_path] == ["1.1 A Brief Overview",
                                                          "1.2 Sources of Software"]


def test_a_bare_link_over_a_rule_is_no_title():
    """Where two pages meet with no blank line between a paragraph's last line, a bare link,
    and the rule opening the next page, the link became a level-1 heading over the whole
    licence (CC BY 4.0, whose page cut had dropped that blank line; with the cut's blank
    line back, as structure_pages(gaps=) does, there is none either)."""
    from ingest.structure import structure_pages

    md = ("# License\n\nSome terms apply:\n\twiki.creativecommons.org/Considerations_for_x",
          "=====================================\n\nCreative Commons Public License")
    secs = build_sections(pages(*md), markdown=True)
    assert [s.heading_path for s in secs] == [("License",)]
    _, cut = structure_pages(pages(*md), markdown=True, gaps=[True])
    assert [s.heading_path for s in cut] == [("License",)]


def test_the_release_lines_of_a_news_file_are_its_headings():
    """xz's release notes list releases newest first ("5.4.1 (2023-01-11)", then "5.4.0
    (2022-12-13)", ...): only the first was a heading (the numbers go down), and every older
    release sat in its section."""
    news = ("XZ Utils Release Notes\n======================\n\n5.4.1 (2023-01-11)\n\n"
            "    * Fixed a bug.\n\n5.4.0 (2022-12-13)\n\n    * New features.\n\n"
            "5.3.5beta (2022-12-01)\n\n    * Beta.\n")
    secs = build_sections(pages(news))
    assert [s.heading_path for s in secs] == [
        ("XZ Utils Release Notes",), ("XZ Utils Release Notes", "5.4.1 (2023-01-11)"),
        ("XZ Utils Release Notes", "5.4.0 (2022-12-13)"),
        ("XZ Utils Release Notes", "5.3.5beta (2022-12-01)")]
    assert secs[2].text.strip() == "* New features."


def test_a_man_pages_faq_questions_are_its_subsections():
    """perlfaq1(7) in Chinese prints each question as a line of its own in the body's
    column; with three or more such lines they are headings under their section."""
    man = ("PERLFAQ1(7)          Perl Programmers Reference Guide          PERLFAQ1(7)\n\n"
           "NAME\n       perlfaq1 - 有关 Perl 的一般问题\n\nDESCRIPTION 描述\n"
           "       有关 Perl 的一般的问题\n\n       What is Perl? 什么是 Perl\n\n"
           "       Perl是一个高阶程式语言。\n\n       谁对 Perl 提供支持？谁开发了它？\n\n"
           "       Perl自由开放。\n\n       Perl难学吗？\n\n"
           "       不难。它真的很好学，对吗？对。\n\n"
           "       结果是:\n\n           print 1;\n")
    secs = build_sections(pages(man))
    assert [s.heading_path for s in secs if len(s.heading_path) == 2] == [
        ("DESCRIPTION 描述", "What is Perl? 什么是 Perl"),
        ("DESCRIPTION 描述", "谁对 Perl 提供支持？谁开发了它？"),
        ("DESCRIPTION 描述", "Perl难学吗？")]


def test_a_translated_man_pages_two_language_titles_are_its_subsections():
    """perlsec(1) in Chinese prints each subsection title in the body's column as the English
    title and its translation; with three or more such lines they are headings. A tag and its
    text ("b      特殊块文件") and an English sentence with Chinese after it are not."""
    man = ("PERLSEC(1)          Perl Programmers Reference Guide          PERLSEC(1)\n\n"
           "NAME\n       perlsec - Perl 安全\n\nDESCRIPTION 描述\n"
           "       Perl可以轻松写出安全的程序。\n\n"
           "       Laundering and Detecting Tainted Data 清洗和检测污染数据\n\n"
           "       测试一个变量是否含有污染的数据。\n\n"
           "       b      特殊块文件\n\n"
           "       Cleaning Up Your Path 清理路径\n\n"
           "       对于\"Insecure $ENV{PATH}\"这样的消息，你必须设置路径。\n\n"
           "       Security Bugs 安全问题\n\n"
           "       除了明显的问题之外，还有一些缺陷。\n")
    secs = build_sections(pages(man))
    assert [s.heading_path[1] for s in secs if len(s.heading_path) == 2] == [
        "Laundering and Detecting Tainted Data 清洗和检测污染数据",
        "Cleaning Up Your Path 清理路径", "Security Bugs 安全问题"]
    # Two such lines are not enough: a page's odd bilingual line stays body text.
    two = man.replace("       Security Bugs 安全问题\n\n", "")
    assert all(len(s.heading_path) == 1 for s in build_sections(pages(two)) if s.heading_path)


def _leadered(title: str, page: str, width: int = 130) -> str:
    """A contents line whose leaders fill the printed line up to its page number."""
    return f"{title} {'.' * (width - len(title) - len(page) - 2)} {page}"


def test_contents_whose_leaders_fill_the_line_are_contents_and_list_the_body_headings():
    """A DocBook guide's contents: every entry's leaders run to the page's edge (lines longer
    than any heading), a preface numbered 1 to 3 ahead of chapter 1, an entry so long that its
    leaders and page number wrap onto a line of their own. The contents were taken for body
    text, that long entry for the first heading (it swallowed 50 pages), and the body's chapter
    1 was refused as a step back after the preface's "3."."""
    toc = [_leadered("Preface", "ix"), _leadered("1. Principles", "ix"),
           _leadered("2. Using this guide", "x"), _leadered("3. Contact", "x"),
           _leadered("1. Installing the tool", "1"), _leadered("1.1. Getting the interpreter", "1"),
           "1.2. Controlling the default construction environment: the DefaultEnvironment "
           "Function", "." * 110 + " 4",
           _leadered("2. Simple builds", "5"), _leadered("2.1. Objects", "5")]
    body = ["Preface", "A word first.", "1. Principles", "Correct builds first.",
            "2. Using this guide", "Read it in order.", "3. Contact", "Write to the list.",
            "1 Installing the tool", "This chapter installs it.",
            "1.1. Getting the interpreter", "Check the version.",
            "1.2. Controlling the default construction environment: the DefaultEnvironment "
            "Function", "Call it first.", "2 Simple builds", "A program.", "2.1. Objects",
            "Object files."]
    secs = build_sections(pages("User Guide\nTable of Contents\n" + "\n".join(toc),
                                "\n".join(body)))
    titles = [s.title for s in secs]
    assert titles[0] == "" and "2.1. Objects" in secs[0].text  # the contents: front matter
    assert "1 Installing the tool" in titles and "2 Simple builds" in titles
    assert [s.heading_path for s in secs if s.title.startswith("1.2.")] == [
        ("1 Installing the tool", "1.2. Controlling the default construction environment: "
                                  "the DefaultEnvironment Function")]
    assert secs[-1].heading_path == ("2 Simple builds", "2.1. Objects")


def test_a_chapter_title_wrapped_in_the_body_is_joined_as_the_contents_list_it():
    """"17 Extending the tool: Writing" / "Your Own Builders": the body's chapter title wraps
    where the contents print it on one line; the heading takes both lines."""
    toc = [_leadered("1. Simple builds", "1"), _leadered("2. Extending the tool: Writing Your "
                                                         "Own Builders", "7"),
           _leadered("2.1. Builders that run commands", "8")]
    body = ["1 Simple builds", "A program.", "2 Extending the tool: Writing",
            "Your Own Builders", "You can write builders.", "2.1. Builders that run commands",
            "Like this."]
    secs = build_sections(pages("Table of Contents\n" + "\n".join(toc), "\n".join(body)))
    assert [s.title for s in secs if s.level == 1] == [
        "1 Simple builds", "2 Extending the tool: Writing Your Own Builders"]
    assert secs[-1].heading_path[0] == "2 Extending the tool: Writing Your Own Builders"
    assert not any("Your Own Builders" in s.text for s in secs if s.level)  # not body text


def test_a_title_the_contents_list_is_a_heading_in_any_case_and_with_a_closing_period():
    """PARI's tutorial prints "1. Greetings!." and "2. Warming up." (the run-in rule wants a
    title in title case without "!"); man-db's manual "1.1. man-db" in lower case, its
    contents at the end. Both were body text under the heading above them."""
    toc = "\n".join(_leadered(t, p) for t, p in [("1. Greetings!", "1"), ("2. Warming up", "3"),
                                                  ("2.1. man-db", "4"), ("3. Types", "6")])
    body = ("Table of Contents\n" + toc + "\nA guided tour.\n\n1. Greetings!.\nType 2 + 2.\n\n"
            "2. Warming up.\nMore examples.\n\n2.1. man-db\nThe pager.\n\n3. Types.\nIntegers.")
    secs = build_sections(pages(body))
    assert [s.title for s in secs if s.level] == ["1. Greetings!.", "2. Warming up.",
                                                  "2.1. man-db", "3. Types."]


def test_lines_that_end_in_an_ellipsis_are_no_contents():
    """An unnumbered title is a contents entry only where leaders lead to a page number:
    a program's log ("Loading...", "Parsing...") quoted three times in a row is text."""
    from ingest.structure import _contents_entry, _contents_lines
    log = ["Loading...", "Parsing...", "Writing..."] * 2
    assert not any(_contents_entry(line) for line in log)
    assert _contents_lines(log) == set()
    assert _contents_entry("Preface ........ ix") and _contents_entry("Index . . . . 212")


def test_a_line_of_tildes_under_a_title_underlines_it_and_opens_no_fence():
    """A release notes text titles each release over a line of tildes of its length: taken
    for a fence, each release's notes were one code block up to the next title's underline
    (23,000 characters that no small budget could show). A fence under a line of text is
    shorter than that line, or under a line that introduces it (ending in a colon), and a
    tilde line inside an open fence still closes it."""
    notes = "".join(f"Release 3.{n}.0 (May 20{n:02d})\n~~~~~~~~~~~~~~~~~~~~~~~~~\n"
                    f"This release fixes bug {n} in the cache.\n\n"
                    f"It also speeds up start-up by a tenth.\n\n" for n in (9, 8, 7))
    example = ("Run it so:\n~~~\nmake -j2 check\n~~~\n\nThen install.\n\n"
               "A paragraph introducing it:\n~~~~~~~~~~~~~~~~~~~~~~~~~\nsudo make install\n"
               "~~~~~~~~~~~~~~~~~~~~~~~~~\n\nDone.\n")
    secs = build_sections(pages(notes + example))
    blocks = [b for s in secs for b in s.blocks]
    assert not [b for b in blocks if b.kind == "code" and "release fixes" in b.text]
    assert any("bug 8" in b.text and b.kind == "prose" for b in blocks)
    pdf_notes = "These are the release notes.\n" + notes.replace("\n\n", "\n")  # no blank lines
    pdf = [b for s in build_sections(pages(pdf_notes)) for b in s.blocks]
    assert [b.text.splitlines()[0] for b in pdf if "~~~" in b.text] == [
        f"Release 3.{n}.0 (May 20{n:02d})" for n in (9, 8, 7)]  # each title a block of its own
    assert all(b.kind == "prose" for b in pdf)
    code = [b for b in blocks if b.kind == "code"]
    assert [c.text.splitlines()[1] for c in code] == ["make -j2 check", "sudo make install"]
    assert "Run it so:" not in [s.title for s in secs]  # a fence underlines no title


def test_a_long_run_of_indented_lines_ends_at_a_blank_line_before_an_outdented_one():
    """A plain text's parameter list indented as a whole (CJK.txt's "<encoding>" and
    "<family>") is code by its indentation; one block of it held 10,900 characters. Past
    MAX_BLOCK_CHARS a run ends at a blank line followed by a line no deeper than its first;
    a shorter run, and deeper lines after a blank one, stay in the block."""
    item = "    <param{k}>   Meaning of parameter {k}, described at length here.\n"
    wrapped = "{pad}more about it, continued on an indented line.\n"
    long_run = "".join(item.format(k=k) + "".join(wrapped.format(pad=" " * (8 + j))
                                                  for j in range(12)) + "\n"
                       for k in range(8))
    short_run = "".join(item.format(k=k) + wrapped.format(pad=" " * 8) + "\n" for k in range(3))
    prose = "The package reads its options from the first line of the file.\n\n"
    secs = build_sections(pages(prose * 3 + "Parameters:\n\n" + long_run + prose
                                + "Short list:\n\n" + short_run + prose))
    code = [b for s in secs for b in s.blocks if b.kind == "code"]
    assert len(code) >= 3 and max(len(b.text) for b in code) < 2 * MAX_BLOCK_CHARS
    assert all(b.text.lstrip().startswith("<param") for b in code)
    assert code[-1].text.count("<param") == 3  # the short run stays whole


def test_a_man_page_section_title_one_space_in_is_a_section_title():
    """A translated page's source put a space before a section title (" 常用选项 FREQUENTLY USED
    OPTIONS" in a daemon's page, its options' first part): at column 1 it was body text of
    the section above. A title one or two spaces in, after a blank line and over the body, is
    a section title; a line of the body at those columns inside a paragraph is not, nor a row
    of an example's columns."""
    text = ("NETD(8)            System Manager's Manual            NETD(8)\n\n\nNAME\n"
            "       netd - 网络守护进程\n\n描述\n       它管理连接。\n"
            "  wrapped by mistake at column two\n\n"
            " 常用选项 FREQUENTLY USED OPTIONS\n       <speed>\n              设置速率。\n\n"
            "选项 OPTIONS\n       -d     调试。\n\n"
            " -rw-r--r--  1.5 unx    2802 t- defX 11-Aug-91 13:48 perms\n       一行列表。\n\n"
            "netd 2.4                 2004 May 1                  NETD(8)\n")
    secs = build_sections(pages(text))
    assert [s.title for s in secs if s.heading_path] == [
        "NAME", "描述", "常用选项 FREQUENTLY USED OPTIONS", "选项 OPTIONS"]
    assert "wrapped by mistake" in secs[2].text and "设置速率" in secs[3].text
    assert "2802 t- defX" in secs[-1].text
