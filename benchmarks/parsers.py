"""Compare readers of TREC run files with prefeval's own (``prefeval.io.trec.read_run``), end to end.

    python benchmarks/parsers.py [--repeat 5] [--synthetic LINES ...] [--only LABEL ...] [RUN ...]

Every candidate reads run files from their paths (gzip or plain) into three columns: qid and docid
as numpy object arrays of ``str``, score as float64; prefeval's reader gives instead what prefeval
needs, qid and docid as 64-bit keys of their bytes with the texts on demand
(``prefeval.io.fields.TextColumn``). Inputs (default): one
robust03 run gzipped and its decompressed copy, all robust03 runs gzipped, and with
``--synthetic N`` a recommender-style run of N lines (``benchmarks/synthetic.py``, catalogue ids),
plain. Data derived here (decompressed copies, synthetic runs) goes to a temporary folder, or to
``--scratch``.

Candidates: prefeval's reader (the baseline); ``pandas.read_csv`` with ``engine="c"`` and
``engine="pyarrow"``; ``pyarrow.csv.read_csv``; ``polars.read_csv``; a splitter of the common case
(one tab or one space between fields, the same number of fields on every line, ASCII) built on
``bytes.split`` and ``np.frombuffer``. Multi-threaded libraries are timed with every processor and
with one (``pyarrow.set_cpu_count``, ``POLARS_MAX_THREADS``); pyarrow and polars are also timed
keeping their own string columns (no conversion to Python strings: not what prefeval consumes, a
floor). Libraries that are not installed are skipped. Only prefeval's reader checks the file's
language; the others read the common case, so an adopted one would still need prefeval's checks
and its line scanner for the files it cannot take.

Each measurement is one child process that times the reading (imports excluded) and reports its
peak resident set (``VmHWM``). Candidates take turns within each round (after a warm-up round),
so load on the machine falls on all alike; the table gives medians over ``--repeat`` rounds, and the
ratio to prefeval's reader is the median of the per-round ratios.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROBUST03 = os.environ.get("PREFEVAL_ROBUST03", os.path.join(HERE, "..", "..", "shared", "data", "robust03"))
THREADS = os.cpu_count() or 1

# label, library needed, threads (None: the library has no choice), keeps native columns
CANDIDATES = [
    ("prefeval read_run", None, None, False),
    ("pandas engine=c", None, None, False),
    ("pandas engine=pyarrow", "pyarrow", THREADS, False),
    ("pandas engine=pyarrow", "pyarrow", 1, False),
    ("pyarrow.csv", "pyarrow", THREADS, False),
    ("pyarrow.csv", "pyarrow", 1, False),
    ("pyarrow.csv, Arrow columns", "pyarrow", THREADS, True),
    ("polars", "polars", THREADS, False),
    ("polars", "polars", 1, False),
    ("polars, Arrow columns", "polars", THREADS, True),
    ("bytes/numpy splitter", None, None, False),
]


# --- the readers (run in a child process) ------------------------------------------------------


def _separator(path: str) -> str:
    """The separator of the file's first line: a tab if it has one, else a space."""
    opener = gzip.open if _is_gzip(path) else open
    with opener(path, "rb") as handle:
        first = handle.readline()
    return "\t" if b"\t" in first else " "


def _is_gzip(path: str) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def read_prefeval(path: str, threads, native):
    from prefeval.io.trec import read_run

    run = read_run(path)
    return run.qids, run.docids, run.scores


def read_pandas_c(path: str, threads, native):
    import csv

    import numpy as np
    import pandas as pd

    frame = pd.read_csv(path, sep=_separator(path), header=None, usecols=[0, 2, 4], quoting=csv.QUOTE_NONE,
                        dtype={0: object, 2: object, 4: np.float64}, keep_default_na=False, na_filter=False,
                        engine="c", compression="gzip" if _is_gzip(path) else None)
    return frame[0].to_numpy(dtype=object), frame[2].to_numpy(dtype=object), frame[4].to_numpy(np.float64)


def read_pandas_arrow(path: str, threads, native):
    import numpy as np
    import pandas as pd

    # pandas 3.1 with engine="pyarrow" keys ``dtype`` by position among ``usecols``
    frame = pd.read_csv(path, sep=_separator(path), header=None, usecols=[0, 2, 4],
                        dtype={0: "str", 1: "str", 2: "float64"}, keep_default_na=False, engine="pyarrow",
                        compression="gzip" if _is_gzip(path) else None)
    return tuple(frame.iloc[:, i].to_numpy(dtype=dtype) for i, dtype in ((0, object), (1, object), (2, np.float64)))


def read_pyarrow(path: str, threads, native):
    import pyarrow as pa
    from pyarrow import csv as arrow_csv

    source = pa.input_stream(path, compression="gzip" if _is_gzip(path) else None)
    table = arrow_csv.read_csv(
        source,
        read_options=arrow_csv.ReadOptions(autogenerate_column_names=True, use_threads=threads > 1),
        parse_options=arrow_csv.ParseOptions(delimiter=_separator(path), quote_char=False),
        convert_options=arrow_csv.ConvertOptions(
            include_columns=["f0", "f2", "f4"],
            column_types={"f0": pa.string(), "f2": pa.string(), "f4": pa.float64()}),
    )
    if native:
        return table.column("f0"), table.column("f2"), table.column("f4")
    return tuple(table.column(name).to_numpy(zero_copy_only=False) for name in ("f0", "f2", "f4"))


def read_polars(path: str, threads, native):
    import polars as pl

    frame = pl.read_csv(path, separator=_separator(path), has_header=False, columns=[0, 2, 4], quote_char=None,
                        schema_overrides={"column_0": pl.String, "column_2": pl.String, "column_4": pl.Float64})
    if native:
        return frame["column_0"], frame["column_2"], frame["column_4"]
    return tuple(frame[name].to_numpy() for name in ("column_0", "column_2", "column_4"))


_OTHER_CONTROL = {"\t": re.compile(rb"[\x00-\x08\x0b-\x1f ]"), " ": re.compile(rb"[\x00-\x09\x0b-\x1f]")}


def read_split(path: str, threads, native):
    """The common case by hand; None when the file is not of it (prefeval's reader would take it)."""
    import numpy as np

    from prefeval.io.source import read_bytes

    data = read_bytes(path)
    if not data.endswith(b"\n"):
        data += b"\n"
    sep = b"\t" if b"\t" in data[:data.find(b"\n")] else b" "
    fields = data[:data.find(b"\n")].count(sep) + 1
    if (fields < 5 or not data.isascii() or data[:1] in (sep, b"\n", b"#")
            or _OTHER_CONTROL[sep.decode()].search(data)
            or any(pair in data for pair in (sep + sep, sep + b"\n", b"\n" + sep, b"\n\n", b"\n#"))):
        return None
    # every line must hold fields - 1 separators: counted per line on the bytes, in chunks
    codes = np.frombuffer(data, np.uint8)
    start, chunk = 0, 1 << 24
    while start < len(codes):
        end = min(len(data), data.find(b"\n", min(start + chunk, len(data) - 1)) + 1)
        part = codes[start:end]
        line_starts = np.flatnonzero(part == 10)[:-1] + 1
        counts = np.add.reduceat((part == sep[0]).view(np.uint8), np.r_[0, line_starts], dtype=np.int64)
        if (counts != fields - 1).any():
            return None
        start = end
    tokens = data.decode("ascii").split()
    try:
        scores = np.array(tokens[4::fields], dtype=np.float64)
    except ValueError:
        return None
    return np.array(tokens[0::fields], dtype=object), np.array(tokens[2::fields], dtype=object), scores


READERS = {
    "prefeval read_run": read_prefeval,
    "pandas engine=c": read_pandas_c,
    "pandas engine=pyarrow": read_pandas_arrow,
    "pyarrow.csv": read_pyarrow,
    "pyarrow.csv, Arrow columns": read_pyarrow,
    "polars": read_polars,
    "polars, Arrow columns": read_polars,
    "bytes/numpy splitter": read_split,
}


def _peak_kib() -> int:
    """This process's peak resident set (``VmHWM``: unlike ``ru_maxrss``, not inherited from the parent)."""
    try:
        with open("/proc/self/status") as handle:
            return next(int(line.split()[1]) for line in handle if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _text_at(column, row: int):
    """The text of one row of a column: an array of texts, or prefeval's keyed column."""
    return column.texts([row])[0] if hasattr(column, "texts") else column[row]


def child(label: str, threads: int, native: bool, paths: list[str]) -> None:
    """Read ``paths`` with one candidate; print seconds, peak RSS and a digest of the columns as JSON."""
    sys.path.insert(0, os.path.join(HERE, ".."))
    import numpy as np

    if "pyarrow" in label:
        import pyarrow as pa

        pa.set_cpu_count(threads)
        pa.set_io_thread_count(threads)
    reader = READERS[label]
    # pandas always: prefeval imports it anyway, and pyarrow's conversions to numpy load it on first use
    for module in {"polars": ["pandas", "polars"], "pyarrow.csv": ["pandas", "pyarrow.csv"]}.get(
            label.split(",")[0], ["pandas"]):
        __import__(module)
    if label in ("prefeval read_run", "bytes/numpy splitter"):
        __import__("prefeval.io.trec")
    before = _peak_kib()
    start = time.perf_counter()
    results = [reader(path, threads, native) for path in paths]
    seconds = time.perf_counter() - start
    peak = _peak_kib()
    if any(result is None for result in results):
        digest = "not the common case"
    else:
        rows = sum(len(result[2]) for result in results)
        total = sum(float(np.nansum(np.asarray(result[2]))) for result in results)
        ends = [str(_text_at(result[i], j)) for result in results for i in (0, 1) for j in (0, -1)]
        digest = f"{rows} {total:.6g} {zlib.crc32(' '.join(ends).encode()):08x}"
    print(json.dumps({"seconds": seconds, "peak_kib": peak, "imports_kib": before, "digest": digest}))


# --- the harness ---------------------------------------------------------------------------------


def inputs(args, scratch: str) -> list[tuple[str, list[str]]]:
    found = []
    runs = os.path.join(ROBUST03, "runs")
    if os.path.isdir(runs):
        paths = sorted(os.path.join(runs, name) for name in os.listdir(runs))
        one = next((p for p in paths if p.endswith("aplrob03a.gz")), paths[0])
        plain = os.path.join(scratch, os.path.basename(one)[: -len(".gz")])
        with gzip.open(one, "rb") as source, open(plain, "wb") as target:
            shutil.copyfileobj(source, target)
        found += [(f"robust03 {os.path.basename(one)} (gzip)", [one]),
                  (f"robust03 {os.path.basename(plain)} (plain)", [plain]),
                  (f"robust03, all {len(paths)} runs (gzip)", paths)]
    for lines in args.synthetic:
        sys.path.insert(0, HERE)
        from synthetic import Collection, write_collection

        collection = Collection(runs=1, queries=max(lines // 100, 1), depth=100, relevant=5.0, max_grade=1,
                                judged_nonrelevant=0.0, catalogue=50_000)
        _, run_paths = write_collection(collection, scratch)
        found.append((f"synthetic recommender run, {collection.lines:,} lines (plain)", run_paths))
    found += [(os.path.basename(path), [path]) for path in args.runs]
    return found


def available(library: str | None) -> bool:
    if library is None:
        return True
    return importlib.util.find_spec(library) is not None  # not imported: children inherit the parent's peak


def measure(candidate, paths: list[str]) -> dict:
    label, _, threads, native = candidate
    env = dict(os.environ)
    if threads is not None:
        env["POLARS_MAX_THREADS"] = str(threads)
    command = [sys.executable, os.path.abspath(__file__), "--child", label, str(threads or 1), str(int(native)), *paths]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else str(done.returncode)}
    return json.loads(done.stdout.strip().splitlines()[-1])


def name(candidate) -> str:
    label, _, threads, _ = candidate
    return label if threads is None else f"{label}, {threads} thread{'s' * (threads > 1)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds timed (at least 1)")
    parser.add_argument("--synthetic", type=int, nargs="*", default=[])
    parser.add_argument("--only", nargs="*", default=[], help="labels of the inputs to measure (substrings)")
    parser.add_argument("--scratch", help="folder for derived data (default: a temporary one, removed)")
    parser.add_argument("runs", nargs="*")
    args = parser.parse_args()
    scratch = args.scratch or tempfile.mkdtemp(prefix="parsers-")
    os.makedirs(scratch, exist_ok=True)
    candidates = [c for c in CANDIDATES if available(c[1])]
    for library in sorted({c[1] for c in CANDIDATES if c[1] and not available(c[1])}):
        print(f"{library} is not installed: skipped", file=sys.stderr)
    try:
        print(f"{THREADS} processors; median of {args.repeat} interleaved rounds after a warm-up\n")
        for title, paths in inputs(args, scratch):
            if args.only and not any(word in title for word in args.only):
                continue
            print(f"### {title}\n")
            print("| reader | seconds | ÷ prefeval | peak RSS | growth while reading | same columns |")
            print("|---|---:|---:|---:|---:|---|")
            rounds = []
            for round_number in range(args.repeat + 1):
                order = candidates[round_number % len(candidates):] + candidates[:round_number % len(candidates)]
                results = {name(c): measure(c, paths) for c in order}
                if round_number:
                    rounds.append(results)
                print(f"round {round_number} done", file=sys.stderr, flush=True)
            baseline = rounds[0][name(candidates[0])]["digest"]
            for candidate in candidates:
                key = name(candidate)
                runs = [r[key] for r in rounds]
                if "error" in runs[0]:
                    print(f"| {key} | failed: {runs[0]['error'][:80]} | | | | |")
                    continue
                seconds = statistics.median(r["seconds"] for r in runs)
                ratio = statistics.median(r[key]["seconds"] / r[name(candidates[0])]["seconds"] for r in rounds)
                peak = max(r["peak_kib"] for r in runs) / 1024
                growth = max(r["peak_kib"] - r["imports_kib"] for r in runs) / 1024
                digest = runs[0]["digest"]
                same = "native" if candidate[3] else "yes" if digest == baseline else digest
                print(f"| {key} | {seconds:.3f} | {ratio:.2f} | {peak:,.0f} MiB | {growth:,.0f} MiB | {same} |")
            print(flush=True)
    finally:
        if not args.scratch:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]), bool(int(sys.argv[4])), sys.argv[5:])
    else:
        main()
