"""Writes one-page extracts of real PDFs (python tests/data/make_pages.py), with pypdfium2:
table-deb-ref.pdf (page 47 of the Debian Reference, English: two tables, one with cells
wrapped over two lines) and code-policy.pdf (page 37 of the Debian Policy Manual: an
indented makefile snippet). The manuals are GPL-2+ (debian-reference-en, debian-policy).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pypdfium2 as pdfium

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[2] / "shared" / "corpus"


def extract(source: Path, page: int, out: Path) -> None:
    src = pdfium.PdfDocument(str(source))
    new = pdfium.PdfDocument.new()
    new.import_pages(src, [page - 1])
    new.save(str(out))


def main() -> None:
    folder = Path(
        subprocess.run(
            [str(CORPUS / "fetch-debian-reference.sh")], capture_output=True, text=True, check=True
        ).stdout.split()[-1]
    )
    extract(folder / "debian-reference.en.pdf", 47, HERE / "table-deb-ref.pdf")
    extract(CORPUS / "pdf" / "debian-policy.pdf", 37, HERE / "code-policy.pdf")


if __name__ == "__main__":
    main()
