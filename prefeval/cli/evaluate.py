"""``prefeval eval``: evaluate runs against qrels and write JSON lines."""

from __future__ import annotations

import click

from prefeval.cli.common import (
    CONTEXT,
    FRACTION,
    INPUT_FILE,
    output_option,
    reported_errors,
)
from prefeval.engines import (
    AUTO,
    DASK,
    ENGINES,
    STREAM,
    check_engine,
    input_size,
    streaming_obstacle,
    write_files_evaluation,
)
from prefeval.errors import UsageError
from prefeval.evaluation import Evaluation
from prefeval.io.jsonl import output_stream
from prefeval.measures import MEASURE_SETS
from prefeval.measures.summaries import STATISTICS
from prefeval.measures.ties import DEFAULT_DRAWS, DOCID, TIE_POLICIES
from prefeval.ranking.options import DROP, EMPTY_QUERIES, MISSING_QUERIES, SKIP, WORST
from prefeval.ranking.subsampling import LABEL_POLICIES
from prefeval.report.evaluation import check_evaluation_format, write_evaluation
from prefeval.report.formats import EVAL_FORMATS, IR_MEASURES_FORMAT, TREC_EVAL_FORMAT, write_lines
from prefeval.runtime.progress import Progress


@click.command("eval", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval eval -q -R qrels.txt runA runB runC > prefs.jsonl
  prefeval eval -R qrels.txt -m ap,ndcg@10,p@5,10 -b 1 run.gz
  prefeval eval -q -R qrels.txt --samples 10 --query_fraction 0.5 --seed 1 runA runB
  prefeval eval -q -R qrels.txt -m ap,ndcg@10,p@10 --format tsv run.gz
  prefeval eval -R qrels.txt -m ap,ndcg@10,rpp --format markdown --baseline runA runA runB runC
  prefeval eval -q -R qrels.txt --ties expected --seed 1 runA runB | prefeval aggregate -P -
  prefeval eval --format trec_eval -q -c -m all_trec -R qrels.txt run.gz
""")
@click.option("-R", "--qrels", required=True, type=INPUT_FILE, metavar="QRELS",
              help="Relevance judgments (TREC qrels; gzip or - for stdin).")
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
              help="A measure, or a comma-separated list (repeatable): rpp, invrpp, dcgrpp, lexirecall, "
                   "lexiprecision, rrlexiprecision, ap[@k], rbp[@gamma[,k]], rr[@k], ndcg[@k], rp, p@k, r@k, auc, "
                   "f@k[,beta], success@k, dcg[@k], ndcg_exp[@k], cg[@k], pfound[@k[,pbreak]]; trec_eval and "
                   "ir_measures names too (map, P.10, nDCG@10): see `prefeval measures`.")
@click.option("-M", "--measure_set", "--measure-set", type=click.Choice(MEASURE_SETS), default="none",
              show_default=True,
              help="preferences: add the six preference measures; all: add the default list; none: only -m "
                   "(the default list when there is no -m).")
@click.option("-b", "--binary_relevance", "--binary-relevance", type=float, metavar="GRADE",
              help="Binary relevance: grade >= GRADE is relevant (1), anything else is not (0).")
@click.option("-f", "--relevance_floor", "--relevance-floor", type=float, metavar="GRADE",
              help="Grades below GRADE become 0 (non-relevant).")
@click.option("-l", "--relevance_level", "--relevance-level", type=float, metavar="GRADE",
              help="Binary measures count grade >= GRADE as relevant (trec_eval -l); graded ones (ndcg, "
                   "graded RPP) keep every positive grade.")
@click.option("-q", "--query_eval_wanted", "--query-eval-wanted", is_flag=True, help="Write per-query lines.")
@click.option("-n", "--nosummary", "--no-summary", is_flag=True, help="Do not write the summary lines.")
@click.option("--summary", "summary_statistics", multiple=True, type=click.Choice(list(STATISTICS)),
              help="A statistic of each metric over the queries for the summary (repeatable; default: mean): median, "
                   "min, q10 (10% quantile), cvar10 (mean of the worst 10% of queries), gini (Gini coefficient).")
@click.option("--topk", type=click.IntRange(min=1), metavar="K", help="Truncate every run to its first K documents.")
@click.option("--ties", type=click.Choice(TIE_POLICIES), default=DOCID, show_default=True,
              help="Documents with equal scores: docid orders them as trec_eval does; expected gives every value's "
                   "expectation over random orders; range adds each value's minimum and maximum over all orders.")
@click.option("--draws", type=click.IntRange(min=2), default=DEFAULT_DRAWS, show_default=True,
              help="With --ties expected: random orders drawn for a lexicographic preference on a query with more "
                   "joint orders than this (fewer are all enumerated).")
@click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
              help="Repeat the evaluation N times with fresh subsampling (the 'sample' field).")
@click.option("--query_fraction", "--query-fraction", type=FRACTION, default=1.0, show_default=True,
              help="Keep this fraction of the queries in each sample (at least one).")
@click.option("--label_fraction", "--label-fraction", type=FRACTION, default=1.0, show_default=True,
              help="Keep this fraction of each query's relevant judgments (at least one).")
@click.option("--label_fraction_policy", "--label-fraction-policy", type=click.Choice(LABEL_POLICIES), default="random",
              show_default=True,
              help="random: drop judgments at random; pool: drop first those retrieved by the fewest runs.")
@click.option("--seed", type=click.IntRange(min=0),
              help="Seed for every random choice (one is drawn and reported if needed).")
@click.option("--jobs", type=click.IntRange(min=1), help="Work in this many processes (default: one per processor).")
@click.option("--quiet", is_flag=True, help="No progress line on stderr (it is shown only on a terminal anyway).")
@click.option("--format", "fmt", type=click.Choice(EVAL_FORMATS), default="jsonl", show_default=True,
              help="jsonl; tsv: trec_eval's text layout of prefeval's lines; trec_eval: trec_eval's output, byte "
                   "for byte, with its conventions; ir_measures: ir_measures' output; table, markdown, latex: a "
                   "runs × measures table of means.")
@click.option("--baseline", metavar="RUN",
              help="In a table: compare every run with this run id (preferences over it; ↑/↓ where significantly "
                   "better/worse by a paired t-test with Holm's correction, alpha 0.05).")
@click.option("-c", "--complete", is_flag=True,
              help="trec_eval -c: a query a run lacks counts as retrieving nothing (--missing-queries worst).")
@click.option("-J", "--judged_only", "--judged-only", is_flag=True,
              help="trec_eval -J: remove the documents that are not judged from every run before ranking.")
@click.option("-N", "--num_docs", "--num-docs", type=click.IntRange(min=0), metavar="N",
              help="trec_eval -N: the number of documents in the collection (read by utility).")
@click.option("--empty-queries", "--empty_queries", type=click.Choice(EMPTY_QUERIES), default=None,
              help="Queries of the qrels without a relevant document: drop them (the reference pref_eval.py; the "
                   "default) or keep them (trec_eval, ir_measures; the default of --format trec_eval).")
@click.option("--missing-queries", "--missing_queries", type=click.Choice(MISSING_QUERIES), default=None,
              help="Queries a run lacks: worst scores them as retrieving nothing (the reference, trec_eval -c; "
                   "the default) or skip leaves them out (trec_eval without -c; the default of --format trec_eval).")
@click.option("--engine", type=click.Choice(ENGINES), default=AUTO, show_default=True,
              help="memory: read every run whole; stream: read and evaluate chunks of queries, in memory that "
                   "does not grow with the collection (files only, runs in the qrels' query order, else it falls "
                   "back to memory); dask: stream, each chunk evaluated on a Dask cluster; auto: stream where it "
                   "applies to inputs of 128 MiB or more. Every engine writes the same bytes.")
@click.option("--scheduler", metavar="ADDRESS",
              help="With --engine dask: the address of the Dask scheduler (tcp://host:8786); default: a local "
                   "cluster of --jobs workers.")
@output_option
@click.argument("runs", nargs=-1, required=True, type=INPUT_FILE, metavar="RUN...")
def eval_command(qrels, measures, measure_set, binary_relevance, relevance_floor, relevance_level, query_eval_wanted,
                 nosummary, topk, samples, query_fraction, label_fraction, label_fraction_policy, seed, jobs, quiet,
                 fmt, baseline, output, runs, summary_statistics, ties, draws, complete, judged_only, num_docs,
                 empty_queries, missing_queries, engine, scheduler):
    """Evaluate RUNs against QRELS with preferences and metrics.

    Writes JSON lines: per query (-q) and summary means of every pair of runs (preferences, and
    metric differences) and of every run (metrics). --format trec_eval prints what trec_eval prints
    (-m then takes trec_eval's names: official, all_trec, P.5,10, ...)."""
    with reported_errors():
        check_evaluation_format(fmt, per_query=query_eval_wanted, summary=not nosummary, baseline=baseline)
        if nosummary and summary_statistics:
            raise UsageError("--summary chooses the statistics of the summary, which -n drops: give one or the other")
        if complete and missing_queries == SKIP:
            raise UsageError("-c scores missing queries as retrieving nothing, --missing-queries skip leaves them "
                             "out: give one or the other")
        progress = Progress.for_terminal(quiet)
        if fmt in (TREC_EVAL_FORMAT, IR_MEASURES_FORMAT) and engine in (STREAM, DASK):
            raise UsageError(f"--format {fmt} lists every query of a run before the next run: it reads the "
                             "collection in memory (--engine memory)")
        if fmt == TREC_EVAL_FORMAT:  # each tool's layout and conventions, imported only when asked for
            from prefeval.report.trec_eval import check_trec_eval_options, trec_eval_evaluation, trec_eval_report

            check_trec_eval_options(measure_set=measure_set, binary_relevance=binary_relevance,
                                    relevance_floor=relevance_floor, samples=samples, query_fraction=query_fraction,
                                    label_fraction=label_fraction, summary=summary_statistics, ties=ties,
                                    empty_queries=empty_queries, missing_queries=missing_queries)
            evaluation, items = trec_eval_evaluation(
                qrels, runs, measures, complete=complete, judged_only=judged_only, relevance_level=relevance_level,
                topk=topk, num_docs=num_docs, jobs=jobs, progress=progress)
            with output_stream(output) as stream:
                write_lines(trec_eval_report(evaluation, items, per_query=query_eval_wanted, summary=not nosummary),
                            stream)
            return
        if fmt == IR_MEASURES_FORMAT:
            from prefeval.report.ir_measures import ir_measures_evaluation, ir_measures_report
            from prefeval.report.trec_eval import check_trec_eval_options

            check_trec_eval_options(measure_set=measure_set, binary_relevance=binary_relevance,
                                    relevance_floor=relevance_floor, samples=samples, query_fraction=query_fraction,
                                    label_fraction=label_fraction, summary=summary_statistics, ties=ties,
                                    empty_queries=empty_queries, missing_queries=missing_queries, num_docs=num_docs,
                                    complete=complete or None)
            if not measures:
                raise UsageError("--format ir_measures needs measures (-m), as ir_measures does")
            evaluation, names = ir_measures_evaluation(qrels, runs, measures, relevance_level=relevance_level,
                                                       topk=topk, judged_only=judged_only, jobs=jobs,
                                                       progress=progress)
            with output_stream(output) as stream:
                write_lines(ir_measures_report(evaluation, names, per_query=query_eval_wanted, summary=not nosummary),
                            stream)
            return
        if num_docs is not None:
            raise UsageError("-N sets the collection size of trec_eval's utility in --format trec_eval; elsewhere "
                             "give it to the measure: utility@a,b,c,d,N")
        engine = check_engine(engine, scheduler, streaming_obstacle(qrels, runs, samples, query_fraction,
                                                                    label_fraction), input_size(qrels, runs))

        def make(chosen: str) -> Evaluation:
            return Evaluation.from_files(
                qrels, runs, measures, measure_set,
                binary_relevance=binary_relevance, relevance_floor=relevance_floor, relevance_level=relevance_level,
                topk=topk, samples=samples, query_fraction=query_fraction, label_fraction=label_fraction,
                label_fraction_policy=label_fraction_policy, seed=seed, jobs=jobs, progress=progress,
                summary=summary_statistics, ties=ties, draws=draws, empty_queries=empty_queries or DROP,
                missing_queries=WORST if complete else (missing_queries or WORST), judged_only=judged_only,
                stream=chosen == STREAM,
            )

        def write(evaluation: Evaluation, stream) -> None:
            write_evaluation(evaluation, stream, fmt, per_query=query_eval_wanted, summary=not nosummary,
                             baseline=baseline)

        write_files_evaluation(make, write, output, engine, scheduler)
