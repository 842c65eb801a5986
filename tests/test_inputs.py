"""The Python API on paths, DataFrames and dicts: the same values as the command line on files."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from conftest import EXAMPLES, QRELS, ROOT, json_lines, run_cli

import prefeval
from prefeval.errors import InputError, UsageError
from prefeval.io.inputs import load_qrels, load_run, named_runs

NAMES = ("bm25", "dense", "hybrid", "random")
RUNS = [str(EXAMPLES / "runs" / name) for name in NAMES]
MEASURES = ["ap", "ndcg@10", "p@10", "rr", "rbp@0.8"]


def qrels_frame() -> pd.DataFrame:
    return pd.read_csv(QRELS, sep=r"\s+", header=None, names=["query_id", "iteration", "doc_id", "relevance"])


def run_frame(path: str) -> pd.DataFrame:
    return pd.read_csv(path, sep=r"\s+", header=None, names=["query_id", "Q0", "doc_id", "rank", "score", "tag"])


def as_dict(frame: pd.DataFrame, value: str) -> dict:
    nested: dict = {}
    for qid, docid, number in zip(frame["query_id"], frame["doc_id"], frame[value]):
        nested.setdefault(qid, {})[docid] = number
    return nested


def cli_metrics(*args) -> pd.DataFrame:
    result = run_cli("eval", "-q", "-n", "-R", QRELS, *args, *RUNS)
    assert result.exit_code == 0, result.output
    rows = json_lines(result.stdout)
    return pd.DataFrame([r for r in rows if r["type"] == "metric"]).drop(columns="type")


def test_evaluate_on_dataframes_equals_the_cli_on_files():
    expected = cli_metrics("-m", ",".join(MEASURES))
    frames = {name: run_frame(path) for name, path in zip(NAMES, RUNS)}
    ours = prefeval.evaluate(qrels_frame(), frames, MEASURES)
    assert list(ours.columns) == ["sample", "run", "qid", *MEASURES]
    key = ["run", "qid"]
    merged = expected.merge(ours, on=key, suffixes=("_cli", "_api"))
    assert len(merged) == len(expected) == len(ours) == 4 * 7
    for name in MEASURES:
        assert (merged[f"{name}_cli"] == merged[f"{name}_api"]).all(), name


def test_dicts_and_ranx_column_names_give_the_same_values():
    frames = {name: run_frame(path) for name, path in zip(NAMES, RUNS)}
    from_frames = prefeval.evaluate(qrels_frame(), frames, MEASURES)
    from_dicts = prefeval.evaluate(as_dict(qrels_frame(), "relevance"),
                                   {name: as_dict(frame, "score") for name, frame in frames.items()}, MEASURES)
    ranx_qrels = qrels_frame().rename(columns={"query_id": "q_id", "relevance": "score"})
    ranx_runs = [frame.rename(columns={"query_id": "q_id"}) for frame in frames.values()]
    from_ranx = prefeval.evaluate(ranx_qrels, dict(zip(NAMES, ranx_runs)), MEASURES)
    pd.testing.assert_frame_equal(from_frames, from_dicts)
    pd.testing.assert_frame_equal(from_frames, from_ranx)


def test_compare_on_dataframes_equals_compare_on_files():
    on_files = prefeval.compare(QRELS, RUNS, ["rpp", "lexiprecision", "ap"])
    frames = dict(zip(NAMES, map(run_frame, RUNS)))
    pd.testing.assert_frame_equal(on_files, prefeval.compare(qrels_frame(), frames, ["rpp", "lexiprecision", "ap"]))


def test_aggregate_accepts_the_frames_of_evaluate_and_compare(tmp_path):
    prefs = tmp_path / "prefs.jsonl"
    assert run_cli("eval", "-q", "-R", QRELS, "-m", "rpp,ap", "-o", prefs, *RUNS).exit_code == 0
    expected = list(prefeval.aggregate(str(prefs), per_query=True))
    frames = [prefeval.compare(QRELS, RUNS, ["rpp", "ap"]), prefeval.evaluate(QRELS, RUNS, ["ap"])]
    assert list(prefeval.aggregate(frames, per_query=True)) == expected
    read_back = pd.read_json(prefs, lines=True, dtype={"qid": str}, precise_float=True)
    assert list(prefeval.aggregate(read_back, per_query=True)) == expected



def test_ids_are_text_and_nan_scores_are_skipped():
    qrels = pd.DataFrame({"query_id": [301, 301, 302], "doc_id": [7, 8, 9], "relevance": [1, 0, 2]})
    run = pd.DataFrame({"query_id": [301, 301, 302, 302], "doc_id": [8, 7, 9, 10], "score": [2.0, 1.0, np.nan, 5.0]})
    frame = prefeval.evaluate(qrels, {"r": run}, ["rr", "p@0"])
    assert frame["qid"].tolist() == ["301", "302"]
    assert frame["rr"].tolist() == [0.5, 0.0]  # 302: document 9 (nan) is skipped, 10 is unjudged
    assert frame["p@0"].tolist() == [0.5, 0.0]


def test_runs_are_named_by_key_file_name_or_position(tmp_path):
    run = {"q101": {"a": 1.0}}
    assert [name for name, _ in named_runs([RUNS[0], run, run])] == [None, "run2", "run3"]
    assert [name for name, _ in named_runs({"x": RUNS[0]})] == ["x"]
    assert [name for name, _ in named_runs(RUNS[0])] == [None]
    assert load_run(RUNS[0]).run_id == "bm25"
    assert load_run(RUNS[0], "renamed").run_id == "renamed"
    frame = prefeval.evaluate(QRELS, [RUNS[0], run], ["ap"])
    assert frame["run"].unique().tolist() == ["bm25", "run2"]


@pytest.mark.parametrize("qrels, runs, error, message", [
    (QRELS, {"q101": {"a": 1.0}}, UsageError, "runs look like a single run {qid: {docid: score}}"),
    (QRELS, {"a": 3}, UsageError, "run 'a' is of type int, not a path, DataFrame, Table or dict"),
    (QRELS, [], UsageError, "at least one run is needed"),
    ("-", ["-"], UsageError, "standard input (-) can stand for only one"),
    (QRELS, {"r": pd.DataFrame({"qid": ["q101"], "document": ["a"], "score": [1.0]})}, InputError,
     "<run r>: no document id column ('docno' or 'doc_id' or 'docid' or 'item_id' or 'item' or 'itemID' or "
     "'itemId'); its columns: 'qid', 'document', 'score'. Name it with --run-columns docid=COLUMN"),
    (QRELS, {"r": pd.DataFrame({"qid": ["q101"], "doc_id": ["a"], "score": ["high"]})}, InputError,
     "<run r>: score 'high' (row 0) is not a number"),
    (QRELS, {"r": pd.DataFrame({"qid": [None], "doc_id": ["a"], "score": [1.0]})}, InputError,
     "<run r>: column 'qid' is missing a value (row 0)"),
    (QRELS, {"r": {"q101": {"a": "high"}}}, InputError,
     "<run r>: score 'high' of document 'a' in query 'q101' is not a number"),
    (QRELS, {"r": {"q101": {"a": 2.0, "b": "1_000"}}}, InputError,  # numpy reads text with Python's float
     "<run r>: score '1_000' of document 'b' in query 'q101' is not a number"),
    (QRELS, {"r": {"q101": [1.0]}}, InputError,
     "<run r>: query 'q101' holds a value of type list; expected {qid: {docid: score}}"),
    (QRELS, {"r": {}}, InputError, "<run r>: no scored documents"),
    ({"q1": {"a": float("nan")}}, [RUNS[0]], InputError, "<qrels>: the grade of document 'a' in query 'q1' is missing"),
    ({"q1": {"a": float("inf")}}, [RUNS[0]], InputError,
     "<qrels>: the grade of document 'a' in query 'q1' is out of range (inf): grades must be finite"),
    (pd.DataFrame({"qid": ["q1", "q1"], "docid": ["a", "b"], "grade": [1, 1e308]}), [RUNS[0]], InputError,
     "<qrels>: the grade of document 'b' in query 'q1' is out of range (1e+308)"),
    ({"all": {"a": 1}}, [RUNS[0]], InputError, "<qrels>: a query is named 'all'"),
    ({"q1": {"a": 0}}, [RUNS[0]], InputError, "<qrels>: no query has a relevant document"),
    ([1, 2], [RUNS[0]], UsageError,
     "<qrels>: expected a path, a DataFrame, a pyarrow Table or a dict, not a value of type list"),
])
def test_bad_inputs_are_named_errors(qrels, runs, error, message):
    with pytest.raises(error) as caught:
        prefeval.evaluate(qrels, runs, ["ap"])
    assert message in str(caught.value)


def test_qrels_frame_keeps_the_maximum_grade_and_the_file_order():
    frame = pd.DataFrame({"query_id": ["b", "a", "b", "b"], "doc_id": ["x", "y", "x", "z"], "relevance": [1, 2, 3, 0]})
    qrels = load_qrels(frame)
    assert qrels.qids == ["b", "a"] and qrels.docids.tolist() == ["x", "y"] and qrels.grades.tolist() == [3.0, 2.0]
    assert load_qrels(frame, binary_relevance=2).grades.tolist() == [1.0, 1.0]


def test_stdin_for_one_input_still_works(monkeypatch):
    with open(RUNS[1], "rb") as handle:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(handle.read())))
    frame = prefeval.evaluate(QRELS, [RUNS[0], "-"], ["ap"])
    assert frame["run"].unique().tolist() == ["bm25", "stdin"]


def test_the_documented_example_on_dataframes_and_dicts_runs():
    page = (ROOT / "docs" / "python-api.md").read_text()
    block = next(b for b in page.split("```python\n")[1:] if "import pandas as pd" in b).split("```")[0]
    namespace: dict = {}
    exec(block, namespace)
    metrics, summary = namespace["metrics"], namespace["summary"]
    assert list(metrics.columns) == ["sample", "run", "qid", "ap", "ndcg@10", "p@10"]
    # q1: bm25 ranks d2 (grade 0), d1 (1); dense ranks d1 first. q2: bm25 finds d3 first, dense second
    assert metrics.set_index(["run", "qid"])["ap"].to_dict() == {
        ("bm25", "q1"): 0.5, ("bm25", "q2"): 1.0, ("dense", "q1"): 1.0, ("dense", "q2"): 0.5}
    assert summary["qid"] == "all" and summary["ap"]["mean"] == ["bm25", "dense"]  # tied at 0.75, by name
    assert summary["ap"]["scores"]["mean"] == {"bm25": 0.75, "dense": 0.75}
