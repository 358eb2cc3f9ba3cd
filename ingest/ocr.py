"""OCR for pages without a usable text layer (scans, garbage or unmapped text), page by page.

The engine is Tesseract with Debian's English and Simplified Chinese models (apt packages
tesseract-ocr, tesseract-ocr-eng, tesseract-ocr-chi-sim): offline, nothing downloaded.
Measured against RapidOCR (PP-OCRv4 ONNX) on the same pages, Tesseract read English more
accurately and several times faster, and Chinese about as well (bench/README.md, "PDF
fidelity"). PDFium renders each page (under the PDFium lock, in this thread); one
`tesseract` process per core recognises the images. Only the pages that need it pay.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ingest.clean import normalize_page
from ingest.errors import DocumentError
from ingest.parallel import cores
from ingest.pdf import GARBAGE, IMAGE, OCR, PDFIUM_LOCK, PdfText, numbers_text, open_pdf
from ingest.segment import cjk_ratio, document_language

logger = logging.getLogger(__name__)

# Pages OCR'd at most per document (DOCCHAT_OCR_MAX_PAGES overrides; 0 turns OCR off).
DEFAULT_MAX_PAGES = 300
DPI = 300
_MAX_SIDE_PX = 5000  # a poster-sized page is rendered smaller than DPI
PAGE_TIMEOUT_S = 300.0
# Where the text-layer pages do not tell the language: Chinese when the first OCR'd page
# (read with both models) has at least this share of CJK characters.
_CJK_SHARE = 0.2
_SPACE_IN_CJK = re.compile(
    r"(?<=[\u3000-\u9fff\uff00-\uffef])[ \t]+(?=[\u3000-\u9fff\uff00-\uffef])"
)


class OcrCancelled(DocumentError):
    """The user stopped OCR; nothing of the document is kept."""


class OcrFailed(DocumentError):
    """Tesseract could not read one page (it crashed or timed out); the other pages go on."""


@dataclass(frozen=True)
class OcrProgress:
    """OCR of one document so far: pages done of total, time taken and the estimate left."""

    done: int
    total: int
    elapsed_s: float
    eta_s: float | None  # None before the first page is done
    page: int | None = None  # the page just finished (1-based)


ProgressFn = Callable[[OcrProgress], None]


def max_pages_setting() -> int:
    """DOCCHAT_OCR_MAX_PAGES (default 300): pages OCR'd at most per document; 0 = no OCR."""
    raw = os.environ.get("DOCCHAT_OCR_MAX_PAGES", "").strip()
    return int(raw) if raw.isdecimal() else DEFAULT_MAX_PAGES


@lru_cache(maxsize=1)
def languages() -> frozenset[str]:
    """Tesseract's installed languages ("eng", "chi_sim"); empty when tesseract is absent."""
    exe = shutil.which("tesseract")
    if exe is None:
        return frozenset()
    try:
        out = subprocess.run([exe, "--list-langs"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(line.strip() for line in out.stdout.splitlines()[1:] if line.strip())


def unavailable_reason() -> str | None:
    """Why OCR cannot run here (with the fix), or None when it can."""
    langs = languages()
    if not langs:
        return "OCR is not installed (apt-get install tesseract-ocr tesseract-ocr-chi-sim)"
    if "eng" not in langs:
        return "Tesseract's English model is missing (apt-get install tesseract-ocr-eng)"
    return None


def _lang_option(language: str | None) -> str:
    have_zh = "chi_sim" in languages()
    if language == "zh" and have_zh:
        return "chi_sim+eng"
    if language is None and have_zh:
        return "eng+chi_sim"
    return "eng"


def recognize(image_pgm: bytes, language: str | None = None) -> str:
    """Text of one page image (binary PGM) read by tesseract; language "en", "zh" or None (both)."""
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}  # one core per process: we run one per core
    try:
        out = subprocess.run(
            ["tesseract", "stdin", "stdout", "-l", _lang_option(language), "--psm", "3"],
            input=image_pgm,
            capture_output=True,
            timeout=PAGE_TIMEOUT_S,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise OcrFailed(f"OCR failed: {e}") from None
    if out.returncode != 0:
        raise OcrFailed(f"OCR failed: {out.stderr.decode(errors='replace').strip()[-300:]}")
    text = out.stdout.decode("utf-8", errors="replace").replace("\f", "")
    return _SPACE_IN_CJK.sub("", text)  # Tesseract spaces out Chinese characters


def render_pgm(page, dpi: int = DPI) -> bytes:
    """The page as an 8-bit gray PGM image at `dpi` (smaller for huge pages)."""
    import numpy as np

    width, height = page.get_size()
    scale = min(dpi / 72, _MAX_SIDE_PX / max(width, height, 1.0))
    bitmap = page.render(scale=scale, grayscale=True)
    try:
        pixels = np.ascontiguousarray(bitmap.to_numpy())
    finally:
        bitmap.close()
    if pixels.ndim == 3:
        pixels = pixels[:, :, 0]
    h, w = pixels.shape[:2]
    return f"P5\n{w} {h}\n255\n".encode("ascii") + np.ascontiguousarray(pixels).tobytes()


def ocr_pages(
    render: Callable[[int], bytes],
    numbers: Sequence[int],
    language: str | None = None,
    on_progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    workers: int | None = None,
    failed: list[int] | None = None,
) -> dict[int, str]:
    """{page: text} for the 1-based page numbers, rendered by render(number) in this thread
    and recognised by up to `workers` tesseract processes (one per core).

    language None: the first page is read with both models, and its script decides the
    rest. on_progress gets an OcrProgress before the first page and after each page;
    cancel stops between pages (OcrCancelled). A page tesseract cannot read comes back empty
    and its number goes into `failed`.
    """
    failed = [] if failed is None else failed  # pages tesseract could not read
    total = len(numbers)
    started = time.perf_counter()
    results: dict[int, str] = {}

    def report(page: int | None) -> None:
        if on_progress is None:
            return
        elapsed = time.perf_counter() - started
        done = len(results)
        eta = elapsed / done * (total - done) if done else None
        on_progress(OcrProgress(done=done, total=total, elapsed_s=elapsed, eta_s=eta, page=page))

    def check_cancel() -> None:
        if cancel is not None and cancel.is_set():
            raise OcrCancelled(
                f"OCR stopped after {len(results)} of {total} pages; nothing was kept."
            )

    report(None)
    if not numbers:
        return results
    queue = list(numbers)
    if language is None:
        first = queue.pop(0)
        check_cancel()
        results[first] = _recognize_or_skip(render(first), None, first, failed)
        language = "zh" if cjk_ratio(results[first]) >= _CJK_SHARE else "en"
        logger.info("OCR: page %d reads as %s", first, language)
        report(first)
    workers = max(1, min(workers or cores(), len(queue) or 1))
    running: dict[Future, int] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ocr") as pool:
        try:
            while queue or running:
                while queue and len(running) < workers:
                    check_cancel()
                    number = queue.pop(0)
                    running[pool.submit(recognize, render(number), language)] = number
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    number = running.pop(future)
                    try:
                        results[number] = future.result()
                    except OcrFailed as e:
                        logger.warning("OCR of page %d failed: %s", number, e)
                        failed.append(number)
                        results[number] = ""
                    report(number)
                check_cancel()
        except BaseException:
            for future in running:
                future.cancel()
            raise
    return {n: results[n] for n in numbers}


def _recognize_or_skip(image: bytes, language: str | None, number: int, failed: list[int]) -> str:
    try:
        return recognize(image, language)
    except OcrFailed as e:
        logger.warning("OCR of page %d failed: %s", number, e)
        failed.append(number)
        return ""


def apply_ocr(
    path: str | Path,
    password: str | None,
    raw: PdfText,
    on_progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    max_pages: int | None = None,
) -> str | None:
    """OCR raw's pages that lack a usable text layer (GARBAGE, IMAGE), in place: their text,
    normalized text and status (OCR) change. Returns None, or why candidate pages were not
    OCR'd (for check_text_layer's message; a warning names them when the rest is readable).
    """
    numbers = [i for i, s in enumerate(raw.status, start=1) if s in (GARBAGE, IMAGE)]
    if not numbers:
        return None
    limit = max_pages_setting() if max_pages is None else max_pages
    reason = unavailable_reason()
    name = Path(path).name
    if reason is not None or len(numbers) > limit:
        hint = _skip_hint(len(numbers), limit, reason)
        raw.warnings.append(
            f"Page(s) {numbers_text(numbers)} have no usable text layer and were not OCR'd: {hint}."
        )
        return hint
    language = _document_language(raw.pages)
    with PDFIUM_LOCK:
        pdf = open_pdf(path, password)
    try:

        def render(number: int) -> bytes:
            with PDFIUM_LOCK:
                page = pdf[number - 1]
                try:
                    return render_pgm(page)
                finally:
                    page.close()

        logger.info("%s: OCR of %d page(s), language %s", name, len(numbers), language or "auto")
        failed: list[int] = []
        texts = ocr_pages(render, numbers, language, on_progress=on_progress, cancel=cancel,
                          failed=failed)
    finally:
        with PDFIUM_LOCK:
            pdf.close()
    if failed:
        raw.warnings.append(f"OCR could not read page(s) {numbers_text(sorted(failed))} "
                            "(Tesseract failed or timed out); they are empty.")
    for number, text in texts.items():
        k = number - 1
        raw.pages[k], raw.normalized[k], raw.status[k] = text, normalize_page(text), OCR
    return None


def _document_language(texts: Sequence[str]) -> str | None:
    """ "zh"/"en" from the pages that have a text layer; None when they are too few to tell."""
    filled = [t for t in texts if t.strip()]
    if sum(len(t) for t in filled) < 200:
        return None
    return document_language(filled)


def _skip_hint(count: int, limit: int, reason: str | None) -> str:
    if reason is not None:
        return f"{reason}, or run `ocrmypdf in.pdf out.pdf` first and load out.pdf"
    if limit == 0:
        return (
            "OCR is off (DOCCHAT_OCR_MAX_PAGES=0); set it above 0, "
            "or run `ocrmypdf in.pdf out.pdf` first"
        )
    return (
        f"{count} pages need OCR, over the limit of {limit} (DOCCHAT_OCR_MAX_PAGES); raise it, "
        "or run `ocrmypdf in.pdf out.pdf` first and load out.pdf"
    )
