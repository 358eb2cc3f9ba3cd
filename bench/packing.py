"""Packing benchmark: evidence recall per question kind at several prompt budgets, for docchat's
packer and simple baselines, on three question sets; plus packing time on a 1,158-page stored
document.

    python bench/packing.py [--json] [--budgets 1000,2000,4000,8000,32000]
                            [--sets test,tuning,old] [--methods docchat,bm25-chunks,head]
                            [--counter llamacpp|cl100k] [--verbose] [--eval-dir DIR]
                            [--fresh-dir DIR] [--tune2-dir DIR]
                            [--reference DIR] [--cache DIR] [--questions FILE] [--only-vectors]

Sets: `test` and `tuning` are the two halves of bench/eval/questions.json (126 questions over
8 documents from bench/fetch_eval_docs.sh, written before any tuning; `test` is the figure of
record and must never be tuned on); `old` is bench/questions.json + questions_heldout.json (the
66 + 8 questions the packer was developed on; their kinds `structure` and `section-span` are
shown as outline and section). `fresh` (on request) is bench/eval/fresh.json: 68 held-out
questions over 5 other documents from bench/fetch_fresh_docs.sh, written by someone who had not
read the packer, to check that changes generalise; never tune on it. --questions FILE adds a set
from FILE (either format); a FILE whose "source" names its own fetch script (such as
bench/eval/tune2.json, a second tuning set: bench/fetch_tune2_docs.sh, or --tune2-dir DIR) reads
its documents from that script's folder.

A question counts as answered when every evidence string is inside the packed context
(PackedContext.text: outline and excerpts), compared with all whitespace removed and case
folded. Budget = prompt tokens: docchat packs with context_window = budget + 512 new tokens
(as qa.ask does with the first-token budget); the baselines get the same budget minus the
tokens of the system prompt, the history and the question. Tokens are counted by the
llama.cpp backend (bundled SmolLM2 tokenizer, chat template included) or, with --counter
cl100k or when llama.cpp is unavailable, by tiktoken cl100k with ChatML-like framing; the
output says which.

Baselines: `bm25-chunks` (BM25 k1=1.2 b=0.75 over 750-character chunks with 150 overlap, the
recursive splitter of Langchain-Chatchat, words: lower-cased Latin words and jieba search-mode
for Chinese, query = the question alone, chunks filled best-first) and `head` (the documents'
text truncated to the budget); `tail`, `middle-out` and `docchat-bm25` (the packer without dense
scores) on request. Baselines use no docchat retrieval code, so tuning docchat cannot move them.

Ingested documents are cached in a SQLite store under --cache (default ~/.cache/docchat-eval),
keyed by a hash of ingest/*.py, so a run after the first does not re-read the PDFs.
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import inspect
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from docchat.backends import Message
from docchat.config import Settings
from docchat.context import prompts
from docchat.context.packing import pack
from docchat.library.store import SessionStore
from ingest import load_document
from ingest.tokens import count_tokens as cl100k_tokens

ROOT = Path(__file__).resolve().parent.parent

KINDS = ["verbatim", "paraphrase", "outline", "section", "cross-language", "follow-up",
         "two-section"]
OLD_KINDS = {"structure": "outline", "section-span": "section"}
BASELINES = ["bm25-chunks", "head", "tail", "middle-out"]
ALL_METHODS = ["docchat", "docchat-bm25", *BASELINES]
MAX_NEW = 512
# Sets whose misses are never printed: only their totals per kind (bench/eval/README.md).
# The test half and the fresh set were read for more than totals while the packer was tuned,
# so they are tuning sets now (issue 22). A set is blind while its questions' split is "blind"
# (bench/eval/split.py --retire turns a spent one into tuning); see blind().
GOAL_8K, GOAL_LEAD, GOAL_2K_VERBATIM = 0.75, 0.25, 0.93


# --- token counters ------------------------------------------------------------------------


class Cl100k:
    """tiktoken cl100k as a backend counter, with ChatML-like framing per message."""
    name = "cl100k_base"

    def __init__(self, context_window: int = 8192) -> None:
        self.context_window = context_window

    def count_tokens(self, text: str) -> int:
        return cl100k_tokens(text)

    def count_prompt_tokens(self, messages) -> int:
        return sum(cl100k_tokens(m.content) + 4 for m in messages) + 3


def make_counter(kind: str):
    """(counter, description): the llama.cpp backend itself when it loads, else cl100k."""
    if kind == "llamacpp":
        try:
            from docchat.backends.llamacpp import LlamaCppBackend
            opts = {"n_ctx": 2048}
            params = inspect.signature(LlamaCppBackend).parameters
            if "probe_tokens" in params:
                opts["probe_tokens"] = 0  # only its tokenizer and chat template are used
            backend = LlamaCppBackend(**opts)
            # It never reads a prompt: take its cache to hold the conversation so far, as
            # the app's backend does after the previous answer (qa.turn_budget asks).
            backend.cached_tokens = lambda messages: None
            return backend, f"llama.cpp backend ({backend.model}: its tokenizer and chat template)"
        except Exception as e:  # noqa: BLE001 - any failure means: fall back and say so
            print(f"llama.cpp unavailable ({e}); counting with tiktoken cl100k", file=sys.stderr)
    return Cl100k(), "tiktoken cl100k (ChatML-like framing)"


# --- questions -----------------------------------------------------------------------------


@dataclass
class Item:
    set: str
    id: str
    kind: str
    docs: list[str]
    question: str
    history: list[Message]
    evidence: list[str]


def read_set(path: Path, name: str, split: str | None = None) -> tuple[dict, list[Item]]:
    spec = json.loads(path.read_text(encoding="utf-8"))
    items = []
    for q in spec["questions"]:
        if split and q.get("split") != split:
            continue
        hist = q.get("history", [])
        if hist and isinstance(hist[0], str):  # old format: alternating user/assistant texts
            hist = [{"role": ("user", "assistant")[i % 2], "content": t}
                    for i, t in enumerate(hist)]
        items.append(Item(name, q["id"], OLD_KINDS.get(q["kind"], q["kind"]),
                          q.get("documents") or q["docs"], q["question"],
                          [Message(m["role"], m["content"]) for m in hist], q["evidence"]))
    return spec["documents"], items


def in_session(items: list[Item]) -> list[Item]:
    """The questions without a history asked second in a session: the set's previous
    question on the same documents first, its answer empty (the first of each document
    group after the group's last); follow-ups keep their own history."""
    out, last = [], {}
    groups: dict[tuple, list[Item]] = {}
    for it in items:
        groups.setdefault((it.set, tuple(it.docs)), []).append(it)
    for it in items:
        if it.history:
            out.append(it)
            continue
        key = (it.set, tuple(it.docs))
        group = groups[key]
        before = last.get(key, group[-1])
        last[key] = it
        if before is it:
            out.append(it)  # a group of one: no other question to start the session
            continue
        out.append(replace(it, history=[Message("user", before.question),
                                        Message("assistant", "")]))
    return out


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text).casefold()


# A Markdown heading's marker ("## Usage", "### Python"): an evidence string copied from a
# heading line names the heading, which a packed context shows in its own form (an outline
# entry, an excerpt's heading path) and a raw chunk as written. Before (the marker compared
# too), the tuning sets' 4,096 questions at 8k: docchat missed 18 whose headings it gave.
HEADING_MARK = re.compile(r"^\s*#{1,6}(?=\s*\S)")


def squash_evidence(text: str) -> str:
    return squash(HEADING_MARK.sub("", text))


def found(evidence: list[str], context: str) -> bool:
    flat = squash(context)
    return all(squash_evidence(e) in flat for e in evidence)


# --- documents -----------------------------------------------------------------------------


def fetched(script: Path, arg: str | None) -> Path:
    if arg:
        return Path(arg)
    out = subprocess.run([str(script)], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip().splitlines()[-1])


def ingest_key() -> str:
    h = hashlib.sha256()
    for p in sorted((ROOT / "ingest").glob("*.py")):
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def file_sha(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


class Library:
    """Documents ingested once into a SQLite store in the cache folder, then loaded from it."""

    def __init__(self, cache: Path) -> None:
        self.store = SessionStore.open(cache / f"bench-{ingest_key()}.db")
        self.docs: dict[str, object] = {}
        self.ingest_s = 0.0

    def get(self, path: Path):
        key = str(path)
        if key not in self.docs:
            doc_id = self.store.find_document(file_sha(path))
            if doc_id is None:
                t = time.perf_counter()
                doc_id = self.store.save_document(load_document(path))
                self.ingest_s += time.perf_counter() - t
            self.docs[key] = self.store.load_document(doc_id)
        return self.docs[key]


# --- baselines (no docchat retrieval code) -----------------------------------------------


def chunk(text: str, size: int = 750, overlap: int = 150) -> list[str]:
    """Recursive character splitting as Langchain's splitter does: paragraphs, lines,
    sentences, words; pieces merged up to size with overlap."""
    seps = ["\n\n", "\n", "。", ". ", " ", ""]

    def split(t: str, level: int) -> list[str]:
        if len(t) <= size or level >= len(seps):
            return [t]
        sep = seps[level]
        parts = t.split(sep) if sep else list(t)
        out = []
        for i, p in enumerate(parts):
            p = p + (sep if sep and i < len(parts) - 1 else "")
            out.extend(split(p, level + 1) if len(p) > size else [p])
        return out

    chunks, cur = [], ""
    for piece in split(text, 0):
        if len(cur) + len(piece) > size and cur:
            chunks.append(cur)
            cur = cur[-overlap:] if overlap else ""
        cur += piece
    if cur.strip():
        chunks.append(cur)
    return chunks


WORD = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+|[^\W_]+", re.UNICODE)


def words(text: str) -> list[str]:
    import jieba
    out = []
    for m in WORD.finditer(text.lower()):
        w = m.group()
        if "\u3400" <= w[0] <= "\ufaff":
            out.extend(t for t in jieba.lcut_for_search(w) if t.strip())
        else:
            out.append(w)
    return out


class ChunkIndex:
    """BM25 (k1=1.2, b=0.75) over one document's 750-character chunks."""

    def __init__(self, text: str) -> None:
        self.chunks = chunk(text)
        self.postings: dict[str, list[tuple[int, int]]] = {}
        self.lengths = []
        for i, c in enumerate(self.chunks):
            tf: dict[str, int] = {}
            for w in words(c):
                tf[w] = tf.get(w, 0) + 1
            self.lengths.append(sum(tf.values()))
            for w, f in tf.items():
                self.postings.setdefault(w, []).append((i, f))
        self.tokens: dict[int, int] = {}

    def ranked(self, query: str) -> list[int]:
        n = len(self.chunks)
        avgdl = sum(self.lengths) / max(1, n)
        scores: dict[int, float] = {}
        for w in set(words(query)):
            lst = self.postings.get(w, [])
            if not lst:
                continue
            idf = max(1e-6, math.log((n - len(lst) + 0.5) / (len(lst) + 0.5)))
            for row, f in lst:
                norm = 1.2 * (1 - 0.75 + 0.75 * self.lengths[row] / avgdl)
                scores[row] = scores.get(row, 0.0) + idf * f * 2.2 / (f + norm)
        return sorted(scores, key=lambda r: -scores[r])


def bm25_chunks(indexes: list[ChunkIndex], question: str, budget: int, counter) -> str:
    """Best chunks of all documents, by score, while they fit."""
    # Scores are per document, so several documents are interleaved by rank.
    ranked = [(rank, i, r) for i, ix in enumerate(indexes)
              for rank, r in enumerate(ix.ranked(question))]
    out, used = [], 0
    for _, i, r in sorted(ranked):
        ix = indexes[i]
        if r not in ix.tokens:
            ix.tokens[r] = counter.count_tokens(ix.chunks[r]) + 2
        if used + ix.tokens[r] > budget:
            continue
        out.append(ix.chunks[r])
        used += ix.tokens[r]
    return "\n\n".join(out)


class Truncation:
    """Head/tail truncation of a text to n tokens, from per-line cumulative counts."""

    def __init__(self, text: str, counter) -> None:
        self.text, self.counter = text, counter
        self.lines = text.splitlines(keepends=True)
        self.cum = [0]
        for line in self.lines:
            self.cum.append(self.cum[-1] + counter.count_tokens(line))

    def head(self, n: int) -> str:
        if n <= 0:
            return ""
        k = max(0, next((i for i, c in enumerate(self.cum) if c > n), len(self.cum)) - 1)
        text = "".join(self.lines[:k])
        if k < len(self.lines):  # part of the next line, by bisection on characters
            rest, line = n - self.cum[k], self.lines[k]
            lo, hi = 0, len(line)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self.counter.count_tokens(line[:mid]) <= rest:
                    lo = mid
                else:
                    hi = mid - 1
            text += line[:lo]
        return text

    def tail(self, n: int) -> str:
        total = self.cum[-1]
        if n <= 0:
            return ""
        if total <= n:
            return self.text
        k = next(i for i, c in enumerate(self.cum) if total - c <= n)
        return "".join(self.lines[k:])


def truncated(tr: Truncation, budget: int, how: str) -> str:
    if how == "head":
        return tr.head(budget)
    if how == "tail":
        return tr.tail(budget)
    half = budget // 2  # middle-out: both ends, the middle dropped
    return tr.head(half) + "\n…\n" + tr.tail(budget - half)


# --- docchat -----------------------------------------------------------------------------


def fixed_tokens(counter, item: Item) -> int:
    """Prompt tokens besides the document text: system prompt, history and question."""
    lang = prompts.question_language(item.question)
    try:
        system, user = prompts.system_prompt(lang), prompts.user_message(item.question, "", lang)
    except TypeError:
        system, user = "", item.question
    return counter.count_prompt_tokens([Message("system", system), *item.history,
                                        Message("user", user)])


PACK_PARAMS = set(inspect.signature(pack).parameters)
# --policy: the PackingPolicy fields changed for this run (docchat's packs get the changed
# policy), so that a setting is measured against the default in the same way.
POLICY_CHANGES: dict = {}
APP_WINDOW = 8192  # the llama.cpp backend's default context window (Settings.n_ctx)


def docchat_pack(docs, item: Item, budget: int, counter, store, dense: bool = True,
                 previous: bool | str = True):
    """docchat's pack at this budget. A follow-up is packed as the app packs it (previous:
    True): each user turn of the history is packed in turn, the first at this budget, each
    later one with the history before it and the previous turn's passages as
    previous_passages, in the window qa.ask gives a follow-up (qa.followup_budget: the
    reused prefix plus a quarter of the budget, within an APP_WINDOW-token window, the
    default llama.cpp context); then the question itself. Only the question's own pack is
    timed."""
    kwargs = {"search": store.searcher([d.id for d in docs]),
              "max_new_tokens": MAX_NEW, "context_window": budget + MAX_NEW}
    if "store" in PACK_PARAMS:
        kwargs["store"] = store
    if not dense:
        kwargs["embedder"] = None
    if POLICY_CHANGES:
        from dataclasses import replace

        from docchat.context.policy import POLICY
        kwargs["policy"] = replace(POLICY, **POLICY_CHANGES)
    users = [k for k, m in enumerate(item.history) if m.role == "user"]
    if previous == "append":
        return append_pack(docs, item, budget, counter, kwargs, users)
    if previous and users and "previous_passages" in PACK_PARAMS:
        from docchat.answer.qa import Budget, followup_budget
        base = Budget(max(APP_WINDOW, budget + MAX_NEW), budget + MAX_NEW, budget, None, None,
                      False)
        def turn(question: str, history: list, passages) -> dict:
            """pack()'s arguments for one turn: a follow-up of passages where given."""
            if passages is None:
                return kwargs
            got = followup_budget(docs, question, counter, history, 3, MAX_NEW, base,
                                  passages)
            return dict(kwargs, carry_allowance=got.carry_allowance,
                        outline_window=got.outline_window,
                        context_window=got.budget.context_window, previous_passages=passages)

        passages = None
        for k in users:
            question, history = item.history[k].content, item.history[:k]
            passages = pack(docs, question, counter, history=history,
                            **turn(question, history, passages)).passages
        kwargs = turn(item.question, item.history, passages)
    t = time.perf_counter()
    p = pack(docs, item.question, counter, history=item.history, **kwargs)
    return p, (time.perf_counter() - t) * 1000


def append_pack(docs, item: Item, budget: int, counter, kwargs: dict, users: list[int]):
    """docchat's pack as an append-only conversation (pack_turn), as the app packs with
    qa.ask(conversation=...): each user turn of the history in turn, its answer the
    history's next message, each turn's budget from qa.turn_budget within an APP_WINDOW
    window; then the question itself (timed)."""
    from dataclasses import replace

    from docchat.answer import qa
    from docchat.answer.qa import Budget, turn_budget
    from docchat.context.conversation import Conversation
    from docchat.context.turn_packing import pack_turn
    try:
        from docchat.context.turn_packing import read_ahead
    except ImportError:  # an earlier commit's packer
        read_ahead = None

    base = Budget(max(APP_WINDOW, budget + MAX_NEW), budget + MAX_NEW, budget, None, None,
                  False)
    opts = {k: v for k, v in kwargs.items() if k != "context_window"}
    conv = Conversation()

    def packed(question: str):
        c = conv
        if getattr(qa, "ahead_held", None) is not None:  # as qa.ask does
            c = qa.ahead_held(counter, conv, base, MAX_NEW)
        got, new = turn_budget(counter, c, question, MAX_NEW, base)
        return pack_turn(docs, question, counter, c, context_window=got.context_window,
                         new_tokens=new, **opts)

    for k in users:
        answer = item.history[k + 1].content if k + 1 < len(item.history) else ""
        conv = conv.then(packed(item.history[k].content), answer)
        ahead = getattr(qa, "READ_AHEAD_SHARE", 0.0)
        if ahead > 0 and read_ahead is not None:  # the app's read-ahead, while the user reads
            conv = replace(conv, ahead=read_ahead(docs, counter, conv, int(ahead * budget),
                                                  **opts))
    t = time.perf_counter()
    p = packed(item.question)
    return p, (time.perf_counter() - t) * 1000


# --- run -----------------------------------------------------------------------------------


@dataclass
class Results:
    hits: dict = field(default_factory=dict)  # (set, method, budget, kind) -> [bool]
    misses: list = field(default_factory=list)
    pack_ms: dict = field(default_factory=dict)  # budget -> [ms]

    def add(self, set_, method, budget, kind, ok):
        self.hits.setdefault((set_, method, budget, kind), []).append(ok)


def share(v: list[bool]) -> float:
    return round(sum(v) / len(v), 2) if v else float("nan")


def git_state() -> dict:
    def run(*a):
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = run("status", "--porcelain", "--", "docchat", "ingest")
    return {"commit": run("rev-parse", "--short", "HEAD"),
            "uncommitted_docchat_or_ingest_files": len(dirty.splitlines()) if dirty else 0}


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--budgets", default="1000,2000,4000,8000,32000")
    ap.add_argument("--sets", default="test,tuning,old",
                    help="test, tuning (halves of bench/eval/questions.json), old, "
                         "fresh (bench/eval/fresh.json, held out)")
    ap.add_argument("--methods", default="docchat,bm25-chunks,head",
                    help="of " + ",".join(ALL_METHODS))
    ap.add_argument("--counter", default="llamacpp", choices=["llamacpp", "cl100k"])
    ap.add_argument("--questions", action="append", default=[],
                    help="extra question file (set named after the file)")
    ap.add_argument("--eval-dir", help="folder from bench/fetch_eval_docs.sh")
    ap.add_argument("--fresh-dir", help="folder from bench/fetch_fresh_docs.sh")
    ap.add_argument("--tune2-dir", help="folder from bench/fetch_tune2_docs.sh (documents of "
                                        "--questions bench/eval/tune2.json)")
    ap.add_argument("--reference", help="folder with debian-reference.{en,zh-cn}.pdf")
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    ap.add_argument("--cache", default=os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "docchat-eval"))
    ap.add_argument("--no-timing", action="store_true", help="skip the 1,158-page timing")
    ap.add_argument("--embedder", choices=("minilm", "use", "off"), default=Settings().embedder,
                    help="docchat's dense scores (Settings.embedder; default %(default)s): the "
                         "multilingual Universal Sentence Encoder, all-MiniLM-L6-v2 (English "
                         "documents only) or none")
    ap.add_argument("--window-tokens", type=int, default=0,
                    help="MiniLM reads this many wordpieces of each window (default: "
                         "embeddings.WINDOW_TOKENS); vectors are stored per setting")
    ap.add_argument("--policy", default="", metavar="FIELD=VALUE,...",
                    help="docchat packs with these PackingPolicy fields changed (e.g. "
                         "meaning_block_weight=0): a setting measured against the default")
    ap.add_argument("--followups", choices=("app", "append", "plain"), default="app",
                    help="app: a follow-up gets the previous question's passages as the app "
                         "passes them (previous_passages); append: every question packed as "
                         "a turn of an append-only conversation (pack_turn, "
                         "qa.ask(conversation=...)); plain: the history text only")
    ap.add_argument("--in-session", action="store_true",
                    help="every question without a history is asked second in a session: "
                         "after the set's previous question on the same documents (its answer "
                         "left empty), as a user asks a new question later in a chat; use "
                         "with --followups append (the chat page's packing)")
    ap.add_argument("--only-vectors", action="store_true",
                    help="compute (and time) the documents' section, window and part vectors "
                         "into the cache's store, print them and stop")
    ap.add_argument("--verbose", action="store_true",
                    help="list docchat's misses (never those of a blind set: totals only)")
    ap.add_argument("--kinds", default="",
                    help="only the questions of these kinds (comma-separated; default all)")
    ap.add_argument("--pooled", nargs="+", metavar="RECORD",
                    help="print the recall per kind over all sets of these --json records "
                         "(one: its methods; two: docchat before -> after, with the best "
                         "baseline of the first; a record may be several, comma-separated, "
                         "their sets pooled) as a Markdown table, and stop")
    return ap.parse_args()


class EvalDir:
    """The folder of bench/fetch_eval_docs.sh, fetched on first use."""

    def __init__(self, arg: str | None) -> None:
        self.arg, self.path = arg, None

    def __call__(self) -> Path:
        if self.path is None:
            self.path = fetched(ROOT / "bench" / "fetch_eval_docs.sh", self.arg)
        return self.path


def load_sets(args, sets: list[str], need_eval: EvalDir
              ) -> tuple[list[Item], dict[tuple[str, str], Path]]:
    """The questions of the sets asked for (and of --questions files, whose set names are
    appended to sets), with the file of each (set, document key)."""
    corpus = Path(args.corpus)
    items: list[Item] = []
    paths: dict[tuple[str, str], Path] = {}  # (set, doc key) -> file
    for s in sets:
        if s in ("test", "tuning"):
            documents, got = read_set(ROOT / "bench" / "eval" / "questions.json", s, split=s)
            for k, rel in documents.items():
                paths[(s, k)] = need_eval() / rel
        elif s == "fresh":
            documents, got = read_set(ROOT / "bench" / "eval" / "fresh.json", s, split=s)
            fresh_dir = fetched(ROOT / "bench" / "fetch_fresh_docs.sh", args.fresh_dir)
            for k, rel in documents.items():
                paths[(s, k)] = fresh_dir / rel
        elif s == "old":
            got, documents = [], {}
            for f in ("questions.json", "questions_heldout.json"):
                d, g = read_set(ROOT / "bench" / f, "old")
                documents.update(d)
                got += g
            ref = None
            for k, rel in documents.items():
                if rel.startswith("debian-reference"):
                    ref = ref or fetched(corpus / "fetch-debian-reference.sh", args.reference)
                    paths[(s, k)] = ref / rel
                else:
                    paths[(s, k)] = corpus / rel
        else:
            raise SystemExit(f"unknown set {s!r}: test, tuning, old or fresh")
        items += got
    for f in args.questions:
        name = Path(f).stem
        documents, got = read_set(Path(f), name)
        # A set whose "source" is a fetch script of its own (not the eval set's) takes its
        # documents from that script's folder (--tune2-dir for bench/fetch_tune2_docs.sh).
        source = json.loads(Path(f).read_text(encoding="utf-8")).get("source", "")
        own = None
        if source.endswith(".sh") and Path(source).name != "fetch_eval_docs.sh":
            own = fetched(ROOT / source, {"fetch_tune2_docs.sh": args.tune2_dir,
                                          "fetch_fresh_docs.sh": args.fresh_dir}.get(
                                              Path(source).name))
        for k, rel in documents.items():
            p = Path(rel)
            paths[(name, k)] = p if p.is_absolute() else own / rel if own else (
                need_eval() / rel if (need_eval() / rel).exists() else corpus / rel)
        sets.append(name)
        items += got
    return items, paths


def run(items: list[Item], paths: dict, lib: Library, methods: list[str], budgets: list[int],
        counter, followups: str) -> tuple[Results, float]:
    """Every method at every budget on every question; (results, document load seconds)."""
    # Every evidence string must be in its document's text (guards against a changed ingest).
    t_load = time.perf_counter()
    for it in items:
        full = squash("\n".join(lib.get(paths[(it.set, k)]).text for k in it.docs))
        missing = [e for e in it.evidence if squash(e) not in full]
        if missing:
            raise SystemExit(f"{it.set} {it.id}: evidence not in the document text: {missing}")
    load_s = time.perf_counter() - t_load

    chunk_ix: dict[str, ChunkIndex] = {}
    truncs: dict[tuple, Truncation] = {}
    res = Results()
    for it in items:
        docs = [lib.get(paths[(it.set, k)]) for k in it.docs]
        keys = tuple(str(paths[(it.set, k)]) for k in it.docs)
        fixed = fixed_tokens(counter, it)
        for budget in budgets:
            text_budget = max(0, budget - fixed)
            contexts = {}
            if "docchat" in methods:
                p, ms = docchat_pack(docs, it, budget, counter, lib.store,
                                     previous="append" if followups == "append"
                                     else followups == "app")
                res.pack_ms.setdefault(budget, []).append(ms)
                contexts["docchat"] = p.text
            if "docchat-bm25" in methods:
                contexts["docchat-bm25"] = docchat_pack(docs, it, budget, counter, lib.store,
                                                        dense=False)[0].text
            if "bm25-chunks" in methods:
                for k, d in zip(keys, docs):
                    if k not in chunk_ix:
                        chunk_ix[k] = ChunkIndex(d.text)
                contexts["bm25-chunks"] = bm25_chunks([chunk_ix[k] for k in keys], it.question,
                                                      text_budget, counter)
            for how in ("head", "tail", "middle-out"):
                if how in methods:
                    if keys not in truncs:
                        truncs[keys] = Truncation("\n\n".join(d.text for d in docs), counter)
                    contexts[how] = truncated(truncs[keys], text_budget, how)
            oks = {m: found(it.evidence, ctx) for m, ctx in contexts.items()}
            for m, ok in oks.items():
                res.add(it.set, m, budget, it.kind, ok)
            if "docchat" in oks and not oks["docchat"] and not blind(it.set):
                flat = squash(contexts["docchat"])
                lost = [e for e in it.evidence if squash_evidence(e) not in flat]
                also = [m for m, ok in oks.items() if ok]
                res.misses.append(f"{it.set} {budget} {it.id} [{it.kind}] {it.question} "
                                  f"-> missing {lost}" + (f" (found by {', '.join(also)})"
                                                          if also else ""))
    return res, load_s


@functools.lru_cache(maxsize=None)
def blind(name: str) -> bool:
    """A blind set (bench/eval/<name>.json whose questions' split is "blind", or a --questions
    file named blind*): never a miss listed, totals only."""
    path = ROOT / "bench" / "eval" / f"{name}.json"
    if path.exists():
        spec = json.loads(path.read_text(encoding="utf-8"))
        return any(q.get("split") == "blind" for q in spec["questions"])
    return name.startswith("blind")


def prepare_vectors(items: list[Item], paths: dict, lib: Library) -> dict:
    """Every kind of vector (sections, windows, parts) of every document, as warm() computes
    them after an upload, read from the store when it has them: {document: {kind: seconds
    embedding (0 when stored), "pages", "window_count"}}; the cost per page of an upload."""
    from docchat.context import embeddings
    emb = embeddings.DEFAULT
    kinds = getattr(embeddings, "KINDS", ())
    out: dict = {}
    if not emb.enabled or not kinds:
        return out
    files = dict.fromkeys(paths[(it.set, k)] for it in items for k in it.docs)
    for path in sorted(files, key=lambda p: len(lib.get(p).pages)):  # the small ones first
        doc = lib.get(path)
        # What embeddings.warm() computes after an upload: the model's vectors where it
        # reads the document, and its companion's (the multilingual model: every kind for a
        # Chinese document under MiniLM, the windows of an English one).
        jobs = embeddings.companion_jobs(doc, emb) if hasattr(embeddings, "companion_jobs") \
            else ([(emb, kinds)] if emb.reads(doc) else [])
        if not jobs or not doc.sections:
            continue
        rec = {"pages": len(doc.pages), "window_count": len(emb.units(doc, "windows"))}
        for model, model_kinds in jobs:
            extra = "" if model is emb else f" ({model.model.name})"
            for kind in model_kinds:
                stored = model.ready(doc, lib.store, kind)
                t = time.perf_counter()
                model.vectors(doc, lib.store, kind=kind)
                rec[kind + extra] = 0.0 if stored else round(time.perf_counter() - t, 1)
        out[path.name] = rec
    return out


def _window_tokens() -> int:
    from docchat.context import embeddings

    return embeddings.MINILM.window_tokens


def summarize(res: Results, items: list[Item], sets: list[str], methods: list[str],
              budgets: list[int], counter_name: str, args, lib: Library, load_s: float) -> dict:
    """The JSON summary: recall per set, method, budget and kind, with the run's context."""
    summary = {
        "counter": counter_name, "budgets": budgets, "methods": methods, "max_new_tokens": MAX_NEW,
        "followups": args.followups, "embedder": args.embedder,
        "window_tokens": _window_tokens(), "policy_changes": POLICY_CHANGES,
        "git": git_state(), "load_average": round(os.getloadavg()[0], 1),
        "document_load_s": round(load_s, 1), "ingest_s": round(lib.ingest_s, 1),
        "sets": {}, "pack_ms": {str(b): {"median": round(statistics.median(v), 1),
                                          "max": round(max(v), 1)}
                                for b, v in res.pack_ms.items()},
    }
    for s in sets:
        its = [i for i in items if i.set == s]
        kinds = [k for k in KINDS if any(i.kind == k for i in its)]
        rec = {}
        for m in methods:
            rec[m] = {}
            for b in budgets:
                row = {k: share(res.hits.get((s, m, b, k), [])) for k in kinds}
                allv = [x for k in kinds for x in res.hits.get((s, m, b, k), [])]
                row["all"] = share(allv)
                rec[m][str(b)] = row
        summary["sets"][s] = {"questions": len(its),
                              "by_kind": {k: sum(1 for i in its if i.kind == k) for k in kinds},
                              "recall": rec}
    return summary


def pooled(record: dict) -> dict:
    """{method: {budget: {kind: [found, asked]}}} over every set of a --json record
    ("all" too): its per-set recall times each set's questions of the kind."""
    out: dict = {}
    for st in record["sets"].values():
        for m, by_budget in st["recall"].items():
            for b, row in by_budget.items():
                cell = out.setdefault(m, {}).setdefault(b, {})
                for k, n in st["by_kind"].items():
                    got = round(row[k] * n)
                    for key in (k, "all"):
                        c = cell.setdefault(key, [0, 0])
                        c[0] += got
                        c[1] += n
    return out


def merged(arg: str) -> dict:
    """A --json record, or several (comma-separated paths: runs of different sets, each
    with its own --cache) as one: their sets together."""
    records = [json.loads(Path(f).read_text(encoding="utf-8")) for f in arg.split(",")]
    out = dict(records[0], sets={})
    for rec in records:
        out["sets"].update(rec["sets"])
    return out


def pooled_table(records: list[dict]) -> str:
    """Markdown: recall per kind over all sets of one record (every method), or of two
    (docchat before -> after, and the first record's best baseline at each budget)."""
    first = pooled(records[0])
    kinds = [k for k in [*KINDS, "all"]
             if any(k in row for by_b in first.values() for row in by_b.values())]
    budgets = sorted({b for by_b in first.values() for b in by_b}, key=int)
    label = {b: f"{int(b) // 1000}k" for b in budgets}
    n = {k: next(row[k][1] for by_b in first.values() for row in by_b.values() if k in row)
         for k in kinds}
    head = "| method | budget | " + " | ".join(f"{k} ({n[k]})" for k in kinds) + " |"
    lines = [head, "|---|---:|" + "---:|" * len(kinds)]

    def r(c) -> str:
        return f"{c[0] / c[1]:.2f}" if c and c[1] else "-"

    if len(records) == 1:
        for m, by_b in first.items():
            for b in budgets:
                lines.append(f"| {m} | {label[b]} | "
                             + " | ".join(r(by_b[b].get(k)) for k in kinds) + " |")
        return "\n".join(lines)
    after = pooled(records[1])["docchat"]
    budgets = [b for b in budgets if b in after]
    for b in budgets:
        cells = []
        for k in kinds:
            x, y = first["docchat"][b].get(k), after[b].get(k)
            cells.append(r(x) if r(x) == r(y) else f"{r(x)} → **{r(y)}**")
        lines.append(f"| docchat | {label[b]} | " + " | ".join(cells) + " |")
    base = [m for m in BASELINES if m in first]
    for b in budgets if base else ():
        best = [max((first[m][b][k][0] / first[m][b][k][1] for m in base
                     if k in first[m][b]), default=0.0) for k in kinds]
        lines.append(f"| best baseline ({'/'.join(base)}) | {label[b]} | "
                     + " | ".join(f"{v:.2f}" for v in best) + " |")
    return "\n".join(lines)


def policy_changes(text: str) -> dict:
    """--policy's "field=value,..." as PackingPolicy fields of their own types."""
    from docchat.context.policy import PackingPolicy

    fields = PackingPolicy.__dataclass_fields__
    out: dict = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, _, value = item.partition("=")
        if name not in fields or not value:
            raise SystemExit(f"--policy: {item!r} is not FIELD=VALUE of a PackingPolicy field")
        kind = type(fields[name].default)
        out[name] = value.lower() in ("1", "true", "yes") if kind is bool else kind(value)
    return out


def main() -> None:
    args = parse_args()
    if args.pooled:
        print(pooled_table([merged(arg) for arg in args.pooled[:2]]))
        return
    from docchat.context import embeddings
    embeddings.configure(argparse.Namespace(embedder=args.embedder))
    if args.window_tokens:  # a setting tried: MINILM is the model every embedder shares
        object.__setattr__(embeddings.MINILM, "window_tokens", args.window_tokens)
    POLICY_CHANGES.update(policy_changes(args.policy))
    budgets = [int(b) for b in args.budgets.split(",")]
    methods = [m for m in args.methods.split(",") if m]
    unknown = set(methods) - set(ALL_METHODS)
    if unknown:
        raise SystemExit(f"unknown methods {sorted(unknown)}")
    sets = [s for s in args.sets.split(",") if s]
    cache = Path(args.cache)
    counter, counter_name = make_counter(args.counter)
    lib = Library(cache)
    need_eval = EvalDir(args.eval_dir)
    items, paths = load_sets(args, sets, need_eval)
    if args.in_session:
        items = in_session(items)
    if args.kinds:
        items = [it for it in items if it.kind in args.kinds.split(",")]
    vectors = prepare_vectors(items, paths, lib) if "docchat" in methods else {}
    if args.only_vectors:
        print(json.dumps({"vectors": vectors, "load_average": round(os.getloadavg()[0], 1),
                          "embedder": args.embedder, "git": git_state()}))
        return
    res, load_s = run(items, paths, lib, methods, budgets, counter, args.followups)
    summary = summarize(res, items, sets, methods, budgets, counter_name, args, lib, load_s)
    summary["goals"] = goals(summary)
    summary["vectors"] = vectors
    if not args.no_timing and "docchat" in methods:
        summary["pack_ms_1000_pages"] = big_timing(lib, need_eval() / "octave.pdf", counter,
                                                   budgets)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print(table(summary))
    if args.verbose:
        print("\n".join(res.misses), file=sys.stderr if args.json else sys.stdout)


def goals(s: dict) -> dict:
    """Issue 11's goals on the test half (when it ran with docchat and a baseline)."""
    t = s["sets"].get("test")
    out = {}
    if not t or "docchat" not in t["recall"]:
        return out
    base = [m for m in BASELINES if m in t["recall"]]
    if "8000" in t["recall"]["docchat"] and base:
        per = {}
        for k in t["by_kind"]:
            dc = t["recall"]["docchat"]["8000"][k]
            best = max(t["recall"][m]["8000"][k] for m in base)
            # Verbatim is to match the best baseline (BM25 chunks reach 1.00 there); every
            # other kind is to lead it by 25 points.
            lead = 0.0 if k == "verbatim" else GOAL_LEAD
            per[k] = {"docchat": dc, "best_baseline": best, "lead": round(dc - best, 2),
                      "met": dc >= GOAL_8K and dc - best >= lead - 1e-9}
        out["8k_every_kind"] = per
    if "2000" in t["recall"]["docchat"] and "verbatim" in t["by_kind"]:
        v = t["recall"]["docchat"]["2000"]["verbatim"]
        out["2k_verbatim"] = {"docchat": v, "met": v >= GOAL_2K_VERBATIM}
    return out


def big_timing(lib: Library, path: Path, counter, budgets: list[int]) -> dict:
    """Packing time on the Octave manual (1,158 pages) loaded from the store: the first pack
    in this process (dense scores computed, or read from the store where pack takes one),
    then the median of 5 warm packs per budget."""
    doc = lib.get(path)
    item = Item("timing", "t", "verbatim", [], "How do I set a breakpoint in a function?", [], [])
    from docchat.context import embeddings
    fresh = getattr(embeddings, "Embedder", None)
    first = None
    if fresh is not None and "embedder" in PACK_PARAMS:
        # A new embedder: nothing cached in memory, as after a restart.
        kwargs = {"search": lib.store.searcher([doc.id]),
                  "max_new_tokens": MAX_NEW, "context_window": 8000 + MAX_NEW,
                  "embedder": fresh(model=embeddings.DEFAULT.model)}
        if "store" in PACK_PARAMS:
            kwargs["store"] = lib.store
        t = time.perf_counter()
        pack([doc], item.question, counter, **kwargs)
        first = round((time.perf_counter() - t) * 1000, 1)
    for _ in range(2):
        docchat_pack([doc], item, 8000, counter, lib.store)
    warm = {str(b): round(statistics.median(docchat_pack([doc], item, b, counter, lib.store)[1]
                                            for _ in range(5)), 1) for b in budgets}
    return {"document": path.name, "pages": len(doc.pages), "sections": len(doc.sections),
            "first_pack_ms_fresh_embedder": first, "warm_median_ms": warm}


FOLLOWUPS = {"app": "as the app packs them (previous_passages; window from qa.followup_budget)",
             "append": "as turns of an append-only conversation (pack_turn; qa.turn_budget)",
             "plain": "from the history text only"}


def table(s: dict) -> str:
    lines = [f"Evidence recall (share of questions with all evidence in the packed context); "
             f"budget = prompt tokens counted by {s['counter']}, {s['max_new_tokens']} new tokens "
             f"on top. git {s['git']['commit']}, {s['git']['uncommitted_docchat_or_ingest_files']}"
             f" uncommitted files in docchat/ and ingest/; load average {s['load_average']}; "
             f"follow-ups packed {FOLLOWUPS.get(s.get('followups'), 'from the history only')}; "
             f"dense scores: {s.get('embedder', 'minilm')}."]
    for name, st in s["sets"].items():
        kinds = list(st["by_kind"])
        title = {"test": "TEST half (tuning now)", "tuning": "tuning half",
                 "old": "old set (bench/questions*.json)"}.get(name, name)
        lines.append(f"\n{title}: {st['questions']} questions ("
                     + ", ".join(f"{k} {n}" for k, n in st["by_kind"].items()) + ")\n")
        lines.append("| method | budget | " + " | ".join(kinds) + " | all |")
        lines.append("|---|---:|" + "---:|" * (len(kinds) + 1))
        for m, per in st["recall"].items():
            for b, row in per.items():
                lines.append(f"| {m} | {b} | " + " | ".join(f"{row[k]:.2f}" for k in kinds)
                             + f" | {row['all']:.2f} |")
    g = s.get("goals", {})
    if "8k_every_kind" in g:
        lines.append("\nGoal at 8000 on the test half: every kind >= 0.75 and >= 0.25 over the "
                     "best baseline (verbatim: at least the best baseline)")
        for k, v in g["8k_every_kind"].items():
            lines.append(f"  {k:15} docchat {v['docchat']:.2f}  best baseline "
                         f"{v['best_baseline']:.2f}  lead {v['lead']:+.2f}  "
                         f"{'met' if v['met'] else 'MISSED'}")
    if "2k_verbatim" in g:
        v = g["2k_verbatim"]
        lines.append(f"Goal at 2000 on the test half: verbatim >= 0.93: {v['docchat']:.2f} "
                     f"{'met' if v['met'] else 'MISSED'}")
    pm = s.get("pack_ms", {})
    if pm:
        lines.append("Packing time per question, ms (median / max): " + ", ".join(
            f"{b}: {v['median']} / {v['max']}" for b, v in pm.items()))
    big = s.get("pack_ms_1000_pages")
    if big:
        lines.append(f"Packing time, {big['document']} ({big['pages']} pages, {big['sections']} "
                     f"sections) loaded from the store, warm median ms: " + ", ".join(
                         f"{b}: {v}" for b, v in big["warm_median_ms"].items())
                     + f" (goal < 200); first pack with a fresh embedder: "
                     f"{big['first_pack_ms_fresh_embedder']} ms")
    lines.append(f"Documents loaded in {s['document_load_s']} s (ingested now: {s['ingest_s']} s).")
    for name, v in s.get("vectors", {}).items():
        spent = {k: t for k, t in v.items() if k.split(" ")[0] in ("sections", "windows", "parts")}
        per_page = sum(spent.values()) / max(v["pages"], 1)
        lines.append(f"Vectors of {name} ({v['pages']} pages, {v['window_count']} windows), s "
                     f"(0: stored): " + ", ".join(f"{k} {t}" for k, t in spent.items())
                     + (f"; {per_page * 1000:.0f} ms per page" if any(spent.values()) else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
