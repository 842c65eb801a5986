"""How much memory and time prefeval's work takes: the bounds on its temporary arrays and on the counts
of random draws a request may ask for, in one place, and the freed memory kept in the process for the
next array to use.

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

**Counts of draws.** A count of random draws (Monte Carlo draws, bootstrap resamples, sign flips) sets
how long a request takes, and for some how much it holds, while the output stays the same size; past
a point more draws change the estimates by less than their own random error. The counts are bounded
as the catalogue of ``sampled --num-items`` is, with a usage error that says the bound and why
(:func:`check_count`), checked before any output (and, for the options of the tests, before any
input is read), measured on this project's 2-core machine:

* :data:`MAX_RESAMPLES` (10⁶): ``aggregate --bootstrap``, ``significance`` (and ``plot``)
  ``--bootstrap`` and ``--permutations``. A rank probability from 10⁶ resamples is within 0.0005
  of its limit (standard error at most 0.5 / √B), and a p-value resolves 1e-6, below any corrected
  threshold in use. Memory does not grow with the count (resamples are drawn in blocks: 300 MB at
  the bound; ``significance --bootstrap`` keeps pairs × B means, bounded by :data:`MAX_HELD_BYTES`);
  time does: ``aggregate --bootstrap`` takes about 19 µs a resample on the bundled examples (4 runs,
  7 queries, 2 measures) and 45 µs on robust03 (17 runs, 100 queries, 3 measures), so 19 s and 45 s at
  the bound; ``significance --permutations`` 8 s at the bound on robust03's 136 pairs of 3 measures.
  ``aggregate --bootstrap 1000000000`` would have taken five hours on the examples.
* :data:`MAX_DRAWS` (10⁵): the Monte Carlo draws of ``sampled --draws`` and ``null --draws``. A mean
  over 10⁵ draws is within 0.3% of one draw's standard deviation, and a 0.95 quantile within 0.0007
  in probability. A draw scores every run (``sampled``) or a random ranking (``null``) on every query
  again: ``sampled`` takes about 3 ms a draw on the examples (5 minutes at the bound), ``null`` 70 µs
  (and 280 MB at the bound). ``sampled --draws 100000000`` would have taken three and a half days.
* :data:`MAX_TIE_DRAWS` (5,000): the random tie orders of ``eval --ties expected --draws``, all held
  at once for a query: 8 bytes × runs × the query's relevant documents × draws, and as much again
  for their comparisons. On robust03 (17 runs, 361 relevant documents in its largest query) 5,000
  draws take 840 MB and 38 s (the default, 200, 207 MB and 5 s); ``--draws 1000000000`` asked for
  805 GiB at once.

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
MAX_RESAMPLES = 10**6
"""At most this many bootstrap resamples or sign flips for one request (module docstring)."""
MAX_DRAWS = 10**5
"""At most this many Monte Carlo draws of ``sampled`` and ``null`` (module docstring)."""
MAX_TIE_DRAWS = 5_000
"""At most this many random tie orders of ``eval --ties expected`` (module docstring)."""

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameters, from glibc's malloc.h


def check_count(option: str, count: int, bound: int, why: str) -> None:
    """A :class:`~prefeval.errors.UsageError` when ``count`` (given as ``option``) is above ``bound``,
    saying the bound and ``why`` (what a draw costs, what more would not change)."""
    if count > bound:
        from prefeval.errors import UsageError

        raise UsageError(f"{option} {count} is too large: at most {bound:,} ({why})")


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
