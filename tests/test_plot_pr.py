"""``prefeval plot pr``: each run's interpolated precision-recall curve, checked against pytrec_eval's
iprec_at_recall, a reference written here from the definition, and values worked out by hand."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import orjson
import pytest
from conftest import QRELS, RUNS, example_eval_lines, run_cli, write_json_lines, write_qrels, write_run

from prefeval.errors import InputError, UsageError
from prefeval.report.plots import PLOT_KINDS, PlotRequest, run_styles

pytest.importorskip("matplotlib")

LEVELS = [level / 10 for level in range(11)]
ELEVEN = ",".join(f"iprec@{level:g}" for level in LEVELS)
RUN_NAMES = ["bm25", "dense", "hybrid", "random"]


def draw(path: str, **options):
    return PLOT_KINDS["pr"].draw(PlotRequest(path, **options))


def curves(figure) -> dict[str, tuple[list[float], list[float]]]:
    """The (x, y) data of every labelled line of the figure's one panel, by label."""
    (axes,) = figure.axes
    return {line.get_label(): ([float(x) for x in line.get_xdata()], [float(y) for y in line.get_ydata()])
            for line in axes.get_lines() if not line.get_label().startswith("_")}


def read_trec(path: str) -> dict[str, dict[str, float]]:
    """{qid: {docid: score}} of a run file."""
    scores: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text().splitlines():
        qid, _, docid, _, score, *_ = line.split()
        scores.setdefault(qid, {})[docid] = float(score)
    return scores


def read_qrels(path: str) -> dict[str, dict[str, int]]:
    judgments: dict[str, dict[str, int]] = {}
    for line in Path(path).read_text().splitlines():
        qid, _, docid, grade = line.split()
        judgments.setdefault(qid, {})[docid] = int(grade)
    return judgments


def reference_iprec(judgments: dict[str, int], scores: dict[str, float], recall: float, lround: bool) -> float:
    """Interpolated precision at ``recall`` from its definition, one query at a time: the run ordered
    as trec_eval orders it (score descending, ties by docid descending), the precision i / rank at
    the i-th relevant document, the best of them from the c-th relevant document on, c = recall · m
    made whole: ⌊recall · m + 0.9⌋ (trec_eval 9, pytrec_eval) or rounded half up (trec_eval 10),
    at least 1."""
    relevant = {docid for docid, grade in judgments.items() if grade > 0}
    ranking = sorted(scores, key=lambda docid: (scores[docid], docid), reverse=True)
    precisions, found = [], 0
    for rank, docid in enumerate(ranking, start=1):
        if docid in relevant:
            found += 1
            precisions.append(found / rank)
    scaled = recall * len(relevant)
    if lround:
        whole = math.floor(scaled) + (1 if scaled - math.floor(scaled) >= 0.5 else 0)
    else:
        whole = math.floor(scaled + 0.9)
    first = max(whole, 1)
    return max(precisions[first - 1:], default=0.0)


def judged_queries() -> list[str]:
    """The example queries with a relevant document (prefeval evaluates those; q107 has none)."""
    return [qid for qid, docs in read_qrels(QRELS).items() if any(grade > 0 for grade in docs.values())]


@pytest.fixture(scope="module")
def pr_lines(tmp_path_factory) -> str:
    return example_eval_lines(tmp_path_factory.mktemp("pr") / "pr.jsonl", ELEVEN)


@pytest.fixture(scope="module")
def pytrec_values() -> dict[str, dict[str, dict[str, float]]]:
    """pytrec_eval's iprec_at_recall of every example run: {run: {qid: {level key: value}}}."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    evaluator = pytrec_eval.RelevanceEvaluator(read_qrels(QRELS), {"iprec_at_recall"})
    return {name: evaluator.evaluate(read_trec(path)) for name, path in zip(RUN_NAMES, RUNS)}


def test_the_mean_curves_are_pytrec_eval_iprec_at_recall(pr_lines, pytrec_values):
    drawn = curves(draw(pr_lines))
    assert list(drawn) == RUN_NAMES
    queries = judged_queries()
    assert len(queries) == 7
    assert [(run, q) for run in RUN_NAMES for q in queries if q not in pytrec_values[run]] == [("hybrid", "q104")]
    for run in RUN_NAMES:
        xs, ys = drawn[run]
        assert xs == LEVELS
        # a query the run lacks scores 0, as with trec_eval -c (pytrec_eval leaves it out)
        expected = [np.mean([pytrec_values[run].get(qid, {}).get(f"iprec_at_recall_{level:.2f}", 0.0)
                             for qid in queries]) for level in LEVELS]
        np.testing.assert_allclose(ys, expected, rtol=0, atol=1e-12)
    # a few values of the examples, so that a change of data or definition shows: the best run at
    # recall 0 finds a relevant document first on every query; random at recall 1 never gets there
    assert drawn["dense"][1][0] == 1.0 and drawn["bm25"][1][0] == 1.0
    assert drawn["hybrid"][1][0] == pytest.approx(6 / 7)
    assert drawn["random"][1][-1] == 0.0


def test_one_query_is_its_own_curve(pr_lines, pytrec_values):
    for qid in ("q101", "q105"):
        drawn = curves(draw(pr_lines, query=qid))
        for run in RUN_NAMES:
            xs, ys = drawn[run]
            assert xs == LEVELS
            assert ys == pytest.approx([pytrec_values[run][qid][f"iprec_at_recall_{level:.2f}"] for level in LEVELS],
                                       abs=1e-12)
    assert curves(draw(pr_lines, query="q101"))["bm25"][1] != curves(draw(pr_lines, query="q105"))["bm25"][1]


def test_the_mean_of_the_per_query_lines_stands_in_for_missing_summary_lines(pr_lines, tmp_path):
    records = [orjson.loads(line) for line in Path(pr_lines).read_bytes().splitlines()]
    per_query = write_json_lines(tmp_path / "per_query.jsonl", [r for r in records if r["qid"] != "all"])
    summaries = write_json_lines(tmp_path / "summary.jsonl", [r for r in records if r["qid"] == "all"])
    assert len(records) > len(Path(per_query).read_bytes().splitlines()) > 0
    with_summary, without, summary_only = (curves(draw(path)) for path in (pr_lines, per_query, summaries))
    for run in RUN_NAMES:
        assert without[run][0] == with_summary[run][0] == summary_only[run][0] == LEVELS
        assert without[run][1] == pytest.approx(with_summary[run][1], abs=1e-12)
        assert summary_only[run][1] == with_summary[run][1]  # the summary lines as they are
    # the summary lines are what is drawn, where there are any: a changed summary shows
    changed = [r | {"iprec@0.5": 0.125} if r["qid"] == "all" and r.get("run") == "dense" else r for r in records]
    drawn = curves(draw(write_json_lines(tmp_path / "changed.jsonl", changed)))
    assert drawn["dense"][1][5] == 0.125 and drawn["bm25"][1] == with_summary["bm25"][1]


@pytest.fixture
def hand_made(tmp_path) -> tuple[str, str, str]:
    """Query q1: relevant d1, d2, d3 (d4 judged not relevant); q2: relevant e1.
    Run A ranks d1 1st, d2 3rd, d3 6th (precisions 1, 2/3, 1/2) and does not retrieve e1.
    Run B ranks d3, d2, d1 first (precision 1 throughout) and e1 2nd (1/2)."""
    qrels = write_qrels(tmp_path / "qrels.txt", {"q1": {"d1": 1, "d2": 2, "d3": 1, "d4": 0}, "q2": {"e1": 1}})
    run_a = write_run(tmp_path / "A", {"q1": {"d1": 9.0, "x1": 8.0, "d2": 7.0, "d4": 6.0, "x2": 5.0, "d3": 4.0},
                                       "q2": {"x3": 2.0}}, tag="A")
    run_b = write_run(tmp_path / "B", {"q1": {"d3": 9.0, "d2": 8.0, "d1": 7.0}, "q2": {"x4": 3.0, "e1": 2.0}},
                      tag="B")
    return qrels, run_a, run_b


def test_hand_computed_curves_with_both_roundings_of_the_levels(hand_made, tmp_path):
    qrels, run_a, run_b = hand_made
    path = tmp_path / "pr.jsonl"
    # prefeval's names, pytrec_eval's default rounding, and trec_eval's names (trec_eval 10 rounding)
    result = run_cli("eval", "-q", "-R", qrels, "-m", "iprec@1,iprec@0.4,iprec@0",
                     "-m", "iprec_at_recall.0.0,0.4,1.0", "-o", path, run_a, run_b)
    assert result.exit_code == 0, result.output
    figure = draw(str(path))
    drawn = curves(figure)
    default, trec_eval_10 = "iprec@r", "iprec@r, round_from=0.5"
    assert list(drawn) == [f"A · {default}", f"A · {trec_eval_10}", f"B · {default}", f"B · {trec_eval_10}"]
    # A on q1 at recall 0.4: m = 3, 0.4 · 3 = 1.2; ⌊1.2 + 0.9⌋ = 2: max(2/3, 1/2); lround(1.2) = 1: max(1, 2/3, 1/2)
    # A on q2: 0 everywhere; at recall 1 on q1, the 3rd relevant document: 1/2
    assert drawn[f"A · {default}"] == ([0.0, 0.4, 1.0], pytest.approx([1 / 2, 1 / 3, 1 / 4], abs=1e-15))
    assert drawn[f"A · {trec_eval_10}"] == ([0.0, 0.4, 1.0], pytest.approx([1 / 2, 1 / 2, 1 / 4], abs=1e-15))
    assert drawn[f"B · {default}"] == drawn[f"B · {trec_eval_10}"] == ([0.0, 0.4, 1.0], [0.75, 0.75, 0.75])
    (axes,) = figure.axes
    assert axes.get_title() == "interpolated precision at 3 recall levels, mean over queries"
    lines = {line.get_label(): line for line in axes.get_lines()}
    assert lines[f"A · {default}"].get_linestyle() != lines[f"A · {trec_eval_10}"].get_linestyle()
    assert lines[f"A · {default}"].get_color() == lines[f"A · {trec_eval_10}"].get_color() == \
        run_styles(["A"])["A"].colour
    assert lines[f"B · {default}"].get_color() == run_styles(["A", "B"])["B"].colour
    # one query, and one variant picked with -m (any name of its measures): plain run labels
    only = curves(draw(str(path), measures=("iprec_at_recall.0.0,0.4",), query="q1"))
    assert only == {"A": ([0.0, 0.4], [1.0, 1.0]), "B": ([0.0, 0.4], [1.0, 1.0])}


def test_trec_eval_names_of_the_eleven_levels_give_trec_eval_10_curves(tmp_path):
    names = "iprec_at_recall." + ",".join(f"{level:.1f}" for level in LEVELS)
    path = tmp_path / "pr.jsonl"
    result = run_cli("eval", "-q", "-R", QRELS, "-m", names, "-o", path, *RUNS)
    assert result.exit_code == 0, result.output
    drawn = curves(draw(str(path)))
    judgments, queries = read_qrels(QRELS), judged_queries()
    assert list(drawn) == RUN_NAMES  # one variant: the runs' names alone
    for name, run in zip(RUN_NAMES, RUNS):
        scores = read_trec(run)
        expected = [np.mean([reference_iprec(judgments[q], scores.get(q, {}), level, lround=True) for q in queries])
                    for level in LEVELS]
        assert drawn[name][0] == LEVELS
        np.testing.assert_allclose(drawn[name][1], expected, rtol=0, atol=1e-12)


def test_reference_agrees_with_pytrec_eval(pytrec_values):
    """The reference above, with the default rounding, is pytrec_eval: so it orders ties as trec_eval."""
    judgments = read_qrels(QRELS)
    for name, run in zip(RUN_NAMES, RUNS):
        scores = read_trec(run)
        for qid in [q for q in judged_queries() if q in scores]:
            for level in LEVELS:
                assert reference_iprec(judgments[qid], scores[qid], level, lround=False) == pytest.approx(
                    pytrec_values[name][qid][f"iprec_at_recall_{level:.2f}"], abs=1e-12)


def test_levels_come_sorted_and_other_measures_are_left_out(tmp_path):
    records = [
        {"qid": "q1", "run": "A", "sample": 0, "type": "metric", "iprec@1.0": 0.25, "ap": 0.9, "iprec@0.0": 1.0,
         "iprec@0.5": 0.5, "iprec@0.5_ties_min": 0.1, "iprec@0.5:median": 0.2},
        {"qid": "q2", "run": "A", "sample": 0, "type": "metric", "iprec@1.0": 0.75, "ap": 0.1, "iprec@0.0": 0.5,
         "iprec@0.5": 0.5, "iprec@0.5_ties_min": 0.1, "iprec@0.5:median": 0.2},
        {"qid": "q1", "runi": "A", "runj": "B", "sample": 0, "type": "preference", "iprec@0.0": 0.5},
        {"qid": "q1", "run": "B", "sample": 0, "type": "metric", "iprec@0.0": 0.0, "iprec@0.5": None},
        {"qid": "q1", "run": "A", "sample": 1, "type": "metric", "iprec@0.0": 0.0, "iprec@0.5": 0.0},
    ]
    path = write_json_lines(tmp_path / "pr.jsonl", records)
    drawn = curves(draw(path))
    assert drawn["A"] == ([0.0, 0.5, 1.0], [0.75, 0.5, 0.5])  # sample 0 only, the mean of q1 and q2
    xs, ys = drawn["B"]
    assert xs == [0.0, 0.5, 1.0] and ys[0] == 0.0 and np.isnan(ys[1:]).all()  # no value: a gap, not a 0
    assert curves(draw(path, query="q2")) == {"A": ([0.0, 0.5, 1.0], [0.5, 0.5, 0.75])}


def test_axes_legend_and_title(pr_lines):
    figure = draw(pr_lines)
    (axes,) = figure.axes
    assert axes.get_xlim() == (0.0, 1.0) and axes.get_ylim() == (0.0, 1.0)
    assert axes.get_xlabel() == "recall" and axes.get_ylabel() == "interpolated precision"
    assert axes.get_title() == "interpolated precision at 11 recall levels, mean over queries"
    legend = axes.get_legend()
    assert [text.get_text() for text in legend.get_texts()] == RUN_NAMES
    assert legend.get_bbox_to_anchor().x0 > axes.get_window_extent().x1 - 1e-6  # outside the data
    styles = run_styles(RUN_NAMES)
    for line in axes.get_lines():
        assert line.get_color() == styles[line.get_label()].colour
        assert line.get_marker() == styles[line.get_label()].marker
    assert draw(pr_lines, query="q103").axes[0].get_title() == \
        "interpolated precision at 11 recall levels, query q103"


def test_the_cli_writes_the_same_bytes_for_the_same_input(pr_lines, tmp_path):
    svg, again, png = tmp_path / "pr.svg", tmp_path / "again.svg", tmp_path / "pr.png"
    for output, options in ((svg, ()), (again, ()), (png, ("--query", "q101"))):
        result = run_cli("plot", "pr", pr_lines, *options, "-o", output)
        assert result.exit_code == 0 and result.output == ""
    assert svg.read_bytes() == again.read_bytes()
    root = ElementTree.parse(svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and len(list(root.iter())) > 50
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (1400, 920)  # 7 x 4.6 in
    help_text = run_cli("plot", "--help").stdout
    assert "--query QID" in help_text and "prefeval plot pr pr.jsonl" in help_text and ELEVEN in help_text


def test_an_input_without_interpolated_precision_is_one_line(tmp_path):
    path = example_eval_lines(tmp_path / "ap.jsonl", "ap,rpp")
    result = run_cli("plot", "pr", path, "-o", tmp_path / "x.png")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (f"prefeval: error: {path}: no interpolated precision (iprec) measure: write the recall "
                             "levels with prefeval eval -q -m iprec@0,iprec@0.1,...,iprec@1\n")
    assert not (tmp_path / "x.png").exists()


def test_a_query_not_in_the_input_is_named(pr_lines, tmp_path):
    result = run_cli("plot", "pr", pr_lines, "--query", "q999", "-o", tmp_path / "x.png")
    assert result.exit_code == 1 and result.stderr == (
        f"prefeval: error: {pr_lines}: query q999 is not in its per-query lines (of sample 0); "
        "write them with prefeval eval -q\n")
    summaries = write_json_lines(tmp_path / "summary.jsonl", [
        r for r in map(orjson.loads, Path(pr_lines).read_bytes().splitlines()) if r["qid"] == "all"])
    with pytest.raises(InputError, match="query q101 is not in its per-query lines"):
        draw(summaries, query="q101")
    with pytest.raises(InputError, match="query q107 is not in"):  # dropped by eval: no relevant document
        draw(pr_lines, query="q107")
    with pytest.raises(UsageError, match="'all' names the summary lines"):
        PlotRequest(pr_lines, query="all")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.jsonl"]


def test_query_belongs_to_the_pr_plot(pr_lines, tmp_path):
    result = run_cli("plot", "orderings", pr_lines, "--query", "q101", "-o", tmp_path / "x.png")
    assert result.exit_code == 2 and result.stderr == (
        "prefeval: error: --query: only plot pr draws one query; plot orderings draws every query\n")
    assert not (tmp_path / "x.png").exists()
    result = run_cli("plot", "pr", pr_lines, "--test", "sign", "-o", tmp_path / "x.png")
    assert result.exit_code == 2 and "only plot preferences marks significance; plot pr has no tests" in result.stderr


def test_bad_values_and_measures_are_named(pr_lines, tmp_path):
    path = write_json_lines(tmp_path / "bad.jsonl", [
        {"qid": "q1", "run": "A", "sample": 0, "type": "metric", "iprec@0.5": 0.5},
        {"qid": "q2", "run": "A", "sample": 0, "type": "metric", "iprec@0.5": "high"},
    ])
    result = run_cli("plot", "pr", path, "-o", tmp_path / "x.png")
    assert result.exit_code == 1 and result.stderr == (
        f"prefeval: error: {path}:2: iprec@0.5 must be a number, not 'high'\n")
    with pytest.raises(UsageError, match=r"measure\(s\) ap not in .*; found: iprec@0.0, iprec@0.1"):
        draw(pr_lines, measures=("ap",))
