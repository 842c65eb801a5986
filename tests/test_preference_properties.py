"""Properties of particular preferences, on random position vectors (hypothesis): how they relate to
metrics and to dominance. What every preference must satisfy (antisymmetry, 0 on itself, bounds) is
checked on every registered one by tests/test_common.py."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from test_common import collections, metric_values, preference_values

from prefeval.measures import parse_measure
from prefeval.ranking.positions import Selection, binary_positions


def metric(table, name: str):
    return metric_values(parse_measure(name), table)


def preference(table, name: str):
    """Values of preference ``name`` of run 0 over run 1, per query."""
    return preference_values(parse_measure(name), table, [0], [1])[0]


@settings(max_examples=200, deadline=None)
@given(collections(num_runs=2))
def test_lexiprecision_agrees_with_reciprocal_rank(table):
    rr = metric(table, "rr")
    delta = rr[0] - rr[1]
    sign = preference(table, "lexiprecision")
    valued = preference(table, "rrlexiprecision")
    differs = np.abs(delta) > 0
    np.testing.assert_array_equal(sign[differs], np.sign(delta[differs]))
    np.testing.assert_allclose(valued[differs], delta[differs], atol=1e-12)
    # lexiprecision is never 0 when the position vectors differ somewhere
    np.testing.assert_array_equal(np.sign(valued), sign)


@settings(max_examples=200, deadline=None)
@given(collections(num_runs=2))
def test_lexirecall_follows_the_number_of_relevant_retrieved(table):
    retrieved = metric(table, "r@0") * binary_positions(table, Selection.everything(table)).length
    more = np.sign(np.round(retrieved[0] - retrieved[1]))
    lexirecall = preference(table, "lexirecall")
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
        assert np.all(preference(better, name) >= 0), name
