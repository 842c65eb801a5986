"""The command line driven at random: random bytes in the input files, random kinds of file (regular,
gzip, FIFO, stdin, a directory, a missing file), random combinations of options, valid or not, in
every command. Whatever happens, the error contract holds:

* the exit code is 0, 1 or 2;
* a failure writes exactly one line on stderr, ``prefeval: error: ...``, nothing on stdout, and leaves
  no output file (nor temporary file) behind;
* stderr never holds a traceback or a Python warning: every line is prefeval's own.

``check`` is the one command that fails (exit 1) with a report on stdout: its errors are data.

Hostile inputs, last (issue 24, item 10): gzip bombs and endless inputs (``/dev/zero``,
``/dev/urandom``, a FIFO and standard input that never end) in every command and under every engine,
each command in a process of limited memory that must end in bounded time; the contract holds, and
the one line says where reading stopped.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import os
import resource
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


# --- hostile inputs: bombs and endless inputs, under every engine ----------------------------------
#
# Each command runs in a process of its own whose address space is limited to ADDRESS_SPACE (so that
# reading an input whole runs out of memory there, not on the machine) and which must end within
# SECONDS. Gzip bombs expand to BOMB_BYTES: of zero bytes, of one line then bytes without a line end,
# and of one line repeated (lines that are fine, but too many to hold). Endless inputs: /dev/zero,
# /dev/urandom, a FIFO and standard input that never end (of bytes without a line end, or of lines).

ADDRESS_SPACE = 1 << 30
SECONDS = 90
BOMB_BYTES = 1 << 30
MEMBER_BYTES = 1 << 26
RUN_LINE = b"q101 Q0 DOC-101-000 1 1.5 t\n"
EVAL_LINE = b'{"qid":"q1","runi":"A","runj":"B","sample":0,"type":"preference","rpp":0.5}\n'
ENDLESS = {"no line end": b"x" * (1 << 16), "run lines": RUN_LINE * 2048, "eval lines": EVAL_LINE * 1024}
"""What an endless FIFO or standard input repeats."""


@pytest.fixture(scope="session")
def bombs(tmp_path_factory) -> dict[str, str]:
    """gzip files of BOMB_BYTES once decompressed (each is one member of MEMBER_BYTES compressed
    once, repeated: gzip files may be concatenated), of about 1 MB."""
    directory = tmp_path_factory.mktemp("bombs")

    def bomb(name: str, head: bytes, filler: bytes) -> str:
        member = gzip.compress(filler * (MEMBER_BYTES // len(filler)), compresslevel=9, mtime=0)
        path = directory / name
        path.write_bytes((gzip.compress(head, mtime=0) if head else b"") + member * (BOMB_BYTES // MEMBER_BYTES))
        return str(path)

    return {"zeros": bomb("zeros.gz", b"", b"\0"), "long run line": bomb("x.gz", RUN_LINE, b"x"),
            "run lines": bomb("lines.gz", b"", RUN_LINE), "long eval line": bomb("prefs.gz", EVAL_LINE, b"x")}


class EndlessFifo:
    """A FIFO whose writer serves ``data`` over and over to every reader that opens it, until the
    reader goes away, and until stopped (so that no reader waits for a writer, nor a writer for a
    reader that never comes)."""

    def __init__(self, path: Path, data: bytes):
        os.mkfifo(path)
        self.path, self.data, self.stopped = str(path), data, threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                descriptor = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet
                time.sleep(0.001)
                continue
            os.set_blocking(descriptor, True)
            with contextlib.suppress(OSError):
                while not self.stopped.is_set():
                    os.write(descriptor, self.data)
            os.close(descriptor)

    def stop(self) -> None:
        self.stopped.set()
        with contextlib.suppress(OSError):  # a writer blocked on a full pipe: read it empty once
            reader = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            while os.read(reader, 1 << 16):
                pass
            os.close(reader)
        self.thread.join(timeout=10)


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_hostile(args: list[str], directory: Path, stdin: bytes | None = None,
                output: str = "out.jsonl") -> tuple[int, bytes, str, float]:
    """``prefeval ARGS -o OUTPUT`` in ``directory``, limited (module comment), standard input endless
    with ``stdin`` repeated when given: (exit code, stdout, stderr, seconds)."""
    reading, writing = os.pipe() if stdin is not None else (subprocess.DEVNULL, None)
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-W", "default", "-m", "prefeval", *args, "-o", output],
                               stdin=reading, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=directory,
                               preexec_fn=_limited)
    if writing is not None:
        os.close(reading)

        def feed():
            with contextlib.suppress(OSError):
                while True:
                    os.write(writing, stdin)

        threading.Thread(target=feed, daemon=True).start()
    try:
        stdout, stderr = process.communicate(timeout=SECONDS)
    finally:
        process.kill()
        if writing is not None:
            with contextlib.suppress(OSError):
                os.close(writing)
    return process.returncode, stdout, stderr.decode("utf-8", "replace"), time.monotonic() - started


def assert_refused(result: tuple[int, bytes, str, float], directory: Path, *fragments: str) -> None:
    """The error contract (tests/contract.py), with no file left in ``directory`` but its inputs."""
    code, stdout, stderr, _ = result
    assert code in (1, 2), (code, stderr[-2000:])
    assert "Traceback" not in stderr and "Warning" not in stderr, stderr[-2000:]
    assert stderr.startswith("prefeval: error: ") and stderr.count("\n") == 1, stderr[-2000:]
    assert stdout == b""
    assert not [name for name in os.listdir(directory) if name != "input"], os.listdir(directory)
    for fragment in fragments:
        assert fragment in stderr, stderr


LONG_LINE = "a line longer than 32 MiB"
NUL = "a NUL byte"
OUT_OF_MEMORY = "out of memory"
NOT_STREAMED = "streams the collection, which it cannot do here"
EVAL_CASES = {
    # name: (where the input goes, what it is, what the memory engine says, what the streaming engines say)
    "gzip bomb of zeros as a run": ("run", "bomb:zeros", "input:1: " + NUL, "input:1: " + NUL),
    "gzip bomb without a line end as a run": ("run", "bomb:long run line", "input:2: " + LONG_LINE,
                                              "input:2: " + LONG_LINE),
    "gzip bomb without a line end as qrels": ("qrels", "bomb:long run line", "input:1: expected 4 fields",
                                              "input:1: expected 4 fields"),
    "gzip bomb of one line repeated": ("run", "bomb:run lines", OUT_OF_MEMORY, OUT_OF_MEMORY),  # one endless query
    "/dev/zero as a run": ("run", "/dev/zero", "/dev/zero:1: " + NUL, NOT_STREAMED),
    "/dev/urandom as a run": ("run", "/dev/urandom", "/dev/urandom:", NOT_STREAMED),
    "/dev/zero as qrels": ("qrels", "/dev/zero", "/dev/zero:1: " + NUL, NOT_STREAMED),
    "an endless FIFO without a line end": ("run", "fifo:no line end", "input:1: " + LONG_LINE, NOT_STREAMED),
    "an endless FIFO of lines": ("run", "fifo:run lines", OUT_OF_MEMORY, NOT_STREAMED),
    "endless standard input without a line end": ("run", "stdin:no line end", "<stdin>:1: " + LONG_LINE,
                                                  NOT_STREAMED),
    "endless standard input of lines": ("qrels", "stdin:run lines", OUT_OF_MEMORY, NOT_STREAMED),
}


@contextlib.contextmanager
def hostile(kind: str, directory: Path, bombs: dict[str, str]) -> Iterator[tuple[str, bytes | None]]:
    """The path standing for the input ``kind`` (``bomb:NAME``, ``fifo:NAME``, ``stdin:NAME``, a
    device), made in ``directory``, and what standard input repeats."""
    family, _, name = kind.partition(":")
    if family == "bomb":
        os.symlink(bombs[name], directory / "input")
        yield "input", None
    elif family == "fifo":
        fifo = EndlessFifo(directory / "input", ENDLESS[name])
        try:
            yield "input", None
        finally:
            fifo.stop()
    elif family == "stdin":
        yield "-", ENDLESS[name]
    else:
        yield kind, None


@pytest.mark.parametrize("engine", ["memory", "stream", "dask"])
@pytest.mark.parametrize("case", list(EVAL_CASES))
def test_bombs_and_endless_inputs_keep_the_contract_under_every_engine(tmp_path, bombs, engine, case):
    """Every engine refuses a bomb or an endless input with one line, in bounded time and memory
    (issue 24, item 10): the line too long, or the NUL byte, named where reading stopped; out of
    memory for lines too many to hold; what is not a file is not streamed."""
    place, kind, memory_says, streamed_says = EVAL_CASES[case]
    with hostile(kind, tmp_path, bombs) as (path, stdin):
        qrels, run = (path, RUNS[0]) if place == "qrels" else (QRELS, path)
        result = run_hostile(["eval", "--engine", engine, "-R", qrels, run], tmp_path, stdin)
    assert_refused(result, tmp_path, memory_says if engine == "memory" else streamed_says)
    assert result[3] < SECONDS


OTHER_CASES = {
    "aggregate of a gzip bomb of a long line": (["aggregate", "-P"], "bomb:long eval line", "input:2: " + LONG_LINE),
    "aggregate of /dev/zero": (["aggregate", "-P"], "/dev/zero", "/dev/zero:1: "),
    # random bytes: the first line may be blank (skipped), so the line named is not always 1
    "aggregate of /dev/urandom": (["aggregate", "-P"], "/dev/urandom", "/dev/urandom:"),
    "aggregate of endless eval lines": (["aggregate", "-P"], "fifo:eval lines", OUT_OF_MEMORY),
    "significance of endless standard input": (["significance", "-P"], "stdin:no line end", "<stdin>:1: " + LONG_LINE),
    "plot of a gzip bomb without a line end": (["plot", "preferences"], "bomb:long eval line", "input:2: " + LONG_LINE),
    "null of /dev/zero": (["null", "-R", QRELS], "/dev/zero", "/dev/zero:1: " + NUL),
    "sampled of a gzip bomb without a line end": (["sampled", "--num-items", "300", "-R", QRELS], "bomb:long run line",
                                                  "input:2: " + LONG_LINE),
}


@pytest.mark.parametrize("case", list(OTHER_CASES))
def test_bombs_and_endless_inputs_keep_the_contract_in_every_command(tmp_path, bombs, case):
    """The commands that read eval lines, and the other readers of runs: the same bounds."""
    head, kind, says = OTHER_CASES[case]
    with hostile(kind, tmp_path, bombs) as (path, stdin):
        result = run_hostile([*head, path], tmp_path, stdin, "out.svg" if head[0] == "plot" else "out.jsonl")
    assert_refused(result, tmp_path, says)
    assert result[3] < SECONDS


@pytest.mark.parametrize("kind, says", [("/dev/zero", LONG_LINE), ("bomb:zeros", LONG_LINE),
                                        ("fifo:no line end", LONG_LINE), ("/dev/urandom", OUT_OF_MEMORY)])
def test_check_reports_a_bomb_or_an_endless_run(tmp_path, bombs, kind, says):
    """``check`` reports what it cannot read as an error of the file, in its report (exit 1), or runs
    out of memory on endless lines (it reads past NUL bytes, to report every line) in one line."""
    with hostile(kind, tmp_path, bombs) as (path, stdin):
        code, stdout, stderr, seconds = run_hostile(["check", "-R", QRELS, path], tmp_path, stdin)
    assert code == 1 and stdout == b"" and seconds < SECONDS
    assert "Traceback" not in stderr and "Warning" not in stderr, stderr[-2000:]
    if says == OUT_OF_MEMORY:
        assert_refused((code, stdout, stderr, seconds), tmp_path, says)
        return
    report = [orjson.loads(line) for line in (tmp_path / "out.jsonl").read_bytes().splitlines()]
    assert report[1]["status"] == "error" and report[1]["errors"][0].startswith(says), report[1]
