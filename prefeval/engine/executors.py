"""Executors: where the chunks of an evaluation are evaluated (what one is, and the ``local`` one).

An executor takes the chunks a reader hands over, in query order, and gives back, per chunk and in
the same order, the (rendered block, block) pairs of
:meth:`~prefeval.engine.evaluation.Evaluation.chunk_results`; the evaluation adds the blocks to the
summary as they come. It is given to the evaluation when it is made, open (a cluster connected) for
as long as the evaluation is read: a class's ``connect(scheduler, jobs)`` opens one. Registered in
:data:`prefeval.engine.EXECUTORS`:

* ``local`` (:class:`LocalExecutor`): here, each chunk's blocks of queries shared among the
  evaluation's ``jobs`` forked processes when a chunk is large enough;
* ``dask`` (:class:`~prefeval.engine.dask.DaskExecutor`): each chunk a task of a Dask cluster.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from prefeval.engine.chunks import Chunk


class ChunkEvaluator(Protocol):
    """What an executor needs of an evaluation (:class:`~prefeval.engine.evaluation.Evaluation`)."""

    def chunk_results(self, chunk: Chunk, render: Callable) -> Iterator[tuple[Any, Any]]:
        """The (rendered block, block) of every block of ``chunk``, in query order."""

    def for_workers(self) -> ChunkEvaluator:
        """The evaluation as a worker of another machine needs it."""


class Executor(Protocol):
    """Where chunks are evaluated (module docstring)."""

    def map_chunks(self, evaluation: ChunkEvaluator, chunks: Iterable[Chunk],
                   render: Callable) -> Iterator[Iterable[tuple[Any, Any]]]:
        """Per chunk, in order, its (rendered block, block) pairs: :meth:`ChunkEvaluator.chunk_results`."""

    def submit(self, function: Callable, *args) -> Any:
        """A handle of ``function(*args)``, computed where chunks are evaluated and kept there (a reader
        plans there: :mod:`prefeval.engine.partitioned`)."""

    def result(self, handle: Any, function: Callable | None = None) -> Any:
        """The value of ``handle``, or ``function(value)`` computed where the value is kept."""


class LocalExecutor:
    """Every chunk evaluated in this process and the processes it forks."""

    @classmethod
    @contextlib.contextmanager
    def connect(cls, scheduler: str | None, jobs: int) -> Iterator[LocalExecutor]:
        """The local executor (it has no scheduler to connect to)."""
        yield LOCAL

    def map_chunks(self, evaluation: ChunkEvaluator, chunks: Iterable[Chunk],
                   render: Callable) -> Iterator[Iterable[tuple[Any, Any]]]:
        return (evaluation.chunk_results(chunk, render) for chunk in chunks)

    def submit(self, function: Callable, *args) -> Any:
        """``function(*args)``, computed now (the value is its own handle)."""
        return function(*args)

    def result(self, handle: Any, function: Callable | None = None) -> Any:
        return handle if function is None else function(handle)


LOCAL = LocalExecutor()
