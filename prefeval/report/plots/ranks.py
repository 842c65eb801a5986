"""``plot ranks``: the rank intervals of ``aggregate --bootstrap`` (read by
:func:`~prefeval.analyses.bootstrap.read_rank_intervals`), a panel per measure and method (``-m``: the
measures; default every one in the input), runs best first, each run's 95% rank interval over the
resamples of the queries as a line, its rank over all queries as a dot, the probability of each rank
as shading, and the tiers separated and labelled."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from prefeval.analyses.bootstrap import LEVEL, read_rank_intervals
from prefeval.analyses.orderings import higher_is_better
from prefeval.io.keys import RUN
from prefeval.io.records import (
    MEASURE,
    METHOD,
    RANK,
    RANK_HIGH,
    RANK_LOW,
    RANK_PROBABILITIES,
    RESAMPLES,
    TIER,
)
from prefeval.io.source import display_name
from prefeval.measures import select_available
from prefeval.report.plots.common import PlotRequest, new_figure, plot_kind

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def read_ranks(request: PlotRequest) -> list[dict]:
    """The rank intervals of the first sample of ``aggregate --bootstrap`` output."""
    return read_rank_intervals(request.source)


@plot_kind("ranks", "each run's rank interval over resamples of the queries, and tiers (aggregate --bootstrap lines)",
           read_ranks)
def rank_intervals(records: list[dict], request: PlotRequest) -> Figure:
    keys = list(dict.fromkeys(record[MEASURE] for record in records))
    chosen = select_available(request.measures, keys, display_name(request.source))
    panels: dict[tuple[str, str], list[dict]] = {}
    for record in records:
        if record[MEASURE] in chosen:
            panels.setdefault((record[MEASURE], record[METHOD]), []).append(record)
    panels = {key: panels[key] for measure in chosen for key in panels if key[0] == measure}
    num_runs = max(len(rows) for rows in panels.values())
    columns = len(panels) if len(panels) <= 4 else 3
    rows_of_panels = -(-len(panels) // columns)
    width, height = 3.4 * columns + 1.0, (1.3 + 0.24 * num_runs) * rows_of_panels + 0.6
    figure = new_figure(width, height)
    grid = figure.subplots(rows_of_panels, columns, squeeze=False)
    image = None
    for axes, ((measure, method), rows) in zip(grid.ravel(), panels.items()):
        image = _rank_panel(axes, measure, method, rows)
    for axes in grid.ravel()[len(panels):]:
        axes.set_visible(False)
    resamples = sorted({record[RESAMPLES] for record in records})
    figure.suptitle(f"rank over all queries (dot), {LEVEL:.0%} interval over {', '.join(map(str, resamples))} "
                    "resamples of the queries (line), probability of each rank (shade)", fontsize=10)
    figure.colorbar(image, ax=grid.ravel().tolist(), shrink=0.6, label="P(rank)", aspect=25, pad=0.01)
    return figure


def _rank_panel(axes, measure: str, method: str, rows: list[dict]):
    """One ordering's runs, best first: the shaded probabilities of each rank, the interval, the rank
    over all queries, and the tiers (separated by lines, named on the right)."""
    count = len(rows)
    ranks = max(len(row[RANK_PROBABILITIES]) for row in rows)
    probabilities = np.zeros((count, ranks))
    for y, row in enumerate(rows):
        probabilities[y, :len(row[RANK_PROBABILITIES])] = row[RANK_PROBABILITIES]
    image = axes.imshow(probabilities, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest",
                        extent=(0.5, ranks + 0.5, count - 0.5, -0.5))
    ys = np.arange(count)
    low = np.array([row[RANK_LOW] for row in rows])
    high = np.array([row[RANK_HIGH] for row in rows])
    axes.hlines(ys, low - 0.3, high + 0.3, color="black", linewidth=1.3)
    axes.scatter([row[RANK] for row in rows], ys, s=22, color="white", edgecolors="black", linewidths=1.0, zorder=3)
    tiers = [row[TIER] for row in rows]
    transform = axes.get_yaxis_transform()
    for tier in dict.fromkeys(tiers):
        members = [y for y, t in enumerate(tiers) if t == tier]
        if members[0] > 0:
            axes.axhline(members[0] - 0.5, color="0.35", linewidth=0.8, linestyle=(0, (4, 2)))
        axes.text(1.02, (members[0] + members[-1]) / 2, f"tier {tier}", transform=transform, ha="left",
                  va="center", fontsize=7)
    axes.set_yticks(ys, [row[RUN] for row in rows], fontsize=7)
    axes.set_xticks(range(1, ranks + 1) if ranks <= 10 else [1] + list(range(5, ranks + 1, 5)))
    axes.set_xticks(range(1, ranks + 1), minor=True)
    axes.tick_params(axis="x", labelsize=7)
    axes.set_xlim(0.5, ranks + 0.5)
    axes.set_ylim(count - 0.5, -0.5)
    axes.set_xlabel("rank", fontsize=8)
    direction = "" if higher_is_better(method) else " (lowest first)"
    axes.set_title(f"{measure} · {method}{direction}", fontsize=9)
    return image
