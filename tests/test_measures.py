"""Measures on hand-computed cases and the worked values of MEASURES.md; the registry and names."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from conftest import table_from_positions
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval.errors import UsageError
from prefeval.measures import DEFAULT_EVAL_MEASURES, families, parse_measure, parse_measures, select_measures
from prefeval.measures.preferences import Comparison
from prefeval.ranking.positions import Selection, binary_positions, graded_positions

INF = math.inf


def metric(name: str, runs, grades=None) -> np.ndarray:
    table = table_from_positions(runs, grades)
    return parse_measure(name).compute(binary_positions(table, Selection.everything(table)))


def preference(name: str, x_queries, y_queries, grades=None) -> np.ndarray:
    """Value of preference ``name`` of run x over run y, per query."""
    table = table_from_positions([x_queries, y_queries], grades)
    measure = parse_measure(name)
    build = graded_positions if measure.per_grade_level else binary_positions
    positions = build(table, Selection.everything(table))
    return measure.compare(Comparison(positions, positions.ranks[[0]], positions.ranks[[1]]))[0]


# --- worked values of MEASURES.md -------------------------------------------------------------

def test_ndcg_worked_example_linear_gain():
    value = metric("ndcg", [[[1, 2, 3, 4, 5]]], [[2, 3, 3, 1, 2]])[0, 0]
    assert value == pytest.approx(0.9238, abs=5e-5)
    assert value * 7.1410 == pytest.approx(6.5972, abs=5e-4)  # DCG = nDCG × ideal DCG


def test_dcg_at_7_worked_example():
    value = metric("ndcg@7", [[[1, 2, 3, 4, 5, 6, 7]]], [[3, 2, 1, 1, 3, 1, 2]])[0, 0]
    assert value == pytest.approx(7.3760 / 7.8305, abs=5e-5)


def test_average_precision_worked_example():
    # relevance [1, 0, 1, 1, 0, 1, 0, 0] with 4 relevant documents
    assert metric("ap", [[[1, 3, 4, 6]]])[0, 0] == pytest.approx(0.7708, abs=5e-5)


def test_mean_reciprocal_rank_worked_example():
    values = metric("rr", [[[3], [2], [1]]])
    assert values.mean() == pytest.approx(11 / 18)


# --- metrics, hand-computed ------------------------------------------------------------------

RUN = [[[2, 5, INF, INF]]]  # m = 4 relevant; retrieved at ranks 2 and 5


@pytest.mark.parametrize("name, expected", [
    ("ap", (1 / 2 + 2 / 5) / 4),
    ("ap@3", (1 / 2) / 4),
    ("ap@0", (1 / 2 + 2 / 5) / 4),
    ("rr", 1 / 2),
    ("rr@1", 0.0),
    ("rr@2", 1 / 2),
    ("p@1", 0.0),
    ("p@5", 2 / 5),
    ("p@10", 2 / 10),
    ("r@2", 1 / 4),
    ("r@10", 2 / 4),
    ("r@0", 2 / 4),
    ("rp", 1 / 4),
    ("rbp", 0.5 * (0.5**1 + 0.5**4)),
    ("rbp@0.8", 0.2 * (0.8**1 + 0.8**4)),
    ("rbp@0.8,3", 0.2 * 0.8),
    ("ndcg", (1 / math.log2(3) + 1 / math.log2(6)) / sum(1 / math.log2(i + 1) for i in range(1, 5))),
    ("ndcg@2", (1 / math.log2(3)) / (1 + 1 / math.log2(3))),
])
def test_metrics_by_hand(name, expected):
    assert metric(name, RUN)[0, 0] == pytest.approx(expected, abs=1e-12)


def test_precision_of_the_whole_list():
    # p@0: relevant retrieved / retrieved; table_from_positions counts up to the deepest relevant
    assert metric("p@0", RUN)[0, 0] == pytest.approx(2 / 5)


def test_ndcg_uses_grades_as_gains_and_the_ideal_of_all_relevant():
    # grades 3 (retrieved at 2) and 1 (not retrieved)
    value = metric("ndcg", [[[2, INF]]], [[3, 1]])[0, 0]
    assert value == pytest.approx((3 / math.log2(3)) / (3 + 1 / math.log2(3)))


# --- preferences, hand-computed ----------------------------------------------------------------

X, Y = [[1, 3, INF]], [[2, INF, INF]]


@pytest.mark.parametrize("name, expected", [
    ("rpp", 2 / 3),
    ("invrpp", (1 + 1 / 2) / (1 + 1 / 2 + 1 / 3)),
    ("dcgrpp", (1 + 1 / math.log2(3)) / (1 + 1 / math.log2(3) + 1 / 2)),
    ("lexiprecision", 1),
    ("rrlexiprecision", 1 - 1 / 2),
    ("lexirecall", 1),
])
def test_preferences_by_hand(name, expected):
    assert preference(name, X, Y)[0] == pytest.approx(expected)
    assert preference(name, Y, X)[0] == pytest.approx(-expected)


@pytest.mark.parametrize("name, expected", [
    ("rpp", 0.0),
    ("invrpp", (1 - 1 / 2) / (1 + 1 / 2)),
    ("lexiprecision", 1),
    ("rrlexiprecision", 1 / 2 - 1 / 3),
    ("lexirecall", -1),  # same number retrieved; the last differing position favours y (4 < 5)
])
def test_preferences_when_recall_ties(name, expected):
    assert preference(name, [[2, 5]], [[3, 4]])[0] == pytest.approx(expected)


def test_graded_rpp_weights_each_grade_level_by_its_size():
    # relevant documents with grades (2, 1); x ranks them (1, 5), y ranks them (3, 2)
    grades = [[2, 1]]
    # level 1: x = (1, 5), y = (2, 3) -> rpp 0, m_1 = 2;  level 2: x = (1), y = (3) -> rpp 1, m_2 = 1
    assert preference("rpp", [[1, 5]], [[3, 2]], grades)[0] == pytest.approx(1 / 3)
    # lexicographic measures stay binary: first difference at i = 1, x_1 = 1 < y_1 = 2
    assert preference("lexiprecision", [[1, 5]], [[3, 2]], grades)[0] == 1


def test_lexicographic_values_are_integers():
    assert preference("lexiprecision", X, Y).dtype.kind == "i"
    assert preference("lexirecall", X, Y).dtype.kind == "i"


# --- names and the registry -------------------------------------------------------------------

@pytest.mark.parametrize("text, names", [
    ("ap,ndcg@10", ["ap", "ndcg@10"]),
    ("p@5,10", ["p@5", "p@10"]),
    ("rbp@0.8,100", ["rbp@0.8,100"]),
    ("rbp@0.8,100,ap", ["rbp@0.8,100", "ap"]),
    ("AP,nDCG@10,P@10", ["ap", "ndcg@10", "p@10"]),
    ("sgnLP,rrLP,LR,sgnLR", ["lexiprecision", "rrlexiprecision", "lexirecall"]),
    ("ap, ap", ["ap"]),
])
def test_measure_lists(text, names):
    assert [m.name for m in parse_measures([text])] == names


def test_parameters_are_typed_and_checked():
    assert parse_measure("rbp@0.8").param("gamma") == 0.8
    assert parse_measure("rbp").param("gamma") == 0.5
    assert parse_measure("p@5").param("k") == 5
    for bad in ("p@1.5", "rbp@1.5", "rbp@0", "p@-1", "ap@x", "p@", "rpp@3", "p@1,2"):
        with pytest.raises(UsageError):
            parse_measure(bad)


def test_unknown_measure_lists_the_default_families_and_points_to_the_rest():
    expected = r"unknown measure 'map2'; (did you mean .*\? )?valid measures include .*"
    with pytest.raises(UsageError, match=expected) as caught:
        parse_measure("map2")
    for name in ("rpp", "lexirecall", "ap[@k]", "rbp[@gamma,k]", "p[@k]", "rp"):
        assert name in str(caught.value)
    assert f"`prefeval measures` lists all {len(families())}" in str(caught.value)
    assert "bpref" not in str(caught.value)  # one line: the other families are in `prefeval measures`


def test_measure_sets_follow_pref_eval():
    assert [m.name for m in select_measures()] == list(DEFAULT_EVAL_MEASURES)
    assert [m.name for m in select_measures(["ap"])] == ["ap"]
    assert [m.name for m in select_measures([], "preferences")] == list(DEFAULT_EVAL_MEASURES[:6])
    assert [m.name for m in select_measures(["ap"], "preferences")] == ["ap"] + list(DEFAULT_EVAL_MEASURES[:6])
    everything = ["p@5", "ap"] + [m for m in DEFAULT_EVAL_MEASURES if m != "ap"]
    assert [m.name for m in select_measures(["p@5", "ap"], "all")] == everything


# --- exact counts (issue 11) --------------------------------------------------------------------------

def hits_run(hits: int, depth: int = 10, relevant: int = 12) -> list[list[list[float]]]:
    """One run, one query of ``relevant`` relevant documents, ``hits`` of them at the top of ``depth``."""
    return [[[float(rank) for rank in range(1, hits + 1)] + [INF] * (relevant - hits)]]


@pytest.mark.parametrize("hits", range(11))
def test_counting_metrics_count_then_divide(hits):
    """P@10 of 3 hits is 0.3, not 1/10 + 1/10 + 1/10 = 0.30000000000000004: every count is the nearest
    float to its exact ratio."""
    run = hits_run(hits)
    assert metric("p@10", run)[0, 0] == float(Fraction(hits, 10))
    assert metric("r@10", run)[0, 0] == float(Fraction(hits, 12))
    assert metric("rp", run)[0, 0] == float(Fraction(hits, 12))
    assert metric("f@10", run)[0, 0] == float(Fraction(2 * hits, 12 + 10))
    assert metric("f@10,2", run)[0, 0] == float(Fraction(5 * hits, 4 * 12 + 10))
    assert metric("p@0", run)[0, 0] == (1.0 if hits else 0.0)  # the list holds only its hits
    assert metric("success@10", run)[0, 0] == (1.0 if hits else 0.0)


@pytest.mark.parametrize("relevant", [1, 3, 7, 10, 49, 100])
def test_a_perfect_ranking_scores_exactly_one(relevant):
    run = [[[float(rank) for rank in range(1, relevant + 1)]]]
    grades = [[float(1 + rank % 3) for rank in range(relevant)]]
    grades[0].sort(reverse=True)
    for name in ("ap", "ndcg", "ndcg_exp", "rp", "r@0", "p@0", "auc", "rr", "success@10"):
        assert metric(name, run, grades)[0, 0] == 1.0, name
    assert metric(f"p@{relevant}", run)[0, 0] == 1.0


def test_auc_counts_the_pairs_then_divides():
    # 3 relevant among 10 items at ranks 1, 4, 6: (7 + 5 + 4) correctly ordered pairs of 3 × 7
    table = table_from_positions([[[1.0, 4.0, 6.0]]])
    positions = binary_positions(table, Selection.everything(table))
    positions = positions._replace(num_items=np.array([[10]]))
    assert parse_measure("auc").compute(positions)[0, 0] == float(Fraction(7 + 5 + 4, 21))


def test_graded_rpp_that_cancels_is_exactly_zero():
    """A graded RPP whose signs cancel over its grade levels was written -3.172065784643304e-17."""
    grades = [[2, 1, 2, 3, 3, 1, 2]]
    x, y = [[15, 22, 25, 7, 26, 3, 10]], [[4, 29, 22, 20, 9, 11, 18]]
    assert preference("rpp", x, y, grades)[0] == 0.0
    assert preference("rpp", y, x, grades)[0] == 0.0


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 4), min_size=n, max_size=n),
    st.permutations(list(range(1, 16)) + [INF] * 5).map(lambda ranks: ranks[:n]),
    st.permutations(list(range(1, 16)) + [INF] * 5).map(lambda ranks: ranks[:n]),
)))
def test_uniform_rpp_is_the_exact_ratio_of_its_signs(case):
    """RPP with uniform weights is Σ_g Σ_i sgn / Σ_g m_g over the grade levels g: the float nearest
    to that fraction, whatever the grades."""
    grades, x, y = case
    signs, total = 0, 0
    for level in sorted(set(grades)):
        xs = sorted(rank for rank, grade in zip(x, grades) if grade >= level)
        ys = sorted(rank for rank, grade in zip(y, grades) if grade >= level)
        signs += sum((a < b) - (a > b) for a, b in zip(xs, ys))
        total += len(xs)
    assert preference("rpp", [x], [y], [grades])[0] == float(Fraction(signs, total))


@pytest.mark.parametrize("name", ["p@10", "r@10", "rp", "ap", "ndcg", "f@10", "p@0", "auc", "rr", "rbp"])
def test_differences_of_counts_are_exact(name):
    """On pair lines, P@10 of 7 hits against 1 is 0.6 (6/10), not 0.7 − 0.1 = 0.6000000000000001;
    metrics whose denominator differs by run (p@0, AUC) and the others subtract their values."""
    runs = [hits_run(hits)[0] for hits in (7, 1, 3, 0)]
    table = table_from_positions(runs)
    positions = binary_positions(table, Selection.everything(table))
    measure = parse_measure(name)
    first, second = np.array([0, 2, 1, 3]), np.array([1, 0, 2, 0])
    differences = measure.differences(positions, first, second)
    values = measure.compute(positions)
    np.testing.assert_allclose(differences, values[first] - values[second], atol=1e-15)
    if name in ("p@10", "r@10", "rp"):
        denominator = 10 if name == "p@10" else 12
        hits = np.array([7, 1, 3, 0])
        expected = [float(Fraction(int(a - b), denominator)) for a, b in zip(hits[first], hits[second])]
        assert differences[:, 0].tolist() == expected


# --- parameters and grades out of range (issue 11) ---------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("p@" + "1" * 400, r"k must be in \[0, 1000000000\], not 1111111111"),
    ("p@1_0", "k must be an integer, not '1_0'"),
    ("p@\u0661\u0660", "k must be an integer"),
    ("rbp@0_5", "gamma must be a number"),
    ("rbp@inf", r"gamma must be in \(0.0, 1.0\), not inf"),
    ("f@10,nan", "beta must be in"),
    ("pfound@0,inf", "pbreak must be in"),
])
def test_parameters_out_of_syntax_or_range_are_usage_errors(text, message):
    with pytest.raises(UsageError, match=message):
        parse_measure(text)


@pytest.mark.parametrize("beta, expected", [
    ("0", Fraction(3, 10)), ("inf", Fraction(3, 12)), ("1e200", Fraction(3, 12)),
    ("0.5", Fraction(5 * 3, 4 * 10 + 12)), ("1e-200", Fraction(3, 10)),
])
def test_f_measure_with_extreme_betas_is_finite(beta, expected):
    """β = 0 is precision, β = inf (or so large that β² overflows) recall; never NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = metric(f"f@10,{beta}", hits_run(3))[0, 0]
    assert value == pytest.approx(float(expected), rel=1e-15)


@pytest.mark.parametrize("top", [1023.0, 1100.0, 5e15])
def test_exponential_gains_of_large_grades_do_not_overflow(top):
    """2^g − 1 overflows from g = 1024; the gains of a query are scaled alike, which nDCG does not see."""
    grades = [[top, 1.0, top - 1]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = metric("ndcg_exp", [[[1.0, 2.0, 3.0]]], grades)[0, 0]
    # the document of grade 1 counts for nothing beside the two others: (1 + 1/2 / 2) / (1 + 1/2 / log2(3))
    assert value == pytest.approx((1 + 0.5 / 2) / (1 + 0.5 / math.log2(3)), rel=1e-15)
    assert metric("ndcg_exp", [[[1.0, 3.0, 2.0]]], grades)[0, 0] == 1.0
