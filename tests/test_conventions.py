"""Query conventions as data (:mod:`prefeval.ranking.conventions`), given to the evaluation whatever
the output format, and each measure's aggregator (:mod:`prefeval.measures.aggregators`), applied once
by the engine."""

from __future__ import annotations

import functools
import operator

import numpy as np
import pytest
from conftest import json_lines, run_cli, write_qrels, write_run

import prefeval
from prefeval.engine.results import FixedOrderSum, SequentialSum
from prefeval.errors import UsageError
from prefeval.measures.aggregators import GEOMETRIC, MEAN, SUM
from prefeval.ranking.conventions import (
    DROP,
    KEEP,
    LISTED,
    PAIRWISE,
    QRELS_ORDER,
    QUERIES,
    SEQUENTIAL,
    SKIP,
    TREC_EVAL_ORDER,
    WORST,
    ZERO,
    conventions,
)


def test_profiles_and_the_complete_modifier():
    assert conventions("reference")[1:] == (DROP, WORST, QRELS_ORDER, PAIRWISE, False, QUERIES, False)
    assert conventions("trec_eval")[1:] == (KEEP, SKIP, TREC_EVAL_ORDER, SEQUENTIAL, False, QUERIES, True)
    assert conventions("ir_measures")[1:] == (KEEP, ZERO, QRELS_ORDER, SEQUENTIAL, False, LISTED, False)
    # -c: missing queries retrieve nothing; on trec_eval's profile, num_rel's summary counts the qrels
    assert conventions("trec_eval", complete=True)[1:] == (KEEP, WORST, TREC_EVAL_ORDER, SEQUENTIAL, True, QUERIES,
                                                           True)
    assert conventions("reference", complete=True).qrels_num_rel is False
    assert conventions("trec_eval", missing_queries=ZERO, empty_queries=DROP)[1:3] == (DROP, ZERO)
    with pytest.raises(UsageError, match="unknown conventions 'pref_eval'; choose one of reference, trec_eval"):
        conventions("pref_eval")
    with pytest.raises(UsageError, match="give one or the other"):
        conventions("trec_eval", complete=True, missing_queries=SKIP)
    with pytest.raises(UsageError, match="missing_queries must be one of worst, skip, zero, not 'nope'"):
        conventions("reference", missing_queries="nope")


@pytest.fixture
def collection(tmp_path):
    """Queries b10, a2, a10 (qrels order; trec_eval's is a10, a2, b10), e without a relevant document;
    run B lacks a2."""
    qrels = write_qrels(tmp_path / "qrels", {"b10": {"x": 1, "y": 0}, "a2": {"x": 1, "z": 2}, "a10": {"w": 1},
                                               "e": {"x": 0}})
    scores = {"b10": {"x": 2.0, "y": 1.0}, "a2": {"z": 3.0, "q": 2.0, "x": 1.0}, "a10": {"q": 1.0, "w": 0.5},
              "e": {"x": 1.0}}
    run_a = write_run(tmp_path / "A", scores)
    run_b = write_run(tmp_path / "B", {qid: docs for qid, docs in scores.items() if qid != "a2"})
    return qrels, [run_a, run_b]


def test_the_api_takes_a_profile_and_lists_what_it_says(collection):
    qrels, runs = collection
    frame = prefeval.evaluate(qrels, runs, ["ap", "num_rel"], conventions="trec_eval", jobs=1)
    # every query kept (e has no relevant document), trec_eval's order, B's missing a2 left out
    assert frame[frame.run == "A"].qid.tolist() == ["a10", "a2", "b10", "e"]
    assert frame[frame.run == "B"].qid.tolist() == ["a10", "b10", "e"]
    reference = prefeval.evaluate(qrels, runs, ["ap"], jobs=1)
    assert reference[reference.run == "B"].qid.tolist() == ["b10", "a2", "a10"]  # e dropped, a2 scored 0


def test_zero_writes_every_measure_0_on_a_missing_query_counts_included(collection):
    qrels, runs = collection
    zero = prefeval.evaluate(qrels, runs, ["ap", "num_rel"], conventions="ir_measures", jobs=1).set_index(
        ["run", "qid"])
    worst = prefeval.evaluate(qrels, runs, ["ap", "num_rel"], conventions="ir_measures", missing_queries=WORST,
                              jobs=1).set_index(["run", "qid"])
    assert zero.loc[("B", "a2"), "num_rel"] == 0.0 and worst.loc[("B", "a2"), "num_rel"] == 2.0
    assert zero.loc[("A", "a2"), "num_rel"] == worst.loc[("A", "a2"), "num_rel"] == 2.0
    # a pair's delta is the difference of the values written
    pairs = prefeval.compare(qrels, runs, ["num_rel"], conventions="ir_measures", jobs=1).set_index("qid")
    assert pairs.loc["a2", "num_rel"] == 2.0 - 0.0


def test_every_format_takes_the_conventions_it_is_given(collection):
    """The tool layouts default to their tool's conventions, and take any other."""
    qrels, runs = collection
    trec_eval = run_cli("eval", "--format", "trec_eval", "-q", "-m", "num_rel", "-R", qrels, *runs)
    assert [line.split("\t")[1] for line in trec_eval.stdout.splitlines()] == [
        "a10", "a2", "b10", "e", "all", "a10", "b10", "e", "all"]
    reference = run_cli("eval", "--format", "trec_eval", "--conventions", "reference", "-q", "-m", "num_rel", "-R",
                        qrels, *runs)
    assert [line.split("\t")[1] for line in reference.stdout.splitlines()] == [
        "b10", "a2", "a10", "all", "b10", "a2", "a10", "all"]
    lines = json_lines(run_cli("eval", "--conventions", "trec_eval", "-q", "-m", "num_rel", "-R", qrels,
                               *runs).stdout)
    assert [line["qid"] for line in lines if line.get("run") == "B"] == ["a10", "b10", "e", "all"]


def test_num_rel_under_trec_eval_complete_counts_the_qrels(tmp_path):
    """trec_eval -c -l 2: per query num_rel counts grade >= 2, its summary every grade > 0 of the qrels."""
    qrels = write_qrels(tmp_path / "qrels", {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}})
    run = write_run(tmp_path / "run", {"q1": {"a": 1.0}})
    output = run_cli("eval", "--format", "trec_eval", "-c", "-q", "-l", "2", "-m", "num_rel", "-R", qrels, run)
    assert output.stdout.splitlines() == ["num_rel               \tq1\t1", "num_rel               \tq2\t0",
                                          "num_rel               \tall\t3"]
    plain = run_cli("eval", "--format", "trec_eval", "-c", "-l", "2", "--conventions", "reference", "-m", "num_rel",
                    "--empty-queries", "keep", "-R", qrels, run)
    assert plain.stdout.splitlines() == ["num_rel               \tall\t1"]


@pytest.mark.parametrize("aggregator, terms, value", [
    (MEAN, [0.25, 0.5, 0.0], 0.25),
    (SUM, [3.0, 4.0], 7.0),
    (GEOMETRIC, [0.25, 1.0], 0.5),
    (GEOMETRIC, [0.0, 1.0], np.sqrt(1e-5)),  # a 0 counts as 0.00001
])
def test_aggregators_by_hand(aggregator, terms, value):
    values = np.array([terms])
    total = aggregator.terms(values).sum(axis=1)
    assert aggregator.value(total, np.array([len(terms)]))[0] == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("aggregator", [MEAN, SUM, GEOMETRIC])
def test_a_run_counted_on_no_query_has_summary_zero(aggregator):
    assert aggregator.value(np.zeros(2), np.zeros(2, dtype=np.int64)).tolist() == [0.0, 0.0]


def test_sequential_sums_add_one_value_after_the_other():
    """trec_eval's order of additions: in the last bit, not numpy's pairwise sum."""
    rng = np.random.default_rng(5)
    values = rng.random((3, 3000)) * 10.0 ** rng.integers(-8, 8, size=(3, 3000))
    sequential, blocks = SequentialSum(3), FixedOrderSum(3)
    for start in range(0, 3000, 7):
        sequential.add(values[:, start:start + 7])
        blocks.add(values[:, start:start + 7])
    loop = [functools.reduce(operator.add, row.tolist(), 0.0) for row in values]
    assert sequential.result().tolist() == loop
    assert blocks.result().tolist() != loop  # the pairwise blocks add in another order
