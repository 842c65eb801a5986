"""Metrics: one score per run and query, computed for all runs and queries at once.

Notation (MEASURES.md): x = (x_1 <= ... <= x_m) are the ranks of the query's m relevant documents in
the run, inf for those it did not retrieve; i is the 1-based index into x. "Within k" means
x_i <= k, and k = 0 means no cut-off (every finite x_i counts). Every metric receives
one-segment-per-query positions and returns an (R, Q) array.

Every metric here is additive (:class:`~prefeval.measures.base.AdditiveMetric`): it is written as
the share of each relevant document, given its rank, and the value is the sum of the shares.
"""

from __future__ import annotations

import numpy as np

from prefeval.measures.base import AdditiveMetric, Param, register
from prefeval.ranking.positions import Positions

CUTOFF = Param("k", int, 0, low=0, meaning="rank cut-off; 0 means none")
DEPTH = Param("k", int, 10, low=0, meaning="rank cut-off; 0 means the whole list")


def within(ranks: np.ndarray, k: int) -> np.ndarray:
    """x_i <= k (k = 0: x_i finite)."""
    return np.isfinite(ranks) if k == 0 else ranks <= k


def per_document(positions: Positions, per_query: np.ndarray) -> np.ndarray:
    """A per-query value (Q,) or per-run-and-query value (R, Q), repeated for each relevant document."""
    return positions.per_element(per_query)


def ideal_dcg(positions: Positions, gains: np.ndarray, k: int) -> np.ndarray:
    """Per query: Σ_{i within k} gain(ideal_i) / log2(i + 1), the grades sorted descending."""
    ranks = positions.index
    return positions.segment_sum(np.where(within(ranks, k), gains / np.log2(ranks + 1.0), 0.0))


@register
class AveragePrecision(AdditiveMetric):
    """AP@k = (1/m) Σ_{i : x_i within k} i / x_i. Equals trec_eval ``map`` and ``map_cut.k``."""

    family = "ap"
    parameters = (CUTOFF,)
    summary = "average precision (trec_eval map, map_cut.k)"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        m = per_document(positions, positions.length)
        return np.where(within(ranks, self.param("k")), positions.index / ranks, 0.0) / m


@register
class RankBiasedPrecision(AdditiveMetric):
    """RBP@γ,k = (1 − γ) Σ_{i : x_i within k} γ^(x_i − 1) (Moffat and Zobel, 2008); γ = 0.5 by default."""

    family = "rbp"
    parameters = (
        Param("gamma", float, 0.5, low=0.0, high=1.0, low_open=True, high_open=True, meaning="persistence"),
        CUTOFF,
    )
    summary = "rank-biased precision"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        gamma = self.param("gamma")
        return np.where(within(ranks, self.param("k")), (1.0 - gamma) * gamma ** (ranks - 1.0), 0.0)


@register
class ReciprocalRank(AdditiveMetric):
    """RR@k = 1 / x_1, or 0 when x_1 is not within k. Equals trec_eval ``recip_rank`` (k = 0).

    As a sum of shares: only the first relevant document (i = 1) has one, 1 / x_1.
    """

    family = "rr"
    aliases = ("mrr",)
    parameters = (CUTOFF,)
    summary = "reciprocal rank of the first relevant document (trec_eval recip_rank)"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return np.where((positions.index == 1) & within(ranks, self.param("k")), 1.0 / ranks, 0.0)


@register
class Precision(AdditiveMetric):
    """P@k = #{i : x_i <= k} / k. Equals trec_eval ``P.k``; a run shorter than k is not padded.

    k = 0 gives the precision of the whole list, relevant retrieved / retrieved (0 for an empty list).
    """

    family = "p"
    parameters = (DEPTH,)
    summary = "precision at k (trec_eval P.k)"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        k = self.param("k")
        hits = within(ranks, k).astype(np.float64)
        if k > 0:
            return hits / k
        retrieved = per_document(positions, positions.num_retrieved)
        return np.divide(hits, retrieved, out=np.zeros(np.broadcast_shapes(hits.shape, retrieved.shape)), where=retrieved > 0)


@register
class Recall(AdditiveMetric):
    """R@k = #{i : x_i <= k} / m. Equals trec_eval ``recall.k``; k = 0 gives recall of the whole list."""

    family = "r"
    aliases = ("recall",)
    parameters = (DEPTH,)
    summary = "recall at k (trec_eval recall.k)"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return within(ranks, self.param("k")) / per_document(positions, positions.length)


@register
class RPrecision(AdditiveMetric):
    """RP = P@m = #{i : x_i <= m} / m. Equals trec_eval ``Rprec``."""

    family = "rp"
    aliases = ("rprec",)
    summary = "R-precision (trec_eval Rprec)"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        m = per_document(positions, positions.length)
        return (ranks <= m) / m


@register
class NDCG(AdditiveMetric):
    """nDCG@k = DCG@k / ideal DCG@k, with DCG@k = Σ_{i : x_i within k} g_i / log2(x_i + 1).

    The gain g_i is the document's grade (trec_eval's default); the ideal list sorts all m relevant
    grades descending and keeps the first k. Equals trec_eval ``ndcg`` and ``ndcg_cut.k``. Graded: every
    positive grade is a gain, whatever the relevance level (as in trec_eval, whose ``-l`` does not
    change ndcg).
    """

    family = "ndcg"
    parameters = (CUTOFF,)
    reads_grades = True
    summary = "normalised discounted cumulative gain, gain = grade (trec_eval ndcg, ndcg_cut.k)"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        k = self.param("k")
        ideal = per_document(positions, ideal_dcg(positions, positions.ideal, k))
        return np.where(within(ranks, k), positions.grades / np.log2(ranks + 1.0), 0.0) / ideal
