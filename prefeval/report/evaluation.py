"""``eval --format``: the evaluation written as JSON lines, trec_eval's text layout of them (tsv), or a
runs × measures table (:mod:`prefeval.report.runs_table`, imported only for the tables)."""

from __future__ import annotations

from typing import BinaryIO

from prefeval.errors import UsageError
from prefeval.evaluation import Evaluation
from prefeval.report.eval_lines import evaluation_lines, evaluation_records
from prefeval.report.formats import EVAL_FORMATS, TABLE_FORMATS, TREC_EVAL_FORMAT, check_format, write_lines
from prefeval.report.tsv import trec_eval_lines


def write_evaluation(evaluation: Evaluation, stream: BinaryIO, fmt: str = "jsonl", per_query: bool = False,
                     summary: bool = True, baseline: str | None = None) -> None:
    """Write ``evaluation`` to ``stream`` in format ``fmt`` (see :mod:`prefeval.report.formats`)."""
    check_evaluation_format(fmt, per_query, summary, baseline)
    if fmt == TREC_EVAL_FORMAT:
        raise UsageError("trec_eval's output needs trec_eval's evaluation: prefeval.report.trec_eval."
                         "trec_eval_evaluation, then trec_eval_report")
    if fmt in TABLE_FORMATS:
        from prefeval.report.runs_table import evaluation_table  # with the significance tests of --baseline
        from prefeval.report.tables import render

        stream.write(render(evaluation_table(evaluation, baseline), fmt).encode())
        return
    if fmt == "jsonl":
        for chunk in evaluation_lines(evaluation, per_query, summary):
            stream.write(chunk)
        return
    records = evaluation_records(evaluation, per_query=per_query, summary=summary)
    several_runs = len(evaluation.run_ids) > 1
    write_lines(trec_eval_lines(records, run_column=several_runs, sample_column=evaluation.subsampling.samples > 1),
                stream)


def check_evaluation_format(fmt: str, per_query: bool = False, summary: bool = True,
                            baseline: str | None = None) -> None:
    """A :class:`UsageError` when the options of :func:`write_evaluation` contradict each other; the
    command line calls it before reading any input, so that a contradiction costs no work."""
    check_format(fmt, EVAL_FORMATS)
    if fmt in TABLE_FORMATS and (per_query or not summary):
        raise UsageError(f"--format {fmt} shows the means of the summary: drop -q and -n, or use jsonl or tsv")
    if fmt not in TABLE_FORMATS and baseline is not None:
        raise UsageError(f"--baseline marks significance in the table formats ({', '.join(TABLE_FORMATS)}), "
                         f"not in {fmt}")
