"""Stopping on request: SIGINT (Ctrl-C) and SIGTERM end the command line quietly, at any moment.

The command line installs :func:`stopping_quietly` around everything it does: either signal raises
:class:`Interrupted` in the main thread, a ``BaseException`` that no ``except Exception`` swallows,
so every ``finally`` on the way out runs (worker processes are stopped, a temporary output file is
removed) and the command ends with exit code 128 + the signal's number (130, 143), without a
traceback. Only the first signal counts: the ones that follow are ignored while the command cleans
up, so a second Ctrl-C cannot cut the cleanup short.

Some code must not be cut in the middle:

* a step that creates or commits something that a ``finally`` must then undo or keep (a temporary
  file created but not yet known to its cleanup, a file renamed into place) runs under
  :func:`deferred`: a signal that arrives meanwhile takes effect at the end of the step;
* a forked worker process (:mod:`prefeval.runtime.parallel`) must not run the parent's handler: it
  is forked under :func:`blocked_for_children` and calls :func:`as_worker` first thing;
* a process that starts a fresh interpreter (the workers of Dask's local cluster, which are spawned,
  not forked) cannot call anything before Python's own start-up does: it is started under
  :func:`ignored_by_spawned_children`, and inherits SIGINT ignored;
* an import (the command's module, numpy, and whatever a command imports when it needs it): a stop
  raised in the middle of a module's body leaves it half made, and a C extension half made (numpy's)
  can turn the exit into an ``ImportError`` message or a crash (SIGSEGV, seen once in 300 stops). A
  stop that arrives during an import is raised again a moment later (:data:`AGAIN_AFTER`), once no
  import is under way.

**From the first line.** Before the command line has parsed its first option it imports its own
modules (click, numpy, ...: tens of milliseconds), and Python's default SIGINT handler would print a
``KeyboardInterrupt`` traceback from the middle of them. The command's entry point
(``prefeval/__main__.py``) calls :func:`keep_early_stops` first thing: a stop that arrives from then on
until the command starts is kept, and :func:`raise_early_stop` ends the command with it as soon as it
has started (within :func:`stopping_quietly` and the command's error handling). Only a signal that
comes while the interpreter itself starts, before it runs prefeval's first line (about 20 ms, mostly
Python's ``site``), is Python's to report.

Once the command's result is committed (its output file renamed into place), or the command is
ending anyway (an error reported), :func:`ignore_stops` makes a later signal change nothing: it would
come too late to stop anything, and must not turn a finished command into a failed one (an exit code
of 130 always means that no output was written).

The Python API installs nothing: Ctrl-C raises ``KeyboardInterrupt`` as usual.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
AGAIN_AFTER = 0.001
"""Seconds after which a stop that could not be raised (in a destructor, during an import) is tried again."""
_IMPORT_MACHINERY = "<frozen importlib._bootstrap"
"""How the frames of Python's import machinery name their file (``_bootstrap`` and ``_bootstrap_external``)."""


class Interrupted(BaseException):
    """The command was asked to stop by signal ``signum``; it ends with exit code 128 + ``signum``."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


_state = threading.local()  # only the main thread installs or defers; kept per thread all the same


def keep_early_stops() -> None:
    """First thing in the command line's process, before it imports anything else: a stop that arrives
    while the command line starts is kept (as under :func:`deferred`) until :func:`raise_early_stop`.
    Only for a process that is the command line: it takes SIGINT away from Python's default handler."""
    if threading.current_thread() is not threading.main_thread():
        return
    _state.deferring, _state.pending, _state.ignoring, _state.early = 1, None, False, True
    for number in STOP_SIGNALS:
        signal.signal(number, _stop)


def raise_early_stop() -> None:
    """The command line has started (within :func:`stopping_quietly` and its error handling): the stop
    kept since :func:`keep_early_stops`, if any, raises :class:`Interrupted` now; without one, or
    without :func:`keep_early_stops`, nothing happens."""
    signum = getattr(_state, "early_stop", None)
    _state.early_stop = None
    if signum is not None:
        raise Interrupted(signum)


def _deferring() -> int:
    return getattr(_state, "deferring", 0)


def _ignoring() -> bool:
    return getattr(_state, "ignoring", False)


def _stop(signum: int, frame) -> None:
    """The handler of both signals: the first one raises :class:`Interrupted` (at once, or at the end of
    a :func:`deferred` step) unless stops are ignored by now; any later one is ignored."""
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    if _ignoring():
        return
    if _deferring():
        _state.pending = signum
        return
    if _importing(frame):
        _raise_later(signum)
        return
    raise Interrupted(signum)


def _importing(frame) -> bool:
    """Whether ``frame`` (where a signal handler interrupted the main thread) runs within an import."""
    while frame is not None:
        if frame.f_code.co_filename.startswith(_IMPORT_MACHINERY):
            return True
        frame = frame.f_back
    return False


def _raise_later(signum: int) -> None:
    """Raise :class:`Interrupted` in :data:`AGAIN_AFTER` seconds (from a timer signal), or again later
    while an import is under way then, or at the end of the :func:`deferred` step under way then; not
    at all once stops are ignored."""
    if not hasattr(signal, "setitimer"):
        raise Interrupted(signum)
    if getattr(_state, "timer", None) is None:  # the first time: keep what was there
        _state.timer = signal.getsignal(signal.SIGALRM)

    def again(_signum, frame) -> None:
        if _ignoring():
            return
        if _deferring():  # within a step that must not be cut: at its end (a temporary file was left so)
            _state.pending = signum
            return
        if _importing(frame):
            signal.setitimer(signal.ITIMER_REAL, AGAIN_AFTER)
            return
        raise Interrupted(signum)

    signal.signal(signal.SIGALRM, again)
    signal.setitimer(signal.ITIMER_REAL, AGAIN_AFTER)


def ignore_stops() -> None:
    """From now on, SIGINT and SIGTERM change nothing (under :func:`stopping_quietly`; elsewhere this
    does nothing): the command's result is committed, or the command is ending anyway.

    The signals are ignored by the system too, not only by the handler: at exit the interpreter
    puts back the default action of the signals it handled, which would kill the finished command.
    """
    _state.ignoring = True
    if threading.current_thread() is threading.main_thread():
        for number in STOP_SIGNALS:
            if signal.getsignal(number) is _stop:
                signal.signal(number, signal.SIG_IGN)


def _unraisable(previous_hook):
    """An unraisable-exception hook for while the handlers are installed.

    Python cannot raise from a destructor or a weakref callback: an :class:`Interrupted` raised
    there would be printed as "Exception ignored" and lost, and the command would carry on. It is
    raised again a moment later instead (from a timer signal), when ordinary code runs.
    """

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, Interrupted) and hasattr(signal, "setitimer"):
            _raise_later(unraisable.exc_value.signum)
            return
        previous_hook(unraisable)

    return hook


@contextlib.contextmanager
def stopping_quietly(restore: bool = True) -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`Interrupted` in the main thread.

    With ``restore``, the previous handlers are put back at the end; without it they stay, for a
    process that ends with the block (so that a signal during the interpreter's shutdown is quiet
    too). Outside the main thread (where Python cannot install handlers) nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    previous_hook = sys.unraisablehook
    early = getattr(_state, "early", False) and _state.pending
    if getattr(_state, "early", False):  # the start is over: what keep_early_stops kept is raise_early_stop's
        _state.deferring, _state.early = 0, False
    _state.pending, _state.ignoring, _state.early_stop = None, False, early or None
    if not early:  # after a stop, the signals stay ignored (only the first one counts)
        for number in STOP_SIGNALS:
            signal.signal(number, _stop)
    sys.unraisablehook = _unraisable(previous_hook)
    try:
        yield
    finally:
        if restore:  # the handlers first: from then on, _stop cannot run and the state is free
            if getattr(_state, "timer", None) is not None:  # put back as the hook found it
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, _state.timer)
                _state.timer = None
            for number, handler in previous.items():
                signal.signal(number, handler)
            sys.unraisablehook = previous_hook
            _state.pending, _state.ignoring = None, False


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Run the block as a unit: a stop asked for meanwhile raises :class:`Interrupted` at its end
    (unless the block called :func:`ignore_stops`: then the stop came too late)."""
    _state.deferring = _deferring() + 1
    try:
        yield
    finally:
        _state.deferring -= 1
        pending = getattr(_state, "pending", None)
        if not _state.deferring and pending is not None:
            _state.pending = None
            if not _ignoring():
                raise Interrupted(pending)


@contextlib.contextmanager
def blocked_for_children() -> Iterator[frozenset]:
    """Around forking worker processes: the stop signals are blocked in this thread (so a child starts
    with them blocked, before it can run the parent's handler) and :func:`deferred` in this process
    (so the parent never stops between forking a worker and recording it). Yields the signal mask
    to restore, which the children pass to :func:`as_worker`."""
    with deferred():
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            yield frozenset(mask)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@contextlib.contextmanager
def ignored_by_spawned_children() -> Iterator[None]:
    """Around starting processes that run a fresh interpreter (spawned, such as the workers of Dask's
    local cluster): they start with SIGINT ignored, which an ``exec`` keeps and which keeps Python
    from installing its own handler (Ctrl-C reaches the whole process group, and only this process
    decides what to do); SIGTERM keeps its default action, how they are stopped. The block runs as
    a :func:`deferred` step, so that whatever it starts is known to its cleanup before a stop.

    SIGINT's action is process-wide: meanwhile it is blocked in this thread (and in the threads the
    block starts), and a SIGINT sent to the process stays pending rather than being discarded, then
    takes effect at the end of the block. One already pending when the block starts is kept as the
    stop (setting the action to "ignore" discards it in the system).
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield  # elsewhere than POSIX, no signal masks: a spawned child handles Ctrl-C as Python does
        return
    with deferred():
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGINT,))
        if signal.SIGINT in signal.sigpending():  # the handler's work, done here: the next line discards it
            _stop(signal.SIGINT, None)
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            stopped = getattr(_state, "pending", None) is not None or _ignoring()
            signal.signal(signal.SIGINT, signal.SIG_IGN if stopped else previous)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def as_worker(mask: frozenset) -> None:
    """First thing in a forked worker: ignore SIGINT (Ctrl-C reaches the whole process group, and only
    the parent decides what to do), die at once on SIGTERM (how the parent stops a worker), then
    unblock the signals (see :func:`blocked_for_children`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _state.deferring, _state.pending, _state.ignoring = 0, None, False
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
