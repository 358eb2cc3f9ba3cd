"""Loops in a generated stream: a small model that starts repeating itself is stopped.

``RepetitionDetector`` is fed the stream's pieces as they come (``StreamingBackend.stream``
does it for every backend). It reads the text as words (jieba for Chinese runs, lower-cased
words and numbers otherwise; punctuation and Markdown table rules are not words) and finds
two kinds of loop:

- a periodic tail: the last words are one unit of p words said again and again, over at
  least ``min_span`` words (a 10-word sentence twice, a 3-word phrase six times), and the
  unit holds a word with letters (rows of zeros in a table are data, not a loop);
- a sentence of at least ``min_sentence_words`` words said a third time within the last
  ``sentence_window`` sentences, with other sentences between (A. B. A. C. A.).

Either way ``cut`` is where the loop's first repeat begins (moved to the next sentence
end inside the repeat, so the kept text ends on a whole sentence): the text before it says
everything the loop says once. Lists with repeated structure ("- Step 1: ...", "- Step 2:
...") are not loops: their numbers differ, so the tail is never periodic.
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

# A word: a run of CJK ideographs (cut by jieba) or of letters/digits.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(f"[{_CJK}]+|[^\\W_]+(?:['’][^\\W_]+)*")
_LETTER = re.compile(r"[^\W\d_]")
# Between two words, this ends a sentence (or a line / list item).
_SENTENCE_END = re.compile(r"[.!?;。！？；]|\n")
_PROSE_END = re.compile(r"[.!?。！？]")
_CLAUSE_END = re.compile(r"[;；]")
# A list item's marker, before its text on the line.
_LIST_MARKER = re.compile(r"\s*(?:\d{1,3}[.)]|[-*•])\s*")
# Unsettled text longer than this is read anyway (a Chinese run without punctuation).
_MAX_UNSETTLED = 48

NOTE = {
    "en": "[The answer was cut here: the model began repeating itself.]",
    "zh": "[回答在此截断：模型开始重复同样的内容。]",
}
SUMMARY_NOTE = {
    "en": "[This part was cut where the model began repeating itself.]",
    "zh": "[此部分在模型开始重复处截断。]",
}


def note(text_or_language: str = "en", notes: dict[str, str] = NOTE) -> str:
    """The cut note in a language ("en", "zh") or in the language of a text."""
    key = text_or_language if text_or_language in notes else (
        "zh" if _is_zh(text_or_language) else "en")
    return notes[key]


@dataclass(frozen=True)
class RepetitionPolicy:
    """When a stream counts as looping."""
    # A unit said this many times in a row is a loop: twice is not, real text does it (a
    # heading restated by its first sentence, a reference listed twice, a form's typo).
    repeats: int = 3
    min_span: int = 16  # words in the periodic tail at least (8 x "it loops")
    max_period: int = 64  # longest unit, in words, found as a periodic tail
    min_sentence_words: int = 6  # shorter sentences ("Yes.", "See [p. 3].") may recur
    sentence_repeats: int = 3  # the occurrence of one sentence that counts as a loop
    sentence_window: int = 6  # ... when all of them lie within this many sentences
    # or the occurrence that counts when only sentences of min_sentence_words count in the
    # window (list numbers and citations between the sayings do not): one more than
    # sentence_repeats, for real text repeats a reference three times in a row
    long_repeats: int = 4
    long_window: int = 12
    # A unit whose words repeat but for its numbers ("6.3: Template files [p. 50]", "6.4:
    # Template files [p. 50]", ...) is a loop said this many times in a row, when it holds
    # at least numbered_words different words that are not numbers: list items that differ
    # only by their number say nothing new; a table's rows of a number and a few values
    # ("| 3 | yes |") do recur.
    numbered_repeats: int = 5
    numbered_words: int = 5


class RepetitionDetector:
    """Feed pieces; ``feed`` returns True once the text loops, then ``cut`` is set."""

    def __init__(self, policy: RepetitionPolicy | None = None) -> None:
        self.policy = policy or RepetitionPolicy()
        self.text = ""
        self.cut: int | None = None
        self._read = 0  # text[:_read] has been split into words
        self._words: list[str] = []
        self._starts: list[int] = []  # each word's offset in text
        self._ends: list[int] = []
        self._runs = [0] * (self.policy.max_period + 1)  # run[p]: words equal p words back
        self._numbered = [0] * (self.policy.max_period + 1)  # the same, any number equal
        self._sentence: list[int] = []  # word indexes of the sentence being read
        self._in_code = False  # inside a ``` fence
        self._sentences: deque[tuple[tuple[str, ...], int]] = deque(
            maxlen=self.policy.sentence_window)
        self._long: deque[tuple[tuple[str, ...], int]] = deque(maxlen=self.policy.long_window)

    def feed(self, piece: str) -> bool:
        """Add a piece of the stream; True when the text now loops (see ``cut``)."""
        if self.cut is not None:
            return True
        self.text += piece
        settled = self._settled()
        if settled > self._read:
            for start, word in _words(self.text[self._read:settled], self._read):
                if self._add(start, word):
                    return True
            self._read = settled
        return False

    def finish(self) -> bool:
        """Read what is left at the end of the stream; True if that completes a loop."""
        if self.cut is None and self._read < len(self.text):
            for start, word in _words(self.text[self._read:], self._read):
                if self._add(start, word):
                    return True
            self._read = len(self.text)
        if self.cut is None and self._sentence:
            self._end_sentence(self.text[self._ends[-1]:])
        return self.cut is not None

    def kept(self) -> str:
        """The text without the loop (all of it when there is none)."""
        return self.text if self.cut is None else self.text[: self.cut].rstrip()

    # -- internals ------------------------------------------------------------------

    def _settled(self) -> int:
        """Text up to the last character that is not part of a word: its words are whole."""
        end = len(self.text)
        i = end
        while i > self._read and _WORD.match(self.text, i - 1):
            i -= 1
        if i == self._read and end - self._read > _MAX_UNSETTLED:
            return end
        return i

    def _add(self, start: int, word: str) -> bool:
        if self._words:
            between = self.text[self._ends[-1]:start]
            if "```" in between:
                self._in_code = not self._in_code
            if _SENTENCE_END.search(between) and self._end_sentence(between):
                return True
        n = len(self._words)
        self._words.append(word)
        self._starts.append(start)
        self._ends.append(start + len(word))
        self._sentence.append(n)
        return self._periodic(n)

    def _periodic(self, n: int) -> bool:
        words, runs, numbered, policy = self._words, self._runs, self._numbered, self.policy
        for p in range(1, min(policy.max_period, n) + 1):
            runs[p] = runs[p] + 1 if words[n] == words[n - p] else 0
            numbered[p] = numbered[p] + 1 if runs[p] or (
                words[n].isdigit() and words[n - p].isdigit()) else 0
            exact = runs[p] >= (policy.repeats - 1) * p and runs[p] + p >= policy.min_span
            if not exact and (p < policy.numbered_words
                              or numbered[p] < (policy.numbered_repeats - 1) * p):
                continue
            unit = words[n - p + 1:n + 1]  # built only for a candidate: this runs per word
            if not any(_LETTER.search(w) for w in unit):
                continue
            if exact:
                self._cut_at(n + 1 - runs[p], p)
                return True
            if len({w for w in unit if not w.isdigit()}) >= policy.numbered_words:
                self._cut_at(n + 1 - numbered[p], p)
                return True
        return False

    def _end_sentence(self, after: str = ".") -> bool:
        """The sentence just ended: a loop if it is the third of its kind in the window.
        Only prose counts: lines of code recur (the same call in several places), so a
        sentence must end on its punctuation, outside a code fence."""
        indexes, self._sentence = self._sentence, []
        words = tuple(self._words[i] for i in indexes)
        letters = sum(bool(_LETTER.search(w)) for w in words)
        long = letters >= self.policy.min_sentence_words
        # A clause ended by a semicolon is prose too, and so is a line of twice as many words
        # (a list item without a full stop); a shorter line may be code outside a fence.
        prose = not self._in_code and (
            _PROSE_END.search(after) is not None or _CLAUSE_END.search(after) is not None
            or ("\n" in after and letters >= 2 * self.policy.min_sentence_words))
        if not prose or not long:
            self._sentences.append((None, -1))
            if long:
                self._long.append((None, -1))
            return False
        policy = self.policy
        for window, repeats in ((self._sentences, policy.sentence_repeats),
                                (self._long, policy.long_repeats)):
            seen = [i for key, i in window if key == words]
            if len(seen) + 1 >= repeats:
                self.cut = self._starts[seen[1]] if len(seen) > 1 else self._starts[indexes[0]]
                return True
        cycle = self._cycle(words)
        if cycle is not None:
            self.cut = self._line_start(self._starts[cycle])
            return True
        self._sentences.append((words, indexes[0]))
        self._long.append((words, indexes[0]))
        return False

    def _cycle(self, words: tuple[str, ...]) -> int | None:
        """A cycle of long sentences said a third time: the long sentences so far end with
        one run of p >= 2 sentences said twice and this sentence starts it again (A B A B A,
        whatever short pieces, list numbers or citations, lie between: "4. A. 5. B [nope!
        10 times] 6. A."); real text that repeats one sentence three times in a row (p = 1)
        is left to long_repeats. The word index where the run's second saying begins."""
        keys = [key for key, _ in self._long] + [words]
        n = len(keys)
        for p in range(2, (n - 1) // 2 + 1):
            tail = keys[n - 1 - 2 * p:]
            if None in tail or len(set(tail[:p])) < 2:
                continue
            if all(tail[k] == tail[k + p] for k in range(p + 1)):
                return self._long[n - 1 - p][1]
        return None

    def _line_start(self, at: int) -> int:
        """at, or the start of its line where only a list marker ("6. ", "- ") is before it."""
        start = self.text.rfind("\n", 0, at) + 1
        return start if _LIST_MARKER.fullmatch(self.text[start:at]) else at

    def _cut_at(self, repeat: int, period: int) -> None:
        """Cut where the repeat starting at word index repeat begins, moved on to the first
        sentence end within one period, so that the kept text ends on a whole sentence."""
        for k in range(repeat, min(repeat + period, len(self._words))):
            if _SENTENCE_END.search(self.text, self._ends[k - 1], self._starts[k]):
                self.cut = self._starts[k]
                return
        self.cut = self._starts[repeat]


def _words(text: str, offset: int) -> list[tuple[int, str]]:
    """(offset, word) for the words of text; Chinese runs cut by jieba."""
    if _CJK_RUN.search(text) is None:
        return [(offset + m.start(), m.group(0).lower()) for m in _WORD.finditer(text)]
    from ingest.segment import cut_words  # jieba, loaded only for Chinese

    out: list[tuple[int, str]] = []
    pos = offset
    for piece in cut_words(text):  # lossless: the pieces add up to text
        out += [(pos + m.start(), m.group(0).lower()) for m in _WORD.finditer(piece)]
        pos += len(piece)
    return out


def _is_zh(text: str) -> bool:
    letters = sum(map(str.isalpha, text))
    return bool(letters) and sum(map(len, _CJK_RUN.findall(text))) / letters >= 0.3


def loop_at(stats) -> int | None:
    """Where a stream's loop began (its stats' repetition_at) when it stopped for one, else
    None: what an answer or a summary step keeps is the text before it."""
    if getattr(stats, "finish_reason", None) != "repetition":
        return None
    return getattr(stats, "repetition_at", None)


def cut_text(text: str, cut: int | None, language: str | None = None,
             notes: dict[str, str] = NOTE) -> str:
    """text without the loop that starts at cut, ending with the cut note; text itself when
    cut is None. The note is in language, else in the language of the text."""
    if cut is None:
        return text
    kept = text[:cut].rstrip()
    return f"{kept}\n\n{note(language or kept, notes)}" if kept else note(language or text,
                                                                            notes)
