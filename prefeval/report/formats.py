"""Report formats for ``eval``, ``aggregate`` and ``significance`` (``--format``).

* ``jsonl`` (the default): the JSON lines each command documents, so pipelines keep working.
* ``tsv``: tab-separated text. For ``eval``, trec_eval's own layout (:mod:`.trec_eval`); for
  ``aggregate`` and ``significance``, a header line and a row per ordered run or tested pair, numbers
  at full precision (:mod:`.orderings`, :mod:`.significance`). Text fields (run ids, query ids) are
  escaped as linear TSV escapes them (:func:`tsv_text`), so that a tab or a line break in a run id
  cannot break a row.
* ``table``, ``markdown``, ``latex``: a table for people and papers (:mod:`.tables`), built from the
  summary only: eval's runs × measures means, aggregate's positions of the runs in every ordering,
  significance's pairs × measures means with their significance markers.

Each command has one writer here: :func:`~.evaluation.write_evaluation`,
:func:`~.orderings.write_orderings`, :func:`~.significance.write_significance`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import BinaryIO

from prefeval.errors import UsageError

FORMATS = ("jsonl", "tsv", "table", "markdown", "latex")
TABLE_FORMATS = ("table", "markdown", "latex")
TREC_EVAL_FORMAT = "trec_eval"
IR_MEASURES_FORMAT = "ir_measures"
EVAL_FORMATS = FORMATS + (TREC_EVAL_FORMAT, IR_MEASURES_FORMAT)
"""``eval`` also writes trec_eval's own output (:func:`~.trec_eval.trec_eval_report`) and ir_measures'
(:func:`~.ir_measures.ir_measures_report`)."""
BATCH_LINES = 8192


def check_format(fmt: str, formats: tuple[str, ...] = FORMATS) -> None:
    if fmt not in formats:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(formats)}")


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
