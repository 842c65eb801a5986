"""``plot pr``: each run's interpolated precision-recall curve from eval lines (``eval`` with ``-q``
or without): every ``iprec`` measure of the input (interpolated precision at a recall level; ``-m``
keeps some of them), its recall level on the x axis, its value on the y axis, both from 0 to 1.
Without ``query`` (``--query``), the mean over the queries: the summary lines, or the mean of the
per-query lines where there is no summary line; with it, that query's values from the per-query
lines (:func:`~prefeval.analyses.precision_recall.interpolated_precision_curves`). Measures of the
family that differ in more than the recall level (``iprec@r,0.5``, trec_eval 10's rounding of the
levels, beside the default ``iprec@r``) are separate curves, told apart by line style."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from prefeval.analyses.precision_recall import Curves, interpolated_precision_curves
from prefeval.io.source import display_name
from prefeval.measures import select_available
from prefeval.measures.interpolated import InterpolatedPrecision
from prefeval.report.plots.common import PlotRequest, new_figure, plot_kind, run_styles

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def read_curves(request: PlotRequest) -> Curves:
    """The curves of the first sample of the eval lines: the mean over the queries, or ``query``'s."""
    return interpolated_precision_curves(request.source, request.query)


PR_LINE_STYLES = ("-", "--", ":", "-.")
"""Line styles of the curves of one run when the input has iprec measures that differ in more than
the recall level (one style per variant; the variant of the lowest level, default parameters first, solid)."""


@plot_kind("pr", "each run's interpolated precision-recall curve, mean or one query (eval lines with iprec@r)",
           read_curves)
def precision_recall_curves(curves: Curves, request: PlotRequest) -> Figure:
    source = display_name(request.source)
    keys = select_available(request.measures, list(curves.measures), source)
    measures = sorted((curves.measures[key] for key in keys), key=lambda m: (m.param("recall"), m.name))
    variants = list(dict.fromkeys(_variant(measure) for measure in measures))
    runs = curves.runs
    styles = run_styles(runs)
    figure = new_figure(7.0, 4.6)
    axes = figure.add_subplot()
    for run in runs:
        for n, variant in enumerate(variants):
            mine = [m for m in measures if _variant(m) == variant]
            label = run if len(variants) == 1 else f"{run} · {_variant_text(variant)}"
            axes.plot([m.param("recall") for m in mine], [curves.values[run].get(m.name, np.nan) for m in mine],
                      color=styles[run].colour, marker=styles[run].marker, markersize=4.0, linewidth=1.4,
                      linestyle=PR_LINE_STYLES[n % len(PR_LINE_STYLES)], label=label, clip_on=False)
    axes.set_xlim(0.0, 1.0)
    axes.set_ylim(0.0, 1.0)
    axes.set_xticks(np.linspace(0.0, 1.0, 11))
    axes.set_yticks(np.linspace(0.0, 1.0, 11))
    axes.grid(color="0.9", linewidth=0.6)
    axes.set_axisbelow(True)
    axes.set_xlabel("recall")
    axes.set_ylabel("interpolated precision")
    where = f"query {request.query}" if request.query is not None else "mean over queries"
    rounding = f" ({_variant_text(variants[0])})" if len(variants) == 1 and variants[0] else ""
    levels = len({measure.param("recall") for measure in measures})
    axes.set_title(f"interpolated precision at {levels} recall levels{rounding}, {where}", fontsize=10)
    axes.legend(fontsize=7, ncol=1 + len(runs) * len(variants) // 25, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                borderaxespad=0.0, frameon=False, title="run", title_fontsize=8)
    return figure


def _variant(measure: InterpolatedPrecision) -> tuple[str, ...]:
    """The parameters of an iprec measure other than its recall level, as written where not the
    default (``round_from=0.5``, ``rel=2``): the measures of one curve share them."""
    return tuple(f"{param.name}={param.written(value)}" for param, value in
                 zip(measure.all_parameters(), measure.values)
                 if param.name != "recall" and value is not None and value != param.default)


def _variant_text(variant: tuple[str, ...]) -> str:
    """How a legend names the curves of one variant: ``iprec@r``, ``iprec@r, round_from=0.5``."""
    return ", ".join(("iprec@r", *variant))
