"""answer_language_mismatch: a Chinese question answered in English is told apart."""
from __future__ import annotations

import pytest

from docchat.context.language import answer_language_mismatch, text_language

ZH_Q = "作者测量了哪些加速比？在哪些基准上？"
EN_A = ("The authors measured speedups of 10x and more for certain benchmark programs, "
        "up to 25x on bitops-bitwise-and [p. 10].")
ZH_A = "作者在某些基准程序上测得了 10 倍以上的加速，在 bitops-bitwise-and 上最高达 25 倍 [p. 10]。"


@pytest.mark.parametrize("question, answer, mismatch", [
    (ZH_Q, EN_A, True),
    (ZH_Q, ZH_A, False),
    ("What speedups did the authors measure?", EN_A, False),
    ("What speedups did the authors measure?", ZH_A, True),
    # A Chinese answer that quotes English code or terms is still Chinese.
    (ZH_Q, "可以这样配置：\n```\nCFLAGS = -Wall -g\nINSTALL = install -p -o root\n```\n见第 3 页。",
     False),
    # Too short to tell: never a mismatch.
    (ZH_Q, "OK [p. 3]", False),
    (ZH_Q, "", False),
    ("你好", "Hello, the document describes a tracing compiler.", True),
    ("?", EN_A, False),
])
def test_answer_language_mismatch(question, answer, mismatch):
    assert answer_language_mismatch(question, answer) is mismatch


def test_text_language():
    assert text_language(EN_A) == "en" and text_language(ZH_A) == "zh"
    assert text_language("42 [p. 3]") is None


@pytest.mark.parametrize("answer, echo", [
    ("请用中文回答。", True),  # SmolLM2's whole answer to a Chinese question, once
    ("请用中文回答。 [p. 2]", True),
    ("Answer in English.", True),
    ("You answer questions about the user's documents. Use only the document excerpts.", True),
    ("## 文档摘录", True),
    ("The default port is 8731 [p. 1].", False),
    ("端口是 8731。请用中文回答。", False),  # an answer, with the echo after it
    ("根据文档摘录，端口是8731。", False),
    ("The answer is in the documents.", False),
    # Saying the documents lack the answer is what the prompt asks for: no echo.
    ("The documents do not contain the answer.", False),
    ("文档中没有相关内容。", False),
    ("", False),
])
def test_an_answer_that_only_repeats_our_instruction_is_told(answer, echo):
    from docchat.context.language import echoes_instruction

    assert echoes_instruction(answer) is echo


def test_an_answer_that_repeats_the_question_and_our_instruction_is_told():
    """Seen on debian-policy.pdf with SmolLM2: a Chinese follow-up answered with the question
    itself, then the language instruction."""
    from docchat.context.language import echoes_instruction

    question = "这个文件必须用什么格式写？"
    assert echoes_instruction(f"{question} [p. 114]\n\n请用中文回答。", question)
    assert not echoes_instruction(f"{question} [p. 114]\n\n请用中文回答。")  # the question alone
    # an answer that takes up the question's words and then answers is no echo
    assert not echoes_instruction("这个文件必须用机器可读的格式写，每一段以 Files 字段开头，"
                                  "并列出版权和许可证。", question)
    assert echoes_instruction("What does the epoch mean? Answer in English.",
                              "What does the epoch mean?")


def test_an_answer_that_says_the_previous_one_again_is_told():
    """Seen on the Chinese Debian reference with SmolLM2: the follow-up's answer was the first
    answer again, word for word."""
    from docchat.context.language import repeats_previous

    first = ("错误 ## 文档目录： debian-reference.zh-cn.pdf: Chapter 5 网络设置 > "
             "6.2 邮件系统 [p. 94]")
    assert repeats_previous(first, first)
    assert repeats_previous(first.replace("[p. 94]", "[p. 95]") + "。", first)
    assert not repeats_previous("NetworkManager 由 network-manager 软件包提供 [p. 94]。", first)
    assert not repeats_previous("是的。", "是的。")  # too short to tell
    assert not repeats_previous(first, "")
