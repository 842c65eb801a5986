"""Where the wall time of ``eval -q --engine dask`` goes: each task of the evaluation, on which worker
it ran, when it started and ended (seconds after the client's process started), through real clusters
of 1 and 2 single-threaded workers (:func:`run.dask_cluster`), on the 2 runs × 1M users collection
(``benchmarks/recommender.py``) as text files, Parquet files or directories of Parquet files.

    python benchmarks/timeline.py [--inputs text|parquet|partitioned] [--users 1000000]

The times come from the scheduler's task stream (``Client.get_task_stream``): what the planning tasks
(``_run_keeping``, the first one the qrels' index) take while the other worker waits, how long a
partition's task (``_chunk_kernel``) takes with one worker and with two, and what is left before the
first task (the client's start) and after the last (its end) are the parts of the wall time that a
second worker does not divide. Each worker is named by the last digits of its port; the partition
tasks' total and median end each cluster's list.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from recommender import PARQUET, PARTITIONED, TEXT, write_recommender
from run import CACHE, dask_cluster

FORMS = {"text": TEXT, "parquet": PARQUET, "partitioned": PARTITIONED}
PARTITION_TASK = "_chunk_kernel"
"""The name of a partition's task; their total with one worker over their total with two, times two,
bounds what a second worker can gain (the tasks take longer side by side)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", choices=sorted(FORMS), default="text")
    parser.add_argument("--users", type=int, default=1_000_000)
    args = parser.parse_args()
    form = FORMS[args.inputs]
    qrels, runs = write_recommender(CACHE, args.users, form=form)
    output = os.path.join(tempfile.mkdtemp(prefix="prefeval-timeline-"), "prefs.jsonl")
    from distributed import Client

    for workers in (1, 2):
        with dask_cluster(workers) as (address, _), Client(address) as client:
            client.get_task_stream(count=1)  # the scheduler records the tasks from now on
            start = time.time()
            subprocess.run([sys.executable, "-m", "prefeval", "eval", "-q", "-R", qrels, *runs, "--engine", "dask",
                            "--scheduler", address, "-o", output], check=True)
            wall = time.time() - start
            tasks = client.get_task_stream(start=start)
        print(f"{workers} worker(s): wall {wall:.2f} s", flush=True)
        spans = sorted((span["start"] - start, span["stop"] - start, task["worker"].rsplit(":", 1)[-1],
                        str(task["key"]).split("-", 1)[0])
                       for task in tasks for span in task["startstops"] if span["action"] == "compute")
        for begun, ended, worker, name in spans:
            print(f"  worker {worker:>5}  {begun:6.2f} -> {ended:6.2f}  {ended - begun:5.2f} s  {name}")
        partitions = [ended - begun for begun, ended, _, name in spans if name == PARTITION_TASK]
        if partitions:
            print(f"  {len(partitions)} partition tasks: {sum(partitions):.2f} s in all, "
                  f"{statistics.median(partitions):.2f} s each (median)")
    os.unlink(output)


if __name__ == "__main__":
    main()
