"""``prefeval measures``: the measures prefeval knows, with their names in trec_eval and ir_measures."""

from __future__ import annotations

import click

from prefeval.cli.common import CONTEXT, output_option, reported_errors
from prefeval.io.output import output_stream
from prefeval.measures.catalogue import measure_catalogue
from prefeval.report.formats import CATALOGUE, write_records


@click.command("measures", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval measures
  prefeval measures --json | jq -r 'select(.kind == "preference") | .name'
""")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per measure instead of a table.")
@output_option
def measures_command(as_json, output):
    """List every measure, with its trec_eval, ir_measures and ndeval names.

    For each: its syntax, kind (metric or preference), relevance (binary or graded), aliases,
    parameters with their defaults, what it is, and where it comes from (its citation)."""
    with reported_errors():
        catalogue = measure_catalogue()
        with output_stream(output) as stream:
            write_records(CATALOGUE, catalogue, stream, "jsonl" if as_json else "table")

