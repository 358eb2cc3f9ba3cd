"""Bring files into the store: hash first, skip what is already ingested, report errors."""
from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from docchat.errors import DocumentError
from docchat.library.store import SessionStore
from ingest.document import Document
from ingest.parallel import limited

logger = logging.getLogger(__name__)


@dataclass
class IngestResult:
    path: str
    sha256: str | None = None
    doc_id: int | None = None
    document: Document | None = None
    seconds: float = 0.0
    error: str | None = None
    reused: bool = False  # the same content was ingested before

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict:
        doc = self.document
        return {
            "path": self.path, "sha256": self.sha256, "doc_id": self.doc_id,
            "pages": len(doc.pages) if doc else None,
            "tokens": doc.tokens if doc else None,
            "tokenizer": doc.tokenizer if doc else None,
            "sections": len(doc.sections) if doc else None,
            "language": doc.language if doc else None,
            "seconds": round(self.seconds, 3), "reused": self.reused, "error": self.error,
        }


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def supported_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Each file argument as given; each folder expanded to its supported files, sorted."""
    from ingest import SUPPORTED_SUFFIXES

    for p in map(Path, paths):
        if p.is_dir():
            yield from sorted(f for f in p.rglob("*")
                              if f.is_file() and f.suffix.lower() in SUPPORTED_SUFFIXES)
        else:
            yield p


def _read(path: Path, name: str, load, **kw) -> Document:
    """load(path, **kw), with any failure a DocumentError that says what to do: a reader's
    bug on an unusual file (a table numbered with circled digits once raised ValueError) is
    reported for that file instead of stopping the page or the batch."""
    try:
        return load(path, **kw)
    except DocumentError:
        raise
    except MemoryError as e:
        raise DocumentError(f"{name}: out of memory while reading it. Close other programs, "
                            f"or split the file and upload the parts.") from e
    except Exception as e:  # noqa: BLE001 - every other failure is reported for the file
        logger.exception("reading %s failed", name)
        raise DocumentError(f"{name} could not be read ({type(e).__name__}: {e}). Nothing "
                            f"was added; save it again as PDF or plain text and upload that, "
                            f"and please report the file.") from e


def load_or_ingest(store: SessionStore, path: Path, sha256: str, password: str | None = None,
                   max_mb: float = 200.0, tokenizer=None,
                   name: str | None = None, on_ocr_progress=None,
                   cancel=None, ocr_max_pages: int | None = None,
                   processes: int | None = None) -> tuple[Document, bool]:
    """The stored document with these bytes, or path ingested and stored now.

    Returns (document, reused). ``name`` replaces the file name shown for a new document
    (uploads are stored under their hash). Pages without a text layer are OCR'd:
    ``on_ocr_progress(ingest.OcrProgress)`` hears of each page, setting the threading.Event
    ``cancel`` stops (ingest.OcrCancelled). ``ocr_max_pages`` and ``processes`` (the
    worker processes for reading and indexing) are Settings.ocr_max_pages and
    Settings.ingest_processes; None leaves ingest's defaults (its DOCCHAT_* variables).
    Raises DocumentError for the user.
    """
    from ingest import load_document

    start = time.perf_counter()
    existing = store.find_document(sha256)
    if existing is not None:
        return store.load_document(existing), True
    with limited(processes):  # the store's Chinese indexing forks too
        doc = _read(path, name or Path(path).name, load_document, password=password,
                    max_mb=max_mb, tokenizer=tokenizer, on_ocr_progress=on_ocr_progress,
                    cancel=cancel, ocr_max_pages=ocr_max_pages)
        if name is not None:
            doc.name = name
            if doc.title == Path(path).stem:  # ingest's last resort: the stored file's stem
                doc.title = Path(name).stem
        store.save_document(doc, seconds=time.perf_counter() - start)
    return doc, False


def ingest_path(store: SessionStore, path: str | Path, password: str | None = None,
                max_mb: float = 200.0, tokenizer=None,
                sha256: str | None = None, on_ocr_progress=None, cancel=None,
                ocr_max_pages: int | None = None, processes: int | None = None
                ) -> IngestResult:
    """Ingest one file into store unless the same content is there already.

    Pass ``sha256`` when the caller has hashed the file already; on_ocr_progress, cancel,
    ocr_max_pages and processes as for load_or_ingest.
    """
    path = Path(path)
    start = time.perf_counter()
    result = IngestResult(path=str(path))
    try:
        if not path.is_file():
            raise DocumentError(f"{path}: no such file; check the path.")
        result.sha256 = sha256 or file_sha256(path)
        result.document, result.reused = load_or_ingest(
            store, path, result.sha256, password=password, max_mb=max_mb, tokenizer=tokenizer,
            on_ocr_progress=on_ocr_progress, cancel=cancel, ocr_max_pages=ocr_max_pages,
            processes=processes)
        result.doc_id = result.document.id
    except DocumentError as e:
        result.error = str(e)
    result.seconds = time.perf_counter() - start
    logger.info("ingest %s: %s in %.2fs", path, result.error or "ok", result.seconds)
    return result
