"""Readers of Parquet runs side by side: what each library takes to read the runs of the recommender
collection (``benchmarks/recommender.py``, 2 runs × 1M users × 10 items, written as Parquet) into
what prefeval evaluates, and into its own columns.

    python benchmarks/parquet_readers.py [--repeat 5] [--users 1000000]

prefeval needs, per run, the query ids and document ids as 64-bit keys of their bytes with the texts
on demand (``prefeval.io.fields.TextColumn``) and the scores as float64
(``prefeval.io.columnar.read_table_run``). Candidates:

* prefeval's reader (pyarrow's Parquet reader, text read as dictionaries, keyed once per distinct id);
* pyarrow, polars and DuckDB keeping their own columns (Arrow tables, a polars DataFrame): no key, no
  check, a floor rather than a candidate;
* polars and DuckDB made into prefeval's columns through their Arrow export (which needs pyarrow);
* pandas' ``read_parquet`` (its pyarrow engine) and fastparquet, whose DataFrames of Python strings
  are made into prefeval's columns from the strings (``TextColumn.of_texts``), as the Python API
  reads a DataFrame.

Each measurement is a child process that imports its library (timed apart: a command pays it on
every run), then times the reading of both runs, and reports its peak resident set (``VmHWM``).
Candidates take turns within each round, after a warm-up round; the table gives medians over
``--repeat`` rounds, and the ratio to prefeval's reader is the median of the per-round ratios. The
last column checks that a candidate's columns are prefeval's (rows, the sum of the scores, and the
ends of the id columns), or says that they are the library's own.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "cache")
COLUMNS = ["user", "item", "score"]

# label, library needed (None: prefeval's own), made into prefeval's columns
CANDIDATES = [
    ("prefeval (pyarrow)", "pyarrow", True),
    ("pyarrow.parquet, Arrow columns", "pyarrow", False),
    ("polars, its DataFrame", "polars", False),
    ("polars, to prefeval's columns", "polars", True),
    ("duckdb, Arrow columns", "duckdb", False),
    ("duckdb, to prefeval's columns", "duckdb", True),
    ("pandas.read_parquet, to prefeval's columns", "pandas", True),
    ("fastparquet, to prefeval's columns", "fastparquet", True),
]
IMPORTS = {"prefeval (pyarrow)": ["prefeval.io.columnar", "pyarrow.parquet", "pyarrow.compute"],
           "pyarrow.parquet": ["pyarrow.parquet"], "polars": ["polars", "pyarrow", "prefeval.io.columnar"],
           "duckdb": ["duckdb", "pyarrow", "prefeval.io.columnar"], "pandas.read_parquet": ["pandas", "pyarrow"],
           "fastparquet": ["fastparquet", "prefeval.io.fields"]}


# --- the readers (run in a child process) ------------------------------------------------------


def _from_arrow(table, path):
    from prefeval.io.columnar import table_fields
    from prefeval.io.trec import RUN_FORMAT

    fields = table_fields(table, path, RUN_FORMAT)
    return fields.qids, fields.docids, fields.values


def _from_frame(frame):
    import numpy as np

    from prefeval.io.fields import TextColumn

    missing = int(frame["user"].isna().sum() + frame["item"].isna().sum())
    if missing:  # fastparquet 2026.9 reads part of a dictionary-encoded column as nulls
        raise ValueError(f"{missing:,} ids read as null, where the file has none")
    return (TextColumn.of_texts(frame["user"].to_numpy(dtype=object)),
            TextColumn.of_texts(frame["item"].to_numpy(dtype=object)), frame["score"].to_numpy(dtype=np.float64))


def read(label: str, path: str):
    if label == "prefeval (pyarrow)":
        from prefeval.io.columnar import read_table_run

        run = read_table_run(path, "run")
        return run.qids, run.docids, run.scores
    if label.startswith("pyarrow.parquet"):
        import pyarrow.parquet as pq

        table = pq.read_table(path, columns=COLUMNS)
        return table.column("user"), table.column("item"), table.column("score")
    if label.startswith("polars"):
        import polars as pl

        frame = pl.read_parquet(path, columns=COLUMNS)
        return _from_arrow(frame.to_arrow(), path) if "prefeval" in label else (
            frame["user"], frame["item"], frame["score"])
    if label.startswith("duckdb"):
        import duckdb

        table = duckdb.sql(f"select user, item, score from read_parquet('{path}')").arrow()
        if hasattr(table, "read_all"):  # DuckDB 1.4 and later hand over a record batch reader
            table = table.read_all()
        return _from_arrow(table, path) if "prefeval" in label else (
            table.column("user"), table.column("item"), table.column("score"))
    if label.startswith("pandas"):
        import pandas as pd

        return _from_frame(pd.read_parquet(path, columns=COLUMNS, engine="pyarrow"))
    if label.startswith("fastparquet"):
        import fastparquet

        return _from_frame(fastparquet.ParquetFile(path).to_pandas(columns=COLUMNS))
    raise ValueError(label)


def _peak_kib() -> int:
    """This process's peak resident set (``VmHWM``: unlike ``ru_maxrss``, not inherited from the parent)."""
    try:
        with open("/proc/self/status") as handle:
            return next(int(line.split()[1]) for line in handle if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _text_at(column, row: int) -> str:
    if hasattr(column, "texts"):
        return column.texts([row])[0]
    value = column[row]
    return str(value.as_py() if hasattr(value, "as_py") else value)


def child(label: str, paths: list[str]) -> None:
    """Read ``paths`` with one candidate; print its import and read seconds, peak RSS and a digest of
    the columns as JSON."""
    sys.path.insert(0, os.path.join(HERE, ".."))
    start = time.perf_counter()
    for module in IMPORTS[label.split(",")[0]]:
        __import__(module)
    imported = time.perf_counter() - start
    start = time.perf_counter()
    results = [read(label, path) for path in paths]
    seconds = time.perf_counter() - start
    import numpy as np

    rows = sum(len(result[2]) for result in results)
    total = sum(float(np.nansum(np.asarray(result[2]))) for result in results)
    ends = [_text_at(result[i], j) for result in results for i in (0, 1) for j in (0, len(result[2]) - 1)]
    digest = f"{rows} {total:.9g} {zlib.crc32(' '.join(ends).encode()):08x}"
    print(json.dumps({"seconds": seconds, "imports": imported, "peak_kib": _peak_kib(), "digest": digest}))


# --- the harness ---------------------------------------------------------------------------------


def measure(label: str, paths: list[str]) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--child", label, *paths]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else str(done.returncode)
        return {"error": last.split(": ", 1)[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds timed (at least 1)")
    parser.add_argument("--users", type=int, default=1_000_000)
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    from recommender import PARQUET, write_recommender

    _, paths = write_recommender(CACHE, args.users, form=PARQUET)
    candidates = [c for c in CANDIDATES if importlib.util.find_spec(c[1]) is not None]
    for label, library, _ in CANDIDATES:
        if (label, library, _) not in candidates:
            print(f"{library} is not installed: {label} skipped", file=sys.stderr)
    versions = {}
    for library in sorted({library for _, library, _ in candidates}):
        from importlib.metadata import version

        versions[library] = version(library)
    print(f"Reading the 2 runs of {args.users:,} users × 10 items as Parquet ({sum(map(os.path.getsize, paths)) >> 20} "
          f"MiB); {os.cpu_count()} processors; median of {args.repeat} rounds taking turns, after a warm-up round; "
          + ", ".join(f"{library} {number}" for library, number in versions.items()) + ".\n")
    rounds = []
    labels = [label for label, _, _ in candidates]
    for round_number in range(args.repeat + 1):
        order = labels[round_number % len(labels):] + labels[:round_number % len(labels)]
        results = {label: measure(label, paths) for label in order}
        if round_number:
            rounds.append(results)
        print(f"round {round_number} done", file=sys.stderr, flush=True)
    baseline = labels[0]
    print("| reader | import | reading | ÷ prefeval | peak RSS | columns |")
    print("|---|---:|---:|---:|---:|---|")
    for label, _, converted in candidates:
        runs = [r[label] for r in rounds]
        if "error" in runs[0]:
            print(f"| {label} | | failed: {runs[0]['error'][:80]} | | | |")
            continue
        seconds = statistics.median(r["seconds"] for r in runs)
        imports = statistics.median(r["imports"] for r in runs)
        ratio = statistics.median(r[label]["seconds"] / r[baseline]["seconds"] for r in rounds)
        peak = max(r["peak_kib"] for r in runs) / 1024
        same = ("prefeval's" if runs[0]["digest"] == rounds[0][baseline]["digest"] else runs[0]["digest"]) \
            if converted else "its own"
        print(f"| {label} | {imports:.2f} s | {seconds:.2f} s | {ratio:.2f} | {peak:,.0f} MiB | {same} |")


if __name__ == "__main__":
    main()
