"""Position vectors: the sorted ranks of the relevant documents, per run and segment.

A *segment* is one position vector x = (x_1 <= ... <= x_m) for every run: the relevant documents of a
query (binary positions), or those of grade >= g for one grade g present in the query (graded
positions, used by graded RPP). Segments are stored flat, end to end, in query order, so that every
measure is a handful of numpy operations over all runs (or pairs) and all queries at once:

    ranks[r, start[s] : start[s] + length[s]]   the position vector of run r on segment s

Unretrieved documents have rank ``inf`` and sort last, which gives MEASURES.md's conventions for free:
1/inf = 0, gamma**inf = 0, and comparisons (never subtraction) give sgn(inf - inf) = 0.

Built with ``ties=True``, positions also carry each element's tie group (:class:`TieGroups`): the
ranks are those of trec_eval's order (docid descending among equal scores), and the groups say which
other orders are possible (:mod:`prefeval.ranking.ties`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from prefeval.io.codes import distinct

if TYPE_CHECKING:  # only named in annotations: importing it (and pandas) would slow `prefeval measures`
    from prefeval.ranking.intents import IntentPositions
    from prefeval.ranking.items import QueryItems
    from prefeval.ranking.ranktable import RankTable


class Selection(NamedTuple):
    """Which queries (indexes into the RankTable's, in the order their values are listed: the qrels'
    order, or another one, :mod:`prefeval.ranking.conventions`) and which relevant documents count."""

    queries: np.ndarray
    documents: np.ndarray

    @classmethod
    def everything(cls, table: RankTable) -> Selection:
        return cls(np.arange(table.num_queries), np.ones(len(table.qrels.docids), dtype=bool))

    def at_relevance_level(self, table: RankTable, level: float | None) -> Selection:
        """The selected documents of grade >= ``level``, on the same queries: a query without one
        keeps an empty segment (its binary measures score 0, as in trec_eval), so that a relevance
        level never drops a query. ``None``: this selection itself."""
        if level is None:
            return self
        return Selection(self.queries, self.documents & (table.qrels.grades >= level))


class TieGroups(NamedTuple):
    """The tie group of every element of :class:`Positions`, R × N like its ranks.

    The group of an element is the set of documents of its query that share its score in the run;
    they occupy the ranks ``start .. start + size - 1`` (``size`` = n documents, relevant or not), and
    ``relevant`` (r) of them are documents of the element's segment (which ones count depends on the
    segment: the relevance level, the grade level of graded positions, the labels kept by a sample,
    so r is counted here, not in the RankTable). In trec_eval's order they are the consecutive
    elements ``place`` = 1 .. r of the segment, in rank order, so the element of place j is the
    segment's (a + j)-th, a = index − place the number of the segment's documents above the group.

    An element in no group (a score no other document of the query has, or not retrieved) has
    ``size`` 1 and ``relevant`` 1, ``place`` 1 and ``start`` its rank. Under ``topk`` a group that
    straddles rank K keeps its members beyond K (rank ``inf``) right after its members within K.
    """

    start: np.ndarray
    size: np.ndarray
    relevant: np.ndarray
    place: np.ndarray

    def columns(self, e0: int, e1: int) -> TieGroups:
        return TieGroups(self.start[:, e0:e1], self.size[:, e0:e1], self.relevant[:, e0:e1], self.place[:, e0:e1])


def segment_reduce(ufunc: np.ufunc, values: np.ndarray, start: np.ndarray, length: np.ndarray,
                   empty: float) -> np.ndarray:
    """``ufunc`` reduced over each segment of the last axis (segment s: ``start[s]`` ..
    ``start[s] + length[s] - 1``); ``empty`` for a segment of length 0. numpy's ``reduceat`` alone
    would give an empty segment the value of the element at its start."""
    if len(length) and length.all():
        return ufunc.reduceat(values, start, axis=-1)
    out = np.full(values.shape[:-1] + (len(length),), empty, dtype=np.result_type(values, np.float64))
    filled = length > 0
    if filled.any():
        out[..., filled] = ufunc.reduceat(values, start[filled], axis=-1)
    return out


def _length_buckets(start: np.ndarray, length: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The non-empty segments by bucket of similar lengths (up to a power of two): per bucket, its
    segments, and the (width, segments) matrix of their element columns (0 where past a segment's
    end) with the mask of the columns that are inside it. Padding costs at most as much as the data."""
    filled = length > 0
    if not filled.any():
        return
    bucket = np.ceil(np.log2(np.maximum(length, 1))).astype(np.int64)
    for size in distinct(bucket[filled]):
        segments = np.flatnonzero(filled & (bucket == size))
        offsets = np.arange(int(length[segments].max()))[:, None]
        valid = offsets < length[segments][None, :]
        yield segments, np.where(valid, start[segments][None, :] + offsets, 0), valid


def segment_cumsum(values: np.ndarray, start: np.ndarray, length: np.ndarray, dtype=np.float64) -> np.ndarray:
    """Inclusive running sums of ``values`` (..., N) within each segment, each segment added from its
    own first element, left to right: a segment's sums depend on its values alone, not on the
    segments before it (a running sum over all elements, less its value at a segment's start, would
    carry their rounding). In ``dtype``; elements outside every segment are 0."""
    out = np.zeros(values.shape, dtype=dtype)
    for _, columns, valid in _length_buckets(start, length):
        sums = np.cumsum(np.where(valid, values[..., columns], 0.0), axis=-2, dtype=dtype)
        out[..., columns[valid]] = sums[..., valid]
    return out


def sequential_segment_sum(values: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Σ of ``values`` (..., N) over each segment, the terms added left to right, as a C loop adds
    them (trec_eval's order); numpy's ``reduceat`` adds a segment of more than eight terms pairwise,
    which can differ in the last bit, and on the edge of a printed digit that shows. The segments
    are laid out as the columns of a matrix (those of similar lengths together, so that padding
    costs at most as much as the data) and accumulated down its rows (``cumsum``, in order by
    definition). Not ``np.add.reduce`` along the rows: numpy merges a matrix of one column into one
    run of values, which it then adds pairwise (a lone query of eight relevant documents)."""
    out = np.zeros(values.shape[:-1] + (len(length),))
    for segments, columns, valid in _length_buckets(start, length):
        out[..., segments] = np.cumsum(np.where(valid, values[..., columns], 0.0), axis=-2)[..., -1, :]
    return out


class Others(NamedTuple):
    """The judged documents of each query that are not in its segment, for one-segment-per-query
    positions: what bpref, infAP, Judged@k, trec_eval's ``-J`` and the like read.

    Per run, ``ranks`` (R × N2, ascending within each query's block, ``inf`` when not retrieved)
    and ``grades`` (R × N2, permuted along with the ranks). A grade >= 0 is a judged document that
    is not relevant here (grade 0, or below the relevance level); a grade < 0 is in the qrels but
    not judged (trec_eval's "unjudged in pool": infAP's sampled pools mark them -1 or -2). Query q
    holds ``start[q] .. start[q] + length[q] - 1``. The documents a run retrieved that are not in
    the qrels at all are the rest of its list: within rank k there are min(k, num_retrieved) minus
    the segment's and the others' documents within k (:meth:`Positions.unjudged_within`).
    """

    ranks: np.ndarray
    grades: np.ndarray
    start: np.ndarray
    length: np.ndarray

    def query_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` (R, N2) over each query's block: (R, Q), 0 for an empty block."""
        return segment_reduce(np.add, values, self.start, self.length, 0.0)

    def count_within(self, k, which: np.ndarray | None = None) -> np.ndarray:
        """(R, Q): how many others (those with ``which``, R × N2, when given) have rank <= k
        (k = 0: any finite rank; k may be (R, Q))."""
        if np.ndim(k):
            k = np.repeat(k, self.length, axis=-1)
        within = np.isfinite(self.ranks) if np.ndim(k) == 0 and k == 0 else self.ranks <= k
        return self.query_sum(within & which if which is not None else within)

    def count_above(self, positions: Positions, ranks: np.ndarray, which: np.ndarray | None = None) -> np.ndarray:
        """For every element of ``positions`` (``ranks``, R × N, one segment per query): how many
        others of its query (with ``which``) have a finite rank strictly smaller than its rank."""
        num_runs, width = ranks.shape
        counted = np.isfinite(self.ranks) & (which if which is not None else True)
        deepest = max(float(self.ranks[np.isfinite(self.ranks)].max(initial=0.0)),
                      float(ranks[np.isfinite(ranks)].max(initial=0.0))) + 2.0
        num_queries = len(self.length)
        row_query = np.arange(num_runs)[:, None] * num_queries
        other_query = row_query + np.repeat(np.arange(num_queries), self.length)[None, :]
        keys = np.sort((other_query * deepest + self.ranks)[counted])
        element_query = row_query + np.repeat(positions.query, positions.length)[None, :]
        targets = element_query * deepest + np.where(np.isfinite(ranks), ranks, deepest - 1.0)
        below = np.searchsorted(keys, targets, side="left")
        return below - np.searchsorted(keys, element_query * deepest, side="left")

    def columns(self, first: int, stop: int) -> Others:
        """The blocks of queries ``first .. stop - 1``."""
        e0 = self.start[first] if first < len(self.start) else self.ranks.shape[1]
        e1 = self.start[stop] if stop < len(self.start) else self.ranks.shape[1]
        return Others(self.ranks[:, e0:e1], self.grades[:, e0:e1], self.start[first:stop] - e0,
                      self.length[first:stop])


class Positions(NamedTuple):
    """Position vectors of all runs on a list of segments (see the module docstring).

    Per element (N of them): ``ranks`` and ``grades`` (R × N, sorted by rank within each segment),
    ``index`` (1-based i within the segment), ``ideal`` (the segment's grades sorted descending, the
    same for all runs). Per segment (S): ``start``, ``length`` (m), ``query`` (the column, 0..Q-1,
    of the segment's query). Per run and query (R × Q): ``num_retrieved``, and ``num_items``, the
    number of items the run's ranking orders (AUC's n): its retrieved documents plus the selected
    relevant documents it did not retrieve, which rank below everything retrieved; an analysis that
    ranks a whole catalogue (``prefeval sampled``) sets it to the catalogue size. ``max_grade`` is
    the largest grade of the whole qrels (pfound's pRel = grade / max_grade), whatever the selection.
    ``ties`` holds the tie groups of the elements when the positions were built with ``ties=True``;
    ``others``, the query's other judged documents (:class:`Others`) when built with ``others=True``.
    ``num_at_level`` (Q,): on positions of every positive grade, the number of documents of each
    query at the evaluation's relevance level (None: no level, the segment's length), which a graded
    measure may look at as trec_eval's do (Rndcg is 0 without one).
    ``sequential``: segment sums add their terms one after the other, in rank order, as trec_eval
    adds them, and a measure computes its value in its tool's own order of operations (trec_eval's,
    which ir_measures runs through pytrec_eval; the sequential arithmetic of
    :mod:`prefeval.ranking.conventions`), for the tools' output byte for byte; otherwise numpy's
    faster pairwise order, which can differ in the last bit. ``intents``: the positions per subtopic
    of the same queries when the qrels have subtopics and a measure reads them
    (:mod:`prefeval.ranking.intents`; None: each query is one intent).

    A segment may be empty (m = 0): a query without a relevant document, kept under trec_eval's
    convention, or without one at the relevance level. The segment reductions give 0 (sum), +inf
    (min) and -inf (max) for it.
    """

    ranks: np.ndarray
    grades: np.ndarray
    index: np.ndarray
    ideal: np.ndarray
    start: np.ndarray
    length: np.ndarray
    query: np.ndarray
    num_retrieved: np.ndarray
    num_items: np.ndarray
    max_grade: float
    ties: TieGroups | None = None
    others: Others | None = None
    sequential: bool = False
    num_at_level: np.ndarray | None = None
    intents: IntentPositions | None = None
    items: QueryItems | None = None
    """What the item measures read of each query (:class:`~prefeval.ranking.items.QueryItems`), when
    one is asked for (None otherwise)."""

    @property
    def num_queries(self) -> int:
        return self.num_retrieved.shape[1]

    @property
    def num_runs(self) -> int:
        return self.ranks.shape[0]

    @property
    def one_segment_per_query(self) -> bool:
        return len(self.start) == self.num_queries

    def segment_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` (..., N) over each segment: (..., S); 0 for an empty segment. With
        :attr:`sequential`, added left to right (:func:`sequential_segment_sum`)."""
        if self.sequential:
            return sequential_segment_sum(values, self.start, self.length)
        return segment_reduce(np.add, values, self.start, self.length, 0.0)

    def segment_min(self, values: np.ndarray) -> np.ndarray:
        """Minimum over each segment; +inf for an empty segment."""
        return segment_reduce(np.minimum, values, self.start, self.length, np.inf)

    def segment_max(self, values: np.ndarray) -> np.ndarray:
        """Maximum over each segment; -inf for an empty segment."""
        return segment_reduce(np.maximum, values, self.start, self.length, -np.inf)

    @property
    def has_empty_segments(self) -> bool:
        """True when some segment holds no document (a query without a relevant one, kept)."""
        return bool((self.length == 0).any())

    def per_element(self, per_segment: np.ndarray) -> np.ndarray:
        """Broadcast a per-segment value (S,) to every element of the segment (N,)."""
        return np.repeat(per_segment, self.length, axis=-1)

    def query_average(self, per_segment: np.ndarray) -> np.ndarray:
        """Average the segments of each query, weighted by their length m_g: (..., S) -> (..., Q)."""
        if self.one_segment_per_query:
            return per_segment
        first_segment = np.searchsorted(self.query, np.arange(self.num_queries))
        weighted = np.add.reduceat(per_segment * self.length, first_segment, axis=-1)
        return weighted / np.add.reduceat(self.length, first_segment)

    def query_blocks(self, max_elements: int) -> Iterator[tuple[int, int]]:
        """Consecutive query ranges (first, stop) holding at most ``max_elements`` elements each (a
        query with more makes a block of its own), to bound the memory of work done per block."""
        elements_before = np.zeros(self.num_queries + 1, dtype=np.int64)
        np.add.at(elements_before, self.query + 1, self.length)
        elements_before = np.cumsum(elements_before)
        first = 0
        while first < self.num_queries:
            stop = int(np.searchsorted(elements_before, elements_before[first] + max_elements, side="right")) - 1
            stop = min(max(stop, first + 1), self.num_queries)
            yield first, stop
            first = stop

    def query_block(self, first: int, stop: int) -> Positions:
        """The positions of queries ``first..stop-1`` only (views, no copies of the big arrays)."""
        s0, s1 = np.searchsorted(self.query, [first, stop])
        e0 = self.start[s0] if s0 < len(self.start) else self.ranks.shape[1]
        e1 = self.start[s1] if s1 < len(self.start) else self.ranks.shape[1]
        return Positions(
            ranks=self.ranks[:, e0:e1],
            grades=self.grades[:, e0:e1],
            index=self.index[e0:e1],
            ideal=self.ideal[e0:e1],
            start=self.start[s0:s1] - e0,
            length=self.length[s0:s1],
            query=self.query[s0:s1] - first,
            num_retrieved=self.num_retrieved[:, first:stop],
            num_items=self.num_items[:, first:stop],
            max_grade=self.max_grade,
            ties=self.ties.columns(e0, e1) if self.ties is not None else None,
            others=self.others.columns(first, stop) if self.others is not None else None,
            sequential=self.sequential,
            num_at_level=self.num_at_level[first:stop] if self.num_at_level is not None else None,
            intents=self.intents.query_block(first, stop) if self.intents is not None else None,
            items=self.items.columns(slice(first, stop)) if self.items is not None else None,
        )

    def unjudged_within(self, k) -> np.ndarray:
        """(R, Q): how many of the first k documents of each run's list are not in the qrels at all
        (k = 0: the whole list): min(k, num_retrieved) minus the segment's and the others' documents
        within k. Needs :attr:`others`."""
        depth = self.num_retrieved if np.ndim(k) == 0 and k == 0 else np.minimum(k, self.num_retrieved)
        if np.ndim(k) == 0 and k == 0:
            in_segment = self.segment_sum(np.isfinite(self.ranks))
        else:
            in_segment = self.segment_sum(self.ranks <= (np.repeat(k, self.length, axis=-1) if np.ndim(k) else k))
        return depth - in_segment - self.others.count_within(k)

    def gather(self, runs: np.ndarray, queries: np.ndarray) -> Positions:
        """One-segment-per-query positions of one run whose queries are the pairs (``runs[k]``,
        ``queries[k]``) of this run and query (copies): what a metric computes on it, query k, is its
        value for that run and query."""
        if not self.one_segment_per_query:
            raise ValueError("gather needs one segment per query")
        length = self.length[queries]
        start = np.concatenate(([0], np.cumsum(length)[:-1])).astype(np.int64)
        elements = np.repeat(self.start[queries] - start, length) + np.arange(int(length.sum()))
        rows = np.repeat(runs, length)

        def per_element(values: np.ndarray) -> np.ndarray:
            return values[rows, elements][None, :]

        ties = None
        if self.ties is not None:
            ties = TieGroups(*(per_element(values) for values in self.ties))
        return Positions(
            ranks=per_element(self.ranks),
            grades=per_element(self.grades),
            index=self.index[elements],
            ideal=self.ideal[elements],
            start=start,
            length=length,
            query=np.arange(len(queries), dtype=np.int64),
            num_retrieved=self.num_retrieved[runs, queries][None, :],
            num_items=self.num_items[runs, queries][None, :],
            max_grade=self.max_grade,
            ties=ties,
        )


def binary_positions(table: RankTable, selection: Selection, ties: bool = False, others: bool = False,
                     sequential: bool = False) -> Positions:
    """One segment per selected query, holding its selected relevant documents (grade > 0); with
    ``ties``, their tie groups too; with ``others``, the query's other judged documents
    (:class:`Others`: the table must have been loaded with them); with ``sequential``, segment sums
    in trec_eval's order (:attr:`Positions.sequential`)."""
    documents, query = _selected_documents(table, selection)
    length = np.bincount(query, minlength=len(selection.queries))
    positions = _positions(table, selection, documents, length, np.arange(len(selection.queries)), ties)
    if others or sequential:
        positions = positions._replace(others=_others(table, selection) if others else None, sequential=sequential)
    return positions


def _others(table: RankTable, selection: Selection) -> Others:
    """The selected queries' documents of the qrels that are not selected: the relevant ones left
    out (below the relevance level, or not drawn) and the other documents (grade <= 0), sorted by
    rank within each query, per run."""
    qrels = table.qrels
    column = np.full(table.num_queries, -1)
    column[selection.queries] = np.arange(len(selection.queries))
    left_out = np.flatnonzero(~selection.documents & (column[qrels.query_of_document] >= 0))
    other = np.flatnonzero(column[qrels.query_of_other] >= 0)
    query = np.concatenate((column[qrels.query_of_document[left_out]], column[qrels.query_of_other[other]]))
    ranks = np.concatenate((table.ranks[:, left_out], table.other_ranks[:, other]), axis=1)
    grades = np.concatenate((qrels.grades[left_out], qrels.other_grades[other]))
    finite = np.isfinite(ranks)
    deepest = float(ranks[finite].max(initial=0.0)) + 1.0
    order = np.argsort(query * (deepest + 1.0) + np.where(finite, ranks, deepest), axis=-1, kind="stable")
    length = np.bincount(query, minlength=len(selection.queries)).astype(np.int64)
    return Others(ranks=np.take_along_axis(ranks, order, axis=-1), grades=grades[order],
                  start=np.concatenate(([0], np.cumsum(length)[:-1])).astype(np.int64), length=length)


def graded_positions(table: RankTable, selection: Selection, ties: bool = False) -> Positions:
    """One segment per selected query and distinct positive grade g in it, holding the documents of
    grade >= g, in query order and then grade order. Equal to :func:`binary_positions` when no query
    has two distinct positive grades. With ``ties``, the tie groups too (r counted per segment)."""
    documents, query = _selected_documents(table, selection)
    grades = table.qrels.grades[documents]
    order = np.lexsort((grades, query))
    sorted_query, sorted_grade = query[order], grades[order]
    new_level = np.ones(len(order), dtype=bool)
    new_level[1:] = (sorted_query[1:] != sorted_query[:-1]) | (sorted_grade[1:] != sorted_grade[:-1])
    level_query = sorted_query[new_level]
    if len(level_query) == len(selection.queries):
        return binary_positions(table, selection, ties)
    own_level = np.empty(len(order), dtype=np.int64)
    own_level[order] = np.cumsum(new_level) - 1
    first_level = np.searchsorted(level_query, np.arange(len(selection.queries)))
    # a document of grade g belongs to the levels g' <= g of its query
    levels_per_document = own_level - first_level[query] + 1
    member = np.repeat(np.arange(len(documents)), levels_per_document)
    offset_in_run = np.arange(len(member)) - np.repeat(np.cumsum(levels_per_document) - levels_per_document,
                                                       levels_per_document)
    level = first_level[query[member]] + offset_in_run
    by_level = np.argsort(level, kind="stable")
    length = np.bincount(level, minlength=len(level_query))
    return _positions(table, selection, documents[member[by_level]], length, level_query, ties)


def _selected_documents(table: RankTable, selection: Selection) -> tuple[np.ndarray, np.ndarray]:
    """Flat numbers of the selected relevant documents, and the column of their query."""
    query_of_document = table.qrels.query_of_document
    column = np.full(table.num_queries, -1)
    column[selection.queries] = np.arange(len(selection.queries))
    documents = np.flatnonzero(selection.documents & (column[query_of_document] >= 0))
    columns = column[query_of_document[documents]]
    if len(columns) > 1 and (np.diff(columns) < 0).any():  # queries in another order than the qrels'
        order = np.argsort(columns, kind="stable")
        documents, columns = documents[order], columns[order]
    return documents, columns


def _positions(table: RankTable, selection: Selection, documents: np.ndarray, length: np.ndarray,
               query: np.ndarray, ties: bool = False) -> Positions:
    """Sort each segment's ranks, per run, and gather what the measures need."""
    start = np.concatenate(([0], np.cumsum(length)[:-1])).astype(np.int64)
    segment = np.repeat(np.arange(len(length)), length)
    ranks = table.ranks[:, documents]
    grades = table.qrels.grades[documents]
    sort_ranks = ranks
    if ties:
        tie_start, tie_size = table.tie_start[:, documents], table.tie_size[:, documents]
        # a member of a group that straddles topk, beyond it, goes right after the group's others
        sort_ranks = np.where(np.isinf(ranks) & (tie_size > 1), tie_start + tie_size, ranks)
    # one numeric sort key per element: segment first, then rank (inf -> just past the deepest rank)
    finite = np.isfinite(sort_ranks)
    deepest = sort_ranks[finite].max() if finite.any() else 0.0
    key = segment * (deepest + 2.0) + np.where(finite, sort_ranks, deepest + 1.0)
    order = np.argsort(key, axis=-1, kind="stable")
    ideal_order = np.lexsort((-grades, segment))
    num_retrieved = table.num_retrieved[:, selection.queries]
    sorted_ranks = np.take_along_axis(ranks, order, axis=-1)
    return Positions(
        ranks=sorted_ranks,
        grades=grades[order],
        index=(np.arange(len(documents)) - np.repeat(start, length) + 1).astype(np.float64),
        ideal=grades[ideal_order],
        start=start,
        length=length.astype(np.int64),
        query=np.asarray(query, dtype=np.int64),
        num_retrieved=num_retrieved,
        num_items=num_retrieved + unretrieved_per_query(table, selection),
        max_grade=table.qrels.max_grade,
        ties=_tie_groups(np.take_along_axis(tie_start, order, axis=-1), np.take_along_axis(tie_size, order, axis=-1),
                         sorted_ranks, segment) if ties else None,
    )


def _tie_groups(start: np.ndarray, size: np.ndarray, ranks: np.ndarray, segment: np.ndarray) -> TieGroups:
    """Count and number the segment's documents in each group: the adjacent elements of a row with
    the segment and the group start of their own (elements in no group are groups of one)."""
    grouped = size > 1
    start = np.where(grouped, start, ranks)
    num_runs, width = size.shape
    new_group = np.ones(size.shape, dtype=bool)
    new_group[:, 1:] = ~(grouped[:, 1:] & grouped[:, :-1] & (start[:, 1:] == start[:, :-1])
                         & (segment[1:] == segment[:-1]))
    flat = new_group.ravel()
    group = np.cumsum(flat) - 1
    first = np.flatnonzero(flat)
    place = np.arange(flat.size) - first[group] + 1
    relevant = np.diff(np.append(first, flat.size))[group]
    shape = (num_runs, width)
    return TieGroups(start=start, size=np.where(grouped, size, 1), relevant=relevant.reshape(shape),
                     place=place.reshape(shape))


def unretrieved_per_query(table: RankTable, selection: Selection) -> np.ndarray:
    """How many selected relevant documents each run did not retrieve, per selected query: (R, Q)."""
    documents, query = _selected_documents(table, selection)
    columns = np.arange(len(selection.queries))
    before = np.zeros((table.num_runs, len(documents) + 1), dtype=np.int64)
    np.cumsum(~np.isfinite(table.ranks[:, documents]), axis=1, out=before[:, 1:])
    return before[:, np.searchsorted(query, columns, side="right")] - before[:, np.searchsorted(query, columns)]
