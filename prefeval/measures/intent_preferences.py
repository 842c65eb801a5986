"""Preferences over intents: comparing two rankings subtopic by subtopic (issue 26).

A query of a subtopic qrels (:mod:`prefeval.io.subtopics`) has S subtopics with a relevant document
(at the relevance level), each with its own relevant documents; a document relevant to two subtopics
belongs to both. For a ranking x and a subtopic s, x^(s) = (x^(s)_1 <= x^(s)_2 <= ...) is the
position vector of the documents relevant to s (MEASURES.md's position vector, ∞ for those not
retrieved). Two views of the comparison of rankings x and y:

**The mean over intents** (``rpp_ia``, ``invrpp_ia``, ``dcgrpp_ia``, ``lexiprecision_ia``,
``rrlexiprecision_ia``, ``lexirecall_ia``): the mean over the query's subtopics of the preference
computed on their position vectors,

    pref_IA(x, y) = (1/S) Σ_s pref(x^(s), y^(s)),

each subtopic weighted alike (as intent-aware metrics weigh intents without a distribution over
them: ndeval's). With one subtopic, the ordinary preference on binary relevance (rpp_ia is then
``rpp`` on binary qrels, lexirecall_ia ``lexirecall``); each term being antisymmetric and in
[−1, 1], so is the mean.

**The worst-off intent** (``worst_intent``), in the spirit of lexicographic recall: let
t_s(x) = x^(s)_1, the rank at which ranking x first serves subtopic s (∞ if never), and u(x) the
vector (t_1(x), ..., t_S(x)) sorted ascending, its last entries the worst-served subtopics. Then

    worst_intent(x, y) = sgn(u_i(y) − u_i(x)) at the largest i where u_i(x) ≠ u_i(y), 0 if u(x) = u(y):

lexicographic recall of the two vectors u. Read from the worst-served subtopic up: a ranking that
serves more subtopics at all is preferred (∞ entries last), then the one that serves its
worst-served subtopic sooner, then its second worst, and so on: leximin (Rawls' difference
principle) over intents, where lexicographic recall is leximin over relevant documents. In the
cascade model of ERR-IA a user with intent s stops at the first document relevant to s, so t_s is
that user's wait; the worst-off intent is the one whose users wait longest. Its values are −1, 0, 1;
it is antisymmetric, and it prefers x whenever x serves every subtopic no later than y and some
sooner (the sorted vectors are then ordered entry by entry, as order statistics are). With one
subtopic it is the sign of the difference of the reciprocal ranks of the first relevant documents.

Worked values (README, "Preferences over intents"): subtopics 1 = {a, b}, 2 = {a, d}, 3 = {c, d},
x = (b, a, u, c) and y = (d, a, b, u): x^(1) = (1, 2), x^(2) = (2, ∞), x^(3) = (4, ∞); y^(1) =
(2, 3), y^(2) = (1, 2), y^(3) = (1, ∞). RPP per subtopic: 1, −1, −1/2, so rpp_ia = −1/6;
lexiprecision: 1, −1, −1, lexiprecision_ia = −1/3; lexirecall: 1 (x's 2 < y's 3 at i = 2), −1 (y
retrieves 2), −1, lexirecall_ia = −1/3. First ranks t(x) = (1, 2, 4), t(y) = (2, 1, 1): u(x) =
(1, 2, 4), u(y) = (1, 1, 2), and at i = 3, 4 > 2: worst_intent(x, y) = −1 (y serves its worst
subtopic at rank 2, x at rank 4).

On a query without a relevant document every value is 0 (a tie). The positions per subtopic come
from :class:`~prefeval.ranking.intents.IntentPositions`; on ad hoc qrels each query is one intent.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from prefeval.measures.base import Preference, register
from prefeval.measures.preferences import (
    DCGRPP,
    LEXIPRECISION,
    Comparison,
    InverseRPP,
    LexiPrecision,
    LexiRecall,
    RRLexiPrecision,
    UniformRPP,
)
from prefeval.ranking.positions import Positions

DIAZ_FERRARO = "Diaz and Ferraro, SIGIR 2022, doi:10.1145/3477495.3532033; intents: Agrawal et al., WSDM 2009, " \
               "doi:10.1145/1498759.1498766"
LEXIRECALL = "Diaz, Ekstrand and Mitra, ACM TORS 2025, doi:10.1145/3728373"


def subtopic_comparison(comparison: Comparison) -> tuple[Comparison, np.ndarray, int]:
    """The comparison of the pairs subtopic by subtopic: (a comparison on positions of one segment per
    subtopic, each subtopic's query column, the number of queries). Without intents, each query is one
    intent: the comparison itself."""
    positions = comparison.positions
    if positions.intents is None:
        return comparison, np.arange(positions.num_queries), positions.num_queries
    if comparison.first is None:
        raise ValueError("a preference over intents needs the runs of the pairs (Comparison.first, .second)")
    intents = positions.intents
    segments = intents.segment_positions()
    inner = Comparison(segments, segments.ranks[comparison.first], segments.ranks[comparison.second])
    return inner, intents.query, intents.num_queries


def query_mean(per_subtopic: np.ndarray, query: np.ndarray, num_queries: int) -> np.ndarray:
    """(P, Q): the mean over each query's subtopics of per-subtopic values (P, G), added in subtopic
    order; 0 for a query without one."""
    totals = np.zeros(per_subtopic.shape[:-1] + (num_queries,))
    counts = np.bincount(query, minlength=num_queries)
    for step in range(int(counts.max(initial=0))):  # one subtopic of every query at a time, in order
        first = np.searchsorted(query, np.arange(num_queries)) + step
        has = counts > step
        totals[..., has] += per_subtopic[..., first[has]]
    return np.divide(totals, counts, out=np.zeros(totals.shape), where=counts > 0)


class IntentMean(Preference):
    """The mean over a query's subtopics of :attr:`base` on their position vectors (module docstring)."""

    base: ClassVar[type[Preference]]
    reads_intents = True

    def compare(self, comparison: Comparison) -> np.ndarray:
        inner, query, num_queries = subtopic_comparison(comparison)
        values = np.asarray(self.base().compare(inner), dtype=np.float64)
        if inner is comparison:
            return values
        return query_mean(values, query, num_queries)


def _described(base: type[Preference]) -> str:
    return (f"The mean over a query's subtopics of {base.family} on the position vectors of each subtopic's "
            f"relevant documents: (1/S) Σ_s {base.family}(x^(s), y^(s)) (module docstring); binary relevance per "
            f"subtopic. With one subtopic, {base.family} on binary qrels. In [−1, 1], antisymmetric.")


@register
class RPPIA(IntentMean):
    __doc__ = _described(UniformRPP)
    family = "rpp_ia"
    base = UniformRPP
    summary = "recall-paired preference per subtopic, averaged over the query's subtopics"
    cite = DIAZ_FERRARO


@register
class InverseRPPIA(IntentMean):
    __doc__ = _described(InverseRPP)
    family = "invrpp_ia"
    base = InverseRPP
    summary = "RPP with weights 1/i per subtopic, averaged over the query's subtopics"
    cite = DIAZ_FERRARO


@register
class DCGRPPIA(IntentMean):
    __doc__ = _described(DCGRPP)
    family = "dcgrpp_ia"
    base = DCGRPP
    summary = "RPP with weights 1/log2(i+1) per subtopic, averaged over the query's subtopics"
    cite = DIAZ_FERRARO


@register
class LexiRecallIA(IntentMean):
    __doc__ = _described(LexiRecall)
    family = "lexirecall_ia"
    base = LexiRecall
    summary = "lexicographic recall per subtopic, averaged over the query's subtopics"
    cite = LEXIRECALL


@register
class LexiPrecisionIA(IntentMean):
    __doc__ = _described(LexiPrecision)
    family = "lexiprecision_ia"
    base = LexiPrecision
    summary = "lexicographic precision per subtopic, averaged over the query's subtopics"
    cite = LEXIPRECISION


@register
class RRLexiPrecisionIA(IntentMean):
    __doc__ = _described(RRLexiPrecision)
    family = "rrlexiprecision_ia"
    base = RRLexiPrecision
    summary = "reciprocal-rank lexicographic precision per subtopic, averaged over the query's subtopics"
    cite = LEXIPRECISION


@register
class WorstIntent(Preference):
    """The worst-off intent: lexicographic recall of the two rankings' first-served ranks per subtopic,
    sorted (module docstring): with t_s(x) the rank at which x first serves subtopic s (∞ if never)
    and u(x) those ranks sorted ascending, sgn(u_i(y) − u_i(x)) at the largest i where they differ;
    0 if u(x) = u(y). The ranking that serves more subtopics, then serves its worst-served subtopic
    sooner, then its second worst, ..., is preferred (leximin over intents). −1, 0 or 1;
    antisymmetric; x is preferred when it serves every subtopic no later than y, and one sooner. With
    one subtopic, sgn(y_1 − x_1) on the first relevant ranks."""

    family = "worst_intent"
    aliases = ("leximin_ia",)
    value_type = np.int8
    reads_intents = True
    summary = "worst-off intent: who serves the worst-served subtopic sooner, then the next worst (leximin)"
    cite = LEXIRECALL

    def compare(self, comparison: Comparison) -> np.ndarray:
        inner, query, num_queries = subtopic_comparison(comparison)
        segments = inner.positions
        filled = segments.length > 0
        starts = segments.start[filled]
        query = query[filled]  # (each query one intent: the queries with a relevant document)
        first_x, first_y = inner.x[..., starts], inner.y[..., starts]  # t_s: the first of each sorted segment
        length = np.bincount(query, minlength=num_queries)
        values = np.zeros(first_x.shape[:-1] + (num_queries,), dtype=np.int8)  # no subtopic: a tie
        served = np.flatnonzero(length > 0)
        if len(served):
            column = np.cumsum(length > 0) - 1
            positions, x, y = _sorted_by_query(first_x, first_y, column[query], length[served])
            values[..., served] = LexiRecall().compare(Comparison(positions, x, y))
        return values


def _sorted_by_query(first_x: np.ndarray, first_y: np.ndarray, query: np.ndarray,
                     length: np.ndarray) -> tuple[Positions, np.ndarray, np.ndarray]:
    """Positions of one segment per query holding its subtopics' first-served ranks, and each pair's
    two rankings' ranks sorted ascending within each query (∞ last): u(x) and u(y)."""
    width = first_x.shape[-1]
    start = np.concatenate(([0], np.cumsum(length)[:-1])).astype(np.int64)
    order = np.argsort(query, kind="stable")
    x, y = first_x[..., order], first_y[..., order]
    segment = np.repeat(np.arange(len(length)), length)

    def sorted_within(ranks: np.ndarray) -> np.ndarray:
        finite = np.isfinite(ranks)
        deepest = float(ranks[finite].max(initial=0.0)) + 1.0
        key = segment * (deepest + 1.0) + np.where(finite, ranks, deepest)
        return np.take_along_axis(ranks, np.argsort(key, axis=-1, kind="stable"), axis=-1)

    index = (np.arange(width) - np.repeat(start, length) + 1).astype(np.float64)
    ones = np.ones(width)
    zeros = np.zeros(x.shape[:-1] + (len(length),), dtype=np.int64)
    positions = Positions(ranks=np.empty((0, width)), grades=np.broadcast_to(ones, (0, width)), index=index,
                          ideal=ones, start=start, length=length.astype(np.int64),
                          query=np.arange(len(length), dtype=np.int64), num_retrieved=zeros, num_items=zeros,
                          max_grade=1.0)
    return positions, sorted_within(x), sorted_within(y)
