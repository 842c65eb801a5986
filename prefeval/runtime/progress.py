"""A progress line on stderr for long work, shown only when stderr is a terminal.

It never writes to stdout (which carries the data) and is silent when stderr is redirected, so logs
and pipelines see nothing of it. When stdout is the same terminal, whatever writes there calls
:func:`clear_progress_line` first (as :func:`prefeval.io.output.output_stream` does), so that data
never starts on the progress line; the line is drawn again at its next update.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

ERASE_LINE = "\r\033[K"
"""Back to the start of the line, and erase it."""

_shown: Progress | None = None
"""The progress line now on the screen, if any."""


class Progress:
    """``prefeval: LABEL  done/total`` redrawn in place, at most ten times a second."""

    def __init__(self, enabled: bool, stream: TextIO | None = None):
        self._stream = stream
        self.enabled = enabled
        self._label = ""
        self._total = 0
        self._done = 0
        self._drawn_at = 0.0

    @property
    def stream(self) -> TextIO:
        """Where the line is drawn: the stream given, or the standard error of the moment (looked up
        when drawing, so that a silent progress line holds no stream and can be sent to a worker)."""
        return self._stream or sys.stderr

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
        self.clear()
        self._label = ""

    def clear(self) -> None:
        """Erase the line if it is on the screen (it comes back at the next update)."""
        global _shown
        if _shown is self:
            self.stream.write(ERASE_LINE)
            self.stream.flush()
            _shown = None

    def _draw(self, force: bool = False) -> None:
        global _shown
        now = time.monotonic()
        if not self.enabled or (not force and now - self._drawn_at < 0.1):
            return
        self._drawn_at = now
        self.stream.write(f"{ERASE_LINE}prefeval: {self._label} {self._done:,}/{self._total:,}")
        self.stream.flush()
        _shown = self


def clear_progress_line() -> None:
    """Erase the progress line on the screen, if there is one: call it before writing anything else
    to the terminal (such as data on a stdout that is the same terminal)."""
    if _shown is not None:
        _shown.clear()
