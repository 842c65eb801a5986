"""Conformance with the reference scripts' outputs on three robust03 runs (shared/data/reference)."""

from __future__ import annotations

import json

import pytest
from conftest import REFERENCE, robust03_or_skip

from prefeval import aggregate, evaluation_records
from prefeval.analyses.orderings import TIE_TOLERANCE
from prefeval.engine.evaluation import Evaluation

RUNS = ("pircRBa1", "MU03rob01", "NLPR03vb10")


def load(name: str) -> list[dict]:
    with open(REFERENCE / name) as handle:
        return [json.loads(line) for line in handle]


def evaluate_three_runs(**options) -> list[dict]:
    data = robust03_or_skip()
    runs = [str(data / "runs" / f"input.{run}.gz") for run in RUNS]
    return list(evaluation_records(Evaluation.from_files(str(data / "qrels.txt"), runs, **options)))


def line_key(record: dict) -> tuple:
    return tuple(record.get(key) for key in ("qid", "runi", "runj", "run", "type"))


def assert_reproduces(ours: list[dict], reference: list[dict]) -> None:
    """Every reference line has a line of ours with the same keys first and values to 1e-9."""
    by_key = {line_key(record): record for record in ours}
    for expected in reference:
        actual = by_key[line_key(expected)]
        assert list(actual)[: len(expected)] == list(expected), line_key(expected)
        for key, value in expected.items():
            if isinstance(value, str):
                assert actual[key] == value
            else:
                assert actual[key] == pytest.approx(value, abs=1e-9), (line_key(expected), key)
                if key in ("lexirecall", "lexiprecision") and expected["qid"] != "all":
                    assert type(actual[key]) is int  # lexicographic signs are JSON integers


def test_binary_eval_reproduces_pref_eval():
    ours = evaluate_three_runs(binary_relevance=1)
    reference = load("robust03-3runs.b1.jsonl")
    assert_reproduces(ours, reference)
    # the same lines, in the same order, plus one metric summary line per run at the end
    assert [line_key(r) for r in ours[: len(reference)]] == [line_key(r) for r in reference]
    assert [(r["qid"], r["run"], r["type"]) for r in ours[len(reference):]] == [("all", run, "metric") for run in RUNS]


def test_graded_rpp_reproduces_the_weighted_average():
    ours = evaluate_three_runs(measures=["rpp", "invrpp", "dcgrpp"])
    assert_reproduces(ours, load("robust03-3runs.graded-rpp.jsonl"))


def test_aggregate_agrees_with_pref_aggregate_where_scores_are_untied():
    robust03_or_skip()
    reference = {r["qid"]: r for r in load("robust03-3runs.b1.aggregate.jsonl")}
    ours = {r["qid"]: r for r in aggregate(str(REFERENCE / "robust03-3runs.b1.jsonl"), per_query=True)}
    compared = 0
    for qid, expected in reference.items():
        if qid == "all":
            continue
        for measure, ordering in expected.items():
            if measure in ("qid", "sample"):
                continue
            scores = sorted(ours[qid]["scores"][measure].values(), reverse=True)
            if all(a - b > TIE_TOLERANCE for a, b in zip(scores, scores[1:])):
                assert ours[qid][measure] == ordering, (qid, measure)
                compared += 1
    assert compared > 1000
    # with all three runs in a clear order, the summary orderings agree too
    for measure, expected in reference["all"].items():
        if measure in ("qid", "sample"):
            continue
        for method in ("mean", "mc4", "borda"):
            if method in expected:
                assert ours["all"][measure][method] == expected[method], (measure, method)
