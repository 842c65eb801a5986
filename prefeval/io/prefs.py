"""Preference judgments: trec_eval's ``prefs`` and ``qrels_prefs`` files, and pairwise files.

**prefs** (trec_eval 10.0's ``get_prefs.c``, whose comments define the format): ``qid jg jsg docid
value``, five fields. Within one *judgment sub-group* (jsg) of one *judgment group* (jg) of a query,
a document of a larger value is preferred to one of a smaller value, and documents of equal value
are an equivalence class; the values themselves say nothing else, but 0 means "not relevant" in the
judge's opinion. A judgment group is one judge's information need at one time:

* **transitivity**: within a group, the preferences of its sub-groups are closed transitively (a > b
  in one sub-group and b > c in another give a > c); a group of one sub-group is closed already;
* **consistency**: within a group, a contradiction is an error naming the file, the query and the
  documents: two documents each preferred to the other (directly or through the closure; trec_eval
  ``abort()`` s there), a document of value 0 in one sub-group and above 0 in another ("has both 0
  and non-0 rel_level", trec_eval's words), and a document twice in one sub-group (trec_eval then
  counts its preferences twice in a group of one sub-group, and loses them otherwise; prefeval
  refuses it, naming both lines);
* **disagreement** between groups is allowed (judges disagree): each group keeps its own preferences.

A value is a number >= 0 (trec_eval's "non-negative double"; it reads a negative one without a
check, and its measures then disagree on whether such a document is non-relevant, and
``prefs_avgjg_Rnonrel`` may read past the end of its arrays: prefeval refuses it, naming the line, so
that a qrels' -1 and -2 (unjudged) must be left out of a qrels_prefs).

**qrels_prefs** (``get_qrels_prefs.c``): an ordinary qrels, ``qid jg docid value``, read as prefs
whose judgment group is the second field (``iter``, mostly ``0``: one group per query) and whose
sub-group is one constant: the grades rank the documents, each grade an equivalence class.

**pairs**: ``qid docA docB winner``, one judgment per line, ``winner`` being ``docA`` or ``docB``,
as preference-judging studies publish them (the TREC CAsT 2019 preferences of Clarke, Vtyurina and
Smucker, TOIS 2021). Each line is read as trec_eval's comments say a pairwise file converts into
prefs: a sub-group of its own, the winner with value 2, the other with value 1. **Each line is also a
judgment group of its own** (ordered by line number): such files record judgments from several
judges (crowd workers, often without an id), so that grouping the lines of a query would infer
preferences no judge stated (by transitivity) and make every disagreement between judges, or an
intransitive judge, an error. So no contradiction can arise within a group; lines that disagree (a >
b on one line, b > a on another) are groups that disagree, which ``prefs_pair`` weighs, and repeated
lines are agreeing groups. A line comparing a document with itself, or whose winner is neither
document, is an error. trec_eval computes the same values on the prefs file with one line ``qid
L<line> 0 doc value`` per document of each line (``L<line>`` zero-padded, so that the groups sort
in line order).

Lines follow the language of :mod:`prefeval.io.trec` (blank lines and lines starting with ``#``
skipped, fields separated by spaces or tabs, no NUL byte or lone carriage return); a malformed line
is an error naming the file and the line.

The result is :class:`~prefeval.io.trec.Qrels` whose documents are every document judged in a
query (each grade 1: the documents a run is ranked against), queries in order of first appearance,
with the preferences in :attr:`~prefeval.io.trec.Qrels.judgments` (:class:`Preferences`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from prefeval.errors import InputError, UsageError
from prefeval.io.codes import KeyIndex, factorize, has_repeats
from prefeval.io.fields import TextColumn, pair_keys, text_keys
from prefeval.io.source import display_name, read_bytes
from prefeval.io.trec import (
    MAX_GRADE,
    LineFormat,
    LineNumbers,
    Qrels,
    ShapeHint,
    qrels_from_columns,
    read_block_columns,
    read_columns,
    split_line,
)

_VALUE_LIMIT = "a preference value is finite, at most 2^53"

PREFS_FORMAT = LineFormat(
    kind="prefs", layout="qid jg jsg docid value", min_fields=5, max_fields=5,
    text_fields={"qid": 0, "group": 1, "subgroup": 2, "docid": 3}, number_field=("value", 4), nan_allowed=False,
    decimal_comma=False, number_limit=MAX_GRADE, limit_text=_VALUE_LIMIT,
    shape_hints=(ShapeHint(4, 4, "is this a qrels (--rel-format qrels_prefs)?"),
                 ShapeHint(6, None, "is this a run?")))
QRELS_PREFS_FORMAT = LineFormat(
    kind="qrels_prefs", layout="qid jg docid value", min_fields=4, max_fields=4,
    text_fields={"qid": 0, "group": 1, "docid": 2}, number_field=("value", 3), nan_allowed=False,
    decimal_comma=False, number_limit=MAX_GRADE, limit_text=_VALUE_LIMIT,
    shape_hints=(ShapeHint(5, 5, "is this a prefs file (--rel-format prefs)?"),
                 ShapeHint(6, None, "is this a run?")))
PAIRS_LAYOUT = "qid docA docB winner"
WINNER_VALUE, OTHER_VALUE = 2.0, 1.0
"""The values of a pairwise line's documents in its sub-group (trec_eval's conversion)."""


class PreferenceLines(NamedTuple):
    """The lines of a preference file as prefs lines, one row each: query, judgment group,
    sub-group (None: one sub-group per group), docid, value; ``group_order``, per row, what its
    group sorts by within its query (None: the group's id, as bytes, as trec_eval's ``strcmp``);
    ``line_of`` the line of a row."""

    source: str
    qids: TextColumn
    groups: TextColumn
    subgroups: TextColumn | None
    docids: TextColumn
    values: np.ndarray
    line_of: Callable[[int], int]
    group_order: np.ndarray | None = None


class Preferences(NamedTuple):
    """The preference judgments of every query, documents numbered as the qrels they come with
    number theirs (``d`` below is an index into the qrels' documents; the qrels' query ``q`` owns
    ``offsets[q] .. offsets[q + 1] - 1``).

    *Groups* (G): per query in order (``group_offsets``), each query's groups sorted as trec_eval
    sorts them (by id, as bytes; a pairwise file's by line), ``group_names`` their ids (a pairwise
    line's ``L`` and its number); ``group_single[g]``: the group has one sub-group (trec_eval's
    "equivalence classes" representation, whose counts some measures treat apart:
    :mod:`prefeval.ranking.preferences`).

    *Members* (M): each document of each group once, group after group (``member_offsets``):
    ``member_doc``, and ``member_relevant`` (its value is > 0: relevant in the group's opinion).

    *Preferences* (P): the transitive closure of each group's preferences, group after group
    (``pair_offsets``): ``winner`` is preferred to ``loser`` by group ``pair_group``;
    ``loser_member`` is the loser's member index.

    *Pairs of documents* (C, trec_eval's counts array): every unordered pair of documents of a query
    that some group orders, query after query (``pair_count_offsets``): ``first`` < ``second`` (as
    indexes), ``forward`` the number of groups preferring ``first``, ``backward`` those preferring
    ``second``.

    ``docid_order[d]``: the place of document d among its query's documents sorted by docid (as
    bytes, ascending): trec_eval's order of the documents a run did not retrieve.
    """

    group_offsets: np.ndarray
    group_names: np.ndarray
    group_single: np.ndarray
    member_offsets: np.ndarray
    member_doc: np.ndarray
    member_relevant: np.ndarray
    pair_offsets: np.ndarray
    winner: np.ndarray
    loser: np.ndarray
    loser_member: np.ndarray
    pair_count_offsets: np.ndarray
    first: np.ndarray
    second: np.ndarray
    forward: np.ndarray
    backward: np.ndarray
    docid_order: np.ndarray

    kind = "preferences"

    @property
    def num_groups(self) -> np.ndarray:
        """G per query."""
        return np.diff(self.group_offsets)


def read_prefs(path: str, binary_relevance: float | None = None, relevance_floor: float | None = None,
               keep_empty: bool = False) -> Qrels:
    """Read a trec_eval prefs file (module docstring)."""
    return _read_numbered(path, PREFS_FORMAT, binary_relevance, relevance_floor)


def read_qrels_prefs(path: str, binary_relevance: float | None = None, relevance_floor: float | None = None,
                     keep_empty: bool = False) -> Qrels:
    """Read a qrels as trec_eval's qrels_prefs reads it (module docstring)."""
    return _read_numbered(path, QRELS_PREFS_FORMAT, binary_relevance, relevance_floor)


def read_pairs(path: str, binary_relevance: float | None = None, relevance_floor: float | None = None,
               keep_empty: bool = False) -> Qrels:
    """Read a pairwise preference file, ``qid docA docB winner`` (module docstring)."""
    _no_grade_options(binary_relevance, relevance_floor)
    source = display_name(path)
    data = read_bytes(path, check_head=lambda head: _scan_pairs(head, source))
    return preferences_qrels(_scan_pairs(data, source))


def _no_grade_options(binary_relevance: float | None, relevance_floor: float | None) -> None:
    if binary_relevance is not None or relevance_floor is not None:
        raise UsageError("-b and -f map grades; preference values only order documents: leave them out")


def _read_numbered(path: str, fmt: LineFormat, binary_relevance: float | None,
                   relevance_floor: float | None) -> Qrels:
    """A prefs or qrels_prefs file, whose lines have a value."""
    _no_grade_options(binary_relevance, relevance_floor)
    source = display_name(path)
    data = read_bytes(path, check_head=lambda head: read_block_columns(head, source, fmt, 1))
    columns = read_columns(data, source, fmt)
    values = columns["value"]
    numbers = LineNumbers.of_file(data, len(values))
    subgroups = columns.get("subgroup")
    lines = PreferenceLines(
        source=source, qids=TextColumn.of_texts(columns["qid"]), groups=TextColumn.of_texts(columns["group"]),
        subgroups=TextColumn.of_texts(subgroups) if subgroups is not None else None,
        docids=TextColumn.of_texts(columns["docid"]), values=values,
        line_of=lambda row: int(numbers.of([row])[0]))
    return preferences_qrels(lines)


def _scan_pairs(data: bytes, source: str) -> PreferenceLines:
    """The lines of a pairwise file as prefs lines: two rows a line (module docstring)."""
    qids: list[str] = []
    documents: list[str] = []
    values: list[float] = []
    lines: list[int] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        fields, problem = split_line(line)
        if problem is None and (not fields or fields[0].startswith(b"#")):
            continue
        if problem is None and len(fields) != 4:
            problem = f"expected 4 fields ({PAIRS_LAYOUT}), found {len(fields)}"
        if problem is None and fields[1] == fields[2]:
            problem = f"document {_text(fields[1])!r} is compared with itself"
        if problem is None and fields[3] not in (fields[1], fields[2]):
            problem = f"the winner {_text(fields[3])!r} is neither docA nor docB"
        if problem is not None:
            raise InputError(source, problem, number)
        qid, first, second, winner = (_text(field) for field in fields)
        qids += [qid, qid]
        documents += [first, second]
        values += [WINNER_VALUE if winner == first else OTHER_VALUE, WINNER_VALUE if winner == second else OTHER_VALUE]
        lines += [number, number]
    line_numbers = np.array(lines, dtype=np.int64)
    groups = TextColumn.of_texts([f"L{number:09d}" for number in lines])
    return PreferenceLines(source=source, qids=TextColumn.of_texts(qids), groups=groups, subgroups=None,
                           docids=TextColumn.of_texts(documents), values=np.array(values, dtype=np.float64),
                           line_of=lambda row: int(line_numbers[row]), group_order=line_numbers)


def _text(field: bytes) -> str:
    return field.decode("utf-8", "surrogateescape")


def preferences_qrels(lines: PreferenceLines) -> Qrels:
    """The qrels of the documents of ``lines`` (each grade 1), with their :class:`Preferences`."""
    source = lines.source
    if not len(lines.values):
        raise InputError(source, "no preference lines in the file")
    negative = np.flatnonzero(lines.values < 0)
    if len(negative):
        row = int(negative[0])
        raise InputError(source, f"value {lines.values[row]:g} is negative: a preference value is >= 0 (0: the judge "
                                 "finds the document not relevant), as trec_eval's prefs format defines it (trec_eval "
                                 "reads a negative one unchecked, its prefs_avgjg_Rnonrel then reads past its arrays); "
                                 "leave out such lines (a qrels' -1 or -2, unjudged)", lines.line_of(row))
    qrels = qrels_from_columns(source, lines.qids, lines.docids, np.ones(len(lines.values)), line_of=lines.line_of,
                               keep_empty=True)._replace(repeated=None)  # a document in several (sub-)groups
    query = KeyIndex(text_keys(qrels.qids)).positions(lines.qids.keys)
    doc = KeyIndex(pair_keys(qrels.query_of_document, qrels.docids.keys)).positions(
        pair_keys(query, lines.docids.keys))
    group_code, group_row = factorize(pair_keys(query, lines.groups.keys))
    if lines.subgroups is None:
        subgroup_code = group_code
    else:
        subgroup_code, _ = factorize(pair_keys(group_code, lines.subgroups.keys))
    num_docs = len(qrels.docids)
    _check_twice_in_subgroup(lines, doc, subgroup_code, num_docs)
    group_rank = _group_ranks(lines, query, group_row)  # each group's place, all queries together
    group = group_rank[group_code]
    members = _members(lines, doc, group, num_docs)
    single = np.bincount(group_rank[group_code[np.unique(subgroup_code, return_index=True)[1]]],
                         minlength=len(group_row)) == 1
    winner, loser, pair_group = _stated(lines.values, doc, group, subgroup_code)
    winner, loser, pair_group = _closed(lines, qrels, doc, group, single, winner, loser, pair_group)
    member_offsets, member_doc, member_relevant = members
    member_keys = np.repeat(np.arange(len(group_row)), np.diff(member_offsets)) * num_docs + member_doc
    loser_member = np.searchsorted(member_keys, pair_group * num_docs + loser)  # members sorted by group, doc
    query_of_group = np.empty(len(group_row), dtype=np.int64)
    query_of_group[group_rank] = query[group_row]
    counts = _pair_counts(winner, loser, pair_group, query_of_group, qrels.query_of_document, qrels.num_queries,
                          num_docs)
    return qrels._replace(judgments=Preferences(
        group_offsets=_offsets(np.bincount(query_of_group, minlength=qrels.num_queries)),
        group_names=_in_rank_order(lines.groups.texts(group_row), group_rank),
        group_single=single,
        member_offsets=member_offsets,
        member_doc=member_doc,
        member_relevant=member_relevant,
        pair_offsets=_offsets(np.bincount(pair_group, minlength=len(group_row))),
        winner=winner,
        loser=loser,
        loser_member=loser_member,
        pair_count_offsets=counts[0],
        first=counts[1],
        second=counts[2],
        forward=counts[3],
        backward=counts[4],
        docid_order=_docid_order(qrels),
    ))


def _in_rank_order(values: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """``values`` (one per group, numbered by first appearance) in the groups' sorted order."""
    ordered = np.empty_like(values)
    ordered[rank] = values
    return ordered


def _offsets(counts: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _check_twice_in_subgroup(lines: PreferenceLines, doc: np.ndarray, subgroup_code: np.ndarray,
                             num_docs: int) -> None:
    """A document on two lines of one sub-group is an error naming both lines."""
    keys = subgroup_code.astype(np.int64) * num_docs + doc
    if not has_repeats(keys):
        return
    codes, first_rows = factorize(keys)
    second = int(np.flatnonzero(first_rows[codes] != np.arange(len(codes)))[0])
    first = int(first_rows[codes[second]])
    where = _group_named(lines, second)
    subgroup = f" sub-group {lines.subgroups[second]!r} of" if lines.subgroups is not None else ""
    raise InputError(lines.source, f"document {lines.docids[second]!r} is twice in{subgroup} {where} (first on line "
                                   f"{lines.line_of(first)}): a document has one value in a sub-group",
                     lines.line_of(second))


def _group_named(lines: PreferenceLines, row: int) -> str:
    """How a message names the group of a row: ``judgment group 'jg' of query 'q'``."""
    return f"judgment group {lines.groups[row]!r} of query {lines.qids[row]!r}"


def _group_ranks(lines: PreferenceLines, query: np.ndarray, group_row: np.ndarray) -> np.ndarray:
    """The place of every group (numbered by first appearance) when groups are sorted by query (in
    the qrels' order) and, within a query, by id as bytes (or ``group_order``)."""
    within = lines.group_order[group_row] if lines.group_order is not None else lines.groups.byte_strings(group_row)
    order = np.lexsort((within, query[group_row]))
    rank = np.empty(len(group_row), dtype=np.int64)
    rank[order] = np.arange(len(group_row))
    return rank


def _members(lines: PreferenceLines, doc: np.ndarray, group: np.ndarray, num_docs: int):
    """(offsets, doc, relevant) of every document of every group, once, group after group in
    document order; a document of value 0 in one sub-group and above 0 in another is an error."""
    keys = group.astype(np.int64) * num_docs + doc
    codes, first_rows = factorize(keys)
    low = np.full(len(first_rows), np.inf)
    high = np.full(len(first_rows), -np.inf)
    np.minimum.at(low, codes, lines.values)
    np.maximum.at(high, codes, lines.values)
    mixed = np.flatnonzero((low == 0) & (high > 0))
    if len(mixed):
        rows = np.flatnonzero(codes == mixed[0])
        zero = int(rows[lines.values[rows] == 0][0])
        other = int(rows[lines.values[rows] > 0][0])
        raise InputError(lines.source, f"document {lines.docids[zero]!r} has value 0 (not relevant) on line "
                                       f"{lines.line_of(zero)} and {lines.values[other]:g} on line "
                                       f"{lines.line_of(other)} in {_group_named(lines, zero)}: a judge "
                                       "finds a document relevant or not (trec_eval: 'has both 0 and non-0 "
                                       "rel_level')", lines.line_of(max(zero, other)))
    member_keys = keys[first_rows]
    order = np.argsort(member_keys, kind="stable")
    member_group = group[first_rows][order]
    return (_offsets(np.bincount(member_group, minlength=int(group.max(initial=-1)) + 1)),
            doc[first_rows][order], high[order] > 0)


def _stated(values: np.ndarray, doc: np.ndarray, group: np.ndarray, subgroup: np.ndarray):
    """The preferences each sub-group states: (winner, loser, group) for every two of its documents
    of different values, the larger value winning; group after group (``group`` numbers the groups
    in their sorted order)."""
    order = np.lexsort((-values, subgroup, group))  # so that the preferences come group after group
    values, doc, group, subgroup = values[order], doc[order], group[order], subgroup[order]
    count = len(values)
    new_run = np.ones(count, dtype=bool)
    new_run[1:] = (subgroup[1:] != subgroup[:-1]) | (values[1:] != values[:-1])
    new_subgroup = np.ones(count, dtype=bool)
    new_subgroup[1:] = subgroup[1:] != subgroup[:-1]
    run_starts = np.flatnonzero(new_run)
    run_end = np.append(run_starts[1:], count)[np.cumsum(new_run) - 1]  # the row after each row's run
    subgroup_starts = np.flatnonzero(new_subgroup)
    subgroup_end = np.append(subgroup_starts[1:], count)[np.cumsum(new_subgroup) - 1]
    below = subgroup_end - run_end  # the rows of the sub-group with a smaller value
    total = int(below.sum())
    winners = np.repeat(np.arange(count), below)
    offsets = np.repeat(np.cumsum(below) - below, below)
    losers = np.repeat(run_end, below) + np.arange(total) - offsets
    return doc[winners], doc[losers], group[winners]


def _closed(lines: PreferenceLines, qrels: Qrels, doc, group, single: np.ndarray, winner, loser, pair_group):
    """Every group's preferences closed transitively, group after group, each once (a document is
    once in a sub-group, and a closure lists a pair once): a group of one sub-group is closed already;
    a group of several is closed by boolean matrix products, and two documents each preferred to the
    other are an error."""
    several = np.flatnonzero(~single)
    if not len(several):
        return winner, loser, pair_group
    offsets = _offsets(np.bincount(pair_group, minlength=len(single)))
    parts, done = [], 0
    for found in several.tolist():
        start, stop = int(offsets[found]), int(offsets[found + 1])
        parts.append((winner[done:start], loser[done:start], pair_group[done:start]))
        parts.append(_closure(lines, qrels, doc, group, found, winner[start:stop], loser[start:stop]))
        done = stop
    parts.append((winner[done:], loser[done:], pair_group[done:]))
    return tuple(np.concatenate(part) for part in zip(*parts))


def _closure(lines: PreferenceLines, qrels: Qrels, doc, group, found: int, winner, loser):
    """The transitive closure of one group's stated preferences (module docstring)."""
    docs = np.unique(np.concatenate((winner, loser)))
    size = len(docs)
    reach = np.zeros((size, size), dtype=bool)
    reach[np.searchsorted(docs, winner), np.searchsorted(docs, loser)] = True
    while True:
        weights = reach.astype(np.float32)
        grown = reach | ((weights @ weights) > 0)
        if np.array_equal(grown, reach):
            break
        reach = grown
    cycle = np.flatnonzero(np.diagonal(reach))
    if len(cycle):
        a = int(cycle[0])
        b = int(np.flatnonzero(reach[a] & reach[:, a] & (np.arange(size) != a))[0])
        row = int(np.flatnonzero((group == found) & (doc == docs[a]))[0])
        names = qrels.docids.texts(docs[[a, b]])
        raise InputError(lines.source, f"{_group_named(lines, row)} prefers {names[0]!r} to {names[1]!r} and "
                                       f"{names[1]!r} to {names[0]!r} (through its sub-groups' preferences): a "
                                       "judgment group must be consistent (trec_eval: 'Pref inconsistency')")
    rows, columns = np.nonzero(reach)
    return docs[rows], docs[columns], np.full(len(rows), found, dtype=np.int64)


def _pair_counts(winner, loser, pair_group, group_query: np.ndarray, query_of_document: np.ndarray,
                 num_queries: int, num_docs: int):
    """trec_eval's counts array: (offsets per query, first, second, forward, backward) of every
    unordered pair of documents some group orders (:class:`Preferences`), query after query. A query
    of one group orders each pair once, one way: only the pairs of queries of several groups are
    counted by sorting."""
    first, second = np.minimum(winner, loser), np.maximum(winner, loser)
    forward = (winner == first).astype(np.int64)
    several = np.bincount(group_query, minlength=num_queries) > 1
    shared = several[query_of_document[first]] if len(first) else np.zeros(0, dtype=bool)
    if shared.any():
        keys, inverse = np.unique(first[shared].astype(np.int64) * max(num_docs, 1) + second[shared],
                                  return_inverse=True)
        ahead = np.bincount(inverse, weights=forward[shared], minlength=len(keys)).astype(np.int64)
        behind = np.bincount(inverse, minlength=len(keys)) - ahead
        alone = ~shared
        counted = (keys // max(num_docs, 1), keys % max(num_docs, 1), ahead, behind)
        kept = (first[alone], second[alone], forward[alone], 1 - forward[alone])
        # both parts list their pairs query after query: merged, they stay so
        at_kept = np.arange(len(kept[0])) + np.searchsorted(query_of_document[counted[0]],
                                                            query_of_document[kept[0]], side="left")
        at_counted = np.arange(len(counted[0])) + np.searchsorted(query_of_document[kept[0]],
                                                                  query_of_document[counted[0]], side="right")
        merged = []
        for part_kept, part_counted in zip(kept, counted):
            out = np.empty(len(part_kept) + len(part_counted), dtype=np.int64)
            out[at_kept], out[at_counted] = part_kept, part_counted
            merged.append(out)
        first, second, forward, backward = merged
    else:
        backward = 1 - forward
    offsets = _offsets(np.bincount(query_of_document[first], minlength=num_queries))
    return offsets, first, second, forward, backward


def _docid_order(qrels: Qrels) -> np.ndarray:
    """Every document's place among its query's documents sorted by docid as bytes (ascending)."""
    names = qrels.docids.byte_strings(np.arange(len(qrels.docids)))
    order = np.lexsort((names, qrels.query_of_document))
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order)) - np.repeat(qrels.offsets[:-1], qrels.num_relevant)
    return place
