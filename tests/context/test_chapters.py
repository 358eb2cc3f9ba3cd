"""A question that names a chapter ("Which chapter is about ..., and what are its
sections?") gets the sub-outline of the chapter that holds its best-matching part, not of
that part alone (outline.chapter_of, focus_outline(chapter=)); where the chapters are
(outline.chapter_depth): under Parts, under one title heading."""
from __future__ import annotations

from docchat.context.outline import chapter_depth, chapter_of, entries_of, focus_outline
from docchat.context.passages import TokenCounter
from docchat.context.retrieval import asks_chapter
from ingest.document import Block, Document, Page, Section


class Chars:
    """Counts a character as a token."""
    name = "chars"

    def count_tokens(self, text: str) -> int:
        return len(text)


def book(paths: list[tuple[str, ...]]) -> Document:
    secs = [Section(index=i, heading_path=p, level=len(p), page_start=i + 1, page_end=i + 1,
                    kind="prose", blocks=(Block("prose", f"Text of {p[-1]}.", i + 1),))
            for i, p in enumerate(paths)]
    return Document(path="m.pdf", sha256="m", name="m.pdf", kind="pdf", language="en",
                    pages=[Page(k, "") for k in range(1, len(secs) + 1)], sections=secs)


def manual() -> Document:
    """Chapters 1-4, each with sections k.1 and k.2, each section with two subsections."""
    paths = []
    for c in range(1, 5):
        ch = f"{c} Chapter {c}"
        paths.append((ch,))
        for s in (1, 2):
            sec = f"{c}.{s} Section {c}.{s}"
            paths.append((ch, sec))
            paths += [(ch, sec, f"{c}.{s}.{k} Topic {c}.{s}.{k}") for k in (1, 2)]
    return book(paths)


def test_the_chapter_that_holds_the_best_part_is_shown_whole():
    doc = manual()
    counter = TokenCounter(Chars(), "chars")
    # The hits are in section 3.2's subsections (positions 19 and 20; 3.2 is 18).
    rel = [{19: 1.0, 20: 0.8}]
    alone = focus_outline([doc], counter, 5000, rel)
    assert alone.startswith("- m.pdf: 3 Chapter 3 > 3.2 Section 3.2") and "3.1" not in alone
    chapter = focus_outline([doc], counter, 5000, rel, chapter=True)
    assert chapter.startswith("- m.pdf: 3 Chapter 3 [p. 15]")
    assert "  3.1 Section 3.1" in chapter and "    3.2.2 Topic 3.2.2" in chapter
    assert "Chapter 4" not in chapter
    # For a question about structure (several parts), each part becomes its chapter once.
    rel = [{19: 1.0, 20: 0.8, 16: 0.7, 5: 0.5}]  # 3.2 and 3.1 topics, one of 1.2
    parts = focus_outline([doc], counter, 5000, rel, parts=3, chapter=True)
    heads = [h.split(" [")[0] for h in parts.splitlines() if h.startswith("- m.pdf:")]
    assert heads == ["- m.pdf: 3 Chapter 3", "- m.pdf: 1 Chapter 1"]


def test_chapter_depth_under_parts_and_under_one_title():
    assert chapter_depth(manual()) == 1
    parts = book([("Part I Basics",), ("Part I Basics", "1 Setup"),
                  ("Part I Basics", "1 Setup", "1.1 Install"), ("Part I Basics", "2 Usage"),
                  ("Part II Reference",), ("Part II Reference", "3 Options"),
                  ("Part II Reference", "3 Options", "3.1 Keys")])
    assert chapter_depth(parts) == 2
    es = entries_of(parts)
    install = next(k for k, e in enumerate(es) if "1.1 Install" in e.line)
    setup = next(k for k, e in enumerate(es) if e.line.strip().startswith("1 Setup"))
    assert chapter_of(parts, install) == setup
    part = next(k for k, e in enumerate(es) if e.line.startswith("Part II"))
    assert chapter_of(parts, part) == part  # a Part stays what it is
    titled = book([("Guide",), ("Guide", "Install"), ("Guide", "Install", "On Debian"),
                   ("Guide", "Usage")])
    assert chapter_depth(titled) == 2
    # Unnumbered lists and a guide over numbered chapters (the glossaries manual).
    guide = book([("List of Tables",), ("User Guide",), ("User Guide", "1. Introduction"),
                  ("User Guide", "1. Introduction", "1.1. Sample Files"),
                  ("User Guide", "2. Package Options"), ("Index",)])
    assert chapter_depth(guide) == 2
    es = entries_of(guide)
    sample = next(k for k, e in enumerate(es) if "1.1. Sample" in e.line)
    assert es[chapter_of(guide, sample)].line.strip().startswith("1. Introduction")


def test_questions_that_name_a_chapter():
    assert asks_chapter("Which chapter covers swap, and what are its sections?")
    assert asks_chapter("What sections does the chapter on page references have?")
    assert asks_chapter("讲文本处理的那一章分成哪些节？")
    assert not asks_chapter("What are the sections about worked answers?")
    assert not asks_chapter("这个宏包的章程是什么？")


def test_chapters_named_by_number_or_place():
    from docchat.context.outline import named_chapter
    from docchat.context.retrieval import named_chapter as named
    from docchat.context.retrieval import zh_number

    assert named("What topics does the last, miscellaneous chapter cover?") == ("place", -1)
    assert named("What does the opening chapter of the manual cover?") == ("place", 1)
    assert named("Which sections are in chapter 12?") == ("number", 12)
    assert named("手册第 4 章往下有哪些标题？") == ("number", 4)
    assert named("第十二章讲了什么？") == ("number", 12)
    assert named("最后一章有哪些小节？") == ("place", -1)
    assert named("Which chapter covers swap?") is None
    assert [zh_number(t) for t in ("三", "十", "十二", "二十", "二十五", "7", "百")] == [
        3, 10, 12, 20, 25, 7, None]
    doc = manual()
    es = entries_of(doc)
    title = [e.line.split(" [")[0] for e in es]
    assert title[named_chapter(doc, ("place", -1))] == "4 Chapter 4"
    assert title[named_chapter(doc, ("number", 2))] == "2 Chapter 2"
    assert named_chapter(doc, ("number", 9)) is None
    # An introduction whose number was lost counts back from the first numbered chapter;
    # contents and index are no chapters where none is numbered.
    lost = book([("Preface",), ("Introduction",), ("Introduction", "1.1 Aims"),
                 ("Chapter 2 Input",), ("Chapter 2 Input", "2.1 Files"), ("Index",)])
    es = entries_of(lost)
    assert es[named_chapter(lost, ("place", 1))].line.startswith("Introduction")
    assert es[named_chapter(lost, ("place", -1))].line.startswith("Chapter 2 Input")
    plain = book([("Contents",), ("Getting started",), ("Usage",), ("Index",)])
    es = entries_of(plain)
    assert es[named_chapter(plain, ("place", 1))].line.startswith("Getting started")
    assert es[named_chapter(plain, ("place", -1))].line.startswith("Usage")


def test_focus_outline_shows_the_chapter_named_by_its_place():
    doc = manual()
    counter = TokenCounter(Chars(), "chars")
    rel = [{19: 1.0, 20: 0.8}]  # the words match chapter 3
    last = focus_outline([doc], counter, 5000, rel, chapter=True, chapter_ref=("place", -1))
    assert last.startswith("- m.pdf: 4 Chapter 4")
