"""How a measure's per-query values become its summary value: its aggregator.

Every measure has one (:attr:`~prefeval.measures.base.Measure.aggregator`), and the engine applies it
once (:class:`~prefeval.engine.results.RunningSummary`); every output format prints what it computed.
A summary over the queries q counted for a run (all of them, or the run's own under the ``skip``
convention: :mod:`prefeval.ranking.conventions`) is

    value(Σ_q term(v_q), n),

the terms added in the order the conventions say (pairwise in fixed blocks, or one after the other
as trec_eval adds them):

* :data:`MEAN`: term(v) = v, value = Σ / n (every measure but those below);
* :data:`SUM`: term(v) = v, value = Σ (counts: ``num_ret``, ``num_rel``, ..., as trec_eval sums them);
* :data:`GEOMETRIC`: term(v) = log(max(v, 10⁻⁵)), value = exp(Σ / n) (trec_eval's ``gm_map`` and
  ``gm_bpref``: a query scoring 0 counts as 0.00001, so that one such query does not make the mean 0).

A run counted on no query (n = 0) has summary 0 under every aggregator, as trec_eval prints it (its
``meas_avg.c`` leaves the accumulated 0 when there is no query to divide by).

The other statistics over queries (median, cvar10, ...: :mod:`prefeval.measures.summaries`) are
asked for by the user, beside the aggregator's value; the aggregator is the measure's own.
"""

from __future__ import annotations

import numpy as np

GEOMETRIC_FLOOR = 1e-5
"""The smallest value a geometric mean takes the logarithm of (trec_eval's ``MIN_GEO_MEAN``)."""


class Aggregator:
    """The summary of a measure (module docstring): what is added up, and what the sum becomes."""

    name: str = "mean"

    def terms(self, values: np.ndarray) -> np.ndarray:
        """What each query adds to the sum."""
        return values

    def value(self, total: np.ndarray, count: np.ndarray) -> np.ndarray:
        """The summary from the sum of the terms and the number of queries counted (0 where none is)."""
        return np.divide(total, count, out=np.zeros(np.shape(total)), where=count > 0)

    def __repr__(self) -> str:
        return f"<aggregator {self.name}>"


class _Sum(Aggregator):
    name = "sum"

    def value(self, total: np.ndarray, count: np.ndarray) -> np.ndarray:
        return np.where(count > 0, total, 0.0)


class _Geometric(Aggregator):
    name = "geometric"

    def terms(self, values: np.ndarray) -> np.ndarray:
        return np.log(np.maximum(values, GEOMETRIC_FLOOR))

    def value(self, total: np.ndarray, count: np.ndarray) -> np.ndarray:
        mean = super().value(total, count)
        return np.where(count > 0, np.exp(mean), 0.0)


MEAN, SUM, GEOMETRIC = Aggregator(), _Sum(), _Geometric()
