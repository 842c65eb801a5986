"""trec_eval's counts (num_ret, num_rel, num_rel_ret, num_q), gm_ap, interpolated precision (iprec,
iprec_avg), Rprec_mult, relative_P, set_map and utility; and prauc and recall_at_precision.

Hand-computed values (trec_eval 10's where it has the measure), a small reference implementation
that walks each ranking as trec_eval does, and per-query agreement with pytrec_eval (the trec_eval
inside it rounds recall levels as trec_eval 9 did, prefeval's default; trec_eval 10's rounding is
``iprec@r,0.5``) and ir_measures, on random collections and on robust03.
"""

from __future__ import annotations

import math
import os
import subprocess

import numpy as np
import pytest
from conftest import random_runs, robust03_or_skip, run_cli, write_qrels, write_run

import prefeval
from prefeval.measures import counts, interpolated, parse_measure, set_based  # noqa: F401  (registers them)
from prefeval.runtime.notes import Note

pytestmark = pytest.mark.filterwarnings(f"ignore::{Note.__module__}.{Note.__name__}")
"""The notes on queries missing from a run or without relevant documents: expected here."""

KEEP = {"empty_queries": "keep"}
"""trec_eval's convention: a query without relevant documents is evaluated."""

QRELS = {"q1": {"a": 1, "b": 0, "c": 2, "d": 1}, "q2": {"x": 0, "y": 0}, "q3": {"e": 1, "f": 0}}
RUN = {"q1": {"a": 3.0, "z": 2.5, "c": 2.0, "b": 1.0}, "q2": {"x": 1.0, "w": 0.5}}
"""q1: m = 3 relevant (a, c, d), the run ranks a, z (not judged), c, b (judged non-relevant): x = (1, 3, inf),
n = 4, h = 2. q2: no relevant document, n = 2. q3: m = 1, missing from the run (n = 0)."""

EXPECTED = {
    "num_ret": (4, 2, 0),
    "num_rel": (3, 0, 1),
    "num_rel_ret": (2, 0, 0),
    "num_q": (1, 1, 1),
    "gm_ap": ((1 + 2 / 3) / 3, 0, 0),
    # trec_eval 10: recall level r -> lround(3r) relevant documents: 0.4 -> 1, 0.5 -> 2, 0.8 -> 2, 0.9 -> 3
    "iprec@0,0.5": (1, 0, 0),
    "iprec@0.4,0.5": (1, 0, 0),
    "iprec@0.5,0.5": (2 / 3, 0, 0),
    "iprec@0.8,0.5": (2 / 3, 0, 0),
    "iprec@0.9,0.5": (0, 0, 0),
    # the default, trec_eval 9 / pytrec_eval: floor(3r + 0.9): 0.4 -> 2, 0.7 -> 2 (3 * 0.7 is 2.0999...), 0.8 -> 3
    "iprec": (1, 0, 0),
    "iprec@0.3": (1, 0, 0),
    "iprec@0.4": (2 / 3, 0, 0),
    "iprec@0.7": (2 / 3, 0, 0),
    "iprec@0.8": (0, 0, 0),
    # levels 0 .. 0.4 at 1, 0.5 .. 0.8 at 2/3, 0.9 and 1 at 0 (trec_eval 10 prints 0.6970)
    "iprec_avg@11,0.5": ((5 + 4 * (2 / 3)) / 11, 0, 0),
    # levels 0 .. 0.3 at 1, 0.4 .. 0.7 at 2/3 (pytrec_eval prints 0.606060...)
    "iprec_avg": ((4 + 4 * (2 / 3)) / 11, 0, 0),
    # (1/(2m)) * ((1 + 1) + (1/2 + 2/3)) = 19/36; AP - prauc = (1/6) * (3 - 2) / (3 * 2) = 1/36
    "prauc": (19 / 36, 0, 0),
    "recall_at_precision@0.6": (2 / 3, 0, 0),
    "r_at_p@0.7": (1 / 3, 0, 0),
    "r_at_p@0": (2 / 3, 0, 0),
    "r_at_p@1": (1 / 3, 0, 0),
    # c = floor(f * 3 + 0.9): 0.2 -> 1, 1 -> 3, 1.4 -> 5 (beyond n = 4: h / 5)
    "rp_mult@0.2": (1, 0, 0),
    "rp_mult": (2 / 3, 0, 0),
    "rp_mult@1.4": (2 / 5, 0, 0),
    "relative_p@1": (1, 0, 0),
    "relative_p@2": (1 / 2, 0, 0),
    "relative_p@5": (2 / 3, 0, 0),
    "relative_p@0": (2 / 3, 0, 0),
    "set_ap": (4 / 12, 0, 0),
    "utility": (0, -2, 0),
    # 2*2 - 1*(4-2) - 0.5*(3-2) + 0.25*(100+2-4-3); q2: -2 + 0.25*(100-2); q3, missing: -0.5*1 + 0.25*(100-1)
    "utility@2,-1,-0.5,0.25,100": (25.25, 22.5, 24.25),
}


@pytest.fixture(scope="module")
def hand_frame(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hand")
    qrels = write_qrels(folder / "qrels", QRELS)
    run = write_run(folder / "run", RUN)
    return prefeval.evaluate(qrels, [run], list(EXPECTED), **KEEP).set_index("qid")


@pytest.mark.parametrize("name", list(EXPECTED))
def test_hand_computed_values(hand_frame, name):
    column = parse_measure(name).name
    for qid, expected in zip(("q1", "q2", "q3"), EXPECTED[name]):
        assert hand_frame.loc[qid, column] == pytest.approx(expected, abs=1e-15), (name, qid)


def test_summaries_sum_the_counts_and_take_the_geometric_mean_of_ap(tmp_path):
    qrels = write_qrels(tmp_path / "qrels", QRELS)
    run = write_run(tmp_path / "run", RUN)
    summary = prefeval.evaluate(qrels, [run], ["num_ret", "num_rel", "num_rel_ret", "num_q", "gm_ap", "set_ap"],
                                per_query=False, **KEEP).iloc[0]
    assert (summary["num_ret"], summary["num_rel"], summary["num_rel_ret"], summary["num_q"]) == (6, 4, 2, 3)
    # trec_eval -c: exp(mean(log(max(AP, 1e-5)))) over the three queries
    assert summary["gm_ap"] == pytest.approx(math.exp((math.log(5 / 9) + 2 * math.log(1e-5)) / 3), rel=1e-12)
    assert summary["set_ap"] == pytest.approx(1 / 9)


def test_an_empty_run_scores_zero_and_counts_nothing_retrieved(tmp_path):
    qrels = write_qrels(tmp_path / "qrels", {"q1": {"a": 1, "b": 2, "c": 0}, "q2": {"a": 1}})
    run = write_run(tmp_path / "run", {"q2": {"a": 1.0}})  # nothing for q1
    names = ["num_ret", "num_rel", "num_rel_ret", "num_q", "gm_ap", "iprec", "iprec_avg", "prauc", "r_at_p@0",
             "rp_mult", "relative_p@0", "set_ap", "utility"]
    row = prefeval.evaluate(qrels, [run], names).set_index("qid").loc["q1"]
    values = {name: row[parse_measure(name).name] for name in names}
    assert values == {**dict.fromkeys(names, 0.0), "num_rel": 2.0, "num_q": 1.0}


def test_prauc_is_at_most_ap_and_equals_it_when_the_relevant_documents_come_first(tmp_path):
    qrels = write_qrels(tmp_path / "qrels", {"q1": {"a": 1, "b": 1, "c": 1, "d": 0}, "q2": {"a": 1, "b": 1}})
    run = write_run(tmp_path / "run", {"q1": {"a": 4.0, "b": 3.0, "d": 2.0, "c": 1.0}, "q2": {"a": 2.0, "z": 1.0}})
    frame = prefeval.evaluate(qrels, [run], ["prauc", "ap"]).set_index("qid")
    # q1: x = (1, 2, 4): the third adds (2/3 + 3/4) / 2 where AP adds 3/4
    assert frame.loc["q1", "prauc"] == pytest.approx((2 + 2 + 2 / 3 + 3 / 4) / 6)
    assert frame.loc["q1", "ap"] - frame.loc["q1", "prauc"] == pytest.approx((4 - 3) / (4 * 3) / 6)
    assert frame.loc["q2", "prauc"] == frame.loc["q2", "ap"] == 0.5


# --- a reference that walks the ranking, as trec_eval does ---------------------------------------------


def ranked_relevance(qrels: dict, run: dict, qid: str, level: int = 1) -> tuple[list[bool], int]:
    """The relevance of each retrieved document in trec_eval's order (score descending, then docid
    descending), and m."""
    docs = sorted(run.get(qid, {}).items(), key=lambda item: (item[1], item[0]), reverse=True)
    judged = qrels[qid]
    return [judged.get(doc, -1) >= level for doc, _ in docs], sum(g >= level for g in judged.values())


def c_lround(value: float) -> int:
    return int(math.floor(value + 0.5)) if value - math.floor(value) != 0.5 else int(math.floor(value)) + 1


def reference_values(relevant: list[bool], m: int, utility=(1.0, -1.0, 0.0, 0.0, 0)) -> dict[str, float]:
    """Every measure of this module for one ranking, the straightforward way."""
    n, h = len(relevant), sum(relevant)
    ranks = [rank for rank, rel in enumerate(relevant, start=1) if rel]
    precisions = [i / x for i, x in enumerate(ranks, start=1)]

    def iprec(level: float, rounding: str) -> float:
        count = c_lround(level * m) if rounding == "10" else int(level * m + 0.9)
        later = precisions[max(count, 1) - 1:]
        return max(later, default=0.0)

    def precision_at(cutoff: int) -> float:
        return sum(relevant[:cutoff]) / cutoff if cutoff else 0.0

    values = {
        "num_ret": n, "num_rel": m, "num_rel_ret": h, "num_q": 1,
        "gm_ap": sum(precisions) / m if m else 0.0,
        "prauc": sum(((i - 1) / (x - 1) if x > 1 else 1.0) + i / x for i, x in enumerate(ranks, 1)) / (2 * m)
        if m else 0.0,
        "set_ap": h * h / (n * m) if n and m else 0.0,
        "relative_p@0": h / min(n, m) if n and m else 0.0,
    }
    for level in (0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.9, 1.0):
        values[f"iprec@{level}"] = iprec(level, "9")
        values[f"iprec@{level},0.5"] = iprec(level, "10")
    for rounding, name in (("10", "iprec_avg@11,0.5"), ("9", "iprec_avg")):
        total = 0.0
        for level in range(10, -1, -1):
            total += iprec(level / 10, rounding)
        values[name] = total / 11
    for p in (0.0, 0.2, 0.5, 1.0):
        values[f"r_at_p@{p}"] = max([i / m for i, x in enumerate(ranks, 1) if i / x >= p], default=0.0)
    for f in (0.2, 0.5, 1.0, 1.4, 2.0):
        cutoff = int(f * m + 0.9)
        values[f"rp_mult@{f}"] = sum(relevant[:cutoff]) / cutoff if cutoff else 0.0
    for k in (1, 3, 5, 10, 100):
        values[f"relative_p@{k}"] = sum(relevant[:k]) / min(k, m) if m else 0.0
    a, b, c, d, size = utility
    values["utility@" + ",".join(map(str, utility))] = a * h + b * (n - h) + c * (m - h) + d * (size + h - n - m)
    values["p@0"], values["r@0"] = precision_at(n), h / m if m else 0.0
    return values


def random_collection(seed: int):
    """Graded qrels with judged non-relevant documents, some queries without a relevant document;
    runs with unjudged documents, score ties, queries missing, a query not in the qrels, short lists."""
    rng = np.random.default_rng(seed)
    qrels = {}
    queries = [f"{100 + q}" for q in range(int(rng.integers(3, 10)))]
    for qid in queries:
        pool = int(rng.integers(1, 40))
        grades = rng.choice([0, 0, 0, 1, 1, 2, 3] if rng.random() < 0.8 else [0], size=pool)
        qrels[qid] = {f"D{qid}-{d}": int(g) for d, g in enumerate(grades)}
    runs = random_runs(rng, queries, 61, 60, lambda rng, docs: (docs, rng.integers(0, 5, size=len(docs)).astype(
        float) if rng.random() < 0.5 else np.round(rng.normal(size=len(docs)), 3)))
    return qrels, runs


UTILITY = (2.0, -0.5, -1.0, 0.25, 1000)
REFERENCE_NAMES = list(reference_values([True, False], 1, UTILITY))


@pytest.mark.parametrize("seed", range(12))
def test_values_equal_the_reference_walk_on_random_collections(tmp_path, seed):
    qrels, runs = random_collection(seed)
    qrels_path = write_qrels(tmp_path / "qrels", qrels)
    paths = [write_run(tmp_path / f"run{n}", run) for n, run in enumerate(runs)]
    ours = prefeval.evaluate(qrels_path, paths, REFERENCE_NAMES, **KEEP)
    columns = {name: parse_measure(name).name for name in REFERENCE_NAMES}
    compared = 0
    for n, run in enumerate(runs):
        rows = ours[ours["run"] == f"run{n}"].set_index("qid")
        for qid in qrels:
            expected = reference_values(*ranked_relevance(qrels, run, qid), utility=UTILITY)
            for name, value in expected.items():
                assert rows.loc[qid, columns[name]] == pytest.approx(value, rel=1e-13, abs=1e-15), (seed, n, qid, name)
                compared += 1
    assert compared > 100


# --- pytrec_eval and ir_measures ------------------------------------------------------------------------

RECALL_LEVELS = ("0.00", "0.10", "0.20", "0.30", "0.40", "0.50", "0.60", "0.70", "0.80", "0.90", "1.00")
RPREC_MULTIPLES = ("0.20", "0.40", "0.60", "0.80", "1.00", "1.20", "1.40", "1.60", "1.80", "2.00")
RELATIVE_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_EVAL_OF = {
    "num_ret": "num_ret", "num_rel": "num_rel", "num_rel_ret": "num_rel_ret", "num_q": "num_q",
    "iprec_avg": "11pt_avg", "relative_p@0": "set_relative_P", "set_ap": "set_map", "utility": "utility",
    "p@0": "set_P", "r@0": "set_recall", "f@0": "set_F",
    **{f"iprec@{level}": f"iprec_at_recall_{level}" for level in RECALL_LEVELS},
    **{f"rp_mult@{f}": f"Rprec_mult_{f}" for f in RPREC_MULTIPLES},
    **{f"relative_p@{k}": f"relative_P_{k}" for k in RELATIVE_CUTOFFS},
}
"""prefeval's name -> pytrec_eval's key; gm_ap apart (pytrec_eval gives log(max(AP, 1e-5)) per query)."""
PYTREC_EVAL_MEASURES = {"num_ret", "num_rel", "num_rel_ret", "num_q", "gm_map", "11pt_avg", "set_relative_P",
                        "set_map", "utility", "set_P", "set_recall", "set_F", "iprec_at_recall", "Rprec_mult",
                        "relative_P"}


def assert_equal_to_pytrec_eval(pytrec_eval, qrels: dict, runs: list[dict], ours, level: int = 1) -> int:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_EVAL_MEASURES, relevance_level=level)
    columns = {name: parse_measure(name).name for name in TREC_EVAL_OF}
    compared = 0
    for n, run in enumerate(runs):
        rows = ours[ours["run"] == ours["run"].unique()[n]].set_index("qid")
        for qid, expected in evaluator.evaluate(run).items():
            row = rows.loc[qid]
            for name, theirs in TREC_EVAL_OF.items():
                assert row[columns[name]] == pytest.approx(expected[theirs], rel=1e-14, abs=1e-15), (n, qid, name)
                compared += 1
            assert math.log(max(row["gm_ap"], 1e-5)) == pytest.approx(expected["gm_map"], rel=1e-14), (n, qid)
    return compared


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("level", [1, 2])
def test_values_equal_pytrec_eval_per_query(tmp_path, seed, level):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, runs = random_collection(seed)
    qrels_path = write_qrels(tmp_path / "qrels", qrels)
    paths = [write_run(tmp_path / f"run{n}", run) for n, run in enumerate(runs)]
    ours = prefeval.evaluate(qrels_path, paths, [*TREC_EVAL_OF, "gm_ap"], relevance_level=level, **KEEP)
    assert assert_equal_to_pytrec_eval(pytrec_eval, qrels, runs, ours, level) > 100


IR_MEASURES_OF = {
    "NumRet": "num_ret", "NumRel": "num_rel", "NumRet(rel=1)": "num_rel_ret", "NumRelRet": "num_rel_ret",
    "NumQ": "num_q", "SetAP": "set_ap", "SetP": "p@0", "SetR": "r@0", "SetF": "f@0", "SetRelP": "relative_p@0",
    "SetP(relative=True)": "relative_p@0", "IPrec@0.3": "iprec@0.3", "IPrec@0.5": "iprec@0.5",
    "IPrec@0.0": "iprec@0", "IPrec@1.0": "iprec@1",
}


@pytest.mark.parametrize("seed", range(6))
def test_values_equal_ir_measures_per_query(tmp_path, seed):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, runs = random_collection(seed)
    qrels_path = write_qrels(tmp_path / "qrels", qrels)
    paths = [write_run(tmp_path / f"run{n}", run) for n, run in enumerate(runs)]
    ours = prefeval.evaluate(qrels_path, paths, list(dict.fromkeys(IR_MEASURES_OF.values())), **KEEP)
    measures = {ir_measures.parse_measure(name): name for name in IR_MEASURES_OF}
    compared = 0
    for n, run in enumerate(runs):
        rows = ours[ours["run"] == f"run{n}"].set_index("qid")
        for metric in ir_measures.iter_calc(list(measures), qrels, run):
            if metric.query_id not in run:
                continue  # ir_measures gives 0 for everything there, NumQ and NumRel too
            ours_name = parse_measure(IR_MEASURES_OF[measures[metric.measure]]).name
            assert rows.loc[metric.query_id, ours_name] == pytest.approx(metric.value, rel=1e-14, abs=1e-15), (
                n, metric.query_id, metric.measure)
            compared += 1
    assert compared > 50


ROBUST03_RUNS = ("pircRBa1", "MU03rob01", "NLPR03vb10")


def read_trec(path, run: bool) -> dict:
    """{qid: {docid: score or grade}} from a qrels or run file (gzip for runs)."""
    import gzip

    opener = gzip.open if str(path).endswith(".gz") else open
    found: dict = {}
    with opener(path, "rt") as handle:
        for line in handle:
            fields = line.split()
            if run:
                found.setdefault(fields[0], {})[fields[2]] = float(fields[4])
            else:
                found.setdefault(fields[0], {})[fields[2]] = int(fields[3])
    return found


def test_robust03_equals_pytrec_eval_per_query():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    data = robust03_or_skip()
    paths = [str(data / "runs" / f"input.{name}.gz") for name in ROBUST03_RUNS]
    evaluation = prefeval.Evaluation.from_files(str(data / "qrels.txt"), paths, [*TREC_EVAL_OF, "gm_ap"], **KEEP)
    ours = prefeval.evaluate(str(data / "qrels.txt"), paths, [*TREC_EVAL_OF, "gm_ap"], **KEEP)
    assert list(ours["run"].unique()) == evaluation.run_ids
    qrels = read_trec(data / "qrels.txt", run=False)
    runs = [read_trec(path, run=True) for path in paths]
    assert assert_equal_to_pytrec_eval(pytrec_eval, qrels, runs, ours) >= 3 * 100 * len(TREC_EVAL_OF)


def test_robust03_reference_walk_for_the_measures_without_an_oracle():
    data = robust03_or_skip()
    path = str(data / "runs" / f"input.{ROBUST03_RUNS[0]}.gz")
    names = ["prauc", "r_at_p@0.5", "r_at_p@0.2", "iprec_avg@11,0.5", "iprec@0.3,0.5", "iprec@0.5,0.5",
             "utility@2.0,-0.5,-1.0,0.25,1000"]
    ours = prefeval.evaluate(str(data / "qrels.txt"), [path], names, **KEEP).set_index("qid")
    qrels, run = read_trec(data / "qrels.txt", run=False), read_trec(path, run=True)
    for qid in qrels:
        expected = reference_values(*ranked_relevance(qrels, run, qid), utility=UTILITY)
        for name in names:
            assert ours.loc[qid, parse_measure(name).name] == pytest.approx(expected[name], rel=1e-13, abs=1e-15), (
                qid, name)


# --- trec_eval's arithmetic, to the last printed digit (issue 24, item 4) ----------------------------

LAST_DIGIT_CASES = [
    # qrels, ranked documents per query (first is rank 1), the measure, what trec_eval 10.0 prints
    pytest.param({"q0": {"d0-0": 0, "d0-1": 0, "d0-2": -1, "d0-3": 0, "d0-4": 1, "d0-5": -1, "d0-6": 1},
                  "q1": {"d1-0": 0, "d1-1": 0, "d1-2": 0, "d1-3": -1, "d1-4": 0, "d1-5": 1}},
                 {"q0": ["d0-2"], "q1": ["d1-1", "u1-0", "d1-4", "d1-5", "d1-3"]}, "rbp_resid", "0.8731",
                 id="rbp_resid: p^n + (1 - p) * the unjudged documents' p^(x-1), added in rank order"),
    pytest.param({"q0": {"d0-0": 1, "d0-1": 1, "d0-2": 0, "d0-3": 0}, "q1": {"d1-0": 0, "d1-1": 1, "d1-2": -1},
                  "q2": {"d2-0": -1, "d2-1": -1, "d2-2": -1},
                  "q3": {"d3-0": 0, "d3-1": -1, "d3-2": -1, "d3-3": -1, "d3-4": 1, "d3-5": 1, "d3-6": -1}},
                 {"q0": ["u0-2", "d0-1"], "q1": ["u1-2", "d1-0"], "q2": ["u2-0", "d2-0"],
                  "q3": ["d3-4", "d3-3", "d3-2"]}, "rbp_resid.p=0.95", "0.9638",
                 id="rbp_resid.p=0.95: the same, on the summary"),
    pytest.param({"1": {f"r{rank}": 1 for rank in (1, 2, 5, 6, 12, 15, 21, 24)}},
                 {"1": [f"r{rank}" if rank in (1, 2, 5, 6, 12, 15, 21, 24) else f"n{rank}" for rank in range(1, 25)]},
                 "map", "0.5937",
                 id="map: a lone query's 8 precisions added in rank order (0.5937499999999999), not pairwise "
                    "(0.59375)"),
    pytest.param({"10": {"d10-1": 3, "d10-4": 0, "d10-3": 4, "d10-2": 3, "d10-0": -1}},
                 {"10": ["d10-6", "d10-2", "d10-1"]}, "rbp.p=0.9", "0.1283",
                 id="rbp: gain * p^(x-1) added, then times 1 - p (0.12825), not (1 - p) * gain * p^(x-1) added "
                    "(0.12824999999999998)"),
]


@pytest.mark.parametrize("qrels, ranked, measure, printed", LAST_DIGIT_CASES)
def test_the_last_digit_is_trec_eval_s(tmp_path, qrels, ranked, measure, printed):
    """Collections where two ways of adding up a measure, equal in reals, print different last
    digits: the trec_eval layout prints what trec_eval's own order of operations gives (the values
    of trec_eval 10.0, kept here as data; compared with the binary when ``PREFEVAL_TREC_EVAL`` names it)."""
    run = {qid: {doc: float(len(docs) - rank) for rank, doc in enumerate(docs)} for qid, docs in ranked.items()}
    qrels_path, run_path = write_qrels(tmp_path / "q", qrels), write_run(tmp_path / "r", run)
    output = run_cli("eval", "--format", "trec_eval", "-m", measure, "-R", qrels_path, run_path)
    assert output.stdout.split("\t")[-1].strip() == printed
    binary = os.environ.get("PREFEVAL_TREC_EVAL")
    if binary:
        done = subprocess.run([binary, "-m", measure, qrels_path, run_path], capture_output=True, text=True,
                              check=True)
        assert done.stdout == output.stdout


def test_set_f_keeps_its_parameter_as_trec_eval_does():
    """trec_eval's set_F.x and ir_measures' SetF(beta=x) weigh with x = β² as given: prefeval's
    weight=x, not β = √x squared back (0.5000000000000001)."""
    assert parse_measure("set_F.0.5").name == "f@0,weight=0.5"
    assert parse_measure("set_F.0.5").beta_squared() == 0.5
    assert parse_measure("f@0,0.5").beta_squared() == 0.25
    with pytest.raises(prefeval.UsageError, match="give beta or weight"):
        parse_measure("f@0,2,weight=4")
