"""The measures that read judged non-relevant and unjudged documents (prefeval/measures/judged.py):
hand-computed cases, and per-query agreement with trec_eval (through pytrec_eval) and ir_measures on
random collections and on robust03.

The random collections have graded qrels with judged non-relevant documents, unjudged documents of the
pool (grades -1 and -2), documents outside the qrels, unretrieved relevant documents, queries without a
relevant document (kept, trec_eval's convention), queries missing from runs and runs shorter than the
cut-offs.
"""

from __future__ import annotations

import gzip
import math

import numpy as np
import pytest
from conftest import random_runs, robust03_or_skip, write_qrels, write_run

import prefeval
import prefeval.measures.judged  # noqa: F401  (registers the measures until the package imports them)
from prefeval.measures import parse_measure, parse_measures
from prefeval.measures.aggregators import GEOMETRIC, SUM

pytrec_eval = pytest.importorskip("pytrec_eval")
ir_measures = pytest.importorskip("ir_measures")

EPSILON = 1e-5
"""trec_eval's INFAP_EPSILON."""

JUDGED_MEASURES = ["bpref", "gm_bpref", "infap", "num_nonrel_judged_ret", "unj@1", "unj@2", "unj@7", "unj@0",
                   "judged@2", "judged@7", "judged@0", "accuracy", "accuracy@3", "compat", "compat@0.8,0"]


def evaluate(tmp_path, qrels: dict, runs: list[dict], measures, **options) -> dict:
    """prefeval's per-query values through the public API, queries without a relevant document kept:
    {(run number, qid): {measure name as given: value}}."""
    qrels_path = write_qrels(tmp_path / "qrels", qrels)
    run_paths = [write_run(tmp_path / f"run{n}", run, tag=f"run{n}") for n, run in enumerate(runs)]
    frame = prefeval.evaluate(qrels_path, run_paths, measures, empty_queries="keep", **options)
    columns = {name: parse_measure(name).name for name in measures}
    return {(int(row["run"][3:]), str(row["qid"])): {name: float(row[column]) for name, column in columns.items()}
            for row in frame.to_dict("records")}


# --- hand-computed cases -------------------------------------------------------------------------------

HAND_QRELS = {
    "1": {"a": 1, "b": 0, "c": -1, "d": 2, "e": 0, "f": -2},
    "2": {"x": 0, "y": -1},  # no relevant document
    "3": {"r1": 1, "r2": 1, "r3": 1, "n1": 0, "n2": 0, "n3": 0},
}
HAND_RUN = {
    # z is outside the qrels, c and f unjudged in the pool, d (grade 2) not retrieved
    "1": {"z": 10.0, "b": 9.0, "c": 8.0, "a": 7.0, "f": 6.0, "e": 5.0},
    "2": {"x": 3.0, "w": 2.0},
    # r3 not retrieved; more judged non-relevant documents (3) than relevant ones retrieved before them
    "3": {"n1": 5.0, "r1": 4.0, "n2": 3.0, "n3": 2.0, "r2": 1.0},
}


def test_hand_computed_values(tmp_path):
    values = evaluate(tmp_path, HAND_QRELS, [HAND_RUN], JUDGED_MEASURES)
    one, two, three = values[0, "1"], values[0, "2"], values[0, "3"]
    # bpref: m = 2, N = 2 judged non-relevant (b, e); a has b above it: 1 - 1/2
    assert one["bpref"] == 0.5 / 2
    assert two["bpref"] == 0.0
    # m = 3, N = 3: r1 has 1 above (1 - 1/3), r2 has 3 above (1 - 3/3), r3 unretrieved
    assert three["bpref"] == pytest.approx((1 - 1 / 3) / 3, abs=1e-15)
    assert (one["gm_bpref"], two["gm_bpref"], three["gm_bpref"]) == (one["bpref"], two["bpref"], three["bpref"])
    # infAP: a at rank 4 has 0 relevant, 1 judged non-relevant (b), 1 unjudged (c) and z above it
    assert one["infap"] == pytest.approx((1 / 4 + 3 / 4 * (2 / 3) * (EPSILON / (1 + 2 * EPSILON))) / 2, abs=1e-15)
    assert two["infap"] == 0.0
    r1 = 1 / 2 + 1 / 2 * (1 / 1) * (EPSILON / (1 + 2 * EPSILON))
    r2 = 1 / 5 + 4 / 5 * (4 / 4) * ((1 + EPSILON) / (1 + 3 + 2 * EPSILON))
    assert three["infap"] == pytest.approx((r1 + r2) / 3, abs=1e-15)
    assert [v["num_nonrel_judged_ret"] for v in (one, two, three)] == [2, 1, 3]
    # unj: z, c, f unjudged in query 1 (ranks 1, 3, 5); w in query 2 (rank 2); none in query 3
    assert [one[f"unj@{k}"] for k in (1, 2, 7, 0)] == [1.0, 0.5, 3 / 7, 3 / 6]
    assert [two[f"unj@{k}"] for k in (1, 2, 7, 0)] == [0.0, 0.5, 1 / 7, 1 / 2]
    assert [three[f"unj@{k}"] for k in (1, 2, 7, 0)] == [0.0] * 4
    # judged (ir_measures): c and f are in the qrels, so judged; the denominator is at most the list
    assert [one[f"judged@{k}"] for k in (2, 7, 0)] == [0.5, 5 / 6, 5 / 6]
    assert [two[f"judged@{k}"] for k in (2, 7, 0)] == [0.5, 0.5, 0.5]
    assert [three[f"judged@{k}"] for k in (2, 7, 0)] == [1.0, 1.0, 1.0]
    # accuracy: query 1: a has 3 non-relevant documents above it out of 5; query 3: r1 has 1, r2 3,
    # out of 3 each; cut at 3: r1 has 1 of 2 above it
    assert one["accuracy"] == 1 - 3 / 5
    assert two["accuracy"] == 0.0
    assert three["accuracy"] == 1 - 4 / 6
    assert three["accuracy@3"] == 1 - 1 / 2
    # compat: the ideal is d (grade 2), a; a is at rank 4 in the run and 2 in the ideal, D = 6
    assert one["compat"] == pytest.approx(rbo_sum(0.95, 4, 6) / (rbo_sum(0.95, 1, 6) + rbo_sum(0.95, 2, 6)), abs=1e-15)
    assert two["compat"] == 0.0
    ideal = sum(rbo_sum(0.8, i, 5) for i in (1, 2, 3))
    normalizer = sum(0.8 ** (d - 1) for d in range(1, 6))
    # query 3: ideal r1, r2, r3 (equal grades, the run's order); r1: max(2, 1), r2: max(5, 2)
    assert three["compat@0.8,0"] == pytest.approx((rbo_sum(0.8, 2, 5) + rbo_sum(0.8, 5, 5)) / normalizer, abs=1e-15)
    assert three["compat"] == pytest.approx((rbo_sum(0.95, 2, 5) + rbo_sum(0.95, 5, 5))
                                            / sum(rbo_sum(0.95, i, 5) for i in (1, 2, 3)), abs=1e-15)
    assert ideal > 0


def rbo_sum(p: float, first: int, depth: int) -> float:
    """Σ_{d=first}^{depth} p^(d-1) / d: what one document at depth ``first`` of both lists adds to RBO."""
    return sum(p ** (d - 1) / d for d in range(first, depth + 1))


def test_hand_case_equals_trec_eval(tmp_path):
    values = evaluate(tmp_path, HAND_QRELS, [HAND_RUN], ["bpref", "infap", "num_nonrel_judged_ret"])
    evaluator = pytrec_eval.RelevanceEvaluator(HAND_QRELS, {"bpref", "infAP", "num_nonrel_judged_ret"})
    expected = evaluator.evaluate(HAND_RUN)
    for qid, trec in expected.items():
        assert values[0, qid]["bpref"] == trec["bpref"]
        assert values[0, qid]["infap"] == trec["infAP"]
        assert values[0, qid]["num_nonrel_judged_ret"] == trec["num_nonrel_judged_ret"]


def test_all_relevant_list_accuracy_is_one_where_ir_measures_divides_by_zero(tmp_path):
    qrels = {"1": {"r1": 1, "r2": 2, "r3": 1, "n": 0}}
    run = {"1": {"r1": 2.0, "r2": 1.0}}  # ends on a relevant document, and holds no non-relevant one
    assert evaluate(tmp_path, qrels, [run], ["accuracy"])[0, "1"]["accuracy"] == 1.0
    with pytest.raises(ZeroDivisionError):
        list(ir_measures.iter_calc([ir_measures.Accuracy()], qrels, run))
    # a list that ends on a relevant document after a non-relevant one is well defined in both
    run = {"1": {"n": 3.0, "r1": 2.0}}
    (metric,) = ir_measures.iter_calc([ir_measures.Accuracy()], qrels, run)
    assert evaluate(tmp_path, qrels, [run], ["accuracy"])[0, "1"]["accuracy"] == metric.value == 0.0


def test_relevance_level_moves_documents_to_judged_non_relevant(tmp_path):
    # at level 2, a (grade 1) is judged non-relevant: bpref counts it above d
    qrels = {"1": {"a": 1, "d": 2, "b": 0}}
    run = {"1": {"a": 3.0, "d": 2.0, "b": 1.0}}
    values = evaluate(tmp_path, qrels, [run], ["bpref", "num_nonrel_judged_ret", "judged@2"], relevance_level=2)
    assert values[0, "1"] == {"bpref": 0.0, "num_nonrel_judged_ret": 2.0, "judged@2": 1.0}
    values = evaluate(tmp_path, qrels, [run], ["bpref@rel=2", "bpref"])
    assert values[0, "1"] == {"bpref@rel=2": 0.0, "bpref": 1.0}


def test_gm_bpref_summary_is_the_geometric_mean(tmp_path):
    qrels_path = write_qrels(tmp_path / "qrels", HAND_QRELS)
    run_path = write_run(tmp_path / "run0", HAND_RUN, tag="run0")
    frame = prefeval.evaluate(qrels_path, [run_path], ["bpref", "gm_bpref"], empty_queries="keep", per_query=False)
    per_query = evaluate(tmp_path, HAND_QRELS, [HAND_RUN], ["bpref"])
    bprefs = [values["bpref"] for values in per_query.values()]
    assert frame["gm_bpref"].iloc[0] == pytest.approx(math.exp(np.mean(np.log(np.maximum(bprefs, 1e-5)))), rel=1e-12)
    assert frame["bpref"].iloc[0] == pytest.approx(np.mean(bprefs), rel=1e-12)


def test_measure_names_and_flags():
    assert parse_measure("compat@0.95,True").name == "compat@0.95,1"
    assert parse_measure("compat").values == parse_measure("compat@0.95,true").values
    assert parse_measure("compat@0.9,false").param("normalize") == 0
    # ir_measures' plain names read as prefeval's: Judged is the whole list, Accuracy too
    assert parse_measure("Judged").values == parse_measure("judged@0").values
    assert parse_measure("judged").param("k") == parse_measure("Accuracy").param("k") == 0
    unj = parse_measure("unj@10")
    assert unj.param("k") == 10 and unj.reads_judged and not unj.counts
    # unj alone is trec_eval's list, as trec_eval reads it
    assert [m.name for m in parse_measures(["unj"])] == ["unj@5", "unj@10", "unj@20"]
    count = parse_measure("num_nonrel_judged_ret")
    assert count.counts and count.aggregator is SUM and count.bounds == (0.0, np.inf)
    assert parse_measure("gm_bpref").aggregator is GEOMETRIC
    assert not parse_measure("accuracy").reads_judged and not parse_measure("compat").reads_judged


# --- random collections --------------------------------------------------------------------------------

def random_collection(seed: int, ties: bool = False):
    """Qrels with grades -2..3 (some queries without a relevant document, every query with a grade >= 0),
    and 1-3 runs with distinct positive scores (or many ties), some queries missing."""
    rng = np.random.default_rng(seed)
    qrels = {}
    queries = [f"{100 + q}" for q in range(int(rng.integers(4, 12)))]
    for number, qid in enumerate(queries):
        pool = int(rng.integers(1, 40))
        choices = [-2, -1, 0, 0, 0, 1, 1, 2, 3] if number % 4 else [-2, -1, 0, 0]
        grades = rng.choice(choices, size=pool)
        if (grades < 0).all():  # trec_eval refuses (pytrec_eval crashes on) a query judged only so
            grades[0] = 0
        qrels[qid] = {f"D{qid}-{d}": int(g) for d, g in enumerate(grades)}

    def scored(rng, docs):
        if ties:
            return docs, rng.integers(0, 5, size=len(docs)).astype(float)
        return docs, rng.permutation(len(docs)) + 1.0 + rng.random()

    runs = random_runs(rng, queries, 50, 60, scored)
    return qrels, runs


def compare(ours: dict, expected: dict, pairs: dict[str, str], where, abs_tolerance: float = 1e-12) -> int:
    """Assert ours[name] == expected[theirs] for each (name: theirs) pair, per query; the count."""
    compared = 0
    for qid, theirs in expected.items():
        for name, their_name in pairs.items():
            assert ours[qid][name] == pytest.approx(theirs[their_name], abs=abs_tolerance), (where, qid, name)
            compared += 1
    return compared


TREC_EVAL_PAIRS = {"bpref": "bpref", "infap": "infAP", "num_nonrel_judged_ret": "num_nonrel_judged_ret"}


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("level", [1, 2])
def test_equal_trec_eval_per_query(tmp_path, seed, ties, level):
    qrels, runs = random_collection(seed, ties)
    ours = evaluate(tmp_path, qrels, runs, list(TREC_EVAL_PAIRS) + ["gm_bpref"], relevance_level=level)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_EVAL_PAIRS.values()) | {"gm_bpref"},
                                               relevance_level=level)
    compared = 0
    for n, run in enumerate(runs):
        expected = evaluator.evaluate(run)
        per_query = {qid: ours[n, qid] for qid in expected}
        compared += compare(per_query, expected, TREC_EVAL_PAIRS, (seed, n))
        for qid, theirs in expected.items():  # pytrec_eval's per-query gm_bpref is log(max(bpref, 1e-5))
            assert math.log(max(per_query[qid]["gm_bpref"], 1e-5)) == pytest.approx(theirs["gm_bpref"], abs=1e-12)
        # a query the run did not answer scores 0 (trec_eval -c)
        for (number, qid), values in ours.items():
            if number == n and qid not in run:
                assert all(value == 0 for value in values.values()), (seed, n, qid)
    assert compared > 0


def trec_eval_order(scores: dict[str, float]) -> list[str]:
    """The documents by score descending, ties by docid descending (trec_eval's order)."""
    return sorted(sorted(scores, reverse=True), key=lambda d: -scores[d])


def test_unj_equals_trec_eval(tmp_path):
    """trec_eval's unj is not in pytrec_eval's build; its definition, counted by hand per query."""
    qrels, runs = random_collection(7)
    cutoffs = (1, 5, 10, 20, 100)
    ours = evaluate(tmp_path, qrels, runs, [f"unj@{k}" for k in cutoffs])
    for n, run in enumerate(runs):
        for qid, scores in run.items():
            if qid not in qrels:
                continue
            ranking = trec_eval_order(scores)
            for k in cutoffs:
                unjudged = sum(qrels[qid].get(d, -1) < 0 for d in ranking[:k])
                assert ours[n, qid][f"unj@{k}"] == unjudged / k


IR_MEASURES_PAIRS = {
    "judged@1": "Judged@1", "judged@5": "Judged@5", "judged@10": "Judged@10", "judged@0": "Judged",
    "bpref": "Bpref", "infap": "infAP", "compat": "Compat", "compat@0.8": "Compat(p=0.8)",
    "compat@0.95,0": "Compat(normalize=False)", "accuracy": "Accuracy", "accuracy@5": "Accuracy@5",
}


ZERO_DIVISION = "ZeroDivisionError"


def ir_measures_values(qrels: dict, run: dict, names: list[str]) -> dict[str, dict[str, float | str]]:
    """ir_measures' per-query values, {qid: {measure: value}}. Accuracy one query at a time: it raises
    ZeroDivisionError on a list without a non-relevant document (recorded as ZERO_DIVISION)."""
    measures = [ir_measures.parse_measure(name) for name in names]
    accuracy = [measure for measure in measures if measure.NAME == "Accuracy"]
    values: dict[str, dict[str, float | str]] = {}
    for metric in ir_measures.iter_calc([m for m in measures if m not in accuracy], qrels, run):
        values.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    for qid in run:
        for measure in accuracy:
            try:
                for metric in ir_measures.iter_calc([measure], {qid: qrels.get(qid, {})}, {qid: run[qid]}):
                    values.setdefault(qid, {})[str(measure)] = metric.value
            except ZeroDivisionError:
                values.setdefault(qid, {})[str(measure)] = ZERO_DIVISION
    return values


@pytest.mark.parametrize("seed", range(12))
def test_equal_ir_measures_per_query(tmp_path, seed):
    qrels, runs = random_collection(seed)
    ours = evaluate(tmp_path, qrels, runs, list(IR_MEASURES_PAIRS))
    names = {str(ir_measures.parse_measure(theirs)): ours_name for ours_name, theirs in IR_MEASURES_PAIRS.items()}
    compared = 0
    for n, run in enumerate(runs):
        expected = ir_measures_values(qrels, run, list(IR_MEASURES_PAIRS.values()))
        for qid in run:
            if qid not in qrels:
                continue
            for their_name, our_name in names.items():
                value = expected.get(qid, {}).get(their_name)
                if value is None:  # Accuracy without a relevant document retrieved within the cut
                    assert their_name.startswith("Accuracy") and ours[n, qid][our_name] == 0.0, (seed, n, qid)
                elif value == ZERO_DIVISION:  # every document within the cut is relevant
                    assert ours[n, qid][our_name] == 1.0, (seed, n, qid, their_name)
                else:
                    assert ours[n, qid][our_name] == pytest.approx(value, abs=1e-12), (seed, n, qid, their_name)
                compared += 1
    assert compared > 0


# --- robust03 ------------------------------------------------------------------------------------------

ROBUST_RUNS = ("MU03rob01", "NLPR03vb10", "InexpC2")


def read_run(path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with gzip.open(path, "rt") as handle:
        for line in handle:
            qid, _, docid, _, score, *_ = line.split()
            run.setdefault(qid, {})[docid] = float(score)
    return run


def read_qrels(path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as handle:
        for line in handle:
            qid, _, docid, grade = line.split()
            qrels.setdefault(qid, {})[docid] = int(grade)
    return qrels


def untied(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The same lists, in trec_eval's order, with distinct small integer scores. pytrec_eval rounds
    scores to single precision (robust03 has scores that differ in the 8th digit, which trec_eval
    orders apart and pytrec_eval ties), and ir_measures' own implementations break ties otherwise:
    on these lists both rank as trec_eval does on the original scores."""
    ranked = {}
    for qid, scores in run.items():
        order = trec_eval_order(scores)
        ranked[qid] = {d: float(len(order) - r) for r, d in enumerate(order)}
    return ranked


def test_robust03_equals_trec_eval_and_ir_measures():
    data = robust03_or_skip()
    qrels_path = str(data / "qrels.txt")
    qrels = read_qrels(qrels_path)
    runs = {name: untied(read_run(data / "runs" / f"input.{name}.gz")) for name in ROBUST_RUNS}
    pairs = {"judged@10": "Judged@10", "judged@100": "Judged@100", "compat": "Compat", "accuracy": "Accuracy",
             "accuracy@20": "Accuracy@20", "bpref": "Bpref", "infap": "infAP"}
    measures = list(dict.fromkeys([*TREC_EVAL_PAIRS, "gm_bpref", *pairs]))
    ours = prefeval.evaluate(qrels_path, [str(data / "runs" / f"input.{name}.gz") for name in ROBUST_RUNS],
                             measures, empty_queries="keep").set_index(["run", "qid"])
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_EVAL_PAIRS.values()) | {"gm_bpref"})
    names = {str(ir_measures.parse_measure(theirs)): ours_name for ours_name, theirs in pairs.items()}
    compared = 0
    for name, run in runs.items():
        for qid, theirs in evaluator.evaluate(run).items():
            row = ours.loc[(name, qid)]
            for our_name, their_name in TREC_EVAL_PAIRS.items():
                assert row[our_name] == pytest.approx(theirs[their_name], abs=1e-12), (name, qid, our_name)
                compared += 1
            assert math.log(max(row["gm_bpref"], 1e-5)) == pytest.approx(theirs["gm_bpref"], abs=1e-12)
        for qid, theirs in ir_measures_values(qrels, run, list(pairs.values())).items():
            row = ours.loc[(name, qid)]
            for their_name, value in theirs.items():
                expected = 1.0 if value == ZERO_DIVISION else value
                assert row[names[their_name]] == pytest.approx(expected, abs=1e-12), (name, qid, their_name)
                compared += 1
    assert compared > 3 * 10 * 40
