"""Interpolated precision-recall curves from eval lines: what ``prefeval plot pr`` draws.

Every ``iprec`` measure of the lines (interpolated precision at a recall level, under any of its
names: :class:`~prefeval.measures.interpolated.InterpolatedPrecision`) is a point of each run's
curve. The values are those of the metric lines of the first sample: of one query, from its
per-query lines, or the mean over the queries, from the summary lines, and where a run has no
summary value of a measure, the mean of its per-query values (a line without the measure, or with
null, does not count).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from prefeval.errors import InputError, UsageError
from prefeval.io.jsonl import read_records
from prefeval.io.keys import LABEL_KEYS, METRIC, QID, RUN, RUNI, SAMPLE, SUMMARY_QID, TYPE
from prefeval.io.source import display_name
from prefeval.measures import parse_measure
from prefeval.measures.interpolated import InterpolatedPrecision


@dataclass
class Curves:
    """The values of the iprec measures of an input: ``measures`` by key (in order of first
    appearance), ``runs`` in order of first appearance, ``values[run][measure name]``."""

    measures: dict[str, InterpolatedPrecision]
    runs: list[str]
    values: dict[str, dict[str, float]]


def interpolated_precision_curves(path: str, query: str | None) -> Curves:
    """Every run's value of every iprec measure of the eval lines at ``path`` (``-`` for stdin): of
    ``query``, or the mean over the queries when it is None (see the module docstring)."""
    source = display_name(path)
    measures: dict[str, InterpolatedPrecision] = {}
    not_iprec: set[str] = set()
    lines: list[tuple[int, dict]] = []
    for number, record in read_records(path):
        if RUN not in record or RUNI in record:
            continue  # pair lines hold differences of the metrics; the values are on the metric lines
        for key in record:
            if key in LABEL_KEYS or key in measures or key in not_iprec:
                continue
            measure = iprec_measure(key)
            if measure is None:
                not_iprec.add(key)
            elif all(measure.name != known.name for known in measures.values()):  # one key per measure
                measures[key] = measure
        lines.append((number, record))
    if not measures:
        raise InputError(source, "no interpolated precision (iprec) measure: write the recall levels with "
                                 "prefeval eval -q -m iprec@0,iprec@0.1,...,iprec@1")
    present = []
    for number, record in lines:
        sample = record.get(SAMPLE, 0)
        if isinstance(sample, bool) or not isinstance(sample, int):
            raise InputError(source, f"'sample' must be an integer, not {sample!r}", number)
        if any(key in record for key in measures):
            present.append((number, sample, record))
    first = min(sample for _, sample, _ in present)
    runs: list[str] = []
    summary: dict[str, dict[str, float]] = {}
    per_query: dict[str, dict[str, list[float]]] = {}
    queries: set[str] = set()
    for number, sample, record in present:
        if sample != first:
            continue
        run, qid = record[RUN], record.get(QID)
        if not isinstance(run, str) or not isinstance(qid, str):
            raise InputError(source, "a metric line needs a string 'qid' and 'run'", number)
        if record.get(TYPE, METRIC) != METRIC:
            raise InputError(source, f"a line with a 'run' is a metric line, not of type {record[TYPE]!r}", number)
        values = {}
        for key, measure in measures.items():
            value = record.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(source, f"{key} must be a number, not {value!r}", number)
            low, high = measure.bounds
            if not low <= value <= high:  # a precision: anything else is not one (and 1e100 broke the figure)
                raise InputError(source, f"{key} must be a precision, in [{low:g}, {high:g}], not {value!r}", number)
            values[measure.name] = float(value)
        if qid != SUMMARY_QID:
            queries.add(qid)
        if query is None and qid == SUMMARY_QID:
            summary.setdefault(run, {}).update(values)
        elif query is None or qid == query:
            for name, value in values.items():
                per_query.setdefault(run, {}).setdefault(name, []).append(value)
        else:
            continue
        if run not in runs:
            runs.append(run)
    if query is not None and query not in queries:
        raise InputError(source, f"query {query} is not in its per-query lines (of sample {first}); "
                                 "write them with prefeval eval -q")
    means = {run: {name: float(np.mean(values)) for name, values in per_query.get(run, {}).items()} for run in runs}
    return Curves(measures, runs, {run: means[run] | summary.get(run, {}) for run in runs})


def iprec_measure(key: str) -> InterpolatedPrecision | None:
    """The iprec measure a key of an eval line names (any of its names), or None."""
    try:
        measure = parse_measure(key)
    except (UsageError, ValueError):
        return None
    return measure if isinstance(measure, InterpolatedPrecision) else None
