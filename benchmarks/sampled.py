"""Benchmark: ``prefeval sampled`` on 10 runs × 1,000 queries, a catalogue of N = 10,000 items and three
sample sizes (M = 10, 100, 1000), timed as a whole process.

The data are synthetic and seeded: each query has 1 to 20 relevant items (grades 1 to 3) in its
catalogue; each run returns its top 100 of 300 candidate items (the relevant ones and 280 or more
irrelevant ones), scored by skill × grade plus noise, so that many relevant items go unretrieved, as in
a recommender's top-100 lists. They are written once to a cache folder (``benchmarks/cache/``,
ignored by git) and reused.

    python benchmarks/sampled.py [--repeat 5] [--cache DIR]

prints one markdown table row: the median wall time of ``--repeat`` runs of the command (started with
``sys.executable -m prefeval``, output to a temporary file).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS, QUERIES, ITEMS, DEPTH, CANDIDATES = 10, 1000, 10_000, 100, 300
SAMPLE_SIZES = (10, 100, 1000)


def write_data(folder: str, seed: int = 2024) -> tuple[str, list[str]]:
    """The qrels and run files in ``folder`` (made unless already there)."""
    os.makedirs(folder, exist_ok=True)
    qrels = os.path.join(folder, "qrels.txt")
    runs = [os.path.join(folder, f"run{r:02d}") for r in range(RUNS)]
    if all(os.path.exists(path) for path in [qrels, *runs]):
        return qrels, runs
    rng = np.random.default_rng(seed)
    relevant = rng.integers(1, 21, QUERIES)
    # per query: CANDIDATES distinct items; the first `relevant` of them are the relevant ones
    candidates = np.argsort(rng.random((QUERIES, ITEMS)), axis=1)[:, :CANDIDATES]
    grades = np.where(np.arange(CANDIDATES) < relevant[:, None], rng.integers(1, 4, (QUERIES, CANDIDATES)), 0)
    qids = np.array([f"q{q:04d}" for q in range(QUERIES)])
    with open(qrels, "w") as handle:
        rows = np.argwhere(grades > 0)
        handle.writelines(f"{qids[q]} 0 i{candidates[q, c]} {grades[q, c]}\n" for q, c in rows.tolist())
    for r, path in enumerate(runs):
        skill = 0.3 * r
        scores = skill * grades + rng.normal(0.0, 1.0, grades.shape)
        top = np.argsort(-scores, axis=1)[:, :DEPTH]
        lines = []
        for q in range(QUERIES):
            items, values = candidates[q, top[q]], scores[q, top[q]]
            lines += [f"{qids[q]} Q0 i{item} {rank} {value:.6f} run{r:02d}\n"
                      for rank, (item, value) in enumerate(zip(items.tolist(), values.tolist()), start=1)]
        with open(path, "w") as handle:
            handle.writelines(lines)
    return qrels, runs


def time_command(command: list[str], repeat: int) -> float:
    """Median wall time of ``repeat`` runs of ``command``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of the command (the median is reported)")
    parser.add_argument("--cache", default=os.path.join(HERE, "cache", "sampled"), help="folder of the generated data")
    args = parser.parse_args()
    qrels, runs = write_data(args.cache)
    with tempfile.TemporaryDirectory() as scratch:
        command = [sys.executable, "-m", "prefeval", "sampled", "-R", qrels, "--num-items", str(ITEMS),
                   *[f"--sample-size={size}" for size in SAMPLE_SIZES], "-o", os.path.join(scratch, "out.jsonl"), *runs]
        seconds = time_command(command, args.repeat)
    sizes = ", ".join(str(size) for size in SAMPLE_SIZES)
    print(f"| `prefeval sampled`, {RUNS} runs × {QUERIES:,} queries (top {DEPTH}), N = {ITEMS:,}, "
          f"M = {sizes}, default metrics | {seconds:.2f} s |")


if __name__ == "__main__":
    main()
