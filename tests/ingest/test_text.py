from __future__ import annotations

import pytest

import ingest
from ingest.segment import cjk_ratio, prose_cjk_share
from ingest.text import detect_encoding, read_text, split_pages

CHINESE = "第一章 总则\n\n本规范适用于所有软件包。繁體字也可以。\n" * 20


@pytest.mark.parametrize("encoding, expected", [
    ("utf-8", "utf-8"), ("utf-8-sig", "utf-8-sig"), ("utf-16", "utf-16"), ("gb18030", "gb18030"),
])
def test_encodings_round_trip(tmp_path, encoding, expected):
    path = tmp_path / "doc.txt"
    path.write_bytes(CHINESE.encode(encoding))
    text, used = read_text(path)
    assert text == CHINESE and used == expected


def test_big5(tmp_path):
    text = "第一章 總則\n\n本規範適用於所有軟體套件，請仔細閱讀每一條規定。\n" * 30
    path = tmp_path / "big5.txt"
    path.write_bytes(text.encode("big5"))
    decoded, used = read_text(path)
    assert decoded == text and used.startswith("big5")


def test_utf8_preferred_when_it_decodes():
    assert detect_encoding("plain ascii and é".encode()) == "utf-8"


def test_split_pages_on_form_feed_and_size():
    assert split_pages("one\fTwo\f") == ["one", "Two"]
    paragraphs = "\n\n".join(f"Paragraph {k} " + "word " * 100 for k in range(40))
    pages = split_pages(paragraphs, page_chars=3000)
    assert 5 <= len(pages) <= 9
    assert all(p.startswith("Paragraph") for p in pages)
    assert "".join(pages).replace("\n", "") == paragraphs.replace("\n", "")


def test_split_pages_keeps_code_fences_whole():
    text = "intro\n\n```\n" + "\n\n".join(f"x{k} = {k}" for k in range(400)) + "\n```\n\nafter"
    pages = split_pages(text, page_chars=500)
    fence = next(p for p in pages if "```" in p)
    assert fence.count("```") == 2 or len(fence) > 1900


def test_load_chinese_text(tmp_path):
    path = tmp_path / "规范.txt"
    path.write_bytes(CHINESE.encode("gb18030"))
    doc = ingest.load_document(path)
    assert doc.language == "zh" and doc.kind == "text"
    assert doc.sections[0].title == "第一章 总则"


def test_load_markdown(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# Guide\n\nHello.\n\n## Setup\n\n```\npip install x\n```\n", encoding="utf-8")
    doc = ingest.load_document(path)
    assert doc.kind == "markdown" and doc.title == "Guide"
    assert [s.heading_path for s in doc.sections] == [("Guide",), ("Guide", "Setup")]
    assert doc.sections[1].blocks[0].kind == "code"


def test_whitespace_only_file(tmp_path):
    path = tmp_path / "blank.txt"
    path.write_text("   \n\n  ")
    with pytest.raises(ingest.DocumentError, match="only whitespace"):
        ingest.load_document(path)


ENGLISH = "The package manager installs software from the archive and keeps it current.\n" * 30
CODE = "\n".join(f"\\cs_new_protected:Npn \\ctex_set_{k}:n #1 {{ \\tl_set:Nn \\l_tmp_tl {{#1}} }}"
                 for k in range(40))


def test_chinese_manual_with_pages_of_code_is_chinese(tmp_path):
    manual = "第一章 简介\n\n" + "本宏集提供中文排版的支持，用户可以使用这些选项来控制行为。\n" * 12
    pages = [manual] * 3 + [CODE] * 12
    path = tmp_path / "manual.txt"
    path.write_text("\f".join(pages), encoding="utf-8")
    assert ingest.load_document(path).language == "zh"
    assert cjk_ratio("\n".join(pages)) < 0.3  # among all letters, code included, it is not


def test_english_with_chinese_examples_and_code_stays_english(tmp_path):
    examples = "Chinese text such as 你好，世界 or 中文排版的支持 needs a CJK font.\n" * 10
    pages = [ENGLISH] * 4 + [CODE] * 8 + [examples]
    path = tmp_path / "guide.txt"
    path.write_text("\f".join(pages), encoding="utf-8")
    assert ingest.load_document(path).language == "en"
    assert prose_cjk_share(CODE) == 0.0 and prose_cjk_share(examples) < 0.3


def test_line_numbered_text_loses_its_numbers(tmp_path):
    lines = ["1. INTRODUCTION"] + ["This draft has numbers in the left margin of every line."] * 20
    lines += ["2. METHODS"] + ["We count the lines of each page and remove the numbers again."] * 20
    numbered = [f"{n} {line}" for n, line in enumerate(lines, start=1)]
    path = tmp_path / "draft.txt"
    path.write_text("\n".join(numbered[:21]) + "\f" + "\n".join(numbered[21:]), encoding="utf-8")
    doc = ingest.load_document(path)
    assert [s.title for s in doc.sections] == ["1. INTRODUCTION", "2. METHODS"]
    assert doc.pages[1].text.startswith("2. METHODS\nWe count")


def test_a_title_at_the_top_of_a_text_page_keeps_the_blank_line_above_it(tmp_path):
    """Pages of a text file are cut at blank lines, and the blank line went with the cut: a
    title that then opened a page had the last line of the page before right above it, so a
    plain text's underlined title (which needs a blank line above) was no heading there."""
    from ingest import load_document
    from ingest.text import split_pages_gaps

    para = ("This paragraph of the manual is long enough to fill a page of its own, and "
            "it says nothing else. ") * 35
    text = f"Manual\n======\n\n{para}\n\nInstalling\n----------\n\nRun the installer.\n"
    pages, gaps = split_pages_gaps(text)
    assert len(pages) == 2 and gaps == [True] and pages[1].startswith("Installing")
    assert split_pages_gaps("a\fb")[1] == [False]
    path = tmp_path / "manual.txt"
    path.write_text(text, encoding="utf-8")
    doc = load_document(path)
    assert [s.heading_path for s in doc.sections] == [("Manual",), ("Manual", "Installing")]
    assert doc.sections[1].page_start == 2 and doc.sections[1].text == "Run the installer."
