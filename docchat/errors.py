"""User-facing errors: every message says what happened and what to do."""
from __future__ import annotations


class DocchatError(Exception):
    """Base error; its message is shown to the user as is."""


class DocumentError(DocchatError):
    """A document cannot be read (broken, encrypted, scanned, unsupported, too large)."""


class PasswordRequired(DocumentError):
    """An encrypted PDF needs a password (or the one given is wrong)."""


class BackendError(DocchatError):
    """Generation failed inside a backend."""


class BackendUnavailable(BackendError):
    """The backend cannot be reached or loaded."""


class ContextTooLong(BackendError):
    """The prompt does not fit the model's context window."""
