"""``prefeval measures``: the measures prefeval knows, with their names in trec_eval and ir_measures."""

from __future__ import annotations

import click
import pandas as pd

from prefeval.cli.common import CONTEXT, output_option, reported_errors, text_table
from prefeval.io.jsonl import output_stream, write_jsonl
from prefeval.measures.catalogue import measure_catalogue


@click.command("measures", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval measures
  prefeval measures --json | jq -r 'select(.kind == "preference") | .name'
""")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per measure instead of a table.")
@output_option
def measures_command(as_json, output):
    """List every measure: its syntax, kind (metric or preference), relevance (binary or graded),
    aliases, parameters with their defaults, trec_eval and ir_measures names, and what it is."""
    with reported_errors():
        catalogue = measure_catalogue()
        with output_stream(output) as stream:
            if as_json:
                write_jsonl(catalogue, stream)
            else:
                stream.write((text_table(_table(catalogue)) + "\n").encode())


def _table(catalogue: list[dict]) -> pd.DataFrame:
    def names(values: list[str]) -> str:
        return ", ".join(values) or "-"

    return pd.DataFrame({
        "measure": [m["syntax"] for m in catalogue],
        "kind": [m["kind"] for m in catalogue],
        "relevance": [m["relevance"] for m in catalogue],
        "defaults": [names([f"{p['name']}={p['default']}" for p in m["parameters"]]) for m in catalogue],
        "aliases": [names(m["aliases"]) for m in catalogue],
        "trec_eval": [names(m["trec_eval"]) for m in catalogue],
        "ir_measures": [names(m["ir_measures"]) for m in catalogue],
        "description": [m["description"] for m in catalogue],
    }, dtype=object)
