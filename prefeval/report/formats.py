"""Report formats (``--format``): one registry of every format, and of the writer of each kind of
record it can write.

A *record kind* is what one command writes: :data:`EVALUATION` (``eval``: an
:class:`~prefeval.evaluation.Evaluation`), :data:`ORDERINGS` (``aggregate``), :data:`SIGNIFICANCE`,
:data:`CHECK`, :data:`CATALOGUE` (``prefeval measures``), :data:`SAMPLED` and :data:`NULL` (records
of the analyses: :mod:`prefeval.io.records`). A *format* is a name and one writer per kind it can
write (:data:`FORMATS`):

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
* ``trec_eval`` and ``ir_measures``: eval's output as those tools print it, made of an evaluation
  with their conventions, which the command line makes itself (:mod:`.trec_eval`,
  :mod:`.ir_measures`); an evaluation of prefeval's own is refused
  (:func:`~.evaluation.refuse_evaluation`).

:func:`write_records` writes records of a kind in a format; :func:`formats_for` lists the formats of a
kind, which are its command's ``--format`` choices. A writer is named by ``module:function``
(:class:`Writer`) and imported when it first writes: the command line lists the formats as it
starts, and a format's module (the tables import the significance tests) costs nothing until that
format is written. Adding a format, or a kind to a format, is writing its writer beside the rendering
of that kind (``write_KIND_FORMAT(records, stream, ...)``) and naming it in :data:`FORMATS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import BinaryIO, NamedTuple

from prefeval.errors import UsageError

EVALUATION, ORDERINGS, SIGNIFICANCE, CHECK, CATALOGUE = "evaluation", "orderings", "significance", "check", "catalogue"
SAMPLED, NULL = "sampled", "null"
KIND_OPTIONS: dict[str, tuple[str, ...]] = {
    EVALUATION: ("per_query", "summary", "baseline"),
    ORDERINGS: (),
    SIGNIFICANCE: ("baseline",),
    CHECK: ("label", "styled"),
    CATALOGUE: (),
    SAMPLED: (),
    NULL: (),
}
"""Every record kind, and the options its writers are given (each writer reads those it names):
eval's per-query lines, summary lines and baseline (:func:`~.evaluation.write_evaluation`);
significance's baseline, which the tables mark; and how check's report styles the labels of its
errors and warnings (``label``, a function of ``error`` or ``warning``) and then its whole text for
the stream it goes to (``styled``): :func:`~.check.write_check_report`."""


class Writer(NamedTuple):
    """The writer of one kind of record in one format: the function ``target`` (``module:function``),
    called as ``function(records, stream, **options)`` with the options of :data:`KIND_OPTIONS` it
    names in ``options``, and ``fmt``, the name of the format, when it names that (one writer
    serves the three table formats)."""

    target: str
    options: tuple[str, ...] = ()

    def function(self):
        """The writing function, imported now."""
        module, name = self.target.split(":")
        return getattr(importlib.import_module(module), name)


JSON_LINES = Writer("prefeval.io.jsonl:write_jsonl")
TABLE_WRITERS = {
    EVALUATION: Writer("prefeval.report.evaluation:write_evaluation_table", ("fmt", "baseline")),
    ORDERINGS: Writer("prefeval.report.orderings:write_orderings_table", ("fmt",)),
    SIGNIFICANCE: Writer("prefeval.report.significance:write_significance_table", ("fmt", "baseline")),
}
"""What ``table``, ``markdown`` and ``latex`` write alike, each in its style."""
TOOL_WRITERS = {EVALUATION: Writer("prefeval.report.evaluation:refuse_evaluation", ("fmt",))}
"""What ``trec_eval`` and ``ir_measures`` write: eval's output as each tool prints it, made of the
tool's own evaluation by the command line; an evaluation of prefeval's own is refused."""
TREC_EVAL_FORMAT = "trec_eval"
IR_MEASURES_FORMAT = "ir_measures"

FORMATS: dict[str, dict[str, Writer]] = {
    "jsonl": {
        EVALUATION: Writer("prefeval.report.evaluation:write_evaluation_jsonl", ("per_query", "summary")),
        ORDERINGS: JSON_LINES,
        SIGNIFICANCE: JSON_LINES,
        CHECK: JSON_LINES,
        CATALOGUE: JSON_LINES,
        SAMPLED: JSON_LINES,
        NULL: JSON_LINES,
    },
    "tsv": {
        EVALUATION: Writer("prefeval.report.evaluation:write_evaluation_tsv", ("per_query", "summary")),
        ORDERINGS: Writer("prefeval.report.orderings:write_orderings_tsv"),
        SIGNIFICANCE: Writer("prefeval.report.significance:write_significance_tsv"),
    },
    "table": {
        **TABLE_WRITERS,
        CHECK: Writer("prefeval.report.check:write_check_report", ("label", "styled")),
        CATALOGUE: Writer("prefeval.report.catalogue:write_catalogue_table"),
    },
    "markdown": TABLE_WRITERS,
    "latex": TABLE_WRITERS,
    TREC_EVAL_FORMAT: TOOL_WRITERS,
    IR_MEASURES_FORMAT: TOOL_WRITERS,
}
"""Every format, in the order the commands list them, with its writer of each kind it writes."""
TABLE_FORMATS = ("table", "markdown", "latex")
"""The formats that render a :class:`~.tables.Table` (each a style of :func:`~.tables.render`)."""


def formats_for(kind: str) -> tuple[str, ...]:
    """The formats that write records of ``kind``, in the order of :data:`FORMATS`."""
    if kind not in KIND_OPTIONS:
        raise ValueError(f"unknown record kind {kind!r}; known: {', '.join(KIND_OPTIONS)}")
    return tuple(name for name, writers in FORMATS.items() if kind in writers)


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
    check_format(kind, fmt)
    unknown = sorted(set(options) - set(KIND_OPTIONS[kind]))
    if unknown:
        raise TypeError(f"{kind} records have no option {', '.join(unknown)}; theirs: {', '.join(KIND_OPTIONS[kind])}")
    writer = FORMATS[fmt][kind]
    given = {**options, "fmt": fmt}
    writer.function()(records, stream, **{name: given[name] for name in writer.options if name in given})


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
