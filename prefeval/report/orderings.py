"""``aggregate --format``: orderings as JSON lines, tsv rows, or a runs × orderings table.

tsv: a header, then a row per run of every ordering::

    sample  qid   measure  method  position  run  score
    0       303   rpp      query   1         A    1.25      (per query, with -q: by value or net preference)
    0       all   rpp      mc4     1         A    0.61      (summary: mean, another statistic, mc4 or borda)

``position`` is the run's rank in that ordering, 1 for the best, tied runs (equal scores, within the
tolerance of :mod:`prefeval.analyses.orderings`) sharing the best rank of their group (competition
ranking: 1, 1, 3), as in the table; rows follow the listed order (tied runs by name).

Table: a column per measure and aggregation method (``rpp mc4``, ``rpp borda``, ``ap mean``,
``ap:median``), a row per run (per sample and run when there are several samples), sorted by the
first column; a cell is the run's rank in that ordering, as in the tsv. Only the summary is shown.

With ``aggregate --bootstrap`` (:mod:`prefeval.analyses.bootstrap`), tsv and the tables show the rank
intervals instead, a row per measure, method and run, runs in the order over all queries. The tsv::

    sample  measure  method  run  rank  score  rank_low  rank_high  tier  p_rank_1  rank_probabilities
    0       ap       mean    A    1     0.31   1         2          1     0.82      0.82,0.18,0.0

(``rank_probabilities``: P(rank = 1), P(rank = 2), … comma-separated); the tables show the rank, the
95% interval, the tier and P(rank 1).

Records are recognised by their keys (:func:`~prefeval.io.records.aggregate_record_kind`), so a query
named ``all`` is a query here too.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from prefeval.analyses.bootstrap import LEVEL
from prefeval.analyses.orderings import competition_ranks, higher_is_better
from prefeval.errors import UsageError
from prefeval.io.keys import QID, RUN, SAMPLE
from prefeval.io.records import (
    MEASURE,
    METHOD,
    ORDERING_LABELS,
    QUERY_ORDERING,
    RANK,
    RANK_HIGH,
    RANK_INTERVAL,
    RANK_LOW,
    RANK_PROBABILITIES,
    RESAMPLES,
    SCORE,
    SCORES,
    SUMMARY_ORDERING,
    TIER,
    aggregate_record_kind,
)
from prefeval.report.formats import TABLE_FORMATS, full_precision, tsv_row, write_lines
from prefeval.report.tables import MISSING, Table, number, render

POSITION, P_RANK_1 = "position", "p_rank_1"
"""The columns of the tsv that are not keys of the records."""
TSV_HEADER = (SAMPLE, QID, MEASURE, METHOD, POSITION, RUN, SCORE)
BOOTSTRAP_TSV_HEADER = (SAMPLE, MEASURE, METHOD, RUN, RANK, SCORE, RANK_LOW, RANK_HIGH, TIER, P_RANK_1,
                        RANK_PROBABILITIES)


def write_orderings_tsv(records: Iterable[dict], stream: BinaryIO) -> None:
    """The records of :func:`prefeval.analyses.aggregate.aggregate` as tsv (the module docstring)."""
    write_lines(orderings_tsv_lines(records), stream)


def write_orderings_table(records: Iterable[dict], stream: BinaryIO, fmt: str) -> None:
    """The records of :func:`prefeval.analyses.aggregate.aggregate` as a table in the style ``fmt``."""
    stream.write(render(orderings_table(records), fmt).encode())


def orderings_tsv_lines(records: Iterable[dict]) -> Iterator[str]:
    """The tsv lines of the records: orderings, or the rank intervals when the first record is one."""
    records = iter(records)
    first = next(records, None)
    if first is None:
        yield "\t".join(TSV_HEADER)
        return
    records = itertools.chain([first], records)
    if aggregate_record_kind(first) == RANK_INTERVAL:
        yield from _bootstrap_tsv_lines(records)
        return
    yield "\t".join(TSV_HEADER)
    for record in records:
        kind = _expect(record, (QUERY_ORDERING, SUMMARY_ORDERING), "tsv")
        sample, qid = record[SAMPLE], record[QID]
        if kind == QUERY_ORDERING:
            for measure, ordering in record.items():
                if measure not in ORDERING_LABELS:
                    scores = record[SCORES][measure]
                    ranks = competition_ranks({run: scores[run] for run in ordering})
                    for run in ordering:
                        yield tsv_row((sample, qid, measure, "query", ranks[run], run, scores[run]))
            continue
        for measure, summary in _summaries(record):
            for method, scores in summary[SCORES].items():
                ranks = competition_ranks(scores, higher_is_better(method))
                for run in summary[method]:
                    yield tsv_row((sample, qid, measure, method, ranks[run], run, scores[run]))


def _bootstrap_tsv_lines(records: Iterable[dict]) -> Iterator[str]:
    yield "\t".join(BOOTSTRAP_TSV_HEADER)
    for record in records:
        if _expect(record, (RANK_INTERVAL, SUMMARY_ORDERING), "tsv") == RANK_INTERVAL:
            probabilities = record[RANK_PROBABILITIES]
            yield tsv_row([record[key] for key in BOOTSTRAP_TSV_HEADER[:-2]]
                          + [probabilities[0], ",".join(full_precision(p) for p in probabilities)])


def orderings_table(records: Iterable[dict]) -> Table:
    """The runs × orderings table of the summary records, or the table of the rank intervals when there
    are bootstrap records (see the module docstring)."""
    summaries, bootstraps = [], []
    for record in records:
        kind = aggregate_record_kind(record)
        if kind == QUERY_ORDERING:
            raise UsageError(f"the table formats ({', '.join(TABLE_FORMATS)}) show the summary orderings; "
                             "per-query orderings (-q) need jsonl or tsv")
        _expect(record, (SUMMARY_ORDERING, RANK_INTERVAL), "the table formats")
        (bootstraps if kind == RANK_INTERVAL else summaries).append(record)
    if bootstraps:
        return bootstrap_table(bootstraps)
    if not summaries:
        raise UsageError("the table formats show the summary orderings: drop -n, or use jsonl or tsv")
    several = len(summaries) > 1
    header: list[str] = ["sample", "run"] if several else ["run"]
    rows = []
    for record in summaries:
        columns = [(_column_name(measure, method), summary[method], summary[SCORES][method], method)
                   for measure, summary in _summaries(record) for method in summary[SCORES]]
        if len(header) == (2 if several else 1):
            header += [name for name, _, _, _ in columns]
        rank_columns = [competition_ranks(scores, higher_is_better(method)) for _, _, scores, method in columns]
        leading = columns[0][1] if columns else []
        runs = leading + sorted({run for _, ordering, _, _ in columns for run in ordering} - set(leading))
        for run in runs:
            labels = [str(record[SAMPLE]), run] if several else [run]
            rows.append(labels + [str(ranks[run]) if run in ranks else MISSING for ranks in rank_columns])
    notes = ["Cells: the rank of the run in each ordering (1 = best; tied runs share a rank)."]
    if any(not higher_is_better(method) for record in summaries for _, summary in _summaries(record)
           for method in summary[SCORES]):
        notes.append("Gini: the lowest coefficient (the most even run) ranks first.")
    return Table(header, rows, labels=2 if several else 1, notes=notes)


def bootstrap_table(records: list[dict]) -> Table:
    """A row per sample (when there are several), measure, method and run: the rank over all queries,
    the rank interval, the tier and the probability of rank 1."""
    several = len({record[SAMPLE] for record in records}) > 1
    labels = (["sample"] if several else []) + ["measure", "method", "run"]
    header = labels + ["rank", f"{LEVEL:.0%} interval", "tier", "P(rank 1)"]
    rows = []
    for record in records:
        interval = f"{record[RANK_LOW]}–{record[RANK_HIGH]}"
        row = ([str(record[SAMPLE])] if several else []) + [record[MEASURE], record[METHOD], record[RUN]]
        rows.append(row + [str(record[RANK]), interval, str(record[TIER]), number(record[RANK_PROBABILITIES][0])])
    resamples = sorted({record[RESAMPLES] for record in records})
    notes = [f"Rank: over all queries (1 = best; tied runs share a rank). Interval: the {LEVEL:.0%} percentile "
             f"interval of the rank over {', '.join(map(str, resamples))} resamples of the queries (with "
             "replacement). Tier: runs taken by rank join the tier while their intervals overlap those of "
             "every run in it. P(rank 1): the fraction of resamples in which the run ranks first."]
    return Table(header, rows, labels=len(labels), notes=notes)


def _column_name(measure: str, method: str) -> str:
    """``rpp mc4``, ``ap mean``; ``ap:median`` (its method is in its name)."""
    return measure if measure.endswith(":" + method) else f"{measure} {method}"


def _expect(record: dict, kinds: tuple[str, ...], where: str) -> str:
    kind = aggregate_record_kind(record)
    if kind not in kinds:
        raise UsageError(f"{where} cannot show {kind} records among {' and '.join(kinds)} records: use jsonl")
    return kind


def _summaries(record: dict) -> Iterator[tuple[str, dict]]:
    for measure, summary in record.items():
        if measure not in ORDERING_LABELS:
            yield measure, summary
