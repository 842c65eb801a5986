"""What every kind of plot shares: the registry of kinds, the request, saving a figure, the styles of
the runs, and matplotlib's import.

A kind is registered with :func:`plot_kind` under its name (:data:`PLOT_KINDS`, the single list of
kinds, which the command line lists): a function that gets the values to draw from the request
(``read``: reading and checking its input and computing what the figure shows, done by
:mod:`prefeval.analyses` and :mod:`prefeval.io`), and the decorated function, which draws them into a
matplotlib figure. :func:`render_plot` saves the figure.

matplotlib is an optional dependency (``pip install matplotlib``, or ``pip install '.[plot]'`` from a
checkout of prefeval), imported only when a plot is drawn (:func:`new_figure`); without it the
request fails with one line saying how to install it. Figures are drawn on a bare
:class:`matplotlib.figure.Figure` (no pyplot, no global state) and saved without dates or random ids,
so the same input gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from prefeval.analyses.significance import SignificanceOptions
from prefeval.errors import UsageError, shown
from prefeval.io.evallines import EvalLines
from prefeval.io.jsonl import output_stream
from prefeval.io.keys import SUMMARY_QID
from prefeval.measures import select_available

if TYPE_CHECKING:
    from matplotlib.figure import Figure

IMAGE_FORMATS = ("png", "svg", "pdf")
INSTALL_HINT = "plots need matplotlib: pip install matplotlib (or pip install '.[plot]' in a checkout of prefeval)"
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
            raise UsageError(f"query must be a query id, not {shown(self.query)}")
        if self.query == SUMMARY_QID:
            raise UsageError(f"query {SUMMARY_QID!r} names the summary lines: leave out the query to plot the mean")
        for name, low, high in (("width", 1.0, 100.0), ("height", 1.0, 100.0), ("dpi", 10.0, 2400.0)):
            value = getattr(self, name)
            if value is None and name != "dpi":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise UsageError(f"{name} must be a number from {low:g} to {high:g}, not {shown(value)}")


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
    """A kind of plot: its name, its summary for ``prefeval plot --help``, how the values it draws are
    got from a request (``read``), and how they are drawn (``figure``)."""

    name: str
    summary: str
    read: Callable[[PlotRequest], Any]
    figure: Callable[[Any, PlotRequest], Figure]

    def draw(self, request: PlotRequest) -> Figure:
        """The figure of ``request``: its values read, then drawn."""
        return self.figure(self.read(request), request)


PLOT_KINDS: dict[str, PlotKind] = {}
"""Every kind of plot, by name, in registration order."""


def plot_kind(name: str, summary: str, read: Callable[[PlotRequest], Any]):
    """Decorator: register ``figure(values, request) -> Figure`` as the plot kind ``name``, drawing the
    values that ``read(request)`` gives."""
    def register(figure: Callable[[Any, PlotRequest], Figure]):
        if name in PLOT_KINDS:
            raise ValueError(f"plot kind {name} registered twice")
        PLOT_KINDS[name] = PlotKind(name, summary, read, figure)
        return figure
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


def tau_floor(values: np.ndarray) -> float:
    """The lower limit of a scale of Kendall's τ ending at 1: the smallest value, rounded down to a
    tenth (−1 at the lowest; 0.9 when every value is 1)."""
    finite = values[np.isfinite(values)]
    smallest = float(finite.min()) if len(finite) else -1.0
    return max(-1.0, min(0.9, np.floor(smallest * 10.0 + 1e-9) / 10.0))


def one_measure(asked: tuple[str, ...], available: list[str]) -> str:
    """The one measure a kind that draws one is asked for (``-m``), else the first available."""
    names = [name.strip() for text in asked for name in text.split(",") if name.strip()]
    if len(names) > 1:
        raise UsageError(f"this plot draws one measure; got {', '.join(names)}")
    if names and names[0] not in available:
        raise UsageError(f"measure {names[0]} is not in the input; found: {', '.join(available)}")
    return names[0] if names else available[0]


def one_measure_of(lines: EvalLines, measures: tuple[str, ...]) -> str:
    """The one measure of eval lines asked for (any of its names), else the first preference, else the
    first measure."""
    if measures:
        chosen = select_available(measures, lines.measures, lines.source)
        return one_measure(tuple(chosen), chosen)
    preferences = [m for m in lines.measures if not lines.is_metric(m)]
    return (preferences or lines.measures)[0]
