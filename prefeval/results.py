"""What an evaluation yields: :class:`Block` s of per-query values and one :class:`Summary` per sample,
and :class:`RunningSummary`, which makes the summary from the blocks as they stream past.

**Sums run in query order.** Every mean, sum and geometric mean of the summary adds the per-query
values one after the other, in the order of the queries (numpy's ``cumsum``, whose order is fixed),
carrying the running total from block to block. So the summary does not depend on how the queries
were cut into blocks or chunks, on the number of processes, or on the engine (in memory, streamed,
Dask): the same inputs give the same bytes. It is also trec_eval's order (it adds the queries of a
run one by one). Sequential addition of n values of magnitude at most 1 errs by at most about
n · 2⁻⁵³ (1e-9 at ten million queries), far below what any reported digit shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from prefeval.measures.summaries import GEOMETRIC_FLOOR, MEAN, statistic_key, summarise


@dataclass(frozen=True)
class Block:
    """The values of one sample on a block of consecutive queries.

    ``metrics[name]`` is (R, Qb); ``preferences[name]`` is (P, Qb) for every measure, metrics
    included as deltas metric(runi) − metric(runj), pairs in the order of the evaluation's pairs.
    Under ``ties`` (:mod:`prefeval.measures.ties`): ``metric_extras[key]`` (R, Qb), more keys of the
    metric lines (``ap_ties_min``, ``ap_ties_max``); ``pair_extras[key]`` (P, Qb), pair values that
    only the summary uses (the bounds of each pair value, the variances of Monte Carlo estimates).
    """

    sample: int
    qids: list[str]
    metrics: dict[str, np.ndarray]
    preferences: dict[str, np.ndarray]
    metric_extras: dict[str, np.ndarray] = field(default_factory=dict)
    pair_extras: dict[str, np.ndarray] = field(default_factory=dict)
    metric_reported: np.ndarray | None = None
    """(R, Qb) under ``missing_queries="skip"``: whether a run's line for a query is written (the run
    has the query); None: every line is."""
    pair_reported: np.ndarray | None = None
    """(P, Qb) likewise for pair lines (both runs have the query)."""


@dataclass(frozen=True)
class Summary:
    """One sample's means over its queries: ``metrics[name]`` (R,), ``preferences[name]`` (P,); and
    ``statistics[key]`` (R,), the other summary statistics asked for (``ap:median``,
    :mod:`prefeval.measures.summaries`), statistic by statistic in the order asked, metrics in order."""

    sample: int
    num_queries: int
    metrics: dict[str, np.ndarray]
    preferences: dict[str, np.ndarray]
    statistics: dict[str, np.ndarray] = field(default_factory=dict)
    metric_extras: dict[str, np.ndarray] = field(default_factory=dict)
    pair_extras: dict[str, np.ndarray] = field(default_factory=dict)


def running_sum(carry: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``carry`` (N,) plus the rows of ``values`` (N, Qb), added one column after the other."""
    if values.shape[-1] == 0:
        return carry
    return np.cumsum(np.concatenate((carry[:, None], values), axis=1), axis=1)[:, -1]


class RunningSummary:
    """The summary of one sample, from its blocks in query order (:meth:`add`), in memory that does
    not grow with the number of queries, except for the statistics other than the mean
    (``median``, ...), which need every value: those keep each metric's per-query values.

    Each metric is summarised as its ``summary_kind`` says (:mod:`prefeval.measures.summaries`):
    ``mean`` Σ v / n, ``sum`` Σ v, ``geometric`` exp(Σ log(max(v, 1e-5)) / n); over the queries a
    run is reported on (all, or its own under ``missing_queries="skip"``); a run reported on no
    query has 0 (1 for a geometric mean: the exponential of an empty mean, taken as 0). Pair values
    and the pair values kept for the summary (:attr:`Block.pair_extras`) are means over the queries
    both runs are reported on, 0 when none.
    """

    def __init__(self, sample: int, metric_kinds: dict[str, str], statistics: tuple[str, ...], num_runs: int,
                 num_pairs: int):
        self.sample = sample
        self.metric_kinds = metric_kinds
        self.statistics = statistics
        self.num_queries = 0
        self.metric_totals: dict[str, np.ndarray] = {}
        self.metric_counts = np.zeros(num_runs, dtype=np.int64)
        self.pair_totals: dict[str, np.ndarray] = {}
        self.pair_counts = np.zeros(num_pairs, dtype=np.int64)
        self.extra_totals: dict[str, np.ndarray] = {}
        self.kept: dict[str, list[np.ndarray]] = {}

    def add(self, block: Block) -> None:
        """Add a block's queries (blocks must come in query order)."""
        width = len(block.qids)
        self.num_queries += width
        reported = block.metric_reported
        self.metric_counts += width if reported is None else reported.sum(axis=1)
        for name, values in block.metrics.items():
            if self.metric_kinds[name] == "geometric":
                values = np.log(np.maximum(values, GEOMETRIC_FLOOR))
            self._add(self.metric_totals, name, values, reported)
            if any(statistic != MEAN for statistic in self.statistics):
                self.kept.setdefault(name, []).append(block.metrics[name])
        for name, values in block.metric_extras.items():
            self._add(self.extra_totals, name, values, reported)
        pair_reported = block.pair_reported
        self.pair_counts += width if pair_reported is None else pair_reported.sum(axis=1)
        for name, values in (block.preferences | block.pair_extras).items():
            self._add(self.pair_totals, name, values, pair_reported)

    @staticmethod
    def _add(totals: dict[str, np.ndarray], name: str, values: np.ndarray, reported: np.ndarray | None) -> None:
        if reported is not None:
            values = np.where(reported, values, 0.0)
        totals[name] = running_sum(totals.get(name, np.zeros(len(values))), values)

    def summary(self, metric_names: list[str], pair_names: list[str], extras_of_pairs) -> Summary:
        """The :class:`Summary`. ``extras_of_pairs(names, totals, counts)`` turns the sums of the pair
        values kept for the summary into its extra keys (:func:`prefeval.measures.ties.summary_extras`)."""
        metrics = {}
        for name in metric_names:
            total = self.metric_totals.get(name, np.zeros(len(self.metric_counts)))
            kind = self.metric_kinds[name]
            value = total if kind == "sum" else _mean_of_total(total, self.metric_counts)
            metrics[name] = np.exp(value) if kind == "geometric" else value
        statistics = {}
        for statistic in self.statistics:
            if statistic == MEAN:
                continue
            for name in metric_names:
                kept = self.kept.get(name) or [np.zeros((len(self.metric_counts), 0))]
                statistics[statistic_key(name, statistic)] = summarise(statistic, np.concatenate(kept, axis=1).T)
        counts = self.pair_counts
        return Summary(
            sample=self.sample,
            num_queries=self.num_queries,
            metrics=metrics,
            preferences={name: _mean_of_total(self.pair_totals[name], counts)
                         for name in pair_names if name in self.pair_totals},
            metric_extras={key: _mean_of_total(total, self.metric_counts) for key, total in self.extra_totals.items()},
            pair_extras=extras_of_pairs(pair_names, self.pair_totals, np.maximum(counts, 1)),
            statistics=statistics,
        )


def _mean_of_total(total: np.ndarray, count: np.ndarray) -> np.ndarray:
    """total / count, 0 where nothing was counted (a pair with no query in common)."""
    return np.divide(total, count, out=np.zeros(np.shape(total)), where=count > 0)
