"""Page view: the passage found in PDFium's text layer by its letters, highlighted at its
characters' rectangles; OCR pages an approximate band; text documents in context."""
from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from docchat.library.pages import document_file, in_context, locate, render
from ingest.document import Document

DATA = Path(__file__).parent.parent / "data"
GUIDE = DATA / "app" / "guide.pdf"


def test_locate_ignores_what_cleaning_changes():
    raw = "The con-\r\nfiguration ﬁle is read at start.\r\nNext line."
    assert locate(raw, "The configuration file is read at start.") == (0, raw.index("start.") + 6)
    assert locate(raw, "Nothing like it") is None and locate("", "x") is None
    long = "word " * 30 + "the middle cleaned wrongly here" + " end" * 20
    wanted = "word " * 30 + "the middle cleaned WRONG here" + " end" * 20
    assert locate(long, wanted) is not None  # its first and last letters still place it


def yellow_share(png: bytes, box) -> float:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    x0, y0, x1, y1 = box
    pixels = [image.getpixel((x, y)) for x in range(x0 + 1, x1 - 1, 3)
              for y in range(y0 + 1, y1 - 1, 3)]
    return sum(r > 200 and g > 170 and b < 190 for r, g, b in pixels) / len(pixels)


def test_the_sentence_is_highlighted_at_its_characters():
    import pypdfium2 as pdfium

    view = render(GUIDE, 2, "The default port is 8731.")
    assert view.exact and view.found and len(view.boxes) == 1
    page = pdfium.PdfDocument(str(GUIDE))[1]
    text = page.get_textpage()
    start, count = text.search("The default port is 8731", match_case=True).get_next()
    height = page.get_size()[1]
    x0, y0, x1, y1 = view.boxes[0]
    for i in (start, start + count - 1):  # first and last characters are inside the box
        left, bottom, right, top = text.get_charbox(i)
        assert x0 <= left * 1.6 and right * 1.6 <= x1
        assert y0 <= (height - top) * 1.6 and (height - bottom) * 1.6 <= y1
    keep = text.get_charbox(start + count + 2)  # "Keep", the next sentence: outside
    assert keep[0] * 1.6 > x1
    assert yellow_share(view.png, view.boxes[0]) > 0.5
    fx0, fy0, fx1, fy1 = view.focus  # shown first: the highlight with some page around it
    assert fy0 < y0 and y1 < fy1 and (fx0, fx1) == (0, view.width) and fy1 - fy0 < view.height
    focus = Image.open(io.BytesIO(view.focus_png))
    assert focus.size == (fx1 - fx0, fy1 - fy0)


def test_a_scanned_page_is_highlighted_at_tesseracts_words_or_a_band():
    from ingest import load_document

    doc = load_document(str(DATA / "linn.pdf"))
    page = doc.pages[0]
    assert page.ocr
    middle = page.text[len(page.text) // 2:]
    sentence = middle[middle.index(" ") + 1:][:80].rsplit(" ", 1)[0]  # whole words
    view = render(DATA / "linn.pdf", 1, sentence, page_text=page.text, ocr=True, language="en")
    assert view.found and view.exact and view.method == "ocr"
    assert 1 <= len(view.boxes) <= 4  # one box per line the words are on
    assert all(0.2 * view.height < y0 < 0.8 * view.height for _, y0, _, _ in view.boxes)
    assert all(x1 - x0 < view.width for x0, _, x1, _ in view.boxes)
    # Words the scan does not have: a band where the passage is in the stored text.
    text = page.text[:200] + " zqxj wvkp " + page.text[200:]
    band = render(DATA / "linn.pdf", 1, "zqxj wvkp", page_text=text, ocr=True)
    assert band.method == "band" and not band.exact and len(band.boxes) == 1


def test_a_passage_missing_from_the_page_is_not_highlighted():
    view = render(GUIDE, 2, "A sentence that this page does not have at all.")
    assert not view.found and not view.boxes and view.png.startswith(b"\x89PNG")


def test_the_file_is_found_by_its_path_or_under_the_uploads(tmp_path):
    doc = Document(path=str(tmp_path / "gone.pdf"), sha256="ab12", name="g.pdf", kind="pdf",
                   pages=[], sections=[])
    assert document_file(doc, tmp_path) is None
    (tmp_path / "ab12.pdf").write_bytes(b"%PDF")
    assert document_file(doc, tmp_path) == tmp_path / "ab12.pdf"


def test_in_context_marks_the_span_or_finds_the_passage():
    text = "Intro. The lid is **blue**. More text follows here."
    shown = in_context(text, "The lid is blue.", None, around=7)
    assert (shown.before, shown.text, shown.after) == ("Intro. ", "The lid is **blue**.",
                                                       " More t…")
    assert in_context(text, "The lid is **blue**.", (7, 27)).text == "The lid is **blue**."
    assert not in_context(text, "Absent", None).found
