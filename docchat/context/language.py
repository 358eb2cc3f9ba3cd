"""The language of a question and of its answer, to tell when a model did not follow it.

A small model (SmolLM2-135M) asked in Chinese often answers in English: it cannot write
Chinese well. ``answer_language_mismatch`` sees that from the share of Han characters in
each text's prose (``ingest.segment.prose_cjk_share``: code, markup and numbers do not
count as English), so the app can say so once and point to a larger model.
"""
from __future__ import annotations

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
