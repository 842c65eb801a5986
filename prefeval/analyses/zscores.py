"""Z-scores (trec_eval's ``-Z``): every per-query value expressed in standard deviations from the mean of
a reference set of runs on that query, and the summary of those z-scores, as trec_eval 10.0 computes
them (``convert_zscores.c``, ``trec_eval.c``). The means and standard deviations come from a z-score
file (:mod:`prefeval.io.zscores`), by query and by the measure's name as trec_eval prints it.

For a query q and a measure with per-query term v (the value its summary adds up: the value itself,
or log(max(v, 10⁻⁵)) for the geometric means ``gm_map`` and ``gm_bpref``, as trec_eval keeps them per
query), mean μ and standard deviation σ in the file:

    z = (v − μ) / σ                      when σ ≠ 0;
    z = 0                                when σ = 0 and v = μ;
    z = −1000000 (:data:`MISSING_ZSCORE`) when σ = 0 and v ≠ μ, or the file has no line for q and the
                                         measure (or none for q at all).

The summary is the measure's aggregator over the z-scores, added in the evaluation's order and
arithmetic (:mod:`prefeval.measures.aggregators`): the mean for most measures, the sum of the z-scores
for the counts (``num_ret``, ``num_rel_ret``, ...), exp of the mean for the geometric means. Two
summaries are not made of per-query values and stay as they are, as trec_eval leaves them:
``num_q``, the number of queries (``m_num_q.c``), and ``num_rel`` under ``-c``, the relevant
documents of the qrels (``m_num_rel.c``; :attr:`~prefeval.measures.base.Measure.complete_summary_from_qrels`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from prefeval.engine.evaluation import Evaluation
from prefeval.engine.results import Block, FixedOrderSum, RunningSummary, SequentialSum, Summary
from prefeval.io.zscores import ZScores
from prefeval.measures.aggregators import Aggregator

MISSING_ZSCORE = -1000000.0
"""The z-score of a value the file has no reference for (trec_eval's ``MISSING_ZSCORE_VALUE``)."""
QUERY_COUNT = "num_q"
"""The family whose summary counts the queries, whatever its per-query values."""


def standardized(zscores: ZScores, measure: str, qids: list[str], terms: np.ndarray) -> np.ndarray:
    """The z-scores (R, Q) of the per-query ``terms`` (R, Q) of the measure printed ``measure``, on
    the queries ``qids`` (module docstring)."""
    means = np.zeros(len(qids))
    deviations = np.zeros(len(qids))
    found = np.zeros(len(qids), dtype=bool)
    for q, qid in enumerate(qids):
        reference = zscores.reference(qid, measure)
        if reference is not None:
            means[q], deviations[q], found[q] = reference.mean, reference.stddev, True
    spread = found & (deviations != 0)
    with np.errstate(over="ignore"):  # a deviation of 1e-300: an infinite z-score, as trec_eval prints it
        scores = np.divide(terms - means, deviations, out=np.zeros(np.shape(terms)), where=spread)
    at_mean = found & (deviations == 0) & (terms == means)
    return np.where(spread, scores, np.where(at_mean, 0.0, MISSING_ZSCORE))


class _OfTerms(Aggregator):
    """An aggregator given values that are its terms already (z-scores of the terms)."""

    def __init__(self, aggregator: Aggregator):
        self.aggregator = aggregator
        self.name = aggregator.name

    def value(self, total: np.ndarray, count: np.ndarray) -> np.ndarray:
        return self.aggregator.value(total, count)


def zscored(evaluation: Evaluation, blocks: list[Block], names: dict[str, str], zscores: ZScores,
            sample: int = 0) -> tuple[list[Block], Summary]:
    """The metric values of ``blocks`` (one sample of ``evaluation``, in query order) as z-scores
    against ``zscores``, and their summary (module docstring). ``names``: each metric's name as
    trec_eval prints it (by prefeval name; prefeval's own name where absent)."""
    metrics = evaluation.metric_measures
    aggregators = {measure.name: measure.aggregator for measure in metrics}
    kept = {measure.name for measure in metrics if measure.family == QUERY_COUNT}
    scored = []
    for block in blocks:
        values = {name: values if name in kept else
                  standardized(zscores, names.get(name, name), block.qids, aggregators[name].terms(values))
                  for name, values in block.metrics.items()}
        summed = {name: aggregators[name].terms(values) for name, values in block.summary_metrics.items()}
        scored.append(dataclasses.replace(block, metrics=values, preferences={}, metric_extras={}, pair_extras={},
                                          pair_reported=None, summary_metrics=summed))
    sums = SequentialSum if evaluation.conventions.sequential else FixedOrderSum
    running = RunningSummary(sample, {name: _OfTerms(aggregator) for name, aggregator in aggregators.items()}, (),
                             evaluation.num_runs, 0, sums)
    for block in scored:
        running.add(block)
    return scored, running.summary([], lambda names, totals, counts: {})
