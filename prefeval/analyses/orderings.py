"""From per-query scores to system orderings: per-query orderings, mean, Borda, MC4, Kendall's τ.

Definitions (MEASURES.md, "Aggregation"):

* Per query, runs are ordered by a score: a metric's value, or a preference's net preference
  Σ_j pref(run, j). Scores within :data:`TIE_TOLERANCE` of each other are ties and stay ties (tie
  groups are formed after sorting, so a chain of close scores is one group).
* ``mean``: the mean metric over the queries a run has; likewise ``median``, ``min``, ``q10``,
  ``cvar10`` and ``gini`` (lower is better), the statistics of :mod:`prefeval.measures.summaries`.
* ``borda``: a run at position p of a query ordering of n runs gets n − p + 1 points; tied runs share
  the average of the points of the positions they occupy; points are summed over queries.
* ``mc4`` (Dwork, Kumar, Naor and Sivakumar, WWW 2001): from run i pick j uniformly among the n runs
  and move to j if more queries order j above i than i above j (ties abstain), else stay; with
  probability α (damping) teleport uniformly instead. Runs are ordered by the stationary
  distribution, computed exactly (a linear solve for α > 0; repeated squaring of the transition
  matrix until it stops changing for α = 0, started from the uniform distribution).
* Final orderings are deterministic: equal aggregate scores (within the tolerance) are ordered by run
  name ascending and reported with one shared score. A run's *rank* is the competition rank: 1 + the
  number of runs in strictly better tie groups, so tied runs share the best rank of their group
  (1, 1, 3) (:func:`tied_ranks`).

Every aggregation also takes *weights*: a (B, Q) matrix of non-negative integer counts, one row per
weighted sample of the queries (a bootstrap resample counts each query as often as it was drawn).
Borda's points and MC4's wins are then weighted sums of the per-query points and win indicators, and
the statistics their weighted versions, computed for the B samples at once
(:meth:`QueryOrderings.aggregated`; :mod:`prefeval.analyses.bootstrap` uses it).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from prefeval.measures.summaries import STATISTICS, summarise
from prefeval.runtime.memory import STEP_ELEMENTS

TIE_TOLERANCE = 1e-9
DEFAULT_DAMPING = 0.15
PREFERENCE_METHODS = ("mc4", "borda")
"""How a preference's per-query orderings are aggregated; a metric's are by a statistic (the mean)."""
STATIONARY_PRECISION = 1e-12
"""Stationary probabilities are exact to this; smaller ones (a run the chain leaves for good) are 0."""


class QueryOrderings(NamedTuple):
    """Per-query tie-aware orderings of R runs over Q queries.

    ``level[q, r]`` is the tie group of run r on query q (0 = best, −1 = run absent from the query);
    ``scores[q, r]`` the score it was ordered by (NaN when absent).
    """

    runs: list[str]
    scores: np.ndarray
    level: np.ndarray

    @classmethod
    def from_scores(cls, runs: list[str], scores: np.ndarray) -> QueryOrderings:
        return cls(runs=runs, scores=scores, level=tie_levels(scores))

    def orderings(self) -> list[list[int]]:
        """Per query, the present runs (as indexes into ``runs``), best first, tied runs by name."""
        name_rank = np.argsort(np.argsort(np.array(self.runs, dtype=object)))
        absent_last = np.where(self.level >= 0, self.level, np.iinfo(np.int64).max)
        order = np.lexsort((np.broadcast_to(name_rank, self.level.shape), absent_last), axis=-1)
        present = np.take_along_axis(self.level >= 0, order, axis=-1).sum(axis=1)
        return [row[:count] for row, count in zip(order.tolist(), present.tolist())]

    def aggregated(self, method: str, damping: float = DEFAULT_DAMPING,
                   weights: np.ndarray | None = None) -> np.ndarray:
        """The aggregate score of every run by ``method`` (``mc4``, ``borda`` or a statistic of
        :mod:`prefeval.measures.summaries`): (R,), or (B, R) for ``weights`` (B, Q)."""
        if method == "mc4":
            return mc4_stationary(self.wins(weights), damping)
        if method == "borda":
            return self.borda(weights)
        return summarise(method, self.scores, weights)

    def borda(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Borda points per run, summed over queries (weighted by ``weights`` (B, Q): (B, R))."""
        points = self.borda_points()
        return points.sum(axis=0) if weights is None else np.asarray(weights, dtype=np.float64) @ points

    def borda_points(self) -> np.ndarray:
        """(Q, R) Borda points of every run on every query: (#runs strictly below) + (tie size + 1) / 2,
        0 where the run is absent. They are multiples of 1/2, so their sums are exact."""
        level = self.level
        present = level >= 0
        num_queries, num_runs = level.shape
        safe_level = np.where(present, level, 0)
        cell = np.arange(num_queries)[:, None] * num_runs + safe_level
        group_sizes = np.bincount(cell[present], minlength=num_queries * num_runs).reshape(num_queries, num_runs)
        worse_than_level = np.cumsum(group_sizes[:, ::-1], axis=1)[:, ::-1] - group_sizes
        size = np.take_along_axis(group_sizes, safe_level, axis=1)
        below = np.take_along_axis(worse_than_level, safe_level, axis=1)
        return np.where(present, below + (size + 1.0) / 2.0, 0.0)

    def wins(self, weights: np.ndarray | None = None) -> np.ndarray:
        """wins[i, j]: the number of queries that order run i strictly above run j (both present); with
        ``weights`` (B, Q), the (B, R, R) weighted counts Σ_q weights[b, q] · [q orders i above j]."""
        num_runs = self.level.shape[1]
        if weights is None:
            wins = np.zeros((num_runs, num_runs), dtype=np.int64)
            for _, above in self._win_indicators(STEP_ELEMENTS):
                wins += above.sum(axis=0)
            return wins
        weights = np.asarray(weights, dtype=np.float64)
        weighted = np.zeros((len(weights), num_runs * num_runs))
        for start, above in self._win_indicators(STEP_ELEMENTS):
            weighted += weights[:, start:start + len(above)] @ above.reshape(len(above), -1)
        return weighted.reshape(len(weights), num_runs, num_runs)

    def _win_indicators(self, elements: int):
        """(first query, (Qb, R, R) booleans: query orders run i strictly above run j) for consecutive
        blocks of at most ``elements`` indicators."""
        num_queries, num_runs = self.level.shape
        step = max(1, elements // max(num_runs * num_runs, 1))
        for start in range(0, num_queries, step):
            level = self.level[start:start + step]
            rank = np.where(level >= 0, level, np.iinfo(np.int64).max).astype(np.int64)
            both = (level[:, :, None] >= 0) & (level[:, None, :] >= 0)
            yield start, (rank[:, :, None] < rank[:, None, :]) & both

    def mc4(self, damping: float = DEFAULT_DAMPING) -> np.ndarray:
        """The stationary distribution of the MC4 chain over runs."""
        return mc4_stationary(self.wins(), damping)


def tie_levels(scores: np.ndarray) -> np.ndarray:
    """Tie group of every run on every query (0 = best), −1 where the score is NaN.

    Runs are sorted by score descending; a new group starts where a score is more than
    :data:`TIE_TOLERANCE` below the previous one.
    """
    missing, order, starts = _tie_groups(scores)
    levels_sorted = np.cumsum(starts, axis=-1) - 1
    level = np.empty_like(levels_sorted)
    np.put_along_axis(level, order, levels_sorted, axis=-1)
    return np.where(missing, -1, level)


def tied_ranks(scores: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Competition ranks along the last axis of ``scores`` (any shape; rows ranked independently):
    1 + the number of runs in strictly better tie groups (groups as in :func:`tie_levels`), so tied
    runs share a rank (1, 1, 3). NaN scores rank after every scored run, tied with each other."""
    scores = np.asarray(scores, dtype=np.float64)
    missing, order, starts = _tie_groups(scores if higher_is_better else -scores)
    position = np.broadcast_to(np.arange(scores.shape[-1]), scores.shape)
    first_of_group = np.maximum.accumulate(np.where(starts, position, 0), axis=-1)
    ranks = np.empty(scores.shape, dtype=np.int64)
    np.put_along_axis(ranks, order, first_of_group + 1, axis=-1)
    scored = (~missing).sum(axis=-1, keepdims=True)
    return np.where(missing, scored + 1, ranks)


def _tie_groups(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NaN mask, the order of the scores along the last axis (descending, NaN last, stable), and
    where in that order a tie group starts: a score more than the tolerance below the previous one."""
    scores = np.asarray(scores, dtype=np.float64)
    missing = np.isnan(scores)
    order = np.argsort(np.where(missing, np.inf, -scores), axis=-1, kind="stable")
    ordered = np.take_along_axis(scores, order, axis=-1)
    starts = np.ones(ordered.shape, dtype=np.int64)
    starts[..., 1:] = (ordered[..., :-1] - ordered[..., 1:]) > TIE_TOLERANCE
    return missing, order, starts


def higher_is_better(method: str) -> bool:
    """Whether an aggregation ``method`` orders runs by descending score (all but the Gini coefficient)."""
    return STATISTICS[method].higher_is_better if method in STATISTICS else True


def mc4_stationary(wins: np.ndarray, damping: float = DEFAULT_DAMPING) -> np.ndarray:
    """Stationary distribution of MC4 given ``wins[i, j]`` (queries ordering i above j), (R, R); or of
    every chain of a stack of them, (..., R, R) → (..., R).

    Transition from i: to each j ≠ i with probability 1/n if wins[j, i] > wins[i, j], staying
    otherwise; mixed with a uniform teleport of probability ``damping``.
    """
    wins = np.asarray(wins)
    n = wins.shape[-1]
    if not 0.0 <= damping < 1.0:
        raise ValueError("the MC4 damping must be in [0, 1)")
    if n == 1:
        return np.ones(wins.shape[:-1])
    diagonal = np.arange(n)
    beaten_by = (np.swapaxes(wins, -1, -2) > wins).astype(np.float64)
    beaten_by[..., diagonal, diagonal] = 0.0
    transition = beaten_by / n
    transition[..., diagonal, diagonal] = 1.0 - transition.sum(axis=-1)
    if damping > 0:
        system = np.swapaxes(np.eye(n) - (1.0 - damping) * transition, -1, -2)
        teleport = np.full(n, damping / n)
        if system.ndim == 2:
            stationary = np.linalg.solve(system, teleport)
        else:
            stationary = np.linalg.solve(system, np.broadcast_to(teleport[:, None], system.shape[:-1] + (1,)))[..., 0]
    else:
        stationary = _limit_from_uniform(transition)
    stationary = np.where(stationary < STATIONARY_PRECISION, 0.0, stationary)
    return stationary / stationary.sum(axis=-1, keepdims=True)


def _limit_from_uniform(transition: np.ndarray, tolerance: float = 1e-14, max_squarings: int = 64) -> np.ndarray:
    """lim_t u P^t from the uniform u, by squaring P (at most 2^64 steps) until it stops changing
    (every chain of a stack (..., n, n) alike).

    The chain is aperiodic (every state keeps probability >= 1/n of staying), so the limit exists.
    Rows are renormalised after each squaring so that rounding cannot compound.
    """
    power = transition
    for _ in range(max_squarings):
        squared = power @ power
        squared /= squared.sum(axis=-1, keepdims=True)
        converged = np.abs(squared - power).max() <= tolerance
        power = squared
        if converged:
            break
    n = transition.shape[-1]
    return np.full(n, 1.0 / n) @ power


def ordering_by(scores: np.ndarray, runs: list[str],
                higher_is_better: bool = True) -> tuple[list[str], dict[str, float]]:
    """Runs by aggregate score, best first (descending, or ascending when lower is better; ties,
    within the tolerance, by name), and the scores, tied runs sharing the best score of their tie
    group. Runs scored NaN are left out."""
    scores = np.asarray(scores, dtype=np.float64)
    levels = tie_levels((scores if higher_is_better else -scores)[None, :])[0]
    order = sorted((r for r in range(len(runs)) if levels[r] >= 0), key=lambda r: (levels[r], runs[r]))
    shared: dict[int, float] = {}
    for r in order:
        shared.setdefault(levels[r], float(scores[r]))
    return [runs[r] for r in order], {runs[r]: shared[levels[r]] for r in order}


def kendall_tau(first: list[str], second: list[str], first_scores=None, second_scores=None) -> float:
    """Kendall's τ between two orderings of the same runs: (concordant − discordant) / (n(n−1)/2),
    or τ-b when either side has ties (given as scores: equal scores, within the tolerance, tie)."""
    runs = sorted(first)
    if sorted(second) != runs:
        raise ValueError("the two orderings must hold the same runs")
    a = _tie_ranks(first, first_scores, runs)
    b = _tie_ranks(second, second_scores, runs)
    da = np.sign(a[:, None] - a[None, :])
    db = np.sign(b[:, None] - b[None, :])
    upper = np.triu_indices(len(runs), k=1)
    product = (da * db)[upper]
    concordant_minus_discordant = product.sum()
    ties_a = (da[upper] == 0).sum()
    ties_b = (db[upper] == 0).sum()
    pairs = len(product)
    if pairs == 0:
        return 1.0
    denominator = np.sqrt((pairs - ties_a) * (pairs - ties_b))
    return float(concordant_minus_discordant / denominator) if denominator > 0 else 0.0


def discordant_pairs(first_scores: dict[str, float], second_scores: dict[str, float]) -> list[tuple[str, str]]:
    """The pairs of runs (a, b) that the first scores order a above b and the second b above a.

    Scores within the tolerance tie (as in :func:`tie_levels`), and a pair tied on either side is not
    discordant. Pairs come in the order of the first ordering (:func:`ordering_by`): by a, then b.
    """
    runs = sorted(first_scores)
    if sorted(second_scores) != runs:
        raise ValueError("the two sets of scores must cover the same runs")
    order, _ = ordering_by(np.array([first_scores[run] for run in runs]), runs)
    first = _tie_ranks(order, first_scores, order)
    second = _tie_ranks(order, second_scores, order)
    above, below = np.nonzero((first[:, None] < first[None, :]) & (second[:, None] > second[None, :]))
    return [(order[a], order[b]) for a, b in zip(above.tolist(), below.tolist())]


def _tie_ranks(ordering: list[str], scores, runs: list[str]) -> np.ndarray:
    if scores is None:
        position = {run: p for p, run in enumerate(ordering)}
        return np.array([position[run] for run in runs], dtype=np.float64)
    values = np.array([scores[run] for run in runs], dtype=np.float64)
    return tie_levels(values[None, :])[0].astype(np.float64)


def competition_ranks(scores: dict[str, float], higher_is_better: bool = True) -> dict[str, int]:
    """The rank of each run from its score (:func:`tied_ranks`): tied runs, whose scores are within the
    tolerance (:func:`ordering_by` gives them one shared score), share a rank (1, 1, 3)."""
    ranks = tied_ranks(np.array(list(scores.values()), dtype=np.float64), higher_is_better)
    return dict(zip(scores, ranks.tolist()))
