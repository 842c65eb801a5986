"""The reader ``memory``: the collection read whole (:mod:`prefeval.ranking.loading`) into one
RankTable, from which every sample is drawn, one chunk each (:mod:`prefeval.ranking.subsampling`).
Memory grows with the collection; any input (stdin, DataFrames), any option. A reader
(:class:`~prefeval.engine.chunks.Reader`), registered in :data:`prefeval.engine.READERS`."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from prefeval.engine.chunks import Chunk, Sampling
from prefeval.ranking.conventions import Conventions
from prefeval.ranking.loading import load_collection, note_views
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
             progress: Progress | None, executor=None, items=None) -> WholeCollection:
        return cls(load_collection(qrels, runs, relevance, jobs, progress, others=others, conventions=conventions,
                                   items=items))

    @property
    def run_ids(self) -> list[str]:
        return self.table.run_ids

    @property
    def run_tags(self) -> list[str | None]:
        return self.table.run_tags or [None] * self.table.num_runs

    def note_views(self, measures) -> None:
        """The note on how ``measures`` read the qrels' subtopics (:func:`~prefeval.ranking.loading.note_views`),
        now: the notes on the data were made as the collection was read."""
        note_views(self.table.qrels.source, self.table.qrels.subtopics, measures)

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
