"""``eval --format``: an evaluation written in a format of the registry (:mod:`prefeval.report.formats`).

A format renders an :class:`~prefeval.engine.evaluation.Evaluation` that the command line (or the
Python API) made; it decides nothing about the values. What each needs of the evaluation is in its
entry of the registry (:class:`~prefeval.report.formats.EvaluationNeeds`), and
:func:`check_evaluation_format`, :func:`check_evaluated` and :func:`check_measures_shown` refuse what a
format cannot show before anything is read:

* ``jsonl`` (the default): the JSON lines of pref_eval.py (:mod:`prefeval.report.eval_lines`);
* ``tsv``: the same lines in trec_eval's text layout (:mod:`prefeval.report.tsv`), measures under
  trec_eval's names where it has them;
* ``table``, ``markdown``, ``latex``: a runs × measures table of the summary
  (:mod:`prefeval.report.runs_table`);
* ``trec_eval``: trec_eval's own output (:mod:`prefeval.report.trec_eval`), by default with
  trec_eval's conventions and trec_eval's default measures (``official``), or its z-scores (``-Z``);
* ``ir_measures``: ir_measures' own output (:mod:`prefeval.report.ir_measures`), by default with
  ir_measures' conventions; measures must be named, as ir_measures needs them.

The two tools' layouts show runs one by one, one value per run and query: no pair lines, one sample,
the summary of each measure (no other statistics).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, BinaryIO

from prefeval.engine.evaluation import Evaluation
from prefeval.errors import UsageError
from prefeval.measures.foreign import trec_eval
from prefeval.measures.request import NO_REQUEST, MeasureRequest, covering, request_names
from prefeval.report.formats import EVALUATION, TABLE_FORMATS, EvaluationNeeds, write_lines, write_records, writer

if TYPE_CHECKING:
    from prefeval.io.zscores import ZScores


def write_evaluation(evaluation: Evaluation, stream: BinaryIO, fmt: str = "jsonl", per_query: bool = False,
                     summary: bool = True, baseline: str | None = None, request: MeasureRequest = NO_REQUEST,
                     zscores: ZScores | None = None) -> None:
    """Write ``evaluation`` to ``stream`` in format ``fmt`` (module docstring); ``request``: what ``-m``
    asked for (the names each tool prints), by default the evaluation's measures; ``zscores``: a
    z-score file (:func:`~prefeval.io.zscores.read_zscores`), whose z-scores the trec_eval layout
    prints in place of the values (``-Z``)."""
    check_evaluation_format(fmt, per_query, summary, baseline, zscores is not None)
    write_records(EVALUATION, evaluation, stream, fmt, per_query=per_query, summary=summary, baseline=baseline,
                  request=request, zscores=zscores)


def check_evaluation_format(fmt: str, per_query: bool = False, summary: bool = True,
                            baseline: str | None = None, zscores: bool = False) -> EvaluationNeeds:
    """What format ``fmt`` needs of an evaluation, or a :class:`UsageError` when the options of
    :func:`write_evaluation` contradict each other; the command line calls it before reading any
    input, so that a contradiction costs no work."""
    needs = writer(EVALUATION, fmt).needs
    if zscores and not needs.zscores:
        raise UsageError(f"-Z: z-scores are printed in trec_eval's layout (--format trec_eval), not in {fmt}")
    if not needs.per_query and (per_query or not summary):
        raise UsageError(f"--format {fmt} shows the means of the summary: drop -q and -n, or use jsonl or tsv")
    if fmt not in TABLE_FORMATS and baseline is not None:
        raise UsageError(f"--baseline marks significance in the table formats ({', '.join(TABLE_FORMATS)}), "
                         f"not in {fmt}")
    return needs


def check_evaluated(fmt: str, measure_set: str = "none", samples: int = 1, query_fraction: float = 1.0,
                    label_fraction: float = 1.0, statistics: Sequence[str] = ()) -> None:
    """A :class:`UsageError` for what format ``fmt`` cannot show: preferences, several samples (or a
    sample of the queries or labels), statistics other than each measure's summary."""
    needs = writer(EVALUATION, fmt).needs
    layout = f"--format {fmt} shows the values of every run and query of one evaluation"
    if not needs.compares and measure_set == "preferences":
        raise UsageError(f"{layout}: no preferences (-M preferences)")
    if not needs.samples and (samples != 1 or query_fraction != 1.0 or label_fraction != 1.0):
        raise UsageError(f"{layout}: no --samples, --query_fraction or --label_fraction")
    if not needs.statistics and tuple(statistics) not in ((), ("mean",)):
        raise UsageError(f"{layout}, and the summary of each measure: no --summary")


def check_measures_shown(fmt: str, request: MeasureRequest, measures) -> None:
    """A :class:`UsageError` for measures format ``fmt`` has no place for: preferences in a layout of
    runs one by one; none at all in ``ir_measures``, which needs them named; only the lines of
    trec_eval's layout that are not measures (``runid``, ``relstring``) outside that layout."""
    needs = writer(EVALUATION, fmt).needs
    if needs.default_measures == () and not request.items:
        raise UsageError(f"--format {fmt} needs measures (-m), as {fmt} does")
    if not measures and not (request.lines and needs.lines):
        raise UsageError(f"{', '.join(item.line for item in request.lines)}: lines of trec_eval's layout "
                         "(--format trec_eval), not measures")
    preferences = [m.name for m in measures if not m.is_metric]
    if not needs.compares and preferences:
        raise UsageError(f"--format {fmt} shows metrics run by run; {', '.join(preferences)}: "
                         f"{'a preference' if len(preferences) == 1 else 'preferences'}")


def write_evaluation_jsonl(evaluation: Evaluation, stream: BinaryIO, per_query: bool = False,
                           summary: bool = True) -> None:
    """eval's JSON lines (:func:`~prefeval.report.eval_lines.evaluation_lines`), written one after the
    other as they are rendered: into a file that the executor's workers may write too, they write
    their chunks' lines there themselves (:attr:`~prefeval.engine.evaluation.Evaluation.in_place`)."""
    from prefeval.io.output import in_place
    from prefeval.report.eval_lines import evaluation_lines

    evaluation.in_place = in_place(stream) if evaluation.parts is None else None
    for chunk in evaluation_lines(evaluation, per_query, summary):
        stream.write(chunk)


def write_evaluation_tsv(evaluation: Evaluation, stream: BinaryIO, per_query: bool = False, summary: bool = True,
                         request: MeasureRequest = NO_REQUEST) -> None:
    """trec_eval's text layout of the JSON lines (:mod:`prefeval.report.tsv`), measures under
    trec_eval's names, with a run column when there are several runs and a sample column when there
    are several samples."""
    from prefeval.report.eval_lines import evaluation_records
    from prefeval.report.tsv import trec_eval_lines

    records = evaluation_records(evaluation, per_query=per_query, summary=summary)
    names = request_names(covering(request, evaluation.measures), trec_eval.TOOL)
    write_lines(trec_eval_lines(records, names, run_column=evaluation.num_runs > 1,
                                sample_column=evaluation.subsampling.samples > 1), stream)


def write_evaluation_table(evaluation: Evaluation, stream: BinaryIO, fmt: str, baseline: str | None = None) -> None:
    """The runs × measures table of the summary, in the style ``fmt`` (``table``, ``markdown``,
    ``latex``), marked against ``baseline`` when given."""
    from prefeval.report.runs_table import evaluation_table  # with the significance tests of --baseline
    from prefeval.report.tables import render

    stream.write(render(evaluation_table(evaluation, baseline), fmt).encode())
