"""Sections that one version splits and the other keeps together.

Ingest cuts a document where it sees headings, and a small edit can change what it sees:
"8. Limitation" renumbered "9." breaks the numbering, so the "9. Accepting Warranty" below
it is no longer taken for a heading and the two sections become one; a text and a PDF of
the same document are cut differently too. A section left unaligned whose words sit
(almost) whole inside the section aligned with its nearest aligned neighbour (before or
after it) is a part of that section, not an addition or a removal; compare() then diffs
the parts together against it.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Protocol, Sequence

from docchat.comparison.redline import normalize, words
from ingest.document import Section

# Share of a section's 3-word runs found in its neighbour's partner for it to be a part.
PART_OF = 0.8
RUN = 3


class Viewed(Protocol):
    title: str
    body: str
    section: Section


@lru_cache(maxsize=256)  # a section holding many parts is read once, not once a part
def runs(text: str, n: int = RUN) -> frozenset[tuple[str, ...]]:
    w = words(text)
    return frozenset(tuple(w[k:k + n]) for k in range(max(0, len(w) - n + 1)))


def dice(x: set[str], y: set[str]) -> float:
    """Words in common: 2|x & y| / (|x| + |y|)."""
    return 2 * len(x & y) / (len(x) + len(y)) if x or y else 1.0


def shared_runs(a: str, b: str, n: int) -> float:
    """Share of the shorter text's n-word runs that the other has too."""
    x, y = runs(a, n), runs(b, n)
    return len(x & y) / min(len(x), len(y)) if x and y else float(x == y)


def contained(part: str, whole: str) -> float:
    """Share of part's 3-word runs that whole has too (1.0 for a part with none)."""
    mine = runs(part)
    return len(mine & runs(whole)) / len(mine) if mine else 1.0


def parts(a: Sequence[Viewed], b: Sequence[Viewed], match: dict[int, int]
          ) -> tuple[dict[int, int], dict[int, int]]:
    """(merged, split): old sections left unaligned that are part of the new section
    aligned with an old neighbour (old index -> new index), and new sections left unaligned
    that are part of the old section aligned with a new neighbour (new -> old)."""
    back = {i: j for j, i in match.items()}
    merged = _parts_of(a, b, set(back), back)
    split = _parts_of(b, a, set(match), match)
    return merged, split


def _parts_of(side: Sequence[Viewed], other: Sequence[Viewed], aligned: set[int],
              partner: dict[int, int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for k, v in enumerate(side):
        if k in aligned or not (v.body or v.title):
            continue
        # the nearest aligned section (or part) before it and the nearest aligned one after
        before = next((partner.get(n, out.get(n)) for n in range(k - 1, -1, -1)
                       if n in partner or n in out), None)
        after = next((partner[n] for n in range(k + 1, len(side)) if n in partner), None)
        for into in (before, after):
            if into is not None and _part_of(v, other[into]):
                out[k] = into
                break
    return out


def _part_of(v: Viewed, whole: Viewed) -> bool:
    if not v.body:  # a heading alone (a contents line read as one): its words, numbered
        return normalize(v.section.title) in whole.body
    return contained(v.title + " " + v.body, whole.body) >= PART_OF
