"""``prefeval ndeval``: ndeval 4.5's command line and its CSV, byte for byte.

In CI, against ndeval's outputs recorded in ``tests/data/ndeval/expected`` (by its ``regenerate.py``,
from the binary) on the cases of :mod:`ndeval_cases`: a subset of the TREC 2012 Web track's public
qrels and baselines, and prefeval's own files for ndeval's conventions. With ``PREFEVAL_NDEVAL``
naming an ndeval binary, against the binary itself too: the recorded outputs, random collections
under every option, and (with ``PREFEVAL_WEB_DATA`` naming a folder of ``qrels-for-ndeval.txt`` and
runs ``*.txt``, the README's loop) the whole track.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from contract import assert_one_line_error
from diversity_cases import random_collection, write_collection
from ndeval_cases import CASES, ERRORS, NAN_CASES

from prefeval.analyses.ndeval import NdevalOptions, ndeval_report
from prefeval.cli.ndeval import read_command_line
from prefeval.errors import InputError, UsageError

DATA = Path(__file__).parent / "data" / "ndeval"
BINARY = os.environ.get("PREFEVAL_NDEVAL")
needs_binary = pytest.mark.skipif(not BINARY, reason="set PREFEVAL_NDEVAL to an ndeval binary")


def ndeval_here(args: list[str], cwd: Path = DATA):
    """``prefeval ndeval ARGS`` run as a process in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "prefeval", "ndeval", *args], cwd=cwd, capture_output=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_prints_what_ndeval_prints(name, monkeypatch):
    monkeypatch.chdir(DATA)
    result = run_cli("ndeval", *CASES[name])
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == (DATA / "expected" / f"{name}.csv").read_bytes()
    assert all(line.startswith("prefeval: note: ") for line in result.stderr.splitlines())


def assert_same_but_nan(ours: bytes, theirs: bytes) -> int:
    """``ours`` is ndeval's output ``theirs`` byte for byte, but where ndeval prints a NaN (nNRBP's 0/0):
    there prefeval prints a number. Returns how many fields ndeval printed as NaN."""
    ours_lines, their_lines = ours.decode().splitlines(), theirs.decode().splitlines()
    assert len(ours_lines) == len(their_lines)
    nans = 0
    for mine, reference in zip(ours_lines, their_lines):
        mine_fields, reference_fields = mine.rsplit(",", 21), reference.rsplit(",", 21)
        assert mine_fields[0] == reference_fields[0]
        for field, expected in zip(mine_fields[1:], reference_fields[1:]):
            if expected in ("-nan", "nan"):
                nans += 1
                assert re.fullmatch(r"-?[0-9]+\.[0-9]{6}", field), field
            else:
                assert field == expected
    return nans


@pytest.mark.parametrize("name", sorted(NAN_CASES))
def test_where_ndeval_prints_nan_prefeval_prints_zero_and_says_so(name, monkeypatch):
    monkeypatch.chdir(DATA)
    result = run_cli("ndeval", *NAN_CASES[name])
    assert result.exit_code == 0
    assert assert_same_but_nan(result.stdout_bytes, (DATA / "expected" / f"{name}.csv").read_bytes()) == 2
    assert ",2,0.000000," in result.stdout
    assert "ndeval prints -nan for nNRBP" in result.stderr and "the mean of nNRBP" in result.stderr


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_what_ndeval_refuses_is_one_line_and_exit_code_1(name, monkeypatch):
    monkeypatch.chdir(DATA)
    assert_one_line_error(run_cli("ndeval", *ERRORS[name]), 1)


def test_errors_name_the_file_and_line():
    result = ndeval_here(["edge.qrels", "dup.run"])
    assert result.stderr.decode() == ("prefeval: error: dup.run:5: duplicate docno (d02) for topic 1 (lines 2 and 5)"
                                      "\n")
    assert b"negative.qrels:2: syntax error in qrels file: '-1' is not a natural number" in \
        ndeval_here(["negative.qrels", "edge.run"]).stderr
    assert b"short.run:1: syntax error in run file: 6 fields expected, found 5" in \
        ndeval_here(["edge.qrels", "short.run"]).stderr
    assert b"samerank.run:2: duplicate rank (1) for topic 1 (lines 1 and 2)" in \
        ndeval_here(["edge.qrels", "samerank.run"]).stderr


def test_the_command_line_is_read_as_ndeval_reads_it():
    options, qrels, run = read_command_line(["-alpha", "0.7x", "-c", "-traditional", "-M", "5z", "q", "r"])
    assert (qrels, run) == ("q", "r")
    assert options == NdevalOptions(alpha=0.7, complete=True, traditional=True, depth=5)
    options, _, _ = read_command_line(["-baseline", "b", "-riskAlpha", "1.50", "-ca", "-", "q", "r"])
    assert options.baseline == "b" and options.risk_alpha == 1.5 and options.risk_text == "1.50"
    # an option is an option only while the qrels and the run still follow it
    with pytest.raises(UsageError):
        read_command_line(["-alpha", "q", "r"])
    assert read_command_line(["-c", "r"]) is not None  # "-c" is the qrels here: two operands
    for refused in (["-alpha", "x", "q", "r"], ["-alpha", "nan", "q", "r"], ["-beta", "1.5", "q", "r"],
                    ["-M", "-3", "q", "r"], ["-riskAlpha", "inf", "q", "r"], ["-alpha", "0x1p-1", "q", "r"]):
        with pytest.raises(UsageError):
            read_command_line(refused)
    assert read_command_line(["-version", "q", "r"]).startswith("prefeval ndeval: ndeval version 4.5")
    assert read_command_line(["-help", "q", "r"]).startswith("Usage: prefeval ndeval")


def test_the_subtopics_are_noted_as_everywhere():
    result = ndeval_here(["web2012.qrels", "ql.run"])
    assert result.stderr.decode() == ("prefeval: note: web2012.qrels: 4 of 4 queries judged on several subtopics (the "
                                      "iter column): err_ia@5, err_ia@10, err_ia@20, nerr_ia@5, nerr_ia@10 and 16 "
                                      "more read the judgments per subtopic\n")


def test_version_and_help_go_to_stdout():
    version = run_cli("ndeval", "-version")
    assert version.exit_code == 0 and version.stdout == \
        "prefeval ndeval: ndeval version 4.5 (Mon 29 Apr 2013 20:51:02 EDT)\n"
    assert run_cli("ndeval", "-help").stdout == run_cli("ndeval", "--help").stdout


def test_a_run_none_of_whose_topics_is_judged_needs_c(tmp_path):
    (tmp_path / "run").write_text("77 Q0 d 1 1 r\n")
    with pytest.raises(InputError, match="no topic of this run is in the qrels"):
        ndeval_report(str(DATA / "edge.qrels"), str(tmp_path / "run"))
    report = ndeval_report(str(DATA / "edge.qrels"), str(tmp_path / "run"), NdevalOptions(complete=True))
    assert [topic for topic, _ in report.rows] == [77] and not report.means.any()


# --- against the binary ---------------------------------------------------------------------------


def binary(args: list[str], cwd: Path):
    return subprocess.run([BINARY, *args], cwd=cwd, capture_output=True)


@needs_binary
def test_the_recorded_outputs_are_the_binarys():
    for name, args in {**CASES, **NAN_CASES}.items():
        assert binary(args, DATA).stdout == (DATA / "expected" / f"{name}.csv").read_bytes(), name
    for name, args in ERRORS.items():
        assert binary(args, DATA).returncode == 1, name


OPTION_SETS = [[], ["-traditional"], ["-c"], ["-alpha", "0.3", "-beta", "0.9"], ["-alpha", "1", "-beta", "0"],
               ["-M", "5", "-traditional"], ["-baseline", "r1"], ["-c", "-baseline", "r1", "-riskAlpha", "2"]]


@needs_binary
@pytest.mark.parametrize("seed", range(10))
def test_random_collections_under_every_option(tmp_path, seed):
    rng = np.random.default_rng(seed)
    qrels, runs = write_collection(tmp_path, *random_collection(rng, num_queries=6, num_runs=2))
    for run in runs:
        for options in OPTION_SETS:
            if "r1" in options and not (tmp_path / "r1").exists():
                continue
            args = [*options, "qrels", Path(run).name]
            assert_same_but_nan(ndeval_here(args, tmp_path).stdout, binary(args, tmp_path).stdout)


WEB_DATA = os.environ.get("PREFEVAL_WEB_DATA")


@needs_binary
@pytest.mark.skipif(not WEB_DATA, reason="set PREFEVAL_WEB_DATA to a folder of qrels-for-ndeval.txt and runs")
def test_the_readme_loop_on_the_whole_track():
    folder = Path(WEB_DATA)
    runs = sorted(path.name for path in folder.glob("*.txt") if path.name != "qrels-for-ndeval.txt")
    for run in runs:
        for options in [[], ["-traditional"], ["-c", "-M", "20"], ["-baseline", runs[0], "-riskAlpha", "1"]]:
            args = [*options, "qrels-for-ndeval.txt", run]
            assert_same_but_nan(ndeval_here(args, folder).stdout, binary(args, folder).stdout)
