"""prefeval against ir_measures, per query: every ir_measures name below is read by prefeval's parser
(:mod:`prefeval.measures.names`) and must give ir_measures' value on every query; under ir_measures'
conventions, its very float, per query and on the summary, and ``--format ir_measures`` its lines to
the last printed digit (``benchmarks/last_digit.py``; the values found to differ there kept as data).

ir_measures computes each measure with one of its providers (its default pipeline: the first that
supports the measure and is installed): pytrec_eval (trec_eval's code) for AP, P, R, RR without a
cut-off, Rprec, nDCG, Success, Bpref, infAP, IPrec, the Set measures and the counts; ``judged`` for
Judged; ``compat`` for Compat; ``msmarco`` for RR@k; ``gdeval`` (a perl script) for ERR@k and
nDCG(dcg='exp-log2')@k; ``accuracy`` for Accuracy; cwl_eval, when installed, for RBP(rel=r). The
providers break ties in scores differently (pytrec_eval as trec_eval: score, then document id,
descending; judged: document id ascending; gdeval, msmarco and accuracy their own sorts), so the
runs compared here have no tied scores (robust03's runs are re-scored in trec_eval's order); with
ties prefeval follows trec_eval (``ties="docid"``).

Where the tools differ by design (each asserted below):
* a query the run lacks: ir_measures gives every measure 0 there, NumQ and NumRel too; prefeval
  (as trec_eval -c) gives num_q 1 and num_rel the number of relevant documents.
* Accuracy: ir_measures reports nothing for a query whose run has no relevant document within the
  cut-off, and divides by zero (ZeroDivisionError) when a relevant one is retrieved but no
  non-relevant one is; prefeval gives 0 and 1 there.
* gdeval (ERR, nDCG exp-log2) reads only numeric query ids and grades up to 4, and prints 5 decimals.
* IPrec(judged_only=True) on a query without relevant documents: pytrec_eval gives NaN (0/0),
  prefeval 0.
* pytrec_eval (0.5, under ir_measures) crashes the interpreter (a segmentation fault, not every
  time) on a query whose qrels entries all have negative grades, so the collections here have none.
"""

from __future__ import annotations

import gzip
import math

import numpy as np
import pytest
from conftest import benchmark, robust03_or_skip, run_cli, write_qrels, write_run

from prefeval.engine.evaluation import Block, Evaluation
from prefeval.measures import parse_measure

ir_measures = pytest.importorskip("ir_measures")

TOLERANCE = 1e-12

PYTREC_EVAL = [
    "AP", "AP@10", "AP@100", "P@5", "P@10", "P@20", "R@10", "R@100", "RR", "Rprec",
    "nDCG", "nDCG@10", "nDCG@5", "nDCG(gains={0:0,1:1,2:3})@10", "nDCG(gains={0:1,1:2,2:4,3:8,4:10})",
    "Success@1", "Success@5", "Bpref", "BPref", "infAP", "IPrec@0.0", "IPrec@0.3", "IPrec@0.5", "IPrec@1.0",
    "SetP", "SetR", "SetF", "SetF(beta=2.0)", "SetF(beta=0.25)", "SetAP", "SetRelP", "SetP(relative=True)",
    "NumQ", "NumRet", "NumRel", "NumRet(rel=2)", "NumRelRet",
    # rel= and judged_only= wherever ir_measures' pytrec_eval provider takes them
    "P(rel=2)@10", "AP(rel=2)", "AP(rel=3)@10", "Rprec(rel=2)", "RR(rel=2)", "Success(rel=2)@5",
    "SetP(rel=2)", "SetAP(rel=2)", "SetF(rel=2)", "SetR(rel=2)", "Bpref(rel=2)", "infAP(rel=2)",
    "AP(judged_only=True)", "P(judged_only=True)@10", "nDCG(judged_only=True)@10", "RR(judged_only=True)",
    "Rprec(judged_only=True)", "R(judged_only=True)@10", "SetP(judged_only=True)", "IPrec(judged_only=True)@0.5",
]
OTHERS = ["Judged", "Judged@5", "Judged@10", "Compat", "Compat(p=0.8)", "Compat(p=0.5,normalize=False)",
          "RR@10", "RR@3", "RR(rel=2)@10"]
GDEVAL = ["ERR@5", "ERR@20", "nDCG(dcg='exp-log2')@5", "nDCG(dcg='exp-log2')@20"]
ALL = PYTREC_EVAL + OTHERS + GDEVAL
GDEVAL_TOLERANCE = 5e-6 + 1e-12
"""gdeval prints its values with 5 decimals."""
MISSING_DIFFERS = {"NumQ", "NumRel"}
"""Measures whose value on a query the run lacks differs (see the module docstring)."""


UNPLACED = {"NumRet", "NumQ"}
"""ir_measures' pytrec_eval provider computes these within whichever pytrec_eval invocation comes
first: in one with judged_only=True, NumRet counts only the judged documents retrieved. They are
computed on their own here."""


def theirs(qrels, run, names, means: dict[str, float] | None = None):
    """{name: {qid: value}} from ir_measures' default pipeline, and in ``means`` (when given) each
    name's summary, its aggregator fed the values as they come (ir_measures' ``calc_aggregate``). A
    measure with ``gains=`` is computed in a call of its own: ir_measures 0.4.3 mixes up the results
    of ``nDCG`` and ``nDCG(gains=...)`` computed in one call (which one gets which depends on
    Python's hash seed)."""
    found: dict[str, dict[str, float]] = {name: {} for name in names}
    aggregators = {name: ir_measures.parse_measure(name).aggregator() for name in names}
    with_gains = [[name] for name in names if "gains=" in name]
    plain = [name for name in names if "gains=" not in name]
    for group in ([name for name in plain if name not in UNPLACED], [name for name in plain if name in UNPLACED],
                  *with_gains):
        measures: dict = {}
        for name in group:  # several names may be one measure (RR, MRR)
            measures.setdefault(ir_measures.parse_measure(name), []).append(name)
        for metric in ir_measures.iter_calc(list(measures), qrels, run) if measures else ():
            for name in measures[metric.measure]:
                found[name][metric.query_id] = metric.value
                aggregators[name].add(metric.value)
    if means is not None:
        means.update({name: aggregator.result() for name, aggregator in aggregators.items()})
    return found


def ours(qrels, runs: dict, names, means: dict[str, dict[str, float]] | None = None, **options):
    """{run: {name: {qid: value}}} from prefeval, every query of the qrels kept; in ``means`` (when
    given), {run: {name: summary}}."""
    evaluation = Evaluation.from_files(qrels, runs, [parse_measure(name) for name in names],
                                       empty_queries="keep", jobs=1, **options)
    metric_names: dict[str, list[str]] = {}
    for name in names:  # several names may be one measure (Bpref, BPref)
        metric_names.setdefault(parse_measure(name).name, []).append(name)
    found = {run: {name: {} for name in names} for run in evaluation.run_ids}
    for result in evaluation.results():
        if not isinstance(result, Block):
            if means is not None:
                means.update({run: {name: float(result.metrics[parse_measure(name).name][r]) for name in names}
                              for r, run in enumerate(evaluation.run_ids)})
            continue
        for key, values in result.metrics.items():
            if key not in metric_names:
                continue
            for r, run in enumerate(evaluation.run_ids):
                for q, qid in enumerate(result.qids):
                    for name in metric_names[key]:
                        found[run][name][qid] = float(values[r, q])
    return found


def assert_agree(qrels, runs, names, skip_missing=True, **options):
    """prefeval's value of every name, run and query of the qrels equals ir_measures'."""
    mine = ours(qrels, runs, names, **options)
    checked = 0
    for run_id, run in runs.items():
        reference = theirs(qrels, run, names)
        for name in names:
            for qid in qrels:
                if qid not in run and skip_missing and name in MISSING_DIFFERS:
                    continue
                expected = reference[name].get(qid, 0.0)
                got = mine[run_id][name][qid]
                if math.isnan(expected):  # pytrec_eval's IPrec with judged_only: 0/0 without relevant documents
                    assert name.startswith("IPrec(judged_only") and got == 0.0, (run_id, name, qid, got)
                    continue
                tolerance = GDEVAL_TOLERANCE if name in GDEVAL else TOLERANCE
                assert got == pytest.approx(expected, abs=tolerance, rel=TOLERANCE), (run_id, name, qid, got, expected)
                checked += 1
    return checked


# --- random graded collections -----------------------------------------------------------------------

def collection(seed: int, num_queries: int = 12, num_runs: int = 3):
    """Qrels with grades -2..4 (negative: in the pool, unjudged), queries without a relevant document
    (one with judged non-relevant documents only), runs that retrieve relevant, judged non-relevant,
    negatively graded and unjudged documents with distinct scores, and lack some queries."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    for q in range(1, num_queries + 1):
        qid = str(100 + q)
        docs = rng.choice(60, size=int(rng.integers(3, 30)), replace=False)
        grades = rng.choice([-2, -1, 0, 0, 0, 1, 1, 2, 3, 4], size=len(docs))
        if q == 1:
            grades = np.zeros_like(grades)  # judged, none relevant
        if q == 2:  # unjudged pool entries and one judged non-relevant document (all negative crashes pytrec_eval)
            grades = np.where(np.arange(len(grades)) == 0, 0, np.where(np.arange(len(grades)) % 2, -1, -2))
        qrels[qid] = {f"d{d}": int(g) for d, g in zip(docs, grades)}
    runs = {}
    for r in range(num_runs):
        run: dict[str, dict[str, float]] = {}
        for qid in qrels:
            if rng.random() < 0.15:
                continue  # the run lacks this query
            docs = rng.choice(80, size=int(rng.integers(1, 40)), replace=False)
            scores = rng.permutation(len(docs)) + rng.random()  # distinct scores
            run[qid] = {f"d{d}": float(s) for d, s in zip(docs, scores)}
        run["999"] = {"d1": 1.0}  # a query the qrels do not have: ignored by both
        runs[f"run{r}"] = run
    return qrels, runs


@pytest.mark.parametrize("seed", range(6))
def test_random_collections_agree_with_ir_measures(seed):
    qrels, runs = collection(seed)
    assert assert_agree(qrels, runs, ALL) > 0


@pytest.mark.parametrize("seed", range(3))
def test_queries_missing_from_a_run_count_differently(seed):
    """ir_measures fills a missing query with 0 for every measure; prefeval counts it as trec_eval -c."""
    qrels, runs = collection(seed)
    mine = ours(qrels, runs, ["NumQ", "NumRel"])
    for run_id, run in runs.items():
        reference = theirs(qrels, run, ["NumQ", "NumRel"])
        for qid in set(qrels) - set(run):
            assert reference["NumQ"][qid] == 0 and mine[run_id]["NumQ"][qid] == 1
            relevant = sum(grade > 0 for grade in qrels[qid].values())
            assert reference["NumRel"][qid] == 0 and mine[run_id]["NumRel"][qid] == relevant


def test_rbp_is_prefeval_rbp_as_cwl_eval_computes_it():
    """ir_measures computes RBP(rel=r, p=x) with cwl_eval: binary gain at level r, no residual:
    prefeval's rbp@x at that level."""
    pytest.importorskip("cwl")
    qrels, runs = collection(3)
    assert assert_agree(qrels, runs, ["RBP(rel=1)", "RBP(p=0.5,rel=1)", "RBP(p=0.95,rel=2)"]) > 0


@pytest.mark.parametrize("name, expected", [
    ("RBP", "rbp@0.8"), ("RBP(p=0.5)", "rbp@0.5"), ("RBP(rel=2)", "rbp@0.8,rel=2.0"), ("RBP@10", "rbp@0.8,10"),
    ("rbp", "rbp"),
])
def test_rbp_names(name, expected):
    assert parse_measure(name).name == expected


# --- Accuracy ---------------------------------------------------------------------------------------

def test_accuracy_agrees_where_ir_measures_gives_a_value():
    qrels, runs = collection(4)
    mine = ours(qrels, runs, ["Accuracy", "Accuracy@10", "Accuracy(rel=2)"])
    compared = 0
    for run_id, run in runs.items():
        for name in ("Accuracy", "Accuracy@10", "Accuracy(rel=2)"):
            measure = ir_measures.parse_measure(name)
            for qid in qrels:
                if qid not in run:
                    continue
                try:
                    found = {m.query_id: m.value for m in ir_measures.iter_calc([measure], {qid: qrels[qid]},
                                                                                  {qid: run[qid]})}
                except ZeroDivisionError:
                    assert mine[run_id][name][qid] == 1.0  # no non-relevant document within the cut-off
                    continue
                if qid in found:
                    assert mine[run_id][name][qid] == pytest.approx(found[qid], abs=TOLERANCE), (run_id, name, qid)
                    compared += 1
                else:
                    assert mine[run_id][name][qid] == 0.0  # no relevant document retrieved
    assert compared > 0


def test_accuracy_without_a_non_relevant_document_within_the_cut_off():
    """Every retrieved document relevant: ir_measures divides by zero, prefeval gives 1."""
    qrels = {"1": {"a": 1, "b": 2, "c": 0}}
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    with pytest.raises(ZeroDivisionError):
        list(ir_measures.iter_calc([ir_measures.parse_measure("Accuracy@2")], qrels, run))
    mine = ours(qrels, {"r": run}, ["Accuracy@2", "Accuracy"])
    assert mine["r"]["Accuracy@2"]["1"] == 1.0
    assert mine["r"]["Accuracy"]["1"] == pytest.approx(1.0)  # c is below both relevant ones
    theirs_full = theirs(qrels, run, ["Accuracy"])
    assert theirs_full["Accuracy"]["1"] == pytest.approx(1.0)


# --- robust03 ---------------------------------------------------------------------------------------

def read_run_without_ties(path) -> dict[str, dict[str, float]]:
    """A TREC run, re-scored in trec_eval's order (score, then document id, descending) with distinct
    scores, so that every provider ranks it as trec_eval does."""
    by_query: dict[str, list[tuple[float, str]]] = {}
    with gzip.open(path, "rt") as lines:
        for line in lines:
            fields = line.split()
            if len(fields) >= 5:
                by_query.setdefault(fields[0], []).append((float(fields[4]), fields[2]))
    rescored = {}
    for qid, entries in by_query.items():
        ordered = sorted(dict((doc, score) for score, doc in entries).items(), key=lambda e: (e[1], e[0]),
                         reverse=True)
        rescored[qid] = {doc: float(len(ordered) - place) for place, (doc, _) in enumerate(ordered)}
    return rescored


def read_qrels(path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as lines:
        for line in lines:
            fields = line.split()
            if len(fields) == 4:
                qrels.setdefault(fields[0], {})[fields[2]] = int(fields[3])
    return qrels


@pytest.fixture(scope="module")
def robust03():
    root = robust03_or_skip()
    paths = sorted((root / "runs").glob("input.*.gz"))[:3]
    return read_qrels(root / "qrels.txt"), {path.name: read_run_without_ties(path) for path in paths}


def test_robust03_agrees_with_ir_measures(robust03):
    qrels, runs = robust03
    assert assert_agree(qrels, runs, PYTREC_EVAL + OTHERS + ["ERR@20", "nDCG(dcg='exp-log2')@20"]) > 0


def test_ir_measures_names_are_prefeval_measures():
    expected = {
        "SetP": "p@0", "SetR": "r@0", "SetAP": "set_ap", "SetRelP": "relative_p@0",
        "SetP(relative=True)": "relative_p@0",
        "SetF": "f@0", "SetF(beta=4.0)": "f@0,weight=4.0", "NumQ": "num_q", "NumRet": "num_ret", "NumRel": "num_rel",
        "NumRet(rel=2)": "num_rel_ret@rel=2.0", "NumRelRet": "num_rel_ret", "Judged@10": "judged@10",
        "Judged": "judged", "Bpref": "bpref", "infAP": "infap", "IPrec@0.5": "iprec@0.5", "ERR@10": "err@10",
        "Compat(p=0.8)": "compat@0.8", "Accuracy": "accuracy", "AP": "ap", "P@10": "p@10",
        "R@10": "r@10", "RR": "rr", "Rprec": "rp", "nDCG@10": "ndcg@10",
        "nDCG(dcg='exp-log2')@10": "ndcg_exp@10", "nDCG(dcg='log2')@10": "ndcg@10",
        "nDCG(gains={0:0,1:1,2:3})@10": "ndcg@10,gains=2:3", "P(rel=2)@10": "p@10,rel=2.0",
        "AP(judged_only=True)": "ap@judged_only=1", "AP(judged_only=False)": "ap",
        "IPrec(rel=2)@0.5": "iprec@0.5,rel=2.0", "Bpref(rel=2)": "bpref@rel=2.0",
    }
    for name, spelled in expected.items():
        assert parse_measure(name).name == spelled, name


def test_every_ir_measures_name_example_parses_to_its_family():
    from prefeval.measures.foreign import ir_measures

    for row in ir_measures.ROWS:
        assert type(parse_measure(row.example())).family == row.family, row.example()
    assert parse_measure("SetF(beta=2.0)").param("weight") == 2.0  # β², as ir_measures hands it to set_F


# --- ir_measures' names, as it prints them (issue 24, item 5) ---------------------------------------

TYPED_NAMES = [
    "AP", "AP@100", "nDCG@10", "nDCG(dcg='exp-log2')@10", 'nDCG(dcg="exp-log2")@10', "nDCG(gains={0:0,1:1,2:3})@10",
    "P@10", "P(rel=2)@10", "P(rel=1)@10", "R@100", "RR", "RR@10", "Rprec", "Success@5", "RBP", "RBP(p=0.8)@10",
    "RBP(p=0.9)", "RBP(rel=2)", "RBP(p=0.8,rel=2)", "ERR@20", "IPrec@0.5", "IPrec(rel=2)@0.5", "IPrec@0.0",
    "IPrec@1.0", "IPrec@1", "SetP",
    "SetP(relative=True)", "SetRelP", "SetR", "SetF", "SetF(beta=2)", "SetF(beta=2.0)", "SetAP", "NumQ", "NumRet",
    "NumRet(rel=1)", "NumRelRet", "NumRel", "Bpref", "BPref", "infAP", "Judged@10", "Compat", "Compat(p=0.95)",
    "Compat(p=0.9,normalize=False)", "Accuracy", "AP(judged_only=True)", "AP(judged_only=False)@5",
]


@pytest.mark.parametrize("typed", TYPED_NAMES)
def test_the_ir_measures_format_prints_ir_measures_own_names(typed):
    """What ``ir_measures QRELS RUN NAME`` prints for a measure: str() of its measure, an alias as the
    measure it stands for, the parameters at their defaults left out, the values as they were typed."""
    from prefeval.measures.request import read_request, request_names

    request = read_request([typed])
    assert request_names(request, "ir_measures")[request.measures[0].name] == str(ir_measures.parse_measure(typed))


def test_a_measure_named_otherwise_is_printed_under_ir_measures_canonical_name():
    """A measure named in prefeval's or trec_eval's syntax gets the name ir_measures itself prints
    for the measure it reads that name as."""
    from prefeval.measures import foreign
    from prefeval.measures.base import families

    checked = 0
    for family in families():
        for measure in [family()] + ([family("5")] if family.parameters and not family.parameters[0].keyword
                                     and family.parameters[0].type is int else []):
            spelled = foreign.spell(measure, "ir_measures")
            if spelled is not None:
                assert str(ir_measures.parse_measure(spelled)) == spelled, measure.name
                checked += 1
    assert checked > 20


# --- ir_measures' arithmetic, to the last bit and the last printed digit (issue 24, item 4) -----------

EXACT = [name for name in PYTREC_EVAL + OTHERS if not name.startswith("IPrec(judged_only")]
"""Every measure compared but gdeval's (five decimals) and pytrec_eval's NaN (module docstring)."""


@pytest.mark.parametrize("seed", range(4))
def test_ir_measures_conventions_give_its_floats_to_the_last_bit(seed):
    """Under ir_measures' conventions every value is ir_measures' own float, per query and on the
    summary: what pytrec_eval computes in trec_eval's order of operations, Compat in its provider's
    loop, the mean added in the order its providers yield the queries (the run's, here not the
    qrels') and divided once."""
    qrels, runs = collection(seed)
    runs = {run_id: dict(reversed(run.items())) for run_id, run in runs.items()}
    means: dict[str, dict[str, float]] = {}
    mine = ours(qrels, runs, EXACT, means=means, conventions="ir_measures")
    for run_id, run in runs.items():
        their_means: dict[str, float] = {}
        reference = theirs(qrels, run, EXACT, their_means)
        for name in EXACT:
            assert {qid: mine[run_id][name][qid] for qid in qrels} == {qid: reference[name].get(qid, 0.0)
                                                                       for qid in qrels}, (run_id, name)
            assert means[run_id][name] == their_means[name], (run_id, name)


def run_in_order(ranked: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """A run of documents ranked as listed (first is rank 1), distinct scores, queries in the dict's order."""
    return {qid: {doc: float(len(docs) - rank) for rank, doc in enumerate(docs)} for qid, docs in ranked.items()}


IR_MEASURES_DIGIT_CASES = [
    # qrels (in file order), ranked documents per query (queries in file order), the measure, what
    # ir_measures 0.4.3 prints on the summary line
    pytest.param({"11": {"d11-0": 1, "d11-2": 3, "d11-1": 1, "d11-9": 2, "d11-6": 2, "d11-5": 1},
                  "26": {"d26-3": 1, "d26-0": 2}, "12": {"d12-0": 4}, "14": {"d14-0": 2}},
                 {"26": ["d26-0", "d26-2", "d26-10", "d26-12", "d26-3", "d26-5", "d26-9", "d26-7", "d26-1", "d26-6",
                         "d26-13", "d26-8"],
                  "11": ["d11-4", "d11-9", "d11-0", "d11-12", "d11-7", "d11-10", "d11-1", "d11-5"]},
                 "SetF(beta=2.0)", "0.2438",
                 id="SetF: trec_eval's (1 + x) P R / (x P + R) from the rounded P and R (0.6000000000000001)"),
    pytest.param({"60": {"d60-3": 4, "d60-2": 1, "d60-5": 1, "d60-0": 2}, "16": {"d16-2": 1, "d16-0": 1},
                  "1": {"d1-3": 0}, "45": {"d45-0": 0}},
                 {"16": ["d16-6", "d16-8", "d16-7", "d16-12", "d16-5", "d16-4", "d16-11", "d16-1", "d16-9", "d16-3",
                         "d16-2", "d16-0"],
                  "60": ["d60-9", "d60-4", "d60-13", "d60-11", "d60-8", "d60-3", "d60-7", "d60-10", "d60-1"]},
                 "SetF(beta=0.25)", "0.0812", id="SetF(beta=0.25): the same"),
    pytest.param({"21": {"d21-5": 4, "d21-2": 0, "d21-6": 1, "d21-1": 1, "d21-8": 1, "d21-3": 4, "d21-4": 4,
                         "d21-7": 2, "d21-9": 3}},
                 {"21": ["d21-6", "d21-2", "d21-9", "d21-8", "d21-4", "d21-5"]}, "AP(judged_only=True)", "0.5062",
                 id="AP: 8 precisions added in rank order (0.50625), not pairwise (0.5062500000000001)"),
    pytest.param({"42": {"d42-6": 0, "d42-0": -1, "d42-2": 0, "d42-1": -1, "d42-4": 0},
                  "23": {"d23-0": 0, "d23-2": -2, "d23-1": 3, "d23-3": 3}, "34": {"d34-6": 1}, "22": {"d22-1": 0},
                  "24": {"d24-2": 0}, "36": {"d36-4": 2, "d36-1": 1}, "12": {"d12-1": 0, "d12-2": -1, "d12-0": 0},
                  "44": {"d44-4": 4}},
                 {"12": ["d12-8", "d12-13", "d12-2", "d12-11", "d12-9", "d12-0", "d12-1", "d12-12", "d12-5", "d12-4",
                         "d12-6", "d12-7"],
                  "42": ["d42-11", "d42-9", "d42-1", "d42-12", "d42-6", "d42-0", "d42-4", "d42-13", "d42-2", "d42-8"],
                  "23": ["d23-1", "d23-5", "d23-2", "d23-10", "d23-9", "d23-11", "d23-13", "d23-0", "d23-3", "d23-7"],
                  "36": ["d36-1", "d36-7", "d36-10", "d36-4", "d36-12", "d36-5", "d36-11", "d36-6", "d36-9", "d36-2"]},
                 "Judged", "0.1687",
                 id="the mean of 8 queries: their values added one after the other in the run's order, not pairwise"),
    pytest.param({"22": {"d22-8": 0, "d22-0": 0}, "34": {"d34-6": 1, "d34-3": -2}, "42": {"d42-2": 0, "d42-4": 0},
                  "23": {"d23-4": 1, "d23-3": 3}, "24": {"d24-2": 0}, "36": {"d36-0": -1}, "44": {"d44-4": 4},
                  "12": {"d12-0": 0}},
                 {"36": ["d36-13", "d36-10", "d36-0", "d36-7"], "42": ["d42-4", "d42-13", "d42-12", "d42-2"],
                  "23": ["d23-8", "d23-3", "d23-13", "d23-12", "d23-4"], "34": ["d34-12", "d34-3", "d34-10", "d34-6"],
                  "12": ["d12-4", "d12-12", "d12-10", "d12-6", "d12-0"], "22": ["d22-13", "d22-12", "d22-8", "d22-0"]},
                 "Judged@5", "0.2937",
                 id="the mean: the values added in the order the run lists its queries, not the qrels' order"),
]


@pytest.mark.parametrize("qrels, ranked, measure, printed", IR_MEASURES_DIGIT_CASES)
def test_the_ir_measures_layout_prints_its_last_digit(tmp_path, qrels, ranked, measure, printed):
    """Collections where two ways of computing a value, equal in reals, print different last digits:
    ``--format ir_measures`` prints what ir_measures' own order of operations gives (its output kept
    here as data, and compared with its command line, the per-query lines as a set)."""
    qrels_path, run_path = write_qrels(tmp_path / "q", qrels), write_run(tmp_path / "r", run_in_order(ranked))
    output = run_cli("eval", "--format", "ir_measures", "-q", "-m", measure, "-R", qrels_path, run_path).stdout
    assert output.splitlines()[-1] == f"all\t{measure}\t{printed}"
    theirs = benchmark("last_digit").run_ir_measures(qrels_path, run_path, measure, "-q").splitlines()
    assert sorted(output.splitlines()) == sorted(theirs) and theirs[-1] == output.splitlines()[-1]


def test_the_ir_measures_layout_prints_ir_measures_lines_on_random_collections():
    """``benchmarks/last_digit.py ir_measures`` on a few collections: every line ir_measures' own, to the
    last digit (but what differs by design, counted apart there)."""
    tally = benchmark("last_digit").ir_measures_tally(range(8))
    assert tally.lines > 1000 and not tally.differences, tally.report("ir_measures")
