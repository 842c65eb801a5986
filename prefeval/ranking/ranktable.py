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

from collections.abc import Iterable
from dataclasses import dataclass, replace

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
    def from_ranked(cls, qrels: Qrels, ranked: Iterable[RankedRun]) -> RankTable:
        """Stack ranked runs (in order) into a table; two runs with one id are an error."""
        rows: list[RankedRun] = []
        sources: dict[str, str] = {}
        for run in ranked:
            if run.run_id in sources:
                raise InputError(
                    run.source,
                    f"run id {run.run_id!r} is also the id of {sources[run.run_id]}; rename one file",
                )
            sources[run.run_id] = run.source
            rows.append(run)
        return cls(
            qrels=qrels,
            run_ids=[run.run_id for run in rows],
            ranks=_stack([run.ranks for run in rows], (0, len(qrels.docids)), np.float64),
            num_retrieved=_stack([run.num_retrieved for run in rows], (0, qrels.num_queries), np.int64),
            in_run=_stack([run.in_run for run in rows], (0, qrels.num_queries), bool),
        )


def _stack(rows: list[np.ndarray], empty_shape: tuple[int, int], dtype) -> np.ndarray:
    return np.vstack(rows) if rows else np.empty(empty_shape, dtype=dtype)


@dataclass(frozen=True)
class RankedRun:
    """One run reduced to its row of the RankTable (small enough to send between processes), with
    what the notes on the data need: its number of scored lines and the ids of its queries that the
    qrels do not have (ignored)."""

    run_id: str
    source: str
    ranks: np.ndarray
    num_retrieved: np.ndarray
    in_run: np.ndarray
    scored_lines: int
    foreign_queries: list[str]


class RelevantLookup:
    """Maps a run's rows to the qrels' numbering of queries and of relevant documents.

    The hash tables of the qrels' query ids and relevant docids are built once, for all runs.
    """

    def __init__(self, qrels: Qrels):
        self.qrels = qrels
        self.query_index = pd.Index(qrels.qids, dtype=object)
        self.dropped = frozenset(qrels.dropped_qids)
        self._docid_of_relevant, docids = pd.factorize(qrels.docids)
        self.docid_index = pd.Index(docids, dtype=object)

    def query_numbers(self, qids: np.ndarray) -> np.ndarray:
        """The qrels' number of each qid, -1 for queries the qrels do not have."""
        codes, uniques = pd.factorize(qids)
        return self.query_index.get_indexer(uniques)[codes]

    def relevant_rows(self, row_keys: pd.Index, unique_docids: np.ndarray) -> np.ndarray:
        """For every relevant document of the qrels, the row of the run that retrieved it, or -1.

        ``row_keys`` holds, per row, query × len(unique_docids) + the docid's code in
        ``unique_docids``; its hash table (built to find duplicates) answers every lookup.
        """
        # the code, in the run, of every docid that is relevant somewhere (-1: the run lacks it)
        known = self.docid_index.get_indexer(unique_docids)
        code_of_docid = np.full(len(self.docid_index), -1, dtype=np.int64)
        code_of_docid[known[known >= 0]] = np.flatnonzero(known >= 0)
        codes = code_of_docid[self._docid_of_relevant]
        keys = np.where(codes >= 0, self.qrels.query_of_document * len(unique_docids) + codes, -1)
        return row_keys.get_indexer(keys)


_LEADING_ZEROS = r"(?<![0-9])0+(?=[0-9])"


def query_id_hint(run_qids, qrels_qids) -> str:
    """Why no query id of a run matches the qrels: a difference in zero-padding ('051' against '51',
    'q0101' against 'q101') when that is it, else an example of each."""
    run_qids, qrels_qids = pd.Index(run_qids).astype(str), pd.Index(qrels_qids).astype(str)
    run_bare, qrels_bare = (pd.Index(ids.str.replace(_LEADING_ZEROS, "", regex=True)) for ids in (run_qids, qrels_qids))
    shared = np.flatnonzero(run_bare.isin(qrels_bare))
    if len(shared) == 0:
        return f" (run ids such as {run_qids[0]!r}, qrels ids such as {qrels_qids[0]!r})"
    run_qid = run_qids[shared[0]]
    qrels_qid = qrels_qids[np.flatnonzero(qrels_bare == run_bare[shared[0]])[0]]
    return f"; the ids differ in zero-padding ({run_qid!r} in the run, {qrels_qid!r} in the qrels)"


def rank_relevant(run: RunColumns, lookup: RelevantLookup, topk: int | None = None) -> RankedRun:
    """Reduce one run to its RankTable row: ranks of the relevant documents, documents per query.

    A run none of whose query ids is in the qrels file at all is an error (a wrong file, or ids
    written differently), with a hint; a run whose queries are in the qrels file but were all dropped
    (no relevant document) retrieves nothing that counts."""
    qrels = lookup.qrels
    queries = lookup.query_numbers(run.qids)
    judged = queries >= 0
    foreign: list[str] = []
    if not judged.all():
        run_qids = pd.unique(np.asarray(run.qids[~judged], dtype=object))
        foreign = [str(qid) for qid in run_qids if qid not in lookup.dropped]
        if not judged.any() and len(foreign) == len(run_qids):
            raise InputError(run.source,
                             "no query id of this run is in the qrels" + query_id_hint(run_qids, qrels.qids))
        run = replace(run, qids=run.qids[judged], docids=run.docids[judged], scores=run.scores[judged])
        queries = queries[judged]
    doc_codes, unique_docids = pd.factorize(run.docids)
    row_keys = pd.Index(queries * len(unique_docids) + doc_codes)
    if not row_keys.is_unique:
        _report_duplicate(run, queries, doc_codes, unique_docids, row_keys, qrels)
    rank = rank_within_queries(queries, run.docids, run.scores, qrels.num_queries)
    rows = lookup.relevant_rows(row_keys, unique_docids)
    found = rows >= 0
    ranks = np.full(len(qrels.docids), UNRETRIEVED)
    ranks[found] = rank[rows[found]]
    if topk is not None:
        ranks[ranks > topk] = UNRETRIEVED
    counts = np.bincount(queries, minlength=qrels.num_queries)
    num_retrieved = np.minimum(counts, topk) if topk is not None else counts
    return RankedRun(
        run_id=run.run_id,
        source=run.source,
        ranks=ranks,
        num_retrieved=num_retrieved.astype(np.int64),
        in_run=counts > 0,
        scored_lines=len(run.scores) + int((~judged).sum()),
        foreign_queries=foreign,
    )


def rank_within_queries(queries: np.ndarray, docids: np.ndarray, scores: np.ndarray, num_queries: int) -> np.ndarray:
    """1-based rank of every row within its query: score descending, then docid descending.

    Most run files already list each query's documents in one block by score descending; that is
    checked in one pass, and then only the rows that tie on score are reordered (by docid). Other
    files are sorted numerically, docids compared only among rows whose query and score tie.
    """
    block_start = _blocks_by_score(queries, scores)
    if block_start is None:
        return _rank_by_sorting(queries, docids, scores, num_queries)
    lengths = np.diff(np.append(block_start, len(queries)))
    position = np.arange(len(queries)) - np.repeat(block_start, lengths)
    tied_with_next = (queries[1:] == queries[:-1]) & (scores[1:] == scores[:-1])
    if tied_with_next.any():
        position = _order_ties_by_docid(position, tied_with_next, docids)
    return position + 1.0


def _blocks_by_score(queries: np.ndarray, scores: np.ndarray) -> np.ndarray | None:
    """Where each query's block starts, if every query is one block with scores non-increasing."""
    if len(queries) == 0:
        return None
    same_query = queries[1:] == queries[:-1]
    block_start = np.flatnonzero(np.concatenate(([True], ~same_query)))
    if len(np.unique(queries[block_start])) != len(block_start):
        return None  # a query in two blocks
    if (same_query & (scores[1:] > scores[:-1])).any():
        return None
    return block_start


def _order_ties_by_docid(position: np.ndarray, tied_with_next: np.ndarray, docids: np.ndarray) -> np.ndarray:
    """Reorder each group of adjacent tied rows by docid descending (positions are 0-based)."""
    pairs = np.flatnonzero(tied_with_next)
    descending = docids[pairs] > docids[pairs + 1]
    if descending.all():
        return position
    in_tie = np.zeros(len(position), dtype=bool)
    in_tie[pairs] = in_tie[pairs + 1] = True
    rows = np.flatnonzero(in_tie)
    group = np.cumsum(np.concatenate(([True], ~tied_with_next[rows[:-1]] | (rows[1:] != rows[:-1] + 1))))
    if not descending.any():  # listed by docid ascending: reverse every group
        first = np.flatnonzero(np.diff(np.concatenate(([0], group))))
        last = np.append(first[1:], len(rows)) - 1
        size = last - first
        offset = np.repeat(first, size + 1)
        reversed_rows = rows[offset + (np.repeat(last, size + 1) - np.arange(len(rows)))]
    else:
        _, docid_rank = np.unique(docids[rows].astype(str), return_inverse=True)
        reversed_rows = rows[np.lexsort((-docid_rank.ravel(), group))]
    reordered = position.copy()
    reordered[reversed_rows] = position[rows]
    return reordered


def _rank_by_sorting(queries: np.ndarray, docids: np.ndarray, scores: np.ndarray, num_queries: int) -> np.ndarray:
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


def _report_duplicate(run, queries, doc_codes, unique_docids, row_keys: pd.Index, qrels: Qrels) -> None:
    """A document twice in one query of a run is an error (as in trec_eval), naming both lines."""
    row = int(np.flatnonzero(row_keys.duplicated())[0])
    qid, docid = qrels.qids[queries[row]], unique_docids[doc_codes[row]]
    lines = find_lines(run.text(), {0: qid, 2: docid})
    first, second = (lines + [None, None])[:2]
    raise InputError(
        run.source,
        f"document {docid!r} appears twice for query {qid!r}" + (f" (first on line {first})" if first else ""),
        second,
    )
