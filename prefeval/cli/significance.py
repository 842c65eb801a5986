"""``prefeval significance``: paired tests between every two runs, from per-query eval lines."""

from __future__ import annotations

import dataclasses
import functools

import click

from prefeval.analyses.significance import (
    CORRECTIONS,
    DEFAULT_ALPHA,
    DEFAULT_BOOTSTRAP,
    DEFAULT_CORRECTION,
    DEFAULT_PERMUTATIONS,
    DEFAULT_TEST,
    TESTS,
    SignificanceOptions,
    pairwise_significance,
)
from prefeval.cli.common import (
    CONTEXT,
    INPUT_FILE,
    output_option,
    reported_errors,
    user_groups_option,
)
from prefeval.errors import UsageError
from prefeval.io.output import output_stream
from prefeval.report.formats import SIGNIFICANCE, formats_for, formats_help, write_records
from prefeval.runtime.memory import MAX_RESAMPLES

ALPHA = click.FloatRange(0.0, 1.0, min_open=True, max_open=True)
COUNT = click.IntRange(min=1)


def significance_options(scope: str = ""):
    """A decorator adding the options of the tests, shared by ``significance`` and ``plot`` (where
    ``scope`` starts their help: "preferences only: "); the command receives them as one
    :class:`~prefeval.analyses.significance.SignificanceOptions` named ``significance``."""

    def say(text: str) -> str:
        return scope + text if scope else text[:1].upper() + text[1:]

    options = [
        click.option("--test", type=click.Choice(TESTS), default=DEFAULT_TEST, show_default=True,
                     help=say("the test: t (paired t-test), wilcoxon (signed-rank), sign (exact binomial on wins and "
                              "losses), randomization (sign-flip permutation), bootstrap (shift-method bootstrap).")),
        click.option("--correction", type=click.Choice(CORRECTIONS), default=DEFAULT_CORRECTION, show_default=True,
                     help=say("correction for multiple comparisons across the pairs of each measure "
                              "(bh: Benjamini-Hochberg).")),
        click.option("--alpha", type=ALPHA, default=DEFAULT_ALPHA, show_default=True,
                     help=say("significance level; the confidence intervals are at 1 - alpha.")),
        click.option("--permutations", type=COUNT, default=DEFAULT_PERMUTATIONS, show_default=True,
                     help=say(f"sign flips of the randomization test (all 2^Q of them when that is no more; at most "
                                  f"{MAX_RESAMPLES:,}).")),
        click.option("--bootstrap", type=COUNT, default=DEFAULT_BOOTSTRAP, show_default=True,
                     help=say(f"resamples of the bootstrap intervals and test (at most {MAX_RESAMPLES:,}).")),
        click.option("--seed", type=click.IntRange(min=0),
                     help=say("seed of the resampling (one is drawn and reported if needed and not given).")),
    ]

    def decorate(command):
        @functools.wraps(command)
        def bundled(**kwargs):
            settings = {field.name: kwargs.pop(field.name) for field in dataclasses.fields(SignificanceOptions)}
            with reported_errors():
                significance = SignificanceOptions(**settings)
            return command(significance=significance, **kwargs)

        for option in reversed(options):
            bundled = option(bundled)
        return bundled

    return decorate


@click.command("significance", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval eval -q -R qrels.txt runA runB runC | prefeval significance -P - --seed 1
  prefeval significance -P prefs.jsonl -m rpp -m ap --test randomization --correction bh --seed 1
  prefeval significance -P prefs.jsonl --baseline runA --format markdown --seed 1
  prefeval significance -P prefs.jsonl --user-groups users.tsv --seed 1
""")
@click.option("-P", "--prefs", required=True, type=INPUT_FILE, metavar="PREFS",
              help="Per-query eval lines (from eval -q; gzip or - for stdin).")
@click.option("-m", "--measure", "--metric", "measures", multiple=True, metavar="MEASURE",
              help="Test this measure (repeatable, or comma-separated; default: every measure on the pair lines).")
@significance_options()
@click.option("--baseline", metavar="RUN",
              help="Test only the pairs with this run id, each as (run, RUN), correcting across them.")
@click.option("--format", "fmt", type=click.Choice(formats_for(SIGNIFICANCE)), default="jsonl", show_default=True,
              help=formats_help(SIGNIFICANCE))
@user_groups_option("every test")
@output_option
def significance_command(prefs, measures, significance, baseline, fmt, user_groups, output):
    """Test every pair of runs on every measure for significance.

    For each pair and measure (preferences and metric deltas): mean, wins, losses, ties, p-value and
    corrected p-value, bootstrap confidence interval and effect size; then the discriminative power
    of each measure (the fraction of pairs that differ significantly)."""
    with reported_errors():
        if user_groups and fmt != "jsonl":
            raise UsageError("--user-groups writes JSON lines: use --format jsonl")
        records = pairwise_significance(prefs, measures, significance, baseline=baseline, user_groups=user_groups)
        with output_stream(output) as stream:
            write_records(SIGNIFICANCE, records, stream, fmt, baseline=baseline)
