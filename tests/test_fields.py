"""Keys of text fields and the splitter of common run and qrels files (prefeval.io.fields): the
splitter reads exactly what the general reader reads, bit for bit, or gives way to it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval.io import fields
from prefeval.io.fields import (
    TextColumn,
    by_stretch,
    byte_keys,
    encoded,
    first_of_each,
    split_fields,
    stretch_starts,
    text_keys,
)
from prefeval.io.trec import QRELS_FORMAT, RUN_FORMAT, scan_lines


def split_run(data: bytes):
    return split_fields(data, RUN_FORMAT.field_layout)


def split_qrels(data: bytes):
    return split_fields(data, QRELS_FORMAT.field_layout)


def keys_in(buffer: bytes, spans: list[tuple[int, int]]) -> np.ndarray:
    starts = np.array([start for start, _ in spans], dtype=np.int64)
    lengths = np.array([length for _, length in spans], dtype=np.int64)
    return byte_keys(np.frombuffer(buffer + bytes(8), np.uint8), starts, lengths)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=0, max_size=40), min_size=1, max_size=8), st.binary(max_size=20),
       st.binary(max_size=20))
def test_a_key_depends_on_the_bytes_of_the_field_only(texts, before, after):
    """The same bytes give the same key wherever they are and whatever surrounds them; different
    bytes (here, of up to 40 bytes, so several words) give different keys."""
    buffer = before + b"".join(texts) + after
    spans, start = [], len(before)
    for text in texts:
        spans.append((start, len(text)))
        start += len(text)
    keys = keys_in(buffer, spans)
    alone = np.array([keys_in(text, [(0, len(text))])[0] for text in texts], dtype=np.uint64)
    np.testing.assert_array_equal(keys, alone)
    distinct = {text: key for text, key in zip(texts, keys.tolist())}
    assert len(set(distinct.values())) == len(distinct)


def test_keys_of_known_fields():
    """Pinned values: keys must not change between versions or machines (chunks read apart must agree)."""
    keys = keys_in(b"q1d-123456789", [(0, 2), (2, 11), (0, 0)])
    assert keys.dtype == np.uint64
    assert keys.tolist() == [int(key) for key in text_keys(["q1", "d-123456789", ""])]
    assert len(set(keys.tolist())) == 3
    assert text_keys(["q1"])[0] != text_keys(["q1\x00"])[0]  # the length is part of the key


def test_text_keys_are_the_keys_of_the_file_bytes():
    """Texts decoded with surrogate escapes (bytes that are not UTF-8) key as the bytes of the file."""
    raw = [b"caf\xc3\xa9", b"\xff\xfe", b"plain"]
    texts = [text.decode("utf-8", "surrogateescape") for text in raw]
    buffer = b"".join(raw)
    spans = [(0, 5), (5, 2), (7, 5)]
    np.testing.assert_array_equal(text_keys(texts), keys_in(buffer, spans))


def test_text_column_indexing_joining_and_texts():
    data = b"q1 Q0 a 1 1.5 t\nq1 Q0 b 2 1 t\nq2 Q0 \xff 1 3 t\n"
    qids, docids, scores = split_run(data)
    assert docids.tolist() == ["a", "b", "\udcff"] and scores.tolist() == [1.5, 1.0, 3.0]
    assert docids[np.array([False, True, True])].tolist() == ["b", "\udcff"]
    assert docids[1:].texts([1]).tolist() == ["\udcff"]
    assert docids[1] == "b" and docids[np.int64(2)] == "\udcff" and docids[-3] == "a"
    other = TextColumn.of_texts(["z"])
    joined = TextColumn.joined([docids[:1], other, docids[2:]])
    assert joined.tolist() == ["a", "z", "\udcff"]
    np.testing.assert_array_equal(joined.keys, text_keys(["a", "z", "\udcff"]))
    from_bytes = TextColumn.joined([docids[:1], docids[2:], split_run(b"x Q0 y 1 2\n")[1]])
    assert from_bytes.tolist() == ["a", "\udcff", "y"]
    assert first_of_each(qids).tolist() == ["q1", "q2"]
    assert stretch_starts(qids.keys).tolist() == [0, 2]
    asked = []
    answers = by_stretch(np.array([5, 5, 7, 5]), lambda heads: asked.append(heads.tolist()) or heads * 10)
    assert asked == [[5, 7, 5]] and answers.tolist() == [50, 50, 70, 50]
    assert encoded(["b", "\udcff", "a"]).tolist() == [b"b", b"\xff", b"a"] and len(encoded([])) == 0
    assert len(TextColumn.of_texts([])) == 0 and TextColumn.of_texts([]).tolist() == []


def test_byte_strings_order_docids_as_strcmp():
    """Tied documents are ordered by their bytes, as trec_eval's strcmp orders them: a prefix first,
    a byte that is not UTF-8 (0xff) after every ASCII one, the same from bytes and from texts."""
    data = b"q Q0 b 1 1 t\nq Q0 \xff 1 1 t\nq Q0 ab 1 1 t\nq Q0 a 1 1 t\nq Q0 \xc3\xa9 1 1 t\n"
    docids = split_run(data)[1]
    every = np.arange(5)
    for column in (docids, TextColumn.of_texts(docids.tolist())):
        keys = column.byte_strings(every)
        assert np.argsort(keys, kind="stable").tolist() == [3, 2, 0, 4, 1]
        assert column.byte_strings([1, 3]).tolist() == [b"\xff", b"a"]
        assert column[2:].byte_strings(np.arange(3)).tolist() == [b"ab", b"a", b"\xc3\xa9"]


decimal = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda x: f"{x:.6f}"),
    st.tuples(st.sampled_from(["", "-", "+"]), st.text("0123456789", min_size=0, max_size=20),
              st.sampled_from([".", ",", ""]), st.text("0123456789", min_size=0, max_size=20))
    .filter(lambda parts: parts[1] or parts[3]).map("".join),
    st.sampled_from(["nan", "-NaN", "inf", "-Infinity", "1e5", "2.5E-3", "-0", "0.0", "5.", ".5", "+.5"]),
)
token = st.text(alphabet="abcXYZ019-_.#\u00e9", min_size=1, max_size=12).filter(lambda t: not t.startswith("#"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(token, token, decimal), min_size=1, max_size=15), st.sampled_from([" ", "\t"]),
       st.integers(5, 7), st.booleans())
def test_the_splitter_reads_what_the_general_reader_reads(rows, separator, fields_per_line, final_newline):
    """Runs of the common shape: the splitter takes them, and reads the general reader's rows, texts
    and numbers (every bit; NaN as NaN), and the keys of those texts."""
    extra = ["tag", "x", "y"][:fields_per_line - 5]
    text = "\n".join(separator.join([qid, "Q0", docid, "1", score, *extra]) for qid, docid, score in rows)
    data = (text + ("\n" if final_newline else "")).encode()
    split = split_run(data)
    assert split is not None
    qids, docids, scores = split
    slow = scan_lines(data, "<test>", RUN_FORMAT, strict=True).columns
    assert qids.tolist() == slow["qid"].tolist() and docids.tolist() == slow["docid"].tolist()
    np.testing.assert_array_equal(scores.view(np.int64), slow["score"].view(np.int64))
    np.testing.assert_array_equal(docids.keys, text_keys(slow["docid"].tolist()))
    np.testing.assert_array_equal(qids.keys, text_keys(slow["qid"].tolist()))


grade = st.one_of(st.integers(-2, 4).map(str), st.sampled_from(["1.0", "-0", "+2", "0.5", "1e1", "3."]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(token, token, grade), min_size=1, max_size=15), st.sampled_from([" ", "\t"]),
       st.booleans())
def test_the_splitter_reads_qrels_as_the_general_reader_does(rows, separator, final_newline):
    """Qrels of the common shape (four fields): the same rows, texts, grades and keys."""
    text = "\n".join(separator.join([qid, "0", docid, value]) for qid, docid, value in rows)
    data = (text + ("\n" if final_newline else "")).encode()
    qids, docids, grades = split_qrels(data)
    slow = scan_lines(data, "<test>", QRELS_FORMAT, strict=True).columns
    assert qids.tolist() == slow["qid"].tolist() and docids.tolist() == slow["docid"].tolist()
    np.testing.assert_array_equal(grades.view(np.int64), slow["grade"].view(np.int64))
    np.testing.assert_array_equal(docids.keys, text_keys(slow["docid"].tolist()))


@pytest.mark.parametrize("data", [
    b"q1 0 a 1 x\n", b"q1 0 a\n", b"q1 0 a 1,5\n", b"q1 0 a 1\nq1 0 b 1 2\n", b"q1 0 a\t1\n",
])
def test_the_splitter_gives_way_on_other_qrels(data):
    """Qrels lines of other than four fields, and decimal commas (which only a run's scores may
    have), are left to the general reader."""
    assert split_qrels(data) is None


@pytest.mark.parametrize("data", [
    b"", b" q1 Q0 a 1 2\n", b"q1  Q0 a 1 2\n", b"q1 Q0 a 1 2 \n", b"q1 Q0 a 1 2\n\nq1 Q0 b 1 2\n",
    b"q1 Q0 a 1 2\r\n", b"q1 Q0 a 1 2\n#c\nq1 Q0 b 1 2\n", b"q1\tQ0 a 1 2\n", b"q1 Q0 a 1\n",
    b"q1 Q0 a 1 2 t\nq1 Q0 b 1 2\n", b"q1 Q0 a 1 2\x00\n", b"q1 Q0 a 1 2\x0b\n", b"q1 Q0 a 1 x\n",
    b"q1 Q0 a 1 1_0\n", b"q1 Q0 a 1 1.2.3\n", b"q1 Q0 a 1 -\n", b"q1 Q0 a 1 \xd9\xa1\n",
    b"q1 Q0 a 1 2 t x\nq1 Q0 b 1 2\n", b"q1 Q0 a 1 2\nq1 Q0 b 1 2 t x\n", b"\nq1 Q0 a 1 2\n",
])
def test_the_splitter_gives_way_on_any_other_text(data):
    """Anything but the common shape (or a score that is not a number) is left to the general reader."""
    assert split_run(data) is None


def test_pieces_read_as_one(monkeypatch):
    """A file longer than a piece reads as the same columns; fields that change in number between
    pieces give way."""
    lines = [f"q{n // 7} Q0 d{n} {n} {n / 3:.5f} tag" for n in range(200)]
    for data in (("\n".join(lines) + "\n").encode(), "\n".join(lines).encode()):  # with and without a last line end
        monkeypatch.setattr(fields, "_PIECE_BYTES", 1 << 20)
        whole = split_run(data)
        monkeypatch.setattr(fields, "_PIECE_BYTES", 64)
        pieces = split_run(data)
        assert whole[0].tolist() == [f"q{n // 7}" for n in range(200)]
        assert pieces[1].tolist() == [f"d{n}" for n in range(200)]
        for one, other in zip(whole[:2], pieces[:2]):
            assert one.tolist() == other.tolist()
            np.testing.assert_array_equal(one.keys, other.keys)
        np.testing.assert_array_equal(whole[2], pieces[2])
        np.testing.assert_array_equal(pieces[2], [float(f"{n / 3:.5f}") for n in range(200)])
    mixed = ("\n".join(lines[:100] + [line.rsplit(" ", 1)[0] for line in lines[100:]]) + "\n").encode()
    assert split_run(mixed) is None


@pytest.mark.parametrize("extended", [True, False], ids=["extended precision", "without it"])
def test_long_decimals_round_as_strtod(monkeypatch, extended):
    """16 to 19 digits: divided in extended precision, or (on machines without it, and for the rows
    near a halfway point) parsed by numpy; either way the double strtod gives, bit for bit."""
    if extended and not fields._EXTENDED:
        pytest.skip("this machine's long double is not x87 extended precision")
    monkeypatch.setattr(fields, "_EXTENDED", extended)
    rng = np.random.default_rng(7)
    scores = ["9007199254740993", "9007199254740995", "-0.1000000000000000055", "1234567890123456789",
              "0,30000000000000004", "+.1234567890123456789", "49.19109429178723"]
    scores += [f"{rng.integers(1, 10**6)}.{rng.integers(0, 10**12):012d}" for _ in range(2000)]
    data = "".join(f"q Q0 d{n} 1 {score} t\n" for n, score in enumerate(scores)).encode()
    parsed = split_run(data)[2]
    expected = np.array([float(score.replace(",", ".")) for score in scores])
    np.testing.assert_array_equal(parsed.view(np.int64), expected.view(np.int64))


@pytest.mark.parametrize("changes_at", [None, 0, 3, 150, 299])
def test_a_field_the_same_on_every_line_reads_as_one_across_pieces(monkeypatch, changes_at):
    """The qrels' iter field, one byte the same on every line of a piece (no key per line): read in
    pieces of a few lines, the same column as read whole, whether it is the same on every line of the
    file (then one key, no array per line) or changes at some line (the first piece's, a middle
    piece's, the last's)."""
    from prefeval.io.trec import QRELS_ITER_FORMAT

    iters = ["0" if changes_at is None or n < changes_at else "1" for n in range(300)]
    data = "".join(f"q{n // 9} {it} d{n} {n % 3}\n" for n, it in enumerate(iters)).encode()
    layout = QRELS_ITER_FORMAT.field_layout
    monkeypatch.setattr(fields, "_PIECE_BYTES", 1 << 20)
    whole = split_fields(data, layout)
    monkeypatch.setattr(fields, "_PIECE_BYTES", 40)
    pieces = split_fields(data, layout)
    iter_column = pieces[layout.texts.index(1)]
    assert iter_column.tolist() == iters
    for one, other in zip(whole[:-1], pieces[:-1]):
        assert one.tolist() == other.tolist()
        np.testing.assert_array_equal(one.keys, other.keys)
    np.testing.assert_array_equal(whole[-1], pieces[-1])
    assert (len(set(iter_column.keys.tolist())) == 1) == (changes_at in (None, 0))
