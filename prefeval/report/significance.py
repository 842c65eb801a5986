"""``significance --format``: tests as JSON lines, tsv rows, or a pairs × measures table.

tsv: a header, then a row per tested pair and measure, its statistics at full precision::

  sample  runi  runj  measure  test  mean  wins  losses  ties  p  p_corrected  ci_low  ci_high  effect_size  significant

The discriminative power of a measure is the mean of its ``significant`` column.

Table: a row per pair (``runi``, ``runj``; with a baseline, a row per run compared with it), a column
per measure; a cell is the mean over queries of the pair's values, marked ↑ when the first run is
significantly better than the second (a positive mean with a corrected p-value below alpha) and ↓
when it is significantly worse. A last row gives each measure's discriminative power. A leading
sample column appears when there are several samples.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import BinaryIO

from prefeval.analyses.significance import CORRECTION_NAMES, TEST_NAMES
from prefeval.io.keys import RUNI, RUNJ, SAMPLE
from prefeval.io.records import (
    ALPHA,
    CORRECTION,
    DISCRIMINATIVE_POWER,
    MEAN,
    MEASURE,
    PAIR_STATISTICS,
    SIGNIFICANT,
    TEST,
    is_pair_test,
)
from prefeval.report.formats import tsv_row, write_lines
from prefeval.report.tables import BETTER, WORSE, Cell, Table, number, render

TSV_HEADER = (SAMPLE, RUNI, RUNJ, MEASURE, TEST, *PAIR_STATISTICS, SIGNIFICANT)


def write_significance_tsv(records: Iterable[dict], stream: BinaryIO) -> None:
    """The records of :func:`prefeval.analyses.significance.pairwise_significance` as tsv."""
    write_lines(significance_tsv_lines(records), stream)


def write_significance_table(records: Iterable[dict], stream: BinaryIO, fmt: str, baseline: str | None = None) -> None:
    """The records of :func:`prefeval.analyses.significance.pairwise_significance` as a table in the
    style ``fmt``, a row per run compared with ``baseline`` when the tests had one."""
    stream.write(render(significance_table(records, baseline), fmt).encode())


def significance_tsv_lines(records: Iterable[dict]) -> Iterator[str]:
    yield "\t".join(TSV_HEADER)
    for record in records:
        if is_pair_test(record):
            yield tsv_row(record.get(key, "") for key in TSV_HEADER)  # a statistic left out: an empty field


def significance_table(records: Iterable[dict], baseline: str | None = None) -> Table:
    """The pairs × measures table (see the module docstring); ``baseline`` as given to the tests."""
    cells: dict[tuple, dict[str, Cell]] = {}
    power: dict[int, dict[str, Cell]] = {}
    measures: dict[str, None] = {}
    settings = None
    for record in records:
        measures.setdefault(record[MEASURE], None)
        sample = record[SAMPLE]
        if is_pair_test(record):
            marker = (BETTER if record[MEAN] > 0 else WORSE) if record[SIGNIFICANT] else ""
            key = (sample, record[RUNI]) if baseline is not None else (sample, record[RUNI], record[RUNJ])
            cells.setdefault(key, {})[record[MEASURE]] = number(record[MEAN], marker)
        else:
            power.setdefault(sample, {})[record[MEASURE]] = number(record[DISCRIMINATIVE_POWER])
            settings = record
    several = len(power) > 1
    labels = ["run"] if baseline is not None else ["runi", "runj"]
    header = (["sample"] if several else []) + labels + list(measures)
    rows = []
    for sample in power:
        for key, by_measure in cells.items():
            if key[0] == sample:
                rows.append(([str(sample)] if several else []) + list(key[1:]) +
                            [by_measure.get(measure, Cell("")) for measure in measures])
        blank = [""] * (len(labels) - 1)
        rows.append(([str(sample)] if several else []) + ["discriminative power", *blank] +
                    [power[sample].get(measure, Cell("")) for measure in measures])
    return Table(header, rows, labels=len(header) - len(measures), notes=_notes(settings, baseline))


def _notes(settings: dict | None, baseline: str | None) -> list[str]:
    if settings is None:
        return []
    than = baseline if baseline is not None else "runj"
    return [f"Cells: mean over queries of the pair's values (> 0: the first run is preferred). "
            f"↑/↓: significantly better/worse than {than} ({TEST_NAMES[settings[TEST]]}, "
            f"{CORRECTION_NAMES[settings[CORRECTION]]}, alpha {settings[ALPHA]}). "
            f"Discriminative power: the fraction of pairs that are significant."]
