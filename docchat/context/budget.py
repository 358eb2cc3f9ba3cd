"""The token arithmetic of a packed prompt: the conversation split into recent and older
turns (older ones shortened), the evidence budget and what took the rest of it, and the
outline's budget. Constants: docchat/context/policy.py."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Sequence

from docchat.backends import Message
from docchat.context.passages import TokenCounter
from docchat.context.policy import POLICY, PackingPolicy

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class History:
    """The conversation split into the recent exchanges (kept whole) and older messages."""
    recent: list[Message]
    older: list[Message]

    @staticmethod
    def shortened(messages: Sequence[Message], counter: TokenCounter, cap: int | None = None,
                  policy: PackingPolicy = POLICY) -> list[Message]:
        """Older messages cut short (user: its end; answer: head and tail); then the
        oldest dropped until they fit cap tokens."""
        out = [Message(m.role, shorten(m.content, m.role, counter, policy)) for m in messages]
        if cap is not None:
            while out and counter.messages(out) > cap:
                out.pop(0)
        return out


def split_history(history: Sequence, turns: int) -> History:
    """Split messages (anything with role and content) at the start of the last turns
    exchanges; an exchange opens with a user message."""
    msgs = [Message(m.role, m.content) for m in history
            if getattr(m, "role", None) in ("user", "assistant") and m.content]
    starts = [i for i, m in enumerate(msgs) if m.role == "user"]
    if turns <= 0:
        return History([], msgs)
    cut = starts[-turns] if len(starts) >= turns else 0
    return History(msgs[cut:], msgs[:cut])


def shorten(text: str, role: str, counter: TokenCounter, policy: PackingPolicy = POLICY) -> str:
    """An older message within its cap: a user message's end (policy.older_user_tokens),
    an answer's head and tail (policy.older_answer_tokens each), cut at spaces."""
    keep = policy.older_user_tokens if role == "user" else policy.older_answer_tokens
    cap = (keep if role == "user" else 2 * keep) + policy.shorten_slack
    if counter.text(text) <= cap:
        return text
    chars = max(16, len(text) * keep // max(1, counter.text(text)))
    while True:
        head, tail = text[:chars], text[-chars:]
        # Cut at a space where there is one near the cut, not inside a word.
        if " " in head[chars // 2:]:
            head = head[: head.rindex(" ")]
        if " " in tail[: chars // 2]:
            tail = tail[tail.index(" ") + 1:]
        if role == "user":
            out = "… " + tail.lstrip()
        else:
            out = head.rstrip() + " … " + tail.lstrip()
        if counter.text(out) <= cap or chars <= 8:
            return out
        chars = chars * 3 // 4


@dataclass
class EvidenceBudget:
    """The prompt tokens left for excerpts, and what took the rest: pack()'s arithmetic.

    limit: the prompt tokens allowed (window - max_new_tokens); fixed: the system prompt,
    the recent turns and the question. Each take() books tokens against a name (outline,
    headers, slack, older turns, focus); avail is what remains for the excerpts."""
    limit: int
    fixed: int
    spent: dict[str, int] = field(default_factory=dict)
    policy: PackingPolicy = POLICY

    @property
    def avail(self) -> int:
        return self.limit - self.fixed - sum(self.spent.values())

    def take(self, what: str, tokens: int) -> None:
        self.spent[what] = self.spent.get(what, 0) + int(tokens)

    def share(self, fraction: float) -> int:
        """fraction of what is available now, in whole tokens."""
        return int(max(0, self.avail) * fraction)

    def keep_slack(self) -> None:
        """Keep policy.slack_share (at least slack_min tokens) free: the estimates miss a
        few tokens where passages join, and this saves re-counting the whole prompt."""
        p = self.policy
        self.take("slack", max(p.slack_min, self.avail // int(1 / p.slack_share)))


def outline_budget(budget: int, policy: PackingPolicy = POLICY) -> int:
    """Tokens the outline may take for a prompt budget: policy.outline_share of it, rounded
    down to two significant bits (256, 384, 512, 768, ...), so that small changes of the
    window (the first-token budget follows a measured prefill rate) keep the same outline
    and the warm prefix stays valid."""
    raw = int(max(0, budget) * policy.outline_share)
    if raw < policy.outline_round_from:
        return raw
    step = 1 << (raw.bit_length() - 2)
    return raw // step * step
