"""What an evaluation yields: :class:`Block` s of per-query values and one :class:`Summary` per sample,
and :class:`RunningSummary`, which makes the summary from the blocks as they stream past.

**The summary is computed here, once.** Each metric's summary is its aggregator's
(:mod:`prefeval.measures.aggregators`: the mean, the sum of a count, the geometric mean), over the
queries counted for the run (:mod:`prefeval.ranking.conventions`); every output format prints it.

**Sums in a fixed order.** Every sum adds the per-query values in the same order whatever the blocks,
chunks, processes or engine (in memory, streamed, Dask), so that the same inputs give the same
bytes. Under the ``pairwise`` arithmetic (:class:`FixedOrderSum`) the queries are cut into summation
blocks of :data:`SUM_BLOCK` consecutive queries, counted from the first; each block is summed by
numpy (pairwise), and the block sums are added one after the other. With at most :data:`SUM_BLOCK`
queries (every TREC collection) that is numpy's sum of all the values; the error grows with n /
:data:`SUM_BLOCK` additions rather than n. Under the ``sequential`` arithmetic
(:class:`SequentialSum`, trec_eval's conventions) the values are added one after the other, in the
order of the queries, as trec_eval's loop adds them; under the summary order ``listed``
(:class:`ListedOrderSum`, ir_measures' conventions) one after the other in each run's own order of
its queries, as ir_measures' ``MeanAgg`` adds them (:mod:`prefeval.ranking.conventions`).

**Partial summaries.** A partition of the queries evaluated elsewhere (a worker of
:mod:`prefeval.engine.partitioned`) makes a *partial* :class:`RunningSummary`, which keeps what the
order of the sums needs rather than adding it up: the block sums of :class:`FixedOrderSum` (a
partition starts at a multiple of :data:`SUM_BLOCK` queries, so its blocks are the whole
collection's), and the values themselves for the sequential sums. :meth:`RunningSummary.merge`
adds partial summaries, in query order, to the summary of the whole collection: the same bits as
adding their blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from prefeval.io.keys import MEAN, statistic_key
from prefeval.measures.aggregators import Aggregator
from prefeval.measures.summaries import summarise


@dataclass(frozen=True, eq=False)
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
    summary_metrics: dict[str, np.ndarray] = field(default_factory=dict)
    """(R, Qb) by metric name: what the summary adds for a metric in place of its values, where a
    measure's summary is not made of its per-query values (trec_eval's ``num_rel`` under ``-c``:
    :attr:`~prefeval.measures.base.Measure.complete_summary_from_qrels`)."""
    listing_order: np.ndarray | None = None
    """(R, Qb) under the summary order ``listed`` (:mod:`prefeval.ranking.conventions`): each query's
    place in the order in which its run lists its queries, in which the summary adds the run's
    values (:class:`ListedOrderSum`); None: in query order."""

    def columns(self, index: np.ndarray) -> Block:
        """The block of the queries ``index`` (positions in this block, in order): the values of a
        group of users (:mod:`prefeval.analyses.groups`)."""
        def take(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
            return {name: values[:, index] for name, values in arrays.items()}

        def take_one(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else values[:, index]

        return Block(self.sample, [self.qids[i] for i in index.tolist()], take(self.metrics), take(self.preferences),
                     take(self.metric_extras), take(self.pair_extras), take_one(self.metric_reported),
                     take_one(self.pair_reported), take(self.summary_metrics), take_one(self.listing_order))


@dataclass(frozen=True, eq=False)
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
    groups: dict[str, Summary] = field(default_factory=dict)
    """By user group (``eval --user-groups``, :mod:`prefeval.analyses.groups`), in name order: the
    summary of the group's users alone, for every group that has users in the sample."""


SUM_BLOCK = 1024
"""Queries per summation block (module docstring)."""


class FixedOrderSum:
    """Row sums of values that arrive a few columns (queries) at a time, always in the same order
    (module docstring): columns wait until a whole summation block has arrived."""

    def __init__(self, rows: int, partial: bool = False):
        self.total = np.zeros(rows)
        self._waiting: list[np.ndarray] = []
        self._width = 0
        self._blocks: list[np.ndarray] | None = [] if partial else None

    def add(self, values: np.ndarray) -> None:
        """Add the next columns, (rows, k)."""
        self._waiting.append(values)
        self._width += values.shape[1]
        if self._width < SUM_BLOCK:
            return
        waiting = np.concatenate(self._waiting, axis=1) if len(self._waiting) > 1 else self._waiting[0]
        whole = self._width - self._width % SUM_BLOCK
        blocks = np.ascontiguousarray(waiting[:, :whole]).reshape(len(self.total), whole // SUM_BLOCK,
                                                                  SUM_BLOCK).sum(axis=2)
        self._add_blocks(blocks)
        self._waiting = [waiting[:, whole:]]
        self._width -= whole

    def _add_blocks(self, blocks: np.ndarray) -> None:
        if self._blocks is not None:  # partial: kept for the whole collection's sum
            self._blocks.append(blocks)
        else:
            self.total = np.cumsum(np.concatenate((self.total[:, None], blocks), axis=1), axis=1)[:, -1]

    def merge(self, partial: FixedOrderSum) -> None:
        """Add a partial sum of the next columns (made with ``partial=True``), whose first column
        starts a summation block: its block sums, then its last columns, as :meth:`add` would."""
        if partial._blocks:
            if self._width:
                raise ValueError("a partial sum must start at a multiple of SUM_BLOCK columns")
            self._add_blocks(np.concatenate(partial._blocks, axis=1))
        for values in partial._waiting:
            if values.shape[1]:
                self.add(values)

    def result(self) -> np.ndarray:
        """The sums of every column added so far."""
        if not self._width:
            return self.total
        rest = np.ascontiguousarray(np.concatenate(self._waiting, axis=1))
        return self.total + rest.sum(axis=1)


class SequentialSum:
    """Row sums of values added one column (query) after the other, from 0 (module docstring)."""

    def __init__(self, rows: int, partial: bool = False):
        self.total = np.zeros(rows)
        self._values: list[np.ndarray] | None = [] if partial else None

    def add(self, values: np.ndarray) -> None:
        """Add the next columns, (rows, k)."""
        if self._values is not None:  # partial: the values are kept, to be added in order
            self._values.append(values)
        elif values.shape[1]:
            self.total = np.cumsum(np.concatenate((self.total[:, None], values), axis=1), axis=1)[:, -1]

    def merge(self, partial: SequentialSum) -> None:
        """Add the values of a partial sum (made with ``partial=True``), one after the other."""
        for values in partial._values or ():
            self.add(values)

    def result(self) -> np.ndarray:
        return self.total


class ListedOrderSum:
    """Row sums of values added one after the other in each row's own order of the columns (a run's
    order of its queries, :attr:`Block.listing_order`), from 0 (module docstring): the columns wait,
    with their places, until the sum is asked for."""

    def __init__(self, rows: int, partial: bool = False):
        self.rows = rows
        self._values: list[np.ndarray] = []
        self._places: list[np.ndarray] = []

    def merge(self, partial: ListedOrderSum) -> None:
        """Add the columns of another sum of the same rows (they wait, as here, for the summary)."""
        self._values.extend(partial._values)
        self._places.extend(partial._places)

    def add(self, values: np.ndarray, places: np.ndarray) -> None:
        """Add the next columns, (rows, k), and each one's place in its row's order, (rows, k)."""
        self._values.append(values)
        self._places.append(places)

    def result(self) -> np.ndarray:
        total = SequentialSum(self.rows)
        if self._values:
            order = np.argsort(np.concatenate(self._places, axis=1), axis=1, kind="stable")
            total.add(np.take_along_axis(np.concatenate(self._values, axis=1), order, axis=1))
        return total.result()


class RunningSummary:
    """The summary of one sample, from its blocks in query order (:meth:`add`), in memory that does
    not grow with the number of queries, except for the statistics other than the mean
    (``median``, ...), which need every value: those keep each metric's per-query values.

    Each metric is summarised by its aggregator (``aggregators``, by name: the mean, the sum, the
    geometric mean; :mod:`prefeval.measures.aggregators`) over the queries a run is reported on (all,
    or its own under ``missing_queries="skip"``), adding :attr:`Block.summary_metrics` in place of a
    metric's per-query values where a block has them. Pair values and the pair values kept for the
    summary (:attr:`Block.pair_extras`) are means over the queries both runs are reported on, 0 when
    none. ``sums`` makes the running sums: :class:`FixedOrderSum` or :class:`SequentialSum`; a
    metric's values are added in each run's own order instead (:class:`ListedOrderSum`, which keeps
    them until the summary) where the blocks say it (:attr:`Block.listing_order`).
    """

    def __init__(self, sample: int, aggregators: dict[str, Aggregator], statistics: tuple[str, ...], num_runs: int,
                 num_pairs: int, sums: type[FixedOrderSum | SequentialSum] = FixedOrderSum, partial: bool = False):
        self.partial = partial
        self.sample = sample
        self.aggregators = aggregators
        self.statistics = statistics
        self.sums = sums
        self.num_queries = 0
        self.metric_totals: dict[str, FixedOrderSum | SequentialSum | ListedOrderSum] = {}
        self.metric_counts = np.zeros(num_runs, dtype=np.int64)
        self.pair_totals: dict[str, FixedOrderSum | SequentialSum] = {}
        self.pair_counts = np.zeros(num_pairs, dtype=np.int64)
        self.extra_totals: dict[str, FixedOrderSum | SequentialSum | ListedOrderSum] = {}
        self.kept: dict[str, list[np.ndarray]] = {}

    def add(self, block: Block) -> None:
        """Add a block's queries (blocks must come in query order)."""
        width = len(block.qids)
        self.num_queries += width
        reported = block.metric_reported
        self.metric_counts += width if reported is None else reported.sum(axis=1)
        places = block.listing_order
        for name, values in block.metrics.items():
            summed = block.summary_metrics.get(name, values)
            self._add(self.metric_totals, name, self.aggregators[name].terms(summed), reported, places)
            if any(statistic != MEAN for statistic in self.statistics):  # NaN: a query the run lacks
                self.kept.setdefault(name, []).append(values if reported is None else np.where(reported, values,
                                                                                                np.nan))
        for name, values in block.metric_extras.items():
            self._add(self.extra_totals, name, values, reported, places)
        pair_reported = block.pair_reported
        self.pair_counts += width if pair_reported is None else pair_reported.sum(axis=1)
        for name, values in (block.preferences | block.pair_extras).items():
            self._add(self.pair_totals, name, values, pair_reported)

    def _add(self, totals: dict, name: str, values: np.ndarray, reported: np.ndarray | None,
             places: np.ndarray | None = None) -> None:
        if reported is not None:
            values = np.where(reported, values, 0.0)
        if places is not None:
            totals.setdefault(name, ListedOrderSum(len(values))).add(values, places)
            return
        if name not in totals:
            totals[name] = self.sums(len(values), self.partial)
        totals[name].add(values)

    def merge(self, partial: RunningSummary) -> None:
        """Add the queries of a partial summary (made with ``partial=True`` on the next queries, the
        first of them at a multiple of :data:`SUM_BLOCK`; partial summaries merged in query order):
        the sums come out as if the blocks had been added here (module docstring)."""
        self.num_queries += partial.num_queries
        self.metric_counts += partial.metric_counts
        self.pair_counts += partial.pair_counts
        for mine, theirs in ((self.metric_totals, partial.metric_totals), (self.pair_totals, partial.pair_totals),
                             (self.extra_totals, partial.extra_totals)):
            for name, total in theirs.items():
                if name not in mine:
                    mine[name] = type(total)(total.rows if isinstance(total, ListedOrderSum) else len(total.total))
                mine[name].merge(total)
        for name, values in partial.kept.items():
            self.kept.setdefault(name, []).extend(values)

    def summary(self, pair_names: list[str], extras_of_pairs) -> Summary:
        """The :class:`Summary`. ``extras_of_pairs(names, totals, counts)`` turns the sums of the pair
        values kept for the summary into its extra keys (:func:`prefeval.measures.ties.summary_extras`)."""
        counts = self.metric_counts
        metrics = {}
        for name, aggregator in self.aggregators.items():
            total = self.metric_totals[name].result() if name in self.metric_totals else np.zeros(len(counts))
            metrics[name] = aggregator.value(total, counts)
        statistics = {}
        for statistic in self.statistics:
            if statistic == MEAN:
                continue
            for name in self.aggregators:
                kept = self.kept.get(name) or [np.zeros((len(counts), 0))]
                statistics[statistic_key(name, statistic)] = summarise(statistic, np.concatenate(kept, axis=1).T)
        pair_counts = self.pair_counts
        pair_totals = {name: total.result() for name, total in self.pair_totals.items()}
        return Summary(
            sample=self.sample,
            num_queries=self.num_queries,
            metrics=metrics,
            preferences={name: _mean_of_total(pair_totals[name], pair_counts) for name in pair_names
                         if name in pair_totals},
            metric_extras={key: _mean_of_total(total.result(), counts) for key, total in self.extra_totals.items()},
            pair_extras=extras_of_pairs(pair_names, pair_totals, np.maximum(pair_counts, 1)),
            statistics=statistics,
        )


def _mean_of_total(total: np.ndarray, count: np.ndarray) -> np.ndarray:
    """total / count, 0 where nothing was counted (a pair with no query in common)."""
    return np.divide(total, count, out=np.zeros(np.shape(total)), where=count > 0)
