"""Kendall's τ between orderings (against scipy), discordant pairs, and ``aggregate --correlations``."""

from __future__ import annotations

import numpy as np
import orjson
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES, write_json_lines
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import prefeval
from prefeval.analyses.aggregate import correlation_records
from prefeval.analyses.orderings import discordant_pairs, kendall_tau, ordering_by
from prefeval.cli import main


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=9))
def test_kendall_tau_is_scipys_tau_b(pairs):
    first, second = (np.array(side, dtype=float) for side in zip(*pairs))
    runs = [f"r{i}" for i in range(len(pairs))]
    expected = stats.kendalltau(first, second).statistic
    order_a, scores_a = ordering_by(first, runs)
    order_b, scores_b = ordering_by(second, runs)
    value = kendall_tau(order_a, order_b, scores_a, scores_b)
    if np.isnan(expected):  # one side ties every run: no pair is ordered, and prefeval says 0
        assert value == 0.0
    else:
        assert value == pytest.approx(expected, abs=1e-12)


def test_discordant_pairs_skip_ties_and_follow_the_first_ordering():
    first = {"A": 4.0, "B": 3.0, "C": 2.0, "D": 1.0}
    second = {"A": 1.0, "B": 3.0, "C": 3.0 + 1e-12, "D": 2.0}
    # second: B and C tie (within 1e-9) above D above A; B, C tied is not discordant
    assert discordant_pairs(first, second) == [("A", "B"), ("A", "C"), ("A", "D")]
    assert discordant_pairs(first, {"A": 1.0, "B": 2.0, "C": 4.0, "D": 3.0}) == [
        ("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D")]
    assert discordant_pairs(first, first) == []
    with pytest.raises(ValueError):
        discordant_pairs(first, {"A": 1.0})


def metric_lines(values: dict[str, dict[str, list[float]]]) -> list[dict]:
    """Eval metric lines: values[measure][run] = per-query values."""
    runs = next(iter(values.values()))
    lines = []
    for q in range(len(next(iter(runs.values())))):
        for run in runs:
            lines.append({"qid": f"q{q}", "run": run, "sample": 0, "type": "metric",
                          **{measure: by_run[run][q] for measure, by_run in values.items()}})
    return lines



def test_aggregate_correlations_between_every_two_measures(tmp_path):
    values = {
        "a": {"A": [3, 3], "B": [2, 2], "C": [1, 1]},
        "b": {"A": [1, 1], "B": [2, 2], "C": [3, 3]},
        "c": {"A": [2, 2], "B": [1, 1], "C": [1, 1]},
    }
    lines = metric_lines(values)
    lines += [{"qid": "q0", "runi": x, "runj": y, "sample": 0, "type": "preference", "p": p}
              for x, y, p in (("A", "B", 1.0), ("A", "C", 1.0), ("B", "C", 1.0))]
    records = list(prefeval.aggregate(write_json_lines(tmp_path / "lines", lines), correlations=True))
    summary, correlations = records[0], records[1:]
    assert summary["qid"] == "all" and "a" in summary
    found = {(r["measure_a"], r["method_a"], r["measure_b"], r["method_b"]): r["kendall_tau"] for r in correlations}
    assert found == {
        ("a", "mean", "b", "mean"): -1.0,
        ("a", "mean", "c", "mean"): pytest.approx(2 / np.sqrt(3 * 2)),  # c ties B and C: tau-b
        ("a", "mean", "p", "mc4"): 1.0,
        ("a", "mean", "p", "borda"): 1.0,
        ("b", "mean", "c", "mean"): pytest.approx(-2 / np.sqrt(3 * 2)),
        ("b", "mean", "p", "mc4"): -1.0,
        ("b", "mean", "p", "borda"): -1.0,
        ("c", "mean", "p", "mc4"): pytest.approx(2 / np.sqrt(3 * 2)),
        ("c", "mean", "p", "borda"): pytest.approx(2 / np.sqrt(3 * 2)),
    }
    assert list(correlations[0]) == ["qid", "sample", "measure_a", "measure_b", "method_a", "method_b", "kendall_tau"]
    only = list(prefeval.aggregate(write_json_lines(tmp_path / "lines", lines), summary=False, correlations=True))
    assert only == correlations


def test_correlation_needs_two_runs_in_common():
    summary = {"qid": "all", "sample": 0,
               "a": {"type": "metric", "mean": ["A", "B"], "scores": {"mean": {"A": 1.0, "B": 0.0}}},
               "b": {"type": "metric", "mean": ["B", "C"], "scores": {"mean": {"B": 1.0, "C": 0.0}}}}
    assert list(correlation_records(summary)) == []  # one run in common orders no pair: no τ, no line


def test_cli_correlations_on_the_examples(tmp_path):
    runs = [str(EXAMPLES / "runs" / name) for name in ("bm25", "dense", "hybrid", "random")]
    prefs = tmp_path / "prefs.jsonl"
    runner = CliRunner()
    assert runner.invoke(main, ["eval", "-q", "-R", str(EXAMPLES / "qrels.txt"), "-m", "rpp,ap,ndcg", "-o", str(prefs),
                                *runs]).exit_code == 0
    result = runner.invoke(main, ["aggregate", "-P", str(prefs), "--correlations", "-n"])
    assert result.exit_code == 0, result.output
    records = [orjson.loads(line) for line in result.stdout.splitlines()]
    # rpp (mc4, borda) × ap, rpp × ndcg, ap × ndcg
    assert len(records) == 2 + 2 + 1
    assert all(-1.0 <= r["kendall_tau"] <= 1.0 for r in records)


def test_correlations_between_statistics_of_one_metric(tmp_path):
    values = {"m": {"A": [1.0, 1.0, 0.0], "B": [0.6, 0.6, 0.6], "C": [0.2, 0.5, 0.9]}}
    path = write_json_lines(tmp_path / "lines", metric_lines(values))
    records = list(prefeval.aggregate(path, ["m", "m:median", "m:min"], correlations=True, summary=False))
    found = {(r["measure_a"], r["method_a"], r["measure_b"], r["method_b"]): r["kendall_tau"] for r in records}
    # means A 0.667, B 0.6, C 0.533; medians A 1, B 0.6, C 0.5; minima B 0.6, C 0.2, A 0
    assert found == {("m", "mean", "m:median", "median"): 1.0,
                     ("m", "mean", "m:min", "min"): pytest.approx(-1 / 3),
                     ("m:median", "median", "m:min", "min"): pytest.approx(-1 / 3)}
