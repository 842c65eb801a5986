"""The worst-off-provider-first preference (prefeval.measures.provider): worked values by hand
(docs/recommender.md "Providers, worst-off first"), brute force over every short list of a small
catalogue against an obvious implementation, ties, tolerance and empty lists."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from prefeval.measures.provider import (
    compare_pairs,
    compare_sorted,
    group_exposure,
    run_exposure,
    worst_off_first,
)

GROUP = {"a1": 0, "a2": 0, "b1": 1, "b2": 1, "c1": 2, "c2": 2}  # providers A, B, C
# The worked example of docs/recommender.md: 4 users, runs X and Y, top-3 lists (user 4 empty in X).
X = [["a1", "b1", "c1"], ["a1", "a2", "b1"], ["a1", "b1", "c1"], []]
Y = [["a1", "a2", "b1"], ["b1", "a1", "a2"], ["c1", "a1", "b1"], ["b1"]]
D2, D3 = 1 / math.log2(3), 0.5  # the exposure at ranks 2 and 3 (rank 1: 1)


def flat(lists, group=GROUP):
    """The (query, group, rank) arrays of a run given as one list of items per user."""
    rows = [(q, group[item], rank) for q, items in enumerate(lists) for rank, item in enumerate(items, 1)]
    return tuple(np.array([row[c] for row in rows], dtype=np.int64) for c in range(3))


def matrix(lists, num_groups=3, group=GROUP, k=None):
    return group_exposure(*flat(lists, group), num_queries=len(lists), num_groups=num_groups, k=k)


def obvious_exposure(items, group, num_groups, k=None):
    exposure = [0.0] * num_groups
    for rank, item in enumerate(items, 1):
        if group[item] >= 0 and (k is None or rank <= k):
            exposure[group[item]] += 1 / math.log2(1 + rank)
    return exposure


def obvious_preference(x_items, y_items, group, num_groups, tolerance=1e-9):
    x = sorted(obvious_exposure(x_items, group, num_groups))
    y = sorted(obvious_exposure(y_items, group, num_groups))
    for a, b in zip(x, y):
        if abs(a - b) > tolerance:
            return 1 if a > b else -1
    return 0


def test_worked_exposures_by_hand():
    assert np.allclose(matrix(X), [[1, D2, D3], [1 + D2, D3, 0], [1, D2, D3], [0, 0, 0]])
    assert np.allclose(matrix(Y), [[1 + D2, D3, 0], [D2 + D3, 1, 0], [D2, D3, 1], [0, 1, 0]])
    assert np.allclose(worst_off_first(matrix(X))[1], [0, 0.5, 1.6309297535714575])
    assert np.allclose(worst_off_first(matrix(Y))[1], [0, 1, 1.1309297535714575])


def test_worked_preferences_by_hand():
    exposures = np.stack([matrix(X), matrix(Y)])
    # user 1: Y leaves C out (0 < 0.5): X; user 2: both leave C out, then B: 0.5 < 1: Y;
    # user 3: the same sorted exposures, providers swapped: tie; user 4: X's empty list: Y.
    assert compare_pairs(exposures, [[0, 1]]).tolist() == [[1, -1, 0, -1]]
    assert compare_pairs(exposures, [[1, 0], [0, 0]]).tolist() == [[-1, 1, 0, 1], [0, 0, 0, 0]]
    assert compare_pairs(exposures, [[0, 1]]).dtype == np.int8


def test_worked_run_level_by_hand():
    totals = run_exposure(np.stack([matrix(X), matrix(Y)]))
    assert np.allclose(totals, [[3 + D2, 2 * D2 + D3, 1.0], [1 + 3 * D2 + D3, 3.0, 1.0]])
    assert np.allclose(worst_off_first(totals), [[1.0, 1.7618595071429148, 3.6309297535714578],
                                                 [1.0, 3.0, 3.3927892607143724]])
    # both give C 1.0 in total; next, X's B has 1.76 and Y's B 3.0: Y, though X wins more users.
    assert compare_pairs(totals[:, None, :], [[0, 1]]).tolist() == [[-1]]


def test_cut_off_and_ungrouped_items():
    group = dict(GROUP, z=-1)
    lists = [["z", "a1", "b1", "c1"], ["c1", "z"]]
    assert np.allclose(matrix(lists, group=group), [[D2, D3, 1 / math.log2(5)], [0, 0, 1]])
    assert np.allclose(matrix(lists, group=group, k=3), [[D2, D3, 0], [0, 0, 1]])


def test_group_exposure_agrees_with_the_obvious_sum():
    rng = np.random.default_rng(28)
    items = [f"i{n}" for n in range(30)]
    group = {item: int(rng.integers(-1, 5)) for item in items}
    lists = [list(rng.choice(items, size=int(rng.integers(0, 12)), replace=False)) for _ in range(50)]
    for k in (None, 5):
        expected = [obvious_exposure(items_, group, 5, k) for items_ in lists]
        assert np.allclose(matrix(lists, num_groups=5, group=group, k=k), expected, rtol=0, atol=1e-12)


def test_empty_lists_tie_and_lose_to_any_exposure():
    exposures = np.stack([matrix([[], [], ["b2"]]), matrix([[], ["c2"], []])])
    assert compare_pairs(exposures, [[0, 1]]).tolist() == [[0, -1, 1]]
    assert compare_pairs(np.zeros((2, 3, 0)), [[0, 1]]).tolist() == [[0, 0, 0]]
    assert group_exposure([], [], [], num_queries=2, num_groups=3).tolist() == [[0.0] * 3] * 2


def test_tolerance():
    x, y = np.array([0.5, 1.0]), np.array([0.5 + 1e-12, 1.0])
    assert compare_sorted(x, y) == 0
    assert compare_sorted(x, y, tolerance=0.0) == -1
    assert compare_sorted(y, x, tolerance=0.0) == 1
    # a tie on the worst-off group within the tolerance passes to the next group
    assert compare_sorted(np.array([0.5, 2.0]), np.array([0.5 + 1e-12, 1.0])) == 1


def test_ties_between_groups_and_reordered_sums():
    # three groups each exposed once at ranks 1..3 in any order: one sorted vector, all tie
    lists = [list(p) for p in itertools.permutations(["a1", "b1", "c1"])]
    exposures = matrix(lists)[:, None, :]
    pairs = list(itertools.product(range(len(lists)), repeat=2))
    assert not compare_pairs(exposures, pairs).any()
    # the same group sums added in another order tie under the default tolerance
    sums = np.array([[0.1 + 0.2 + 0.3, 1.0]]), np.array([[0.3 + 0.2 + 0.1, 1.0]])
    assert sums[0][0, 0] != sums[1][0, 0]
    assert compare_sorted(*sums).tolist() == [0]


def all_short_lists(items, longest):
    return [list(p) for n in range(longest + 1) for p in itertools.permutations(items, n)]


@pytest.mark.parametrize("group, num_groups", [
    ({"a1": 0, "a2": 0, "b1": 1, "c1": 2}, 3),
    ({"a1": 0, "a2": 1, "b1": 1, "c1": -1}, 4),  # a group with no item, and an ungrouped item
])
def test_brute_force_over_short_lists(group, num_groups):
    lists = all_short_lists(sorted(group), 3)
    n = len(lists)
    exposures = matrix(lists, num_groups=num_groups, group=group)[:, None, :]
    pairs = np.array(list(itertools.product(range(n), repeat=2)))
    pref = compare_pairs(exposures, pairs)[:, 0].reshape(n, n).astype(np.int64)
    expected = [[obvious_preference(a, b, group, num_groups) for b in lists] for a in lists]
    assert pref.tolist() == expected
    assert (pref == -pref.T).all()  # antisymmetric
    assert (np.diag(pref) == 0).all()
    # transitive: a >= b and b >= c give a >= c, strictly if either is strict; ties are an equivalence
    ab, bc, ac = (np.broadcast_to(p, (n, n, n)) for p in (pref[:, :, None], pref[None, :, :], pref[:, None, :]))
    assert (ac[(ab >= 0) & (bc >= 0)] >= 0).all()
    assert (ac[((ab > 0) & (bc >= 0)) | ((ab >= 0) & (bc > 0))] > 0).all()
    assert (ac[(ab == 0) & (bc == 0)] == 0).all()
    # a total preorder that separates: some lists tie, most do not
    assert 0 < (pref == 0).sum() - n < n * n - n


def test_exposure_weights_of_integer_ranks_are_the_formula_s_bits():
    """Integer ranks are looked up in a table of 1/log2(1 + rank): the same bits as the formula on
    each rank (float ranks, or fewer rows than the largest rank, take the formula directly)."""
    from prefeval.measures.provider import exposure_weight

    ranks = np.random.default_rng(3).integers(1, 40, 500)
    formula = 1.0 / np.log2(1.0 + ranks.astype(np.float64))
    assert exposure_weight(ranks).tobytes() == formula.tobytes()
    assert exposure_weight(ranks.astype(np.float64)).tobytes() == formula.tobytes()
    assert exposure_weight(np.array([1000, 1])).tolist() == [1 / math.log2(1001), 1.0]
