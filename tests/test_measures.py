"""Measures on hand-computed cases and the worked values of MEASURES.md; the registry and names."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import table_from_positions

from prefeval.errors import UsageError
from prefeval.measures import DEFAULT_EVAL_MEASURES, parse_measure, parse_measures, select_measures
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


def test_unknown_measure_lists_the_valid_ones():
    with pytest.raises(UsageError, match=r"unknown measure 'map2'; valid measures: .*") as caught:
        parse_measure("map2")
    for name in ("rpp", "lexirecall", "ap[@k]", "rbp[@gamma,k]", "p[@k]", "rp"):
        assert name in str(caught.value)


def test_measure_sets_follow_pref_eval():
    assert [m.name for m in select_measures()] == list(DEFAULT_EVAL_MEASURES)
    assert [m.name for m in select_measures(["ap"])] == ["ap"]
    assert [m.name for m in select_measures([], "preferences")] == list(DEFAULT_EVAL_MEASURES[:6])
    assert [m.name for m in select_measures(["ap"], "preferences")] == ["ap"] + list(DEFAULT_EVAL_MEASURES[:6])
    everything = ["p@5", "ap"] + [m for m in DEFAULT_EVAL_MEASURES if m != "ap"]
    assert [m.name for m in select_measures(["p@5", "ap"], "all")] == everything
