"""Word segmentation for search: jieba for runs of Chinese, plain words otherwise."""
from __future__ import annotations

import logging
import re
from functools import lru_cache

logger = logging.getLogger(__name__)

# CJK Unified Ideographs (+ extension A, compatibility ideographs).
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_CJK_PUNCT_OR_SPACE = re.compile(r"[\s\u3000-\u303f\uff00-\uffef]+")


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text) is not None


def cjk_ratio(text: str) -> float:
    """Share of CJK ideographs among the letters of text."""
    letters = sum(1 for ch in text if ch.isalpha())
    if not letters:
        return 0.0
    return sum(len(m) for m in _CJK_RUN.findall(text)) / letters


def terms(text: str, for_search: bool = True) -> list[str]:
    """Lower-cased words of text; Chinese runs are cut by jieba (search mode adds sub-words)."""
    out: list[str] = []
    for m in _WORD.finditer(text):
        w = m.group(0)
        if _CJK_RUN.fullmatch(w):
            j = _jieba()
            pieces = j.cut_for_search(w) if for_search else j.cut(w)
            out.extend(p for p in pieces if p.strip())
        else:
            out.append(w.lower())
    return out


def index_text(text: str) -> str:
    """Text prepared for an FTS5 unicode61 index: words separated by spaces."""
    return " ".join(terms(text, for_search=True))


def cut_words(text: str) -> list[str]:
    """Split text into display words, losslessly: "".join(cut_words(t)) == t.

    Chinese runs are cut by jieba (precise mode); other text into words with their
    trailing whitespace and punctuation.
    """
    if not text:
        return []
    pieces: list[str] = []
    pos = 0
    for m in _CJK_RUN.finditer(text):
        if m.start() > pos:
            pieces.extend(_split_latin(text[pos:m.start()]))
        pieces.extend(_jieba().cut(m.group(0), HMM=True))
        pos = m.end()
    if pos < len(text):
        pieces.extend(_split_latin(text[pos:]))
    return [p for p in pieces if p]


_LATIN_PIECE = re.compile(r"\s*[^\s]+|\s+")


def _split_latin(text: str) -> list[str]:
    return _LATIN_PIECE.findall(text)
