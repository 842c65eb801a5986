"""ir_measures' command-line output, for ``eval --format ir_measures``.

``ir_measures QRELS RUN MEASURES`` prints, per measure in the order given, ``measure<TAB>value`` with
the value to four decimals (``{:.4f}``, counts too); with ``-q`` first the per-query lines
``qid<TAB>measure<TAB>value``, then the summary lines with the query id ``all``. The measure is
written as it was typed (``nDCG@10``, ``P(rel=2)@10``). The summary is the mean over the queries,
the counts (``NumQ``, ``NumRet``, ``NumRel``, ``NumRelRet``) summed, as ir_measures aggregates them.

ir_measures evaluates every query of the qrels, those without a relevant document included, and a
query the run lacks scores 0 on every measure, ``NumQ`` and ``NumRel`` included, as ir_measures
writes them (prefeval's own formats count such a query: ``num_q`` 1, ``num_rel`` its relevant
documents); :func:`ir_measures_evaluation` sets these conventions. One choice differs from
ir_measures' own output, on purpose: the per-query lines come query by query in the qrels' order,
each query's measures in the order given (ir_measures orders them by the program that computes
them). With several runs, each line starts with the run id (ir_measures takes one run).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from prefeval.errors import UsageError
from prefeval.evaluation import Evaluation, Summary
from prefeval.io.keys import SUMMARY_QID
from prefeval.measures import parse_measure, parse_measures
from prefeval.measures.names import split_measure_list
from prefeval.measures.summaries import summarise_over_queries
from prefeval.ranking.options import KEEP, WORST
from prefeval.report.formats import tsv_text


def ir_measures_evaluation(qrels, runs, names: Sequence[str], *, relevance_level: float | None = None,
                           topk: int | None = None, judged_only: bool = False, jobs: int | None = None,
                           progress=None) -> tuple[Evaluation, list[tuple[str, str]]]:
    """The evaluation ir_measures would make, and its (typed name, prefeval name) pairs in the
    order given: every query of the qrels kept, a query a run lacks scored as retrieving nothing."""
    typed = [token.strip() for text in names for token in split_measure_list(text) if token.strip()]
    measures = parse_measures(typed)
    pairs = _typed_names(typed)
    evaluation = Evaluation.from_files(qrels, runs, measures, relevance_level=relevance_level, topk=topk, jobs=jobs,
                                       progress=progress, empty_queries=KEEP, missing_queries=WORST,
                                       judged_only=judged_only, compare=False)
    return evaluation, pairs


def _typed_names(typed: list[str]) -> list[tuple[str, str]]:
    """Each measure under the name it was typed with, in order, once each; a number continuing the
    measure before it (``P@5,10``) has no name of its own and shows prefeval's."""
    pairs: list[tuple[str, str]] = []
    for place, token in enumerate(typed):
        try:
            shown, measure = token, parse_measure(token).name
        except UsageError:
            measure = parse_measures(typed[: place + 1])[-1].name
            shown = measure
        if all(measure != known for _, known in pairs):
            pairs.append((shown, measure))
    return pairs


def ir_measures_report(evaluation: Evaluation, names: Sequence[tuple[str, str]], per_query: bool = False,
                       summary: bool = True) -> Iterator[str]:
    """ir_measures' output lines for ``evaluation`` (module docstring), run by run."""
    table = evaluation.table
    values: dict[str, list[np.ndarray]] = {name: [] for _, name in names}
    qids: list[str] = []
    for result in evaluation.results():
        if isinstance(result, Summary):
            continue
        for name in values:
            values[name].append(result.metrics[name])
        qids += result.qids
    # ir_measures scores every measure 0 on a query the run lacks, its counts included
    answered = table.in_run
    per_query_values = {name: np.where(answered, np.concatenate(parts, axis=1), 0.0) for name, parts in values.items()}
    kinds = {m.name: m.summary_kind for m in evaluation.metric_measures}
    summaries = {name: summarise_over_queries(kinds[name], values) for name, values in per_query_values.items()}
    several = table.num_runs > 1
    for run, run_id in enumerate(table.run_ids):
        prefix = tsv_text(run_id) + "\t" if several else ""
        if per_query:
            for q, qid in enumerate(qids):
                for typed, name in names:
                    yield f"{prefix}{tsv_text(qid)}\t{typed}\t{per_query_values[name][run, q]:.4f}"
        if summary:
            for typed, name in names:
                line = f"{SUMMARY_QID}\t{typed}" if per_query else typed
                yield f"{prefix}{line}\t{summaries[name][run]:.4f}"
