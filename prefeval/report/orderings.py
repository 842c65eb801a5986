"""``aggregate --format``: orderings as JSON lines, tsv rows, or a runs × orderings table.

tsv: a header, then a row per run of every ordering::

    sample  qid   measure  method  position  run  score
    0       303   rpp      query   1         A    1.25      (per query, with -q: by value or net preference)
    0       all   rpp      mc4     1         A    0.61      (summary: mean, mc4 or borda)

``position`` is 1-based in the listed order; tied runs (equal scores) are listed by name.

Table: a column per measure and aggregation method (``rpp mc4``, ``rpp borda``, ``ap mean``), a row
per run (per sample and run when there are several samples), sorted by the first column; a cell is
the run's rank in that ordering, 1 for the best, tied runs sharing the best rank of their group
(competition ranking: 1, 1, 3). Only the summary is shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import BinaryIO

from prefeval.analyses.orderings import competition_ranks
from prefeval.errors import UsageError
from prefeval.io.jsonl import write_jsonl
from prefeval.report.formats import TABLE_FORMATS, check_format, tsv_row, write_lines
from prefeval.report.tables import MISSING, Table, render

TSV_HEADER = ("sample", "qid", "measure", "method", "position", "run", "score")
RECORD_KEYS = ("qid", "sample", "scores")


def write_orderings(records: Iterable[dict], stream: BinaryIO, fmt: str = "jsonl") -> None:
    """Write the records of :func:`prefeval.analyses.aggregate` to ``stream`` in format ``fmt``."""
    check_format(fmt)
    if fmt == "jsonl":
        write_jsonl(records, stream)
    elif fmt == "tsv":
        write_lines(orderings_tsv_lines(records), stream)
    else:
        stream.write(render(orderings_table(records), fmt).encode())


def orderings_tsv_lines(records: Iterable[dict]) -> Iterator[str]:
    yield "\t".join(TSV_HEADER)
    for record in records:
        sample, qid = record["sample"], record["qid"]
        if qid != "all":
            for measure, ordering in record.items():
                if measure not in RECORD_KEYS:
                    scores = record["scores"][measure]
                    for position, run in enumerate(ordering, start=1):
                        yield tsv_row((sample, qid, measure, "query", position, run, scores[run]))
            continue
        for measure, summary in _summaries(record):
            for method, scores in summary["scores"].items():
                for position, run in enumerate(summary[method], start=1):
                    yield tsv_row((sample, qid, measure, method, position, run, scores[run]))


def orderings_table(records: Iterable[dict]) -> Table:
    """The runs × orderings table of the summary records (see the module docstring)."""
    summaries = []
    for record in records:
        if record["qid"] != "all":
            raise UsageError(f"the table formats ({', '.join(TABLE_FORMATS)}) show the summary orderings; "
                             "per-query orderings (-q) need jsonl or tsv")
        summaries.append(record)
    if not summaries:
        raise UsageError("the table formats show the summary orderings: drop -n, or use jsonl or tsv")
    several = len(summaries) > 1
    header: list[str] = ["sample", "run"] if several else ["run"]
    rows = []
    for record in summaries:
        columns = [(f"{measure} {method}", summary[method], summary["scores"][method])
                   for measure, summary in _summaries(record) for method in summary["scores"]]
        if len(header) == (2 if several else 1):
            header += [name for name, _, _ in columns]
        rank_columns = [competition_ranks(scores) for _, _, scores in columns]
        leading = columns[0][1] if columns else []
        runs = leading + sorted({run for _, ordering, _ in columns for run in ordering} - set(leading))
        for run in runs:
            labels = [str(record["sample"]), run] if several else [run]
            rows.append(labels + [str(ranks[run]) if run in ranks else MISSING for ranks in rank_columns])
    notes = ["Cells: the rank of the run in each ordering (1 = best; tied runs share a rank)."]
    return Table(header, rows, labels=2 if several else 1, notes=notes)


def _summaries(record: dict) -> Iterator[tuple[str, dict]]:
    for measure, summary in record.items():
        if measure not in RECORD_KEYS:
            yield measure, summary

