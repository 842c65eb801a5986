"""Report formats (``--format``): one registry of every format, and of the writer of each kind of
record it can write.

A *record kind* is what one command writes: :data:`EVALUATION` (``eval``: an
:class:`~prefeval.engine.evaluation.Evaluation`), :data:`ORDERINGS` (``aggregate``),
:data:`SIGNIFICANCE`, :data:`CHECK`, :data:`CATALOGUE` (``prefeval measures``), :data:`SAMPLED` and
:data:`NULL` (records of the analyses: :mod:`prefeval.io.records`), :data:`NDEVAL` (``prefeval
ndeval``: :class:`~prefeval.analyses.ndeval.NdevalReport`). A *format* is a name and one
writer per kind it can write (:data:`FORMATS`):

* ``jsonl`` (the default): the JSON lines each command documents, so pipelines keep working.
* ``tsv``: tab-separated text. For ``eval``, trec_eval's own layout (:mod:`.tsv`); for ``aggregate``
  and ``significance``, a header line and a row per ordered run or tested pair, numbers at full
  precision (:mod:`.orderings`, :mod:`.significance`). Text fields (run ids, query ids) are escaped as
  linear TSV escapes them (:func:`tsv_text`), so that a tab or a line break in a run id cannot break
  a row.
* ``table``, ``markdown``, ``latex`` (:data:`TABLE_FORMATS`): a table for people and papers
  (:mod:`.tables`), built from the summary only: eval's runs × measures means, aggregate's positions
  of the runs in every ordering, significance's pairs × measures means with their significance
  markers. ``table`` also writes check's report (:mod:`.check`) and the measure catalogue
  (:mod:`.catalogue`).
* ``trec_eval`` and ``ir_measures``: eval's output as those tools print it (:mod:`.trec_eval`,
  :mod:`.ir_measures`), by default of an evaluation with their conventions.
* ``ndeval``: ndeval's CSV (:mod:`.ndeval`), of ``prefeval ndeval``'s report.

:func:`write_records` writes records of a kind in a format; :func:`formats_for` lists the formats of a
kind, which are its command's ``--format`` choices, and :func:`formats_help` what its help says of
each. A writer is named by ``module:function`` (:class:`Writer`) and imported when it first writes:
the command line lists the formats as it starts, and a format's module (the tables import the
significance tests) costs nothing until that format is written. An evaluation's writer also says
what it needs of the evaluation (:class:`EvaluationNeeds`), which the command line reads before it
evaluates. Adding a format, or a kind to a format, is writing its writer beside the rendering of that
kind (``write_KIND_FORMAT(records, stream, ...)``) and naming it in :data:`FORMATS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import BinaryIO, NamedTuple

from prefeval.errors import UsageError
from prefeval.ranking.conventions import IR_MEASURES, REFERENCE, TREC_EVAL

EVALUATION, ORDERINGS, SIGNIFICANCE, CHECK, CATALOGUE = "evaluation", "orderings", "significance", "check", "catalogue"
SAMPLED, NULL = "sampled", "null"
NDEVAL = "ndeval"
KIND_OPTIONS: dict[str, tuple[str, ...]] = {
    EVALUATION: ("per_query", "summary", "baseline", "request", "zscores"),
    ORDERINGS: (),
    SIGNIFICANCE: ("baseline",),
    CHECK: ("label", "styled"),
    CATALOGUE: (),
    SAMPLED: (),
    NULL: (),
    NDEVAL: (),
}
"""Every record kind, and the options its writers are given (each writer reads those it names):
eval's per-query lines, summary lines, baseline, the request of ``-m`` (the names each tool
prints: :class:`~prefeval.measures.request.MeasureRequest`) and the z-score file of ``-Z``
(:class:`~prefeval.io.zscores.ZScores`); significance's baseline, which the
tables mark; and how check's report styles the labels of its errors and warnings (``label``, a
function of ``error`` or ``warning``) and then its whole text for the stream it goes to
(``styled``): :func:`~.check.write_check_report`."""


class EvaluationNeeds(NamedTuple):
    """What a format of ``eval`` needs of the evaluation, which the command line makes before
    writing: the conventions it takes by default (its tool's); the measures it evaluates without
    ``-m`` (None: prefeval's default list; empty: ``-m`` is required, as ir_measures requires it);
    whether it shows pair lines (``compares``), several samples, the statistics of ``--summary``
    beyond the summary, per-query lines, the lines of trec_eval's layout that are not measures
    (``runid``, ``relstring``), and z-scores (``-Z``)."""

    conventions: str = REFERENCE
    default_measures: tuple[str, ...] | None = None
    compares: bool = True
    samples: bool = True
    statistics: bool = True
    per_query: bool = True
    lines: bool = False
    zscores: bool = False


class Writer(NamedTuple):
    """The writer of one kind of record in one format: the function ``target`` (``module:function``),
    called as ``function(records, stream, **options)`` with the options of :data:`KIND_OPTIONS` it
    names in ``options``, and ``fmt``, the name of the format, when it names that (one writer
    serves the three table formats); ``help``, what the command's ``--format`` says of it; and, for
    an evaluation, what it ``needs`` of it."""

    target: str
    options: tuple[str, ...] = ()
    help: str = ""
    needs: EvaluationNeeds = EvaluationNeeds()

    def function(self):
        """The writing function, imported now."""
        module, name = self.target.split(":")
        return getattr(importlib.import_module(module), name)


JSON_LINES = Writer("prefeval.io.jsonl:write_jsonl", help="JSON lines")
TOOL_LAYOUT = dict(compares=False, samples=False, statistics=False)
"""What trec_eval's and ir_measures' layouts show: the metrics of each run, one sample, each measure's summary."""


def _table_writers(style: str) -> dict[str, Writer]:
    """What ``table``, ``markdown`` and ``latex`` write alike, each in its style."""
    table = "a table" if style == "table" else f"a {style.capitalize() if style == 'markdown' else 'LaTeX'} table"
    return {
        EVALUATION: Writer("prefeval.report.evaluation:write_evaluation_table", ("fmt", "baseline"),
                           f"{table} of the runs × measures of the summary", EvaluationNeeds(per_query=False)),
        ORDERINGS: Writer("prefeval.report.orderings:write_orderings_table", ("fmt",),
                          f"{table} of the rank of each run in each summary ordering (with --bootstrap, the rank "
                          "intervals and tiers)"),
        SIGNIFICANCE: Writer("prefeval.report.significance:write_significance_table", ("fmt", "baseline"),
                             f"{table} of pairs × measures means with markers"),
    }


TREC_EVAL_FORMAT = "trec_eval"
IR_MEASURES_FORMAT = "ir_measures"
NDEVAL_FORMAT = "ndeval"
FORMATS: dict[str, dict[str, Writer]] = {
    "jsonl": {
        EVALUATION: Writer("prefeval.report.evaluation:write_evaluation_jsonl", ("per_query", "summary"),
                           "JSON lines"),
        ORDERINGS: JSON_LINES,
        SIGNIFICANCE: JSON_LINES,
        CHECK: JSON_LINES._replace(help="one JSON object per file"),
        CATALOGUE: JSON_LINES,
        SAMPLED: JSON_LINES,
        NULL: JSON_LINES,
        NDEVAL: Writer("prefeval.report.ndeval:write_ndeval_jsonl", help="one JSON object per topic and the means"),
    },
    "tsv": {
        EVALUATION: Writer("prefeval.report.evaluation:write_evaluation_tsv", ("per_query", "summary", "request"),
                           "trec_eval's text layout of prefeval's lines"),
        ORDERINGS: Writer("prefeval.report.orderings:write_orderings_tsv",
                          help="a row per run of every ordering (with --bootstrap, of every rank interval)"),
        SIGNIFICANCE: Writer("prefeval.report.significance:write_significance_tsv", help="a row per pair and measure"),
    },
    "table": {
        **_table_writers("table"),
        CHECK: Writer("prefeval.report.check:write_check_report", ("label", "styled"),
                      "a table of the runs, then every error and warning"),
        CATALOGUE: Writer("prefeval.report.catalogue:write_catalogue_table", help="a table"),
    },
    "markdown": _table_writers("markdown"),
    "latex": _table_writers("latex"),
    TREC_EVAL_FORMAT: {
        EVALUATION: Writer("prefeval.report.trec_eval:write_trec_eval",
                           ("per_query", "summary", "request", "zscores"), "trec_eval's output, byte for byte",
                           EvaluationNeeds(TREC_EVAL, ("official",), lines=True, zscores=True, **TOOL_LAYOUT)),
    },
    IR_MEASURES_FORMAT: {
        EVALUATION: Writer("prefeval.report.ir_measures:write_ir_measures", ("per_query", "summary", "request"),
                           "ir_measures' output", EvaluationNeeds(IR_MEASURES, (), **TOOL_LAYOUT)),
    },
    NDEVAL_FORMAT: {
        NDEVAL: Writer("prefeval.report.ndeval:write_ndeval_report", help="ndeval's CSV, byte for byte"),
    },
}
"""Every format, in the order the commands list them, with its writer of each kind it writes."""
TABLE_FORMATS = ("table", "markdown", "latex")
"""The formats that render a :class:`~.tables.Table` (each a style of :func:`~.tables.render`)."""


def formats_for(kind: str) -> tuple[str, ...]:
    """The formats that write records of ``kind``, in the order of :data:`FORMATS`."""
    if kind not in KIND_OPTIONS:
        raise ValueError(f"unknown record kind {kind!r}; known: {', '.join(KIND_OPTIONS)}")
    return tuple(name for name, writers in FORMATS.items() if kind in writers)


def formats_help(kind: str) -> str:
    """What a command's ``--format`` says of each format of ``kind``."""
    return "; ".join(f"{name}: {FORMATS[name][kind].help}" for name in formats_for(kind)) + "."


def writer(kind: str, fmt: str) -> Writer:
    """The writer of ``kind`` in format ``fmt``, or a :class:`UsageError` when ``fmt`` writes no such records."""
    check_format(kind, fmt)
    return FORMATS[fmt][kind]


EVAL_FORMATS = formats_for(EVALUATION)
"""``eval --format``: the formats of an evaluation, trec_eval's and ir_measures' included."""


def check_format(kind: str, fmt: str) -> None:
    """A :class:`UsageError` unless ``fmt`` is a format of ``kind``."""
    formats = formats_for(kind)
    if fmt not in formats:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(formats)}")


def write_records(kind: str, records, stream: BinaryIO, fmt: str = "jsonl", **options) -> None:
    """Write ``records`` of ``kind`` (an evaluation, for :data:`EVALUATION`) to ``stream`` in format
    ``fmt``, with the ``options`` of that kind (:data:`KIND_OPTIONS`; each writer reads those it
    names, the others do not shape that format)."""
    chosen = writer(kind, fmt)
    unknown = sorted(set(options) - set(KIND_OPTIONS[kind]))
    if unknown:
        raise TypeError(f"{kind} records have no option {', '.join(unknown)}; theirs: {', '.join(KIND_OPTIONS[kind])}")
    given = {**options, "fmt": fmt}
    chosen.function()(records, stream, **{name: given[name] for name in chosen.options if name in given})


BATCH_LINES = 8192


def write_lines(lines: Iterable[str], stream: BinaryIO) -> int:
    """Write text lines (without their newlines) in batches; return how many. Text decoded with
    ``surrogateescape`` (ids that are not UTF-8, in a file or a file name) is written as its bytes."""
    batch: list[str] = []
    count = 0
    for line in lines:
        batch.append(line)
        if len(batch) >= BATCH_LINES:
            stream.write(("\n".join(batch) + "\n").encode("utf-8", "surrogateescape"))
            count += len(batch)
            batch.clear()
    if batch:
        stream.write(("\n".join(batch) + "\n").encode("utf-8", "surrogateescape"))
        count += len(batch)
    return count


_TSV_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def tsv_text(text: str, also: str = "") -> str:
    """A text field of a tsv row, escaped as linear TSV does: a backslash, tab, line feed and carriage
    return are written ``\\\\``, ``\\t``, ``\\n``, ``\\r``; each character of ``also`` (a separator of
    the caller's, such as the ``/`` between two run ids) gets a backslash before it."""
    table = {**_TSV_ESCAPES, **{char: "\\" + char for char in also}}
    return text.translate(str.maketrans(table)) if any(char in text for char in table) else text


def full_precision(value) -> str:
    """A tsv field at full precision: integers as such, floats by their shortest exact repr, NaN and
    None as ``nan``, booleans as ``true``/``false``, strings escaped by :func:`tsv_text`."""
    if value is None:
        return "nan"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return tsv_text(str(value))


def tsv_row(fields: Iterable) -> str:
    return "\t".join(full_precision(field) for field in fields)
