"""The ``prefeval`` command line: each command parses its options, calls the library, and writes.

Options keep the spellings of the reference scripts (``--query_eval_wanted``) and accept dashed ones
(``--query-eval-wanted``), so existing experiment scripts keep working. One module per command.
"""

from __future__ import annotations

import click

from prefeval import __version__
from prefeval.cli.aggregate import aggregate_command
from prefeval.cli.check import check_command
from prefeval.cli.common import CONTEXT
from prefeval.cli.evaluate import eval_command
from prefeval.cli.measures import measures_command
from prefeval.cli.null import null_command
from prefeval.cli.plot import plot_command
from prefeval.cli.sampled import sampled_command
from prefeval.cli.significance import significance_command


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="prefeval")
def main() -> None:
    """Evaluate ranked runs against TREC qrels, with preferences (RPP, lexicographic recall and
    precision) and trec_eval's metrics, and aggregate the results into system orderings.

    \b
    prefeval eval -q --qrels QRELS RUN1 RUN2 ... | prefeval aggregate -P -
    prefeval eval -q --qrels QRELS RUN1 RUN2 ... | prefeval significance -P - --seed 1
    """


for command in (eval_command, aggregate_command, significance_command, plot_command, sampled_command, null_command,
                check_command, measures_command):
    main.add_command(command)
