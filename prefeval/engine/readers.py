"""Readers: where an evaluation's RankTables come from, as chunks of consecutive queries.

A reader reads the qrels and the runs, reduces the runs to their RankTable rows (the ranks of the
relevant documents, :mod:`prefeval.ranking.ranktable`), and hands them to the evaluation sample by
sample, each sample as chunks of consecutive queries (:meth:`Reader.samples`). Two readers are
registered in :data:`READERS`:

* ``memory`` (:class:`WholeCollection`): every run is read whole (:mod:`prefeval.ranking.loading`);
  memory grows with the collection. Any input (stdin, DataFrames), any option; each sample is one
  chunk, drawn from the whole table (:mod:`prefeval.ranking.subsampling`).
* ``stream`` (:class:`~prefeval.engine.streaming.StreamedCollection`): the files are read in blocks
  and handed over as one RankTable per chunk of queries; memory depends on the chunk. Files only,
  one sample of every query and label.

A new reader is one module with a class of the :class:`~prefeval.engine.chunks.Reader` methods, and
its name in :data:`READERS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import numpy as np

from prefeval.engine.chunks import Chunk, Sampling
from prefeval.ranking.conventions import Conventions
from prefeval.ranking.loading import load_collection
from prefeval.ranking.options import RelevanceOptions
from prefeval.ranking.ranktable import RankTable
from prefeval.ranking.subsampling import draw_selection
from prefeval.runtime.progress import Progress


class WholeCollection:
    """The collection read whole into one :class:`~prefeval.ranking.ranktable.RankTable` (module
    docstring): each sample is drawn from it, one chunk, its queries in the conventions' order."""

    draws_samples = True
    reads_ahead = False

    def __init__(self, table: RankTable):
        self.table = table

    @classmethod
    def open(cls, qrels, runs, relevance: RelevanceOptions, conventions: Conventions, others: bool, jobs: int,
             progress: Progress | None) -> WholeCollection:
        return cls(load_collection(qrels, runs, relevance, jobs, progress, others=others, conventions=conventions))

    @property
    def run_ids(self) -> list[str]:
        return self.table.run_ids

    @property
    def run_tags(self) -> list[str | None]:
        return self.table.run_tags or [None] * self.table.num_runs

    def samples(self, sampling: Sampling) -> Iterator[tuple[int, int, Iterator[Chunk]]]:
        """Each sample's selection of the sampling's table, drawn in turn from the seed."""
        table = sampling.table
        rng = np.random.default_rng(sampling.seed) if sampling.seed is not None else None
        for number in range(sampling.subsampling.samples):
            selection = draw_selection(table, rng, sampling.subsampling)
            queries = sampling.conventions.ordered(selection.queries, table.qids)
            selection = selection._replace(queries=queries)
            yield number, len(queries), iter([Chunk(number, selection)])

    def for_workers(self) -> WholeCollection:
        return self


MEMORY, STREAM = "memory", "stream"
READERS: dict[str, str] = {
    MEMORY: "prefeval.engine.readers:WholeCollection",
    STREAM: "prefeval.engine.streaming:StreamedCollection",
}
"""Every reader, by name (module docstring), and where its class is: a reader's module is imported
only when it is used (:func:`reader_class`)."""


def reader_class(name: str) -> type:
    """The class of the reader ``name`` of :data:`READERS`."""
    module, attribute = READERS[name].split(":")
    return getattr(importlib.import_module(module), attribute)
