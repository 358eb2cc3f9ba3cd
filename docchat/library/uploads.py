"""Uploaded files: store the bytes under data/uploads/<sha256><suffix>, ingest once, reuse after."""
from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from docchat.errors import DocumentError
from docchat.library.documents import load_or_ingest
from docchat.library.store import SessionStore
from ingest.document import Document

logger = logging.getLogger(__name__)

# Tokens kept free for the chat format, the question and recent turns when judging "fits whole".
PROMPT_RESERVE = 512


@dataclass
class Upload:
    """What became of one uploaded file."""
    name: str
    sha256: str
    document: Document
    reused: bool  # the same bytes were ingested before
    seconds: float


@dataclass(frozen=True)
class Fit:
    tokens: int
    budget: int

    @property
    def whole(self) -> bool:
        """True when the document goes into the model's window whole."""
        return self.tokens <= self.budget


def _suffix(name: str) -> str:
    from ingest import SUPPORTED_SUFFIXES

    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        shown = suffix or "no extension"
        raise DocumentError(
            f"{name}: {shown} files are not supported; upload a PDF, TXT or Markdown (.md) file."
        )
    return suffix


def save_upload(name: str, data: bytes, uploads_dir: Path, max_mb: float) -> Path:
    """Write data to uploads_dir/<sha256><suffix> (never under the given name); return the path."""
    suffix = _suffix(name)
    size_mb = len(data) / (1024 * 1024)
    if size_mb > max_mb:
        raise DocumentError(f"{name} is {size_mb:.0f} MB; the limit is {max_mb:.0f} MB. "
                            f"Split the file or raise DOCCHAT_MAX_FILE_MB.")
    if not data:
        raise DocumentError(f"{name} is empty; upload a file with text in it.")
    digest = hashlib.sha256(data).hexdigest()
    uploads_dir.mkdir(parents=True, exist_ok=True)
    path = uploads_dir / f"{digest}{suffix}"
    if not path.exists():
        # Write then rename, so a half-written file never carries the final name.
        fd, tmp = tempfile.mkstemp(dir=uploads_dir, suffix=".part")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return path


def ingest_upload(store: SessionStore, name: str, data: bytes, uploads_dir: Path,
                  max_mb: float, password: str | None = None, tokenizer=None,
                  on_ocr_progress=None, cancel=None, ocr_max_pages: int | None = None,
                  processes: int | None = None) -> Upload:
    """Save and ingest one uploaded file, or reuse the stored document with the same bytes.

    Scanned pages are OCR'd: ``on_ocr_progress(ingest.OcrProgress)`` is called before the
    first and after each OCR'd page (done, total, eta_s; from this thread), and setting the
    threading.Event ``cancel`` stops OCR with ingest.OcrCancelled (a DocumentError).
    ``ocr_max_pages`` and ``processes`` as for library.load_or_ingest (the Settings values).
    Raises DocumentError (PasswordRequired for an encrypted PDF) with a message for the user.
    """
    start = time.perf_counter()
    path = save_upload(name, data, uploads_dir, max_mb)
    try:
        doc, reused = load_or_ingest(store, path, path.stem, password=password, max_mb=max_mb,
                                     tokenizer=tokenizer, name=name,
                                     on_ocr_progress=on_ocr_progress, cancel=cancel,
                                     ocr_max_pages=ocr_max_pages, processes=processes)
    except DocumentError as e:
        # Messages name the stored file (its hash); the user knows it by the name it had.
        raise type(e)(str(e).replace(path.name, name)) from e
    seconds = time.perf_counter() - start
    if not reused:
        logger.info("upload %s: %d pages, %d tokens in %.2fs", name, len(doc.pages), doc.tokens,
                    seconds)
    return Upload(name, path.stem, doc, reused, seconds)


def fit(doc: Document, context_window: int, max_new_tokens: int) -> Fit:
    """Whether doc fits the model's window whole next to the answer, or will be packed."""
    budget = max(0, context_window - max_new_tokens - PROMPT_RESERVE)
    return Fit(tokens=doc.tokens, budget=budget)
