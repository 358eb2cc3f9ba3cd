"""An append-only conversation: what each earlier turn sent, exactly, so that the next prompt
is the previous prompt + its answer + [new excerpts + question] and the backend's KV cache
holds everything before the new turn.

Layout: [system(instructions + outline: byte-identical for the whole session),
user(excerpts packed for turn 1 + question 1), assistant(answer 1), ...,
user(new excerpts + question n)]. A passage already in the window is not sent again. When
the window fills, the oldest turns' excerpts are dropped in one step (their questions and
answers stay): the prompt then differs from the cached one after the system message, and
that one re-read is reported (PackedContext.reread_tokens).

Read-ahead: once an answer is saved, the excerpts its question would have got next are
read by the backend after the conversation, as the start of the next user message
(Conversation.ahead, turn_packing.read_ahead). A next question still about the window's
passages starts its message with exactly them, so only its own excerpts and the question are
read when it is asked.

The stored form (an answer's metrics, written by qa.ask): "system_message", "turn_message"
(the user message as sent), "turn_passages" (the passages its excerpts hold) and
"compacted" (how many first turns are sent without their excerpts from then on).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Sequence

from docchat.backends import Message
from docchat.context.carry import PassageRef, normalize_passages, passages_json

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SentTurn:
    """One earlier turn as it was sent."""
    question: str  # the question alone (what a compacted turn sends)
    sent: str  # the user message as sent: its excerpts, then the question
    answer: str
    passages: tuple[PassageRef, ...] = ()  # the passages its excerpts hold
    # The passages packed for it where a read cut at the first-token deadline sent fewer
    # (() : the same as passages): what the turn was about, for the next question's topic.
    chosen: tuple[PassageRef, ...] = ()

    def user(self, compacted: bool) -> Message:
        return Message("user", self.question if compacted else self.sent)


@dataclass(frozen=True)
class TurnPacked:
    """What pack_turn() sent for one turn (PackedContext.turn): for the stored history."""
    question: str
    system: str  # the system message (the same for the whole session)
    message: str  # the user message as sent: the new excerpts, then the question
    passages: tuple[PassageRef, ...]  # the passages its excerpts hold
    compacted: int  # the first turns sent without their excerpts, from now on
    reread_tokens: int  # tokens read again because this prompt compacted (0: it did not)
    outline_budget: int  # the outline's token budget (the first turn's, kept)
    chosen: tuple[PassageRef, ...] = ()  # packed before a read cut sent fewer (SentTurn)

    def to_metrics(self) -> dict:
        """The keys Conversation.from_turns() reads back from an answer's metrics."""
        out = {"system_message": self.system, "turn_message": self.message,
               "turn_passages": passages_json(self.passages),
               "compacted": self.compacted, "outline_budget": self.outline_budget}
        if self.chosen:
            out["turn_chosen"] = passages_json(self.chosen)
        if self.reread_tokens:
            out["context_compacted"] = {"turns": self.compacted,
                                        "tokens_read_again": self.reread_tokens}
        return out


@dataclass(frozen=True)
class Ahead:
    """Excerpts read ahead for the next turn while the user reads the answer (the
    backend's prefetch of messages() + [user: text]): the passages the last question
    would have been given next, and the start of a user message holding them. A next
    question still about the window's passages starts its message with them (pack_turn),
    so the backend has already read them; any other question leaves them out."""
    passages: tuple[PassageRef, ...]
    text: str  # prompts.context_block("", their excerpts): how the next message starts
    # Where each passage's text ends in `text` (text[:ends[k]] holds the first k + 1: the
    # rendering only appends), so that a read-ahead cut short is used as far as it was read
    # (qa.ahead_held); () where unknown.
    ends: tuple[int, ...] = ()
    # The share of the planned read-ahead's text this holds (1.0: all of it).
    read: float = 1.0

    def first(self, k: int) -> "Ahead":
        """The first k passages only, as read ahead before the rest."""
        end = self.ends[k - 1]
        return Ahead(self.passages[:k], self.text[:end], self.ends[:k],
                     self.read * end / max(1, len(self.text)))


@dataclass(frozen=True)
class Conversation:
    """The session so far: its system message and its turns as sent."""
    system: str = ""  # "" before the first question (the packer builds it)
    turns: tuple[SentTurn, ...] = ()
    compacted: int = 0  # the first turns sent without their excerpts
    outline_budget: int = 0  # the outline's token budget in the system message
    ahead: Ahead | None = None  # excerpts read ahead for the next turn, if any

    def messages(self, compacted: int | None = None) -> list[Message]:
        """[system, user 1, assistant 1, ...]: what the next prompt starts with (with the
        first `compacted` turns' excerpts dropped)."""
        k = self.compacted if compacted is None else compacted
        out = [Message("system", self.system)] if self.system else []
        for i, t in enumerate(self.turns):
            out += [t.user(i < k), Message("assistant", t.answer)]
        return out

    def messages_ahead(self) -> list[Message]:
        """messages(), then the start of the next user message read ahead (if any): what
        the backend's cache holds once the read-ahead is done."""
        out = self.messages()
        return [*out, Message("user", self.ahead.text)] if self.ahead else out

    def history(self) -> list[Message]:
        """The plain questions and answers (for the search's queries)."""
        return [m for t in self.turns for m in (Message("user", t.question),
                                                 Message("assistant", t.answer))]

    def present(self, compacted: int | None = None) -> list[PassageRef]:
        """The passages in the window: those of the turns whose excerpts are still sent."""
        k = self.compacted if compacted is None else compacted
        return [r for t in self.turns[k:] for r in t.passages]

    def about(self, compacted: int | None = None) -> list[PassageRef]:
        """The passages the turns in the window were packed with, also those a read cut at
        the deadline left out: what the conversation is about (carry.still_relevant)."""
        k = self.compacted if compacted is None else compacted
        return [r for t in self.turns[k:] for r in (t.chosen or t.passages)]

    def then(self, packed, answer: str) -> "Conversation":
        """The conversation after a turn packed by pack_turn() and answered."""
        t: TurnPacked = packed.turn
        return replace(self, system=t.system, compacted=t.compacted,
                       outline_budget=t.outline_budget, ahead=None,
                       turns=(*self.turns, SentTurn(t.question, t.message, answer, t.passages,
                                                    t.chosen)))

    @classmethod
    def from_turns(cls, turns: Sequence) -> "Conversation":
        """From stored turns (role, content, status, metrics; docchat.library.store): each
        answered question with what its answer's metrics say was sent. A turn stored
        without them (before this layout, or failed) is sent as its plain question."""
        out: list[SentTurn] = []
        system, compacted, outline, question = "", 0, 0, None
        for t in turns:
            if t.role == "user":
                question = t.content
                continue
            if t.role != "assistant" or question is None or t.status == "error":
                continue
            m = t.metrics or {}
            out.append(SentTurn(question, m.get("turn_message") or question, t.content,
                                tuple(normalize_passages(m.get("turn_passages") or ())),
                                tuple(normalize_passages(m.get("turn_chosen") or ()))))
            if m.get("system_message"):
                system = m["system_message"]
                compacted = int(m.get("compacted") or 0)
                outline = int(m.get("outline_budget") or 0)
            question = None
        return cls(system, tuple(out), min(compacted, len(out)), outline)


def compaction_note(metrics: dict) -> str | None:
    """"context compacted: 6,100 tokens read again" where this answer's prompt compacted."""
    c = (metrics or {}).get("context_compacted")
    if not c:
        return None
    return f"context compacted: {c['tokens_read_again']:,} tokens read again"
