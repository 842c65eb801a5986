"""``prefeval plot``: draw a figure (every kind registered in :mod:`prefeval.report.plots`).

The significance options are those of ``prefeval significance``, but only the ``preferences`` kind
uses them (to mark significant cells), so their help says so and giving one to another kind is an
error rather than silently ignored; so is ``--query``, which only the ``pr`` kind reads.
"""

from __future__ import annotations

import dataclasses

import click
from click.core import ParameterSource

from prefeval.analyses.significance import SignificanceOptions
from prefeval.cli.common import CONTEXT, INPUT_FILE, output_option, reported_errors
from prefeval.cli.significance import significance_options
from prefeval.errors import UsageError
from prefeval.report.plots import DEFAULT_DPI, IMAGE_FORMATS, PLOT_KINDS, PlotRequest, render_plot

KINDS_HELP = "\n".join(f"  {name:<12} {kind.summary}" for name, kind in PLOT_KINDS.items())
SIGNIFICANCE_KIND = "preferences"
QUERY_KIND = "pr"
PR_LEVELS = ",".join(f"iprec@{level / 10:g}" for level in range(11))
INCHES = click.FloatRange(1.0, 100.0)


@click.command("plot", context_settings=CONTEXT, epilog=f"""\b
Kinds:
{KINDS_HELP}

\b
Examples:
  prefeval eval -q -R qrels.txt runA runB runC > prefs.jsonl
  prefeval plot preferences prefs.jsonl -m rpp -o rpp.png
  prefeval plot orderings prefs.jsonl -m rpp,lexiprecision,ap,ndcg -o orderings.svg --width 10
  prefeval aggregate -P prefs.jsonl -m ap,ndcg,rpp --bootstrap 1000 --seed 1 -n > ranks.jsonl
  prefeval plot ranks ranks.jsonl -o ranks.pdf
  prefeval eval -q -R qrels.txt -m {PR_LEVELS} runA runB > pr.jsonl
  prefeval plot pr pr.jsonl -o pr.pdf
  prefeval plot pr pr.jsonl --query 301 -o pr-301.pdf
""")
@click.argument("kind", type=click.Choice(list(PLOT_KINDS)))
@click.argument("source", type=INPUT_FILE, metavar="INPUT")
@click.option("-m", "--measure", "--metric", "measures", multiple=True, metavar="MEASURE",
              help="The measure(s) to plot (repeatable, or comma-separated): orderings and ranks draw every one "
                   "given (default: all in INPUT), pr those of its iprec measures given (default: all); the "
                   "other kinds one (default: the first).")
@click.option("--width", type=INCHES, metavar="INCHES", help="Figure width in inches (default: fitted to the kind).")
@click.option("--height", type=INCHES, metavar="INCHES", help="Figure height in inches (default: fitted to the kind).")
@click.option("--dpi", type=click.FloatRange(10.0, 2400.0), default=DEFAULT_DPI, show_default=True,
              help="Resolution of a PNG (and of the shaded images inside an SVG or PDF), in dots per inch.")
@click.option("--query", metavar="QID", help="pr only: draw this query's curves (from the per-query lines) "
                                             "instead of the mean over the queries.")
@significance_options(scope="preferences only: ")
@output_option
@click.pass_context
def plot_command(context, kind, source, measures, width, height, dpi, query, significance, output):
    """Draw the plot KIND of INPUT (gzip or - for stdin) into -o FILE, as PNG, SVG or PDF by its
    suffix. Needs matplotlib: pip install matplotlib (or pip install '.[plot]' in a checkout of prefeval)."""
    with reported_errors():
        given = [field.name for field in dataclasses.fields(SignificanceOptions)
                 if context.get_parameter_source(field.name) not in (ParameterSource.DEFAULT, None)]
        if given and kind != SIGNIFICANCE_KIND:
            options = ", ".join("--" + name for name in given)
            raise UsageError(f"{options}: only plot {SIGNIFICANCE_KIND} marks significance; plot {kind} has no tests")
        if query is not None and kind != QUERY_KIND:
            raise UsageError(f"--query: only plot {QUERY_KIND} draws one query; plot {kind} draws every query")
        if output is None:
            raise UsageError(f"plot needs -o FILE ({', '.join('.' + f for f in IMAGE_FORMATS)})")
        request = PlotRequest(source, measures, significance, width, height, dpi, query)
        render_plot(kind, request, output)
