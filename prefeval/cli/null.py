"""``prefeval null``: each metric's distribution under a random ranking, and runs tested against it."""

from __future__ import annotations

import click

from prefeval.analyses.null import (
    DEFAULT_DRAWS,
    DEFAULT_NULL_METRICS,
    DEFAULT_QUANTILE,
    NullEvaluation,
    null_records,
)
from prefeval.cli.common import CONTEXT, INPUT_FILE, output_option, reported_errors
from prefeval.io.output import output_stream
from prefeval.report.formats import NULL, write_records
from prefeval.runtime.memory import MAX_DRAWS


@click.command("null", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval null -R qrels.txt
  prefeval null -R qrels.txt -m ap,p@10,ndcg@10 --quantile 0.99 --seed 1 runA runB
  prefeval null -R qrels.txt --num-items 10000 --draws 100000 --seed 1 -o null.jsonl runA
""")
@click.option("-R", "--qrels", required=True, type=INPUT_FILE, metavar="QRELS",
              help="Relevance judgments (TREC qrels; gzip or - for stdin).")
@click.option("--num-items", type=click.IntRange(min=1), metavar="N",
              help="Items a random ranking orders, for every query (default: the query's judged documents).")
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
              help=f"A metric, or a comma-separated list (repeatable); default: {' '.join(DEFAULT_NULL_METRICS)}.")
@click.option("--quantile", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=DEFAULT_QUANTILE,
              show_default=True, metavar="Q", help="The quantile of the null distribution that a run must beat.")
@click.option("--draws", type=click.IntRange(min=1), default=DEFAULT_DRAWS, show_default=True, metavar="D",
              help=f"Random rankings per query for what has no closed form (the quantiles of AP, nDCG, ...); at most "
                   f"{MAX_DRAWS:,}.")
@click.option("--seed", type=click.IntRange(min=0), metavar="S",
              help="Seed of the random rankings (one is drawn and reported if needed).")
@output_option
@click.argument("runs", nargs=-1, type=INPUT_FILE, metavar="[RUN...]")
def null_command(qrels, num_items, measures, quantile, draws, seed, output, runs):
    """Compare metrics with their values under random rankings.

    For each query, each metric's expected value and QUANTILE threshold under a uniformly random
    ranking of its N items; with RUNs, each run's value, whether it beats the threshold, and per run
    the fraction of queries where it does."""
    with reported_errors():
        evaluation = NullEvaluation.from_files(qrels, runs, measures, num_items=num_items, quantile=quantile,
                                               draws=draws, seed=seed)
        with output_stream(output) as stream:
            write_records(NULL, null_records(evaluation), stream)
