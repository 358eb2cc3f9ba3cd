"""User-facing errors: every message says what happened and what to do.

The base and the document errors live in ``ingest.errors`` (a leaf module) so that the
dependency runs one way, docchat -> ingest; they are re-exported here.
"""
from __future__ import annotations

from ingest.errors import DocchatError, DocumentError, PasswordRequired

__all__ = ["DocchatError", "DocumentError", "PasswordRequired", "BackendError",
           "BackendUnavailable", "ContextTooLong"]


class BackendError(DocchatError):
    """Generation failed inside a backend."""


class BackendUnavailable(BackendError):
    """The backend cannot be reached or loaded."""


class ContextTooLong(BackendError):
    """The prompt does not fit the model's context window."""
