"""Reading what ``prefeval eval -q`` (or pref_eval.py -q) wrote, for ``aggregate`` and friends.

Per-query pair lines (``"type":"preference"``, with ``runi`` and ``runj``) and metric lines
(``"type":"metric"``, with ``run``) are gathered per sample into score tables; summary lines
(``qid`` "all") are skipped. Every other key of a line is a measure and must hold a number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from prefeval.errors import InputError, UsageError
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

    def pair_values(self, measure: str) -> tuple[list[tuple[int, int]], np.ndarray]:
        """The pairs of runs (run numbers) with values of ``measure``, in order of first appearance,
        and their (P, Q) per-query values, NaN where a pair has no value on a query."""
        cells = np.array(self.pairs[measure], dtype=np.float64).reshape(-1, 4)
        query, first, second = (cells[:, c].astype(np.int64) for c in range(3))
        keys, first_seen, pair_of_cell = np.unique(first * len(self.runs) + second, return_index=True, return_inverse=True)
        order = np.argsort(first_seen)
        position = np.empty(len(order), dtype=np.int64)
        position[order] = np.arange(len(order))
        values = np.full((len(keys), len(self.qids)), np.nan)
        values[position[pair_of_cell.ravel()], query] = cells[:, 3]
        ordered = keys[order]
        return list(zip((ordered // len(self.runs)).tolist(), (ordered % len(self.runs)).tolist())), values


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

    def select_measures(self, names: Sequence[str] = ()) -> list[str]:
        """The measures asked for (``-m``, each may be a comma-separated list), checked against those
        found; every measure found when none is asked for."""
        if not names:
            return self.measures
        chosen = [name.strip() for text in names for name in text.split(",") if name.strip()]
        unknown = [name for name in chosen if name not in self.measures]
        if unknown:
            raise UsageError(f"measure(s) {', '.join(unknown)} not in {self.source}; found: {', '.join(self.measures)}")
        return list(dict.fromkeys(chosen))


def read_eval_lines(path: str) -> EvalLines:
    """Read per-query eval lines; an error names the file and line of anything malformed."""
    source = display_name(path)
    samples: dict[int, SampleScores] = {}
    measures: dict[str, None] = {}
    metric_names: set[str] = set()
    summary_only = False
    for number, record in read_jsonl(path):
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
