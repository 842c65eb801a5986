"""``aggregate --bootstrap``: weighted aggregations against expanded samples, rank counts against brute
force, intervals and tiers by hand, properties, and the command line in every format."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from conftest import example_eval_lines, json_lines, robust03_or_skip, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

import prefeval.analyses.bootstrap as bootstrap_module
from prefeval import aggregate
from prefeval.analyses.bootstrap import RankBootstrap, bootstrap_ranks, rank_tiers, resample_weights
from prefeval.analyses.orderings import QueryOrderings, competition_ranks, higher_is_better, ordering_by
from prefeval.errors import UsageError
from prefeval.measures.summaries import STATISTICS

METHODS = ("mc4", "borda", *STATISTICS)


def random_orderings(rng: np.random.Generator, num_queries: int, num_runs: int, absent: float = 0.0) -> QueryOrderings:
    """Scores with many ties (a few levels) and, optionally, runs absent from some queries."""
    scores = rng.integers(0, 4, size=(num_queries, num_runs)) / 4.0
    scores[rng.random(scores.shape) < absent] = np.nan
    return QueryOrderings.from_scores([f"r{n}" for n in range(num_runs)], scores)


def expanded(orderings: QueryOrderings, counts: np.ndarray) -> QueryOrderings:
    """The orderings of the queries drawn: query q repeated counts[q] times."""
    return QueryOrderings.from_scores(orderings.runs, orderings.scores[np.repeat(np.arange(len(counts)), counts)])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("damping", [0.15, 0.0])
def test_weighted_aggregations_are_those_of_the_expanded_queries(seed, damping):
    rng = np.random.default_rng(seed)
    orderings = random_orderings(rng, num_queries=7, num_runs=5, absent=0.1 if seed % 2 else 0.0)
    weights = resample_weights(7, 6, rng)
    for method in METHODS:
        weighted = orderings.aggregated(method, damping, weights)
        for b, counts in enumerate(weights):
            expected = expanded(orderings, counts).aggregated(method, damping)
            np.testing.assert_allclose(weighted[b], expected, atol=1e-9, equal_nan=True, err_msg=method)


def brute_force_counts(orderings: QueryOrderings, method: str, weights: np.ndarray, damping: float) -> np.ndarray:
    """Rank counts from ordering each expanded resample one at a time, as aggregate orders all queries."""
    num_runs = len(orderings.runs)
    counts = np.zeros((num_runs, num_runs), dtype=np.int64)
    for row in weights:
        scores = expanded(orderings, row).aggregated(method, damping)
        order, shared = ordering_by(scores, orderings.runs, higher_is_better(method))
        ranks = competition_ranks(shared, higher_is_better(method))
        for r, run in enumerate(orderings.runs):
            counts[r, ranks[run] - 1 if run in ranks else len(ranks)] += 1
    return counts


@pytest.mark.parametrize("seed", range(4))
def test_rank_counts_are_those_of_ordering_every_resample(seed, monkeypatch):
    monkeypatch.setattr(bootstrap_module, "BLOCK_ELEMENTS", 40)  # several blocks of resamples
    rng = np.random.default_rng(100 + seed)
    orderings = random_orderings(rng, num_queries=6, num_runs=4, absent=0.15 if seed % 2 else 0.0)
    results = bootstrap_ranks(orderings, METHODS, 30, np.random.default_rng(seed), damping=0.15)
    weights = resample_weights(6, 30, np.random.default_rng(seed))
    for method, result in results.items():
        rows = [orderings.runs.index(run) for run in result.runs]
        expected = brute_force_counts(orderings, method, weights, 0.15)[rows]
        np.testing.assert_array_equal(result.counts, expected, err_msg=method)
        full_order, full_scores = ordering_by(orderings.aggregated(method, 0.15), orderings.runs,
                                              higher_is_better(method))
        assert result.runs == full_order and result.scores == full_scores
        assert result.rank.tolist() == [competition_ranks(full_scores, higher_is_better(method))[run]
                                        for run in full_order]


def test_resamples_are_multinomial_counts_and_blocks_do_not_change_them():
    weights = resample_weights(9, 50, np.random.default_rng(3))
    assert weights.shape == (50, 9) and (weights.sum(axis=1) == 9).all()
    rng = np.random.default_rng(3)
    blocks = np.vstack([resample_weights(9, 20, rng), resample_weights(9, 30, rng)])
    np.testing.assert_array_equal(weights, blocks)


def test_interval_by_hand():
    # 40 resamples: rank 1 once, rank 2 38 times, rank 3 once -> 2.5% is the 1st draw, 97.5% the 39th
    result = RankBootstrap(["A"], {"A": 1.0}, np.array([2]), np.array([[1, 38, 1]]))
    assert [a.tolist() for a in result.interval()] == [[1], [2]]
    result = RankBootstrap(["A"], {"A": 1.0}, np.array([2]), np.array([[0, 40, 0]]))
    assert [a.tolist() for a in result.interval()] == [[2], [2]]
    # 1000 resamples: F(1) = 25/1000 is exactly 2.5% (no floating-point slip to rank 2); F(2) = 97.5%
    result = RankBootstrap(["A"], {"A": 1.0}, np.array([2]), np.array([[25, 950, 25]]))
    assert [a.tolist() for a in result.interval()] == [[1], [2]]
    result = RankBootstrap(["A"], {"A": 1.0}, np.array([2]), np.array([[25, 949, 26]]))
    assert [a.tolist() for a in result.interval()] == [[1], [3]]
    result = RankBootstrap(["A"], {"A": 1.0}, np.array([2]), np.array([[24, 952, 24]]))
    assert [a.tolist() for a in result.interval()] == [[2], [2]]
    assert result.probabilities.tolist() == [[0.024, 0.952, 0.024]] and result.resamples == 1000


def test_tiers_by_hand():
    # runs by rank: [1,2] [1,3] [3,5] [4,6] [4,6] [7,7]
    rank = np.array([1, 2, 3, 4, 5, 6])
    low, high = np.array([1, 1, 3, 4, 4, 7]), np.array([2, 3, 5, 6, 6, 7])
    assert rank_tiers(rank, low, high).tolist() == [1, 1, 2, 2, 2, 3]
    # [3,5] overlaps [1,3] but not [1,2]: a new tier, although it overlaps the run just above
    assert rank_tiers(rank[:3], low[:3], high[:3]).tolist() == [1, 1, 2]
    # tied runs (rank 2, 2) stay together even when one of them does not overlap the tier above
    assert rank_tiers(np.array([1, 2, 2]), np.array([1, 1, 3]), np.array([2, 3, 4])).tolist() == [1, 2, 2]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(0, 4)), min_size=1, max_size=8))
def test_tiers_partition_the_runs_into_consecutive_groups_of_overlapping_intervals(intervals):
    low = np.array([a for a, _ in intervals])
    high = low + np.array([b for _, b in intervals])
    rank = np.arange(1, len(low) + 1)
    tiers = rank_tiers(rank, low, high)
    assert tiers[0] == 1 and set(np.diff(tiers).tolist()) <= {0, 1}
    for tier in set(tiers.tolist()):
        members = np.flatnonzero(tiers == tier)
        assert all(low[i] <= high[j] and low[j] <= high[i] for i in members for j in members)
        first = members[0]
        if tier > 1:  # it started a tier: some run of the previous tier does not overlap it
            previous = np.flatnonzero(tiers == tier - 1)
            assert any(not (low[first] <= high[j] and low[j] <= high[first]) for j in previous)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_a_run_that_wins_every_query_ranks_first_in_every_resample(num_runs, num_queries, seed):
    rng = np.random.default_rng(seed)
    scores = rng.random((num_queries, num_runs))
    scores[:, 2 % num_runs] = scores.max(axis=1) + 0.5
    orderings = QueryOrderings.from_scores([f"r{n}" for n in range(num_runs)], scores)
    for method, result in bootstrap_ranks(orderings, ["mean", "median", "min", "borda", "mc4"], 50, rng).items():
        winner = result.runs.index(f"r{2 % num_runs}")
        assert result.probabilities[winner, 0] == 1.0, method
        low, high = result.interval()
        assert (low[winner], high[winner], result.tiers()[winner]) == (1, 1, 1)
        assert (result.counts.sum(axis=1) == 50).all()


def test_identical_runs_share_every_rank():
    scores = np.random.default_rng(1).random((10, 1)).repeat(3, axis=1)
    results = bootstrap_ranks(QueryOrderings.from_scores(["a", "b", "c"], scores), ["mean", "mc4"], 20,
                              np.random.default_rng(2))
    for result in results.values():
        assert result.probabilities[:, 0].tolist() == [1.0, 1.0, 1.0] and result.tiers().tolist() == [1, 1, 1]


# --- through aggregate and the command line ----------------------------------------------------------

@pytest.fixture(scope="module")
def prefs(tmp_path_factory) -> str:
    return example_eval_lines(tmp_path_factory.mktemp("prefs") / "prefs.jsonl", "rpp,ap,ndcg")


def test_bootstrap_records(prefs):
    records = list(aggregate(prefs, ["ap", "rpp"], bootstrap=200, seed=4))
    summary, rest = records[0], records[1:]
    assert summary["qid"] == "all" and "ap" in summary
    assert [(r["measure"], r["method"]) for r in rest] == [("ap", "mean")] * 4 + [("rpp", "mc4")] * 4 + [
        ("rpp", "borda")] * 4
    assert list(rest[0]) == ["qid", "sample", "measure", "method", "run", "rank", "score", "rank_low", "rank_high",
                             "tier", "rank_probabilities", "resamples"]
    for record in rest:
        method, measure = record["method"], record["measure"]
        assert record["run"] in summary[measure][method]
        assert record["score"] == summary[measure]["scores"][method][record["run"]]
        assert record["rank_low"] <= record["rank_high"] and record["resamples"] == 200
        assert sum(record["rank_probabilities"]) == pytest.approx(1.0) and len(record["rank_probabilities"]) == 4
    assert [r["run"] for r in rest[:4]] == summary["ap"]["mean"]


def test_same_seed_same_bytes_and_measures_do_not_change_each_other(prefs):
    args = ["aggregate", "-P", prefs, "--bootstrap", "300", "--seed", "9"]
    first = run_cli(*args).stdout
    assert first == run_cli(*args).stdout and first != run_cli(*args[:-1], "10").stdout
    alone = [r for r in json_lines(run_cli(*args, "-m", "ndcg", "-n").stdout)]
    together = [r for r in json_lines(first) if r.get("measure") == "ndcg"]
    assert alone == together


def test_a_drawn_seed_is_reported_and_repeats(prefs):
    result = run_cli("aggregate", "-P", prefs, "--bootstrap", "50", "-n", "-m", "ap")
    assert result.exit_code == 0
    seed = int(result.stderr.split("pass --seed ")[1].split()[0])
    assert run_cli("aggregate", "-P", prefs, "--bootstrap", "50", "-n", "-m", "ap", "--seed", seed).stdout == \
        result.stdout


def test_bootstrap_with_query_subsamples_and_several_samples(prefs):
    records = list(aggregate(prefs, ["ap"], query_fraction=0.5, num_samples=2, seed=1, bootstrap=20, summary=False))
    assert [r["sample"] for r in records] == [0] * 4 + [1] * 4


def test_bootstrap_in_every_format(prefs):
    args = ["aggregate", "-P", prefs, "-m", "ap,rpp", "--bootstrap", "100", "--seed", "1"]
    records = [r for r in json_lines(run_cli(*args).stdout) if "tier" in r]
    tsv = pd.read_csv(io.StringIO(run_cli(*args, "--format", "tsv").stdout), sep="\t")
    assert list(tsv.columns) == ["sample", "measure", "method", "run", "rank", "score", "rank_low", "rank_high", "tier",
                                 "p_rank_1", "rank_probabilities"]
    assert tsv.run.tolist() == [r["run"] for r in records] and tsv.tier.tolist() == [r["tier"] for r in records]
    assert tsv.p_rank_1.tolist() == [r["rank_probabilities"][0] for r in records]
    assert [[float(p) for p in text.split(",")] for text in tsv.rank_probabilities] == \
        [r["rank_probabilities"] for r in records]
    table = run_cli(*args, "--format", "table").stdout.splitlines()
    assert table[0].split() == ["measure", "method", "run", "rank", "95%", "interval", "tier", "P(rank", "1)"]
    first = records[0]
    assert table[2].split() == ["ap", "mean", first["run"], str(first["rank"]),
                                f"{first['rank_low']}–{first['rank_high']}", str(first["tier"]),
                                f"{first['rank_probabilities'][0]:.4f}"]
    assert len(table) == 2 + 12 + 2
    assert "| ap | mean |" in run_cli(*args, "--format", "markdown").stdout
    assert r"\begin{tabular}{llllrrr}" not in run_cli(*args, "--format", "latex").stdout
    assert r"ap & mean & " in run_cli(*args, "--format", "latex").stdout
    result = run_cli(*args, "-q", "--format", "tsv")
    assert result.exit_code == 2 and "per-query orderings (-q) need jsonl" in result.stderr and result.stdout == ""


def test_bootstrap_requests_that_cannot_be_met(prefs, tmp_path):
    with pytest.raises(UsageError, match="bootstrap must be a number of resamples"):
        list(aggregate(prefs, bootstrap=0))
    result = run_cli("aggregate", "-P", prefs, "--bootstrap", "0")
    assert result.exit_code == 2 and result.stdout == ""


def test_robust03_thousand_resamples(tmp_path):
    """The 17 robust03 runs, 1000 resamples: every ordering's tiers partition its runs in order."""
    data = robust03_or_skip()
    runs = sorted(str(path) for path in (data / "runs").glob("input.*.gz"))
    path = tmp_path / "r03.jsonl"
    assert run_cli("eval", "-q", "-R", data / "qrels.txt", "-m", "ap,rpp", "-o", path, *runs).exit_code == 0
    records = list(aggregate(str(path), bootstrap=1000, seed=1, summary=False))
    assert len(records) == 3 * 17
    for start in range(0, len(records), 17):
        ordering = records[start:start + 17]
        assert [r["rank"] for r in ordering] == sorted(r["rank"] for r in ordering)
        assert [r["tier"] for r in ordering] == sorted(r["tier"] for r in ordering)
        assert all(sum(r["rank_probabilities"]) == pytest.approx(1.0) for r in ordering)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.sampled_from([0.0, 0.5, 1.0, None])),
                min_size=1, max_size=25),
       st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.sampled_from([-1, 0, 1])),
                max_size=25))
def test_any_small_collection_gives_consistent_intervals(metric_cells, pair_cells):
    """Random metric and pair lines (runs missing from queries, ties everywhere): every ordering's
    records cover its runs, with ranks, intervals and tiers that agree with each other."""
    from prefeval.errors import InputError
    from prefeval.io.evallines import eval_lines_from_records

    lines = {(q, r): {"qid": f"q{q}", "run": f"r{r}", "sample": 0, "type": "metric", **({} if v is None else {"m": v})}
             for q, r, v in metric_cells}
    pairs = {(q, a, b): {"qid": f"q{q}", "runi": f"r{a}", "runj": f"r{b}", "sample": 0, "type": "preference", "p": v}
             for q, a, b, v in pair_cells if a != b}
    records = list(enumerate([*lines.values(), *pairs.values()], start=1))
    try:
        source = eval_lines_from_records("<test>", records)
        out = list(aggregate(source, bootstrap=25, seed=3, summary=False))
    except InputError:
        return  # a measure with no values at all, or no per-query lines: reported, not ordered
    by_ordering: dict[tuple[str, str], list[dict]] = {}
    for record in out:
        by_ordering.setdefault((record["measure"], record["method"]), []).append(record)
    for rows in by_ordering.values():
        assert [r["rank"] for r in rows] == sorted(r["rank"] for r in rows)
        assert [r["tier"] for r in rows] == sorted(r["tier"] for r in rows) and rows[0]["tier"] == 1
        for r in rows:
            assert 1 <= r["rank_low"] <= r["rank_high"] <= len(r["rank_probabilities"])
            assert sum(r["rank_probabilities"]) == pytest.approx(1.0)
