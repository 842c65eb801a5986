"""Streaming a collection: RankTables for consecutive chunks of queries, read from the files as
they are needed, so that memory depends on the chunk, not on the collection.

Two passes over the qrels, one over each run:

1. :func:`index_qrels` reads the qrels in blocks and keeps, per query, the 64-bit key of its id
   (:func:`~prefeval.io.fields.byte_keys`) and its number among the kept queries (those with a
   relevant document, or all with ``keep_empty``): 12 bytes a query. It checks that the qrels are
   **grouped by query** (the lines of a query one after the other) and **judge no query on several
   subtopics** (:mod:`prefeval.io.subtopics`: such qrels, a few thousand lines, are read whole, with
   their subtopics and the note on them); when they do not it returns None, and the collection is
   read in memory instead (:mod:`prefeval.ranking.loading`), before anything is written.
2. :class:`StreamedCollection` then reads the qrels again and every run in step, block by block
   (:func:`~prefeval.io.source.read_blocks`), gives each line the number of its query, and hands
   over a chunk of queries as soon as every file has been read past it: each chunk is ranked as
   the whole collection would be (:func:`~prefeval.ranking.ranktable.rank_relevant`) into a
   RankTable of its own queries. Lines of queries the qrels lack are dropped (and noted, as in
   memory), lines of the queries the qrels dropped are ignored.

Streaming needs each run to list its queries **in the order of the qrels**, each query's lines
together (any query may be missing, and lines of queries the qrels lack may come anywhere): what
recommenders write, and TREC runs sorted as their qrels are. A run that does not raises
:class:`OutOfOrder` when its first line out of order is read; the caller then evaluates in memory
(``prefeval eval`` does so by itself, having held its output back: :mod:`prefeval.engine`).

Key collisions: two qrels ids with one key read as a repeated query (so the qrels are read in
memory); a run's id with the key of a qrels id would be read as that query, as in memory
(:class:`~prefeval.ranking.ranktable.RelevantLookup`). The chance is about n² / 2⁶⁵ for n ids.

The notes on the data are those of the in-memory path, word for word; the notes on the runs and the
relevance level are made when the last chunk has been read (:meth:`StreamedCollection.note_data`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from prefeval.engine.chunks import Chunk, Sampling
from prefeval.errors import InputError
from prefeval.io.codes import factorize, sorted_positions
from prefeval.io.fields import TextColumn, by_stretch, text_keys
from prefeval.io.inputs import named_runs
from prefeval.io.keys import SUMMARY_QID
from prefeval.io.source import columnar_format, display_name, read_blocks
from prefeval.io.trec import (
    QRELS_FORMAT,
    QRELS_ITER_FORMAT,
    RUN_FORMAT,
    LineFormat,
    Qrels,
    RowLines,
    RunColumns,
    first_tag,
    mapped_grades,
    qrels_from_columns,
    read_fields,
    run_id_from_path,
)
from prefeval.ranking.conventions import Conventions
from prefeval.ranking.items import ItemRequest
from prefeval.ranking.loading import (
    SHOWN,
    below_level,
    check_judged_once,
    note_below_level,
    note_dropped,
    note_run,
    note_views,
)
from prefeval.ranking.options import NO_RELEVANCE_OPTIONS, RelevanceOptions
from prefeval.ranking.positions import Selection
from prefeval.ranking.ranktable import RankedRun, RankTable, RelevantLookup, query_id_hint, rank_relevant
from prefeval.runtime.parallel import Served

if TYPE_CHECKING:
    from prefeval.io.columnar import RowNumbers

_SUMMARY_KEY = text_keys([SUMMARY_QID])[0]

FOREIGN = -1
"""The query number of a line whose query the qrels do not have."""
DROPPED = -2
"""The query number of a line whose query the qrels have but dropped (no relevant document)."""
HINT_QIDS = 1000
"""How many of the qrels' ids are kept for the hint of a run none of whose ids is in the qrels."""


class OutOfOrder(Exception):
    """A run whose queries are not in the order of the qrels (or not grouped): it cannot be streamed.
    Its message names the run and the line (or row) of the first query out of order."""

    def __reduce__(self):  # raised in a reader process, raised again here
        return (type(self), self.args)


class Block(NamedTuple):
    """A block of a file's rows, from text or from a columnar input (:func:`file_blocks`): the query
    ids, the docids, the numbers (a run's ``nan`` scores included), where its rows are (``places()``,
    made when asked for: :class:`~prefeval.io.trec.RowLines` of a text block,
    :class:`~prefeval.io.columnar.RowNumbers` of a row group), and the tag of a run's first line that has
    one (:func:`~prefeval.io.trec.first_tag`: in the blocks up to the first with rows); the iter column of
    qrels read with it (``QRELS_ITER_FORMAT``; None when a table has no such column)."""

    qids: TextColumn
    docids: TextColumn
    values: np.ndarray
    places: Callable[[], RowLines | RowNumbers]
    tag: str | None
    iters: TextColumn | None = None


def file_blocks(path, fmt: LineFormat, span: tuple[int, int] | None = None) -> Iterator[Block]:
    """The rows of the file ``path`` in blocks, the one place where the streamed reader reads a file:
    text in blocks of lines (:func:`~prefeval.io.source.read_blocks`, split by
    :func:`~prefeval.io.trec.read_fields`), a columnar input (:func:`~prefeval.io.source.columnar_format`:
    Parquet, Arrow, a directory of them) a row group at a time
    (:func:`~prefeval.io.columnar.table_blocks`). Either way a file is open only while it is read.
    ``span``: a partition's part of the file only (:mod:`prefeval.engine.partitioned`): the bytes
    start..stop-1 of a text file, the rows start..stop-1 of a columnar input (counted over the whole
    input, as its errors count them)."""
    if columnar_format(path) is not None:
        from prefeval.io.columnar import table_blocks

        for fields in table_blocks(path, fmt, rows=span):
            yield Block(fields.qids, fields.docids, fields.values, functools.partial(_itself, fields.rows), fields.tag,
                        fields.iters)
        return
    source, rows = display_name(path), 0
    for data, first_line in read_blocks(path, span=span):
        qids, docids, *iters, values = read_fields(data, source, fmt, first_line)
        tag = first_tag(data) if fmt is RUN_FORMAT and not rows else None  # until a block has rows
        rows += len(values)
        yield Block(qids, docids, values, functools.partial(RowLines.of_block, data, len(values), first_line), tag,
                    *iters)


def _itself(value):
    return value


def _taken(blocks: list[Block]) -> Iterator[Block]:
    """The blocks in order, each dropped from the list as it is taken."""
    blocks.reverse()
    while blocks:
        yield blocks.pop()


class QueryIndex(NamedTuple):
    """The qrels' queries, by the keys of their ids (:func:`~prefeval.io.fields.byte_keys`):
    ``numbers[i]`` is the number, among the kept queries, of the query whose key is
    ``sorted_hashes[i]``, or :data:`DROPPED`."""

    source: str
    sorted_hashes: np.ndarray | None
    """None (with ``numbers``) in a process whose readers hold the lookup (:meth:`StreamedCollection.tables`)."""
    numbers: np.ndarray | None
    num_queries: int
    dropped_shown: list[str]
    dropped_count: int
    first_qids: list[str]
    """The first :data:`HINT_QIDS` kept ids (for :func:`~prefeval.ranking.ranktable.query_id_hint`)."""
    max_grade: float = 0.0
    """The largest grade of the qrels (after ``-b`` and ``-f``), which every chunk's qrels keep."""
    ends: np.ndarray | None = None
    """Of columnar qrels read whole: for each kept query (by number), the row after its rows and those
    of the queries the qrels dropped after it (the row where the next kept query's rows begin, as a
    partition's span begins: :mod:`prefeval.engine.partitioned`); None for a text file."""

    def numbers_of(self, qids: TextColumn) -> np.ndarray:
        """The number of each id's query, :data:`DROPPED` or :data:`FOREIGN`. Each id of a stretch of
        equal ids (the lines of a query) is looked up once."""
        return by_stretch(qids.keys, self._numbers_of_keys)

    def _numbers_of_keys(self, keys: np.ndarray) -> np.ndarray:
        found = sorted_positions(self.sorted_hashes, keys)
        return np.where(found >= 0, self.numbers[found], FOREIGN)


def index_qrels(path: str, relevance: RelevanceOptions = NO_RELEVANCE_OPTIONS,
                keep_empty: bool = False, span: tuple[int, int] | None = None,
                blocks: Sequence[Block] | None = None) -> QueryIndex | None:
    """The :class:`QueryIndex` of the qrels file ``path``, every line checked as the in-memory reader
    checks it; None when the qrels are not grouped by query, or judge a query on several subtopics
    (two iter values). Raises the in-memory reader's errors: no line, a query named ``all``, no query
    with a relevant document (unless ``keep_empty`` keeps the queries without one). ``span``: the
    bytes of one partition only (:func:`~prefeval.io.source.read_blocks`); ``blocks``: those bytes'
    blocks, read already (``file_blocks(path, QRELS_ITER_FORMAT, span)``)."""
    source = display_name(path)
    hashes = _Growing(np.uint64)  # the keys of the queries, in order
    starts = _Growing(np.int64) if span is None and columnar_format(path) is not None else None  # their first rows
    relevant = _Growing(bool)  # whether each has a relevant document
    texts: list[str] = []  # the ids of the first queries, for hints
    empty: dict[int, str] = {}  # the first queries without a relevant document so far, for the note
    rows, last, count, max_grade = 0, None, 0, 0.0
    last_line = None  # the (query, iter) keys of the previous block's last line
    for block in file_blocks(path, QRELS_ITER_FORMAT, span) if blocks is None else blocks:
        qids, iters, grades = block.qids, block.iters, block.values
        if not len(qids):
            continue
        if iters is not None:
            if _several_iters(qids.keys, iters.keys, last_line):
                return None
            last_line = (qids.keys[-1], iters.keys[-1])
        first_row = rows
        rows += len(qids)
        named_all = np.flatnonzero(qids.keys == _SUMMARY_KEY)
        if len(named_all):
            raise block.places().error(source, f"a query is named {SUMMARY_QID!r}, the id that every summary line "
                                               "(the means over queries) has; rename the query", int(named_all[0]))
        codes, firsts = factorize(qids.keys)
        if len(codes) > 1 and (np.diff(codes) < 0).any():
            return None
        block_hashes = qids.keys[firsts]
        grades = mapped_grades(grades, relevance.binary_relevance, relevance.relevance_floor)
        has_relevant = np.bincount(codes, weights=grades > 0, minlength=len(firsts)) > 0
        max_grade = max(max_grade, float(grades.max(initial=0.0)))
        if last is not None and block_hashes[0] == last:  # the previous block's last query goes on
            relevant.values[-1] |= has_relevant[0]
            if has_relevant[0]:
                empty.pop(count - 1, None)
            block_hashes, has_relevant, firsts = block_hashes[1:], has_relevant[1:], firsts[1:]
        if len(empty) <= SHOWN:  # one more than shown, and the last, which the next block may yet take
            shown = np.flatnonzero(~has_relevant)[:SHOWN + 2]
            empty.update(zip((count + shown).tolist(), qids.texts(firsts[shown]).tolist()))
        if len(block_hashes):
            hashes.append(block_hashes)
            relevant.append(has_relevant)
            if starts is not None:
                starts.append(first_row + firsts)
            last = block_hashes[-1]
            count += len(block_hashes)
            if len(texts) < HINT_QIDS:
                texts.extend(qids.texts(firsts[:HINT_QIDS]).tolist())
    if rows == 0:
        raise InputError(source, f"no qrels lines ({QRELS_FORMAT.layout}) in the file")
    all_hashes, kept = hashes.values.copy(), relevant.values.copy()
    del hashes, relevant
    order = np.argsort(all_hashes)  # not stable: a repeated key returns None below
    sorted_hashes = all_hashes[order]
    if (sorted_hashes[1:] == sorted_hashes[:-1]).any():
        return None  # a query in two places (or two ids of one key)
    if not kept.any() and not keep_empty:
        raise InputError(source, "no query has a relevant document (a grade > 0 after -b/-f)")
    if keep_empty:
        kept[:] = True
    numbers = np.where(kept, np.cumsum(kept) - 1, DROPPED).astype(np.int32 if len(kept) < 2**31 else np.int64)
    ends = None
    if starts is not None:  # a kept query's rows end where the next query's begin
        ends = np.append(starts.values[1:], rows)[kept]
    return QueryIndex(
        source=source,
        sorted_hashes=sorted_hashes,
        numbers=numbers[order],
        num_queries=int(kept.sum()),
        dropped_shown=[text for index, text in sorted(empty.items()) if not kept[index]][:SHOWN + 1],
        dropped_count=int((~kept).sum()),
        first_qids=[texts[i] for i in np.flatnonzero(kept[:len(texts)])],
        max_grade=max_grade,
        ends=ends,
    )


def _several_iters(qids: np.ndarray, iters: np.ndarray, before: tuple | None) -> bool:
    """Whether two lines of one query, next to each other (in this block, or the previous block's last
    line ``before`` and this one's first), hold two iter values: a query judged on several subtopics
    (in qrels grouped by query, one of its lines follows another of another value)."""
    if before is not None and before[0] == qids[0] and before[1] != iters[0]:
        return True
    return bool(((qids[1:] == qids[:-1]) & (iters[1:] != iters[:-1])).any())


class _Growing:
    """An array appended to block by block, kept in one buffer that doubles when full: a large
    buffer is mapped memory, given back to the system when freed, where many small arrays would
    leave the heap scattered, and resident in every reader forked afterwards."""

    def __init__(self, dtype):
        self._buffer = np.empty(1024, dtype=dtype)
        self._size = 0

    def append(self, values: np.ndarray) -> None:
        size = self._size + len(values)
        if size > len(self._buffer):
            larger = np.empty(max(size, 2 * len(self._buffer)), dtype=self._buffer.dtype)
            larger[:self._size] = self._buffer[:self._size]
            self._buffer = larger
        self._buffer[self._size:size] = values
        self._size = size

    @property
    def values(self) -> np.ndarray:
        """The values appended so far (a view)."""
        return self._buffer[:self._size]


@dataclass
class _Rows:
    """Parsed lines waiting for their chunk: the text columns, the number, the query numbers, the lines."""

    qids: TextColumn
    docids: TextColumn
    values: np.ndarray
    queries: np.ndarray
    lines: np.ndarray

    @classmethod
    def empty(cls) -> _Rows:
        """No rows."""
        text = TextColumn.of_texts([])
        return cls(text, text, np.empty(0), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))

    def split(self, stop: int) -> tuple[_Rows, _Rows]:
        """(the rows of the queries before ``stop``, the others); the rows are in query order."""
        cut = int(np.searchsorted(self.queries, stop))
        return (_Rows(*(column[:cut] for column in self._columns())),
                _Rows(*(column[cut:] for column in self._columns())))

    def _columns(self):
        return self.qids, self.docids, self.values, self.queries, self.lines

    @staticmethod
    def joined(parts: Sequence[_Rows]) -> _Rows:
        if len(parts) == 1:
            return parts[0]
        return _Rows(*(TextColumn.joined(columns) if isinstance(columns[0], TextColumn) else np.concatenate(columns)
                       for columns in zip(*(part._columns() for part in parts))))


@dataclass
class _FileStream:
    """One file read block by block: its lines numbered by query, kept until their chunk is taken.

    ``frontier``: every query numbered below it has all its lines read (the file lists its queries
    in order); the number of queries at the end of the file."""

    path: str
    fmt: LineFormat
    index: QueryIndex
    span: tuple[int, int] | None = None
    """Only these bytes of the file (a partition's: :mod:`prefeval.engine.partitioned`)."""
    blocks: list[Block] | None = None
    """Its blocks, read already (a partition's qrels, read once for its index and its rows), each
    dropped from the list as it is taken."""
    source: str = ""
    frontier: int = 0
    done: bool = False
    waiting: list[_Rows] = field(default_factory=list)
    rows_read: int = 0
    scored: int = 0
    judged_queries: int = 0
    foreign_shown: list[str] = field(default_factory=list)
    foreign_hashes: list[np.ndarray] = field(default_factory=list)
    dropped_rows: int = 0
    tag: str | None = None
    places: RowLines | RowNumbers | None = None
    """Where the rows of the last block read are (a template: its numbers replaced by those of the rows
    of a chunk, :meth:`_Readers.take`)."""
    _last_query: int = -1

    def __post_init__(self):
        self.source = display_name(self.path)
        self._blocks = file_blocks(self.path, self.fmt, self.span) if self.blocks is None else _taken(self.blocks)

    def read(self) -> None:
        """Read the next block (the end of the file sets :attr:`frontier` to every query)."""
        try:
            block = next(self._blocks)
        except StopIteration:
            self.done, self.frontier = True, self.index.num_queries
            return
        if self.rows_read == 0 and self.tag is None and self.fmt is RUN_FORMAT:
            self.tag = block.tag
        qids, docids, values = block.qids, block.docids, block.values
        if not len(values):
            return
        self.places = block.places()
        lines = self.places.numbers
        self.rows_read += len(values)
        if self.fmt.nan_allowed and np.isnan(values).any():
            kept = ~np.isnan(values)
            qids, docids, values, lines = qids[kept], docids[kept], values[kept], lines[kept]
        self.scored += len(values)
        queries = self.index.numbers_of(qids)
        self._note_foreign(qids[queries == FOREIGN])
        judged = queries >= 0
        self.dropped_rows += int((queries == DROPPED).sum())
        if not judged.all():
            qids, docids, values, lines, queries = (column[judged] for column in (qids, docids, values, lines,
                                                                                   queries))
        if not len(queries):
            return
        steps = np.diff(queries, prepend=self._last_query)
        if (steps < 0).any():
            row = int(np.flatnonzero(steps < 0)[0])
            qid = str(qids.texts([row])[0])
            raise OutOfOrder(str(self.places._replace(numbers=lines).error(
                self.source, f"query {qid!r} comes after a query that follows it in the qrels", row)))
        self.judged_queries += int((steps > 0).sum())
        self._last_query = int(queries[-1])
        self.frontier = self._last_query
        self.waiting.append(_Rows(qids, docids, values, queries, lines))

    def _note_foreign(self, qids: TextColumn) -> None:
        if not len(qids):
            return
        hashes, first = np.unique(qids.keys, return_index=True)
        new = ~np.any([sorted_positions(earlier, hashes) >= 0 for earlier in self.foreign_hashes], axis=0) \
            if self.foreign_hashes else np.ones(len(hashes), dtype=bool)
        if new.any():
            self.foreign_hashes.append(hashes[new])
        if len(self.foreign_shown) <= SHOWN:
            known = set(self.foreign_shown)
            uniques = qids.texts(np.sort(first)[:SHOWN + 1 + len(known)])
            self.foreign_shown.extend(qid for qid in map(str, uniques) if qid not in known)
            del self.foreign_shown[SHOWN + 1:]

    @property
    def foreign_count(self) -> int:
        return sum(len(hashes) for hashes in self.foreign_hashes)

    def take(self, stop: int) -> _Rows:
        """The waiting rows of the queries numbered below ``stop`` (all read: ``stop <= frontier``)."""
        rows = _Rows.joined(self.waiting) if self.waiting else _Rows.empty()
        taken, rest = rows.split(stop)
        self.waiting = [rest] if len(rest.queries) else []
        return taken


class RunReport(NamedTuple):
    """What the notes need of a run once it has been read to the end."""

    rows_read: int
    scored: int
    judged_queries: int
    dropped_rows: int
    foreign_shown: list[str]
    foreign_count: int
    tag: str | None


class _Readers:
    """The qrels and some of the runs (``numbers``), read in step: what one reader process does
    (:class:`StreamedCollection`). Each run is ranked chunk by chunk against the chunk's qrels."""

    def __init__(self, collection: StreamedCollection, numbers: Sequence[int]):
        self.collection = collection
        self.numbers = list(numbers)
        self.qrels = collection.file_stream(collection.qrels_path, QRELS_FORMAT, None)
        self.runs = [collection.file_stream(collection.run_paths[n], RUN_FORMAT, n) for n in self.numbers]

    def advance(self, start: int) -> int:
        """Read until every file is read past query ``start`` (to the end for the number of queries);
        return how far all of them are (:attr:`_FileStream.frontier`)."""
        for stream in (self.qrels, *self.runs):
            while (stream.frontier <= start or start >= self.collection.num_queries) and not stream.done:
                stream.read()
        return min(stream.frontier for stream in (self.qrels, *self.runs))

    def take(self, start: int, stop: int, with_qrels: bool = True) -> tuple[Qrels | None, list[RankedRun]]:
        """The qrels of queries ``start..stop-1`` (unless not ``with_qrels``: another reader hands
        them over) and every run of this reader ranked on them."""
        relevance = self.collection.relevance
        judgments = self.qrels.take(stop)
        qrels = qrels_from_columns(self.collection.index.source, judgments.qids, judgments.docids, judgments.values,
                                   relevance.binary_relevance, relevance.relevance_floor,
                                   line_of=lambda row: int(judgments.lines[row]),
                                   keep_empty=True)._replace(top_grade=self.collection.index.max_grade)
        if self.collection.conventions.judged_once:
            check_judged_once(qrels)
        lookup = RelevantLookup(qrels, self.collection.others, self.collection.items)
        ranked = []
        for number, stream in zip(self.numbers, self.runs):
            rows = stream.take(stop)
            queries = rows.queries - start
            places = stream.places._replace(numbers=rows.lines) if stream.places is not None else RowLines(rows.lines)
            columns = RunColumns(stream.source, self.collection.run_ids[number], rows.qids, rows.docids, rows.values,
                                 places, stream.tag)
            ranked.append(rank_relevant(columns, lookup, relevance.topk, queries))
        return (qrels if with_qrels else None), ranked

    def reports(self) -> list[RunReport]:
        """Per run, once read to the end, what the notes need."""
        return [RunReport(run.rows_read, run.scored, run.judged_queries, run.dropped_rows, run.foreign_shown,
                          run.foreign_count, run.tag) for run in self.runs]


class StreamedCollection:
    """The qrels and runs of files, handed over as RankTables of consecutive chunks of queries
    (:meth:`tables`); see the module docstring. A reader (:data:`prefeval.engine.READERS`),
    constructed with :meth:`open`.

    With ``jobs`` > 1 the runs are shared among ``jobs`` reader processes (each reads the qrels too),
    which read and rank the next chunk while this process evaluates the current one (reading is the
    larger part: this process mostly waits for them)."""

    draws_samples = False
    reads_ahead = True
    first_query = 0
    """The number of the first query handed over (a partition starts further on)."""

    def __init__(self, index: QueryIndex, qrels: str, runs: Sequence[str], names: Sequence[str | None],
                 relevance: RelevanceOptions, others: bool, conventions: Conventions, jobs: int = 1):
        self.index = index
        self.qrels_path = qrels
        self.run_paths = list(runs)
        self.run_ids = [name if name is not None else run_id_from_path(path, columnar_format(path) is not None)
                        for name, path in zip(names, runs)]
        self.relevance = relevance
        self.others = others
        self.conventions = conventions
        self.jobs = jobs
        self.run_tags: list[str | None] = [None] * len(self.run_paths)
        self._below_level: list[str] = []
        self._below_count = 0
        self._viewed_by: Sequence = ()  # the measures whose views of the qrels are noted after the data
        self.items: ItemRequest | None = None
        """What the item measures read of every run's ranking (:mod:`prefeval.ranking.items`)."""

    @classmethod
    def open(cls, qrels: str, runs, relevance: RelevanceOptions, conventions: Conventions, others: bool = False,
             jobs: int = 1, progress=None, executor=None,
             items: ItemRequest | None = None) -> StreamedCollection | None:
        """Index the qrels (noting the queries dropped); None when they are not grouped by query. The
        files must be regular files (:func:`~prefeval.engine.streaming_obstacle`), and the conventions
        list the queries in the qrels' order."""
        index = index_qrels(qrels, relevance, conventions.keep_empty)
        if index is None:
            return None
        note_dropped(index.source, index.dropped_shown, index.dropped_count)
        named = named_runs(runs)
        collection = cls(index, qrels, [path for _, path in named], [name for name, _ in named], relevance, others,
                         conventions, jobs)
        collection.items = items
        return collection

    def samples(self, sampling: Sampling) -> Iterator[tuple[int, int, Iterator[Chunk]]]:
        """One sample of every query, a chunk per RankTable (read when it is reached)."""
        chunks = (Chunk(0, Selection.everything(table), table, offset) for offset, table in self.tables())
        yield 0, self.num_queries, chunks

    def for_workers(self) -> None:
        """Nothing: each chunk carries its own table."""
        return None

    @property
    def num_queries(self) -> int:
        return self.index.num_queries

    def file_stream(self, path: str, fmt: LineFormat, run: int | None) -> _FileStream:
        """The stream of the qrels (``run`` None) or of run number ``run``: the whole file."""
        return _FileStream(path, fmt, self.index)

    def tables(self) -> Iterator[tuple[int, RankTable]]:
        """(the number of its first query, the RankTable) of every chunk, in query order; then the
        notes on the data. Raises :class:`OutOfOrder` for a run that is not in the qrels' order."""
        count = len(self.run_paths)
        readers = min(self.jobs, count)
        shares = [list(range(count))[group::readers] for group in range(readers)]
        if self.index.sorted_hashes is None:  # an earlier pass let go of the lookup (below)
            index = index_qrels(self.qrels_path, self.relevance, self.conventions.keep_empty)
            if index is None:
                raise InputError(self.index.source, "the qrels changed while they were read")
            self.index = index
        with contextlib.ExitStack() as stack:
            groups = [stack.enter_context(Served(functools.partial(_Readers, self, share), fork=self.jobs > 1))
                      for share in shares]
            if all(group.forked for group in groups):
                # the readers look queries up in their own (forked) copy: this process keeps the counts
                self.index = self.index._replace(sorted_hashes=None, numbers=None)
            start = self.first_query
            for group in groups:
                group.send("advance", start)  # a partition's first block may end before its first query
            while start < self.num_queries:
                stop = min(group.receive() for group in groups)
                for number, group in enumerate(groups):
                    group.send("take", start, stop, number == 0)
                    group.send("advance", stop)  # the next chunk is read while this one is evaluated
                parts = [group.receive() for group in groups]
                ranked: list[RankedRun | None] = [None] * count
                for share, (_, runs) in zip(shares, parts):
                    for number, run in zip(share, runs):
                        ranked[number] = run
                yield start, self._table(RankTable.from_ranked(parts[0][0], ranked))
                start = stop
            for group in groups:
                group.receive()  # read to the end of every file
                group.send("reports")
            reports: list[RunReport | None] = [None] * count
            for share, group in zip(shares, groups):
                for number, report in zip(share, group.receive()):
                    reports[number] = report
        self.run_tags = [report.tag for report in reports]
        self._note_data(reports)

    def _table(self, table: RankTable) -> RankTable:
        level = self.relevance.relevance_level
        if level is not None:
            below = below_level(table, level)
            self._below_count += len(below)
            self._below_level.extend(table.qids[q] for q in below[:max(SHOWN + 1 - len(self._below_level), 0)])
        return table

    def note_views(self, measures: Sequence) -> None:
        """The note on how ``measures`` read the qrels (:func:`~prefeval.ranking.loading.note_views`:
        these qrels have no subtopics, which are read in memory), made after the notes on the data, where
        the in-memory reader makes it."""
        self._viewed_by = measures

    def _note_data(self, reports: list[RunReport]) -> None:
        if self.relevance.relevance_level is not None:
            note_below_level(self.index.source, self._below_level, self._below_count, self.relevance.relevance_level)
        for run_id, path, report in zip(self.run_ids, self.run_paths, reports):
            if report.rows_read == 0:
                raise InputError(display_name(path), f"no run lines ({RUN_FORMAT.layout}) in the file")
            if report.judged_queries == 0 and report.dropped_rows == 0 and report.foreign_count:
                raise InputError(display_name(path), "no query id of this run is in the qrels"
                                 + query_id_hint(report.foreign_shown, self.index.first_qids))
            note_run(run_id, report.scored, self.num_queries - report.judged_queries, self.num_queries,
                     report.foreign_shown, report.foreign_count, self.conventions.missing_queries)
        note_views(self.index.source, None, self._viewed_by)
