"""Questions and summaries about what changed between two versions of a document.

A question is packed with the changed sections only, the old and the new text of each
labelled by version and page; unchanged text around a change is cut to a few dozen words,
so the model reads the differences, not two copies of the document. Summaries are made per
changed section, then overall from those, and each is checked like an answer
(docchat.context.claims) against the two versions' text of the sections it covers.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable, Iterator, Sequence

from docchat.backends import GenerationRequest, Message
from docchat.comparison.align import Comparison, Pair
from docchat.comparison.redline import shortened
from ingest.document import Document

logger = logging.getLogger(__name__)

LABELS = {
    "en": {"old": "OLD VERSION", "new": "NEW VERSION", "p": "p.", "none": "(not in this version)",
           "system": "You compare two versions of a document. Use only the changes below. "
                     "Say which version says what, and cite pages as [old p. N] or "
                     "[new p. N].",
           "summary": "In one or two sentences, say what changed in this section between the "
                      "old and the new version.",
           "overall": "In a few sentences, summarise the changes between the two versions "
                      "from these notes, most important first.",
           "change": "Change", "question": "Question"},
    "zh": {"old": "旧版本", "new": "新版本", "p": "第", "none": "（此版本中没有）",
           "system": "你在比较一份文档的两个版本。只根据下面的修改内容回答，说明哪个版本怎么说，"
                     "并用 [旧 第N页] 或 [新 第N页] 标注页码。",
           "summary": "用一两句话说明这一节在旧版本和新版本之间改了什么。",
           "overall": "根据这些说明，用几句话总结两个版本之间的修改，重要的在前。",
           "change": "修改", "question": "问题"},
}
CONTEXT_WORDS = 60  # unchanged words kept around each change in a prompt
CLIP_CHARS = 2500   # an added or removed section's text, at most, in a prompt
OVERHEAD = 256      # tokens kept for the chat format and the question


@dataclass(frozen=True)
class ChangeText:
    """One changed pair as a prompt shows it."""
    pair: Pair
    old_text: str
    new_text: str

    def render(self, n: int, language: str, old_name: str, new_name: str) -> str:
        lab = LABELS[language]
        p = self.pair
        where = (f"{lab['old']} ({old_name}, {_pages(p.old, lab)})" if p.old
                 else f"{lab['old']} {lab['none']}")
        there = (f"{lab['new']} ({new_name}, {_pages(p.new, lab)})" if p.new
                 else f"{lab['new']} {lab['none']}")
        return (f"## {lab['change']} {n}: {p.status} · {p.heading}\n{where}:\n"
                f"{self.old_text or lab['none']}\n\n{there}:\n{self.new_text or lab['none']}")


def _pages(side, lab) -> str:
    first, last = side.pages[0], side.pages[-1]
    return f"{lab['p']} {first}" if first == last else f"{lab['p']} {first}-{last}"


def change_texts(c: Comparison, old: Document, new: Document) -> list[ChangeText]:
    """Old and new text of every changed pair, unchanged runs cut to CONTEXT_WORDS."""
    out = []
    for p in c.changed:
        if p.ops:
            ops = shortened(p.ops, CONTEXT_WORDS)
            a = " ".join(o.text for o in ops if o.op in "=-")
            b = " ".join(o.text for o in ops if o.op in "=+")
        else:  # moved, added or removed: the section's text
            a = clip(section_text(old, p.old.index)) if p.old else ""
            b = clip(section_text(new, p.new.index)) if p.new else ""
            if p.status == "moved":
                b = a = clip(a)
        out.append(ChangeText(p, a, b))
    return out


def section_text(doc: Document, index: int) -> str:
    s = next((s for s in doc.sections if s.index == index), None)
    return s.text if s is not None else ""


def clip(text: str) -> str:
    return text if len(text) <= CLIP_CHARS else text[:CLIP_CHARS].rsplit(" ", 1)[0] + " …"


def language_of(old: Document, new: Document) -> str:
    return "zh" if "zh" in (old.language, new.language) else "en"


def ask_messages(c: Comparison, old: Document, new: Document, question: str, backend, *,
                 max_new_tokens: int = 512) -> list[Message]:
    """The chat messages for a question about the changes, within the backend's window:
    changes in document order until the budget is spent."""
    language = language_of(old, new)
    lab = LABELS[language]
    budget = backend.context_window - max_new_tokens - OVERHEAD
    budget -= backend.count_tokens(lab["system"] + question)
    parts = []
    for n, ct in enumerate(change_texts(c, old, new), start=1):
        text = ct.render(n, language, old.name, new.name)
        cost = backend.count_tokens(text)
        if cost > budget:
            break
        parts.append(text)
        budget -= cost
    body = "\n\n".join(parts) + f"\n\n{lab['question']}: {question}"
    return [Message("system", lab["system"]), Message("user", body)]


def stream(backend, messages: Sequence[Message], max_new_tokens: int = 512,
           cancel=None) -> Iterator[str]:
    """The backend's answer, piece by piece, as the chat streams it."""
    extra = {"cancel": cancel} if cancel is not None else {}
    yield from backend.stream(GenerationRequest(messages=list(messages),
                                                max_new_tokens=max_new_tokens, **extra))


def sources(c: Comparison, old: Document, new: Document, pairs: Sequence[Pair] | None = None):
    """The two versions' text of these pairs (default: every changed one) as claim-checker
    Sources, old version first."""
    from docchat.context import claims
    from docchat.context.retrieval import doc_key

    chosen = list(pairs) if pairs is not None else c.changed
    out = []
    for position, (doc, side) in enumerate(((old, "old"), (new, "new"))):
        key = doc_key(doc, position)
        passages = [(key, getattr(p, side).index, None) for p in chosen if getattr(p, side)]
        out += claims.sources_for(SimpleNamespace(passages=passages), [old, new])
    return out


def check(text: str, found) -> dict | None:
    """The claim check of a summary against Sources, as a dict (None for an empty text)."""
    from docchat.context import claims

    if not text.strip():
        return None
    return claims.check_answer(text, found).to_dict()


def summarise(c: Comparison, old: Document, new: Document, backend, *, max_sections: int = 8,
              max_new_tokens: int = 160,
              on_piece: Callable[[str, str], None] | None = None) -> dict:
    """Per-section summaries of the first max_sections changes, then an overall one, each
    with its claim check. on_piece(key, piece) hears each piece ("s0", "s1", ..., "overall")."""
    language = language_of(old, new)
    lab = LABELS[language]
    texts = change_texts(c, old, new)[:max_sections]
    sections = []
    for n, ct in enumerate(texts):
        prompt = ct.render(n + 1, language, old.name, new.name) + "\n\n" + lab["summary"]
        text = _collect(backend, [Message("system", lab["system"]), Message("user", prompt)],
                        max_new_tokens, lambda piece, k=n: on_piece and on_piece(f"s{k}", piece))
        sections.append({"heading": ct.pair.heading, "status": ct.pair.status,
                         "summary": text, "check": check(text, sources(c, old, new, [ct.pair]))})
    notes = "\n".join(f"- {s['heading']}: {s['summary']}" for s in sections)
    overall = _collect(backend, [Message("system", lab["system"]),
                                 Message("user", f"{notes}\n\n{lab['overall']}")],
                       max_new_tokens * 2, lambda piece: on_piece and on_piece("overall", piece))
    return {"sections": sections, "overall": overall,
            "check": check(overall, sources(c, old, new, [t.pair for t in texts])),
            "left_out": max(0, len(c.changed) - len(texts))}


def _collect(backend, messages, max_new_tokens: int, on_piece) -> str:
    pieces = []
    for piece in stream(backend, messages, max_new_tokens):
        pieces.append(piece)
        on_piece(piece)
    return "".join(pieces).strip()
