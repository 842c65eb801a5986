"""``plot orderings``: how the measures (``-m``; default: every measure in the eval lines) order the
runs: a bump chart of each run's rank under every measure (MC4 for preferences, the mean for metrics;
ties share a rank) beside the matrix of Kendall's τ (τ-b with ties) between the orderings; the values
are :func:`~prefeval.analyses.aggregate.compare_orderings`'."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from prefeval.analyses.aggregate import OrderingComparison, compare_orderings
from prefeval.report.plots.common import PlotRequest, new_figure, plot_kind, run_styles, tau_floor

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def read_orderings(request: PlotRequest) -> OrderingComparison:
    """The orderings of the measures asked for, over the first sample of the eval lines."""
    return compare_orderings(request.source, request.measures)


@plot_kind("orderings", "ranks of the runs under each measure, and Kendall's tau (eval -q lines)", read_orderings)
def ordering_comparison(comparison: OrderingComparison, request: PlotRequest) -> Figure:
    measures, methods, runs, ranks, tau = comparison
    count = len(measures)
    bump_width, tau_width = 3.0 + 0.8 * max(count, 2), 2.2 + 0.45 * count
    figure = new_figure(bump_width + tau_width, max(4.0, 1.5 + max(0.3 * len(runs), 0.45 * count)))
    bump, tau_axes = figure.subplots(1, 2, width_ratios=[bump_width, tau_width])
    styles = run_styles(runs)
    for run in runs:
        xs = [x for x in range(count) if run in ranks[x]]
        bump.plot(xs, [ranks[x][run] for x in xs], marker=styles[run].marker, markersize=4.5,
                  color=styles[run].colour, linewidth=1.4)
    right = bump.twinx()
    for axes, x, label in ((bump, 0, "{runs}  {rank}"), (right, count - 1, "{rank}  {runs}")):
        groups = _runs_by_rank(ranks[x])
        axes.set_ylim(len(runs) + 0.5, 0.5)
        axes.set_yticks(list(groups), [label.format(runs=", ".join(g), rank=r) for r, g in groups.items()], fontsize=8)
        for text, group in zip(axes.get_yticklabels(), groups.values()):
            text.set_color(styles[group[0]].colour if len(group) == 1 else "black")
        axes.tick_params(axis="y", length=0)
        axes.spines[["top", "left", "right"]].set_visible(False)
    bump.set_xticks(range(count), [f"{m}\n{methods[m]}" for m in measures], fontsize=8)
    bump.set_xlim(-0.3, count - 1 + 0.3)
    bump.set_title("rank of each run under each measure (1 = best)", fontsize=10)

    low = tau_floor(tau)
    image = tau_axes.imshow(np.ma.masked_invalid(tau), cmap="viridis", vmin=low, vmax=1.0)
    for a, b in zip(*np.nonzero(np.isfinite(tau))):
        dark = (tau[a, b] - low) / (1.0 - low) < 0.6 if low < 1.0 else False
        tau_axes.text(b, a, f"{tau[a, b]:.2f}", ha="center", va="center", fontsize=8,
                      color="white" if dark else "black")
    tau_axes.set_xticks(range(count), measures, rotation=90, fontsize=8)
    tau_axes.set_yticks(range(count), measures, fontsize=8)
    tau_axes.set_title("Kendall's τ between orderings", fontsize=10)
    figure.colorbar(image, ax=tau_axes, shrink=0.7, label="Kendall's τ")
    return figure


def _runs_by_rank(ranks: dict[str, int]) -> dict[int, list[str]]:
    """Runs grouped by rank (tied runs share a label), ranks ascending."""
    groups: dict[int, list[str]] = {}
    for run, rank in sorted(ranks.items(), key=lambda item: (item[1], item[0])):
        groups.setdefault(rank, []).append(run)
    return groups
