"""Work that pages poll: a version bumped at every change, and an event once it is final.

A chat answer (docchat.answer.chat.Generation) and a summary run (docchat.summaries.jobs.SummaryJob)
both run in a background thread while any number of page runs wait for their next change.
"""
from __future__ import annotations

import threading


class Watched:
    """A version number, a condition to wait on for the next one, and a finished event."""

    def __init__(self) -> None:
        self.version = 0
        self._cond = threading.Condition()
        self._finished = threading.Event()  # set once the final state is saved

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    def wait(self, version: int, timeout: float) -> int:
        """Block until something changed after version (or timeout); return the new version."""
        with self._cond:
            if self.version == version and not self.done:
                self._cond.wait(timeout)
            return self.version

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the end; True once the final state is saved."""
        return self._finished.wait(timeout)

    def _changed(self) -> None:
        """Count a change and wake the waiters; the caller holds self._cond."""
        self.version += 1
        self._cond.notify_all()
