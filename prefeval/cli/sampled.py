"""``prefeval sampled``: exact metrics against the expected values of their sampled versions."""

from __future__ import annotations

import click

from prefeval.analyses.sampled_metrics import (
    DEFAULT_SAMPLE_SIZE,
    DEFAULT_SAMPLED_METRICS,
    UNRETRIEVED_POLICIES,
    SampledEvaluation,
    sampled_records,
)
from prefeval.cli.common import CONTEXT, INPUT_FILE, output_option, reported_errors
from prefeval.io.output import output_stream
from prefeval.report.formats import SAMPLED, write_records
from prefeval.runtime.memory import MAX_DRAWS


@click.command("sampled", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval sampled -R qrels.txt --num-items 10000 runA runB runC
  prefeval sampled -R qrels.txt --num-items 10000 --sample-size 10 --sample-size 100 -m ap,ndcg@10 runA runB
  prefeval sampled -R qrels.txt --num-items 5000 --replacement --draws 200 --seed 7 -q runA runB
""")
@click.option("-R", "--qrels", required=True, type=INPUT_FILE, metavar="QRELS",
              help="Relevance judgments (TREC qrels; gzip or - for stdin).")
@click.option("--num-items", type=click.IntRange(min=1), required=True, metavar="N",
              help="Catalogue size: the number of items each query's full ranking holds.")
@click.option("--sample-size", "sample_sizes", type=click.IntRange(min=1), multiple=True,
              default=(DEFAULT_SAMPLE_SIZE,), show_default=True, metavar="M",
              help="Irrelevant items sampled per query (repeatable).")
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
              help=f"A metric, or a comma-separated list (repeatable); default: {' '.join(DEFAULT_SAMPLED_METRICS)}.")
@click.option("--replacement/--no-replacement", default=False, show_default=True,
              help="Sample the irrelevant items with replacement (binomial counts) or without (hypergeometric).")
@click.option("--unretrieved", type=click.Choice(UNRETRIEVED_POLICIES), default="worst", show_default=True,
              help="Where a run's unretrieved relevant items go: worst, the bottom of the catalogue; best, right "
                   "after the run's last document.")
@click.option("--draws", type=click.IntRange(min=0), default=0, show_default=True, metavar="D",
              help=f"Also draw D Monte Carlo samplings (2 <= D <= {MAX_DRAWS:,}) and report their mean and standard "
                   "deviation.")
@click.option("--seed", type=click.IntRange(min=0), metavar="S",
              help="Seed of the Monte Carlo draws (one is drawn and reported if needed).")
@click.option("-q", "--per-query", is_flag=True, help="Also write a line per query, run, metric and sample size.")
@output_option
@click.argument("runs", nargs=-1, required=True, type=INPUT_FILE, metavar="RUN...")
def sampled_command(qrels, num_items, sample_sizes, measures, replacement, unretrieved, draws, seed, per_query, output,
                    runs):
    """Compare metrics with the expected values of sampled metrics.

    For each run and metric, the exact value on the full catalogue of N items and the exact
    expected value when each query's relevant items are ranked among M sampled irrelevant items, and
    whether the runs keep their order (Kendall's tau, discordant pairs)."""
    with reported_errors():
        evaluation = SampledEvaluation.from_files(
            qrels, runs, num_items, measures, sample_sizes=list(sample_sizes), replacement=replacement,
            unretrieved=unretrieved, draws=draws, seed=seed,
        )
        with output_stream(output) as stream:
            write_records(SAMPLED, sampled_records(evaluation, per_query=per_query), stream)
