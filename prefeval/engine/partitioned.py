"""The reader ``partitioned``: the files cut into partitions of consecutive queries, each partition
read, ranked and evaluated where it is evaluated (a worker of a Dask cluster), so that the process
that plans them (the client) reads almost nothing and every worker adds its share.

**Planning** (:meth:`PartitionedCollection.open`, in the client). The qrels are indexed as the
streamed reader indexes them (:func:`~prefeval.engine.streaming.index_qrels`: every line checked,
the queries' keys and numbers, 12 bytes a query; the notes on dropped queries are made then). The
queries are cut into ranges ``first..stop-1`` whose first query is a multiple of
``SUM_BLOCK`` (:mod:`~prefeval.engine.results`: so that each partition's summary is made of whole
summation blocks, added in the client in the same order as on one machine), of about
:data:`PARTITION_BYTES` of input each: the cut points are read off the largest run at even byte
offsets (the last shares cut smaller, :data:`TAIL_SHARES`). Each file (the qrels and every run) is
then cut at the same query boundaries by a binary search over its bytes (:class:`_Prober`): seek,
skip to the next line start, read query ids until one of a kept query, whose number says on which
side the boundary is; runs list their queries in the qrels' order (what streaming needs anyway), so
one search per boundary and file finds it. A partition (:class:`Partition`) is its query range and,
in every file, the byte span of its lines: a span starts at a line start, and the lines of a query
the qrels lack or dropped go with the next kept query. A columnar input (Parquet, Arrow, a directory
of them) is cut at rows instead (:class:`_RowProber`): the same binary search, over its row groups by
the first kept query of each (the query-id column of a few row groups read, nothing else), then
within the row group; its span is a range of rows counted over the whole input, and a partition
reads the row groups that hold them. Columnar qrels need no search: indexing them recorded where
each kept query's rows end (:attr:`~prefeval.engine.streaming.QueryIndex.ends`). The plan is made
in two parts where the executor runs: the index, every partition's first query and the first
partition's spans (:func:`_planned`), which the client hands over at once, then the other
partitions' spans (:func:`_planned_rest`), searched while another worker evaluates the first
partition.

**On a worker** (:meth:`PartitionSource.evaluate`): the partition's span of the qrels is read and
indexed again, alone (its kept queries numbered from ``first``; the blocks read are those evaluated
then), the runs' spans are read block by block as the streamed reader reads whole files
(:class:`~prefeval.engine.streaming.StreamedCollection`, whose first query is then ``first``),
ranked chunk by chunk and evaluated. What comes back is small: the
partition's rendered lines (or nothing, when the worker wrote them to its part file of ``--parts``),
a partial summary (:meth:`~prefeval.engine.results.RunningSummary.merge`) and what the notes need.

**Back in the client** (:meth:`PartitionedCollection.merge`), in partition order: the summaries are
merged, the lines written out, and the run reports added up. A line whose query the partition's
qrels lack is looked up in the whole index there: a query of another partition means that the run
is not in the qrels' order; one the qrels dropped counts as a dropped line; the others are the
run's foreign queries, noted as every engine notes them.

**What is not partitioned.** gzip files (they cannot be read from the middle) and conventions
whose sums are sequential (trec_eval's, ir_measures'), which a partition cannot start in the middle of:
those collections are streamed (:class:`~prefeval.engine.streaming.StreamedCollection`), chunks
evaluated where the executor evaluates them. A partition that meets a bad line, or a run out of the
qrels' order, raises :class:`PartitionFailed`: the evaluation starts again with the streamed reader
(:func:`prefeval.engine.write_files_evaluation`), which reports the error, or the run out of order,
at the line where every other engine reports it (a partition numbers its lines from its own start).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from prefeval.engine import results
from prefeval.engine.chunks import Chunk, PartitionFailed, Sampling
from prefeval.engine.results import Block, RunningSummary
from prefeval.engine.streaming import (
    DROPPED,
    QueryIndex,
    RunReport,
    StreamedCollection,
    _FileStream,
    file_blocks,
    index_qrels,
)
from prefeval.errors import InputError
from prefeval.io.codes import sorted_positions
from prefeval.io.columns import TablePath
from prefeval.io.fields import TextColumn, text_keys
from prefeval.io.inputs import named_runs
from prefeval.io.source import GZIP_MAGIC, MAX_LINE_BYTES, UTF8_BOM, columnar_format, display_name
from prefeval.io.trec import QRELS_ITER_FORMAT, RUN_FORMAT, LineFormat
from prefeval.ranking.conventions import Conventions
from prefeval.ranking.items import ItemRequest
from prefeval.ranking.loading import SHOWN, note_dropped
from prefeval.ranking.options import RelevanceOptions
from prefeval.ranking.positions import Selection

PARTITION_BYTES = 1 << 25
"""About this many bytes of input (qrels and runs together) per partition: 32 MiB, whose lines
(about 15 MiB of JSON lines for 2 recommender runs with ``-q``) are what the client holds of a
partition at a time."""
MIN_PARTITIONS = 8
"""At least this many partitions, where there are queries enough, so that two or four workers get
even shares."""
WINDOW = 1 << 12
"""The bytes read at a time by the search for a boundary, and below which it scans line by line: 4 KiB,
a page, about 70 lines of a recommender's run."""


class Partition(NamedTuple):
    """Queries ``first..stop-1`` (numbers among the kept queries) and the byte span of their lines in
    the qrels and in each run; ``part``: where the worker writes its lines (``--parts``), if anywhere."""

    number: int
    first: int
    stop: int
    qrels: tuple[int, int]
    runs: tuple[tuple[int, int], ...]
    part: str | None = None


class PartitionResult(NamedTuple):
    """What a worker hands back of a partition besides its lines: its partial summary, per run its
    report and the keys (with their numbers of lines) of the queries that the partition's qrels lack,
    and the queries without a document at the relevance level (their count, the first few ids)."""

    number: int
    num_queries: int
    summary: RunningSummary
    reports: list[RunReport]
    foreign: list[tuple[np.ndarray, np.ndarray]]
    below_count: int
    below_shown: list[str]
    groups: Any = None
    """The partition's columns of each user group (a partial
    :class:`~prefeval.analyses.groups.GroupSummaries`), None without ``--user-groups``."""
    items: Any = None
    """The partition's exposure counts (:class:`~prefeval.ranking.items.ExposureCounts`), None
    without an item measure."""


@dataclass(frozen=True)
class PartitionSource:
    """What a worker needs to read and evaluate any partition: the files, the run ids, the options,
    the qrels' largest grade (every chunk's qrels keep it). Nothing of the size of the collection."""

    qrels: str
    runs: tuple[str, ...]
    run_ids: tuple[str, ...]
    relevance: RelevanceOptions
    others: bool
    conventions: Conventions
    max_grade: float
    source: str
    items: ItemRequest | None = None
    draws_samples = False
    reads_ahead = True

    def evaluate(self, evaluation, partition: Partition, render: Callable[[Block], Any]) -> list[tuple[Any, Any]]:
        """Read, rank and evaluate ``partition`` here: its outputs (``render(block)`` of each block, in
        query order; none when they are lines written to the partition's part file), each with None,
        and last (None, the :class:`PartitionResult`). The outputs stay apart (a block's lines are a
        megabyte or two), so that the client, which takes them one by one, holds the lines of one
        block at a time beside the partition being received. Raises :class:`PartitionFailed` for a bad
        line or a run out of order."""
        from prefeval.engine.streaming import OutOfOrder

        try:
            qrels = list(file_blocks(self.qrels, QRELS_ITER_FORMAT, partition.qrels))  # read once, for both
            reader = _PartitionReader(self, partition, self._index(partition, qrels), qrels)
            running = evaluation.running_summary(0, partial=True)
            groups = evaluation.group_summaries(0, partial=True)
            counts = None
            outputs = []
            for offset, table in reader.tables():
                if table.items is not None:
                    counts = table.items.counts if counts is None else counts + table.items.counts
                chunk = Chunk(0, Selection.everything(table), table, offset)
                for output, block in evaluation.chunk_results(chunk, render):
                    running.add(block)
                    if groups is not None:
                        groups.add(block)
                    outputs.append(output)
        except InputError as error:
            raise PartitionFailed(f"{error} (a line of a partition, numbered from its start)") from None
        except OutOfOrder as disorder:
            raise PartitionFailed(str(disorder)) from None
        if partition.part is not None and all(isinstance(output, list) for output in outputs):
            data = b"".join(piece for output in outputs for piece in output)  # blocks' lines, in pieces
            if data:  # no part without lines (the summary alone, without -q)
                from prefeval.io.output import write_part

                write_part(partition.part, data)
            outputs = []
        result = PartitionResult(partition.number, running.num_queries, running, reader.reports,
                                 [stream.foreign_rows() for stream in reader.run_streams()],
                                 reader._below_count, reader._below_level, groups, counts)
        return [(output, None) for output in outputs] + [(None, result)]

    def _index(self, partition: Partition, qrels: list) -> QueryIndex:
        """The index of the partition's span of the qrels (whose blocks are ``qrels``), its kept queries
        numbered from ``first``."""
        index = index_qrels(self.qrels, self.relevance, self.conventions.keep_empty, span=partition.qrels,
                            blocks=qrels)
        if index is None or index.num_queries != partition.stop - partition.first:
            raise InputError(self.source, "the qrels changed while they were read")
        numbers = np.where(index.numbers >= 0, index.numbers + partition.first, DROPPED).astype(np.int64)
        return index._replace(numbers=numbers, num_queries=partition.stop, max_grade=self.max_grade)


@dataclass
class _SpanStream(_FileStream):
    """A file's span, read as :class:`~prefeval.engine.streaming._FileStream` reads a file, which also
    counts the lines of each query that the partition's qrels lack (:meth:`foreign_rows`)."""

    _foreign_rows: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def _note_foreign(self, qids: TextColumn) -> None:
        super()._note_foreign(qids)
        if len(qids):
            self._foreign_rows.append(np.unique(qids.keys, return_counts=True))

    def foreign_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct keys of those queries, sorted, and the number of lines of each."""
        if not self._foreign_rows:
            return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
        keys = np.concatenate([keys for keys, _ in self._foreign_rows])
        counts = np.concatenate([counts for _, counts in self._foreign_rows])
        unique, inverse = np.unique(keys, return_inverse=True)
        return unique, np.bincount(inverse, weights=counts, minlength=len(unique)).astype(np.int64)


class _PartitionReader(StreamedCollection):
    """One partition's spans read as a streamed collection whose queries are ``first..stop-1``; the
    notes are not made here but handed back (:attr:`reports`)."""

    def __init__(self, source: PartitionSource, partition: Partition, index: QueryIndex, qrels: list):
        super().__init__(index, source.qrels, source.runs, source.run_ids, source.relevance, source.others,
                         source.conventions, jobs=1)
        self.partition = partition
        self.qrels_blocks = qrels
        self.items = source.items
        self.first_query = partition.first
        self.reports: list[RunReport] = []
        self._runs: dict[int, _SpanStream] = {}

    def file_stream(self, path: str, fmt: LineFormat, run: int | None) -> _FileStream:
        span = self.partition.qrels if run is None else self.partition.runs[run]
        stream = _SpanStream(path, fmt, self.index, span, self.qrels_blocks if run is None else None)
        if run is not None:
            self._runs[run] = stream
        return stream

    def run_streams(self) -> list[_SpanStream]:
        return [self._runs[run] for run in range(len(self.run_paths))]

    def _note_data(self, reports: list[RunReport]) -> None:
        self.reports = reports


class PartitionedCollection(StreamedCollection):
    """The reader ``partitioned`` (module docstring), registered in :data:`prefeval.engine.READERS`:
    hands over one chunk per partition, which whoever evaluates it reads
    (:meth:`PartitionSource.evaluate`), and merges what comes back (:meth:`merge`). Its index holds
    the qrels' counts and notes, not the keys: those stay where the plan was made
    (:func:`_planned`), held by :attr:`_planning`."""

    def __init__(self, index: QueryIndex, qrels: str, runs: Sequence[str], names: Sequence[str | None],
                 relevance: RelevanceOptions, others: bool, conventions: Conventions, jobs: int = 1):
        super().__init__(index, qrels, runs, names, relevance, others, conventions, jobs)
        self.partitions: list[Partition] = []
        """The partitions: the first alone until the rest of the plan is taken (:meth:`samples`)."""
        self.parts_directory: str | None = None
        self._planning: tuple[Any, Any] | None = None  # (the executor, the handle of the plan)
        self._rest: Any = None  # the handle of the rest of the plan (:func:`_planned_rest`), until taken
        self._received = 0
        count = len(self.run_paths)
        self._reports: list[list[RunReport]] = [[] for _ in range(count)]
        self._foreign: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in range(count)]
        self._foreign_shown: list[list[str]] = [[] for _ in range(count)]

    @classmethod
    def open(cls, qrels: str, runs, relevance: RelevanceOptions, conventions: Conventions, others: bool = False,
             jobs: int = 1, progress=None, executor=None, items: ItemRequest | None = None
             ) -> StreamedCollection | None:
        """Plan the partitions where ``executor`` runs (module docstring; a worker of a cluster, so that
        the index of the qrels stays there); the streamed reader where the files cannot be cut (gzip)
        or the sums cannot be split (sequential conventions); None when the qrels are not grouped by
        query (the evaluation then reads them whole)."""
        from prefeval.engine.executors import LOCAL

        named = named_runs(runs)
        paths = [qrels, *(path for _, path in named)]
        if conventions.sequential or conventions.summary_order != "queries" or not all(map(_partitionable, paths)):
            return StreamedCollection.open(qrels, runs, relevance, conventions, others, jobs, progress, executor,
                                           items)
        executor = executor or LOCAL
        request = _PlanRequest(tuple(paths), tuple(map(_absolute, paths)), relevance, conventions.keep_empty)
        handle = executor.submit(_planned, request)
        index, first = executor.result(handle, _plan_of)
        if index is None:
            return None
        rest = executor.submit(_planned_rest, handle, request)  # where the index is, while the first is evaluated
        note_dropped(index.source, index.dropped_shown, index.dropped_count)
        collection = cls(index, qrels, [path for _, path in named], [name for name, _ in named], relevance, others,
                         conventions, jobs)
        collection.worker_paths = request.worker_paths
        collection.partitions = [first]
        collection.items = items
        collection._planning = (executor, handle)
        collection._rest = rest
        return collection

    def samples(self, sampling: Sampling) -> Iterator[tuple[int, int, Iterator[Chunk]]]:
        """One sample of every query, a chunk per partition (each partition writing its part file
        under :attr:`parts_directory`, when set): the first handed over before the rest of the plan
        is taken, so that a cluster evaluates it while the rest is planned."""
        yield 0, self.num_queries, self._chunks()

    def _chunks(self) -> Iterator[Chunk]:
        from prefeval.io.output import part_name

        directory = self.parts_directory
        for number in itertools.count():
            if number == 1 and self._rest is not None:
                self._take_rest()
            if number == len(self.partitions):
                return
            partition = self.partitions[number]
            yield Chunk(0, None, partition=partition if directory is None else partition._replace(
                part=os.path.join(directory, part_name(number))))

    def _take_rest(self) -> None:
        """The partitions after the first, from the rest of the plan (:func:`_planned_rest`)."""
        executor, _ = self._planning
        partitions = executor.result(self._rest)
        self._rest = None
        if partitions[0] != self.partitions[0]:
            raise ValueError("the rest of the plan does not start with its first partition")
        self.partitions = partitions
        if self._received == len(self.partitions):  # the first, the only one, merged already
            self._finish()

    def for_workers(self) -> PartitionSource:
        """What a worker needs (:class:`PartitionSource`): a few paths and options, not the index."""
        return PartitionSource(self.worker_paths[0], tuple(self.worker_paths[1:]), tuple(self.run_ids),
                               self.relevance, self.others, self.conventions, self.index.max_grade, self.index.source,
                               self.items)

    def evaluate(self, evaluation, partition: Partition, render: Callable[[Block], Any]) -> list[tuple[Any, Any]]:
        """A partition evaluated in this process (:meth:`PartitionSource.evaluate`)."""
        return self.for_workers().evaluate(evaluation, partition, render)

    def tables(self):
        raise TypeError("a partitioned collection is read partition by partition (samples)")

    def merge(self, result: PartitionResult, running: RunningSummary) -> int:
        """Add a partition's results (partitions in order) to the summary and the reports; after the
        last, make the notes on the data (raising :class:`PartitionFailed` when a run's line of a
        partition holds a query of another partition: the run is not in the qrels' order). Returns
        the partition's number of queries."""
        if result.number != self._received:
            raise ValueError(f"partition {result.number} came before partition {self._received}")
        self._received += 1
        running.merge(result.summary)
        for run, (report, foreign) in enumerate(zip(result.reports, result.foreign)):
            if len(foreign[0]):
                self._foreign[run].append(foreign)
            shown = self._foreign_shown[run]
            shown.extend(text for text in report.foreign_shown if text not in shown)
            self._reports[run].append(report)
        if self.relevance.relevance_level is not None:
            self._below_count += result.below_count
            self._below_level.extend(result.below_shown[:max(SHOWN + 1 - len(self._below_level), 0)])
        if self._received == len(self.partitions) and self._rest is None:
            self._finish()
        return result.num_queries

    def _finish(self) -> None:
        """The run reports added up over the partitions, the ids the partitions' qrels lacked looked up
        in the whole index (where the plan was made), and the notes on the data."""
        foreign = [_counted(parts) for parts in self._foreign]
        executor, handle = self._planning
        checks = executor.result(handle, functools.partial(_checked_foreign, foreign, self._foreign_shown))
        reports = []
        for run, (parts, check) in enumerate(zip(self._reports, checks)):
            if check.out_of_order:
                raise PartitionFailed(f"{display_name(self.run_paths[run])}: a query out of the qrels' order")
            tag = next((report.tag for report, partition in zip(parts, self.partitions)
                        if partition.runs[run][0] == 0 and partition.runs[run][1] > 0), None)
            reports.append(RunReport(
                rows_read=sum(report.rows_read for report in parts),
                scored=sum(report.scored for report in parts),
                judged_queries=sum(report.judged_queries for report in parts),
                dropped_rows=sum(report.dropped_rows for report in parts) + check.dropped_rows,
                foreign_shown=check.shown,
                foreign_count=check.count,
                tag=tag))
        self.run_tags = [report.tag for report in reports]
        self._note_data(reports)


class _PlanRequest(NamedTuple):
    """What the plan is made of: the files as named (for messages) and as every worker reads them
    (absolute paths), and the options that decide which queries are kept."""

    names: tuple[str, ...]
    worker_paths: tuple[str, ...]
    relevance: RelevanceOptions
    keep_empty: bool


class _Planned(NamedTuple):
    """The first part of the plan (:func:`_planned`), kept where it was made."""

    index: QueryIndex | None
    """The whole index of the qrels, without where their queries end (:attr:`QueryIndex.ends`, which the
    qrels' prober holds); None when they are not grouped by query (then nothing else is planned)."""
    first: Partition | None
    """The first partition."""
    starts: list[int] | None
    """The first query of every partition."""
    probers: _KeptHere | None = None
    """What searched the files (:func:`_probers`), with the query ids it read, for the rest of the plan
    (then dropped: the index is kept until the end of the evaluation, and its probers would be
    megabytes more)."""


class _KeptHere:
    """A value kept in the process that made it: sent to another process, it arrives empty (the
    plan's probers, whose query ids read are what the rest of the plan reuses where the plan was made,
    and not worth sending elsewhere)."""

    def __init__(self, value: Any = None):
        self.value = value

    def __reduce__(self):
        return (_KeptHere, ())

    def take(self) -> Any:
        """The value, no longer kept (None when taken already, or sent here)."""
        value, self.value = self.value, None
        return value


def _planned(request: _PlanRequest) -> _Planned:
    """The whole index of the qrels, the first query of every partition (:func:`_plan_starts`) and the
    first partition alone; nothing but None when the qrels are not grouped by query. Run where the
    executor runs: an error names the file as it was given, and a file that is missing there says that
    the workers must see the inputs. The other partitions' boundaries are searched next
    (:func:`_planned_rest`), while another worker evaluates the first partition (on 2 runs x 1M users
    as Parquet, that worker would otherwise wait 0.4 s longer for the plan: a third of it)."""
    qrels = request.worker_paths[0]
    with _named_errors(request):
        index = index_qrels(qrels, request.relevance, request.keep_empty)
        if index is None:
            return _Planned(None, None, None)
        probers = _probers(index, request.worker_paths)
        starts = _plan_starts(index, probers)
        [first] = _spans(index, probers, starts, count=1)
        return _Planned(index._replace(source=display_name(request.names[0]), ends=None), first, starts,
                        _KeptHere(probers))


def _planned_rest(planned: _Planned, request: _PlanRequest) -> list[Partition]:
    """Every partition, from the first queries :func:`_planned` found (:func:`_plan`), searched by its
    probers where they are kept (else made again, the qrels then searched as the runs are); run where
    the index is."""
    probers = planned.probers.take() if planned.probers is not None else None
    with _named_errors(request):
        if probers is None:
            return _plan(planned.index, request.worker_paths, planned.starts)
        return _spans(planned.index, probers, planned.starts)


@contextlib.contextmanager
def _named_errors(request: _PlanRequest) -> Iterator[None]:
    """Within the block, an :class:`InputError` names the file as it was given (not as the workers
    read it), and says of a missing file that the workers must see the inputs."""
    try:
        yield
    except InputError as error:
        name = dict(zip(request.worker_paths, request.names)).get(error.source, error.source)
        message = error.message
        if message == "no such file":
            message += " where the evaluation runs (the workers of --engine dask read the inputs: a filesystem " \
                       "they share, under the same paths)"
        raise InputError(name, message, error.line) from None


def _plan_of(planned: _Planned) -> tuple[QueryIndex | None, Partition | None]:
    """What the client keeps of the first part of the plan: the first partition, and the index without
    its keys."""
    if planned.index is None:
        return None, None
    return planned.index._replace(sorted_hashes=None, numbers=None), planned.first


def _plan(index: QueryIndex, paths: Sequence[str], starts: list[int] | None = None) -> list[Partition]:
    """The partitions: query ranges cut at multiples of SUM_BLOCK, about :data:`PARTITION_BYTES`
    each, and each file's span of their lines, or rows (module docstring). ``paths``: the qrels, then
    the runs; ``starts``: the partitions' first queries, when found already (:func:`_plan_starts`)."""
    probers = _probers(index, paths)
    return _spans(index, probers, _plan_starts(index, probers) if starts is None else starts)


def _probers(index: QueryIndex, paths: Sequence[str]) -> list[_Prober | _RowProber]:
    """What searches the boundaries in each file: the qrels, then the runs."""
    return [_prober(paths[0], index, QRELS_ITER_FORMAT, index.ends),
            *(_prober(path, index, RUN_FORMAT) for path in paths[1:])]


def _plan_starts(index: QueryIndex, probers: Sequence[_Prober | _RowProber]) -> list[int]:
    """The first query of each partition (0 first), multiples of SUM_BLOCK: the first kept queries
    found at the largest file's cut offsets (:meth:`_Prober.cut_offsets`), rounded."""
    wanted = max(-(-sum(prober.weight for prober in probers) // PARTITION_BYTES), MIN_PARTITIONS)
    probe = max(probers, key=lambda prober: prober.weight)
    cuts = set()
    for offset in probe.cut_offsets(wanted):
        _, number, _ = probe.first_kept(offset, probe.size)
        if number is not None:
            cut = probe.rounded(number / results.SUM_BLOCK) * results.SUM_BLOCK
            if 0 < cut < index.num_queries:
                cuts.add(cut)
    return [0, *sorted(cuts)]


def _spans(index: QueryIndex, probers: Sequence[_Prober | _RowProber], starts: list[int],
           count: int | None = None) -> list[Partition]:
    """The partitions whose first queries are ``starts`` (the first ``count`` only: their boundaries
    alone searched), with each file's span of their lines, or rows."""
    count = len(starts) if count is None else min(count, len(starts))
    spans = []
    for prober in probers:
        at, bounds = 0, [0]
        for start in starts[1:count + 1]:
            at = prober.boundary(start, at, prober.size)
            bounds.append(at)
        if count == len(starts):
            bounds.append(prober.size)
        spans.append(list(zip(bounds[:-1], bounds[1:])))
    stops = [*starts[1:], index.num_queries]
    return [Partition(number, first, stop, spans[0][number], tuple(run[number] for run in spans[1:]))
            for number, (first, stop) in enumerate(zip(starts[:count], stops[:count]))]


def _counted(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Keys and their counts of lines, added up over the partitions: the distinct keys, sorted."""
    if not parts:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
    keys = np.concatenate([keys for keys, _ in parts])
    unique, inverse = np.unique(keys, return_inverse=True)
    counts = np.bincount(inverse, weights=np.concatenate([counts for _, counts in parts]), minlength=len(unique))
    return unique, counts.astype(np.int64)


class _ForeignCheck(NamedTuple):
    """Of a run's lines whose queries their partition's qrels lack: whether one is a query the qrels
    keep (the run is not in their order), the lines of queries the qrels dropped, the count of ids
    the qrels lack and the first few of them (:data:`~prefeval.ranking.loading.SHOWN` and one)."""

    out_of_order: bool
    dropped_rows: int
    count: int
    shown: list[str]


def _checked_foreign(foreign: list[tuple[np.ndarray, np.ndarray]], shown: list[list[str]],
                     planned: _Planned) -> list[_ForeignCheck]:
    """Each run's :class:`_ForeignCheck`, from the whole index (where the plan was made)."""
    index = planned.index
    checks = []
    for (keys, counts), texts in zip(foreign, shown):
        found = sorted_positions(index.sorted_hashes, keys) if len(keys) else np.empty(0, dtype=np.int64)
        in_qrels = found >= 0
        kept = bool((index.numbers[found[in_qrels]] >= 0).any()) if in_qrels.any() else False
        outside = sorted_positions(index.sorted_hashes, text_keys(texts)) < 0 if texts else []
        checks.append(_ForeignCheck(kept, int(counts[in_qrels].sum()), int((~in_qrels).sum()),
                                    [text for text, out in zip(texts, outside) if out][:SHOWN + 1]))
    return checks


def _partitionable(path) -> bool:
    """Whether the input can be read from the middle: a text file that is not gzip (which cannot be),
    or a columnar input (read from a row group)."""
    if columnar_format(path) is not None:
        return True
    with open(path, "rb") as handle:
        return handle.read(len(GZIP_MAGIC)) != GZIP_MAGIC


def _absolute(path):
    """The path as every worker opens it: absolute (a columnar input keeps the columns named with it)."""
    if isinstance(path, TablePath):
        return path._replace(path=os.path.abspath(path.path))
    return os.path.abspath(path)


def _prober(path, index: QueryIndex, fmt: LineFormat, ends: np.ndarray | None = None) -> _Prober | _RowProber:
    """What finds the partitions' boundaries in the input ``path`` (of the format ``fmt``: the qrels'
    or a run's): in its bytes (text), in its rows (a columnar input; ``ends``: where each kept
    query's rows end, known of the qrels once indexed, :attr:`~prefeval.engine.streaming.QueryIndex.ends`)."""
    return _RowProber(path, index, fmt, ends) if columnar_format(path) is not None else _Prober(path, index)


_BATCH = 8
"""Lines whose queries are looked up at once by :meth:`_Prober.first_kept`."""


class _Prober:
    """Reads query ids at byte offsets of a file, to find where a partition's lines start
    (:meth:`boundary`). A line's query is "kept" when the index numbers it; the others (queries
    the qrels lack or dropped, blank and comment lines) go with the next kept query."""

    def __init__(self, path: str, index: QueryIndex):
        self.path = path
        self.index = index
        self.size = os.path.getsize(path)
        """The positions a boundary is among: the file's bytes."""
        self.weight = self.size
        """About the bytes of text the file holds (what a partition's share is counted in)."""

    def cut_offsets(self, wanted: int) -> list[int]:
        """Where the plan looks for the first queries of ``wanted`` partitions of even shares of the
        file (the first at its start, not looked for), the last :data:`TAIL_SHARES` shares (of more) cut
        in two halves each: the workers then finish within half a share's time of each other. (On 2 runs x 1M
        users, 22 shares of 0.9 s each on 2 workers, the first worker busy with the plan at the start,
        the one that finished first had waited 0.7 s for the other.)"""
        tail = range(wanted - TAIL_SHARES + 1, wanted + 1) if wanted > TAIL_SHARES else ()
        halves = {self.size * (2 * k - 1) // (2 * wanted) for k in tail}
        return sorted({self.size * k // wanted for k in range(1, wanted)} | halves)

    @staticmethod
    def rounded(blocks: float) -> int:
        """A partition's first query, in summation blocks, from the first query found at a cut offset:
        the nearest multiple (a text file is read from any byte)."""
        return int(round(blocks))

    def _read(self, offset: int, length: int) -> bytes:
        with open(self.path, "rb") as handle:
            handle.seek(offset)
            return handle.read(length)

    def _numbers(self, lines: list[bytes]) -> list[int | None]:
        """The number of each line's query (None: not a kept query)."""
        firsts = [line.split(None, 1) for line in lines]
        texts = [fields[0].decode("utf-8", "surrogateescape") if fields and not fields[0].startswith(b"#") else ""
                 for fields in firsts]
        found = sorted_positions(self.index.sorted_hashes, text_keys(texts))
        numbers = np.where(found >= 0, self.index.numbers[np.maximum(found, 0)], DROPPED)
        return [int(n) if n >= 0 and text else None for n, text in zip(numbers.tolist(), texts)]

    def _lines(self, start: int, stop: int) -> Iterator[tuple[int, int, list[bytes]]]:
        """From the line start ``start`` to ``stop``: windows of whole lines, as (where the first line
        starts, where the window ends, the lines)."""
        at = start
        while at < stop:
            data = self._read(at, min(WINDOW, stop - at))
            if at == 0 and data.startswith(UTF8_BOM):
                data = data[len(UTF8_BOM):]
                at += len(UTF8_BOM)
            end = data.rfind(b"\n") + 1
            if end == 0:  # no line end in the window: a long line, or the last line
                more = self._read(at, min(stop - at, MAX_LINE_BYTES + 2))
                end = more.find(b"\n") + 1 or len(more)
                data = more[:end]
            else:
                data = data[:end]
            yield at, at + end, data.splitlines(keepends=True)
            at += end

    def first_kept(self, offset: int, stop: int) -> tuple[int, int | None, int]:
        """(the first line start at or after ``offset``, the number of the first kept query at or
        after it, the end of that kept query's line); the number None (and ``stop`` twice) when no
        kept query comes before ``stop``."""
        start = offset
        if offset > 0:
            while True:
                data = self._read(start - 1, WINDOW)
                found = data.find(b"\n")
                if found >= 0:
                    start += found
                    break
                if not data:
                    return stop, None, stop
                start += len(data)
            if start >= stop:
                return stop, None, stop
        for at, _, lines in self._lines(start, stop):
            for batch in range(0, len(lines), _BATCH):  # mostly the first line is a kept query's
                for line, number in zip(lines[batch:batch + _BATCH], self._numbers(lines[batch:batch + _BATCH])):
                    if number is not None:
                        return start, number, at + len(line)
                    at += len(line)
        return start, None, stop

    def boundary(self, target: int, low: int, high: int) -> int:
        """The first line start in ``low..high`` whose first kept query at or after it is numbered
        ``target`` or more, every line before ``low`` having one numbered less (``high``: a line
        start or the end, whose is taken to be at least ``target``)."""
        space = high
        while space - low > WINDOW:
            middle = (low + space) // 2
            start, number, end = self.first_kept(middle, high)
            if number is None or number >= target:
                high, space = min(start, high), middle
            else:
                low = end
        pending = None
        for at, _, lines in self._lines(low, high):
            for line, number in zip(lines, self._numbers(lines)):
                if number is None:
                    pending = at if pending is None else pending
                elif number >= target:
                    return at if pending is None else pending
                else:
                    pending = None
                at += len(line)
        return high if pending is None else pending


ROW_BYTES = 32
"""About the bytes a row of a columnar input holds as a line of text (a recommender's run line, ``42
Q0 1234 3 0.87 run``, takes about 30): what the partitions of a columnar input are counted in."""
CACHED_ROWS = 1 << 22
"""The rows whose query ids a :class:`_RowProber` keeps, of the row groups it read last (4 row groups of
a million rows, 8 MB each; or the first :data:`HEAD_ROWS` of 64)."""
TAIL_SHARES = 2
"""The last even shares of the input that are cut smaller: in two halves each in a text file
(:meth:`_Prober.cut_offsets`), partitions of their own in a columnar input, cut inside a row group where
none starts near them (:meth:`_RowProber.cut_offsets`: a row group of a million rows is two shares of
2 runs x 1M users, whose lines the client took for 1 s after the workers were done). What is left to
do when the first worker runs out of partitions is then at most half a share (text)."""
FIRST_ROWS = 64
"""The rows of a row group whose queries are looked up first to find its first kept query (twice as
many next, when none of them is kept, and so on)."""
_UNKNOWN = np.iinfo(np.int64).min
"""The number of a query id not looked up yet (:meth:`_RowProber._row_numbers`)."""
HEAD_ROWS = 1 << 16
"""The rows of a row group read first to find a boundary near its start (:meth:`_RowProber._in_head`):
a summation block of a recommender's queries (1,024 users x 10 items) and more, a few pages of the
query column, where the whole column of a row group of a million rows takes 30 ms to read."""


class _RowProber:
    """:class:`_Prober`'s counterpart for a columnar input: a partition's boundary is a row (counted
    over the whole input, as the streamed reader counts them), found from the query ids alone
    (:func:`~prefeval.io.columnar.query_keys_of_group`): the first kept query of each row group, read
    from its first rows, says which row group a boundary is in, and that row group's query ids say
    which row (a binary search over its rows, each distinct id looked up once). There are no blank or
    comment rows: a row's query is kept or not (the qrels lack or dropped it), and the rows of the
    queries that are not kept go with the next kept query, as lines do."""

    def __init__(self, path, index: QueryIndex, fmt: LineFormat, ends: np.ndarray | None = None):
        from prefeval.io.columnar import open_input, row_groups

        self.path = path
        self.index = index
        self.fmt = fmt
        self.input = open_input(path, fmt)
        """The input, its footers read once for every read of the plan."""
        self.groups = row_groups(self.input)
        self.starts = np.array([group.first_row for group in self.groups] + [sum(g.rows for g in self.groups)],
                               dtype=np.int64)
        self.size = int(self.starts[-1])
        self.weight = self.size * ROW_BYTES
        self.ends = ends
        """Where each kept query's rows end, when known (the qrels'): then no row is read to find a boundary."""
        self._keys: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # :meth:`_group_keys`
        self._group_firsts: dict[int, int | None] = {}

    def cut_offsets(self, wanted: int) -> list[int]:
        """Where the plan looks for the first queries of ``wanted`` partitions: the row groups' first
        rows nearest to even shares of the rows, so that a partition reads whole row groups (a row
        group is decoded whole to read any row of its but the first few: :func:`~prefeval.io.columnar.table_blocks`);
        and the last :data:`TAIL_SHARES` even shares' own first rows, where no row group starts within
        half a share of them, so that the last partitions are small (their lines, which the client
        takes once they are evaluated, are what is left to do when the workers are done)."""
        even = [self.size * k // wanted for k in range(1, wanted)]
        starts = self.starts[1:-1]
        if not len(starts):
            return even
        cuts = set(starts[np.abs(starts[:, None] - np.array(even)[None, :]).argmin(axis=0)].tolist())
        half_share = self.size / wanted / 2
        return sorted(cuts | {offset for offset in even[-TAIL_SHARES:]
                              if min(abs(offset - cut) for cut in cuts) > half_share})

    @staticmethod
    def rounded(blocks: float) -> int:
        """A partition's first query, in summation blocks, from the first query of a row group: the
        multiple at or after it, so that the partition before reads the first rows of that row
        group (which are read without decoding the rest), the partition itself the rest."""
        return int(np.ceil(blocks))

    def _numbers(self, keys: np.ndarray) -> np.ndarray:
        """The number of the query of each key (negative: not kept)."""
        found = sorted_positions(self.index.sorted_hashes, keys)
        return np.where(found >= 0, self.index.numbers[np.maximum(found, 0)], DROPPED)

    def _row_numbers(self, group: int, low: int, stop: int) -> np.ndarray:
        """The numbers of the queries of rows ``low..stop-1`` of row group ``group`` (negative: not
        kept), each distinct query id looked up once (a row group of a million rows has a hundred
        thousand ids, of which a search looks at a few)."""
        keys, codes, numbers = self._group_keys(group, stop)
        wanted = codes[low:stop]
        unknown = np.unique(wanted[numbers[wanted] == _UNKNOWN])
        if len(unknown):
            numbers[unknown] = self._numbers(keys[unknown])
        return numbers[wanted]

    def _group_keys(self, group: int, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the keys of the group's distinct query ids, each row's entry among them, the numbers of
        their queries looked up so far), of at least its first ``rows`` rows: its first
        :data:`HEAD_ROWS` rows alone when they are enough (read without decoding the rest), else all
        of them; of the groups read last, :data:`CACHED_ROWS` rows at most."""
        held = self._keys.pop(group, None)
        if held is None or len(held[1]) < rows:
            from prefeval.io.columnar import query_keys_of_group

            head = rows <= HEAD_ROWS < self.groups[group].rows
            keys, codes = query_keys_of_group(self.input, self.fmt, self.groups[group],
                                              rows=HEAD_ROWS if head else None)
            held = (keys, codes, np.full(len(keys), _UNKNOWN, dtype=np.int64))
        while self._keys and sum(len(codes) for _, codes, _ in self._keys.values()) + len(held[1]) > CACHED_ROWS:
            self._keys.pop(next(iter(self._keys)))  # the one read or used longest ago
        self._keys[group] = held
        return held

    def _next_kept(self, group: int, low: int, high: int) -> tuple[int, int | None]:
        """(the row of the group, from ``low`` and before ``high``, of the first kept query, and its
        number); (``high``, None) when there is none. Rows are looked up a few at a time (a row group
        lists mostly kept queries: the first row is nearly always the one)."""
        step = FIRST_ROWS
        while low < high:
            stop = min(low + step, high)
            numbers = self._row_numbers(group, low, stop)
            kept = np.flatnonzero(numbers >= 0)
            if len(kept):
                return low + int(kept[0]), int(numbers[kept[0]])
            low, step = low + step, step * 2
        return high, None

    def _first_in_group(self, group: int) -> int | None:
        """The number of the first kept query of row group ``group`` (None: it has none), from its
        first rows where one of them is kept (its first :data:`HEAD_ROWS` rows read, among which the
        plan looks for a boundary near its start: :meth:`_in_head`)."""
        if group not in self._group_firsts:
            self._group_firsts[group] = self._next_kept(group, 0, self.groups[group].rows)[1]
        return self._group_firsts[group]

    def _in_head(self, group: int, left: int, end: int, target: int) -> int | None:
        """:meth:`boundary` within row group ``group`` (rows ``left..end-1``) from its first
        :data:`HEAD_ROWS` rows alone, read without decoding the rest, when a kept query numbered
        ``target`` or more is among them: the row after the last of them (from ``left``) whose kept
        query is numbered below ``target``. None when there is none such (the boundary may lie further
        on). A partition's first query is rounded up to a multiple of the summation block from a row
        group's first query (:meth:`rounded`), so the boundaries in the file the plan probes are near
        a row group's start."""
        if end - left <= FIRST_ROWS or left >= HEAD_ROWS:
            return None
        rows = min(HEAD_ROWS, end)
        numbers = self._row_numbers(group, left, rows)
        kept = np.flatnonzero(numbers >= 0)
        if not len(kept) or numbers[kept[-1]] < target:
            return None
        below = kept[numbers[kept] < target]
        return left + (int(below[-1]) + 1 if len(below) else 0)

    def _group_of(self, row: int) -> int:
        return int(np.searchsorted(self.starts, row, side="right")) - 1

    def first_kept(self, offset: int, stop: int) -> tuple[int, int | None, int]:
        """(``offset``, the number of the first kept query of a row at or after it and before
        ``stop``, the row after that row); the number None (and ``stop`` twice) when there is none."""
        group = max(self._group_of(offset), 0)
        while group < len(self.groups) and self.starts[group] < stop:
            start = int(self.starts[group])
            low, high = max(offset - start, 0), min(stop - start, self.groups[group].rows)
            if low == 0 and high == self.groups[group].rows and self._first_in_group(group) is None:
                group += 1
                continue
            row, number = self._next_kept(group, low, high)
            if number is not None:
                return offset, number, start + row + 1
            group += 1
        return stop, None, stop

    def boundary(self, target: int, low: int, high: int) -> int:
        """The first row in ``low..high`` whose first kept query at or after it is numbered
        ``target`` or more (``high`` when there is none): the row after the last row of ``low..high``
        whose kept query is numbered below ``target``, or ``low``. The row group it is in is the last
        one whose first kept query (from ``low`` on) is numbered below ``target``; within it, a binary
        search over its rows."""
        if high <= low:
            return low
        if self.ends is not None and 0 < target <= len(self.ends):
            return min(max(int(self.ends[target - 1]), low), high)
        first, last = max(self._group_of(low), 0), self._group_of(high - 1)
        below = None
        for group in range(first, last + 1):
            start = int(self.starts[group])
            number = self._first_in_group(group) if start >= low else \
                self._next_kept(group, low - start, self.groups[group].rows)[1]
            if number is not None and number >= target:
                break
            if number is not None:
                below = group
        if below is None:
            return low
        start = int(self.starts[below])
        end = min(high - start, self.groups[below].rows)
        within = self._in_head(below, max(low - start, 0), end, target)
        if within is not None:
            return start + within
        left, right = max(low - start, 0), end  # the answer is in left..right: a row with a kept query below target
        while left < right:                      # lies before it, none at or after it
            middle = (left + right) // 2
            number = self._next_kept(below, middle, end)[1]
            if number is None or number >= target:
                right = middle
            else:
                left = middle + 1
        return start + left
