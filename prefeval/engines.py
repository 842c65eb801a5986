"""Where an evaluation of files runs: in memory, streamed chunk by chunk, or on a Dask cluster.

* ``memory``: every run is read whole and reduced to its RankTable row (:mod:`prefeval.ranking.loading`);
  memory grows with the collection. Any input (stdin, DataFrames), any option.
* ``stream``: the qrels and runs are read in blocks and evaluated in chunks of consecutive queries
  (:mod:`prefeval.ranking.streaming`); memory depends on the chunk. It needs files that can be read
  twice (not stdin), one sample of every query and label (no ``--samples``, ``--query_fraction``,
  ``--label_fraction``), and the qrels grouped by query and the runs in the qrels' query order. The
  output is held back (:func:`~prefeval.io.output.output_stream` ``held``) until the evaluation
  completes: when a run turns out not to be in the qrels' order, a note says so and the evaluation
  starts again in memory, having written nothing.
* ``dask``: streamed as above, each chunk evaluated (and its lines written out) by a worker of a
  Dask cluster (:mod:`prefeval.distributed`).
* ``auto`` (the default): ``stream`` where it applies and the files hold at least
  :data:`STREAM_BYTES` (on disk, gzip as it is), ``memory`` otherwise: a small collection is read
  faster in one pass than in two, and fits in memory anyway.

Every engine writes the same bytes: per-query values do not depend on the chunks, and summaries
add them in query order (:mod:`prefeval.results`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import BinaryIO

from prefeval.errors import UsageError
from prefeval.evaluation import Evaluation
from prefeval.io.output import output_stream
from prefeval.io.source import is_regular_file
from prefeval.runtime.notes import note

AUTO, MEMORY, STREAM, DASK = "auto", "memory", "stream", "dask"
ENGINES = (AUTO, MEMORY, STREAM, DASK)
STREAM_BYTES = 1 << 27
"""128 MiB: from this size of the input files on, ``auto`` streams them."""


def streaming_obstacle(qrels, runs: Sequence, samples: int = 1, query_fraction: float = 1.0,
                       label_fraction: float = 1.0) -> str | None:
    """Why a collection cannot be streamed (None: it can)."""
    if not all(is_regular_file(path) for path in [qrels, *runs]):
        return "it reads standard input, a pipe or an object that is not a file"
    if samples != 1 or query_fraction != 1.0 or label_fraction != 1.0:
        return "subsampling draws from the whole collection"
    return None


def check_engine(engine: str, scheduler: str | None, obstacle: str | None, size: int = STREAM_BYTES) -> str:
    """The engine that will run (``auto`` resolved, for input files of ``size`` bytes), or a
    :class:`UsageError` when the one asked for cannot run: ``stream`` or ``dask`` on what cannot be
    streamed, ``--scheduler`` without ``dask``."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if scheduler is not None and engine != DASK:
        raise UsageError("--scheduler names the Dask scheduler of --engine dask")
    if engine in (STREAM, DASK) and obstacle is not None:
        raise UsageError(f"--engine {engine} streams the collection, which it cannot do here: {obstacle}")
    if engine == AUTO:
        return MEMORY if obstacle is not None or size < STREAM_BYTES else STREAM
    return engine


def input_size(qrels, runs: Sequence) -> int:
    """The bytes of the input files on disk (0 for what is not a file)."""
    return sum(os.path.getsize(path) for path in [qrels, *runs] if is_regular_file(path))


def write_files_evaluation(make: Callable[[str], Evaluation], write: Callable[[Evaluation, BinaryIO], None],
                           output, engine: str, scheduler: str | None = None, inputs: Sequence = ()) -> None:
    """Evaluate with ``make(engine)`` (``memory`` or ``stream``; an evaluation whose ``stream`` is
    None when the qrels could not be streamed) and ``write`` it to ``output`` (``-o``), falling back
    to memory when a run is out of order (module docstring)."""
    evaluation = make(MEMORY if engine == MEMORY else STREAM)
    if evaluation.stream is None:
        with output_stream(output, inputs) as stream:
            write(evaluation, stream)
        return
    from prefeval.ranking.streaming import OutOfOrder  # imported by the streamed collection already

    try:
        if engine == DASK:
            from prefeval.distributed import DaskDistributor

            with DaskDistributor.connect(scheduler, evaluation.jobs) as distributor:
                evaluation.distributor = distributor
                with output_stream(output, inputs, held=True) as stream:
                    write(evaluation, stream)
            return
        with output_stream(output, inputs, held=True) as stream:
            write(evaluation, stream)
    except OutOfOrder as disorder:
        note(f"{disorder}: streaming needs every run in the qrels' query order; evaluated in memory instead")
        with output_stream(output, inputs) as stream:
            write(make(MEMORY), stream)
