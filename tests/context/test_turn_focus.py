"""pack_turn's focus outline (the sub-outline of the part asked about) is sent once while the
window holds it: a follow-up on the same part spends those tokens on excerpts instead."""
from __future__ import annotations

from docchat.context.conversation import Conversation
from docchat.context.turn_packing import pack_turn
from ingest.document import Block, Document, Page, Section

FOCUS = "## Outline of the part asked about\n"
TEXT = ("The daemon reads its settings at start and writes every change to the log, "
        "which the administrator can read with any pager. ")


class Chars:
    name = model = "chars"
    context_window = 20000

    def count_tokens(self, text: str) -> int:
        return len(text)

    def count_prompt_tokens(self, messages) -> int:
        return sum(len(m.content) + 5 for m in messages) + 3


def manual() -> Document:
    """40 chapters of 8 sections: an outline far larger than the outline budget."""
    secs, topics = [], ["firewall", "printer", "kernel", "backup", "locale", "sound", "proxy",
                        "quota"]
    for c in range(40):
        for k in range(8):
            i = len(secs)
            secs.append(Section(i, (f"{c + 1} Chapter {c + 1}: {topics[c % 8]} tools",
                                    f"{c + 1}.{k + 1} The {topics[k]} setting {i}"),
                                2, i + 1, i + 1, "prose",
                                (Block("prose", f"The {topics[k]} setting {i}. " + TEXT * 3,
                                       i + 1),)))
    return Document(path="m.pdf", sha256="m", name="m.pdf", kind="pdf", language="en",
                    pages=[Page(i + 1, "") for i in range(len(secs))], sections=secs)


def turn(doc, question, conv, b):
    return pack_turn([doc], question, b, conv, max_new_tokens=50, context_window=4000,
                     new_tokens=1200 if conv.turns else None, embedder=None)


def test_a_follow_up_on_the_same_part_does_not_send_its_outline_again():
    doc, b = manual(), Chars()
    first = turn(doc, "Which firewall settings does chapter 9 describe?", Conversation(), b)
    user = first.turn.message
    assert FOCUS in user
    focus = user[user.index(FOCUS):].split("\n\n## ")[0]
    conv = Conversation().then(first, "Chapter 9 has eight settings [p. 65].")
    second = turn(doc, "And which firewall settings does chapter 9 list after those?", conv, b)
    assert FOCUS not in second.turn.message
    assert focus in second.messages[1].content  # still in the window, as sent
    # once compacted away (the first turn sent as its question alone), it is sent again
    gone = Conversation(conv.system, conv.turns, compacted=1,
                        outline_budget=conv.outline_budget)
    third = turn(doc, "And which firewall settings does chapter 9 list after those?", gone, b)
    assert FOCUS in third.turn.message
