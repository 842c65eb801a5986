"""The pandas floor: a plain ``pandas.read_csv`` of a qrels file and run files, kept in memory, nothing else.

    python benchmarks/pandas_floor.py QRELS RUN [RUN ...]

What the issue's recommender figure compares with: the cost of just reading the same files with the
library everybody has (C engine, fields split at single spaces, as the generated files are written; no validation).
"""

from __future__ import annotations

import sys

import pandas as pd


def main(qrels: str, runs: list[str]) -> int:
    frames = [pd.read_csv(qrels, sep=" ", header=None, names=["qid", "iter", "docid", "grade"],
                          dtype={"qid": str, "docid": str})]
    for path in runs:
        frames.append(pd.read_csv(path, sep=" ", header=None, names=["qid", "q0", "docid", "rank", "score", "tag"],
                                  dtype={"qid": str, "docid": str}))
    return sum(len(frame) for frame in frames)


if __name__ == "__main__":
    print(main(sys.argv[1], sys.argv[2:]))
