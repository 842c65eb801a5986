"""``prefeval check``: a validation report on qrels and runs, without evaluating."""

from __future__ import annotations

import click

from prefeval.analyses.check import check, has_errors
from prefeval.cli.common import (
    CONTEXT,
    INPUT_FILE,
    label,
    output_option,
    reported_errors,
    styled_for,
)
from prefeval.io.jsonl import output_stream, write_jsonl
from prefeval.report.tables import Table, render

FORMATS = ("jsonl", "table")


@click.command("check", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval check -R qrels.txt runs/*.gz --format table
  prefeval check -R qrels.txt run.gz | jq 'select(.status != "ok") | .warnings'
  zcat run.gz | prefeval check -R qrels.txt -
""")
@click.option("-R", "--qrels", required=True, type=INPUT_FILE, metavar="QRELS",
              help="Relevance judgments (TREC qrels; gzip or - for stdin).")
@click.option("--format", "report_format", type=click.Choice(FORMATS), default="jsonl", show_default=True,
              help="jsonl: one JSON object per file; table: a table of the runs, then every error and warning.")
@output_option
@click.argument("runs", nargs=-1, type=INPUT_FILE, metavar="[RUN]...")
def check_command(qrels, report_format, output, runs):
    """Report what is wrong, or worth knowing, about QRELS and RUNs.

    Before trusting a number: malformed lines, queries missing on either side, duplicate documents,
    score ties, depths, unjudged documents in the top 10. Exit code 1 when there are errors, 0 when
    only warnings."""
    with reported_errors():
        records = check(qrels, runs)
        with output_stream(output) as stream:
            if report_format == "jsonl":
                write_jsonl(records, stream)
            else:
                stream.write(styled_for(stream, render_table(records)).encode())
    if has_errors(records):
        raise SystemExit(1)


def render_table(records: list[dict]) -> str:
    """The report as text: a line on the qrels, a table of the runs (none when no run was given), then
    the errors and warnings, one line each."""
    qrels, runs = records[0], records[1:]
    lines = [_qrels_line(qrels)]
    if runs:
        rows = [_run_row(record) for record in runs]
        table = Table(header=list(rows[0]), rows=[list(row.values()) for row in rows], labels=2)
        lines += ["", render(table, "table").rstrip("\n")]
    messages = [
        f"{record['file']}: {label(kind)} {message}"
        for record in records
        for kind in ("error", "warning")
        for message in record[kind + "s"]
    ]
    if messages:
        lines += ["", *messages]
    return "\n".join(lines) + "\n"


def _qrels_line(record: dict) -> str:
    if "queries" not in record:
        return f"{record['file']}: {record['status']}"
    grades = ", ".join(f"{grade}: {count}" for grade, count in record["grades"].items())
    return (f"{record['file']}: {record['queries']} queries, {record['judgments']} judgments "
            f"({record['relevant']} relevant; grades {grades or '-'}), "
            f"{record['malformed_lines']['count']} malformed lines: {record['status']}")


def _run_row(record: dict) -> dict:
    """A run's row of the table, by column name, the two label columns (run and status) first; ``-``
    where the record lacks a figure (an unreadable file, or no qrels to compare with)."""
    def count(key: str):
        return record[key]["count"] if record.get(key) is not None else "-"

    ties, depth = record.get("ties"), record.get("depth")
    unjudged = record.get("unjudged_at_10")
    return {
        "run": record["run"],
        "status": record["status"],
        "queries": record.get("queries", "-"),
        "not in qrels": count("queries_not_in_qrels"),
        "missing": count("queries_missing_from_run"),
        "duplicates": count("duplicate_documents"),
        "tie groups": ties["groups"] if ties else "-",
        "ties across 10": ties["across_rank_10"] if ties else "-",
        "ties at depth": ties["at_depth"] if ties else "-",
        "depth min/median/max": f"{depth['min']}/{depth['median']:g}/{depth['max']}" if depth else "-",
        "unjudged@10": f"{unjudged:.3f}" if unjudged is not None else "-",
        "malformed": count("malformed_lines"),
    }
