"""What writing per-query lines costs per number, by the size of the slice of lines built at once.

    python benchmarks/render.py [--repeat 20] [--columns 18]

Builds metric lines as ``prefeval eval -q`` does (:mod:`prefeval.report.json_columns`): two runs,
``--columns`` columns of float64 (seeded: a third uniform in [0, 1), a third tenths, a third in
[0, 1000)), for as many queries as make about 1, 2, 4, 8 and 16 MiB of lines, and times, in this
process (CPU time, the best of ``--repeat`` turns), the numbers' texts (:meth:`Texts.of_numbers`: one
orjson call and the cut at commas) and the lines' assembly (:func:`joined_lines`), each per number.
The slice size of :data:`prefeval.report.eval_lines.RENDER_BYTES` is chosen from it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from prefeval.report.json_columns import Texts, joined_lines  # noqa: E402

RUNS = 2
BYTES_PER_QUERY_AND_COLUMN = 50
"""About the bytes of lines per query and column (2 runs' lines, a key and a number each)."""


def _columns(queries: int, count: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    makers = (lambda: rng.random((queries, RUNS)), lambda: rng.integers(0, 11, (queries, RUNS)) / 10,
              lambda: rng.random((queries, RUNS)) * 1000)
    return {f"m{c}@10": makers[c % 3]() for c in range(count)}


def _kinds(queries: int, columns: dict[str, np.ndarray], qids: Texts, runs: Texts):
    pieces = [b'{"qid":', qids.repeat(RUNS), b',"run":', runs.tile(queries), b',"sample":0,"type":"metric"']
    for name, values in columns.items():
        pieces += [b',"' + name.encode() + b'":', Texts.of_numbers(values)]
    pieces.append(b"}\n")
    return [(np.arange(RUNS * queries), pieces)]


def _best(repeat: int, function, *args) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        function(*args)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--columns", type=int, default=18)
    options = parser.parse_args()
    rng = np.random.default_rng(1)
    runs = Texts.of_bytes([b'"run0"', b'"run1"'])
    print("| slice | numbers | texts (ns per number) | assembly (ns per number) |")
    print("|---:|---:|---:|---:|")
    for mib in (1, 2, 4, 8, 16):
        queries = (mib << 20) // (BYTES_PER_QUERY_AND_COLUMN * options.columns)
        columns = _columns(queries, options.columns, rng)
        qids = Texts.of_strings([f"u{q}" for q in range(queries)])
        numbers = queries * RUNS * options.columns
        texts = _best(options.repeat, _kinds, queries, columns, qids, runs)
        kinds = _kinds(queries, columns, qids, runs)
        assembly = _best(options.repeat, joined_lines, kinds, RUNS * queries)
        size = len(joined_lines(kinds, RUNS * queries)) / (1 << 20)
        print(f"| {size:.1f} MiB | {numbers:,} | {texts / numbers * 1e9:.0f} | {assembly / numbers * 1e9:.0f} |")


if __name__ == "__main__":
    main()
