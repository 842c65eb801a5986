"""Qrels and runs as tables: Parquet files, Arrow IPC files (Feather version 2), directories of
them (partitioned datasets), and pyarrow Tables, read into the very columns the text readers give
(:class:`~prefeval.io.trec.RunColumns`, :class:`~prefeval.io.trec.Qrels`, and for the streamed
reader :class:`TableFields`, the counterpart of :func:`~prefeval.io.trec.read_fields`).

**Which columns.** The query id, the document id and the grade (qrels) or score (run), a run's
optional tag and qrels' optional iter column (the subtopic of a diversity qrels, read as ids are), are
found by name (:mod:`prefeval.io.columns`: the names of TREC tools, ir_measures,
PyTerrier and recommender toolkits, or the names the user gives). Other columns are not read.

**Ids** of any Arrow type that holds text or integers (``string``, ``large_string``,
``string_view``, ``binary`` and their large and view forms, any integer type, and dictionaries of
them, as Parquet's dictionary encoding is read) become the keys and texts that the text readers give
for the same ids written as text: a string's bytes as they are; an integer as its decimal digits (the
user 42 is the id ``"42"``, as in a file of text). An id must be one that a text file can hold: not
empty, without whitespace (space, tab, line ends, vertical tab, form feed) or NUL. A null id, an id of
another type (a float, a date) or an id that breaks that rule is an :class:`InputError` naming the
input, the row and the column.

**Numbers**: scores and grades of any integer or floating type (or decimal; grades also boolean, a
label: true is 1), read as float64 (an integer beyond 2⁵³ rounded to the nearest, as ``strtod``
reads its digits). A run's row whose score is null or NaN is skipped, as a run file's ``nan`` line
is; a grade that is null, NaN, or beyond 2⁵³ in magnitude is an error, as in a qrels file. Numbers
held as text are an error (the column's type is named), not parsed.

**Rows** are counted from 0, in each file, as pyarrow and pandas count them; an error names the row,
its row group (a Parquet row group, an Arrow record batch) and, in a directory, the file: ``run.parquet:
row 41 (row group 0): ...``. Rows are read in the file's order, the files of a directory in natural
order (:func:`~prefeval.io.source.dataset_files`), so that queries come in the same order as from the
same rows written as text, and ties are broken as for text (docids compared as bytes).

**Reading.** :func:`read_table` reads an input whole, or the row groups it is given
(:func:`row_groups` lists them, with the range of query ids each holds when the Parquet statistics
have it, for a planner that aligns partitions to query boundaries); :func:`table_blocks` reads one
row group at a time, the file open only while it is read (as :func:`~prefeval.io.source.read_blocks`
reads text), for the streamed reader; memory then holds a row group per file (pyarrow writes row
groups of at most 1,048,576 rows, polars 262,144, DuckDB 122,880). pyarrow is imported here, only when
a columnar input is met: the text path never imports it (``pip install 'prefeval[columnar]'``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from prefeval.errors import InputError
from prefeval.io.codes import distinct
from prefeval.io.columns import QRELS, RUN, WHAT, named_columns, plain_path, resolve_columns
from prefeval.io.fields import TextColumn, TextRows, byte_keys, text_keys
from prefeval.io.keys import SUMMARY_QID
from prefeval.io.source import ARROW, PARQUET, columnar_format, dataset_files, display_name
from prefeval.io.trec import QRELS_FORMAT, RUN_FORMAT, LineFormat, Qrels, RunColumns, qrels_from_columns

INSTALL = "pip install 'prefeval[columnar]'"
"""How pyarrow, which reads columnar inputs, is installed."""
_LABELS = {PARQUET: "Parquet", ARROW: "Arrow"}
_PADDING = bytes(8)
""":func:`~prefeval.io.fields.byte_keys` reads 8 bytes from a field's start, past its end too."""
BLOCK_ROWS = 1 << 17
"""The most rows of a block of :func:`table_blocks`: about what a text block of 4 MiB holds."""
HEAD_SHARE = 4
"""The first rows of a row group, up to this share of them, are read by :func:`table_blocks` as
plain values rather than as dictionaries: keying each of their ids is cheaper than decoding and keying
the row group's dictionaries, which hold every id of the group (measured on a row group of a million
rows of a recommender's run: 6,144 rows read in 11 ms plain, 40 ms as dictionaries, before keys)."""
_NOT_IN_IDS = np.zeros(256, dtype=bool)
_NOT_IN_IDS[[0, 9, 10, 11, 12, 13, 32]] = True
"""The bytes no id may hold: NUL and the whitespace that separates a text file's fields."""
_BYTE_NAMES = {0: "a NUL byte", 9: "a tab", 10: "a line end", 11: "a vertical tab", 12: "a form feed",
               13: "a carriage return", 32: "a space"}


def pyarrow_for(source: str, kind: str = PARQUET):
    """The module pyarrow, or the :class:`InputError` of an input that needs it when it is not
    installed (one line: the input, and the command that installs it)."""
    try:
        import pyarrow
        import pyarrow.compute  # noqa: F401  (the submodules used here, loaded once)
        import pyarrow.ipc  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise InputError(source, f"is {_LABELS.get(kind, 'columnar')} data, which needs pyarrow to be read; "
                                 f"install it: {INSTALL}") from None
    return pyarrow


class RowGroup(NamedTuple):
    """One row group of a columnar input: a Parquet row group, or an Arrow IPC record batch.

    ``file`` is the file that holds it (the input itself, or a file of a directory), ``index`` its
    number in that file; ``rows`` its rows, the first of which is row ``first_row`` of the whole input
    (the files of a directory one after the other) and row ``file_row`` of its file. ``qids``: the
    smallest and largest query id in it (as texts: :mod:`prefeval.io.columnar`'s ids), from the
    Parquet statistics; None when the file has none (Arrow files never do). The range bounds the
    ids; ids are ordered as the statistics order them (text as bytes, integers as numbers), which
    need not be the order in which the rows list them."""

    file: str
    index: int
    rows: int
    first_row: int
    file_row: int
    qids: tuple[str, str] | None = None


class TableFields(NamedTuple):
    """The rows of a table as the text readers give a file's (:func:`~prefeval.io.trec.read_fields`):
    the query ids, the document ids, the numbers (a run's null scores as NaN), where each row is
    (:class:`TableRows`), a run's tag (its first row's, None without a tag column), and qrels' iter
    column (None without one)."""

    qids: TextColumn
    docids: TextColumn
    values: np.ndarray
    rows: TableRows | RowNumbers
    tag: str | None = None
    iters: TextColumn | None = None


class _Places(NamedTuple):
    """Where the rows of a layout of row groups are (:class:`TableRows`, :class:`RowNumbers`)."""

    source: str
    layout: tuple[RowGroup, ...]
    single: bool
    """Whether the input is one file (a directory's errors name the file of the row)."""

    def of_row(self, row: int) -> str:
        """Where the input's row ``row`` (counted over the whole input) is, as an error says it."""
        group = next((group for group in self.layout if group.first_row <= row < group.first_row + group.rows), None)
        if group is None:
            return f"row {row:,}"
        in_file = row - group.first_row + group.file_row
        if group.file is None:  # a table given in memory
            return f"row {in_file:,}"
        file = "" if self.single else f"{os.path.basename(group.file)}, "
        return f"{file}row {in_file:,} (row group {group.index})"

    def error(self, message: str, row: int, earlier: int | None = None) -> InputError:
        """The :class:`InputError` of ``message`` at the input's row ``row`` (and the row it repeats)."""
        if earlier is not None:
            message += f"; first on {self.of_row(earlier)}"
        return InputError(self.source, f"{self.of_row(row)}: {message}")


class TableRows(NamedTuple):
    """Where the rows of a table read whole (or in given row groups) are, kept compactly as
    :class:`~prefeval.io.trec.LineNumbers` keeps a file's lines: the rows fill, in order, the rows
    of ``places.layout`` (the row groups read) but those ``skipped`` (0-based positions among the
    rows read, ascending: the rows whose score is null or NaN). The same methods as
    :class:`~prefeval.io.trec.LineNumbers`, numbers being rows of the input (counted from 0)."""

    places: _Places
    skipped: np.ndarray

    def of(self, rows) -> np.ndarray:
        """The input's row of each of ``rows`` (0-based rows of the columns)."""
        wanted = np.asarray(rows, dtype=np.int64)
        kept_before = self.skipped - np.arange(len(self.skipped))  # rows kept above each skipped one
        read = wanted + np.searchsorted(kept_before, wanted, side="right")
        firsts = np.array([group.first_row for group in self.places.layout], dtype=np.int64)
        counts = np.array([group.rows for group in self.places.layout], dtype=np.int64)
        before = np.concatenate(([0], np.cumsum(counts)))
        group = np.searchsorted(before, read, side="right") - 1
        return firsts[group] + read - before[group] if len(firsts) else read

    def without(self, rows) -> TableRows:
        """The rows once ``rows`` (0-based rows of the columns) are dropped."""
        kept_before = self.skipped - np.arange(len(self.skipped))
        wanted = np.asarray(rows, dtype=np.int64)
        read = wanted + np.searchsorted(kept_before, wanted, side="right")
        return self._replace(skipped=np.union1d(self.skipped, read))

    def error(self, source: str, message: str, row: int, earlier: int | None = None) -> InputError:
        """The :class:`InputError` of ``message`` at ``row`` (0-based rows of the columns), naming
        ``earlier`` too when given (:meth:`prefeval.io.trec.LineNumbers.error`)."""
        rows = self.of([row] if earlier is None else [row, earlier]).tolist()
        return self.places._replace(source=source).error(message, rows[0], rows[1] if len(rows) > 1 else None)


class RowNumbers(NamedTuple):
    """The input's row of each row, kept explicitly (rows gathered from row groups read one at a time,
    as :class:`~prefeval.io.trec.RowLines` keeps lines); the same methods as :class:`TableRows`."""

    places: _Places
    numbers: np.ndarray

    def of(self, rows) -> np.ndarray:
        return self.numbers[np.asarray(rows, dtype=np.int64)]

    def without(self, rows) -> RowNumbers:
        return self._replace(numbers=np.delete(self.numbers, rows))

    def error(self, source: str, message: str, row: int, earlier: int | None = None) -> InputError:
        rows = self.of([row] if earlier is None else [row, earlier]).tolist()
        return self.places._replace(source=source).error(message, rows[0], rows[1] if len(rows) > 1 else None)


def row_groups(path, fmt: LineFormat = RUN_FORMAT) -> list[RowGroup]:
    """Every row group of the columnar input ``path`` (a file, a directory: its files' groups one
    after the other, or a :class:`~prefeval.io.columns.TablePath`), from the files' footers, with
    the range of the query ids of each from the Parquet statistics when they have it
    (:class:`RowGroup`). ``fmt`` (``RUN_FORMAT`` or ``QRELS_FORMAT``) says which column holds the
    query ids (:mod:`prefeval.io.columns`). An Arrow file has no footer of row counts: its record
    batches are read (memory-mapped; decompressed, when they are compressed) to count them. ``path``
    may be an input opened already (:func:`open_input`)."""
    table = open_input(path, fmt)
    return [group for file in table.files for group in table.groups_of(file)]


def open_input(path, fmt: LineFormat = RUN_FORMAT) -> _Input:
    """The columnar input ``path`` opened, for the functions that read it a piece at a time
    (:func:`row_groups`, :func:`query_keys_of_group`: a planner's), each file's footer read once for
    all of them; an input opened already, as it is."""
    return path if isinstance(path, _Input) else _Input(path, fmt)


def read_table(path, fmt: LineFormat, parts: Sequence[RowGroup | int] | None = None) -> TableFields:
    """The rows of the columnar input ``path`` (a file, a directory, a
    :class:`~prefeval.io.columns.TablePath`), whole or only the row groups ``parts``
    (:class:`RowGroup` s from :func:`row_groups`, in any order, from any files of the input; or a
    file's row group numbers), as :class:`TableFields` (module docstring). ``fmt`` is
    ``RUN_FORMAT`` or ``QRELS_FORMAT``. Only the files that hold the parts are opened."""
    table = _Input(path, fmt)
    if parts is None:
        return table.read([(file, None) for file in table.files])
    return table.read(table.chosen(parts))


def table_blocks(path, fmt: LineFormat, rows: tuple[int, int] | None = None) -> Iterator[TableFields]:
    """The rows of the columnar input ``path`` as :func:`read_table` gives them, one row group at a
    time, each file open only while a row group of it is read, and handed over in blocks of at most
    :data:`BLOCK_ROWS` rows (memory holds a row group as Arrow stores it, and a block as prefeval does:
    a block of a million rows would hold ten times what a text block holds); their rows are
    :class:`RowNumbers`. ``rows`` (start, stop): only the input's rows start..stop-1 (counted over
    the whole input, as errors count them: a partition's, :mod:`prefeval.engine.partitioned`), read
    from the row groups that hold them alone."""
    table = _Input(path, fmt)
    layout = [(file, table.groups_of(file, reading=True)) for file in table.files]
    places = _Places(table.source, tuple(group for _, groups in layout for group in groups), table.single)
    start_row, stop_row = rows if rows is not None else (0, None)
    for file, groups in layout:
        for group in groups:
            first = max(start_row - group.first_row, 0)
            last = group.rows if stop_row is None else min(stop_row - group.first_row, group.rows)
            if rows is not None and first >= last:
                continue
            # the first rows of a row group alone are read without decoding the rest of it, and a
            # few of them without its dictionaries (made for every row of the group)
            read = table.arrow(file, [group]) if first or last == group.rows else \
                table.head(group, last, dictionaries=last > group.rows // HEAD_SHARE)
            dictionaries: dict[tuple, tuple] = {}  # the pieces of a row group share its dictionaries
            for start in range(first, max(last, first + 1), BLOCK_ROWS):
                piece = read.slice(start, min(BLOCK_ROWS, last - start))
                parts = _Parts(table.pa, fmt, table.names, places, dictionaries)
                parts.add(piece, [group], start)
                numbers = np.arange(group.first_row + start, group.first_row + start + piece.num_rows)
                yield parts.fields()._replace(rows=RowNumbers(places, numbers))


class GroupQueryKeys(NamedTuple):
    """The query ids of a row group's rows, as the keys of its distinct ids (``keys``, one per entry
    of the column's dictionary) and each row's entry (``codes``)."""

    keys: np.ndarray
    codes: np.ndarray


def query_keys_of_group(path, fmt: LineFormat, group: RowGroup, rows: int | None = None) -> GroupQueryKeys:
    """The keys of the query ids of the rows of one row group of the columnar input ``path`` (its
    first ``rows`` rows only, when given), that column alone read, as a dictionary (Parquet stores text
    so: a user's id is keyed once, not once per row): what a planner reads to find where a query's
    rows start (:mod:`prefeval.engine.partitioned`). Nothing is checked (an id that is not one is keyed
    as it is; the reader of the rows reports it), and nulls have the key of no id (0). ``path`` may
    be an input opened already (:func:`open_input`)."""
    table = open_input(path, fmt)
    name = table.names["qid"]
    pa = table.pa
    keys, codes = [], []
    size = 0
    read = table.head(group, rows, [name], dictionaries=False) if rows is not None else \
        table.arrow(group.file, [group], columns=[name])
    for chunk in read.column(name).chunks:
        if not pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary_encode()
        dictionary = chunk.dictionary
        encoded = _encoded(pa, dictionary, _unchecked)[0]
        indices = chunk.indices
        indices = (indices.fill_null(-1) if indices.null_count else indices).to_numpy(zero_copy_only=False)
        indices = indices.astype(np.int64)
        keys.append(np.append(encoded, np.uint64(0)))
        codes.append(np.where(indices >= 0, indices, len(encoded)) + size)
        size += len(encoded) + 1
    if not keys:
        return GroupQueryKeys(np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64))
    return GroupQueryKeys(np.concatenate(keys), np.concatenate(codes))


def _unchecked(row, text, problem) -> None:
    """The ``error`` of :func:`_encoded` that goes on: the planner checks nothing."""
    return None


def read_table_run(path, run_id: str) -> RunColumns:
    """A columnar run (:func:`read_table`) as :class:`~prefeval.io.trec.RunColumns`."""
    return run_columns(read_table(path, RUN_FORMAT), display_name(plain_path(path)), run_id)


def run_columns(fields: TableFields, source: str, run_id: str) -> RunColumns:
    """:class:`~prefeval.io.trec.RunColumns` of a run's :class:`TableFields`, its rows scored null or
    NaN dropped (as a run file's ``nan`` lines are)."""
    qids, docids, scores, rows = fields.qids, fields.docids, fields.values, fields.rows
    unscored = np.isnan(scores)
    if unscored.any():
        rows = rows.without(np.flatnonzero(unscored))
        qids, docids, scores = qids[~unscored], docids[~unscored], scores[~unscored]
    return RunColumns(source=source, run_id=run_id, qids=qids, docids=docids, scores=scores, lines=rows,
                      tag=fields.tag)


def read_table_qrels(path, binary_relevance: float | None = None, relevance_floor: float | None = None,
                     keep_empty: bool = False) -> Qrels:
    """Columnar qrels (:func:`read_table`) as :class:`~prefeval.io.trec.Qrels`
    (:func:`~prefeval.io.trec.qrels_from_columns`: ``binary_relevance``, ``relevance_floor``,
    ``keep_empty``)."""
    return qrels_of(read_table(path, QRELS_FORMAT), display_name(plain_path(path)), binary_relevance,
                    relevance_floor, keep_empty)


def qrels_of(fields: TableFields, source: str, binary_relevance: float | None = None,
             relevance_floor: float | None = None, keep_empty: bool = False) -> Qrels:
    """:class:`~prefeval.io.trec.Qrels` of the :class:`TableFields` of qrels; a query named ``all`` is
    an error naming its row."""
    named_all = np.flatnonzero(fields.qids.keys == _SUMMARY_KEY)
    if len(named_all):
        raise fields.rows.error(source, f"a query is named {SUMMARY_QID!r}, the id that every summary line (the "
                                        "means over queries) has; rename the query", int(named_all[0]))
    return qrels_from_columns(source, fields.qids, fields.docids, fields.values, binary_relevance, relevance_floor,
                              keep_empty=keep_empty, iters=fields.iters)


def table_fields(table, source: str, fmt: LineFormat, columns: Mapping[str, str] | None = None) -> TableFields:
    """The :class:`TableFields` of a pyarrow Table (or RecordBatch) given in memory, its columns named
    by ``columns`` or found by their aliases; errors name ``source`` and the row."""
    pa = pyarrow_for(source)
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    names = resolve_columns(table.column_names, fmt.kind, columns or {}, source)
    group = RowGroup(None, 0, table.num_rows, 0, 0)
    places = _Places(source, (group,), True)
    parts = _Parts(pa, fmt, names, places)
    parts.add(table, [group])
    return parts.fields()


_SUMMARY_KEY = text_keys([SUMMARY_QID])[0]


class _FileInfo(NamedTuple):
    """What a file's footer says: its schema, the rows of each row group, the columns of the roles,
    and (Parquet) its metadata."""

    schema: object
    counts: list[int]
    names: dict[str, str]
    metadata: object | None


class _Input:
    """A columnar input (module docstring): its files and the columns read, each file's footer read
    when the file is first needed."""

    def __init__(self, path, fmt: LineFormat):
        self.fmt = fmt
        self.named = named_columns(path)
        self.path = os.fspath(plain_path(path))
        self.source = display_name(self.path)
        self.format = columnar_format(self.path)
        if self.format is None:
            raise InputError(self.source, "is not a Parquet or Arrow file")
        self.pa = pyarrow_for(self.source, self.format)
        self.single = not os.path.isdir(self.path)
        self.files = [self.path] if self.single else dataset_files(self.path)
        self._info: dict[str, _FileInfo] = {}
        self.names = self.info(self.files[0]).names

    def file_source(self, file: str) -> str:
        """How a message names ``file``: as the input was given, or (a file of a directory) its path."""
        return self.source if self.single else display_name(file)

    def info(self, file: str) -> _FileInfo:
        """The footer of ``file`` (read once); its columns must be those of the input's first file."""
        if file in self._info:
            return self._info[file]
        pa, source = self.pa, self.file_source(file)
        kind = self.format if self.single else columnar_format(file)
        if kind != self.format:
            raise InputError(source, f"is not a {_LABELS[self.format]} file, as the first file of {self.source} is")
        with _reported(pa, source, kind):
            if kind == PARQUET:
                metadata = pa.parquet.read_metadata(file)
                schema = metadata.schema.to_arrow_schema()
                counts = [metadata.row_group(index).num_rows for index in range(metadata.num_row_groups)]
            else:
                metadata = None
                with pa.memory_map(file) as handle:
                    reader = pa.ipc.open_file(handle)
                    schema = reader.schema
                    counts = [reader.get_batch(index).num_rows for index in range(reader.num_record_batches)]
        names = resolve_columns(schema.names, self.fmt.kind, self.named, source)
        first = self._info[self.files[0]].names if self._info else names
        if names != first:
            role = next(role for role in {**first, **names} if first.get(role) != names.get(role))
            raise InputError(source, f"its {WHAT[role]}s are in column {names.get(role)!r}, those of the first file "
                                     f"of {self.source} in {first.get(role)!r}")
        self._info[file] = info = _FileInfo(schema, counts, names, metadata)
        return info

    def groups_of(self, file: str, reading: bool = False) -> list[RowGroup]:
        """The row groups of ``file``, numbered in the whole input (the footers of the files before it
        are read for their row counts)."""
        before = 0
        for other in self.files:
            if other == file:
                break
            before += sum(self.info(other).counts)
        info = self.info(file)
        bounds = self._statistics(file) if info.metadata is not None and not reading else [None] * len(info.counts)
        groups, row = [], 0
        for index, (count, qids) in enumerate(zip(info.counts, bounds)):
            groups.append(RowGroup(file, index, count, before + row, row, qids))
            row += count
        return groups

    def _statistics(self, file: str) -> list[tuple[str, str] | None]:
        """The smallest and largest query id of each row group of a Parquet file, as texts, from its
        statistics (None where they lack them)."""
        info = self.info(file)
        metadata, column = info.metadata, info.names["qid"]
        integers = _id_kind(self.pa, info.schema.field(column).type) == "integer"
        where = next((i for i in range(metadata.num_columns) if metadata.schema.column(i).path == column), None)
        found: list[tuple[str, str] | None] = []
        for index in range(metadata.num_row_groups):
            statistics = metadata.row_group(index).column(where).statistics if where is not None else None
            if statistics is None or not statistics.has_min_max:
                found.append(None)
                continue
            bounds = [statistics.min, statistics.max]
            if all(isinstance(bound, bytes) for bound in bounds):
                found.append(tuple(bound.decode("utf-8", "surrogateescape") for bound in bounds))
            elif all(isinstance(bound, str) for bound in bounds):
                found.append(tuple(bounds))
            elif integers and all(isinstance(bound, int) for bound in bounds):
                found.append(tuple(str(bound) for bound in bounds))
            else:
                found.append(None)
        return found

    def chosen(self, parts: Sequence[RowGroup | int]) -> list[tuple[str, list[RowGroup]]]:
        """The row groups ``parts`` names, as runs of groups of one file, in order."""
        runs: list[tuple[str, list[RowGroup]]] = []
        for part in parts:
            if isinstance(part, RowGroup) and part.file in self.files:
                info = self.info(part.file)
                found = part if 0 <= part.index < len(info.counts) and info.counts[part.index] == part.rows else None
            elif self.single and isinstance(part, (int, np.integer)) and not isinstance(part, bool):
                groups = self.groups_of(self.path, reading=True)
                found = groups[int(part)] if 0 <= part < len(groups) else None
            else:
                found = None
            if found is None:
                raise InputError(self.source, f"has no row group {part!r}")
            if runs and runs[-1][0] == found.file:
                runs[-1][1].append(found)
            else:
                runs.append((found.file, [found]))
        return runs

    def read(self, runs: list[tuple[str, list[RowGroup] | None]]) -> TableFields:
        """The :class:`TableFields` of the row groups of each (file, groups) of ``runs`` (None: all of
        the file's), one file open at a time."""
        runs = [(file, self.groups_of(file, reading=True) if groups is None else groups) for file, groups in runs]
        groups_read = [group for _, groups in runs for group in groups]
        parts = None
        for file, groups in runs:
            if parts is None:
                parts = _Parts(self.pa, self.fmt, self.names, _Places(self.source, (), self.single),
                               rows=sum(group.rows for group in groups_read))
            parts.add(self.arrow(file, groups), groups)
        places = _Places(self.source, tuple(groups_read), self.single)
        if parts is None:
            parts = _Parts(self.pa, self.fmt, self.names, places)
        return parts.fields()._replace(rows=TableRows(places, _NO_ROWS))

    def head(self, group: RowGroup, rows: int, columns: list[str] | None = None, dictionaries: bool = True):
        """The role columns (or ``columns``) of the first ``rows`` rows of the row group ``group``,
        decoding only the pages that hold them (a Parquet file); text read as dictionaries, as
        :meth:`arrow` reads it, unless not ``dictionaries`` (a few rows of a planner's: a row group's
        dictionary would be read whole)."""
        pa, info = self.pa, self.info(group.file)
        columns = list(dict.fromkeys(info.names.values())) if columns is None else columns
        if info.metadata is None:
            return self.arrow(group.file, [group], columns).slice(0, rows)
        with _reported(pa, self.file_source(group.file), self.format):
            handle = pa.parquet.ParquetFile(group.file, metadata=info.metadata,
                                            read_dictionary=self._text(info) if dictionaries else None)
            try:
                batches, read = [], 0
                for batch in handle.iter_batches(batch_size=max(min(rows, BLOCK_ROWS), 1), row_groups=[group.index],
                                                 columns=columns):
                    batches.append(batch.slice(0, rows - read))
                    read += batches[-1].num_rows
                    if read >= rows:
                        break
            finally:
                handle.close()
        return pa.Table.from_batches(batches) if batches else self.arrow(group.file, [group], columns).slice(0, rows)

    def _text(self, info: _FileInfo) -> list[str]:
        """The columns of ids held as text (not already dictionaries), read as dictionaries."""
        pa = self.pa
        return [name for role, name in info.names.items() if role in _TEXT_ROLES
                and _id_kind(pa, info.schema.field(name).type) == "text"
                and not pa.types.is_dictionary(info.schema.field(name).type)]

    def arrow(self, file: str, groups: list[RowGroup], columns: list[str] | None = None):
        """The role columns (or ``columns``) of the row groups ``groups`` of ``file``, as a pyarrow
        Table (text read as dictionaries, as Parquet stores it)."""
        pa, info = self.pa, self.info(file)
        columns = list(dict.fromkeys(info.names.values())) if columns is None else columns
        indexes = [group.index for group in groups]
        with _reported(pa, self.file_source(file), self.format):
            if info.metadata is not None:
                handle = pa.parquet.ParquetFile(file, metadata=info.metadata, read_dictionary=self._text(info))
                try:
                    if indexes == list(range(len(info.counts))):
                        return handle.read(columns=columns)
                    return handle.read_row_groups(indexes, columns=columns)
                finally:
                    handle.close()
            with pa.memory_map(file) as handle:
                reader = pa.ipc.open_file(handle)
                batches = [reader.get_batch(index).select(columns) for index in indexes]
                return pa.Table.from_batches(batches, schema=info.schema.select(columns) if not batches else None)


_NO_ROWS = np.empty(0, dtype=np.int64)
_TEXT_ROLES = ("qid", "docid", "tag", "iter")
"""The roles whose text columns are read as dictionaries, as Parquet stores text: their ids are keyed
once per distinct id of a row group (:class:`_TextParts`)."""


class _reported:
    """pyarrow's refusals to read a file (corrupt, truncated), as :class:`InputError` s naming it."""

    def __init__(self, pa, source: str, kind: str):
        self.pa, self.source, self.kind = pa, source, kind

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if error is not None and isinstance(error, (OSError, self.pa.ArrowException)) \
                and not isinstance(error, InputError):
            text = str(error).strip().splitlines()
            reason = text[0] if text else type(error).__name__
            raise InputError(self.source, f"cannot be read as {_LABELS[self.kind]} ({reason})") from None
        return False


class _RowMap:
    """The input's row of each row of a table read from ``groups`` (in order), whose first row is row
    ``skip`` of the groups' rows: a row's group found by the groups' running counts."""

    def __init__(self, groups: Sequence[RowGroup], skip: int = 0):
        self.firsts = np.array([group.first_row for group in groups], dtype=np.int64)
        self.before = np.concatenate(([0], np.cumsum([group.rows for group in groups]))).astype(np.int64) - skip

    def __getitem__(self, row: int) -> int:
        group = int(np.searchsorted(self.before, row, side="right")) - 1
        return int(self.firsts[group] + row - self.before[group])


class _Parts:
    """The :class:`TableFields` of tables added one after the other (the files of a directory, whose
    id columns may differ in type): ids into one :class:`~prefeval.io.fields.TextColumn` each."""

    def __init__(self, pa, fmt: LineFormat, names: dict[str, str], places: _Places,
                 dictionaries: dict[tuple, tuple] | None = None, rows: int | None = None):
        """``rows``: how many rows the tables added will hold in all, when known (:class:`_TextParts`)."""
        self.pa, self.fmt, self.names, self.places = pa, fmt, names, places
        dictionaries = {} if dictionaries is None else dictionaries
        self.qids, self.docids = _TextParts(dictionaries, rows), _TextParts(dictionaries, rows)
        self.iters = _TextParts(dictionaries, rows) if "iter" in names else None
        self.values: list[np.ndarray] = []
        self.tag: str | None = None
        self.rows = 0

    def add(self, table, groups: Sequence[RowGroup], skip: int = 0) -> None:
        """The rows of ``table``, read from ``groups`` from their row ``skip`` on (for the rows errors name)."""
        pa, names = self.pa, self.names
        places = self.places._replace(layout=tuple(groups))
        rows = _RowMap(groups, skip)
        for parts, role in ((self.qids, "qid"), (self.docids, "docid"), (self.iters, "iter")):
            if parts is not None:
                _ids(pa, parts, table.column(names[role]), names[role], role, places, rows)
        value = self.fmt.number_field[0]
        self.values.append(_numbers(pa, table.column(names[value]), names[value], self.fmt, places, rows))
        if "tag" in names and not self.rows and table.num_rows:
            first = table.column(names["tag"])[0].as_py()
            self.tag = (first.decode("utf-8", "surrogateescape") if isinstance(first, bytes)
                        else None if first is None else str(first))
        self.rows += table.num_rows

    def fields(self) -> TableFields:
        values = np.concatenate(self.values) if len(self.values) != 1 else self.values[0]
        return TableFields(self.qids.column(), self.docids.column(), values if len(self.values) else np.empty(0),
                           TableRows(self.places, _NO_ROWS), self.tag,
                           self.iters.column() if self.iters is not None else None)


def _id_kind(pa, kind) -> str | None:
    """``text`` or ``integer`` for the Arrow types that may hold ids (module docstring), None otherwise."""
    if pa.types.is_dictionary(kind):
        return _id_kind(pa, kind.value_type)
    if pa.types.is_integer(kind):
        return "integer"
    if any(test(kind) for test in (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary,
                                   pa.types.is_large_binary, pa.types.is_string_view, pa.types.is_binary_view)):
        return "text"
    return None


def _ids(pa, parts: _TextParts, column, name: str, role: str, places: _Places, rows: _RowMap) -> None:
    """Add a column of ids (a ChunkedArray) to ``parts``, checked (module docstring); ``rows``: the
    input's row of each of its rows, for errors."""
    if _id_kind(pa, column.type) is None:
        raise InputError(places.source, f"column {name!r} holds {column.type} values, not {WHAT[role]}s: ids must be "
                                        "text or integers")
    if column.null_count:
        raise places.error(f"column {name!r} has no {WHAT[role]} (null)", rows[_first_null(column)])
    offset = 0
    for chunk in column.chunks:
        if len(chunk):
            parts.add(pa, chunk, lambda at, text, problem, start=offset: places.error(
                f"the {WHAT[role]} {text} in column {name!r} {problem}", rows[start + at]))
        offset += len(chunk)


def _first_null(column) -> int:
    """The first row of a ChunkedArray that is null."""
    offset = 0
    for chunk in column.chunks:
        if chunk.null_count:
            return offset + int(np.flatnonzero(~chunk.is_valid().to_numpy(zero_copy_only=False))[0])
        offset += len(chunk)
    raise ValueError("no null")


class _TextParts:
    """The keys, starts and lengths of the ids of chunks, into byte buffers kept once each: a
    dictionary that several chunks share is kept, and its keys computed, once.

    When the number of ``rows`` to come is known, the keys, starts and lengths of every row are
    written straight into arrays made once for them all, a chunk's at its place
    (:class:`~prefeval.io.fields.TextRows`); otherwise each chunk's are kept and joined at the end."""

    def __init__(self, dictionaries: dict[tuple, tuple], rows: int | None = None):
        self.keys: list[np.ndarray] = []
        self.starts: list[np.ndarray] = []
        self.lengths: list[np.ndarray] = []
        self.buffers: list[bytes] = []
        self.size = 0
        self.dictionaries = dictionaries
        """The keys, starts and lengths of each dictionary met, into its bytes (shared by the columns of a
        row group, which may share a dictionary with the pieces before them)."""
        self.kept: dict[tuple, int] = {}
        """Where the bytes of each dictionary met are among :attr:`buffers`."""
        self.every_row = None if rows is None else TextRows(rows)
        """The keys, starts and lengths of every row, when their number is known."""

    def add(self, pa, chunk, error) -> None:
        """The ids of ``chunk`` (an Array without nulls); ``error(row, id, problem)`` makes the
        :class:`InputError` of the chunk's row ``row``."""
        if pa.types.is_dictionary(chunk.type):
            dictionary = chunk.dictionary
            identity = (tuple(buffer.address if buffer is not None else 0 for buffer in dictionary.buffers()),
                        dictionary.offset, len(dictionary))
            if identity not in self.dictionaries:
                bad: dict[int, tuple[str, str]] = {}
                encoded = _encoded(pa, dictionary, lambda row, *problem: bad.setdefault(row, problem) and None)
                # the dictionary is kept with them: its buffers' addresses stay its own while they are used
                self.dictionaries[identity] = (*encoded, bad, dictionary)
            keys, starts, lengths, data, bad, _ = self.dictionaries[identity]
            indices = chunk.indices.to_numpy(zero_copy_only=False)
            if bad:
                used = np.flatnonzero(np.isin(indices, list(bad)))
                if len(used):
                    raise error(int(used[0]), *bad[int(indices[used[0]])])
            if identity not in self.kept:
                self.kept[identity] = self._keep(data)
            self._put((keys, starts, lengths), indices, self.kept[identity])
        else:
            keys, starts, lengths, data = _encoded(pa, chunk, error)
            self._put((keys, starts, lengths), None, self._keep(data))

    def _put(self, columns: tuple[np.ndarray, np.ndarray, np.ndarray], indices: np.ndarray | None, shift: int) -> None:
        """Add a chunk's (keys, starts, lengths): the rows ``indices`` of them (a dictionary's), or all;
        the starts moved by ``shift``, where the chunk's bytes start among those kept."""
        if self.every_row is not None:
            self.every_row.add(columns, len(indices if indices is not None else columns[0]), indices, shift)
            return
        keys, starts, lengths = (column[indices] for column in columns) if indices is not None else columns
        self.keys.append(keys)
        self.starts.append(starts + shift)
        self.lengths.append(lengths)

    def _keep(self, data: bytes) -> int:
        """Keep ``data``; where it starts among the bytes kept."""
        self.buffers.append(data)
        self.size += len(data)
        return self.size - len(data)

    def column(self) -> TextColumn:
        """The ids added, as one column."""
        data = self.buffers[0] if len(self.buffers) == 1 else b"".join(self.buffers)
        if self.every_row is not None:
            return self.every_row.column(data) if len(self.every_row) else TextColumn.of_texts([])
        if not self.keys:
            return TextColumn.of_texts([])
        return TextColumn(np.concatenate(self.keys), data, np.concatenate(self.starts), np.concatenate(self.lengths))


def _encoded(pa, chunk, error) -> tuple[np.ndarray, np.ndarray, np.ndarray, bytes]:
    """(keys, starts, lengths, bytes) of a chunk of text or integers, each id checked (module
    docstring; ``error(row, id, problem)`` makes the error, or returns None to go on)."""
    if _id_kind(pa, chunk.type) == "integer":
        chunk = pa.compute.cast(chunk, pa.string())
    elif pa.types.is_string_view(chunk.type) or pa.types.is_binary_view(chunk.type):
        chunk = chunk.cast(pa.large_binary())
    large = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
    _, offsets_buffer, data_buffer = chunk.buffers()[:3]
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64 if large else np.int32)
    offsets = offsets[chunk.offset:chunk.offset + len(chunk) + 1].astype(np.int64)
    low, high = int(offsets[0]), int(offsets[-1])
    data = b"".join((memoryview(data_buffer)[low:high] if data_buffer is not None else b"", _PADDING))
    buffer = np.frombuffer(data, np.uint8)
    starts, lengths = offsets[:-1] - low, np.diff(offsets)
    _check_ids(buffer[:high - low], starts, lengths, error)
    return byte_keys(buffer, starts, lengths), starts, lengths, data


def _check_ids(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, error) -> None:
    """Raise ``error(row, id, problem)`` (the id quoted) for the first id that is empty or holds a byte no id may hold
    (:data:`_NOT_IN_IDS`); when ``error`` returns None instead, go on to the next (a dictionary's
    entries, an error only if a row uses them)."""
    empty = lengths == 0
    bad_bytes = np.flatnonzero(_NOT_IN_IDS[data])
    if not empty.any() and not len(bad_bytes):
        return
    rows = np.searchsorted(starts, bad_bytes, side="right") - 1
    for row in distinct(np.concatenate((np.flatnonzero(empty), rows))).tolist():
        if lengths[row] == 0:
            problem = error(row, "''", "is empty")
        else:
            text = data[starts[row]:starts[row] + lengths[row]].tobytes()
            byte = _BYTE_NAMES[int(text[int(_NOT_IN_IDS[np.frombuffer(text, np.uint8)].argmax())])]
            problem = error(row, repr(text.decode("utf-8", "replace")[:40]),
                            f"holds {byte}: an id is one word, as in a text file")
        if problem is not None:
            raise problem


def _numbers(pa, column, name: str, fmt: LineFormat, places: _Places, rows: _RowMap) -> np.ndarray:
    """The grades or scores of a column (a ChunkedArray) as float64, checked (module docstring)."""
    role, kind = fmt.number_field[0], column.type
    numeric = pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind) or (
        fmt.kind == QRELS and pa.types.is_boolean(kind)) or (fmt.kind == RUN and pa.types.is_null(kind))
    if not numeric:
        shown = "text" if _id_kind(pa, kind) == "text" else f"{kind} values"
        raise InputError(places.source, f"column {name!r} holds {shown}, not {role}s: {role}s must be numbers "
                                        "(integers or floating point)")
    if column.null_count and fmt.kind == QRELS:
        raise places.error(f"column {name!r} has no {role} (null)", rows[_first_null(column)])
    numbers = np.array(pa.compute.cast(column, pa.float64(), safe=False).to_numpy(), dtype=np.float64)
    refused = np.flatnonzero(fmt.refused(numbers))
    if len(refused):
        value = float(numbers[refused[0]])
        what = "is not a number" if value != value else f"is out of range: {fmt.limit_text}"
        raise places.error(f"{role} {value!r} in column {name!r} {what}", rows[int(refused[0])])
    return numbers
