"""SQLite persistence over sqlite-utils: documents, pages, sections (+FTS5), sessions,
turns and summaries. Migrations are applied on open."""
from __future__ import annotations

import json
import logging
import re
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from docchat.library.windows import WindowHit, section_windows
from ingest.document import Block, Document, Page, Section
from ingest.segment import index_texts, terms

logger = logging.getLogger(__name__)

migrations = Migrations("docchat")


@migrations()
def m001_documents(db: Database) -> None:
    db["documents"].create({
        "id": int, "sha256": str, "path": str, "name": str, "kind": str, "language": str,
        "title": str, "pages": int, "tokens": int, "tokenizer": str, "page_labels": int,
        "warnings": str, "ingested_at": float, "seconds": float,
    }, pk="id", not_null={"sha256"})
    db["documents"].create_index(["sha256"], unique=True)
    db["pages"].create({"doc_id": int, "number": int, "label": str, "text": str},
                       pk=("doc_id", "number"), foreign_keys=[("doc_id", "documents", "id")])
    db["sections"].create({
        "doc_id": int, "idx": int, "heading_path": str, "level": int, "page_start": int,
        "page_end": int, "kind": str, "tokens": int, "blocks": str,
    }, pk=("doc_id", "idx"), foreign_keys=[("doc_id", "documents", "id")])
    # Standalone FTS5 table over jieba-segmented text (unicode61 cannot split Chinese);
    # porter stems English so "restoring" finds "restore".
    db.execute(
        "CREATE VIRTUAL TABLE sections_fts USING fts5("
        "heading, body, doc_id UNINDEXED, idx UNINDEXED, "
        "tokenize='porter unicode61 remove_diacritics 2')"
    )


@migrations()
def m002_sessions(db: Database) -> None:
    db["sessions"].create({"id": str, "title": str, "created_at": float, "updated_at": float},
                          pk="id")
    db["session_documents"].create({"session_id": str, "doc_id": int, "added_at": float},
                                   pk=("session_id", "doc_id"))
    db["turns"].create({
        "id": int, "session_id": str, "role": str, "content": str, "status": str,
        "metrics": str, "sources": str, "created_at": float, "updated_at": float,
    }, pk="id", foreign_keys=[("session_id", "sessions", "id")])
    db["turns"].create_index(["session_id", "id"])


@migrations()
def m003_summaries(db: Database) -> None:
    db["summaries"].create({
        "doc_id": int, "settings_key": str, "markdown": str, "meta": str, "created_at": float,
    }, pk=("doc_id", "settings_key"))


@migrations()
def m004_embeddings(db: Database) -> None:
    # Section vectors per document content (sha256) and model: float32 rows, section order.
    db["embeddings"].create({"sha256": str, "model": str, "data": bytes, "created_at": float},
                            pk=("sha256", "model"))


@migrations()
def m005_pages_ocr(db: Database) -> None:
    # 1 where the page's text was read by OCR (answers citing it say so); H5, issue 12.
    db["pages"].add_column("ocr", int, not_null_default=0)


@migrations()
def m006_windows(db: Database) -> None:
    # Passage-level search: each section's windows (windows.section_windows), body only.
    # Documents stored before this migration are indexed on their first window search
    # (window_docs lists the documents indexed).
    db.execute(
        "CREATE VIRTUAL TABLE windows_fts USING fts5("
        "body, doc_id UNINDEXED, idx UNINDEXED, first UNINDEXED, last UNINDEXED, "
        "tokenize='porter unicode61 remove_diacritics 2')"
    )
    db["window_docs"].create({"doc_id": int}, pk="doc_id")


@migrations()
def m008_comparisons(db: Database) -> None:
    # A session's comparisons of two versions (docchat.comparison.align), shown again on reload.
    db["comparisons"].create({"session_id": str, "old_id": int, "new_id": int, "data": str,
                              "created_at": float}, pk=("session_id", "old_id", "new_id"))


@migrations()
def m007_summary_checks(db: Database) -> None:
    # Each summary statement checked against the document (docchat.context.claims
    # AnswerCheck.to_dict() plus "body", the summary text its spans refer to); NULL: unchecked.
    db["summaries"].add_column("checks", str)


@dataclass(frozen=True)
class Turn:
    id: int
    session_id: str
    role: str  # "user" or "assistant"
    content: str
    status: str  # "done", "streaming", "stopped", "error"
    metrics: dict = field(default_factory=dict)
    created_at: float = 0.0


@dataclass(frozen=True)
class SearchHit:
    doc_id: int
    section: int  # Section.index
    score: float  # higher is better (negated FTS5 bm25)


class SessionStore:
    """All docchat state in one SQLite database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        migrations.apply(db)

    @classmethod
    def open(cls, path: str | Path) -> "SessionStore":
        """Open (creating if needed) the database file at path, in WAL mode."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        db = Database(path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA busy_timeout=10000")
        return cls(db)

    # --- documents -----------------------------------------------------------------
    def find_document(self, sha256: str) -> int | None:
        row = self.db.execute("SELECT id FROM documents WHERE sha256 = ?", [sha256]).fetchone()
        return row[0] if row else None

    def save_document(self, doc: Document, seconds: float = 0.0) -> int:
        """Store doc with its pages, sections and index; return its id (existing if same sha256)."""
        existing = self.find_document(doc.sha256)
        if existing is not None:
            doc.id = existing
            return existing
        with self.db.conn:
            cur = self.db.execute(
                "INSERT INTO documents (sha256, path, name, kind, language, title, pages, tokens,"
                " tokenizer, page_labels, warnings, ingested_at, seconds)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [doc.sha256, doc.path, doc.name, doc.kind, doc.language, doc.title,
                 len(doc.pages), doc.tokens, doc.tokenizer, int(doc.page_labels),
                 json.dumps(doc.warnings, ensure_ascii=False), time.time(), seconds])
            doc_id = cur.lastrowid
            self.db.conn.executemany(
                "INSERT INTO pages (doc_id, number, label, text, ocr) VALUES (?,?,?,?,?)",
                [(doc_id, p.number, p.label, p.text, int(p.ocr)) for p in doc.pages])
            self.db.conn.executemany(
                "INSERT INTO sections (doc_id, idx, heading_path, level, page_start, page_end,"
                " kind, tokens, blocks) VALUES (?,?,?,?,?,?,?,?,?)",
                [(doc_id, s.index, json.dumps(list(s.heading_path), ensure_ascii=False),
                  s.level, s.page_start, s.page_end, s.kind, s.tokens,
                  json.dumps([[b.kind, b.text, b.page] for b in s.blocks], ensure_ascii=False))
                 for s in doc.sections])
            # Headings and blocks in one batch (index_texts spreads large Chinese ones over
            # cores); a section's body and a window are their blocks' prepared words joined,
            # as preparing their joined text would give (blocks never share a word).
            n = len(doc.sections)
            prepared = index_texts([" ".join(s.heading_path) for s in doc.sections]
                                   + [b.text for s in doc.sections for b in s.blocks])
            per_block = _per_section(doc.sections, prepared[n:])
            self.db.conn.executemany(
                "INSERT INTO sections_fts (heading, body, doc_id, idx) VALUES (?,?,?,?)",
                [(prepared[k], _joined(per_block[k]), doc_id, s.index)
                 for k, s in enumerate(doc.sections)])
            self._index_windows(doc_id, doc.sections, per_block)
        doc.id = doc_id
        return doc_id

    def _index_windows(self, doc_id: int, sections, per_block=None) -> None:
        """Fill windows_fts for one document (inside the caller's transaction); per_block:
        each section's blocks already prepared for the index."""
        if per_block is None:
            per_block = _per_section(sections, index_texts(
                [b.text for s in sections for b in s.blocks]))
        rows = [(_joined(words[a:b + 1]), doc_id, s.index, a, b)
                for s, words in zip(sections, per_block) for a, b in section_windows(s)]
        self.db.conn.executemany(
            "INSERT INTO windows_fts (body, doc_id, idx, first, last) VALUES (?,?,?,?,?)", rows)
        self.db.conn.execute("INSERT OR REPLACE INTO window_docs (doc_id) VALUES (?)", [doc_id])

    def document_row(self, doc_id: int) -> dict | None:
        rows = list(self.db["documents"].rows_where("id = ?", [doc_id]))
        return rows[0] if rows else None

    def list_documents(self) -> list[dict]:
        """Every stored document, newest first (no page text)."""
        return list(self.db["documents"].rows_where(order_by="ingested_at desc"))

    def load_document(self, doc_id: int) -> Document:
        """Rebuild a Document (pages and sections) from the database."""
        row = self.document_row(doc_id)
        if row is None:
            raise KeyError(doc_id)
        pages = [Page(number=r[0], label=r[1], text=r[2], ocr=bool(r[3])) for r in self.db.execute(
            "SELECT number, label, text, ocr FROM pages WHERE doc_id = ? ORDER BY number",
            [doc_id])]
        sections = []
        for r in self.db.execute(
                "SELECT idx, heading_path, level, page_start, page_end, kind, tokens, blocks"
                " FROM sections WHERE doc_id = ? ORDER BY idx", [doc_id]):
            blocks = tuple(Block(kind=k, text=t, page=p) for k, t, p in json.loads(r[7]))
            sections.append(Section(index=r[0], heading_path=tuple(json.loads(r[1])), level=r[2],
                                    page_start=r[3], page_end=r[4], kind=r[5], blocks=blocks,
                                    tokens=r[6]))
        return Document(path=row["path"], sha256=row["sha256"], name=row["name"],
                        kind=row["kind"], pages=pages, sections=sections,
                        language=row["language"], title=row["title"], tokens=row["tokens"],
                        tokenizer=row["tokenizer"], page_labels=bool(row["page_labels"]),
                        warnings=json.loads(row["warnings"] or "[]"), id=doc_id)

    def page_text(self, doc_id: int, number: int) -> str | None:
        row = self.db.execute("SELECT text FROM pages WHERE doc_id = ? AND number = ?",
                              [doc_id, number]).fetchone()
        return row[0] if row else None

    def search_sections(self, query: str, doc_ids: Iterable[int] | None = None,
                        limit: int = 100) -> list[SearchHit]:
        """BM25 over section headings and bodies; Chinese is segmented with jieba."""
        words = sorted(set(terms(query)))
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        sql = ("SELECT doc_id, idx, bm25(sections_fts, 3.0, 1.0) AS rank FROM sections_fts"
               " WHERE sections_fts MATCH ?")
        params: list = [match]
        if doc_ids is not None:
            ids = list(doc_ids)
            if not ids:
                return []
            sql += f" AND doc_id IN ({','.join('?' * len(ids))})"
            params += ids
        sql += " ORDER BY rank LIMIT ?"
        params.append(limit)
        return [SearchHit(int(d), int(i), -float(r)) for d, i, r in self.db.execute(sql, params)]

    def search_windows(self, query: str, doc_ids: Iterable[int], limit: int = 100
                       ) -> list[WindowHit]:
        """BM25 over the windows (runs of a section's blocks, windows.section_windows) of
        the documents; a document stored before windows existed is indexed first (once)."""
        ids = list(doc_ids)
        words = sorted(set(terms(query)))
        if not words or not ids:
            return []
        marks = ",".join("?" * len(ids))
        done = {r[0] for r in self.db.execute(
            f"SELECT doc_id FROM window_docs WHERE doc_id IN ({marks})", ids)}
        for doc_id in ids:
            if doc_id not in done and self.document_row(doc_id) is not None:
                t = time.perf_counter()
                with self.db.conn:
                    self._index_windows(doc_id, self.load_document(doc_id).sections)
                logger.info("indexed the windows of document %s in %.2f s", doc_id,
                            time.perf_counter() - t)
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.db.execute(
            "SELECT doc_id, idx, first, last, bm25(windows_fts) AS rank FROM windows_fts"
            f" WHERE windows_fts MATCH ? AND doc_id IN ({marks}) ORDER BY rank LIMIT ?",
            [match, *ids, limit])
        return [WindowHit(int(d), int(i), int(a), int(b), -float(r)) for d, i, a, b, r in rows]

    def searcher(self, doc_ids: Iterable[int]) -> "StoreSearch":
        """The search function pack() takes, over these documents: sections when called,
        windows by .windows()."""
        return StoreSearch(self, tuple(doc_ids))

    def get_embeddings(self, sha256: str, model: str) -> bytes | None:
        """Stored section vectors of a document for model, or None."""
        row = self.db.execute("SELECT data FROM embeddings WHERE sha256 = ? AND model = ?",
                              [sha256, model]).fetchone()
        return bytes(row[0]) if row else None

    def has_embeddings(self, sha256: str, model: str) -> bool:
        """Whether vectors of a document for model are stored (without reading them)."""
        return self.db.execute("SELECT 1 FROM embeddings WHERE sha256 = ? AND model = ?",
                               [sha256, model]).fetchone() is not None

    def put_embeddings(self, sha256: str, model: str, data: bytes) -> None:
        """Store (or replace) a document's section vectors for model."""
        with self.db.conn:
            self.db.execute("INSERT OR REPLACE INTO embeddings (sha256, model, data, created_at)"
                            " VALUES (?, ?, ?, ?)", [sha256, model, data, time.time()])

    # --- sessions and turns ----------------------------------------------------------
    def create_session(self, title: str = "") -> str:
        sid = uuid.uuid4().hex[:12]
        now = time.time()
        self.db["sessions"].insert({"id": sid, "title": title, "created_at": now,
                                    "updated_at": now})
        return sid

    def session(self, session_id: str) -> dict | None:
        rows = list(self.db["sessions"].rows_where("id = ?", [session_id]))
        return rows[0] if rows else None

    def list_sessions(self) -> list[dict]:
        """Sessions, most recently used first."""
        return list(self.db["sessions"].rows_where(order_by="updated_at desc, created_at desc"))

    def rename_session(self, session_id: str, title: str) -> None:
        self.db["sessions"].update(session_id, {"title": title.strip()})

    def delete_session(self, session_id: str) -> None:
        with self.db.conn:
            self.db.execute("DELETE FROM turns WHERE session_id = ?", [session_id])
            self.db.execute("DELETE FROM session_documents WHERE session_id = ?", [session_id])
            self.db.execute("DELETE FROM comparisons WHERE session_id = ?", [session_id])
            self.db.execute("DELETE FROM sessions WHERE id = ?", [session_id])

    def attach(self, session_id: str, doc_id: int) -> None:
        self.db["session_documents"].insert(
            {"session_id": session_id, "doc_id": doc_id, "added_at": time.time()}, ignore=True)
        self._touch(session_id)

    def detach(self, session_id: str, doc_id: int) -> None:
        self.db.execute("DELETE FROM session_documents WHERE session_id = ? AND doc_id = ?",
                        [session_id, doc_id])

    def session_documents(self, session_id: str) -> list[int]:
        return [r[0] for r in self.db.execute(
            "SELECT doc_id FROM session_documents WHERE session_id = ? ORDER BY added_at",
            [session_id])]

    def add_turn(self, session_id: str, role: str, content: str, status: str = "done",
                 metrics: dict | None = None) -> int:
        now = time.time()
        with self.db.conn:
            cur = self.db.execute(
                "INSERT INTO turns (session_id, role, content, status, metrics, sources,"
                " created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
                [session_id, role, content, status, json.dumps(metrics or {}), "[]", now, now])
            if role == "user":
                self.db.execute("UPDATE sessions SET title = ? WHERE id = ? AND title = ''",
                                [_title_from(content), session_id])
            self.db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", [now, session_id])
        return cur.lastrowid

    def update_turn(self, turn_id: int, content: str | None = None, status: str | None = None,
                    metrics: dict | None = None) -> None:
        changes: dict = {"updated_at": time.time()}
        if content is not None:
            changes["content"] = content
        if status is not None:
            changes["status"] = status
        if metrics is not None:
            changes["metrics"] = json.dumps(metrics)
        with self.db.conn:
            self.db["turns"].update(turn_id, changes)

    def turns(self, session_id: str) -> list[Turn]:
        return [Turn(id=r[0], session_id=session_id, role=r[1], content=r[2], status=r[3],
                     metrics=json.loads(r[4] or "{}"), created_at=r[5])
                for r in self.db.execute(
                    "SELECT id, role, content, status, metrics, created_at FROM turns"
                    " WHERE session_id = ? ORDER BY id", [session_id])]

    def export_markdown(self, session_id: str,
                        notes: Callable[[Turn], list[str]] | None = None) -> str:
        """The session as a Markdown transcript; ``notes(turn)`` adds lines after a turn
        (the app adds an answer's statement checks)."""
        s = self.session(session_id) or {"title": session_id}
        lines = [f"# {s['title'] or 'docchat session'}", ""]
        names = [self.document_row(d)["name"] for d in self.session_documents(session_id)]
        if names:
            lines += ["Documents: " + ", ".join(names), ""]
        for t in self.turns(session_id):
            who = "**You**" if t.role == "user" else "**docchat**"
            note = " _(stopped)_" if t.status == "stopped" else ""
            lines += [f"{who}{note}", "", t.content, ""]
            if notes is not None:
                lines += notes(t)
        return "\n".join(lines)

    def _touch(self, session_id: str) -> None:
        self.db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?",
                        [time.time(), session_id])
        self.db.conn.commit()

    # --- comparisons -----------------------------------------------------------------
    def put_comparison(self, session_id: str, old_id: int, new_id: int, data: dict) -> None:
        """Store (or replace) a session's comparison of two documents (Comparison.to_dict)."""
        with self.db.conn:
            self.db.execute("INSERT OR REPLACE INTO comparisons (session_id, old_id, new_id,"
                            " data, created_at) VALUES (?, ?, ?, ?, ?)",
                            [session_id, old_id, new_id, json.dumps(data, ensure_ascii=False),
                             time.time()])

    def get_comparison(self, session_id: str, old_id: int | None = None,
                       new_id: int | None = None) -> dict | None:
        """The session's comparison of these documents (its latest when not given), or None."""
        sql, params = "SELECT data FROM comparisons WHERE session_id = ?", [session_id]
        if old_id is not None and new_id is not None:
            sql += " AND old_id = ? AND new_id = ?"
            params += [old_id, new_id]
        row = self.db.execute(sql + " ORDER BY created_at DESC LIMIT 1", params).fetchone()
        return json.loads(row[0]) if row else None

    # --- summaries -------------------------------------------------------------------
    def save_summary(self, doc_id: int, settings_key: str, markdown: str,
                     meta: dict | None = None, checks: dict | None = None) -> None:
        with self.db.conn:
            self.db["summaries"].upsert({
                "doc_id": doc_id, "settings_key": settings_key, "markdown": markdown,
                "meta": json.dumps(meta or {}, ensure_ascii=False), "created_at": time.time(),
                "checks": None if checks is None else json.dumps(checks, ensure_ascii=False),
            }, pk=("doc_id", "settings_key"))

    def get_summary(self, doc_id: int, settings_key: str) -> dict | None:
        rows = list(self.db["summaries"].rows_where("doc_id = ? AND settings_key = ?",
                                                    [doc_id, settings_key]))
        if not rows:
            return None
        row = rows[0]
        row["meta"] = json.loads(row["meta"] or "{}")
        row["checks"] = json.loads(row["checks"]) if row.get("checks") else None
        return row


def _per_section(sections, prepared: list[str]) -> list[list[str]]:
    """Split a flat list of prepared blocks back into one list per section."""
    out, k = [], 0
    for s in sections:
        out.append(prepared[k:k + len(s.blocks)])
        k += len(s.blocks)
    return out


def _joined(words: list[str]) -> str:
    return " ".join(w for w in words if w)


@dataclass(frozen=True)
class StoreSearch:
    """Section and window search over some of a store's documents (SessionStore.searcher)."""
    store: SessionStore
    doc_ids: tuple[int, ...]

    def __call__(self, query: str) -> list[SearchHit]:
        return self.store.search_sections(query, self.doc_ids)

    def windows(self, query: str) -> list[WindowHit]:
        return self.store.search_windows(query, self.doc_ids)


def _title_from(question: str, limit: int = 60) -> str:
    line = re.sub(r"\s+", " ", question).strip()
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
