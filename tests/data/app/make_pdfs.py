"""Writes the small PDFs the app tests use: python tests/data/app/make_pdfs.py

guide.pdf: 3 pages of text whose printed labels are i, 1, 2 (a /PageLabels tree).
guide-locked.pdf: the same, encrypted (AES-128) with the user password "secret".
"""
from __future__ import annotations

from pathlib import Path

from pypdf import PdfReader, PdfWriter

HERE = Path(__file__).parent
PAGES = [
    ["Preface", "This guide explains the Frobnicator 3000."],
    ["1 Setup", "Install the Frobnicator with the command frob install.",
     "The default port is 8731. Keep the lid closed while it runs."],
    ["2 Safety", "Never feed the Frobnicator after midnight.",
     "The warranty lasts 7 years from the date of purchase."],
]


def _stream(lines: list[str]) -> bytes:
    ops = ["BT", "/F1 14 Tf", "72 720 Td", "18 TL"]
    for line in lines:
        ops.append("(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
                   + ") Tj T*")
    ops.append("ET")
    return "\n".join(ops).encode("latin-1")


def build() -> bytes:
    """A minimal PDF, objects written by hand with a correct xref table."""
    n = len(PAGES)
    objs: list[bytes] = []
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    font = 3 + 2 * n
    objs.append(b"<< /Type /Catalog /Pages 2 0 R /PageLabels << /Nums [0 << /S /r >> "
                b"1 << /S /D >>] >> >>")
    objs.append(f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
    for i, lines in enumerate(PAGES):
        content = _stream(lines)
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i}"
                    f" 0 R /Resources << /Font << /F1 {font} 0 R >> >> >>".encode())
        objs.append(b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content
                    + b"\nendstream")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for k, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{k} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def main() -> None:
    plain = HERE / "guide.pdf"
    plain.write_bytes(build())
    writer = PdfWriter(clone_from=PdfReader(plain))
    writer.encrypt(user_password="secret", owner_password="owner-secret", algorithm="AES-128")
    with open(HERE / "guide-locked.pdf", "wb") as f:
        writer.write(f)


if __name__ == "__main__":
    main()
