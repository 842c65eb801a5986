"""Mapping a function over items in forked worker processes, results in order.

Workers are forked from the current process, so the function may be a closure over large arrays (a
RankTable, a sample's positions): nothing but the items and the results crosses a process boundary.
Where ``fork`` is not available, or there is nothing to share out, the map runs in this process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

_FUNCTION: Callable | None = None


def default_jobs() -> int:
    """The number of processors this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def fork_map(function: Callable[[Item], Result], items: Iterable[Item], jobs: int) -> Iterator[Result]:
    """``map(function, items)`` over ``jobs`` forked processes, yielding results in item order.

    Not reentrant: one fork_map at a time per process.
    """
    global _FUNCTION
    items = list(items)
    if jobs <= 1 or len(items) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(function, items)
        return
    _FUNCTION = function
    # all workers are forked here, before the pool starts its own threads
    pool = multiprocessing.get_context("fork").Pool(min(jobs, len(items)))
    try:
        yield from pool.imap(_call, items)
        pool.close()
    finally:
        pool.terminate()
        pool.join()
        _FUNCTION = None


def _call(item):
    return _FUNCTION(item)
