"""A question that names a section by its own title ("the rules for the Version field") finds
that section, though its long body shares the question's common words with every other one
and a short section shares its rarer ones (relevance.add_titled)."""
from __future__ import annotations

from docchat.context.relevance import add_titled, relevance
from docchat.context.retrieval import doc_key, index_terms
from ingest.document import Block, Document, Page, Section

FILLER = ("The maintainer keeps the package source in the archive, builds it for each "
          "architecture and uploads the result; the archive software checks the upload. ")


def _section(i: int, path: tuple[str, ...], body: str) -> Section:
    return Section(i, path, len(path), i + 1, i + 1, "prose", (Block("prose", body, i + 1),))


def _doc() -> Document:
    fields = "5.6 Field descriptions"
    secs = [
        _section(0, ("5 Control files",), "Control files hold fields. " + FILLER),
        _section(1, ("5 Control files", fields),
                 "Each field of a control file is described below. " + FILLER),
        # The section asked about: long, its words the document's most common ones.
        _section(2, ("5 Control files", fields, "5.6.12 Version"),
                 "The version number of a package has the format epoch, upstream_version "
                 "and debian_revision. " + FILLER * 12),
        # A short section sharing the question's rarer words (rules, field).
        _section(3, ("5 Control files", fields, "5.6.31 Rules-Requires-Root"),
                 "This field says whether the rules file needs root; the rules targets "
                 "read this field. " + FILLER),
        # Change log entries: "Version" in their titles, with numbers the question lacks.
        *[_section(4 + k, ("22 Upgrading checklist", f"22.{k + 1} Version 4.1.{5 - k}"),
                   f"The rules for the Version field and the Rules-Requires-Root field were "
                   f"changed in this release ({k}). " + FILLER) for k in range(3)],
    ]
    # Other chapters, so that the question's words are rarer than in half of the sections.
    secs += [_section(len(secs) + k, (f"{7 + k} {topic}",), f"{topic} are described here: "
                      f"what they hold and when they run. " + FILLER)
             for k, topic in enumerate(["Maintainer scripts", "Shared libraries", "Menus",
                                        "Documentation files", "Cron jobs", "Log files",
                                        "Fonts", "Sockets", "Users and groups", "Mail"])]
    return Document(path="policy.pdf", sha256="policy", name="policy.pdf", kind="pdf",
                    language="en", pages=[Page(i + 1, "") for i in range(len(secs))],
                    sections=secs)


QUESTION = "What are the rules for the Version field of a Debian package?"


def test_the_section_the_question_names_by_title_ranks_first():
    doc = _doc()
    rel = relevance([doc], QUESTION)
    ranked = [idx for (_, idx), _ in sorted(rel.sections.items(), key=lambda kv: -kv[1])]
    assert ranked[0] == 2  # 5.6.12 Version, not Rules-Requires-Root or a change log entry


def test_without_the_title_boost_the_long_section_loses(monkeypatch):
    """The case the boost is for: with it off, the same search ranks a short section or a
    change log entry above the section the question names."""
    import docchat.context.relevance as R
    monkeypatch.setattr(R, "TITLE_WEIGHT", 0.0)
    rel = relevance([_doc()], QUESTION)
    ranked = [idx for (_, idx), _ in sorted(rel.sections.items(), key=lambda kv: -kv[1])]
    assert ranked[0] != 2


def test_title_words_own_numbering_dropped_numbers_kept_and_shared():
    doc = _doc()
    key = doc_key(doc, 0)
    named = set(index_terms(QUESTION))
    fused = {(key, i): 1.0 for i in range(len(doc.sections))}
    out = add_titled(fused, [doc], [key], named, weight=0.5)
    assert out[(key, 2)] == 1.5  # "5.6.12 Version": its numbering is not a title word
    assert out[(key, 1)] == 1.0  # "Field descriptions": "descript" is not named
    assert out[(key, 3)] == 1.0  # "Rules-Requires-Root": "requires", "root" not named
    assert all(out[(key, i)] == 1.0 for i in (4, 5, 6))  # "Version 4.1.5": 4, 1, 5 not named
    # Two sections of the same title words share the gain; a section not found gains none.
    twin = _section(7, ("23 Appendix", "23.1 Version"), FILLER)
    doc2 = Document(path="p2.pdf", sha256="p2", name="p2.pdf", kind="pdf", language="en",
                    pages=[*doc.pages, Page(8, "")], sections=[*doc.sections, twin])
    k2 = doc_key(doc2, 0)
    both = add_titled({(k2, 2): 1.0, (k2, 7): 0.5, (k2, 3): 2.0}, [doc2], [k2], named,
                      weight=0.5)
    assert both[(k2, 2)] == 1.0 + 0.5 * 2.0 / 2 and both[(k2, 7)] == 0.5 + 0.5 * 2.0 / 2
    assert (k2, 0) not in both


def test_a_chinese_title_is_named_too():
    secs = [_section(0, ("第一章 总则",), "本章说明适用范围。" * 5),
            _section(1, ("第二章 版本号",), "版本号由纪元、上游版本和修订号组成。" * 20),
            _section(2, ("第三章 规则",), "版本 规则 版本 规则 字段 字段。" * 2)]
    doc = Document(path="zh.md", sha256="zh", name="zh.md", kind="markdown", language="zh",
                   pages=[Page(i + 1, "") for i in range(3)], sections=secs)
    key = doc_key(doc, 0)
    named = set(index_terms("版本号有什么要求？"))
    out = add_titled({(key, i): 1.0 for i in range(3)}, [doc], [key], named, weight=0.5)
    assert out[(key, 1)] == 1.5 and out[(key, 0)] == out[(key, 2)] == 1.0
