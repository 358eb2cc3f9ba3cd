from __future__ import annotations

import pytest

import ingest
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
