"""What the engines cost, estimated before anything is read, and the engine ``--engine auto`` picks.

The estimates (:func:`costs`, in seconds on this project's 2-core machine) are made of what is known
before a line is read (:class:`InputShape`): the bytes of the qrels and of the runs as they will be
read (a gzip file's own record of its size), the number of runs, the processes (``--jobs``, by
default one per processor), and whether the output has a line per query (``-q``). Their coefficients
were fitted to the times ``benchmarks/run.py --engines`` measures (the README's "Which engine auto
picks" gives them), and only their comparison matters:

* ``memory`` reads every file in one pass, its runs shared among the processes, then evaluates the
  blocks of queries in every process; its cost per byte grows with the collection, whose arrays are
  made whole (page faults, and the ranking of every run at once), and its per-query lines are
  rendered in every process;
* ``stream`` reads the qrels twice (their index first) and the runs once, chunk by chunk: its
  reader processes (one per run, at most ``--jobs``) read the next chunk while the main process
  evaluates and writes the current one, so it costs a fixed start (forking the readers, the index)
  and then the larger of the reading and the evaluating, which one process does.

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


MEMORY_START, STREAM_START = 0.05, 0.25
"""Seconds every evaluation of the engine takes beyond the bytes: ``stream`` forks its readers and
indexes the qrels before the first chunk."""
PARSE = 2.2e-8
"""Seconds to read, check and rank a byte of input, in one process."""
MEMORY_GROWTH = 1.0 / (1 << 30)
"""``memory``'s cost per byte grows by this fraction per byte of the runs (page faults, whole arrays):
at 1 GiB of runs, a byte costs twice what it costs in a small collection."""
PER_QUERY = 1.6e-8
"""Seconds to evaluate, render and write the per-query lines of a byte of runs (``-q``), in one process."""
SUMMARY = 0.4e-8
"""Seconds to evaluate a byte of runs for the summary alone, in one process."""


def costs(shape: InputShape, per_query: bool) -> dict[str, float]:
    """The estimated seconds of ``memory`` and ``stream`` on inputs of ``shape`` (module docstring)."""
    runs = sum(shape.run_bytes)
    readers = max(min(shape.jobs, len(shape.run_bytes)), 1)
    evaluate = (PER_QUERY if per_query else SUMMARY) * runs
    memory = (MEMORY_START + PARSE * (shape.qrels_bytes + runs / readers) * (1 + MEMORY_GROWTH * runs)
              + evaluate / max(shape.jobs, 1))
    stream = STREAM_START + 2 * PARSE * shape.qrels_bytes + max(PARSE * runs / readers, evaluate)
    return {MEMORY: memory, STREAM: stream}


def auto_engine(qrels, runs: Sequence, per_query: bool = True, jobs: int | None = None) -> str:
    """The engine ``auto`` picks for these inputs where streaming applies (:func:`costs`): the cheaper."""
    estimates = costs(input_shape(qrels, runs, jobs), per_query)
    return STREAM if estimates[STREAM] < estimates[MEMORY] else MEMORY
