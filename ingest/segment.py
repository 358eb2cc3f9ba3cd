"""Word segmentation for search: jieba for runs of Chinese, plain words otherwise."""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from functools import lru_cache

from ingest.parallel import processes, run_split

logger = logging.getLogger(__name__)

# CJK Unified Ideographs (+ extension A, compatibility ideographs).
HAN = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
_CJK_RUN = re.compile(HAN + "+")
_WORD = re.compile(HAN + r"+|[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
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
    if text.isascii():
        return 0.0
    letters = sum(map(str.isalpha, text))
    if not letters:
        return 0.0
    return sum(len(m) for m in _CJK_RUN.findall(text)) / letters


# A word of prose: letters (with ' or - inside) between spaces, maybe in brackets or quotes and
# before punctuation. Tokens of code ("\\cs_new:Npn", "up~to~date", "x=1") and data ("09/07/00",
# "HH:MM:SS") are not.
_PLAIN_WORD = re.compile(r"[(\[\"'“‘]*([^\W\d_]+(?:[-'’][^\W\d_]+)*)[)\]\"'”’.,;:!?]*")
ZH_SHARE = 0.3  # a document or text is Chinese from this share of CJK ideographs in its prose


def plain_words(text: str) -> list[str]:
    """The words of prose in text, without their brackets and punctuation (see _PLAIN_WORD)."""
    out = []
    for token in text.split():
        m = _PLAIN_WORD.fullmatch(token)
        if m:
            out.append(m.group(1))
    return out


def prose_cjk_share(*texts: str) -> float:
    """Share of CJK ideographs among the letters of the texts' prose: every ideograph, but
    other letters only in plain words, so that code, markup and data do not count as English."""
    cjk = sum(len(m) for t in texts if not t.isascii() for m in _CJK_RUN.findall(t))
    if not cjk:
        return 0.0
    other = sum(len(_CJK_RUN.sub("", w)) for t in texts for w in plain_words(t))
    return cjk / (cjk + other)


def document_language(texts: Sequence[str]) -> str:
    """ "zh" when at least ZH_SHARE of the letters in the texts' prose are CJK ideographs (a
    Chinese manual with pages of English code is Chinese), else "en"."""
    return "zh" if prose_cjk_share(*texts) >= ZH_SHARE else "en"


# jieba's segmentation of a Chinese run depends only on the run (and the dictionary, which
# docchat never changes), and runs recur a lot (terms of art, 的/是/在 between Latin words),
# so cut each distinct run once. Cleared when full rather than kept as an LRU: cheaper.
_CACHE_MAX = 200_000
_cut_cache: dict[tuple[str, bool], list[str]] = {}


def _is_cjk_word(w: str) -> bool:
    # A _WORD match is a Chinese run iff it starts with an ideograph: the first alternative
    # of _WORD wins there and takes the whole run; the second never starts on one.
    c = w[0]
    return "\u4e00" <= c <= "\u9fff" or "\u3400" <= c <= "\u4dbf" or "\uf900" <= c <= "\ufaff"


def _cut_run(run: str, for_search: bool) -> list[str]:
    key = (run, for_search)
    pieces = _cut_cache.get(key)
    if pieces is None:
        j = _jieba()
        cut = j.cut_for_search(run) if for_search else j.cut(run)
        pieces = [p for p in cut if p.strip()]
        if len(_cut_cache) >= _CACHE_MAX:
            _cut_cache.clear()
        _cut_cache[key] = pieces
    return pieces


def terms(text: str, for_search: bool = True) -> list[str]:
    """Lower-cased words of text; Chinese runs are cut by jieba (search mode adds sub-words)."""
    out: list[str] = []
    for w in _WORD.findall(text):
        if _is_cjk_word(w):
            out.extend(_cut_run(w, for_search))
        else:
            out.append(w.lower())
    return out


def index_text(text: str) -> str:
    """Text prepared for an FTS5 unicode61 index: words separated by spaces."""
    if _CJK_RUN.search(text) is None:
        # Same as joining terms(): lower() maps each character in the same word context.
        return " ".join(_WORD.findall(text)).lower()
    return " ".join(terms(text, for_search=True))


# Chinese characters in a batch above which index_texts uses more than one process:
# jieba cuts ~0.5-1 M characters/s, a fork costs ~20 ms.
PARALLEL_MIN_CJK = 40_000


def clear_cache() -> None:
    """Forget cached jieba segmentations (benchmarks use this to time cold work)."""
    _cut_cache.clear()


def _index_all(texts: Sequence[str]) -> list[str]:
    return [index_text(t) for t in texts]


def index_texts(texts: Sequence[str]) -> list[str]:
    """index_text of each text; large Chinese batches are cut by one process per core."""
    cjk = [sum(map(len, _CJK_RUN.findall(t))) for t in texts]
    total = sum(cjk)
    parts = processes(2) if total >= PARALLEL_MIN_CJK else 1
    if parts <= 1:
        return _index_all(texts)
    _jieba()  # load the dictionary once, before forking, not in every child
    # Contiguous slices with about the same amount of Chinese each.
    bounds, acc, k = [0], 0, 1
    for i, n in enumerate(cjk):
        acc += n
        if k < parts and acc >= total * k / parts:
            bounds.append(i + 1)
            k += 1
    bounds += [len(texts)] * (parts + 1 - len(bounds))
    jobs = [(texts[bounds[k]:bounds[k + 1]],) for k in range(parts)]
    return [out for part in run_split(_index_all, jobs) for out in part]


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
