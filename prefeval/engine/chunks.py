"""What readers hand to an evaluation: :class:`Chunk` s of consecutive queries, and what a reader is
(:class:`Reader`; the readers themselves are registered in :data:`prefeval.engine.READERS`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol

from prefeval.ranking.conventions import Conventions
from prefeval.ranking.options import RelevanceOptions
from prefeval.ranking.positions import Selection
from prefeval.ranking.ranktable import RankTable
from prefeval.ranking.subsampling import SubsamplingOptions
from prefeval.runtime.progress import Progress

if TYPE_CHECKING:
    from prefeval.measures import Measure


@dataclass(frozen=True, eq=False)
class Chunk:
    """Consecutive queries of one sample, evaluated together: ``selection`` of ``table`` (None: the
    evaluation's whole table), whose first query is query ``query_offset`` of the whole collection;
    or a ``partition`` of the files (:mod:`prefeval.engine.partitioned`; no selection nor table),
    which whoever evaluates it reads."""

    sample: int
    selection: Selection | None
    table: RankTable | None = None
    query_offset: int = 0
    partition: object | None = None


class PartitionFailed(Exception):
    """A partition of the files (:mod:`prefeval.engine.partitioned`) met what only a reading of the
    whole files reports as every engine does (a bad line, numbered from the partition's start; a run
    out of the qrels' order): the evaluation starts again with the streamed reader
    (:func:`prefeval.engine.write_files_evaluation`)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason

    def __reduce__(self):  # raised on a worker, raised again in the client
        return (type(self), (self.reason,))


class Sampling(NamedTuple):
    """What a reader is told of the samples to hand over: the choices of queries and labels and their
    seed (None when nothing is drawn at random), the conventions (the order of the queries), and the
    table samples are drawn from (the whole collection's, without the unjudged documents under
    ``-J``; None for a streamed collection)."""

    subsampling: SubsamplingOptions
    seed: int | None
    conventions: Conventions
    table: RankTable | None


class Reader(Protocol):
    """What an evaluation reads its queries from."""

    draws_samples: bool
    """Whether it can draw samples of queries and labels (it holds the whole collection)."""
    reads_ahead: bool
    """Whether its own processes read the next chunk while one is evaluated (the evaluation then
    evaluates each chunk in one process)."""

    @property
    def run_ids(self) -> list[str]: ...

    @property
    def run_tags(self) -> list[str | None]: ...

    @classmethod
    def open(cls, qrels, runs, relevance: RelevanceOptions, conventions: Conventions, others: bool, jobs: int,
             progress: Progress | None, executor=None, items=None) -> Reader | None:
        """The reader of ``qrels`` and ``runs`` (as :func:`~prefeval.io.inputs.named_runs` takes them),
        or None when it cannot read them (the evaluation then reads them whole). ``executor``: where
        the evaluation's work runs (:mod:`~prefeval.engine.executors`), where a reader may plan too;
        ``items``: what every run's ranking computes for the item measures (:mod:`prefeval.ranking.items`)."""

    def note_views(self, measures: Sequence[Measure]) -> None:
        """The note on how ``measures`` read the qrels' subtopics (:func:`~prefeval.ranking.loading.note_views`),
        made after the notes on the data (those of the in-memory reader's loading), now or once they are made."""

    def samples(self, sampling: Sampling) -> Iterator[tuple[int, int, Iterator[Chunk]]]:
        """Per sample: its number, its number of queries, and its chunks in query order."""

    def for_workers(self) -> Reader | None:
        """What a worker of another machine needs of the reader: what the chunks refer to."""


