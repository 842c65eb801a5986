"""What the engines cost, estimated before anything is read, and the engine ``--engine auto`` picks.

The estimates (:func:`costs`, in seconds on this project's 2-core machine) are made of what is known
before a line is read (:class:`InputShape`): the bytes of the qrels and of the runs as they will be
read (a gzip file's own record of its size), the number of runs, the processes (``--jobs``, by
default one per processor), and whether the output has a line per query (``-q``). Their coefficients
were fitted (least squares of the logarithms) to the times of both engines on the harness's
scenarios, with ``-q`` and without (``benchmarks/run.py --engines``; the README's "Which engine
auto picks" gives them), and only their comparison matters:

* ``memory`` reads every file in one pass, its runs shared among the processes, then evaluates the
  blocks of queries in every process; its memory grows with the collection, about five times the
  input: where that is more than half the memory available, it is not estimated to fit
  (:func:`memory_fits`);
* ``stream`` reads the qrels twice (their index first) and the runs once, chunk by chunk: its
  reader processes (one per run, at most ``--jobs``) read the next chunk while the main process
  evaluates and writes the current one, so it costs a fixed start and then the larger of the
  reading and the evaluating, which one process does (with one process, their sum).

On this machine ``memory`` measured faster wherever it fits (1.0 to 1.5 times, on every scenario of
the harness: its parsing and evaluating are shared among the processes, where the streamed
evaluation is one process's), so ``auto`` streams the collections that ``memory`` would not hold.
``auto`` picks the cheaper of the two where streaming applies (files that can be read twice, no
subsampling, the qrels' order of queries); ``dask`` is never its choice (it needs a cluster).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from typing import NamedTuple

from prefeval.io.source import GZIP_MAGIC, is_regular_file

MEMORY, STREAM = "memory", "stream"


class InputShape(NamedTuple):
    """What the estimates know of the inputs: the bytes of the qrels and of each run as they are read
    (gzip files expanded: :func:`read_size`), and the processes of the evaluation."""

    qrels_bytes: int
    run_bytes: tuple[int, ...]
    jobs: int


def input_shape(qrels, runs: Sequence, jobs: int | None = None) -> InputShape:
    """The :class:`InputShape` of the inputs (0 bytes for what is not a file: stdin, a pipe, an
    object); ``jobs`` None: one process per processor."""
    from prefeval.runtime.parallel import default_jobs

    return InputShape(read_size(qrels), tuple(read_size(run) for run in runs), jobs or default_jobs())


def read_size(path) -> int:
    """The bytes a reader gets from ``path``: its size, or a gzip file's uncompressed size as its last
    member's trailer records it (modulo 2³², so at least the compressed size: four times that when the
    record is smaller, as for text over 4 GiB); 0 for what is not a regular file, or cannot be read."""
    if not is_regular_file(path):
        return 0
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as handle:
            if handle.read(len(GZIP_MAGIC)) != GZIP_MAGIC or size < 18:
                return size
            handle.seek(-4, os.SEEK_END)
            recorded = struct.unpack("<I", handle.read(4))[0]
    except OSError:
        return 0
    return recorded if recorded >= size else 4 * size


MEMORY_START, STREAM_START = 0.10, 0.30
"""Seconds an evaluation of the engine takes beyond its bytes (``stream`` forks its readers and
indexes the qrels before its first chunk)."""
PARSE = 1.25e-8
"""Seconds to read, check and rank a byte of input, in one process."""
EVALUATE = {True: 1.51e-8, False: 1.22e-8}
"""Seconds to evaluate a byte of runs, and write its lines (per query, ``-q``: True) or not, in one
process."""
MEMORY_PER_BYTE = 5
"""``memory`` holds about this many bytes per byte of input at its peak, over its processes (measured:
4.2 for 2 recommender runs × 1M users, 3.0 GB; 6.9 for 200,000 users), and :data:`MEMORY_BASE` more."""
MEMORY_BASE = 150 << 20
MEMORY_SHARE = 0.5
"""``memory`` is estimated to fit only where its peak is at most this share of the memory available
(others run on the machine too); ``stream``'s does not grow with the collection."""


def costs(shape: InputShape, per_query: bool) -> dict[str, float]:
    """The estimated seconds of ``memory`` and ``stream`` on inputs of ``shape`` (module docstring);
    ``memory`` infinite where it is not estimated to fit (:func:`memory_fits`)."""
    runs = sum(shape.run_bytes)
    readers = max(min(shape.jobs, len(shape.run_bytes)), 1)
    evaluate = EVALUATE[per_query] * runs
    memory = MEMORY_START + PARSE * (shape.qrels_bytes + runs / readers) + evaluate / max(shape.jobs, 1)
    if shape.jobs > 1:  # readers read the next chunk while the main process evaluates this one
        stream = STREAM_START + 2 * PARSE * shape.qrels_bytes + max(PARSE * runs / readers, evaluate)
    else:
        stream = STREAM_START + 2 * PARSE * shape.qrels_bytes + PARSE * runs + evaluate
    return {MEMORY: memory if memory_fits(shape) else float("inf"), STREAM: stream}


def memory_fits(shape: InputShape, available: int | None = None) -> bool:
    """Whether ``memory``'s estimated peak (:data:`MEMORY_PER_BYTE`) is at most :data:`MEMORY_SHARE` of
    the memory ``available`` (default: what the system reports as available now)."""
    needed = MEMORY_BASE + MEMORY_PER_BYTE * (shape.qrels_bytes + sum(shape.run_bytes))
    return needed <= MEMORY_SHARE * (available if available is not None else available_memory())


def available_memory() -> int:
    """The bytes of memory available to a new process: Linux's ``MemAvailable``, else the physical
    memory; unbounded where neither is known."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def cheaper(shape: InputShape, per_query: bool) -> str:
    """The engine ``auto`` picks for inputs of ``shape`` where streaming applies: the one of lower
    estimated cost (:func:`costs`), ``memory`` on a tie."""
    estimates = costs(shape, per_query)
    return STREAM if estimates[STREAM] < estimates[MEMORY] else MEMORY
