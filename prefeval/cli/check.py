"""``prefeval check``: a validation report on qrels and runs, without evaluating."""

from __future__ import annotations

import functools

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
from prefeval.io.output import output_stream
from prefeval.report.formats import CHECK, formats_for, formats_help, write_records


@click.command("check", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval check -R qrels.txt runs/*.gz --format table
  prefeval check -R qrels.txt run.gz | jq 'select(.status != "ok") | .warnings'
  zcat run.gz | prefeval check -R qrels.txt -
""")
@click.option("-R", "--qrels", required=True, type=INPUT_FILE, metavar="QRELS",
              help="Relevance judgments (TREC qrels; gzip or - for stdin).")
@click.option("--format", "report_format", type=click.Choice(formats_for(CHECK)), default="jsonl", show_default=True,
              help=formats_help(CHECK))
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
            write_records(CHECK, records, stream, report_format, label=label,
                          styled=functools.partial(styled_for, stream))
    if has_errors(records):
        raise SystemExit(1)

