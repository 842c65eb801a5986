"""ir_measures' command-line output, for ``eval --format ir_measures``, from an evaluation: it renders
what the evaluation computed, under the conventions it was given (ir_measures' by default: every
query of the qrels kept, every measure 0 on a query the run lacks, counts included;
:mod:`prefeval.ranking.conventions`), and decides nothing about the values.

``ir_measures QRELS RUN MEASURES`` prints, per measure in the order given, ``measure<TAB>value`` with
the value to four decimals (``{:.4f}``, counts too); with ``-q`` first the per-query lines
``qid<TAB>measure<TAB>value``, then the summary lines with the query id ``all``. A measure is written
under ir_measures' name of it (:mod:`prefeval.measures.foreign.ir_measures`: ``AP@10``,
``NumRet(rel=1)``), or prefeval's where ir_measures has none. The summary is each measure's own
(the mean; the counts ``NumQ``, ``NumRet``, ``NumRel``, ``NumRelRet`` summed), made by the engine.
Under ir_measures' conventions every value and mean is ir_measures' own float, to the last bit (its
providers' order of operations, its mean's order of additions: the ``sequential`` arithmetic and
the ``listed`` summary order of :mod:`prefeval.ranking.conventions`), so that a value on the edge of
the fourth decimal prints as ir_measures prints it.

A query id is written as its bytes, as ir_measures prints it (an id holds no whitespace, so it needs
no escape; a backslash stays one backslash).

One choice differs from ir_measures' own output, on purpose: the per-query lines come query by query
in the evaluation's order, each query's measures in the order given (ir_measures orders them by the
program that computes them). With several runs, each line starts with the run id (ir_measures takes
one run).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

import numpy as np

from prefeval.engine.evaluation import Evaluation, Summary
from prefeval.io.keys import SUMMARY_QID
from prefeval.measures.foreign import ir_measures
from prefeval.measures.request import NO_REQUEST, MeasureRequest, covering, request_names
from prefeval.report.formats import tsv_text, write_lines


def write_ir_measures(evaluation: Evaluation, stream: BinaryIO, per_query: bool = False, summary: bool = True,
                      request: MeasureRequest = NO_REQUEST) -> None:
    """The writer of ``--format ir_measures`` (:mod:`prefeval.report.formats`)."""
    write_lines(ir_measures_report(evaluation, request, per_query, summary), stream)


def ir_measures_report(evaluation: Evaluation, request: MeasureRequest, per_query: bool = False,
                       summary: bool = True) -> Iterator[str]:
    """ir_measures' output lines for ``evaluation`` (module docstring), run by run."""
    names = request_names(covering(request, evaluation.measures), ir_measures.TOOL)
    measures = [m.name for m in evaluation.metric_measures]
    values: dict[str, list[np.ndarray]] = {name: [] for name in measures}
    reported: list[np.ndarray] = []
    qids: list[str] = []
    means: dict[str, np.ndarray] = {}
    for result in evaluation.results():
        if isinstance(result, Summary):
            means = result.metrics
            continue
        for name in measures:
            values[name].append(result.metrics[name])
        reported.append(result.metric_reported if result.metric_reported is not None
                        else np.ones((evaluation.num_runs, len(result.qids)), dtype=bool))
        qids += result.qids
    per_query_values = {name: np.concatenate(parts, axis=1) for name, parts in values.items()}
    shown = np.concatenate(reported, axis=1) if reported else np.zeros((evaluation.num_runs, 0), dtype=bool)
    several = evaluation.num_runs > 1
    for run, run_id in enumerate(evaluation.run_ids):
        prefix = tsv_text(run_id) + "\t" if several else ""
        if per_query:
            for q, qid in enumerate(qids):
                if not shown[run, q]:  # a query the run lacks, under the skip convention
                    continue
                for name in measures:
                    yield f"{prefix}{qid}\t{names[name]}\t{per_query_values[name][run, q]:.4f}"
        if summary:
            for name in measures:
                line = f"{SUMMARY_QID}\t{names[name]}" if per_query else names[name]
                yield f"{prefix}{line}\t{means[name][run]:.4f}"
