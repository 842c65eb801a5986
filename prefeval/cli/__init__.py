"""The ``prefeval`` command line: each command parses its options, calls the library, and writes.

Options keep the spellings of the reference scripts (``--query_eval_wanted``) and accept dashed ones
(``--query-eval-wanted``), so existing experiment scripts keep working. One module per command,
imported only when its command runs (some need pandas or scipy, whose import takes longer than many
runs): ``prefeval --help`` lists the commands from :data:`COMMANDS` without importing any of them.

Everything the command line does runs inside :meth:`LazyGroup.main`, which gives every failure one
shape (:func:`prefeval.cli.common.ending_quietly`) and lets Ctrl-C and SIGTERM end it quietly
(:mod:`prefeval.runtime.signals`), from the first option parsed to the last byte written.

numpy's BLAS (OpenBLAS) runs in one thread unless ``OPENBLAS_NUM_THREADS`` or ``OMP_NUM_THREADS``
says otherwise (:func:`one_blas_thread`): prefeval shares its work among processes itself
(``--jobs``), and the threads OpenBLAS starts when numpy is imported spin on the other processors
(0.13 s of processor time on this project's 2-core machine, a sixth of the wall time of evaluating
one run), while the matrix products of ``significance`` and ``aggregate --bootstrap`` are as fast
without them.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from prefeval.cli.common import CONTEXT, ending_quietly
from prefeval.runtime.ending import end_process
from prefeval.runtime.memory import keep_freed_memory
from prefeval.runtime.signals import Interrupted, ignore_stops, raise_early_stop, stopping_quietly

BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def one_blas_thread() -> None:
    """Ask for one BLAS thread, for numpy when it is imported (module docstring), unless the
    environment chose a number of threads already."""
    if not any(os.environ.get(name) for name in BLAS_THREAD_VARIABLES):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


one_blas_thread()

COMMANDS = {
    "eval": ("prefeval.cli.evaluate:eval_command", "Evaluate RUNs against QRELS with preferences and metrics."),
    "aggregate": ("prefeval.cli.aggregate:aggregate_command",
                  "Order the runs of per-query eval lines, by each measure."),
    "significance": ("prefeval.cli.significance:significance_command",
                     "Test every pair of runs on every measure for significance."),
    "plot": ("prefeval.cli.plot:plot_command",
             "Draw the plot KIND of INPUT (gzip or - for stdin) into -o FILE, as PNG, SVG or PDF by its suffix."),
    "sampled": ("prefeval.cli.sampled:sampled_command", "Compare metrics with the expected values of sampled metrics."),
    "null": ("prefeval.cli.null:null_command", "Compare metrics with their values under random rankings."),
    "check": ("prefeval.cli.check:check_command", "Report what is wrong, or worth knowing, about QRELS and RUNs."),
    "measures": ("prefeval.cli.measures:measures_command",
                 "List every measure, with its trec_eval, ir_measures and ndeval names."),
    "trec_eval": ("prefeval.cli.trec_eval:trec_eval_command",
                  "Evaluate a run as trec_eval does, on trec_eval's command line."),
    "ndeval": ("prefeval.cli.ndeval:ndeval_command", "Evaluate a run as ndeval does, on ndeval's command line."),
}
"""Every command: where it is defined, and its summary for ``prefeval --help`` (the first sentence of
its docstring, kept here so that listing the commands imports none of them; a test checks that the
two agree)."""


class LazyGroup(click.Group):
    """A group whose commands are imported when they are asked for, and listed from :data:`COMMANDS`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute = COMMANDS[name][0].split(":")
        return _with_version(getattr(importlib.import_module(module), attribute))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][1]) for name in self.list_commands(ctx)])

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Run the command line (see the module docstring); exits, as click's ``main`` does.

        Called without ``args`` it is the process's own command line, which ends with it: the
        signal handlers are left in place, so that a signal while the interpreter shuts down is
        quiet too, and the process ends without taking the interpreter apart
        (:func:`~prefeval.runtime.ending.end_process`); and freed memory is kept for reuse
        (:func:`~prefeval.runtime.memory.keep_freed_memory`). Called with ``args`` (a test, a program
        embedding it), it restores them and raises ``SystemExit``. ``standalone_mode=False`` is
        click's own behaviour, untouched.
        """
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        if args is None:
            keep_freed_memory()
        try:
            with stopping_quietly(restore=args is not None):
                try:
                    try:
                        with ending_quietly():
                            raise_early_stop()  # one that came while the command line was imported
                            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
                            sys.exit(code if isinstance(code, int) else 0)
                    finally:
                        ignore_stops()  # the command has ended: a signal from now on changes nothing
                except Interrupted as stop:  # the one stop there can be, come while the command was ending
                    sys.exit(stop.exit_code)
        except SystemExit as end:
            if args is None:
                end_process(end.code)
            raise


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """``--version``: read from the package's metadata only when asked for (it takes a while)."""
    if value and not ctx.resilient_parsing:
        from prefeval import __version__

        click.echo(f"prefeval, version {__version__}")
        ctx.exit()


def _version_option() -> click.Option:
    """``--version``, for prefeval and for each of its commands (``prefeval eval --version``)."""
    return click.Option(["--version"], is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
                        help="Show the version and exit.")


def _with_version(command: click.Command) -> click.Command:
    """``command`` with :func:`_version_option`, unless it reads its own command line as it comes (the
    foreign tools' commands: ``prefeval trec_eval -v`` is trec_eval's)."""
    own_line = (type(command).parse_args is not click.Command.parse_args
                or any(param.type is click.UNPROCESSED for param in command.params))
    if not own_line and not any("--version" in param.opts for param in command.params):
        command.params.append(_version_option())
    return command


@click.group("prefeval", cls=LazyGroup, context_settings=CONTEXT, invoke_without_command=True,
             params=[_version_option()])
@click.pass_context
def main(ctx: click.Context) -> None:
    """Evaluate ranked runs against TREC qrels, with preferences (RPP, lexicographic recall and
    precision) and trec_eval's metrics, and aggregate the results into system orderings.

    \b
    prefeval eval -q --qrels QRELS RUN1 RUN2 ... | prefeval aggregate -P -
    prefeval eval -q --qrels QRELS RUN1 RUN2 ... | prefeval significance -P - --seed 1
    prefeval trec_eval -q -m all_trec QRELS RUN      (trec_eval's command line and output)
    prefeval ndeval QRELS RUN                        (ndeval's command line and output)
    """
    if ctx.invoked_subcommand is None:  # ``prefeval`` alone: the help, as asked for
        click.echo(ctx.get_help())
