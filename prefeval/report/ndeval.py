"""ndeval's output: a CSV file, byte for byte as ndeval 4.5 prints it (``prefeval ndeval``).

A header line ``runid,topic,`` and the 21 column names (:data:`~prefeval.measures.foreign.ndeval.COLUMNS`);
a line per topic listed, ``RUNID,TOPIC`` and its values; and the means, ``RUNID,amean`` and theirs.
Every value is written as C's ``printf("%.6f")`` writes it: six decimals, correctly rounded (halfway
cases of the binary value to even, which Python's formatting shares), a negative value that rounds
to zero keeping its sign (``-0.000000``). The values come from :mod:`prefeval.analyses.ndeval`; this
module only writes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import BinaryIO

from prefeval.analyses.ndeval import MEAN_TOPIC, NdevalReport
from prefeval.report.formats import write_lines


def ndeval_lines(report: NdevalReport) -> Iterator[str]:
    """The lines of ndeval's CSV for ``report``, without their line ends."""
    yield ",".join(("runid", "topic", *report.columns))
    for topic, values in report.rows:
        yield _line(report.run_id, str(topic), values)
    yield _line(report.run_id, MEAN_TOPIC, report.means)


def _line(run_id: str, topic: str, values: Iterable[float]) -> str:
    return f"{run_id},{topic}" + "".join(f",{float(value):.6f}" for value in values)


def write_ndeval_report(reports: NdevalReport | Iterable[NdevalReport], stream: BinaryIO) -> None:
    """ndeval's CSV of one report, or of several one after the other (each with its header, as
    ndeval run on each run in turn prints them)."""
    for report in _reports(reports):
        write_lines(ndeval_lines(report), stream)


def write_ndeval_jsonl(reports: NdevalReport | Iterable[NdevalReport], stream: BinaryIO) -> None:
    """The same values as JSON lines, one object per line of the CSV (its header's keys, the values
    at full precision): ``{"runid": ..., "topic": "151", "ERR-IA@5": 0.85..., ...}``, the means'
    topic ``amean``."""
    from prefeval.io.jsonl import write_jsonl

    write_jsonl(({"runid": report.run_id, "topic": str(topic), **dict(zip(report.columns, map(float, values)))}
                 for report in _reports(reports)
                 for topic, values in [*report.rows, (MEAN_TOPIC, report.means)]), stream)


def _reports(reports: NdevalReport | Iterable[NdevalReport]) -> list[NdevalReport]:
    return [reports] if isinstance(reports, NdevalReport) else list(reports)
