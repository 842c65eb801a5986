"""``prefeval eval``: evaluate runs against qrels and write JSON lines."""

from __future__ import annotations

import os

import click

from prefeval.cli.common import (
    CONTEXT,
    FRACTION,
    INPUT_FILE,
    InputFile,
    output_option,
    reported_errors,
)
from prefeval.engine import AUTO, ENGINE_NAMES, check_engine, engines_help, input_shape, streaming_obstacle
from prefeval.errors import UsageError
from prefeval.io.judgments import KINDS, QRELS, judgments_obstacle, kinds_help
from prefeval.io.source import check_stdin_used_once
from prefeval.measures import MEASURE_SETS, read_request, select_measures
from prefeval.measures.base import families, family_syntax
from prefeval.measures.foreign import TOOLS
from prefeval.measures.judgments import check_judgments
from prefeval.measures.order import OWN_FAMILIES
from prefeval.measures.summaries import STATISTICS
from prefeval.measures.ties import DEFAULT_DRAWS, DOCID, TIE_POLICIES
from prefeval.ranking.conventions import EMPTY_QUERIES, MISSING_QUERIES, PROFILES, conventions
from prefeval.ranking.subsampling import LABEL_POLICIES
from prefeval.report.evaluation import check_evaluated, check_evaluation_format, check_measures_shown
from prefeval.report.formats import EVALUATION, formats_for, formats_help
from prefeval.runtime.memory import MAX_TIE_DRAWS
from prefeval.runtime.progress import Progress

MEASURES_HELP = ("A measure, or a comma-separated list (repeatable): "
                 + ", ".join(family_syntax(family) for family in families() if family.family in OWN_FAMILIES)
                 + "; trec_eval and ir_measures names too (map, P.10, nDCG@10; a trec_eval name without its "
                   "parameter is trec_eval's default list: P is P.5,10,...,1000): see `prefeval measures`.")
MEASURE_NAMES = ("all", "trec_eval")
"""How ``-m`` may be read (``--measure-names``): by the one reading, or as trec_eval reads it."""
STATISTICS_HELP = ("A statistic of each metric over the queries for the summary (repeatable; default: its "
                   "measure's own, the mean): " + ", ".join(f"{name} ({statistic.description})"
                                                            for name, statistic in STATISTICS.items()
                                                            if name != "mean") + ".")


class JudgmentsFile(InputFile):
    """``-R``'s file; the name of a kind of judgments that is no file, trec_eval's ``-R qrels``
    (the format of the judgments), is answered with the option that names it here."""

    def convert(self, value, param, ctx):
        if value in KINDS and not os.path.exists(value):
            self.fail(f"{value}: no such file: -R names the judgments file here, trec_eval's -R {value} (their "
                      f"format) is --rel-format {value}, and `prefeval trec_eval` takes trec_eval's command line "
                      "as it is", param, ctx)
        return super().convert(value, param, ctx)


class MeasureSet(click.Choice):
    """``-M``'s choices; a number, trec_eval's ``-M 100`` (documents per query), is answered with
    the option that does that here."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value.isdigit():
            self.fail(f"{value!r} is not one of {', '.join(map(repr, self.choices))}: trec_eval's -M {value} "
                      f"(documents per query) is --topk {value} here, and `prefeval trec_eval` takes trec_eval's "
                      "command line as it is", param, ctx)
        return super().convert(value, param, ctx)


@click.command("eval", context_settings=CONTEXT, epilog="""\b
Examples:
  prefeval eval -q -R qrels.txt runA runB runC > prefs.jsonl
  prefeval eval -R qrels.txt -m ap,ndcg@10,p@5,10 -b 1 run.gz
  prefeval eval -q -R qrels.txt --samples 10 --query_fraction 0.5 --seed 1 runA runB
  prefeval eval -q -R qrels.txt -m ap,ndcg@10,p@10 --format tsv run.gz
  prefeval eval -R qrels.txt -m ap,ndcg@10,rpp --format markdown --baseline runA runA runB runC
  prefeval eval -q -R qrels.txt --ties expected --seed 1 runA runB | prefeval aggregate -P -
  prefeval eval --format trec_eval -q -c -m all_trec -R qrels.txt run.gz
  prefeval eval --format trec_eval -q -m all_prefs --rel-format prefs -R prefs.txt run.gz
  prefeval eval -q -m prefs_simp,prefs_pair,compat --rel-format pairs -R pairs.txt runA runB
  prefeval eval -q -R test.parquet --qrels-columns grade=rating recs/ als.parquet
""")
@click.option("-R", "--qrels", required=True, type=JudgmentsFile(), metavar="QRELS",
              help="Relevance judgments (TREC qrels, or of the kind --rel-format says; gzip or - for stdin; or "
                   "Parquet or Arrow qrels: a file or a directory of files).")
@click.option("--rel-format", "--rel_format", "rel_format", type=click.Choice(list(KINDS)), default=QRELS,
              show_default=True, help="The kind of judgments QRELS holds (trec_eval's -R): " + kinds_help()
              + ". Each kind is read by its measures only (see `prefeval measures`).")
@click.option("--qrels-columns", "--qrels_columns", "qrels_columns", metavar="ROLE=COLUMN,...",
              help="The columns of a Parquet or Arrow qrels, for the roles qid, docid, grade, iter (e.g. "
                   "qid=user,docid=item,grade=rating); a role not named is found by its usual names (qid, query_id, "
                   "user_id, docno, doc_id, item_id, rel, relevance, label, rating, iteration, ...).")
@click.option("--run-columns", "--run_columns", "run_columns", metavar="ROLE=COLUMN,...",
              help="The columns of every Parquet or Arrow run, for the roles qid, docid, score, tag (e.g. "
                   "qid=user,docid=item,score=prediction); a role not named is found by its usual names.")
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE", help=MEASURES_HELP)
@click.option("--measure-names", "--measure_names", "measure_names", type=click.Choice(MEASURE_NAMES), default="all",
              show_default=True,
              help="How -m is read: all (prefeval's, trec_eval's and ir_measures' names, one reading) or trec_eval "
                   "(trec_eval's names alone, as trec_eval reads its -m: one name per value, spelled exactly; rbp is "
                   "trec_eval's).")
@click.option("-M", "--measure_set", "--measure-set", type=MeasureSet(MEASURE_SETS), default="none",
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
              help=STATISTICS_HELP)
@click.option("--topk", type=click.IntRange(min=1), metavar="K", help="Truncate every run to its first K documents.")
@click.option("--ties", type=click.Choice(TIE_POLICIES), default=DOCID, show_default=True,
              help="Documents with equal scores: docid orders them as trec_eval does; expected gives every value's "
                   "expectation over random orders; range adds each value's minimum and maximum over all orders.")
@click.option("--draws", type=click.IntRange(min=2), default=DEFAULT_DRAWS, show_default=True,
              help="With --ties expected: random orders drawn for a lexicographic preference on a query with more "
                   f"joint orders than this (fewer are all enumerated); at most {MAX_TIE_DRAWS:,}.")
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
@click.option("--format", "fmt", type=click.Choice(formats_for(EVALUATION)), default="jsonl", show_default=True,
              help=formats_help(EVALUATION))
@click.option("--baseline", metavar="RUN",
              help="In a table: compare every run with this run id (preferences over it; ↑/↓ where significantly "
                   "better/worse by a paired t-test with Holm's correction, alpha 0.05).")
@click.option("-c", "--complete", is_flag=True,
              help="trec_eval -c: a query a run lacks counts as retrieving nothing (--missing-queries worst).")
@click.option("-J", "--judged_only", "--judged-only", is_flag=True,
              help="trec_eval -J: remove the documents that are not judged from every run before ranking.")
@click.option("-N", "--num_docs", "--num-docs", type=click.IntRange(min=0), metavar="N",
              help="trec_eval -N: the number of documents in the collection (read by utility).")
@click.option("-Z", "--zscores", type=INPUT_FILE, metavar="FILE",
              help="trec_eval -Z: in --format trec_eval, print each value's z-score against the mean and standard "
                   "deviation FILE gives for its query and measure (lines: qid measure mean stddev).")
@click.option("--conventions", "conventions_profile", type=click.Choice(list(PROFILES)), default=None,
              help="Which queries count, in which order, how sums are added: reference (pref_eval.py), trec_eval, "
                   "ir_measures. Default: the format's tool (trec_eval, ir_measures), else reference.")
@click.option("--empty-queries", "--empty_queries", type=click.Choice(EMPTY_QUERIES), default=None,
              help="Queries of the qrels without a relevant document: drop them (the reference pref_eval.py) or "
                   "keep them (trec_eval, ir_measures). Default: the conventions'.")
@click.option("--missing-queries", "--missing_queries", type=click.Choice(MISSING_QUERIES), default=None,
              help="Queries a run lacks: worst scores them as retrieving nothing (the reference, trec_eval -c), "
                   "skip leaves them out (trec_eval without -c), zero writes every measure 0 (ir_measures). "
                   "Default: the conventions'.")
@click.option("--user-groups", "--user_groups", "user_groups", type=INPUT_FILE, metavar="FILE",
              help="Users and their groups (CSV or TSV with a header, TREC-style fields, or Parquet): every summary "
                   "is also written for each group's users alone (lines with a \"group\"), then each run's "
                   "worst-off group per metric (\"type\":\"worst-off\"); users in no group count in no group.")
@click.option("--train", type=INPUT_FILE, metavar="FILE",
              help="Training interactions (user, item; CSV or TSV with a header, TREC-style fields, or Parquet): "
                   "the popularity that arp, aplt, epc, efd and poprank read; its items are the catalogue "
                   "without --items.")
@click.option("--items", "catalogue", type=INPUT_FILE, metavar="FILE",
              help="The catalogue, an item a row: what icov, gini, entropy, expshare and disparity count every "
                   "item of; a recommended item outside it is an error.")
@click.option("--item-features", "--item_features", "item_features", type=INPUT_FILE, metavar="FILE",
              help="Items and their features or categories (item, feature; a row per pair): what ild, ild_jaccard "
                   "and catcov read.")
@click.option("--item-groups", "--item_groups", "item_groups", type=INPUT_FILE, metavar="FILE",
              help="Items and their provider groups (item, group): what expshare, disparity and the provider "
                   "preference read.")
@click.option("--head-share", "--head_share", "head_share", type=click.FloatRange(0, 1, min_open=True), default=0.2,
              show_default=True,
              help="The share of the training interactions held by the popular head (the fewest most popular "
                   "items); aplt counts the other items, the long tail.")
@click.option("--engine", type=click.Choice(ENGINE_NAMES), default=AUTO, show_default=True, help=engines_help())
@click.option("--scheduler", metavar="ADDRESS",
              help="With --engine dask: the address of the Dask scheduler (tcp://host:8786); default: a local "
                   "cluster of --jobs workers.")
@output_option
@click.option("--parts", metavar="DIR",
              help="Write the lines to the new (or empty) directory DIR instead: a part file per partition of the "
                   "queries (part-00000.jsonl, ...; with --engine dask each written by the worker that evaluates "
                   "it, so DIR must be on a filesystem the workers share) and summary.jsonl; `cat DIR/*` is "
                   "the single output's bytes. jsonl only.")
@click.argument("runs", nargs=-1, required=True, type=INPUT_FILE, metavar="RUN...")
def eval_command(qrels, measures, measure_set, binary_relevance, relevance_floor, relevance_level, query_eval_wanted,
                 nosummary, topk, samples, query_fraction, label_fraction, label_fraction_policy, seed, jobs, quiet,
                 fmt, baseline, output, runs, summary_statistics, ties, draws, complete, judged_only, num_docs,
                 conventions_profile, empty_queries, missing_queries, engine, scheduler, measure_names, zscores,
                 rel_format, qrels_columns, run_columns, user_groups, train, catalogue, item_features, item_groups,
                 head_share, parts=None):
    """Evaluate RUNs against QRELS with preferences and metrics.

    Writes JSON lines: per query (-q) and summary means of every pair of runs (preferences, and
    metric differences) and of every run (metrics); or, with --format, a table, trec_eval's output
    or ir_measures' (each with its tool's conventions: --conventions)."""
    from prefeval.engine import write_files_evaluation
    from prefeval.engine.evaluation import Evaluation
    from prefeval.io.inputs import with_columns
    from prefeval.measures.ties import check_policy
    from prefeval.report.evaluation import write_evaluation

    with reported_errors():
        needs = check_evaluation_format(fmt, per_query=query_eval_wanted, summary=not nosummary, baseline=baseline,
                                        zscores=zscores is not None)
        if nosummary and summary_statistics:
            raise UsageError("--summary chooses the statistics of the summary, which -n drops: give one or the other")
        check_evaluated(fmt, measure_set, samples, query_fraction, label_fraction, summary_statistics)
        rules = conventions(conventions_profile or needs.conventions, complete=complete, empty_queries=empty_queries,
                            missing_queries=missing_queries)
        request = read_request(measures or needs.default_measures or (), num_docs,
                               tool=None if measure_names == "all" else measure_names)
        chosen = select_measures(request, measure_set)
        check_measures_shown(fmt, request, chosen)
        check_policy(ties, draws)  # before the engine's choice, which looks at the inputs
        check_judgments(rel_format, chosen, ties=ties, label_fraction=label_fraction, named=bool(measures),
                        layout_lines=[item.line for item in request.lines], tool=fmt if fmt in TOOLS else None)
        if parts is not None:
            check_parts(parts, output, fmt, samples, [qrels, *runs])
        if zscores is not None:
            from prefeval.io.zscores import read_zscores

            check_stdin_used_once([qrels, *runs, zscores])
            zscores = read_zscores(zscores)
        if user_groups is not None:  # read by the evaluation, while the qrels are (Evaluation.from_files)
            check_user_groups(fmt, nosummary)
            check_stdin_used_once([qrels, *runs, user_groups])
        side = [path for path in (train, catalogue, item_features, item_groups) if path is not None]
        if side:
            check_stdin_used_once([qrels, *runs, *side, *([user_groups] if user_groups else [])])
        progress = Progress.for_terminal(quiet)
        qrels, runs = with_columns(qrels, runs, qrels_columns, run_columns)
        obstacle = judgments_obstacle(rel_format) or streaming_obstacle(qrels, runs, samples, query_fraction,
                                                                         label_fraction, rules)
        engine = check_engine(engine, scheduler, obstacle, input_shape(qrels, runs, jobs), per_query=query_eval_wanted)

        def make(reader: str, executor) -> Evaluation:
            return Evaluation.from_files(
                qrels, runs, chosen or ["num_q"],  # a layout of lines only (-m runid) evaluates no measure
                binary_relevance=binary_relevance, relevance_floor=relevance_floor, relevance_level=relevance_level,
                topk=topk, samples=samples, query_fraction=query_fraction, label_fraction=label_fraction,
                label_fraction_policy=label_fraction_policy, seed=seed, jobs=jobs, progress=progress,
                summary=summary_statistics, ties=ties, draws=draws, conventions=rules, judged_only=judged_only,
                compare=needs.compares, others=any(item.line is not None for item in request.lines),
                reader=reader, executor=executor, rel_format=rel_format, user_groups=user_groups, train=train,
                items=catalogue, item_features=item_features, item_groups=item_groups, head_share=head_share,
            )

        def write(evaluation: Evaluation, stream) -> None:
            write_evaluation(evaluation, stream, fmt, per_query=query_eval_wanted, summary=not nosummary,
                             baseline=baseline, request=request, zscores=zscores)

        write_files_evaluation(make, write, output, engine, scheduler, jobs, parts=parts)


def check_parts(parts: str, output: str | None, fmt: str, samples: int, inputs: list[str]) -> None:
    """``--parts DIR`` as it can be written (before any work): not with ``-o``, in jsonl, one sample
    (the summary is the last part), and a new or empty directory that holds no input."""
    from prefeval.io.output import check_parts_directory

    if output is not None:
        raise UsageError("--parts writes a directory of parts, -o one file: give one or the other")
    if fmt != "jsonl":
        raise UsageError(f"--parts writes JSON lines (jsonl), not {fmt}")
    if samples != 1:
        raise UsageError("--parts writes one sample (its summary is the last part): drop --samples")
    check_parts_directory(parts, inputs)


def check_user_groups(fmt: str, nosummary: bool) -> None:
    """``--user-groups`` breaks the summary down: it needs the summary (no ``-n``) and a format of
    lines (jsonl or tsv)."""
    if nosummary:
        raise UsageError("--user-groups breaks the summary down by group, which -n drops: give one or the other")
    if fmt not in ("jsonl", "tsv"):
        raise UsageError(f"--user-groups writes the summary of each group as lines (jsonl or tsv), not {fmt}")
