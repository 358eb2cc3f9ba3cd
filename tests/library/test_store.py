from __future__ import annotations

import sqlite3

from docchat.library.store import SessionStore, migrations
from ingest.document import Block, Document, Page, Section


def make_doc(sha="a" * 64, texts=("数据库备份的方法", "How to restore a backup")) -> Document:
    pages = [Page(i + 1, t, label=str(i + 10)) for i, t in enumerate(texts)]
    sections = [Section(index=i, heading_path=(f"Part {i + 1}",), level=1, page_start=i + 1,
                        page_end=i + 1, kind="prose", blocks=(Block("prose", t, i + 1),),
                        tokens=len(t))
                for i, t in enumerate(texts)]
    return Document(path="/x/doc.txt", sha256=sha, name="doc.txt", kind="text", pages=pages,
                    sections=sections, language="zh", title="Doc", tokens=42,
                    tokenizer="cl100k_base", page_labels=True, warnings=["w"])


def test_migrations_applied_on_open_and_idempotent(tmp_path):
    path = tmp_path / "d.db"
    SessionStore.open(path)
    again = SessionStore.open(path)
    assert not migrations.pending(again.db)
    names = set(again.db.table_names())
    assert {"documents", "pages", "sections", "sections_fts", "sessions", "turns",
            "summaries"} <= names
    assert again.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_document_round_trip_and_same_hash_not_stored_twice(store):
    doc = make_doc()
    doc_id = store.save_document(doc)
    assert store.save_document(make_doc()) == doc_id
    assert store.db["documents"].count == 1
    back = store.load_document(doc_id)
    assert [p.text for p in back.pages] == [p.text for p in doc.pages]
    assert back.pages[0].label == "10" and back.page_labels
    assert back.sections == doc.sections
    assert back.warnings == ["w"] and back.tokens == 42 and back.tokenizer == "cl100k_base"
    assert store.page_text(doc_id, 2) == "How to restore a backup"


def test_search_segments_chinese_and_english(store):
    doc_id = store.save_document(make_doc())
    zh = store.search_sections("怎么做数据库备份？")
    assert zh and zh[0].section == 0 and zh[0].doc_id == doc_id
    en = store.search_sections("restoring BACKUPS")  # stemmed and case-folded
    assert en and en[0].section == 1
    assert store.search_sections("backup", doc_ids=[]) == []
    assert store.search_sections("?!") == []
    # FTS syntax in a question must not break the query.
    assert store.search_sections('restore AND "NEAR(') is not None


def test_search_limited_to_given_documents(store):
    a = store.save_document(make_doc("a" * 64))
    b = store.save_document(make_doc("b" * 64))
    hits = store.search_sections("restore", doc_ids=[b])
    assert {h.doc_id for h in hits} == {b} and a != b


def test_sessions_turns_rename_delete_export(store):
    doc_id = store.save_document(make_doc())
    first = store.create_session()
    sid = store.create_session()
    store.attach(sid, doc_id)
    store.attach(sid, doc_id)  # attaching twice keeps one link
    assert store.session_documents(sid) == [doc_id]
    q = store.add_turn(sid, "user", "What does   part 2\nsay about restoring?")
    a = store.add_turn(sid, "assistant", "", status="streaming")
    store.update_turn(a, content="It says [p. 11].", status="done", metrics={"ttft_ms": 5})
    assert store.session(sid)["title"] == "What does part 2 say about restoring?"
    assert store.list_sessions()[0]["id"] == sid  # most recently used first
    turns = store.turns(sid)
    assert [t.role for t in turns] == ["user", "assistant"] and turns[0].id == q
    assert turns[1].metrics == {"ttft_ms": 5} and turns[1].status == "done"
    store.rename_session(sid, "  Restores ")
    assert store.session(sid)["title"] == "Restores"
    md = store.export_markdown(sid)
    assert md.startswith("# Restores") and "doc.txt" in md and "It says [p. 11]." in md
    store.delete_session(sid)
    assert store.session(sid) is None and store.turns(sid) == []
    assert [s["id"] for s in store.list_sessions()] == [first]


def test_long_question_title_is_shortened(store):
    sid = store.create_session()
    store.add_turn(sid, "user", "x" * 200)
    title = store.session(sid)["title"]
    assert len(title) == 60 and title.endswith("…")


def test_summaries_upsert(store):
    doc_id = store.save_document(make_doc())
    assert store.get_summary(doc_id, "k") is None
    store.save_summary(doc_id, "k", "# one", {"pages": 2})
    store.save_summary(doc_id, "k", "# two", {"pages": 2})
    row = store.get_summary(doc_id, "k")
    assert row["markdown"] == "# two" and row["meta"] == {"pages": 2}


def test_database_file_survives_reopen(tmp_path):
    path = tmp_path / "x.db"
    s = SessionStore.open(path)
    sid = s.create_session("t")
    s.add_turn(sid, "user", "q")
    s.db.conn.close()
    again = SessionStore.open(path)
    assert [t.content for t in again.turns(sid)] == ["q"]
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
