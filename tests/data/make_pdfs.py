"""Writes the small PDF fixtures of the ingest tests (python tests/data/make_pdfs.py).

A hand-written PDF writer with the standard Helvetica font, so that nothing needs a
font file: headers.pdf (running header/footer, page labels, outline, ligature, hyphen,
code), scanned.pdf (one page that is only an image), garbage-ocr.pdf (scanned pages
with an invisible, garbage OCR text layer) and broken-page.pdf (three pages, the second
one's page object damaged: PDFium cannot load it).
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _text_stream(lines: list[tuple[float, str]], invisible: bool = False) -> str:
    ops = ["BT", "/F1 10 Tf", "3 Tr" if invisible else "0 Tr"]
    y = 760.0
    for x, line in lines:
        ops.append(f"1 0 0 1 {x:.1f} {y:.1f} Tm ({_esc(line)}) Tj")
        y -= 14
    ops.append("ET")
    return "\n".join(ops)


def write_pdf(path: Path, pages: list[dict], outline: list[tuple[str, int]] = (),
              labels: str = "") -> None:
    """pages: dicts with 'lines' [(x, text)], optional 'image' True and 'invisible' True."""
    objs: list[bytes] = []

    def add(body: str | bytes) -> int:
        objs.append(body.encode("latin-1") if isinstance(body, str) else body)
        return len(objs)

    catalog = add("")  # filled in below
    pages_id = add("")
    font = add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding "
               "<< /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [1 /fi /fl] >> >>")
    gray = bytes(range(0, 256, 4)) * 64  # a 64x64 8-bit gray picture
    image = add(f"<< /Type /XObject /Subtype /Image /Width 64 /Height 64 /ColorSpace /DeviceGray "
                f"/BitsPerComponent 8 /Length {len(gray)} >>\nstream\n".encode("latin-1")
                + gray + b"\nendstream")
    kids = []
    for page in pages:
        content = ""
        if page.get("image"):
            content += "q 612 0 0 792 0 0 cm /Im1 Do Q\n"
        if page.get("lines"):
            content += _text_stream(page["lines"], page.get("invisible", False))
        data = content.encode("latin-1")
        stream = add(f"<< /Length {len(data)} >>\nstream\n".encode("latin-1") + data
                     + b"\nendstream")
        kids.append(add(f"<< /Type /Page /Parent {pages_id} 0 R /MediaBox [0 0 612 792] "
                        f"/Contents {stream} 0 R /Resources << /Font << /F1 {font} 0 R >> "
                        f"/XObject << /Im1 {image} 0 R >> >> >>"))
    objs[pages_id - 1] = (f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] "
                          f"/Count {len(kids)} >>").encode()
    extra = ""
    if outline:
        root = len(objs) + 1
        ids = list(range(root + 1, root + 1 + len(outline)))
        add(f"<< /Type /Outlines /First {ids[0]} 0 R /Last {ids[-1]} 0 R /Count {len(ids)} >>")
        for k, (title, page_no) in enumerate(outline):
            links = f"/Parent {root} 0 R"
            if k:
                links += f" /Prev {ids[k - 1]} 0 R"
            if k + 1 < len(ids):
                links += f" /Next {ids[k + 1]} 0 R"
            add(f"<< /Title ({_esc(title)}) {links} "
                f"/Dest [{kids[page_no - 1]} 0 R /XYZ 0 792 0] >>")
        extra += f" /Outlines {root} 0 R"
    if labels:
        extra += f" /PageLabels {labels}"
    objs[catalog - 1] = f"<< /Type /Catalog /Pages {pages_id} 0 R{extra} >>".encode()
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += (f"trailer\n<< /Size {len(objs) + 1} /Root {catalog} 0 R "
            "/Info << /Title (Acme Widget Manual) >> >>\n").encode()
    out += f"startxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))


def headers_pdf() -> list[dict]:
    body = {
        1: ["Acme Widget Manual", "Release 2.0"],
        2: ["Contents", "1 Introduction 1", "2 Installation 3"],
        3: ["1 Introduction", "The widget is a small tool for the manage-",
            "ment of gadgets. It is \x01ne and \x02at.",
            "Every gadget has a name and a size. Widgets read these from a",
            "configuration file at start-up and keep them until they stop."],
        4: ["More about gadgets: each one belongs to exactly one widget and",
            "is never shared. The Acme team re-checks this rule every year."],
        5: ["2 Installation", "Install the widget with this program:", "def hello(c):",
            "    c.drawString(100, 100, 'Hello World')", "c = canvas.Canvas('hello.pdf')",
            "hello(c)", "c.save()",
            "After that the widget is ready for use."],
        6: ["Troubleshooting is out of scope for this manual; ask the",
            "Acme mailing list when a widget misbehaves."],
    }
    pages = []
    for n in range(1, 7):
        lines = [(72.0, "Acme Widget Manual, Release 2.0")]
        lines += [(72.0 + (20 if t.startswith("    ") else 0),
                   t.strip() if t.startswith("    ") else t) for t in body[n]]
        label = ["i", "ii"][n - 1] if n <= 2 else str(n - 2)
        lines.append((300.0, f"Page {label}"))
        pages.append({"lines": lines})
    return pages


def damage_page(data: bytes, index: int) -> bytes:
    """The PDF with page `index` (0-based) replaced by an integer object of the same length."""
    import re

    starts = [m for m in re.finditer(rb"(\d+) 0 obj\n<< /Type /Page /Parent", data)]
    start = starts[index].start()
    end = data.index(b"endobj", start)
    head = starts[index].group(1) + b" 0 obj\n"
    return data[:start] + head + b"42".ljust(end - start - len(head)) + data[end:]


def broken_pdf(path: Path) -> None:
    pages = [{"lines": [(72.0, f"Page {n} of the damaged sample says hello from page {n}.")]}
             for n in (1, 2, 3)]
    write_pdf(path, pages)
    path.write_bytes(damage_page(path.read_bytes(), 1))


def main() -> None:
    write_pdf(HERE / "headers.pdf", headers_pdf(),
              outline=[("Introduction", 3), ("Installation", 5)],
              labels="<< /Nums [0 << /S /r >> 2 << /S /D >>] >>")
    write_pdf(HERE / "scanned.pdf", [{"image": True}])
    garbage = [(40.0, "sw | \\ + ~= ;: |"), (40.0, "400 + t= 1] }{ ~"),
               (40.0, "BH {note 1] = | \\ +"),
               (40.0, "200 4 t= | 2] -- ~ ="), (40.0, "SeNet{note 2] |; \\ ^")]
    write_pdf(HERE / "garbage-ocr.pdf", [{"image": True, "lines": garbage, "invisible": True}] * 2)
    broken_pdf(HERE / "broken-page.pdf")


if __name__ == "__main__":
    main()
