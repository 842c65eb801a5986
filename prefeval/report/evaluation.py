"""``eval --format``: the evaluation as JSON lines, trec_eval text, or a runs × measures table.

The table has a row per run (per sample and run when there are several samples) and a column per
measure, in the order asked for:

* a metric's column holds its mean over the queries;
* a preference's column holds, without a baseline, the run's mean preference over the other runs,
  (1 / (R − 1)) Σ_{j ≠ run} mean pref(run, j) (pref(j, run) = −pref(run, j)); with ``baseline``,
  its mean preference over the baseline (blank on the baseline's own row);
* with ``baseline``, a value is marked ↑ (↓) when the run is significantly better (worse) than the
  baseline on that measure: a paired t-test of the per-query deltas (metrics) or preferences, Holm's
  correction across the runs compared with the baseline, alpha 0.05 (the defaults of
  ``prefeval significance --baseline``);
* the best value of each column (per sample) is emphasised.
"""

from __future__ import annotations

from typing import BinaryIO

import numpy as np

from prefeval.analyses.significance import (
    CORRECTION_NAMES,
    DEFAULT_ALPHA,
    DEFAULT_CORRECTION,
    DEFAULT_TEST,
    TEST_NAMES,
    BaselinePairs,
    SignificanceOptions,
    compare_pairs,
)
from prefeval.errors import UsageError
from prefeval.evaluation import Block, Evaluation, Summary
from prefeval.report.eval_lines import evaluation_lines, evaluation_records
from prefeval.report.formats import TABLE_FORMATS, check_format, write_lines
from prefeval.report.tables import BETTER, WORSE, Cell, Table, number, render
from prefeval.report.trec_eval import trec_eval_lines


def write_evaluation(evaluation: Evaluation, stream: BinaryIO, fmt: str = "jsonl", per_query: bool = False,
                     summary: bool = True, baseline: str | None = None) -> None:
    """Write ``evaluation`` to ``stream`` in format ``fmt`` (see :mod:`prefeval.report.formats`)."""
    check_format(fmt)
    if fmt in TABLE_FORMATS:
        if per_query or not summary:
            raise UsageError(f"--format {fmt} shows the means of the summary: drop -q and -n, or use jsonl or tsv")
        stream.write(render(evaluation_table(evaluation, baseline), fmt).encode())
        return
    if baseline is not None:
        raise UsageError(f"--baseline marks significance in the table formats ({', '.join(TABLE_FORMATS)}), "
                         f"not in {fmt}")
    if fmt == "jsonl":
        for chunk in evaluation_lines(evaluation, per_query, summary):
            stream.write(chunk)
        return
    records = evaluation_records(evaluation, per_query=per_query, summary=summary)
    several_runs = len(evaluation.run_ids) > 1
    write_lines(trec_eval_lines(records, run_column=several_runs, sample_column=evaluation.subsampling.samples > 1),
                stream)


def evaluation_table(evaluation: Evaluation, baseline: str | None = None) -> Table:
    """The runs × measures table of ``evaluation`` (see the module docstring)."""
    runs = evaluation.run_ids
    if baseline is not None and baseline not in runs:
        raise UsageError(f"baseline {baseline!r} is not one of the runs: {', '.join(runs)}")
    pairs = evaluation.pairs
    if baseline is not None and not pairs:
        raise UsageError("--baseline needs two or more runs")
    metrics = [m.name for m in evaluation.metric_measures]
    preferences = [m.name for m in evaluation.preference_measures] if pairs else []
    against = BaselinePairs.of(pairs, runs.index(baseline)) if baseline is not None else None
    several = evaluation.subsampling.samples > 1
    rows: list[list[Cell | str]] = []
    collected: dict[str, list[np.ndarray]] = {}
    for result in evaluation.results():
        if isinstance(result, Block):
            if against is not None:
                for name in metrics + preferences:
                    collected.setdefault(name, []).append(against.oriented(result.preferences[name]))
            continue
        columns = [result.metrics[name] for name in metrics]
        columns += [_preference_column(result, name, runs, pairs, against) for name in preferences]
        markers = [np.full(len(runs), "", dtype=object)] * len(columns)
        if against is not None:
            markers = [_markers(against, np.concatenate(collected[name], axis=1), len(runs))
                       for name in metrics + preferences]
        collected.clear()
        best = [np.nanmax(column) if not np.isnan(column).all() else np.nan for column in columns]
        for r, run in enumerate(runs):
            labels = [str(result.sample), run] if several else [run]
            cells = [number(float(column[r]), marker[r], bool(column[r] == top))
                     for column, marker, top in zip(columns, markers, best)]
            rows.append(labels + cells)
    header = (["sample", "run"] if several else ["run"]) + metrics + preferences
    return Table(header, rows, labels=2 if several else 1, notes=_notes(metrics, preferences, baseline, len(runs)))


def _preference_column(summary: Summary, name: str, runs: list[str], pairs: list[tuple[int, int]],
                       against: BaselinePairs | None) -> np.ndarray:
    """Per run: the mean preference over the baseline (NaN for the baseline itself), or over the others."""
    means = summary.preferences[name]
    if against is not None:
        column = np.full(len(runs), np.nan)
        column[against.others] = against.oriented(means[:, None])[:, 0]
        return column
    matrix = np.zeros((len(runs), len(runs)))
    first, second = (np.array(side) for side in zip(*pairs))
    matrix[first, second] = means
    matrix[second, first] = -means
    return matrix.sum(axis=1) / (len(runs) - 1)


def _markers(against: BaselinePairs, values: np.ndarray, num_runs: int) -> np.ndarray:
    """Per run, ↑/↓ (as BETTER/WORSE) where it differs significantly from the baseline, by the
    default test and correction of ``prefeval significance --baseline`` (no intervals)."""
    stats = compare_pairs(values, SignificanceOptions(bootstrap=None))
    direction = np.where(stats.mean > 0, BETTER, WORSE)
    marker = np.full(num_runs, "", dtype=object)
    marker[against.others] = np.where(stats.significant, direction, "")
    return marker


def _notes(metrics: list[str], preferences: list[str], baseline: str | None, num_runs: int) -> list[str]:
    notes = []
    if metrics:
        notes.append("Metrics: mean over queries.")
    if preferences and baseline is None:
        notes.append("Preferences: the run's mean preference over the other runs.")
    if baseline is not None:
        if preferences:
            notes.append(f"Preferences: the run's mean preference over {baseline}.")
        notes.append(f"↑/↓: significantly better/worse than {baseline} ({TEST_NAMES[DEFAULT_TEST]}, "
                     f"{CORRECTION_NAMES[DEFAULT_CORRECTION]} across the {num_runs - 1} runs compared, "
                     f"alpha {DEFAULT_ALPHA}).")
    return notes
