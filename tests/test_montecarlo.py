"""The Monte Carlo samplers: uniform subsets and counts in intervals, against their exact distributions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from prefeval.analyses.montecarlo import counts_in_intervals, uniform_subsets


@pytest.mark.parametrize("population, size", [(6, 2), (6, 3), (6, 5), (7, 7), (9, 1)])
def test_uniform_subsets_are_uniform(population, size):
    draws = 60_000
    rng = np.random.default_rng(population * 10 + size)
    subsets = uniform_subsets(rng, np.full(draws, population), np.full(draws, size)).reshape(draws, size)
    assert (np.diff(subsets, axis=1) > 0).all() and subsets.min() >= 0 and subsets.max() < population
    every = {subset: n for n, subset in enumerate(itertools.combinations(range(population), size))}
    observed = np.bincount([every[tuple(row)] for row in subsets.tolist()], minlength=len(every))
    assert len(every) == math.comb(population, size)
    if len(every) > 1:
        assert stats.chisquare(observed).pvalue > 1e-4


def test_uniform_subsets_of_mixed_sizes_are_laid_end_to_end():
    rng = np.random.default_rng(1)
    population = np.array([5, 10, 3, 8, 1000])
    size = np.array([2, 0, 3, 7, 4])
    items = uniform_subsets(rng, population, size)
    groups = np.split(items, np.cumsum(size)[:-1])
    assert [len(g) for g in groups] == size.tolist()
    assert groups[2].tolist() == [0, 1, 2]
    for group, p in zip(groups, population):
        assert (np.diff(group) > 0).all() and (group < p).all()
    again = uniform_subsets(np.random.default_rng(1), population, size)
    assert again.tolist() == items.tolist()
    with pytest.raises(ValueError):
        uniform_subsets(rng, np.array([3]), np.array([4]))


def interval_setup(groups: int):
    """``groups`` copies of a catalogue of 10 items cut at 3, 3 and 7 (an empty interval included)."""
    edges = np.tile([0, 3, 3, 7, 10], groups)
    first = np.arange(groups) * 5
    return edges, first, first + 4


@pytest.mark.parametrize("replacement", [False, True])
def test_counts_in_intervals_follow_their_distribution(replacement):
    groups, total = 40_000, 4
    edges, first, last = interval_setup(groups)
    counts = counts_in_intervals(np.random.default_rng(5), edges, first, last, np.full(groups, total), replacement)
    counts = counts.reshape(groups, 5)
    assert (counts.sum(axis=1) == total).all() and (counts[:, 1] == 0).all() and (counts[:, 4] == 0).all()
    sizes = np.array([3, 0, 4, 3])
    if not replacement:
        assert (counts[:, :4] <= sizes).all()
    # each interval's count: Hypergeometric(10, size, 4) or Binomial(4, size / 10)
    for j, size in ((0, 3), (2, 4), (3, 3)):
        law = stats.binom(total, size / 10) if replacement else stats.hypergeom(10, size, total)
        support = np.arange(total + 1)
        observed = np.bincount(counts[:, j], minlength=total + 1)
        expected = law.pmf(support) * groups
        keep = expected > 0
        assert observed[~keep].sum() == 0
        assert stats.chisquare(observed[keep],
                               expected[keep] * observed[keep].sum() / expected[keep].sum()).pvalue > 1e-4


def test_counts_in_intervals_joint_law_without_replacement():
    # 2 draws from 10 items cut 3 | 4 | 3: P(one in the first, one in the last) = 3·3 / C(10, 2)
    groups = 40_000
    edges = np.tile([0, 3, 7, 10], groups)
    first = np.arange(groups) * 4
    counts = counts_in_intervals(np.random.default_rng(9), edges, first, first + 3, np.full(groups, 2), False)
    counts = counts.reshape(groups, 4)
    both_ends = ((counts[:, 0] == 1) & (counts[:, 2] == 1)).mean()
    p = 9 / 45
    assert abs(both_ends - p) < 4 * math.sqrt(p * (1 - p) / groups)
