"""``aggregate`` on hand-made eval lines: orderings with ties, a Condorcet winner, a cycle, errors."""

from __future__ import annotations

import gzip
import warnings

import orjson
import pytest
from conftest import write_json_lines

from prefeval import aggregate
from prefeval.errors import InputError, UsageError


def pair(qid, a, b, sample=0, **values):
    return {"qid": qid, "runi": a, "runj": b, "sample": sample, "type": "preference", **values}


def metric(qid, run, sample=0, **values):
    return {"qid": qid, "run": run, "sample": sample, "type": "metric", **values}



def condorcet_lines():
    """A beats B and C on every query; B and C tie on q1 and swap on q2, q3 (B wins 2 of 3)."""
    lines = []
    for qid, bc in (("q1", 0.0), ("q2", 0.5), ("q3", 0.25), ("q4", -0.5)):
        lines += [pair(qid, "A", "B", pref=1.0), pair(qid, "A", "C", pref=1.0), pair(qid, "B", "C", pref=bc)]
    lines += [{"qid": "all", "runi": "A", "runj": "B", "sample": 0, "pref": 1.0}]
    return lines


def test_per_query_orderings_and_scores(tmp_path):
    path = write_json_lines(tmp_path / "prefs", condorcet_lines())
    records = list(aggregate(path, per_query=True, summary=False))
    assert [r["qid"] for r in records] == ["q1", "q2", "q3", "q4"]
    # q1: net A = 2, B = -1 + 0, C = -1 - 0 -> B and C tie, ordered by name
    assert records[0]["pref"] == ["A", "B", "C"]
    assert records[0]["scores"]["pref"] == {"A": 2.0, "B": -1.0, "C": -1.0}
    assert records[3]["pref"] == ["A", "C", "B"]
    assert list(records[0]) == ["qid", "sample", "pref", "scores"]


def test_summary_condorcet_winner(tmp_path):
    path = write_json_lines(tmp_path / "prefs", condorcet_lines())
    (summary,) = aggregate(path, damping=0.0)
    result = summary["pref"]
    assert summary["qid"] == "all" and result["type"] == "preference"
    assert result["mc4"] == ["A", "B", "C"]
    assert result["scores"]["mc4"] == {"A": 1.0, "B": 0.0, "C": 0.0}
    # Borda: A 3 points x 4; B: 1.5 (tie) + 2 + 2 + 1; C: 1.5 + 1 + 1 + 2
    assert result["borda"] == ["A", "B", "C"]
    assert result["scores"]["borda"] == {"A": 12.0, "B": 6.5, "C": 5.5}


def test_summary_cycle_is_a_tie(tmp_path):
    lines = []
    for qid, order in (("q1", "ABC"), ("q2", "BCA"), ("q3", "CAB")):
        score = {run: 3 - order.index(run) for run in "ABC"}
        lines += [metric(qid, run, m=float(score[run])) for run in "ABC"]
        lines += [pair(qid, a, b, pref=float(score[a] - score[b])) for a, b in ("AB", "AC", "BC")]
    path = write_json_lines(tmp_path / "prefs", lines)
    (summary,) = aggregate(path)
    assert summary["pref"]["mc4"] == ["A", "B", "C"]
    assert summary["pref"]["scores"]["mc4"] == pytest.approx({"A": 1 / 3, "B": 1 / 3, "C": 1 / 3})
    assert summary["pref"]["scores"]["borda"] == {"A": 6.0, "B": 6.0, "C": 6.0}
    assert summary["m"] == {"type": "metric", "mean": ["A", "B", "C"],
                            "scores": {"mean": {"A": 2.0, "B": 2.0, "C": 2.0}}}


def test_metrics_use_metric_lines_and_preferences_pair_lines(tmp_path):
    lines = [pair("q1", "A", "B", ap=-0.5, rpp=0.2), metric("q1", "A", ap=0.1), metric("q1", "B", ap=0.6)]
    path = write_json_lines(tmp_path / "prefs.gz", [])
    (tmp_path / "prefs.gz").write_bytes(gzip.compress(b"".join(orjson.dumps(r) + b"\n" for r in lines)))
    (summary,) = aggregate(path)
    assert list(summary) == ["qid", "sample", "ap", "rpp"]
    assert summary["ap"]["type"] == "metric" and summary["ap"]["mean"] == ["B", "A"]
    assert summary["rpp"]["type"] == "preference" and summary["rpp"]["borda"] == ["A", "B"]


def test_every_sample_is_aggregated_with_its_number(tmp_path):
    lines = [pair("q1", "A", "B", sample=0, pref=1.0), pair("q1", "A", "B", sample=1, pref=-1.0)]
    path = write_json_lines(tmp_path / "prefs", lines)
    summaries = list(aggregate(path))
    assert [(s["sample"], s["pref"]["borda"]) for s in summaries] == [(0, ["A", "B"]), (1, ["B", "A"])]
    assert [s["sample"] for s in aggregate(path, num_samples=1)] == [0]


def test_query_subsamples_are_reproducible(tmp_path):
    lines = [pair(f"q{q}", "A", "B", pref=float(q % 3 - 1)) for q in range(40)]
    path = write_json_lines(tmp_path / "prefs", lines)
    first = list(aggregate(path, per_query=True, query_fraction=0.25, num_samples=3, seed=5))
    again = list(aggregate(path, per_query=True, query_fraction=0.25, num_samples=3, seed=5))
    other = list(aggregate(path, per_query=True, query_fraction=0.25, num_samples=3, seed=6))
    assert first == again and first != other
    per_query = [r for r in first if r["qid"] != "all"]
    assert len(per_query) == 3 * 10
    assert [r["sample"] for r in first if r["qid"] == "all"] == [0, 1, 2]


def test_measures_can_be_chosen(tmp_path):
    path = write_json_lines(tmp_path / "prefs", [pair("q1", "A", "B", rpp=1.0, ap=0.5)])
    (summary,) = aggregate(path, measures=["ap"])
    assert list(summary) == ["qid", "sample", "ap"]
    with pytest.raises(UsageError, match="ndcg.*not in.*found: rpp, ap"):
        list(aggregate(path, measures=["ndcg"]))


@pytest.mark.parametrize("records, message", [
    ([{"qid": "all", "runi": "A", "runj": "B", "sample": 0, "rpp": 1.0}],
     "no per-query lines: it holds only summary lines; run `prefeval eval` with -q"),
    ([{"qid": "q1", "run": "A", "sample": 0, "ap": 1.0}], "'type' must be"),
    ([pair("q1", "A", "B", rpp="high")], "value of 'rpp' must be a number"),
    ([{"qid": "q1", "runi": "A", "sample": 0, "type": "preference", "rpp": 1.0}], "preference line without 'runj'"),
])
def test_bad_lines_are_errors_with_file_and_line(tmp_path, records, message):
    path = write_json_lines(tmp_path / "prefs", records)
    with pytest.raises(InputError, match=message) as caught:
        list(aggregate(path))
    assert caught.value.source == path


def test_malformed_json_names_the_line(tmp_path):
    path = tmp_path / "prefs"
    path.write_bytes(orjson.dumps(pair("q1", "A", "B", rpp=1.0)) + b"\n{not json\n")
    with pytest.raises(InputError, match="malformed JSON") as caught:
        list(aggregate(str(path)))
    assert caught.value.line == 2


def test_a_preference_without_pair_lines_is_an_error_not_a_tie(tmp_path):
    # sample 0 has pair lines; sample 1 only metric lines (as eval writes for one run): no rpp ordering
    lines = [pair("q1", "A", "B", sample=0, rpp=1.0), metric("q1", "A", sample=0, ap=0.5),
             metric("q1", "B", sample=0, ap=0.2), metric("q1", "A", sample=1, ap=0.1),
             metric("q1", "B", sample=1, ap=0.3)]
    path = write_json_lines(tmp_path / "prefs", lines)
    with pytest.raises(InputError, match="sample 1 has no pair lines: the preference rpp orders runs by their pairs"):
        list(aggregate(path))
    assert [s["ap"]["mean"] for s in aggregate(path, measures=["ap"])] == [["A", "B"], ["B", "A"]]
    # pair lines without the measure on any of them
    path = write_json_lines(tmp_path / "prefs2", [pair("q1", "A", "B", sample=0, rpp=1.0),
                                                  pair("q1", "A", "B", sample=1, lexiprecision=1)])
    with pytest.raises(InputError, match="sample 1 has no pair lines with values of rpp"):
        list(aggregate(path, measures=["rpp"]))
    # a preference missing from some queries only is ordered on the queries that have it
    lines = [pair("q1", "A", "B", rpp=1.0), pair("q2", "A", "B", lexiprecision=1), metric("q1", "A", ap=0.5)]
    assert next(aggregate(write_json_lines(tmp_path / "prefs3", lines), measures=["rpp"]))["rpp"]["mc4"] == ["A", "B"]


def test_a_query_named_all_is_a_query_in_every_format(tmp_path):
    """aggregate tells its records apart by their keys: a per-query ordering of a query named ``all`` is
    written as one (the reader of eval lines decides which lines are queries)."""
    from prefeval.io.evallines import eval_lines_from_records
    from prefeval.io.records import aggregate_record_kind
    from prefeval.report.orderings import orderings_tsv_lines

    records = [(n, r) for n, r in enumerate([metric("q1", "A", ap=0.5), metric("q1", "B", ap=0.2),
                                            metric("x", "A", ap=0.1), metric("x", "B", ap=0.3)], start=1)]
    lines = eval_lines_from_records("<test>", records)
    lines.samples[0].qids[1] = "all"  # what a reader that keeps the query gives
    per_query = list(aggregate(lines, per_query=True, summary=False))
    assert [(r["qid"], aggregate_record_kind(r)) for r in per_query] == [("q1", "query"), ("all", "query")]
    tsv = list(orderings_tsv_lines(aggregate(lines, per_query=True)))
    assert [row.split("\t")[1:] for row in tsv[1:]] == [
        ["q1", "ap", "query", "1", "A", "0.5"], ["q1", "ap", "query", "2", "B", "0.2"],
        ["all", "ap", "query", "1", "B", "0.3"], ["all", "ap", "query", "2", "A", "0.1"],
        ["all", "ap", "mean", "1", "A", "0.3"], ["all", "ap", "mean", "2", "B", "0.25"]]


def test_tied_runs_share_a_position_in_tsv_as_in_the_table(tmp_path):
    from prefeval.report.orderings import orderings_table, orderings_tsv_lines

    lines = [metric("q1", run, m=value) for run, value in (("A", 1.0), ("B", 1.0), ("C", 0.5))]
    lines += [metric("q2", run, m=value) for run, value in (("A", 0.0), ("B", 1e-12), ("C", 0.25))]
    path = write_json_lines(tmp_path / "prefs", lines)
    tsv = [line.split("\t") for line in orderings_tsv_lines(aggregate(path, per_query=True))]
    assert [(row[1], row[4], row[5]) for row in tsv[1:]] == [
        ("q1", "1", "A"), ("q1", "1", "B"), ("q1", "3", "C"),  # A and B tie
        ("q2", "1", "C"), ("q2", "2", "A"), ("q2", "2", "B"),  # 0 and 1e-12 tie (within 1e-9)
        ("all", "1", "A"), ("all", "1", "B"), ("all", "3", "C")]
    table = orderings_table(aggregate(path))
    assert [row[1] for row in table.rows] == ["1", "1", "3"]


def test_metrics_by_a_statistic(tmp_path):
    lines = []
    for q, values in enumerate([(1.0, 0.5), (1.0, 0.5), (0.2, 0.4), (0.0, 0.6)]):
        lines += [metric(f"q{q}", "A", ap=values[0]), metric(f"q{q}", "B", ap=values[1])]
    lines += [pair("q0", "A", "B", rpp=1.0)]
    path = write_json_lines(tmp_path / "prefs", lines)
    (summary,) = aggregate(path, measures=["ap", "ap:median", "AP:min,map:gini"])
    assert list(summary) == ["qid", "sample", "ap", "ap:median", "ap:min", "ap:gini"]
    assert summary["ap"]["mean"] == ["A", "B"]
    assert summary["ap"]["scores"]["mean"] == pytest.approx({"A": 0.55, "B": 0.5})
    assert summary["ap:median"] == {"type": "metric", "median": ["A", "B"],
                                    "scores": {"median": {"A": pytest.approx(0.6), "B": 0.5}}}
    assert summary["ap:min"]["min"] == ["B", "A"] and summary["ap:min"]["scores"]["min"] == {"B": 0.4, "A": 0.0}
    assert summary["ap:gini"]["gini"] == ["B", "A"]  # B is far more even: lowest Gini first
    with pytest.raises(UsageError, match="rpp:median: summary statistics are of metrics, and rpp is a preference"):
        list(aggregate(path, measures=["rpp:median"]))
    with pytest.raises(UsageError, match="ndcg not in"):
        list(aggregate(path, measures=["ndcg:median"]))


def test_correlations_of_orderings_without_two_common_runs_write_no_null(tmp_path):
    """τ compares the orders of pairs of runs: orderings sharing fewer than two runs (ap orders A only,
    B having no value of it) have none, and their line said ``"kendall_tau":null``; there is no line."""
    path = write_json_lines(tmp_path / "prefs", [metric("q1", "A", ap=0.5, ndcg=0.1), metric("q1", "B", ndcg=0.2),
                                                 metric("q2", "A", ap=0.25, ndcg=0.3), metric("q2", "B", ndcg=0.4)])
    records = list(aggregate(path, ["ap", "ndcg", "ndcg:median"], correlations=True, summary=False))
    assert records == [{"qid": "all", "sample": 0, "measure_a": "ndcg", "measure_b": "ndcg:median",
                        "method_a": "mean", "method_b": "median", "kendall_tau": 1.0}]


def test_bootstrap_of_constant_values_writes_numbers(tmp_path):
    """Every run equal on every query: each resample ties them all; ranks, intervals, tiers and
    probabilities are numbers (no null, no warning)."""
    lines = [metric(f"q{q}", run, ap=0.3) for q in range(6) for run in "ABC"]
    lines += [pair(f"q{q}", a, b, rpp=0.0) for q in range(6) for a, b in (("A", "B"), ("A", "C"), ("B", "C"))]
    path = write_json_lines(tmp_path / "prefs", lines)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        records = list(aggregate(path, ["ap", "ap:gini", "ap:cvar10", "rpp"], bootstrap=50, seed=1, correlations=True))
    assert b"null" not in b"".join(orjson.dumps(record) for record in records)
    intervals = [r for r in records if "rank_low" in r]
    assert len(intervals) == 5 * 3 and all((r["rank"], r["rank_low"], r["rank_high"], r["tier"]) == (1, 1, 1, 1)
                                           for r in intervals)
