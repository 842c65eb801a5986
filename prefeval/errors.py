"""The one exception type for bad input.

Everything that prefeval reads (qrels, runs, JSON lines) is validated at the boundary; what is wrong
with it is reported as an :class:`InputError` naming the file and, where one applies, the line. The
command line turns it into ``prefeval: error: FILE:LINE: message`` on stderr and a non-zero exit.

A message quotes a value it was given with :func:`shown`, as Python writes it, numbers as numbers.
"""

from __future__ import annotations


class InputError(Exception):
    """Bad input, located in a file (and a line, when one applies).

    ``source`` is the path as the user gave it (``-`` for standard input); ``line`` is 1-based.
    """

    def __init__(self, source: str, message: str, line: int | None = None):
        super().__init__(message)
        self.source = source
        self.message = message
        self.line = line

    def __str__(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        return f"{where}: {self.message}"

    def __reduce__(self):
        # so that an error raised while parsing in a worker process reaches the parent intact
        return (type(self), (self.source, self.message, self.line))


class UsageError(ValueError):
    """A request that cannot be carried out as asked (an unknown measure, a bad parameter)."""


def shown(value) -> str:
    """``value`` as a message quotes it: its ``repr``, but a numpy scalar as the Python value it holds
    (``-1.0``, ``3``: numpy 2 writes them ``np.float64(-1.0)``, ``np.int64(3)``)."""
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        value = value.item()
    return repr(value)
