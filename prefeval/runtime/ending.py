"""Ending the command line's process without tearing the interpreter down.

When a Python process exits, the interpreter runs the exit handlers (:mod:`atexit`), flushes the
standard streams, then takes apart every module it imported, numpy's included: on this project's
2-core machine that last part took 20 to 30 ms after an evaluation, a tenth of evaluating one run
in a shell loop, for nothing the command still needs. :func:`end_process` does the first two and
then ends the process at once (:func:`os._exit`).

It does so only where nothing can be lost: it is called by the command line for its own process
(never when prefeval runs inside another program), with an integer exit code, once every other
thread is a daemon thread (which an exit ends anyway); files are closed by the commands themselves
(:mod:`prefeval.io.output`). Anything else, or a failure to flush (a reader of stdout gone), ends
the usual way, through ``SystemExit``, with the usual reports.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def end_process(code: object) -> NoReturn:
    """Exit with ``code`` (a ``SystemExit`` code) as the module docstring says: the exit handlers run
    and the standard streams are flushed, the modules are not taken apart."""
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    others = [thread for thread in threading.enumerate() if thread is not threading.current_thread()]
    if not isinstance(code, int) or run_exit_handlers is None or any(not thread.daemon for thread in others):
        raise SystemExit(code)
    try:
        run_exit_handlers()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except BaseException:  # the interpreter's own exit reports it, as it always has
        raise SystemExit(code) from None
    os._exit(code)
