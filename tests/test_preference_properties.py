"""Properties every preference must have, on random position vectors (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
from conftest import table_from_positions
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval.measures import PREFERENCE_MEASURES, parse_measure
from prefeval.measures.preferences import Comparison
from prefeval.ranking.positions import Selection, binary_positions, graded_positions

PREFERENCES = [parse_measure(name) for name in PREFERENCE_MEASURES]


@st.composite
def collections(draw, num_runs=3):
    """Random ranks of m relevant documents per query for a few runs (inf = not retrieved)."""
    num_queries = draw(st.integers(1, 4))
    lengths = [draw(st.integers(1, 6)) for _ in range(num_queries)]
    grades = [[draw(st.sampled_from([1.0, 2.0, 3.0])) for _ in range(m)] for m in lengths]
    runs = []
    for _ in range(num_runs):
        run = []
        for m in lengths:
            ranks = draw(st.lists(st.integers(1, 12), min_size=m, max_size=m, unique=True))
            retrieved = draw(st.lists(st.booleans(), min_size=m, max_size=m))
            run.append([float(r) if keep else math.inf for r, keep in zip(ranks, retrieved)])
        runs.append(run)
    return table_from_positions(runs, grades)


def all_pairs(table, measure, first, second):
    build = graded_positions if measure.per_grade_level else binary_positions
    positions = build(table, Selection.everything(table))
    return measure.compare(Comparison(positions, positions.ranks[first], positions.ranks[second]))


def metric_values(table, name):
    return parse_measure(name).compute(binary_positions(table, Selection.everything(table)))


@settings(max_examples=200, deadline=None)
@given(collections())
def test_antisymmetric_zero_on_self_and_bounded(table):
    first, second = np.array([0, 0, 1]), np.array([1, 2, 2])
    for measure in PREFERENCES:
        forward = all_pairs(table, measure, first, second)
        backward = all_pairs(table, measure, second, first)
        np.testing.assert_allclose(forward, -backward, atol=1e-12, err_msg=measure.name)
        np.testing.assert_array_equal(all_pairs(table, measure, first, first), 0, err_msg=measure.name)
        assert np.all(np.abs(forward) <= 1 + 1e-12), measure.name


@settings(max_examples=200, deadline=None)
@given(collections(num_runs=2))
def test_lexiprecision_agrees_with_reciprocal_rank(table):
    rr = metric_values(table, "rr")
    delta = rr[0] - rr[1]
    sign = all_pairs(table, parse_measure("lexiprecision"), [0], [1])[0]
    valued = all_pairs(table, parse_measure("rrlexiprecision"), [0], [1])[0]
    differs = np.abs(delta) > 0
    np.testing.assert_array_equal(sign[differs], np.sign(delta[differs]))
    np.testing.assert_allclose(valued[differs], delta[differs], atol=1e-12)
    # lexiprecision is never 0 when the position vectors differ somewhere
    np.testing.assert_array_equal(np.sign(valued), sign)


@settings(max_examples=200, deadline=None)
@given(collections(num_runs=2))
def test_lexirecall_follows_the_number_of_relevant_retrieved(table):
    retrieved = metric_values(table, "r@0") * binary_positions(table, Selection.everything(table)).length
    more = np.sign(np.round(retrieved[0] - retrieved[1]))
    lexirecall = all_pairs(table, parse_measure("lexirecall"), [0], [1])[0]
    differs = more != 0
    np.testing.assert_array_equal(lexirecall[differs], more[differs])


@settings(max_examples=100, deadline=None)
@given(collections(num_runs=2))
def test_rpp_of_a_run_that_dominates_is_positive(table):
    # ranking every relevant document of run 0 first, best grades first (the ideal ranking), makes
    # run 0 preferred or tied at every grade level
    ranks = table.ranks.copy()
    for q in range(table.num_queries):
        lo, hi = table.qrels.offsets[q], table.qrels.offsets[q + 1]
        ranks[0, lo + np.argsort(-table.qrels.grades[lo:hi], kind="stable")] = np.arange(1, hi - lo + 1)
    better = type(table)(table.qrels, table.run_ids, ranks, table.num_retrieved, table.in_run)
    for name in ("rpp", "invrpp", "dcgrpp"):
        assert np.all(all_pairs(better, parse_measure(name), [0], [1]) >= 0), name
