"""Positions per intent: where each run put the documents relevant to each subtopic of a query.

The intent-aware measures (:mod:`prefeval.measures.diversity`) and the preferences over intents
(:mod:`prefeval.measures.intent_preferences`) read a query as a set of subtopics (intents), each with
its own relevant documents, a document relevant to several subtopics belonging to each of them
(:mod:`prefeval.io.subtopics`). :class:`IntentPositions` holds, for all runs and the queries of a
selection at once:

* the query's **intent documents** (D of them, those relevant to at least one of its subtopics at the
  relevance level: the relevant documents of the binary view), document d of query q being one of
  ``doc_start[q] .. doc_start[q] + doc_length[q] - 1``, and ``doc_ranks[r, d]``, its rank in run r
  (``inf`` when not retrieved), in a fixed order of the documents (not sorted by rank);
* the **judgments** (J of them): a document relevant to a subtopic, ``element_doc[j]`` its document,
  grouped into one segment per (query, subtopic) that has a relevant document (G segments, ndeval's
  "actual subtopics"): segment g holds ``start[g] .. start[g] + length[g] - 1``, belongs to query
  ``query[g]``, and the segments of a query come in the order of its subtopics
  (:mod:`prefeval.io.subtopics`).

A query of an ad hoc qrels is one intent, its relevant documents; :meth:`IntentPositions.single`
reads it so from the binary positions, which is what every measure over intents does when the
positions carry no intents (their :attr:`~prefeval.ranking.positions.Positions.intents` is None).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from prefeval.ranking.positions import Positions, Selection

if TYPE_CHECKING:
    from prefeval.io.fields import TextColumn
    from prefeval.ranking.ranktable import RankTable


class IntentPositions(NamedTuple):
    """The intent documents and the judgments per subtopic of the queries of a selection (module
    docstring). ``docids`` (D): the documents' ids, which order the ideal ranking's ties (None when
    no two documents of a query differ in their subtopics, so that no tie between them matters).
    ``memo``: what the measures compute once for all of them (the ideal rankings), by key."""

    doc_ranks: np.ndarray
    doc_start: np.ndarray
    doc_length: np.ndarray
    element_doc: np.ndarray
    start: np.ndarray
    length: np.ndarray
    query: np.ndarray
    docids: TextColumn | None = None
    memo: dict | None = None

    @property
    def num_queries(self) -> int:
        return len(self.doc_start)

    @property
    def num_runs(self) -> int:
        return self.doc_ranks.shape[0]

    @property
    def num_intents(self) -> np.ndarray:
        """S per query: its subtopics with a relevant document."""
        return np.bincount(self.query, minlength=self.num_queries)

    @property
    def element_segment(self) -> np.ndarray:
        """For each judgment, its segment."""
        return np.repeat(np.arange(len(self.length)), self.length)

    @property
    def doc_query(self) -> np.ndarray:
        """For each document, the column of its query."""
        return np.repeat(np.arange(self.num_queries), self.doc_length)

    def remembered(self, key, make):
        """``make()``, made once per key and kept in :attr:`memo`."""
        if self.memo is None:
            return make()
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]

    @classmethod
    def single(cls, positions: Positions) -> IntentPositions:
        """Each query one intent of its relevant documents (the binary positions'; module docstring):
        the documents are the elements of each run's segment (sorted by rank, so that a document is
        not the same in every run, which no measure over one intent can tell)."""
        filled = np.flatnonzero(positions.length > 0)
        return cls(doc_ranks=positions.ranks, doc_start=positions.start, doc_length=positions.length,
                   element_doc=np.arange(positions.ranks.shape[1]), start=positions.start[filled],
                   length=positions.length[filled], query=filled.astype(np.int64), docids=None, memo={})

    def query_block(self, first: int, stop: int) -> IntentPositions:
        """The intents of queries ``first .. stop - 1`` only."""
        d0, d1 = _bounds(self.doc_start, self.doc_length, first, stop)
        s0, s1 = np.searchsorted(self.query, [first, stop])
        e0 = int(self.start[s0]) if s0 < len(self.start) else len(self.element_doc)
        e1 = int(self.start[s1]) if s1 < len(self.start) else len(self.element_doc)
        return IntentPositions(
            doc_ranks=self.doc_ranks[:, d0:d1], doc_start=self.doc_start[first:stop] - d0,
            doc_length=self.doc_length[first:stop], element_doc=self.element_doc[e0:e1] - d0,
            start=self.start[s0:s1] - e0, length=self.length[s0:s1], query=self.query[s0:s1] - first,
            docids=self.docids[np.arange(d0, d1)] if self.docids is not None else None, memo={})

    def ranks(self, doc_ranks: np.ndarray | None = None) -> np.ndarray:
        """(…, J): the rank of each judgment's document (in ``doc_ranks``, default this run's)."""
        return (self.doc_ranks if doc_ranks is None else doc_ranks)[..., self.element_doc]

    def sorted_ranks(self, doc_ranks: np.ndarray | None = None) -> np.ndarray:
        """(…, J): each segment's ranks sorted ascending (``inf`` last): the position vector of every
        run on every subtopic."""
        ranks = self.ranks(doc_ranks)
        if not ranks.shape[-1]:
            return ranks
        finite = np.isfinite(ranks)
        deepest = float(ranks[finite].max(initial=0.0)) + 1.0
        key = self.element_segment * (deepest + 1.0) + np.where(finite, ranks, deepest)
        return np.take_along_axis(ranks, np.argsort(key, axis=-1, kind="stable"), axis=-1)

    def segment_positions(self, doc_ranks: np.ndarray | None = None) -> Positions:
        """The position vectors of every run on every subtopic as :class:`Positions` of one segment per
        subtopic, each subtopic read as a query of its own (G of them): what a preference compares
        subtopic by subtopic (:mod:`prefeval.measures.intent_preferences`)."""
        ranks = self.sorted_ranks(doc_ranks)
        count = len(self.length)
        index = (np.arange(ranks.shape[-1]) - np.repeat(self.start, self.length) + 1).astype(np.float64)
        ones = np.ones(ranks.shape[-1])
        zeros = np.zeros(ranks.shape[:-1] + (count,), dtype=np.int64)
        return Positions(ranks=ranks, grades=np.broadcast_to(ones, ranks.shape), index=index, ideal=ones,
                         start=self.start, length=self.length, query=np.arange(count, dtype=np.int64),
                         num_retrieved=zeros, num_items=zeros, max_grade=1.0)


def _bounds(start: np.ndarray, length: np.ndarray, first: int, stop: int) -> tuple[int, int]:
    """Where the elements of segments ``first .. stop - 1`` start and stop."""
    total = int(start[-1] + length[-1]) if len(start) else 0
    begin = int(start[first]) if first < len(start) else total
    end = int(start[stop]) if stop < len(start) else total
    return begin, end


def intent_view(positions: Positions) -> IntentPositions:
    """The intents of ``positions``: those it carries, else each query one intent
    (:meth:`IntentPositions.single`)."""
    return positions.intents if positions.intents is not None else IntentPositions.single(positions)


def intent_positions(table: RankTable, selection: Selection, level: float | None = None) -> IntentPositions | None:
    """The :class:`IntentPositions` of the selected queries and documents of ``table``, a judgment
    counting when its grade for its subtopic is >= ``level`` (None: > 0); None when the qrels have no
    subtopics (each query is then one intent: :func:`intent_view`)."""
    qrels = table.qrels
    subtopics = qrels.subtopics
    if subtopics is None:
        return None
    column = np.full(table.num_queries, -1)
    column[selection.queries] = np.arange(len(selection.queries))
    judged_query = subtopics.query_of_judgment
    counted = (column[judged_query] >= 0) & selection.documents[subtopics.document]
    if level is not None:
        counted &= subtopics.grades >= level
    rows = np.flatnonzero(counted)
    query = column[judged_query[rows]]
    order = np.lexsort((subtopics.document[rows], subtopics.subtopic[rows], query))  # selection's query order
    rows, query = rows[order], query[order]
    subtopic, document = subtopics.subtopic[rows], subtopics.document[rows]
    num_queries = len(selection.queries)
    # the documents: those of each query's judgments, in the qrels' order
    doc_keys = query.astype(np.int64) * (len(qrels.docids) + 1) + document
    unique_keys, element_doc = np.unique(doc_keys, return_inverse=True)
    docs = unique_keys % (len(qrels.docids) + 1)
    doc_length = np.bincount(unique_keys // (len(qrels.docids) + 1), minlength=num_queries).astype(np.int64)
    new_segment = np.ones(len(rows), dtype=bool)
    new_segment[1:] = (query[1:] != query[:-1]) | (subtopic[1:] != subtopic[:-1])
    starts = np.flatnonzero(new_segment)
    return IntentPositions(
        doc_ranks=table.ranks[:, docs], doc_start=_starts(doc_length), doc_length=doc_length,
        element_doc=element_doc.ravel().astype(np.int64), start=starts.astype(np.int64),
        length=np.diff(np.append(starts, len(rows))).astype(np.int64), query=query[starts].astype(np.int64),
        docids=qrels.docids[docs], memo={})


def with_intents(positions: Positions, table: RankTable, selection: Selection, level: float | None = None) -> Positions:
    """``positions`` (of ``selection``, one segment per query) with their intents when the qrels have
    subtopics (:func:`intent_positions`); as they are otherwise (each query one intent)."""
    intents = intent_positions(table, selection, level)
    return positions if intents is None else positions._replace(intents=intents)


def _starts(length: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(length)[:-1])).astype(np.int64) if len(length) else length.astype(np.int64)
