"""How stable is an ordering of runs? Rank intervals and tiers from resamples of the queries.

``aggregate --bootstrap B`` treats the Q queries of a sample as a sample from a population of queries
and asks how the ordering of the runs would vary with other queries. Each of B *resamples* draws Q
queries uniformly with replacement (Efron and Tibshirani, *An Introduction to the Bootstrap*, 1993);
the runs are ordered on the resample exactly as on the queries themselves (the same aggregation, mean
or another statistic, Borda or MC4, and the same ties, :mod:`prefeval.analyses.orderings`), and each
run's rank is recorded. Sakai (SIGIR 2006, "Evaluating Evaluation Metrics Based on the Bootstrap")
brought query resampling to IR evaluation; here it is applied to whole orderings rather than to
pairs of runs. For every run:

* ``rank``: its rank in the ordering over all queries (competition rank: tied runs share the best
  rank of their group, 1, 1, 3);
* ``rank_probabilities``: P(rank = k) for k = 1 … R, the fraction of resamples in which the run had
  rank k (R runs; tied runs share a rank there too, so the fractions of a rank can sum to more than 1
  over runs);
* ``rank_low``, ``rank_high``: the 95% percentile interval of its rank, the 2.5% and 97.5% quantiles
  of its B resampled ranks taken as the smallest rank k with F(k) >= 0.025 and the smallest with
  F(k) >= 0.975, F being the fraction of resamples with rank <= k (numpy's ``inverted_cdf``), so that
  the interval is made of ranks that occurred and holds at least 95% of the resamples;
* ``tier``: runs are taken rank by rank in the order over all queries, the runs of one rank (tied
  runs) together. The first rank starts tier 1; the runs of each next rank join the current tier when
  the interval of each of them overlaps the interval of every run already in it ([a, b] and [c, d]
  overlap when a <= d and c <= b), and start the next tier otherwise. Tiers are therefore consecutive
  in the ordering, partition the runs, never separate tied runs, and hold no two runs with disjoint
  intervals (but tied ones): as in the tiered leaderboards of shared tasks, a tier is a group of runs
  that the queries do not separate.

Computation. A resample is a vector of counts w (Q,) (how often each query was drawn; Σ w = Q), and
the B resamples a (B, Q) matrix W, drawn in blocks (:data:`BLOCK_ELEMENTS`). Every aggregation is a
weighted one (:meth:`~prefeval.analyses.orderings.QueryOrderings.aggregated`): the mean is
W @ values / W @ present, Borda W @ (per-query points), MC4's wins matrix W @ (per-query win
indicators) followed by a stationary distribution per resample (solved for all at once), and the
other statistics their weighted definitions; a whole block of resamples is ordered at once
(:func:`~prefeval.analyses.orderings.tied_ranks`). A run absent from every drawn query of a resample
(possible only when runs miss queries) ranks below every run with a score there.

Randomness: the resamples of sample s come from ``numpy.random.default_rng([seed, s])``, created
afresh for each measure, so that every measure and method of a sample sees the same resamples (and
asking for more measures changes none of the others), and the query subsamples of
``--query_fraction``, drawn from the same seed, are independent of them. The same seed gives the same
bytes.

Limits. Queries are the only source of variance: the documents, the judgments and their assessors,
and the runs themselves are taken as fixed, so an interval says how much the ordering depends on
which queries were chosen, not how it would fare with other judgments or other systems. The bootstrap
assumes the queries are an independent sample of the population of interest; with few queries (say
under 25) the percentile intervals are too narrow. Runs that tie on most queries get wide intervals
and share tiers, as they should. Intervals of different runs are not simultaneous, and a tier is a
description of overlap, not a significance test (``prefeval significance`` tests pairs).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np

from prefeval.analyses.orderings import DEFAULT_DAMPING, QueryOrderings, higher_is_better, ordering_by, tied_ranks
from prefeval.errors import InputError
from prefeval.io.jsonl import read_records
from prefeval.io.keys import QID, RUN, SAMPLE, SUMMARY_QID
from prefeval.io.records import (
    MEASURE,
    METHOD,
    RANK,
    RANK_HIGH,
    RANK_INTERVAL,
    RANK_LOW,
    RANK_PROBABILITIES,
    RESAMPLES,
    SCORE,
    TIER,
    aggregate_record_kind,
)
from prefeval.io.source import display_name
from prefeval.runtime.memory import STEP_ELEMENTS

LEVEL = 0.95
"""The coverage of the rank intervals."""
BLOCK_ELEMENTS = STEP_ELEMENTS
"""At most this many resample × query weights (and resample × run × run wins) are held at once."""


class RankBootstrap(NamedTuple):
    """The ranks of the runs of one ordering over all queries and over B resamples.

    ``runs`` are in the order over all queries (best first), ``scores`` their scores there (tied runs
    sharing one) and ``rank`` their ranks; ``counts[r, k]`` is the number of resamples in which run r
    had rank k + 1.
    """

    runs: list[str]
    scores: dict[str, float]
    rank: np.ndarray
    counts: np.ndarray
    level: float = LEVEL

    @property
    def resamples(self) -> int:
        return int(self.counts[0].sum()) if len(self.counts) else 0

    @property
    def probabilities(self) -> np.ndarray:
        """(R, R): P(rank = k + 1) for each run."""
        return self.counts / max(self.resamples, 1)

    def interval(self) -> tuple[np.ndarray, np.ndarray]:
        """The lowest and highest rank of each run's percentile interval (see the module docstring)."""
        tail = (1.0 - self.level) / 2.0
        cumulative = np.cumsum(self.counts, axis=1)
        slack = 1e-9 * self.resamples  # 0.025 · 1000 must be 25, not 25.000000000000004
        low = (cumulative >= tail * self.resamples - slack).argmax(axis=1) + 1
        high = (cumulative >= (1.0 - tail) * self.resamples - slack).argmax(axis=1) + 1
        return low, high

    def tiers(self) -> np.ndarray:
        """The tier of each run, 1 for the first (see the module docstring)."""
        return rank_tiers(self.rank, *self.interval())


def rank_tiers(rank: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Tiers of runs given in their order over all queries, with ranks ``rank`` there and rank intervals
    [low, high]: the runs of a rank (tied runs, or one run) join the current tier when the interval of
    each overlaps that of every run already in it, and start the next tier otherwise."""
    tiers = np.zeros(len(rank), dtype=np.int64)
    members: list[int] = []
    tier = 0
    for first in range(len(rank)):
        if first and rank[first] == rank[first - 1]:
            continue  # placed with the first run of its rank
        group = [r for r in range(first, len(rank)) if rank[r] == rank[first]]
        if not members or not all(low[r] <= high[m] and low[m] <= high[r] for r in group for m in members):
            tier += 1
            members = []
        members += group
        tiers[group] = tier
    return tiers


def resample_weights(num_queries: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(B, Q) counts: how often each of the Q queries is drawn in each of B resamples of Q draws with
    replacement (a multinomial with equal probabilities; drawing B rows in blocks gives the same rows)."""
    return rng.multinomial(num_queries, np.full(num_queries, 1.0 / num_queries), size=resamples)


def bootstrap_ranks(orderings: QueryOrderings, methods: Sequence[str], resamples: int, rng: np.random.Generator,
                    damping: float = DEFAULT_DAMPING, level: float = LEVEL) -> dict[str, RankBootstrap]:
    """For each aggregation method of ``orderings`` (``mc4``, ``borda``, a statistic), the ranks of the
    runs over all queries and over ``resamples`` resamples of the queries drawn from ``rng`` (the same
    resamples for every method). Runs without a score over all queries are left out."""
    if resamples < 1:
        raise ValueError("the bootstrap needs at least one resample")
    num_queries, num_runs = orderings.scores.shape
    counts = {method: np.zeros((num_runs, num_runs), dtype=np.int64) for method in methods}
    block = max(1, BLOCK_ELEMENTS // max(num_queries, num_runs * num_runs))
    for start in range(0, resamples, block):
        weights = resample_weights(num_queries, min(block, resamples - start), rng)
        for method, total in counts.items():
            ranks = tied_ranks(orderings.aggregated(method, damping, weights), higher_is_better(method))
            cells = (np.arange(num_runs) * num_runs + ranks - 1).ravel()
            total += np.bincount(cells, minlength=num_runs * num_runs).reshape(num_runs, num_runs)
    results = {}
    for method, total in counts.items():
        full = orderings.aggregated(method, damping)
        ordering, scores = ordering_by(full, orderings.runs, higher_is_better(method))
        rows = [orderings.runs.index(run) for run in ordering]
        ranks = tied_ranks(full, higher_is_better(method))[rows]
        results[method] = RankBootstrap(ordering, scores, ranks, total[rows], level)
    return results


def bootstrap_records(sample: int, measure: str, method: str, result: RankBootstrap) -> Iterator[dict]:
    """The records of one ordering, a run per record in the order over all queries::

        {"qid":"all","sample":0,"measure":"ap","method":"mean","run":"A","rank":1,"score":0.31,
         "rank_low":1,"rank_high":2,"tier":1,"rank_probabilities":[0.82,0.18,0.0],"resamples":1000}
    """
    low, high = result.interval()
    tiers = result.tiers()
    probabilities = result.probabilities.tolist()
    for r, run in enumerate(result.runs):
        yield {QID: SUMMARY_QID, SAMPLE: sample, MEASURE: measure, METHOD: method, RUN: run,
               RANK: int(result.rank[r]), SCORE: result.scores[run], RANK_LOW: int(low[r]),
               RANK_HIGH: int(high[r]), TIER: int(tiers[r]), RANK_PROBABILITIES: probabilities[r],
               RESAMPLES: result.resamples}


def read_rank_intervals(source: str) -> list[dict]:
    """The records of :func:`bootstrap_records` in ``aggregate --bootstrap`` output (a path, ``-`` for
    stdin), of its first sample, each checked (:func:`rank_interval_problem`); aggregate's other
    records are skipped. What ``prefeval plot ranks`` draws."""
    records = []
    for number, record in read_records(source):
        if not isinstance(record, dict) or SAMPLE not in record:
            raise InputError(display_name(source), "not a line of prefeval aggregate", number)
        if aggregate_record_kind(record) == RANK_INTERVAL:
            problem = rank_interval_problem(record)
            if problem:
                raise InputError(display_name(source), f"not a rank interval of aggregate --bootstrap: {problem}",
                                 number)
            records.append(record)
    if not records:
        raise InputError(display_name(source), "no rank intervals: write them with prefeval aggregate --bootstrap B")
    first = records[0][SAMPLE]
    return [record for record in records if record[SAMPLE] == first]


def rank_interval_problem(record: dict) -> str | None:
    """What is wrong with a record that has the keys of a rank interval, if anything."""
    for key in (MEASURE, METHOD, RUN):
        if not isinstance(record.get(key), str):
            return f"{key!r} must be a string"
    for key in (RANK, RANK_LOW, RANK_HIGH, TIER, RESAMPLES):
        value = record.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return f"{key!r} must be a positive integer"
    probabilities = record[RANK_PROBABILITIES]
    if (not isinstance(probabilities, list) or not probabilities
            or not all(isinstance(p, (int, float)) and not isinstance(p, bool) and 0 <= p <= 1 for p in probabilities)):
        return "'rank_probabilities' must be a list of probabilities"
    if not record[RANK_LOW] <= record[RANK_HIGH] <= len(probabilities):
        return "the interval must run from rank_low to rank_high, within the ranks of rank_probabilities"
    return None
