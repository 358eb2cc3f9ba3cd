"""PDF fidelity: OCR accuracy on scans made here, forms, tables, code indentation, garbage detector.

Usage: python bench/fidelity.py [--json] [--only ocr,forms,tables,code,garbage] [--compare-rapidocr]
                                [--dpi 150,300]

- ocr: real PDF pages (English and Chinese) rendered by pdftoppm at 150 and 300 dpi and
  saved back as image-only PDFs (Pillow), then read by docchat (ingest.load_document, which
  OCRs them); character accuracy = 1 - edit distance / length against the original page's
  text layer (NFKC; whitespace collapsed, removed for Chinese), and pages/s.
  ocr-pages (part of ocr): a 4-page scan in one PDF, pages/s with one tesseract per core.
  --compare-rapidocr also runs RapidOCR (rapidocr-onnxruntime, PP-OCRv4) on the same images
  where it is installed (it is not a docchat dependency).
- forms: characters read (non-space) vs pdftotext, and filled values found.
- tables: cell text recall of docchat's page text against pdfplumber's tables (2+ rows
  and 2+ columns; pdfplumber is a dev-only dependency): share of pdfplumber's non-empty
  cells whose text is (inside) a cell of our Markdown tables, and found in our page text.
- code: code lines of reportlab-userguide.pdf (runs of 2+ consecutive lines in a monospaced
  font, found from PDFium's character fonts; indentation relative to the run's leftmost
  line, in character widths) whose leading indentation survives in docchat's text.
- garbage: pages of real text documents judged garbage (false positives), as text layers
  and as OCR layers.
Needs pdftoppm/pdftotext (poppler-utils) and tesseract (tesseract-ocr, tesseract-ocr-chi-sim).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium

import ingest
from ingest.clean import is_garbage

ROOT = Path(__file__).resolve().parent.parent

CORPUS = ROOT.parent / "shared" / "corpus"

# How `python -m bench all` runs this script (bench/README.md, "Running every bench").
BENCH = {"quick": ["--only", "ocr,forms", "--dpi", "300"], "full": [], "timeout_s": 420,
         "order": 20}
DATA = ROOT / "tests" / "data"
FETCH = CORPUS / "fetch-debian-reference.sh"

# (language, file, 1-based page): single-column prose pages (reading order is not in question).
OCR_PAGES = [
    ("en", "pdf/debian-policy.pdf", 20),
    ("en", "pdf/lppl.pdf", 3),
    ("en", "ref/debian-reference.en.pdf", 40),
    ("zh", "ref/debian-reference.zh-cn.pdf", 30),
    ("zh", "ref/debian-reference.zh-cn.pdf", 31),
    ("zh", "ref/debian-reference.zh-cn.pdf", 40),
]


def reference_dir() -> Path | None:
    if not FETCH.exists():
        return None
    out = subprocess.run([str(FETCH)], capture_output=True, text=True)
    return Path(out.stdout.split()[-1]) if out.returncode == 0 and out.stdout.strip() else None


def resolve(name: str, ref: Path | None) -> Path | None:
    if name.startswith("ref/"):
        return ref / name[4:] if ref else None
    path = CORPUS / name
    return path if path.exists() else None


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row per character of a."""
    if not a or not b:
        return len(a) + len(b)
    codes = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    ramp = np.arange(len(b) + 1)
    prev = ramp.copy()
    for i, ch in enumerate(a, start=1):
        cur = np.empty_like(prev)
        cur[0] = i
        cur[1:] = np.minimum(prev[1:] + 1, prev[:-1] + (codes != ord(ch)))
        prev = np.minimum.accumulate(cur - ramp) + ramp  # insertions as a running minimum
    return int(prev[-1])


def normalize(text: str, cjk: bool) -> str:
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"\s+", "", text) if cjk else " ".join(text.split())


def char_accuracy(got: str, truth: str, cjk: bool = False) -> float:
    a, b = normalize(got, cjk), normalize(truth, cjk)
    return max(0.0, 1 - edit_distance(a, b) / max(1, len(b)))


def page_text(path: Path, number: int) -> str:
    pdf = pdfium.PdfDocument(str(path))
    try:
        page = pdf[number - 1]
        textpage = page.get_textpage()
        return textpage.get_text_range()
    finally:
        pdf.close()


def scan(path: Path, number: int, dpi: int, out: Path) -> Path:
    """Page `number` of path as an image-only PDF: pdftoppm (gray) at dpi, then Pillow."""
    from PIL import Image

    stem = out.parent / out.stem  # (names hold dots: "debian-reference.en-p40-150")
    subprocess.run(
        [
            "pdftoppm",
            "-gray",
            "-r",
            str(dpi),
            "-f",
            str(number),
            "-l",
            str(number),
            "-singlefile",
            "-png",
            str(path),
            str(stem),
        ],
        check=True,
    )
    png = Path(f"{stem}.png")
    Image.open(png).save(out, "PDF", resolution=float(dpi))
    return png


def bench_ocr(ref: Path | None, tmp: Path, compare_rapidocr: bool,
              dpis: tuple[int, ...] = (150, 300)) -> list[dict]:
    rows = []
    rapid = None
    if compare_rapidocr:
        try:
            from rapidocr_onnxruntime import RapidOCR

            rapid = RapidOCR()
        except ImportError:
            print("rapidocr_onnxruntime is not installed: no comparison", file=sys.stderr)
    for lang, name, number in OCR_PAGES:
        path = resolve(name, ref)
        if path is None:
            continue
        truth = page_text(path, number)
        for dpi in dpis:
            out = tmp / f"{path.stem}-p{number}-{dpi}.pdf"
            png = scan(path, number, dpi, out)
            started = time.perf_counter()
            doc = ingest.load_document(out)
            seconds = time.perf_counter() - started
            row = {
                "engine": "tesseract",
                "lang": lang,
                "file": path.name,
                "page": number,
                "dpi": dpi,
                "accuracy": round(char_accuracy(doc.pages[0].text, truth, lang == "zh"), 4),
                "seconds": round(seconds, 2),
                "pages_s": round(1 / seconds, 3),
            }
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
            if rapid is not None:
                started = time.perf_counter()
                result, _ = rapid(str(png))
                seconds = time.perf_counter() - started
                text = "\n".join(r[1] for r in result or [])
                row = {
                    **row,
                    "engine": "rapidocr",
                    "accuracy": round(char_accuracy(text, truth, lang == "zh"), 4),
                    "seconds": round(seconds, 2),
                    "pages_s": round(1 / seconds, 3),
                }
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
    return rows


def bench_ocr_pages(
    ref: Path | None, tmp: Path, first: int = 20, count: int = 4, dpi: int = 300
) -> list[dict]:
    """Throughput on a multi-page scan (pages of debian-policy.pdf at 300 dpi in one PDF):
    the first page decides the language, the rest run one tesseract per core."""
    from PIL import Image

    path = CORPUS / "pdf" / "debian-policy.pdf"
    if not path.exists():
        return []
    images = [
        Image.open(scan(path, n, dpi, tmp / f"multi-{n}.pdf")) for n in range(first, first + count)
    ]
    out = tmp / "multi.pdf"
    images[0].save(out, "PDF", resolution=float(dpi), save_all=True, append_images=images[1:])
    from ingest.clean import clean_pages, strip_running_lines

    # The truth cleaned as docchat cleans pages (running headers and page numbers go).
    truth, _ = strip_running_lines(
        clean_pages([page_text(path, n) for n in range(first, first + count)])
    )
    started = time.perf_counter()
    doc = ingest.load_document(out)
    seconds = time.perf_counter() - started
    acc = sum(char_accuracy(p.text, t, False) for p, t in zip(doc.pages, truth)) / count
    return [
        {
            "file": f"{path.name} p{first}-{first + count - 1} scanned",
            "dpi": dpi,
            "pages": count,
            "ocr_pages": sum(p.ocr for p in doc.pages),
            "accuracy": round(acc, 4),
            "seconds": round(seconds, 2),
            "pages_s": round(count / seconds, 3),
        }
    ]


def _dense(text: str) -> int:
    return len("".join(text.split()))


def bench_forms() -> list[dict]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_form", DATA / "make_form.py")
    make_form = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_form)
    rows = []
    for path in [DATA / "form_filled.pdf", CORPUS / "pdf" / "form_dd0293.pdf"]:
        if not path.exists():
            continue
        doc = ingest.load_document(path)
        ref = subprocess.run(
            ["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True
        ).stdout
        values = (
            list(make_form.VALUES.values()) + [make_form.NOTE]
            if path.name == "form_filled.pdf"
            else []
        )
        found = sum(1 for v in values if v in doc.text)
        rows.append(
            {
                "file": path.name,
                "chars": _dense(doc.text),
                "pdftotext_chars": _dense(ref),
                "ratio": round(_dense(doc.text) / max(1, _dense(ref)), 3),
                "values_found": f"{found}/{len(values)}" if values else "-",
            }
        )
    return rows


def _cells(text: str) -> set[str]:
    return {
        normalize(c, False)
        for line in text.splitlines()
        if line.strip().startswith("|")
        for c in line.strip().strip("|").split("|")
        if c.strip()
    }


def bench_tables(ref: Path | None, files: list[Path]) -> list[dict]:
    import pdfplumber

    rows = []
    for path in files:
        doc = ingest.load_document(path)
        cells_total = in_table = in_text = tables = 0
        with pdfplumber.open(str(path)) as pdf:
            for page in pdf.pages:
                found = page.extract_tables()
                if not found:
                    continue
                ours = doc.page(page.page_number)
                ours_text = normalize(ours.text, False) if ours else ""
                ours_cells = _cells(ours.text) if ours else set()
                for table in found:
                    if len(table) < 2 or max(len(r) for r in table) < 2:
                        continue  # a boxed code listing or note, not a table
                    tables += 1
                    for row in table:
                        for cell in row:
                            cell = normalize(cell or "", False)
                            if not cell:
                                continue
                            cells_total += 1
                            in_text += cell in ours_text
                            in_table += cell in ours_cells or any(cell in c for c in ours_cells)
        rows.append(
            {
                "file": path.name,
                "tables": tables,
                "cells": cells_total,
                "recall_in_tables": round(in_table / max(1, cells_total), 3),
                "recall_in_text": round(in_text / max(1, cells_total), 3),
            }
        )
    return rows


def code_lines(path: Path, first: int, last: int) -> list[tuple[int, str, int]]:
    """(page, line text, indent in characters) of monospaced lines, from PDFium's characters."""
    out = []
    pdf = pdfium.PdfDocument(str(path))
    try:
        for i in range(first - 1, min(last, len(pdf))):
            page = pdf[i]
            textpage = page.get_textpage()
            n = textpage.count_chars()
            line, left, width, mono, lines = [], None, None, True, []
            import ctypes

            import pypdfium2.raw as raw

            buf = ctypes.create_string_buffer(256)
            for k in range(n):
                ch = chr(raw.FPDFText_GetUnicode(textpage.raw, k))
                if ch in "\r\n":
                    if line:
                        lines.append(("".join(line), left, width, mono))
                    line, left, width, mono = [], None, None, True
                    continue
                if not line and ch.isspace():
                    continue
                if not line:
                    l_, r_, _, _ = textpage.get_charbox(k)
                    left, width = l_, None
                    raw.FPDFText_GetFontInfo(textpage.raw, k, buf, 256, None)
                    mono = b"Courier" in buf.value or b"Mono" in buf.value
                    if mono:
                        width = raw.FPDFText_GetFontSize(textpage.raw, k) * 0.6
                line.append(ch)
            if line:
                lines.append(("".join(line), left, width, mono))
            blocks: list[
                list[tuple[str, float, float]]
            ] = []  # runs of consecutive monospaced lines
            previous_mono = False
            for t, l_, w, m in lines:
                if m:
                    if not previous_mono:
                        blocks.append([])
                    blocks[-1].append((t, l_, w))
                previous_mono = m
            for block in blocks:
                if len(block) < 2:
                    continue  # a command or name inside prose, not a code block
                base = min(l_ for _, l_, _ in block)
                out += [(i + 1, t.strip(), round((l_ - base) / w)) for t, l_, w in block]
            textpage.close()
            page.close()
    finally:
        pdf.close()
    return out


def bench_code(path: Path) -> list[dict]:
    lines = code_lines(path, 1, 10**6)
    doc = ingest.load_document(path)
    indented = [(p, t, ind) for p, t, ind in lines if ind > 0 and len(t) > 3]
    kept = 0
    for page, text, indent in indented:
        body = doc.page(page).text if doc.page(page) else ""
        kept += any(
            ln.rstrip() == " " * indent + text or (ln.startswith(" ") and ln.strip() == text)
            for ln in body.splitlines()
        )
    return [
        {
            "file": path.name,
            "code_lines": len(lines),
            "indented": len(indented),
            "indent_kept": kept,
            "share": round(kept / max(1, len(indented)), 3),
        }
    ]


def bench_garbage(files: list[Path]) -> list[dict]:
    rows = []
    for path in files:
        pdf = pdfium.PdfDocument(str(path))
        pages = as_text = as_ocr = 0
        try:
            for i in range(len(pdf)):
                page = pdf[i]
                textpage = page.get_textpage()
                text = textpage.get_text_range()
                textpage.close()
                page.close()
                if len(text.strip()) < 20:
                    continue
                pages += 1
                as_text += is_garbage(text)
                as_ocr += is_garbage(text, ocr_layer=True)
        finally:
            pdf.close()
        rows.append(
            {
                "file": path.name,
                "pages": pages,
                "garbage_as_text_layer": as_text,
                "garbage_as_ocr_layer": as_ocr,
            }
        )
    return rows


def htmldoc_pdfs(tmp: Path) -> list[Path]:
    """htmldoc's own manual as a book and as a web page (apt htmldoc), when htmldoc is installed."""
    manual = Path("/usr/share/doc/htmldoc/htmldoc.html")
    if not manual.exists():
        return []
    out = []
    for mode in ("--book", "--webpage"):
        path = tmp / f"htmldoc{mode[1:]}.pdf"
        subprocess.run(
            ["htmldoc", mode, "--textfont", "times", "-f", str(path), str(manual)],
            capture_output=True,
        )
        if path.exists():
            out.append(path)
    return out


def table(rows: list[dict]) -> str:
    if not rows:
        return "(no rows)"
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(str(r.get(k, ""))) for r in rows)) for k in keys}
    lines = ["  ".join(k.ljust(widths[k]) for k in keys)]
    lines += ["  ".join(str(r.get(k, "")).ljust(widths[k]) for k in keys) for r in rows]
    return "\n".join(lines)


def summary(ocr_rows: list[dict]) -> dict:
    out = {}
    for engine in sorted({r["engine"] for r in ocr_rows}):
        for lang in ("en", "zh"):
            for dpi in (150, 300):
                sel = [
                    r
                    for r in ocr_rows
                    if r["engine"] == engine and r["lang"] == lang and r["dpi"] == dpi
                ]
                if sel:
                    out[f"{engine}_{lang}_{dpi}"] = {
                        "accuracy": round(sum(r["accuracy"] for r in sel) / len(sel), 4),
                        "pages_s": round(len(sel) / sum(r["seconds"] for r in sel), 3),
                        "pages": len(sel),
                    }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--only", default="ocr,forms,tables,code,garbage")
    ap.add_argument("--compare-rapidocr", action="store_true")
    ap.add_argument("--dpi", default="150,300", help="ocr: scan resolutions (comma-separated)")
    args = ap.parse_args(argv)
    dpis = tuple(int(d) for d in args.dpi.split(",") if d)
    parts = set(args.only.split(","))
    ref = reference_dir()
    result: dict = {"load_avg_1m": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if "ocr" in parts:
            result["ocr"] = bench_ocr(ref, tmp, args.compare_rapidocr, dpis)
            result["ocr_summary"] = summary(result["ocr"])
        if "ocr" in parts or "ocr-pages" in parts:
            result["ocr_pages"] = bench_ocr_pages(ref, tmp)
        if "forms" in parts:
            result["forms"] = bench_forms()
        if "tables" in parts:
            files = [
                p
                for p in (
                    resolve("ref/debian-reference.en.pdf", ref),
                    resolve("pdf/reportlab-userguide.pdf", ref),
                )
                if p
            ]
            result["tables"] = bench_tables(ref, files)
        if "code" in parts:
            files = [
                p
                for p in (
                    resolve("pdf/reportlab-userguide.pdf", ref),
                    resolve("pdf/debian-policy.pdf", ref),
                    resolve("ref/debian-reference.en.pdf", ref),
                )
                if p
            ]
            result["code"] = [row for p in files for row in bench_code(p)]
        if "garbage" in parts:
            files = sorted((CORPUS / "pdf").glob("*.pdf")) + htmldoc_pdfs(tmp)
            files += [
                p
                for p in (
                    resolve("ref/debian-reference.en.pdf", ref),
                    resolve("ref/debian-reference.zh-cn.pdf", ref),
                )
                if p
            ]
            result["garbage"] = bench_garbage(files)
    result["load_avg_1m_after"] = round(os.getloadavg()[0], 2)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    for key in ("ocr", "ocr_pages", "forms", "tables", "code", "garbage"):
        if key in result:
            print(f"== {key}")
            print(table(result[key]))
            print()
    if "ocr_summary" in result:
        print("== ocr summary (mean accuracy, pages/s)")
        print(table([{"run": k, **v} for k, v in result["ocr_summary"].items()]))
    print(
        f"\nload average {result['load_avg_1m']} -> {result['load_avg_1m_after']} (shared machine)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
