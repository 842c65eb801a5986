"""Metrics from the wider metric literature (MEASURES.md, "Measures from the wider metric literature").

The notation is that of :mod:`prefeval.measures.metrics`: x = (x_1 <= ... <= x_m) are the ranks of the
query's m relevant documents (inf when not retrieved), i the 1-based index into x, g_i the grade of
the i-th relevant document, and "within k" means x_i <= k (k = 0: no cut-off). Like every metric of
prefeval, each one is a sum of per-document shares (:class:`~prefeval.measures.base.AdditiveMetric`).
"""

from __future__ import annotations

import numpy as np

from prefeval.measures.base import AdditiveMetric, Param, register
from prefeval.measures.metrics import CUTOFF, DEPTH, ideal_dcg, per_document, within
from prefeval.ranking.positions import Positions


@register
class AUC(AdditiveMetric):
    """AUC: the fraction of (relevant, non-relevant) item pairs in which the relevant item ranks higher.

    The items are the ``num_items`` n of the positions: in ``eval``, the retrieved documents plus
    the unretrieved relevant ones, which rank below everything retrieved; in ``sampled``, the
    catalogue (or the sampled list). The i-th relevant document has x_i − i non-relevant items above
    it, out of n − m, so

        AUC = Σ_i (n − m − (x_i − i)) / (m · (n − m)),

    and an unretrieved relevant document (below every non-relevant item) adds nothing. With one
    relevant item at rank r among n: (n − r) / (n − 1). Under a uniformly random ranking E[AUC] = 1/2.

    Edge case: when the items hold no non-relevant one (n = m) there is no pair to order; AUC is then
    taken with one virtual non-relevant item just below the retrieved documents, which gives rr/m
    (1 when every relevant document is retrieved, 0 when none is).
    """

    family = "auc"
    summary = "area under the ROC curve: the fraction of relevant/non-relevant pairs ranked correctly"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        m = per_document(positions, positions.length)
        negatives = per_document(positions, positions.num_items) - m
        ordered = (negatives - (ranks - positions.index)) / (m * np.maximum(negatives, 1))
        share = np.where(negatives > 0, ordered, 1.0 / m)
        return np.where(np.isfinite(ranks), share, 0.0)


@register
class FMeasure(AdditiveMetric):
    """F_β@k = (1 + β²) · P · R / (β² · P + R), with P = P@k and R = R@k; 0 when both are 0.

    With h = #{i : x_i <= k}, P = h / k and R = h / m, so F_β@k = (1 + β²) · h / (β² · m + k): each
    relevant document within k adds (1 + β²) / (β² · m + k). k = 0 takes the whole list (k = the number
    retrieved, as in ``p@0``). β = 1 by default (F1); β = 0 gives P@k.
    """

    family = "f"
    parameters = (DEPTH, Param("beta", float, 1.0, low=0.0, meaning="weight of recall against precision"))
    summary = "F-measure of precision and recall at k (F1 by default)"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        k, beta = self.param("k"), self.param("beta")
        depth = k if k > 0 else per_document(positions, positions.num_retrieved)
        denominator = beta**2 * per_document(positions, positions.length) + depth
        hits = within(ranks, k).astype(np.float64)
        shape = np.broadcast_shapes(hits.shape, np.shape(denominator))
        return np.divide((1.0 + beta**2) * hits, denominator, out=np.zeros(shape), where=denominator > 0)


@register
class Success(AdditiveMetric):
    """Success@k = 1 if x_1 <= k, else 0: whether a relevant document is within k (trec_eval ``success.k``).

    k = 0: anywhere in the list. The share is the first relevant document's (i = 1).
    """

    family = "success"
    parameters = (DEPTH,)
    summary = "1 if a relevant document is within k, else 0 (trec_eval success.k)"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return ((positions.index == 1) & within(ranks, self.param("k"))).astype(np.float64)


@register
class DCG(AdditiveMetric):
    """DCG@k = Σ_{i : x_i within k} g_i / log2(x_i + 1): discounted cumulative gain, gain = grade
    (linear), not normalised (Järvelin and Kekäläinen, 2002). ``ndcg@k`` is its normalised form."""

    family = "dcg"
    reads_grades = True
    parameters = (CUTOFF,)
    summary = "discounted cumulative gain, gain = grade, not normalised"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return np.where(within(ranks, self.param("k")), positions.grades / np.log2(ranks + 1.0), 0.0)


@register
class ExponentialNDCG(AdditiveMetric):
    """nDCG_exp@k = DCG_exp@k / ideal DCG_exp@k, with DCG_exp@k = Σ_{i : x_i within k} (2^g_i − 1) /
    log2(x_i + 1) (the gain of Burges et al., 2005). The ideal list sorts all m relevant grades
    descending and keeps the first k. With binary grades (2^1 − 1 = 1) it equals ``ndcg@k``.

    The alias ``dcg_exp`` is the name MEASURES.md gives it; the value is normalised all the same.
    """

    family = "ndcg_exp"
    reads_grades = True
    aliases = ("dcg_exp",)
    parameters = (CUTOFF,)
    summary = "normalised discounted cumulative gain, gain = 2^grade - 1"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        k = self.param("k")
        ideal = per_document(positions, ideal_dcg(positions, np.exp2(positions.ideal) - 1.0, k))
        gains = np.exp2(positions.grades) - 1.0
        return np.where(within(ranks, k), gains / np.log2(ranks + 1.0), 0.0) / ideal


@register
class CumulativeGain(AdditiveMetric):
    """CG@k = Σ_{i : x_i within k} g_i: the grades of the relevant documents within k, no discount."""

    family = "cg"
    reads_grades = True
    parameters = (CUTOFF,)
    summary = "cumulative gain: the sum of the grades within k"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return np.where(within(ranks, self.param("k")), positions.grades, 0.0)


@register
class PFound(AdditiveMetric):
    """pFound@k,pbreak (Segalovich, 2010): the probability that a user scanning down the list finds
    what they need, Σ_{ranks j <= k} pLook_j · pRel_j, with pLook_1 = 1,
    pLook_j = pLook_{j−1} · (1 − pRel_{j−1}) · (1 − pbreak), and pRel = grade / (the largest grade of
    the qrels), 0 for non-relevant and unjudged documents.

    Since only relevant documents have pRel > 0, the user looks at the i-th relevant document with
    probability Π_{j<i} (1 − pRel_j) · (1 − pbreak)^(x_i − 1), and its share is pRel_i times that.
    With binary grades (pRel = 1), pFound = (1 − pbreak)^(x_1 − 1). Defaults: no cut-off, pbreak 0.15.
    """

    family = "pfound"
    reads_grades = True
    parameters = (
        CUTOFF,
        Param("pbreak", float, 0.15, low=0.0, high=1.0, high_open=True, meaning="probability of abandoning at each rank"),
    )
    summary = "pFound: probability of finding a relevant document, with abandonment"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        k, pbreak = self.param("k"), self.param("pbreak")
        p_rel = positions.grades / positions.max_grade
        unsatisfied = _product_of_earlier(positions, 1.0 - p_rel)
        return np.where(within(ranks, k), p_rel * unsatisfied * (1.0 - pbreak) ** (ranks - 1.0), 0.0)


def _product_of_earlier(positions: Positions, factors: np.ndarray) -> np.ndarray:
    """Π_{j<i} factors_j within each segment (1 for the first element), for factors (..., N) in [0, 1].

    Products are sums of logarithms; zero factors are counted apart, so that a zero makes every later
    product of its segment exactly 0.
    """
    zero = factors <= 0.0
    logs = np.log(np.where(zero, 1.0, factors))
    log_product = _exclusive_segment_cumsum(positions, logs)
    zeros_before = _exclusive_segment_cumsum(positions, zero.astype(np.float64))
    return np.where(zeros_before > 0, 0.0, np.exp(log_product))


def _exclusive_segment_cumsum(positions: Positions, values: np.ndarray) -> np.ndarray:
    """Σ_{j<i} values_j within each segment."""
    exclusive = np.cumsum(values, axis=-1) - values
    return exclusive - positions.per_element(exclusive[..., positions.start])
