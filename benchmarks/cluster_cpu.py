"""Where the CPU of ``eval -q --engine dask`` goes: the client's, the scheduler's and each worker's
CPU seconds, beside the wall time, through real clusters of 1 and 2 single-threaded workers
(:func:`run.dask_cluster`), on the 2 runs × 1M users collection (``benchmarks/recommender.py``).

    python benchmarks/cluster_cpu.py [USERS]

A worker whose CPU seconds fall well short of the wall time waited for a core (other load on the
machine); the client's and the scheduler's are what does not scale out.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time

from recommender import write_recommender
from run import CACHE, _tree, dask_cluster


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of the process ``pid`` and its descendants (``/proc``)."""
    total = 0.0
    for member in _tree(pid):
        try:
            with open(f"/proc/{member}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def main() -> None:
    users = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    qrels, runs = write_recommender(CACHE, users)
    output = os.path.join(tempfile.mkdtemp(prefix="prefeval-cpu-"), "prefs.jsonl")
    for workers in (1, 2):
        with dask_cluster(workers) as (address, pids):
            before = [cpu_seconds(pid) for pid in pids]
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "prefeval", "eval", "-q", "-R", qrels, *runs, "--engine", "dask",
                            "--scheduler", address, "-o", output], check=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            client = after.ru_utime - children.ru_utime + after.ru_stime - children.ru_stime
            used = [cpu_seconds(pid) - earlier for pid, earlier in zip(pids, before)]
            print(f"{workers} worker(s): wall {wall:.1f} s; CPU seconds: client {client:.1f}, scheduler {used[0]:.1f}, "
                  f"workers {', '.join(f'{value:.1f}' for value in used[1:])}; load average {os.getloadavg()[0]:.1f}",
                  flush=True)
    os.unlink(output)


if __name__ == "__main__":
    main()
