"""``prefeval null``: closed forms against scipy, Bestgen's double sum, enumeration of every random
ranking, and Monte Carlo; runs against the null; records and the command line."""

from __future__ import annotations

import dataclasses
import itertools
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import orjson
import pytest
from conftest import QRELS, RUNS, run_cli, table_from_positions, write_qrels
from contract import assert_one_line_error
from scipy import stats

import prefeval
from prefeval.analyses.null import (
    EXACT,
    MAX_DRAWN_RANKS,
    MAX_ITEMS,
    MONTE_CARLO,
    NullEvaluation,
    null_records,
    random_rankings,
)
from prefeval.errors import UsageError
from prefeval.measures import parse_measure, select_additive_metrics
from prefeval.ranking.positions import Selection, binary_positions


def null_for(relevant: list[int], items: int, measures, grades=None, **options) -> NullEvaluation:
    """The null of queries with the given numbers of relevant documents, all among ``items`` items."""
    table = table_from_positions([[[math.inf] * m for m in relevant]], grades)
    return NullEvaluation(qrels=table.qrels, measures=select_additive_metrics(measures, (), "null"),
                          num_items=items, **options)


def values_of(evaluation: NullEvaluation) -> dict:
    return {v.measure: v for v in evaluation.null_values()}


# --- hits -------------------------------------------------------------------------------------

@pytest.mark.parametrize("items, relevant, k, q", [(50, 5, 10, 0.95), (1000, 37, 10, 0.95), (20, 19, 5, 0.5),
                                                  (30, 3, 100, 0.99), (8, 8, 3, 0.9)])
def test_precision_is_hypergeometric(items, relevant, k, q):
    values = values_of(null_for([relevant], items, [f"p@{k}", f"r@{k}", "rp"], quantile=q))
    depth = min(k, items)
    assert values[f"p@{k}"].expected[0] == pytest.approx(relevant / items * depth / k)
    if k <= items:
        assert values[f"p@{k}"].expected[0] == pytest.approx(relevant / items)
    assert values[f"p@{k}"].threshold[0] == stats.hypergeom.ppf(q, items, relevant, depth) / k
    assert values[f"r@{k}"].threshold[0] == stats.hypergeom.ppf(q, items, relevant, depth) / relevant
    assert values["rp"].threshold[0] == stats.hypergeom.ppf(q, items, relevant, relevant) / relevant
    assert values[f"p@{k}"].threshold_method == values[f"p@{k}"].expected_method == EXACT


def test_hit_counts_are_divided_once():
    """A P@10 threshold of 3 hits was 0.1 × 3 = 0.30000000000000004 (query q103 of the examples)."""
    values = values_of(null_for([16, 7], 120, ["p@10", "f@10"]))
    assert values["p@10"].threshold.tolist() == [0.3, 0.2]
    assert values["p@10"].expected.tolist() == [float(Fraction(16, 120)), float(Fraction(7, 120))]
    assert values["f@10"].threshold[0] == float(Fraction(2 * 3, 16 + 10))


# --- average precision ---------------------------------------------------------------------------

def bestgen(items: int, relevant: int, cutoff: int = 0) -> float:
    """Bestgen's double sum (2015): (1/m) Σ_{x=1..m} Σ_{k=x..N−m+x} Hyp(x; N, m, k) (x/k)², with
    Hyp(x; N, m, k) the probability of x relevant among the first k (k <= cutoff when there is one)."""
    total = 0.0
    for x in range(1, relevant + 1):
        for k in range(x, items - relevant + x + 1):
            if cutoff and k > cutoff:
                break
            total += stats.hypergeom.pmf(x, items, relevant, k) * (x / k) ** 2
    return total / relevant


@pytest.mark.parametrize("items, relevant", [(1, 1), (2, 1), (10, 3), (40, 1), (40, 17), (25, 25), (300, 12)])
def test_expected_ap_equals_bestgens_double_sum(items, relevant):
    values = values_of(null_for([relevant], items, ["ap", "ap@5"], seed=0, draws=10))
    assert values["ap"].expected[0] == pytest.approx(bestgen(items, relevant), rel=1e-10)
    assert values["ap@5"].expected[0] == pytest.approx(bestgen(items, relevant, 5), rel=1e-10)
    assert values["ap"].expected_method == EXACT and values["ap"].threshold_method == MONTE_CARLO


@pytest.mark.parametrize("items", [1, 2, 7, 100, 5000])
def test_expected_ap_of_one_relevant_item_is_the_harmonic_number_over_n(items):
    harmonic = sum(1 / j for j in range(1, items + 1))
    assert (values_of(null_for([1], items, ["ap"], seed=0, draws=10))["ap"].expected[0]
            == pytest.approx(harmonic / items))


def test_expected_ap_agrees_with_monte_carlo():
    draws = 20_000
    evaluation = null_for([1, 4, 30], 60, ["ap"], seed=5, draws=draws)
    block = _qrels_positions(evaluation)
    values = parse_measure("ap").compute(random_rankings(np.random.default_rng(5), block, evaluation.items, draws))
    error = values.std(axis=0, ddof=1) / math.sqrt(draws)
    expected = values_of(evaluation)["ap"].expected
    assert (np.abs(values.mean(axis=0) - expected) <= 4 * error).all()


def _qrels_positions(evaluation: NullEvaluation):
    table = table_from_positions([[[math.inf] * int(m) for m in evaluation.qrels.num_relevant]])
    return binary_positions(table, Selection.everything(table))


# --- every random ranking, enumerated ------------------------------------------------------------

def enumerated(measure: str, grades: list[float], items: int, max_grade: float) -> np.ndarray:
    """The metric on every random ranking of one query (every set of positions × every order of the
    grades, equally likely), scored with ``prefeval eval``'s code."""
    rankings = [[list(positions)] for positions in itertools.combinations(range(1, items + 1), len(grades))]
    values = []
    for order in itertools.permutations(grades):
        table = table_from_positions(rankings, [list(order)])
        table = dataclasses.replace(table, num_retrieved=np.full((len(rankings), 1), items))
        positions = binary_positions(table, Selection.everything(table))._replace(max_grade=max_grade)
        values.append(parse_measure(measure).compute(positions)[:, 0])
    return np.concatenate(values)


EXACT_MEASURES = ["ap", "ap@3", "ndcg", "ndcg@2", "dcg@3", "ndcg_exp", "cg@2", "rbp@0.7", "rbp@0.5,3", "auc",
                  "p@3", "p@0", "r@2", "rp", "f@3", "f@2,0.5", "success@2", "rr", "rr@3"]


def test_exact_expectations_and_quantiles_agree_with_enumeration():
    grades = [[2, 1, 3], [1, 1]]
    items, q = 7, 0.8
    values = values_of(null_for([3, 2], items, EXACT_MEASURES + ["pfound"], grades, quantile=q, seed=1, draws=20_000))
    for name in EXACT_MEASURES:
        result = values[parse_measure(name).name]
        assert result.expected_method == EXACT
        for query, query_grades in enumerate(grades):
            population = enumerated(name, query_grades, items, 3.0)
            assert result.expected[query] == pytest.approx(population.mean(), abs=1e-12), (name, query)
            exact_quantile = np.quantile(population, q, method="inverted_cdf")
            if result.threshold_method == EXACT:
                assert result.threshold[query] == pytest.approx(exact_quantile, abs=1e-12), (name, query)
            else:  # Monte Carlo: between the exact quantiles a little below and above q
                low, high = np.quantile(population, [q - 0.02, q + 0.02], method="inverted_cdf")
                assert low - 1e-12 <= result.threshold[query] <= high + 1e-12, (name, query)
    pfound = values["pfound"]
    assert pfound.expected_method == pfound.threshold_method == MONTE_CARLO
    for query, query_grades in enumerate(grades):
        population = enumerated("pfound", query_grades, items, 3.0)
        assert abs(pfound.expected[query] - population.mean()) <= 4 * population.std() / math.sqrt(20_000)


def test_methods_follow_the_closed_forms():
    values = values_of(null_for([3], 20, ["p@5", "rr", "ap", "ndcg", "pfound"], seed=0, draws=50))
    assert [(v.expected_method, v.threshold_method) for v in values.values()] == [
        (EXACT, EXACT), (EXACT, EXACT), (EXACT, MONTE_CARLO), (EXACT, MONTE_CARLO), (MONTE_CARLO, MONTE_CARLO)]


# --- runs against the null --------------------------------------------------------------------------

def test_runs_are_tested_against_the_threshold():
    # 100 items, 2 relevant: p@2's 0.95 quantile is 0 (P(no hit) = 0.96); rr's is 1/3, since
    # P(X_1 >= 3) = C(98, 2) / C(100, 2) = 0.960 >= 0.95 > P(X_1 >= 4) = 0.941
    table = table_from_positions([[[1, 2], [9, 10]], [[3, 20], [1, 30]]])
    table = dataclasses.replace(table, num_retrieved=np.full((2, 2), 100))
    qrels = table.qrels._replace(num_judged=np.array([100, 100]))
    evaluation = NullEvaluation(qrels=qrels, measures=select_additive_metrics(["p@2", "rr"], (), "null"), table=table)
    records = list(null_records(evaluation))
    assert len(records) == 2 * (2 + 2 * 2) + 2 * 2
    assert records[0] == {"qid": "q0", "measure": "p@2", "num_rel": 2, "num_items": 100, "expected": 2 / 100,
                          "quantile": 0.95, "threshold": 0.0, "expected_method": EXACT, "threshold_method": EXACT}
    assert records[1]["threshold"] == pytest.approx(1 / 3)
    assert records[2] == {"qid": "q0", "run": "run0", "measure": "p@2", "value": 1.0, "above_null": True}
    lines = {(r["qid"], r["run"], r["measure"]): r for r in records if "run" in r}
    above = {key: line["above_null"] for key, line in lines.items() if key[0] != "all"}
    assert above == {
        ("q0", "run0", "p@2"): True, ("q0", "run0", "rr"): True, ("q0", "run1", "p@2"): False,
        ("q0", "run1", "rr"): False,  # 1/3 equals the threshold: not above it
        ("q1", "run0", "p@2"): False, ("q1", "run0", "rr"): False, ("q1", "run1", "p@2"): True,
        ("q1", "run1", "rr"): True,
    }
    assert lines["all", "run0", "p@2"] == {"qid": "all", "run": "run0", "measure": "p@2", "value": 0.5,
                                           "fraction_above_null": 0.5}
    assert lines["all", "run1", "rr"]["value"] == pytest.approx((1 / 3 + 1) / 2)


def test_impossible_requests_are_usage_errors():
    with pytest.raises(UsageError, match="smaller than the 3 relevant documents of query q0"):
        null_for([3], 2, ["ap"])
    with pytest.raises(UsageError, match="quantile must be in"):
        null_for([3], 10, ["ap"], quantile=1.0)
    with pytest.raises(UsageError, match="rpp is a preference"):
        null_for([3], 10, ["rpp"])
    table = table_from_positions([[[math.inf]]])
    with pytest.raises(UsageError, match="give num_items"):
        NullEvaluation(qrels=table.qrels, measures=select_additive_metrics(["ap"], (), "null"))


# --- the command line --------------------------------------------------------------------------------


def test_cli_on_the_examples():
    result = run_cli("null", "-R", QRELS, "-m", "ap,p@10", "--draws", 2000, "--seed", 4, *RUNS)
    assert result.exit_code == 0, result.output
    records = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 7 * (2 + 4 * 2) + 4 * 2
    judged = {}
    for line in Path(QRELS).read_text().splitlines():
        qid = line.split()[0]
        judged[qid] = judged.get(qid, 0) + 1
    nulls = [r for r in records if "num_items" in r]
    assert all(r["num_items"] == judged[r["qid"]] for r in nulls)
    summaries = {(r["run"], r["measure"]): r["fraction_above_null"] for r in records if r["qid"] == "all"}
    assert summaries["random", "ap"] < summaries["dense", "ap"]
    frame = prefeval.evaluate(QRELS, RUNS, ["ap"])
    observed = {(r["qid"], r["run"]): r["value"] for r in records if r.get("measure") == "ap" and "value" in r}
    for row in frame.itertuples():
        assert observed[row.qid, row.run] == row.ap
    assert run_cli("null", "-R", QRELS, "-m", "ap", "--draws", 300, "--seed", 4).stdout == \
        run_cli("null", "-R", QRELS, "-m", "ap", "--draws", 300, "--seed", 4).stdout


def test_cli_seed_note_only_when_drawing():
    exact = run_cli("null", "-R", QRELS, "-m", "p@5,rr", "--num-items", 120)
    assert exact.exit_code == 0 and "drew seed" not in exact.stderr
    assert {orjson.loads(line)["num_items"] for line in exact.stdout.splitlines()} == {120}
    drawn = run_cli("null", "-R", QRELS, "-m", "ap", "--draws", 100)
    assert "drew seed" in drawn.stderr
    bad = run_cli("null", "-R", QRELS, "--num-items", 3)
    assert bad.exit_code == 2 and bad.stderr.startswith("prefeval: error: --num-items 3 is smaller than the")
    assert "Examples:" in run_cli("null", "--help").stdout


def test_auc_of_runs_counts_the_catalogue_when_one_is_given():
    # relevant at 2 and unretrieved; 5 retrieved: eval's AUC has 6 items, the catalogue 40
    table = table_from_positions([[[2, math.inf]]])
    table = dataclasses.replace(table, num_retrieved=np.array([[5]]))
    qrels = table.qrels._replace(num_judged=np.array([6]))
    measures = select_additive_metrics(["auc"], (), "null")
    judged = NullEvaluation(qrels=qrels, measures=measures, table=table, seed=0, draws=10)
    assert judged.observed()["auc"][0, 0] == pytest.approx((4 - 1) / (2 * 4))
    catalogue = NullEvaluation(qrels=qrels, measures=measures, table=table, num_items=40, seed=0, draws=10)
    assert catalogue.observed()["auc"][0, 0] == pytest.approx((38 - 1) / (2 * 38))
    with pytest.raises(UsageError, match="--num-items 5 is smaller than what run run0 ranks"):
        NullEvaluation(qrels=qrels, measures=measures, table=table, num_items=5, seed=0, draws=10)


@pytest.mark.parametrize("args, message", [
    (["--num-items", "1000000000000"], "--num-items 1000000000000 is too large: null tabulates every rank"),
    (["--num-items", "10000001"], "--num-items 10000001 is too large"),
    (["--draws", "1000000000000", "-m", "ap"], "--draws 1000000000000 is too large: at most 100,000 (a 0.95 "
                                               "quantile from them is within 0.0007 in probability"),
    (["--draws", "100000001", "-m", "p@10"], "--draws 100000001 is too large: at most 100,000"),  # even unused
])
def test_sizes_too_large_to_hold_are_refused_before_any_work(args, message):
    """A catalogue of 10^12 items was a 7 TiB allocation error; 10^8 draws would have run for hours."""
    result = run_cli("null", "-R", QRELS, *args, RUNS[0])
    assert assert_one_line_error(result, 2, message)


def test_draws_too_many_to_hold_for_a_query_are_refused(tmp_path):
    """Within the bound on draws, a query's random rankings are held at once: 10^5 draws of a query of
    2,000 relevant documents would be 2 × 10^8 ranks (1.6 GB)."""
    qrels = write_qrels(tmp_path / "qrels", {"q1": {f"d{d}": 1 for d in range(2000)} | {"x": 0}})
    result = run_cli("null", "-R", qrels, "--draws", "100000", "-m", "ap", "--seed", "1")
    assert_one_line_error(result, 2, "--draws 100000 is too large: the random rankings of query q1 (2000 relevant "
                                     "items) would hold 200,000,000 ranks at once")


def test_the_largest_sizes_still_run():
    assert MAX_ITEMS == 10**7 and 10_000 * 500 < MAX_DRAWN_RANKS  # the default draws with 500 relevant items
    result = run_cli("null", "-R", QRELS, "-m", "p@10,r@10", "--num-items", MAX_ITEMS, RUNS[0])
    assert result.exit_code == 0, result.stderr
