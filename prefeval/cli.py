"""The ``prefeval`` command line: it parses options, calls the library, and writes.

Options keep the spellings of the reference scripts (``--query_eval_wanted``) and accept dashed ones
(``--query-eval-wanted``), so existing experiment scripts keep working.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Iterator

import click

from prefeval import __version__
from prefeval.aggregate import aggregate
from prefeval.errors import InputError, UsageError
from prefeval.evaluation import Evaluation
from prefeval.io.jsonl import output_stream, write_jsonl
from prefeval.measures import MEASURE_SETS
from prefeval.orderings import DEFAULT_DAMPING
from prefeval.records import evaluation_records
from prefeval.sampling import LABEL_POLICIES, draw_seed

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
FRACTION = click.FloatRange(0.0, 1.0, min_open=True)


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="prefeval")
def main() -> None:
    """Evaluate ranked runs against TREC qrels, with preferences (RPP, lexicographic recall and
    precision) and trec_eval's metrics, and aggregate the results into system orderings.

    \b
    prefeval eval -q --qrels QRELS RUN1 RUN2 ... | prefeval aggregate -P -
    """


def _note(message: str) -> None:
    click.echo(f"prefeval: note: {message}", err=True)


@contextlib.contextmanager
def _reported_errors() -> Iterator[None]:
    """Turn bad input and impossible requests into one line on stderr and an exit code."""
    try:
        yield
    except InputError as error:
        click.echo(f"prefeval: error: {error}", err=True)
        sys.exit(1)
    except UsageError as error:
        click.echo(f"prefeval: error: {error}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        # the reader of our stdout went away (``| head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)


@main.command("eval", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval eval -q -R qrels.txt runA runB runC > prefs.jsonl
  prefeval eval -R qrels.txt -m ap,ndcg@10,p@5,10 -b 1 run.gz
  prefeval eval -q -R qrels.txt --samples 10 --query_fraction 0.5 --seed 1 runA runB
""")
@click.option("-R", "--qrels", required=True, metavar="QRELS", help="Relevance judgments (TREC qrels; gzip or - for stdin).")
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
              help="A measure, or a comma-separated list (repeatable): rpp, invrpp, dcgrpp, lexirecall, "
                   "lexiprecision, rrlexiprecision, ap[@k], rbp[@gamma[,k]], rr[@k], ndcg[@k], rp, p@k, r@k.")
@click.option("-M", "--measure_set", "--measure-set", type=click.Choice(MEASURE_SETS), default="none", show_default=True,
              help="preferences: add the six preference measures; all: add the default list; none: only -m "
                   "(the default list when there is no -m).")
@click.option("-b", "--binary_relevance", "--binary-relevance", type=float, metavar="GRADE",
              help="Binary relevance: grade >= GRADE is relevant (1), anything else is not (0).")
@click.option("-f", "--relevance_floor", "--relevance-floor", type=float, metavar="GRADE",
              help="Grades below GRADE become 0 (non-relevant).")
@click.option("-q", "--query_eval_wanted", "--query-eval-wanted", is_flag=True, help="Write per-query lines.")
@click.option("-n", "--nosummary", "--no-summary", is_flag=True, help="Do not write the summary lines.")
@click.option("--topk", type=click.IntRange(min=1), metavar="K", help="Truncate every run to its first K documents.")
@click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
              help="Repeat the evaluation N times with fresh subsampling (the 'sample' field).")
@click.option("--query_fraction", "--query-fraction", type=FRACTION, default=1.0, show_default=True,
              help="Keep this fraction of the queries in each sample (at least one).")
@click.option("--label_fraction", "--label-fraction", type=FRACTION, default=1.0, show_default=True,
              help="Keep this fraction of each query's relevant judgments (at least one).")
@click.option("--label_fraction_policy", "--label-fraction-policy", type=click.Choice(LABEL_POLICIES), default="random",
              show_default=True, help="random: drop judgments at random; pool: drop first those retrieved by the fewest runs.")
@click.option("--seed", type=click.IntRange(min=0), help="Seed for every random choice (one is drawn and reported if needed).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file (atomically) instead of stdout.")
@click.argument("runs", nargs=-1, required=True, metavar="RUN...")
def eval_command(qrels, measures, measure_set, binary_relevance, relevance_floor, query_eval_wanted, nosummary,
                 topk, samples, query_fraction, label_fraction, label_fraction_policy, seed, output, runs):
    """Evaluate RUNs against QRELS and write JSON lines: per query (-q) and summary means of every
    pair of runs (preferences, and metric differences) and of every run (metrics)."""
    with _reported_errors():
        evaluation = Evaluation.from_files(
            qrels, runs, measures, measure_set,
            binary_relevance=binary_relevance, relevance_floor=relevance_floor, topk=topk,
            samples=samples, query_fraction=query_fraction, label_fraction=label_fraction,
            label_policy=label_fraction_policy, seed=seed,
        )
        for message in evaluation.notes:
            _note(message)
        with output_stream(output) as stream:
            write_jsonl(evaluation_records(evaluation, per_query=query_eval_wanted, summary=not nosummary), stream)


@main.command("aggregate", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval eval -q -R qrels.txt runA runB runC | prefeval aggregate -P -
  prefeval aggregate -P prefs.jsonl.gz -m rpp -m ap -q
  prefeval aggregate -P prefs.jsonl --query_fraction 0.5 --num_samples 100 --seed 7
""")
@click.option("-P", "--prefs", required=True, metavar="PREFS", help="Per-query eval lines (from eval -q; gzip or - for stdin).")
@click.option("-q", "--query_eval_wanted", "--query-eval-wanted", is_flag=True, help="Write the per-query orderings.")
@click.option("-n", "--nosummary", "--no-summary", is_flag=True, help="Do not write the summary orderings.")
@click.option("-m", "--measure", "--metric", "measures", multiple=True, metavar="MEASURE",
              help="Aggregate this measure (repeatable; default: every measure in PREFS).")
@click.option("--query_fraction", "--query-fraction", type=FRACTION, default=1.0, show_default=True,
              help="Aggregate over this fraction of the queries of sample 0, drawn --num_samples times.")
@click.option("--num_samples", "--num-samples", type=click.IntRange(min=1),
              help="Number of query subsamples (with --query_fraction; default 1), else the first N samples of PREFS.")
@click.option("--seed", type=click.IntRange(min=0), help="Seed for the query subsampling.")
@click.option("--mc4-damping", "--mc4_damping", "damping", type=click.FloatRange(0.0, 1.0, max_open=True),
              default=DEFAULT_DAMPING, show_default=True, help="Teleport probability of the MC4 chain (0: the pure chain).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file (atomically) instead of stdout.")
def aggregate_command(prefs, query_eval_wanted, nosummary, measures, query_fraction, num_samples, seed, damping, output):
    """Order the runs of per-query eval lines: per query (-q), and over queries by MC4 and Borda for
    preferences and by the mean for metrics."""
    with _reported_errors():
        if query_fraction < 1.0 and seed is None:
            seed = draw_seed()
            _note(f"no --seed given; drew seed {seed} (pass --seed {seed} to repeat)")
        records = aggregate(prefs, measures, per_query=query_eval_wanted, summary=not nosummary,
                            query_fraction=query_fraction, num_samples=num_samples, seed=seed, damping=damping)
        with output_stream(output) as stream:
            write_jsonl(records, stream)
