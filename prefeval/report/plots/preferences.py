"""``plot preferences``: a heatmap of the mean preference of every run (row) over every other run
(column) on one measure (``-m``; default: the first preference in the eval lines, else their first
measure), runs ordered by the aggregate ordering (MC4 for a preference, the mean for a metric), and
the pairs that differ significantly (``--test``, ``--correction``, ``--alpha``) marked with ``*``;
the values are :func:`~prefeval.analyses.significance.preference_matrix`'s."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from prefeval.analyses.significance import CORRECTION_NAMES, TEST_NAMES, PreferenceMatrix, preference_matrix
from prefeval.io.evallines import read_eval_lines
from prefeval.report.plots.common import PlotRequest, new_figure, one_measure_of, plot_kind

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ANNOTATED_RUNS = 12
"""Heatmap cells show their values up to this many runs (beyond, only the significance marks)."""
METHOD_NAMES = {"mc4": "MC4"}
"""How the title names the method that orders the runs, where not by its key (``mean``)."""


def read_preferences(request: PlotRequest) -> PreferenceMatrix:
    """The matrix of the one measure asked for, over the first sample of the eval lines."""
    lines = read_eval_lines(request.source)
    return preference_matrix(lines, one_measure_of(lines, request.measures), request.significance)


@plot_kind("preferences", "mean preference between every two runs, significant ones marked (eval -q lines)",
           read_preferences)
def preference_heatmap(matrix: PreferenceMatrix, request: PlotRequest) -> Figure:
    runs, means, tests = matrix.runs, matrix.means, matrix.tests
    size = 2.5 + 0.42 * len(runs)
    figure = new_figure(size + 1.2, size)
    axes = figure.add_subplot()
    limit = float(np.nanmax(np.abs(means))) if np.isfinite(means).any() else 1.0
    image = axes.imshow(np.ma.masked_invalid(means), cmap="RdBu", vmin=-(limit or 1.0), vmax=limit or 1.0)
    figure.colorbar(image, ax=axes, shrink=0.8, label=f"mean {matrix.measure} (row over column)")
    axes.set_xticks(range(len(runs)), runs, rotation=90)
    axes.set_yticks(range(len(runs)), runs)
    axes.set_facecolor("0.85")
    for i, j in zip(*np.nonzero(np.isfinite(means))):
        value = f"{means[i, j]:.2f}" if len(runs) <= ANNOTATED_RUNS else ""
        mark = "*" if matrix.significant[i, j] else ""
        if value or mark:
            strong = abs(means[i, j]) > 0.6 * limit
            axes.text(j, i, value + mark, ha="center", va="center", fontsize=8, color="white" if strong else "black")
    ordered_by = METHOD_NAMES.get(matrix.ordered_by, matrix.ordered_by)
    axes.set_title(f"{matrix.measure}: mean preference of row over column\n"
                   f"runs by {ordered_by}; * significant ({TEST_NAMES[tests.test]}, "
                   f"{CORRECTION_NAMES[tests.correction]}, "
                   f"alpha {tests.alpha})",
                   fontsize=10)
    return figure
