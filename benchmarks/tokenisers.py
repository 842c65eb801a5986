"""Compare tokenisers for whitespace-separated TREC run lines (the choice behind prefeval.io.trec).

    python benchmarks/tokenisers.py [RUN ...]      (default: the robust03 runs)

Each candidate turns the (already decompressed) bytes of every run into qid, docid and score
columns; the best of three passes is printed. pyarrow is timed when it is installed (it is not a
dependency of prefeval).
"""

from __future__ import annotations

import csv
import glob
import io
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from prefeval.io.source import read_bytes  # noqa: E402
from prefeval.io.trec import RUN_FORMAT, _separator, read_columns  # noqa: E402

ROBUST03 = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "robust03", "runs", "*")


def pandas_whitespace(data: bytes):
    frame = pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, usecols=[0, 2, 4], quoting=csv.QUOTE_NONE,
                        dtype={0: object, 2: object, 4: np.float64}, keep_default_na=False)
    return frame[0].to_numpy(), frame[2].to_numpy(), frame[4].to_numpy()


def pandas_one_character(data: bytes):
    frame = pd.read_csv(io.BytesIO(data), sep=_separator(data), header=None, names=range(6), usecols=[0, 2, 4],
                        quoting=csv.QUOTE_NONE, dtype={0: object, 2: object, 4: np.float64}, keep_default_na=False)
    return frame[0].to_numpy(), frame[2].to_numpy(), frame[4].to_numpy()


def prefeval_reader(data: bytes):
    columns = read_columns(data, "<bench>", RUN_FORMAT)
    return columns["qid"], columns["docid"], columns["score"]


def python_split(data: bytes):
    rows = [line.split() for line in data.splitlines() if line.strip()]
    return [r[0] for r in rows], [r[2] for r in rows], np.array([float(r[4]) for r in rows])


def pyarrow_csv(data: bytes):
    from pyarrow import csv as arrow_csv

    table = arrow_csv.read_csv(io.BytesIO(data), read_options=arrow_csv.ReadOptions(autogenerate_column_names=True),
                               parse_options=arrow_csv.ParseOptions(delimiter=_separator(data)[-1]))
    return table.column(0), table.column(2), table.column(4)


def main(paths: list[str]) -> None:
    texts = [read_bytes(path) for path in paths]
    lines = sum(text.count(b"\n") for text in texts)
    candidates = [pandas_whitespace, pandas_one_character, prefeval_reader, python_split]
    try:
        import pyarrow  # noqa: F401

        candidates.append(pyarrow_csv)
    except ImportError:
        print("pyarrow is not installed: skipped", file=sys.stderr)
    print(f"{len(paths)} runs, {lines:,} lines")
    print("| tokeniser | seconds (best of 3) | ns per line |")
    print("|---|---:|---:|")
    for candidate in candidates:
        best = min(_time(candidate, texts) for _ in range(3))
        print(f"| {candidate.__name__} | {best:.3f} | {best / lines * 1e9:.0f} |")


def _time(candidate, texts) -> float:
    start = time.perf_counter()
    for text in texts:
        candidate(text)
    return time.perf_counter() - start


if __name__ == "__main__":
    main(sys.argv[1:] or sorted(glob.glob(ROBUST03)))
