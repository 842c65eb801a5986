"""Shared fixtures: writing small TREC files, the bundled examples and the robust03 data."""

from __future__ import annotations

import functools
import importlib.util
import os
import stat
import sys
import types
from pathlib import Path

import numpy as np
import orjson
import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

from prefeval.io.fields import TextColumn
from prefeval.io.trec import Qrels
from prefeval.ranking.ranktable import RankTable

settings.register_profile("prefeval", deadline=None, derandomize=bool(os.environ.get("CI")))
settings.load_profile("prefeval")
"""Hypothesis: no per-example deadline (a shared machine is slow at times); under CI, the same examples
every run, so that CI's verdict does not depend on the draw."""

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
QRELS = str(EXAMPLES / "qrels.txt")
"""The bundled example qrels, and its four runs (in this order)."""
RUNS = [str(EXAMPLES / "runs" / name) for name in ("bm25", "dense", "hybrid", "random")]

SHARED_DATA = Path(os.environ.get("PREFEVAL_SHARED_DATA") or ROOT.parent / "shared" / "data")
"""The shared data folder: $PREFEVAL_SHARED_DATA, else ../shared/data beside the checkout."""
ROBUST03 = SHARED_DATA / "robust03"
REFERENCE = SHARED_DATA / "reference"


def robust03_or_skip() -> Path:
    if not (ROBUST03 / "qrels.txt").exists() or not REFERENCE.exists():
        pytest.skip(f"robust03 data not found at {SHARED_DATA} (set PREFEVAL_SHARED_DATA)")
    return ROBUST03


@functools.cache
def benchmark(name: str) -> types.ModuleType:
    """The script ``benchmarks/NAME.py`` as a module (the benchmarks are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"benchmarks.{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # before it runs: its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def run_cli(*args, input=None, **options) -> Result:
    """``prefeval ARGS...`` run in-process (arguments made strings), as click's test runner runs it."""
    from prefeval.cli import main

    return CliRunner().invoke(main, [str(arg) for arg in args], input=input, **options)


def example_eval_lines(path: Path, measures: str) -> str:
    """Write ``prefeval eval -q -m MEASURES`` of the four example runs to ``path``."""
    result = run_cli("eval", "-q", "-R", QRELS, "-m", measures, "-o", path, *RUNS)
    assert result.exit_code == 0, result.output
    return str(path)


def json_lines(text: str | bytes) -> list[dict]:
    """The objects of JSON-lines output."""
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


def write_json_lines(path: Path, records) -> str:
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    return str(path)


def write_text(path: Path, lines) -> str:
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


def write_qrels(path: Path, judgments: dict[str, dict[str, int]]) -> str:
    """judgments: {qid: {docid: grade}}."""
    return write_text(path, [f"{q} 0 {d} {g}" for q, docs in judgments.items() for d, g in docs.items()])


def write_run(path: Path, scores: dict[str, dict[str, float]], tag: str = "run") -> str:
    """scores: {qid: {docid: score}}; the rank column is written in file order (it is ignored)."""
    lines = []
    for q, docs in scores.items():
        for rank, (d, s) in enumerate(docs.items(), start=1):
            lines.append(f"{q} Q0 {d} {rank} {s!r} {tag}")
    return write_text(path, lines)


def table_from_positions(runs: list[list[list[float]]], grades: list[list[float]] | None = None) -> RankTable:
    """A RankTable straight from ranks: runs[r][q] lists the rank of each relevant document of query
    q in run r (``inf`` when not retrieved); grades[q] their grades (all 1 by default)."""
    lengths = [len(docs) for docs in runs[0]]
    grades = grades or [[1.0] * n for n in lengths]
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    qrels = Qrels(
        source="<test>",
        qids=[f"q{q}" for q in range(len(lengths))],
        dropped_qids=[],
        offsets=offsets,
        docids=TextColumn.of_texts([f"d{f}" for f in range(offsets[-1])]),
        grades=np.array([g for query in grades for g in query], dtype=np.float64),
    )
    ranks = np.array([[rank for query in run for rank in query] for run in runs], dtype=np.float64)
    retrieved = np.array([[max([r for r in query if np.isfinite(r)], default=0) for query in run] for run in runs],
                         dtype=np.int64)
    return RankTable(qrels=qrels, run_ids=[f"run{r}" for r in range(len(runs))], ranks=ranks,
                     num_retrieved=retrieved, in_run=retrieved > 0)


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


def random_runs(rng: np.random.Generator, queries: list[str], max_depth: int, candidates: int, scored) -> list[dict]:
    """1 to 3 random runs ``{qid: {docid: score}}`` over ``queries`` and a query ``999`` that no qrels
    have, each query missing from a run with probability 0.15: up to ``max_depth - 1`` distinct
    documents ``D{qid}-{d}`` of ``candidates`` (those the qrels lack are unjudged), scored by
    ``scored(rng, docs) -> (docs, scores)`` (which may reorder them)."""
    runs = []
    for _ in range(int(rng.integers(1, 4))):
        run = {}
        for qid in list(queries) + ["999"]:
            if rng.random() < 0.15:
                continue  # query missing from this run
            depth = int(rng.integers(1, max_depth))
            docs = rng.choice([f"D{qid}-{d}" for d in range(candidates)], size=min(depth, candidates), replace=False)
            docs, scores = scored(rng, docs)
            run[qid] = {str(d): float(s) for d, s in zip(docs, scores)}
        runs.append(run)
    return runs


@pytest.fixture(scope="session")
def shell_environment(tmp_path_factory) -> dict[str, str]:
    """The environment of the commands: ``prefeval`` on the PATH is this checkout's (a script of that
    name, as the installed one, so that click names the program ``prefeval``), and ``python`` the
    tests' interpreter; no colour, a temporary folder of their own."""
    bin_dir = tmp_path_factory.mktemp("bin")
    wrapper = bin_dir / "prefeval"
    wrapper.write_text(f"#!{sys.executable}\nimport sys\nfrom prefeval.__main__ import main\nsys.exit(main())\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    path = os.pathsep.join([str(bin_dir), os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, "NO_COLOR": "1",
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "100",
            "TMPDIR": str(tmp_path_factory.mktemp("tmp"))}
