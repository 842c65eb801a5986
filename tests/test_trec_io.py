"""Reading qrels and runs: formats, conventions, and errors that name the file and line."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from conftest import write_text
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval.errors import InputError
from prefeval.io.fields import TextColumn
from prefeval.io.source import MAX_LINE_BYTES, read_blocks, read_bytes
from prefeval.io.trec import (
    QRELS_FORMAT,
    RUN_FORMAT,
    LineFormat,
    _read_columns_fast,
    qrels_from_columns,
    read_columns,
    read_columns_leniently,
    read_fields,
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
    assert dict(zip(qrels.docids.tolist(), qrels.grades)) == {"a": 3.0, "b": 2.0}


def test_qrels_with_a_query_in_two_places_and_documents_judged_twice(tmp_path):
    path = write_text(tmp_path / "qrels", [
        "q2 0 a 1", "q1 0 b 0", "q2 0 c -1", "q3 0 d 0", "q1 1 e 2", "q2 1 a 0", "q1 2 b 1", "q2 0 f 0",
    ])
    qrels = read_qrels(path)
    assert qrels.qids == ["q2", "q1"] and qrels.dropped_qids == ["q3"]
    assert qrels.offsets.tolist() == [0, 1, 3] and qrels.docids.tolist() == ["a", "b", "e"]
    assert qrels.grades.tolist() == [1.0, 1.0, 2.0] and qrels.num_judged.tolist() == [3, 2]
    assert qrels.other_offsets.tolist() == [0, 2, 2] and qrels.other_docids.tolist() == ["c", "f"]
    assert qrels.other_grades.tolist() == [-1.0, 0.0]
    everything = read_qrels(path, keep_empty=True)
    assert everything.qids == ["q2", "q1", "q3"] and everything.dropped_qids == []
    assert everything.offsets.tolist() == [0, 1, 3, 3] and everything.other_offsets.tolist() == [0, 2, 2, 3]
    assert everything.other_docids.tolist() == ["c", "f", "d"] and everything.num_judged.tolist() == [3, 2, 1]


def reference_qrels(rows, binary_relevance, relevance_floor, keep_empty) -> dict | None:
    """Every field of the qrels of (qid, docid, grade) rows, computed the plain way; None when no
    query keeps a document."""
    best: dict[str, dict[str, float]] = {}  # queries and documents in order of first appearance
    for qid, docid, grade in rows:
        if grade >= 0 and binary_relevance is not None:
            grade = 1.0 if grade >= binary_relevance else 0.0
        if grade >= 0 and relevance_floor is not None and grade < relevance_floor:
            grade = 0.0
        documents = best.setdefault(qid, {})
        documents[docid] = max(documents.get(docid, -np.inf), grade)
    kept = [qid for qid, documents in best.items() if keep_empty or max(documents.values()) > 0]
    if not kept:
        return None
    relevant = [[(docid, grade) for docid, grade in best[qid].items() if grade > 0] for qid in kept]
    other = [[(docid, grade) for docid, grade in best[qid].items() if grade <= 0] for qid in kept]
    return dict(
        qids=kept, dropped_qids=[qid for qid in best if qid not in kept],
        offsets=np.cumsum([0] + [len(documents) for documents in relevant]).tolist(),
        docids=[docid for documents in relevant for docid, _ in documents],
        grades=[grade for documents in relevant for _, grade in documents],
        num_judged=[len(best[qid]) for qid in kept],
        other_offsets=np.cumsum([0] + [len(documents) for documents in other]).tolist(),
        other_docids=[docid for documents in other for docid, _ in documents],
        other_grades=[grade for documents in other for _, grade in documents],
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "é"]), st.sampled_from(["a", "b", "c", "d", "e"]),
                          st.sampled_from([-1, 0, 1, 2, 3])), min_size=1, max_size=30),
       st.booleans(), st.sampled_from([None, 1, 2]), st.sampled_from([None, 2]), st.booleans(), st.booleans())
def test_qrels_agree_with_a_plain_reading(rows, by_query, binary_relevance, relevance_floor, keep_empty, as_text):
    # rows grouped by query (each query one stretch, as most files) or not; documents judged twice or not
    if by_query:
        rows = sorted(rows, key=lambda row: row[0])
    data = "".join(f"{qid} 0 {docid} {grade}\n" for qid, docid, grade in rows).encode()
    qids, docids, grades = read_fields(data, "<qrels>", QRELS_FORMAT)
    if as_text:  # the columns of a DataFrame or a dict
        qids, docids = TextColumn.of_texts(qids.tolist()), TextColumn.of_texts(docids.tolist())
    expected = reference_qrels(rows, binary_relevance, relevance_floor, keep_empty)
    if expected is None:
        with pytest.raises(InputError, match="no query has a relevant document"):
            qrels_from_columns("<qrels>", qids, docids, grades, binary_relevance, relevance_floor,
                               keep_empty=keep_empty)
        return
    qrels = qrels_from_columns("<qrels>", qids, docids, grades, binary_relevance, relevance_floor,
                               keep_empty=keep_empty)
    found = {name: getattr(qrels, name) for name in expected}
    found = {name: value if isinstance(value, list) else value.tolist() for name, value in found.items()}
    assert found == expected


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


LONGEST = b"x" * MAX_LINE_BYTES
LINE = b"q1 Q0 a 1 1.0 t\n"


def _written(path, content: bytes, packing: str) -> str:
    path.write_bytes(gzip.compress(content, compresslevel=1, mtime=0) if packing == "gzip" else content)
    return str(path)


def _blocks(path: str) -> bytes:
    """What :func:`read_blocks` reads, the blocks' line numbers checked."""
    content, line = b"", 1
    for block, first_line in read_blocks(path):
        assert first_line == line
        content, line = content + block, line + block.count(b"\n")
    return content


@pytest.mark.parametrize("packing", ["plain", "gzip"])
def test_a_line_of_the_bound_is_read_and_a_longer_one_is_an_error_naming_it(tmp_path, packing):
    """A line of MAX_LINE_BYTES bytes before its \\n is read, whole or in blocks; one
    byte more, anywhere, is an error naming the file and the line, the first line (no line end in the
    first 32 MiB) and the last (no line end at all) included (issue 24, item 10)."""
    fits = LINE + LONGEST + b"\n" + LINE + LONGEST
    path = _written(tmp_path / "fits", fits, packing)
    assert read_bytes(path) == _blocks(path) == fits
    for content, line in [(LINE * 2 + LONGEST + b"x\n" + LINE, 3), (LONGEST + b"x", 1), (b"x" + LONGEST + LINE, 1),
                          (LINE * 3 + b"x" + LONGEST, 4)]:
        path = _written(tmp_path / f"line{line}", content, packing)
        for read in (read_bytes, _blocks):
            with pytest.raises(InputError) as caught:
                read(path)
            assert (caught.value.source, caught.value.line) == (path, line)
            assert caught.value.message == ("a line longer than 32 MiB (the longest line prefeval reads): is this a "
                                            "file of text lines?")
    path = _written(tmp_path / "bad first", b"q1 Q0 a\n" + LONGEST + b"x\n", packing)
    with pytest.raises(InputError, match="expected at least 5 fields") as caught:  # the first bad line, as in blocks
        read_run(path)
    assert caught.value.line == 1


def test_gzip_members_padding_and_damage_read_as_the_gzip_module_reads_them(tmp_path):
    """Concatenated members are one content, zero bytes after a member are padding; a member cut
    short, a wrong checksum or bytes that are not gzip after a member are errors."""
    members = gzip.compress(LINE, mtime=0) + b"\0" * 5 + gzip.compress(b"q1 Q0 b 2 1.0 t\n" * 70_000, mtime=0)
    path = _written(tmp_path / "members", members + b"\0" * 3, "plain")
    assert read_bytes(path) == _blocks(path) == LINE + b"q1 Q0 b 2 1.0 t\n" * 70_000
    wrong_crc = bytearray(gzip.compress(LINE, mtime=0))
    wrong_crc[-8] ^= 1
    for damaged in (members[:-3], bytes(wrong_crc), members + b"garbage"):
        path = _written(tmp_path / "damaged", damaged, "plain")
        for read in (read_bytes, _blocks):
            with pytest.raises(InputError, match="truncated or corrupt gzip data"):
                read(path)


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
    (["q1 Q0 a 1 1.0 t", "q1 Q0 b 2"], 2, "expected at least 5 fields"),
    (["q1 Q0 a 1 1.0 t", "", "q1 Q0 b 2 high t"], 3, "score 'high' is not a number"),
    (["q1 0 a 1"], 1, "is this a qrels file given as a run?"),
    (["q1\tQ0\ta\t1\t1.0\tt", "q1\tQ0\tb\t2\t1.0", "q1\tQ0\tc\t3"], 3, "expected at least 5 fields"),
    (["q1 Q0 a 1 1.0 t", "q1 Q0 b 2 1.0 t x y", "q1 Q0 c 3"], 3, "expected at least 5 fields"),
])
def test_bad_run_lines_are_reported_with_their_line(tmp_path, lines, line, message):
    path = write_text(tmp_path / "run", lines)
    with pytest.raises(InputError, match=message) as caught:
        read_run(path)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{path}:{line}: ")


HINTS_BY_SHAPE = {  # issue 29, item 4: a hint only where the line's shape supports it
    ("run", "q1 a 2.5"): "expected at least 5 fields (qid Q0 docid rank score [tag ...]), found 3",
    ("run", "q1 0 a 1"): "found 4; is this a qrels file given as a run?",
    ("run", "q1,Q0,a,1,2.5,t"): "found 1; fields are separated by spaces or tabs, not commas: is this a CSV file?",
    ("qrels", "q1 a 1"): "found 3; is the iter column missing? (trec_eval reads qid 0 docid grade)",
    ("qrels", "q1 0 a 1 1"): "found 5; are these preference judgments (--rel-format prefs), or a run given as qrels?",
    ("qrels", "q1 Q0 a 1 2.5 t"): "found 6; is this a run file given as qrels?",
    ("qrels", "q1,0,a,1"): "found 1; fields are separated by spaces or tabs, not commas: is this a CSV file?",
    ("qrels", "q1 0 a 1 2 3 4"): "found 7; is this a run file given as qrels?",
}


@pytest.mark.parametrize("kind, line", list(HINTS_BY_SHAPE))
def test_a_line_of_the_wrong_shape_gets_the_hint_its_shape_supports(tmp_path, kind, line):
    path = write_text(tmp_path / kind, [line])
    with pytest.raises(InputError) as caught:
        (read_run if kind == "run" else read_qrels)(path)
    assert str(caught.value).endswith(HINTS_BY_SHAPE[kind, line])


@pytest.mark.parametrize("lines, line, message", [
    (["q1 0 a 1", "q1 0 b"], 2, "expected 4 fields"),
    (["q1 0 a 1", "q1 0 b x"], 2, "grade 'x' is not a number"),
    (["q1 0 a nan"], 1, "grade 'nan' is not a number"),
    (["q1 Q0 a 1 2.5 run"], 1, "is this a run file given as qrels?"),
    (["q1 0 a 1", "q1 0 b 1 extra"], 2, "expected 4 fields"),
    (["q1\t0\ta\t1", "q1\t0\tb\t1\textra"], 2, "expected 4 fields"),
    (["q1 0 a 1", "q1 0 b inf"], 2, "grade 'inf' is out of range: grades must be finite"),
    (["q1 0 a 1", "q1 0 b -1e308"], 2, "grade '-1e308' is out of range"),
    (["q1 0 a 1", "q1 0 b 9007199254740994"], 2, "is out of range"),
    (["q1 0 a 1", "# the summary", "all 0 b 1"], 3, "a query is named 'all'"),
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
    assert read.first_problem.startswith("expected at least 5 fields")
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

    most = fmt.max_fields or fmt.min_fields + 2
    texts = st.lists(words, min_size=most, max_size=most)
    lines = st.builds(line, st.integers(fmt.min_fields, most), texts, numbers, changes, separator)
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


# --- the language of both readers (issue 11) ----------------------------------------------------------

def both_readers(data: bytes, fmt: LineFormat) -> dict[str, np.ndarray]:
    """The columns read by the slow path, after checking that the fast path, when it takes the
    file, reads the very same (every value, NaN where NaN, the bits of every number)."""
    slow = scan_lines(data, "<test>", fmt, strict=True).columns
    fast = _read_columns_fast(data, fmt)
    if fast is not None:
        assert fast.keys() == slow.keys()
        for name, values in slow.items():
            assert fast[name].dtype == values.dtype, name
            if values.dtype == object:
                assert fast[name].tolist() == values.tolist(), name
            else:
                np.testing.assert_array_equal(fast[name].view(np.int64), values.view(np.int64), err_msg=name)
    return slow


@pytest.mark.parametrize("score", ["1_000", "1_0", "\u0661\u0662", "\uff11", "0x10", "1e", "e5", "1.5f", "--1",
                                   "1\x1c", "\u00a01", "nan(1)", "infin", "1,000.5", "½"])
@pytest.mark.parametrize("ordinary", [True, False], ids=["fast path", "slow path"])
def test_scores_python_reads_but_strtod_does_not_are_errors(tmp_path, score, ordinary):
    """Python's float takes underscores, other scripts' digits and Unicode spaces; trec_eval's atof
    stops at them (1_000 is 1, Arabic-Indic digits 0). Neither reader takes them as numbers."""
    other = "q1 Q0 z 3 0.5 t" if ordinary else "q1   Q0 z 3 0.5 t"  # the second sends the file to the slow path
    path = tmp_path / "run"
    path.write_bytes(f"q1 Q0 a 1 2 t\n{other}\nq1 Q0 b 2 {score} t\n".encode())
    with pytest.raises(InputError, match="score .* is not a number") as caught:
        read_run(str(path))
    assert caught.value.line == 3


@pytest.mark.parametrize("score, value", [
    ("1.", 1.0), (".5", 0.5), ("+1", 1.0), ("-0", -0.0), ("1E+05", 1e5), ("1e-400", 0.0), ("1e400", np.inf),
    ("INF", np.inf), ("-Infinity", -np.inf), ("iNfInItY", np.inf), ("0012", 12.0), ("1,5", 1.5), ("-,5e1", -5.0),
    ("0.1000000000000000055511151231257827", 0.1), ("4.9e-324", 5e-324),
])
def test_scores_in_strtod_syntax_read_alike(score, value):
    for line in (f"q1 Q0 a 1 {score} t\n", f"q1 Q0 a 1 {score} t\nq1  Q0 b 2 0 t\n"):
        columns = both_readers(line.encode(), RUN_FORMAT)
        assert columns["score"][0] == value and np.signbit(columns["score"][0]) == np.signbit(value)


@pytest.mark.parametrize("spelling", ["nan", "NaN", "nAn", "+nan", "-NAN"])
def test_every_spelling_of_nan_skips_the_line(tmp_path, spelling):
    path = write_text(tmp_path / "run", ["q1 Q0 a 1 2 t", f"q1 Q0 b 2 {spelling} t"])
    assert read_run(path).docids.tolist() == ["a"]


@pytest.mark.parametrize("lines", [
    ["q1 Q0 a 1 3 run extra", "q1 Q0 b 2 2 run more and more"],
    ["q1\tQ0\ta\t1\t3\trun\textra", "q1\tQ0\tb\t2\t2\trun\textra\tfields"],
    ["q1 Q0 a 1 3", "q1 Q0 b 2 2 run x y z"],
])
def test_fields_after_the_run_id_are_ignored_as_trec_eval_ignores_them(tmp_path, lines):
    data = ("\n".join(lines) + "\n").encode()
    columns = both_readers(data, RUN_FORMAT)
    assert columns["docid"].tolist() == ["a", "b"] and columns["score"].tolist() == [3.0, 2.0]
    assert _read_columns_fast(data, RUN_FORMAT) is not None  # and the fast path takes them
    assert read_run(write_text(tmp_path / "run", lines)).docids.tolist() == ["a", "b"]


@pytest.mark.parametrize("data, line, message", [
    (b"q1 Q0 a 1 3 t\rq1 Q0 b 2 2 t\r", 1, "carriage return"),
    (b"q1 Q0 a 1 3 t\nq1 Q0 b\r2 2 t\n", 2, "carriage return"),
    (b"q1 Q0 a 1 3 t\r\r\n", 1, "carriage return"),
    (b"q1 Q0 a 1 3 t\n# a comment \r with a carriage return\n", 2, "carriage return"),
    (b"q1 Q0 a 1 3 t\nq1 Q0 b\x00 2 2 t\n", 2, "NUL byte"),
])
@pytest.mark.parametrize("fmt", [RUN_FORMAT, QRELS_FORMAT], ids=["run", "qrels"])
def test_lone_carriage_returns_and_nul_bytes_are_errors_on_both_paths(data, line, message, fmt):
    """Old Mac files (CR line ends) were read by pandas but refused by the line scanner; trec_eval
    reads them as a single line. Both readers refuse them now, naming the line."""
    if fmt is QRELS_FORMAT:
        data = data.replace(b" Q0 ", b" 0 ").replace(b" 1 3 t", b" 3").replace(b"2 2 t", b"2")
    assert _read_columns_fast(data, fmt) is None
    with pytest.raises(InputError, match=message) as caught:
        read_columns(data, "<test>", fmt)
    assert caught.value.line == line


def test_vertical_tabs_and_form_feeds_separate_fields_as_in_trec_eval():
    """C's isspace, which trec_eval splits on, holds the vertical tab and the form feed; pandas does
    not split on them, so such files take the line scanner, whatever their other lines."""
    for sep in (b"\v", b"\f"):
        data = b"q1 Q0 a" + sep + b"b 1 3 t\nq1 Q0 c 2 2 t\n"  # 'a' is the docid, 'b' the rank, 1 the score
        assert _read_columns_fast(data, RUN_FORMAT) is None
        columns = read_columns(data, "<test>", RUN_FORMAT)
        assert columns["docid"].tolist() == ["a", "c"] and columns["score"].tolist() == [1.0, 2.0]
        with pytest.raises(InputError, match="expected 4 fields") as caught:
            read_columns(b"q1 0 a 1\nq1 0 b" + sep + b"x 1\n", "<test>", QRELS_FORMAT)
        assert caught.value.line == 2


def test_ids_that_are_not_utf8_keep_their_bytes():
    docids = [b"d\xff", b"d\xc3\xa9", b"d\xc3", b"\xe4\xb8\xad", b"x\x80y"]
    lines = b"".join(b"q\xfe1 Q0 %s %d 1 t\n" % (docid, rank) for rank, docid in enumerate(docids))
    for data in (lines, lines.replace(b" Q0 ", b"  Q0 ")):
        columns = both_readers(data, RUN_FORMAT)
        assert [d.encode("utf-8", "surrogateescape") for d in columns["docid"]] == docids
        assert {q.encode("utf-8", "surrogateescape") for q in columns["qid"]} == {b"q\xfe1"}


TRICKY = st.sampled_from([b" ", b"  ", b"\t", b"\v", b"\f", b"\r", b"#", b"0", b"1", b"9", b"q", b"Q0", b"d", b"e",
                          b".", b",", b"_", b"-", b"+", b"nan", b"inf", b"\xff", b"\xc3", b"\xa9", b"\x00", b"a",
                          b"\xef\xbb\xbf"])
SEPARATORS = st.sampled_from([b" "] * 6 + [b"\t"] * 3 + [b"  ", b" \t", b"\v", b" \f"])
LINE_ENDS = st.sampled_from([b"\n", b"\n", b"\n", b"\r\n", b"\r"])
NUMBERS = st.sampled_from([b"1", b"0", b"2.5", b"1,5", b"-3e2", b".5", b"nan", b"NaN", b"inf", b"1_0", b"1e", b"x"])


@st.composite
def tricky_field(draw, plain: bytes) -> bytes:
    """``plain``, or now and then with a tricky byte inside or around it."""
    if draw(st.integers(0, 9)):
        return plain
    at = draw(st.integers(0, len(plain)))
    return plain[:at] + draw(TRICKY) + plain[at:]


@st.composite
def tricky_files(draw) -> bytes:
    """Run or qrels files of mostly valid lines, with tricky bytes in fields, tricky separators,
    tricky line ends, blank and comment lines, and lines of tricky bytes alone."""
    lines = []
    shape = draw(st.sampled_from(["run", "qrels"]))
    for number in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from([shape] * 8 + ["tricky", "blank", "comment"]))
        if kind == "tricky":
            lines.append(b"".join(draw(st.lists(TRICKY, max_size=12))))
            continue
        if kind in ("blank", "comment"):
            lines.append(draw(st.sampled_from([b"", b"  ", b"\t"])) + (b"# note" if kind == "comment" else b""))
            continue
        docid = draw(st.sampled_from([b"d1", b"d2", b"D-3", b"d\xc3\xa9", b"d\xff", b"#5"]))
        plain = [b"q1", b"Q0", docid, b"%d" % number, draw(NUMBERS)] if kind == "run" else [
            b"q1", b"0", docid, draw(NUMBERS)]
        plain += draw(st.lists(st.sampled_from([b"tag", b"x"]), max_size=3 if kind == "run" else 1))
        fields = [draw(tricky_field(field)) for field in plain]
        separators = draw(st.lists(SEPARATORS, min_size=len(fields) - 1, max_size=len(fields) - 1))
        lines.append(b"".join(f + s for f, s in zip(fields, separators + [b""])))
    ends = draw(st.lists(LINE_ENDS, min_size=len(lines), max_size=len(lines)))
    return b"".join(line + end for line, end in zip(lines, ends))


@settings(max_examples=500, deadline=None)
@given(st.one_of(tricky_files(), st.lists(TRICKY, max_size=40).map(b"".join)))
def test_both_readers_accept_the_same_language(data):
    """The same bytes, read by the fast path where it takes them and by the line scanner: the same
    columns, or (the fast path declining) the line scanner's error."""
    for fmt in (RUN_FORMAT, QRELS_FORMAT):
        try:
            expected = scan_lines(data, "<test>", fmt, strict=True).columns
        except InputError as error:
            assert _read_columns_fast(data, fmt) is None
            with pytest.raises(InputError) as caught:
                read_columns(data, "<test>", fmt)
            assert (caught.value.line, caught.value.message) == (error.line, error.message)
            continue
        both_readers(data, fmt)
        if len(expected[fmt.number_field[0]]):
            for name, values in read_columns(data, "<test>", fmt).items():
                np.testing.assert_array_equal(values, expected[name])
