"""Metrics of where the relevant documents are: AP (and yaap, a smoothed form of it), RR, P@k, R@k,
R-precision, F@k, success@k and AUC.

Each counts relevant documents, or weighs them by the reciprocal of their rank, with binary relevance
(a document counts when its grade reaches the relevance level). Notation and the shared helpers are
those of :mod:`prefeval.measures.shares`: x = (x_1 <= ... <= x_m) the ranks of the query's m relevant
documents (inf when not retrieved), i the 1-based index into x, "within k" x_i <= k (k = 0: no
cut-off). Each metric but yaap (a logarithm of such a sum) is the sum of per-document shares
(:class:`~prefeval.measures.base.AdditiveMetric`); those that count documents, or weigh them, over a
denominator are computed as the sum over the documents divided once
(:class:`~prefeval.measures.base.RatioMetric`), so that counts are exact.
"""

from __future__ import annotations

import numpy as np

from prefeval.errors import UsageError
from prefeval.measures.base import AdditiveMetric, Metric, Param, RatioMetric, register
from prefeval.measures.shares import CUTOFF, DEPTH, per_document, reciprocal_difference, within
from prefeval.ranking.positions import Positions

TREC_BOOK = "Buckley and Voorhees, in TREC: Experiment and Evaluation in Information Retrieval, MIT Press 2005"
VAN_RIJSBERGEN = "van Rijsbergen, Information Retrieval, 2nd ed., Butterworths 1979"


@register
class AveragePrecision(RatioMetric):
    """AP@k = (1/m) Σ_{i : x_i within k} i / x_i. Equals trec_eval ``map`` and ``map_cut.k``, which
    also add up the i / x_i and divide by m once."""

    family = "ap"
    parameters = (CUTOFF,)
    summary = "average precision (trec_eval map, map_cut.k)"
    cite = TREC_BOOK + "; trec_eval map"

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return np.where(within(ranks, self.param("k")), positions.index / ranks, 0.0)

    def denominator(self, positions: Positions) -> np.ndarray:
        return positions.length


@register
class YetAnotherAP(Metric):
    """yaap = log((1 + S) / (1 + m − S)), with S = Σ_{i : x_i finite} i / x_i, the sum of the precisions
    at the relevant documents retrieved, so that AP = S / m (Robertson's "yet another average
    precision": a smoothed logit of AP, monotone in AP on one query, that averages better over queries,
    its extremes not bounded as AP's are).

    Equals trec_eval ``yaap`` (``m_yaap.c``, which adds the i / x_i in rank order and computes
    1 + m − S as (1 + m) − S, as here), with binary relevance at the relevance level. A query without a
    relevant document scores log(1/1) = 0; a run that retrieves none of the m relevant documents
    (or does not contain the query) log(1 / (1 + m)) < 0, and one that ranks all of them first
    log(1 + m). The summary is the mean.
    """

    family = "yaap"
    summary = "yet another average precision: log((1 + S) / (1 + m - S)), S = m AP (trec_eval yaap)"
    cite = "Robertson, On Smoothing Average Precision, ECIR 2012, LNCS 7224, pp. 158-169; trec_eval yaap"
    bounds = (-np.inf, np.inf)

    def compute(self, positions: Positions) -> np.ndarray:
        ranks = positions.ranks
        total = positions.segment_sum(np.where(np.isfinite(ranks), positions.index / ranks, 0.0))
        return np.log((1.0 + total) / (1.0 + positions.length - total))


@register
class ReciprocalRank(AdditiveMetric):
    """RR@k = 1 / x_1, or 0 when x_1 is not within k. Equals trec_eval ``recip_rank`` (k = 0).

    As a sum of shares: only the first relevant document (i = 1) has one, 1 / x_1.
    """

    family = "rr"
    aliases = ("mrr",)
    parameters = (CUTOFF,)
    summary = "reciprocal rank of the first relevant document (trec_eval recip_rank)"
    cite = "Voorhees, The TREC-8 Question Answering Track Report, TREC 1999"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return np.where((positions.index == 1) & within(ranks, self.param("k")), 1.0 / ranks, 0.0)

    def differences(self, positions: Positions, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """RR(x) − RR(y) divided once, 1/x_1 − 1/y_1 = (y_1 − x_1) / (x_1 · y_1), a rank beyond k
        counting as ∞ (1/8 − 1/10 is 0.025, not 0.024999999999999994)."""
        x_1 = positions.segment_min(positions.ranks)  # the first rank (inf for a query without any)
        counted = np.where(within(x_1, self.param("k")), x_1, np.inf)
        return reciprocal_difference(counted[first], counted[second])


@register
class Precision(RatioMetric):
    """P@k = #{i : x_i <= k} / k. Equals trec_eval ``P.k``; a run shorter than k is not padded.

    k = 0 gives the precision of the whole list, relevant retrieved / retrieved (0 for an empty list):
    trec_eval's ``set_P``.
    """

    family = "p"
    parameters = (DEPTH,)
    summary = "precision at k (trec_eval P.k; p@0: set_P)"
    cite = VAN_RIJSBERGEN

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return within(ranks, self.param("k")).astype(np.float64)

    def denominator(self, positions: Positions) -> float | np.ndarray:
        return self.param("k") or positions.num_retrieved


@register
class Recall(RatioMetric):
    """R@k = #{i : x_i <= k} / m. Equals trec_eval ``recall.k``; k = 0 gives the recall of the whole
    list, trec_eval's ``set_recall``."""

    family = "r"
    aliases = ("recall",)
    parameters = (DEPTH,)
    summary = "recall at k (trec_eval recall.k; r@0: set_recall)"
    cite = VAN_RIJSBERGEN

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return within(ranks, self.param("k")).astype(np.float64)

    def denominator(self, positions: Positions) -> np.ndarray:
        return positions.length


@register
class RPrecision(RatioMetric):
    """RP = P@m = #{i : x_i <= m} / m. Equals trec_eval ``Rprec``."""

    family = "rp"
    aliases = ("rprec",)
    summary = "R-precision (trec_eval Rprec)"
    cite = TREC_BOOK + "; trec_eval Rprec"

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return (ranks <= per_document(positions, positions.length)).astype(np.float64)

    def denominator(self, positions: Positions) -> np.ndarray:
        return positions.length


@register
class FMeasure(RatioMetric):
    """F_β@k = (1 + β²) · P · R / (β² · P + R), with P = P@k and R = R@k; 0 when both are 0.

    With h = #{i : x_i <= k}, P = h / k and R = h / m, so F_β@k = (1 + β²) · h / (β² · m + k): each
    relevant document within k adds (1 + β²) / (β² · m + k). k = 0 takes the whole list (k = the number
    retrieved, as in ``p@0``). β = 1 by default (F1); β = 0 gives P@k, β = inf gives R@k. The value
    is c · h / (a · m + b · k) with (c, a, b) from :meth:`weights`, which never overflow.

    ``weight=x`` gives β² itself, in place of β: the parameter of trec_eval's ``set_F.x`` and of
    ir_measures' ``SetF(beta=x)`` (F = (1 + x) P R / (x P + R)), kept as given so that the value is
    theirs to the last bit (β = √0.5 squares back to 0.5000000000000001).
    """

    family = "f"
    parameters = (DEPTH, Param("beta", float, 1.0, low=0.0, meaning="weight of recall against precision"),
                  Param("weight", float, None, low=0.0, keyword=True,
                        meaning="beta squared, given as it is (trec_eval's set_F.x, ir_measures' SetF(beta=x))"))

    def __init__(self, *texts: str):
        super().__init__(*texts)
        if self.param("weight") is not None and self.param("beta") != 1.0:
            raise UsageError(f"{self.name}: give beta or weight (beta squared), not both")

    def beta_squared(self) -> float:
        """β², as given (``weight``) or from β (inf for a β whose square overflows)."""
        weight = self.param("weight")
        return (self.param("beta") ** 2 if self.param("beta") < 1e154 else np.inf) if weight is None else weight
    summary = "F-measure of precision and recall at k (F1 by default)"
    cite = VAN_RIJSBERGEN

    def weights(self) -> tuple[float, float, float]:
        """(c, a, b) with F_β = c · h / (a · m + b · k): (1 + β², β², 1) for β <= 1, and the same
        divided by β², (1 + 1/β², 1, 1/β²), for β > 1, so that neither β² nor the sum overflows for
        a large β, and β = inf is recall. Exact for β = 1/2, 1 and 2 (F1 = 2h / (m + k))."""
        weight, beta = self.param("weight"), self.param("beta")
        if (beta <= 1.0) if weight is None else (weight <= 1.0):
            squared = beta**2 if weight is None else weight
            return 1.0 + squared, squared, 1.0
        inverse = beta**-2.0 if weight is None else 1.0 / weight
        return 1.0 + inverse, 1.0, inverse

    def compute(self, positions: Positions) -> np.ndarray:
        """c · h / (a · m + b · k), divided once; on positions that add as trec_eval does
        (:attr:`~prefeval.ranking.positions.Positions.sequential`), trec_eval's own arithmetic for
        ``set_F`` (k = 0): (β² + 1) · P · R / (β² · P + R) from the rounded P = h / n and R = h / m,
        which can differ in the last bit (0.21874999999999994 where h / m · ... is 0.21875)."""
        if not (positions.sequential and self.param("k") == 0):
            return super().compute(positions)
        hits = positions.segment_sum(np.isfinite(positions.ranks).astype(np.float64))
        weight = self.beta_squared()
        found = hits > 0
        precision = np.divide(hits, positions.num_retrieved, out=np.zeros(hits.shape), where=found)
        recall = np.divide(hits, positions.length, out=np.zeros(hits.shape), where=found)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            value = (weight + 1.0) * precision * recall / (weight * precision + recall)
        return np.where(found, value, 0.0)

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return self.weights()[0] * within(ranks, self.param("k"))

    def denominator(self, positions: Positions) -> np.ndarray:
        _, on_relevant, on_depth = self.weights()
        depth = self.param("k") or positions.num_retrieved
        return on_relevant * positions.length + on_depth * depth


@register
class Success(AdditiveMetric):
    """Success@k = 1 if x_1 <= k, else 0: whether a relevant document is within k (trec_eval ``success.k``).

    k = 0: anywhere in the list. The share is the first relevant document's (i = 1).
    """

    family = "success"
    parameters = (DEPTH,)
    summary = "1 if a relevant document is within k, else 0 (trec_eval success.k)"
    cite = "trec_eval success (m_success.c)"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return ((positions.index == 1) & within(ranks, self.param("k"))).astype(np.float64)


@register
class AUC(RatioMetric):
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

    The terms are integers (the pairs each relevant item orders correctly) over m · max(n − m, 1).
    """

    family = "auc"
    summary = "area under the ROC curve: the fraction of relevant/non-relevant pairs ranked correctly"
    cite = "Hanley and McNeil, Radiology 1982, doi:10.1148/radiology.143.1.7063747"

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        negatives = per_document(positions, positions.num_items - positions.length)
        ordered = np.where(negatives > 0, negatives - (ranks - positions.index), 1.0)
        return np.where(np.isfinite(ranks), ordered, 0.0)

    def denominator(self, positions: Positions) -> np.ndarray:
        return positions.length * np.maximum(positions.num_items - positions.length, 1)
