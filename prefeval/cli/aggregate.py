"""``prefeval aggregate``: system orderings from per-query eval lines."""

from __future__ import annotations

import click

from prefeval.analyses.aggregate import aggregate
from prefeval.analyses.orderings import DEFAULT_DAMPING
from prefeval.cli.common import (
    CONTEXT,
    FRACTION,
    INPUT_FILE,
    output_option,
    reported_errors,
    user_groups_option,
)
from prefeval.errors import UsageError
from prefeval.io.output import output_stream
from prefeval.report.formats import ORDERINGS, formats_for, formats_help, write_records
from prefeval.runtime.memory import MAX_RESAMPLES


@click.command("aggregate", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval eval -q -R qrels.txt runA runB runC | prefeval aggregate -P -
  prefeval aggregate -P prefs.jsonl.gz -m rpp -m ap -q
  prefeval aggregate -P prefs.jsonl --query_fraction 0.5 --num_samples 100 --seed 7
  prefeval aggregate -P prefs.jsonl -m rpp,ap --format markdown
  prefeval aggregate -P prefs.jsonl --correlations -n
  prefeval aggregate -P prefs.jsonl -m ap:median,ap:cvar10,rpp
  prefeval aggregate -P prefs.jsonl -m ap,ndcg,rpp --bootstrap 1000 --seed 1 --format table
  prefeval aggregate -P prefs.jsonl --user-groups users.tsv
""")
@click.option("-P", "--prefs", required=True, type=INPUT_FILE, metavar="PREFS",
              help="Per-query eval lines (from eval -q; gzip or - for stdin).")
@click.option("-q", "--query_eval_wanted", "--query-eval-wanted", is_flag=True, help="Write the per-query orderings.")
@click.option("-n", "--nosummary", "--no-summary", is_flag=True, help="Do not write the summary orderings.")
@click.option("-m", "--measure", "--metric", "measures", multiple=True, metavar="MEASURE",
              help="Aggregate this measure (repeatable; default: every measure in PREFS); a metric by another "
                   "statistic over queries than the mean as METRIC:STAT, STAT one of median, min, q10, cvar10, "
                   "gini (ap:median).")
@click.option("--query_fraction", "--query-fraction", type=FRACTION, default=1.0, show_default=True,
              help="Aggregate over this fraction of the queries of sample 0, drawn --num_samples times.")
@click.option("--num_samples", "--num-samples", type=click.IntRange(min=1),
              help="Number of query subsamples (with --query_fraction; default 1), else the first N samples of PREFS.")
@click.option("--seed", type=click.IntRange(min=0),
              help="Seed of the query subsampling and the bootstrap (one is drawn and reported if needed).")
@click.option("--bootstrap", type=click.IntRange(min=1), metavar="B",
              help="Also rank the runs on B resamples of the queries: each run's 95% rank interval, its "
                   f"probability of each rank, and tiers of runs whose intervals overlap (B <= {MAX_RESAMPLES:,}).")
@click.option("--mc4-damping", "--mc4_damping", "damping", type=click.FloatRange(0.0, 1.0, max_open=True),
              default=DEFAULT_DAMPING, show_default=True,
              help="Teleport probability of the MC4 chain (0: the pure chain).")
@click.option("--format", "fmt", type=click.Choice(formats_for(ORDERINGS)), default="jsonl", show_default=True,
              help=formats_help(ORDERINGS))
@user_groups_option("the summary (and --bootstrap's rank intervals), followed by each run's worst-off group by "
                    "each metric,")
@click.option("--correlations", is_flag=True,
              help="Also write Kendall's tau between the orderings of every two measures (after each summary; "
                   "JSON lines).")
@output_option
def aggregate_command(prefs, query_eval_wanted, nosummary, measures, query_fraction, num_samples, seed, bootstrap,
                      damping, fmt, user_groups, correlations, output):
    """Order the runs of per-query eval lines, by each measure.

    Per query (-q), and over queries by MC4 and Borda for preferences and by the mean for metrics."""
    with reported_errors():
        for option, given in (("--correlations", correlations), ("--user-groups", user_groups)):
            if given and fmt != "jsonl":
                raise UsageError(f"{option} writes JSON lines: use --format jsonl")
        if bootstrap and fmt != "jsonl" and query_eval_wanted:
            raise UsageError(f"--format {fmt} with --bootstrap shows the rank intervals; per-query orderings (-q) "
                             "need jsonl")
        # in tsv and the tables, the bootstrap's rows carry each run's rank and score: they replace the summary
        summary = not nosummary and not (bootstrap and fmt != "jsonl")
        records = aggregate(prefs, measures, per_query=query_eval_wanted, summary=summary,
                            query_fraction=query_fraction, num_samples=num_samples, seed=seed, damping=damping,
                            correlations=correlations, bootstrap=bootstrap, user_groups=user_groups)
        with output_stream(output) as stream:
            write_records(ORDERINGS, records, stream, fmt)
