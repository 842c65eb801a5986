"""Runs against preference judgments: where each run puts the judged documents, and which of the
judged preferences it fulfils, counted as trec_eval 10.0's ``form_prefs_counts.c`` counts them.

**Order.** A run's documents for a query are ranked by score descending and, among equal scores, by
docid **ascending** (trec_eval orders ties so in ``form_prefs_counts.c`` alone; everywhere else,
prefeval as trec_eval, descending), cut at ``--topk``; only the judged documents of the query (those
of any of its judgment groups) matter, in that order. A judged document the run did not retrieve
comes after every retrieved one; the unretrieved ones are ordered by docid ascending among
themselves (trec_eval's order, which decides which of them trec_eval keeps in
``prefs_avgjg_Rnonrel``). :func:`judged_order` derives this order from the RankTable, which holds
docid-descending ranks and each document's tie group (the run's documents sharing its score, which
occupy ranks s .. s + n − 1 in any order): reversing a group maps rank r to 2s + n − 1 − r. The
table is read without a rank cut-off, so that the cut at K is made in this order.

**Counts** (for one run, query and judgment group g, over the preferences a ≻ b of g, closed
transitively: :class:`~prefeval.io.prefs.Preferences`; "retrieved" is within the cut):

* A1, *fulfilled, both retrieved*: a and b retrieved, a above b;
* A2, *not fulfilled, both retrieved*: a and b retrieved, b above a;
* A3, *fulfilled, implied*: a retrieved, b not;
* A4, *not fulfilled, implied*: b retrieved, a not;
* A5, *neither retrieved*;

and R_g, N_g, the group's documents of value > 0 and = 0 (relevant, non-relevant in its judge's
opinion), R_g^ret, N_g^ret those retrieved. The counts array of trec_eval, C[a, b] = the number of
groups preferring a to b, is summed into the pair statistics (:class:`PreferenceCounts`). The
measures (:mod:`prefeval.measures.prefs`) are formulas over these.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from prefeval.io.prefs import Preferences
from prefeval.ranking.positions import segment_reduce
from prefeval.ranking.ranktable import RankTable

UNRETRIEVED_BASE = 2.0**52
"""Where the positions of the unretrieved documents start (beyond any rank), each at this plus its
place in docid order."""


class PreferenceCounts(NamedTuple):
    """The counts of one query (module docstring), for R runs and its G judgment groups.

    Per run and group (R, G): ``a1`` .. ``a5`` (the five areas), ``relevant_retrieved``,
    ``nonrelevant_retrieved``; per group (G,): ``relevant``, ``nonrelevant``, ``single`` (one
    sub-group). For ``prefs_avgjg_Rnonrel`` (R, G): ``kept_fulfilled``, ``kept_possible``, the
    fulfilled (A1 + A3) and all preferences whose less preferred document is relevant or among the
    first R_g non-relevant documents of the group in the run's order (retrieved ones by rank, then the
    others by docid); for ``prefs_avgjg_Rnonrel_ret``: ``kept_ret_fulfilled`` (A1) and
    ``kept_ret_possible`` (A1 + A2) over the preferences whose less preferred document is relevant
    or among the first K non-relevant retrieved ones, K = R_g^ret in a group of one sub-group and R_g
    in one of several (trec_eval's two representations of a group keep so many).

    The pairs of documents some group orders (trec_eval's counts array), per run (R,): for the
    pair's document a the run puts first and the other b, the share C[a, b] / (C[a, b] + C[b, a]) of
    the groups ordering them that prefer a; ``pair_sum_ret`` adds it over the pairs of two
    retrieved documents, ``pair_sum`` over those and the pairs of one (trec_eval's order: by a's
    place, then b's, the first kind first); ``pairs_ret``, ``pairs_imp``, ``pairs`` count the pairs
    of two, of at least one, of any retrieved documents.
    """

    a1: np.ndarray
    a2: np.ndarray
    a3: np.ndarray
    a4: np.ndarray
    a5: np.ndarray
    relevant: np.ndarray
    nonrelevant: np.ndarray
    relevant_retrieved: np.ndarray
    nonrelevant_retrieved: np.ndarray
    single: np.ndarray
    kept_fulfilled: np.ndarray
    kept_possible: np.ndarray
    kept_ret_fulfilled: np.ndarray
    kept_ret_possible: np.ndarray
    pair_sum_ret: np.ndarray
    pair_sum: np.ndarray
    pairs_ret: np.ndarray
    pairs_imp: np.ndarray
    pairs: np.ndarray


def judged_order(table: RankTable, query: int, topk: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(position, retrieved), R × n for the n judged documents of ``query`` (table numbering) in
    every run: ``position`` orders them as trec_eval's prefs measures do (module docstring: the rank
    with equal scores by docid ascending, cut at ``topk``; an unretrieved document at
    :data:`UNRETRIEVED_BASE` plus its place in docid order), ``retrieved`` says which are within the cut.
    The table must have been ranked without a cut-off."""
    qrels = table.qrels
    columns = slice(int(qrels.offsets[query]), int(qrels.offsets[query + 1]))
    ranks = table.ranks[:, columns]
    tied = table.tie_size[:, columns] > 1  # retrieved, so finite
    ascending = ranks.copy()
    ascending[tied] = 2.0 * table.tie_start[:, columns][tied] + table.tie_size[:, columns][tied] - 1.0 - ranks[tied]
    retrieved = np.isfinite(ascending) if topk is None else ascending <= topk
    order = qrels.judgments.docid_order[columns]
    return np.where(retrieved, ascending, UNRETRIEVED_BASE + order), retrieved


def query_counts(preferences: Preferences, first_doc: int, groups: slice, position: np.ndarray,
                 retrieved: np.ndarray, pair_counts: slice) -> PreferenceCounts:
    """The counts of one query (:class:`PreferenceCounts`): its groups ``groups``, its pairs of the
    counts array ``pair_counts``, its documents numbered from ``first_doc``; ``position`` and
    ``retrieved`` as :func:`judged_order` gives them."""
    p = preferences
    group_ids = np.arange(groups.start, groups.stop)
    pair_span = slice(int(p.pair_offsets[groups.start]), int(p.pair_offsets[groups.stop]))
    pair_start = p.pair_offsets[groups.start:groups.stop] - pair_span.start
    pair_length = np.diff(p.pair_offsets[groups.start:groups.stop + 1])
    member_span = slice(int(p.member_offsets[groups.start]), int(p.member_offsets[groups.stop]))
    member_length = np.diff(p.member_offsets[groups.start:groups.stop + 1])
    member_group = np.repeat(np.arange(len(group_ids)), member_length)

    def per_group(values: np.ndarray) -> np.ndarray:
        return segment_reduce(np.add, values.astype(np.int64), pair_start, pair_length, 0).astype(np.int64)

    winner = p.winner[pair_span] - first_doc
    loser = p.loser[pair_span] - first_doc
    ahead = position[:, winner] < position[:, loser]
    got_winner, got_loser = retrieved[:, winner], retrieved[:, loser]
    both = got_winner & got_loser
    areas = (both & ahead, both & ~ahead, got_winner & ~got_loser, ~got_winner & got_loser, ~got_winner & ~got_loser)
    a1, a2, a3, a4, a5 = (per_group(area) for area in areas)

    member_doc = p.member_doc[member_span] - first_doc
    relevant_member = p.member_relevant[member_span]
    member_retrieved = retrieved[:, member_doc]
    relevant = np.bincount(member_group, weights=relevant_member, minlength=len(group_ids)).astype(np.int64)
    nonrelevant = member_length - relevant
    relevant_retrieved = _group_sums(member_retrieved & relevant_member, member_group, len(group_ids))
    nonrelevant_retrieved = _group_sums(member_retrieved & ~relevant_member, member_group, len(group_ids))
    single = p.group_single[groups]

    # the non-relevant members' places among their group's non-relevant members, in the run's order
    nonrelevant_members = np.flatnonzero(~relevant_member)
    place = _places_in_group(position[:, member_doc[nonrelevant_members]], member_group[nonrelevant_members])
    column = np.full(len(member_doc), -1)
    column[nonrelevant_members] = np.arange(len(nonrelevant_members))
    loser_member = p.loser_member[pair_span] - member_span.start
    loser_column = column[loser_member]
    loser_place = place[:, np.maximum(loser_column, 0)] if len(nonrelevant_members) else \
        np.zeros((position.shape[0], len(loser_column)), dtype=np.int64)
    loser_relevant = (loser_column < 0)[None, :]
    pair_group = np.repeat(np.arange(len(group_ids)), pair_length)

    kept = loser_relevant | (loser_place < relevant[pair_group][None, :])
    kept_fulfilled = per_group(kept & (areas[0] | areas[2]))
    kept_possible = per_group(np.broadcast_to(kept, areas[0].shape))
    keep_ret = np.where(single[None, :], relevant_retrieved, relevant[None, :])[:, pair_group]
    kept_ret = loser_relevant | (loser_place < keep_ret)
    kept_ret_fulfilled = per_group(kept_ret & areas[0])
    kept_ret_possible = per_group(kept_ret & both)

    span = slice(int(p.pair_count_offsets[pair_counts.start]), int(p.pair_count_offsets[pair_counts.stop]))
    pair_sums = _pair_sums(p.first[span] - first_doc, p.second[span] - first_doc, p.forward[span],
                           p.backward[span], position, retrieved)
    return PreferenceCounts(a1, a2, a3, a4, a5, relevant, nonrelevant, relevant_retrieved, nonrelevant_retrieved,
                            single, kept_fulfilled, kept_possible, kept_ret_fulfilled, kept_ret_possible, *pair_sums)


def _group_sums(values: np.ndarray, group: np.ndarray, num_groups: int) -> np.ndarray:
    """Σ of ``values`` (R, M) over each group's members: (R, G) integers."""
    out = np.zeros((values.shape[0], num_groups), dtype=np.int64)
    for row, found in enumerate(values):
        out[row] = np.bincount(group, weights=found, minlength=num_groups)
    return out


def _places_in_group(position: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Each member's 0-based place among its group's members (``group``, ascending) in every run's
    order of ``position`` (R, M)."""
    num_runs, count = position.shape
    if not count:
        return np.zeros((num_runs, 0), dtype=np.int64)
    order = np.lexsort((position, np.broadcast_to(group, position.shape)), axis=-1)
    starts = np.searchsorted(group, group)  # the first member of each member's group (sorted by group)
    place = np.empty((num_runs, count), dtype=np.int64)
    np.put_along_axis(place, order, np.arange(count)[None, :] - starts[None, :], axis=-1)
    return place


def _pair_sums(first, second, forward, backward, position: np.ndarray, retrieved: np.ndarray):
    """The pair statistics of :class:`PreferenceCounts`, (R,) each, summed in trec_eval's order."""
    num_runs = position.shape[0]
    if not len(first):
        zeros = np.zeros(num_runs)
        return zeros, zeros, zeros, zeros, zeros
    first_ahead = position[:, first] < position[:, second]
    ahead = np.where(first_ahead, first, second)
    behind = np.where(first_ahead, second, first)
    share = np.where(first_ahead, forward, backward) / (forward + backward)
    rows = np.arange(num_runs)[:, None]
    got_ahead, got_behind = retrieved[rows, ahead], retrieved[rows, behind]
    kind = np.where(got_behind, 0, np.where(got_ahead, 1, 2))  # both retrieved, one, none
    pairs_ret = (kind == 0).sum(axis=-1)
    pairs_imp = (kind < 2).sum(axis=-1)
    if not ((forward > 0) & (backward > 0)).any():  # every share 0 or 1: sums of counts, in any order
        agrees = share > 0
        return ((agrees & (kind == 0)).sum(axis=-1).astype(np.float64),
                (agrees & (kind < 2)).sum(axis=-1).astype(np.float64),
                pairs_ret.astype(np.float64), pairs_imp.astype(np.float64), np.full(num_runs, float(len(first))))
    order = np.lexsort((position[rows, behind], position[rows, ahead], kind), axis=-1)
    terms = np.take_along_axis(np.where(kind < 2, share, 0.0), order, axis=-1)
    running = np.cumsum(terms, axis=-1)  # one term after the other, as trec_eval adds them
    sum_ret = np.where(pairs_ret > 0, running[rows[:, 0], np.maximum(pairs_ret - 1, 0)], 0.0)
    return sum_ret, running[:, -1], pairs_ret.astype(np.float64), pairs_imp.astype(np.float64), \
        np.full(num_runs, float(len(first)))
