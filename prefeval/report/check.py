"""``check --format table``: the report of :func:`prefeval.analyses.check.check` as text for people.

A line on the qrels, a table of the runs (a row per run, its figures in columns; none when no run
was given), then every error and warning, one line each, after a label (``error:``, ``warning:``)
that the command line colours on a terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

from prefeval.io.keys import RUN
from prefeval.io.records import (
    ACROSS_RANK_10,
    AT_DEPTH,
    COUNT,
    DEPTH,
    DUPLICATE_DOCUMENTS,
    ERRORS,
    FILE,
    GRADES,
    GROUPS,
    HIGHEST,
    JUDGMENTS,
    LOWEST,
    MALFORMED_LINES,
    MEDIAN,
    QUERIES,
    QUERIES_MISSING_FROM_RUN,
    QUERIES_NOT_IN_QRELS,
    RELEVANT,
    STATUS,
    TIE_GROUPS,
    UNJUDGED_AT_10,
    WARNINGS,
)
from prefeval.report.tables import Table, render

MESSAGES = (("error", ERRORS), ("warning", WARNINGS))
"""The label of each list of messages of a record, in the order they are shown."""


def plain_label(kind: str) -> str:
    """``error:`` or ``warning:``, unstyled."""
    return f"{kind}:"


def write_check_report(records: list[dict], stream: BinaryIO, label: Callable[[str], str] = plain_label,
                       styled: Callable[[str], str] | None = None) -> None:
    """Write :func:`check_report` to ``stream``, its labels written by ``label`` and its text then
    passed through ``styled`` (the command line keeps the colours of the labels on a terminal only)."""
    text = check_report(records, label)
    stream.write((styled(text) if styled is not None else text).encode())


def check_report(records: list[dict], label: Callable[[str], str] = plain_label) -> str:
    """The report as text: a line on the qrels, a table of the runs (none when no run was given), then
    the errors and warnings, one line each, labelled by ``label``."""
    qrels, runs = records[0], records[1:]
    lines = [_qrels_line(qrels)]
    if runs:
        rows = [_run_row(record) for record in runs]
        table = Table(header=list(rows[0]), rows=[list(row.values()) for row in rows], labels=2)
        lines += ["", render(table, "table").rstrip("\n")]
    messages = [
        f"{record[FILE]}: {label(kind)} {message}"
        for record in records
        for kind, key in MESSAGES
        for message in record[key]
    ]
    if messages:
        lines += ["", *messages]
    return "\n".join(lines) + "\n"


def _qrels_line(record: dict) -> str:
    if QUERIES not in record:
        return f"{record[FILE]}: {record[STATUS]}"
    grades = ", ".join(f"{grade}: {count}" for grade, count in record[GRADES].items())
    return (f"{record[FILE]}: {record[QUERIES]} queries, {record[JUDGMENTS]} judgments "
            f"({record[RELEVANT]} relevant; grades {grades or '-'}), "
            f"{record[MALFORMED_LINES][COUNT]} malformed lines: {record[STATUS]}")


def _run_row(record: dict) -> dict:
    """A run's row of the table, by column name, the two label columns (run and status) first; ``-``
    where the record lacks a figure (an unreadable file, or no qrels to compare with)."""
    def count(key: str):
        return record[key][COUNT] if record.get(key) is not None else "-"

    ties, depth = record.get(TIE_GROUPS), record.get(DEPTH)
    unjudged = record.get(UNJUDGED_AT_10)
    return {
        "run": record[RUN],
        "status": record[STATUS],
        "queries": record.get(QUERIES, "-"),
        "not in qrels": count(QUERIES_NOT_IN_QRELS),
        "missing": count(QUERIES_MISSING_FROM_RUN),
        "duplicates": count(DUPLICATE_DOCUMENTS),
        "tie groups": ties[GROUPS] if ties else "-",
        "ties across 10": ties[ACROSS_RANK_10] if ties else "-",
        "ties at depth": ties[AT_DEPTH] if ties else "-",
        "depth min/median/max": f"{depth[LOWEST]}/{depth[MEDIAN]:g}/{depth[HIGHEST]}" if depth else "-",
        "unjudged@10": f"{unjudged:.3f}" if unjudged is not None else "-",
        "malformed": count(MALFORMED_LINES),
    }
