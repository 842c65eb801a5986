"""trec_eval's own output (``eval --format trec_eval``): the evaluation trec_eval would make
(:func:`trec_eval_evaluation`, its conventions) and what it prints (:func:`trec_eval_report`), line
by line in its layout (:func:`~prefeval.report.tsv.trec_eval_line`)."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence

import numpy as np

from prefeval.errors import UsageError
from prefeval.evaluation import Evaluation, Summary
from prefeval.io.keys import SUMMARY_QID
from prefeval.measures import parse_measure
from prefeval.measures.summaries import GEOMETRIC_FLOOR
from prefeval.measures.trec_eval_measures import RELSTRING, RUNID, TrecEvalItem, trec_eval_items
from prefeval.ranking.options import KEEP, SKIP, WORST
from prefeval.report.tsv import trec_eval_line

RELSTRING_LENGTH = 10
"""trec_eval's ``relstring`` shows the judgments of the first ten documents."""


def trec_eval_report(evaluation: Evaluation, items: Sequence[TrecEvalItem], per_query: bool = False,
                     summary: bool = True) -> Iterator[str]:
    """What ``trec_eval [-q] [-n] -m ...`` prints, run by run in command-line order: with
    ``per_query``, every query's lines (queries in trec_eval's order, their ids compared as bytes;
    under ``missing_queries="skip"`` only the run's own queries, as trec_eval without ``-c``), each
    query's items in trec_eval's order; then, unless ``summary`` is false, the summary lines
    (``runid``, the run's tag, ``num_q``, every measure aggregated by its summary kind). Counts are
    printed as integers, every other value with ``%6.4f``, the name left-aligned in 22 characters.

    The evaluation must hold the items' measures and keep the queries without relevant documents
    (trec_eval's conventions: :func:`trec_eval_evaluation`)."""
    table = evaluation.table
    values: dict[str, list[np.ndarray]] = {m.name: [] for m in evaluation.metric_measures}
    reported: list[np.ndarray] = []
    qids: list[str] = []
    for result in evaluation.results():
        if isinstance(result, Summary):
            continue
        for name, block_values in result.metrics.items():
            values[name].append(block_values)
        reported.append(result.metric_reported if result.metric_reported is not None
                        else np.ones((table.num_runs, len(result.qids)), dtype=bool))
        qids += result.qids
    per_query_values = {name: np.concatenate(parts, axis=1) for name, parts in values.items()}
    shown = np.concatenate(reported, axis=1) if reported else np.zeros((table.num_runs, 0), dtype=bool)
    counts = {m.name for m in evaluation.metric_measures if m.counts}
    if qids != table.qids:
        raise UsageError("the trec_eval layout shows every query of the qrels once: no subsampling")
    order = sorted(range(len(qids)), key=lambda q: qids[q].encode("utf-8", "surrogateescape"))
    summaries = _summaries(evaluation, per_query_values, shown, np.array(order, dtype=np.int64))
    relstrings = _relstrings(evaluation) if per_query and any(i.name == RELSTRING for i in items) else None
    for run, run_id in enumerate(table.run_ids):
        if per_query:
            for q in order:
                if not shown[run, q]:
                    continue
                qid = qids[q]
                for item in items:
                    if not item.per_query:
                        continue
                    if item.name == RELSTRING:
                        yield trec_eval_line(item.name, qid, f"'{relstrings[run][q]}'")
                    else:
                        yield trec_eval_line(item.name, qid, _value(per_query_values[_key(item)][run, q], item, counts))
        if summary:
            for item in items:
                if not item.in_summary:
                    continue
                if item.name == RUNID:
                    tag = table.run_tags[run] if table.run_tags and table.run_tags[run] is not None else run_id
                    yield trec_eval_line(item.name, SUMMARY_QID, tag)
                else:
                    yield trec_eval_line(item.name, SUMMARY_QID, _value(summaries[_key(item)][run], item, counts))


def _summaries(evaluation: Evaluation, values: dict[str, np.ndarray], shown: np.ndarray,
               order: np.ndarray) -> dict[str, np.ndarray]:
    """Each measure's summary per run as trec_eval computes it: the values added one query after the
    other in trec_eval's order of queries (so that a mean on the edge of a rounding digit rounds as
    trec_eval's does), then divided by the number of queries (means), or not (counts), or the mean
    of the logarithms exponentiated (geometric). One quirk kept: with ``-c``, trec_eval's summary
    ``num_rel`` counts every document of grade > 0 in the qrels, whatever ``-l``."""
    summaries = {}
    counted = shown[:, order]
    count = counted.sum(axis=1)
    for measure in evaluation.metric_measures:
        per_query = values[measure.name][:, order]
        if measure.summary_kind == "geometric":
            per_query = np.log(np.maximum(per_query, GEOMETRIC_FLOOR))
        running = np.cumsum(np.where(counted, per_query, 0.0), axis=1)
        total = running[:, -1] if running.shape[1] else np.zeros(len(count))
        if measure.summary_kind == "sum":
            summaries[measure.name] = total
        else:
            mean = np.divide(total, count, out=np.zeros(len(total)), where=count > 0)
            summaries[measure.name] = np.exp(mean) if measure.summary_kind == "geometric" else mean
        if measure.family == "num_rel" and evaluation.missing_queries == WORST:
            summaries[measure.name] = np.full(len(count), float((evaluation.table.qrels.grades > 0).sum()))
    return summaries


@functools.lru_cache(maxsize=1024)
def _key(item: TrecEvalItem) -> str:
    """The prefeval name of an item's measure (parsed once per item)."""
    return parse_measure(item.measure).name


def _value(value: float, item: TrecEvalItem, counts: set[str]) -> str:
    return str(int(round(value))) if _key(item) in counts else f"{value:6.4f}"


def _relstrings(evaluation: Evaluation) -> list[list[str]]:
    """Per run and query of the table, trec_eval's ``relstring``: a character per document of the
    first ten retrieved, its grade (``>`` above 9), ``-`` when it is not in the qrels, ``.`` when it
    is in the qrels with a negative grade (in the pool, not judged)."""
    table = evaluation.table
    qrels = table.qrels
    strings = [[["-"] * int(min(RELSTRING_LENGTH, n)) for n in table.num_retrieved[run]]
               for run in range(table.num_runs)]
    documents = ((table.ranks, qrels.query_of_document, qrels.grades),
                 (table.other_ranks, qrels.query_of_other, qrels.other_grades))
    for ranks, query_of, grades in documents:
        if ranks is None:
            continue
        for run, document in zip(*np.nonzero(ranks <= RELSTRING_LENGTH)):
            grade = grades[document]
            mark = "." if grade < 0 else (">" if grade > 9 else str(int(grade)))
            strings[run][int(query_of[document])][int(ranks[run, document]) - 1] = mark
    return [["".join(chars) for chars in run] for run in strings]


def check_trec_eval_options(**given) -> None:
    """A :class:`UsageError` for an ``eval`` option that the trec_eval layout does not take (it
    follows trec_eval's conventions, which set them): each is given as its value, None or its
    default when not used."""
    unused = {"measure_set": "none", "samples": 1, "query_fraction": 1.0, "label_fraction": 1.0, "summary": (),
              "ties": "docid", "complete": None}
    for name, value in given.items():
        if value is not None and value != unused.get(name, None) and value != ():
            option = "--" + name.replace("_", "-")
            raise UsageError(f"{option} does not apply to this format, which follows its tool's conventions "
                             "(trec_eval: -c, -J, -l, -N, --topk; ir_measures: -J, -l, --topk)")


def trec_eval_evaluation(qrels, runs, specs: Sequence[str] = (), *, complete: bool = False,
                         judged_only: bool = False, relevance_level: float | None = None, topk: int | None = None,
                         num_docs: int | None = None, jobs: int | None = None,
                         progress=None) -> tuple[Evaluation, list[TrecEvalItem]]:
    """The evaluation trec_eval would make, and the items of its output: ``specs`` are ``-m``
    values in trec_eval's syntax (:func:`~prefeval.measures.trec_eval_measures.trec_eval_items`);
    trec_eval's conventions: the queries without a relevant document are kept, a query the run
    lacks is skipped (``complete``, trec_eval's ``-c``: scored as retrieving nothing), ``-J``,
    ``-l``, ``-M`` (``topk``) and ``-N`` (``num_docs``) as in trec_eval."""
    items = trec_eval_items(specs, num_docs)
    measures = list(dict.fromkeys(item.measure for item in items if item.measure is not None))
    evaluation = Evaluation.from_files(
        qrels, runs, measures or ["num_q"], relevance_level=relevance_level, topk=topk, jobs=jobs, progress=progress,
        empty_queries=KEEP, missing_queries=WORST if complete else SKIP, judged_only=judged_only,
        compare=False, others=True, sequential_sums=True)
    return evaluation, items
