"""A progress line on stderr for long work, shown only when stderr is a terminal.

It never writes to stdout (which carries the data) and is silent when stderr is redirected, so logs
and pipelines see nothing of it.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``prefeval: LABEL  done/total`` redrawn in place, at most ten times a second."""

    def __init__(self, enabled: bool, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self._label = ""
        self._total = 0
        self._done = 0
        self._drawn_at = 0.0

    @classmethod
    def silent(cls) -> Progress:
        """A progress line that is never drawn (a new one each time: a Progress holds its state)."""
        return cls(enabled=False)

    @classmethod
    def for_terminal(cls, quiet: bool = False) -> Progress:
        """Enabled when stderr is a terminal and ``quiet`` is not set."""
        return cls(enabled=not quiet and sys.stderr.isatty())

    def start(self, label: str, total: int) -> None:
        self._label, self._total, self._done = label, total, 0
        self._draw(force=True)

    def advance(self, amount: int = 1) -> None:
        self._done += amount
        self._draw(force=self._done >= self._total)

    def finish(self) -> None:
        if self.enabled and self._label:
            self.stream.write("\r\033[K")
            self.stream.flush()
        self._label = ""

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or (not force and now - self._drawn_at < 0.1):
            return
        self._drawn_at = now
        self.stream.write(f"\r\033[Kprefeval: {self._label} {self._done:,}/{self._total:,}")
        self.stream.flush()

