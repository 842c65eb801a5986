"""Errors found after reading name their lines without reading the input again (issue 11).

A document twice in a query of a run is found while ranking, after the file was read; its message names
both lines from the :class:`~prefeval.io.trec.LineNumbers` kept by the reader. Re-reading the file made a
FIFO hang and lost the line numbers of a pipe (``<(...)``, stdin).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from conftest import QRELS, run_cli, write_text
from contract import assert_one_line_error
from hypothesis import given, settings
from hypothesis import strategies as st

import prefeval
from prefeval.errors import InputError
from prefeval.io.trec import RUN_FORMAT, LineNumbers, read_columns, read_run

DUPLICATED = b"q101 Q0 d1 1 3 t\n\n# a comment\nq101 Q0 d2 2 2 t\nq101 Q0 d3 3 nan t\nq101 Q0 d1 4 1 t\n"
"""A run whose document d1 is on lines 1 and 6 of query q101 (blank, comment and nan lines between)."""
MESSAGE = "6: document 'd1' appears twice for query 'q101' (first on line 1)"


def run_prefeval(*args: str, **options) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "prefeval", *args], capture_output=True, timeout=60, **options)


def write_in_background(path: str | int, data: bytes) -> threading.Thread:
    """Write ``data`` to a FIFO path (opening it waits for the reader) or a pipe's file descriptor."""
    def write():
        with open(path, "wb") as handle:
            handle.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_duplicate_in_a_fifo_is_reported_without_hanging(tmp_path):
    fifo = str(tmp_path / "run.fifo")
    os.mkfifo(fifo)
    writer = write_in_background(fifo, DUPLICATED)
    process = run_prefeval("eval", "-R", QRELS, fifo)  # re-reading the FIFO would wait for a writer for good
    writer.join(timeout=5)
    assert assert_one_line_error(process, 1) == f"{fifo}:{MESSAGE}"


def test_duplicate_in_a_pipe_keeps_its_line_numbers():
    """What a shell's process substitution gives: /dev/fd/N, a pipe that can be read once."""
    read_end, write_end = os.pipe()
    writer = write_in_background(write_end, DUPLICATED)
    process = run_prefeval("eval", "-R", QRELS, f"/dev/fd/{read_end}", pass_fds=(read_end,))
    os.close(read_end)
    writer.join(timeout=5)
    assert assert_one_line_error(process, 1) == f"/dev/fd/{read_end}:{MESSAGE}"


def test_duplicate_on_stdin_keeps_its_line_numbers():
    process = run_prefeval("eval", "-R", QRELS, "-", input=DUPLICATED)
    assert assert_one_line_error(process, 1) == f"<stdin>:{MESSAGE}"


def test_duplicate_after_queries_the_qrels_lack(tmp_path):
    """Rows of queries not in the qrels are dropped before ranking; the lines still count them."""
    run = write_text(tmp_path / "run", ["x Q0 d1 1 3 t", "q101 Q0 d1 1 3 t", "x Q0 d2 1 3 t", "q101 Q0 d1 2 2 t"])
    result = run_cli("eval", "-R", QRELS, run)
    message = assert_one_line_error(result, 1)
    assert message == f"{run}:4: document 'd1' appears twice for query 'q101' (first on line 2)"


def test_the_run_keeps_no_bytes_and_nothing_for_a_file_of_rows_only(tmp_path):
    path = write_text(tmp_path / "run", ["q1 Q0 a 1 3 t", "q1 Q0 b 2 2 t"])
    run = read_run(path)
    assert len(run.lines.skipped) == 0 and not hasattr(run, "text")
    with open(path, "wb") as handle:
        handle.write(DUPLICATED)
    assert read_run(path).lines.skipped.tolist() == [2, 3, 5]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["row", "blank", "comment", "nan", "spaces"]), min_size=1, max_size=30),
       st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_line_numbers_of_rows_count_every_skipped_line(kinds, end, last_line_ended):
    """Each row's line, from the compact record of skipped lines, is the line it was read from."""
    text = {"row": "q1 Q0 d{} 1 1 t", "blank": "", "comment": " \v# note {}", "nan": "q1 Q0 n{} 1 nan t",
            "spaces": "  \t"}
    lines = [text[kind].format(number) for number, kind in enumerate(kinds, start=1)]
    data = (end.join(lines) + (end if last_line_ended else "")).encode()
    if "row" not in kinds:
        return
    columns = read_columns(data, "<test>", RUN_FORMAT)
    numbers = LineNumbers.of_file(data, len(columns["score"]))
    unscored = np.isnan(columns["score"])
    numbers = numbers.without(np.flatnonzero(unscored))
    expected = [number for number, kind in enumerate(kinds, start=1) if kind == "row"]
    assert numbers.of(np.arange(len(expected))).tolist() == expected
    docids = columns["docid"][~unscored]
    assert [int(docid[1:]) for docid in docids] == expected


def test_a_qrels_query_named_all_is_refused_with_its_line(tmp_path):
    qrels = write_text(tmp_path / "qrels", ["q1 0 a 1", "", "all 0 b 1"])
    run = write_text(tmp_path / "run", ["q1 Q0 a 1 1 t"])
    result = run_cli("eval", "-R", qrels, run)
    assert f"{qrels}:3: a query is named 'all'" in assert_one_line_error(result, 1)
    with pytest.raises(InputError, match="a query is named 'all'"):
        prefeval.evaluate({"all": {"a": 1}}, {"r": {"all": {"a": 1.0}}}, "ap")
