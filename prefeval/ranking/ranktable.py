"""The RankTable: where each run put each relevant document, for all runs and queries at once.

Each run file is parsed once and reduced to the ranks of the relevant documents; nothing else of the
run is kept, so memory grows with the number of relevant documents, not with the length of the runs.
Everything downstream (position vectors, measures, preferences) reads only this table: no measure
ever sees a document id or a file.

Ranking follows trec_eval (MEASURES.md, "Notation"): a run's documents for a query are sorted by
score descending, equal scores by docid descending, ranks are 1-based and the rank column of the file
is ignored. ``topk=K`` keeps the first K. Docids compare as the bytes of the file, as trec_eval's
``strcmp`` compares them (:meth:`~prefeval.io.fields.TextColumn.byte_strings`); ids are matched by
the 64-bit keys of those bytes (:mod:`prefeval.io.fields`).

The same pass keeps, for every relevant document, its *tie group*: the documents of its query that
share its score, which occupy the consecutive ranks ``tie_start .. tie_start + tie_size - 1`` in any
order of the ties. trec_eval's order is one of them; ``eval --ties expected`` and ``--ties range``
consider all of them (:mod:`prefeval.ranking.ties`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from prefeval.errors import InputError
from prefeval.io.codes import KeyIndex, factorize, has_repeats
from prefeval.io.fields import TextColumn, by_stretch, first_of_each, pair_keys, stretch_starts, text_keys
from prefeval.io.trec import Qrels, RunColumns
from prefeval.ranking.items import ItemRequest, RunItems, TableItems, run_items

UNRETRIEVED = np.inf
"""The rank of a relevant document that a run did not retrieve (or retrieved below ``topk``)."""


@dataclass(frozen=True, eq=False)
class RankTable:
    """Ranks of the relevant documents, for R runs over the Q queries of the qrels.

    ``ranks[r, f]`` is the 1-based rank of relevant document ``f`` (numbered as in
    :class:`~prefeval.io.trec.Qrels`) in run ``r``, or ``inf``. ``num_retrieved[r, q]`` counts the
    documents run ``r`` returned for query ``q`` (at most ``topk``); ``in_run[r, q]`` says whether
    the run has the query at all. A query missing from a run has every rank ``inf`` (worst case).

    Tie groups (module docstring), R × F like ``ranks``: ``tie_size[r, f]`` is the number of documents
    of the group of document ``f`` in run ``r`` (relevant or not), 1 when no other document shares
    its score; ``tie_start[r, f]`` is the first rank of the group (meaningful where ``tie_size`` >= 2).
    A document that was not retrieved is in no group (size 1, rank ``inf``). Under ``topk=K`` a group
    that straddles rank K keeps every member, those beyond K with rank ``inf``: which of them are
    within K depends on the order of the ties. Tables built without them (``None``) have no ties.
    """

    qrels: Qrels
    run_ids: list[str]
    ranks: np.ndarray
    num_retrieved: np.ndarray
    in_run: np.ndarray
    tie_start: np.ndarray | None = None
    tie_size: np.ndarray | None = None
    run_tags: list[str | None] | None = None
    """Per run, the tag of its file's first line (trec_eval's ``runid``), if it has one."""
    other_ranks: np.ndarray | None = None
    """R × F2: the ranks of the qrels' other documents (grade <= 0, :class:`~prefeval.io.trec.Qrels`),
    or ``inf``; only when loaded for a measure that reads them (None otherwise)."""
    listing_order: np.ndarray | None = None
    """R × Q: each query's place in the order in which the run's file first lists its queries (0 for
    the first; Q for a query it lacks), kept when the conventions add a run's values in that order
    (:func:`listing_order`; None otherwise)."""
    items: TableItems | None = None
    """What the item measures read (:mod:`prefeval.ranking.items`): per run and query, their per-list
    values and provider exposures, and per run its exposure counts; None when none is asked for."""

    def __post_init__(self):
        if self.tie_size is None:
            object.__setattr__(self, "tie_size", np.ones(self.ranks.shape, dtype=np.int32))
        if self.tie_start is None:
            object.__setattr__(self, "tie_start", self.ranks)

    @property
    def qids(self) -> list[str]:
        return self.qrels.qids

    @property
    def num_runs(self) -> int:
        return len(self.run_ids)

    @property
    def num_queries(self) -> int:
        return self.qrels.num_queries

    def judged_only(self) -> RankTable:
        """The table with the documents that are not judged removed from every run before ranking
        (trec_eval's ``-J``, ir_measures' ``judged_only``): a judged document (relevant, or of grade
        >= 0 among the others) keeps its place among the judged documents, its new rank 1 + the
        number of judged documents of its query that the run ranked above it; the others of negative
        grade (in the pool, not judged) are removed too, as trec_eval removes them. ``num_retrieved``
        becomes the number of judged documents retrieved. Needs :attr:`other_ranks`; the tie groups
        are dropped (the policies of ties do not apply under it)."""
        qrels = self.qrels
        num_relevant = len(qrels.docids)
        ranks = np.concatenate((self.ranks, self.other_ranks), axis=1)
        query = np.concatenate((qrels.query_of_document, qrels.query_of_other))
        judged = np.concatenate((np.ones(num_relevant, dtype=bool), qrels.other_grades >= 0))
        kept = np.isfinite(ranks) & judged
        deepest = float(ranks[np.isfinite(ranks)].max(initial=0.0)) + 1.0
        order = np.argsort(query * (deepest + 1.0) + np.where(kept, ranks, deepest), axis=-1, kind="stable")
        sorted_kept = np.take_along_axis(kept, order, axis=-1)
        # every row lists the queries in the same blocks: query-sorted, the same count of each
        sorted_query = np.sort(query, kind="stable")
        running = np.zeros((len(ranks), ranks.shape[1] + 1), dtype=np.int64)
        np.cumsum(sorted_kept, axis=-1, out=running[:, 1:])
        block_start = np.searchsorted(sorted_query, sorted_query)
        new_sorted = np.where(sorted_kept, running[:, 1:] - running[:, block_start], np.inf)
        new = np.empty_like(ranks)
        np.put_along_axis(new, order, new_sorted, axis=-1)
        num_retrieved = np.zeros((len(ranks), self.num_queries), dtype=np.int64)
        for row, kept_row in enumerate(kept):  # one bincount per run
            num_retrieved[row] = np.bincount(query[kept_row], minlength=self.num_queries)
        return replace(self, ranks=new[:, :num_relevant], other_ranks=new[:, num_relevant:],
                       num_retrieved=num_retrieved, tie_start=None, tie_size=None)

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
            tie_start=_stack([run.tie_start for run in rows], (0, len(qrels.docids)), np.float64),
            tie_size=_stack([run.tie_size for run in rows], (0, len(qrels.docids)), np.int32),
            run_tags=[run.tag for run in rows],
            other_ranks=(_stack([run.other_ranks for run in rows], (0, len(qrels.other_docids)), np.float64)
                         if rows and rows[0].other_ranks is not None else None),
            listing_order=(_stack([run.listing_order for run in rows], (0, qrels.num_queries), np.int64)
                           if rows and rows[0].listing_order is not None else None),
            items=TableItems.of([run.items for run in rows]),
        )


def judgment_strings(table: RankTable, length: int) -> list[list[str]]:
    """Per run and query of ``table``, the judgments of the first ``length`` documents retrieved, a
    character each (trec_eval's ``relstring``): the grade (``>`` above 9), ``-`` for a document not in
    the qrels, ``.`` for one in the qrels with a negative grade (in the pool, not judged). The table
    must hold the ranks of the documents that are not relevant (:attr:`RankTable.other_ranks`)."""
    qrels = table.qrels
    strings = [[["-"] * int(min(length, n)) for n in table.num_retrieved[run]] for run in range(table.num_runs)]
    documents = ((table.ranks, qrels.query_of_document, qrels.grades),
                 (table.other_ranks, qrels.query_of_other, qrels.other_grades))
    for ranks, query_of, grades in documents:
        if ranks is None:
            continue
        for run, document in zip(*np.nonzero(ranks <= length)):
            grade = grades[document]
            mark = "." if grade < 0 else (">" if grade > 9 else str(int(grade)))
            strings[run][int(query_of[document])][int(ranks[run, document]) - 1] = mark
    return [["".join(chars) for chars in run] for run in strings]


def _stack(rows: list[np.ndarray], empty_shape: tuple[int, int], dtype) -> np.ndarray:
    return np.vstack(rows) if rows else np.empty(empty_shape, dtype=dtype)


class RankedRun(NamedTuple):
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
    tie_start: np.ndarray
    tie_size: np.ndarray
    other_ranks: np.ndarray | None = None
    tag: str | None = None
    listing_order: np.ndarray | None = None
    items: RunItems | None = None


class RelevantLookup:
    """Maps a run's rows to the qrels' numbering of queries and of relevant documents (and, with
    ``others``, of the qrels' other documents).

    The indexes of the keys of the qrels' query ids and of their documents' (query, docid) pairs
    (:func:`~prefeval.io.fields.pair_keys`, the docids' keys as the qrels were read) are built once,
    for all runs. Ids are matched by their keys (:mod:`prefeval.io.fields`): two different ids with
    one key, a chance of about n² / 2⁶⁵ for n ids, would be taken for one.

    ``items``: what the item measures read of every run's ranking (:mod:`prefeval.ranking.items`).
    """

    def __init__(self, qrels: Qrels, others: bool = False, items: ItemRequest | None = None):
        self.qrels = qrels
        self.items = items
        self.query_groups = items.query_groups(qrels.qids) if items is not None else None
        self.query_index = KeyIndex(text_keys(qrels.qids))
        self.dropped = frozenset(qrels.dropped_qids)
        self.relevant = KeyIndex(pair_keys(qrels.query_of_document, qrels.docids.keys))
        self.others = KeyIndex(pair_keys(qrels.query_of_other, qrels.other_docids.keys)) if others else None

    def query_numbers(self, qids: TextColumn) -> np.ndarray:
        """The qrels' number of each row's query, -1 for queries the qrels do not have; each id of a
        stretch of equal ids (the lines of a query) is looked up once."""
        return by_stretch(qids.keys, self.query_index.positions)


_LEADING_ZEROS = re.compile(r"(?<![0-9])0+(?=[0-9])")


def query_id_hint(run_qids, qrels_qids) -> str:
    """Why no query id of a run matches the qrels: a difference in zero-padding ('051' against '51',
    'q0101' against 'q101') when that is it, else an example of each."""
    run_qids, qrels_qids = [str(qid) for qid in run_qids], [str(qid) for qid in qrels_qids]
    if len(run_qids) == 0 or len(qrels_qids) == 0:
        return " (the qrels hold no query)" if len(qrels_qids) == 0 else ""
    qrels_of_bare: dict[str, str] = {}
    for qid in qrels_qids:
        qrels_of_bare.setdefault(_LEADING_ZEROS.sub("", qid), qid)
    for run_qid in run_qids:
        qrels_qid = qrels_of_bare.get(_LEADING_ZEROS.sub("", run_qid))
        if qrels_qid is not None:
            return f"; the ids differ in zero-padding ({run_qid!r} in the run, {qrels_qid!r} in the qrels)"
    return f" (run ids such as {run_qids[0]!r}, qrels ids such as {qrels_qids[0]!r})"


def rank_relevant(run: RunColumns, lookup: RelevantLookup, topk: int | None = None,
                  queries: np.ndarray | None = None, listing: bool = False) -> RankedRun:
    """Reduce one run to its RankTable row: ranks of the relevant documents, documents per query.

    A run none of whose query ids is in the qrels file at all is an error (a wrong file, or ids
    written differently), with a hint; a run whose queries are in the qrels file but were all dropped
    (no relevant document) retrieves nothing that counts. ``queries``: the qrels' number of each
    row's query when the caller knows them already (every row's query in the qrels). ``listing``:
    keep the order in which the run lists its queries (:func:`listing_order`)."""
    qrels = lookup.qrels
    queries = lookup.query_numbers(run.qids) if queries is None else queries
    judged = queries >= 0
    foreign: list[str] = []
    if not judged.all():
        run_qids = first_of_each(run.qids[~judged])
        foreign = [str(qid) for qid in run_qids if qid not in lookup.dropped]
        if not judged.any() and len(foreign) == len(run_qids):
            raise InputError(run.source,
                             "no query id of this run is in the qrels" + query_id_hint(run_qids, qrels.qids))
        run = run._replace(qids=run.qids[judged], docids=run.docids[judged], scores=run.scores[judged])
        queries = queries[judged]
    row_keys = pair_keys(queries, run.docids.keys)
    if has_repeats(row_keys):
        _report_duplicate(run, judged, queries, row_keys, qrels)
    ranking = rank_within_queries(queries, run.docids, run.scores)
    rows, documents = lookup.relevant.found(row_keys)
    ranks = np.full(len(qrels.docids), UNRETRIEVED)
    ranks[documents] = ranking.rank[rows]
    tie_start = ranks.copy()
    tie_size = np.ones(len(qrels.docids), dtype=np.int32)
    if ranking.tie_size is not None:
        tie_start[documents] = ranking.tie_start[rows]
        tie_size[documents] = ranking.tie_size[rows]
    if topk is not None:
        beyond = ranks > topk
        ranks[beyond] = UNRETRIEVED
        # a member beyond K keeps its group only if the group straddles K
        tie_size[beyond & (tie_start > topk)] = 1
    other_ranks = None
    if lookup.others is not None:
        rows, documents = lookup.others.found(row_keys)
        other_ranks = np.full(len(qrels.other_docids), UNRETRIEVED)
        other_ranks[documents] = ranking.rank[rows]
        if topk is not None:
            other_ranks[other_ranks > topk] = UNRETRIEVED
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
        tie_start=tie_start,
        tie_size=tie_size,
        other_ranks=other_ranks,
        tag=run.tag,
        listing_order=listing_order(queries, qrels.num_queries) if listing else None,
        items=_run_items(run, lookup, queries, ranking.rank, topk, judged) if lookup.items else None,
    )


def _run_items(run: RunColumns, lookup: RelevantLookup, queries: np.ndarray, ranks: np.ndarray, topk: int | None,
               judged: np.ndarray) -> RunItems:
    """The run's :class:`~prefeval.ranking.items.RunItems` (its rows of the qrels' queries, ``judged``
    the rows kept of those read, within ``topk``); an item outside a strict catalogue is an error at
    its line."""
    request = lookup.items
    kept = ranks <= topk if topk is not None else slice(None)

    def outside(row: int) -> InputError:
        at = int(np.flatnonzero(kept)[row]) if topk is not None else row
        message = f"item {run.docids.texts([at])[0]!r} is not in the catalogue ({request.context.source})"
        return run.lines.error(run.source, message, int(np.flatnonzero(judged)[at])) if run.lines is not None \
            else InputError(run.source, message)

    def text(row: int) -> str:
        at = int(np.flatnonzero(kept)[row]) if topk is not None else row
        return run.docids.texts([at])[0]

    return run_items(request, queries[kept], run.docids.keys[kept], ranks[kept], lookup.qrels.num_queries, outside,
                     text, lookup.query_groups)


def listing_order(queries: np.ndarray, num_queries: int) -> np.ndarray:
    """Per query of the qrels (``num_queries``), its place in the order in which ``queries`` (the
    qrels' number of each row's query, rows in file order) first lists it: 0 for the first query
    listed, ``num_queries`` for one never listed. What ir_measures' mean adds a run's values in
    (:mod:`prefeval.ranking.conventions`)."""
    listed, first = np.unique(queries[stretch_starts(queries)], return_index=True)
    places = np.full(num_queries, num_queries, dtype=np.int64)
    places[listed] = np.argsort(np.argsort(first))
    return places


class RowRanks(NamedTuple):
    """Every row of a run ranked within its query (:func:`rank_within_queries`): its 1-based
    ``rank``; and its tie group (the rows of its query with its score): ``tie_start``, the group's
    first rank, and ``tie_size``, its number of rows (1 for a row no other row ties with). Both are
    ``None`` when no two rows of a query tie."""

    rank: np.ndarray
    tie_start: np.ndarray | None = None
    tie_size: np.ndarray | None = None

    def of_rows(self, order: np.ndarray) -> RowRanks:
        """The ranks of rows listed in ``order`` (a permutation), given back to the rows as they were:
        ``self`` ranks row ``order[i]`` at ``i``."""
        def back(values):
            if values is None:
                return None
            restored = np.empty_like(values)
            restored[order] = values
            return restored
        return RowRanks(back(self.rank), back(self.tie_start), back(self.tie_size))


def rank_within_queries(queries: np.ndarray, docids: TextColumn, scores: np.ndarray) -> RowRanks:
    """1-based rank of every row within its query: score descending, then docid descending (as
    bytes, :meth:`~prefeval.io.fields.TextColumn.byte_strings`); and the tie group of every row.

    Most run files already list each query's documents in one block by score descending, which one
    pass checks; then a row's rank is 1 + its place in its block, but for the rows that tie on score,
    reordered by docid (:func:`_order_ties_by_docid`), and a tie group is a stretch of adjacent tied
    rows. Other files are first put in that order (by query, then score descending: a stable sort)
    and ranked alike.
    """
    block_start = _blocks_by_score(queries, scores)
    if block_start is None:
        order = np.lexsort((-scores, queries))
        return rank_within_queries(queries[order], docids[order], scores[order]).of_rows(order)
    lengths = np.diff(np.append(block_start, len(queries)))
    rank = np.arange(1.0, len(queries) + 1.0) - np.repeat(block_start, lengths)
    tied_with_next = (queries[1:] == queries[:-1]) & (scores[1:] == scores[:-1])
    if not tied_with_next.any():
        return RowRanks(rank)
    rows, first, size = _tie_groups(tied_with_next)
    tie_start = rank.copy()
    tie_start[rows] = np.repeat(rank[rows[first]], size)
    tie_size = np.ones(len(rank), dtype=np.int64)
    tie_size[rows] = np.repeat(size, size)
    rank[rows[_by_docid(rows, first, size, docids)]] = rank[rows]
    return RowRanks(rank, tie_start, tie_size)


def _tie_groups(tied_with_next: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The groups of adjacent tied rows (``tied_with_next[i]`` when row i + 1 is in the group of row
    i), as (rows, first, size): the rows of every group (two rows or more), ascending, so group after
    group; where each group starts among them; and its number of rows."""
    in_tie = np.zeros(len(tied_with_next) + 1, dtype=bool)
    in_tie[:-1] = tied_with_next
    in_tie[1:] |= tied_with_next
    rows = np.flatnonzero(in_tie)
    first = np.flatnonzero(np.concatenate(([True], ~tied_with_next[rows[:-1]])))
    return rows, first, np.diff(np.append(first, len(rows)))


def _blocks_by_score(queries: np.ndarray, scores: np.ndarray) -> np.ndarray | None:
    """Where each query's block starts, if every query is one block with scores non-increasing."""
    block_start = stretch_starts(queries)
    if has_repeats(queries[block_start]):
        return None  # a query in two blocks
    if ((queries[1:] == queries[:-1]) & (scores[1:] > scores[:-1])).any():
        return None
    return block_start


def _by_docid(rows: np.ndarray, first: np.ndarray, size: np.ndarray, docids: TextColumn) -> np.ndarray:
    """The order of each group of tied rows (:func:`_tie_groups`) by docid descending: ``rows[order]``
    lists the rows of every group in that order, group after group.

    Runs list tied documents in an order of their own, mostly the same in every group: a group whose
    docids descend keeps its order, one whose docids never descend is reversed, and only the rows of
    the other groups are sorted by docid, the costly part. (Rows whose docids are equal, a document
    twice in a query, which the callers report, may come in either order.)"""
    keys = docids.byte_strings(rows)
    running = np.concatenate(([0], np.cumsum(keys[:-1] > keys[1:])))  # descents up to each row
    descents = running[first + size - 1] - running[first]
    order = np.arange(len(rows))
    reversed_group = descents == 0
    flipped = np.repeat(reversed_group, size)
    order[flipped] = np.repeat((2 * first + size - 1)[reversed_group], size[reversed_group]) - order[flipped]
    resorted = np.flatnonzero(np.repeat(~reversed_group & (descents < size - 1), size))
    if len(resorted):
        _, docid_rank = np.unique(keys[resorted], return_inverse=True)
        group = np.repeat(np.arange(len(first)), size)[resorted]
        order[resorted] = resorted[np.lexsort((-docid_rank.ravel(), group))]
    return order


def _report_duplicate(run: RunColumns, judged: np.ndarray, queries, row_keys: np.ndarray, qrels: Qrels) -> None:
    """A document twice in one query of a run is an error (as in trec_eval), naming both lines.

    The rows are those of the run's judged queries (``judged``, per row as read): the lines come from
    ``run.lines``, which numbers the rows as read, so the input is never read again."""
    codes, first_rows = factorize(row_keys)
    second = int(np.flatnonzero(first_rows[codes] != np.arange(len(codes)))[0])
    first = int(first_rows[codes[second]])
    qid, docid = qrels.qids[queries[second]], run.docids.texts([second])[0]
    message = f"document {docid!r} appears twice for query {qid!r}"
    if run.lines is None:
        raise InputError(run.source, message)
    rows = np.flatnonzero(judged)
    raise run.lines.error(run.source, message, int(rows[second]), int(rows[first]))
