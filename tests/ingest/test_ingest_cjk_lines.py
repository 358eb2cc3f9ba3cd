"""Line breaks inside Chinese paragraphs: joined in blocks and page text; headings, lists,
code and tables keep their lines."""
from __future__ import annotations

from dataclasses import dataclass

from ingest import load_document
from ingest.document import Page
from ingest.structure import build_sections, cjk_separator, structure_pages

# Full lines of a page of Chinese prose (about 40 characters each), wrapped inside words.
PARAGRAPH = (
    "本手册介绍如何使用这个排版系统编写结构清晰的中文文档，并说明如何在文\n"
    "档中插入表格、图片和数学公式。对于初次接触这个系统的读者，我们建议先\n"
    "阅读第二章的入门示例，再根据需要查阅其余各章的内容和相关的参考资料。\n"
)
MIXED = (
    "编译命令下的中文排版支持需要借助相应的宏包，才能够完整地调用各种字体以及\n"
    "LaTeX 的全部功能；在大多数的发行版中这些宏包都已经预先安装好了，无需再次\n"
    "下载和配置任何其它文件，也不必修改系统的设置或者手动指定字体的安装路径。\n"
)


@dataclass
class Entry:
    title: str
    level: int
    page: int


def _blocks(sections):
    return [(b.kind, b.text) for s in sections for b in s.blocks]


def test_separator_rules():
    assert cjk_separator("文", "档") == ""
    assert cjk_separator("，", "档") == ""
    assert cjk_separator("文", "（") == ""
    assert cjk_separator("“", "档") == ""
    assert cjk_separator("持", "L") == " "  # Chinese then Latin: one space (see cjk_separator)
    assert cjk_separator("X", "的") == " "
    assert cjk_separator("，", "L") == ""  # fullwidth punctuation carries its own spacing
    assert cjk_separator("a", "b") is None
    assert cjk_separator(".", "T") is None


def test_breaks_inside_a_chinese_paragraph_are_joined():
    text = "第一章 简介\n" + PARAGRAPH + MIXED
    pages, sections = structure_pages([Page(number=1, text=text)])
    body = [t for kind, t in _blocks(sections) if kind == "prose"]
    assert body[0].startswith("本手册介绍")
    assert "\n" not in body[0]
    assert "文档中插入表格" in body[0] and "我们建议先阅读第二章" in body[0]
    assert "才能够完整地调用各种字体以及 LaTeX 的全部功能；" in body[-1]
    assert "无需再次下载" in body[-1]
    # the page text follows the blocks, and the heading keeps its own line
    assert pages[0].text.startswith("第一章 简介\n本手册介绍")
    assert "文档中插入表格" in pages[0].text
    assert "以及 LaTeX 的全部" in pages[0].text
    assert sections[0].heading_path == ("第一章 简介",)


def test_headings_lists_code_tables_and_short_lines_keep_their_lines():
    text = (PARAGRAPH
            + "安装步骤\n"  # a short line (heading, caption): not joined to the next one
            + PARAGRAPH
            + "• 下载安装程序并运行它，然后按照提示选择需要安装的组件和安装的目标文件夹\n"
            + "• 重新启动计算机\n"
            + "\n"
            + "    \\documentclass{ctexart}\n"
            + "    \\begin{document}\n"
            + "    中文\n"
            + "    \\end{document}\n"
            + "\n"
            + "| 命令 | 说明 |\n|---|---|\n| xelatex | 编译 |\n"
            + "\n"
            + "表 1.2: 编译命令\n"
            + "引擎 格式 命令\n")
    pages, sections = structure_pages([Page(number=1, text=text)])
    out = pages[0].text
    assert "\n安装步骤\n本手册介绍" in out
    assert "\n• 下载安装程序" in out and "\n• 重新启动计算机\n" in out
    assert "    \\begin{document}\n    中文\n    \\end{document}" in out
    assert "| 命令 | 说明 |\n|---|---|\n| xelatex | 编译 |" in out
    assert "表 1.2: 编译命令\n引擎 格式 命令" in out
    kinds = [kind for kind, _ in _blocks(sections)]
    assert "code" in kinds and "table" in kinds
    code = next(t for kind, t in _blocks(sections) if kind == "code")
    assert code.count("\n") == 3


def test_outline_headings_stay_apart_from_the_text_around_them():
    first = PARAGRAPH + "设置页面\n" + MIXED
    secs = build_sections([Page(number=1, text=first)],
                          outline=[Entry("简介", 1, 1), Entry("设置页面", 1, 1)])
    assert [s.heading_path for s in secs][-1] == ("设置页面",)
    assert secs[-1].blocks[0].text.startswith("编译命令下的中文排版")


def test_english_text_keeps_its_lines():
    text = ("The quick brown fox jumps over the lazy dog and then it keeps running along\n"
            "the river bank until the evening comes and everything goes quiet again; if\n"
            "。 its bullets were read by OCR as Chinese full stops, they stay on their lines.\n")
    pages, sections = structure_pages([Page(number=1, text=text)])
    assert pages[0].text == text
    assert sections[0].blocks[0].text == text.strip()


def test_load_document_joins_chinese_lines(tmp_path):
    path = tmp_path / "zh.txt"
    path.write_text("第一章 简介\n\n" + PARAGRAPH + "\n" + MIXED, encoding="utf-8")
    doc = load_document(path)
    assert "文档中插入表格" in doc.text
    assert "以及 LaTeX 的全部功能" in doc.text
    assert any("文档中插入表格" in b.text for s in doc.sections for b in s.blocks)
