"""Measures whose summary over queries is not a plain mean: the counts of trec_eval, which its
summary line adds up (num_ret, num_rel, num_rel_ret, num_q), and gm_ap, whose summary is a
geometric mean.

Per query, each is what trec_eval computes for the query: a count of documents (or 1 for num_q),
and for gm_ap the query's average precision itself. The summary is chosen by
:attr:`~prefeval.measures.base.Measure.aggregator`: the sum for the counts, the geometric mean
for gm_ap (exp of the mean of log(max(AP, 1e-5)))). Notation as in :mod:`prefeval.measures.shares`:
m relevant documents at ranks x_1 <= ... <= x_m (inf: not retrieved), i the index, n the number of
documents retrieved, h = #{i : x_i finite} the relevant documents retrieved.
"""

from __future__ import annotations

import numpy as np

from prefeval.measures.aggregators import GEOMETRIC, SUM
from prefeval.measures.base import AdditiveMetric, Metric, RatioMetric, register
from prefeval.ranking.positions import Positions

TREC_BOOK = "Buckley and Voorhees, in TREC: Experiment and Evaluation in Information Retrieval, MIT Press 2005"


class _Count(Metric):
    """A count: summed over queries on the summary line, printed as an integer."""

    aggregator = SUM
    counts = True
    bounds = (0.0, np.inf)
    cite = TREC_BOOK + "; trec_eval"


def _per_run(positions: Positions, per_query: np.ndarray) -> np.ndarray:
    """A per-query value (Q,) as floats for every run: (R, Q)."""
    return np.broadcast_to(np.asarray(per_query, dtype=np.float64), (positions.num_runs, positions.num_queries)).copy()


@register
class NumRet(_Count):
    """num_ret = n, the number of documents the run retrieved for the query (after any rank cut-off
    such as ``--topk`` and, with judged_only, without the unjudged documents), whether relevant or
    not. 0 for a query the run does not contain (trec_eval -c gives its placeholder query 0 too).
    Equals trec_eval ``num_ret`` and ir_measures ``NumRet``; the summary is the sum over queries."""

    family = "num_ret"
    aliases = ("numret",)
    summary = "number of documents retrieved (trec_eval num_ret; summary: sum)"
    cite = TREC_BOOK + "; trec_eval num_ret"

    def compute(self, positions: Positions) -> np.ndarray:
        return positions.num_retrieved.astype(np.float64)


@register
class NumRel(_Count):
    """num_rel = m, the number of relevant documents of the query in the qrels (grade at least the
    relevance level), whatever the run retrieved: the same for every run, and m for a query the run
    does not contain. 0 for a query without relevant documents. Equals trec_eval ``num_rel`` per
    query and ir_measures ``NumRel``; the summary is the sum over queries (trec_eval with -c sums
    the relevant documents, grade > 0, of every query of the qrels instead: the
    ``qrels_num_rel`` convention, :mod:`prefeval.ranking.conventions`)."""

    family = "num_rel"
    aliases = ("numrel",)
    complete_summary_from_qrels = True
    summary = "number of relevant documents in the qrels (trec_eval num_rel; summary: sum)"
    cite = TREC_BOOK + "; trec_eval num_rel"

    def compute(self, positions: Positions) -> np.ndarray:
        return _per_run(positions, positions.length)


@register
class NumRelRet(_Count, AdditiveMetric):
    """num_rel_ret = h = #{i : x_i finite}, the relevant documents retrieved: each retrieved relevant
    document adds 1. Equals trec_eval ``num_rel_ret`` and ir_measures ``NumRet(rel=1)`` (alias
    ``NumRelRet``); with ``rel=L``, ir_measures' ``NumRet(rel=L)``. The summary is the sum over queries."""

    family = "num_rel_ret"
    aliases = ("numrelret",)
    summary = "number of relevant documents retrieved (trec_eval num_rel_ret; summary: sum)"
    cite = TREC_BOOK + "; trec_eval num_rel_ret"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return np.isfinite(ranks).astype(np.float64)


@register
class NumQ(_Count):
    """num_q = 1 for every query evaluated (also one without relevant documents, and one the run does
    not contain), so that the summary, the sum, is the number of queries. Equals trec_eval ``num_q``
    and ir_measures ``NumQ`` (trec_eval prints it on the summary line only)."""

    family = "num_q"
    aliases = ("numq",)
    summary = "number of queries: 1 per query (trec_eval num_q; summary: sum)"
    cite = TREC_BOOK + "; trec_eval num_q"
    bounds = (0.0, 1.0)  # always 1; a range needs two ends

    def compute(self, positions: Positions) -> np.ndarray:
        return np.ones((positions.num_runs, positions.num_queries))


@register
class GeometricAP(RatioMetric):
    """gm_ap: per query the average precision, AP = (1/m) Σ_{i : x_i finite} i / x_i (0 when m = 0 or
    nothing relevant is retrieved, as for an empty run); the summary over queries is the geometric
    mean exp((1/Q) Σ_q log(max(AP_q, 1e-5))), which rewards runs that do well on every query.

    Equals trec_eval ``gm_map`` on the summary line. Per query, trec_eval keeps log(max(AP, 1e-5))
    and prints nothing; pytrec_eval returns that logarithm as the query's ``gm_map``, where prefeval
    gives AP itself (so exp(pytrec_eval's value) = max(AP, 1e-5)). A query the run does not contain
    has AP 0 and enters the mean as log(1e-5), as trec_eval -c counts its missing queries.
    """

    family = "gm_ap"
    aliases = ("gmap",)
    aggregator = GEOMETRIC
    summary = "average precision, summarised by the geometric mean (trec_eval gm_map)"
    cite = "Robertson, On GMAP: and other transformations, CIKM 2006, doi:10.1145/1183614.1183630"

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return np.where(np.isfinite(ranks), positions.index / ranks, 0.0)

    def denominator(self, positions: Positions) -> np.ndarray:
        return positions.length
