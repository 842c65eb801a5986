"""Measures of a set of documents, the whole list or its top c, with no regard to the order within
it: precision at a multiple of R (trec_eval Rprec_mult), precision relative to the best possible
(relative_P, set_relative_P), set AP (set_map) and the utility of the contingency table (utility).

Notation as in :mod:`prefeval.measures.shares`: the query's m relevant documents at ranks
x_1 <= ... <= x_m (inf: not retrieved), n the number of documents retrieved, h = #{i : x_i finite}
the relevant ones among them, and h_c = #{i : x_i <= c} those within the top c.
"""

from __future__ import annotations

import numpy as np

from prefeval.measures.base import Metric, Param, RatioMetric, register
from prefeval.measures.shares import MAX_CUTOFF, per_document, within
from prefeval.ranking.positions import Positions

TREC_BOOK = "Buckley and Voorhees, in TREC: Experiment and Evaluation in Information Retrieval, MIT Press 2005"


def _retrieved_relevant(positions: Positions) -> np.ndarray:
    """h per run and query, (R, Q), as floats."""
    return positions.segment_sum(np.isfinite(positions.ranks).astype(np.float64))


@register
class RPrecisionMultiple(RatioMetric):
    """RP×f = h_c / c with c = ⌊f · m + 0.9⌋: precision at a multiple f of R = m, with trec_eval's
    rounding of f · m to a number of documents (up from .1 on). f = 1 is R-precision (``rp``); 0 when
    c = 0 (m = 0, or f · m < 0.1). A run shorter than c is not padded: its value is h / c.

    Equals trec_eval ``Rprec_mult.f`` (printed ``Rprec_mult_0.20``; trec_eval's default list is
    0.2, 0.4, ..., 2.0; prefeval's default f is 1). An empty run, or a query it does not contain, scores 0.
    """

    family = "rp_mult"
    parameters = (Param("f", float, 1.0, low=0.0, high=1e6, meaning="multiple of the number of relevant documents"),)
    summary = "precision at f times the number of relevant documents (trec_eval Rprec_mult.f)"
    cite = TREC_BOOK + "; trec_eval Rprec_mult"

    def cutoff(self, positions: Positions) -> np.ndarray:
        """c per query: ⌊f · m + 0.9⌋, computed in float64 as trec_eval does."""
        return np.floor(self.param("f") * positions.length.astype(np.float64) + 0.9)

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return (ranks <= per_document(positions, self.cutoff(positions))).astype(np.float64)

    def denominator(self, positions: Positions) -> np.ndarray:
        return self.cutoff(positions)


@register
class RelativePrecision(RatioMetric):
    """relP@k = h_k / min(k, m): precision at k relative to the best a run can reach at k, which is
    precision up to k = m and recall beyond. k = 0 takes the whole list, h / min(n, m). 0 when m = 0
    (or n = 0 for k = 0). A run shorter than k is not padded.

    Equals trec_eval ``relative_P.k`` (printed ``relative_P_5``; trec_eval's defaults are 5, 10, 15,
    20, 30, 100, 200, 500, 1000) and, for k = 0, ``set_relative_P`` and ir_measures
    ``SetP(relative=True)`` (``SetRelP``). Note that relative_p@k differs from set_relative_P on a run
    cut at k (``--topk k``): min(n, m) against min(k, m) when the run is shorter than k.
    """

    family = "relative_p"
    parameters = (Param("k", int, 10, low=0, high=MAX_CUTOFF, meaning="rank cut-off; 0 means the whole list"),)
    summary = "precision at k relative to its maximum min(k, R) (trec_eval relative_P.k; @0: set_relative_P)"
    cite = TREC_BOOK + "; trec_eval relative_P and set_relative_P"

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return within(ranks, self.param("k")).astype(np.float64)

    def denominator(self, positions: Positions) -> np.ndarray:
        depth = self.param("k") or positions.num_retrieved
        return np.minimum(depth, positions.length)


@register
class SetAP(Metric):
    """SetAP = h² / (n · m) = P · R of the whole list: the AP of the list taken as an unordered set,
    where every relevant document retrieved has the set's precision h/n and every other one precision 0.
    0 when n = 0 or m = 0. Equals trec_eval ``set_map`` and ir_measures ``SetAP``. Not a sum over
    relevant documents (each one's share depends on how many others are retrieved).
    """

    family = "set_ap"
    aliases = ("setap",)
    summary = "set AP: precision times recall of the whole list (trec_eval set_map)"
    cite = TREC_BOOK + "; trec_eval set_map"

    def compute(self, positions: Positions) -> np.ndarray:
        hits = _retrieved_relevant(positions)
        size = positions.num_retrieved * positions.length.astype(np.float64)
        return np.divide(hits * hits, size, out=np.zeros(hits.shape), where=size > 0)


@register
class Utility(Metric):
    """U@a,b,c,d,N = a · h + b · (n − h) + c · (m − h) + d · (N + h − n − m): the worth of the retrieved
    set by its contingency table: a per relevant document retrieved, b per non-relevant (or unjudged)
    one retrieved, c per relevant document missed and d per other document of the collection left out,
    N being the number of documents in the collection (which neither the qrels nor the run tell).
    Defaults a = 1, b = −1, c = d = 0, N = 0. Unbounded, and negative when b < 0.

    Equals trec_eval ``utility.a,b,c,d`` run with ``-N N`` (its -N defaults to 0 as well: without it,
    d multiplies h − n − m), and pytrec_eval's ``utility`` (default parameters only). A query without
    relevant documents scores b · n + d · (N − n). A query the run does not contain retrieves nothing:
    c · m + d · (N − m), which is 0 with the default parameters, as trec_eval -c gives; with other
    parameters trec_eval -c counts the placeholder document it ranks for such a query as retrieved
    and not relevant (b + c · m + d · (N − 1 − m)). The summary is the mean over queries, as in trec_eval.
    """

    family = "utility"
    parameters = (
        Param("a", float, 1.0, low=-1e12, high=1e12, meaning="worth of a relevant document retrieved"),
        Param("b", float, -1.0, low=-1e12, high=1e12, meaning="worth of a non-relevant document retrieved"),
        Param("c", float, 0.0, low=-1e12, high=1e12, meaning="worth of a relevant document not retrieved"),
        Param("d", float, 0.0, low=-1e12, high=1e12, meaning="worth of a non-relevant document not retrieved"),
        Param("N", int, 0, low=0, high=10**15, meaning="number of documents in the collection (trec_eval -N)"),
    )
    summary = "utility of the retrieved set, a*rel_ret + b*nonrel_ret + c*rel_missed + d*nonrel_missed"
    cite = "Hull and Robertson, The TREC-8 Filtering Track Final Report, TREC 1999"
    bounds = (-np.inf, np.inf)

    def compute(self, positions: Positions) -> np.ndarray:
        a, b, c, d, size = (self.param(name) for name in ("a", "b", "c", "d", "N"))
        hits = _retrieved_relevant(positions)
        retrieved = positions.num_retrieved.astype(np.float64)
        relevant = positions.length.astype(np.float64)
        return a * hits + b * (retrieved - hits) + c * (relevant - hits) + d * (size + hits - retrieved - relevant)
