"""Reading runs into a RankTable, several runs at a time in worker processes.

Parsing a run and ranking it (:func:`prefeval.ranking.ranktable.rank_relevant`) is independent of every other
run, and what comes back from a worker is only the run's RankTable row (the ranks of the relevant
documents: kilobytes), so runs are spread over ``jobs`` processes. The result does not depend on
``jobs``. A run read from stdin (``-``) is parsed in the main process, which owns stdin.
"""

from __future__ import annotations

from collections.abc import Sequence

from prefeval.io.inputs import Judgments, load_qrels, load_run, named_runs
from prefeval.io.source import STDIN, check_stdin_used_once
from prefeval.io.trec import Qrels
from prefeval.ranking.ranktable import RankedRun, RankTable, RelevantLookup, rank_relevant
from prefeval.runtime.parallel import default_jobs, fork_map
from prefeval.runtime.progress import SILENT, Progress


def load_collection(
    qrels: Judgments,
    runs,
    binary_relevance: float | None = None,
    relevance_floor: float | None = None,
    topk: int | None = None,
    jobs: int | None = None,
    progress: Progress = SILENT,
) -> tuple[Qrels, RankTable]:
    """Read the qrels and rank the runs against them. Each may be a path (``-`` for stdin, at most
    once), a DataFrame or a dict; ``runs`` a list or a dict ``{name: run}`` (:mod:`prefeval.io.inputs`)."""
    named = named_runs(runs)
    check_stdin_used_once([qrels, *(run for _, run in named)])
    judgments = load_qrels(qrels, binary_relevance, relevance_floor)
    return judgments, rank_runs(judgments, named, topk, jobs, progress)


def rank_runs(
    qrels: Qrels,
    runs: Sequence[tuple[str | None, Judgments]],
    topk: int | None = None,
    jobs: int | None = None,
    progress: Progress = SILENT,
) -> RankTable:
    """Rank the runs, given as (name, run) as :func:`prefeval.io.inputs.named_runs` lists them,
    against ``qrels``, in their order."""
    lookup = RelevantLookup(qrels)

    def rank(number: int) -> RankedRun:
        name, run = runs[number]
        return rank_relevant(load_run(run, name), lookup, topk)

    from_stdin = [n for n, (_, run) in enumerate(runs) if isinstance(run, str) and run == STDIN]
    elsewhere = [n for n in range(len(runs)) if n not in from_stdin]
    progress.start("parsing runs", len(runs))
    try:
        ranked = {}
        for number, run in zip(elsewhere, fork_map(rank, elsewhere, jobs or default_jobs())):
            ranked[number] = run
            progress.advance()
        for number in from_stdin:
            ranked[number] = rank(number)
            progress.advance()
    finally:
        progress.finish()
    return RankTable.from_ranked(qrels, (ranked[number] for number in range(len(runs))))
