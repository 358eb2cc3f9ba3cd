"""Summaries on disk: folders that may be summarised (never outside the configured root),
where each run writes, and reading a folder of summaries back (index.md, files, documents).
"""
from __future__ import annotations

import logging
import re
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from docchat.errors import DocchatError
from docchat.summaries.batch import INDEX_NAME, find_documents

logger = logging.getLogger(__name__)


class FolderRefused(DocchatError):
    """A folder that may not be summarised; reason is "outside", "missing" or "empty"."""

    def __init__(self, reason: str, path: str, root: str) -> None:
        self.reason, self.path, self.root = reason, path, root
        text = {"outside": f"{path} is outside the summaries folder {root}; choose a folder "
                           f"under it.",
                "missing": f"There is no folder {path} under {root}; check the name.",
                "empty": f"{path} has no PDF, TXT or Markdown files."}[reason]
        super().__init__(text)


# --- choosing documents -------------------------------------------------------------
def resolve_folder(root: str | Path, relative: str) -> Path:
    """The folder relative to root, symlinks and '..' resolved; never outside root."""
    base = Path(root).resolve()
    wanted = (relative or "").strip()
    target = (base / wanted).resolve()  # an absolute `wanted` replaces base: caught below
    if not target.is_relative_to(base):
        raise FolderRefused("outside", wanted, str(base))
    if not target.is_dir():
        raise FolderRefused("missing", wanted, str(base))
    return target


def folder_documents(root: str | Path, relative: str) -> list[Path]:
    """Supported files in a folder under root; files that are links out of root are left out."""
    base = Path(root).resolve()
    folder = resolve_folder(base, relative)
    files = [p for p in find_documents(folder) if p.resolve().is_relative_to(base)]
    if not files:
        raise FolderRefused("empty", (relative or "").strip() or ".", str(base))
    return files


def subfolders(root: str | Path, depth: int = 2, limit: int = 200) -> list[str]:
    """Folders under root (relative, sorted, hidden ones left out), for the page's picker."""
    base = Path(root).resolve()
    found: list[str] = []
    frontier = [base]
    for _ in range(depth):
        nxt = []
        for folder in frontier:
            try:
                children = sorted(p for p in folder.iterdir() if p.is_dir()
                                  and not p.name.startswith("."))
            except OSError:
                continue
            for child in children:
                if child.resolve().is_relative_to(base):
                    found.append(str(child.relative_to(base)))
                    nxt.append(child)
        frontier = nxt
    return sorted(found)[:limit]


# --- reading ------------------------------------------------------------------------
_LINK = re.compile(r"\]\(([^)\s]+\.md)\)")
_HASH = re.compile(r"-([0-9a-f]{8})\.md$")


@dataclass(frozen=True)
class Entry:
    """One summary file of a folder of summaries."""
    name: str  # the document's name, from the index (else the file's)
    file: Path
    doc_id: int | None  # the stored document it summarises, for its page references


@dataclass(frozen=True)
class Collection:
    """A folder of summaries: its index.md and its summary files, in index order."""
    path: Path
    index: str
    entries: tuple[Entry, ...] = field(default_factory=tuple)


def collections(summaries_dir: str | Path) -> list[Path]:
    """Folders under summaries_dir (itself included) holding an index.md, newest first."""
    base = Path(summaries_dir)
    if not base.is_dir():
        return []
    found = [p.parent for p in base.glob(INDEX_NAME)] + \
        [p.parent for p in base.glob(f"*/{INDEX_NAME}")] + \
        [p.parent for p in base.glob(f"*/*/{INDEX_NAME}")]
    return sorted(set(found), key=lambda p: (p / INDEX_NAME).stat().st_mtime, reverse=True)


def read_collection(folder: str | Path, documents: Iterable[dict]) -> Collection:
    """index.md and each summary in folder, each mapped (by its content hash) to a document."""
    folder = Path(folder)
    index_path = folder / INDEX_NAME
    index = index_path.read_text(encoding="utf-8") if index_path.exists() else ""
    by_hash: dict[str, int] = {}
    for row in documents:
        by_hash.setdefault(str(row["sha256"])[:8], row["id"])
    names: dict[str, str] = {}
    for line in index.splitlines():
        m = re.match(r"^\|\s*\[(.+?)\]\(([^)\s]+\.md)\)", line)
        if m:
            names[m.group(2)] = m.group(1).replace("\\|", "|")
    order = [m.group(1) for m in _LINK.finditer(index)]
    files = sorted((p for p in folder.glob("*.md") if p.name != INDEX_NAME),
                   key=lambda p: (order.index(p.name) if p.name in order else len(order),
                                  p.name))
    entries = []
    for p in files:
        m = _HASH.search(p.name)
        entries.append(Entry(names.get(p.name, p.stem), p,
                             by_hash.get(m.group(1)) if m else None))
    return Collection(folder, index, tuple(entries))


def run_folder(summaries_dir: str | Path, kind: str, label: str = "") -> Path:
    """Where a run writes: a folder run under folders/<its path>, others under runs/<time>."""
    base = Path(summaries_dir)
    if kind == "folder":
        slug = re.sub(r"[^\w.-]+", "-", label.strip("/")).strip(".-_") or "root"
        return base / "folders" / slug
    if kind == "document":
        return base / "documents"
    return base / "runs" / f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:4]}"
