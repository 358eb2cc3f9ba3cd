"""User-facing errors shared by ingest and docchat: a leaf module that imports nothing of
the project, so ``ingest`` never depends on ``docchat`` (docchat re-exports these).

Every message says what happened and what to do; it is shown to the user as is.
"""
from __future__ import annotations


class DocchatError(Exception):
    """Base of every user-facing error; its message is shown to the user as is."""


class DocumentError(DocchatError):
    """A document cannot be read (broken, encrypted, scanned, unsupported, too large)."""


class PasswordRequired(DocumentError):
    """An encrypted PDF needs a password (or the one given is wrong)."""
