"""trec_eval's own output (``eval --format trec_eval``), line by line in its layout
(:func:`~prefeval.report.tsv.trec_eval_line`), from an evaluation: it renders what the evaluation
computed, under the conventions it was given (trec_eval's by default:
:mod:`prefeval.ranking.conventions`), and decides nothing about the values.

The lines, run by run in command-line order: with ``-q``, every query's lines (queries in the
evaluation's order, which is trec_eval's under its conventions; under the ``skip`` convention only the
run's own queries), each query's measures in trec_eval's order (:mod:`prefeval.measures.foreign.trec_eval`);
then, unless ``-n``, the summary lines (``runid``, the run's tag; every measure's summary, made by
the engine). Counts are printed as integers, every other value with ``%6.4f``, the name
left-aligned in 22 characters. A measure trec_eval has no name for is printed under prefeval's,
after trec_eval's.

Two lines are not measures: ``runid`` (the run's tag, on the summary) and ``relstring`` (per query, the
judgments of the first ten documents, or of the first ``relstring.N``).

With a z-score file (trec_eval's ``-Z``: :mod:`prefeval.io.zscores`), every measure's line shows its
z-score and the summary of the z-scores (:mod:`prefeval.analyses.zscores`), as trec_eval prints them:
``Z`` before the name (``printf("Z%-22s\t%s\t%6.4f\n", ...)``, so the name still takes 22 characters
after it), every value with ``%6.4f``, counts and ``num_q`` included; ``runid`` and ``relstring`` as
without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO, NamedTuple

import numpy as np

from prefeval.engine.evaluation import Block, Evaluation, Summary
from prefeval.errors import UsageError
from prefeval.io.keys import SUMMARY_QID
from prefeval.io.zscores import ZScores
from prefeval.measures.foreign import trec_eval
from prefeval.measures.request import NO_REQUEST, MeasureRequest, covering, request_names
from prefeval.ranking.ranktable import judgment_strings
from prefeval.report.formats import write_lines
from prefeval.report.tsv import trec_eval_line


class Line(NamedTuple):
    """One line kind of the layout: its printed ``name``; the prefeval measure it shows (its name),
    or the layout line it is (``runid``, ``relstring``, with its ``length``); where it is printed."""

    name: str
    measure: str | None
    per_query: bool
    in_summary: bool
    length: int = trec_eval.RELSTRING_LENGTH


def layout_lines(request: MeasureRequest, evaluation: Evaluation) -> list[Line]:
    """The lines of the layout for the measures of ``evaluation`` and the lines ``request`` asks for,
    in trec_eval's order (its rows'), then the measures trec_eval has no name for, as asked."""
    names = request_names(request, trec_eval.TOOL)
    lines: list[tuple[tuple[int, float], Line]] = []
    evaluated = {measure.name for measure in evaluation.metric_measures}
    for measure in (measure for measure in request.measures if measure.name in evaluated):
        name = names[measure.name]
        row = trec_eval.row_of_printed(name)
        place = (trec_eval.PLACE[row.name], measure.param(row.parameter) if row.defaults else 0) if row is not None \
            else (len(trec_eval.ROWS), 0)  # a list in increasing order, as trec_eval sorts it (P.10,5: P_5, P_10)
        lines.append((place, Line(name, measure.name, row is None or row.per_query, row is None or row.in_summary)))
    for item in request.lines:
        row = trec_eval.BY_NAME[item.line]
        length = item.parameters.get(row.parameter) if row.parameter is not None else None
        if length is not None and not (length.isdigit() and int(length) > 0):
            raise UsageError(f"{item.printed}: trec_eval's {row.name} takes a number of documents")
        lines.append(((trec_eval.PLACE[row.name], 0), Line(item.printed, None, row.per_query, row.in_summary,
                                                           int(length) if length else trec_eval.RELSTRING_LENGTH)))
    return [line for _, line in sorted(lines, key=lambda placed: placed[0])]


def write_trec_eval(evaluation: Evaluation, stream: BinaryIO, per_query: bool = False, summary: bool = True,
                    request: MeasureRequest = NO_REQUEST, zscores: ZScores | None = None) -> None:
    """The writer of ``--format trec_eval`` (:mod:`prefeval.report.formats`)."""
    write_lines(trec_eval_report(evaluation, request, per_query, summary, zscores), stream)


def trec_eval_report(evaluation: Evaluation, request: MeasureRequest, per_query: bool = False,
                     summary: bool = True, zscores: ZScores | None = None) -> Iterator[str]:
    """What ``trec_eval [-q] [-n] [-Z FILE] -m ...`` prints for ``evaluation`` (module docstring);
    ``request``: what ``-m`` asked for (by default, the evaluation's measures); ``zscores``: the
    z-score file of ``-Z``."""
    lines = layout_lines(covering(request, evaluation.measures), evaluation)
    blocks: list[Block] = []
    summaries: list[Summary] = []
    for result in evaluation.results():
        (summaries if isinstance(result, Summary) else blocks).append(result)
    if len(summaries) != 1:
        raise UsageError("the trec_eval layout shows one sample: no --samples")
    prefix, counts = "", {m.name for m in evaluation.metric_measures if m.counts}
    if zscores is not None:
        from prefeval.analyses.zscores import zscored

        names = {line.measure: line.name for line in lines if line.measure is not None}
        blocks, summaries[0] = zscored(evaluation, blocks, names, zscores, summaries[0].sample)
        prefix, counts = "Z", set()
    values: dict[str, list[np.ndarray]] = {m.name: [] for m in evaluation.metric_measures}
    reported: list[np.ndarray] = []
    qids: list[str] = []
    for block in blocks:
        for name, block_values in block.metrics.items():
            values[name].append(block_values)
        reported.append(block.metric_reported if block.metric_reported is not None
                        else np.ones((evaluation.num_runs, len(block.qids)), dtype=bool))
        qids += block.qids
    per_query_values = {name: np.concatenate(parts, axis=1) for name, parts in values.items()}
    shown = np.concatenate(reported, axis=1) if reported else np.zeros((evaluation.num_runs, 0), dtype=bool)
    strings = _judgment_strings(evaluation, lines, qids) if per_query else {}
    for run, run_id in enumerate(evaluation.run_ids):
        if per_query:
            for q, qid in enumerate(qids):
                if not shown[run, q]:
                    continue
                for line in lines:
                    if not line.per_query:
                        continue
                    if line.measure is None:
                        yield trec_eval_line(line.name, qid, f"'{strings[line.length][run][q]}'")
                    else:
                        yield trec_eval_line(prefix + f"{line.name:<22}", qid,
                                             _value(per_query_values[line.measure][run, q], line.measure in counts))
        if summary:
            for line in lines:
                if not line.in_summary:
                    continue
                if line.measure is None:
                    tag = evaluation.run_tags[run]
                    yield trec_eval_line(line.name, SUMMARY_QID, tag if tag is not None else run_id)
                else:
                    yield trec_eval_line(prefix + f"{line.name:<22}", SUMMARY_QID,
                                         _value(summaries[0].metrics[line.measure][run], line.measure in counts))


def _value(value: float, count: bool) -> str:
    return str(int(round(value))) if count else f"{value:6.4f}"


def _judgment_strings(evaluation: Evaluation, lines: list[Line], qids: list[str]) -> dict[int, list[list[str]]]:
    """``relstring``'s strings, by length, per run and query of ``qids`` (the queries as listed)."""
    lengths = {line.length for line in lines if line.measure is None and line.per_query}
    if not lengths:
        return {}
    table = evaluation.table
    if table is None:
        raise UsageError("relstring reads the ranks of every judged document: read the collection in memory")
    place = {qid: q for q, qid in enumerate(table.qids)}
    queries = [place[qid] for qid in qids]
    return {length: [[strings[q] for q in queries] for strings in judgment_strings(table, length)]
            for length in lengths}
