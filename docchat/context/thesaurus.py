"""English synonyms from WordNet 3.0 as Debian's wordnet-base package installs it
(/usr/share/wordnet; DOCCHAT_WORDNET names another folder): a question in a user's words
("forbid a break at a bar") also searches the document's words ("prohibit", "disallow")
for the passages whose meaning the dense models miss. Read from the package's own files
(index.<pos> for a word's senses, most frequent first; data.<pos> for a sense's words;
<pos>.exc for irregular forms), lazily, once per process. Without the package, synonyms()
gives nothing and the search is the question's own words, as before."""
from __future__ import annotations

import os
import re
import threading
from pathlib import Path

DEFAULT_DIR = "/usr/share/wordnet"
POS = ("noun", "verb", "adj", "adv")
# WordNet's "morphy" detachment rules: an inflected ending and what replaces it.
_RULES = {
    "noun": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
             ("shes", "sh"), ("men", "man"), ("ies", "y")),
    "verb": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
             ("ing", "e"), ("ing", "")),
    "adj": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "adv": (),
}
_WORD = re.compile(r"^[a-z][a-z'-]*$")


class WordNet:
    """One WordNet folder: senses of a word and the words of a sense."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self._index: dict[str, dict[str, tuple[int, ...]]] = {}
        self._exc: dict[str, dict[str, tuple[str, ...]]] = {}
        self._data: dict[str, bytes] = {}
        for pos in POS:
            self._index[pos] = _read_index(self.folder / f"index.{pos}")
            self._exc[pos] = _read_exc(self.folder / f"{pos}.exc")
            self._data[pos] = (self.folder / f"data.{pos}").read_bytes()

    def bases(self, word: str, pos: str) -> list[str]:
        """The base forms of word in part of speech pos that WordNet knows ("forbade" ->
        "forbid", "breaking" -> "break"), the word itself first when it is one."""
        index = self._index[pos]
        out = [word] if word in index else []
        out += [b for b in self._exc[pos].get(word, ()) if b in index and b not in out]
        for end, new in _RULES[pos]:
            if word.endswith(end) and len(word) > len(end) + 1:
                b = word[: len(word) - len(end)] + new
                if b in index and b not in out:
                    out.append(b)
        return out

    def senses(self, word: str, pos: str) -> tuple[int, ...]:
        """Byte offsets of word's senses in data.<pos>, most frequent first."""
        return self._index[pos].get(word, ())

    def words(self, pos: str, offset: int) -> list[str]:
        """The words of the sense at offset in data.<pos> (lower case, "_" as space)."""
        data = self._data[pos]
        end = data.find(b"\n", offset)
        fields = data[offset:end if end >= 0 else len(data)].decode("utf-8").split()
        count = int(fields[3], 16)
        out = []
        for k in range(count):
            w = fields[4 + 2 * k].lower()
            w = re.sub(r"\(\w+\)$", "", w)  # adjective markers: "big(a)"
            out.append(w.replace("_", " "))
        return out


def _read_index(path: Path) -> dict[str, tuple[int, ...]]:
    out: dict[str, tuple[int, ...]] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith(" "):  # the licence at the top
                continue
            p = line.split()
            # lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offset...
            synsets, pointers = int(p[2]), int(p[3])
            offsets = p[4 + pointers + 2:]
            out[p[0]] = tuple(int(o) for o in offsets[:synsets])
    return out


def _read_exc(path: Path) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    if path.exists():
        with open(path, encoding="utf-8") as f:
            for line in f:
                p = line.split()
                if len(p) >= 2:
                    out[p[0]] = tuple(p[1:])
    return out


_LOCK = threading.Lock()
_LOADED: dict[str, WordNet | None] = {}


def wordnet(folder: str | None = None) -> WordNet | None:
    """The WordNet of folder (DOCCHAT_WORDNET, else /usr/share/wordnet), loaded once;
    None when it is not installed."""
    folder = folder or os.environ.get("DOCCHAT_WORDNET") or DEFAULT_DIR
    with _LOCK:
        if folder not in _LOADED:
            try:
                _LOADED[folder] = WordNet(folder)
            except (OSError, ValueError, IndexError):
                _LOADED[folder] = None
        return _LOADED[folder]


def available() -> bool:
    return wordnet() is not None


# Of each part of speech a word has, the words of its SENSES most frequent senses, at most
# PER_WORD synonyms a word, one-word synonyms only (a phrase's words alone mean other things).
SENSES = 2
PER_WORD = 6


def synonyms(words, senses: int = SENSES, per_word: int = PER_WORD,
             net: WordNet | None = None) -> list[str]:
    """One-word synonyms of the English words (not the words themselves or their base
    forms), in order, unique; [] without WordNet."""
    net = net or wordnet()
    if net is None:
        return []
    given = {w.lower() for w in words}
    out: dict[str, None] = {}
    for word in words:
        w = word.lower()
        if not _WORD.match(w) or len(w) < 3:
            continue
        found: list[str] = []
        own = {w}
        for pos in POS:
            for base in net.bases(w, pos):
                own.add(base)
                for offset in net.senses(base, pos)[:senses]:
                    found += net.words(pos, offset)
        kept = [s for s in dict.fromkeys(found)
                if " " not in s and s not in own and s not in given and _WORD.match(s)]
        for s in kept[:per_word]:
            out[s] = None
    return list(out)
