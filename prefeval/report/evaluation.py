"""``eval --format``: the evaluation written as JSON lines, trec_eval's text layout of them (tsv), or a
runs × measures table (:mod:`prefeval.report.runs_table`, imported only for the tables).

:func:`write_evaluation` checks the options and writes through the registry of formats
(:mod:`prefeval.report.formats`), which names the writers here.
"""

from __future__ import annotations

from typing import BinaryIO

from prefeval.errors import UsageError
from prefeval.evaluation import Evaluation
from prefeval.report.eval_lines import evaluation_lines, evaluation_records
from prefeval.report.formats import (
    EVALUATION,
    IR_MEASURES_FORMAT,
    TABLE_FORMATS,
    TREC_EVAL_FORMAT,
    check_format,
    write_lines,
    write_records,
)
from prefeval.report.tsv import trec_eval_lines

OWN_EVALUATIONS = {
    TREC_EVAL_FORMAT: "trec_eval's output needs trec_eval's evaluation: prefeval.report.trec_eval."
                      "trec_eval_evaluation, then trec_eval_report",
    IR_MEASURES_FORMAT: "ir_measures' output needs ir_measures' evaluation: prefeval.report.ir_measures."
                        "ir_measures_evaluation, then ir_measures_report",
}
"""Why an evaluation of prefeval's own cannot be written in each tool's format, and what can be."""


def write_evaluation(evaluation: Evaluation, stream: BinaryIO, fmt: str = "jsonl", per_query: bool = False,
                     summary: bool = True, baseline: str | None = None) -> None:
    """Write ``evaluation`` to ``stream`` in format ``fmt`` (see :mod:`prefeval.report.formats`)."""
    check_evaluation_format(fmt, per_query, summary, baseline)
    write_records(EVALUATION, evaluation, stream, fmt, per_query=per_query, summary=summary, baseline=baseline)


def check_evaluation_format(fmt: str, per_query: bool = False, summary: bool = True,
                            baseline: str | None = None) -> None:
    """A :class:`UsageError` when the options of :func:`write_evaluation` contradict each other; the
    command line calls it before reading any input, so that a contradiction costs no work."""
    check_format(EVALUATION, fmt)
    if fmt in TABLE_FORMATS and (per_query or not summary):
        raise UsageError(f"--format {fmt} shows the means of the summary: drop -q and -n, or use jsonl or tsv")
    if fmt not in TABLE_FORMATS and baseline is not None:
        raise UsageError(f"--baseline marks significance in the table formats ({', '.join(TABLE_FORMATS)}), "
                         f"not in {fmt}")


def write_evaluation_jsonl(evaluation: Evaluation, stream: BinaryIO, per_query: bool = False,
                           summary: bool = True) -> None:
    """eval's JSON lines (:func:`~prefeval.report.eval_lines.evaluation_lines`)."""
    for chunk in evaluation_lines(evaluation, per_query, summary):
        stream.write(chunk)


def write_evaluation_tsv(evaluation: Evaluation, stream: BinaryIO, per_query: bool = False,
                         summary: bool = True) -> None:
    """trec_eval's text layout of the JSON lines (:mod:`prefeval.report.tsv`), with a run column when
    there are several runs and a sample column when there are several samples."""
    records = evaluation_records(evaluation, per_query=per_query, summary=summary)
    several_runs = len(evaluation.run_ids) > 1
    write_lines(trec_eval_lines(records, run_column=several_runs, sample_column=evaluation.subsampling.samples > 1),
                stream)


def write_evaluation_table(evaluation: Evaluation, stream: BinaryIO, fmt: str, baseline: str | None = None) -> None:
    """The runs × measures table of the summary, in the style ``fmt`` (``table``, ``markdown``,
    ``latex``), marked against ``baseline`` when given."""
    from prefeval.report.runs_table import evaluation_table  # with the significance tests of --baseline
    from prefeval.report.tables import render

    stream.write(render(evaluation_table(evaluation, baseline), fmt).encode())


def refuse_evaluation(evaluation: Evaluation, stream: BinaryIO, fmt: str) -> None:
    """trec_eval's and ir_measures' outputs are made of an evaluation with each tool's conventions and
    items, which the command line makes and writes itself: an evaluation of prefeval's own is refused,
    saying which to make (:data:`OWN_EVALUATIONS`)."""
    raise UsageError(OWN_EVALUATIONS[fmt])

