"""What every metric is written with: the notation, the cut-off parameters, and the per-document helpers.

Notation (MEASURES.md): x = (x_1 <= ... <= x_m) are the ranks of the query's m relevant documents in
the run, inf for those it did not retrieve; i is the 1-based index into x; g_i is the grade of the
i-th relevant document. "Within k" means x_i <= k, and k = 0 means no cut-off (every finite x_i
counts). Every metric receives one-segment-per-query positions and returns an (R, Q) array.

Every metric of prefeval is additive (:class:`~prefeval.measures.base.AdditiveMetric`): it is written
as the share of each relevant document, given its rank, and its value is the sum of the shares. The
metrics themselves live in :mod:`prefeval.measures.precision_recall` (where the relevant documents
are) and :mod:`prefeval.measures.gain_discount` (gains discounted by rank).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from prefeval.measures.base import Param
from prefeval.ranking.positions import Positions, segment_cumsum
from prefeval.runtime.memory import STEP_ELEMENTS

MAX_CUTOFF = 10**9
"""The deepest rank cut-off: deeper than any list, and exact in the float64 ranks it is compared with."""

CUTOFF = Param("k", int, 0, low=0, high=MAX_CUTOFF, meaning="rank cut-off; 0 means none")
"""A rank cut-off that is off by default (``ap``, ``ndcg``, ``rr``, ...)."""

DEPTH = Param("k", int, 10, low=0, high=MAX_CUTOFF, meaning="rank cut-off; 0 means the whole list")
"""A rank cut-off that is 10 by default (``p``, ``r``, ``f``, ``success``)."""


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


def powers_of(p: float, count: int) -> np.ndarray:
    """p^0, p^1, ..., p^(count − 1) by repeated multiplication, p^i = p^(i−1) · p, as the tools' loops
    make them (trec_eval's ``cur_p = cur_p * p``, m_rbp.c, m_rbp_resid.c; ir_measures' compat
    provider, ``weight *= p``): ``p ** i`` differs in the last bit."""
    return np.cumprod(np.concatenate(([1.0], np.full(max(count - 1, 0), p))))[:count]


def query_steps(num_runs: int, num_queries: int, depth: int) -> Iterator[tuple[int, int]]:
    """Consecutive ranges of queries (first, stop), at least one query each, whose arrays of run ×
    query × ``depth`` ranks hold at most :data:`~prefeval.runtime.memory.STEP_ELEMENTS` values: the
    steps of a measure computed rank by rank, as the tools' loops compute it."""
    step = max(STEP_ELEMENTS // max(num_runs * depth, 1), 1)
    for first in range(0, num_queries, step):
        yield first, min(first + step, num_queries)


def reciprocal_difference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """1/x − 1/y for ranks (1/∞ = 0), divided once: (y − x) / (x · y) when both are finite, which is
    correctly rounded (1/8 − 1/10 is 0.025, where the two reciprocals give 0.024999999999999994)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        both = (y - x) / (x * y)
    return np.where(np.isfinite(x) & np.isfinite(y), both, np.where(np.isfinite(x), 1.0 / x, 0.0) - np.where(
        np.isfinite(y), 1.0 / y, 0.0))


def product_of_earlier(positions: Positions, factors: np.ndarray) -> np.ndarray:
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
    """Σ_{j<i} values_j within each segment, from the segment's own values alone."""
    inclusive = segment_cumsum(values, positions.start, positions.length)
    exclusive = np.zeros_like(inclusive)
    exclusive[..., 1:] = inclusive[..., :-1]
    exclusive[..., positions.start[positions.length > 0]] = 0.0
    return exclusive
