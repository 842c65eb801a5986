"""Agreement with trec_eval: prefeval's measures, and ``eval --format trec_eval`` as a drop-in.

Oracles, each where it is exact:

* pytrec_eval (pytrec-eval-terrier, trec_eval's code inside) per run, query and measure: on random
  collections (ties, graded qrels, queries missing from runs, queries in runs but not in the qrels,
  unjudged documents, runs shorter than the cut-offs) for prefeval's own names, and on the 17
  robust03 runs for every ``all_trec`` measure it knows, under trec_eval's options ``-q -c``, ``-q``,
  ``-q -c -J``, ``-q -c -l 2`` and ``-q -c -M 100`` (prefeval's ``--topk 100``). pytrec_eval reads
  scores in single precision (two scores differing in the 8th digit tie there and swap documents),
  so it is given each run in trec_eval's order (score descending, docid descending as bytes) with
  distinct integer scores, while prefeval reads the original files.
* trec_eval 10.0's own definitions, written out here, where pytrec_eval's trec_eval is older:
  ``iprec_at_recall`` and ``11pt_avg`` (10.0 rounds a recall level's number of relevant documents,
  9 added 0.9 and truncated), ``relstring``, the summary lines (``-c``: every query of the qrels).
* the trec_eval binary, byte for byte, when the environment variable ``PREFEVAL_TREC_EVAL`` names it:
  ``eval --format trec_eval`` and ``prefeval trec_eval`` (with trec_eval's own arguments) on robust03,
  on random collections, and on many small ones where sums land on .5 of the last printed digit
  (``benchmarks/last_digit.py``; the values found to differ there are kept as data in
  ``tests/test_trec_measures.py``, for the machines without the binary); the outputs kept in
  ``tests/data/trec_eval/`` (which ``tests/test_trec_eval_command.py`` compares with prefeval's on
  every run) are the binary's; its exit codes on bad command lines and inputs; and trec_eval's own
  ``quicktest`` (``benchmarks/quicktest.py``) when its checkout is the binary's folder.
* output text computed by hand on small cases that show trec_eval's conventions.

Where prefeval and the oracle are known to disagree (:data:`KNOWN`), the main tests leave those
values out and a test of each, marked xfail with the reason, compares them.
"""

from __future__ import annotations

import functools
import gzip
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from conftest import (  # noqa: E402
    ROBUST03,
    ROOT,
    benchmark,
    random_runs,
    robust03_or_skip,
    run_cli,
    write_qrels,
    write_run,
    write_text,
)
from trec_eval_cases import (  # noqa: E402
    CASES,
    DATA,
    FEW_RUNS,
    ROBUST03_OPTION_SETS,
    ROBUST03_RUNS_OF,
    robust03_expected,
    write_collection,
)

import prefeval  # noqa: E402
from prefeval.engine.evaluation import Evaluation, Summary  # noqa: E402
from prefeval.measures.request import read_request  # noqa: E402
from prefeval.report.trec_eval import layout_lines, trec_eval_report  # noqa: E402

CUTOFFS = (5, 10, 15, 20, 30, 100)
OURS_TO_TREC_EVAL = {"ap": "map", "ndcg": "ndcg", "rr": "recip_rank", "rp": "Rprec"}
for k in CUTOFFS:
    OURS_TO_TREC_EVAL.update({f"ap@{k}": f"map_cut_{k}", f"ndcg@{k}": f"ndcg_cut_{k}", f"p@{k}": f"P_{k}",
                              f"r@{k}": f"recall_{k}"})


def _random_scores(rng, docs):
    """Many ties or rounded normal scores; half of the runs list documents already in ranking order."""
    if rng.random() < 0.5:
        scores = rng.integers(0, 6, size=len(docs)).astype(float)  # many ties
    else:
        scores = np.round(rng.normal(size=len(docs)), 3)
    if rng.random() < 0.5:
        order = sorted(range(len(docs)), key=lambda i: (-scores[i], [-ord(c) for c in docs[i]]))
        docs, scores = docs[order], scores[order]
    return docs, scores


def random_collection(seed: int):
    rng = np.random.default_rng(seed)
    qrels = {}
    queries = [f"{100 + q}" for q in range(int(rng.integers(3, 12)))]
    for qid in queries:
        pool = int(rng.integers(5, 60))
        grades = rng.choice([0, 0, 0, 1, 1, 2, 3], size=pool)
        qrels[qid] = {f"D{qid}-{d}": int(g) for d, g in enumerate(grades)}
    runs = random_runs(rng, queries, 120, 80, _random_scores)
    return qrels, runs


@pytest.mark.parametrize("seed", range(12))
def test_metrics_equal_trec_eval_per_query(tmp_path, seed):
    qrels, runs = random_collection(seed)
    qrels_path = write_qrels(tmp_path / "qrels", qrels)
    run_paths = [write_run(tmp_path / f"run{n}", run) for n, run in enumerate(runs)]
    ours = prefeval.evaluate(qrels_path, run_paths, list(OURS_TO_TREC_EVAL))
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "map_cut", "ndcg", "ndcg_cut", "recip_rank", "Rprec",
                                                       "P", "recall"})
    compared = 0
    for n, run in enumerate(runs):
        expected = evaluator.evaluate(run)
        rows = ours[ours["run"] == f"run{n}"].set_index("qid")
        for qid, values in expected.items():
            if qid not in rows.index:
                assert not any(g > 0 for g in qrels[qid].values())  # dropped: no relevant document
                continue
            for name, trec_name in OURS_TO_TREC_EVAL.items():
                assert rows.loc[qid, name] == pytest.approx(values[trec_name], abs=1e-9), (seed, n, qid, name)
                compared += 1
    assert compared > 0


# --- trec_eval's layout: what prefeval computes and prints ------------------------------------------

@dataclass(frozen=True)
class Options:
    """One trec_eval option set: its command-line words for trec_eval, and how prefeval and
    pytrec_eval are told the same."""

    complete: bool = False
    judged_only: bool = False
    level: int | None = None
    topk: int | None = None

    def trec_eval_args(self) -> list[str]:
        return (["-q"] + (["-c"] if self.complete else []) + (["-J"] if self.judged_only else [])
                + (["-l", str(self.level)] if self.level is not None else [])
                + (["-M", str(self.topk)] if self.topk is not None else []))

    def prefeval_args(self) -> list[str]:
        return ["--topk" if word == "-M" else word for word in self.trec_eval_args()]

    def library(self) -> dict:
        return {"complete": self.complete, "judged_only": self.judged_only, "relevance_level": self.level,
                "topk": self.topk}


OPTION_SETS = {
    "-q -c": Options(complete=True),
    "-q": Options(),
    "-q -c -J": Options(complete=True, judged_only=True),
    "-q -c -l 2": Options(complete=True, level=2),
    "-q -c -M 100": Options(complete=True, topk=100),
}

assert tuple(OPTION_SETS) == ROBUST03_OPTION_SETS  # the option sets whose outputs tests/data/trec_eval keeps
RUNS_OF = ROBUST03_RUNS_OF
"""Every run under ``-q -c``, three under the other option sets (the test's time stays modest)."""

COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
"""trec_eval's counts: printed with ``%ld``, summed on the summary line."""
GEOMETRIC = {"gm_map": "map", "gm_bpref": "bpref"}
"""Summary-only geometric means, of the per-query values of these measures."""
MIN_GEO_MEAN = 1e-5
TREC_EVAL_10_ONLY = {"iprec_at_recall", "11pt_avg"}
"""pytrec_eval's trec_eval (9) finds a recall level's rank differently; compared with 10.0's definition."""
PYTREC_EVAL_FAMILIES = set(pytrec_eval.supported_measures) - {"runid", "relstring"}


@dataclass(frozen=True)
class Known:
    """A known disagreement: values of a measure (its trec_eval name, or the name before ``_k``)
    under the option sets that have ``option`` among their words (any when empty), printed or raw."""

    measure: str
    reason: str
    option: str = ""
    kinds: tuple[str, ...] = ("raw", "printed")
    oracle_nan: bool = False  # only where the oracle's value is NaN

    def covers(self, option_set: str, measure: str, kind: str, theirs: object = None) -> bool:
        return (family(measure) == self.measure and (not self.option or self.option in option_set.split())
                and kind in self.kinds and (not self.oracle_nan or is_nan(theirs)))


def is_nan(value: object) -> bool:
    return "nan" in value if isinstance(value, str) else isinstance(value, float) and math.isnan(value)


NAN_REASON = ("trec_eval -J: a query left without documents (none judged, or missing from the run under -c) "
              "has num_ret = 0, and trec_eval's iprec_at_recall at a level whose count rounds to 0 (0.00 "
              "always) and 11pt_avg divide 0 by 0: it prints -nan, on the query and on the summary line; "
              "prefeval prints 0.0000")


KNOWN = (
    Known("iprec_at_recall", NAN_REASON, option="-J", oracle_nan=True),
    Known("11pt_avg", NAN_REASON, option="-J", oracle_nan=True),
)


def family(name: str) -> str:
    """A printed measure name without its parameter: ``P_5`` → ``P``, ``iprec_at_recall_0.10`` →
    ``iprec_at_recall``, ``map_cut_15`` → ``map_cut``, ``11pt_avg`` and ``set_F`` as they are."""
    head, _, tail = name.rpartition("_")
    return head if head and tail[:1].isdigit() else name


def known(option_set: str, measure: str, kind: str, theirs: object = None) -> Known | None:
    return next((entry for entry in KNOWN if entry.covers(option_set, measure, kind, theirs)), None)


@dataclass
class Ours:
    """prefeval's values in trec_eval's layout for some runs: per query (printed name → (R, Q),
    queries in the table's order, ``shown`` where a query has lines), on the summary (name → (R,)),
    and the printed text of every line ((run, name, qid) → text)."""

    run_ids: list[str]
    qids: list[str]
    shown: np.ndarray
    per_query: dict[str, np.ndarray]
    summary: dict[str, np.ndarray]
    printed: dict[tuple[int, str, str], str]


def prefeval_values(qrels, runs, options: Options, specs=("all_trec",)) -> Ours:
    request = read_request(specs)
    evaluation = Evaluation.from_files(qrels, runs, request.measures, conventions="trec_eval", compare=False,
                                       others=True, **options.library())
    items = layout_lines(request, evaluation)
    qids: list[str] = []
    parts: dict[str, list[np.ndarray]] = {}
    shown: list[np.ndarray] = []
    summary: dict[str, np.ndarray] = {}
    for result in evaluation.results():
        if isinstance(result, Summary):
            summary = result.metrics
            continue
        qids += result.qids
        for name, values in result.metrics.items():
            parts.setdefault(name, []).append(values)
        shown.append(result.metric_reported if result.metric_reported is not None
                     else np.ones((len(evaluation.run_ids), len(result.qids)), dtype=bool))
    values = {name: np.concatenate(blocks, axis=1) for name, blocks in parts.items()}
    per_query, summaries = {}, {}
    for item in items:
        if item.measure is None:
            continue
        key = item.measure
        if item.per_query:
            per_query[item.name] = values[key]
        summaries[item.name] = summary[key]
    printed: dict[tuple[int, str, str], str] = {}
    run, in_summary = 0, False
    for line in trec_eval_report(evaluation, request, per_query=True):
        name, qid, text = line.split("\t")
        if qid != "all" and in_summary:
            run, in_summary = run + 1, False
        in_summary = qid == "all"
        key = (run, name.rstrip(), qid)
        assert key not in printed, line
        printed[key] = text
        assert line == f"{name.rstrip():<22}\t{qid}\t{text}"
    return Ours(evaluation.run_ids, qids, np.concatenate(shown, axis=1), per_query, summaries, printed)


def printed_value(name: str, value: float) -> str:
    """trec_eval's text of a value: counts as integers, others with ``%6.4f``; its 0 / 0 is ``-nan``."""
    if math.isnan(value):
        return "  -nan"
    return str(int(round(value))) if name in COUNTS or name == "num_q" else f"{value:6.4f}"


# --- the inputs: robust03, read once; runs in trec_eval's order ------------------------------------

def run_path(name: str) -> str:
    return str(ROBUST03 / "runs" / f"input.{name}.gz")


@functools.cache
def robust03_qrels() -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(ROBUST03 / "qrels.txt") as lines:
        for line in lines:
            qid, _, docid, grade = line.split()
            qrels.setdefault(qid, {})[docid] = int(grade)
    return qrels


@functools.cache
def ranked(path: str) -> tuple[str, dict[str, list[str]]]:
    """A run's tag (the first line's) and, per query, its docids in trec_eval's order."""
    scored: dict[str, list[tuple[float, bytes]]] = {}
    tag = None
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as lines:
        for line in lines:
            qid, _, docid, _, score, run_tag = line.split()
            tag = tag or run_tag
            scored.setdefault(qid, []).append((float(score), docid.encode()))
    order = {}
    for qid, documents in scored.items():
        documents.sort(reverse=True)
        order[qid] = [docid.decode() for _, docid in documents]
    return tag, order


def as_trec_eval_reads(order: dict[str, list[str]], options: Options, qrels) -> dict[str, list[str]]:
    """What trec_eval ranks: the first ``-M`` documents, then (``-J``) only those judged (in the qrels
    with a grade >= 0)."""
    out = {}
    for qid, docids in order.items():
        docids = docids[:options.topk] if options.topk else docids
        if options.judged_only:
            judged = qrels.get(qid, {})
            docids = [d for d in docids if judged.get(d, -1) >= 0]
        out[qid] = docids
    return out


def pytrec_run(order: dict[str, list[str]], topk: int | None) -> dict[str, dict[str, float]]:
    """The run as pytrec_eval should read it: distinct integer scores in trec_eval's order."""
    run = {}
    for qid, docids in order.items():
        docids = docids[:topk] if topk else docids
        run[qid] = {d: float(len(docids) - i) for i, d in enumerate(docids)}
    return run


# --- trec_eval 10.0's definitions, written out --------------------------------------------------------

RECALL_LEVELS = [level / 10 for level in range(11)]


def half_up(x: float) -> int:
    """C's lround for x >= 0: the nearest integer, halves away from zero."""
    whole = int(x)
    return whole + (1 if x - whole >= 0.5 else 0)


def interpolated(relevant: list[bool], num_rel: int) -> dict[str, float]:
    """trec_eval 10.0's iprec_at_recall at the 11 levels and 11pt_avg, of a ranking (``relevant``
    per rank) of a query with ``num_rel`` relevant documents: the level's count c = round(level * R);
    0 when fewer than c were retrieved, else the highest precision at a rank of the c-th relevant
    document (the first, for c = 0) or below; with no relevant document retrieved, c = 0 gives the
    precision of the whole list, 0 / 0 = NaN for an empty list (trec_eval prints ``-nan``). 11pt_avg
    adds the 11 values from level 1.0 down and divides by 11."""
    ranks = [i + 1 for i, rel in enumerate(relevant) if rel]
    precision_from = []  # max precision at the rank of the j-th relevant document or below
    best = 0.0
    for j in range(len(ranks), 0, -1):
        best = max(best, j / ranks[j - 1])
        precision_from.append(best)
    precision_from.reverse()
    values = {}
    for level in RECALL_LEVELS:
        count = half_up(level * num_rel)
        if count > len(ranks):
            value = 0.0
        elif not ranks:
            value = 0.0 if relevant else math.nan
        else:
            value = precision_from[max(count, 1) - 1]
        values[f"iprec_at_recall_{level:3.2f}"] = value
    total = 0.0
    for level in reversed(RECALL_LEVELS):
        total += values[f"iprec_at_recall_{level:3.2f}"]
    values["11pt_avg"] = total / len(RECALL_LEVELS)
    return values


def relstring(docids: list[str], judged: dict[str, int]) -> str:
    marks = []
    for docid in docids[:10]:
        grade = judged.get(docid)
        marks.append("-" if grade is None else "." if grade < 0 else ">" if grade > 9 else str(grade))
    return "'" + "".join(marks) + "'"


# --- the comparison -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Disagreement:
    run: str
    measure: str
    qid: str
    kind: str  # raw | printed | lines
    ours: object
    theirs: object

    def __str__(self) -> str:
        return f"{self.run} {self.measure} {self.qid} ({self.kind}): prefeval {self.ours!r}, oracle {self.theirs!r}"


def _compare(found: list, run: str, name: str, qid: str, ours: float, theirs: float, text: str | None) -> None:
    if not (abs(ours - theirs) <= 1e-9 or (math.isnan(ours) and math.isnan(theirs))):
        found.append(Disagreement(run, name, qid, "raw", float(ours), float(theirs)))
    if text is not None and text != printed_value(name, theirs):
        found.append(Disagreement(run, name, qid, "printed", text, printed_value(name, theirs)))


@dataclass(frozen=True)
class Run:
    """A run as the oracles read it: its name, file, tag and per query its docids in trec_eval's order."""

    name: str
    path: str
    tag: str
    order: dict[str, list[str]]


def compare(qrels_path: str, qrels: dict[str, dict[str, int]], runs: list[Run],
            options: Options) -> tuple[list[Disagreement], dict[str, int]]:
    """Every difference between prefeval's trec_eval layout and the oracles, and how many values of
    each measure were compared: per query, the queries that have lines, relstring, and the summary
    as trec_eval makes it (sums in trec_eval's query order, divided by num_q once)."""
    ours = prefeval_values(qrels_path, [run.path for run in runs], options)
    level = options.level or 1
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_EVAL_FAMILIES, relevance_level=level,
                                               judged_docs_only_flag=options.judged_only)
    trec_order = sorted(range(len(ours.qids)), key=lambda q: ours.qids[q].encode())
    num_rel = {qid: sum(grade >= level for grade in judged.values()) for qid, judged in qrels.items()}
    found: list[Disagreement] = []
    compared: dict[str, int] = {}

    def count(name: str) -> None:
        compared[name] = compared.get(name, 0) + 1

    for r, run in enumerate(runs):
        name = run.name
        theirs = evaluator.evaluate(pytrec_run(run.order, options.topk))
        read = as_trec_eval_reads(run.order, options, qrels)
        lines = {qid for (row, _, qid) in ours.printed if row == r and qid != "all"}
        evaluated = [ours.qids[q] for q in trec_order if ours.shown[r, q]]
        expected_queries = [qid for qid in sorted(qrels, key=str.encode) if options.complete or qid in run.order]
        if evaluated != expected_queries or lines != set(expected_queries) or not set(theirs) <= set(evaluated):
            found.append(Disagreement(name, "-", "-", "lines", evaluated, expected_queries))
        summed: dict[str, float] = {}
        for q in trec_order:
            qid = ours.qids[q]
            if not ours.shown[r, q]:
                continue
            judged = qrels[qid]
            docids = read.get(qid, [])
            # -c: trec_eval ranks a query the run lacks as one document not in the qrels (-J removes it)
            present = qid in run.order or options.judged_only
            ranking = [judged.get(d, 0) >= level for d in docids] if present else [False]
            reference = interpolated(ranking, num_rel[qid])
            if qid in theirs:
                reference.update((key, value) for key, value in theirs[qid].items() if family(key) not in
                                 TREC_EVAL_10_ONLY)
            else:  # -c: a query the run lacks is scored as retrieving nothing
                reference.update({key: 0.0 for key in ours.per_query
                                  if key not in reference and family(key) in PYTREC_EVAL_FAMILIES})
                reference["num_rel"] = float(num_rel[qid])
            text = ours.printed.get((r, "relstring", qid))
            if text != relstring(docids, judged):
                found.append(Disagreement(name, "relstring", qid, "printed", text, relstring(docids, judged)))
            count("relstring")
            for measure, values in ours.per_query.items():
                if measure not in reference:
                    continue  # not in pytrec_eval: rbp, rbp_resid, unj (the binary test has them)
                _compare(found, name, measure, qid, values[r, q], reference[measure],
                         ours.printed.get((r, measure, qid)))
                count(measure)
                summed[measure] = summed.get(measure, 0.0) + reference[measure]
            for measure, of in GEOMETRIC.items():
                summed[measure] = summed.get(measure, 0.0) + math.log(max(reference[of], MIN_GEO_MEAN))
        num_q = len(evaluated)
        expected = {"num_q": float(num_q)}
        for measure, total in summed.items():
            expected[measure] = (total if measure in COUNTS else math.exp(total / num_q) if measure in GEOMETRIC
                                 else total / num_q)
        if options.complete:  # trec_eval -c: num_rel of every query of the qrels, its grades > 0
            expected["num_rel"] = float(sum(g > 0 for judged in qrels.values() for g in judged.values()))
        if ours.printed.get((r, "runid", "all")) != run.tag:
            found.append(Disagreement(name, "runid", "all", "printed", ours.printed.get((r, "runid", "all")), run.tag))
        for measure, value in expected.items():
            text = ours.printed.get((r, measure, "all"))
            if measure == "num_q" or (measure == "num_rel" and options.complete):
                # the evaluation's summary num_rel is prefeval's (the queries' sum); the layout prints trec_eval's
                ours_value = float(text)
            else:
                ours_value = ours.summary[measure][r]
            _compare(found, name, measure, "all", ours_value, value, text)
            count(measure + " (summary)")
    return found, compared


@functools.cache
def disagreements(option_set: str) -> tuple[list[Disagreement], dict[str, int]]:
    """:func:`compare` on robust03 under ``option_set``."""
    robust03_or_skip()
    runs = [Run(name, run_path(name), *ranked(run_path(name))) for name in RUNS_OF[option_set]]
    return compare(str(ROBUST03 / "qrels.txt"), robust03_qrels(), runs, OPTION_SETS[option_set])


def test_known_disagreements_name_measures():
    measures = {family(name) for name in pytrec_eval.supported_measures}
    assert {entry.measure for entry in KNOWN} <= measures


@pytest.mark.parametrize("option_set", list(OPTION_SETS))
def test_trec_eval_layout_agrees_with_pytrec_eval(option_set):
    """Every all_trec measure pytrec_eval has, per query and on the summary, raw (within 1e-9) and
    printed; iprec_at_recall, 11pt_avg and relstring by trec_eval 10.0's definitions; the queries
    that have lines; runid. Known disagreements are left to :func:`test_known_disagreement`."""
    found, compared = disagreements(option_set)
    unknown = [d for d in found if not known(option_set, d.measure, d.kind, d.theirs)]
    assert not unknown, f"{len(unknown)} disagreements, e.g.:\n" + "\n".join(map(str, unknown[:20]))
    measures = set(compared)
    assert {"map", "P_10", "ndcg", "infAP", "bpref", "iprec_at_recall_0.50", "11pt_avg", "relstring", "Rndcg",
            "Rprec_mult_1.20", "utility", "set_F", "success_10", "num_nonrel_judged_ret"} <= measures
    assert compared["map"] >= 100 * len(RUNS_OF[option_set])


@pytest.mark.parametrize("entry", [pytest.param(entry, marks=pytest.mark.xfail(reason=entry.reason, strict=False),
                                                id=f"{entry.measure}{'-' + entry.option if entry.option else ''}")
                                   for entry in KNOWN])
def test_known_disagreement(entry: Known):
    """The values :data:`KNOWN` leaves out of the tests of robust03 and of random collections,
    compared: xfail until prefeval agrees."""
    found = [d for option_set in OPTION_SETS for d in disagreements(option_set)[0]
             if known(option_set, d.measure, d.kind, d.theirs) == entry]
    found += [d for seed, option_set in RANDOM_CASES for d in random_disagreements(seed, option_set)[0]
              if known(option_set, d.measure, d.kind, d.theirs) == entry]
    assert not found, f"{len(found)} disagreements, e.g.:\n" + "\n".join(map(str, found[:10]))


# --- the trec_eval binary, byte for byte -----------------------------------------------------------------

TREC_EVAL = os.environ.get("PREFEVAL_TREC_EVAL")
needs_binary = pytest.mark.skipif(not TREC_EVAL, reason="set PREFEVAL_TREC_EVAL to a trec_eval executable")


@pytest.fixture(scope="module")
def plain_runs(tmp_path_factory) -> list[str]:
    """The three runs uncompressed (trec_eval reads plain files)."""
    robust03_or_skip()
    folder = tmp_path_factory.mktemp("runs")
    paths = []
    for name in FEW_RUNS:
        path = folder / f"input.{name}"
        with gzip.open(run_path(name), "rb") as source:
            path.write_bytes(source.read())
        paths.append(str(path))
    return paths


def binary_output(args: list[str], qrels: str, runs: list[str]) -> bytes:
    """trec_eval's stdout for each run in turn (it takes one run at a time)."""
    out = b""
    for run in runs:
        done = subprocess.run([TREC_EVAL, *args, qrels, run], capture_output=True, check=True)
        out += done.stdout
    return out


def prefeval_output(args: list[str], qrels: str, runs: list[str]) -> bytes:
    done = subprocess.run([sys.executable, "-m", "prefeval", "eval", "--format", "trec_eval", *args, "-R", qrels,
                           *runs], capture_output=True, check=True, cwd=ROOT)
    return done.stdout


def line_disagreements(ours: bytes, theirs: bytes) -> list[Disagreement]:
    """The lines that differ (all of them, as one, when the lines' names and queries differ)."""
    mine, their = ours.decode().splitlines(), theirs.decode().splitlines()
    if [line.split("\t")[:2] for line in mine] != [line.split("\t")[:2] for line in their]:
        return [Disagreement("-", "-", "-", "lines", len(mine), len(their))]
    found = []
    for a, b in zip(mine, their):
        if a != b:
            name, qid, value = a.split("\t")
            found.append(Disagreement("-", name.rstrip(), qid, "printed", value, b.split("\t")[2]))
    return found


@needs_binary
@pytest.mark.parametrize("option_set", list(OPTION_SETS))
def test_byte_for_byte_with_trec_eval(option_set, plain_runs):
    args = OPTION_SETS[option_set].trec_eval_args() + ["-m", "all_trec"]
    qrels = str(ROBUST03 / "qrels.txt")
    ours = prefeval_output(OPTION_SETS[option_set].prefeval_args() + ["-m", "all_trec"], qrels, plain_runs)
    theirs = binary_output(args, qrels, plain_runs)
    check_lines(option_set, ours, theirs)


def check_lines(option_set: str, ours: bytes, theirs: bytes) -> None:
    """Fail on a line that differs unless its disagreement is known (then xfail, with the reasons)."""
    if ours == theirs:
        return
    found = line_disagreements(ours, theirs)
    unknown = [d for d in found if not known(option_set, d.measure, d.kind, d.theirs)]
    assert not unknown, f"{len(unknown)} lines differ, e.g.:\n" + "\n".join(map(str, unknown[:20]))
    reasons = sorted({known(option_set, d.measure, d.kind, d.theirs).reason for d in found})
    pytest.xfail(f"{len(found)} lines differ, all known: " + "; ".join(reasons))


@needs_binary
@pytest.mark.parametrize("option_set", ["-q -c", "-q -c -J", "-q -c -l 2"])
@pytest.mark.parametrize("seed", [2, 28, 43])
def test_byte_for_byte_with_trec_eval_on_random_collections(tmp_path, seed, option_set):
    """Collections with values on the edge of a printed digit (:data:`RANDOM_SEEDS`), grades -1,
    queries missing from runs (trec_eval 10.0 stops at them without -c) and not in the qrels."""
    qrels, runs = with_conventions(seed)
    qrels_path = write_qrels(tmp_path / "qrels", qrels)
    run_paths = [write_run(tmp_path / f"run{n}", run) for n, run in enumerate(runs)]
    options = OPTION_SETS[option_set]
    result = run_cli("eval", "--format", "trec_eval", *options.prefeval_args(), "-m", "all_trec", "-R", qrels_path,
                     *run_paths)
    assert result.exit_code == 0, result.output
    check_lines(option_set, result.stdout.encode(), binary_output(options.trec_eval_args() + ["-m", "all_trec"],
                                                                  qrels_path, run_paths))


@needs_binary
@pytest.mark.parametrize("seeds, large", [(list(range(24)) + [54, 281], False), ([1000, 1001, 1262], True)],
                         ids=["1-4 queries of 1-8 documents", "up to 12 queries of 30"])
def test_byte_for_byte_with_trec_eval_to_the_last_digit(seeds, large):
    """``benchmarks/last_digit.py trec_eval`` on small collections, where sums land on .5 of the last
    printed digit (seeds 54, 281 and 1262: trec_eval's rbp), under eight option sets: every line
    trec_eval's (its -nan under -J counted apart there)."""
    tally = benchmark("last_digit").trec_eval_tally(TREC_EVAL, seeds, large)
    assert tally.lines > 10000 and not tally.differences, tally.report("trec_eval")


# --- hand-made cases: trec_eval's conventions ----------------------------------------------------------

HAND_QRELS = ["1 0 a 1", "1 0 b 0", "1 0 c -1", "1 0 d 2", "2 0 x 0", "3 0 y 2", "3 0 z 1", "10 0 w 1"]
"""Query 1: a, d relevant (grades 1, 2), b judged not relevant, c in the pool but not judged (-1);
query 2: no relevant document; query 3: missing from the run; query 10: sorts before 2 as bytes."""
HAND_RUN = ["1 Q0 b 1 0.5 myTag", "1 Q0 a 2 3.0 myTag", "1 Q0 e 3 2.0 myTag", "1 Q0 c 4 1.0 myTag",
            "1 Q0 d 5 0.5 myTag", "10 Q0 w 1 4.0 myTag", "10 Q0 v 2 5.0 myTag", "2 Q0 x 1 1.0 myTag",
            "99 Q0 a 1 1.0 myTag"]
"""Query 1 ranks a e c d b (d and b tie: docid descending); query 10 ranks v (not in the qrels) w;
query 99 is not in the qrels (ignored). The file's name is not its tag."""
HAND_MEASURES = ["-m", "runid", "-m", "num_q", "-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map",
                 "-m", "gm_map", "-m", "P.2", "-m", "relstring"]


def table(rows: str) -> str:
    """Lines ``name qid value`` (single spaces) in trec_eval's layout."""
    out = []
    for row in rows.strip().splitlines():
        name, qid, value = row.split()
        out.append(f"{name:<22}\t{qid}\t{value}\n")
    return "".join(out)


HAND_PER_QUERY = table("""
num_ret 1 5
num_rel 1 2
num_rel_ret 1 2
map 1 0.7500
P_2 1 0.5000
relstring 1 '1-.20'
num_ret 10 2
num_rel 10 1
num_rel_ret 10 1
map 10 0.5000
P_2 10 0.5000
relstring 10 '-1'
num_ret 2 1
num_rel 2 0
num_rel_ret 2 0
map 2 0.0000
P_2 2 0.0000
relstring 2 '0'
""")
"""Query 1: AP = (1/1 + 2/4) / 2, P@2 = 1/2; query 10: AP = (1/2) / 1; query 2 (no relevant
document): kept, every value 0. Query 3 and 99 have no lines."""
HAND_MISSING = table("""
num_ret 3 0
num_rel 3 2
num_rel_ret 3 0
map 3 0.0000
P_2 3 0.0000
relstring 3 ''
""")
"""Under -c, query 3 (missing from the run) is scored as retrieving nothing."""
HAND_SUMMARY = table("""
runid all myTag
num_q all 3
num_ret all 8
num_rel all 3
num_rel_ret all 3
map all 0.4167
gm_map all 0.0155
P_2 all 0.3333
""")
"""Means over the 3 queries: AP (0.75 + 0.5 + 0) / 3; GM_AP (0.75 · 0.5 · 1e-5)^(1/3) = 0.01554;
P@2 (0.5 + 0.5 + 0) / 3."""
HAND_SUMMARY_COMPLETE = table("""
runid all myTag
num_q all 4
num_ret all 8
num_rel all 5
num_rel_ret all 3
map all 0.3125
gm_map all 0.0025
P_2 all 0.2500
""")
"""-c: 4 queries; AP 1.25 / 4; GM_AP (0.75 · 0.5 · 1e-5 · 1e-5)^(1/4) = 0.002475; P@2 1 / 4."""

HAND_CASES = {
    "-q": (["-q"], HAND_PER_QUERY + HAND_SUMMARY),
    "-q -c": (["-q", "-c"], HAND_PER_QUERY + HAND_MISSING + HAND_SUMMARY_COMPLETE),
    "-c": (["-c"], HAND_SUMMARY_COMPLETE),
    "(none)": ([], HAND_SUMMARY),
    "-q -n": (["-q", "-n"], HAND_PER_QUERY),
    "-q -c -n": (["-q", "-c", "-n"], HAND_PER_QUERY + HAND_MISSING),
}


@pytest.fixture
def hand_files(tmp_path) -> tuple[str, str]:
    return write_text(tmp_path / "qrels", HAND_QRELS), write_text(tmp_path / "run.txt", HAND_RUN)


@pytest.mark.parametrize("case", list(HAND_CASES))
def test_hand_made_conventions(hand_files, case):
    """A query without relevant documents is kept (values 0, counted in num_q); a query the run
    lacks is skipped, or scored 0 under -c; a query of the run not in the qrels is ignored; runid
    is the run's tag; relstring shows '-' for a document not in the qrels and '.' for a negative
    grade; counts are integers; runid, num_q and gm_map are on the summary only; -n drops it."""
    qrels, run = hand_files
    options, expected = HAND_CASES[case]
    result = run_cli("eval", "--format", "trec_eval", *options, *HAND_MEASURES, "-R", qrels, run)
    assert result.exit_code == 0, result.output
    assert result.stdout == expected


@needs_binary
@pytest.mark.parametrize("case", [case for case in HAND_CASES if "-c" in HAND_CASES[case][0]])
def test_hand_made_conventions_are_trec_eval_s(hand_files, case):
    """The hand-computed text is trec_eval's (with -c: without it, trec_eval 10.0 stops at a query
    of the qrels that the run lacks, where trec_eval 9 and pytrec_eval skip it, as prefeval does)."""
    qrels, run = hand_files
    options, expected = HAND_CASES[case]
    done = subprocess.run([TREC_EVAL, *options, *HAND_MEASURES, qrels, run], capture_output=True, check=True)
    assert done.stdout.decode() == expected


def test_hand_made_library_values(hand_files):
    """The same through the library: raw values and the shown queries (trec_eval's -c)."""
    qrels, run = hand_files
    ours = prefeval_values(qrels, [run], Options(complete=True), specs=HAND_MEASURES[1::2])
    assert ours.run_ids == ["run.txt"]
    assert ours.shown.tolist() == [[True, True, True, True]]
    values = {name: dict(zip(ours.qids, runs[0].tolist())) for name, runs in ours.per_query.items()}
    assert values["map"] == {"1": 0.75, "2": 0.0, "3": 0.0, "10": 0.5}
    assert values["num_rel"] == {"1": 2, "2": 0, "3": 2, "10": 1}
    assert values["num_ret"] == {"1": 5, "2": 1, "3": 0, "10": 2}
    assert ours.summary["map"][0] == 0.3125
    assert ours.summary["gm_map"][0] == pytest.approx((0.75 * 0.5 * 1e-5 * 1e-5) ** 0.25, rel=1e-12)
    assert ours.printed[(0, "runid", "all")] == "myTag"


# --- random collections: every all_trec measure pytrec_eval has, under -c ------------------------------

def with_conventions(seed: int):
    """:func:`random_collection` with unjudged documents in the pool (grade -1) and a query without
    a relevant document."""
    qrels, runs = random_collection(seed)
    rng = np.random.default_rng(1000 + seed)
    for judged in qrels.values():
        for docid in list(judged):
            if rng.random() < 0.1:
                judged[docid] = -1
    qrels["500"] = {"D500-0": 0, "D500-1": -1, "D500-2": 0}
    for run in runs:
        run["500"] = {f"D500-{d}": float(3 - d) for d in range(4)}
    return qrels, runs


RANDOM_SEEDS = (0, 1, 2, 3, 28, 43)
"""Seeds 2, 28 and 43 have values on the edge of a printed digit, where the order of floating-point
operations shows: set_F (seed 2), map_cut (seed 28: added pairwise, trec_eval adds in rank order),
bpref (seed 43); and robust03's MU03rob01 query 419 map_cut_15 (0.13125)."""


RANDOM_CASES = [(seed, "-q -c") for seed in RANDOM_SEEDS] + [
    (seed, option_set) for option_set in ("-q", "-q -c -J", "-q -c -l 2") for seed in range(2)]
"""Six collections under -q -c, two under the other option sets (-M is robust03's)."""


@functools.cache
def random_disagreements(seed: int, option_set: str = "-q -c") -> tuple[list[Disagreement], dict[str, int]]:
    """:func:`compare` on :func:`with_conventions` under ``option_set``."""
    qrels, runs = with_conventions(seed)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        qrels_path = write_qrels(folder / "qrels", qrels)
        ranked_runs = []
        for n, run in enumerate(runs):
            order = {qid: [d.decode() for _, d in sorted(((s, d.encode()) for d, s in docs.items()), reverse=True)]
                     for qid, docs in run.items()}
            ranked_runs.append(Run(f"run{n}", write_run(folder / f"run{n}", run), "run", order))
        return compare(qrels_path, qrels, ranked_runs, OPTION_SETS[option_set])


@pytest.mark.parametrize(("seed", "option_set"), RANDOM_CASES)
def test_random_collections_agree_with_pytrec_eval(seed, option_set):
    """Every all_trec measure pytrec_eval has (and iprec_at_recall, 11pt_avg, relstring by trec_eval
    10.0's definitions), per query and on the summary, raw and printed: queries without a relevant
    document, queries missing from runs (skipped; -c: scored 0), queries of runs not in the qrels,
    grades -1 in the pool (-J drops them), ties."""
    found, compared = random_disagreements(seed, option_set)
    found = [d for d in found if not known(option_set, d.measure, d.kind, d.theirs)]
    assert not found, f"seed {seed}: {len(found)} disagreements, e.g.:\n" + "\n".join(map(str, found[:20]))
    assert compared["map"] > 0


# --- prefeval trec_eval, the drop-in: the kept outputs, the exit codes, trec_eval's quicktest -------------

@needs_binary
@pytest.mark.parametrize("option_set", list(OPTION_SETS))
def test_the_drop_in_with_trec_evals_own_arguments(option_set, plain_runs):
    """The loop of docs/commands/trec_eval.md: ``prefeval trec_eval`` takes trec_eval's arguments (``-M 100``,
    not --topk)."""
    args = OPTION_SETS[option_set].trec_eval_args() + ["-m", "all_trec"]
    qrels = str(ROBUST03 / "qrels.txt")
    for run in plain_runs:
        ours = run_cli("trec_eval", *args, qrels, run)
        assert ours.exit_code == 0, ours.stderr
        assert ours.stdout_bytes == binary_output(args, qrels, [run]), run


@needs_binary
def test_the_kept_outputs_are_the_binarys(tmp_path):
    """tests/data/trec_eval/*.out: what the binary prints today (tests/data/trec_eval/regenerate.py)."""
    files = write_collection(tmp_path)
    for case in CASES:
        with open(tmp_path / files[case.stdin] if case.stdin else os.devnull, "rb") as stdin:
            done = subprocess.run([TREC_EVAL, *case.arguments(files)], cwd=tmp_path, stdin=stdin,
                                  capture_output=True, check=True)
        assert done.stdout == (DATA / f"{case.name}.out").read_bytes(), case.name


@needs_binary
@pytest.mark.parametrize("option_set", list(OPTION_SETS))
def test_the_kept_robust03_outputs_are_the_binarys(option_set, tmp_path_factory):
    import lzma

    robust03_or_skip()
    folder = tmp_path_factory.mktemp("robust03")
    runs = []
    for name in ROBUST03_RUNS_OF[option_set]:
        runs.append(folder / f"input.{name}")
        runs[-1].write_bytes(gzip.decompress(Path(run_path(name)).read_bytes()))
    args = OPTION_SETS[option_set].trec_eval_args() + ["-m", "all_trec"]
    expected = lzma.decompress(robust03_expected(option_set).read_bytes())
    assert binary_output(args, str(ROBUST03 / "qrels.txt"), [str(run) for run in runs]) == expected


BAD_COMMAND_LINES = {
    "an unknown option": ["-x", "{qrels}", "{run}"],
    "an option without its value": ["{qrels}", "{run}", "-m"],
    "an unknown long option": ["--foo", "{qrels}", "{run}"],
    "a long option with a value it does not take": ["--help=1", "{qrels}", "{run}"],
    "one operand": ["{qrels}"],
    "three operands": ["{qrels}", "{run}", "{run}"],
    "an unknown measure": ["-m", "foo", "{qrels}", "{run}"],
    "a measure in capitals": ["-m", "MAP", "{qrels}", "{run}"],
    "a dot without parameters": ["-m", "P.", "{qrels}", "{run}"],
    "a cut-off of 0": ["-m", "P.0", "{qrels}", "{run}"],
    "a duplicate cut-off": ["-m", "map_cut.5,5", "{qrels}", "{run}"],
    "an unknown judgment format": ["-R", "foo", "{qrels}", "{run}"],
    "an unknown run format": ["-T", "foo", "{qrels}", "{run}"],
    "no qrels": ["{missing}", "{run}"],
    "no run": ["{qrels}", "{missing}"],
    "qrels on stdin": ["-", "{run}"],
    "a malformed qrels line": ["{bad_qrels}", "{run}"],
    "a malformed run line": ["{qrels}", "{bad_run}"],
    "no z-score file": ["-Z", "{missing}", "{qrels}", "{run}"],
    "a malformed z-score line": ["-Z", "{bad_zscores}", "{qrels}", "{run}"],
    "an empty z-score file": ["-Z", "{empty}", "{qrels}", "{run}"],
    "the version": ["-v"],
    "the help, with no operand": ["-h"],
}
"""Command lines trec_eval refuses (or ends early on), each with the exit code trec_eval gives it."""


@needs_binary
@pytest.mark.parametrize("case", list(BAD_COMMAND_LINES))
def test_exit_codes_are_trec_evals(tmp_path, case):
    files = {"qrels": write_text(tmp_path / "qrels", HAND_QRELS), "run": write_text(tmp_path / "run", HAND_RUN),
             "missing": str(tmp_path / "missing"), "bad_qrels": write_text(tmp_path / "bad_qrels", ["1 0 a"]),
             "bad_run": write_text(tmp_path / "bad_run", ["1 Q0 a 1"]),
             "bad_zscores": write_text(tmp_path / "bad_z", ["1 map 0.5 0.1", "1 P_5 0.5"]),
             "empty": write_text(tmp_path / "empty", [])}
    args = [arg.format(**files) for arg in BAD_COMMAND_LINES[case]]
    theirs = subprocess.run([TREC_EVAL, "-c", *args], capture_output=True, cwd=tmp_path, stdin=subprocess.DEVNULL)
    ours = subprocess.run([sys.executable, "-m", "prefeval", "trec_eval", "-c", *args], capture_output=True,
                          cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert ours.returncode == theirs.returncode, (ours.stderr, theirs.stderr)
    if ours.returncode:
        assert ours.stderr.decode().startswith("prefeval: error: ") and ours.stderr.count(b"\n") == 1, ours.stderr
        assert ours.stdout == b""


JUDGMENT_OPTIONS = ("prefs", "qrels_prefs", "qrels_jg")
"""The -R formats of trec_eval that prefeval does not read yet (quicktest's commands 9 to 13)."""


@needs_binary
def test_trec_evals_quicktest():
    """trec_eval's own conformance test, when the binary sits in its checkout (Makefile and test/)."""
    source = Path(TREC_EVAL).resolve().parent
    if not (source / "Makefile").exists() or not (source / "test").is_dir():
        pytest.skip(f"no trec_eval checkout (Makefile, test/) beside {TREC_EVAL}")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from quicktest import quicktest
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    outcomes = quicktest(source, [sys.executable, "-m", "prefeval", "trec_eval"])
    assert len(outcomes) == 15
    failed = [outcome for outcome in outcomes if not outcome.passed
              and not any(name in outcome.command.args for name in JUDGMENT_OPTIONS)]
    assert not failed, "\n".join(f"{o.command.number}: {o.detail}" for o in failed)
