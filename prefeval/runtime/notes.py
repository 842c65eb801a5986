"""Notes: what the user should know about the data, or about a choice made for them.

A note is neither an error nor a result: queries dropped for lack of relevant documents, queries
missing from a run, a seed drawn because none was given. Every note, wherever it arises, goes out
through :func:`note` as a :class:`Note` warning, the one channel for both faces of prefeval:

* the command line shows each note at once as ``prefeval: note: ...`` on stderr (never on stdout,
  which carries the data): :func:`notes_to` routes them;
* the Python API lets them surface as warnings of category :class:`Note`, which a caller can
  filter, record (``warnings.catch_warnings(record=True)``) or turn into errors.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator


class Note(UserWarning):
    """Something the user should know about the data or a choice made for them (not an error)."""


def note(message: str) -> None:
    """Report ``message`` as a :class:`Note`."""
    warnings.warn(message, Note, stacklevel=2)


@contextlib.contextmanager
def notes_to(show: Callable[[str], None]) -> Iterator[None]:
    """Within the block, hand every note to ``show`` (each one, however often it repeats) instead
    of the warnings machinery; other warnings are left as they are."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", Note)
        original = warnings.showwarning

        def route(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, Note):
                show(str(message))
            else:
                original(message, category, filename, lineno, file, line)

        warnings.showwarning = route
        yield


@contextlib.contextmanager
def shown_once(seen: set[str], add: bool = True) -> Iterator[None]:
    """Within the block, a note whose message is in ``seen`` is not shown again, and (``add``) every
    note shown is added to ``seen``: an evaluation started again with another reader
    (:func:`prefeval.engine.write_files_evaluation`) says once what its first attempt said."""
    original = warnings.showwarning

    def route(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, Note):
            if str(message) in seen:
                return
            if add:
                seen.add(str(message))
        original(message, category, filename, lineno, file, line)

    warnings.showwarning = route
    try:
        yield
    finally:
        warnings.showwarning = original
