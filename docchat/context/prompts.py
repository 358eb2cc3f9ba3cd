"""Prompt templates as plain functions: system prompts (English, Chinese) and message texts.

Two layouts, both so that a backend's KV cache carries over between turns (what stays the
same from one turn to the next comes first):
- pack(): the system message holds the system prompt, then the document context (outline,
  excerpts, the outline of the part asked about); then the conversation; then the question
  alone.
- pack_turn() (an append-only conversation): the system message holds the system prompt and
  the outline only, the same for the whole session; each user message holds the excerpts
  packed for it (context_block without the outline), then its question (user_message)."""
from __future__ import annotations

import logging

from ingest.segment import cjk_ratio

logger = logging.getLogger(__name__)

SYSTEM_EN = (
    "You answer questions about the user's documents. Use only the document excerpts "
    "given below, not outside knowledge. Cite the page of every fact with its marker "
    "exactly as written in the excerpts, e.g. [p. 12]. If the documents do not contain "
    "the answer, say so plainly instead of guessing. Keep code, commands and file "
    "contents in fenced code blocks (```). Answer in English."
)

SYSTEM_ZH = (
    "你根据用户提供的文档回答问题。只能使用下面给出的文档摘录，不要使用文档以外的知识。"
    "每个事实都要按摘录中的页码标记注明出处，例如 [p. 12]。"
    "如果文档中没有答案，请直接说明文档中没有相关内容，不要猜测。"
    "代码、命令和文件内容放在围栏代码块（```）中。请用中文回答。"
)

# Headings of the parts of the final user message.
_LABELS = {
    "en": {"outline": "Outline of the documents", "excerpts": "Document excerpts",
           "question": "Question", "document": "Document", "omitted": "[…]",
           "focus": "Outline of the part asked about"},
    "zh": {"outline": "文档目录", "excerpts": "文档摘录", "question": "问题",
           "document": "文档", "omitted": "[…]", "focus": "所问部分的目录"},
}


def question_language(question: str) -> str:
    """"zh" when the question is mostly Chinese, else "en"; the answer follows it."""
    return "zh" if cjk_ratio(question) >= 0.3 else "en"


def system_prompt(language: str = "en") -> str:
    """The system prompt for answers in language ("en" or "zh")."""
    return SYSTEM_ZH if language == "zh" else SYSTEM_EN


def answer_language(language: str = "en") -> str:
    """The system prompt's last sentence: the language to answer in (said again in a user
    message whose language differs from the session's system message)."""
    return "请用中文回答。" if language == "zh" else "Answer in English."


def label(language: str, key: str) -> str:
    """A fixed label of the context layout in language."""
    return _LABELS.get(language, _LABELS["en"])[key]


def outline_block(outline: str, language: str = "en") -> str:
    """The outline under its heading (the start of the document context)."""
    return f"## {label(language, 'outline')}\n{outline}" if outline else ""


def context_block(outline: str, excerpts: str, language: str = "en", focus: str = "") -> str:
    """The document context: the outline, the excerpts, then the outline of the part the
    question is about, each under its heading. The outline part is the same for every
    question on the same documents and window, and the excerpts only grow at their end
    when a follow-up keeps the previous sections, so successive prompts share a prefix."""
    parts = [outline_block(outline, language)] if outline else []
    if excerpts:
        parts.append(f"## {label(language, 'excerpts')}\n{excerpts}")
    if focus:
        parts.append(f"## {label(language, 'focus')}\n{focus}")
    return "\n\n".join(parts)


def system_message(context: str, language: str = "en") -> str:
    """The system message: the system prompt, then the document context."""
    system = system_prompt(language)
    return f"{system}\n\n{context}" if context else system


def user_message(question: str, context: str = "", language: str = "en") -> str:
    """The final user message: the question (after the context, where one is given)."""
    ask = f"## {label(language, 'question')}\n{question}"
    return f"{context}\n\n{ask}" if context else ask


def document_header(name: str, language: str = "en") -> str:
    """Line that opens one document's part of the context."""
    return f"### {label(language, 'document')}: {name}"
