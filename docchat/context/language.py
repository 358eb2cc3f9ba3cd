"""The language of a question and of its answer, to tell when a model did not follow it.

A small model (SmolLM2-135M) asked in Chinese often answers in English: it cannot write
Chinese well. ``answer_language_mismatch`` sees that from the share of Han characters in
each text's prose (``ingest.segment.prose_cjk_share``: code, markup and numbers do not
count as English), so the app can say so once and point to a larger model.

A small model may also answer with our own instruction ("请用中文回答。", the system prompt's
last sentence): ``echoes_instruction`` tells such an answer, so the app says the model
could not answer instead of showing the echo as one.
"""
from __future__ import annotations

import re

from docchat.context import prompts
from ingest.segment import ZH_SHARE, plain_words, prose_cjk_share

# An answer needs this many letters of prose before its language is judged ("OK", "[p. 3]"
# or a bare number say nothing about it).
MIN_LETTERS = 12
# Below this share of Han characters an answer is not Chinese (a Chinese answer quoting an
# English term or two stays well above it).
ANSWER_ZH_SHARE = 0.1


def text_language(text: str) -> str | None:
    """ "zh" or "en" for a text's prose, None when it has too few letters to tell."""
    han = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff")
    letters = han + sum(len(w) for w in plain_words(text) if w.isascii())
    if letters < MIN_LETTERS and han < MIN_LETTERS // 3:
        return None
    return "zh" if prose_cjk_share(text) >= ZH_SHARE else "en"


def answer_language_mismatch(question: str, answer: str) -> bool:
    """True when a Chinese question got an answer that is not Chinese (or an English
    question an answer in Chinese); False when either text is too short to tell."""
    asked = text_language(question)
    if asked is None:
        asked = "zh" if prose_cjk_share(question) >= ZH_SHARE else None
    said = text_language(answer)
    if asked is None or said is None:
        return False
    if asked == "zh":
        return prose_cjk_share(answer) < ANSWER_ZH_SHARE
    return said == "zh"


# An answer is an echo when this share of its words (Chinese: characters) lies in runs it
# shares with our instructions (the system prompts, the language line, the prompt's headings).
ECHO_SHARE = 0.8
ECHO_RUN = {"word": 3, "han": 4}  # the shortest shared run: 3 words, or 4 Han characters
_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W_]+")
_CITATION = re.compile(r"\[[^\]\n]{0,40}\]")
# The system prompts' sentences, but the one that words the answer "not in the documents":
# an answer saying that is no echo, whatever its words.
_SENTENCES = re.compile(r"[^.。]+[.。]?")
_REFUSAL = ("do not contain", "没有答案")


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(_CITATION.sub(" ", text))]


def _run(token: str) -> int:
    return ECHO_RUN["han" if "\u3400" <= token[0] <= "\ufaff" else "word"]


def _instruction_runs() -> set[tuple[str, ...]]:
    prompt = [s for lang in ("en", "zh") for s in _SENTENCES.findall(prompts.system_prompt(lang))
              if not any(r in s for r in _REFUSAL)]
    lines = prompt + [prompts.answer_language(lang) for lang in ("en", "zh")] + \
        [prompts.label(lang, key) for lang in ("en", "zh")
         for key in ("outline", "excerpts", "question", "document", "focus")]
    return _runs_of(lines)


def _runs_of(lines: list[str]) -> set[tuple[str, ...]]:
    out = set()
    for tokens in map(_tokens, lines):
        for n in set(ECHO_RUN.values()):
            out.update(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
    return out


_RUNS: set[tuple[str, ...]] = set()


def echoes_instruction(answer: str, question: str = "") -> bool:
    """True when the answer is (mostly) our own instructions, or the user's question, said
    back ("请用中文回答。", "Answer in English.", the question then "请用中文回答。"): at least
    ECHO_SHARE of its words (Chinese: characters) are in runs of 3 words (4 characters) that
    the instructions or the question hold. An empty answer is no echo."""
    tokens = _tokens(answer)
    if not tokens or len(tokens) < min(ECHO_RUN.values()):
        return False
    if not _RUNS:
        _RUNS.update(_instruction_runs())
    runs = _RUNS | _runs_of([question]) if question else _RUNS
    return _covered(tokens, runs) >= ECHO_SHARE * len(tokens)


# A small model given the conversation so far may write its previous answer again, word for
# word, whatever the new question: an answer of at least REPEAT_TOKENS words (Chinese:
# characters) that lies for ECHO_SHARE in runs of the previous one answers nothing new.
REPEAT_TOKENS = 12


def repeats_previous(answer: str, previous: str) -> bool:
    """True when the answer is (mostly) the previous answer said again."""
    tokens = _tokens(answer)
    if len(tokens) < REPEAT_TOKENS or not previous.strip():
        return False
    return _covered(tokens, _runs_of([previous])) >= ECHO_SHARE * len(tokens)


def _covered(tokens: list[str], runs: set[tuple[str, ...]]) -> int:
    """How many of tokens lie in runs (of 3 words or 4 Han characters) found in runs."""
    covered = [False] * len(tokens)
    for i, token in enumerate(tokens):
        n = _run(token)
        if tuple(tokens[i:i + n]) in runs:
            covered[i:i + n] = [True] * n
    return sum(covered)
