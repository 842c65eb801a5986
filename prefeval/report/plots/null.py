"""``plot null``: for one metric of ``prefeval null``'s lines (``-m``; default the first), the queries
sorted by their expected value under a random ranking, the band from that expectation to the
``--quantile`` threshold, and each run's observed values as dots (side by side within each query's
slot; beyond ten runs, which cannot be told apart there, the spread of the runs' values and the
median run); with runs, beside it the fraction of queries on which each run is above the threshold,
highest first. The lines are read by :func:`~prefeval.analyses.null.read_null_lines`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from prefeval.io.keys import QID, RUN
from prefeval.io.records import EXPECTED, FRACTION_ABOVE_NULL, MEASURE, QUANTILE, THRESHOLD, VALUE
from prefeval.report.plots.common import COLOURED_RUNS, PlotRequest, new_figure, one_measure, plot_kind, run_styles

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from prefeval.analyses.null import NullLines


def read_null(request: PlotRequest) -> NullLines:
    """The lines of ``prefeval null`` output."""
    from prefeval.analyses.null import read_null_lines  # with scipy: only when this kind is drawn

    return read_null_lines(request.source)


@plot_kind("null",
           "observed values against each query's random-ranking expectation and threshold (prefeval null lines)",
           read_null)
def null_baselines(lines: NullLines, request: PlotRequest) -> Figure:
    queries, observed, summaries = lines
    measure = one_measure(request.measures, lines.measures)
    nulls = sorted((r for r in queries if r[MEASURE] == measure), key=lambda r: (r[EXPECTED], r[THRESHOLD]))
    position = {record[QID]: x for x, record in enumerate(nulls)}
    runs = list(dict.fromkeys(record[RUN] for record in observed))
    styles = run_styles(runs)
    figure = new_figure(13.0 if runs else 8.0, 5.0)
    if runs:
        query_axes, run_axes = figure.subplots(1, 2, width_ratios=[3.2, 1])
    else:
        query_axes, run_axes = figure.subplots(), None
    xs = np.arange(len(nulls))
    expected = np.array([r[EXPECTED] for r in nulls])
    threshold = np.array([r[THRESHOLD] for r in nulls])
    quantile = nulls[0][QUANTILE] if nulls else 0.95
    query_axes.fill_between(xs, expected, threshold, color="0.85", step="mid",
                            label=f"expected to {quantile:g} quantile")
    query_axes.plot(xs, expected, color="0.3", linewidth=1.0, drawstyle="steps-mid",
                    label="expected under random ranking")
    query_axes.plot(xs, threshold, color="0.3", linewidth=1.0, linestyle="--", drawstyle="steps-mid", label="threshold")
    values = np.full((len(runs), len(nulls)), np.nan)
    for record in observed:
        if record[MEASURE] == measure and record[QID] in position:
            values[runs.index(record[RUN]), position[record[QID]]] = record[VALUE]
    if len(runs) <= COLOURED_RUNS:
        width = 0.8  # each query's slot holds its runs side by side, so that equal values do not hide each other
        size = float(np.clip(3000.0 / max(values.size, 1), 8.0, 30.0))  # dots as large as the slots allow
        for n, run in enumerate(runs):
            offset = (n + 0.5) / len(runs) * width - width / 2 if len(runs) > 1 else 0.0
            query_axes.scatter(xs + offset, values[n], s=size, color=styles[run].colour, marker=styles[run].marker,
                               label=run, zorder=3, linewidths=0)
    else:  # too many runs to tell apart per query: their spread, each run's fraction is on the right
        seen = ~np.isnan(values).all(axis=0)
        spread = values[:, seen]
        query_axes.vlines(xs[seen], np.nanmin(spread, axis=0), np.nanmax(spread, axis=0), color="C0", linewidth=1.2,
                          alpha=0.6, label=f"the {len(runs)} runs: lowest to highest", zorder=3)
        query_axes.scatter(xs[seen], np.nanmedian(spread, axis=0), s=10, color="C0", label="median run", zorder=4)
    query_axes.set_xlim(-0.7, len(nulls) - 0.3)
    query_axes.set_xlabel("queries, by expected value under random ranking")
    query_axes.set_ylabel(measure)
    query_axes.set_title(f"{measure}: observed values against the random-ranking null", fontsize=10)
    query_axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False,
                      markerscale=1.5)
    if run_axes is not None:
        fractions = {r[RUN]: r[FRACTION_ABOVE_NULL] for r in summaries if r[MEASURE] == measure}
        ranked = sorted(runs, key=lambda run: (-fractions.get(run, -1.0), run))  # the most often above first
        colours = [styles[run].colour for run in ranked] if len(runs) <= COLOURED_RUNS else "0.45"
        run_axes.barh(range(len(runs)), [fractions.get(run, np.nan) for run in ranked], color=colours)
        run_axes.set_yticks(range(len(runs)), ranked, fontsize=8)
        run_axes.invert_yaxis()
        run_axes.set_xlim(0, 1)
        run_axes.set_xlabel("fraction of queries")
        run_axes.set_title("above the threshold", fontsize=10)
    return figure
