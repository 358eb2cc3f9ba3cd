"""summarize_document: single pass, map-reduce (also recursive), languages, budgets."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest
from factories import ParallelBackend, RecordingBackend, blocks_doc

from docchat.errors import ContextTooLong
from docchat.summaries.summarize import (
    SummaryCancelled,
    one_line_overview,
    plan_groups,
    render_markdown,
    summarize_document,
)
from ingest import load_document
from ingest.document import Block, Document

DATA = Path(__file__).parent.parent / "data" / "summarize"


@pytest.fixture(scope="module")
def apache() -> Document:
    return load_document(DATA / "Apache-2.0.txt")


@pytest.fixture(scope="module")
def gpl() -> Document:
    return load_document(DATA / "GPL-3.txt")


@pytest.fixture(scope="module")
def vimtutor() -> Document:
    return load_document(DATA / "vimtutor-zh.txt")


def test_short_document_is_one_pass_with_page_markers(apache):
    backend = RecordingBackend()
    summary = summarize_document(apache, backend, max_new_tokens=256)
    assert summary.mode == "single" and summary.steps == 1 and summary.groups == 1
    [prompt] = backend.prompts()
    for page in apache.pages:
        assert f"[{page.marker}]" in prompt
    assert "Grant of Patent License" in prompt and "## Overview" in prompt
    assert summary.text.startswith("NOTE0 Echo: Summary:")
    assert summary.tokens_in == backend.count_prompt_tokens(backend.requests[0][0])
    assert summary.tokens_out == len(summary.text.split())
    backend.assert_all_fit()


def test_long_document_map_reduces_every_group_and_the_reduce_sees_all(gpl):
    backend = RecordingBackend(context_window=1500)
    groups = plan_groups(gpl, backend, max_new_tokens=200)
    assert len(groups) > 3
    steps = []
    summary = summarize_document(gpl, backend, max_new_tokens=200,
                                 on_step=lambda *a: steps.append(a))
    prompts = backend.prompts()
    maps, final = prompts[:-1], prompts[-1]
    assert summary.mode == "map-reduce" and summary.groups == len(groups) == len(maps)
    for i, (group, prompt) in enumerate(zip(groups, maps)):
        assert group.text in prompt and f"Part {i + 1} of {len(groups)}" in prompt
        assert f"({group.pages})" in prompt
    # The reduce prompt holds every map note, in order, under its page range.
    positions = [final.index(f"NOTE{i} ") for i in range(len(maps))]
    assert positions == sorted(positions)
    assert all(f"### {g.pages}\n" in final for g in groups)
    assert "Combine these notes" in final
    # Every block of the document reached some map prompt (big blocks may be cut).
    mapped = "\n".join(maps)
    for section in gpl.sections:
        for block in section.blocks:
            assert block.text.strip().splitlines()[0][:60] in mapped
    assert [s[0] for s in steps] == list(range(1, len(maps) + 2))
    assert steps[-1][2] == "reduce" and steps[0][2] == f"map 1/{len(maps)}"
    backend.assert_all_fit()


def test_reduce_is_recursive_when_the_notes_do_not_fit_one_prompt(gpl):
    # Long notes and a small window: the notes need merging before the final summary.
    backend = RecordingBackend(context_window=900, reply=" ".join(f"note{i}" for i in range(150)))
    summary = summarize_document(gpl, backend, max_new_tokens=160)
    prompts = backend.prompts()
    merges = [p for p in prompts if "Merge them into one shorter set of notes" in p]
    maps = [p for p in prompts if p.startswith("Part ")]
    assert merges and len(maps) == summary.groups
    assert "Combine these notes" in prompts[-1]
    assert summary.steps == len(prompts) == len(maps) + len(merges) + 1
    backend.assert_all_fit()


def test_chinese_document_gets_chinese_prompts_and_heading(vimtutor):
    backend = RecordingBackend(context_window=4000)
    summary = summarize_document(vimtutor, backend, max_new_tokens=200)
    assert vimtutor.language == "zh" and summary.language == "zh"
    for messages, _ in backend.requests:
        assert "请用中文写作" in messages[0].content
        assert messages[-1].content.rstrip().endswith(("摘要：", "笔记："))
    markdown = render_markdown(vimtutor, summary, "echo")
    assert markdown.startswith("# 摘要：") and " 页 · " in markdown


def test_lang_overrides_the_document_language(vimtutor):
    backend = RecordingBackend(context_window=4000)
    summary = summarize_document(vimtutor, backend, lang="en", max_new_tokens=200)
    assert summary.language == "en"
    assert all("Write in English" in m[0].content for m, _ in backend.requests)


def test_a_big_section_splits_between_blocks_never_inside_a_code_block():
    code = "\n".join(f"value_{i} = compute({i}, {i + 1})" for i in range(40))
    prose = [Block("prose", f"Paragraph {i}. " + "word " * 60, page=1 + i // 3)
             for i in range(12)]
    doc = blocks_doc([prose[:6] + [Block("code", code, page=3)] + prose[6:], prose[:2]])
    backend = RecordingBackend(context_window=700)
    groups = plan_groups(doc, backend, max_new_tokens=100)
    holding = [g for g in groups if "value_0 =" in g.text]
    assert len(holding) == 1 and code in holding[0].text
    assert sum(g.text.count("## Section 0") for g in groups) >= 2  # split, headings kept
    assert "(continued)" in "".join(g.text for g in groups)
    summarize_document(doc, backend, max_new_tokens=100)
    backend.assert_all_fit()


def test_a_block_bigger_than_a_prompt_is_cut_between_lines():
    code = "\n".join(f"line_{i} = {i}" for i in range(400))
    doc = blocks_doc([[Block("code", code, page=1)]])
    backend = RecordingBackend(context_window=600)
    groups = plan_groups(doc, backend, max_new_tokens=100)
    assert len(groups) > 1
    cut = "\n".join(g.text for g in groups)
    assert all(f"line_{i} = {i}\n" in cut or cut.endswith(f"line_{i} = {i}\n```")
               for i in range(400))
    assert all(g.text.count("```") % 2 == 0 for g in groups)  # every piece is fenced


def test_page_labels_become_the_markers():
    doc = blocks_doc([[Block("prose", "Preface text.", page=1), Block("prose", "Body.", page=2)]],
               labels={1: "iv", 2: "1"})
    backend = RecordingBackend()
    summarize_document(doc, backend, max_new_tokens=50)
    assert "[p. iv] Preface text." in backend.prompts()[0]
    assert "[p. 1] Body." in backend.prompts()[0]


def test_a_window_too_small_for_the_summary_length_is_a_clear_error(gpl):
    with pytest.raises(ContextTooLong, match="lower --max-tokens"):
        summarize_document(gpl, RecordingBackend(context_window=600), max_new_tokens=500)


def test_cancel_stops_the_summary(gpl):
    cancel = threading.Event()
    backend = RecordingBackend(context_window=1500)

    def on_step(done, expected, label):
        if done == 2:
            cancel.set()

    with pytest.raises(SummaryCancelled):
        summarize_document(gpl, backend, max_new_tokens=200, on_step=on_step, cancel=cancel)
    assert len(backend.requests) == 2


def test_map_steps_run_in_parallel_up_to_concurrency(gpl):
    backend = ParallelBackend(context_window=1500)
    sequential = summarize_document(gpl, RecordingBackend(context_window=1500),
                                    max_new_tokens=200)
    summary = summarize_document(gpl, backend, max_new_tokens=200, concurrency=3)
    assert backend.max_in_flight == 3
    assert summary.groups == sequential.groups and summary.steps == sequential.steps
    assert len(summary.partials) == summary.groups and all(summary.partials)


def test_one_line_overview():
    assert one_line_overview("## Overview\n\nA **licence** for code.\n## Key points\n- x") == \
        "A licence for code."
    assert one_line_overview("## 概述\n- 这是一份合同。\n") == "这是一份合同。"
    assert one_line_overview("## Key points\n") == "Key points"
    assert len(one_line_overview("word " * 100)) == 160


def test_the_summary_file_marks_the_pages_it_covers(apache):
    from docchat.context.citations import find_sources
    from docchat.summaries.summarize import page_span

    summary = summarize_document(apache, RecordingBackend(reply="No markers here."))
    markdown = render_markdown(apache, summary, "echo")
    assert "_Apache-2.0.txt · 4 pages · single pass · echo · [pp. 1-4]_" in markdown
    assert [s.page for s in find_sources(markdown, [apache])] == [1, 2, 3, 4]
    one = blocks_doc([[Block("prose", "Only page.", 1)]])
    assert page_span(one) == "[p. 1]"
    labelled = blocks_doc([[Block("prose", "a", 1)], [Block("prose", "b", 2)]], {1: "iv", 2: "v"})
    labelled.page_labels = True
    assert page_span(labelled) == "[p. iv] – [p. v]"
    assert [s.page for s in find_sources(page_span(labelled), [labelled])] == [1, 2]


def test_an_upload_stored_under_its_hash_is_titled_by_its_own_title_or_name(apache):
    from dataclasses import replace

    from docchat.summaries.summarize import document_title

    digest = "ab" * 32
    upload = replace(apache, path=f"/data/uploads/{digest}.txt", title=digest, name="lic.txt")
    # The licence names itself on its first line; ingest's stand-in is its first heading.
    assert apache.title == "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION"
    assert document_title(upload) == document_title(apache) == "Apache License"
    backend = RecordingBackend()
    markdown = render_markdown(upload, summarize_document(upload, backend), "echo")
    assert markdown.startswith("# Summary: Apache License") and digest not in backend.prompts()[0]
    untitled = replace(upload, sections=upload.sections[1:])  # no text before a heading
    assert document_title(untitled) == "lic.txt"


def test_a_paper_is_titled_by_its_page_one_title_not_its_first_section():
    from docchat.summaries.summarize import document_title

    paper = load_document(DATA.parent / "apssamp.pdf")  # no metadata title
    assert paper.title == "I. FIRST-LEVEL HEADING:"
    assert document_title(paper) == "Manuscript Title: with Forced Linebreak"
    manual = load_document(DATA.parent / "headers.pdf")
    assert manual.title == "1 Introduction" and document_title(manual) == "Acme Widget Manual"
    numbered = blocks_doc([[Block("prose", "We study loops.", 1)]], titles=["1. Introduction"])
    numbered.title = "1. Introduction"
    assert document_title(numbered) == "x.md"
    named = blocks_doc([[Block("prose", "Text.", 1)]], titles=["Guide"])
    named.title = "A Field Guide to Loops"
    assert document_title(named) == "A Field Guide to Loops"


def test_a_step_gives_way_once_then_runs_to_its_end(apache):
    backend = RecordingBackend(reply=" ".join(f"w{i}" for i in range(60)), delay=0.01)
    summary = summarize_document(apache, backend, max_new_tokens=128, yield_to=lambda: True)
    # Someone is always waiting: the single step gives way once, then is asked again and
    # finishes whole.
    assert len(backend.requests) == 2 and summary.steps == 1
    assert summary.text == backend.reply
    calm = RecordingBackend(reply="short", delay=0.01)
    summarize_document(apache, calm, yield_to=lambda: False)
    assert len(calm.requests) == 1


LOOP = "The system handles nested loops by recording an inner trace first. "


def test_a_summary_that_loops_is_cut_there_within_64_tokens():
    from factories import Looping

    from docchat.backends.repetition import SUMMARY_NOTE

    paper = load_document(DATA.parent / "apssamp.pdf")
    backend = Looping("## Overview\nA sample paper for REVTeX. ", LOOP)
    summary = summarize_document(paper, backend, max_new_tokens=1000)
    stats = backend.last.stats
    assert stats.finish_reason == "repetition"
    assert stats.completion_tokens - backend.loop_start <= 64
    assert summary.loops == 1 and summary.text.count(LOOP.strip()) == 1
    assert summary.text.endswith(SUMMARY_NOTE["en"])
    markdown = render_markdown(paper, summary, "echo")
    assert "1 step cut where the model repeated itself" in markdown
    assert markdown.count(LOOP.strip()) == 1


def test_map_notes_that_loop_keep_the_loop_once(gpl):
    from factories import Looping

    backend = Looping("Notes on the licence terms. ", LOOP, context_window=1500)
    summary = summarize_document(gpl, backend, max_new_tokens=200)
    assert summary.mode == "map-reduce" and summary.loops == summary.steps
    assert all(p.count(LOOP.strip()) == 1 for p in summary.partials)
    reduce_prompt = backend.prompts()[-1]
    assert reduce_prompt.count(LOOP.strip()) == summary.groups


def test_runs_of_bare_citation_markers_are_dropped(apache):
    markers = "\n".join(f"[{i}]" for i in range(2, 73))
    reply = f"## Overview\nA licence for software.\n\n## References\n{markers}\n- [3] [4]\n" \
            "- Grants are perpetual [p. 2] [5]."
    summary = summarize_document(apache, RecordingBackend(reply=reply))
    assert "[72]" not in summary.text and "[3] [4]" not in summary.text
    assert "- Grants are perpetual [p. 2] [5]." in summary.text
    assert "A licence for software." in summary.text


def test_every_statement_is_checked_and_marked_in_the_markdown():
    paper = load_document(DATA.parent / "apssamp.pdf")
    reply = ("## Overview\nREVTeX requires version 8.31a or later of natbib.\n"
             "REVTeX requires version 2.5 or later of natbib.\n"
             "The authors work with a team at Google.\n")
    summary = summarize_document(paper, RecordingBackend(reply=reply))
    check = summary.check
    assert [s.status for s in check.statements if s.status != "exempt"] == [
        "supported", "not_found", "not_found"]
    assert (check.supported, check.total) == (1, 3)
    markdown = render_markdown(paper, summary, "echo")
    assert "natbib. [p. 2]\n" in markdown
    assert "2.5 or later of natbib. *(not found in the document)*" in markdown
    assert "Google. *(not found in the document)*" in markdown
    assert markdown.rstrip().endswith("_1 of 3 statements found in the documents._")


def test_a_chinese_summary_gets_the_chinese_legend(vimtutor):
    reply = "## 概述\n这是一份虚构的合同，金额为 999 万元。"
    summary = summarize_document(vimtutor, RecordingBackend(reply=reply))
    markdown = render_markdown(vimtutor, summary, "echo")
    assert summary.check.total == 1 and "（文档中未找到）" in markdown
    assert "1 条陈述中有 0 条可在文档中找到" in markdown


def test_a_summary_statement_that_contradicts_its_page_is_marked_in_the_file():
    from docchat.context.claims import Source, check_answer
    from docchat.summaries.checks import legend, mark_statements

    page = Source(1, "guide.pdf", 2, "1", "The default port is 8731. Keep the lid closed.")
    text = "The default port is 8731. The default port is 9999."
    check = check_answer(text, [page])
    marked = mark_statements(text, check)
    assert "The default port is 9999. *(contradicts the document: p. 1 says “8731”)*" in marked
    assert marked.rstrip().endswith(
        "_1 of 2 statements found in the documents; 1 contradicts them._")
    assert legend(1, 2, "zh", 1) == "2 条陈述中有 1 条可在文档中找到；1 条与文档矛盾"
