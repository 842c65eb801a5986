"""Broken and hostile input, through the command line: one line naming the file (and the line), a
non-zero exit, nothing on stdout, no traceback, and no output file left behind."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys

import orjson
import pytest
from conftest import EXAMPLES, QRELS, run_cli, write_text
from contract import assert_one_line_error

RUN = str(EXAMPLES / "runs" / "bm25")
GOOD_LINES = ["q101 Q0 DOC-101-000 1 2.5 t", "q101 Q0 DOC-101-001 2 1.5 t"]


def run_writing_output(args, tmp_path):
    target = tmp_path / "out" / "result.jsonl"
    target.parent.mkdir(exist_ok=True)
    result = run_cli(*map(str, args), "-o", str(target))
    left = sorted(p.name for p in target.parent.iterdir())
    return result, left


def assert_rejected(result, left, code: int, *fragments: str, line: int | None = None, source: str | None = None):
    message = assert_one_line_error(result, code, *fragments)
    assert left == []  # no output file, no temporary file
    if source is not None:
        where = f"{source}:{line}: " if line is not None else f"{source}: "
        assert message.startswith(where), message
    assert len(message) < 400


def broken_run(tmp_path, name: str, make) -> str:
    path = tmp_path / name
    make(path)
    return str(path)


RUN_CASES = {
    "missing file": (lambda p: None, None, "no such file"),
    "a directory": (lambda p: p.mkdir(), None, "is a directory"),
    "empty file": (lambda p: p.write_bytes(b""), None, "no run lines"),
    "only comments and blank lines": (lambda p: p.write_text("# nothing\n\n   \n"), None, "no run lines"),
    "binary garbage": (lambda p: p.write_bytes(bytes(range(256)) * 4), 1, "is this a binary file?"),
    "truncated gzip": (lambda p: p.write_bytes(gzip.compress(("\n".join(GOOD_LINES * 500)).encode())[:60]),
                       None, "truncated or corrupt gzip data"),
    "too few columns": (lambda p: p.write_text("\n".join(GOOD_LINES + ["q101 Q0 DOC-101-002 3"])), 3,
                        "expected at least 5 fields"),
    "a word for a score": (lambda p: p.write_text("\n".join(["q101 Q0 D 1 high t"] + GOOD_LINES)), 1,
                           "score 'high' is not a number"),
    "qrels given as a run": (lambda p: p.write_text("q101 0 DOC-101-000 1\n"), 1,
                             "is this a qrels file given as a run?"),
    "a very long line": (lambda p: p.write_text("\n".join(GOOD_LINES + ["q101 " * 200_000])), 3,
                         "score 'q101' is not a number"),
    "a document twice": (lambda p: p.write_text("\n".join(GOOD_LINES + [GOOD_LINES[0]])), 3, "first on line 1"),
    "query ids that never match": (lambda p: p.write_text("q0101 Q0 DOC-101-000 1 2.5 t\n"), None, "zero-padding"),
}


@pytest.mark.parametrize("case", list(RUN_CASES))
def test_broken_runs(tmp_path, case):
    make, line, fragment = RUN_CASES[case]
    path = broken_run(tmp_path, "run", make)
    result, left = run_writing_output(["eval", "-q", "-R", QRELS, RUN, path], tmp_path)
    assert_rejected(result, left, 1, fragment, line=line, source=path)


MALFORMED_RUN_CASES = ["binary garbage", "too few columns", "a word for a score", "qrels given as a run",
                       "a very long line"]


@pytest.mark.parametrize("case", MALFORMED_RUN_CASES)
def test_check_reports_the_line_that_eval_rejects(tmp_path, case):
    make, line, fragment = RUN_CASES[case]
    path = broken_run(tmp_path, "run", make)
    result = run_cli("check", "-R", QRELS, path)
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    malformed = orjson.loads(result.stdout.splitlines()[1])["malformed_lines"]
    assert malformed["first"][0] == line and fragment in malformed["message"]


QRELS_CASES = {
    "non-numeric grade": (["q101 0 D1 1", "q101 0 D2 yes"], 2, "grade 'yes' is not a number"),
    "too few columns": (["q101 0 D1 1", "q101 0 D2"], 2, "expected 4 fields"),
    "a run given as qrels": (["q101 Q0 D1 1 2.5 tag"], 1, "is this a run file given as qrels?"),
    "nan grade": (["q101 0 D1 nan"], 1, "grade 'nan' is not a number"),
    "nothing relevant": (["q101 0 D1 0"], None, "no query has a relevant document"),
}


@pytest.mark.parametrize("case", list(QRELS_CASES))
def test_broken_qrels(tmp_path, case):
    lines, line, fragment = QRELS_CASES[case]
    path = write_text(tmp_path / "qrels", lines)
    result, left = run_writing_output(["eval", "-R", path, RUN], tmp_path)
    assert_rejected(result, left, 1, fragment, line=line, source=path)


def test_unreadable_file(tmp_path):
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("root reads files whatever their permissions")
    path = tmp_path / "run"
    path.write_text("\n".join(GOOD_LINES))
    path.chmod(0)
    result, left = run_writing_output(["eval", "-R", QRELS, str(path)], tmp_path)
    assert_rejected(result, left, 1, "permission denied", source=str(path))


@pytest.mark.parametrize("content", [
    b"\xef\xbb\xbf" + "\n".join(GOOD_LINES).encode(),
    "\r\n".join(GOOD_LINES).encode() + b"\r\n",
    ("\n".join(GOOD_LINES) + "\nq101 Q0 DOC-101-005 3 inf t\nq101 Q0 DOC-101-006 4 -inf t").encode(),
    ("# a comment\n\n" + "\n\n".join(GOOD_LINES) + "\n  # indented comment\n").encode(),
    ("\n".join(GOOD_LINES) + "\nq101 Q0 DOC-101-002 3 1.0 t more fields").encode(),  # ignored, as by trec_eval
])
def test_accepted_oddities(tmp_path, content):
    path = tmp_path / "run"
    path.write_bytes(content)
    result = run_cli("eval", "-R", QRELS, "-m", "ap", str(path))
    assert result.exit_code == 0, result.stderr
    assert orjson.loads(result.stdout.splitlines()[0])["run"] == "run"


def eval_line(**changes) -> dict:
    line = {"qid": "q1", "runi": "A", "runj": "B", "sample": 0, "type": "preference", "rpp": 0.5}
    line.update(changes)
    return {key: value for key, value in line.items() if value is not None}


PREFS_CASES = {
    "malformed JSON": ([orjson.dumps(eval_line()), b'{"qid": "q2", "runi": '], 2, "malformed JSON"),
    "NaN": ([orjson.dumps(eval_line()), b'{"qid":"q2","runi":"A","runj":"B","sample":0,"type":"preference","rpp":NaN}'],
            2, "value of 'rpp' is not a finite number (NaN)"),
    "a line of the wrong kind": ([orjson.dumps(eval_line()), orjson.dumps({"qid": "q2", "measure": "rpp"})], 2,
                                 "not an eval line"),
    "a missing key": ([orjson.dumps(eval_line()), orjson.dumps(eval_line(runj=None))], 2,
                      "preference line without 'runj'"),
    "a text value": ([orjson.dumps(eval_line(rpp="high"))], 1, "value of 'rpp' must be a number"),
    "not an object": ([orjson.dumps(eval_line()), b"[1, 2]"], 2, "expected a JSON object"),
    "summary lines only": ([orjson.dumps({"qid": "all", "runi": "A", "runj": "B", "sample": 0, "rpp": 0.5})], None,
                           "run `prefeval eval` with -q"),
    "binary garbage": ([bytes(range(1, 256))], 1, "malformed JSON"),
}


@pytest.mark.parametrize("command", ["aggregate", "significance"])
@pytest.mark.parametrize("case", list(PREFS_CASES))
def test_broken_eval_lines(tmp_path, command, case):
    lines, line, fragment = PREFS_CASES[case]
    path = tmp_path / "prefs"
    path.write_bytes(b"\n".join(lines) + b"\n")
    args = [command, "-P", str(path)] + (["--seed", "1"] if command == "significance" else [])
    result, left = run_writing_output(args, tmp_path)
    assert_rejected(result, left, 1, fragment, line=line, source=str(path))


def test_usage_errors_exit_2(tmp_path):
    result, left = run_writing_output(["eval", "-R", QRELS, "-m", "nonsense", RUN], tmp_path)
    assert_rejected(result, left, 2, "unknown measure 'nonsense'")
    result, left = run_writing_output(["eval", "-R", "-", "-"], tmp_path)
    assert_rejected(result, left, 2, "standard input (-) can stand for only one of the input files")


@pytest.mark.parametrize("closed, args, code, message", [
    (">&-", ["eval", "-R", QRELS, RUN], 2, "standard output is closed: name an output file with -o"),
    ("<&-", ["eval", "-R", "-", RUN], 1, "<stdin>: standard input is closed"),
])
def test_a_closed_standard_stream_is_one_line(closed, args, code, message):
    process = subprocess.run(["sh", "-c", f'exec "$0" "$@" {closed}', sys.executable, "-m", "prefeval", *args],
                             stdout=subprocess.PIPE if closed == "<&-" else None, stderr=subprocess.PIPE, text=True)
    assert (process.returncode, process.stderr) == (code, f"prefeval: error: {message}\n")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_on_stdout_is_one_line():
    with open("/dev/full", "wb") as full:
        process = subprocess.run([sys.executable, "-m", "prefeval", "eval", "-R", QRELS, RUN], stdout=full,
                                 stderr=subprocess.PIPE, text=True)
    assert (process.returncode, process.stderr) == (1, "prefeval: error: standard output: no space left on device\n")


def test_ids_that_are_not_utf8_are_written_as_escapes(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"q\xff1 0 d1 1\nq2 0 d1 1\n")
    run = tmp_path / "run"
    run.write_bytes(b"q\xff1 Q0 d1 1 1.0 t\nq2 Q0 d2 1 1.0 t\nq\xfe3 Q0 d1 1 1.0 t\n")
    for command in (["eval", "-q"], ["null", "--seed", "1"], ["check"]):
        result = run_cli(*command, "-R", qrels, run)
        assert result.exit_code == 0, result.stderr
        records = [orjson.loads(line) for line in result.stdout_bytes.decode("utf-8").splitlines()]  # UTF-8
        if command == ["check"]:  # the query missing from the qrels, named
            assert records[1]["queries_not_in_qrels"]["first"] == ["q\\xfe3"]
        else:
            assert "q\\xff1" in [record["qid"] for record in records]
    message = assert_one_line_error(run_cli("sampled", "--num-items", "10", "-R", qrels, run), 2)
    assert "query q\\xff1 " in message, message
