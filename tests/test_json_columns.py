"""Lines assembled column by column (prefeval.report.json_columns): each column's texts are orjson's
text of each value, and the assembled lines are, byte for byte, the pieces joined line by line in
Python, whatever the texts' lengths, the order of the lines and the lines left out."""

from __future__ import annotations

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval.io.jsonl import json_bytes
from prefeval.report.json_columns import Texts, joined_lines


def _each(values: np.ndarray) -> list[bytes]:
    """orjson's text of each value of ``values`` on its own."""
    return [orjson.dumps(values[i:i + 1], option=orjson.OPT_SERIALIZE_NUMPY)[1:-1] for i in range(len(values))]


@pytest.mark.parametrize("values", [
    np.array([0.1, -0.0, 0.0, 1e-7, 1 / 3, -2.2250738585072014e-308, 1.7976931348623157e308, 3.0, -12345.5]),
    np.array([0, -1, 7, 1 << 40]),
    np.array([True, False, True]),
    np.array([0.5, 1 / 3], dtype=np.float32),
    np.array([1.0]),
])
def test_numbers_are_orjsons_text_of_each_value(values):
    texts = Texts.of_numbers(values)
    assert texts.tolist() == _each(values)
    assert texts.tolist()[1:2] != [b"0.0"] or values[1] == 0  # -0.0 keeps its sign
    assert Texts.of_numbers(values.reshape(-1, 1).T).tolist() == _each(values)  # row order after flattening


def test_numbers_of_a_matrix_in_row_order_and_of_nothing():
    matrix = np.arange(6, dtype=np.float64).reshape(2, 3) / 4
    assert Texts.of_numbers(matrix.T).tolist() == [b"0.0", b"0.75", b"0.25", b"1.0", b"0.5", b"1.25"]
    assert Texts.of_numbers(np.empty(0)).tolist() == []
    assert Texts.of_numbers(np.array([1, 2], dtype=object)).tolist() == [b"1.0", b"2.0"]  # as floats


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), max_size=50))
def test_any_floats_read_back_as_themselves(values):
    texts = Texts.of_numbers(np.array(values, dtype=np.float64))
    assert texts.tolist() == [orjson.dumps(value) for value in values]
    assert [float(text) for text in texts.tolist()] == values


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(['"', ",", "\\", "a", "é", "\n", "\u2028", "😀"]), max_size=8),
                max_size=20))
def test_strings_cut_where_two_strings_meet(texts):
    """Quotes, commas and backslashes inside the texts (``","`` among them) never cut a string."""
    assert Texts.of_strings(texts).tolist() == [orjson.dumps(text) for text in texts]


def test_strings_that_are_not_utf8_are_written_as_json_bytes_writes_them():
    texts = ["ok", "bad\udcff", ""]
    assert Texts.of_strings(texts).tolist() == [json_bytes(text) for text in texts]
    assert Texts.of_strings([]).tolist() == []


def test_take_repeat_and_tile_move_only_starts_and_lengths():
    texts = Texts.of_bytes([b"a", b"bcd", b"", b"ef"])
    assert texts.take([3, 0]).tolist() == [b"ef", b"a"]
    assert texts.take(slice(1, 3)).tolist() == [b"bcd", b""]
    assert texts.take(np.array([True, False, False, True])).tolist() == [b"a", b"ef"]
    assert texts.repeat(2).tolist() == [b"a", b"a", b"bcd", b"bcd", b"", b"", b"ef", b"ef"]
    assert texts.tile(2).tolist() == [b"a", b"bcd", b"", b"ef"] * 2
    assert texts.repeat(2).buffer is texts.buffer and texts.size == 4


def _naive(kinds, num_lines) -> bytes:
    """The lines joined in Python: each line's pieces, lines in number order, unnamed lines left out."""
    text = {}
    for lines, pieces in kinds:
        columns = [piece.tolist() if isinstance(piece, Texts) else None for piece in pieces]
        for row, line in enumerate(lines.tolist()):
            text[line] = b"".join(piece if column is None else column[row] for piece, column in zip(pieces, columns))
    return b"".join(text[line] for line in range(num_lines) if line in text)


@st.composite
def _kinds(draw):
    num_lines = draw(st.integers(0, 40))
    numbers = draw(st.permutations(range(num_lines)))
    left_out = draw(st.integers(0, num_lines))
    cut = draw(st.integers(0, num_lines - left_out))
    kinds = []
    for lines in (numbers[:cut], numbers[cut:num_lines - left_out]):
        lines = np.array(lines, dtype=np.int64)
        pieces = []
        for _ in range(draw(st.integers(0, 5))):
            if draw(st.booleans()):
                pieces.append(draw(st.binary(max_size=6)))
            else:  # lengths from 0 to beyond a byte's and two bytes' range
                sizes = draw(st.lists(st.sampled_from([0, 1, 2, 5, 17, 24, 300, 70_000]), min_size=len(lines),
                                      max_size=len(lines)))
                fill = draw(st.integers(1, 255))
                texts = Texts.of_bytes([bytes([(fill + n + i) % 256 or 1]) * size for i, size in enumerate(sizes)
                                        for n in [len(pieces)]])
                pieces.append(texts)
        kinds.append((lines, pieces))
    return kinds, num_lines


@settings(max_examples=150, deadline=None)
@given(_kinds())
def test_joined_lines_are_the_pieces_joined_line_by_line(case):
    kinds, num_lines = case
    assert bytes(joined_lines(kinds, num_lines)) == _naive(kinds, num_lines)


def test_joined_lines_of_numbers_and_strings():
    qids = Texts.of_strings(["q1", 'q"2'])
    values = Texts.of_numbers(np.array([[0.5, -0.0], [1e-7, 2.0]]).T)  # query by query, run by run
    runs = Texts.of_bytes([b'"A"', b'"B"'])
    kinds = [(np.array([0, 1, 2, 3]), [b'{"qid":', qids.repeat(2), b',"run":', runs.tile(2), b',"ap":', values,
                                       b"}\n"])]
    assert bytes(joined_lines(kinds, 4)) == (b'{"qid":"q1","run":"A","ap":0.5}\n{"qid":"q1","run":"B","ap":1e-7}\n'
                                             b'{"qid":"q\\"2","run":"A","ap":-0.0}\n{"qid":"q\\"2","run":"B","ap":2.0}\n')
    assert bytes(joined_lines([], 0)) == b"" and bytes(joined_lines([(np.array([1]), [b"x\n"])], 3)) == b"x\n"


def test_texts_at_a_lines_start_or_a_buffers_are_copied_exactly():
    """A text is copied with the bytes before it when its line has room for them; at the start of a
    line (no piece before it) or of a column's buffer, a short text beside a long one is copied as it
    is, and the lines before it keep their bytes."""
    short_and_long = Texts.of_bytes([b"a", b"b" * 40, b"c"])
    kinds = [(np.array([0, 1, 2]), [short_and_long, b"|", Texts.of_numbers(np.array([1.0, 1 / 3, 2.5])), b"\n"])]
    assert bytes(joined_lines(kinds, 3)) == b"a|1.0\n" + b"b" * 40 + b"|0.3333333333333333\nc|2.5\n"
