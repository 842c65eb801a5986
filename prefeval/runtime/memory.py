"""How much memory prefeval's work takes: the bounds on its temporary arrays, in one place, and the
freed memory kept in the process for the next array to use.

**Bounds.** Work that could grow with the data (ties enumerated slot by slot, resampled weights,
simulated rankings, win counts between runs, pairs compared block by block) is done in steps whose
temporary arrays hold at most a stated number of values, so that memory does not grow with the
collection:

* :data:`STEP_ELEMENTS` (2²², 32 MiB of float64): every step of an analysis or of the tie policies;
* :data:`CACHED_ELEMENTS` (2¹⁸, 2 MiB): the evaluation's blocks of pairs × positions, which are made
  thousands of times and must stay below glibc's threshold (:data:`MMAP_THRESHOLD`) to be reused
  from the heap rather than mapped and page-faulted afresh;
* :data:`MAX_HELD_BYTES` (1 GiB): what one request may make prefeval hold at once (the bootstrap
  means of ``significance``, the ranks of ``null``'s random rankings), beyond which it is refused as
  a usage error before any work, saying what to ask for instead.

**Freed memory.**
glibc's ``malloc`` hands a freed block of 128 KiB or more back to the system (``munmap``), and maps
fresh pages for the next one, each page faulting again when first written: about 4 µs a page of
4 KiB on this project's 2-core machine, 1 ms a MiB. Reading a run or qrels file makes and drops
temporary arrays of a few MiB many times over: one robust03 run and its qrels, read and ranked in a
fresh process, took 15,000 page faults, 60 ms. glibc raises its threshold once it sees such blocks
freed, but only block by block, after the first of each size has been given back.

:func:`keep_freed_memory` sets the two thresholds of ``mallopt(3)`` at the start: blocks below
32 MiB (:data:`MMAP_THRESHOLD`, the largest threshold glibc itself would reach) come from the heap
and go back to it when freed, and the heap keeps up to 64 MiB (:data:`TRIM_THRESHOLD`) of free
memory at its top rather than returning it. The same read then faults 10,800 times. A process keeps
at most those 64 MiB more than it uses, far less than the blocks it streams (prefeval's memory bound
counts them). Larger arrays are mapped and returned as before.

It is for the command line's own process (and the processes it forks), where prefeval decides how
memory is used; a program that embeds prefeval keeps its own settings. Elsewhere than glibc (macOS,
musl, Windows) nothing is changed.
"""

from __future__ import annotations

import os

STEP_ELEMENTS = 1 << 22
"""At most this many values in a temporary array of one step of work (module docstring)."""
CACHED_ELEMENTS = 1 << 18
"""At most this many values in a temporary array made for every block of queries (module docstring)."""
MAX_HELD_BYTES = 1 << 30
"""At most this many bytes held at once for one request (module docstring)."""

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameters, from glibc's malloc.h


def keep_freed_memory() -> bool:
    """Set glibc's thresholds as the module docstring says; whether they were set (False where the C
    library is not glibc)."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
    except (AttributeError, ValueError, OSError):  # no confstr, or no such name: not glibc
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) & bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
