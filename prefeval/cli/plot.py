"""``prefeval plot``: draw a figure (every kind registered in :mod:`prefeval.report.plots`)."""

from __future__ import annotations

import click

from prefeval.cli.common import CONTEXT, INPUT_FILE, output_option, reported_errors
from prefeval.cli.significance import significance_options
from prefeval.errors import UsageError
from prefeval.report.plots import IMAGE_FORMATS, PLOT_KINDS, PlotRequest, render_plot

KINDS_HELP = "\n".join(f"  {name:<12} {kind.summary}" for name, kind in PLOT_KINDS.items())


@click.command("plot", context_settings=CONTEXT, epilog=f"""\b
Kinds:
{KINDS_HELP}

\b
Examples:
  prefeval eval -q -R qrels.txt runA runB runC > prefs.jsonl
  prefeval plot preferences prefs.jsonl -m rpp -o rpp.png
  prefeval plot orderings prefs.jsonl -m rpp,lexiprecision,ap,ndcg -o orderings.svg
""")
@click.argument("kind", type=click.Choice(list(PLOT_KINDS)))
@click.argument("source", type=INPUT_FILE, metavar="INPUT")
@click.option("-m", "--measure", "--metric", "measures", multiple=True, metavar="MEASURE",
              help="The measure(s) to plot (repeatable, or comma-separated; the default depends on the kind).")
@significance_options
@output_option
def plot_command(kind, source, measures, significance, output):
    """Draw the plot KIND of INPUT (gzip or - for stdin) into -o FILE, as PNG, SVG or PDF by its
    suffix. Needs matplotlib: pip install 'prefeval[plot]'."""
    with reported_errors():
        if output is None:
            raise UsageError(f"plot needs -o FILE ({', '.join('.' + f for f in IMAGE_FORMATS)})")
        request = PlotRequest(source, measures, significance)
        render_plot(kind, request, output)
