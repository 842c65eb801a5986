"""Per-query orderings with ties, Borda, MC4 and Kendall's τ on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from prefeval.analyses.orderings import (
    QueryOrderings,
    competition_ranks,
    higher_is_better,
    kendall_tau,
    mc4_stationary,
    ordering_by,
    tie_levels,
    tied_ranks,
)

NAN = np.nan


def orderings(scores) -> QueryOrderings:
    return QueryOrderings.from_scores(["A", "B", "C"], np.array(scores, dtype=float))


def test_tie_levels_keep_ties_within_tolerance_and_mark_absent_runs():
    levels = tie_levels(np.array([[3.0, 1.0, 3.0, 2.0], [1.0, 1.0 + 5e-10, 0.5, NAN]]))
    assert levels.tolist() == [[0, 2, 0, 1], [0, 0, 1, -1]]


def test_per_query_orderings_break_ties_by_name():
    result = orderings([[1.0, 2.0, 2.0], [0.0, NAN, 1.0]])
    assert [[result.runs[r] for r in row] for row in result.orderings()] == [["B", "C", "A"], ["C", "A"]]


def test_borda_shares_points_between_tied_runs_and_skips_absent_ones():
    # q1: A > B > C (3, 2, 1); q2: A = B > C (2.5, 2.5, 1); q3: A > C, B absent (2, -, 1)
    result = orderings([[3.0, 2.0, 1.0], [5.0, 5.0, 0.0], [1.0, NAN, 0.0]])
    assert result.borda().tolist() == [7.5, 4.5, 3.0]


def test_wins_count_strict_orderings_only():
    result = orderings([[3.0, 2.0, 1.0], [5.0, 5.0, 0.0], [1.0, NAN, 0.0]])
    assert result.wins().tolist() == [[0, 1, 3], [0, 0, 2], [0, 0, 0]]


def test_mc4_condorcet_winner_takes_all_mass_without_damping():
    # A beats B and C on most queries, B beats C
    result = orderings([[3.0, 2.0, 1.0], [3.0, 1.0, 2.0], [1.0, 3.0, 2.0]])
    np.testing.assert_allclose(result.mc4(damping=0.0), [1.0, 0.0, 0.0], atol=1e-12)


def test_mc4_with_damping_matches_closed_form():
    # A beats B and C, B beats C: pi_C = a / (2 + a), pi_B = 3a / ((2 + a)(1 + 2a))
    wins = np.array([[0, 2, 2], [0, 0, 2], [0, 0, 0]])
    for a in (0.05, 0.15, 0.5):
        pi = mc4_stationary(wins, a)
        assert pi[2] == pytest.approx(a / (2 + a), abs=1e-12)
        assert pi[1] == pytest.approx(3 * a / ((2 + a) * (1 + 2 * a)), abs=1e-12)
        assert pi.sum() == pytest.approx(1.0)


def test_mc4_matches_power_iteration():
    rng = np.random.default_rng(3)
    wins = rng.integers(0, 10, size=(6, 6))
    np.fill_diagonal(wins, 0)
    n, a = 6, 0.15
    step = np.where(wins.T > wins, 1.0 / n, 0.0)
    np.fill_diagonal(step, 0.0)
    step[np.diag_indices(n)] = 1.0 - step.sum(axis=1)
    chain = (1 - a) * step + a / n
    expected = np.full(n, 1.0 / n) @ np.linalg.matrix_power(chain, 2000)
    np.testing.assert_allclose(mc4_stationary(wins, a), expected, atol=1e-12)


def test_mc4_cycle_is_uniform_and_ordered_by_name():
    # rock-paper-scissors: A > B > C, B > C > A, C > A > B
    result = orderings([[3.0, 2.0, 1.0], [1.0, 3.0, 2.0], [2.0, 1.0, 3.0]])
    for damping in (0.0, 0.15):
        pi = result.mc4(damping)
        np.testing.assert_allclose(pi, [1 / 3] * 3, atol=1e-12)
        order, scores = ordering_by(pi, result.runs)
        assert order == ["A", "B", "C"]
        assert len(set(scores.values())) == 1  # reported as tied


def test_ordering_by_ties_within_tolerance_and_leaves_out_nan():
    order, scores = ordering_by(np.array([0.5, 0.7, 0.5 + 1e-12, NAN]), ["d", "c", "b", "a"])
    assert order == ["c", "b", "d"]
    assert scores == {"c": 0.7, "b": 0.5 + 1e-12, "d": 0.5 + 1e-12}


def test_kendall_tau_and_tau_b():
    assert kendall_tau(["A", "B", "C", "D"], ["A", "B", "C", "D"]) == 1.0
    assert kendall_tau(["A", "B", "C", "D"], ["D", "C", "B", "A"]) == -1.0
    assert kendall_tau(["A", "B", "C", "D"], ["A", "C", "B", "D"]) == pytest.approx(4 / 6)
    tied = {"A": 3.0, "B": 2.0, "C": 2.0, "D": 1.0}
    untied = {"A": 3.0, "B": 2.0, "C": 1.0, "D": 0.0}
    assert kendall_tau(list(tied), list(untied), tied, untied) == pytest.approx(5 / np.sqrt(30))


def test_tied_ranks_are_competition_ranks_with_the_tolerance_and_nan_last():
    scores = np.array([[3.0, 1.0, 3.0, 2.0], [1.0, 1.0 + 5e-10, 0.5, NAN], [NAN, NAN, 0.0, 1.0]])
    assert tied_ranks(scores).tolist() == [[1, 4, 1, 3], [1, 1, 3, 4], [3, 3, 2, 1]]
    assert tied_ranks(scores, higher_is_better=False).tolist() == [[3, 1, 3, 2], [2, 2, 1, 4], [3, 3, 1, 2]]
    # a chain of close scores is one group, as in tie_levels
    chain = np.array([1.0, 1.0 + 8e-10, 1.0 + 1.6e-9, 0.0])
    assert tied_ranks(chain).tolist() == [1, 1, 1, 4] and tie_levels(chain[None])[0].tolist() == [0, 0, 0, 1]
    assert tied_ranks(np.zeros((2, 3, 2))).shape == (2, 3, 2)


def test_competition_ranks_follow_the_direction_of_the_method():
    assert competition_ranks({"a": 0.2, "b": 0.5, "c": 0.2}) == {"a": 2, "b": 1, "c": 2}
    assert competition_ranks({"a": 0.2, "b": 0.5, "c": 0.2}, higher_is_better=False) == {"a": 1, "b": 3, "c": 1}
    assert higher_is_better("mc4") and higher_is_better("median") and not higher_is_better("gini")
    assert ordering_by(np.array([0.3, 0.1, 0.2]), ["a", "b", "c"], higher_is_better=False) == (
        ["b", "c", "a"], {"b": 0.1, "c": 0.2, "a": 0.3})


def test_weighted_borda_and_wins_by_hand():
    # q1: A > B > C (3, 2, 1); q2: A = B > C (2.5, 2.5, 1); q3: A > C, B absent (2, -, 1)
    result = orderings([[3.0, 2.0, 1.0], [5.0, 5.0, 0.0], [1.0, NAN, 0.0]])
    assert result.borda_points().tolist() == [[3.0, 2.0, 1.0], [2.5, 2.5, 1.0], [2.0, 0.0, 1.0]]
    weights = np.array([[1, 1, 1], [0, 3, 0], [2, 0, 1]])
    assert result.borda(weights).tolist() == [[7.5, 4.5, 3.0], [7.5, 7.5, 3.0], [8.0, 4.0, 3.0]]
    wins = result.wins(weights)
    assert wins[0].tolist() == result.wins().tolist()
    assert wins[1].tolist() == [[0, 0, 3], [0, 0, 3], [0, 0, 0]]
    assert wins[2].tolist() == [[0, 2, 3], [0, 0, 2], [0, 0, 0]]


def test_mc4_of_a_stack_is_mc4_of_each():
    rng = np.random.default_rng(5)
    wins = rng.integers(0, 6, size=(7, 5, 5))
    for damping in (0.15, 0.0):
        stacked = mc4_stationary(wins, damping)
        for b in range(len(wins)):
            np.testing.assert_allclose(stacked[b], mc4_stationary(wins[b], damping), atol=1e-12)
    assert mc4_stationary(np.zeros((3, 1, 1)), 0.15).tolist() == [[1.0], [1.0], [1.0]]
