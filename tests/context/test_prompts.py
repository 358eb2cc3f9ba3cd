"""Prompts: the two system prompts say the rules; the answer language follows the question."""
from __future__ import annotations

import pytest

from docchat.context import prompts


@pytest.mark.parametrize("language", ["en", "zh"])
def test_system_prompts_state_the_rules(language):
    text = prompts.system_prompt(language)
    assert "[p. 12]" in text and "```" in text
    if language == "en":
        assert "only the document" in text and "do not contain" in text and "English" in text
    else:
        assert "只能使用" in text and "文档中没有" in text and "中文" in text


@pytest.mark.parametrize("question,language", [
    ("What does dpkg do?", "en"), ("dpkg 是做什么的？", "zh"), ("那第二种方法呢？", "zh"),
    ("How do I use 中文 input?", "en"), ("", "en")])
def test_answer_language_follows_the_question(question, language):
    assert prompts.question_language(question) == language


def test_user_message_puts_context_before_the_question():
    ctx = prompts.context_block("- a.pdf\n1 Intro [p. 1]", "### Document: a.pdf\nText", "en")
    msg = prompts.user_message("Why?", ctx, "en")
    assert msg.index("## Outline") < msg.index("## Document excerpts") < msg.index("## Question")
    assert msg.endswith("Why?")
    assert prompts.user_message("为什么？", "", "zh") == "## 问题\n为什么？"


def test_system_message_holds_the_context_in_a_stable_order():
    ctx = prompts.context_block("- a.pdf\n1 Intro [p. 1]", "### Document: a.pdf\nText", "en",
                                focus="- a.pdf: 1 Intro [p. 1]")
    assert ctx.startswith(prompts.outline_block("- a.pdf\n1 Intro [p. 1]", "en"))
    assert ctx.index("## Outline of the documents") < ctx.index("## Document excerpts") \
        < ctx.index("## Outline of the part asked about")
    msg = prompts.system_message(ctx, "zh")
    assert msg.startswith(prompts.system_prompt("zh")) and msg.endswith(ctx)
    assert prompts.system_message("", "en") == prompts.system_prompt("en")
