"""``prefeval measures``: the measure catalogue (:func:`prefeval.measures.catalogue.measure_catalogue`)
as a table for people, a row per measure."""

from __future__ import annotations

from typing import BinaryIO

from prefeval.report.tables import Table, render


def write_catalogue_table(catalogue: list[dict], stream: BinaryIO) -> None:
    """The catalogue as aligned text (:func:`catalogue_table`)."""
    stream.write(render(catalogue_table(catalogue), "table").encode())


def catalogue_table(catalogue: list[dict]) -> Table:
    """The catalogue as a table; every column is text, so every column is a (left-aligned) label."""

    def names(values: list[str]) -> str:
        return ", ".join(values) or "-"

    header = ["measure", "kind", "relevance", "defaults", "aliases", "trec_eval", "ir_measures", "ndeval",
              "description", "citation"]
    rows = [
        [
            m["syntax"],
            m["kind"],
            m["relevance"],
            names([f"{p['name']}={p['default']}" for p in m["parameters"]]),
            names(m["aliases"]),
            names(m["trec_eval"]),
            names(m["ir_measures"]),
            names(m["ndeval"]),
            m["description"],
            m["citation"],
        ]
        for m in catalogue
    ]
    return Table(header, rows, labels=len(header))
