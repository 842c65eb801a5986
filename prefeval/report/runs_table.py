"""``eval --format table|markdown|latex``: the evaluation as a runs × measures table.

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

import numpy as np

from prefeval.analyses.groups import better
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
from prefeval.engine.evaluation import Block, Evaluation, Summary
from prefeval.errors import UsageError
from prefeval.io.keys import MEAN, bound_keys, statistic_key
from prefeval.measures.aggregators import GEOMETRIC, SUM
from prefeval.measures.summaries import STATISTICS
from prefeval.measures.ties import EXPECTED, RANGE
from prefeval.report.tables import BETTER, WORSE, Cell, Table, number


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
    statistics = evaluation.summary_statistics
    metric_columns = [(name, statistic) for name in metrics for statistic in statistics]
    against = BaselinePairs.of(pairs, runs.index(baseline)) if baseline is not None else None
    several = evaluation.subsampling.samples > 1
    rows: list[list[Cell | str]] = []
    collected: dict[str, list[np.ndarray]] = {}
    whole_run: list[str] = []  # the measures of the whole run (gini@10, expshare@10:GROUP), after the metrics
    for result in evaluation.results():
        if isinstance(result, Block):
            if against is not None:
                for name in metrics + preferences:
                    collected.setdefault(name, []).append(against.oriented(result.preferences[name]))
            continue
        columns = [result.metrics[name] if statistic == MEAN else result.statistics[statistic_key(name, statistic)]
                   for name, statistic in metric_columns]
        whole_run = [key for key in result.metrics if key not in metrics]
        columns += [result.metrics[key] for key in whole_run]
        columns += [_preference_column(result, name, runs, pairs, against) for name in preferences]
        bounds = _tie_bounds(result, metrics, preferences, runs, pairs, against)
        columns += list(bounds.values())
        unmarked = np.full(len(runs), "", dtype=object)
        markers = [unmarked] * len(columns)
        if against is not None:  # the test compares means: the other statistics are not marked
            markers = [_markers(against, np.concatenate(collected[name], axis=1), len(runs))
                       if statistic == MEAN else unmarked for name, statistic in metric_columns]
            markers += [unmarked] * len(whole_run)
            markers += [_markers(against, np.concatenate(collected[name], axis=1), len(runs)) for name in preferences]
            markers += [unmarked] * len(bounds)
        collected.clear()
        lower_is_better = [not STATISTICS[statistic].higher_is_better for _, statistic in metric_columns]
        lower_is_better += [better(key) < 0 for key in whole_run]
        lower_is_better += [False] * (len(preferences) + len(bounds))
        best = [np.nan if np.isnan(column).all() else np.nanmin(column) if lower else np.nanmax(column)
                for column, lower in zip(columns, lower_is_better)]
        for r, run in enumerate(runs):
            labels = [str(result.sample), run] if several else [run]
            cells = [number(float(column[r]), marker[r], bool(column[r] == top))
                     for column, marker, top in zip(columns, markers, best)]
            rows.append(labels + cells)
    header = (["sample", "run"] if several else ["run"]) + [statistic_key(*column) for column in metric_columns]
    header += whole_run + preferences
    if evaluation.ties == RANGE:
        header += [key for name in metrics + preferences for key in bound_keys(name)]
    notes = _notes(metrics, preferences, baseline, len(runs), evaluation.metric_measures) + TIE_NOTES.get(
        evaluation.ties, [])
    if whole_run:
        notes.append(f"{', '.join(whole_run)}: of the whole run (every user's list), not means over queries.")
    if metrics and statistics != (MEAN,):
        notes[0] = "Metrics: " + "; ".join(f"{statistic_key('METRIC', s)}: {STATISTICS[s].description}"
                                           for s in statistics) + "."
    return Table(header, rows, labels=2 if several else 1, notes=notes)


def _preference_column(summary: Summary, name: str, runs: list[str], pairs: list[tuple[int, int]],
                       against: BaselinePairs | None) -> np.ndarray:
    """Per run: the mean preference over the baseline (NaN for the baseline itself), or over the others."""
    means = summary.preferences[name]
    return _per_run(means, -means, runs, pairs, against)


def _per_run(forward: np.ndarray, backward: np.ndarray, runs: list[str], pairs: list[tuple[int, int]],
             against: BaselinePairs | None) -> np.ndarray:
    """Per run, a pair value seen from the run (``forward[p]`` for the first run of pair p,
    ``backward[p]`` for its second): over the baseline (NaN for the baseline itself), or its mean
    over the others."""
    if against is not None:
        column = np.full(len(runs), np.nan)
        column[against.others] = np.where(against.signs > 0, forward[against.rows], backward[against.rows]) + 0.0
        return column
    matrix = np.zeros((len(runs), len(runs)))
    first, second = (np.array(side) for side in zip(*pairs))
    matrix[first, second] = forward
    matrix[second, first] = backward
    return matrix.sum(axis=1) / (len(runs) - 1)


TIE_NOTES = {
    EXPECTED: ["Expected values over uniformly random orders of the documents with equal scores."],
    RANGE: ["_ties_min, _ties_max: the lowest and highest value over all orders of the documents with equal scores."],
}


def _tie_bounds(summary: Summary, metrics: list[str], preferences: list[str], runs: list[str],
                pairs: list[tuple[int, int]], against: BaselinePairs | None) -> dict[str, np.ndarray]:
    """Under ``--ties range``, the columns of every measure's bounds over tie orders, by key: a
    metric's, and a preference's seen from each run (the minimum of a pair read the other way
    round is minus its maximum; a run's worst order is the same in all its pairs, so the bounds of
    its mean over the others are the means of the bounds)."""
    columns = {}
    for name in metrics + preferences:
        low_key, high_key = bound_keys(name)
        if name in metrics and low_key in summary.metric_extras:
            columns[low_key], columns[high_key] = summary.metric_extras[low_key], summary.metric_extras[high_key]
        elif name in preferences and low_key in summary.pair_extras:
            low, high = summary.pair_extras[low_key], summary.pair_extras[high_key]
            columns[low_key] = _per_run(low, -high, runs, pairs, against)
            columns[high_key] = _per_run(high, -low, runs, pairs, against)
    return columns


def _markers(against: BaselinePairs, values: np.ndarray, num_runs: int) -> np.ndarray:
    """Per run, ↑/↓ (as BETTER/WORSE) where it differs significantly from the baseline, by the
    default test and correction of ``prefeval significance --baseline`` (no intervals)."""
    stats = compare_pairs(values, SignificanceOptions(bootstrap=None))
    direction = np.where(stats.mean > 0, BETTER, WORSE)
    marker = np.full(num_runs, "", dtype=object)
    marker[against.others] = np.where(stats.significant, direction, "")
    return marker


def _notes(metrics: list[str], preferences: list[str], baseline: str | None, num_runs: int,
           measures: list | None = None) -> list[str]:
    notes = []
    if metrics:
        aggregators = {m.name: m.aggregator for m in measures or []}
        summed = [name for name in metrics if aggregators.get(name) is SUM]
        geometric = [name for name in metrics if aggregators.get(name) is GEOMETRIC]
        notes.append("Metrics: mean over queries" + (f"; {', '.join(summed)}: sum" if summed else "")
                     + (f"; {', '.join(geometric)}: geometric mean" if geometric else "") + ".")
    if preferences and baseline is None:
        notes.append("Preferences: the run's mean preference over the other runs.")
    if baseline is not None:
        if preferences:
            notes.append(f"Preferences: the run's mean preference over {baseline}.")
        notes.append(f"↑/↓: significantly better/worse than {baseline} ({TEST_NAMES[DEFAULT_TEST]}, "
                     f"{CORRECTION_NAMES[DEFAULT_CORRECTION]} across the {num_runs - 1} runs compared, "
                     f"alpha {DEFAULT_ALPHA}).")
    return notes
