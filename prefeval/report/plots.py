"""Figures for papers: ``prefeval plot KIND INPUT -o FILE.png|FILE.svg|FILE.pdf``.

Every kind of plot is one function, registered with :func:`plot_kind` under its name: it reads its
input (the request's ``source``) and returns a matplotlib figure. :func:`render_plot` saves it. Adding
a kind means adding one such function here; the command line lists the registry.

matplotlib is an optional dependency (``pip install matplotlib``, or ``pip install '.[plot]'`` from a
checkout of prefeval), imported only when a plot is drawn; without it the request fails with one line
saying how to install it. Figures are drawn on a bare :class:`matplotlib.figure.Figure` (no pyplot,
no global state) and saved without dates or random ids, so the same input gives the same bytes.

Every figure is meant to go into a paper as it is: each kind picks a size for its content (the
request's ``width`` and ``height``, in inches, override it), raster images are written at ``dpi``
(:data:`DEFAULT_DPI`), legends sit outside the data, axis limits follow the data (Kendall's τ from
its smallest value to 1, not from −1), and runs are told apart by colour alone up to ten runs and by
colour and marker beyond (:func:`run_styles`), or labelled directly where they end.

Kinds:

* ``preferences``: reads eval lines (``eval -q``); a heatmap of the mean preference of every run
  (row) over every other run (column) on one measure (``-m``; default: the first preference in the
  file, else its first measure), runs ordered by the aggregate ordering (MC4 for a preference, the
  mean for a metric), and the pairs that differ significantly (``--test``, ``--correction``,
  ``--alpha``) marked with ``*``.
* ``orderings``: reads eval lines; how the measures (``-m``; default: every measure in the file)
  order the runs: a bump chart of each run's rank under every measure (MC4 for preferences, the mean
  for metrics; ties share a rank) beside the matrix of Kendall's τ (τ-b with ties) between the
  orderings.

* ``sampled``: reads the lines of ``prefeval sampled``; for one metric (``-m``; default the first),
  each run's expected sampled value against the sample size M (log scale), its exact value as a
  dotted line, and beside it Kendall's τ between the exact and the sampled orderings of the runs for
  every metric of the input.
* ``null``: reads the lines of ``prefeval null``; for one metric, the queries sorted by their
  expected value under a random ranking, the band from that expectation to the ``--quantile``
  threshold, and each run's observed values as dots (side by side within each query's slot; beyond
  ten runs, which cannot be told apart there, the spread of the runs' values and the median run); with
  runs, beside it the fraction of queries on which each run is above the threshold, highest first.
* ``ranks``: reads the lines of ``aggregate --bootstrap``; a panel per measure and method (``-m``:
  the measures; default every one in the input), runs best first, each run's 95% rank interval over
  the resamples of the queries as a line, its rank over all queries as a dot, the probability of each
  rank as shading, and the tiers separated and labelled.

* ``pr``: reads eval lines (``eval`` with ``-q`` or without); each run's interpolated precision-recall
  curve: every ``iprec`` measure of the input (interpolated precision at a recall level; ``-m``
  keeps some of them), its recall level on the x axis, its value on the y axis, both from 0 to 1.
  Without ``query`` (``--query``), the mean over the queries: the summary lines, or the mean of the
  per-query lines where there is no summary line; with it, that query's values from the per-query
  lines. Measures of the family that differ in more than the recall level (``iprec@r,0.5``, trec_eval
  10's rounding of the levels, beside the default ``iprec@r``) are separate curves, told apart by
  line style.

``preferences``, ``orderings``, ``ranks`` and ``pr`` plot the first sample of their input.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from prefeval.analyses.aggregate import aggregate
from prefeval.analyses.bootstrap import LEVEL
from prefeval.analyses.orderings import competition_ranks, higher_is_better, kendall_tau
from prefeval.analyses.significance import (
    CORRECTION_NAMES,
    TEST_NAMES,
    SignificanceOptions,
    pairwise_significance,
)
from prefeval.errors import InputError, UsageError
from prefeval.io.evallines import EvalLines, read_eval_lines
from prefeval.io.jsonl import output_stream, read_records
from prefeval.io.keys import LABEL_KEYS, METRIC, QID, RUN, RUNI, SAMPLE, SUMMARY_QID, TYPE
from prefeval.io.records import RANK_INTERVAL, aggregate_record_kind
from prefeval.io.source import display_name
from prefeval.measures import parse_measure, select_available
from prefeval.measures.interpolated import InterpolatedPrecision

if TYPE_CHECKING:
    from matplotlib.figure import Figure

IMAGE_FORMATS = ("png", "svg", "pdf")
INSTALL_HINT = "plots need matplotlib: pip install matplotlib (or pip install '.[plot]' in a checkout of prefeval)"
ANNOTATED_RUNS = 12
"""Heatmap cells show their values up to this many runs (beyond, only the significance marks)."""
DEFAULT_DPI = 200
"""Resolution of PNG images (and of the images inside PDF and SVG figures), in dots per inch."""
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")
COLOURED_RUNS = 10
"""Up to this many runs are told apart by colour alone; beyond, by colour and marker."""


@dataclass(frozen=True)
class PlotRequest:
    """What a plot kind is asked to draw: its input and the options of the command (``width`` and
    ``height`` in inches, None for the kind's own size; ``dpi`` of raster output; ``query``: the one
    query a kind draws instead of the mean over queries, None for the mean; only ``pr`` reads it)."""

    source: str
    measures: tuple[str, ...] = ()
    significance: SignificanceOptions = SignificanceOptions()
    width: float | None = None
    height: float | None = None
    dpi: float = DEFAULT_DPI
    query: str | None = None

    def __post_init__(self):
        if self.query is not None and (not isinstance(self.query, str) or not self.query.strip()):
            raise UsageError(f"query must be a query id, not {self.query!r}")
        if self.query == SUMMARY_QID:
            raise UsageError(f"query {SUMMARY_QID!r} names the summary lines: leave out the query to plot the mean")
        for name, low, high in (("width", 1.0, 100.0), ("height", 1.0, 100.0), ("dpi", 10.0, 2400.0)):
            value = getattr(self, name)
            if value is None and name != "dpi":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise UsageError(f"{name} must be a number from {low:g} to {high:g}, not {value!r}")


class RunStyle(NamedTuple):
    colour: str
    marker: str


def run_styles(runs: list[str]) -> dict[str, RunStyle]:
    """A colour and a marker per run, in order: up to ten runs, the ten colours of ``tab10`` (dark
    enough for text) and one marker; beyond, the same colours with ten markers, combined so that no
    two of the first 100 runs look alike (run n: colour n mod 10, marker (n + n div 10) mod 10)."""
    if len(runs) <= COLOURED_RUNS:
        return {run: RunStyle(f"C{n}", MARKERS[0]) for n, run in enumerate(runs)}
    return {run: RunStyle(f"C{n % 10}", MARKERS[(n + n // 10) % len(MARKERS)]) for n, run in enumerate(runs)}


class PlotKind(NamedTuple):
    name: str
    summary: str
    draw: Callable[[PlotRequest], Figure]


PLOT_KINDS: dict[str, PlotKind] = {}
"""Every kind of plot, by name, in registration order."""


def plot_kind(name: str, summary: str):
    """Decorator: register ``draw(request) -> Figure`` as the plot kind ``name``."""
    def register(draw: Callable[[PlotRequest], Figure]):
        if name in PLOT_KINDS:
            raise ValueError(f"plot kind {name} registered twice")
        PLOT_KINDS[name] = PlotKind(name, summary, draw)
        return draw
    return register


def render_plot(kind: str, request: PlotRequest, output: str) -> None:
    """Draw the plot ``kind`` and save it to ``output``, in the format its suffix names (atomically)."""
    suffix = Path(output).suffix.lower().lstrip(".")
    if suffix not in IMAGE_FORMATS:
        raise UsageError(f"{output}: the image file must end in {', '.join('.' + f for f in IMAGE_FORMATS)}")
    if kind not in PLOT_KINDS:
        raise UsageError(f"unknown plot kind {kind!r}; choose one of {', '.join(PLOT_KINDS)}")
    matplotlib = _matplotlib()
    figure = PLOT_KINDS[kind].draw(request)
    if request.width is not None or request.height is not None:
        width, height = figure.get_size_inches()
        figure.set_size_inches(request.width or width, request.height or height)
    metadata = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[suffix]
    with matplotlib.rc_context({"svg.hashsalt": "prefeval"}), output_stream(output) as stream:
        figure.savefig(stream, format=suffix, metadata=metadata, dpi=request.dpi)


def new_figure(width: float, height: float) -> Figure:
    """A bare figure of the given size in inches (matplotlib imported here, and only here)."""
    _matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return matplotlib


@plot_kind("preferences", "mean preference between every two runs, significant ones marked (eval -q lines)")
def preference_heatmap(request: PlotRequest) -> Figure:
    lines = read_eval_lines(request.source)
    measure = _one_measure(lines, request.measures)
    summary = next(aggregate(lines, [measure]))[measure]
    runs = summary["mc4" if summary["type"] == "preference" else "mean"]
    first_sample = lines.samples[0].sample
    tests = request.significance  # the heatmap shows no intervals: resample only for the bootstrap test
    tests = tests if tests.test == "bootstrap" else dataclasses.replace(tests, bootstrap=None)
    records = itertools.takewhile(
        lambda record: record["sample"] == first_sample,
        pairwise_significance(lines, [measure], tests),
    )
    position = {run: p for p, run in enumerate(runs)}
    means = np.full((len(runs), len(runs)), np.nan)
    significant = np.zeros((len(runs), len(runs)), dtype=bool)
    for record in records:
        if "runi" in record and record["runi"] in position and record["runj"] in position:
            i, j = position[record["runi"]], position[record["runj"]]
            means[i, j], means[j, i] = record["mean"], -record["mean"]
            significant[i, j] = significant[j, i] = record["significant"]

    size = 2.5 + 0.42 * len(runs)
    figure = new_figure(size + 1.2, size)
    axes = figure.add_subplot()
    limit = float(np.nanmax(np.abs(means))) if np.isfinite(means).any() else 1.0
    image = axes.imshow(np.ma.masked_invalid(means), cmap="RdBu", vmin=-(limit or 1.0), vmax=limit or 1.0)
    figure.colorbar(image, ax=axes, shrink=0.8, label=f"mean {measure} (row over column)")
    axes.set_xticks(range(len(runs)), runs, rotation=90)
    axes.set_yticks(range(len(runs)), runs)
    axes.set_facecolor("0.85")
    for i, j in zip(*np.nonzero(np.isfinite(means))):
        value = f"{means[i, j]:.2f}" if len(runs) <= ANNOTATED_RUNS else ""
        mark = "*" if significant[i, j] else ""
        if value or mark:
            strong = abs(means[i, j]) > 0.6 * limit
            axes.text(j, i, value + mark, ha="center", va="center", fontsize=8, color="white" if strong else "black")
    ordered_by = "MC4" if summary["type"] == "preference" else "mean"
    axes.set_title(f"{measure}: mean preference of row over column\n"
                   f"runs by {ordered_by}; * significant ({TEST_NAMES[tests.test]}, "
                   f"{CORRECTION_NAMES[tests.correction]}, "
                   f"alpha {tests.alpha})",
                   fontsize=10)
    return figure


@plot_kind("orderings", "ranks of the runs under each measure, and Kendall's tau (eval -q lines)")
def ordering_comparison(request: PlotRequest) -> Figure:
    lines = read_eval_lines(request.source)
    measures = select_available(request.measures, lines.measures, lines.source)
    record = next(aggregate(lines, measures))
    methods = {m: ("mc4" if record[m]["type"] == "preference" else "mean") for m in measures}
    orderings = [record[m][methods[m]] for m in measures]
    scores = [record[m]["scores"][methods[m]] for m in measures]
    ranks = [competition_ranks(s) for s in scores]
    runs = orderings[0]

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

    tau = np.full((count, count), np.nan)
    for a in range(count):
        for b in range(count):
            if sorted(orderings[a]) == sorted(orderings[b]):
                tau[a, b] = kendall_tau(orderings[a], orderings[b], scores[a], scores[b])
    low = _tau_floor(tau)
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


def _tau_floor(values: np.ndarray) -> float:
    """The lower limit of a scale of Kendall's τ ending at 1: the smallest value, rounded down to a
    tenth (−1 at the lowest; 0.9 when every value is 1)."""
    finite = values[np.isfinite(values)]
    smallest = float(finite.min()) if len(finite) else -1.0
    return max(-1.0, min(0.9, np.floor(smallest * 10.0 + 1e-9) / 10.0))


def _runs_by_rank(ranks: dict[str, int]) -> dict[int, list[str]]:
    """Runs grouped by rank (tied runs share a label), ranks ascending."""
    groups: dict[int, list[str]] = {}
    for run, rank in sorted(ranks.items(), key=lambda item: (item[1], item[0])):
        groups.setdefault(rank, []).append(run)
    return groups


def _one_measure(lines: EvalLines, measures: tuple[str, ...]) -> str:
    """The one measure asked for (any of its names), else the first preference, else the first."""
    if measures:
        chosen = select_available(measures, lines.measures, lines.source)
        return _only_one(tuple(chosen), chosen)
    preferences = [m for m in lines.measures if not lines.is_metric(m)]
    return (preferences or lines.measures)[0]


@plot_kind("sampled", "exact metric against its expected sampled value, by sample size (prefeval sampled lines)")
def sampled_metrics(request: PlotRequest) -> Figure:
    means, consistency = _sampled_lines(request.source)
    measures = list(dict.fromkeys(record["measure"] for record in means))
    measure = _only_one(request.measures, measures)
    runs = list(dict.fromkeys(record["run"] for record in means))
    sizes = sorted({record["sample_size"] for record in means})
    styles = run_styles(runs)
    figure = new_figure(12.0, 4.8)
    values_axes, tau_axes = figure.subplots(1, 2, width_ratios=[3, 2])
    for run in runs:
        mine = sorted((r for r in means if r["run"] == run and r["measure"] == measure), key=lambda r: r["sample_size"])
        style = styles[run]
        values_axes.plot([r["sample_size"] for r in mine], [r["sampled"] for r in mine], marker=style.marker,
                         markersize=4.5, color=style.colour, label=run)
        values_axes.axhline(mine[0]["exact"], color=style.colour, linestyle=":", linewidth=0.8)
    values_axes.set_xscale("log")
    values_axes.set_xlabel("sampled irrelevant items (M)")
    values_axes.set_ylabel(f"mean {measure}")
    values_axes.set_title(f"{measure}: expected sampled value (markers) and exact value (dotted)", fontsize=10)
    values_axes.legend(fontsize=7, ncol=1 + len(runs) // 20, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                       borderaxespad=0.0, frameon=False, title="run", title_fontsize=8)
    taus = []
    for n, name in enumerate(measures):
        lines = sorted((r for r in consistency if r["measure"] == name), key=lambda r: r["sample_size"])
        taus += [r["kendall_tau"] for r in lines if r["kendall_tau"] is not None]
        tau_axes.plot([r["sample_size"] for r in lines], [r["kendall_tau"] for r in lines], marker=MARKERS[n % 10],
                      markersize=4.5, color=f"C{n % 10}", linewidth=2.2 if name == measure else 1.0, label=name)
    tau_axes.set_xscale("log")
    tau_axes.set_ylim(_tau_floor(np.array(taus, dtype=np.float64)) - 0.02, 1.02)
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


@plot_kind("null",
           "observed values against each query's random-ranking expectation and threshold (prefeval null lines)")
def null_baselines(request: PlotRequest) -> Figure:
    queries, observed, summaries = _null_lines(request.source)
    measures = list(dict.fromkeys(record["measure"] for record in queries))
    measure = _only_one(request.measures, measures)
    nulls = sorted((r for r in queries if r["measure"] == measure), key=lambda r: (r["expected"], r["threshold"]))
    position = {record["qid"]: x for x, record in enumerate(nulls)}
    runs = list(dict.fromkeys(record["run"] for record in observed))
    styles = run_styles(runs)
    figure = new_figure(13.0 if runs else 8.0, 5.0)
    if runs:
        query_axes, run_axes = figure.subplots(1, 2, width_ratios=[3.2, 1])
    else:
        query_axes, run_axes = figure.subplots(), None
    xs = np.arange(len(nulls))
    expected = np.array([r["expected"] for r in nulls])
    threshold = np.array([r["threshold"] for r in nulls])
    quantile = nulls[0]["quantile"] if nulls else 0.95
    query_axes.fill_between(xs, expected, threshold, color="0.85", step="mid",
                            label=f"expected to {quantile:g} quantile")
    query_axes.plot(xs, expected, color="0.3", linewidth=1.0, drawstyle="steps-mid",
                    label="expected under random ranking")
    query_axes.plot(xs, threshold, color="0.3", linewidth=1.0, linestyle="--", drawstyle="steps-mid", label="threshold")
    values = np.full((len(runs), len(nulls)), np.nan)
    for record in observed:
        if record["measure"] == measure and record["qid"] in position:
            values[runs.index(record["run"]), position[record["qid"]]] = record["value"]
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
        fractions = {r["run"]: r["fraction_above_null"] for r in summaries if r["measure"] == measure}
        ranked = sorted(runs, key=lambda run: (-fractions.get(run, -1.0), run))  # the most often above first
        colours = [styles[run].colour for run in ranked] if len(runs) <= COLOURED_RUNS else "0.45"
        run_axes.barh(range(len(runs)), [fractions.get(run, np.nan) for run in ranked], color=colours)
        run_axes.set_yticks(range(len(runs)), ranked, fontsize=8)
        run_axes.invert_yaxis()
        run_axes.set_xlim(0, 1)
        run_axes.set_xlabel("fraction of queries")
        run_axes.set_title("above the threshold", fontsize=10)
    return figure


@plot_kind("ranks", "each run's rank interval over resamples of the queries, and tiers (aggregate --bootstrap lines)")
def rank_intervals(request: PlotRequest) -> Figure:
    records = _bootstrap_lines(request.source)
    keys = list(dict.fromkeys(record["measure"] for record in records))
    chosen = select_available(request.measures, keys, display_name(request.source))
    panels: dict[tuple[str, str], list[dict]] = {}
    for record in records:
        if record["measure"] in chosen:
            panels.setdefault((record["measure"], record["method"]), []).append(record)
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
    resamples = sorted({record["resamples"] for record in records})
    figure.suptitle(f"rank over all queries (dot), {LEVEL:.0%} interval over {', '.join(map(str, resamples))} "
                    "resamples of the queries (line), probability of each rank (shade)", fontsize=10)
    figure.colorbar(image, ax=grid.ravel().tolist(), shrink=0.6, label="P(rank)", aspect=25, pad=0.01)
    return figure


def _rank_panel(axes, measure: str, method: str, rows: list[dict]):
    """One ordering's runs, best first: the shaded probabilities of each rank, the interval, the rank
    over all queries, and the tiers (separated by lines, named on the right)."""
    count = len(rows)
    ranks = max(len(row["rank_probabilities"]) for row in rows)
    probabilities = np.zeros((count, ranks))
    for y, row in enumerate(rows):
        probabilities[y, :len(row["rank_probabilities"])] = row["rank_probabilities"]
    image = axes.imshow(probabilities, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest",
                        extent=(0.5, ranks + 0.5, count - 0.5, -0.5))
    ys = np.arange(count)
    low = np.array([row["rank_low"] for row in rows])
    high = np.array([row["rank_high"] for row in rows])
    axes.hlines(ys, low - 0.3, high + 0.3, color="black", linewidth=1.3)
    axes.scatter([row["rank"] for row in rows], ys, s=22, color="white", edgecolors="black", linewidths=1.0, zorder=3)
    tiers = [row["tier"] for row in rows]
    transform = axes.get_yaxis_transform()
    for tier in dict.fromkeys(tiers):
        members = [y for y, t in enumerate(tiers) if t == tier]
        if members[0] > 0:
            axes.axhline(members[0] - 0.5, color="0.35", linewidth=0.8, linestyle=(0, (4, 2)))
        axes.text(1.02, (members[0] + members[-1]) / 2, f"tier {tier}", transform=transform, ha="left",
                  va="center", fontsize=7)
    axes.set_yticks(ys, [row["run"] for row in rows], fontsize=7)
    axes.set_xticks(range(1, ranks + 1) if ranks <= 10 else [1] + list(range(5, ranks + 1, 5)))
    axes.set_xticks(range(1, ranks + 1), minor=True)
    axes.tick_params(axis="x", labelsize=7)
    axes.set_xlim(0.5, ranks + 0.5)
    axes.set_ylim(count - 0.5, -0.5)
    axes.set_xlabel("rank", fontsize=8)
    direction = "" if higher_is_better(method) else " (lowest first)"
    axes.set_title(f"{measure} · {method}{direction}", fontsize=9)
    return image


PR_LINE_STYLES = ("-", "--", ":", "-.")
"""Line styles of the curves of one run when the input has iprec measures that differ in more than
the recall level (one style per variant; the variant of the lowest level, default parameters first, solid)."""


@plot_kind("pr", "each run's interpolated precision-recall curve, mean or one query (eval lines with iprec@r)")
def precision_recall_curves(request: PlotRequest) -> Figure:
    source = display_name(request.source)
    curves = _interpolated_precision_lines(request.source, request.query)
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


@dataclass
class _Curves:
    """The values of the iprec measures of an input: ``measures`` by key (in order of first
    appearance), ``runs`` in order of first appearance, ``values[run][measure name]``."""

    measures: dict[str, InterpolatedPrecision]
    runs: list[str]
    values: dict[str, dict[str, float]]


def _interpolated_precision_lines(path: str, query: str | None) -> _Curves:
    """Every run's value of every iprec measure of the eval lines at ``path``, from the metric lines
    of its first sample: those of ``query``, or the summary lines (qid ``all``), and where a run has
    no summary value of a measure, the mean of its per-query values (a line without the measure, or
    with null, does not count)."""
    source = display_name(path)
    measures: dict[str, InterpolatedPrecision] = {}
    not_iprec: set[str] = set()
    lines: list[tuple[int, dict]] = []
    for number, record in read_records(path):
        if RUN not in record or RUNI in record:
            continue  # pair lines hold differences of the metrics; the values are on the metric lines
        for key in record:
            if key in LABEL_KEYS or key in measures or key in not_iprec:
                continue
            measure = _iprec_measure(key)
            if measure is None:
                not_iprec.add(key)
            elif all(measure.name != known.name for known in measures.values()):  # one key per measure
                measures[key] = measure
        lines.append((number, record))
    if not measures:
        raise InputError(source, "no interpolated precision (iprec) measure: write the recall levels with "
                                 "prefeval eval -q -m iprec@0,iprec@0.1,...,iprec@1")
    present = []
    for number, record in lines:
        sample = record.get(SAMPLE, 0)
        if isinstance(sample, bool) or not isinstance(sample, int):
            raise InputError(source, f"'sample' must be an integer, not {sample!r}", number)
        if any(key in record for key in measures):
            present.append((number, sample, record))
    first = min(sample for _, sample, _ in present)
    runs: list[str] = []
    summary: dict[str, dict[str, float]] = {}
    per_query: dict[str, dict[str, list[float]]] = {}
    queries: set[str] = set()
    for number, sample, record in present:
        if sample != first:
            continue
        run, qid = record[RUN], record.get(QID)
        if not isinstance(run, str) or not isinstance(qid, str):
            raise InputError(source, "a metric line needs a string 'qid' and 'run'", number)
        if record.get(TYPE, METRIC) != METRIC:
            raise InputError(source, f"a line with a 'run' is a metric line, not of type {record[TYPE]!r}", number)
        values = {}
        for key, measure in measures.items():
            value = record.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(source, f"{key} must be a number, not {value!r}", number)
            values[measure.name] = float(value)
        if qid != SUMMARY_QID:
            queries.add(qid)
        if query is None and qid == SUMMARY_QID:
            summary.setdefault(run, {}).update(values)
        elif query is None or qid == query:
            for name, value in values.items():
                per_query.setdefault(run, {}).setdefault(name, []).append(value)
        else:
            continue
        if run not in runs:
            runs.append(run)
    if query is not None and query not in queries:
        raise InputError(source, f"query {query} is not in its per-query lines (of sample {first}); "
                                 "write them with prefeval eval -q")
    means = {run: {name: float(np.mean(values)) for name, values in per_query.get(run, {}).items()} for run in runs}
    return _Curves(measures, runs, {run: means[run] | summary.get(run, {}) for run in runs})


def _iprec_measure(key: str) -> InterpolatedPrecision | None:
    """The iprec measure a key of an eval line names (any of its names), or None."""
    try:
        measure = parse_measure(key)
    except (UsageError, ValueError):
        return None
    return measure if isinstance(measure, InterpolatedPrecision) else None


def _variant(measure: InterpolatedPrecision) -> tuple[str, ...]:
    """The parameters of an iprec measure other than its recall level, as written where not the
    default (``round_from=0.5``, ``rel=2``): the measures of one curve share them."""
    return tuple(f"{param.name}={param.written(value)}" for param, value in
                 zip(measure.all_parameters(), measure.values)
                 if param.name != "recall" and value is not None and value != param.default)


def _variant_text(variant: tuple[str, ...]) -> str:
    """How a legend names the curves of one variant: ``iprec@r``, ``iprec@r, round_from=0.5``."""
    return ", ".join(("iprec@r", *variant))


def _bootstrap_lines(source: str) -> list[dict]:
    """The rank-interval records of ``aggregate --bootstrap`` output, of its first sample (other records
    of aggregate are skipped)."""
    records = []
    for number, record in read_records(source):
        if not isinstance(record, dict) or "sample" not in record:
            raise InputError(display_name(source), "not a line of prefeval aggregate", number)
        if aggregate_record_kind(record) == RANK_INTERVAL:
            problem = _bootstrap_record_problem(record)
            if problem:
                raise InputError(display_name(source), f"not a rank interval of aggregate --bootstrap: {problem}",
                                 number)
            records.append(record)
    if not records:
        raise InputError(display_name(source), "no rank intervals: write them with prefeval aggregate --bootstrap B")
    first = records[0]["sample"]
    return [record for record in records if record["sample"] == first]


def _bootstrap_record_problem(record: dict) -> str | None:
    """What is wrong with a record that has the keys of a rank interval, if anything."""
    for key in ("measure", "method", "run"):
        if not isinstance(record.get(key), str):
            return f"{key!r} must be a string"
    for key in ("rank", "rank_low", "rank_high", "tier", "resamples"):
        value = record.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return f"{key!r} must be a positive integer"
    probabilities = record["rank_probabilities"]
    if (not isinstance(probabilities, list) or not probabilities
            or not all(isinstance(p, (int, float)) and not isinstance(p, bool) and 0 <= p <= 1 for p in probabilities)):
        return "'rank_probabilities' must be a list of probabilities"
    if not record["rank_low"] <= record["rank_high"] <= len(probabilities):
        return "the interval must run from rank_low to rank_high, within the ranks of rank_probabilities"
    return None


def _sampled_lines(source: str) -> tuple[list[dict], list[dict]]:
    """The per-run means and the consistency lines of ``prefeval sampled`` output."""
    means, consistency = [], []
    for number, record in read_records(source):
        if record.get("qid") != "all":
            continue
        if "run" in record and _has(record, ("measure", "sample_size", "exact", "sampled")):
            means.append(record)
        elif _has(record, ("measure", "sample_size", "kendall_tau")):
            consistency.append(record)
        else:
            raise InputError(display_name(source), "not a line of prefeval sampled", number)
    if not means:
        raise InputError(display_name(source), "no per-run lines of prefeval sampled")
    return means, consistency


def _null_lines(source: str) -> tuple[list[dict], list[dict], list[dict]]:
    """The per-query null lines, the per-query observed values and the per-run summaries of
    ``prefeval null`` output."""
    queries, observed, summaries = [], [], []
    for number, record in read_records(source):
        if _has(record, ("qid", "measure", "expected", "threshold", "quantile")):
            queries.append(record)
        elif _has(record, ("qid", "run", "measure", "value", "above_null")):
            observed.append(record)
        elif _has(record, ("qid", "run", "measure", "value", "fraction_above_null")):
            summaries.append(record)
        else:
            raise InputError(display_name(source), "not a line of prefeval null", number)
    if not queries:
        raise InputError(display_name(source), "no per-query lines of prefeval null")
    return queries, observed, summaries


def _has(record: dict, keys: tuple[str, ...]) -> bool:
    return all(key in record for key in keys)


def _only_one(asked: tuple[str, ...], available: list[str]) -> str:
    """The one measure asked for (``-m``), else the first available."""
    names = [name.strip() for text in asked for name in text.split(",") if name.strip()]
    if len(names) > 1:
        raise UsageError(f"this plot draws one measure; got {', '.join(names)}")
    if names and names[0] not in available:
        raise UsageError(f"measure {names[0]} is not in the input; found: {', '.join(available)}")
    return names[0] if names else available[0]
