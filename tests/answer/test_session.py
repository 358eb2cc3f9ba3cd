"""Starting answers in a chat session: options, budget, warm-up, and what page links open."""
from __future__ import annotations

from dataclasses import dataclass

from docchat.answer import session
from docchat.answer.chat import Generations
from docchat.backends.echo import EchoBackend
from docchat.library.store import SessionStore
from ingest.document import Document, Page


class Warmable(EchoBackend):
    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.sent = []

    def prefetch(self, messages) -> None:
        self.sent.append(messages)


def guide(doc_id=1, kind="pdf") -> Document:
    return Document(path="g.pdf", sha256="g", name="g.pdf", kind=kind, id=doc_id, sections=[],
                    pages=[Page(1, "Preface.", "i"),
                           Page(2, "Install it. The default port is 8731. Keep it closed.", "1")])


def test_options_choose_the_budget_as_qa_does():
    from docchat.answer.qa import choose_budget

    options = session.AskOptions(preset="raw", overrides={"max_new_tokens": 40},
                                 ttft_target=2.0)
    backend = EchoBackend()
    backend.prefill_rate = lambda: 100.0
    assert options.max_new_tokens() == 40
    assert options.budget(backend) == choose_budget(backend, 40, 2.0, False)
    assert session.AskOptions(whole_window=True).budget(backend).prompt_budget is None


def test_the_prefix_is_sent_once_per_session_and_documents(tiny_docs=None):
    from pathlib import Path

    from ingest import load_document

    doc = load_document(str(Path(__file__).parents[1] / "data" / "app" / "guide.pdf"))
    doc.id = 3
    backend, done = Warmable(), {}
    options = session.AskOptions()
    assert session.warm(backend, session_id="s", documents=[doc], options=options, done=done)
    assert not session.warm(backend, session_id="s", documents=[doc], options=options, done=done)
    assert not session.warm(object(), session_id="t", documents=[doc], options=options,
                            done=done)  # no prefetch: nothing to do
    (messages,) = backend.sent
    assert [m.role for m in messages] == ["system"]
    assert not session.is_remote(backend)
    # The first question starts with what was sent, built with the same outline budget.
    start = session.warmed(done, "s", [doc])
    assert start.system == messages[0].content and start.outline_budget > 0
    conversation = session.conversation_for([], start)
    assert (conversation.system, conversation.outline_budget) == (start.system,
                                                                  start.outline_budget)
    assert session.warmed(done, "other", [doc]) is None


@dataclass
class Turn:  # as docchat.library.store keeps a turn
    role: str
    content: str
    status: str = "done"
    metrics: dict | None = None


class Cached(Warmable):
    """A backend whose KV cache holds `held` tokens of whatever is asked about."""
    held = 0

    def cached_tokens(self, messages) -> int:
        return min(self.held, self.count_prompt_tokens(messages))


def test_the_prefix_is_sent_again_once_the_cache_lost_it():
    doc = guide()
    backend, done = Cached(), {}
    options = session.AskOptions()
    assert session.warm(backend, session_id="s", documents=[doc], options=options, done=done)
    backend.held = 10 ** 6  # read: nothing to do on the next rerun
    assert not session.warm(backend, session_id="s", documents=[doc], options=options, done=done)
    backend.held = 0  # another session's question took the cache
    assert session.warm(backend, session_id="s", documents=[doc], options=options, done=done)
    assert len(backend.sent) == 2 and backend.sent[0] == backend.sent[1]


def test_a_session_with_answers_warms_its_conversation_as_stored():
    from docchat.context.conversation import Conversation

    doc = guide()
    metrics = {"system_message": "SYSTEM (outline)", "turn_message": "Excerpts...\n\nPort?",
               "turn_passages": [], "compacted": 0, "outline_budget": 96}
    turns = [Turn("user", "Port?"), Turn("assistant", "8731.", metrics=metrics)]
    backend, done = Warmable(), {}
    assert session.warm(backend, session_id="s", documents=[doc],
                        options=session.AskOptions(), done=done, turns=turns)
    (messages,) = backend.sent
    assert messages == Conversation.from_turns(turns).messages()
    assert [m.content for m in messages] == ["SYSTEM (outline)", "Excerpts...\n\nPort?",
                                             "8731."]
    assert session.warmed(done, "s", [doc]) is None  # not a first question's start
    # and the stored conversation wins over a warm start given by mistake
    assert session.conversation_for(turns, session.Warmed("other", 5)).system == \
        "SYSTEM (outline)"


def test_start_answer_saves_both_turns_and_answers_in_the_background(tmp_path):
    db = str(tmp_path / "s.db")
    store = SessionStore.open(db)
    sid = store.create_session()
    running = Generations()
    g = session.start_answer(store=store, running=running, session_id=sid, question="Port?",
                             documents=[guide(None)], backend=EchoBackend(reply="8731."),
                             options=session.AskOptions(preset="raw"), db_path=db,
                             asked_at=0.0, owner="tab")
    assert g.join(10) and g.owner == "tab"
    user, answer = store.turns(sid)
    assert (user.content, answer.content, answer.status) == ("Port?", "8731.", "done")


class T:
    def __init__(self, id, metrics):
        self.id, self.metrics = id, metrics


def test_page_links_name_a_statement_or_an_evidence_sentence():
    checks = {"statements": [{"status": "supported", "doc_id": 1, "page": 2, "span": [12, 37],
                              "support": "The default port is 8731."}]}
    evidence = [{"doc_id": 1, "sentences": [{"text": "Keep it closed.", "page": "1",
                                             "number": 2}]}]
    turns = [T(5, {"checks": checks, "evidence": evidence})]
    docs = [guide()]
    target = session.page_target(turns, docs, "t5s0")
    assert (target.page, target.passage, target.span) == (2, "The default port is 8731.",
                                                          (12, 37))
    target = session.page_target(turns, docs, "t5e0.0")
    assert (target.page, target.passage, target.span) == (2, "Keep it closed.", None)
    for gone in ("t5s1", "t6s0", "t5e1.0", "nonsense", ""):
        assert session.page_target(turns, docs, gone) is None
    assert session.page_target(turns, [guide(doc_id=9)], "t5s0") is None  # removed document


def test_a_text_document_link_finds_the_page_holding_the_passage():
    notes = Document(path="n.md", sha256="n", name="n.md", kind="markdown", id=1, sections=[],
                     pages=[Page(1, "# Notes"), Page(2, "The lid is **blue**.")])
    checks = {"statements": [{"doc_id": 1, "page": None, "span": None,
                              "support": "The lid is blue."}]}
    target = session.page_target([T(1, {"checks": checks})], [notes], "t1s0")
    assert target.page == 2 and target.passage == "The lid is blue."


def _gpl_chat(tmp_path, backend):
    """The chat page's path over GPL-3.txt: (ask(question) -> the stored turn, wait_ahead()
    -> (follows, Ahead) once the read-ahead after the last answer is packed)."""
    import time
    from pathlib import Path

    from docchat.library.documents import ingest_path

    db = str(tmp_path / "s.db")
    store = SessionStore.open(db)
    data = Path(__file__).resolve().parents[1] / "data" / "summarize" / "GPL-3.txt"
    doc = ingest_path(store, data, tokenizer=backend).document
    sid = store.create_session()
    store.attach(sid, doc.id)
    running, done = Generations(), {}
    options = session.AskOptions(preset="raw", ttft_target=0.2)

    def ask(question: str):
        g = session.start_answer(store=store, running=running, session_id=sid,
                                 question=question, documents=[doc], backend=backend,
                                 options=options, db_path=db, asked_at=time.perf_counter(),
                                 done=done)
        assert g.join(20) and g.status == "done"
        return store.turns(sid)[-1]

    def wait_ahead():
        key = ("ahead", sid, (doc.id,))
        for _ in range(200):
            if key in done:
                break
            time.sleep(0.05)
        return done[key]

    return ask, wait_ahead


def test_after_an_answer_what_comes_next_is_read_ahead_and_starts_a_follow_up(tmp_path,
                                                                               monkeypatch):
    """Once an answer is saved, the excerpts its question would have got next are sent to
    the backend to read (after the conversation as stored) while the user reads; the next
    question, still on the topic, starts its turn with exactly them."""
    from docchat.answer import qa
    from docchat.backends import Message

    monkeypatch.setattr(qa, "READ_AHEAD_SHARE", 0.25)
    backend = Warmable(reply="You may convey verbatim copies [p. 1].", prefill_tps=20000)
    ask, wait_ahead = _gpl_chat(tmp_path, backend)
    ask("What may I do when I convey verbatim copies of the program?")
    follows, ahead = wait_ahead()
    assert follows == 2 and ahead.passages
    assert backend.sent[-1][-1] == Message("user", ahead.text)  # after the stored turns
    second = ask("And may I charge a fee for those copies?")
    assert second.metrics["turn_message"].startswith(ahead.text)
    sent = [(k, i, None if b is None else tuple(b))
            for k, i, b in second.metrics["turn_passages"]]
    assert sent[:len(ahead.passages)] == [
        (k, i, None if b is None else tuple(b)) for k, i, b in ahead.passages]


def test_a_follow_up_asked_while_the_read_ahead_is_read_starts_with_what_was_read(
        tmp_path, monkeypatch):
    """The question comes before the read-ahead is done: the cache holds the stored turns
    and only the first passage read ahead. The follow-up starts its turn with that passage
    alone (read already), not with all of them nor with none."""
    from docchat.answer import qa
    from docchat.backends import Message

    class CutShort(Warmable):
        """A cache holding the last prefetch's messages up to `cut` characters of its last
        one (None: all of it)."""
        cut: int | None = None

        def cached_tokens(self, messages):
            if not self.sent:
                return None
            *head, last = self.sent[-1]
            read = [*head, Message(last.role, last.content[:self.cut])]
            if list(messages[:-1]) == head and read[-1].content.startswith(
                    messages[-1].content):
                return self.count_prompt_tokens(messages)
            return self.count_prompt_tokens(read) - 1 if list(messages[:-1]) == head else 0

    monkeypatch.setattr(qa, "READ_AHEAD_SHARE", 0.25)
    backend = CutShort(reply="You may convey verbatim copies [p. 1].", prefill_tps=20000)
    ask, wait_ahead = _gpl_chat(tmp_path, backend)
    ask("What may I do when I convey verbatim copies of the program?")
    ahead = wait_ahead()[1]
    assert len(ahead.passages) >= 2 and len(ahead.ends) == len(ahead.passages)
    backend.cut = ahead.ends[0] + (ahead.ends[1] - ahead.ends[0]) // 2
    second = ask("And may I charge a fee for those copies?")
    message = second.metrics["turn_message"]
    assert message.startswith(ahead.text[:ahead.ends[0]])
    assert not message.startswith(ahead.text[:ahead.ends[1]])
    first = ahead.passages[0]
    assert [tuple(x[:2]) for x in second.metrics["turn_passages"]][0] == tuple(first[:2])
