"""TREC qrels and run files.

* qrels: ``qid iter docid grade``, exactly four fields. ``iter`` is ``0``, ``Q0`` or a subtopic id; a
  document's grade is its maximum over the lines that judge it, and a query judged on several
  subtopics keeps its judgments per subtopic too (:mod:`prefeval.io.subtopics`).
* run: ``qid Q0 docid rank score [tag ...]``. Only qid, docid and score are used (the rank column is
  ignored, as trec_eval ignores it); fields after the tag (trec_eval's run id) are ignored, as
  trec_eval ignores them, and the tag may be left out; a line whose score is ``nan`` is skipped.

**The language of both files**, which both reading paths accept exactly (a hypothesis test feeds
them the same bytes):

* Lines end with ``\\n`` or ``\\r\\n``. Any other carriage return is an error: old Mac files (``\\r``
  alone) would otherwise read as one long line, and trec_eval reads them so.
* Fields are separated by runs of the bytes C's ``isspace`` accepts within a line, as trec_eval's:
  space, tab, vertical tab and form feed. Every other byte belongs to a field, and a field's bytes
  are kept exactly: text that is not UTF-8 is decoded with ``surrogateescape``, which
  ``str.encode("utf-8", "surrogateescape")`` undoes (compare ids as those bytes to order them as
  trec_eval does; code point order differs from byte order once such bytes occur).
* A NUL byte is an error (trec_eval cannot read one: its lines are C strings).
* Blank lines, and lines whose first field starts with ``#`` (as trec_eval 10 skips them), are skipped.
* A number (a grade or a score) is written as C's ``strtod`` reads one whole, in decimal or
  scientific notation, or ``inf``, ``infinity``, ``nan`` in any case, each with an optional sign
  (:mod:`prefeval.io.numbers`). A run's score may use a decimal comma instead of the point. Python's
  ``float`` accepts more (``1_000``, digits of other scripts, surrounding Unicode spaces), trec_eval
  does not (its ``atof`` reads ``1_000`` as 1): such fields are errors here, not numbers.
* Grades must be finite and at most :data:`MAX_GRADE` in magnitude (beyond it they are not exact
  integers, and gains overflow); ``nan`` is not a grade. Scores may be infinite.

A UTF-8 byte-order mark and gzip compression are handled by :mod:`prefeval.io.source`.

Reading has two paths that accept exactly the same files (files of the most common shape take a
third, :func:`~prefeval.io.fields.split_fields`, which reads them without a Python string per field
and gives way to these two for any other text: :func:`read_fields`). The fast path hands the bytes
to pandas' C tokeniser (with a one-character separator when the file allows it, which is twice as
fast as ``\\s+``) and checks the shape of the result; files with a vertical tab, a form feed, a NUL
byte or a lone carriage return, which pandas splits differently, never take it. Whenever the fast
path fails or finds anything odd, the slow path, :func:`scan_lines`, reads the file line by line in
Python. Strictly (for evaluation, :func:`read_columns`) it raises an :class:`InputError` naming the
first bad line, or (for the rare valid file that pandas cannot take) returns the columns itself.
Leniently (for ``prefeval check``, :func:`read_columns_leniently`) it keeps the good lines and counts
the bad ones.

Nothing is read twice: what an error found after reading (a document twice in a query of a run, a
query named ``all``) needs to name its lines is kept as :class:`LineNumbers`, which costs nothing for
a file whose every line is a row.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from prefeval.errors import InputError
from prefeval.io.codes import factorize, has_repeats
from prefeval.io.fields import FieldLayout, TextColumn, pair_keys, split_fields
from prefeval.io.keys import SUMMARY_QID
from prefeval.io.numbers import NAN_SPELLINGS, NUMBER, NUMBER_WITH_COMMA
from prefeval.io.source import UTF8_BOM, display_name, read_bytes
from prefeval.io.subtopics import Repeated, Subtopics, subtopic_judgments

if TYPE_CHECKING:
    import pandas as pd

MAX_GRADE = 2.0**53
"""The largest grade magnitude: beyond it grades are no longer exact integers, and sums of gains
could overflow."""

_COMMENT_LINES = re.compile(rb"(?m)^[ \t]*#[^\n]*(?:\n|$)")
_NEXT_LINE_WITHOUT_FIELDS = re.compile(rb"\n[ \t\v\f\r]*(?=[#\n]|\Z)")
"""A line end followed by a line that is blank or a comment (the search runs from line end to line end)."""
_NOT_BLANK = re.compile(rb"\S")
_ENCODING = dict(encoding="utf-8", encoding_errors="surrogateescape")


class ShapeHint(NamedTuple):
    """A line of ``fields`` to ``most_fields`` fields (None: any more) where a format expects another
    number may be a line of another kind of file: ``text`` says which."""

    fields: int
    most_fields: int | None
    text: str


class LineFormat(NamedTuple):
    """The shape of one kind of TREC file, for both reading paths and for error messages.

    ``max_fields`` None: any number of fields from ``min_fields`` on, those after the used ones
    ignored. ``number_limit``: the largest magnitude a number may have (None: any, infinities
    included). ``shape_hints``: what a line of a wrong number of fields may be instead, by its
    number of fields (:class:`ShapeHint`); a count no hint names gets none.
    """

    kind: str
    layout: str
    min_fields: int
    max_fields: int | None
    text_fields: dict[str, int]
    number_field: tuple[str, int]
    nan_allowed: bool
    decimal_comma: bool
    number_limit: float | None
    limit_text: str
    shape_hints: tuple[ShapeHint, ...] = ()

    @property
    def syntax(self) -> re.Pattern:
        return NUMBER_WITH_COMMA if self.decimal_comma else NUMBER

    def read_number(self, text: bytes) -> tuple[float, str | None]:
        """The number in a grade or score field, and what is wrong with it (None when nothing is):
        not :data:`~prefeval.io.numbers.NUMBER` syntax (a decimal comma only where ``decimal_comma``),
        or refused by :meth:`refused`."""
        if self.syntax.fullmatch(text) is None:
            return np.nan, f"{self.number_field[0]} {_shown(text)!r} is not a number"
        number = float(text.replace(b",", b".") if self.decimal_comma else text)
        if self.refused(number):
            what = "is not a number" if number != number else f"is out of range: {self.limit_text}"
            return number, f"{self.number_field[0]} {_shown(text)!r} {what}"
        return number, None

    def refused(self, numbers):
        """Which numbers (an array of them, or one float) this format refuses although they are
        numbers: NaN where it is not allowed, anything beyond ``number_limit``."""
        refused = (numbers != numbers) & (not self.nan_allowed)
        if self.number_limit is not None:
            refused = refused | (abs(numbers) > self.number_limit)
        return refused

    def field_count_error(self, fields: list[bytes]) -> str:
        """What is wrong with a line of the wrong number of ``fields``, with a hint only where the
        line's shape supports one: the kind of file that has that many fields (``shape_hints``), or
        commas in a line of one field (a CSV file: TREC files separate fields by whitespace)."""
        if self.max_fields is None:
            expected = f"at least {self.min_fields}"
        elif self.min_fields == self.max_fields:
            expected = f"{self.min_fields}"
        else:
            expected = f"{self.min_fields} to {self.max_fields}"
        found = len(fields)
        message = f"expected {expected} fields ({self.layout}), found {found}"
        if found == 1 and b"," in fields[0]:
            return message + "; fields are separated by spaces or tabs, not commas: is this a CSV file?"
        for hint in self.shape_hints:
            if hint.fields <= found <= (hint.most_fields or found):
                return f"{message}; {hint.text}"
        return message

    @property
    def field_layout(self) -> FieldLayout:
        """The fields as :func:`~prefeval.io.fields.split_fields` finds them."""
        return FieldLayout(texts=tuple(self.text_fields.values()), number=self.number_field[1],
                           min_fields=self.min_fields, max_fields=self.max_fields, decimal_comma=self.decimal_comma)

    @property
    def used_fields(self) -> int:
        """How many leading fields hold what is read (the others are ignored)."""
        return max([*self.text_fields.values(), self.number_field[1]]) + 1


QRELS_FORMAT = LineFormat(
    kind="qrels",
    layout="qid iter docid grade",
    min_fields=4,
    max_fields=4,
    text_fields={"qid": 0, "docid": 2},
    number_field=("grade", 3),
    nan_allowed=False,
    decimal_comma=False,
    number_limit=MAX_GRADE,
    limit_text="grades must be finite and at most 2^53 in magnitude",
    shape_hints=(ShapeHint(3, 3, "is the iter column missing? (trec_eval reads qid 0 docid grade)"),
                 ShapeHint(5, 5, "are these preference judgments (--rel-format prefs), or a run given as qrels?"),
                 ShapeHint(6, None, "is this a run file given as qrels?")),
)

QRELS_ITER_FORMAT = QRELS_FORMAT._replace(text_fields={"qid": 0, "docid": 2, "iter": 1})
"""The qrels read with their iter column too (the subtopic of a diversity qrels): :func:`read_qrels`."""

RUN_FORMAT = LineFormat(
    kind="run",
    layout="qid Q0 docid rank score [tag ...]",
    min_fields=5,
    max_fields=None,
    text_fields={"qid": 0, "docid": 2},
    number_field=("score", 4),
    nan_allowed=True,
    decimal_comma=True,
    number_limit=None,
    limit_text="",
    shape_hints=(ShapeHint(4, 4, "is this a qrels file given as a run?"),),
)


_NO_LINES = np.empty(0, dtype=np.int64)
_NO_LINES.flags.writeable = False


class LineNumbers(NamedTuple):
    """Where the rows of a file's columns are, kept compactly: the rows fill, in order, the lines
    that are not ``skipped`` (1-based numbers, ascending: blank lines, comments, lines scored
    ``nan``). A file whose every line is a row skips none and keeps nothing."""

    skipped: np.ndarray = _NO_LINES

    @classmethod
    def of_file(cls, data: bytes, rows: int) -> LineNumbers:
        """The line numbers of the ``rows`` rows read from ``data`` (every line that has fields)."""
        lines = data.count(b"\n") + (not data.endswith(b"\n") and len(data) > 0)
        if rows == lines:
            return cls()
        end = data.find(b"\n")
        first_fields = data[:end if end >= 0 else len(data)].split(None, 1)
        skipped = [1] if data and (not first_fields or first_fields[0].startswith(b"#")) else []
        line, position = 1, 0
        for match in _NEXT_LINE_WITHOUT_FIELDS.finditer(data):
            start = match.start()
            if start + 1 == len(data):
                break  # the end of the file, not a line
            line += data.count(b"\n", position, start + 1)
            position = start + 1
            skipped.append(line)
        return cls(np.array(skipped, dtype=np.int64))

    def of(self, rows) -> np.ndarray:
        """The line of each row (0-based row numbers)."""
        wanted = np.asarray(rows, dtype=np.int64) + 1
        rows_before = self.skipped - np.arange(1, len(self.skipped) + 1)  # rows above each skipped line
        return wanted + np.searchsorted(rows_before, wanted, side="left")

    def without(self, rows) -> LineNumbers:
        """The line numbers once ``rows`` are dropped (their lines skipped)."""
        return LineNumbers(np.union1d(self.skipped, self.of(rows)))


class RowLines(NamedTuple):
    """The line of each row, kept explicitly (rows gathered from blocks of a file); the same
    methods as :class:`LineNumbers`."""

    numbers: np.ndarray

    @classmethod
    def of_block(cls, data: bytes, rows: int, first_line: int) -> RowLines:
        """The lines of the ``rows`` rows read from a block whose first line is ``first_line``."""
        return cls(LineNumbers.of_file(data, rows).of(np.arange(rows)) + (first_line - 1))

    def of(self, rows) -> np.ndarray:
        return self.numbers[np.asarray(rows, dtype=np.int64)]

    def without(self, rows) -> RowLines:
        return RowLines(np.delete(self.numbers, rows))


class Qrels(NamedTuple):
    """Relevance judgments, reduced to what evaluation needs: the relevant documents per query.

    Queries are numbered 0..Q-1 in order of first appearance in the file; only queries with at
    least one relevant document (grade > 0 after ``binary_relevance`` / ``relevance_floor``) are
    kept, the others are listed in ``dropped_qids`` (unless the qrels were read with
    ``keep_empty``, trec_eval's convention: then every query of the file is kept, in order of first
    appearance, and ``dropped_qids`` is empty). The relevant documents of query ``q`` are
    ``docids[offsets[q]:offsets[q + 1]]``, in order of first appearance, with their ``grades``.
    ``num_judged[q]`` counts the documents judged for query ``q``, whatever their grade (None when
    the qrels were not read from judgments, as in some tests).

    The other documents of the qrels (grade <= 0: judged non-relevant, or negative: in the pool but
    not judged, trec_eval's -1 and -2) are ``other_docids[other_offsets[q]:other_offsets[q + 1]]``
    with their ``other_grades`` (None when not read from judgments).

    Documents are needed mostly to be found in runs, by key: ``docids`` and ``other_docids`` are
    :class:`~prefeval.io.fields.TextColumn` s, their text read on demand (``docids.tolist()``).
    """

    source: str
    qids: list[str]
    dropped_qids: list[str]
    offsets: np.ndarray
    docids: TextColumn
    grades: np.ndarray
    num_judged: np.ndarray | None = None
    other_offsets: np.ndarray | None = None
    other_docids: TextColumn | None = None
    other_grades: np.ndarray | None = None
    top_grade: float | None = None
    """The largest grade of the whole qrels when these are a part of them (a streamed chunk)."""
    judgments: object | None = None
    """The judgments of another kind than a grade per document, when the qrels were read from such a
    file (``--rel-format``, :mod:`prefeval.io.judgments`): preference judgments
    (:class:`~prefeval.io.prefs.Preferences`) or judgment groups
    (:class:`~prefeval.io.judgment_groups.JudgmentGroups`), which number the documents as these qrels
    do; these qrels then hold the documents the runs are ranked against. None for a plain qrels."""
    subtopics: Subtopics | None = None
    """The judgments per subtopic when some query is judged on several (:mod:`prefeval.io.subtopics`),
    None for an ad hoc qrels (or qrels read without their iter column)."""
    repeated: Repeated | None = None
    """The first document judged on two lines of a query, None when none is (what trec_eval stops on)."""

    @property
    def max_grade(self) -> float:
        """The largest grade of the qrels (0 without a relevant document)."""
        return self.top_grade if self.top_grade is not None else float(self.grades.max(initial=0.0))

    @property
    def num_queries(self) -> int:
        return len(self.qids)

    @property
    def query_of_other(self) -> np.ndarray:
        """For each other document, the index of its query."""
        return np.repeat(np.arange(self.num_queries), np.diff(self.other_offsets))

    @property
    def num_relevant(self) -> np.ndarray:
        """m per query: the number of relevant documents."""
        return np.diff(self.offsets)

    @property
    def query_of_document(self) -> np.ndarray:
        """For each relevant document, the index of its query."""
        return np.repeat(np.arange(self.num_queries), self.num_relevant)


class RunColumns(NamedTuple):
    """The three columns of a run that evaluation reads, one row per scored (non-nan) line.

    Query ids and docids are :class:`~prefeval.io.fields.TextColumn`: keys of their bytes, the text
    read only where it is needed (tied documents, messages). ``lines`` says on which line of the file
    each row is, for error messages (None for a run that did not come from a file).
    """

    source: str
    run_id: str
    qids: TextColumn
    docids: TextColumn
    scores: np.ndarray
    lines: LineNumbers | RowLines | None = None
    tag: str | None = None
    """The run tag of the file's first line (its sixth field, trec_eval's ``runid``), if it has one."""


class Scan(NamedTuple):
    """The columns of a file's well-formed lines, and its malformed lines: how many, the numbers
    (1-based) of the first few, and what is wrong with the first (None when no line is malformed)."""

    columns: dict[str, np.ndarray]
    malformed: int = 0
    malformed_lines: tuple[int, ...] = ()
    first_problem: str | None = None


def run_id_from_path(path: str) -> str:
    """The run id of a run file: its base name without a leading ``input.`` and a trailing ``.gz``."""
    name = os.path.basename(os.fspath(path).rstrip("/\\")) if path != "-" else "stdin"
    if name.endswith(".gz"):
        name = name[: -len(".gz")]
    if name.startswith("input.") and len(name) > len("input."):
        name = name[len("input."):]
    return name


def read_qrels(
    path: str,
    binary_relevance: float | None = None,
    relevance_floor: float | None = None,
    keep_empty: bool = False,
) -> Qrels:
    """Read a qrels file (see :func:`qrels_from_columns` for ``binary_relevance``,
    ``relevance_floor`` and ``keep_empty``)."""
    source = display_name(path)
    data = read_bytes(path, check_head=lambda head: read_fields(head, source, QRELS_ITER_FORMAT, first_line=1))
    qids, docids, iters, grades = read_fields(data, source, QRELS_ITER_FORMAT)
    return qrels_from_columns(
        source, qids, docids, grades, binary_relevance, relevance_floor,
        line_of=lambda row: int(LineNumbers.of_file(data, len(grades)).of([row])[0]),
        keep_empty=keep_empty, iters=iters,
    )


def qrels_from_columns(
    source: str,
    qids: TextColumn,
    docids: TextColumn,
    grades: np.ndarray,
    binary_relevance: float | None = None,
    relevance_floor: float | None = None,
    line_of: Callable[[int], int] | None = None,
    keep_empty: bool = False,
    iters: TextColumn | None = None,
) -> Qrels:
    """Build :class:`Qrels` from one row per judgment (from a file, a DataFrame or a dict).

    ``binary_relevance=G`` maps a grade g to 1 if g >= G else 0; ``relevance_floor=F`` then maps any
    grade below F to 0 (the order of the reference pref_eval.py); neither touches a negative grade
    (in the pool, not judged). Grades <= 0 are non-relevant. ``keep_empty`` keeps the queries
    without a relevant document (trec_eval's convention), else they are dropped.
    A query named ``all`` is an error: eval lines, trec_eval's output and every summary line use that
    id for the means over queries. ``line_of(row)`` gives the line of a row, for that message.

    A document judged on several lines of a query (subtopics) keeps its largest grade, and the first
    such document is :attr:`Qrels.repeated`. ``iters``, the iter column: when some query's lines hold
    two iter values, its judgments are kept per subtopic too (:attr:`Qrels.subtopics`,
    :mod:`prefeval.io.subtopics`). Queries and documents are numbered in order of first appearance,
    and ids matched by their keys (:mod:`prefeval.io.fields`).
    """
    query_codes, query_rows = factorize(qids.keys)
    qid_texts = qids.texts(query_rows)
    named_all = np.flatnonzero(qid_texts == SUMMARY_QID)
    if len(named_all):
        raise InputError(source, f"a query is named {SUMMARY_QID!r}, the id that every summary line (the means "
                                 "over queries) has; rename the query",
                         line_of(int(query_rows[named_all[0]])) if line_of is not None else None)
    grades = mapped_grades(np.asarray(grades, dtype=np.float64), binary_relevance, relevance_floor)
    row_grades = grades
    keys = pair_keys(query_codes, docids.keys)
    rows, grades, again = _best_judgments(keys, grades)
    query = query_codes[rows]
    if (query[1:] < query[:-1]).any():  # a query's judgments apart: together, in the order they come
        by_query = np.argsort(query, kind="stable")
        rows, grades, query = rows[by_query], grades[by_query], query[by_query]
    relevant = grades > 0
    num_queries = len(query_rows)
    relevant_count = np.bincount(query[relevant], minlength=num_queries)
    judged_count = np.bincount(query, minlength=num_queries)
    kept = np.ones(num_queries, dtype=bool) if keep_empty else relevant_count > 0
    if not kept.any():
        raise InputError(source, "no query has a relevant document (a grade > 0 after -b/-f)")
    other = ~relevant & kept[query]
    repeated = None
    if again is not None:
        qid, docid = qid_texts[query_codes[again[1]]], docids.texts([again[1]])[0]
        lines = [line_of(int(row)) if line_of is not None else None for row in again]
        repeated = Repeated(str(qid), str(docid), lines[1], lines[0])
    subtopics = None
    if iters is not None:
        subtopics = subtopic_judgments(query_codes, kept, iters, keys, row_grades, keys[rows[relevant]])
    return Qrels(
        source=source,
        qids=qid_texts[kept].tolist(),
        dropped_qids=qid_texts[~kept].tolist(),
        offsets=_offsets(relevant_count[kept]),
        docids=docids[rows[relevant]],
        grades=grades[relevant],
        num_judged=judged_count[kept],
        other_offsets=_offsets(judged_count[kept] - relevant_count[kept]),
        other_docids=docids[rows[other]],
        other_grades=grades[other],
        subtopics=subtopics,
        repeated=repeated,
    )


def _best_judgments(keys: np.ndarray, grades: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(rows, best, again): the first row of each distinct (query, docid) pair key, in order, the
    largest grade of the pair's rows, and (the first row, the row) of the first pair judged again
    (None when none is). A document judged more than once in a query (subtopic qrels) is rare: one
    sort tells whether there is any, and only then are the rows grouped by key."""
    if not has_repeats(keys):
        return np.arange(len(keys)), grades, None
    codes, rows = factorize(keys)
    best = np.full(len(rows), -np.inf)
    np.maximum.at(best, codes, grades)
    second = int(np.flatnonzero(rows[codes] != np.arange(len(codes)))[0])
    return rows, best, np.array([rows[codes[second]], second])


def _offsets(counts: np.ndarray) -> np.ndarray:
    """Where each query's documents start, and where the last ends: 0 and the running sums of ``counts``."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def mapped_grades(grades: np.ndarray, binary_relevance: float | None = None,
                  relevance_floor: float | None = None) -> np.ndarray:
    """The grades after ``-b`` and ``-f`` (:func:`qrels_from_columns`); a negative grade (in the pool,
    not judged) is left as it is."""
    unjudged = grades < 0
    if binary_relevance is not None:
        grades = np.where(unjudged, grades, (grades >= binary_relevance).astype(np.float64))
    if relevance_floor is not None:
        grades = np.where(unjudged | (grades >= relevance_floor), grades, 0.0)
    return grades


def read_run(path: str) -> RunColumns:
    """Read a run file into its qid, docid and score columns (lines scored ``nan`` dropped)."""
    source = display_name(path)
    data = read_bytes(path, check_head=lambda head: read_fields(head, source, RUN_FORMAT, first_line=1))
    qids, docids, scores = read_fields(data, source, RUN_FORMAT)
    lines = LineNumbers.of_file(data, len(scores))
    unscored = np.isnan(scores)
    if unscored.any():
        lines = lines.without(np.flatnonzero(unscored))
        qids, docids, scores = qids[~unscored], docids[~unscored], scores[~unscored]
    return RunColumns(source=source, run_id=run_id_from_path(path), qids=qids, docids=docids, scores=scores,
                      lines=lines, tag=first_tag(data))


def read_fields(data: bytes, source: str, fmt: LineFormat, first_line: int | None = None,
                ) -> tuple[TextColumn | np.ndarray, ...]:
    """The query ids, docids and numbers of every line of a run's or qrels' text (a run's ``nan``
    scores included); and, before the numbers, a column of each further text field of ``fmt`` (the
    iter column of :data:`QRELS_ITER_FORMAT`).

    Text of the common shape is split by :func:`~prefeval.io.fields.split_fields`, without a Python
    string per field; any other text (and numbers ``fmt`` refuses, grades out of range, which they
    name) by the paths of :func:`read_columns` (the whole file, when ``first_line`` is None: no line
    at all is an error) or :func:`read_block_columns` (a block whose first line is ``first_line``),
    which name a malformed line."""
    split = split_fields(data, fmt.field_layout)
    if split is not None and not np.any(fmt.refused(split[-1])):
        return split
    if first_line is None:
        columns = read_columns(data, source, fmt)
    else:
        columns = read_block_columns(data, source, fmt, first_line)
    return (*(TextColumn.of_texts(columns[name]) for name in fmt.text_fields), columns[fmt.number_field[0]])


def first_tag(data: bytes) -> str | None:
    """The sixth field of the first line that has one, as trec_eval's ``runid`` reads it."""
    for line in data[:65536].split(b"\n", 64):
        fields = line.split()
        if len(fields) >= 6:
            return fields[5].decode("utf-8", "surrogateescape")
        if fields:
            return None
    return None


def read_columns(data: bytes, source: str, fmt: LineFormat) -> dict[str, np.ndarray]:
    """Tokenise ``data`` into the text columns (object arrays) and the number column (float64).

    Raises an :class:`InputError` naming ``source`` and the first malformed line, or saying that the
    file holds no line at all.
    """
    columns = _read_columns_fast(data, fmt)
    if columns is None:
        columns = scan_lines(data, source, fmt, strict=True).columns
    if len(columns[fmt.number_field[0]]) == 0:
        raise InputError(source, f"no {fmt.kind} lines ({fmt.layout}) in the file")
    return columns


def read_block_columns(data: bytes, source: str, fmt: LineFormat, first_line: int) -> dict[str, np.ndarray]:
    """:func:`read_columns` for a block of a file whose first line is line ``first_line``
    (:func:`~prefeval.io.source.read_blocks`): an error names the line of the file; a block without
    any line gives empty columns (whether the file has none is for its reader to say)."""
    columns = _read_columns_fast(data, fmt)
    if columns is not None:
        return columns
    try:
        return scan_lines(data, source, fmt, strict=True).columns
    except InputError as error:
        raise InputError(error.source, error.message, error.line + first_line - 1) from None


def read_columns_leniently(data: bytes, source: str, fmt: LineFormat, shown: int) -> Scan:
    """The columns of the well-formed lines of ``data`` and an account of the malformed ones (the
    numbers of the first ``shown``), for a report on the file rather than an evaluation.

    Never raises: a file without any line gives empty columns. The fast path takes the files it
    can, which have no malformed line; any other file goes through :func:`scan_lines`.
    """
    columns = _read_columns_fast(data, fmt)
    if columns is not None:
        return Scan(columns)
    return scan_lines(data, source, fmt, strict=False, shown=shown)


def find_lines(data: bytes, fields: dict[int, str]) -> list[int]:
    """1-based numbers of the lines whose fields at the given indexes have the given values.

    Used only to report errors found after tokenising the bytes held in memory (a duplicate document
    in ``prefeval check``), so it may be slow.
    """
    wanted = {index: value.encode("utf-8", "surrogateescape") for index, value in fields.items()}
    found = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        parts, _ = split_line(line)
        if all(len(parts) > index and parts[index] == value for index, value in wanted.items()):
            found.append(number)
    return found


def _shown(field: bytes) -> str:
    """A field as an error message quotes it."""
    return field.decode("utf-8", "replace")[:40]


def split_line(line: bytes) -> tuple[list[bytes], str | None]:
    """The fields of one line (without its ``\\n``), and what is wrong with the line if anything is
    (a lone carriage return, a NUL byte). A line ending in ``\\r`` ends as Windows writes lines."""
    if line.endswith(b"\r"):
        line = line[:-1]
    if b"\r" in line:
        return [], ("a carriage return (\\r) inside the line: lines must end with \\n or \\r\\n "
                    "(old Mac files, which end lines with \\r alone, need converting)")
    if b"\x00" in line:
        return [], "a NUL byte: is this a binary file?"
    return line.split(), None


def _separator(text: bytes) -> str:
    """The fastest separator pandas can use for ``text``: a single tab or space, else ``\\s+``.

    A one-character separator is safe when it is the only whitespace in the file besides line ends
    and no two whitespace (or control) bytes are adjacent anywhere: then no field is empty. Files
    with Windows line ends or blank lines take the ``\\s+`` path, which accepts them too.
    """
    has_tab, has_space = b"\t" in text, b" " in text
    if has_tab == has_space or text[:1] <= b" " or _adjacent_whitespace(text):
        return r"\s+"
    return "\t" if has_tab else " "


def _adjacent_whitespace(text: bytes, chunk: int = 1 << 18) -> bool:
    """Whether two bytes <= 0x20 are next to each other, scanned in cache-sized chunks."""
    for start in range(0, len(text), chunk):
        window = np.frombuffer(text, np.uint8, count=min(chunk + 1, len(text) - start), offset=start) <= 32
        if (window[1:] & window[:-1]).any():
            return True
    return False


def _pandas_splits_alike(data: bytes) -> bool:
    """Whether pandas' tokeniser splits ``data`` into the lines and fields of the module docstring:
    not when it holds a byte that pandas takes for part of a field (vertical tab, form feed), for a
    line end (a carriage return not followed by a line feed) or for the end of the text (NUL), nor
    when it starts with a byte-order mark, which pandas drops (:func:`~prefeval.io.source.read_bytes`
    has dropped one already: a second belongs to the first field)."""
    if b"\x0b" in data or b"\x0c" in data or b"\x00" in data or data.startswith(UTF8_BOM):
        return False
    return b"\r" not in data or data.count(b"\r") == data.count(b"\r\n")


def _read_columns_fast(data: bytes, fmt: LineFormat) -> dict[str, np.ndarray] | None:
    """pandas' C tokeniser; None when the file needs the slow path (to report an error, or to read it).

    A line with too few fields leaves its number field empty, which fails to convert. Too many
    fields: without a maximum (runs), pandas reads the leading :attr:`LineFormat.used_fields` and
    drops the others, as they are to be ignored. With one (qrels), every line must have exactly
    ``max_fields``: with a one-character separator, the file holds that many separators less one per
    line; with ``\\s+``, pandas reads every field and refuses a line with more than the first line has.
    """
    if not _pandas_splits_alike(data):
        return None
    text = data
    if text.startswith(b"#") or b"#" in text and _COMMENT_LINES.search(text):
        text = _COMMENT_LINES.sub(b"", text)
    if _NOT_BLANK.search(text) is None:
        return None
    sep = _separator(text)
    frame = _pandas_read(text, sep, fmt)
    if frame is None:
        return None
    if fmt.max_fields is not None:
        if sep == r"\s+" and frame.shape[1] != fmt.max_fields:
            return None
        if sep != r"\s+" and text.count(sep.encode()) != len(frame) * (fmt.max_fields - 1):
            return None
    numbers = frame[fmt.number_field[1]].to_numpy(dtype=np.float64)
    if fmt.refused(numbers).any():
        return None
    columns = {name: frame[index].to_numpy(dtype=object) for name, index in fmt.text_fields.items()}
    columns[fmt.number_field[0]] = numbers
    return columns


def _pandas_read(text: bytes, sep: str, fmt: LineFormat) -> pd.DataFrame | None:
    """The file's columns as a frame keyed by field index, the number column converted; None when
    pandas cannot read it as such. Plain numbers are tried first (the fastest), then numbers with
    ``nan`` where the format allows it, then a decimal comma (checked against the syntax of
    :mod:`prefeval.io.numbers`, since pandas' own conversion of text accepts more). pandas is
    imported here, by the few files that come this way."""
    import pandas as pd

    number_index = fmt.number_field[1]
    if fmt.max_fields is not None and sep == r"\s+":
        names, usecols, width = None, None, fmt.max_fields
    else:
        width = fmt.max_fields or fmt.used_fields
        names, usecols = range(width), sorted({*fmt.text_fields.values(), number_index})
    dtypes = {index: object for index in range(width)}

    def read(number_type, nan: bool) -> pd.DataFrame:
        return pd.read_csv(
            io.BytesIO(text), sep=sep, header=None, names=names, usecols=usecols,
            index_col=False, dtype={**dtypes, number_index: number_type}, keep_default_na=False, na_filter=nan,
            na_values={number_index: list(NAN_SPELLINGS)} if nan else None, quoting=csv.QUOTE_NONE,
            engine="c", **_ENCODING,
        )

    attempts = [(np.float64, False)] + [(np.float64, True)] * fmt.nan_allowed + [(object, True)] * fmt.decimal_comma
    for number_type, nan in attempts:
        try:
            frame = read(number_type, nan)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeError, IndexError):
            return None  # IndexError: pandas' own, on texts it empties (the line scanner will say why)
        except ValueError:
            continue
        if number_type is np.float64:
            return frame
        raw = frame[number_index].to_numpy(dtype=object)
        written = ~pd.isna(raw)
        texts = [text.encode("utf-8", "surrogateescape") for text in raw[written]]
        if not all(NUMBER_WITH_COMMA.fullmatch(text) for text in texts):
            return None
        numbers = np.full(len(raw), np.nan)
        numbers[written] = [float(text.replace(b",", b".")) for text in texts]
        frame[number_index] = numbers
        return frame
    return None


def scan_lines(data: bytes, source: str, fmt: LineFormat, *, strict: bool, shown: int = 0) -> Scan:
    """Read ``data`` line by line in Python, checking every line as ``fmt`` says (the slow path).

    Blank lines and lines starting with ``#`` are skipped. A line is malformed when
    :func:`split_line` finds something wrong with it, when it has too few or too many fields, or no
    number where ``fmt`` expects one. ``strict``: the first malformed line raises an
    :class:`InputError` naming ``source`` and the line. Lenient (``strict=False``): every malformed
    line is skipped and counted, the numbers of the first ``shown`` are kept, and the message of the
    first is the one strict would raise. Both modes return the same columns for a file without
    malformed lines; a file without any line gives empty columns (:func:`read_columns` rejects it,
    :func:`read_columns_leniently` does not).
    """
    number_name, number_index = fmt.number_field
    text_values: dict[str, list[str]] = {name: [] for name in fmt.text_fields}
    numbers: list[float] = []
    malformed, malformed_lines, first_problem = 0, [], None
    for line_number, line in enumerate(data.split(b"\n"), start=1):
        fields, problem = split_line(line)
        if problem is None:
            if not fields or fields[0].startswith(b"#"):
                continue
            count = len(fields)
            if count < fmt.min_fields or fmt.max_fields is not None and count > fmt.max_fields:
                problem = fmt.field_count_error(fields)
            else:
                number, problem = fmt.read_number(fields[number_index])
        if problem is not None:
            if strict:
                raise InputError(source, problem, line_number)
            malformed += 1
            first_problem = first_problem or problem
            if len(malformed_lines) < shown:
                malformed_lines.append(line_number)
            continue
        for name, index in fmt.text_fields.items():
            text_values[name].append(fields[index].decode("utf-8", "surrogateescape"))
        numbers.append(number)
    columns = {name: np.array(values, dtype=object) for name, values in text_values.items()}
    columns[number_name] = np.array(numbers, dtype=np.float64)
    return Scan(columns, malformed, tuple(malformed_lines), first_problem)
