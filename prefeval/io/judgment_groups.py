"""Judgment groups: trec_eval's ``qrels_jg`` files (``get_qrels_jg.c``).

A line is ``qid jg docid grade``: the grade judgment group ``jg`` (one assessor, or one set of
judgments) gives document ``docid`` for query ``qid``; the groups of a query judge independently, so
that a document may have a grade in one group and another, or none, in the next. A document on two
lines of one group of a query is an error naming both lines (trec_eval: "duplicate docs"). Grades
are numbers as in a qrels (:mod:`prefeval.io.trec`; trec_eval reads them with ``atol``, so that it
truncates a fraction, which prefeval keeps); ``-b`` and ``-f`` map them as they map a qrels' grades.
Lines follow the language of :mod:`prefeval.io.trec`.

The result is :class:`~prefeval.io.trec.Qrels` whose grade of a document is its largest over the
groups (the documents relevant to some group; those of no group, grade <= 0, are its other
documents), queries and documents in order of first appearance (a query without a document relevant
to any group is dropped unless ``keep_empty``, as a qrels' is), with the groups in
:attr:`~prefeval.io.trec.Qrels.judgments` (:class:`JudgmentGroups`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from prefeval.errors import InputError
from prefeval.io.codes import KeyIndex, factorize, has_repeats
from prefeval.io.fields import TextColumn, pair_keys, text_keys
from prefeval.io.source import display_name, read_bytes
from prefeval.io.trec import (
    MAX_GRADE,
    LineFormat,
    LineNumbers,
    Qrels,
    ShapeHint,
    mapped_grades,
    qrels_from_columns,
    read_block_columns,
    read_columns,
)

QRELS_JG_FORMAT = LineFormat(
    kind="qrels_jg", layout="qid jg docid grade", min_fields=4, max_fields=4,
    text_fields={"qid": 0, "group": 1, "docid": 2}, number_field=("grade", 3), nan_allowed=False,
    decimal_comma=False, number_limit=MAX_GRADE, limit_text="grades must be finite and at most 2^53 in magnitude",
    shape_hints=(ShapeHint(5, 5, "are these preference judgments (--rel-format prefs)?"),
                 ShapeHint(6, None, "is this a run file given as judgments?")))


class JudgmentGroups(NamedTuple):
    """The judgment groups of every kept query of the qrels they come with, documents numbered as
    those qrels number their (relevant) documents.

    *Groups* (G): per query in order (``group_offsets``), each query's groups sorted by id as bytes
    (trec_eval's order), ``group_names`` their ids. *Members*: per group (``member_offsets``), its
    documents of grade > 0 in that group, ``member_doc`` (an index into the qrels' documents) and
    ``member_grade``. A group may have no member (it judged no document relevant); it counts among
    its query's groups all the same. *Judged*: per group (``judged_offsets``), every document it
    judged (grade >= 0: relevant or not; a negative grade is in the pool, not judged), what ``-J``
    ranks among: ``judged_doc`` indexes the qrels' documents, then (from ``len(docids)`` on) their
    other documents."""

    group_offsets: np.ndarray
    group_names: np.ndarray
    member_offsets: np.ndarray
    member_doc: np.ndarray
    member_grade: np.ndarray
    judged_offsets: np.ndarray
    judged_doc: np.ndarray

    kind = "judgment groups"


def read_qrels_jg(path: str, binary_relevance: float | None = None, relevance_floor: float | None = None,
                  keep_empty: bool = False) -> Qrels:
    """Read a qrels_jg file (module docstring)."""
    source = display_name(path)
    data = read_bytes(path, check_head=lambda head: read_block_columns(head, source, QRELS_JG_FORMAT, 1))
    columns = read_columns(data, source, QRELS_JG_FORMAT)
    numbers = LineNumbers.of_file(data, len(columns["grade"]))
    qids, groups, docids = (TextColumn.of_texts(columns[name]) for name in ("qid", "group", "docid"))
    return judgment_groups_qrels(source, qids, groups, docids, columns["grade"], binary_relevance, relevance_floor,
                                 keep_empty, line_of=lambda row: int(numbers.of([row])[0]))


def judgment_groups_qrels(source: str, qids: TextColumn, groups: TextColumn, docids: TextColumn, grades: np.ndarray,
                          binary_relevance: float | None = None, relevance_floor: float | None = None,
                          keep_empty: bool = False, line_of=None) -> Qrels:
    """The qrels of one row per line of a qrels_jg (module docstring), with their
    :class:`JudgmentGroups`; ``line_of(row)``: the line of a row, for messages."""
    line_of = line_of or (lambda row: row + 1)
    group_code, group_row = factorize(pair_keys(qids.keys, groups.keys))
    _check_twice_in_group(source, qids, groups, docids, group_code, line_of)
    qrels = qrels_from_columns(source, qids, docids, grades, binary_relevance, relevance_floor, line_of=line_of,
                               keep_empty=keep_empty)._replace(repeated=None)  # a document in several groups
    query = KeyIndex(text_keys(qrels.qids)).positions(qids.keys)
    doc = KeyIndex(pair_keys(qrels.query_of_document, qrels.docids.keys)).positions(pair_keys(query, docids.keys))
    kept_group = query[group_row] >= 0
    order = np.lexsort((groups.byte_strings(group_row), query[group_row]))
    order = order[kept_group[order]]  # the groups of kept queries, by query then id
    rank = np.full(len(group_row), -1, dtype=np.int64)
    rank[order] = np.arange(len(order))
    mapped = mapped_grades(np.asarray(grades, dtype=np.float64), binary_relevance, relevance_floor)
    member = np.flatnonzero((rank[group_code] >= 0) & (mapped > 0))
    member = member[np.lexsort((doc[member], rank[group_code[member]]))]
    member_group = rank[group_code[member]]
    other = KeyIndex(pair_keys(qrels.query_of_other, qrels.other_docids.keys)).positions(pair_keys(query, docids.keys))
    either = np.where(doc >= 0, doc, len(qrels.docids) + other)
    judged = np.flatnonzero((rank[group_code] >= 0) & (mapped >= 0))
    judged = judged[np.lexsort((either[judged], rank[group_code[judged]]))]
    return qrels._replace(judgments=JudgmentGroups(
        group_offsets=_offsets(np.bincount(query[group_row[order]], minlength=qrels.num_queries)),
        group_names=groups.texts(group_row[order]),
        member_offsets=_offsets(np.bincount(member_group, minlength=len(order))),
        member_doc=doc[member],
        member_grade=mapped[member],
        judged_offsets=_offsets(np.bincount(rank[group_code[judged]], minlength=len(order))),
        judged_doc=either[judged],
    ))


def _offsets(counts: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _check_twice_in_group(source: str, qids: TextColumn, groups: TextColumn, docids: TextColumn,
                          group_code: np.ndarray, line_of) -> None:
    """A document on two lines of one group of a query is an error naming both lines."""
    keys = pair_keys(group_code, docids.keys)
    if not has_repeats(keys):
        return
    codes, first_rows = factorize(keys)
    second = int(np.flatnonzero(first_rows[codes] != np.arange(len(codes)))[0])
    first = int(first_rows[codes[second]])
    raise InputError(source, f"document {docids[second]!r} is judged twice by judgment group {groups[second]!r} of "
                             f"query {qids[second]!r} (first on line {line_of(first)}; trec_eval: 'duplicate docs')",
                     line_of(second))
