from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

import ingest
from docchat.errors import DocumentError, PasswordRequired
from ingest import pdf as pdf_module
from ingest.pdf import extract_pages

DATA = Path(__file__).parent.parent / "data"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "corpus"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(),
                                  reason="../shared/corpus is absent (a clone without it)")


@pytest.fixture(scope="module")
def headers_doc():
    return ingest.load_document(DATA / "headers.pdf")


def test_running_header_and_footer_removed(headers_doc):
    for page in headers_doc.pages:
        assert "Acme Widget Manual, Release 2.0" not in page.text
        assert "Page " not in page.text


def test_page_labels(headers_doc):
    assert headers_doc.page_labels
    assert [p.label for p in headers_doc.pages] == ["i", "ii", "1", "2", "3", "4"]
    assert headers_doc.pages[2].marker == "p. 1"


def test_outline_sections_ligatures_and_hyphens(headers_doc):
    titles = [s.heading_path for s in headers_doc.sections]
    assert ("1 Introduction",) in titles and ("2 Installation",) in titles
    intro = next(s for s in headers_doc.sections if s.title == "1 Introduction")
    assert intro.page_start == 3 and intro.page_end == 4
    assert "management of gadgets" in intro.text and "fine and flat" in intro.text
    install = next(s for s in headers_doc.sections if s.title == "2 Installation")
    code = [b for b in install.blocks if b.kind == "code"]
    assert (len(code) == 1 and code[0].text.startswith("def hello(c):")
            and code[0].text.endswith("c.save()"))
    assert headers_doc.tokens == sum(s.tokens for s in headers_doc.sections) > 0
    assert (headers_doc.kind == "pdf" and headers_doc.tokenizer == "cl100k_base"
            and headers_doc.language == "en")
    assert len(headers_doc.sha256) == 64


def test_outline_entries():
    raw = extract_pages(DATA / "headers.pdf")
    assert [(e.title, e.level, e.page) for e in raw.outline] == [("Introduction", 1, 3),
                                                                 ("Installation", 1, 5)]


class _Mark:
    def __init__(self, title: str, level: int, index: int) -> None:
        self.title, self.level, self.index = title, level, index

    def get_title(self) -> str:
        return self.title

    def get_dest(self):
        mark = self

        class Dest:
            def get_index(self) -> int:
                return mark.index
        return Dest()


def test_bookmark_titles_get_the_printed_quotes():
    """hyperref leaves TeX's quote ligatures in bookmarks ("2 Old ``solutions''"); the page
    prints curly quotes, and so do the outline and the headings now."""
    class Pdf:
        def get_toc(self, max_depth: int):
            return [_Mark("2 Old ``solutions''", 0, 1), _Mark("2.1 It's plain", 1, 1)]
    assert [(e.title, e.level, e.page) for e in pdf_module._outline(Pdf(), 3)] == [
        ("2 Old \u201csolutions\u201d", 1, 2), ("2.1 It's plain", 2, 2)]


def _two_font_pdf(path: Path, runs: list[tuple[str, str]]) -> None:
    """A one-page PDF whose line is runs of (font, text): F1 Helvetica, F2 TeX's CMSY10 as
    many TeX manuals embed it, without a Unicode map (not embedded here: the same codes)."""
    shown = " ".join(f"/{font} 10 Tf ({text}) Tj" for font, text in runs)
    content = f"BT 1 0 0 1 72 700 Tm {shown} ET".encode("latin-1")
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>",
            b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /CMSY10 >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objs) + 1, xref)
    path.write_bytes(bytes(out))


def test_tex_angle_brackets_from_a_symbol_font(tmp_path):
    """A TeX manual's metavariables ("\\newbool{<name>}") are set with the angle brackets of
    the math-symbol font, whose codes are those of "h" and "i": without a Unicode map they
    were read as "\\newbool{hnamei}". Letters in the text font stay letters."""
    path = tmp_path / "meta.pdf"
    _two_font_pdf(path, [("F1", "Use \\\\newbool{"), ("F2", "h"), ("F1", "name"), ("F2", "i"),
                         ("F1", "} or \\\\pretoh"), ("F2", "h"), ("F1", "hook"), ("F2", "i"),
                         ("F1", " with hi his chi multi.")])
    text = extract_pages(path).pages[0]
    assert "\\newbool{\u27e8name\u27e9} or \\pretoh\u27e8hook\u27e9 with hi his chi multi." in text
    # Two in a row (Forest's "<value><true keylist>"): the first closing bracket is followed
    # by the next one's opening bracket, not by a space.
    path = tmp_path / "two.pdf"
    _two_font_pdf(path, [("F1", "key="), ("F2", "h"), ("F1", "value"), ("F2", "ih"),
                         ("F1", "true keylist"), ("F2", "i"), ("F1", " and Delhi hikes.")])
    text = extract_pages(path).pages[0]
    assert "key=\u27e8value\u27e9\u27e8true keylist\u27e9 and Delhi hikes." in text


def test_broken_pdf():
    with pytest.raises(DocumentError, match="not a readable PDF"):
        ingest.load_document(DATA / "invalid.pdf")


def test_encrypted_pdf_needs_password():
    with pytest.raises(PasswordRequired, match="encrypted; give its password"):
        ingest.load_document(DATA / "graph-encrypted.pdf")
    with pytest.raises(PasswordRequired, match="Wrong password"):
        ingest.load_document(DATA / "graph-encrypted.pdf", password="nope")
    # the right password opens it; its only page is a picture of a chart, read by OCR
    doc = ingest.load_document(DATA / "graph-encrypted.pdf", password="user")
    assert doc.pages[0].ocr and "intelligent design" in doc.text
    with pytest.raises(DocumentError, match="no text layer .*image.*OCR is off") as err:
        ingest.load_document(DATA / "graph-encrypted.pdf", password="user", ocr_max_pages=0)
    assert not isinstance(err.value, PasswordRequired)


def test_empty_user_password_opens():
    doc = ingest.load_document(DATA / "form_dd0293.pdf")
    assert len(doc.pages) == 4 and "DISCHARGE" in doc.text


@pytest.mark.parametrize("name", ["linn.pdf", "scanned.pdf"])
def test_scanned_pdf_without_ocr_has_no_text_layer(name):
    with pytest.raises(DocumentError, match="no text layer.*OCR is needed.*OCR is off"):
        ingest.load_document(DATA / name, ocr_max_pages=0)


def test_scanned_pdf_ocr_finds_no_text():
    with pytest.raises(DocumentError, match="OCR found no text on its page"):  # a gray ramp
        ingest.load_document(DATA / "scanned.pdf")


def test_garbage_ocr_layer():
    with pytest.raises(DocumentError, match="garbage text layer.*OCR is off.*ocrmypdf"):
        ingest.load_document(DATA / "garbage-ocr.pdf", ocr_max_pages=0)
    raw = extract_pages(DATA / "garbage-ocr.pdf")
    assert raw.status == ["garbage", "garbage"] and raw.pages == ["", ""]


def test_garbage_page_dropped_with_warning(tmp_path):
    spec = importlib.util.spec_from_file_location("make_pdfs", DATA / "make_pdfs.py")
    make_pdfs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_pdfs)
    headers_pdf, write_pdf = make_pdfs.headers_pdf, make_pdfs.write_pdf
    pages = headers_pdf()
    pages.append({"image": True, "invisible": True,
                  "lines": [(40.0, "sw | \\ + ~= ;: | t= 1] }{ ~ {note 2] |; \\ ^")]})
    write_pdf(tmp_path / "mixed.pdf", pages)
    doc = ingest.load_document(tmp_path / "mixed.pdf", ocr_max_pages=0)
    assert doc.pages[6].text == ""
    assert any("Page(s) 7" in w and "not OCR'd" in w for w in doc.warnings)
    doc = ingest.load_document(tmp_path / "mixed.pdf")  # OCR'd instead: its image has no text
    assert doc.pages[6].ocr and doc.pages[6].text == "" and not doc.warnings


def test_zero_byte_unsupported_and_too_large(tmp_path):
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    with pytest.raises(DocumentError, match="empty"):
        ingest.load_document(empty)
    other = tmp_path / "sheet.xlsx"
    other.write_bytes(b"PK\x03\x04")
    with pytest.raises(DocumentError, match="unsupported file type .xlsx"):
        ingest.load_document(other)
    big = tmp_path / "big.pdf"
    shutil.copy(DATA / "headers.pdf", big)
    with pytest.raises(DocumentError, match="over the 0.001 MB limit"):
        ingest.load_document(big, max_mb=0.001)
    with pytest.raises(DocumentError, match="No such file"):
        ingest.load_document(tmp_path / "missing.pdf")


@needs_shared
def test_debian_policy_running_header_gone():
    doc = ingest.load_document(SHARED / "pdf" / "debian-policy.pdf")
    assert len(doc.pages) == 193 and doc.page_labels
    assert not any("Debian Policy Manual, Release 4.6.2.0" in p.text for p in doc.pages)
    assert any(s.title.endswith("Scope") for s in doc.sections)


@needs_shared
def test_apssamp_ligatures_normalised():
    doc = ingest.load_document(SHARED / "pdf" / "apssamp.pdf")
    assert "\ufb01" not in doc.text and "\ufb02" not in doc.text
    assert "\ufffe" not in doc.text and "\u00ad" not in doc.text


def _spy_run_split(monkeypatch):
    """Force the multi-process reader on (any page count, 2 processes) and record its use."""
    import ingest.pdf as pdf_module

    calls = []
    real = pdf_module.run_split

    def spy(fn, jobs):
        calls.append(len(jobs))
        return real(fn, jobs)

    monkeypatch.setattr(pdf_module, "PARALLEL_MIN_PAGES", 1)
    monkeypatch.setenv("DOCCHAT_INGEST_PROCESSES", "2")
    monkeypatch.setattr(pdf_module, "run_split", spy)
    return calls


def test_parallel_extraction_equals_serial(monkeypatch, headers_doc, tmp_path):
    serial_raw = extract_pages(DATA / "headers.pdf")
    calls = _spy_run_split(monkeypatch)
    raw = extract_pages(DATA / "headers.pdf")
    assert calls == [2]  # the forked path really ran
    assert raw == serial_raw
    doc = ingest.load_document(DATA / "headers.pdf")
    assert doc.pages == headers_doc.pages and doc.sections == headers_doc.sections
    assert doc.tokens == headers_doc.tokens


def test_parallel_extraction_keeps_garbage_pages_and_errors(monkeypatch):
    calls = _spy_run_split(monkeypatch)
    with pytest.raises(DocumentError, match="garbage text layer"):
        ingest.load_document(DATA / "garbage-ocr.pdf", ocr_max_pages=0)
    with pytest.raises(DocumentError, match="no text layer"):
        ingest.load_document(DATA / "scanned.pdf", ocr_max_pages=0)
    assert calls == [2]  # garbage-ocr.pdf went through the forked readers; scanned.pdf has 1 page


def test_parallel_extraction_from_script_without_main_guard(tmp_path):
    """A plain script (no `if __name__ == "__main__"`) can load long documents: fork re-imports
    nothing."""
    import subprocess
    import sys

    script = tmp_path / "load.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
        "import ingest, ingest.pdf\n"
        "ingest.pdf.PARALLEL_MIN_PAGES = 1\n"
        f"doc = ingest.load_document({str(DATA / 'headers.pdf')!r})\n"
        "print(len(doc.pages), len(doc.sections))\n"
    )
    env = {**__import__("os").environ, "DOCCHAT_INGEST_PROCESSES": "2"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "6"


def test_broken_page_skipped_with_warning():
    doc = ingest.load_document(DATA / "broken-page.pdf")
    assert [p.number for p in doc.pages] == [1, 2, 3]
    assert "hello from page 1" in doc.pages[0].text and "hello from page 3" in doc.pages[2].text
    assert doc.pages[1].text == ""
    assert any("Skipped page(s) 2" in w and "damaged" in w for w in doc.warnings)


def test_broken_page_in_parallel_reader(monkeypatch):
    calls = _spy_run_split(monkeypatch)
    raw = extract_pages(DATA / "broken-page.pdf")
    assert calls == [2] and raw.status == ["", "broken", ""]


def test_filled_form_values_and_annotation_text_are_read():
    """Field values and a FreeText note are flattened into the page text (make_form.py)."""
    doc = ingest.load_document(DATA / "form_filled.pdf")
    first = doc.pages[0].text
    for value in ("CASE-2024-0193", "Okonkwo", "Adaeze", "1742 Larchmont Avenue", "55803",
                  "a.okonkwo@example.org"):
        assert value in first
    # in reading order: after its label
    assert first.index("CASE NUMBER") < first.index("CASE-2024-0193")
    assert "Reviewer note: discharge date confirmed" in doc.pages[1].text
    assert "DISCHARGE" in doc.text
