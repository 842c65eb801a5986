"""The RankTable: where each run put each relevant document, for all runs and queries at once.

Each run file is parsed once and reduced to the ranks of the relevant documents; nothing else of the
run is kept, so memory grows with the number of relevant documents, not with the length of the runs.
Everything downstream (position vectors, measures, preferences) reads only this table: no measure
ever sees a document id or a file.

Ranking follows trec_eval (MEASURES.md, "Notation"): a run's documents for a query are sorted by
score descending, equal scores by docid descending (code point order, which is byte order for UTF-8),
ranks are 1-based and the rank column of the file is ignored. ``topk=K`` keeps the first K.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd

from prefeval.errors import InputError
from prefeval.io.trec import Qrels, RunColumns, find_lines

UNRETRIEVED = np.inf
"""The rank of a relevant document that a run did not retrieve (or retrieved below ``topk``)."""


@dataclass(frozen=True)
class RankTable:
    """Ranks of the relevant documents, for R runs over the Q queries of the qrels.

    ``ranks[r, f]`` is the 1-based rank of relevant document ``f`` (numbered as in
    :class:`~prefeval.io.trec.Qrels`) in run ``r``, or ``inf``. ``num_retrieved[r, q]`` counts the
    documents run ``r`` returned for query ``q`` (at most ``topk``); ``in_run[r, q]`` says whether
    the run has the query at all. A query missing from a run has every rank ``inf`` (worst case).
    """

    qrels: Qrels
    run_ids: list[str]
    ranks: np.ndarray
    num_retrieved: np.ndarray
    in_run: np.ndarray

    @property
    def qids(self) -> list[str]:
        return self.qrels.qids

    @property
    def num_runs(self) -> int:
        return len(self.run_ids)

    @property
    def num_queries(self) -> int:
        return self.qrels.num_queries

    @classmethod
    def from_runs(cls, qrels: Qrels, runs: Iterable[RunColumns], topk: int | None = None) -> "RankTable":
        """Rank every run against ``qrels``; runs may be a generator, each is dropped once ranked."""
        lookup = RelevantLookup(qrels)
        run_ids: list[str] = []
        sources: dict[str, str] = {}
        ranks, num_retrieved, in_run = [], [], []
        for run in runs:
            if run.run_id in sources:
                raise InputError(
                    run.source,
                    f"run id {run.run_id!r} is also the id of {sources[run.run_id]}; rename one file",
                )
            sources[run.run_id] = run.source
            run_ids.append(run.run_id)
            row = rank_relevant(run, lookup, topk)
            ranks.append(row.ranks)
            num_retrieved.append(row.num_retrieved)
            in_run.append(row.in_run)
        return cls(
            qrels=qrels,
            run_ids=run_ids,
            ranks=np.vstack(ranks) if ranks else np.empty((0, len(qrels.docids))),
            num_retrieved=np.vstack(num_retrieved) if num_retrieved else np.empty((0, qrels.num_queries), np.int64),
            in_run=np.vstack(in_run) if in_run else np.empty((0, qrels.num_queries), bool),
        )


@dataclass(frozen=True)
class RunRanks:
    """One run's row of the RankTable."""

    ranks: np.ndarray
    num_retrieved: np.ndarray
    in_run: np.ndarray


class RelevantLookup:
    """Maps a run's (qid, docid) rows to the qrels' numbering of queries and relevant documents."""

    def __init__(self, qrels: Qrels):
        self.qrels = qrels
        self.query_index = pd.Index(qrels.qids, dtype=object)
        doc_ids, unique_docids = pd.factorize(qrels.docids)
        self.doc_index = pd.Index(unique_docids, dtype=object)
        keys = qrels.query_of_document * len(unique_docids) + doc_ids
        self._order = np.argsort(keys, kind="stable")
        self._sorted_keys = keys[self._order]

    def query_numbers(self, qids: np.ndarray) -> np.ndarray:
        """The qrels' number of each qid, -1 for queries the qrels do not have."""
        codes, uniques = pd.factorize(qids)
        return self.query_index.get_indexer(uniques)[codes]

    def relevant_numbers(self, queries: np.ndarray, doc_codes: np.ndarray, unique_docids: np.ndarray) -> np.ndarray:
        """The qrels' number of each (query, document) as a relevant document, -1 if it is not one.

        ``doc_codes`` index ``unique_docids`` (the output of ``pd.factorize`` on the docids).
        """
        doc_ids = self.doc_index.get_indexer(unique_docids)[doc_codes]
        keys = queries * len(self.doc_index) + doc_ids
        found = np.searchsorted(self._sorted_keys, keys)
        found = np.minimum(found, len(self._sorted_keys) - 1)
        hit = (doc_ids >= 0) & (self._sorted_keys[found] == keys)
        return np.where(hit, self._order[found], -1)


def rank_relevant(run: RunColumns, lookup: RelevantLookup, topk: int | None = None) -> RunRanks:
    """Reduce one run to its RankTable row: ranks of the relevant documents, documents per query."""
    qrels = lookup.qrels
    queries = lookup.query_numbers(run.qids)
    judged = queries >= 0
    queries, docids, scores = queries[judged], run.docids[judged], run.scores[judged]
    doc_codes, unique_docids = pd.factorize(docids)
    _check_unique_documents(run, queries, doc_codes, unique_docids, qrels)
    rank = rank_within_queries(queries, docids, scores, qrels.num_queries)
    relevant = lookup.relevant_numbers(queries, doc_codes, unique_docids)
    rows = np.flatnonzero(relevant >= 0)
    if topk is not None:
        rows = rows[rank[rows] <= topk]
    ranks = np.full(len(qrels.docids), UNRETRIEVED)
    ranks[relevant[rows]] = rank[rows]
    counts = np.bincount(queries, minlength=qrels.num_queries)
    num_retrieved = np.minimum(counts, topk) if topk is not None else counts
    return RunRanks(ranks=ranks, num_retrieved=num_retrieved.astype(np.int64), in_run=counts > 0)


def rank_within_queries(queries: np.ndarray, docids: np.ndarray, scores: np.ndarray, num_queries: int) -> np.ndarray:
    """1-based rank of every row within its query: score descending, then docid descending.

    Sorting is numeric; docids are compared only among rows whose query and score tie.
    """
    order = np.lexsort((-scores, queries))
    sorted_queries, sorted_scores = queries[order], scores[order]
    tied_with_next = (sorted_queries[1:] == sorted_queries[:-1]) & (sorted_scores[1:] == sorted_scores[:-1])
    if tied_with_next.any():
        in_tie = np.zeros(len(order), dtype=bool)
        in_tie[1:] |= tied_with_next
        in_tie[:-1] |= tied_with_next
        tied_rows = order[in_tie]
        _, docid_order = np.unique(docids[tied_rows].astype(str), return_inverse=True)
        tie_break = np.zeros(len(order), dtype=np.int64)
        tie_break[tied_rows] = -docid_order.ravel()
        order = np.lexsort((tie_break, -scores, queries))
        sorted_queries = queries[order]
    first_of_query = np.searchsorted(sorted_queries, np.arange(num_queries))
    rank = np.empty(len(order), dtype=np.float64)
    rank[order] = np.arange(1, len(order) + 1) - first_of_query[sorted_queries]
    return rank


def _check_unique_documents(run, queries, doc_codes, unique_docids, qrels: Qrels) -> None:
    """A document twice in one query of a run is an error (as in trec_eval), naming both lines."""
    keys = queries * len(unique_docids) + doc_codes
    duplicated = pd.Index(keys).duplicated()
    if not duplicated.any():
        return
    row = int(np.flatnonzero(duplicated)[0])
    qid, docid = qrels.qids[queries[row]], unique_docids[doc_codes[row]]
    lines = find_lines(run.data, {0: qid, 2: docid})
    first, second = (lines + [None, None])[:2]
    raise InputError(
        run.source,
        f"document {docid!r} appears twice for query {qid!r}" + (f" (first on line {first})" if first else ""),
        second,
    )
