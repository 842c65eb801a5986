"""Figures for papers: ``prefeval plot KIND INPUT -o FILE.png|FILE.svg|FILE.pdf``.

Every kind of plot is one function, registered with :func:`plot_kind` under its name: it reads its
input (the request's ``source``) and returns a matplotlib figure. :func:`render_plot` saves it. Adding
a kind means adding one such function here; the command line lists the registry.

matplotlib is an optional dependency (``pip install 'prefeval[plot]'``), imported only when a plot is
drawn; without it the request fails with one line saying how to install it. Figures are drawn on a
bare :class:`matplotlib.figure.Figure` (no pyplot, no global state) and saved without dates or random
ids, so the same input gives the same bytes.

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
  threshold, and each run's observed values as dots; with runs, beside it the fraction of queries on
  which each run is above the threshold.

The first two plot the first sample of their input.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from prefeval.analyses.aggregate import aggregate
from prefeval.analyses.orderings import competition_ranks, kendall_tau
from prefeval.analyses.significance import (
    CORRECTION_NAMES,
    TEST_NAMES,
    SignificanceOptions,
    pairwise_significance,
)
from prefeval.errors import InputError, UsageError
from prefeval.io.evallines import EvalLines, read_eval_lines
from prefeval.io.jsonl import output_stream, read_records
from prefeval.io.source import display_name
from prefeval.measures import select_available

if TYPE_CHECKING:
    from matplotlib.figure import Figure

IMAGE_FORMATS = ("png", "svg", "pdf")
INSTALL_HINT = "plots need matplotlib: pip install 'prefeval[plot]'"
ANNOTATED_RUNS = 12
"""Heatmap cells show their values up to this many runs (beyond, only the significance marks)."""


@dataclass(frozen=True)
class PlotRequest:
    """What a plot kind is asked to draw: its input and the options of the command."""

    source: str
    measures: tuple[str, ...] = ()
    significance: SignificanceOptions = SignificanceOptions()


@dataclass(frozen=True)
class PlotKind:
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
    metadata = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[suffix]
    with matplotlib.rc_context({"svg.hashsalt": "prefeval"}), output_stream(output) as stream:
        figure.savefig(stream, format=suffix, metadata=metadata)


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
    bump_width, tau_width = 3.0 + 0.8 * max(count, 2), 1.8 + 0.45 * count
    figure = new_figure(bump_width + tau_width, max(4.0, 1.5 + max(0.3 * len(runs), 0.45 * count)))
    bump, tau_axes = figure.subplots(1, 2, width_ratios=[bump_width, tau_width])
    color = {run: f"C{n % 10}" for n, run in enumerate(runs)}
    style = {run: ["-", "--", ":", "-."][(n // 10) % 4] for n, run in enumerate(runs)}
    for run in runs:
        xs = [x for x in range(count) if run in ranks[x]]
        bump.plot(xs, [ranks[x][run] for x in xs], marker="o", markersize=4, color=color[run], linestyle=style[run],
                  linewidth=1.4)
    right = bump.twinx()
    for axes, x, label in ((bump, 0, "{runs}  {rank}"), (right, count - 1, "{rank}  {runs}")):
        groups = _runs_by_rank(ranks[x])
        axes.set_ylim(len(runs) + 0.5, 0.5)
        axes.set_yticks(list(groups), [label.format(runs=", ".join(g), rank=r) for r, g in groups.items()], fontsize=8)
        for text, group in zip(axes.get_yticklabels(), groups.values()):
            text.set_color(color.get(group[0], "black") if len(group) == 1 else "black")
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
    image = tau_axes.imshow(np.ma.masked_invalid(tau), cmap="viridis", vmin=-1.0, vmax=1.0)
    for a, b in zip(*np.nonzero(np.isfinite(tau))):
        tau_axes.text(b, a, f"{tau[a, b]:.2f}", ha="center", va="center", fontsize=8,
                      color="black" if tau[a, b] > 0.4 else "white")
    tau_axes.set_xticks(range(count), measures, rotation=90, fontsize=8)
    tau_axes.set_yticks(range(count), measures, fontsize=8)
    tau_axes.set_title("Kendall's τ between orderings", fontsize=10)
    figure.colorbar(image, ax=tau_axes, shrink=0.7)
    return figure


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
    figure = new_figure(10.0, 4.5)
    values_axes, tau_axes = figure.subplots(1, 2, width_ratios=[3, 2])
    for n, run in enumerate(runs):
        mine = sorted((r for r in means if r["run"] == run and r["measure"] == measure), key=lambda r: r["sample_size"])
        color, style = f"C{n % 10}", ["-", "--", ":", "-."][(n // 10) % 4]
        values_axes.plot([r["sample_size"] for r in mine], [r["sampled"] for r in mine], marker="o", markersize=4,
                         color=color, linestyle=style, label=run)
        values_axes.axhline(mine[0]["exact"], color=color, linestyle=":", linewidth=0.8)
    values_axes.set_xscale("log")
    values_axes.set_xlabel("sampled irrelevant items (M)")
    values_axes.set_ylabel(f"mean {measure}")
    values_axes.set_title(f"{measure}: expected sampled value (markers) and exact value (dotted)", fontsize=10)
    if len(runs) <= 20:
        values_axes.legend(fontsize=7, ncol=2)
    for n, name in enumerate(measures):
        lines = sorted((r for r in consistency if r["measure"] == name), key=lambda r: r["sample_size"])
        tau_axes.plot([r["sample_size"] for r in lines], [r["kendall_tau"] for r in lines], marker="o", markersize=4,
                      color=f"C{n % 10}", linewidth=2.2 if name == measure else 1.0, label=name)
    tau_axes.set_xscale("log")
    tau_axes.set_ylim(-1.05, 1.05)
    tau_axes.axhline(1.0, color="0.6", linewidth=0.6)
    tau_axes.set_xlabel("M")
    tau_axes.set_ylabel("Kendall's τ")
    tau_axes.set_title("ordering of the runs: exact against sampled", fontsize=10)
    tau_axes.legend(fontsize=7)
    for axes in (values_axes, tau_axes):
        axes.set_xticks(sizes, [str(size) for size in sizes])
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
    figure = new_figure(11.0 if runs else 8.0, 4.5)
    if runs:
        query_axes, run_axes = figure.subplots(1, 2, width_ratios=[3, 1])
    else:
        query_axes, run_axes = figure.subplots(), None
    xs = np.arange(len(nulls))
    expected = np.array([r["expected"] for r in nulls])
    threshold = np.array([r["threshold"] for r in nulls])
    quantile = nulls[0]["quantile"] if nulls else 0.95
    query_axes.fill_between(xs, expected, threshold, color="0.8", step="mid",
                            label=f"expected to {quantile:g} quantile")
    query_axes.plot(xs, expected, color="0.3", linewidth=1.0, drawstyle="steps-mid",
                    label="expected under random ranking")
    query_axes.plot(xs, threshold, color="0.3", linewidth=1.0, linestyle="--", drawstyle="steps-mid", label="threshold")
    for n, run in enumerate(runs):
        mine = [r for r in observed if r["run"] == run and r["measure"] == measure and r["qid"] in position]
        query_axes.scatter([position[r["qid"]] for r in mine], [r["value"] for r in mine], s=10, color=f"C{n % 10}",
                           label=run, zorder=3)
    query_axes.set_xlabel("queries, by expected value under random ranking")
    query_axes.set_ylabel(measure)
    query_axes.set_title(f"{measure}: observed values against the random-ranking null", fontsize=10)
    query_axes.legend(fontsize=7)
    if run_axes is not None:
        fractions = {r["run"]: r["fraction_above_null"] for r in summaries if r["measure"] == measure}
        run_axes.barh(range(len(runs)), [fractions.get(run, np.nan) for run in runs],
                      color=[f"C{n % 10}" for n in range(len(runs))])
        run_axes.set_yticks(range(len(runs)), runs, fontsize=8)
        run_axes.invert_yaxis()
        run_axes.set_xlim(0, 1)
        run_axes.set_xlabel("fraction of queries")
        run_axes.set_title("above the threshold", fontsize=10)
    return figure


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
