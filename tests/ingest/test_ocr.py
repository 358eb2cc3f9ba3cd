"""OCR of pages without a usable text layer (Tesseract, Debian's eng and chi_sim models)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

import ingest

# The bench's own measure, so the test and bench/fidelity.py agree on what accuracy is.
from bench.fidelity import char_accuracy
from ingest import ocr
from ingest.errors import DocumentError
from ingest.ocr import OcrCancelled

DATA = Path(__file__).parent.parent / "data"


def test_char_accuracy_measure():
    assert char_accuracy("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert char_accuracy("a  b\nc", "a b c") == 1.0
    assert char_accuracy("中 文", "中文", cjk=True) == 1.0


def test_scanned_english_page_is_read():
    doc = ingest.load_document(DATA / "linn.pdf")
    page = doc.pages[0]
    assert page.ocr and doc.language == "en"
    assert char_accuracy(page.text, (DATA / "linn.txt").read_text()) >= 0.9
    assert "LinnSequencer" in page.text


def test_scanned_chinese_page_is_read():
    doc = ingest.load_document(DATA / "scan-zh.pdf")
    page = doc.pages[0]
    assert page.ocr and doc.language == "zh"
    assert (
        char_accuracy(page.text, (DATA / "scan-zh.txt").read_text(encoding="utf-8"), cjk=True)
        >= 0.9
    )
    assert "虚拟控制台" in page.text
    assert not re.search(
        r"[\u4e00-\u9fff] [\u4e00-\u9fff]", page.text
    )  # no spaces between Chinese characters


def test_progress_reports_pages_and_eta():
    seen = []
    with pytest.raises(DocumentError, match="OCR found no text"):  # its images are gray ramps
        ingest.load_document(DATA / "garbage-ocr.pdf", on_ocr_progress=seen.append)
    assert [(p.done, p.total) for p in seen] == [(0, 2), (1, 2), (2, 2)]
    assert seen[0].eta_s is None and seen[1].eta_s is not None and seen[-1].eta_s == 0


def test_cancel_stops_ocr():
    cancel = threading.Event()
    seen = []

    def progress(p):
        seen.append(p.done)
        if p.done == 1:
            cancel.set()

    with pytest.raises(OcrCancelled, match="stopped after 1 of 2 pages"):
        ingest.load_document(DATA / "garbage-ocr.pdf", on_ocr_progress=progress, cancel=cancel)
    assert seen == [0, 1]


def test_text_pdf_never_starts_ocr(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("OCR ran on a PDF with a good text layer")

    monkeypatch.setattr(ocr, "ocr_pages", boom)
    doc = ingest.load_document(DATA / "headers.pdf")
    assert not any(p.ocr for p in doc.pages)


def test_page_limit_and_unavailable_engine_have_clear_messages(monkeypatch):
    with pytest.raises(DocumentError, match=r"1 pages need OCR, over the limit of 0|OCR is off"):
        ingest.load_document(DATA / "linn.pdf", ocr_max_pages=0)
    monkeypatch.setenv("DOCCHAT_OCR_MAX_PAGES", "0")
    with pytest.raises(DocumentError, match="OCR is off .DOCCHAT_OCR_MAX_PAGES=0"):
        ingest.load_document(DATA / "linn.pdf")
    monkeypatch.delenv("DOCCHAT_OCR_MAX_PAGES")
    monkeypatch.setattr(ocr, "languages", lambda: frozenset())
    with pytest.raises(
        DocumentError, match="no text layer .*OCR is not installed .apt-get install tesseract-ocr"
    ):
        ingest.load_document(DATA / "linn.pdf")


def test_over_the_limit_only_some_pages(tmp_path):
    """A long text document with two scanned pages over a limit of 1: read, with a warning."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_pdfs", DATA / "make_pdfs.py")
    make_pdfs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_pdfs)
    pages = make_pdfs.headers_pdf() + [{"image": True}, {"image": True}]
    make_pdfs.write_pdf(tmp_path / "mixed.pdf", pages)
    doc = ingest.load_document(tmp_path / "mixed.pdf", ocr_max_pages=1)
    assert any("Page(s) 7, 8" in w and "over the limit of 1" in w for w in doc.warnings)
    assert not any(p.ocr for p in doc.pages)


def test_ocr_flag_is_stored():
    from sqlite_utils import Database

    from docchat.library.store import SessionStore

    store = SessionStore(Database(memory=True))
    doc = ingest.load_document(DATA / "graph-encrypted.pdf", password="user")
    back = store.load_document(store.save_document(doc))
    assert back.pages == doc.pages and back.pages[0].ocr


def test_cli_ingest_prints_ocr_progress(tmp_path):
    from click.testing import CliRunner

    from docchat.cli import cli

    result = CliRunner().invoke(
        cli,
        ["ingest", "--db", str(tmp_path / "t.db"), str(DATA / "scan-zh.pdf")],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "OCR: 1 page(s) without a text layer" in result.stderr
    assert "OCR: page 1 (1/1)" in result.stderr
    assert "scan-zh.pdf: 1 pages" in result.stdout


def test_citation_says_ocr():
    from ingest.document import Page

    assert Page(number=3, text="x", label="1", ocr=True).citation == "p. 1 (OCR)"
    assert Page(number=3, text="x").citation == "p. 3"


def test_a_page_tesseract_fails_on_is_empty_with_a_warning(monkeypatch, tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_pdfs", DATA / "make_pdfs.py")
    make_pdfs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_pdfs)
    make_pdfs.write_pdf(tmp_path / "mixed.pdf", make_pdfs.headers_pdf() + [{"image": True}] * 2)
    real = ocr.recognize
    calls = []

    def flaky(image, language=None):
        calls.append(language)
        if len(calls) == 1:
            raise ocr.OcrFailed("OCR failed: simulated crash")
        return real(image, language)

    monkeypatch.setattr(ocr, "recognize", flaky)
    doc = ingest.load_document(tmp_path / "mixed.pdf")
    assert len(calls) == 2 and doc.pages[6].ocr and doc.pages[7].ocr
    assert any("OCR could not read page(s) 7" in w for w in doc.warnings)
