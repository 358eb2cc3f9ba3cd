"""Packing benchmark: share of questions whose evidence is all inside the packed context,
per question kind, at 8k and 32k tokens, for docchat's packer and for head, tail and
middle-out truncation and a plain BM25 retriever over 750-character chunks (150 overlap,
Langchain-Chatchat's default splitter; query = the question alone). Also packing time,
including a synthetic 1,000-page document.

    python bench/packing.py [--json] [--budgets 8000,32000] [--reference DIR]

Token counts: tiktoken cl100k (the counter ingestion uses). Questions: bench/questions.json;
bench/questions_heldout.json holds 8 paraphrase questions written before the dense scores
were measured (--questions bench/questions_heldout.json).
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlite_utils import Database  # noqa: E402

from docchat import prompts  # noqa: E402
from docchat.backends import Message  # noqa: E402
from docchat.embeddings import DEFAULT as DEFAULT_EMBEDDER  # noqa: E402
from docchat.packing import pack  # noqa: E402
from docchat.retrieval import _Postings, index_terms  # noqa: E402
from docchat.store import SessionStore  # noqa: E402
from ingest import load_document  # noqa: E402
from ingest.document import Block, Document, Page, Section  # noqa: E402
from ingest.tokens import _encoding, count_tokens  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
KINDS = ["verbatim", "paraphrase", "follow-up", "structure", "section-span", "cross-language"]
METHODS = ["docchat", "docchat-bm25", "docchat-bm25-prf", "docchat-memory",
           "docchat-no-expansion", "bm25-chunks", "head", "tail", "middle-out"]
MAX_NEW = 512


class Cl100k:
    """tiktoken cl100k as a backend counter, with ChatML-like framing per message."""
    name = "cl100k_base"

    def __init__(self, context_window: int = 8192) -> None:
        self.context_window = context_window

    def count_tokens(self, text: str) -> int:
        return count_tokens(text)

    def count_prompt_tokens(self, messages) -> int:
        return sum(count_tokens(m.content) + 4 for m in messages) + 3


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def found(evidence: list[str], context: str) -> bool:
    flat = squash(context)
    return all(squash(e) in flat for e in evidence)


# --- baselines ---------------------------------------------------------------------------


def truncate(text: str, budget: int, how: str) -> str:
    enc = _encoding()
    ids = enc.encode_ordinary(text)
    if len(ids) <= budget:
        return text
    if how == "head":
        return enc.decode(ids[:budget])
    if how == "tail":
        return enc.decode(ids[-budget:])
    half = budget // 2  # middle-out: keep both ends, drop the middle
    return enc.decode(ids[:half]) + "\n…\n" + enc.decode(ids[-(budget - half):])


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


class ChunkIndex:
    """BM25 (k1=1.2, b=0.75) over chunks, with the words the store indexes (jieba for
    Chinese, Porter stemming for English)."""

    def __init__(self, chunks: list[str]) -> None:
        doc = Document("", "", "", "", [], [Section(i, (), 0, 1, 1, "prose",
                                                    (Block("prose", c, 1),))
                                            for i, c in enumerate(chunks)])
        self.chunks = chunks
        self.post = _Postings(doc)

    def ranked(self, query: str) -> list[int]:
        import math
        n = len(self.chunks)
        avgdl = sum(self.post.lengths) / max(1, n)
        scores: dict[int, float] = {}
        for w in set(index_terms(query)):
            lst = self.post.postings.get(w, [])
            if not lst:
                continue
            idf = max(1e-6, math.log((n - len(lst) + 0.5) / (len(lst) + 0.5)))
            for row, f in lst:
                norm = 1.2 * (1 - 0.75 + 0.75 * self.post.lengths[row] / avgdl)
                scores[row] = scores.get(row, 0.0) + idf * f * 2.2 / (f + norm)
        return sorted(scores, key=lambda r: -scores[r])


def bm25_chunks(index: ChunkIndex, question: str, budget: int) -> str:
    out, used = [], 0
    for r in index.ranked(question):
        c = count_tokens(index.chunks[r]) + 2
        if used + c > budget:
            continue
        out.append(index.chunks[r])
        used += c
    return "\n\n".join(out)


# --- docchat -------------------------------------------------------------------------------


def prf_rewrite(search, docs, k: int = 3, n_terms: int = 8):
    """Pseudo-relevance feedback (RM3-like): the question plus the terms most
    characteristic of its top-k BM25 sections, weighted by those sections' scores."""
    import math
    from collections import Counter as Tally

    from docchat.retrieval import content_terms as words_of
    by_key = {(d.id if d.id is not None else i, s.index): s
              for i, d in enumerate(docs) for s in d.sections}
    n = len(by_key) or 1
    df: Tally = Tally()
    for s in by_key.values():
        df.update(set(words_of(" ".join(s.heading_path) + " " + s.text)))

    def rewrite(question: str) -> str:
        hits = search(" ".join(words_of(question)))[:k]
        if not hits:
            return question
        top = max(h.score for h in hits) or 1.0
        weight: Tally = Tally()
        for h in hits:
            s = by_key.get((h.doc_id, h.section))
            if s is None:
                continue
            tf = Tally(words_of(" ".join(s.heading_path) + " " + s.text))
            total = sum(tf.values()) or 1
            for w, c in tf.items():
                weight[w] += (h.score / top) * (c / total) * math.log(n / df[w])
        extra = [w for w, _ in weight.most_common(n_terms)]
        return question + " " + " ".join(extra)
    return rewrite


def docchat_context(docs, q, budget, search=None, expand=True, embedder=DEFAULT_EMBEDDER,
                    rewrite=None):
    history = []
    hist = q.get("history", [])
    for k in range(0, len(hist), 2):
        history += [Message("user", hist[k]), Message("assistant", hist[k + 1])]
    lang = prompts.question_language(q["question"])
    counter = Cl100k()
    fixed = counter.count_prompt_tokens(
        [Message("system", prompts.system_prompt(lang)), *history,
         Message("user", prompts.user_message(q["question"], "", lang))])
    # The document context gets the same budget as the baselines' text.
    window = budget + fixed + MAX_NEW
    t = time.perf_counter()
    p = pack(docs, q["question"], Cl100k(window), history=history, search=search,
             max_new_tokens=MAX_NEW, expand=expand, embedder=embedder, rewrite=rewrite)
    return p, (time.perf_counter() - t) * 1000


def thousand_pages(doc: Document, copies: int = 5) -> Document:
    """copies of doc as one document (debian-policy x5: about 1,000 pages)."""
    pages, sections = [], []
    n = len(doc.pages)
    for c in range(copies):
        pages += [Page(p.number + c * n, p.text, None) for p in doc.pages]
        for s in doc.sections:
            blocks = tuple(Block(b.kind, b.text, b.page + c * n) for b in s.blocks)
            path = (f"Copy {c + 1}",) + s.heading_path
            sections.append(replace(s, index=len(sections), heading_path=path,
                                    level=s.level + 1, page_start=s.page_start + c * n,
                                    page_end=s.page_end + c * n, blocks=blocks))
    return Document(path=doc.path, sha256=doc.sha256 + "x5", name="policy-x5.pdf", kind="pdf",
                    pages=pages, sections=sections, language=doc.language,
                    tokens=doc.tokens * copies, tokenizer=doc.tokenizer)


def reference_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    out = subprocess.run([str(CORPUS / "fetch-debian-reference.sh")], capture_output=True,
                         text=True, check=True)
    return Path(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--budgets", default="8000,32000")
    ap.add_argument("--reference", help="folder with debian-reference.{en,zh-cn}.pdf")
    ap.add_argument("--questions", default=str(ROOT / "bench" / "questions.json"))
    ap.add_argument("--verbose", action="store_true", help="list each question's misses")
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    spec = json.loads(Path(args.questions).read_text(encoding="utf-8"))
    ref = reference_dir(args.reference)

    store = SessionStore(Database(memory=True))
    docs: dict[str, Document] = {}
    for key, rel in spec["documents"].items():
        path = ref / rel if rel.startswith("debian-reference") else CORPUS / rel
        doc = load_document(path)
        store.save_document(doc)
        docs[key] = doc
        full = squash(doc.text)
        for q in spec["questions"]:
            if q["docs"] == [key]:
                missing = [e for e in q["evidence"] if squash(e) not in full]
                if missing:
                    raise SystemExit(f"{q['id']}: evidence not in {rel}: {missing}")
    chunk_index = {k: ChunkIndex(chunk(d.text)) for k, d in docs.items()}

    results: dict[int, dict[str, dict[str, list[bool]]]] = {}
    times: dict[int, list[float]] = {}
    misses: list[str] = []
    for budget in budgets:
        res = {m: {k: [] for k in KINDS} for m in METHODS}
        times[budget] = []
        for q in spec["questions"]:
            session = [docs[k] for k in q["docs"]]
            ids = [d.id for d in session]
            p, ms = docchat_context(session, q, budget,
                                    search=lambda text, ids=ids: store.search_sections(text, ids))
            times[budget].append(ms)
            pb, _ = docchat_context(session, q, budget, embedder=None,
                                    search=lambda text, ids=ids: store.search_sections(text, ids))
            pr, _ = docchat_context(
                session, q, budget, embedder=None,
                search=lambda text, ids=ids: store.search_sections(text, ids),
                rewrite=prf_rewrite(lambda text, ids=ids: store.search_sections(text, ids),
                                    session))
            pm, _ = docchat_context(session, q, budget)
            pn, _ = docchat_context(session, q, budget, expand=False,
                                    search=lambda text, ids=ids: store.search_sections(text, ids))
            text = "\n\n".join(d.text for d in session)
            contexts = {
                "docchat": p.text, "docchat-bm25": pb.text, "docchat-bm25-prf": pr.text,
                "docchat-memory": pm.text, "docchat-no-expansion": pn.text,
                "bm25-chunks": "\n\n".join(bm25_chunks(chunk_index[k], q["question"], budget)
                                           for k in q["docs"]),
                "head": truncate(text, budget, "head"), "tail": truncate(text, budget, "tail"),
                "middle-out": truncate(text, budget, "middle-out"),
            }
            for m, ctx in contexts.items():
                ok = found(q["evidence"], ctx)
                res[m][q["kind"]].append(ok)
                if m == "docchat" and not ok:
                    lost = [e for e in q["evidence"] if squash(e) not in squash(ctx)]
                    misses.append(f"{budget} {q['id']} {q['question']} -> {lost}")
        results[budget] = res

    # Packing time on a 1,000-page document (debian-policy x5), already ingested.
    big = thousand_pages(docs["policy"])
    big_id = store.save_document(big)
    big = store.load_document(big_id)
    q = {"question": "What must the build-arch target of debian/rules do?", "evidence": []}
    for _ in range(2):  # warm the caches as a running service has them
        docchat_context([big], q, 8000, search=lambda t: store.search_sections(t, [big_id]))
    big_ms = {b: statistics.median(
        docchat_context([big], q, b, search=lambda t: store.search_sections(t, [big_id]))[1]
        for _ in range(5)) for b in budgets}
    docchat_context([big], q, 8000)
    big_mem_ms = statistics.median(docchat_context([big], q, 8000)[1] for _ in range(5))

    # First-question cost of the dense scores: a fresh embedder on the largest English
    # document (model load, then every section embedded; nothing cached).
    embed_cold = {}
    english = [d for d in docs.values() if d.language != "zh"]
    if english and DEFAULT_EMBEDDER.enabled:
        from docchat.embeddings import Embedder
        largest = max(english, key=lambda d: len(d.sections))
        fresh = Embedder()
        t = time.perf_counter()
        fresh.encoder()
        load_s = time.perf_counter() - t
        t = time.perf_counter()
        fresh.vectors(largest)
        embed_cold = {"document": largest.name, "pages": len(largest.pages),
                      "sections": len(largest.sections), "load_s": round(load_s, 1),
                      "embed_s": round(time.perf_counter() - t, 1),
                      "load_average": round(__import__("os").getloadavg()[0], 1)}

    summary = {
        "budgets": budgets, "questions": len(spec["questions"]),
        "chinese_questions": sum(1 for q in spec["questions"] if prompts.question_language(
            q["question"]) == "zh"),
        "share": {str(b): {m: {k: round(100 * sum(v) / len(v), 1) for k, v in res[m].items() if v}
                           for m in METHODS} for b, res in results.items()},
        "overall": {str(b): {m: round(100 * sum(sum(v) for v in res[m].values())
                                      / sum(len(v) for v in res[m].values()), 1)
                             for m in METHODS} for b, res in results.items()},
        "pack_ms": {str(b): {"median": round(statistics.median(t), 1),
                             "max": round(max(t), 1)} for b, t in times.items()},
        "pack_ms_1000_pages": {str(b): round(v, 1) for b, v in big_ms.items()},
        "pack_ms_1000_pages_memory_index": round(big_mem_ms, 1),
        "embed_cold": embed_cold,
        "pages_1000_doc": len(big.pages), "sections_1000_doc": len(big.sections),
    }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
        return
    print(table(summary))
    if args.verbose:
        print("\n".join(misses))


def table(s: dict) -> str:
    lines = []
    for b in s["budgets"]:
        share = s["share"][str(b)]
        kinds = [k for k in KINDS if k in share["docchat"]]
        lines.append(f"\nEvidence fully inside the packed context, % of questions, budget {b} "
                     f"tokens (cl100k)\n")
        lines.append("| method | " + " | ".join(kinds) + " | all |")
        lines.append("|---|" + "---:|" * (len(kinds) + 1))
        for m in METHODS:
            row = " | ".join(f"{share[m][k]:.0f}" for k in kinds)
            lines.append(f"| {m} | {row} | {s['overall'][str(b)][m]:.0f} |")
        dc, bm = share["docchat"], share["bm25-chunks"]
        lead = " ".join(f"{k} {dc[k] - bm[k]:+.0f}" for k in kinds)
        lines.append(f"\ndocchat - bm25-chunks (points): {lead}")
    lines.append(f"\n{s['questions']} questions ({s['chinese_questions']} Chinese), "
                 f"6 kinds; docchat searches the SQLite FTS5 store, docchat-memory the "
                 f"in-memory BM25 fallback; docchat-no-expansion drops the term map "
                 f"(translations and synonyms).")
    pm = s["pack_ms"]
    lines.append("Packing time per question, ms (median / max): " + ", ".join(
        f"{b}: {pm[str(b)]['median']} / {pm[str(b)]['max']}" for b in s["budgets"]))
    lines.append(f"Packing time, {s['pages_1000_doc']}-page document "
                 f"({s['sections_1000_doc']} sections), median ms: " + ", ".join(
                     f"{b}: {v}" for b, v in s["pack_ms_1000_pages"].items())
                 + f"; in-memory index (warm) at 8000: {s['pack_ms_1000_pages_memory_index']}")
    e = s.get("embed_cold")
    if e:
        lines.append(f"Dense scores, first question on {e['document']} ({e['pages']} pages, "
                     f"{e['sections']} sections): model load {e['load_s']} s + embedding "
                     f"{e['embed_s']} s (load average {e['load_average']} on this machine)")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
