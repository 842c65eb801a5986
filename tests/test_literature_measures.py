"""The measures of MEASURES.md "Measures from the wider metric literature": hand-computed cases, the
worked values, an independent oracle for AUC, and use through eval, aggregate and the Python API."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import QRELS, RUNS, json_lines, table_from_positions
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import prefeval
from prefeval.cli import main
from prefeval.measures import parse_measure
from prefeval.ranking.positions import Selection, binary_positions

INF = math.inf


def metric(name: str, runs, grades=None, num_retrieved=None) -> np.ndarray:
    """Values (R, Q) of metric ``name``; ``num_retrieved[r][q]`` overrides the list lengths (which
    default to the deepest relevant rank)."""
    table = table_from_positions(runs, grades)
    if num_retrieved is not None:
        table = dataclasses.replace(table, num_retrieved=np.array(num_retrieved, dtype=np.int64))
    return parse_measure(name).compute(binary_positions(table, Selection.everything(table)))


# --- auc ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("r, n", [(1, 2), (1, 10), (3, 10), (10, 10), (7, 1000)])
def test_auc_of_one_relevant_item(r, n):
    assert metric("auc", [[[r]]], num_retrieved=[[n]])[0, 0] == pytest.approx((n - r) / (n - 1))


def test_auc_by_hand():
    # relevant at 2 and 5 among 8 items: 6 non-relevant, 1 and 3 of them above -> (5 + 3) / 12
    assert metric("auc", [[[2, 5]]], num_retrieved=[[8]])[0, 0] == pytest.approx(2 / 3)
    # relevant at 2 and unretrieved; 6 retrieved, so 7 items, 5 non-relevant: (5 - 1) / 10 + 0
    assert metric("auc", [[[2, INF]]], num_retrieved=[[6]])[0, 0] == pytest.approx(0.4)


def test_auc_without_non_relevant_items_is_the_fraction_retrieved():
    assert metric("auc", [[[1, 2]]], num_retrieved=[[2]])[0, 0] == 1.0
    assert metric("auc", [[[1, INF]]], num_retrieved=[[1]])[0, 0] == 0.5
    assert metric("auc", [[[INF, INF]]], num_retrieved=[[0]])[0, 0] == 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=2, max_size=30), st.integers(0, 5))
def test_auc_agrees_with_mann_whitney_u(labels, unretrieved):
    labels = np.array(labels)
    if labels.all() or not labels.any():
        return
    ranks = (np.flatnonzero(labels) + 1).tolist() + [INF] * unretrieved
    value = metric("auc", [[ranks]], num_retrieved=[[len(labels)]])[0, 0]
    # oracle: U over scores = -rank, the unretrieved relevant ones below every retrieved item
    positions = np.arange(1, len(labels) + 1)
    relevant = np.concatenate((-positions[labels], np.full(unretrieved, -len(labels) - 1.0)))
    u = stats.mannwhitneyu(relevant, -positions[~labels]).statistic
    assert value == pytest.approx(u / (len(relevant) * (~labels).sum()))


# --- f@k, success@k ------------------------------------------------------------------------------

RUN = [[[2, 5, INF, INF]]]  # m = 4 relevant; retrieved at ranks 2 and 5; 5 documents retrieved


@pytest.mark.parametrize("name, expected", [
    ("f@5", 2 * (2 / 5) * (2 / 4) / (2 / 5 + 2 / 4)),
    ("f@5,2", 5 * (2 / 5) * (2 / 4) / (4 * (2 / 5) + 2 / 4)),
    ("f@10,0.5", 1.25 * (2 / 10) * (2 / 4) / (0.25 * (2 / 10) + 2 / 4)),
    ("f@5,0", 2 / 5),
    ("f@1", 0.0),
    ("f@0", 2 * (2 / 5) * (2 / 4) / (2 / 5 + 2 / 4)),
    ("success@1", 0.0),
    ("success@2", 1.0),
    ("success@0", 1.0),
])
def test_f_and_success_by_hand(name, expected):
    assert metric(name, RUN)[0, 0] == pytest.approx(expected, abs=1e-12)


def test_f_and_success_of_an_empty_list_are_zero():
    for name in ("f@10", "f@0", "f@0,0", "success@10", "success@0"):
        assert metric(name, [[[INF, INF]]], num_retrieved=[[0]])[0, 0] == 0.0


# --- dcg, ndcg_exp, cg ----------------------------------------------------------------------------

WORKED = ([[[1, 2, 3, 4, 5]]], [[2, 3, 3, 1, 2]])


def test_dcg_worked_examples():
    assert metric("dcg", *WORKED)[0, 0] == pytest.approx(6.5972, abs=5e-5)
    assert metric("dcg@7", [[[1, 2, 3, 4, 5, 6, 7]]], [[3, 2, 1, 1, 3, 1, 2]])[0, 0] == pytest.approx(7.3760, abs=5e-5)
    assert metric("dcg@2", *WORKED)[0, 0] == pytest.approx(2 + 3 / math.log2(3))


def test_exponential_ndcg_worked_example():
    assert metric("ndcg_exp", *WORKED)[0, 0] == pytest.approx(0.8570, abs=5e-5)
    assert metric("ndcg_exp", *WORKED)[0, 0] == pytest.approx(12.5077 / 14.5954, abs=1e-5)
    assert metric("dcg_exp@3", *WORKED)[0, 0] == metric("ndcg_exp@3", *WORKED)[0, 0]
    assert parse_measure("DCG_EXP@3").name == "ndcg_exp@3"


def test_exponential_and_linear_ndcg_agree_on_binary_grades():
    runs = [[[1, 4, INF], [3, 9]], [[2, 3, 7], [INF, 1]]]
    for k in ("", "@3", "@10"):
        np.testing.assert_allclose(metric("ndcg_exp" + k, runs), metric("ndcg" + k, runs), rtol=1e-14)


def test_cumulative_gain():
    assert metric("cg", *WORKED)[0, 0] == 11.0
    assert metric("cg@3", *WORKED)[0, 0] == 8.0
    assert metric("cg@3", [[[2, INF, 9]]], [[2, 3, 1]])[0, 0] == 2.0


# --- pfound ---------------------------------------------------------------------------------------

def pfound_by_recursion(grades_by_rank: list[float], max_grade: float, pbreak: float = 0.15, k: int = 0) -> float:
    """pFound straight from its definition, rank by rank."""
    total, look = 0.0, 1.0
    for rank, grade in enumerate(grades_by_rank, start=1):
        if k and rank > k:
            break
        p_rel = grade / max_grade
        total += look * p_rel
        look *= (1.0 - p_rel) * (1.0 - pbreak)
    return total


def test_pfound_by_hand():
    # grades 1 and 2 at ranks 1 and 3; the largest grade of the qrels is 2
    assert metric("pfound", [[[1, 3]]], [[1, 2]])[0, 0] == pytest.approx(0.5 + 0.5 * 0.85**2 * 1.0)
    assert metric("pfound@2", [[[1, 3]]], [[1, 2]])[0, 0] == pytest.approx(0.5)
    assert metric("pfound@0,0.5", [[[1, 3]]], [[1, 2]])[0, 0] == pytest.approx(0.5 + 0.5 * 0.25)


def test_pfound_divides_by_the_largest_grade_of_the_whole_qrels():
    # a second query holds grade 4: pRel = 0.25 and 0.5 on the first query
    values = metric("pfound", [[[1, 3], [5]]], [[1, 2], [4]])
    assert values[0, 0] == pytest.approx(0.25 + 0.75 * 0.85**2 * 0.5)
    assert values[0, 1] == pytest.approx(0.85**4)


def test_pfound_with_binary_grades_is_the_chance_of_reaching_the_first_relevant():
    assert metric("pfound", [[[4, 6, INF]]])[0, 0] == pytest.approx(0.85**3)
    assert metric("pfound@3", [[[4, 6, INF]]])[0, 0] == 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=25), st.integers(0, 30),
       st.floats(0.0, 0.9), st.integers(1, 3))
def test_pfound_agrees_with_the_recursion(grades_by_rank, k, pbreak, extra_grade):
    grades_by_rank = list(grades_by_rank)
    if not any(grades_by_rank):
        grades_by_rank[0] = 1
    ranks = [r + 1 for r, g in enumerate(grades_by_rank) if g > 0]
    grades = [g for g in grades_by_rank if g > 0]
    max_grade = max(grades + [extra_grade])
    # a second query with a grade of its own decides the largest grade of the qrels
    value = metric(f"pfound@{k},{pbreak!r}", [[ranks, [1]]], [grades, [extra_grade]])[0, 0]
    assert value == pytest.approx(pfound_by_recursion(grades_by_rank, max_grade, pbreak, k), abs=1e-12)


# --- everywhere measures are used ------------------------------------------------------------------

LITERATURE = "auc,f@10,f@5,0.5,success@5,dcg@10,ndcg_exp@10,cg@10,pfound,pfound@10,0.3"
NAMES = ["auc", "f@10", "f@5,0.5", "success@5", "dcg@10", "ndcg_exp@10", "cg@10", "pfound", "pfound@10,0.3"]


def test_eval_lines_carry_values_and_deltas():
    result = CliRunner().invoke(main, ["eval", "-q", "-R", QRELS, "-m", LITERATURE, *RUNS[:2]])
    assert result.exit_code == 0, result.output
    records = json_lines(result.stdout)
    pair, first, second = records[0], records[1], records[2]
    assert list(pair)[5:] == NAMES and list(first)[4:] == NAMES
    for name in NAMES:
        assert pair[name] == pytest.approx(first[name] - second[name], abs=1e-12)
    assert 0.0 < first["auc"] <= 1.0 and first["success@5"] in (0.0, 1.0)


def test_aggregate_and_python_api(tmp_path):
    frame = prefeval.evaluate(QRELS, RUNS, NAMES)
    assert list(frame.columns) == ["sample", "run", "qid", *NAMES]
    assert frame["auc"].between(0, 1).all() and frame["pfound"].between(0, 1).all()
    prefs = tmp_path / "prefs.jsonl"
    args = ["eval", "-q", "-R", QRELS, "-m", LITERATURE, "-o", str(prefs), *RUNS]
    assert CliRunner().invoke(main, args).exit_code == 0
    (summary,) = prefeval.aggregate(str(prefs))
    assert summary["auc"]["type"] == "metric"
    assert summary["auc"]["mean"][-1] == "random"
    means = frame.groupby("run")["ndcg_exp@10"].mean()
    assert summary["ndcg_exp@10"]["scores"]["mean"]["bm25"] == pytest.approx(means["bm25"])


def test_num_items_counts_retrieved_and_selected_unretrieved_relevant():
    table = table_from_positions([[[2, INF, INF], [1]], [[INF, 3, 4], [INF]]])
    table = dataclasses.replace(table, num_retrieved=np.array([[10, 1], [4, 0]]))
    everything = binary_positions(table, Selection.everything(table))
    assert everything.num_items.tolist() == [[12, 1], [5, 1]]
    # dropping the second judgment of the first query (as label subsampling does)
    documents = np.array([True, False, True, True])
    assert binary_positions(table, Selection(np.arange(2), documents)).num_items.tolist() == [[11, 1], [5, 1]]
    assert everything.max_grade == 1.0


# --- grades and parameters at the edge of float64 (issue 11) ----------------------------------------------

@pytest.mark.parametrize("grade, message", [
    ("1e308", "grade '1e308' is out of range"), ("inf", "grade 'inf' is out of range"),
    ("-inf", "grade '-inf' is out of range"), ("1e16", "grade '1e16' is out of range"),
])
def test_grades_too_large_for_float64_sums_are_refused_with_their_line(tmp_path, grade, message):
    qrels = tmp_path / "qrels"
    qrels.write_text(f"q1 0 a 1\nq1 0 b {grade}\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\n")
    result = CliRunner().invoke(main, ["eval", "-R", str(qrels), "-m", "ndcg,dcg,cg", str(run)])
    assert result.exit_code == 1 and result.stdout == ""
    limit = "grades must be finite and at most 2^53 in magnitude"
    assert result.stderr == f"prefeval: error: {qrels}:2: {message}: {limit}\n"


def test_large_grades_and_infinite_beta_write_numbers_and_no_warning(tmp_path):
    """Grades of 1100 (2^g overflows) with ndcg_exp and f@10,inf wrote null and numpy warnings."""
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 a 1100\nq1 0 b 1\nq1 0 c 1099\nq2 0 d 5000\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 1 t\nq2 Q0 d 1 1 t\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = CliRunner().invoke(main, ["eval", "-q", "-R", str(qrels), "-m", "ndcg_exp,f@10,inf,f@10,1e300,dcg,cg",
                                           str(run)])
    assert result.exit_code == 0, result.stderr
    assert "null" not in result.stdout and "Warning" not in result.stderr
    lines = json_lines(result.stdout)
    q1 = lines[0]
    assert q1["ndcg_exp"] == pytest.approx((1 + 0.5 / 2) / (1 + 0.5 / math.log2(3)), rel=1e-15)
    assert q1["f@10,inf"] == 1.0 and q1["f@10,1e+300"] == 1.0  # recall: every relevant document within 10
    assert lines[1]["ndcg_exp"] == 1.0

