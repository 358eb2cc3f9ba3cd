"""Writes scan-zh.pdf (python tests/data/make_scans.py; needs pdftoppm and Pillow): page 31
of the Debian Reference manual in Simplified Chinese (debian-reference-zh-cn, GPL-2+),
rendered at 300 dpi, made black and white and saved back as an image-only PDF (CCITT
G4, 40 KB), as an office scanner would; scan-zh.txt is that page's original text layer
(pdftotext), the OCR test's truth.
The manual comes from ../shared/corpus/fetch-debian-reference.sh.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent
PAGE = 31


def scan(pdf: Path, page: int, out: Path, dpi: int = 300, bilevel: bool = True) -> None:
    """Page `page` of pdf as an image-only PDF at `dpi` (black and white, or gray JPEG)."""
    with tempfile.TemporaryDirectory() as tmp:
        stem = Path(tmp) / "page"
        subprocess.run(
            [
                "pdftoppm",
                "-gray",
                "-r",
                str(dpi),
                "-f",
                str(page),
                "-l",
                str(page),
                "-singlefile",
                "-png",
                str(pdf),
                str(stem),
            ],
            check=True,
        )
        image = Image.open(f"{stem}.png")
        if bilevel:
            image = image.point(lambda v: 255 if v > 160 else 0).convert("1")
        image.save(out, "PDF", resolution=float(dpi), **({} if bilevel else {"quality": 60}))


def main() -> None:
    folder = subprocess.run(
        [str(HERE.parents[2] / "shared" / "corpus" / "fetch-debian-reference.sh")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[-1]
    source = Path(folder) / "debian-reference.zh-cn.pdf"
    scan(source, PAGE, HERE / "scan-zh.pdf")
    text = subprocess.run(
        ["pdftotext", "-f", str(PAGE), "-l", str(PAGE), "-enc", "UTF-8", str(source), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (HERE / "scan-zh.txt").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
