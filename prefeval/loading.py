"""Reading run files into a RankTable, several runs at a time in worker processes.

Parsing a run and ranking it (:func:`prefeval.ranktable.rank_relevant`) is independent of every other
run, and what comes back from a worker is only the run's RankTable row (the ranks of the relevant
documents: kilobytes), so runs are spread over ``jobs`` processes. The result does not depend on
``jobs``. A run read from stdin (``-``) is parsed in the main process, which owns stdin.
"""

from __future__ import annotations

from typing import Sequence

from prefeval.io.source import STDIN
from prefeval.io.trec import Qrels, read_run
from prefeval.parallel import default_jobs, fork_map
from prefeval.progress import SILENT, Progress
from prefeval.ranktable import RankTable, RelevantLookup, rank_relevant


def load_runs(
    qrels: Qrels,
    paths: Sequence[str],
    topk: int | None = None,
    jobs: int | None = None,
    progress: Progress = SILENT,
) -> RankTable:
    """Parse and rank the run files (in command-line order) against ``qrels``."""
    lookup = RelevantLookup(qrels)

    def rank(path: str):
        return rank_relevant(read_run(path), lookup, topk)

    files = [path for path in paths if path != STDIN]
    progress.start("parsing runs", len(paths))
    try:
        ranked = {}
        for path, run in zip(files, fork_map(rank, files, jobs or default_jobs())):
            ranked[path] = run
            progress.advance()
        if STDIN in paths:
            ranked[STDIN] = rank(STDIN)
            progress.advance()
    finally:
        progress.finish()
    return RankTable.from_ranked(qrels, (ranked[path] for path in paths))
