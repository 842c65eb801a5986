"""Summary statistics over queries (``eval --summary``, ``aggregate -m ap:median``): hand-computed values,
the weighted definitions against the expanded sample, and every eval format."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from conftest import QRELS, RUNS, json_lines, run_cli, write_json_lines, write_text
from contract import assert_one_line_error
from hypothesis import given, settings
from hypothesis import strategies as st

import prefeval
from prefeval.engine.evaluation import Evaluation
from prefeval.errors import UsageError
from prefeval.io.keys import statistic_key
from prefeval.measures.summaries import STATISTICS, check_statistics, split_statistic, summarise
from prefeval.report.eval_lines import evaluation_records


def one(statistic: str, values) -> float:
    return float(summarise(statistic, np.array(values, dtype=float)[:, None])[0])


def test_hand_computed_values():
    values = [0.4, 0.1, 0.9, 0.0, 0.2]
    assert one("mean", values) == pytest.approx(0.32)
    assert one("median", values) == 0.2
    assert one("median", [0.4, 0.1, 0.9, 0.0]) == pytest.approx(0.25)  # the two middle values, averaged
    assert one("min", values) == 0.0
    assert one("q10", values) == pytest.approx(0.04)  # h = 0.4: 0.0 + 0.4 · (0.1 − 0.0)
    assert one("q10", [3.0]) == 3.0


def test_cvar10_counts_the_boundary_query_for_its_fraction():
    assert one("cvar10", [0.4, 0.1, 0.9, 0.0, 0.2]) == 0.0  # N <= 10: the worst query
    assert one("cvar10", [0.7]) == 0.7  # exactly: no 0.6999999999999998 from 0.07 / 0.1
    assert one("cvar10", [0.3] * 30) == 0.3
    assert one("q10", np.arange(31) / 10) == 0.3  # h = 30 / 10 = 3 exactly: no interpolation noise
    fifty = np.arange(50) / 50.0
    assert one("cvar10", fifty) == pytest.approx(fifty[:5].mean())  # 0.1 · 50 = 5 queries exactly
    fifteen = np.arange(1, 16) / 10.0  # A = 1.5: the worst, and half of the second worst
    assert one("cvar10", fifteen) == pytest.approx((0.1 + 0.5 * 0.2) / 1.5)
    twenty_five = np.arange(1, 26, dtype=float)[::-1]
    assert one("cvar10", twenty_five) == pytest.approx((1 + 2 + 0.5 * 3) / 2.5)


def test_gini_hand_computed_and_its_edge_cases():
    assert one("gini", [1.0, 2.0, 3.0]) == pytest.approx(8 / 36)  # Σ|xi − xj| = 8 over 9 ordered pairs; 2 · 9 · 2
    assert one("gini", [0.0, 0.0, 0.0, 1.0]) == pytest.approx(0.75)  # one query holds everything: 1 − 1/n
    assert one("gini", [0.0, 0.0, 0.0]) == 0.0  # all zero: perfectly even, not NaN
    assert one("gini", [0.1] * 7) == 0.0  # equal values give exactly 0, not rounding noise
    with pytest.raises(UsageError, match="non-negative"):
        one("gini", [0.5, -0.1])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0, allow_subnormal=False), min_size=1, max_size=12))
def test_gini_is_the_mean_absolute_difference_over_twice_the_mean(values):
    """(Subnormal values are left out: the brute-force formula's 2 n² mean underflows to 0 there, and
    gives inf, where prefeval's value, computed without that product, is right.)"""
    x = np.array(values)
    expected = 0.0 if x.sum() == 0 else np.abs(x[:, None] - x[None, :]).sum() / (2 * len(x) ** 2 * x.mean())
    assert one("gini", values) == pytest.approx(expected, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-5.0, 5.0), min_size=1, max_size=12), st.sampled_from(["median", "q10", "min", "mean"]))
def test_unweighted_quantiles_are_numpys(values, statistic):
    expected = {"median": np.median, "q10": lambda x: np.quantile(x, 0.1), "min": np.min, "mean": np.mean}[statistic]
    assert one(statistic, values) == pytest.approx(float(expected(np.array(values))), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_weights_are_the_expanded_sample(data):
    """summarise with integer weights equals summarise on the sample with each value repeated."""
    num_queries = data.draw(st.integers(1, 8))
    values = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 0.3, np.nan]),
                                         min_size=num_queries * 2, max_size=num_queries * 2))).reshape(num_queries, 2)
    weights = np.array(data.draw(st.lists(st.integers(0, 3), min_size=num_queries * 3,
                                          max_size=num_queries * 3))).reshape(3, num_queries)
    for statistic in STATISTICS:
        weighted = summarise(statistic, values, weights)
        for b, row in enumerate(weights):
            expanded = values[np.repeat(np.arange(num_queries), row)]
            expected = summarise(statistic, expanded) if len(expanded) else np.full(2, np.nan)
            np.testing.assert_allclose(weighted[b], expected, atol=1e-12, equal_nan=True, err_msg=statistic)


def test_runs_without_values_are_nan_and_missing_queries_are_left_out():
    values = np.array([[0.5, np.nan], [0.1, np.nan], [np.nan, np.nan]])
    for statistic in STATISTICS:
        result = summarise(statistic, values)
        assert np.isnan(result[1])
    assert summarise("median", values)[0] == pytest.approx(0.3)


def test_names():
    assert statistic_key("ap", "median") == "ap:median" and statistic_key("ap", "mean") == "ap"
    assert split_statistic("ap:median") == ("ap", "median")
    assert split_statistic("ndcg@10:cvar10") == ("ndcg@10", "cvar10")
    assert split_statistic("ap") == ("ap", None) and split_statistic("ap:nope") == ("ap:nope", None)
    assert check_statistics(()) == ("mean",) and check_statistics(None) == ("mean",)
    assert check_statistics("gini") == ("gini",)
    assert check_statistics(["median", "mean", "median"]) == ("median", "mean")
    with pytest.raises(UsageError, match="unknown summary statistic 'max'"):
        check_statistics(["max"])


# --- eval --summary ---------------------------------------------------------------------------------

def test_eval_summary_mean_alone_is_todays_output():
    plain = run_cli("eval", "-R", QRELS, "-m", "ap,rpp", *RUNS)
    assert plain.exit_code == 0
    assert run_cli("eval", "-R", QRELS, "-m", "ap,rpp", "--summary", "mean", *RUNS).stdout == plain.stdout


def test_eval_summary_lines_hold_the_statistics_of_the_per_query_values():
    per_query = json_lines(run_cli("eval", "-q", "-n", "-R", QRELS, "-m", "ap,ndcg,rpp", *RUNS).stdout)
    result = run_cli("eval", "-R", QRELS, "-m", "ap,ndcg,rpp", "--summary", "mean", "--summary", "median",
                     "--summary", "cvar10", "--summary", "gini", *RUNS)
    assert result.exit_code == 0, result.output
    lines = json_lines(result.stdout)
    assert [("runi" in r, "ap" in r, "ap:median" in r) for r in lines] == (
        [(True, True, False)] * 6 + [(False, True, False)] * 4 + [(False, False, True)] * 4)
    extra = lines[-4:]
    assert list(extra[0]) == ["qid", "run", "sample", "type", "ap:median", "ndcg:median", "ap:cvar10", "ndcg:cvar10",
                              "ap:gini", "ndcg:gini"]
    for record in extra:
        for metric in ("ap", "ndcg"):
            values = [r[metric] for r in per_query if r.get("run") == record["run"]]
            for statistic in ("median", "cvar10", "gini"):
                expected = one(statistic, values)
                assert record[f"{metric}:{statistic}"] == pytest.approx(expected, abs=1e-15)
    assert extra[0]["ap:median"] == pytest.approx(np.median([r["ap"] for r in per_query if r.get("run") == "bm25"]))


def test_eval_summary_without_the_mean_drops_the_mean_lines():
    lines = json_lines(run_cli("eval", "-R", QRELS, "-m", "ap,rpp", "--summary", "min", *RUNS).stdout)
    assert [sorted(set(r) - {"qid", "runi", "runj", "run", "sample", "type"}) for r in lines] == (
        [["ap", "rpp"]] * 6 + [["ap:min"]] * 4)


def test_eval_summary_in_every_format():
    args = ["eval", "-R", QRELS, "-m", "ap,rpp", "--summary", "mean", "--summary", "q10", *RUNS]
    lines = json_lines(run_cli(*args).stdout)
    q10 = {r["run"]: r["ap:q10"] for r in lines if "ap:q10" in r}
    tsv = run_cli(*args, "--format", "tsv").stdout.splitlines()
    assert [line.split("\t")[0] for line in tsv if "ap:q10" in line] == list(q10)
    assert [float(line.split("\t")[-1]) for line in tsv if "ap:q10" in line] == pytest.approx(
        [round(v, 4) for v in q10.values()])
    table = run_cli(*args, "--format", "table").stdout.splitlines()
    assert table[0].split() == ["run", "ap", "ap:q10", "rpp"]
    assert table[2].split()[2] == f"{q10['bm25']:.4f}"
    assert "METRIC:q10: the 10% quantile" in run_cli(*args, "--format", "table").stdout
    assert "| ap:q10 |" in run_cli(*args, "--format", "markdown").stdout
    assert r"ap:q10 & rpp \\" in run_cli(*args, "--format", "latex").stdout


def test_eval_summary_gini_column_bolds_the_lowest():
    markdown = run_cli("eval", "-R", QRELS, "-m", "ap", "--summary", "gini", "--format", "markdown", *RUNS).stdout
    lines = json_lines(run_cli("eval", "-R", QRELS, "-m", "ap", "--summary", "gini", *RUNS).stdout)
    lowest = min((r for r in lines if "ap:gini" in r), key=lambda r: r["ap:gini"])
    assert f"| {lowest['run']} | **{lowest['ap:gini']:.4f}** |" in markdown


def test_eval_summary_does_not_depend_on_jobs():
    args = ["eval", "-q", "-R", QRELS, "-m", "ap,ndcg,rpp", "--summary", "median", "--summary", "gini", *RUNS]
    assert run_cli(*args, "--jobs", "1").stdout == run_cli(*args, "--jobs", "2").stdout


def test_eval_summary_records_are_the_json_lines():
    evaluation = Evaluation.from_files(QRELS, RUNS, ["ap", "rpp"], summary=("median", "mean"), jobs=1)
    records = list(evaluation_records(evaluation, per_query=False))
    lines = json_lines(run_cli("eval", "-R", QRELS, "-m", "ap,rpp", "--summary", "median", "--summary", "mean",
                               *RUNS).stdout)
    assert records == lines


def test_eval_summary_requests_that_cannot_be_met():
    result = run_cli("eval", "-n", "-R", QRELS, "--summary", "median", *RUNS)
    assert result.exit_code == 2 and "--summary chooses the statistics of the summary, which -n drops" in result.stderr
    assert result.stdout == ""
    result = run_cli("eval", "-R", QRELS, "--summary", "max", *RUNS)
    assert result.exit_code == 2 and "max" in result.stderr
    with pytest.raises(UsageError, match="unknown summary statistic"):
        Evaluation.from_files(QRELS, RUNS, "ap", summary="average")


def test_aggregate_orders_by_a_statistic_of_the_eval_lines(tmp_path):
    prefs = tmp_path / "prefs.jsonl"
    run_cli("eval", "-q", "-R", QRELS, "-m", "ap,rpp", "--summary", "median", "-o", prefs, *RUNS)
    medians = {r["run"]: r["ap:median"] for r in json_lines(prefs.read_text()) if "ap:median" in r}
    (summary,) = json_lines(run_cli("aggregate", "-P", prefs, "-m", "ap:median,map:gini").stdout)
    assert summary["ap:median"]["scores"]["median"] == pytest.approx(medians)
    assert summary["ap:median"]["median"] == sorted(medians, key=lambda run: -medians[run])
    ginis = summary["ap:gini"]["scores"]["gini"]
    assert summary["ap:gini"]["gini"] == sorted(ginis, key=lambda run: ginis[run])  # lowest first
    tsv = pd.read_csv(io.StringIO(run_cli("aggregate", "-P", prefs, "-m", "ap:gini", "--format", "tsv").stdout),
                      sep="\t")
    assert tsv.position.tolist() == [1, 2, 3, 4] and tsv.method.tolist() == ["gini"] * 4


def test_the_api_takes_the_summary_option_under_its_cli_name():
    means = prefeval.evaluate(QRELS, RUNS, "ap", per_query=False, summary=["mean", "median"])
    per_query = prefeval.evaluate(QRELS, RUNS, "ap")
    medians = per_query.groupby("run", sort=False)["ap"].median()
    assert list(means.columns) == ["sample", "run", "qid", "ap", "ap:median"]
    assert means["ap:median"].tolist() == medians[means["run"]].tolist()


def test_eval_refuses_gini_of_a_metric_that_can_be_negative_before_any_output(tmp_path):
    """The issue's case: the per-query lines were written before the summary failed, and the message
    showed ``np.float64(-1.0)``. The measure's declared range says it can be negative (utility's is
    [-inf, inf]): refused before anything is read, whatever the values, with the measure named."""
    qrels = write_text(tmp_path / "qrels", ["q1 0 d1 1", "q2 0 d2 1"])
    run = write_text(tmp_path / "run", ["q1 Q0 d1 1 1 A", "q2 Q0 d2 1 1 A"])
    message = assert_one_line_error(run_cli("eval", "-q", "-m", "utility.-1,0,0,0", "--summary", "gini", "-R", qrels,
                                            run), 2)
    assert message == ("--summary gini: the Gini coefficient is defined for non-negative values only, and "
                       "utility@-1.0,0.0,0.0,0.0 can be negative (its values lie in [-inf, inf])")
    with pytest.raises(UsageError, match="ndcg@gains=0:-1 can be negative"):  # a negative gain: refused unread
        Evaluation.from_files(str(tmp_path / "missing"), [run], ["ndcg@gains=0:-1;1:1"], summary="gini")
    assert run_cli("eval", "-m", "ap", "--summary", "gini", "-R", qrels, run).exit_code == 0  # ap is in [0, 1]


def test_aggregate_refuses_gini_of_negative_values_before_any_output(tmp_path):
    """aggregate reads values of any sign: a negative one under ``METRIC:gini`` is refused before the
    per-query orderings are written, naming the file, the measure, the run and the query."""
    lines = [{"qid": qid, "run": run, "sample": 0, "type": "metric", "ap": value}
             for qid, run, value in (("q1", "A", 0.5), ("q1", "B", -1), ("q2", "A", 0.25), ("q2", "B", 0.5))]
    prefs = write_json_lines(tmp_path / "prefs.jsonl", [dict(line, qid=f"{line['qid']}-{k}")  # over a batch
                                                        for k in range(3000) for line in lines])
    message = assert_one_line_error(run_cli("aggregate", "-q", "-P", prefs, "-m", "ap:gini"), 1)
    assert message == (f"{prefs}: ap:gini: the Gini coefficient is defined for non-negative values only, and ap is "
                       "-1.0 for run B on query q1-0 (sample 0)")
    assert run_cli("aggregate", "-q", "-P", prefs, "-m", "ap:median").exit_code == 0


def test_the_gini_refusal_of_raw_values_shows_numbers_as_numbers():
    with pytest.raises(UsageError) as refused:
        summarise("gini", np.array([[-1.0], [2.0]]))
    assert str(refused.value) == "the Gini coefficient is defined for non-negative values only, and -1.0 is negative"
