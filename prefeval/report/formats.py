"""Report formats for ``eval``, ``aggregate`` and ``significance`` (``--format``).

* ``jsonl`` (the default): the JSON lines each command documents, so pipelines keep working.
* ``tsv``: tab-separated text. For ``eval``, trec_eval's own layout (:mod:`.trec_eval`); for
  ``aggregate`` and ``significance``, a header line and a row per ordered run or tested pair, numbers
  at full precision (:mod:`.orderings`, :mod:`.significance`).
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
BATCH_LINES = 8192


def check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def write_lines(lines: Iterable[str], stream: BinaryIO) -> int:
    """Write text lines (without their newlines) in batches; return how many."""
    batch: list[str] = []
    count = 0
    for line in lines:
        batch.append(line)
        if len(batch) >= BATCH_LINES:
            stream.write(("\n".join(batch) + "\n").encode())
            count += len(batch)
            batch.clear()
    if batch:
        stream.write(("\n".join(batch) + "\n").encode())
        count += len(batch)
    return count


def full_precision(value) -> str:
    """A tsv field at full precision: integers as such, floats by their shortest exact repr, NaN and
    None as ``nan``, booleans as ``true``/``false``, strings as they are."""
    if value is None:
        return "nan"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def tsv_row(fields: Iterable) -> str:
    return "\t".join(full_precision(field) for field in fields)
