"""Where the time of one run in a shell loop goes: the parts of compare.py's ``one-run`` command.

    python benchmarks/parts.py [--repeat 15]

Each turn starts two fresh processes: ``python -c pass`` (the interpreter alone), and one that
imports numpy, then click, then the modules of ``prefeval eval --format tsv``, and then runs that
command (one robust03 run, six metrics, per query, output to /dev/null) in the same process, as the
command line does (glibc's thresholds set as ``prefeval`` sets them), timing each part and counting
the page faults of the whole process. It prints the median of every part over the turns, as a
markdown table. Run it from the checkout's root, whose ``prefeval`` it times (compiled first).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from compare import SIX_METRICS, robust03_plain  # noqa: E402
from run import compiled  # noqa: E402

PARTS = ("numpy", "click", "prefeval's modules", "the evaluation: reading, ranking, measuring, writing")

_CHILD = r"""
import os, resource, sys, time
start = time.perf_counter()
import numpy
numpy_done = time.perf_counter()
import click
click_done = time.perf_counter()
import prefeval.cli.evaluate, prefeval.report.tsv
from prefeval.cli import main
from prefeval.runtime.memory import keep_freed_memory
keep_freed_memory()
modules_done = time.perf_counter()
sys.stdout = open(os.devnull, "w")
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
end = time.perf_counter()
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
print(numpy_done - start, click_done - numpy_done, modules_done - click_done, end - modules_done, faults,
      file=sys.stderr)
"""


def one_turn(command: list[str]) -> tuple[float, list[float]]:
    """The interpreter's start-up alone, and (the parts' seconds..., page faults) of one process."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare = time.perf_counter() - started
    child = subprocess.run([sys.executable, "-c", _CHILD, *command], check=True, capture_output=True, text=True,
                           env=dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=os.getcwd()))
    return bare, [float(value) for value in child.stderr.split()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    compiled(os.path.join(os.getcwd(), "prefeval"))
    qrels, runs = robust03_plain()
    command = ["eval", "--format", "tsv", "-q", "-m", SIX_METRICS["prefeval"], "-R", qrels, runs[0]]
    one_turn(command)  # warm-up: the files in the page cache
    turns = [one_turn(command) for _ in range(args.repeat)]
    bare = statistics.median(turn[0] for turn in turns)
    parts = [statistics.median(turn[1][number] for turn in turns) for number in range(len(PARTS) + 1)]
    print(f"Command: `python benchmarks/parts.py --repeat {args.repeat}` (medians of fresh processes).\n")
    print("| part | time |\n|---|---:|")
    print(f"| Python itself (`python -c pass`) | {1000 * bare:.0f} ms |")
    for name, seconds in zip(PARTS, parts):
        print(f"| {name} | {1000 * seconds:.0f} ms |")
    print(f"| in all (the sum) | {1000 * (bare + sum(parts[:len(PARTS)])):.0f} ms |")
    print(f"\nPage faults of the whole process: {parts[-1]:,.0f}.")


if __name__ == "__main__":
    main()
