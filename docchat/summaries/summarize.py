"""Summaries of whole documents: one pass when a document fits, else map-reduce.

The map step summarises groups of whole sections that fit the window; the reduce step
combines the notes, recursively when they do not fit one prompt. Every prompt is
measured with the backend's own ``count_prompt_tokens`` against
``context_window - max_new_tokens``.
"""
from __future__ import annotations

import functools
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from docchat.backends import Backend, GenerationRequest, Message
from docchat.backends.repetition import SUMMARY_NOTE
from docchat.context.claims import AnswerCheck
from docchat.errors import BackendError, ContextTooLong, DocchatError
from docchat.summaries.checks import check_summary, clean_step
from docchat.summaries.grouping import Group, group_sections, render_section
from docchat.summaries.output import (
    document_title,
    one_line_overview,
    page_span,
    render_markdown,
)
from ingest.document import Block, Document

logger = logging.getLogger(__name__)

__all__ = ["PROMPT_VERSION", "Group", "Summary", "SummaryCancelled", "document_title",
           "one_line_overview", "output_language", "page_span", "plan_groups",
           "render_markdown", "summarize", "summarize_document", "summary_messages"]

# Bump when prompts or the output format change: stored summaries are then redone.
PROMPT_VERSION = 3  # 3: loops cut, the document's own title, statements checked

StepCallback = Callable[[int, int, str], None]  # (steps done, steps expected, label)
# A step gives way to requests waiting behind it at most this often (then it runs to its end).
YIELDS_PER_STEP = 1


class SummaryCancelled(DocchatError):
    """The summary was stopped before it finished."""


@dataclass
class Summary:
    text: str  # the backend's summary (Markdown body)
    language: str  # "en" or "zh": the language asked for
    mode: str  # "single" or "map-reduce"
    groups: int = 1  # map inputs (1 for a single pass)
    steps: int = 0  # generations made
    tokens_in: int = 0  # prompt tokens over all steps
    tokens_out: int = 0  # generated tokens over all steps
    seconds: float = 0.0
    partials: list[str] = field(default_factory=list)  # map notes, in document order
    loops: int = 0  # steps cut where the model began repeating itself
    check: AnswerCheck | None = None  # each statement of text matched to the document

    @property
    def overview(self) -> str:
        """One line from the Overview part, for indexes and lists."""
        return one_line_overview(self.text)


def output_language(doc_language: str, lang: str = "auto") -> str:
    """The language a summary is written in: the document's unless lang is en or zh."""
    if lang in ("en", "zh"):
        return lang
    if lang != "auto":
        raise DocchatError(f"Unknown summary language {lang!r}: use auto, en or zh.")
    return "zh" if doc_language == "zh" else "en"


# --- prompts ------------------------------------------------------------------------
_SYSTEM = {
    "en": "You summarise documents faithfully, using only the text given. Keep headings, "
          "numbers, dates, names of parties and obligations exactly as written, and cite "
          "pages with the markers in the text, e.g. [p. 3]. Write in English.",
    "zh": "你忠实地总结文档，只使用所给文本。标题、数字、日期、当事方名称和义务要与原文一致，"
          "并用文中的页码标记注明出处，例如 [p. 3]。请用中文写作。",
}
_FORMAT = {
    "en": "Write it in Markdown with exactly these parts:\n"
          "## Overview\nTwo or three sentences on what the document is and does.\n"
          "## Key points\nOne ### heading per main section with bullet points; end each point "
          "with its page marker, e.g. [p. 3].\n"
          "## Figures, dates and obligations\nBullet the notable numbers, amounts, dates, "
          "parties and obligations (who must do what), each with its page marker.",
    "zh": "用 Markdown 写，包含且仅包含以下部分：\n"
          "## 概述\n用两三句话说明文档是什么、做什么。\n"
          "## 要点\n每个主要章节一个 ### 标题，下列要点；每条以页码标记结尾，例如 [p. 3]。\n"
          "## 数字、日期与义务\n列出重要的数字、金额、日期、当事方和义务（谁必须做什么），"
          "每条注明页码标记。",
}
_TEXTS = {
    "en": {
        "single": 'The document "{title}" follows.\n\n{text}\n\nSummarise the whole '
                  "document above. {format}\nSummary:",
        "final": 'Notes on consecutive parts of the document "{title}" follow, each headed by '
                 "its pages.\n\n{text}\n\nCombine these notes into one summary of the whole "
                 "document. {format}\nSummary:",
        "map": 'Part {i} of {n} of the document "{title}" ({pages}) follows.\n\n{text}\n\n'
               "Write concise notes on this part: for each section keep its heading, then "
               "bullet its key points, numbers, dates, parties and obligations, each with its "
               "page marker, e.g. [p. 3].\nNotes:",
        "merge": 'Notes on consecutive parts of the document "{title}" follow.\n\n{text}\n\n'
                 "Merge them into one shorter set of notes in the same order, keeping section "
                 "headings, numbers, dates, parties, obligations and page markers.\nNotes:",
    },
    "zh": {
        "single": "以下是文档《{title}》。\n\n{text}\n\n请总结上面的整篇文档。{format}\n摘要：",
        "final": "以下是文档《{title}》各连续部分的笔记，每份笔记以其页码范围为标题。\n\n{text}"
                 "\n\n请把这些笔记合并成整篇文档的一份摘要。{format}\n摘要：",
        "map": "以下是文档《{title}》的第 {i}/{n} 部分（{pages}）。\n\n{text}\n\n"
               "请为这一部分写简明笔记：每个章节保留其标题，然后用要点列出关键内容、数字、日期、"
               "当事方和义务，每条注明页码标记，例如 [p. 3]。\n笔记：",
        "merge": "以下是文档《{title}》各连续部分的笔记。\n\n{text}\n\n"
                 "请按原顺序把它们合并成一份更短的笔记，保留章节标题、数字、日期、当事方、义务和"
                 "页码标记。\n笔记：",
    },
}


def summary_messages(kind: str, language: str, title: str, text: str, **fields) -> list[Message]:
    """Chat messages for one step: kind is single, map, merge or final (en or zh)."""
    lang = "zh" if language == "zh" else "en"
    user = _TEXTS[lang][kind].format(title=title, text=text, format=_FORMAT[lang], **fields)
    return [Message("system", _SYSTEM[lang]), Message("user", user)]


def plan_groups(doc: Document, backend: Backend, lang: str = "auto",
                max_new_tokens: int = 512) -> list[Group]:
    """Split doc into consecutive groups whose map prompts each fit the window."""
    language = output_language(doc.language, lang)
    budget = _budget(backend, max_new_tokens)
    title = document_title(doc)
    overhead = backend.count_prompt_tokens(
        summary_messages("map", language, title, "", i=99, n=99, pages="p. 9999–p. 9999"))
    # Room for passages; 16 tokens plus 2% absorbs the joins between passages.
    room = budget - overhead - 16 - budget // 50
    if room < 64:
        raise ContextTooLong(
            f"The context window ({backend.context_window:,} tokens) leaves no room for "
            f"passages next to a {max_new_tokens:,}-token summary: lower --max-tokens.")

    def fits(group: Group) -> bool:
        return backend.count_prompt_tokens(summary_messages(
            "map", language, title, group.text, i=99, n=99, pages=group.pages)) <= budget

    # Sections are measured more than once; an HTTP backend counts with a round trip.
    count = functools.lru_cache(maxsize=4096)(backend.count_tokens)
    return group_sections(doc, room, count, fits)


def _budget(backend: Backend, max_new_tokens: int) -> int:
    return int(backend.context_window) - int(max_new_tokens)


# --- generation ---------------------------------------------------------------------
@dataclass
class _Run:
    backend: Backend
    language: str
    title: str
    max_new_tokens: int
    cancel: threading.Event
    concurrency: int
    on_step: StepCallback | None
    on_queue: Callable[[int], None] | None = None
    yield_to: Callable[[], bool] | None = None
    steps: int = 0
    yields: int = 0
    expected: int = 1
    tokens_in: int = 0
    tokens_out: int = 0
    looped: list[str] = field(default_factory=list)  # labels of the steps cut for a loop

    def generate(self, messages: list[Message], label: str) -> tuple[str, int, int]:
        if self.cancel.is_set():
            raise SummaryCancelled("The summary was stopped.")
        prompt_tokens = self.backend.count_prompt_tokens(messages)
        budget = _budget(self.backend, self.max_new_tokens)
        if prompt_tokens > budget:  # planning guarantees this never happens
            raise ContextTooLong(f"A {label} prompt of {prompt_tokens:,} tokens exceeds the "
                                 f"{budget:,}-token budget; lower --max-tokens.")
        start = time.perf_counter()
        for attempt in range(YIELDS_PER_STEP + 1):
            may_yield = self.yield_to is not None and attempt < YIELDS_PER_STEP
            request, text, yielded = self._attempt(messages, may_yield)
            if self.cancel.is_set():
                raise SummaryCancelled("The summary was stopped.")
            if not (yielded and request.stats.stopped):
                break
            self.yields += 1
            logger.info("summary %s gave way to a request waiting for the model", label)
        if request.stats.stopped:
            raise SummaryCancelled("The summary was stopped.")
        stats = request.stats
        # A loop is cut where its first repeat began: the notes and the summary keep none.
        text, looped = clean_step(text, stats)
        if looped:
            self.looped.append(label)
        tokens_in = stats.prompt_tokens or prompt_tokens
        tokens_out = stats.completion_tokens or self.backend.count_tokens(text)
        logger.info("summary %s: backend=%s prompt_tokens=%d completion_tokens=%d %.2fs%s",
                    label, self.backend.name, tokens_in, tokens_out,
                    time.perf_counter() - start, ", loop cut" if looped else "")
        return text, tokens_in, tokens_out

    def _attempt(self, messages: list[Message],
                 may_yield: bool) -> tuple[GenerationRequest, str, bool]:
        """One try at a step: (request, text, gave way). With may_yield, the step is stopped
        (to be asked again, behind them) when others wait for the model while it is in its
        first half: a question asked during a run then waits for part of a step at most."""
        if not may_yield:
            request = GenerationRequest(messages=messages, max_new_tokens=self.max_new_tokens,
                                        temperature=0.0, cancel=self.cancel,
                                        on_queue=self.on_queue)
            return request, "".join(self.backend.stream(request)), False
        step_cancel, running, finished = threading.Event(), threading.Event(), threading.Event()
        pieces: list[str] = []
        yielded: list[bool] = []

        def on_queue(ahead: int) -> None:
            if ahead == 0:
                running.set()  # our turn: from now on, others waiting are behind us
            if self.on_queue:
                self.on_queue(ahead)

        def watch() -> None:
            while not finished.wait(0.05):
                if self.cancel.is_set():
                    step_cancel.set()
                    return
                if running.is_set() and len(pieces) < self.max_new_tokens // 2 \
                        and self.yield_to():
                    yielded.append(True)
                    step_cancel.set()
                    return

        request = GenerationRequest(messages=messages, max_new_tokens=self.max_new_tokens,
                                    temperature=0.0, cancel=step_cancel, on_queue=on_queue)
        watcher = threading.Thread(target=watch, name="summary-yield", daemon=True)
        watcher.start()
        try:
            for piece in self.backend.stream(request):
                pieces.append(piece)
        finally:
            finished.set()
            watcher.join()
        return request, "".join(pieces), bool(yielded)

    def run_all(self, jobs: list[tuple[list[Message], str]]) -> list[str]:
        """Generate every job (in parallel up to concurrency); results in job order."""
        results: list[str] = [""] * len(jobs)

        def record(i: int, outcome: tuple[str, int, int], label: str) -> None:
            results[i] = outcome[0]
            self.steps += 1
            self.tokens_in += outcome[1]
            self.tokens_out += outcome[2]
            if self.on_step:
                self.on_step(self.steps, self.expected, label)

        if self.concurrency <= 1 or len(jobs) <= 1:
            for i, (messages, label) in enumerate(jobs):
                record(i, self.generate(messages, label), label)
            return results
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(jobs)),
                                thread_name_prefix="summary") as pool:
            futures = [pool.submit(self.generate, m, label) for m, label in jobs]
            try:
                # In job order; every future is waited for in the caller's thread.
                for i, (future, (_, label)) in enumerate(zip(futures, jobs)):
                    record(i, future.result(), label)
            except BaseException as e:
                for f in futures:
                    f.cancel()
                if isinstance(e, (KeyboardInterrupt, SummaryCancelled)):
                    self.cancel.set()  # stop the generations still running, too
                raise
        return results


def summarize_document(doc: Document, backend: Backend, lang: str = "auto", *,
                       max_new_tokens: int = 512, on_step: StepCallback | None = None,
                       cancel: threading.Event | None = None,
                       concurrency: int = 1,
                       on_queue: Callable[[int], None] | None = None,
                       yield_to: Callable[[], bool] | None = None) -> Summary:
    """Summarise doc: one pass when it fits the window, else map-reduce over sections.

    on_step(done, expected, label) is called in the caller's thread after each
    generation; concurrency > 1 runs map steps in parallel (for HTTP backends).
    on_queue(ahead) is each step's place in an in-process backend's queue; every step
    takes its own turn, so other users' questions are served between steps.
    yield_to() is True while requests wait for the model behind the step in progress;
    given, a step in its first half gives way to them (once), then is asked again.
    """
    start = time.perf_counter()
    language = output_language(doc.language, lang)
    title = document_title(doc)
    run = _Run(backend, language, title, max_new_tokens, cancel or threading.Event(),
               max(1, concurrency), on_step, on_queue, yield_to)
    whole = _render_whole(doc)
    if not whole.strip():
        raise DocchatError(f"{doc.name} has no text to summarise.")
    single = summary_messages("single", language, title, whole)
    # doc.tokens (ingest's count) is a cheap first look; far over the window, skip the
    # exact count of the whole text (a server round trip for HTTP backends).
    far_too_long = doc.tokens > 4 * backend.context_window
    if not far_too_long and backend.count_prompt_tokens(single) <= _budget(backend,
                                                                            max_new_tokens):
        text = run.run_all([(single, "single pass")])[0]
        mode, partials, n_groups = "single", [], 1
    else:
        groups = plan_groups(doc, backend, language, max_new_tokens)
        run.expected = len(groups) + 1
        partials = run.run_all([
            (summary_messages("map", language, title, g.text, i=i + 1, n=len(groups),
                              pages=g.pages), f"map {i + 1}/{len(groups)}")
            for i, g in enumerate(groups)])
        notes = [f"### {g.pages}\n{p}" for g, p in zip(groups, partials)]
        text = _reduce(run, notes)
        mode, n_groups = "map-reduce", len(groups)
    if not text:
        raise BackendError(f"The {backend.name} backend returned an empty summary for "
                           f"{doc.name}; try a larger model or a higher --max-tokens.")
    check = check_summary(doc, text)
    if run.looped and run.looped[-1] in ("single pass", "reduce"):
        text = f"{text}\n\n{SUMMARY_NOTE[language]}"  # the final text was cut here
    return Summary(text=text, language=language, mode=mode, groups=n_groups,
                   steps=run.steps, tokens_in=run.tokens_in, tokens_out=run.tokens_out,
                   seconds=time.perf_counter() - start, partials=partials,
                   loops=len(run.looped), check=check)


def _render_whole(doc: Document) -> str:
    parts = [render_section(doc, s.heading, s.blocks) for s in doc.sections]
    text = "\n\n".join(p for p in parts if p.strip())
    if not text:
        text = "\n\n".join(render_section(doc, "", [Block("prose", p.text, p.number)])
                           for p in doc.pages if p.text.strip())
    return text


def _reduce(run: _Run, notes: list[str]) -> str:
    """Combine notes into the final summary, merging batches first while they overflow."""
    budget = _budget(run.backend, run.max_new_tokens)

    def messages(kind: str, batch: list[str]) -> list[Message]:
        return summary_messages(kind, run.language, run.title, "\n\n".join(batch))

    level = 0
    while True:
        final = messages("final", notes)
        if run.backend.count_prompt_tokens(final) <= budget:
            return run.run_all([(final, "reduce")])[0]
        level += 1
        batches = _batches(
            notes, lambda b: run.backend.count_prompt_tokens(messages("merge", b)) <= budget)
        if len(batches) >= len(notes):
            raise ContextTooLong(
                f"Notes of up to {run.max_new_tokens:,} tokens do not fit two to a prompt in "
                f"a {run.backend.context_window:,}-token window: lower --max-tokens.")
        run.expected += len(batches)
        merged = run.run_all([(messages("merge", b), f"reduce {level}.{i + 1}/{len(batches)}")
                              for i, b in enumerate(batches)])
        notes = [f"{_span(b)}\n{m}" for b, m in zip(batches, merged)]


def _span(batch: list[str]) -> str:
    """Heading for merged notes: from the first note's pages to the last note's."""
    first = batch[0].splitlines()[0].removeprefix("### ")
    last = batch[-1].splitlines()[0].removeprefix("### ")
    return f"### {first.split('–')[0]}–{last.split('–')[-1]}" if len(batch) > 1 else \
        f"### {first}"


def _batches(items: list[str], fits: Callable[[list[str]], bool]) -> list[list[str]]:
    batches: list[list[str]] = [[]]
    for item in items:
        if batches[-1] and not fits(batches[-1] + [item]):
            batches.append([])
        batches[-1].append(item)
    return batches


# The package exports this name (docchat.summaries.summarize).
summarize = summarize_document

