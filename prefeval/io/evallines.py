"""Reading what ``prefeval eval -q`` (or pref_eval.py -q) wrote, for ``aggregate`` and friends.

Per-query pair lines (``"type":"preference"``, with ``runi`` and ``runj``) and metric lines
(``"type":"metric"``, with ``run``) are gathered per sample into score tables; summary lines
(``qid`` "all") are skipped. Every other key of a line is a measure and must hold a number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Iterable, Iterator

import numpy as np
import pandas as pd

from prefeval.errors import InputError
from prefeval.io.jsonl import read_jsonl
from prefeval.io.source import display_name

PAIR_KEYS = ("qid", "runi", "runj", "sample", "type")
METRIC_KEYS = ("qid", "run", "sample", "type")


@dataclass
class SampleScores:
    """One sample's per-query values: ``metrics[m]`` and ``pairs[m]`` as lists of cells.

    Metric cells are (query, run, value); pair cells (query, runi, runj, value), with queries and
    runs numbered by first appearance (``qids``, ``runs``).
    """

    sample: int
    qids: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    metrics: dict[str, list[tuple[int, int, float]]] = field(default_factory=dict)
    pairs: dict[str, list[tuple[int, int, int, float]]] = field(default_factory=dict)
    _query_number: dict[str, int] = field(default_factory=dict, repr=False)
    _run_number: dict[str, int] = field(default_factory=dict, repr=False)

    def query_number(self, qid: str) -> int:
        if qid not in self._query_number:
            self._query_number[qid] = len(self.qids)
            self.qids.append(qid)
        return self._query_number[qid]

    def run_number(self, run: str) -> int:
        if run not in self._run_number:
            self._run_number[run] = len(self.runs)
            self.runs.append(run)
        return self._run_number[run]

    def metric_scores(self, measure: str) -> np.ndarray:
        """(Q, R) values of a metric, NaN where a run has no value on a query."""
        scores = np.full((len(self.qids), len(self.runs)), np.nan)
        cells = np.array(self.metrics[measure], dtype=np.float64).reshape(-1, 3)
        scores[cells[:, 0].astype(int), cells[:, 1].astype(int)] = cells[:, 2]
        return scores

    def net_preferences(self, measure: str) -> np.ndarray:
        """(Q, R) net preference Σ_j pref(run, j), NaN where a run is in no pair of the query."""
        cells = np.array(self.pairs[measure], dtype=np.float64).reshape(-1, 4)
        query, first, second = (cells[:, c].astype(int) for c in range(3))
        shape = (len(self.qids), len(self.runs))
        net = np.zeros(shape)
        np.add.at(net, (query, first), cells[:, 3])
        np.add.at(net, (query, second), -cells[:, 3])
        seen = np.zeros(shape, dtype=bool)
        seen[query, first] = True
        seen[query, second] = True
        return np.where(seen, net, np.nan)


@dataclass
class EvalLines:
    """Everything read from one file of eval lines: the samples (ascending) and the measures, in
    order of first appearance, each marked as a metric (found on metric lines) or a preference."""

    source: str
    samples: list[SampleScores]
    measures: list[str]
    metric_names: set[str]

    def is_metric(self, measure: str) -> bool:
        return measure in self.metric_names


def read_eval_lines(path: str) -> EvalLines:
    """Read per-query eval lines; an error names the file and line of anything malformed."""
    return eval_lines_from_records(display_name(path), read_jsonl(path))


FRAME_SOURCE = "<DataFrame>"


def eval_lines_from_frames(frames) -> EvalLines:
    """Eval lines from DataFrames: what :func:`prefeval.evaluate` and :func:`prefeval.compare` return
    (per query), or eval JSON lines read by ``pandas.read_json(..., lines=True)``; one frame or several.

    A row with ``runi`` and ``runj`` is a pair line, a row with ``run`` a metric line (a ``type``
    column, when present, must agree); ``sample`` defaults to 0; an empty (NaN) cell is an absent key,
    as on a JSON line that lacks it. Errors name the row as ``<DataFrame>:ROW`` (1-based, within
    its frame).
    """
    frames = [frames] if isinstance(frames, pd.DataFrame) else list(frames)
    return eval_lines_from_records(FRAME_SOURCE, chain.from_iterable(_frame_records(frame) for frame in frames))


def _frame_records(frame: pd.DataFrame) -> Iterator[tuple[int, dict]]:
    present = frame.notna().to_numpy()
    columns = list(frame.columns)
    for number, (values, keep) in enumerate(zip(frame.itertuples(index=False, name=None), present), start=1):
        record = {column: value for column, value, kept in zip(columns, values, keep) if kept}
        record.setdefault("sample", 0)
        if "type" not in record:
            record["type"] = "preference" if "runi" in record else "metric" if "run" in record else None
        for key, value in record.items():
            if isinstance(value, np.generic):
                record[key] = value = value.item()
            if key == "sample" and isinstance(value, float) and value.is_integer():
                record[key] = int(value)
        yield number, record


def eval_lines_from_records(source: str, numbered_records: Iterable[tuple[int, dict]]) -> EvalLines:
    """Gather (line number, record) pairs of eval lines; an error names ``source`` and the line."""
    samples: dict[int, SampleScores] = {}
    measures: dict[str, None] = {}
    metric_names: set[str] = set()
    summary_only = False
    for number, record in numbered_records:
        qid = record.get("qid")
        if qid == "all":
            summary_only = True
            continue
        kind = record.get("type")
        keys = PAIR_KEYS if kind == "preference" else METRIC_KEYS if kind == "metric" else None
        if keys is None:
            raise InputError(source, f"not an eval line: 'type' must be \"preference\" or \"metric\", found {kind!r}", number)
        missing = [key for key in keys if key not in record]
        if missing:
            raise InputError(source, f"{kind} line without {', '.join(repr(k) for k in missing)}", number)
        sample_number = record["sample"]
        if not isinstance(sample_number, int) or isinstance(sample_number, bool):
            raise InputError(source, f"'sample' must be an integer, found {sample_number!r}", number)
        for key in ("qid", "runi", "runj") if kind == "preference" else ("qid", "run"):
            if not isinstance(record[key], str):
                record[key] = str(record[key])
        sample = samples.setdefault(sample_number, SampleScores(sample_number))
        query = sample.query_number(record["qid"])
        if kind == "preference":
            first, second = sample.run_number(record["runi"]), sample.run_number(record["runj"])
        else:
            run = sample.run_number(record["run"])
        for measure, value in record.items():
            if measure in keys:
                continue
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
                raise InputError(source, f"value of {measure!r} must be a number, found {value!r}", number)
            measures.setdefault(measure, None)
            if kind == "preference":
                sample.pairs.setdefault(measure, []).append((query, first, second, value))
            else:
                metric_names.add(measure)
                sample.metrics.setdefault(measure, []).append((query, run, value))
    if not samples:
        hint = "it holds only summary lines; " if summary_only else ""
        raise InputError(source, f"no per-query lines: {hint}run `prefeval eval` with -q to write them")
    return EvalLines(source, [samples[s] for s in sorted(samples)], list(measures), metric_names)
