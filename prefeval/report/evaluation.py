"""``eval --format``: the output formats of an evaluation, each declared once (:data:`EVALUATION_FORMATS`).

A format renders an :class:`~prefeval.engine.evaluation.Evaluation` that the command line (or the
Python API) made; it decides nothing about the values. What each declares is what it needs of the
evaluation and what the command line takes from it when the user does not say:

* ``jsonl`` (the default): the JSON lines of pref_eval.py (:mod:`prefeval.report.eval_lines`);
* ``tsv``: the same lines in trec_eval's text layout (:mod:`prefeval.report.tsv`), measures under
  trec_eval's names where it has them;
* ``table``, ``markdown``, ``latex``: a runs × measures table of the summary
  (:mod:`prefeval.report.runs_table`);
* ``trec_eval``: trec_eval's own output (:mod:`prefeval.report.trec_eval`), by default with
  trec_eval's conventions and trec_eval's default measures (``official``);
* ``ir_measures``: ir_measures' own output (:mod:`prefeval.report.ir_measures`), by default with
  ir_measures' conventions; measures must be named, as ir_measures needs them.

The two tools' layouts show runs one by one, one value per run and query: no pair lines, one sample,
the summary of each measure (no other statistics).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO, NamedTuple

from prefeval.engine.evaluation import Evaluation
from prefeval.errors import UsageError
from prefeval.measures.foreign import trec_eval
from prefeval.measures.request import MeasureRequest, read_request, request_names
from prefeval.ranking.conventions import IR_MEASURES, REFERENCE, TREC_EVAL
from prefeval.report.formats import check_format, write_lines


class EvaluationOptions(NamedTuple):
    """What ``eval`` asks of a format beside the evaluation: per-query lines, the summary, a baseline
    (the tables' significance markers), and the request of ``-m`` (the names each tool prints)."""

    per_query: bool = False
    summary: bool = True
    baseline: str | None = None
    request: MeasureRequest = MeasureRequest([])


NO_REQUEST = MeasureRequest([])
"""No ``-m``: the names are made from the evaluation's measures."""


def _jsonl(evaluation: Evaluation, stream: BinaryIO, options: EvaluationOptions) -> None:
    from prefeval.report.eval_lines import evaluation_lines

    for chunk in evaluation_lines(evaluation, options.per_query, options.summary):
        stream.write(chunk)


def _tsv(evaluation: Evaluation, stream: BinaryIO, options: EvaluationOptions) -> None:
    from prefeval.report.eval_lines import evaluation_records
    from prefeval.report.tsv import trec_eval_lines

    records = evaluation_records(evaluation, per_query=options.per_query, summary=options.summary)
    names = request_names(_covering(options.request, evaluation), trec_eval.TOOL)
    write_lines(trec_eval_lines(records, names, run_column=evaluation.num_runs > 1,
                                sample_column=evaluation.subsampling.samples > 1), stream)


def _table(style: str) -> Callable[[Evaluation, BinaryIO, EvaluationOptions], None]:
    def write(evaluation: Evaluation, stream: BinaryIO, options: EvaluationOptions) -> None:
        from prefeval.report.runs_table import evaluation_table  # with the significance tests of --baseline
        from prefeval.report.tables import render

        stream.write(render(evaluation_table(evaluation, options.baseline), style).encode())
    return write


def _trec_eval(evaluation: Evaluation, stream: BinaryIO, options: EvaluationOptions) -> None:
    from prefeval.report.trec_eval import trec_eval_report

    write_lines(trec_eval_report(evaluation, _covering(options.request, evaluation), options.per_query,
                                 options.summary), stream)


def _ir_measures(evaluation: Evaluation, stream: BinaryIO, options: EvaluationOptions) -> None:
    from prefeval.report.ir_measures import ir_measures_report

    write_lines(ir_measures_report(evaluation, _covering(options.request, evaluation), options.per_query,
                                   options.summary), stream)


def _covering(request: MeasureRequest, evaluation: Evaluation) -> MeasureRequest:
    """``request``, or the request of the evaluation's measures when it names none of them (an
    evaluation made from measure objects, by the Python API)."""
    if request.items:
        return request
    return read_request([measure.name for measure in evaluation.measures])


class EvaluationFormat(NamedTuple):
    """An output format of ``eval`` (module docstring): its writer, the conventions the command line
    gives the evaluation by default, the measures it evaluates without ``-m`` (None: prefeval's
    default list; empty: ``-m`` is required), and whether it shows pair lines, several samples, the
    other statistics of ``--summary``, and per-query lines. ``help``: what ``--format`` says of it."""

    name: str
    write: Callable[[Evaluation, BinaryIO, EvaluationOptions], None]
    help: str
    conventions: str = REFERENCE
    default_measures: tuple[str, ...] | None = None
    compares: bool = True
    samples: bool = True
    statistics: bool = True
    per_query: bool = True
    lines: bool = False
    """Whether it shows the lines of trec_eval's layout that are not measures (``runid``, ``relstring``)."""


EVALUATION_FORMATS: dict[str, EvaluationFormat] = {fmt.name: fmt for fmt in (
    EvaluationFormat("jsonl", _jsonl, "JSON lines"),
    EvaluationFormat("tsv", _tsv, "trec_eval's text layout of prefeval's lines"),
    EvaluationFormat("table", _table("table"), "a runs × measures table of the summary", per_query=False),
    EvaluationFormat("markdown", _table("markdown"), "the table in Markdown", per_query=False),
    EvaluationFormat("latex", _table("latex"), "the table in LaTeX", per_query=False),
    EvaluationFormat("trec_eval", _trec_eval, "trec_eval's output, byte for byte, with its conventions", TREC_EVAL,
                     ("official",), compares=False, samples=False, statistics=False, lines=True),
    EvaluationFormat("ir_measures", _ir_measures, "ir_measures' output, with its conventions", IR_MEASURES, (),
                     compares=False, samples=False, statistics=False),
)}
"""Every format of ``eval``, by name."""
TABLE_FORMATS = tuple(name for name, fmt in EVALUATION_FORMATS.items() if not fmt.per_query)


def formats_help() -> str:
    """What ``--format`` says of each format, from :data:`EVALUATION_FORMATS`."""
    return "; ".join(f"{name}: {fmt.help}" for name, fmt in EVALUATION_FORMATS.items()) + "."


def write_evaluation(evaluation: Evaluation, stream: BinaryIO, fmt: str = "jsonl", per_query: bool = False,
                     summary: bool = True, baseline: str | None = None,
                     request: MeasureRequest = NO_REQUEST) -> None:
    """Write ``evaluation`` to ``stream`` in format ``fmt`` (module docstring)."""
    check_evaluation_format(fmt, per_query, summary, baseline)
    EVALUATION_FORMATS[fmt].write(evaluation, stream, EvaluationOptions(per_query, summary, baseline, request))


def check_evaluation_format(fmt: str, per_query: bool = False, summary: bool = True,
                            baseline: str | None = None) -> EvaluationFormat:
    """The format ``fmt``, or a :class:`UsageError` when the options of :func:`write_evaluation`
    contradict each other; the command line calls it before reading any input, so that a
    contradiction costs no work."""
    check_format(fmt, tuple(EVALUATION_FORMATS))
    chosen = EVALUATION_FORMATS[fmt]
    if not chosen.per_query and (per_query or not summary):
        raise UsageError(f"--format {fmt} shows the means of the summary: drop -q and -n, or use jsonl or tsv")
    if chosen.per_query and baseline is not None:
        raise UsageError(f"--baseline marks significance in the table formats ({', '.join(TABLE_FORMATS)}), "
                         f"not in {fmt}")
    return chosen


def check_evaluated(fmt: EvaluationFormat, measure_set: str = "none", samples: int = 1,
                    query_fraction: float = 1.0, label_fraction: float = 1.0, statistics=()) -> None:
    """A :class:`UsageError` for what ``fmt`` cannot show: preferences, several samples (or a sample
    of the queries or labels), statistics other than the summary's."""
    layout = f"--format {fmt.name} shows the values of every run and query of one evaluation"
    if not fmt.compares and measure_set == "preferences":
        raise UsageError(f"{layout}: no preferences (-M preferences)")
    if not fmt.samples and (samples != 1 or query_fraction != 1.0 or label_fraction != 1.0):
        raise UsageError(f"{layout}: no --samples, --query_fraction or --label_fraction")
    if not fmt.statistics and tuple(statistics) not in ((), ("mean",)):
        raise UsageError(f"{layout}, and the summary of each measure: no --summary")


def check_measures_shown(fmt: EvaluationFormat, request: MeasureRequest, measures) -> None:
    """A :class:`UsageError` for measures ``fmt`` has no place for: preferences in a layout of runs
    one by one, and no measure in ``ir_measures`` (which needs them named). The lines of trec_eval's
    layout that are not measures (``runid``, ``relstring``) are shown by it alone."""
    if fmt.default_measures == () and not request.items:
        raise UsageError(f"--format {fmt.name} needs measures (-m), as {fmt.name} does")
    if not measures and not (request.lines and fmt.lines):
        raise UsageError(f"{', '.join(item.line for item in request.lines)}: lines of trec_eval's layout "
                         "(--format trec_eval), not measures")
    preferences = [m.name for m in measures if not m.is_metric]
    if not fmt.compares and preferences:
        raise UsageError(f"--format {fmt.name} shows metrics run by run; {', '.join(preferences)}: "
                         f"{'a preference' if len(preferences) == 1 else 'preferences'}")
