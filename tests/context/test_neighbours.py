"""A question in a reader's words finds the passage written in the document's: the question's
words' neighbours in MiniLM's word-piece embeddings (docchat/context/neighbours.py) that occur
in the document search as a second, lighter query (relevance.EXPAND_WEIGHT)."""
from __future__ import annotations

import numpy as np
import pytest

from docchat.context import embeddings, neighbours
from docchat.context import relevance as rel_mod
from docchat.context.relevance import relevance
from docchat.context.retrieval import content_terms, index_terms
from ingest.document import Block, Document, Page, Section

pytestmark = pytest.mark.skipif(not embeddings.available(), reason="MiniLM not installed")

FILLER = ("The program reads its configuration at start and writes a log of what it did; "
          "options on the command line override the configuration file. ")
TOPICS = ["Installing", "Command line options", "Configuration file", "Log files", "Plugins",
          "Keyboard shortcuts", "Printing", "Fonts", "Colours", "Exporting", "Importing",
          "Templates"]
QUESTION = "Which entries are compulsory?"


def _doc() -> Document:
    secs = [Section(k, (f"{k + 1} {t}",), 1, k + 1, k + 1, "prose",
                    (Block("prose", f"{t} are described here. " + FILLER, k + 1),))
            for k, t in enumerate(TOPICS)]
    # The answer, in the document's words: neither of the question's content words is here.
    secs.append(Section(len(secs), ("13 Metadata",), 1, 13, 13, "prose", (
        Block("prose", "The name and the version are mandatory; a summary may be left out. "
              + FILLER, 13),)))
    return Document(path="tool.pdf", sha256="tool", name="tool.pdf", kind="pdf", language="en",
                    pages=[Page(i + 1, "") for i in range(len(secs))], sections=secs)


class _Flat:
    """Dense vectors that tell nothing apart (every cosine the same): the search's own
    words and their neighbours decide."""

    def encode(self, texts, max_tokens=None):
        return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)


def _rank(doc: Document) -> int:
    found = relevance([doc], QUESTION, embedder=embeddings.Embedder(encoder=_Flat()))
    ranked = [idx for (_, idx), _ in sorted(found.sections.items(), key=lambda kv: -kv[1])]
    return ranked.index(12) if 12 in ranked else 99  # 99: not found at all


def test_a_neighbour_from_the_document_joins_the_search():
    doc = _doc()
    near = neighbours.near_words(content_terms(QUESTION), [doc], index_terms)
    assert "mandatory" in near
    text = "\n".join(s.text.lower() for s in doc.sections)
    assert all(w in text for w in near)  # only the document's own words
    # Not a form of a question word (the index stems those already), nor a word of no text.
    assert not {"entry", "entries", "obligatory"} & set(near)


def test_the_section_in_other_words_ranks_first_with_the_neighbours_and_not_without(
        monkeypatch):
    doc = _doc()
    monkeypatch.setattr(rel_mod, "EXPAND_WEIGHT", 0.5)
    assert _rank(doc) == 0
    monkeypatch.setattr(rel_mod, "EXPAND_WEIGHT", 0.0)
    assert _rank(doc) > 0


def test_no_neighbours_for_a_chinese_document_or_when_dense_scores_are_off(monkeypatch):
    doc = _doc()
    zh = Document(**{**doc.__dict__, "language": "zh", "sha256": "tool-zh"})
    assert neighbours.near_words(content_terms(QUESTION), [zh], index_terms) == []
    monkeypatch.setattr(rel_mod, "EXPAND_WEIGHT", 0.5)
    off = relevance([doc], QUESTION, embedder=embeddings.Embedder(switched_on=False))
    assert 12 not in {idx for _, idx in off.sections}


def test_warm_builds_the_vocabulary_in_the_background_once(monkeypatch):
    doc = Document(**{**_doc().__dict__, "sha256": "tool-warm"})
    built = []
    real = neighbours._vocabulary
    monkeypatch.setattr(neighbours, "_vocabulary", lambda d: built.append(d.sha256) or real(d))
    neighbours.warm([doc]).join(30)
    neighbours.warm([doc]).join(30)
    assert built == ["tool-warm"]
    assert "mandatory" in neighbours.near_words(content_terms(QUESTION), [doc], index_terms)
    assert built == ["tool-warm"]  # the question found it built
