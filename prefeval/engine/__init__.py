"""The engine: an evaluation is a reader × an executor, both chosen when it is made.

* :mod:`~prefeval.engine.evaluation`: :class:`~prefeval.engine.evaluation.Evaluation`, every
  measure on every sample, block by block of queries (the kernel), and its results
  (:mod:`~prefeval.engine.results`: blocks and the summary, made once);
* readers (:data:`READERS`; what one is: :mod:`~prefeval.engine.chunks`): where the RankTables
  come from, as chunks of queries (``memory``: :mod:`~prefeval.engine.whole`, read whole;
  ``stream``: :mod:`~prefeval.engine.streaming`, chunk by chunk from the files);
* executors (:data:`EXECUTORS`; what one is: :mod:`~prefeval.engine.executors`): where the chunks
  are evaluated (``local``: here and in forked processes; ``dask``: :mod:`~prefeval.engine.dask`,
  on a Dask cluster).

``eval --engine`` names a pair of them (:data:`ENGINES`):

* ``memory``: read whole, evaluated here. Any input (stdin, DataFrames), any option.
* ``stream``: streamed, evaluated here; memory depends on the chunk. It needs files that can be read
  twice (not stdin), one sample of every query and label (no ``--samples``, ``--query_fraction``,
  ``--label_fraction``), the qrels' order of queries (not trec_eval's), and the qrels grouped by
  query and the runs in the qrels' query order. The output is held back
  (:func:`~prefeval.io.output.output_stream` ``held``) until the evaluation completes: when a run
  turns out not to be in the qrels' order, a note says so and the evaluation starts again in memory,
  having written nothing.
* ``dask``: streamed, each chunk evaluated (and its lines written out) by a worker of a Dask cluster.
* ``auto`` (the default): ``memory`` or ``stream``, whichever :mod:`~prefeval.engine.costs` estimates
  is faster for these inputs (their sizes, the processes, whether the lines are per query), where
  streaming applies; ``memory`` otherwise.

Every engine writes the same bytes: per-query values do not depend on the chunks, and summaries
add them in query order (:mod:`prefeval.engine.results`). **A new engine** is a new reader or
executor, one module, and its registration here: its line in :data:`READERS` or :data:`EXECUTORS`,
and the pair's line in :data:`ENGINES`. Modules are named by ``module:Class`` and imported when
used, so that evaluating one run imports neither streaming nor Dask.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from prefeval.engine.executors import LOCAL, Executor
from prefeval.errors import UsageError
from prefeval.io.output import output_stream
from prefeval.io.source import check_readable, is_regular_file
from prefeval.runtime.notes import note

if TYPE_CHECKING:
    from prefeval.engine.costs import InputShape
    from prefeval.engine.evaluation import Evaluation
    from prefeval.ranking.conventions import Conventions


MEMORY, STREAM, PARTITIONED = "memory", "stream", "partitioned"
READERS: dict[str, str] = {
    MEMORY: "prefeval.engine.whole:WholeCollection",
    STREAM: "prefeval.engine.streaming:StreamedCollection",
    PARTITIONED: "prefeval.engine.partitioned:PartitionedCollection",
}
"""Every reader, by name, and where its class is (:class:`~prefeval.engine.chunks.Reader`)."""
LOCAL_NAME, DASK = "local", "dask"
EXECUTORS: dict[str, str] = {
    LOCAL_NAME: "prefeval.engine.executors:LocalExecutor",
    DASK: "prefeval.engine.dask:DaskExecutor",
}
"""Every executor, by name, and where its class is (:class:`~prefeval.engine.executors.Executor`)."""


def _class(target: str) -> type:
    module, attribute = target.split(":")
    return getattr(importlib.import_module(module), attribute)


def reader_class(name: str) -> type:
    """The class of the reader ``name`` of :data:`READERS`, or a :class:`UsageError`."""
    if name not in READERS:
        raise UsageError(f"unknown reader {name!r}; choose one of {', '.join(READERS)}")
    return _class(READERS[name])


class Engine(NamedTuple):
    """A named pair of a reader and an executor, and what ``--engine NAME`` does."""

    name: str
    reader: str
    executor: str
    help: str


AUTO = "auto"
ENGINES: dict[str, Engine] = {engine.name: engine for engine in (
    Engine(MEMORY, MEMORY, LOCAL_NAME, "read every run whole"),
    Engine(STREAM, STREAM, LOCAL_NAME, "read and evaluate chunks of queries, in memory that does not grow with the "
                                       "collection (files only, runs in the qrels' query order, else it falls back "
                                       "to memory)"),
    Engine(DASK, PARTITIONED, DASK, "cut the files into partitions of queries, each read and evaluated by a "
                                    "worker of a Dask cluster (paths every worker can read)"),
)}
"""Every engine of ``--engine`` (module docstring); ``auto`` chooses one of them."""
ENGINE_NAMES = (AUTO, *ENGINES)


def engines_help() -> str:
    """What ``--engine`` says of each engine, from :data:`ENGINES`."""
    described = "; ".join(f"{engine.name}: {engine.help}" for engine in ENGINES.values())
    return (f"{described}; {AUTO}: {MEMORY} or {STREAM}, whichever is estimated faster for these inputs (their "
            "sizes, the processes, per-query lines or not). Every engine writes the same bytes.")


def streaming_obstacle(qrels, runs: Sequence, samples: int = 1, query_fraction: float = 1.0,
                       label_fraction: float = 1.0, conventions: Conventions | None = None) -> str | None:
    """Why a collection cannot be streamed (None: it can). A file that cannot be read at all (missing,
    a directory) is not a reason but an :class:`~prefeval.errors.InputError` naming it, as reading it
    would raise, so that the message is the same whatever the engine."""
    paths = [qrels, *runs]
    if not all(is_regular_file(path) for path in paths):
        for path in paths:
            check_readable(path)
        return "it reads standard input, a pipe or an object that is not a file"
    if samples != 1 or query_fraction != 1.0 or label_fraction != 1.0:
        return "subsampling draws from the whole collection"
    if conventions is not None and conventions.query_order != "qrels":
        return f"the {conventions.profile} conventions list the queries in {conventions.query_order}'s order, " \
               "which needs the whole collection"
    return None


def check_engine(engine: str, scheduler: str | None, obstacle: str | None, shape: InputShape | None = None,
                 per_query: bool = True) -> str:
    """The engine that will run (``auto`` resolved for inputs of ``shape``, with per-query lines or not:
    :func:`~prefeval.engine.costs.costs`; without a shape, ``stream`` where it applies), or a
    :class:`UsageError` when the one asked for cannot run: a streaming engine on what cannot be
    streamed, ``--scheduler`` without ``dask``."""
    if engine not in ENGINE_NAMES:
        raise UsageError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINE_NAMES)}")
    if scheduler is not None and (engine == AUTO or ENGINES[engine].executor != DASK):
        raise UsageError("--scheduler names the Dask scheduler of --engine dask")
    if engine != AUTO and ENGINES[engine].reader != MEMORY and obstacle is not None:
        raise UsageError(f"--engine {engine} streams the collection, which it cannot do here: {obstacle}")
    if engine == AUTO:
        if obstacle is not None:
            return MEMORY
        if shape is None:
            return STREAM
        from prefeval.engine.costs import cheaper

        return cheaper(shape, per_query)
    return engine


def input_shape(qrels, runs: Sequence, jobs: int | None = None) -> InputShape:
    """What ``auto`` knows of the inputs before reading them (:func:`prefeval.engine.costs.input_shape`)."""
    from prefeval.engine.costs import input_shape as shape

    return shape(qrels, runs, jobs)


def auto_engine(qrels, runs: Sequence, per_query: bool = True, jobs: int | None = None) -> str:
    """The engine ``auto`` picks for these files where streaming applies (:mod:`prefeval.engine.costs`)."""
    return check_engine(AUTO, None, None, input_shape(qrels, runs, jobs), per_query)


@contextlib.contextmanager
def open_executor(name: str, scheduler: str | None = None, jobs: int | None = None) -> Iterator[Executor]:
    """The executor ``name`` of :data:`EXECUTORS`, open while in use: connected to ``scheduler``, or
    (Dask) to a local cluster of ``jobs`` workers (default: one per processor)."""
    from prefeval.runtime.parallel import default_jobs

    with _class(EXECUTORS[name]).connect(scheduler, jobs or default_jobs()) as executor:
        yield executor


def write_files_evaluation(make: Callable[[str, Executor], Evaluation],
                           write: Callable[[Evaluation, BinaryIO], None], output, engine: str,
                           scheduler: str | None = None, jobs: int | None = None, inputs: Sequence = (),
                           parts: str | None = None) -> None:
    """Evaluate with ``make(reader, executor)``, the reader and executor of ``engine`` (resolved:
    :func:`check_engine`), and ``write`` it to ``output`` (``-o``), or to the directory ``parts``
    (``--parts``: a part file per partition, and the summary), falling back to the streamed reader
    when a partition fails (:class:`~prefeval.engine.chunks.PartitionFailed`; what its first attempt
    noted is not noted again), and to memory when a run is out of order (module docstring)."""
    from prefeval.engine.chunks import PartitionFailed
    from prefeval.runtime.notes import shown_once

    chosen = ENGINES[engine]
    with open_executor(chosen.executor, scheduler, jobs) as executor:
        seen: set[str] = set()
        for attempt, reader in enumerate(dict.fromkeys((chosen.reader, STREAM))):
            try:
                with shown_once(seen, add=attempt == 0):
                    evaluation = make(reader, executor)
                    with _output(output, parts, inputs, held=evaluation.reader.reads_ahead) as (stream, directory):
                        _write_to(evaluation, write, stream, directory)
                return
            except PartitionFailed:
                continue
            except _out_of_order() as disorder:
                note(f"{disorder}: streaming needs every run in the qrels' query order; evaluated in memory instead")
                break
    with _output(output, parts, inputs, held=False) as (stream, directory):
        _write_to(make(MEMORY, LOCAL), write, stream, directory)


def _out_of_order() -> type[Exception]:
    """:class:`~prefeval.engine.streaming.OutOfOrder` when the streamed reader has been imported (it
    alone raises it), else an exception that is never raised."""
    import sys

    streaming = sys.modules.get("prefeval.engine.streaming")
    return streaming.OutOfOrder if streaming is not None else _Never


class _Never(Exception):
    """Never raised (:func:`_out_of_order`)."""


@contextlib.contextmanager
def _output(output, parts: str | None, inputs: Sequence, held: bool):
    """(the stream of the output, None), or with ``parts`` (the stream of the summary part, the
    directory of parts: :func:`~prefeval.io.output.parts_output`); ``held``: see
    :func:`~prefeval.io.output.output_stream`."""
    if parts is None:
        with output_stream(output, inputs, held=held) as stream:
            yield stream, None
        return
    from prefeval.io.output import parts_output

    with parts_output(parts, inputs) as directory, output_stream(directory.summary) as stream:
        yield stream, directory


def _write_to(evaluation: Evaluation, write: Callable[[Evaluation, BinaryIO], None], stream,
              parts=None) -> None:
    """``write(evaluation, stream)``, its per-query lines going to the part files of ``parts`` when given
    (written by the workers for a partitioned reader)."""
    if parts is not None:
        evaluation.parts = parts
        if hasattr(evaluation.reader, "parts_directory"):
            evaluation.reader.parts_directory = parts.staging
    write(evaluation, stream)
