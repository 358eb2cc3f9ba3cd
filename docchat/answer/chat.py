"""Answers generated in background threads, saved to SQLite while they stream.

A page starts a Generation and polls it; the Generation outlives the page, so a closed tab,
a reload or a Stop loses nothing: a saver thread writes the text shown so far at least every
``save_interval`` seconds (status "streaming"), and the end writes the whole answer with its
metrics and status ("done", "stopped" or "error").
"""
from __future__ import annotations

import logging
import re
import threading
import time
from typing import Callable, Iterator, Sequence

from sqlite_utils.db import NotFoundError

from docchat.backends import Cancel, Message
from docchat.backends.repetition import NOTE
from docchat.context.facts import abbreviation_at
from docchat.errors import DocchatError
from docchat.watch import Watched

logger = logging.getLogger(__name__)

GENERIC_ERROR = "Something went wrong while answering; try again, and see the server log."

# Builds the answer: (cancel event, queue callback) -> an iterable Answer (docchat.answer.qa.Answer)
# (docchat.answer.session.answer_factory makes one).
AnswerFactory = Callable[[threading.Event, Callable[[int], None]], object]

# The streamed answer is checked again whenever a sentence (or line) ends, at most this often
# (seconds): a check of 1,000 tokens takes ~50 ms, in its own thread, so the stream never waits.
LIVE_CHECK_INTERVAL = 0.3
# Where a finished sentence ends: its closing punctuation (and quotes, brackets, a citation)
# before a space, a Chinese full stop, or a line end.
_SENTENCE_END = re.compile(r"[.!?](?:[\"')\]]*)(?:\s*\[[^\]\n]{1,40}\])?(?=\s)|[。！？]"
                           r"(?:[」』”）)]*)(?:\s*\[[^\]\n]{1,40}\])?|\n")


# A full stop that ends no sentence: a list item's number ("3. "), an abbreviation ("e.g. ",
# as the checker's sentences read them: facts.abbreviation_at).
_LIST_NUMBER = re.compile(r"\s*(?:\d{1,3}|[A-Za-z])")


def finished_length(text: str) -> int:
    """The length of text's finished sentences (0 before the first one ends)."""
    for m in reversed(list(_SENTENCE_END.finditer(text))):
        if text[m.start()] == ".":
            line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
            if _LIST_NUMBER.fullmatch(line) or abbreviation_at(text, m.start()):
                continue
        return m.end()
    return 0


class Generation(Watched):
    """One answer in flight: its text so far, its state, and a condition to wait on."""

    def __init__(self, session_id: str, turn_id: int, question: str, owner: str = "") -> None:
        super().__init__()
        self.session_id = session_id
        self.turn_id = turn_id
        self.question = question
        self.previous = ""  # the answer before this one in the session, if any
        self.owner = owner  # the browser session that asked
        self.submitted_at = time.perf_counter()
        self.text = ""
        self.status = "queued"  # queued -> streaming -> done | stopped | error
        self.ahead: int | None = None  # answers ahead in the backend's queue
        self.progress = None  # the backend's latest PrefillProgress while it reads the prompt
        self.evidence: list[dict] = []  # the packed sections' best sentences (evidence.py)
        self.evidence_at: float | None = None
        self.metrics: dict = {}
        self.error: str | None = None
        self.sources: list[dict] = []
        # The statement checks of the text streamed so far (AnswerCheck.to_dict() of its
        # first ``checked`` characters, its finished sentences); the end's check is saved.
        self.live_check: dict | None = None
        self.checked = 0
        self.cancel = Cancel()
        self.answer = None
        self.stop_requested = False
        self._stop_saving = threading.Event()
        self._stop_checking = threading.Event()
        # Timings (perf_counter seconds / ms), for metrics["app"].
        self.first_chunk_at: float | None = None
        self.backend_called_ms: float | None = None  # asked -> backend.stream() called
        self.backend_ttft_ms: float | None = None  # backend's own first token, queue excluded

    def stop(self) -> None:
        """Cancel the backend; the text shown so far is kept, marked as stopped."""
        self.stop_requested = True
        self.cancel.set()
        if self.answer is not None:
            self.answer.stop()
        self._bump()

    def _bump(self, **changes) -> None:
        with self._cond:
            for k, v in changes.items():
                setattr(self, k, v)
            self._changed()

    def _on_queue(self, ahead: int) -> None:
        self._bump(ahead=ahead)

    def _on_progress(self, progress) -> None:
        self._bump(progress=progress)

    def run(self, make_answer: AnswerFactory, open_store: Callable[[], object],
            save_interval: float = 0.5, on_end: Callable[["Generation"], None] | None = None,
            sources: Callable[[str, object], list[dict]] | None = None,
            marks: Callable[[str, object], dict | None] | None = None,
            check_interval: float = LIVE_CHECK_INTERVAL) -> None:
        """Produce the answer (in the calling thread), saving as it grows and checking its
        statements as they end; never raises."""
        saver = threading.Thread(target=self._save_loop, args=(open_store, save_interval),
                                 name=f"docchat-save-{self.turn_id}", daemon=True)
        saver.start()
        checker = None
        if marks is not None:
            checker = threading.Thread(target=self._check_loop, args=(marks, check_interval),
                                       name=f"docchat-check-{self.turn_id}", daemon=True)
            checker.start()
        status, error, metrics = "done", None, {}
        answer = None
        try:
            answer = make_answer(self.cancel, self._on_queue)
            self.answer = answer
            if hasattr(answer, "on_progress"):
                answer.on_progress = self._on_progress  # set before the backend is called
            found = getattr(answer, "evidence", None)
            if found is not None:
                self._bump(evidence=[e.to_dict() for e in found],
                           evidence_at=time.perf_counter())
            if self.stop_requested:
                answer.stop()
            for chunk in answer:
                if self.status != "streaming":
                    self._bump(status="streaming", ahead=0, first_chunk_at=time.perf_counter())
                self._bump(text=self.text + chunk)
            metrics = dict(answer.metrics or {})
            self._keep_final_text(answer, metrics)
            status = "stopped" if (answer.stopped or self.stop_requested) else "done"
        except DocchatError as e:
            status, error = "error", str(e)
        except Exception:  # a thread boundary: log it, show the user a short message
            logger.exception("answer for session %s failed", self.session_id)
            status, error = "error", GENERIC_ERROR
        finally:
            if status == "error" and self.stop_requested:  # a cut-off stream after Stop
                status, error = "stopped", None
            if not metrics and answer is not None and answer.metrics:
                metrics = dict(answer.metrics)  # what was measured before the error
            metrics["app"] = self._timings()
            if error:
                metrics["error"] = error
            self._stop_checking.set()
            if checker is not None:
                checker.join(10)
            self._annotate(metrics, getattr(answer, "packed", None), sources, marks)
            self._finish(open_store, status, error, metrics, saver)
            if on_end is not None:
                on_end(self)

    def _keep_final_text(self, answer, metrics: dict) -> None:
        """A looping answer is saved as qa.ask kept it: the text before the loop and the note
        that says it was cut there, not the loop's first repeats that were already shown."""
        final = getattr(answer, "text", None)
        if metrics.get("finish_reason") == "repetition" and isinstance(final, str) \
                and final and final != self.text:
            self._bump(text=final)

    def _annotate(self, metrics: dict, packed, sources, marks) -> None:
        """The cited pages and the statements' checks, kept in the metrics; a failure there
        is logged (the answer must still be saved and the page released)."""
        if not self.text:
            return
        try:
            if sources is not None:
                self.sources = sources(self.text, packed)
                metrics["sources"] = self.sources
        except Exception:
            logger.exception("finding the sources of answer %s failed", self.turn_id)
        try:
            checks = marks(self.text, packed) if marks is not None else None
            if checks is not None:
                metrics["checks"] = checks
        except Exception:
            logger.exception("checking the statements of answer %s failed", self.turn_id)
        said = _without_our_notes(self.text)  # the model's words, not docchat's cut note
        if _language_mismatch(self.question, said):
            metrics["language_mismatch"] = True
        if _echo(said, self.question):  # our instruction or the question said back
            metrics["echo"] = True
        elif self.previous and _repeats(said, _without_our_notes(self.previous)):
            metrics["repeats_previous"] = True
        if metrics.get("echo") or metrics.get("language_mismatch"):
            metrics["question_language"] = _language_of(self.question)

    def _check_loop(self, marks: Callable[[str, object], dict | None], interval: float) -> None:
        """Check the finished sentences of the text so far whenever one more has ended (at
        most every interval seconds), until the answer ends; the page shows the marks."""
        version = -1
        while not self._stop_checking.is_set():
            version = self.wait(version, interval)
            text, packed = self.text, getattr(self.answer, "packed", None)
            cut = finished_length(text)
            if packed is None or cut <= self.checked or self._stop_checking.is_set():
                continue
            try:
                check = marks(text[:cut], packed)
            except Exception:  # the end's check logs it again, and saves the answer anyway
                logger.exception("checking answer %s while it streams failed", self.turn_id)
                return
            if check is not None and not self._stop_checking.is_set():
                self._bump(live_check=check, checked=cut)
            self._stop_checking.wait(interval)

    def _timings(self) -> dict:
        first = self.first_chunk_at
        shown = self.evidence_at
        return {"first_chunk_ms": None if first is None else
                round((first - self.submitted_at) * 1000, 3),
                "evidence_ms": None if shown is None else
                round((shown - self.submitted_at) * 1000, 3),
                "backend_called_ms": self.backend_called_ms,
                "backend_ttft_ms": self.backend_ttft_ms}

    def _save_loop(self, open_store: Callable[[], object], interval: float) -> None:
        store, saved = None, ""
        while not self._stop_saving.wait(interval):
            text = self.text
            if text != saved:
                store = store or open_store()
                _save(store, self.turn_id, content=text, status="streaming")
                saved = text

    def _finish(self, open_store, status, error, metrics, saver: threading.Thread) -> None:
        self._stop_saving.set()  # the saver must not write "streaming" after the final state
        saver.join(10)  # a write in progress ends in milliseconds; never wait forever
        if saver.is_alive():
            logger.warning("answer %s: the saver thread is still writing", self.turn_id)
        try:
            _save(open_store(), self.turn_id, content=self.text, status=status, metrics=metrics)
            logger.info("answer %s: %s, %d characters", self.turn_id, status, len(self.text))
        finally:
            with self._cond:
                self.status, self.error, self.metrics = status, error, metrics
                self._finished.set()
                self._changed()


def _without_our_notes(text: str) -> str:
    for note in NOTE.values():
        text = text.replace(note, "")
    return text.rstrip()


def _language_mismatch(question: str, answer: str) -> bool:
    """The answer is not in the question's language (False where that cannot be told)."""
    try:
        from docchat.context.language import answer_language_mismatch
    except ImportError:  # not part of this installation
        return False
    return answer_language_mismatch(question, answer)


def _language_of(question: str) -> str:
    """ "zh" or "en": the language the question asks in (the one the prompt asks for)."""
    from docchat.context.prompts import question_language

    return question_language(question)


def _echo(answer: str, question: str = "") -> bool:
    """The answer only repeats our instructions ("请用中文回答。") or the question."""
    try:
        from docchat.context.language import echoes_instruction
    except ImportError:  # not part of this installation
        return False
    return echoes_instruction(answer, question)


def _repeats(answer: str, previous: str) -> bool:
    """The answer only says the previous answer again."""
    try:
        from docchat.context.language import repeats_previous
    except ImportError:  # not part of this installation
        return False
    return repeats_previous(answer, previous)


def _save(store, turn_id: int, **changes) -> None:
    try:
        store.update_turn(turn_id, **changes)
    except NotFoundError:  # the session was deleted while its answer was written
        logger.info("answer %s: its session was deleted; not saved", turn_id)


class Generations:
    """Answers in flight in this process, one per chat session."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_session: dict[str, Generation] = {}

    def get(self, session_id: str | None) -> Generation | None:
        with self._lock:
            return self._by_session.get(session_id) if session_id else None

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_session)

    def start(self, generation: Generation, make_answer: AnswerFactory,
              open_store: Callable[[], object], save_interval: float = 0.5,
              sources: Callable[[str, object], list[dict]] | None = None,
              marks: Callable[[str, object], dict | None] | None = None,
              after: Callable[[Generation], None] | None = None) -> Generation:
        """Run generation in a daemon thread; it leaves the registry once saved, then
        ``after`` runs in that thread (the read-ahead for the next question)."""
        with self._lock:
            current = self._by_session.get(generation.session_id)
            if current is not None and not current.done:
                raise DocchatError("An answer is still being written in this session; "
                                   "wait for it or press Stop.")
            self._by_session[generation.session_id] = generation
        thread = threading.Thread(
            target=generation.run, name=f"docchat-answer-{generation.turn_id}", daemon=True,
            args=(make_answer, open_store, save_interval, self._ended(after), sources, marks))
        thread.start()
        return generation

    def _ended(self, after: Callable[[Generation], None] | None
               ) -> Callable[[Generation], None]:
        def ended(generation: Generation) -> None:
            self._remove(generation)
            if after is not None:
                after(generation)
        return ended

    def _remove(self, generation: Generation) -> None:
        with self._lock:
            if self._by_session.get(generation.session_id) is generation:
                del self._by_session[generation.session_id]


def history_messages(turns: Sequence) -> list[Message]:
    """Earlier turns as chat messages: answered ones only, errors and empty answers left out."""
    out: list[Message] = []
    for t in turns:
        if t.status == "error" or not t.content.strip():
            continue
        out.append(Message(t.role, t.content))
    return out


def follow(generation: Generation, poll: float = 0.1) -> Iterator[Generation]:
    """Yield the generation whenever it changes, and every poll seconds, until it ends."""
    version = -1
    while True:
        version = generation.wait(version, poll)
        yield generation
        if generation.done:
            return


class TimedBackend:
    """A backend seen through a window that notes when its stream started and first spoke."""

    def __init__(self, backend, generation: Generation) -> None:
        self._backend = backend
        self._generation = generation

    def __getattr__(self, name: str):
        return getattr(self._backend, name)

    def stream(self, request):
        """The backend's stream; records its own time to first token (queue wait excluded)."""
        called = time.perf_counter()
        try:
            yield from self._backend.stream(request)
        finally:
            stats = request.stats
            if stats.first_token_at is not None:
                self._generation.backend_ttft_ms = round(
                    (stats.first_token_at - called) * 1000 - (stats.queue_ms or 0.0), 3)
            self._generation.backend_called_ms = round(
                (called - self._generation.submitted_at) * 1000, 3)


def previous_sections(turns: Sequence) -> list[tuple] | None:
    """The sections packed for the last answered turn (kept in its metrics), for the packer
    to keep first so the backend's cache of that prompt is reused."""
    for t in reversed(turns):
        if t.role == "assistant" and t.status != "error" and (t.metrics or {}).get("sections"):
            # With the kept blocks (doc, section, blocks) where stored: qa.ask keeps them as is.
            return [tuple(s) for s in (t.metrics.get("passages") or t.metrics["sections"])]
    return None


def source_finder(documents: Sequence) -> Callable[[str, object], list[dict]]:
    """Maps a finished answer's text to its cited pages, using the pages the model saw."""
    from docchat.context.citations import find_sources, to_dicts

    def find(text: str, packed) -> list[dict]:
        pages = getattr(packed, "pages", None)
        return to_dicts(find_sources(text, documents, pages))

    return find


def mark_finder(documents: Sequence) -> Callable[[str, object], dict | None]:
    """Maps a finished answer's text to its statements' checks against the passages it was
    packed with (docchat.context.claims), as a dict to keep with the turn; None where the
    checker is not installed or nothing was packed. The passages are gathered once per
    packed context: a streamed answer is checked again and again against the same ones."""
    made: list = []  # [(packed, sources)]: the last packed context's passages

    def check(text: str, packed) -> dict | None:
        try:
            from docchat.context.claims import check_answer, sources_for
        except ImportError:  # the checker is not part of this installation
            return None
        if packed is None:
            return None
        if not made or made[0][0] is not packed:
            made[:] = [(packed, sources_for(packed, documents))]
        return check_answer(text, made[0][1]).to_dict()

    return check
