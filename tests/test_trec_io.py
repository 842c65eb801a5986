"""Reading qrels and runs: formats, conventions, and errors that name the file and line."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from conftest import write_text
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval.errors import InputError
from prefeval.io.trec import (
    QRELS_FORMAT,
    RUN_FORMAT,
    LineFormat,
    _read_columns_fast,
    read_columns,
    read_columns_leniently,
    read_qrels,
    read_run,
    run_id_from_path,
    scan_lines,
)


def test_qrels_keep_relevant_documents_in_file_order(tmp_path):
    path = write_text(tmp_path / "qrels", [
        "q2 0 a 1", "q2 0 b 0", "q1 0 c 2", "q3 0 d 0", "q1 0 e 1", "q2 0 f 3",
    ])
    qrels = read_qrels(path)
    assert qrels.qids == ["q2", "q1"]
    assert qrels.dropped_qids == ["q3"]
    assert qrels.offsets.tolist() == [0, 2, 4]
    assert qrels.docids.tolist() == ["a", "f", "c", "e"]
    assert qrels.grades.tolist() == [1.0, 3.0, 2.0, 1.0]


def test_qrels_grade_is_the_maximum_over_subtopics(tmp_path):
    path = write_text(tmp_path / "qrels", ["q1 1 a 1", "q1 2 a 3", "q1 3 a 0", "q1 Q0 b 0", "q1 2 b 2"])
    qrels = read_qrels(path)
    assert dict(zip(qrels.docids, qrels.grades)) == {"a": 3.0, "b": 2.0}


def test_binary_relevance_and_floor(tmp_path):
    path = write_text(tmp_path / "qrels", ["q1 0 a 1", "q1 0 b 2", "q1 0 c 3", "q1 0 d -1"])
    assert read_qrels(path, binary_relevance=2).grades.tolist() == [1.0, 1.0]
    assert read_qrels(path, binary_relevance=2).docids.tolist() == ["b", "c"]
    floored = read_qrels(path, relevance_floor=2)
    assert floored.docids.tolist() == ["b", "c"] and floored.grades.tolist() == [2.0, 3.0]


def test_qrels_without_any_relevant_document_is_an_error(tmp_path):
    path = write_text(tmp_path / "qrels", ["q1 0 a 0", "q2 0 b 0"])
    with pytest.raises(InputError, match="no query has a relevant document"):
        read_qrels(path)


def test_run_columns_with_decimal_comma_nan_and_optional_tag(tmp_path):
    path = write_text(tmp_path / "input.myrun.gz.txt", [
        "q1 Q0 a 1 2,5 tag", "q1 Q0 b 2 nan tag", "q1 Q0 c 3 -1e3", "q2 Q0 d 1 inf tag",
    ])
    run = read_run(path)
    assert run.qids.tolist() == ["q1", "q1", "q2"]
    assert run.docids.tolist() == ["a", "c", "d"]
    assert run.scores.tolist() == [2.5, -1000.0, np.inf]


@pytest.mark.parametrize("path, expected", [
    ("runs/input.pircRBa1.gz", "pircRBa1"),
    ("input.x", "x"),
    ("/a/b/myrun.txt", "myrun.txt"),
    ("my.input.run.gz", "my.input.run"),
    ("input.", "input."),
])
def test_run_id_from_path(path, expected):
    assert run_id_from_path(path) == expected


def test_gzip_is_detected_by_content_not_name(tmp_path):
    plain = tmp_path / "run.gz"
    plain.write_text("q1 Q0 a 1 1.0 t\n")
    packed = tmp_path / "run.txt"
    packed.write_bytes(gzip.compress(b"q1 Q0 b 1 2.0 t\n"))
    assert read_run(str(plain)).docids.tolist() == ["a"]
    assert read_run(str(packed)).docids.tolist() == ["b"]


@pytest.mark.parametrize("content", [
    b"q1\tQ0\ta\t1\t3.0\tt\nq1\tQ0\tb\t2\t2.0\tt\n",
    b"q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\n",
    b"  q1   Q0 a\t1  3.0  t  \n\tq1 Q0 b 2 2.0 t\n",
    b"q1 Q0 a 1 3.0 t\r\nq1 Q0 b 2 2.0 t\r\n",
    b"\xef\xbb\xbfq1 Q0 a 1 3.0 t\n\n# a comment line\n   \nq1 Q0 b 2 2.0 t\n# another",
    b"q1 Q0 a 1 3.0\nq1 Q0 b 2 2.0 t\n",
])
def test_whitespace_line_endings_comments_and_bom(tmp_path, content):
    path = tmp_path / "run"
    path.write_bytes(content)
    run = read_run(str(path))
    assert run.qids.tolist() == ["q1", "q1"]
    assert run.docids.tolist() == ["a", "b"]
    assert run.scores.tolist() == [3.0, 2.0]


def test_docids_that_pandas_would_take_for_missing_values_or_quotes(tmp_path):
    path = write_text(tmp_path / "run", ['q1 Q0 NA 1 3 t', 'q1 Q0 null 2 2 t', 'q1 Q0 "x 3 1 t', 'q1 Q0 #5 4 0 t'])
    assert read_run(path).docids.tolist() == ["NA", "null", '"x', "#5"]


@pytest.mark.parametrize("lines, line, message", [
    (["q1 Q0 a 1 1.0 t", "q1 Q0 b 2"], 2, "expected 5 or 6 fields"),
    (["q1 Q0 a 1 1.0 t", "q1 Q0 b 2 1.0 t extra"], 2, "expected 5 or 6 fields"),
    (["q1 Q0 a 1 1.0 t", "", "q1 Q0 b 2 high t"], 3, "score 'high' is not a number"),
    (["q1 0 a 1"], 1, "is this a qrels file given as a run?"),
    (["q1\tQ0\ta\t1\t1.0\tt", "q1\tQ0\tb\t2\t1.0", "q1\tQ0\tc\t3\t1.0\tt\tx"], 3, "expected 5 or 6 fields"),
    (["q1\tQ0\ta\t1\t1.0\tt", "q1\tQ0\tb\t2\t1.0\tt\tx", "q1\tQ0\tc\t3\t1.0"], 2, "expected 5 or 6 fields"),
    (["q1 Q0 a 1 1.0 t", "q1 Q0 b 2 1.0 t x y", "q1 Q0 c 3"], 2, "expected 5 or 6 fields"),
])
def test_bad_run_lines_are_reported_with_their_line(tmp_path, lines, line, message):
    path = write_text(tmp_path / "run", lines)
    with pytest.raises(InputError, match=message) as caught:
        read_run(path)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize("lines, line, message", [
    (["q1 0 a 1", "q1 0 b"], 2, "expected 4 fields"),
    (["q1 0 a 1", "q1 0 b x"], 2, "grade 'x' is not a number"),
    (["q1 0 a nan"], 1, "grade 'nan' is not a number"),
    (["q1 Q0 a 1 2.5 run"], 1, "is this a run file given as qrels?"),
])
def test_bad_qrels_lines_are_reported_with_their_line(tmp_path, lines, line, message):
    path = write_text(tmp_path / "qrels", lines)
    with pytest.raises(InputError, match=message) as caught:
        read_qrels(path)
    assert caught.value.line == line


@pytest.mark.parametrize("make, message", [
    (lambda p: None, "no such file"),
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: p.write_bytes(b""), "no run lines"),
    (lambda p: p.write_bytes(b"\n# only a comment\n"), "no run lines"),
    (lambda p: p.write_bytes(gzip.compress(b"q1 Q0 a 1 1.0 t\n" * 100)[:40]), "truncated or corrupt gzip"),
])
def test_unreadable_files(tmp_path, make, message):
    path = tmp_path / "run"
    make(path)
    with pytest.raises(InputError, match=message) as caught:
        read_run(str(path))
    assert caught.value.source == str(path)


def _line(parts: list[str], separators: list[str]) -> str:
    return "".join(part + sep for part, sep in zip(parts, separators + [""]))


token = st.text(alphabet="abcXYZ019-_.#", min_size=1, max_size=6).filter(lambda t: not t.startswith("#"))
score = st.one_of(
    st.floats(allow_nan=False, width=32).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1,5", "3", "0.0"]),
)
separator = st.sampled_from([" ", "\t", "  ", " \t"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(token, token, st.integers(0, 999), score, st.booleans(),
                          st.lists(separator, min_size=5, max_size=5)),
                min_size=1, max_size=12))
def test_fast_and_slow_readers_agree(rows):
    lines = []
    for qid, docid, rank, value, tagged, seps in rows:
        parts = [qid, "Q0", docid, str(rank), value] + (["tag"] if tagged else [])
        lines.append(_line(parts, seps[: len(parts) - 1]))
    data = ("\n".join(lines) + "\n").encode()
    slow = scan_lines(data, "<test>", RUN_FORMAT, strict=True).columns
    fast = _read_columns_fast(data, RUN_FORMAT)
    if fast is not None:  # None means "use the slow path", which is always allowed
        assert fast["qid"].tolist() == slow["qid"].tolist()
        assert fast["docid"].tolist() == slow["docid"].tolist()
        np.testing.assert_array_equal(fast["score"], slow["score"])


def test_fast_reader_takes_ordinary_files():
    data = b"".join(b"q%d\tQ0\td%d\t%d\t%f\ttag\n" % (q, d, d, 1.0 / (d + 1)) for q in range(3) for d in range(5))
    assert _read_columns_fast(data, RUN_FORMAT) is not None
    assert _read_columns_fast(b"q1 0 a 1\nq1 0 b 0\n", QRELS_FORMAT) is not None


def test_lenient_reading_keeps_the_good_lines():
    data = b"q1 Q0 a 1 2,5 t\nq1 Q0 b 2\nq1 Q0 c 3 x t\nq2 Q0 d 1 -1e3\n"
    read = read_columns_leniently(data, "f", RUN_FORMAT, shown=5)
    assert read.columns["qid"].tolist() == ["q1", "q2"] and read.columns["score"].tolist() == [2.5, -1000.0]
    assert (read.malformed, read.malformed_lines) == (2, (2, 3))
    assert read.first_problem.startswith("expected 5 or 6 fields")
    assert read_columns_leniently(data, "f", RUN_FORMAT, shown=1).malformed_lines == (2,)


def test_lenient_reading_of_files_without_lines_or_without_problems():
    for data in (b"", b"\n# a comment\n  \n"):
        read = read_columns_leniently(data, "f", QRELS_FORMAT, shown=5)
        assert read.columns["grade"].tolist() == [] and read.columns["qid"].dtype == object
        assert (read.malformed, read.malformed_lines, read.first_problem) == (0, (), None)
    read = read_columns_leniently(b"q1 0 a 1\nq1 0 b 0\n", "f", QRELS_FORMAT, shown=5)
    assert read.columns["docid"].tolist() == ["a", "b"] and read.malformed == 0


def near_valid_lines(fmt: LineFormat) -> st.SearchStrategy[list[str]]:
    """Files of ``fmt`` lines, mostly well-formed; the others have a field too few or too many, or a
    number ``fmt`` does not take, or are blank or commented out (which is not malformed)."""
    words = st.sampled_from(["q1", "q2", "Q0", "0", "a", "b", "tag", "é", "#c"])
    numbers = st.sampled_from(["1", "0", "-2", "2.5", "1e3", "inf", "1,5", "nan", "NaN", "x"])
    changes = st.sampled_from([None] * 12 + ["drop", "extra", "comment", "blank"])

    def line(count: int, texts: list[str], number: str, change: str | None, sep: str) -> str:
        fields = texts[:count]
        fields[fmt.number_field[1]] = number
        fields = {"drop": fields[:-1], "extra": [*fields, "x"], "comment": ["#", *fields], "blank": []}.get(
            change, fields)
        return sep.join(fields)

    texts = st.lists(words, min_size=fmt.max_fields, max_size=fmt.max_fields)
    lines = st.builds(line, st.integers(fmt.min_fields, fmt.max_fields), texts, numbers, changes, separator)
    return st.lists(lines, max_size=8)


def _assert_strict_and_lenient_agree(lines: list[str], fmt: LineFormat) -> None:
    data = "\n".join(lines).encode()
    read = scan_lines(data, "<test>", fmt, strict=False, shown=len(lines))
    assert read.malformed == len(read.malformed_lines) and list(read.malformed_lines) == sorted(read.malformed_lines)
    try:
        strict = scan_lines(data, "<test>", fmt, strict=True).columns
    except InputError as error:
        assert read.malformed > 0
        assert (read.malformed_lines[0], read.first_problem) == (error.line, error.message)
        bad = set(read.malformed_lines)
        good = [line for number, line in enumerate(lines, start=1) if number not in bad]
        strict = scan_lines("\n".join(good).encode(), "<test>", fmt, strict=True).columns  # lenient keeps the rest
    else:
        assert (read.malformed, read.first_problem) == (0, None)
    assert read.columns.keys() == strict.keys()
    for name, values in strict.items():
        np.testing.assert_array_equal(read.columns[name], values)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_strict_and_lenient_scans_agree(data):
    """On a well-formed file both modes return the same columns; otherwise lenient's first malformed line
    and message are strict's error, and its columns are strict's on the file without the malformed lines."""
    for fmt in (RUN_FORMAT, QRELS_FORMAT):
        _assert_strict_and_lenient_agree(data.draw(near_valid_lines(fmt), label=fmt.kind), fmt)


def test_strict_and_lenient_readers_agree_on_the_fast_path():
    data = b"q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\n"
    assert _read_columns_fast(data, RUN_FORMAT) is not None
    read = read_columns_leniently(data, "f", RUN_FORMAT, shown=5)
    assert read.malformed == 0
    for name, values in read_columns(data, "f", RUN_FORMAT).items():
        np.testing.assert_array_equal(read.columns[name], values)
