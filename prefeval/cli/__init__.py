"""The ``prefeval`` command line: each command parses its options, calls the library, and writes.

Options keep the spellings of the reference scripts (``--query_eval_wanted``) and accept dashed ones
(``--query-eval-wanted``), so existing experiment scripts keep working. One module per command,
imported only when its command runs (some need scipy, whose import takes longer than most runs).
"""

from __future__ import annotations

import importlib

import click

from prefeval import __version__
from prefeval.cli.common import CONTEXT

COMMANDS = {
    "eval": "prefeval.cli.evaluate:eval_command",
    "aggregate": "prefeval.cli.aggregate:aggregate_command",
    "significance": "prefeval.cli.significance:significance_command",
    "plot": "prefeval.cli.plot:plot_command",
    "sampled": "prefeval.cli.sampled:sampled_command",
    "null": "prefeval.cli.null:null_command",
    "check": "prefeval.cli.check:check_command",
    "measures": "prefeval.cli.measures:measures_command",
}
"""Every command, and where it is defined."""


class LazyGroup(click.Group):
    """A group whose commands are imported when they are asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute = COMMANDS[name].split(":")
        return getattr(importlib.import_module(module), attribute)


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="prefeval")
def main() -> None:
    """Evaluate ranked runs against TREC qrels, with preferences (RPP, lexicographic recall and
    precision) and trec_eval's metrics, and aggregate the results into system orderings.

    \b
    prefeval eval -q --qrels QRELS RUN1 RUN2 ... | prefeval aggregate -P -
    prefeval eval -q --qrels QRELS RUN1 RUN2 ... | prefeval significance -P - --seed 1
    """
