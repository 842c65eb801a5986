"""Position vectors: the sorted ranks of the relevant documents, per run and segment.

A *segment* is one position vector x = (x_1 <= ... <= x_m) for every run: the relevant documents of a
query (binary positions), or those of grade >= g for one grade g present in the query (graded
positions, used by graded RPP). Segments are stored flat, end to end, in query order, so that every
measure is a handful of numpy operations over all runs (or pairs) and all queries at once:

    ranks[r, start[s] : start[s] + length[s]]   the position vector of run r on segment s

Unretrieved documents have rank ``inf`` and sort last, which gives MEASURES.md's conventions for free:
1/inf = 0, gamma**inf = 0, and comparisons (never subtraction) give sgn(inf - inf) = 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from prefeval.ranking.ranktable import RankTable


@dataclass(frozen=True)
class Selection:
    """Which queries (increasing indexes into the RankTable's) and which relevant documents count."""

    queries: np.ndarray
    documents: np.ndarray

    @classmethod
    def everything(cls, table: RankTable) -> Selection:
        return cls(np.arange(table.num_queries), np.ones(len(table.qrels.docids), dtype=bool))

    def at_relevance_level(self, table: RankTable, level: float | None) -> Selection:
        """The selected documents of grade >= ``level``, and the selected queries that keep at least
        one of them (so that every position vector has m >= 1). ``None``: this selection itself."""
        if level is None:
            return self
        documents = self.documents & (table.qrels.grades >= level)
        keeps_one = np.bincount(table.qrels.query_of_document[documents], minlength=table.num_queries) > 0
        return Selection(self.queries[keeps_one[self.queries]], documents)


@dataclass(frozen=True)
class Positions:
    """Position vectors of all runs on a list of segments (see the module docstring).

    Per element (N of them): ``ranks`` and ``grades`` (R × N, sorted by rank within each segment),
    ``index`` (1-based i within the segment), ``ideal`` (the segment's grades sorted descending, the
    same for all runs). Per segment (S): ``start``, ``length`` (m), ``query`` (the column, 0..Q-1,
    of the segment's query). Per run and query (R × Q): ``num_retrieved``, and ``num_items``, the
    number of items the run's ranking orders (AUC's n): its retrieved documents plus the selected
    relevant documents it did not retrieve, which rank below everything retrieved; an analysis that
    ranks a whole catalogue (``prefeval sampled``) sets it to the catalogue size. ``max_grade`` is
    the largest grade of the whole qrels (pfound's pRel = grade / max_grade), whatever the selection.
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
        """Sum of ``values`` (..., N) over each segment: (..., S)."""
        return np.add.reduceat(values, self.start, axis=-1)

    def segment_min(self, values: np.ndarray) -> np.ndarray:
        return np.minimum.reduceat(values, self.start, axis=-1)

    def segment_max(self, values: np.ndarray) -> np.ndarray:
        return np.maximum.reduceat(values, self.start, axis=-1)

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
        )


def binary_positions(table: RankTable, selection: Selection) -> Positions:
    """One segment per selected query, holding its selected relevant documents (grade > 0)."""
    documents, query = _selected_documents(table, selection)
    length = np.bincount(query, minlength=len(selection.queries))
    return _positions(table, selection, documents, length, np.arange(len(selection.queries)))


def graded_positions(table: RankTable, selection: Selection) -> Positions:
    """One segment per selected query and distinct positive grade g in it, holding the documents of
    grade >= g, in query order and then grade order. Equal to :func:`binary_positions` when no query
    has two distinct positive grades."""
    documents, query = _selected_documents(table, selection)
    grades = table.qrels.grades[documents]
    order = np.lexsort((grades, query))
    sorted_query, sorted_grade = query[order], grades[order]
    new_level = np.ones(len(order), dtype=bool)
    new_level[1:] = (sorted_query[1:] != sorted_query[:-1]) | (sorted_grade[1:] != sorted_grade[:-1])
    level_query = sorted_query[new_level]
    if len(level_query) == len(selection.queries):
        return binary_positions(table, selection)
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
    return _positions(table, selection, documents[member[by_level]], length, level_query)


def _selected_documents(table: RankTable, selection: Selection) -> tuple[np.ndarray, np.ndarray]:
    """Flat numbers of the selected relevant documents, and the column of their query."""
    query_of_document = table.qrels.query_of_document
    column = np.full(table.num_queries, -1)
    column[selection.queries] = np.arange(len(selection.queries))
    documents = np.flatnonzero(selection.documents & (column[query_of_document] >= 0))
    return documents, column[query_of_document[documents]]


def _positions(table: RankTable, selection: Selection, documents: np.ndarray, length: np.ndarray,
               query: np.ndarray) -> Positions:
    """Sort each segment's ranks, per run, and gather what the measures need."""
    start = np.concatenate(([0], np.cumsum(length)[:-1])).astype(np.int64)
    segment = np.repeat(np.arange(len(length)), length)
    ranks = table.ranks[:, documents]
    grades = table.qrels.grades[documents]
    # one numeric sort key per element: segment first, then rank (inf -> just past the deepest rank)
    finite = np.isfinite(ranks)
    deepest = ranks[finite].max() if finite.any() else 0.0
    key = segment * (deepest + 2.0) + np.where(finite, ranks, deepest + 1.0)
    order = np.argsort(key, axis=-1, kind="stable")
    ideal_order = np.lexsort((-grades, segment))
    num_retrieved = table.num_retrieved[:, selection.queries]
    return Positions(
        ranks=np.take_along_axis(ranks, order, axis=-1),
        grades=grades[order],
        index=(np.arange(len(documents)) - np.repeat(start, length) + 1).astype(np.float64),
        ideal=grades[ideal_order],
        start=start,
        length=length.astype(np.int64),
        query=np.asarray(query, dtype=np.int64),
        num_retrieved=num_retrieved,
        num_items=num_retrieved + unretrieved_per_query(table, selection),
        max_grade=float(table.qrels.grades.max(initial=0.0)),
    )


def unretrieved_per_query(table: RankTable, selection: Selection) -> np.ndarray:
    """How many selected relevant documents each run did not retrieve, per selected query: (R, Q)."""
    documents, query = _selected_documents(table, selection)
    columns = np.arange(len(selection.queries))
    before = np.zeros((table.num_runs, len(documents) + 1), dtype=np.int64)
    np.cumsum(~np.isfinite(table.ranks[:, documents]), axis=1, out=before[:, 1:])
    return before[:, np.searchsorted(query, columns, side="right")] - before[:, np.searchsorted(query, columns)]
