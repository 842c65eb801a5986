"""``prefeval sampled``: closed forms, an enumeration oracle, scipy's distributions, Monte Carlo, policies,
errors, records and the command line."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import orjson
import pytest
from conftest import QRELS, RUNS, run_cli, table_from_positions
from contract import assert_one_line_error
from scipy import stats
from scipy.special import gammaln

from prefeval.analyses.sampled_metrics import (
    MAX_ITEMS,
    Moments,
    SampledEvaluation,
    SampledValues,
    complete_rankings,
    consistency,
    count_window,
    log_count_probability,
    sampled_records,
)
from prefeval.errors import UsageError
from prefeval.measures import parse_measure, select_additive_metrics
from prefeval.ranking.positions import Selection, binary_positions

INF = math.inf


def analysis(runs, num_items, measures, grades=None, retrieved=None, **options) -> SampledEvaluation:
    """A sampled analysis of runs given as ranks (runs[r][q]); each run retrieves ``retrieved``
    documents per query (default: the whole catalogue)."""
    table = table_from_positions(runs, grades)
    shape = table.num_retrieved.shape
    table = dataclasses.replace(table, num_retrieved=np.full(shape, retrieved or num_items, dtype=np.int64))
    return SampledEvaluation(table=table, measures=select_additive_metrics(measures, (), "sampled"),
                             num_items=num_items, **options)


def by_measure(evaluation: SampledEvaluation) -> dict[tuple[str, int], SampledValues]:
    return {(v.measure, v.sample_size): v for v in evaluation.results()}


# --- closed forms for one relevant item at rank r among n items --------------------------------

CASES = [(r, n, m) for n in (2, 10, 57) for r in sorted({1, 2, n // 2, n}) for m in (1, 5, 30, 200)]


@pytest.mark.parametrize("r, n, sample_size", CASES)
def test_sampled_auc_is_unbiased(r, n, sample_size):
    for replacement in (True, False):
        if not replacement and sample_size > n - 1:
            continue
        values = by_measure(analysis([[[r]]], n, ["auc"], sample_sizes=[sample_size], replacement=replacement))
        result = values["auc", sample_size]
        assert result.exact[0, 0] == pytest.approx((n - r) / (n - 1), abs=1e-12)
        assert result.sampled[0, 0] == pytest.approx((n - r) / (n - 1), abs=1e-12)


@pytest.mark.parametrize("r, n, sample_size", [c for c in CASES if c[0] > 1])
def test_sampled_ap_with_replacement_closed_form(r, n, sample_size):
    p = (r - 1) / (n - 1)
    expected = (1 - (1 - p) ** (sample_size + 1)) / (p * (sample_size + 1))
    values = by_measure(analysis([[[r]]], n, ["ap", "rr"], sample_sizes=[sample_size], replacement=True))
    assert values["ap", sample_size].sampled[0, 0] == pytest.approx(expected, rel=1e-10)
    assert values["rr", sample_size].sampled[0, 0] == pytest.approx(expected, rel=1e-10)
    assert values["ap", sample_size].exact[0, 0] == pytest.approx(1 / r)


@pytest.mark.parametrize("r, n, sample_size", [(5, 57, 30), (57, 57, 56), (2, 10, 9), (30, 2000, 1500)])
def test_sampled_ap_without_replacement_is_a_hypergeometric_sum(r, n, sample_size):
    b = np.arange(sample_size + 1)
    expected = (stats.hypergeom.pmf(b, n - 1, r - 1, sample_size) / (1 + b)).sum()
    values = by_measure(analysis([[[r]]], n, ["ap"], sample_sizes=[sample_size]))
    assert values["ap", sample_size].sampled[0, 0] == pytest.approx(expected, rel=1e-9)


# --- the probabilities and the window ------------------------------------------------------------

def test_probabilities_agree_with_scipy():
    lf = gammaln(np.arange(400) + 1.0)
    above = np.array([0, 1, 7, 50, 120, 199])[:, None]
    for sample_size in (1, 10, 150):
        count = np.arange(sample_size + 1)[None, :]
        ours = np.exp(log_count_probability(np.minimum(count, sample_size), above, np.full_like(above, 199),
                                            sample_size, True, lf))
        np.testing.assert_allclose(ours, stats.binom.pmf(count, sample_size, above / 199), rtol=1e-9, atol=1e-300)
        valid = (count <= above) & (sample_size - count <= 199 - above)
        safe = np.where(valid, count, np.maximum(0, sample_size - (199 - above)))
        ours = np.where(valid,
                        np.exp(log_count_probability(safe, above, np.full_like(above, 199), sample_size, False, lf)), 0)
        np.testing.assert_allclose(ours, stats.hypergeom.pmf(count, 199, above, sample_size), rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("replacement", [True, False])
def test_the_window_holds_all_but_a_negligible_probability(replacement):
    irrelevant, sample_size = 5000, 2000
    above = np.array([0, 1, 3, 100, 2500, 4999, 5000])
    low, high = count_window(above, np.full_like(above, irrelevant), sample_size, replacement)
    law = (stats.binom(sample_size, above / irrelevant) if replacement
           else stats.hypergeom(irrelevant, above, sample_size))
    outside = law.cdf(low - 1) + law.sf(high)
    assert (outside < 1e-15).all()
    assert (high - low < 2 * (9 * np.sqrt(sample_size / 4) + 27) + 2).all()


# --- an enumeration oracle: every possible sample ------------------------------------------------

def enumerated_expectation(measure: str, full_ranks: list[int], grades: list[float], max_grade: float,
                           num_items: int, sample_size: int, replacement: bool) -> float:
    """E[metric on the sampled list] by listing every sample (subsets, or sequences with replacement)
    and scoring each sampled list with ``prefeval eval``'s code."""
    irrelevant = [x for x in range(1, num_items + 1) if x not in full_ranks]
    samples = (itertools.product(irrelevant, repeat=sample_size) if replacement
               else itertools.combinations(irrelevant, sample_size))
    order = np.argsort(full_ranks, kind="stable")
    # every sample is a "run": the sampled ranks of the relevant items
    sampled_ranks = [[[i + 1 + sum(1 for y in sample if y < x) for i, x in enumerate(sorted(full_ranks))]]
                     for sample in samples]
    table = table_from_positions(sampled_ranks, [[grades[j] for j in order]])
    table = dataclasses.replace(table, num_retrieved=np.full((len(sampled_ranks), 1), len(full_ranks) + sample_size))
    positions = binary_positions(table, Selection.everything(table))._replace(max_grade=max_grade)
    return float(parse_measure(measure).compute(positions).mean())


MEASURES = ["ap", "ndcg", "rr", "r@3", "p@2", "auc", "rbp@0.8", "f@3", "success@2", "dcg@4", "ndcg_exp", "cg@3",
            "pfound", "rp", "p@0"]


@pytest.mark.parametrize("replacement", [False, True])
def test_expectations_agree_with_enumerating_every_sample(replacement):
    num_items, sample_size = 9, 3
    runs = [[[2, 5, 9], [1, 8]], [[1, 3, 4], [6, 7]]]
    grades = [[1, 3, 2], [2, 1]]
    values = by_measure(analysis(runs, num_items, MEASURES, grades, sample_sizes=[sample_size],
                                 replacement=replacement))
    for measure in MEASURES:
        for r, run in enumerate(runs):
            for q, full_ranks in enumerate(run):
                expected = enumerated_expectation(measure, full_ranks, grades[q], 3, num_items, sample_size,
                                                  replacement)
                assert (values[parse_measure(measure).name, sample_size].sampled[r, q]
                        == pytest.approx(expected, abs=1e-12)), (measure, r, q)


def test_a_sample_of_every_irrelevant_item_gives_the_exact_values():
    runs = [[[2, 5, 9], [1, 3, 8]], [[1, 3, 4], [2, 6, 7]]]
    values = by_measure(analysis(runs, 9, MEASURES, [[1, 3, 2], [2, 1, 1]], sample_sizes=[6]))
    for measure in MEASURES:
        if measure in ("p@0",):  # precision of the whole list: m / (m + M) against m / N, the same here
            continue
        result = values[parse_measure(measure).name, 6]
        np.testing.assert_allclose(result.sampled, result.exact, atol=1e-12, err_msg=measure)


# --- Monte Carlo ----------------------------------------------------------------------------------

@pytest.mark.parametrize("replacement", [False, True])
def test_monte_carlo_means_agree_with_the_expectations(replacement):
    draws = 3000
    runs = [[[1, 5, 30, 44], [2, 3]], [[4, 40, 45, 60], [30, 59]]]
    evaluation = analysis(runs, 60, ["ap", "ndcg", "rr", "r@10", "auc", "pfound"], [[1, 2, 3, 1], [2, 1]],
                          sample_sizes=[20], replacement=replacement, draws=draws, seed=11)
    for values in evaluation.results():
        error = values.draws_std / math.sqrt(draws)
        varying = values.draws_std > 0
        assert (np.abs(values.draws_mean - values.sampled)[varying] <= 4 * error[varying]).all(), values.measure
        error_of_means = values.draws_std_of_means / math.sqrt(draws)
        assert (np.abs(values.draws_mean_of_means - values.sampled.mean(axis=1)) <= 4 * error_of_means).all()
        assert (error_of_means > 0).all()


# --- unretrieved relevant items ----------------------------------------------------------------------

def test_unretrieved_relevant_items_are_placed_by_the_policy():
    # one query: relevant at rank 2 and two unretrieved ones (grades 1 and 3); 5 retrieved; 20 items
    table = table_from_positions([[[2, INF, INF]]], [[2, 1, 3]])
    table = dataclasses.replace(table, num_retrieved=np.array([[5]]))
    assert complete_rankings(table, 20, "worst").ranks.tolist() == [[2, 19, 20]]
    assert complete_rankings(table, 20, "best").ranks.tolist() == [[2, 7, 6]]
    assert complete_rankings(table, 20).num_retrieved.tolist() == [[20]]


def test_exact_values_bracket_and_best_equals_a_full_ranking():
    worst = by_measure(analysis([[[2, INF, INF]]], 20, ["ap"], retrieved=5, sample_sizes=[5]))["ap", 5]
    best = by_measure(analysis([[[2, INF, INF]]], 20, ["ap"], retrieved=5, sample_sizes=[5],
                               unretrieved="best"))["ap", 5]
    assert worst.exact[0, 0] == pytest.approx((1 / 2 + 2 / 19 + 3 / 20) / 3)
    assert best.exact[0, 0] == pytest.approx((1 / 2 + 2 / 6 + 3 / 7) / 3)
    assert worst.sampled[0, 0] < best.sampled[0, 0]


# --- errors -------------------------------------------------------------------------------------------

def test_impossible_requests_are_usage_errors():
    with pytest.raises(UsageError, match="smaller than what run run0 ranks for query q0: 8 retrieved"):
        analysis([[[2, INF]]], 8, ["ap"], retrieved=8, sample_sizes=[2])
    with pytest.raises(UsageError, match="larger than the 6 irrelevant items of query q0"):
        analysis([[[2, 3]]], 8, ["ap"], sample_sizes=[7])
    analysis([[[2, 3]]], 8, ["ap"], sample_sizes=[7], replacement=True)
    with pytest.raises(UsageError, match="no irrelevant item"):
        analysis([[[1, 2]]], 2, ["ap"], replacement=True)
    with pytest.raises(UsageError, match="rpp is a preference"):
        analysis([[[2, 3]]], 8, ["rpp"], sample_sizes=[2])
    with pytest.raises(UsageError, match="at least 2"):
        analysis([[[2, 3]]], 8, ["ap"], draws=1, sample_sizes=[2])
    with pytest.raises(UsageError, match="unretrieved policy"):
        analysis([[[2, 3]]], 8, ["ap"], unretrieved="middle", sample_sizes=[2])


# --- records and consistency ----------------------------------------------------------------------------

def test_consistency_counts_discordant_pairs():
    exact = np.array([[0.9], [0.5], [0.3]])
    sampled = np.array([[0.6], [0.7], [0.2]])
    tau, discordant = consistency(SampledValues("ap", 10, exact, sampled), ["A", "B", "C"])
    assert tau == pytest.approx(1 / 3)
    assert discordant == [("A", "B")]


def test_records_per_query_summary_and_consistency():
    evaluation = analysis([[[1, 4], [3]], [[2, 9], [1]]], 30, ["ap", "auc"], sample_sizes=[5, 10], draws=4, seed=2)
    records = list(sampled_records(evaluation, per_query=True))
    # per sample size and measure: 2 queries × 2 runs, 2 run lines, a consistency line
    assert len(records) == 2 * 2 * (4 + 2 + 1)
    assert records[0] == {**records[0], "qid": "q0", "run": "run0", "measure": "ap", "sample_size": 5}
    assert list(records[0]) == ["qid", "run", "measure", "sample_size", "exact", "sampled", "sampled_mean",
                                "sampled_std"]
    assert list(records[4]) == list(records[0]) and records[4]["qid"] == "all"
    assert records[4]["exact"] == pytest.approx((records[0]["exact"] + records[2]["exact"]) / 2)
    assert list(records[6]) == ["qid", "measure", "sample_size", "kendall_tau", "discordant_pairs"]
    assert [r["sample_size"] for r in records[::7]] == [5, 5, 10, 10]
    plain = list(sampled_records(analysis([[[1, 4], [3]], [[2, 9], [1]]], 300, ["ap"])))
    assert list(plain[0]) == ["qid", "run", "measure", "sample_size", "exact", "sampled"]


# --- the command line ---------------------------------------------------------------------------------


def test_cli_on_the_examples(tmp_path):
    result = run_cli("sampled", "-R", QRELS, "--num-items", 200, "--sample-size", 20, "--sample-size", 100,
                 "-m", "ap,auc", *RUNS)
    assert result.exit_code == 0, result.output
    records = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 2 * 2 * (4 + 1)
    auc = [r for r in records if r["measure"] == "auc" and "run" in r]
    assert all(r["sampled"] == pytest.approx(r["exact"], abs=1e-12) for r in auc)
    assert "dropped 1 query (q107) without relevant documents" in result.stderr
    args = ["sampled", "-R", QRELS, "--num-items", 200, "--draws", 5, "-q", *RUNS[:2]]
    first = run_cli(*args, "--seed", 3)
    assert first.stdout == run_cli(*args, "--seed", 3).stdout != run_cli(*args, "--seed", 4).stdout
    drawn = run_cli(*args)
    seed = drawn.stderr.split("drew seed ")[1].split()[0]
    assert run_cli(*args, "--seed", seed).stdout == drawn.stdout


def test_cli_errors_are_one_line_and_leave_no_file(tmp_path):
    target = tmp_path / "out.jsonl"
    result = run_cli("sampled", "-R", QRELS, "--num-items", 40, "-o", target, *RUNS)
    assert result.exit_code == 2 and not target.exists()
    assert result.stderr.startswith("prefeval: error: --num-items 40 is smaller than what run bm25 ranks")
    assert result.stderr.count("\n") == 1
    result = run_cli("sampled", "-R", QRELS, "--num-items", 200, "-m", "lexirecall", *RUNS)
    assert result.exit_code == 2 and "lexirecall is a preference" in result.stderr
    result = run_cli("sampled", "-R", tmp_path / "missing", "--num-items", 200, *RUNS)
    assert result.exit_code == 1 and result.stderr == f"prefeval: error: {tmp_path / 'missing'}: no such file\n"
    assert "Examples:" in run_cli("sampled", "--help").stdout


@pytest.mark.parametrize("args, message", [
    (["--num-items", "1000000000000"], "--num-items 1000000000000 is too large: sampled tabulates log-factorials"),
    (["--num-items", "1000", "--replacement", "--sample-size", "1000000000000"],
     "--sample-size 1000000000000 is too large"),
])
def test_sizes_too_large_to_hold_are_refused_before_any_work(args, message):
    """A catalogue of 10^12 items was a 7 TiB allocation error."""
    assert MAX_ITEMS == 10**8
    result = run_cli("sampled", "-R", QRELS, *args, RUNS[0])
    assert assert_one_line_error(result, 2, message)


def test_monte_carlo_standard_deviations_keep_their_digits():
    """A spread small beside the mean (sampled AP of 0.93 ± 0.013 on the examples): Σx² − D·mean²
    lost 4 of the 16 digits of the standard deviation (0.01312531463677366 for 0.01312531463667152);
    deviations from the first draw keep them."""
    rng = np.random.default_rng(3)
    draws = 0.9305 + 0.013 * rng.standard_normal((1000, 2, 3))
    moments = Moments()
    for values in draws:
        moments.add(values)
    mean, std = moments.mean_and_std()
    np.testing.assert_array_equal(mean, draws.sum(axis=0) / 1000)
    np.testing.assert_allclose(std, draws.std(axis=0, ddof=1), rtol=1e-14)
    constant = Moments()
    for _ in range(5):
        constant.add(np.array([1 / 3, 0.1]))
    assert constant.mean_and_std()[1].tolist() == [0.0, 0.0]
