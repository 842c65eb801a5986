"""``plot sampled``: for one metric of ``prefeval sampled``'s lines (``-m``; default the first), each
run's expected sampled value against the sample size M (log scale), its exact value as a dotted
line, and beside it Kendall's τ between the exact and the sampled orderings of the runs for every
metric of the input; the lines are read by
:func:`~prefeval.analyses.sampled_metrics.read_sampled_lines`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from prefeval.io.keys import RUN
from prefeval.io.records import EXACT, KENDALL_TAU, MEASURE, SAMPLE_SIZE, SAMPLED
from prefeval.report.plots.common import MARKERS, PlotRequest, new_figure, one_measure, plot_kind, run_styles, tau_floor

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from prefeval.analyses.sampled_metrics import SampledLines


def read_sampled(request: PlotRequest) -> SampledLines:
    """The summary lines of ``prefeval sampled`` output."""
    from prefeval.analyses.sampled_metrics import read_sampled_lines  # with scipy: only when this kind is drawn

    return read_sampled_lines(request.source)


@plot_kind("sampled", "exact metric against its expected sampled value, by sample size (prefeval sampled lines)",
           read_sampled)
def sampled_metrics(lines: SampledLines, request: PlotRequest) -> Figure:
    means, consistency, measures = lines.means, lines.consistency, lines.measures
    measure = one_measure(request.measures, measures)
    runs = list(dict.fromkeys(record[RUN] for record in means))
    sizes = sorted({record[SAMPLE_SIZE] for record in means})
    styles = run_styles(runs)
    figure = new_figure(12.0, 4.8)
    values_axes, tau_axes = figure.subplots(1, 2, width_ratios=[3, 2])
    for run in runs:
        mine = sorted((r for r in means if r[RUN] == run and r[MEASURE] == measure), key=lambda r: r[SAMPLE_SIZE])
        style = styles[run]
        values_axes.plot([r[SAMPLE_SIZE] for r in mine], [r[SAMPLED] for r in mine], marker=style.marker,
                         markersize=4.5, color=style.colour, label=run)
        values_axes.axhline(mine[0][EXACT], color=style.colour, linestyle=":", linewidth=0.8)
    values_axes.set_xscale("log")
    values_axes.set_xlabel("sampled irrelevant items (M)")
    values_axes.set_ylabel(f"mean {measure}")
    values_axes.set_title(f"{measure}: expected sampled value (markers) and exact value (dotted)", fontsize=10)
    values_axes.legend(fontsize=7, ncol=1 + len(runs) // 20, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                       borderaxespad=0.0, frameon=False, title="run", title_fontsize=8)
    taus = []
    for n, name in enumerate(measures):
        ordered = sorted((r for r in consistency if r[MEASURE] == name), key=lambda r: r[SAMPLE_SIZE])
        taus += [r[KENDALL_TAU] for r in ordered if r[KENDALL_TAU] is not None]
        tau_axes.plot([r[SAMPLE_SIZE] for r in ordered], [r[KENDALL_TAU] for r in ordered], marker=MARKERS[n % 10],
                      markersize=4.5, color=f"C{n % 10}", linewidth=2.2 if name == measure else 1.0, label=name)
    tau_axes.set_xscale("log")
    tau_axes.set_ylim(tau_floor(np.array(taus, dtype=np.float64)) - 0.02, 1.02)
    tau_axes.axhline(1.0, color="0.6", linewidth=0.6)
    tau_axes.set_xlabel("M")
    tau_axes.set_ylabel("Kendall's τ")
    tau_axes.set_title("ordering of the runs: exact against sampled", fontsize=10)
    tau_axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False,
                    title="metric", title_fontsize=8)
    for axes in (values_axes, tau_axes):
        axes.set_xticks(sizes, [str(size) for size in sizes])
        axes.minorticks_off()
    return figure
