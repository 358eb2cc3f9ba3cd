"""Clause-level fact checks for the claim checker (claims.py).

A statement and its support are cut into clauses (at commas, semicolons, colons and the
conjunctions that join clauses: "but", "while", "and", 但是, 而且, ...). Each clause of the
statement is aligned with the support's clause that holds most of its words (weighted by how
rare they are), and its facts are compared with that clause's:

- negation: each cue ("not", "never", "without", "fails to", n't, 不, 没有, 无需, 不得, ...)
  governs the words after it in its clause; a cue on one side whose words the other side
  states without a cue is the opposite ("does not require a password" / "requires a
  password");
- numbers: a number of the statement that the aligned clause lacks while it holds another of
  the same unit, counting the same thing ("60 days" / "30 days", "2.5x" / "10x");
- names: a name of the statement that neither the aligned clause nor its neighbours hold
  while the aligned clause names another one ("SpiderMonkey" / "TraceMonkey").

Such a fact is a Conflict: the passage says otherwise. A clause no support clause holds is
unaligned: the statement is then only partly supported.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from docchat.context import facts
from docchat.context.retrieval import index_terms
from ingest.segment import terms

ALIGN_AT = 0.5  # weighted share of a clause's words its aligned clause (and neighbours) hold
SAYS_WORDS = 4  # words quoted after a negation cue, or around a negated word
MIN_TERMS = 2  # a shorter piece joins the clause before it ("10x and more", "but B")
SCOPE_TERMS = 3  # content words a negation cue governs at most ("not be automatically broken")
HEADS = 2  # of them, the first words: one on the other side is stated there too
# Modal verbs and their pieces after a Chinese cue (不可以: 不可 + 以) govern nothing.
MODALS = frozenset("可以 能够 能 够 以 可 会 要 得 应该 应当 该 必须 须 需".split())
DOUBLE = ("without",)  # cues that undo the one before them: "does not start without a file"

# Clause boundaries: punctuation, and conjunctions that start a clause. The words governed
# by a negation cue end at these too ("X is used, not Y": "not" governs only Y).
_CUT = re.compile(
    r"[，,；;：:（）()]|\s[-–—#]\s"
    r"|\s(?=(?:but|while|whereas|although|though|because|unless|and|or|so|which|whose|where|"
    r"yet|whereby|then|except)\s)"
    r"|(?=但是|但|然而|而且|并且|而是|因为|所以|如果|除非|否则|或者)", re.IGNORECASE)
_NEXT_WORD = re.compile(r"\s*(?:%|percent\b)?\s*([A-Za-z][A-Za-z-]*|[\u4e00-\u9fff])")
# A word that a number labels rather than counts when it comes first ("Chapter 7",
# "Section 4.2", "Table 3"): that number's role is this word, whatever follows it.
_LABEL_BEFORE = re.compile(r"\b(chapter|section|part|appendix|figure|fig|table|page|step|"
                           r"article|clause|item|rule|volume|vol|lecture|lesson|exercise|"
                           r"example|algorithm|listing|equation|eq)\.?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Number:
    value: str
    unit: str  # "", "%" or "x"
    role: str  # the word it counts ("days", 年), lower-cased; "" if none
    said: str  # as written, with that word: "30 days", "10x", "三十天"


@dataclass(frozen=True)
class Clause:
    text: str  # as written
    start: int  # in its sentence (passages) or statement
    end: int
    terms: frozenset  # content index terms (a statement's translations too)
    groups: tuple = ()  # a statement's words, each as the terms that match it
    # per negation cue: (the content terms it governs, in order; a quote; the cue)
    scopes: tuple = ()
    numbers: tuple = ()  # Number, in order
    names: tuple = ()  # (lower-cased, as written): names and initials known as names
    sentence: int = -1  # the passage sentence it belongs to (passages only)
    seq: tuple = ()  # a passage clause's content terms in order (a statement's: its groups)
    words: frozenset = frozenset()  # its terms that are not numbers

    @property
    def low(self) -> str:
        return self.text.lower()


@dataclass(frozen=True)
class Conflict:
    kind: str  # "number" | "negation" | "name"
    clause: Clause  # the support's clause that says otherwise
    says: str  # what it says instead: "10x", "does not require", "TraceMonkey"
    mine: str  # the statement's fact it contradicts: "2.5x", "requires a", "SpiderMonkey"


@dataclass
class Verdict:
    conflict: Conflict | None = None
    unaligned: list[str] = field(default_factory=list)  # statement clauses not held
    far_names: list[str] = field(default_factory=list)  # names not in or beside their clause
    far_numbers: list[str] = field(default_factory=list)  # numbers, the same
    far_words: list[str] = field(default_factory=list)  # words only in other sentences
    closeness: float = 0.0  # mean over the clauses: share and precision of the aligned clause


def pieces(text: str) -> list[tuple[int, int]]:
    """(start, end) of the clauses of text, short pieces joined to the clause before."""
    cuts = ({0, len(text)} | {m.start() for m in _CUT.finditer(text)}
            | {m.end() for m in _CUT.finditer(text) if m.end() > m.start()})
    return facts.trimmed_spans(text, cuts, lead=",，;；:：()（）-–—")


def split(text: str, words: Callable[[str], list[str]], *, known=None, sentence: int = -1,
          groups: Callable[[str], list] | None = None) -> list[Clause]:
    """The clauses of text with their facts. words: text -> its content index terms; known:
    the lower-cased capitalised words that count as names where they open a sentence (None:
    none); groups: for a statement, text -> each content word as the terms that match it."""
    names = [(low, said, at) for low, said, at, initial in facts.name_spans(text)
             if not initial or (known is not None and low in known)]
    cues = facts.negation_cues(text)
    nums = facts.number_spans(text)
    plain = text  # the cues are no words of the clause ("cannot")
    for a, b in cues:
        plain = plain[:a] + " " * (b - a) + plain[b:]
    parts: list[dict] = []
    for a, b in pieces(text):
        terms = set(words(plain[a:b]))
        # A cue governs the words after it up to the clause's end or the next cue.
        ends = [s for s, _ in cues if a <= s < b][1:] + [b]
        scopes = [(tuple(w for w in dict.fromkeys(words(text[e:stop]))
                         if w not in MODALS)[:SCOPE_TERMS],
                   _quote(text, s, stop), text[s:e].lower())
                  for (s, e), stop in zip([c for c in cues if a <= c[0] < b], ends)]
        if parts and len(terms) < MIN_TERMS:
            last = parts[-1]
            last.update(end=b, terms=last["terms"] | terms, scopes=last["scopes"] + scopes)
        else:
            parts.append(dict(start=a, end=b, terms=terms, scopes=scopes))
    if len(parts) > 1 and len(parts[0]["terms"]) < MIN_TERMS:  # a short head joins the next
        head = parts.pop(0)
        parts[0].update(start=head["start"], terms=head["terms"] | parts[0]["terms"],
                        scopes=head["scopes"] + parts[0]["scopes"])
    out = []
    for part in parts:
        a, b = part["start"], part["end"]
        piece = text[a:b]
        g = tuple(frozenset(x) for x in groups(plain[a:b])) if groups else ()
        terms = frozenset(part["terms"]).union(*g) if g else frozenset(part["terms"])
        out.append(Clause(
            piece, a, b, terms, g, tuple(part["scopes"]),
            tuple(_number(text, n, words) for n in nums if a <= n[2] < b),
            tuple((low, said) for low, said, at in names if a <= at < b), sentence,
            () if g else tuple(words(plain[a:b])),
            frozenset(x for x in terms if not _numeric(x))))
    return out


def _quote(text: str, start: int, end: int) -> str:
    """The cue at start with the word before it and a few after, up to end: "does not
    require a password", "doesn't support", 无需在三十天内."""
    if not text[start].isascii():
        return text[start:end][:2 * SAYS_WORDS].strip()
    while start > 0 and text[start - 1].isalnum():  # "doesn't": the whole word
        start -= 1
    before = text[:start].split()
    lead = [before[-1]] if before and before[-1][-1].isalnum() else []
    return " ".join((lead + text[start:end].split())[:SAYS_WORDS + 1]).rstrip(".,;:")


def _number(text: str, n: tuple, words) -> Number:
    value, unit, a, b = n
    lo = max(0, a - 12)
    label = _LABEL_BEFORE.search(text[lo:a]) if not unit else None
    if label:  # "Chapter 7 Tables" and "Chapter 8 is ...": both number a chapter
        word = label.group(1).lower()
        word = {"fig": "figure", "vol": "volume", "eq": "equation"}.get(word, word)
        return Number(value, unit, word, " ".join(text[lo + label.start():b].split()))
    m = _NEXT_WORD.match(text, b)
    role, said = "", text[a:b]
    if m and not unit:
        end = m.end()
        if not m.group(1).isascii():  # a Chinese measure word: its jieba word (小时, not 小)
            word = next((w for w in terms(text[m.start(1):m.start(1) + 6], for_search=False)
                         if text.startswith(w, m.start(1))), m.group(1))
            end = m.start(1) + len(word)
        got = words(text[m.start(1):end])
        role = got[0] if got else m.group(1).lower()
        said = text[a:end] if got else said
    return Number(value, unit, role, " ".join(said.split()))


def prepare(mine: Sequence[Clause], weight: Callable) -> list[tuple]:
    """Each clause of a statement with its words and their weights, for compare() (made once
    per statement, compared with many windows): (clause, every word, their weights, the words
    that are not numbers, their weights)."""
    out = []
    for c in mine:
        every = c.groups or tuple(frozenset([t]) for t in c.terms)
        if not every:
            continue
        # What a clause is about is in its words, not its numbers: those are the facts that
        # are checked ("the tenant pays 20 euros" is aligned with "the tenant pays 10 euros",
        # not with "the landlord pays 20 euros"); whether it is held at all counts both.
        groups = tuple(g for g in every if not all(_numeric(x) for x in g)) or every
        all_ws = [max(weight(t) for t in g) for g in every]
        out.append((c, every, all_ws, groups, [max(weight(t) for t in g) for g in groups]))
    return out


def compare(mine: Sequence[Clause], theirs: Sequence[Clause], weight: Callable,
            prepared: list | None = None) -> Verdict:
    """mine (a statement's clauses) against theirs (its support's, in order): the first
    conflict of an aligned clause, the clauses no support clause holds, the names and numbers
    found neither in their aligned clause nor beside it, and how closely the clauses match.
    weight: term -> its weight; prepared: prepare(mine, weight), where made already."""
    verdict = Verdict()
    close: list[float] = []
    last = -1
    for c, every, all_ws, groups, ws in (prepared or prepare(mine, weight)):
        total = sum(ws) or 1.0
        shares = [sum(w for g, w in zip(groups, ws) if g & t.terms) / total for t in theirs]
        top = max(shares, default=0.0)
        tops = [j for j, s in enumerate(shares) if s == top]
        if top <= 0 or max(_near_share(every, all_ws, sum(all_ws) or 1.0, theirs, j)
                           for j in tops) < ALIGN_AT:
            verdict.unaligned.append(c.text)
            close.append(0.0)
            continue
        # The aligned clause: the one holding most of c's words, then one after the clause
        # the statement's clause before was aligned with, then the one most nearly only them.
        tops = [j for j in tops if j > last] or tops  # then those that keep the clauses' order
        exact = {j: _precision(c, theirs[j], weight) for j in tops}
        tops = [j for j in tops if exact[j] == max(exact.values())]

        found = [(_conflict(c, theirs, j), j) for j in tops]
        clean = [j for got, j in found if got is None]
        j = clean[0] if clean else found[0][1]
        if not clean and verdict.conflict is None:
            verdict.conflict = found[0][0]
        close.append(_f1(top, exact[j]))
        last = j
        near = _near(theirs, j) + [x for x in theirs if x.sentence == theirs[j].sentence]
        verdict.far_names += [said for low, said in c.names
                              if not any(_holds_name(t, low) for t in near)]
        verdict.far_numbers += [n.said for n in c.numbers
                                if not any(_same(n, o) for t in near for o in t.numbers)]
        verdict.far_words += _far_words(c, groups, theirs, j)
    verdict.closeness = sum(close) / len(close) if close else 0.0
    return verdict


# A sentence that opens with one of these says what it is about in the sentence before ("It
# achieves 25x speedups").
_POINTS_BACK = re.compile(r"(?:it|its|they|their|this|these|that|those|he|she|such)\b"
                          r"|它|其|该|此|这|他|她", re.IGNORECASE)


def _far_words(c: Clause, groups, theirs: Sequence[Clause], j: int) -> list[str]:
    """The words of c (not its names) that the window holds only in sentences other than its
    aligned clause's (and the one a pronoun at its start, or the next one's, ties it to): "The
    tenant must include a description" made of "The tenant must pay the rent." and "Reports
    should include a description.".
    """
    sent = theirs[j].sentence
    one = {sent}  # the sentence, with the one before or after that a pronoun ties to it
    for k, before in ((sent, sent - 1), (sent + 1, sent)):
        first = next((t for t in theirs if t.sentence == k), None)
        if first is not None and _POINTS_BACK.match(first.text.lstrip()):
            one |= {k, before}
    here = frozenset().union(*(t.terms for t in theirs if t.sentence in one))
    there = frozenset().union(*(t.terms for t in theirs if t.sentence not in one))
    named = {x for low, _ in c.names for x in index_terms(low)}
    return [_word_of(c, next(iter(g & there))) for g in groups
            if not g & here and g & there and not g & named]


def _precision(c: Clause, t: Clause, weight: Callable) -> float:
    """The weighted share of t's words (not its numbers) that c holds."""
    words = t.words or t.terms
    total = sum(weight(x) for x in words)
    return sum(weight(x) for x in words & c.terms) / total if total else 0.0


def _numeric(term: str) -> bool:
    return any(ch.isdigit() for ch in term)


def _f1(a: float, b: float) -> float:
    return 2 * a * b / (a + b) if a + b else 0.0


def _near(theirs: Sequence[Clause], j: int) -> list[Clause]:
    return [theirs[i] for i in (j, j - 1, j + 1) if 0 <= i < len(theirs)]


def _near_share(groups, ws, total, theirs, j) -> float:
    terms = frozenset().union(*(t.terms for t in _near(theirs, j)))
    return sum(w for g, w in zip(groups, ws) if g & terms) / total


def _conflict(c: Clause, theirs: Sequence[Clause], j: int) -> Conflict | None:
    t = theirs[j]
    around = [x for x in theirs if x.sentence == t.sentence]
    return _number_conflict(c, t) or _negation_conflict(c, t, around) or _name_conflict(c, t)


def _same(a: Number, b: Number) -> bool:
    return a.value == b.value and (a.unit == b.unit or not a.unit or not b.unit)


def _number_conflict(c: Clause, t: Clause) -> Conflict | None:
    """A number of c that is not in its place in t (the two clauses' numbers matched in
    order) while t holds another there of the same unit for the same thing, or the only
    other such number ("2 weeks" / "1 week"; "0.0 < 0.5" / "2.0 < 0.5")."""
    pairs = _in_order(c.numbers, t.numbers)
    left = [i for i in range(len(c.numbers)) if i not in pairs]
    spare = [j for j in range(len(t.numbers)) if j not in pairs.values()]
    for i in left:
        n = c.numbers[i]
        before = max((pairs[k] for k in pairs if k < i), default=-1)
        after = min((pairs[k] for k in pairs if k > i), default=len(t.numbers))
        rivals = [t.numbers[j] for j in spare
                  if t.numbers[j].unit == n.unit and t.numbers[j].value != n.value]
        slot = [o for j, o in enumerate(t.numbers) if before < j < after and o in rivals]
        same_role = [o for o in slot + rivals if o.role == n.role and (o.role or o.unit)]
        if same_role:
            return Conflict("number", t, same_role[0].said, n.value + n.unit)
        lone = slot if len(slot) == 1 else rivals if len(left) == 1 and len(rivals) == 1 else []
        if lone and not n.role and not lone[0].role:
            return Conflict("number", t, lone[0].said, n.value + n.unit)
    return None


def _in_order(mine: Sequence[Number], theirs: Sequence[Number]) -> dict[int, int]:
    """The longest run of mine's numbers that theirs holds in the same order: {i: j}."""
    return _aligned(len(mine), len(theirs),
                    lambda i, j: 1.0 if _same(mine[i], theirs[j]) else 0.0)


def _negation_conflict(c: Clause, t: Clause, around: list[Clause]) -> Conflict | None:
    """A cue on one side whose first governed words the other side states without a cue
    ("is not appointed" / "is appointed"), or a word of c that t lacks and a clause of its
    sentence holds only negated ("The landlord, not the tenant, repairs ...")."""
    said_there = frozenset().union(*(x.terms for x in around))
    for scope, said in _uncovered(t.scopes, c.scopes):
        if scope[0] in c.terms or _reworded(scope, _order(c), said_there):
            return Conflict("negation", t, said, _words_of(c, scope))
    for scope, said in _uncovered(c.scopes, t.scopes):
        if scope[0] in t.terms or _reworded(scope, _order(t), c.terms):
            return Conflict("negation", t, _words_of(t, scope), said)
    for theirs, mine, flip in ((t.terms, c.terms, False), (c.terms, t.terms, True)):
        found = _negative_word(theirs, mine)
        if found:  # the passage's word: the negative one, or the one the statement negates
            return Conflict("negation", t, _word_of(t, found[1] if flip else found[0]), "")
    for x in around:
        for scope, said in _uncovered(x.scopes, c.scopes):
            if x is not t and scope[0] in c.terms and scope[0] not in t.terms:
                return Conflict("negation", x, said, _words_of(c, scope))
    return None


_NEGATIVE_PREFIX = re.compile(r"^(?:un|in|im|il|ir|dis|non|不|没|无|未|非)(?=\w)")


def _negative_word(theirs: frozenset, mine: frozenset) -> tuple[str, str] | None:
    """(a word of theirs, the word of mine it negates by a prefix) where mine lacks the
    first: "invalid" / "valid", "unsupported" / "supported", 不同 / 同."""
    for x in theirs:
        m = _NEGATIVE_PREFIX.match(x)
        if m and x not in mine:
            rest = x[m.end():]
            if rest in mine and (len(rest) >= 4 or not rest.isascii()):
                return x, rest
    return None


def _word_of(c: Clause, term: str) -> str:
    """The word of c's text whose index term is term (a Chinese term as it is)."""
    if not term.isascii():
        return term
    return next((w.strip(".,;:") for w in re.findall(r"\S+", c.text) if term in index_terms(w)),
                term)


def _order(c: Clause) -> list[frozenset]:
    """c's words in order, each as the terms that match it."""
    return list(c.groups) if c.groups else [frozenset([x]) for x in c.seq]


def _reworded(scope: tuple, words: list[frozenset], known: frozenset) -> bool:
    """Whether words (the other side's, in order) say scope's first word in other words:
    the rest of scope follows a word that the scope's side does not use at all ("can not
    use the draft option" / "can employ the draft option"; not "cannot delete shared
    folders, but can rename them" / "can rename shared folders")."""
    if len(scope) < 2:
        return False
    at = next((i for i, g in enumerate(words) if scope[1] in g), None)
    if not at:
        return False
    before = words[at - 1]
    return not before & known and not any(x.isdigit() for x in before)


def _uncovered(scopes: tuple, others: tuple) -> list[tuple[tuple, str]]:
    """(governed words, quote) of each cue of scopes that no cue of others governs a word
    of, but a double negation ("does not start without a file": a requirement) where
    others do not negate its second part."""
    out = []
    for k, (scope, said, cue) in enumerate(scopes):
        if not scope or any(set(scope) & set(o[0]) for o in others):
            continue
        pair = scopes[k + 1] if k + 1 < len(scopes) and scopes[k + 1][2] in DOUBLE else \
            scopes[k - 1] if k and cue in DOUBLE else None
        if pair and not any(set(pair[0]) & set(o[0]) for o in others):
            continue
        out.append((scope, said))
    return out


def _words_of(c: Clause, scope: tuple) -> str:
    """The words of c around the first word of scope (the words a cue governs, in order)
    that it holds: "is appointed by the"."""
    words = c.text.split()
    for term in scope:
        for i, w in enumerate(words):
            if term in index_terms(w):
                return _trim(" ".join(words[max(0, i - 1):i + SAYS_WORDS - 1]))
    return _trim(" ".join(words[:SAYS_WORDS]))


def _trim(said: str) -> str:
    """said without closing punctuation, and at most 12 characters of a Chinese run."""
    said = said.rstrip(".,;:。，；：")
    return said if said.isascii() or len(said) <= 12 else said[:12] + "…"


def _name_conflict(c: Clause, t: Clause) -> Conflict | None:
    """A name of c that t does not hold while t names another one that c does not, or one
    that t holds in another place while t names another one in its place ("Git commit ...
    Debian changelog" / "Debian commit ... Git changelog")."""
    mine = {n for n, _ in t.names}
    # A name said in another form of the same word ("Flowables" where t has "Flowable") is
    # the same name: compared by their stems too.
    stems = {x for n in mine for x in index_terms(n)}
    said_stems = None
    for low, said in c.names:
        own = set(index_terms(low))
        if low in mine or (own and own <= stems):
            continue
        if said_stems is None:
            said_stems = set(index_terms(c.low))
        others = [s for n, s in t.names if n != low and not _has_word(c.low, n)
                  and not set(index_terms(n)) & said_stems]
        if others:
            return Conflict("name", t, others[0], said)
    if c.names and len(t.names) >= 2:
        return _moved_name(c, t)
    return None


def _moved_name(c: Clause, t: Clause) -> Conflict | None:
    """A name of c that the two clauses' words, matched in order, leave out, where t holds
    another name of its own in that place."""
    mine = c.groups or tuple(frozenset([x]) for x in c.seq)
    theirs = t.seq
    names = {x: said for low, said in t.names for x in index_terms(low)}
    pairs = _lcs(mine, theirs, names)
    for low, said in c.names:
        terms = set(index_terms(low))
        at = next((i for i, g in enumerate(mine) if g & terms), None)
        if at is None or at in pairs:
            continue
        before = max((pairs[k] for k in pairs if k < at), default=-1)
        after = min((pairs[k] for k in pairs if k > at), default=len(theirs))
        other = next((names[x] for x in theirs[before + 1:after]
                      if x in names and x not in terms), None)
        if other:
            return Conflict("name", t, other, said)
    return None


def _lcs(mine: Sequence[frozenset], theirs: Sequence[str], names) -> dict[int, int]:
    """mine's words matched with theirs in order, the other words before names (a name
    counts half): {i: j}."""
    return _aligned(len(mine), len(theirs), lambda i, j: (
        (0.5 if theirs[j] in names else 1.0) if theirs[j] in mine[i] else 0.0))


def _aligned(n: int, m: int, gain) -> dict[int, int]:
    """The in-order matching of n items with m that gains most, gain(i, j) for a pair
    (0: they do not match): a weighted longest common subsequence, {i: j}."""
    if not n or not m:
        return {}
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            g = gain(i, j)
            best[i][j] = max(best[i + 1][j], best[i][j + 1],
                             best[i + 1][j + 1] + g if g else 0.0)
    out, i, j = {}, 0, 0
    while i < n and j < m:
        g = gain(i, j)
        if g and best[i][j] == best[i + 1][j + 1] + g:
            out[i] = j
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def _holds_name(t: Clause, low: str) -> bool:
    """Whether clause t says the name low, as written or in another form of its word(s)."""
    if _has_word(t.low, low):
        return True
    stems = set(index_terms(low))
    return bool(stems) and stems <= set(t.terms)


def _has_word(text: str, word: str) -> bool:
    """Whether word occurs in text (both lower-cased) and not inside another word."""
    at = text.find(word)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(word)] if at + len(word) < len(text) else " "
        if not before.isalnum() and not (after.isalnum() and word.isascii()):
            return True
        at = text.find(word, at + 1)
    return False
