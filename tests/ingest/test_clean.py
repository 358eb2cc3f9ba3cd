from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.clean import (
    clean_pages,
    clean_text,
    is_garbage,
    join_hyphenated,
    nfkc,
    strip_controls,
    strip_line_numbers,
    strip_running_lines,
)


def test_nfkc_folds_ligatures_but_keeps_chinese_punctuation():
    assert nfkc("\ufb01le \ufb02ow") == "file flow"
    assert nfkc("你好，世界：ＡＢＣ") == "你好，世界：ABC"


def test_strip_controls():
    assert strip_controls("a\r\nb\rc\fd\x00e\x07f\u00adg\tz") == "a\nb\nc\ndefg\tz"


def test_join_hyphenated_rules():
    assert join_hyphenated("the manage-\nment of it") == "the management of it"
    # the hyphenated form occurs elsewhere and the closed one does not: keep the hyphen
    assert join_hyphenated("a well-\nknown tool",
                           vocabulary="it is well-known") == "a well-known tool"
    # next line starts upper case: a real line break after a dash, left alone
    assert join_hyphenated("Debian-\nPolicy") == "Debian-\nPolicy"
    assert join_hyphenated("hori\ufffezontally") == "horizontally"


def test_clean_text_collapses_blank_lines_and_trailing_spaces():
    assert clean_text("a  \n\n\n\nb\x0c") == "a\n\nb"


def test_clean_pages_uses_whole_document_vocabulary():
    pages = clean_pages(["a well-\nknown thing", "every well-known rule"])
    assert pages[0] == "a well-known thing"


def _pages(n: int) -> list[str]:
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    return [f"Acme Manual, Release 2.{k % 3}\nAbout {words[k]} today.\n"
            f"Then {words[k + 1]} later.\n{k}"
            for k in range(1, n + 1)]


def test_running_header_and_page_number_removed():
    pages, removed = strip_running_lines(_pages(10))
    assert removed == 20
    assert all("Acme Manual" not in p for p in pages)
    assert pages[3] == "About epsilon today.\nThen zeta later."


def test_running_lines_need_enough_pages():
    pages = (["Header X\nbody one", "Header X\nbody two", "other\nbody three"]
             + [f"p{k}\nbody" for k in range(8)])
    out, _ = strip_running_lines(pages)
    assert out[0].startswith("Header X")  # on 2 of 11 pages: not a running header


def test_footer_with_section_title_and_label():
    pages = [f"Title {k}\ntext {k}\n2.5. Priorities {k + 10}" for k in range(1, 5)]
    out, _ = strip_running_lines(pages, labels=[str(k + 10) for k in range(1, 5)])
    assert all("Priorities" not in p for p in out)


def test_garbage_detection():
    assert is_garbage("sw | \\ + ~= ;: | 400 + t= 1] }{ ~ BH {note 1] = | \\ +", ocr_layer=True)
    assert not is_garbage("This is an ordinary sentence of English text, nothing odd.",
                          ocr_layer=True)
    assert is_garbage("@#$%^&*()_+ {}|:<>? ~~~ ^^^ @@@ ### %%% &&& *** ((( ))) ||| ;;;")
    assert not is_garbage("1.1 Scope . . . . . . . . . . . . . . . . . . . 3\n"
                          "1.2 Other . . . . . . . . . . 4")
    assert not is_garbage("命名管道是一个像管道一样的文件。你把内容放进了文件，它从另一端出来。")


def test_real_text_is_not_garbage():
    """False positives measured on real pages (bench/fidelity.py --garbage): none of these."""
    toc = "\n".join(f"Chapter {k} - Introduction to part {k}" + "." * 90 + f"{k}-1"
                    for k in range(1, 12))
    assert not is_garbage(toc)  # htmldoc glues dot leaders to the words
    assert not is_garbage(toc, ocr_layer=True)
    ocr_text = ("I read a page: see /usr/share/doc/foo/copyright (e.g. GPL-2+), run `ls -la`, then "
                "don't stop; x = f(a, b) + 1 and it's done. A well-known 3-8 case.")
    assert not is_garbage(ocr_text, ocr_layer=True)


def _reference_join(text, vocabulary=None):
    """join_hyphenated as first written, with one regex over the whole text (and the rules
    added since: Doxygen's "←-" marks, an acronym's hyphen)."""
    import re

    text = re.sub(r"\u2190-[ \t]*\n[ \t]*", "", text)
    pattern = re.compile(r"(?<![^\W\d_])([^\W\d_]+)(?:-[ \t]*\n[ \t]*|\ufffe)([^\W\d_]+)")
    vocab = text if vocabulary is None else vocabulary

    def join(m):
        head, tail = m.group(1), m.group(2)
        if not tail[0].islower():
            return f"{head}-{tail}" if m.group(0).count("\ufffe") else m.group(0)
        if head + tail in vocab and f"{head}-{tail}" not in vocab:
            return head + tail
        if len(head) > 1 and head.isupper():
            return f"{head}-{tail}"
        if f"{head}-{tail}" in vocab and head + tail not in vocab:
            return f"{head}-{tail}"
        return head + tail

    return pattern.sub(join, text)


_PIECES = list("abcAB-\n \t\ufffe_1éÉ中.,") + ["ﬁ", "-\n", "well-known", "wellknown", "\u2190-\n",
                                               "CC-", "CCa"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join),
       st.none() | st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_join_hyphenated_matches_single_regex(text, vocabulary):
    assert join_hyphenated(text, vocabulary) == _reference_join(text, vocabulary)


def _reference_quality(text):
    import re

    total = good = 0
    text = re.sub(r"[.·…_]{3,}", " ", text)  # dot leaders glued to words
    for m in re.finditer(r"\S+", text):
        tok = m.group(0)
        if re.fullmatch(r"[.·…•◦▪‣∙_\-–—]+", tok):
            continue
        n = len(tok)
        total += n
        alnum = sum(1 for ch in tok if ch.isalnum())
        if alnum * 2 > n and (n < 40 or max(tok) >= "\u3000"):
            good += n
    return good / total if total else 0.0


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x3100), max_size=80))
def test_text_quality_and_garbage_fast_paths_match_reference(text):
    import re

    from ingest.clean import text_quality

    assert text_quality(text) == _reference_quality(text)
    stripped = text.strip()
    if len(stripped) >= 3:
        dense = re.sub(r"\s+", "", stripped)
        slow = (len(re.sub(r"[\W_]+", "", dense)) < 0.75 * len(dense)
                and _reference_quality(stripped) < 0.4)
        assert is_garbage(text, min_chars=3) == slow


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("aé\u0301\ufb01ﬂ中，。：\u3000ＡＢ１\uff61\uff65 \n")),
                max_size=30).map("".join))
def test_nfkc_matches_per_run_reference(text):
    import re
    import unicodedata

    keep = "\u3000\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
    expected = re.sub(f"[^{keep}]+", lambda m: unicodedata.normalize("NFKC", m.group(0)), text)
    assert nfkc(text) == expected


# ---- margin line numbers ---------------------------------------------------------------

_PROSE = ("The manuscript includes many figure and table examples for authors",
          "Information on features not explicitly mentioned can be found online",
          "Authors are welcome to replace the text, tables and bibliography")


def _numbered(first: int, lines: list[str]) -> str:
    """A page whose lines carry margin numbers from `first` on."""
    return "\n".join(f"{n} {line}".rstrip() for n, line in enumerate(lines, start=first))


def _prose(count: int) -> list[str]:
    return [f"{_PROSE[k % 3]} ({k})." for k in range(count)]


def test_margin_line_numbers_are_stripped():
    first = _prose(4) + ["2. METHODS"] + _prose(7)
    pages = ["Draft version March 2021\n" + _numbered(1, first), _numbered(13, _prose(12))]
    out = strip_line_numbers(pages)
    assert out[0].split("\n")[:2] == ["Draft version March 2021", f"{_PROSE[0]} (0)."]
    assert "\n2. METHODS\n" in out[0]
    assert out[1].split("\n")[0] == f"{_PROSE[0]} (0)."
    assert not any(re.match(r"\d+ ", line) for p in out for line in p.split("\n"))


def test_line_numbers_go_before_hyphen_joins_and_blank_lines_stay_blank():
    second = _prose(5) + ["the manage-", "ment of it.", ""] + _prose(4)
    cleaned = clean_pages([_numbered(1, _prose(12)), _numbered(13, second)])
    assert "the management of it." in cleaned[1]
    assert "of it.\n\n" in cleaned[1]  # a number alone marked a blank line of the draft
    # PDFium joins a hyphen-broken line to the next one, number and all: "doc\ufffe60 ument"
    first = _numbered(1, _prose(12)).replace("\n3 ", " doc\ufffe3 ument ", 1)
    assert " doc\ufffeument " in strip_line_numbers([first, _numbered(13, _prose(12))])[0]


def test_a_page_of_floats_continuing_the_numbers_is_stripped():
    floats = "Figure 3. A caption\nwithout numbers\n" * 4 + _numbered(25, _prose(3))
    out = strip_line_numbers([_numbered(1, _prose(12)), _numbered(13, _prose(12)), floats])
    assert out[2].endswith(f"{_PROSE[0]} (0).\n{_PROSE[1]} (1).\n{_PROSE[2]} (2).")


def test_tables_and_listings_keep_their_numbers():
    codes = "\n".join(f"{k} dd-mmm-yyyy 07-Sep-{k:02d}" for k in range(32))
    assert strip_line_numbers([codes, codes]) == [codes, codes]
    listing = ["\n".join(f"{n} \\cs_new:Npn \\foo_{n}:n #1 {{ }}" for n in range(a, a + 20))
               for a in (1, 21)]
    assert strip_line_numbers(listing) == listing
    one = [_numbered(1, _prose(12)), "Plain prose."]  # alone, it could be a table's column
    assert strip_line_numbers(one) == one
    items = ["\n".join(f"{k}. {_PROSE[k % 3]}." for k in range(1, 11))] * 2
    assert strip_line_numbers(items) == items


def test_line_numbered_text_is_not_read_as_a_table():
    from ingest.layout import _plausible

    rows = [[str(n), f"{_PROSE[n % 3]} and more"] for n in range(223, 230)]
    assert not _plausible(rows)
    assert _plausible([["1", "Apple"], ["2", "Pear"], ["3", "Fig"]])


def test_a_table_numbered_with_circled_digits_is_kept():
    # "①".isdigit() is True but int("①") fails: a Chinese table numbering its rows ①②③
    # stopped the whole upload (texproposal's CQU-Example.pdf).
    from ingest.layout import _plausible

    rows = [["①", "开题报告的格式"], ["②", "参考文献的著录"], ["③", "图表的编号方法"]]
    assert _plausible(rows)


class _Entry:
    def __init__(self, title: str, level: int, page: int) -> None:
        self.title, self.level, self.page = title, level, page


def _book() -> tuple[list[str], list[_Entry]]:
    """Pages of a book whose heads carry the chapter title on even pages and the section
    title on odd ones (memoir's style), with page numbers at the foot. No head recurs on the
    30% of pages that the recurrence rule needs."""
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu".split()
    body = [f"Text on {w} that runs on for a while about the layout of pages.\nMore on {w}."
            for w in words]
    pages = [
        f"Two\nLaying out the page\n{body[0]}\n1",  # chapter opening: no head
        f"2. LAYING OUT THE PAGE\n2.1 THE STOCK\n{body[1]}\n2",
        f"2.1. The stock\n{body[2]}\n3",
        f"2. LAYING OUT THE PAGE\n{body[3]}\n2.2 THE TYPEBLOCK\n{body[12]}\n4",
        f"2.2. The typeblock\n{body[4]}\n5",
        f"2.2. The typeblock\n{body[5]}\n6",
        f"2.3. Example\n2.3 EXAMPLE\n{body[6]}\n7",  # head and heading on the section's page
        f"2. LAYING OUT THE PAGE\n3\n{body[7]}\n8",  # a bare number under the head: content
        f"Three\nText and fonts\n{body[8]}\n9",
        f"3. TEXT AND FONTS\n{body[9]}\n10",
        f"Background colour\n{body[10]}\n# background colour\n11",  # outline says page 10
        f"3. TEXT AND FONTS\n{body[11]}\n12",
    ]
    outline = [_Entry("2 Laying out the page", 1, 1), _Entry("2.1 The stock", 2, 2),
               _Entry("2.2 The typeblock", 2, 4), _Entry("2.3 Example", 2, 7),
               _Entry("3 Text and fonts", 1, 9), _Entry("Background colour", 2, 10)]
    return pages, outline


def test_running_titles_of_chapters_and_sections_removed():
    pages, outline = _book()
    out, removed = strip_running_lines(pages, outline=outline)
    firsts = [p.split("\n")[0].split(" that ")[0] for p in out]
    assert firsts == ["Two", "2.1 THE STOCK", "Text on gamma", "Text on delta", "Text on epsilon",
                      "Text on zeta", "2.3 EXAMPLE", "3", "Three", "Text on kappa",
                      "Background colour", "Text on mu"]
    assert "2.2 THE TYPEBLOCK" in out[3]  # the heading further down its page stays
    assert out[10].endswith("# background colour")  # (a code comment is not the heading)
    assert not any(p.endswith(("1", "2", "4", "6")) for p in out)  # page numbers go as before
    # without the outline only the page numbers go: the heads recur on too few pages
    plain, plain_removed = strip_running_lines(pages)
    assert plain[4].startswith("2.2. The typeblock")
    assert removed - plain_removed == 9


def test_letter_spaced_chinese_is_joined():
    """A PDF that spaces out a line's characters (a title, an exam question, a thesis's
    "摘 要") gives "关 于 x 的 不 等 式": searched word by word, such a line matched nothing.
    Its Chinese characters are joined again; spaces next to Latin letters and digits stay."""
    assert clean_text("1. 关 于 x 的 不 等 式 ， 求 a 的 取 值 范 围") == (
        "1. 关于 x 的不等式 ， 求 a 的取值范围")
    assert clean_pages(["摘 要\n本文研究了网络。", "目 录"]) == ["摘要\n本文研究了网络。", "目录"]
    # Spaces that separate phrases or verses are kept: the line is not spaced out.
    assert clean_text("春眠不觉晓 处处闻啼鸟") == "春眠不觉晓 处处闻啼鸟"
    phrases = "使用 TeX Gyre 字体 排版 文档的 方法"
    assert clean_text(phrases) == phrases
    assert clean_text("第 4 节 实现") == "第 4 节 实现"


def test_a_letterhead_taller_than_three_lines_is_removed_from_every_page():
    """pdfx's manual prints an address block, its title and its authors above every page's
    text: only the first three lines went, the rest stayed on all 111 pages. Lines past the
    edge go while each recurs there on enough pages; the first body line stops it, and a
    body line that recurs but sits below the body's start stays."""
    head = ("River Valley Technologies\nJWRA 34, Jagathy, Trivandrum {n}\nVersion: 1.6.3\n"
            "Contacts: cvr@river-valley.org\nGeneration of PDF/X- and PDF/A-compliant PDFs\n")
    body = ("Text of the {w} page about colour profiles, long enough to be a paragraph.\n"
            "See the example.\n{w} more words here.\n{w} and a last line.\n{w} closes.\n"
            "{w} ends.\n")
    words = "one two three four five six seven eight".split()
    pages = [(head + body).format(n=n, w=w) for n, w in enumerate(words, start=1)]
    out, removed = strip_running_lines(pages)
    assert all(p.startswith(f"Text of the {w} page") for w, p in zip(words, out))
    assert all("See the example." in p for p in out)
    assert removed == 5 * 8


def test_doxygen_break_marks_join_the_word_they_break():
    """Doxygen's LaTeX prints "←-" where it broke a word, a name or a URL at a line end."""
    page = ("RTF (MS-Word), Post\u2190-\nScript, hyperlinked PDF; see https://sourceforge.\u2190-\r\n"
            "net/projects/x and TEST\u2190-\n_FLAGS.")
    assert clean_text(page) == ("RTF (MS-Word), PostScript, hyperlinked PDF; see "
                                "https://sourceforge.net/projects/x and TEST_FLAGS.")
    assert clean_pages([page])[0] == clean_text(page)


def test_an_acronym_keeps_its_hyphen_at_a_line_end():
    """CC BY 4.0's "other CC-\\nlicensed material" became "CClicensed"."""
    assert clean_text("other CC-\n     licensed material, XML-\nbased, manage-\nment") == (
        "other CC-licensed material, XML-based, management")
    # ... unless the text writes it closed elsewhere (caption's "SCfigure" environment).
    assert clean_text("use \\begin{SCfigure} or set [SC-\nfigure]") == (
        "use \\begin{SCfigure} or set [SCfigure]")
