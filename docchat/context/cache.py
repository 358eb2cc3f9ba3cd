"""One small thread-safe LRU for what is computed from a Document (its outline entries, its
search postings, its text length), shared by the packer, the outline and the retrieval.

A Document is not hashable (a mutable dataclass), and its id() can be reused once it is
freed, so entries are keyed by what names the document (path, name, file hash, store id,
language) and checked on every hit against its content: the entry keeps the tuples of the
sections and pages it was computed from, and a hit counts only when they equal the
document's now. The same Section and Page objects (the usual case: one Document object
asked about again) compare by identity, so a hit costs about 0.01 ms on a 1,158-page
manual (518 sections) instead of the 2-3 ms of hashing all its blocks. A document loaded
again from the store compares equal field by field once (48 ms there, against 0.7 s to
rebuild its postings), then by identity; where the value is cheaper than that (equal=False)
only the same objects hit. A different document of the same name replaces the entry.
"""
from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

from ingest.document import Document

logger = logging.getLogger(__name__)

T = TypeVar("T")


class DocumentCache(Generic[T]):
    """Values computed from Documents: the size most recently used, under one lock.

    get(doc, make) returns make(doc), computed at most once per content while it stays in
    the cache. make runs outside the lock, so two threads asking at once may both compute it
    (the same value; the last one is kept) while other lookups are not held up by a
    computation that takes a second on a large document."""

    def __init__(self, size: int, equal: bool = True) -> None:
        """equal: a hit may be a document of equal content (other objects, loaded again),
        checked field by field; worth it where the value costs more than that comparison
        (postings). False: only the same Section and Page objects hit (values cheaper to
        make again than to compare a reloaded document: outline entries, text length)."""
        self.size, self.equal = size, equal
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[tuple, tuple, T]] = OrderedDict()

    def get(self, doc: Document, make: Callable[[Document], T], variant: Hashable = None) -> T:
        """make(doc) for this document's content (variant: what else the value depends on)."""
        key = (doc.path, doc.name, getattr(doc, "sha256", None), doc.id, doc.language, variant)
        sections, pages = tuple(doc.sections), tuple(doc.pages)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and self._same(hit[0], sections) and self._same(hit[1], pages):
                # Equal: keep these objects, so that the next check is by identity.
                self._entries[key] = (sections, pages, hit[2])
                self._entries.move_to_end(key)
                return hit[2]
        value = make(doc)
        with self._lock:
            self._entries[key] = (sections, pages, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value

    def _same(self, had: tuple, now: tuple) -> bool:
        if len(had) != len(now):
            return False
        if all(a is b for a, b in zip(had, now)):
            return True
        return self.equal and had == now

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
