"""Significance tests, corrections, intervals and effect sizes, against scipy and hand-computed values."""

from __future__ import annotations

import itertools

import numpy as np
import orjson
import pytest
import scipy.stats
from conftest import QRELS, REFERENCE, RUNS, example_eval_lines, robust03_or_skip, run_cli, write_text
from hypothesis import given, settings
from hypothesis import strategies as st

import prefeval
from prefeval.analyses.significance import (
    MAX_RESAMPLED_MEANS,
    TESTS,
    bootstrap_means,
    canonical_values,
    compare_pairs,
    correct,
    effect_size,
    pairwise_significance,
    randomization_test,
)
from prefeval.errors import InputError, UsageError


@pytest.fixture(scope="module")
def prefs(tmp_path_factory) -> str:
    """Per-query eval lines of the four example runs."""
    return example_eval_lines(tmp_path_factory.mktemp("prefs") / "prefs.jsonl", "rpp,lexiprecision,ap,ndcg@10,rr")


def paired_samples(seed: int, num_pairs: int = 6, num_queries: int = 25):
    """Metric-like values x, y of num_pairs pairs: continuous, tied, and with zero differences."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(num_pairs, num_queries))
    y = x + rng.normal(0.05, 0.2, size=x.shape)
    y[1] = np.round(y[1], 1)
    x[1] = np.round(x[1], 1)  # ties and zeros among the differences
    y[2, : num_queries // 3] = x[2, : num_queries // 3]  # exact zeros
    return x, y


# --- the tests against scipy ---------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
def test_t_test_equals_scipy_ttest_rel(seed):
    x, y = paired_samples(seed)
    stats = compare_pairs(x - y, test="t", correction="none", bootstrap=None)
    for pair in range(len(x)):
        expected = scipy.stats.ttest_rel(x[pair], y[pair]).pvalue
        assert stats.p[pair] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("seed", range(2))
# scipy's exact (or permutation) distribution, and its normal approximation
@pytest.mark.parametrize("num_queries", [9, 60])
def test_wilcoxon_equals_scipy_wilcoxon(seed, num_queries):
    """On the exact differences: those of the rounded pair are counted in tenths (scipy's ranks of
    x − y would tell 0.7 − 0.6 from 0.2 − 0.1, which prefeval ties; the test is scale-free)."""
    x, y = paired_samples(seed, num_queries=num_queries)
    stats = compare_pairs(x - y, test="wilcoxon", correction="none", bootstrap=None)
    for pair in range(len(x)):
        exact = np.round(x[pair] * 10) - np.round(y[pair] * 10) if pair == 1 else x[pair] - y[pair]
        expected = scipy.stats.wilcoxon(exact).pvalue
        assert stats.p[pair] == pytest.approx(expected, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.0, 0.25, 1.0]), min_size=2, max_size=40))
def test_sign_test_equals_scipy_binomtest(values):
    values = np.array([values])
    wins, losses = int((values > 0).sum()), int((values < 0).sum())
    p = compare_pairs(values, test="sign", bootstrap=None).p[0]
    expected = scipy.stats.binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
    assert p == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_randomization_by_hand():
    # sign flips of (1, 2, 3): |sum| >= 6 only for (+,+,+) and (-,-,-): p = 2/8
    p = randomization_test(np.array([[1.0, 2.0, 3.0]]), 10_000, np.random.default_rng(0))
    assert p[0] == 0.25
    # (1, 1, -1, 2), observed sum 3: a flip gives s1 + s2 - s3 + 2 s4, at least 3 in size exactly when
    # s4 (s1 + s2 - s3) >= 1, which holds for 4 of the 8 choices of (s1, s2, s3) for each s4: p = 8/16
    assert randomization_test(np.array([[1.0, 1.0, -1.0, 2.0]]), 16, np.random.default_rng(0))[0] == 0.5


def exact_randomization_p(values: np.ndarray) -> float:
    """The oracle: every one of the 2^Q sign flips, enumerated with itertools."""
    observed = abs(values.sum())
    flips = np.array(list(itertools.product((1.0, -1.0), repeat=len(values))))
    return float((np.abs(flips @ values) >= observed - 1e-9).mean())


@pytest.mark.parametrize("seed", range(3))
def test_randomization_agrees_with_exact_enumeration(seed):
    rng = np.random.default_rng(seed)
    small = rng.normal(0.3, 1.0, size=(4, 9))
    small[0] = np.round(small[0])  # ties among the flipped sums
    exact = [exact_randomization_p(row) for row in small]
    enumerated = randomization_test(small, 2**9, np.random.default_rng(1))
    np.testing.assert_allclose(enumerated, exact, rtol=0, atol=1e-12)
    # Monte Carlo (fewer permutations than 2^14 flips) is within sampling error of the exact p
    larger = rng.normal(0.3, 1.0, size=(3, 14))
    exact = np.array([exact_randomization_p(row) for row in larger])
    drawn = randomization_test(larger, 4000, np.random.default_rng(2))
    standard_error = np.sqrt(exact * (1 - exact) / 4000) + 1 / 4000
    assert np.all(np.abs(drawn - exact) <= 4 * standard_error)


# --- corrections, intervals, effect sizes ---------------------------------------------------------

def test_corrections_by_hand():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 -> 4*.005, 3*.01, 2*.03, 1*.04 = .02, .03, .06, .04 -> running max
    np.testing.assert_allclose(correct(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    # BH: 4/1*.005, 4/2*.01, 4/3*.03, 4/4*.04 = .02, .02, .04, .04 -> running min from the largest
    np.testing.assert_allclose(correct(p, "bh"), [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_allclose(correct(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    np.testing.assert_array_equal(correct(p, "none"), p)
    np.testing.assert_allclose(correct(np.array([0.3, 0.6]), "holm"), [0.6, 0.6])
    np.testing.assert_allclose(correct(np.array([0.3, 0.6]), "bonferroni"), [0.6, 1.0])


def test_bootstrap_is_reproducible_with_a_seed():
    x, y = paired_samples(0)
    first = compare_pairs(x - y, seed=7, bootstrap=500)
    again = compare_pairs(x - y, seed=7, bootstrap=500)
    other = compare_pairs(x - y, seed=8, bootstrap=500)
    np.testing.assert_array_equal(first.ci_low, again.ci_low)
    np.testing.assert_array_equal(first.ci_high, again.ci_high)
    assert not np.array_equal(first.ci_low, other.ci_low)
    assert np.all(first.ci_low <= first.mean) and np.all(first.mean <= first.ci_high)


def test_bootstrap_interval_approaches_the_normal_interval():
    values = np.random.default_rng(3).normal(0.2, 1.0, size=(1, 400))
    stats = compare_pairs(values, seed=1, bootstrap=20_000, alpha=0.05)
    half_width = 1.959964 * values.std(ddof=1) / np.sqrt(400)
    assert stats.ci_low[0] == pytest.approx(values.mean() - half_width, abs=0.012)
    assert stats.ci_high[0] == pytest.approx(values.mean() + half_width, abs=0.012)


def test_bootstrap_means_weigh_every_query_as_drawn():
    means = bootstrap_means(np.array([[1.0, 2.0, 6.0], [5.0, 5.0, 5.0]]), 300, np.random.default_rng(0))
    assert means.shape == (2, 300)
    np.testing.assert_allclose(means[1], 5.0)
    # each resample mean is (a*1 + b*2 + c*6)/3 with a + b + c = 3
    possible = {round((a + 2 * b + 6 * (3 - a - b)) / 3, 9) for a in range(4) for b in range(4 - a)}
    assert set(np.round(means[0], 9)) <= possible
    assert means[0].mean() == pytest.approx(3.0, abs=0.15)


def test_effect_size_and_constant_values():
    np.testing.assert_allclose(effect_size(np.array([[1.0, 2.0, 3.0]])), [2.0])  # mean 2, sd 1
    sizes = effect_size(np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]))
    assert sizes[0] == 0.0 and np.isnan(sizes[1])


@pytest.mark.parametrize("test", TESTS)
def test_identical_runs_are_never_significant(test):
    stats = compare_pairs(np.zeros((2, 10)), test=test, seed=0, bootstrap=200, permutations=200)
    np.testing.assert_array_equal(stats.p, [1.0, 1.0])
    assert stats.discriminative_power == 0.0
    assert (stats.wins.tolist(), stats.losses.tolist(), stats.ties.tolist()) == ([0, 0], [0, 0], [10, 10])


def test_wins_losses_ties_and_discriminative_power():
    values = np.array([[1.0, 1.0, 1.0, 1.0, -0.5, 0.0, 1e-12, 1.0, 1.0, 1.0],
                       [0.1, -0.1, 0.1, -0.1, 0.0, 0.1, -0.1, 0.0, 0.1, -0.1]])
    stats = compare_pairs(values, test="sign", correction="none", bootstrap=None)
    assert stats.wins.tolist() == [7, 4] and stats.losses.tolist() == [1, 4] and stats.ties.tolist() == [2, 2]
    assert stats.p[0] == pytest.approx(scipy.stats.binomtest(7, 8).pvalue)
    assert stats.significant.tolist() == [stats.p[0] < 0.05, False]


def test_bad_requests():
    with pytest.raises(UsageError, match="at least 2 queries"):
        compare_pairs(np.ones((1, 1)))
    with pytest.raises(UsageError, match="unknown test"):
        compare_pairs(np.ones((1, 3)), test="z")
    with pytest.raises(UsageError, match="alpha"):
        compare_pairs(np.ones((1, 3)), alpha=1.5)


# --- from eval lines ------------------------------------------------------------------------------

def test_records_from_eval_lines_match_scipy_on_the_metric_values(prefs):
    metrics = prefeval.evaluate(QRELS, RUNS, ["ap"])
    by_run = {run: group.set_index("qid")["ap"] for run, group in metrics.groupby("run")}
    records = list(pairwise_significance(prefs, ["ap"], seed=1, bootstrap=200))
    pairs, (power,) = records[:-1], records[-1:]
    assert [(r["runi"], r["runj"]) for r in pairs] == [
        ("bm25", "dense"), ("bm25", "hybrid"), ("bm25", "random"), ("dense", "hybrid"), ("dense", "random"),
        ("hybrid", "random")]
    assert list(pairs[0]) == ["qid", "runi", "runj", "measure", "test", "mean", "wins", "losses", "ties", "p",
                              "p_corrected", "ci_low", "ci_high", "effect_size", "significant", "sample"]
    for record in pairs:
        x, y = by_run[record["runi"]], by_run[record["runj"]].loc[by_run[record["runi"]].index]
        assert record["mean"] == pytest.approx((x - y).mean(), abs=1e-12)
        assert record["p"] == pytest.approx(scipy.stats.ttest_rel(x, y).pvalue, rel=1e-9)
        assert record["wins"] == int((x > y).sum()) and record["losses"] == int((x < y).sum())
    holm = correct(np.array([r["p"] for r in pairs]), "holm")
    assert [r["p_corrected"] for r in pairs] == pytest.approx(holm.tolist())
    assert power == {"qid": "all", "measure": "ap", "test": "t", "correction": "holm", "alpha": 0.05,
                     "discriminative_power": sum(h < 0.05 for h in holm) / 6, "pairs": 6, "sample": 0}


def test_baseline_orients_pairs_and_corrects_across_them(prefs):
    everything = {(r["runi"], r["runj"]): r for r in pairwise_significance(prefs, ["rpp"], bootstrap=None)
                  if "runi" in r}
    against = [r for r in pairwise_significance(prefs, ["rpp"], baseline="dense", bootstrap=None) if "runi" in r]
    assert [(r["runi"], r["runj"]) for r in against] == [("bm25", "dense"), ("hybrid", "dense"), ("random", "dense")]
    flipped = everything[("dense", "hybrid")]
    hybrid = against[1]
    assert hybrid["mean"] == pytest.approx(-flipped["mean"]) and hybrid["p"] == pytest.approx(flipped["p"])
    assert (hybrid["wins"], hybrid["losses"]) == (flipped["losses"], flipped["wins"])
    assert ([r["p_corrected"] for r in against]
            == pytest.approx(correct(np.array([r["p"] for r in against]), "holm").tolist()))
    with pytest.raises(UsageError, match="baseline 'nope' is not a run"):
        list(pairwise_significance(prefs, baseline="nope"))


def test_reads_the_reference_scripts_output():
    robust03_or_skip()
    source = str(REFERENCE / "robust03-3runs.b1.jsonl")
    records = [r for r in pairwise_significance(source, ["ap", "lexiprecision"], bootstrap=None) if "runi" in r]
    assert len(records) == 6
    values = {}
    for line in (REFERENCE / "robust03-3runs.b1.jsonl").read_bytes().splitlines():
        record = orjson.loads(line)
        if record.get("type") == "metric":
            values.setdefault(record["run"], []).append(record["ap"])
    (first,) = [r for r in records if r["measure"] == "ap" and (r["runi"], r["runj"]) == ("pircRBa1", "MU03rob01")]
    expected = scipy.stats.ttest_rel(values["pircRBa1"], values["MU03rob01"]).pvalue
    assert first["p"] == pytest.approx(expected, rel=1e-9)


def test_incomplete_pair_lines_are_an_input_error(tmp_path):
    lines = [
        {"qid": "1", "runi": "A", "runj": "B", "sample": 0, "type": "preference", "rpp": 0.5},
        {"qid": "2", "runi": "A", "runj": "B", "sample": 0, "type": "preference", "rpp": -0.5},
        {"qid": "2", "runi": "A", "runj": "C", "sample": 0, "type": "preference", "rpp": 0.25},
    ]
    path = write_text(tmp_path / "prefs.jsonl", [orjson.dumps(line).decode() for line in lines])
    with pytest.raises(InputError, match="the pair A, C has no value of rpp on query 1") as error:
        list(pairwise_significance(path))
    assert error.value.source == path


# --- the command ----------------------------------------------------------------------------------

def test_command_is_reproducible_with_a_seed_and_reports_a_drawn_one(prefs):
    args = ["significance", "-P", prefs, "-m", "rpp,ap", "--test", "randomization", "--bootstrap", "300",
            "--permutations", "300"]
    first = run_cli(*args, "--seed", "5")
    assert first.exit_code == 0, first.output
    assert first.stdout == run_cli(*args, "--seed", "5").stdout
    assert first.stdout != run_cli(*args, "--seed", "6").stdout
    drawn = run_cli(*args)
    seed = drawn.stderr.split("drew seed ")[1].split()[0]
    assert run_cli(*args, "--seed", seed).stdout == drawn.stdout
    records = [orjson.loads(line) for line in first.stdout.splitlines()]
    assert [r["measure"] for r in records if "discriminative_power" in r] == ["rpp", "ap"]
    assert len(records) == 2 * (6 + 1)


def test_command_errors(prefs, tmp_path):
    result = run_cli("significance", "-P", prefs, "-m", "nope", "--seed", "1")
    assert result.exit_code == 2 and "measure(s) nope not in" in result.stderr
    summary_only = write_text(tmp_path / "summary.jsonl", ['{"qid":"all","runi":"A","runj":"B","sample":0,"rpp":0.1}'])
    result = run_cli("significance", "-P", summary_only, "--seed", "1", "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 1 and "run `prefeval eval` with -q" in result.stderr
    assert not (tmp_path / "out.jsonl").exists() and result.stdout == ""


def test_a_single_run_has_nothing_to_compare(tmp_path):
    single = tmp_path / "single.jsonl"
    run_cli("eval", "-q", "-R", QRELS, "-m", "ap", "-o", single, RUNS[0])
    result = run_cli("significance", "-P", single, "--seed", "1")
    assert result.exit_code == 1
    assert result.stderr == (f"prefeval: error: {single}: sample 0 has no pair lines: "
                             "significance compares two or more runs\n")


# --- last-bit noise (issue 11) ---------------------------------------------------------------------------

def test_canonical_values_tie_what_differs_by_rounding_only():
    values = np.array([[0.1, 0.7 - 0.6, 0.2 - 0.1, -0.1, 1e-13, -2e-13, 0.3, 0.30000000000000004, 2e-12, 0.0]])
    canonical = canonical_values(values)
    assert canonical.tolist() == [[0.09999999999999998, 0.09999999999999998, 0.09999999999999998, -0.09999999999999998,
                                   0.0, 0.0, 0.3, 0.3, 2e-12, 0.0]]
    assert not np.signbit(canonical).any() or canonical[np.signbit(canonical)].tolist() == [-0.09999999999999998]


def noisy_twin(seed: int, num_queries: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """P@10-like differences (tenths) computed exactly, and as the differences of two rounded
    values (0.7 − 0.6 is not 0.2 − 0.1), with RBP-like tiny genuine differences in one pair."""
    rng = np.random.default_rng(seed)
    hits = rng.integers(0, 11, size=(2, 3, num_queries))
    exact = (hits[0] - hits[1]) / 10
    noisy = hits[0] / 10 - hits[1] / 10
    exact[2, :5] = noisy[2, :5] = 2.0**-35  # a document at rank 36 against none: a genuine difference
    return exact, noisy


@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("seed", range(3))
def test_every_test_is_blind_to_last_bit_noise(test, seed):
    """Values within 1e-12 of each other are equal in every test, in the ranks of Wilcoxon and in
    the wins, losses and ties; the Wilcoxon figure of docs/commands/significance.md for P@10 on robust03
    moved with them."""
    exact, noisy = noisy_twin(seed)
    assert not np.array_equal(exact, noisy)
    a = compare_pairs(exact, test=test, seed=5, bootstrap=300, permutations=300)
    b = compare_pairs(noisy, test=test, seed=5, bootstrap=300, permutations=300)
    for key in ("wins", "losses", "ties", "p", "p_corrected", "effect_size"):
        np.testing.assert_allclose(getattr(a, key), getattr(b, key), rtol=1e-12, atol=0, err_msg=key)
    assert a.wins[2] >= 5  # 2^-35 is not a tie: ties are within 1e-12, not the orderings' 1e-9


def test_too_many_resampled_means_is_a_usage_error():
    values = np.zeros((136, 10))
    with pytest.raises(UsageError, match="--bootstrap 1000000 is too large for 136 pairs"):  # within MAX_RESAMPLES
        compare_pairs(values, bootstrap=10**6, seed=1)
    with pytest.raises(UsageError, match=r"--bootstrap 1000000000000 is too large: at most 1,000,000 \("):
        compare_pairs(values, bootstrap=10**12, seed=1)
    assert MAX_RESAMPLED_MEANS >= 4950 * 10_000  # 100 runs' pairs with the default resamples fit


def constant_lines(tmp_path):
    """Three runs on five queries: A is 0.5 above B on each (no variance), A and C tie on each."""
    lines = []
    for q in range(5):
        lines += [{"qid": f"q{q}", "runi": "A", "runj": "B", "sample": 0, "type": "preference", "rpp": 0.5},
                  {"qid": f"q{q}", "runi": "A", "runj": "C", "sample": 0, "type": "preference", "rpp": 0.0},
                  {"qid": f"q{q}", "runi": "B", "runj": "C", "sample": 0, "type": "preference", "rpp": -0.5}]
    path = tmp_path / "constant.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return str(path)


@pytest.mark.parametrize("test", ["t", "wilcoxon", "sign", "randomization", "bootstrap"])
def test_values_without_variance_write_no_null(tmp_path, test):
    """A pair whose values are all equal but not 0 has no effect size (mean / 0): it was written
    ``"effect_size":null``; the line leaves it out, and tsv has an empty field. Every other
    statistic is a number."""
    prefs = constant_lines(tmp_path)
    result = run_cli("significance", "-P", prefs, "--test", test, "--seed", "1", "--bootstrap", "200")
    assert result.exit_code == 0, result.stderr
    assert b"null" not in result.stdout_bytes and b"NaN" not in result.stdout_bytes
    first, tied, second = [record for record in map(orjson.loads, result.stdout.splitlines()) if "runi" in record]
    assert "effect_size" not in first and "effect_size" not in second and tied["effect_size"] == 0.0
    assert (first["mean"], first["ci_low"], first["ci_high"], first["wins"]) == (0.5, 0.5, 0.5, 5)
    tsv = run_cli("significance", "-P", prefs, "--test", test, "--seed", "1", "--bootstrap", "200", "--format", "tsv")
    header, row = tsv.stdout.splitlines()[:2]
    assert dict(zip(header.split("\t"), row.split("\t")))["effect_size"] == ""
    assert "nan" not in tsv.stdout
