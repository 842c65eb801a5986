"""``prefeval measures``: the measures prefeval knows, with their names in trec_eval and ir_measures."""

from __future__ import annotations

import click

from prefeval.cli.common import CONTEXT, output_option, reported_errors
from prefeval.io.jsonl import output_stream, write_jsonl
from prefeval.measures.catalogue import measure_catalogue
from prefeval.report.tables import Table, render


@click.command("measures", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval measures
  prefeval measures --json | jq -r 'select(.kind == "preference") | .name'
""")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per measure instead of a table.")
@output_option
def measures_command(as_json, output):
    """List every measure, with its trec_eval and ir_measures names.

    For each: its syntax, kind (metric or preference), relevance (binary or graded), aliases,
    parameters with their defaults, what it is, and where it comes from (its citation)."""
    with reported_errors():
        catalogue = measure_catalogue()
        with output_stream(output) as stream:
            if as_json:
                write_jsonl(catalogue, stream)
            else:
                stream.write(render(_table(catalogue), "table").encode())


def _table(catalogue: list[dict]) -> Table:
    """The catalogue as a table; every column is text, so every column is a (left-aligned) label."""

    def names(values: list[str]) -> str:
        return ", ".join(values) or "-"

    header = ["measure", "kind", "relevance", "defaults", "aliases", "trec_eval", "ir_measures", "description",
              "citation"]
    rows = [
        [
            m["syntax"],
            m["kind"],
            m["relevance"],
            names([f"{p['name']}={p['default']}" for p in m["parameters"]]),
            names(m["aliases"]),
            names(m["trec_eval"]),
            names(m["ir_measures"]),
            m["description"],
            m["citation"],
        ]
        for m in catalogue
    ]
    return Table(header, rows, labels=len(header))
