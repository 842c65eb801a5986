"""Summary statistics of a metric over queries: what ``eval --summary`` writes and ``aggregate -m`` orders by.

A run's per-query values v_1 … v_n of one metric are summarised by one number. The mean is what
trec_eval and pref_eval.py report; the others look at the spread and at the worst queries, which means
hide: robustness is judged by the tail (Diaz, "Pessimistic Evaluation", SIGIR-AP 2024; Voorhees's
Robust track measured the worst topics for the same reason).

Every statistic is defined on a *weighted* sample: values x_1 … x_n with integer weights w_j >= 0 (the
number of times each query is counted), N = Σ w_j, which is the sample in which x_j occurs w_j times.
With every weight 1 this is the ordinary sample; a bootstrap resample of the queries is the same
sample with its draw counts as weights (:mod:`prefeval.analyses.bootstrap`), so each statistic has one
definition for both. Below, x_(1) <= … <= x_(N) is the expanded sample sorted ascending, and
C_k = w_(1) + … + w_(k) the cumulative weight in sorted order.

``mean``
    (1/N) Σ_j w_j x_j.
``median``
    the 0.5 quantile below (for an even N, the mean of the two middle values).
``q10``
    the 0.1 quantile: numpy's default (linear, Hyndman and Fan's type 7) on the expanded sample,
    h = (N − 1) / 10, q = x_(⌊h⌋+1) + (h − ⌊h⌋) · (x_(⌊h⌋+2) − x_(⌊h⌋+1)) (1-based order statistics;
    the second term is 0 when h is an integer). With N <= 11 it lies between the two smallest values.
``min``
    x_(1), the worst query.
``cvar10``
    the conditional value at risk at 10% (expected shortfall; Rockafellar and Uryasev, Journal of
    Risk 2(3), 2000; Acerbi and Tasche, 2002): the mean of the worst 10% of the queries, each query
    carrying mass 1/N. With A = N / 10, it is (1/A) Σ_k x_(k) · clip(A − (k − 1), 0, 1): the ⌊A⌋ worst
    queries count fully and the next one for the fraction A − ⌊A⌋ that is still inside the 10%. So it
    is the plain mean of the 10% worst when N / 10 is an integer (N = 50: the 5 worst), it is the
    worst value when N <= 10 (A <= 1), and with N = 25 it is (x_(1) + x_(2) + 0.5 · x_(3)) / 2.5. (The
    weights clip(…) are divided by their sum, A, before the values are summed, so that a tail of one
    value is that value exactly.)
``gini``
    the Gini coefficient (Gini, 1912) of the values, the mean absolute difference over all N² ordered
    pairs divided by twice the mean: G = Σ_i Σ_j |x_i − x_j| / (2 N² · mean). Computed as
    Σ_k (x_(k+1) − x_(k)) · C_k · (N − C_k) / (N² · mean) over the distinct sorted values, a sum of
    non-negative terms, so that equal values give exactly 0. G = 0 when every value is equal, all
    zeros included (nothing is unequal); it is at most 1 − 1/N (one query holds everything). It is
    defined for non-negative values only (with negative ones it can pass 1, and the mean can be 0):
    ``eval --summary gini`` refuses a metric whose declared range (:attr:`Measure.bounds
    <prefeval.measures.base.Measure.bounds>`) holds negative values (``utility``, a ``gains=`` map
    with a negative gain) before any value is computed, whatever the data (:func:`check_statistics`),
    and ``aggregate -m METRIC:gini`` refuses per-query values that are negative before it writes
    anything. Lower is more even: a run that does equally well on every query. It says nothing about
    the level (a run at 0 everywhere has G = 0), so it is read beside a mean, not instead of it.

Edge cases: a run with no value on any query (N = 0) has NaN for every statistic. Higher is better for
every statistic but ``gini``, where lower is better (:attr:`Statistic.higher_is_better`), which
``aggregate`` follows when it orders runs.

Names: ``ap:median`` is the median of ``ap`` over queries, in eval's summary lines and tables and as
``aggregate -m``'s measure (:func:`~prefeval.io.keys.statistic_key`, :func:`split_statistic`); the mean keeps the plain
name (``ap``), as it always had.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from prefeval.errors import UsageError, shown
from prefeval.io.keys import MEAN, STATISTIC_SEPARATOR

if TYPE_CHECKING:
    from prefeval.measures.base import Measure

TAIL = 10
"""The tail of ``cvar10`` and the quantile of ``q10`` are 1/TAIL; fractions are computed as N / TAIL, which
is exact whenever N is a multiple of TAIL (0.1 · 30 is 3.0000000000000004, 30 / 10 is 3)."""


class Statistic(NamedTuple):
    """One summary statistic: its name, what it is (for help texts), its direction, and its weighted
    definition ``weighted(x, w)``: x (n,) sorted ascending, w (B, n) integer weights with N = Σ w > 0
    on every row; one value per row. ``non_negative``: defined for non-negative values only, and
    ``title`` how messages call it then."""

    name: str
    description: str
    higher_is_better: bool
    weighted: Callable[[np.ndarray, np.ndarray], np.ndarray] | None
    non_negative: bool = False
    title: str = ""

    def refusal(self, reason: str) -> str:
        """The message refusing this statistic (one defined for non-negative values) for ``reason``."""
        return f"{self.title} is defined for non-negative values only, and {reason}"


def _quantile(numerator: int, denominator: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The quantile at numerator / denominator (h computed as (N − 1) · numerator / denominator)."""
    def weighted(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        cumulative = np.cumsum(w, axis=1)
        total = cumulative[:, -1]
        h = (total - 1) * numerator / denominator
        low = np.floor(h)
        # the expanded sample's 0-based order statistic k is x_j for the first j with C_j > k
        below = _order_statistic(x, cumulative, low)
        above = _order_statistic(x, cumulative, np.minimum(low + 1, total - 1))
        return below + (h - low) * (above - below)
    return weighted


def _order_statistic(x: np.ndarray, cumulative: np.ndarray, k: np.ndarray) -> np.ndarray:
    return x[(cumulative > k[:, None]).argmax(axis=1)]


def _minimum(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return x[(w > 0).argmax(axis=1)]


def _cvar(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    cumulative = np.cumsum(w, axis=1)
    inside = cumulative[:, -1] / TAIL
    counted = np.clip(inside[:, None] - (cumulative - w), 0.0, w)  # how much of each value is in the tail
    # normalised by their own sum (which is A), so that a tail of one value is that value exactly
    return (counted / counted.sum(axis=1, keepdims=True) * x).sum(axis=1)


def _gini(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    if len(x) and x[0] < 0:
        raise UsageError(STATISTICS["gini"].refusal(f"{shown(x[0])} is negative"))
    cumulative = np.cumsum(w, axis=1)
    total = cumulative[:, -1].astype(np.float64)
    weighted_sum = w @ x
    gaps = np.diff(x)
    spread = (cumulative[:, :-1] * (total[:, None] - cumulative[:, :-1])) @ gaps
    with np.errstate(invalid="ignore", divide="ignore"):
        gini = spread / (total * weighted_sum)
    return np.where(weighted_sum > 0, gini, 0.0)


STATISTICS: dict[str, Statistic] = {
    s.name: s for s in (
        Statistic(MEAN, "the mean over queries (the default)", True, None),
        Statistic("median", "the median over queries", True, _quantile(1, 2)),
        Statistic("min", "the worst query's value", True, _minimum),
        Statistic("q10", "the 10% quantile over queries (linear interpolation)", True, _quantile(1, TAIL)),
        Statistic("cvar10", "the mean of the worst 10% of the queries (conditional value at risk)", True, _cvar),
        Statistic("gini", "the Gini coefficient of the per-query values (0: even; lower is better)", False, _gini,
                  non_negative=True, title="the Gini coefficient"),
    )
}
"""Every statistic, by name, in the order they are listed."""


def check_statistics(names: str | Iterable[str] | None, measures: Iterable[Measure] = ()) -> tuple[str, ...]:
    """The statistics asked for (one name or several), in order, duplicates dropped; the mean alone when
    none is. A statistic defined for non-negative values only (``gini``) is refused for a metric of
    ``measures`` whose declared range holds negative values: the summary is computed once every
    per-query value is written, so the data cannot be checked before the output starts."""
    if names is None:
        return (MEAN,)
    chosen = tuple(dict.fromkeys([names] if isinstance(names, str) else names))
    for name in chosen:
        if name not in STATISTICS:
            raise UsageError(f"unknown summary statistic {name!r}; choose one of {', '.join(STATISTICS)}")
        statistic = STATISTICS[name]
        for measure in measures:
            low, high = measure.bounds
            if statistic.non_negative and measure.is_metric and low < 0:
                raise UsageError(f"--summary {name}: " + statistic.refusal(
                    f"{measure.name} can be negative (its values lie in [{low:g}, {high:g}])"))
    return chosen or (MEAN,)


def split_statistic(name: str) -> tuple[str, str | None]:
    """``ap:median`` → (``ap``, ``median``); a name without a known statistic after its last colon
    comes back whole, with None."""
    measure, separator, statistic = name.rpartition(STATISTIC_SEPARATOR)
    if separator and measure and statistic in STATISTICS:
        return measure, statistic
    return name, None


def summarise(statistic: str, values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """``statistic`` of every run's values over queries.

    ``values`` is (Q, R), NaN where a run has no value on a query (the query is left out for that
    run). Without ``weights``, every query counts once and the result is (R,); with ``weights`` (B, Q)
    of non-negative integer counts (B weighted samples, such as bootstrap resamples), it is (B, R).
    A run with no counted value is NaN.
    """
    if statistic not in STATISTICS:
        raise UsageError(f"unknown summary statistic {statistic!r}; choose one of {', '.join(STATISTICS)}")
    values = np.asarray(values, dtype=np.float64)
    present = ~np.isnan(values)
    if statistic == MEAN:
        return _mean(values, present, weights)
    unweighted = weights is None
    weights = np.ones((1, values.shape[0]), dtype=np.int64) if unweighted else np.asarray(weights)
    result = np.full((len(weights), values.shape[1]), np.nan)
    weighted = STATISTICS[statistic].weighted
    for run in range(values.shape[1]):
        x = values[present[:, run], run]
        if not len(x):
            continue
        order = np.argsort(x, kind="stable")
        w = weights[:, present[:, run]][:, order]
        counted = w.sum(axis=1) > 0
        if counted.any():
            result[counted, run] = weighted(x[order], w[counted])
    return result[0] if unweighted else result


def _mean(values: np.ndarray, present: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Σ w v / Σ w over the present values; unweighted, the plain sums (as aggregate always summed)."""
    filled = np.where(present, values, 0.0)
    if weights is None:
        totals, counts = filled.sum(axis=0), present.sum(axis=0)
    else:
        weights = np.asarray(weights, dtype=np.float64)
        totals, counts = weights @ filled, weights @ present
    return np.divide(totals, counts, out=np.full(np.shape(totals), np.nan), where=counts > 0)
