"""The command line's error contract, checked in one place, and a valid invocation of every command.

A failing command exits 1 (bad input) or 2 (an impossible request), writes exactly one line on
stderr, ``prefeval: error: ...``, nothing on stdout, no traceback, and leaves no output file.
"""

from __future__ import annotations

import os
from pathlib import Path

from conftest import EXAMPLES, QRELS, example_eval_lines

RUN = str(EXAMPLES / "runs" / "bm25")
OTHER_RUN = str(EXAMPLES / "runs" / "dense")


def assert_one_line_error(result, code: int, *fragments: str) -> str:
    """``result`` (click's test runner, or a finished subprocess) failed as the contract says; returns
    the message after ``prefeval: error: ``."""
    exit_code = getattr(result, "exit_code", getattr(result, "returncode", None))
    stdout, stderr = _text(result.stdout), _text(result.stderr)
    assert exit_code == code, (exit_code, stderr)
    assert stdout == "", stdout
    assert "Traceback" not in stderr and "Usage:" not in stderr, stderr
    assert stderr.startswith("prefeval: error: ") and stderr.count("\n") == 1, stderr
    exception = getattr(result, "exception", None)
    assert exception is None or isinstance(exception, SystemExit), exception
    for fragment in fragments:
        assert fragment in stderr, stderr
    return stderr.removeprefix("prefeval: error: ").rstrip("\n")


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else (value or "")


def files_in(directory: Path) -> list[str]:
    """Every name in ``directory``, hidden ones (temporary files) included."""
    return sorted(os.listdir(directory))


def eval_lines(directory: Path) -> str:
    """Per-query eval lines of two example runs (what aggregate, significance and plot read)."""
    path = directory / "prefs.jsonl"
    if not path.exists():
        example_eval_lines(path, "rpp,ap")
    return str(path)


def command_lines(directory: Path) -> dict[str, tuple[list[str], str]]:
    """A valid invocation of every command (its arguments, with every input it reads), and the suffix
    its output file needs."""
    prefs = eval_lines(directory)
    return {
        "eval": (["eval", "-R", QRELS, RUN, OTHER_RUN], ".jsonl"),
        "aggregate": (["aggregate", "-P", prefs], ".jsonl"),
        "significance": (["significance", "-P", prefs, "--seed", "1", "--bootstrap", "50"], ".jsonl"),
        "plot": (["plot", "preferences", prefs, "-m", "rpp"], ".svg"),
        "sampled": (["sampled", "-R", QRELS, "--num-items", "500", RUN], ".jsonl"),
        "null": (["null", "-R", QRELS, "--draws", "50", "--seed", "1", RUN], ".jsonl"),
        "check": (["check", "-R", QRELS, RUN], ".jsonl"),
        "measures": (["measures"], ".txt"),
        "trec_eval": (["trec_eval", QRELS, RUN], ".txt"),
        "ndeval": (["ndeval", str(NDEVAL_DATA / "edge.qrels"), str(NDEVAL_DATA / "edge.run")], ".csv"),
    }


NDEVAL_DATA = Path(__file__).parent / "data" / "ndeval"
WITHOUT_OUTPUT_FILE = {"trec_eval", "ndeval"}
"""The commands without ``-o``: trec_eval's and ndeval's command lines write to stdout, as those tools
do (trec_eval's ``-o`` is its obsolete flag, accepted and ignored)."""


def inputs_of(args: list[str]) -> list[str]:
    """The input files named in ``args`` (every argument that is an existing file)."""
    return [arg for arg in args if os.path.isfile(arg)]
