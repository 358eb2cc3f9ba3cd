"""Uploads: stored by content hash, size-limited, ingested once, passwords asked for."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from docchat.errors import DocumentError, PasswordRequired
from docchat.library.uploads import fit, ingest_upload, save_upload

APP_DATA = Path(__file__).parent.parent / "data" / "app"


def test_saved_under_content_hash_never_given_name(tmp_path):
    data = b"hello world\n"
    path = save_upload("../../etc/passwd.TXT", data, tmp_path / "up", max_mb=1)
    assert path == tmp_path / "up" / (hashlib.sha256(data).hexdigest() + ".txt")
    assert path.read_bytes() == data
    assert [p.name for p in (tmp_path / "up").iterdir()] == [path.name]  # no temp file left


def test_too_large_rejected_before_writing(tmp_path):
    with pytest.raises(DocumentError, match="the limit is 1 MB"):
        save_upload("big.txt", b"x" * (1024 * 1024 + 1), tmp_path / "up", max_mb=1)
    assert not (tmp_path / "up").exists()


@pytest.mark.parametrize("name", ["slides.pptx", "README"])
def test_unsupported_type_message_says_what_to_upload(tmp_path, name):
    with pytest.raises(DocumentError, match="upload a PDF, TXT or Markdown"):
        save_upload(name, b"data", tmp_path, max_mb=1)


def test_empty_file_rejected(tmp_path):
    with pytest.raises(DocumentError, match="empty"):
        save_upload("empty.md", b"", tmp_path, max_mb=1)


def test_ingest_then_reuse_same_bytes(store, tmp_path):
    data = (APP_DATA / "guide.pdf").read_bytes()
    first = ingest_upload(store, "guide.pdf", data, tmp_path, max_mb=5)
    assert not first.reused and first.document.id is not None
    assert first.document.name == "guide.pdf" and len(first.document.pages) == 3
    again = ingest_upload(store, "renamed.pdf", data, tmp_path, max_mb=5)
    assert again.reused and again.document.id == first.document.id
    assert len(store.list_documents()) == 1


def test_encrypted_pdf_asks_for_password_by_its_given_name(store, tmp_path):
    data = (APP_DATA / "guide-locked.pdf").read_bytes()
    with pytest.raises(PasswordRequired) as e:
        ingest_upload(store, "locked.pdf", data, tmp_path, max_mb=5)
    assert "locked.pdf" in str(e.value) and hashlib.sha256(data).hexdigest() not in str(e.value)
    with pytest.raises(PasswordRequired, match="Wrong password"):
        ingest_upload(store, "locked.pdf", data, tmp_path, max_mb=5, password="nope")
    up = ingest_upload(store, "locked.pdf", data, tmp_path, max_mb=5, password="secret")
    assert "Frobnicator" in up.document.pages[1].text


def test_broken_pdf_message_names_the_upload(store, tmp_path):
    with pytest.raises(DocumentError) as e:
        ingest_upload(store, "broken.pdf", b"%PDF-1.4\n%%EOF\n", tmp_path, max_mb=5)
    assert "broken.pdf" in str(e.value)


def test_a_reader_bug_is_a_message_for_that_file_and_nothing_is_stored(store, tmp_path,
                                                                        monkeypatch):
    # A reader's own bug on an unusual file (int("①") once) must not stop the page with a
    # traceback: the user learns which file failed and what to do, and the store is unchanged.
    import ingest

    def broken(*a, **kw):
        raise ValueError("invalid literal for int() with base 10: '①'")

    monkeypatch.setattr(ingest, "load_document", broken)
    with pytest.raises(DocumentError) as e:
        ingest_upload(store, "方案.pdf", (APP_DATA / "guide.pdf").read_bytes(), tmp_path,
                      max_mb=5)
    assert "方案.pdf could not be read" in str(e.value) and "plain text" in str(e.value)
    assert store.list_documents() == []


def test_fit_whole_or_packed(store, tmp_path):
    doc = ingest_upload(store, "g.pdf", (APP_DATA / "guide.pdf").read_bytes(), tmp_path,
                        max_mb=5).document
    assert fit(doc, context_window=8192, max_new_tokens=512).whole
    assert not fit(doc, context_window=600, max_new_tokens=512).whole


def test_untitled_upload_is_titled_by_its_given_name_not_its_hash(store, tmp_path):
    """A file with no title of its own and no headings: ingest falls back to the file's
    stem, which for an upload is its hash; the stored title is the name the user gave."""
    data = "just a line of text without any heading\n".encode()
    up = ingest_upload(store, "meeting notes.txt", data, tmp_path, max_mb=5)
    assert up.document.title == "meeting notes"
    assert store.load_document(up.document.id).title == "meeting notes"
