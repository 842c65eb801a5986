"""Metrics: one score per run and query, computed for all runs and queries at once.

Notation (MEASURES.md): x = (x_1 <= ... <= x_m) are the ranks of the query's m relevant documents in
the run, inf for those it did not retrieve; i is the 1-based index into x. "Within k" means
x_i <= k, and k = 0 means no cut-off (every finite x_i counts). Every metric receives
one-segment-per-query positions and returns an (R, Q) array.
"""

from __future__ import annotations

import numpy as np

from prefeval.measures.base import Metric, Param, register
from prefeval.positions import Positions

CUTOFF = Param("k", int, 0, low=0, meaning="rank cut-off; 0 means none")
DEPTH = Param("k", int, 10, low=0, meaning="rank cut-off; 0 means the whole list")


def within(ranks: np.ndarray, k: int) -> np.ndarray:
    """x_i <= k (k = 0: x_i finite)."""
    return np.isfinite(ranks) if k == 0 else ranks <= k


def relevant_within(positions: Positions, k: int) -> np.ndarray:
    """#{i : x_i within k}, per run and query."""
    return positions.segment_sum(within(positions.ranks, k).astype(np.float64))


@register
class AveragePrecision(Metric):
    """AP@k = (1/m) Σ_{i : x_i within k} i / x_i. Equals trec_eval ``map`` and ``map_cut.k``."""

    family = "ap"
    parameters = (CUTOFF,)
    summary = "average precision (trec_eval map, map_cut.k)"

    def compute(self, positions: Positions) -> np.ndarray:
        x = positions.ranks
        terms = np.where(within(x, self.param("k")), positions.index / x, 0.0)
        return positions.segment_sum(terms) / positions.length


@register
class RankBiasedPrecision(Metric):
    """RBP@γ,k = (1 − γ) Σ_{i : x_i within k} γ^(x_i − 1) (Moffat and Zobel, 2008); γ = 0.5 by default."""

    family = "rbp"
    parameters = (
        Param("gamma", float, 0.5, low=0.0, high=1.0, low_open=True, high_open=True, meaning="persistence"),
        CUTOFF,
    )
    summary = "rank-biased precision"

    def compute(self, positions: Positions) -> np.ndarray:
        gamma = self.param("gamma")
        x = positions.ranks
        terms = np.where(within(x, self.param("k")), (1.0 - gamma) * gamma ** (x - 1.0), 0.0)
        return positions.segment_sum(terms)


@register
class ReciprocalRank(Metric):
    """RR@k = 1 / x_1, or 0 when x_1 is not within k. Equals trec_eval ``recip_rank`` (k = 0)."""

    family = "rr"
    aliases = ("mrr",)
    parameters = (CUTOFF,)
    summary = "reciprocal rank of the first relevant document (trec_eval recip_rank)"

    def compute(self, positions: Positions) -> np.ndarray:
        first = positions.first(positions.ranks)
        return np.where(within(first, self.param("k")), 1.0 / first, 0.0)


@register
class Precision(Metric):
    """P@k = #{i : x_i <= k} / k. Equals trec_eval ``P.k``; a run shorter than k is not padded.

    k = 0 gives the precision of the whole list, relevant retrieved / retrieved (0 for an empty list).
    """

    family = "p"
    parameters = (DEPTH,)
    summary = "precision at k (trec_eval P.k)"

    def compute(self, positions: Positions) -> np.ndarray:
        k = self.param("k")
        hits = relevant_within(positions, k)
        if k > 0:
            return hits / k
        retrieved = positions.num_retrieved
        return np.divide(hits, retrieved, out=np.zeros_like(hits), where=retrieved > 0)


@register
class Recall(Metric):
    """R@k = #{i : x_i <= k} / m. Equals trec_eval ``recall.k``; k = 0 gives recall of the whole list."""

    family = "r"
    aliases = ("recall",)
    parameters = (DEPTH,)
    summary = "recall at k (trec_eval recall.k)"

    def compute(self, positions: Positions) -> np.ndarray:
        return relevant_within(positions, self.param("k")) / positions.length


@register
class RPrecision(Metric):
    """RP = P@m = #{i : x_i <= m} / m. Equals trec_eval ``Rprec``."""

    family = "rp"
    aliases = ("rprec",)
    summary = "R-precision (trec_eval Rprec)"

    def compute(self, positions: Positions) -> np.ndarray:
        m = positions.per_element(positions.length)
        return positions.segment_sum((positions.ranks <= m).astype(np.float64)) / positions.length


@register
class NDCG(Metric):
    """nDCG@k = DCG@k / ideal DCG@k, with DCG@k = Σ_{i : x_i within k} g_i / log2(x_i + 1).

    The gain g_i is the document's grade (trec_eval's default); the ideal list sorts all m relevant
    grades descending and keeps the first k. Equals trec_eval ``ndcg`` and ``ndcg_cut.k``. Graded: every
    positive grade is a gain, whatever the relevance level (as in trec_eval, whose ``-l`` does not
    change ndcg).
    """

    family = "ndcg"
    parameters = (CUTOFF,)
    graded = True
    summary = "normalised discounted cumulative gain, gain = grade (trec_eval ndcg, ndcg_cut.k)"

    def compute(self, positions: Positions) -> np.ndarray:
        k = self.param("k")
        x = positions.ranks
        gains = np.where(within(x, k), positions.grades / np.log2(x + 1.0), 0.0)
        ideal_ranks = positions.index
        ideal = np.where(within(ideal_ranks, k), positions.ideal / np.log2(ideal_ranks + 1.0), 0.0)
        return positions.segment_sum(gains) / positions.segment_sum(ideal)
