"""Gain maps and the gain-based metrics (prefeval/measures/gains.py, and ndcg's gains=): hand-computed
cases, and per-query agreement with trec_eval (through pytrec_eval, and through a trec_eval binary for
rbp and rbp_resid, which pytrec_eval lacks) and with ir_measures, on random graded collections and on
robust03.

The random collections have graded qrels with judged non-relevant documents, unjudged documents of the
pool (negative grades), documents outside the qrels, unretrieved relevant documents, ties, queries
without a relevant document (kept, trec_eval's convention) and queries missing from runs.
"""

from __future__ import annotations

import gzip
import math
import os
import shutil
import subprocess

import numpy as np
import pytest
from conftest import robust03_or_skip, write_qrels, write_run

import prefeval
from prefeval.errors import UsageError
from prefeval.measures import parse_measure, parse_measures

pytrec_eval = pytest.importorskip("pytrec_eval")
ir_measures = pytest.importorskip("ir_measures")

TREC_EVAL_NAMES = {"ndcg": "ndcg", "ndcg_rel": "ndcg_rel", "rndcg": "Rndcg", "gain_shortfall": "G",
                   "binary_gain_shortfall": "binG"}
"""prefeval's name -> trec_eval's, for the measures compared through pytrec_eval."""

MAPS = ["0:0;1:3;2:9", "1:4;3:1", "0:2;2:5"]
"""Gain maps compared through pytrec_eval on qrels whose grades are replaced by their gains (as
ir_measures does): the same as trec_eval's gain map where the gains are integers >= 0. (pytrec_eval
refuses a gain map in the measure's name, and trec_eval keeps it in shared state that a second
evaluator breaks; the trec_eval binary checks the maps directly, below.)"""


def evaluate(tmp_path, qrels: dict, runs: list[dict], measures: list[str]) -> dict:
    """prefeval's per-query values through the public API, queries without a relevant document kept:
    {(run number, qid): {measure: value}}."""
    qrels_path = write_qrels(tmp_path / "qrels", qrels)
    run_paths = [write_run(tmp_path / f"run{n}", run, tag=f"run{n}") for n, run in enumerate(runs)]
    frame = prefeval.evaluate(qrels_path, run_paths, measures, empty_queries="keep")
    names = [m.name for m in parse_measures(measures)]
    return {(int(row["run"][3:]), str(row["qid"])): {name: float(row[name]) for name in names}
            for row in frame.to_dict("records")}


# --- gain maps ---------------------------------------------------------------------------------------------

def test_gain_map_canonical_names():
    assert parse_measure("ndcg@10,gains=2:9;1:3.5").name == "ndcg@10,gains=1:3.5;2:9"
    assert parse_measure("ndcg@10,gains=2:9.0;1:3.5;3:3") == parse_measure("ndcg@10,gains=1:3.5;2:9")
    assert parse_measure("ndcg@gains=1:1;0:0").name == "ndcg"  # every level keeps its grade: no map
    assert parse_measure("ndcg_rel@gains=0:-0.5").name == "ndcg_rel@gains=0:-0.5"
    assert parse_measure("trec_rbp@0.95,gains=1:1e-20").name == "trec_rbp@0.95,gains=1:1e-20"
    for text in ("ndcg@gains=", "ndcg@gains=1", "ndcg@gains=1:x", "ndcg@gains=-1:2", "ndcg@gains=1:2;1:3",
                 "ndcg@gains=1.5:2", "ndcg@gains=1:inf", "ndcg@gains=1:nan"):
        with pytest.raises(UsageError):
            parse_measure(text)


def test_cutoff_lists_continue_with_a_keyword_parameter_present():
    # a number after a comma is the next positional parameter (k), never the keyword gains
    assert [m.name for m in parse_measures(["ndcg@5,10"])] == ["ndcg@5", "ndcg@10"]
    assert [m.name for m in parse_measures(["ndcg@5,10,gains=2:4"])] == ["ndcg@5", "ndcg@10,gains=2:4"]


def test_gain_map_reads_judged_only_when_grade_zero_has_a_gain():
    assert not parse_measure("ndcg@gains=1:3").reads_judged
    assert parse_measure("ndcg@gains=0:1").reads_judged
    assert parse_measure("trec_rbp@gains=1:-1").reads_judged  # scaled, grade 0's gain becomes positive
    assert not parse_measure("trec_rbp").reads_judged
    assert parse_measure("trec_rbp_resid").reads_judged
    assert parse_measure("ndcg@gains=1:-1").bounds[0] == -np.inf
    assert parse_measure("ndcg").bounds == (0.0, 1.0)


# --- hand-computed cases -------------------------------------------------------------------------------

HAND_QRELS = {
    "1": {"d1": 2, "d2": 1, "d3": 0, "d4": 3, "d5": 1, "d6": -1},
    "2": {"d7": 0},  # no relevant document
}
HAND_RUN = {
    # ranks: 1 x (not in the qrels), 2 d3 (0), 3 d1 (2), 4 d2 (1), 5 d6 (unjudged), 6 d4 (3); d5 unretrieved
    "1": {"x": 6.0, "d3": 5.0, "d1": 4.0, "d2": 3.0, "d6": 2.0, "d4": 1.0},
    "2": {"d7": 2.0, "y": 1.0},
}
HAND_MEASURES = ["ndcg", "ndcg,gains=1:3;2:9", "ndcg,gains=0:2", "ndcg_rel", "rndcg", "gain_shortfall",
                 "binary_gain_shortfall", "trec_rbp", "trec_rbp,gains=1:-1", "trec_rbp@0.5", "trec_rbp_resid",
                 "trec_rbp_resid@0.5", "err", "err@4"]


def test_hand_computed_values(tmp_path):
    values = evaluate(tmp_path, HAND_QRELS, [HAND_RUN], HAND_MEASURES)
    one, two = values[0, "1"], values[0, "2"]
    log2 = math.log2
    dcg = 2 / 2 + 1 / log2(5) + 3 / log2(7)
    ideal = [3, 2 / log2(3), 1 / 2, 1 / log2(5)]  # gains 3, 2, 1, 1 at places 1..4
    assert one["ndcg"] == pytest.approx(dcg / sum(ideal), abs=1e-15)
    # gains 9 (grade 2), 3 (grades 1 and 3): ideal 9, 3, 3, 3
    assert one["ndcg@gains=1:3;2:9"] == pytest.approx(
        (9 / 2 + 3 / log2(5) + 3 / log2(7)) / (9 + 3 / log2(3) + 3 / 2 + 3 / log2(5)), abs=1e-15)
    # grade 0 gains 2: d3 at rank 2 counts, and the ideal is 3, 2, 2, 1, 1
    assert one["ndcg@gains=0:2"] == pytest.approx(
        (2 / log2(3) + dcg) / (3 + 2 / log2(3) + 2 / 2 + 1 / log2(5) + 1 / log2(6)), abs=1e-15)
    assert two["ndcg@gains=0:2"] == pytest.approx(1.0)  # d7 (gain 2) at rank 1: the ideal
    # ndcg_rel: n+ = 4; relevant documents at ranks 3, 4, 6; d5 unretrieved takes the final value
    idcg3, idcg4 = sum(ideal[:3]), sum(ideal)
    dcg3, dcg4 = 1.0, 1 + 1 / log2(5)
    assert one["ndcg_rel"] == pytest.approx((dcg3 / idcg3 + dcg4 / idcg4 + dcg / idcg4 + dcg / idcg4) / 4, abs=1e-15)
    # Rndcg: the ideal gain changes after places 1 (3 -> 2), 2 (2 -> 1) and 4 (the end); 6 retrieved >= 4 + 2
    assert one["rndcg"] == pytest.approx((0 + 0 + dcg4 / idcg4 + dcg / idcg4) / 4, abs=1e-15)
    # G: ideal 3, 2, 1, 1 (sum 7); cost C(3) = 6, C(4) = 7, C(6) = 9; gained S(3) = 2, S(4) = 3, S(6) = 6
    assert one["gain_shortfall"] == pytest.approx((2 / log2(6) + 1 / log2(6) + 3 / log2(5)) / 7, abs=1e-15)
    # binG: 2, 2 and 3 non-relevant documents above the relevant ones at 3, 4, 6; m = 4
    assert one["binary_gain_shortfall"] == pytest.approx((1 / 2 + 1 / 2 + 1 / log2(5)) / 4, abs=1e-15)
    # trec_rbp: grades 0..3 scaled to g / 3
    assert one["trec_rbp"] == pytest.approx(0.1 * (2 / 3 * 0.9**2 + 1 / 3 * 0.9**3 + 0.9**5), abs=1e-15)
    assert one["trec_rbp@0.5"] == pytest.approx(0.5 * (2 / 3 * 0.5**2 + 1 / 3 * 0.5**3 + 0.5**5), abs=1e-15)
    # gains 0 (grade 0), -1 (grade 1), 2, 3: scaled (g + 1) / 4, so grade 0 gains 1/4 and grade 1 gains 0
    assert one["trec_rbp@gains=1:-1"] == pytest.approx(0.1 * (0.9 / 4 + 3 / 4 * 0.9**2 + 0.9**5), abs=1e-15)
    assert two["trec_rbp@gains=1:-1"] == pytest.approx(0.1)  # grade 0 scaled to 1 (gains 0 and -1)
    # rbp_resid: unjudged x and d6 at ranks 1 and 5, six retrieved
    assert one["trec_rbp_resid"] == pytest.approx(0.9**6 + 0.1 * (1 + 0.9**4), abs=1e-15)
    assert one["trec_rbp_resid@0.5"] == pytest.approx(0.5**6 + 0.5 * (1 + 0.5**4), abs=1e-15)
    assert two["trec_rbp_resid"] == pytest.approx(0.9**2 + 0.1 * 0.9, abs=1e-15)
    # ERR: stopping probabilities 3/16 (grade 2), 1/16 (grade 1), 7/16 (grade 3)
    first, second = 3 / 16 / 3, 1 / 16 * (13 / 16) / 4
    assert one["err@4"] == pytest.approx(first + second, abs=1e-15)
    assert one["err"] == pytest.approx(first + second + 7 / 16 * (13 / 16) * (15 / 16) / 6, abs=1e-15)
    for name in ("ndcg", "ndcg@gains=1:3;2:9", "ndcg_rel", "rndcg", "gain_shortfall", "binary_gain_shortfall",
                 "trec_rbp", "err"):
        assert two[name] == 0.0, name


def test_rbp_resid_is_zero_when_every_retrieved_document_is_judged(tmp_path):
    values = evaluate(tmp_path, {"1": {"a": 1, "b": 0}}, [{"1": {"a": 2.0, "b": 1.0}}], ["trec_rbp_resid"])
    assert values[0, "1"]["trec_rbp_resid"] == 0.0


# --- random collections ------------------------------------------------------------------------------------

def random_collection(seed: int, max_grade: int = 3, numeric: bool = False):
    rng = np.random.default_rng(seed)
    qrels, runs = {}, []
    queries = [f"{100 + q}" for q in range(int(rng.integers(3, 10)))]
    levels = [0, 0, 0, -1] + list(range(1, max_grade + 1)) * 2
    for number, qid in enumerate(queries):
        pool = int(rng.integers(4, 50))
        grades = rng.choice(levels, size=pool)
        if number == 0:
            grades = np.minimum(grades, 0)  # a query without a relevant document
        qrels[qid] = {f"D{qid}x{d}": int(g) for d, g in enumerate(grades)}
    for _ in range(int(rng.integers(1, 4))):
        run = {}
        for qid in queries:
            if rng.random() < 0.15:
                continue  # query missing from this run
            depth = int(rng.integers(1, 80))
            docs = rng.choice([f"D{qid}x{d}" for d in range(60)], size=depth if depth < 60 else 60, replace=False)
            if rng.random() < 0.5:
                scores = rng.integers(0, 6, size=len(docs)).astype(float)  # many ties
            else:
                scores = np.round(rng.normal(size=len(docs)), 3)
            run[qid] = {str(d): float(s) for d, s in zip(docs, scores)}
        runs.append(run)
    return qrels, runs


def mapped(qrels: dict, text: str) -> dict:
    gains = {int(level): int(gain) for level, gain in (pair.split(":") for pair in text.split(";"))}
    return {q: {d: gains.get(g, g) for d, g in docs.items()} for q, docs in qrels.items()}


def assert_matches_trec_eval(values: dict, qrels: dict, runs: list[dict], names: dict, tolerance: float) -> int:
    """Every per-query value of trec_eval (pytrec_eval) equals prefeval's; returns how many were
    compared. ``names``: prefeval's name -> (trec_eval's, the qrels it reads)."""
    compared = 0
    by_qrels: dict = {}
    for ours, (theirs, judged) in names.items():
        by_qrels.setdefault(id(judged), (judged, {}))[1][ours] = theirs
    for judged, measures in by_qrels.values():
        evaluator = pytrec_eval.RelevanceEvaluator(judged, set(measures.values()))
        for n, run in enumerate(runs):
            for qid, theirs in evaluator.evaluate({q: d for q, d in run.items() if q in judged}).items():
                for ours_name, trec_name in measures.items():
                    assert values[n, qid][ours_name] == pytest.approx(theirs[trec_name], rel=tolerance,
                                                                      abs=tolerance), (n, qid, ours_name)
                    compared += 1
    return compared


def trec_eval_names(qrels: dict) -> dict:
    names = {ours: (theirs, qrels) for ours, theirs in TREC_EVAL_NAMES.items()}
    for text in MAPS:
        judged = mapped(qrels, text)
        for ours, theirs in TREC_EVAL_NAMES.items():
            # binG has no gains; Rndcg is 0 without a relevant document, which mapped qrels would add
            if ours != "binary_gain_shortfall" and not (ours == "rndcg" and text.startswith("0:2")):
                names[parse_measures([f"{ours}@gains={text}"])[0].name] = (theirs, judged)
    return names


@pytest.mark.parametrize("seed", range(20))
def test_random_collections_equal_trec_eval(tmp_path, seed):
    qrels, runs = random_collection(seed)
    names = trec_eval_names(qrels)
    values = evaluate(tmp_path, qrels, runs, list(names))
    assert assert_matches_trec_eval(values, qrels, runs, names, 1e-12) > 0


def test_robust03_equals_trec_eval(tmp_path):
    data = robust03_or_skip()
    qrels = read_qrels(data / "qrels.txt")
    # the runs' ties broken as trec_eval breaks them (docno descending) into distinct scores: pytrec_eval
    # orders some tied documents of robust03 otherwise
    runs = [untied(read_run(path)) for path in sorted((data / "runs").glob("input.*.gz"))[:5]]
    names = trec_eval_names(qrels)
    run_paths = [write_run(tmp_path / f"run{n}", run, tag=f"run{n}") for n, run in enumerate(runs)]
    frame = prefeval.evaluate(str(data / "qrels.txt"), run_paths, list(names), empty_queries="keep")
    values = {(int(row["run"][3:]), str(row["qid"])): row for row in frame.to_dict("records")}
    assert assert_matches_trec_eval(values, qrels, runs, names, 1e-12) > 1000


def untied(run: dict) -> dict:
    """The run with distinct scores, in trec_eval's order (score descending, then docno descending)."""
    ordered = {}
    for qid, docs in run.items():
        ranking = sorted(sorted(docs, reverse=True), key=lambda doc: -docs[doc])
        ordered[qid] = {doc: float(len(ranking) - place) for place, doc in enumerate(ranking)}
    return ordered


def read_qrels(path) -> dict:
    qrels: dict = {}
    with open(path) as lines:
        for line in lines:
            qid, _, docid, grade = line.split()
            qrels.setdefault(qid, {})[docid] = int(grade)
    return qrels


def read_run(path) -> dict:
    run: dict = {}
    with gzip.open(path, "rt") as lines:
        for line in lines:
            qid, _, docid, _, score, _ = line.split()
            run.setdefault(qid, {})[docid] = float(score)
    return run


# --- ir_measures -------------------------------------------------------------------------------------------

def ir_measures_values(qrels: dict, runs: list[dict], measures: dict) -> list[dict]:
    """ir_measures' per-query values, one dict {(qid, prefeval name): value} per run."""
    parsed = {ir_measures.parse_measure(text): ours for ours, text in measures.items()}
    judged = {q: d for q, d in qrels.items() if d}
    found = []
    for run in runs:
        values = {}
        for metric in ir_measures.iter_calc(list(parsed), judged, run):
            values[metric.query_id, parsed[metric.measure]] = metric.value
        found.append(values)
    return found


@pytest.mark.parametrize("seed", range(10))
def test_random_collections_equal_ir_measures_ndcg_gains(tmp_path, seed):
    qrels, runs = random_collection(seed)
    measures = {"ndcg,gains=0:0;1:1;2:3": "nDCG(gains={0:0,1:1,2:3})",
                "ndcg@5,gains=0:0;1:1;2:3": "nDCG(gains={0:0,1:1,2:3})@5",
                "ndcg@10,gains=1:4;3:1": "nDCG(gains={1:4,3:1})@10"}
    values = evaluate(tmp_path, qrels, runs, list(measures))
    compared = 0
    for n, theirs in enumerate(ir_measures_values(qrels, runs, measures)):
        for (qid, name), value in theirs.items():
            assert values[n, qid][parse_measures([name])[0].name] == pytest.approx(value, abs=1e-12), (n, qid, name)
            compared += 1
    assert compared > 0


needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval (ir_measures' ERR) needs perl")


@needs_perl
@pytest.mark.parametrize("seed", range(6))
def test_random_collections_equal_ir_measures_err_and_exp_ndcg(tmp_path, seed):
    qrels, runs = random_collection(seed, max_grade=4)
    measures = {"err@5": "ERR@5", "err@20": "ERR@20", "ndcg_exp@10": "nDCG(dcg='exp-log2')@10",
                "ndcg_exp@20": "nDCG(dcg='exp-log2')@20"}
    values = evaluate(tmp_path, qrels, runs, list(measures))
    compared = 0
    for n, theirs in enumerate(ir_measures_values(qrels, runs, measures)):
        for (qid, name), value in theirs.items():
            # gdeval prints its values rounded to 5 decimals
            assert values[n, qid][name] == pytest.approx(value, abs=5.000001e-6), (n, qid, name)
            compared += 1
    assert compared > 0


# --- a trec_eval binary: rbp and rbp_resid -------------------------------------------------------------

TREC_EVAL = os.environ.get("PREFEVAL_TREC_EVAL")
needs_trec_eval = pytest.mark.skipif(not TREC_EVAL, reason="set PREFEVAL_TREC_EVAL to a trec_eval 10 binary")


def trec_eval_values(qrels_path: str, run_path: str, measures: list[str]) -> dict:
    """trec_eval -q: {(qid, measure): value}, at the 4 decimals trec_eval prints."""
    args = [TREC_EVAL, "-q", "-c"] + [f"-m{m}" for m in measures] + [qrels_path, run_path]
    output = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    found = {}
    for line in output.splitlines():
        measure, qid, value = line.split()
        if qid != "all":
            found[qid, measure] = float(value)
    return found


@needs_trec_eval
@pytest.mark.parametrize("seed", range(10))
def test_random_collections_equal_trec_eval_rbp(tmp_path, seed):
    qrels, runs = random_collection(seed, max_grade=2 + seed % 3)
    pairs = {"trec_rbp": "rbp", "trec_rbp@0.5": "rbp.p=0.5", "trec_rbp@0.95,gains=1:3;2:7": "rbp.p=0.95,1=3,2=7",
             "trec_rbp_resid": "rbp_resid", "trec_rbp_resid@0.5": "rbp_resid.p=0.5",
             "trec_rbp@0.9,gains=1:-1": "rbp.1=-1", "ndcg@gains=1:1.5;2:9": "ndcg.1=1.5,2=9",
             "ndcg@gains=0:2;2:-1": "ndcg.0=2,2=-1", "ndcg_rel@gains=0:1;1:-1": "ndcg_rel.0=1,1=-1",
             "rndcg@gains=1:5;3:-2": "Rndcg.1=5,3=-2", "gain_shortfall@gains=0:2;2:-1.5": "G.0=2,2=-1.5"}
    values = evaluate(tmp_path, qrels, runs, list(pairs))
    compared = 0
    for n in range(len(runs)):
        for ours, theirs in pairs.items():
            found = trec_eval_values(str(tmp_path / "qrels"), str(tmp_path / f"run{n}"), [theirs])
            for (qid, _), value in found.items():
                if qid not in runs[n]:
                    continue  # -c: trec_eval's placeholder ranking (see trec_rbp_resid)
                assert values[n, qid][parse_measures([ours])[0].name] == pytest.approx(value, abs=5.000001e-5), (
                    n, qid, ours)
                compared += 1
    assert compared > 0
