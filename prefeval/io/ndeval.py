"""ndeval's input files, read as ndeval 4.5 reads them (``prefeval ndeval``).

* **qrels**: ``topic subtopic docno judgment``: at least four fields separated by C's whitespace
  (those after the fourth ignored), the topic, the subtopic and the judgment natural numbers
  (ASCII digits, at most 1000009, as ndeval's ``naturalNumber`` reads them: a sign, a point or an
  empty line is a syntax error), a judgment above 1 read as 1 (ndeval's assessment is binary). A
  document judged twice for one subtopic of a topic is an error here: ndeval keeps whichever
  judgment its sort puts last and counts both in MAP-IA's denominator.
* **run**: ``topic Q0 docno rank score runid``: at least six fields, the topic a natural number
  after an optional prefix that ends with ``-`` (``wt09-1`` is topic 1, as ndeval's ``parseTopic``
  reads it), the rank a natural number. The run id is the sixth field of the first line. By
  default a topic's documents are ordered by their rank field, two equal ranks in a topic being an
  error; with ``traditional`` (ndeval's ``-traditional``) by score descending, then docno
  descending (as bytes, C's ``strcmp``), the score read as C's ``sscanf("%lf")`` reads its start
  (``1.5e3``, ``inf``; a field that does not start with a number, or a NaN, is an error here, where
  ndeval would order by whatever its memory held, and so is a hexadecimal number, which prefeval
  does not read: :func:`~prefeval.io.numbers.leading_number`). ``depth`` (ndeval's ``-M``) keeps the first
  ``depth`` documents of each topic; a docno twice in a topic among those kept is an error.

Topics and subtopics are numbers: ``051`` and ``51`` are one topic, written ``51`` as ndeval prints
it; a topic's id in the tables read is that number's decimal text. Both files may be gzip (an
extension: ndeval reads plain text only); ``-`` is the file named ``-``, as ndeval opens it. Every
error names the file and the line where ndeval's message gives one.

Files of the common shape (one space or one tab between fields, as many fields on every line) are
read with numpy (:func:`~prefeval.io.fields.split_fields`); any other file line by line, splitting
as ndeval's ``split`` splits (C's ``isspace``: space, tab, line feed, vertical tab, form feed and
carriage return).
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from prefeval.errors import InputError
from prefeval.io.codes import factorize, has_repeats
from prefeval.io.fields import FieldLayout, TextColumn, pair_keys, split_fields, text_keys
from prefeval.io.numbers import leading_number
from prefeval.io.source import display_name, read_bytes
from prefeval.io.trec import Qrels, RunColumns, qrels_from_columns

LARGE_ENOUGH = 100000
"""ndeval's bound in ``naturalNumber``: a number is refused once it exceeds this before its next digit
(so that the largest accepted is 1000009)."""
_QRELS_FIELDS, _RUN_FIELDS = 4, 6


class NdevalQrels(NamedTuple):
    """ndeval's qrels: the :class:`~prefeval.io.trec.Qrels` (every topic kept, in numeric order,
    judgments per subtopic) and each topic's number."""

    qrels: Qrels
    topics: np.ndarray


class NdevalRun(NamedTuple):
    """A run as ndeval reads it: its run id (the first line's sixth field), the numbers of its topics
    (ascending), and its documents in ndeval's order (:class:`~prefeval.io.trec.RunColumns` whose
    scores are minus each document's place in its topic, so that ranking them by score keeps that
    order), the topics the qrels lack included."""

    source: str
    run_id: str
    topics: np.ndarray
    columns: RunColumns


def ndeval_path(path: str) -> str:
    """The file ndeval opens for ``path``: ``-`` is the file named ``-``."""
    return os.path.join(".", path) if path == "-" else path


def read_ndeval_qrels(path: str) -> NdevalQrels:
    """ndeval's qrels file (module docstring)."""
    source = display_name(path)
    data = read_bytes(ndeval_path(path))
    if not data:
        raise InputError(source, "the qrels file is empty")
    fields = _fields(data, source, _QRELS_FIELDS, "qrels", FieldLayout((0, 1, 2, 3), 3, _QRELS_FIELDS, None, False))
    topic_texts, subtopic_texts, docids, judgment_texts = fields.columns[:4]
    topics = _naturals(topic_texts, fields, source, "qrels")
    subtopics = _naturals(subtopic_texts, fields, source, "qrels")
    judgments = _naturals(judgment_texts, fields, source, "qrels")
    order = np.argsort(topics, kind="stable")
    topics, subtopics, judgments, docids = topics[order], subtopics[order], judgments[order], docids[order]
    unique_topics, topic_codes = np.unique(topics, return_inverse=True)
    unique_subtopics, subtopic_codes = np.unique(subtopics, return_inverse=True)
    triple = pair_keys(topic_codes.ravel() * (len(unique_subtopics) + 1) + subtopic_codes.ravel(), docids.keys)
    if has_repeats(triple):
        codes, first = factorize(triple)
        again = int(np.flatnonzero(first[codes] != np.arange(len(codes)))[0])
        lines = fields.line_of(order[[first[codes[again]], again]])
        raise InputError(source, f"document {docids[again]!r} is judged twice for topic {topics[again]} subtopic "
                                 f"{subtopics[again]} (first on line {lines[0]}): ndeval counts both in MAP-IA "
                                 "and keeps either judgment, as its sort falls", int(lines[1]))
    qids = _canonical(unique_topics, topic_codes.ravel())
    iters = _canonical(unique_subtopics, subtopic_codes.ravel())
    qrels = qrels_from_columns(source, qids, docids, np.minimum(judgments, 1).astype(np.float64), keep_empty=True,
                               iters=iters)
    return NdevalQrels(qrels, unique_topics)


def read_ndeval_run(path: str, traditional: bool = False, depth: int | None = None) -> NdevalRun:
    """A run as ndeval reads it (module docstring), in the order of its rank field or, with
    ``traditional``, of its scores; cut at ``depth`` documents per topic."""
    source = display_name(path)
    data = read_bytes(ndeval_path(path))
    if not data:
        raise InputError(source, "the run file is empty")
    fields = _fields(data, source, _RUN_FIELDS, "run", FieldLayout((0, 2, 3), 4, _RUN_FIELDS, None, False), (4,))
    topic_texts, docids, rank_texts = fields.columns[:3]
    topics = _topics(topic_texts, fields, source)
    ranks = _naturals(rank_texts, fields, source, "run")
    run_id = data[:data.find(b"\n") if b"\n" in data else len(data)].split()[5].decode("utf-8", "surrogateescape")
    if traditional:
        scores = fields.numbers if fields.numbers is not None else _scores(fields.columns[3], fields, source)
        if np.isnan(scores).any():
            line = int(fields.line_of([np.flatnonzero(np.isnan(scores))[0]])[0])
            raise InputError(source, "a score of NaN, which -traditional cannot order", line)
        order = _by_score(topics, scores, docids)
    else:
        order = np.lexsort((ranks, topics))
        sorted_topics, sorted_ranks = topics[order], ranks[order]
        same = np.flatnonzero((sorted_topics[1:] == sorted_topics[:-1]) & (sorted_ranks[1:] == sorted_ranks[:-1]))
        if len(same):
            rows = order[[same[0], same[0] + 1]]
            lines = fields.line_of(rows)
            raise InputError(source, f"duplicate rank ({ranks[rows[1]]}) for topic {topics[rows[1]]} (lines "
                                     f"{min(lines)} and {max(lines)})", int(max(lines)))
    topics, docids = topics[order], docids[order]
    starts = np.flatnonzero(np.concatenate(([True], topics[1:] != topics[:-1])))
    place = np.arange(len(topics)) - np.repeat(starts, np.diff(np.append(starts, len(topics))))
    if depth is not None:
        kept = place < depth
        order, topics, docids, place = order[kept], topics[kept], docids[kept], place[kept]
    unique_topics, codes = np.unique(topics, return_inverse=True)
    codes = codes.ravel()
    keys = pair_keys(codes, docids.keys)
    if has_repeats(keys):
        first_codes, first = factorize(keys)
        again = int(np.flatnonzero(first[first_codes] != np.arange(len(first_codes)))[0])
        lines = fields.line_of(order[[first[first_codes[again]], again]])
        raise InputError(source, f"duplicate docno ({docids[again]}) for topic {topics[again]} (lines "
                                 f"{min(lines)} and {max(lines)})", int(max(lines)))
    columns = RunColumns(source=source, run_id=run_id, qids=_canonical(unique_topics, codes), docids=docids,
                         scores=-(place + 1.0), lines=None, tag=run_id)
    return NdevalRun(source, run_id, unique_topics, columns)


class _Fields(NamedTuple):
    """The text fields of a file's lines (in the order asked for, then any asked for as text only
    where the fast path does not read them), the number field as the fast path reads it (None where
    it did not), and where each row's line is."""

    columns: list[TextColumn]
    lines: np.ndarray | None
    """The line of each row (None: row i is line i + 1)."""
    numbers: np.ndarray | None = None

    def line_of(self, rows) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        return rows + 1 if self.lines is None else self.lines[rows]


def _fields(data: bytes, source: str, count: int, kind: str, layout: FieldLayout, more: tuple[int, ...] = ()
            ) -> _Fields:
    """The fields ``layout.texts`` of every line, each line holding at least ``count`` fields (a line
    with fewer is ndeval's syntax error), and its number field: read fast when the file has the common
    shape and that field is a decimal number on every line (:func:`~prefeval.io.fields.split_fields`);
    otherwise line by line, the fields ``more`` (the number field) kept as text too."""
    if b"\x00" not in data:
        split = split_fields(data, layout)
        if split is not None:
            return _Fields(list(split[:-1]), None, split[-1])
    wanted = layout.texts + more
    texts: list[list[bytes]] = [[] for _ in wanted]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if b"\x00" in line:
            raise InputError(source, f"syntax error in {kind} file: a NUL byte", number)
        words = line.split()  # on C's whitespace: space, \t, \n, \v, \f, \r
        if len(words) < count:
            raise InputError(source, f"syntax error in {kind} file: {count} fields expected, found {len(words)}",
                             number)
        for column, field in zip(texts, wanted):
            column.append(words[field])
    return _Fields([TextColumn.of_texts([text.decode("utf-8", "surrogateescape") for text in column])
                    for column in texts], np.arange(1, len(lines) + 1))


def _matrix(column: TextColumn) -> tuple[np.ndarray, np.ndarray]:
    """The bytes of every field as a matrix (rows × the widest field, zero-padded) and their lengths."""
    strings = column.byte_strings(np.arange(len(column)))
    width = strings.dtype.itemsize
    matrix = np.frombuffer(strings.tobytes(), dtype=np.uint8).reshape(len(strings), width)
    return matrix, (matrix != 0).sum(axis=1)


def _natural_values(column: TextColumn) -> np.ndarray:
    """Each field read as ndeval's ``naturalNumber`` reads it: its value, or -1 (not ASCII digits, empty,
    or beyond :data:`LARGE_ENOUGH` before a digit); each distinct field read once."""
    if not len(column):
        return np.zeros(0, dtype=np.int64)
    distinct, codes = np.unique(column.keys, return_inverse=True)
    if len(distinct) < len(column):
        first = np.zeros(len(distinct), dtype=np.int64)
        first[codes.ravel()[::-1]] = np.arange(len(column))[::-1]
        return _natural_values_of(column[first])[codes.ravel()]
    return _natural_values_of(column)


def _natural_values_of(column: TextColumn) -> np.ndarray:
    matrix, lengths = _matrix(column)
    values = np.zeros(len(matrix), dtype=np.int64)
    bad = lengths == 0
    for place in range(matrix.shape[1]):
        inside = place < lengths
        digit = matrix[:, place].astype(np.int64) - 48
        bad |= inside & ((digit < 0) | (digit > 9) | (values > LARGE_ENOUGH))
        values = np.where(inside & ~bad, values * 10 + digit, values)
    return np.where(bad, -1, values)


def _naturals(column: TextColumn, fields: _Fields, source: str, kind: str) -> np.ndarray:
    """:func:`_natural_values`, a syntax error naming the first line whose field is not one."""
    values = _natural_values(column)
    _refuse(values < 0, column, fields, source, kind, "is not a natural number")
    return values


def _refuse(bad: np.ndarray, column: TextColumn, fields: _Fields, source: str, kind: str, what: str) -> None:
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(source, f"syntax error in {kind} file: {column[row]!r} {what}", int(fields.line_of([row])[0]))


def _topics(column: TextColumn, fields: _Fields, source: str) -> np.ndarray:
    """A run's topics, as ndeval's ``parseTopic`` reads them: a natural number, after an optional
    prefix ending with ``-`` when the field does not start with a digit; each distinct field read once."""
    codes, first = factorize(column.keys)
    texts = column.texts(first).tolist()
    values = np.array([_parse_topic(text) for text in texts], dtype=np.int64)[codes]
    _refuse(values < 0, column, fields, source, "run", "is not a topic number")
    return values


def _parse_topic(text: str) -> int:
    if not text[:1].isdigit() or not text[:1].isascii():
        dash = text.find("-")
        if dash < 0:
            return -1
        text = text[dash + 1:]
    return int(_natural_values(TextColumn.of_texts([text]))[0])


def _scores(column: TextColumn, fields: _Fields, source: str) -> np.ndarray:
    """The scores, each the number that starts its field (``sscanf("%lf")``); an error for a field
    that does not start with one, or a NaN."""
    codes, first = factorize(column.keys)
    values = np.empty(len(first))
    for place, text in enumerate(column.texts(first).tolist()):
        value = leading_number(text)
        values[place] = value if value is not None else np.nan
    scores = values[codes]
    _refuse(np.isnan(scores), column, fields, source, "run",
            "is not a score (-traditional orders the documents by score)")
    return scores


def _by_score(topics: np.ndarray, scores: np.ndarray, docids: TextColumn) -> np.ndarray:
    """The rows by topic, score descending, then docno descending (ndeval's ``-traditional``); the
    docnos compared only within the groups of rows that tie on topic and score."""
    order = np.lexsort((-scores, topics))
    sorted_topics, sorted_scores = topics[order], scores[order]
    tied = (sorted_topics[1:] == sorted_topics[:-1]) & (sorted_scores[1:] == sorted_scores[:-1])
    if not tied.any():
        return order
    member = np.zeros(len(order), dtype=bool)
    member[:-1] |= tied
    member[1:] |= tied
    places = np.flatnonzero(member)
    group = np.cumsum(np.concatenate(([True], ~tied[places[:-1]])))
    _, docid_rank = np.unique(docids.byte_strings(order[places]), return_inverse=True)
    order[places] = order[places][np.lexsort((-docid_rank.ravel(), group))]
    return order


def _canonical(numbers: np.ndarray, codes: np.ndarray) -> TextColumn:
    """The column of the decimal texts of ``numbers[codes]``."""
    texts = np.array([str(int(number)) for number in numbers], dtype=object)
    return TextColumn(text_keys(texts.tolist())[codes], texts=texts[codes])
