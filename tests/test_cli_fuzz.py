"""The command line driven at random: random bytes in the input files, random kinds of file (regular,
gzip, FIFO, stdin, a directory, a missing file), random combinations of options, valid or not, in
every command. Whatever happens, the error contract holds:

* the exit code is 0, 1 or 2;
* a failure writes exactly one line on stderr, ``prefeval: error: ...``, nothing on stdout, and leaves
  no output file (nor temporary file) behind;
* stderr never holds a traceback or a Python warning: every line is prefeval's own.

``check`` is the one command that fails (exit 1) with a report on stdout: its errors are data.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from conftest import QRELS, RUNS, example_eval_lines, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prefeval.runtime.notes import Note

IN_PROCESS = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
SUBPROCESS = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
KINDS = ["regular", "gzip", "fifo", "stdin", "directory", "missing"]

QRELS_BYTES = Path(QRELS).read_bytes()
RUN_BYTES = [Path(run).read_bytes()[:3000].rsplit(b"\n", 1)[0] for run in RUNS[:2]]

# --- what the input files hold -------------------------------------------------------------------

field = st.sampled_from(["q101", "q102", "q999", "Q0", "0", "1", "2", "-1", "DOC-101-000", "DOC-101-004",
                         "DOC-102-001", "nan", "inf", "1,5", "1e308", "x", "#", "é", "\x00", "", "1_0", "٣"])
separator = st.sampled_from([" ", "\t", "  ", "\r", ""])
line = st.lists(st.tuples(field, separator), max_size=7).map(lambda parts: "".join(f + s for f, s in parts))
trec_text = st.lists(line, max_size=8).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))
json_value = st.one_of(st.integers(-2, 2), st.floats(-1, 1), st.sampled_from(["x", None, True, [1]]))
eval_record = st.fixed_dictionaries({}, optional={
    "qid": st.sampled_from(["q1", "q2", "all", 3]), "runi": st.sampled_from(["A", "B"]),
    "runj": st.sampled_from(["B", "C"]), "run": st.sampled_from(["A", "B", "C"]),
    "sample": st.sampled_from([0, 1, "0"]),
    "type": st.sampled_from(["preference", "metric", "x"]), "rpp": json_value, "ap": json_value,
})
eval_text = st.lists(eval_record, max_size=8).map(lambda records: b"\n".join(orjson.dumps(r) for r in records))


def spliced(data: bytes) -> st.SearchStrategy[bytes]:
    """``data`` cut, or with a few bytes put in somewhere."""
    return st.tuples(st.integers(0, len(data)), st.binary(max_size=4), st.booleans()).map(
        lambda t: data[: t[0]] if t[2] else data[: t[0]] + t[1] + data[t[0]:])


def contents(valid: list[bytes]) -> st.SearchStrategy[bytes]:
    """Mostly what the command reads there (whole, or damaged), else anything (another kind of file,
    bytes, lines of TREC-like fields, JSON lines)."""
    whole = st.sampled_from(valid)
    anything = st.sampled_from([QRELS_BYTES, *RUN_BYTES, *prefs_bytes])
    return st.one_of(whole, whole, whole, whole.flatmap(spliced), anything, st.binary(max_size=120), trec_text,
                     eval_text)


@dataclass(frozen=True)
class InputFile:
    kind: str
    data: bytes


def input_file(valid: list[bytes]) -> st.SearchStrategy[InputFile]:
    """Mostly a file that can be read (regular, gzip, FIFO, stdin), seldom a directory or nothing."""
    return st.builds(InputFile, st.sampled_from(KINDS[:4] * 3 + KINDS[4:]), contents(valid))


# --- the commands and their options --------------------------------------------------------------

def flag(name: str) -> st.SearchStrategy[list[str]]:
    return st.sampled_from([[]] * 3 + [[name]])


def option(name: str, *values, invalid: tuple = ()) -> st.SearchStrategy[list[str]]:
    """Mostly absent, else one of ``values``, seldom one of the ``invalid`` ones (so that most
    invocations get as far as reading their inputs)."""
    return st.sampled_from([[]] * 3 * (len(values) + len(invalid)) + [[name, str(value)] for value in values] * 2
                           + [[name, str(value)] for value in invalid])


MEASURES = ("ap", "rpp", "ndcg@10", "p@5,10", "lexiprecision", "p@0", "rbp@0.5", "map", "ap,rpp", "ndcg_exp")
BAD_MEASURES = ("nonsense", "f@10,inf", "p@" + "9" * 40)
SEEDS, BAD_SEEDS = ("1", "7"), ("-1", "x")
FORMATS, BAD_FORMATS = ("jsonl", "tsv", "table", "markdown", "latex"), ("nope",)
FRACTIONS, BAD_FRACTIONS = ("0.5", "1", "0.2"), ("0", "2", "nan")

OPTIONS = {
    "eval": [option("-m", *MEASURES, invalid=BAD_MEASURES), option("-M", "none", "preferences", "all", invalid=("x",)),
             option("-b", 1, 2, invalid=(-1, "nan")), option("-f", 1, invalid=("inf",)),
             option("-l", 1, 2, invalid=(1e308,)), flag("-q"), flag("-n"), option("--topk", 1, 5, invalid=(0, -3)),
             option("--samples", 1, 2, invalid=(0,)), option("--query_fraction", *FRACTIONS, invalid=BAD_FRACTIONS),
             option("--label_fraction", *FRACTIONS, invalid=BAD_FRACTIONS),
             option("--label_fraction_policy", "random", "pool", invalid=("x",)),
             option("--seed", *SEEDS, invalid=BAD_SEEDS), option("--jobs", 1, 2, invalid=(0,)),
             option("--format", *FORMATS, invalid=BAD_FORMATS), option("--baseline", "input1", "stdin", "x"),
             flag("--quiet")],
    "aggregate": [option("-m", "rpp", "ap", invalid=("nonsense",)), flag("-q"), flag("-n"),
                  option("--query_fraction", *FRACTIONS, invalid=BAD_FRACTIONS),
                  option("--num_samples", 1, 3, invalid=(0,)), option("--seed", *SEEDS, invalid=BAD_SEEDS),
                  option("--mc4-damping", 0, 0.5, invalid=(1,)), option("--format", *FORMATS, invalid=BAD_FORMATS),
                  flag("--correlations")],
    "significance": [option("-m", "rpp", "ap", invalid=("nonsense",)),
                     option("--test", "t", "wilcoxon", "sign", "randomization", "bootstrap", invalid=("x",)),
                     option("--correction", "holm", "bh", "none", invalid=("x",)),
                     option("--alpha", 0.05, 0.5, invalid=(0, 1)), option("--permutations", 10, invalid=(0,)),
                     option("--bootstrap", 20, invalid=(0,)), option("--seed", *SEEDS, invalid=BAD_SEEDS),
                     option("--baseline", "A", "x"), option("--format", *FORMATS, invalid=BAD_FORMATS)],
    "plot": [option("-m", "rpp", "ap", invalid=("nonsense",)), option("--seed", *SEEDS, invalid=BAD_SEEDS),
             option("--test", "t", "sign")],
    "sampled": [option("--sample-size", 5, 100, invalid=(0, 10**12)), option("-m", *MEASURES, invalid=BAD_MEASURES),
                flag("--replacement"), option("--unretrieved", "worst", "best", invalid=("x",)),
                option("--draws", 0, 3, invalid=(1,)), option("--seed", *SEEDS, invalid=BAD_SEEDS), flag("-q")],
    "null": [option("--num-items", 50, 500, invalid=(0,)), option("-m", *MEASURES, invalid=BAD_MEASURES),
             option("--quantile", 0.9, 0.5, invalid=(0, 1)), option("--draws", 10, 50, invalid=(0,)),
             option("--seed", *SEEDS, invalid=BAD_SEEDS)],
    "check": [option("--format", "jsonl", "table", invalid=("x",))],
    "measures": [flag("--json")],
}
OUTPUTS = [None, None, None, "-", "out.jsonl", "out.jsonl.gz", "missing/out.jsonl", ".", "out.svg", "out.png"]

prefs_bytes: list[bytes] = []


@pytest.fixture(scope="module", autouse=True)
def example_prefs(tmp_path_factory):
    if not prefs_bytes:
        path = example_eval_lines(tmp_path_factory.mktemp("prefs") / "prefs.jsonl", "rpp,ap")
        prefs_bytes.append(Path(path).read_bytes()[:4000].rsplit(b"\n", 1)[0])


@st.composite
def invocations(draw) -> tuple[list, list[InputFile], str | None]:
    """(the arguments, with an InputFile where an input goes; the input files; the -o value)."""
    command = draw(st.sampled_from(sorted(OPTIONS)))
    if command in ("aggregate", "significance", "plot"):
        inputs = [draw(input_file(prefs_bytes))]
        head = ["-P", inputs[0]] if command != "plot" else [draw(st.sampled_from(["preferences", "orderings", "x"])),
                                                             inputs[0]]
    elif command == "measures":
        inputs, head = [], []
    else:
        qrels = draw(input_file([QRELS_BYTES]))
        runs = draw(st.lists(input_file(RUN_BYTES), min_size=1 if command in ("eval", "sampled") else 0, max_size=3))
        inputs, head = [qrels, *runs], ["-R", qrels, *runs]
    options = [group for choice in OPTIONS[command] if (group := draw(choice))]
    if command == "sampled":
        options.append(["--num-items", draw(st.sampled_from(["300", "300", "10", "0", str(10**12)]))])
    output = draw(st.sampled_from(OUTPUTS))
    if output is not None:
        options.append(["-o", output])
    if command == "plot":  # its two arguments first, in their order
        return [command, *head, *(part for group in draw(st.permutations(options)) for part in group)], inputs, output
    groups = draw(st.permutations(options + [head[i:i + 2] if head[i] == "-R" or head[i] == "-P" else [head[i]]
                                             for i in range(len(head)) if i == 0 or head[i - 1] not in ("-R", "-P")]))
    return [command, *(part for group in groups for part in group)], inputs, output


# --- the files, made -----------------------------------------------------------------------------

class Fifo:
    """A FIFO whose writer serves ``data`` to every reader that opens it, until stopped (so that the
    command never waits for a writer, whatever it does)."""

    def __init__(self, path: Path, data: bytes):
        os.mkfifo(path)
        self.path, self.data, self.stopped = path, data, threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                descriptor = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as error:  # no reader yet
                assert error.errno == errno.ENXIO
                time.sleep(0.001)
                continue
            with contextlib.suppress(OSError):
                os.set_blocking(descriptor, True)
                os.write(descriptor, self.data)
            os.close(descriptor)

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=10)


@contextlib.contextmanager
def made(directory: Path, inputs: list[InputFile]) -> Iterator[tuple[dict[int, str], bytes | None]]:
    """The input files, made in ``directory``: the path standing for each, and what stdin holds."""
    paths, stdin, fifos = {}, None, []
    for number, spec in enumerate(inputs):
        path = directory / f"input{number}"
        if spec.kind == "stdin" and stdin is None:
            paths[id(spec)], stdin = "-", spec.data
            continue
        if spec.kind in ("regular", "stdin"):  # a second stdin would be refused: make it a file
            path.write_bytes(spec.data)
        elif spec.kind == "gzip":
            path.write_bytes(gzip.compress(spec.data, mtime=0))
        elif spec.kind == "fifo":
            fifos.append(Fifo(path, spec.data))
        elif spec.kind == "directory":
            path.mkdir()
        paths[id(spec)] = str(path)
    try:
        yield paths, stdin
    finally:
        for fifo in fifos:
            fifo.stop()


def concrete(args: list, paths: dict[int, str]) -> list[str]:
    return [paths[id(arg)] if isinstance(arg, InputFile) else str(arg) for arg in args]


def check_contract(command: str, code: int, stdout: bytes, stderr: str, before: list[str], after: list[str],
                   output: str | None) -> None:
    assert code in (0, 1, 2), (code, stderr)
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert all(line.startswith("prefeval: ") for line in stderr.splitlines()), stderr  # no Python warning
    if code == 0 or (command == "check" and code == 1 and "prefeval: error:" not in stderr):
        return
    assert stderr.startswith("prefeval: error: ") and stderr.count("\n") == 1, stderr
    assert stdout == b"", stdout[:200]
    assert after == before, (output, before, after)  # neither output file nor temporary file


def listing(directory: Path) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


# --- the tests -----------------------------------------------------------------------------------

@IN_PROCESS
@given(invocations())
def test_any_invocation_in_process_keeps_the_contract(tmp_path, invocation):
    args, inputs, output = invocation
    directory = Path(tempfile.mkdtemp(dir=tmp_path))
    with made(directory, inputs) as (paths, stdin):
        before = listing(directory)
        cwd = os.getcwd()
        os.chdir(directory)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = run_cli(*concrete(args, paths), input=stdin or b"")
        finally:
            os.chdir(cwd)
        after = listing(directory)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert [w for w in caught if not issubclass(w.category, Note)] == [], [str(w.message) for w in caught]
    check_contract(args[0], result.exit_code, result.stdout_bytes, result.stderr, before, after, output)


@SUBPROCESS
@given(invocations())
def test_any_invocation_in_a_process_keeps_the_contract(tmp_path, invocation):
    args, inputs, output = invocation
    directory = Path(tempfile.mkdtemp(dir=tmp_path))
    with made(directory, inputs) as (paths, stdin):
        before = listing(directory)
        process = subprocess.run([sys.executable, "-W", "default", "-m", "prefeval", *concrete(args, paths)],
                                 input=stdin or b"", capture_output=True, cwd=directory, timeout=120)
        after = listing(directory)
    check_contract(args[0], process.returncode, process.stdout, process.stderr.decode("utf-8", "replace"), before,
                   after, output)
