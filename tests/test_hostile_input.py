"""Broken and hostile input, through the command line: one line naming the file (and the line), a
non-zero exit, nothing on stdout, no traceback, and no output file left behind."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys

import orjson
import pytest
from conftest import EXAMPLES, QRELS, json_lines, run_cli, write_text
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


def test_an_id_and_its_escaped_spelling_stay_two_ids(tmp_path):
    """A byte that is not UTF-8 is written \\xNN in JSON, and a backslash \\\\, so that the id of the
    byte 0xFF and the id of the four characters \\xff stay two ids (issue 24, item 6), in the query
    ids, the run ids made from file names, check's query and document ids, null and sampled; the
    text layouts write the bytes themselves, --format trec_eval as trec_eval prints them."""
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"q\xff 0 d1 1\nq\\xff 0 d2 1\nq\\xff 0 d3 1\n")
    raw, spelled = tmp_path / os.fsdecode(b"r\xfe"), tmp_path / "r\\xfe"
    raw.write_bytes(b"q\xff Q0 d1 1 2.0 t\nq\\xff Q0 d2 1 2.0 t\nq\\xff Q0 d9 2 1.0 t\n")
    spelled.write_bytes(b"q\xff Q0 d9 1 2.0 t\nq\xff Q0 d1 2 1.0 t\nq\\xff Q0 d3 1 2.0 t\nq\\xff Q0 d1 2 1.0 t\n")
    result = run_cli("eval", "-q", "-m", "ap", "-R", qrels, raw, spelled)
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == (
        b'{"qid":"q\\\\xff","runi":"r\\\\xfe","runj":"r\\\\\\\\xfe","sample":0,"type":"preference","ap":0.5}\n'
        b'{"qid":"q\\\\xff","run":"r\\\\xfe","sample":0,"type":"metric","ap":1.0}\n'
        b'{"qid":"q\\\\xff","run":"r\\\\\\\\xfe","sample":0,"type":"metric","ap":0.5}\n'
        b'{"qid":"q\\\\\\\\xff","runi":"r\\\\xfe","runj":"r\\\\\\\\xfe","sample":0,"type":"preference","ap":0.0}\n'
        b'{"qid":"q\\\\\\\\xff","run":"r\\\\xfe","sample":0,"type":"metric","ap":0.5}\n'
        b'{"qid":"q\\\\\\\\xff","run":"r\\\\\\\\xfe","sample":0,"type":"metric","ap":0.5}\n'
        b'{"qid":"all","runi":"r\\\\xfe","runj":"r\\\\\\\\xfe","sample":0,"ap":0.25}\n'
        b'{"qid":"all","run":"r\\\\xfe","sample":0,"type":"metric","ap":0.75}\n'
        b'{"qid":"all","run":"r\\\\\\\\xfe","sample":0,"type":"metric","ap":0.5}\n'
    )
    prefs = tmp_path / "prefs.jsonl"
    prefs.write_bytes(result.stdout_bytes)
    orderings = run_cli("aggregate", "-q", "-P", prefs)  # two queries and two runs, not one line given twice
    assert orderings.exit_code == 0, orderings.stderr
    assert [record["qid"] for record in json_lines(orderings.stdout_bytes)] == ["q\\xff", "q\\\\xff", "all"]
    assert json_lines(orderings.stdout_bytes)[0]["scores"]["ap"] == {"r\\xfe": 1.0, "r\\\\xfe": 0.5}

    check = json_lines(run_cli("check", "-R", qrels, spelled).stdout_bytes)
    assert check[1]["run"] == "r\\\\xfe"
    twice = tmp_path / "twice"
    twice.write_bytes(b"q\\xff Q0 d\\1 1 2.0 t\nq\\xff Q0 d\\1 2 1.0 t\n")
    duplicate = json_lines(run_cli("check", "-R", qrels, twice).stdout_bytes)[1]["duplicate_documents"]["first"]
    assert (duplicate["qid"], duplicate["docid"]) == ("q\\\\xff", "d\\\\1")
    foreign = tmp_path / "foreign"
    foreign.write_bytes(b"q\xff Q0 d1 1 2.0 t\nz\xfd Q0 d1 1 2.0 t\nz\\xfd Q0 d1 1 2.0 t\n")
    listed = json_lines(run_cli("check", "-R", qrels, foreign).stdout_bytes)[1]["queries_not_in_qrels"]
    assert listed == {"count": 2, "first": ["z\\xfd", "z\\\\xfd"]}
    null = json_lines(run_cli("null", "--seed", "1", "-m", "ap", "--draws", "10", "-R", qrels, raw).stdout_bytes)
    assert [(record["qid"], record.get("run")) for record in null] == [
        ("q\\xff", None), ("q\\xff", "r\\xfe"), ("q\\\\xff", None), ("q\\\\xff", "r\\xfe"), ("all", "r\\xfe")]
    sampled = run_cli("sampled", "-q", "--num-items", "30", "--sample-size", "5", "-m", "ap", "--seed", "1",
                      "-R", qrels, raw, spelled)
    assert [(record["qid"], record.get("run")) for record in json_lines(sampled.stdout_bytes)][:4] == [
        ("q\\xff", "r\\xfe"), ("q\\xff", "r\\\\xfe"), ("q\\\\xff", "r\\xfe"), ("q\\\\xff", "r\\\\xfe")]

    tsv = run_cli("eval", "-q", "-m", "ap", "--format", "tsv", "-R", qrels, raw).stdout_bytes
    assert tsv.splitlines()[:2] == [b"map                   \tq\xff\t1.0000",
                                    b"map                   \tq\\\\xff\t0.5000"]
    layout = run_cli("eval", "-q", "-m", "map", "--format", "trec_eval", "-R", qrels, raw).stdout_bytes
    assert layout.splitlines() == [b"map                   \tq\\xff\t0.5000", b"map                   \tq\xff\t1.0000",
                                   b"map                   \tall\t0.7500"]
    trec_eval = os.environ.get("PREFEVAL_TREC_EVAL")
    if trec_eval:
        oracle = subprocess.run([trec_eval, "-q", "-m", "map", str(qrels), str(raw)], capture_output=True, check=True)
        assert layout == oracle.stdout
    # ir_measures prints an id's bytes, a backslash as one backslash (its command line, run as a program)
    irm = run_cli("eval", "-q", "-m", "AP", "--format", "ir_measures", "-R", qrels, raw).stdout_bytes
    assert sorted(irm.splitlines()) == [b"all\tAP\t0.7500", b"q\\xff\tAP\t0.5000", b"q\xff\tAP\t1.0000"]


@pytest.mark.parametrize("args", [["eval", "-R", QRELS, RUN], ["aggregate", "-P", "PREFS"],
                                  ["significance", "-P", "PREFS"], ["check", "-R", QRELS, RUN]])
def test_running_out_of_memory_is_one_line(tmp_path, monkeypatch, args):
    """A MemoryError, wherever it is raised, ends the command with one line and exit code 1, no
    traceback, no output file (issue 24, item 10)."""
    prefs = tmp_path / "prefs.jsonl"
    prefs.write_bytes(b'{"qid":"q1","runi":"A","runj":"B","sample":0,"type":"preference","rpp":0.5}\n')
    args = [str(prefs) if arg == "PREFS" else arg for arg in args]

    def exhausted(*_, **__):
        raise MemoryError

    for reader in ("prefeval.io.trec", "prefeval.io.evallines", "prefeval.analyses.check"):
        monkeypatch.setattr(f"{reader}.read_bytes", exhausted)
    result, left = run_writing_output(args, tmp_path)
    message = assert_one_line_error(result, 1)
    assert message == ("out of memory: the input needs more memory than this process may take (for eval, "
                       "--engine stream reads files in bounded memory)")
    assert left == []


def _gzipped(tmp_path, name: str, lines: list[bytes]) -> str:
    path = tmp_path / name
    path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n", mtime=0))
    return str(path)


def test_reading_stops_at_a_nul_byte_and_names_the_first_bad_line(tmp_path):
    """gzip data (read piece by piece) ends with the first line that holds a NUL byte: the error names
    that line, or an earlier bad line, as for the same bytes in a plain file; ``check``, which
    reports on every line, reads past it."""
    good = [line.encode() for line in GOOD_LINES]
    for lines, line, fragment in [(good + [b"q101 Q0 D\x00 3 1.0 t"] + good, 3, "a NUL byte"),
                                  (good[:1] + [b"q101 Q0 D 3"] + [b"\x00" * 100] * 3, 2, "expected at least 5 fields")]:
        for path in (_gzipped(tmp_path, "run.gz", lines), write_text(tmp_path / "run", [x.decode() for x in lines])):
            result, left = run_writing_output(["eval", "-R", QRELS, path], tmp_path)
            assert_rejected(result, left, 1, fragment, line=line, source=path)
    path = _gzipped(tmp_path, "report.gz", good + [b"q101 Q0 D\x00 3 1.0 t", b"q101 Q0 D 4"] + good)
    report = json_lines(run_cli("check", "-R", QRELS, path).stdout_bytes)[1]["malformed_lines"]
    assert (report["count"], report["first"]) == (2, [3, 4])


def test_notes_spell_ids_as_json_does(tmp_path):
    """A note names a run and its queries in the spelling of the JSON lines (io/ids.py), so that an id
    in a note is the id in the output: a byte that is not UTF-8 as \\xNN, a backslash as \\\\."""
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"q1 0 d1 1\n")
    run = tmp_path / os.fsdecode(b"r\xfe")
    run.write_bytes(b"q1 Q0 d1 1 2.0 t\nq\xfd Q0 d1 1 2.0 t\nq\\x Q0 d1 1 2.0 t\n")
    result = run_cli("eval", "-m", "ap", "-R", qrels, run)
    assert result.exit_code == 0, result.stderr
    assert '"run":"r\\\\xfe"' in result.stdout
    assert result.stderr == "prefeval: note: run r\\xfe: 2 queries (q\\xfd, q\\\\x) not in the qrels, ignored\n"
