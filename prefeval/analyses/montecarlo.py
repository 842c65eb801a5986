"""Random draws for the Monte Carlo parts of ``prefeval sampled`` and ``prefeval null``.

Both draw for many groups (runs × queries, or draws × queries) at once from one seeded
``numpy.random.Generator``, so the same seed gives the same numbers; neither loops over items.
"""

from __future__ import annotations

import numpy as np

from prefeval.io.codes import distinct


def uniform_subsets(rng: np.random.Generator, population: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Uniformly random subsets, sorted and laid end to end: ``size[g]`` distinct integers of
    0..population[g]−1 for every group g, in ascending order, group after group (Σ size values).

    Groups of equal size are drawn together. A subset of s items of P is drawn as s uniform integers,
    sorted, whose repeats are drawn again until there are none; when s > P/2 the P − s items left out
    are drawn that way instead. Every step treats all items alike, so every subset is equally likely.
    Repeats are rare when s <= P/2 (about s²/2P per subset, fewer in each round), so the cost is
    close to that of sorting s numbers per group.
    """
    population = np.asarray(population, dtype=np.int64)
    size = np.asarray(size, dtype=np.int64)
    if (size > population).any() or (size < 0).any():
        raise ValueError("a subset cannot be larger than its population, nor negative")
    offsets = np.concatenate(([0], np.cumsum(size)))
    items = np.empty(offsets[-1], dtype=np.int64)
    for count in distinct(size[size > 0]).tolist():
        groups = np.flatnonzero(size == count)
        items[offsets[groups][:, None] + np.arange(count)] = _sorted_subsets(rng, population[groups], count)
    return items


def _sorted_subsets(rng: np.random.Generator, population: np.ndarray, count: int) -> np.ndarray:
    """(G, count): a sorted uniform subset of 0..population[g]−1 per row."""
    subsets = np.empty((len(population), count), dtype=np.int64)
    sparse = 2 * count <= population
    subsets[sparse] = _distinct_integers(rng, population[sparse], count)
    dense = np.flatnonzero(~sparse)
    if len(dense):
        left_out = population[dense] - count
        excluded = np.zeros((len(dense), int(population[dense].max()) + 1), dtype=bool)
        for width in distinct(left_out[left_out > 0]).tolist():
            rows = np.flatnonzero(left_out == width)
            excluded[rows[:, None], _distinct_integers(rng, population[dense][rows], width)] = True
        excluded[np.arange(excluded.shape[1]) >= population[dense][:, None]] = True
        # the kept columns of each row, in order: exactly ``count`` of them
        subsets[dense] = np.nonzero(~excluded)[1].reshape(len(dense), count)
    return subsets


def _distinct_integers(rng: np.random.Generator, population: np.ndarray, count: int) -> np.ndarray:
    """(G, count) sorted distinct uniform integers of 0..population[g]−1, by redrawing repeats."""
    items = np.sort(rng.integers(0, population[:, None], (len(population), count)), axis=1)
    redo = np.arange(len(population))
    while len(redo):
        rows = items[redo]
        repeated = np.zeros(rows.shape, dtype=bool)
        repeated[:, 1:] = rows[:, 1:] == rows[:, :-1]
        redo = redo[repeated.any(axis=1)]
        if not len(redo):
            break
        rows = rows[repeated.any(axis=1)]
        repeated = repeated[repeated.any(axis=1)]
        rows[repeated] = rng.integers(0, np.broadcast_to(population[redo][:, None], rows.shape)[repeated])
        items[redo] = np.sort(rows, axis=1)
    return items


def counts_in_intervals(
    rng: np.random.Generator,
    edges: np.ndarray,
    first: np.ndarray,
    last: np.ndarray,
    totals: np.ndarray,
    replacement: bool,
) -> np.ndarray:
    """Scatter ``totals[g]`` uniform draws from group g's items over its intervals, and count them.

    Group g's items are 0..edges[last[g]]−1, cut by the non-decreasing ``edges[first[g]..last[g]]``
    (edges[first[g]] = 0) into the intervals [edges[j], edges[j+1]) for j in first[g]..last[g]−1. The
    draws are with replacement (multinomial counts) or without (multivariate hypergeometric counts).
    Returns ``counts`` shaped like ``edges``: counts[j] items fell in interval j (0 at each ``last``).

    The counts are drawn by halving: a run of intervals holding c draws sends a Binomial(c, L/S) (or
    Hypergeometric(L, S − L, c)) share of them to its left half of L of its S items, and the halves are
    split again until single intervals remain. That is O(log(intervals)) vectorised rounds, and the
    cost does not depend on how many items or draws there are.
    """
    counts = np.zeros(len(edges), dtype=np.int64)
    lo, hi, count = (np.asarray(a, dtype=np.int64) for a in (first, last, totals))
    while len(lo):
        busy = count > 0
        lo, hi, count = lo[busy], hi[busy], count[busy]
        leaf = hi - lo == 1
        counts[lo[leaf]] = count[leaf]
        lo, hi, count = lo[~leaf], hi[~leaf], count[~leaf]
        mid = (lo + hi) // 2
        left = edges[mid] - edges[lo]
        size = edges[hi] - edges[lo]
        if replacement:
            to_left = rng.binomial(count, left / size)
        else:
            to_left = rng.hypergeometric(left, size - left, count)
        lo, hi, count = np.concatenate((lo, mid)), np.concatenate((mid, hi)), np.concatenate((to_left, count - to_left))
    return counts
