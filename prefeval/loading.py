"""Reading run files into a RankTable, in parallel worker processes.

Parsing a run and ranking it (:func:`prefeval.ranktable.rank_relevant`) is independent of every other
run, and what comes back from a worker is only the run's RankTable row (the ranks of the relevant
documents: kilobytes), so runs are spread over ``jobs`` processes. The result does not depend on
``jobs``. A run read from stdin (``-``) is parsed in the main process, which owns stdin.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Iterator, Sequence

from prefeval.io.source import STDIN
from prefeval.io.trec import Qrels, read_run
from prefeval.progress import SILENT, Progress
from prefeval.ranktable import RankedRun, RankTable, RelevantLookup, rank_relevant


def default_jobs() -> int:
    """The number of processors this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def load_runs(
    qrels: Qrels,
    paths: Sequence[str],
    topk: int | None = None,
    jobs: int | None = None,
    progress: Progress = SILENT,
) -> RankTable:
    """Parse and rank the run files (in command-line order) against ``qrels``."""
    lookup = RelevantLookup(qrels)
    jobs = max(1, min(jobs or default_jobs(), len(paths)))
    progress.start("parsing runs", len(paths))
    try:
        ranked = []
        for run in _ranked_runs(paths, lookup, topk, jobs):
            ranked.append(run)
            progress.advance()
    finally:
        progress.finish()
    return RankTable.from_ranked(qrels, ranked)


def _ranked_runs(paths: Sequence[str], lookup: RelevantLookup, topk: int | None, jobs: int) -> Iterator[RankedRun]:
    if jobs == 1:
        for path in paths:
            yield rank_relevant(read_run(path), lookup, topk)
        return
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=_context(), initializer=_start_worker,
                               initargs=(lookup, topk))
    try:
        futures = [None if path == STDIN else pool.submit(_rank_file, path) for path in paths]
        for path, future in zip(paths, futures):
            yield rank_relevant(read_run(path), lookup, topk) if future is None else future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _context():
    """fork where the platform has it (workers inherit the qrels for free), else spawn."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


_WORKER: dict = {}


def _start_worker(lookup: RelevantLookup, topk: int | None) -> None:
    _WORKER["lookup"], _WORKER["topk"] = lookup, topk


def _rank_file(path: str) -> RankedRun:
    return rank_relevant(read_run(path), _WORKER["lookup"], _WORKER["topk"])
