"""Lines of JSON text assembled column by column, each piece written once at its exact place.

A column of texts (:class:`Texts`) holds its texts back to back in one byte buffer, with each one's
start and length: a column of numbers is orjson's serialisation of the whole array in one call
(:meth:`Texts.of_numbers`, each number found between two commas), a column of strings likewise
(:meth:`Texts.of_strings`). Selecting, repeating or tiling a column's texts moves only their starts
and lengths.

:func:`joined_lines` writes lines whose pieces are constant bytes (``,"ap":``) and columns, a text of
each column per line. Each line's length is the sum of its pieces' lengths, so each line's place in
the output, and each piece's place in its line, is known before a byte is written; a piece of every
line is then copied to its place by one numpy assignment per distinct length of its texts: a text of
ℓ bytes is one element of a ``V{ℓ}`` view of the buffer whose elements start at every byte
(:func:`_windows`), and so is its place in the output. No Python object is made per value, and no byte
is written twice, padded or deleted afterwards (about 50 ns per number on this machine, where cutting
orjson's text into a list of ``bytes`` and making a fixed-width array of it, padding every line to the
widest and deleting the padding took about 250 ns).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import orjson

__all__ = ["Texts", "joined_lines"]

_COMMA, _QUOTE = ord(","), ord('"')


class Texts:
    """Texts held back to back: text ``i`` is ``buffer[starts[i] : starts[i] + lengths[i]]``."""

    __slots__ = ("buffer", "starts", "lengths")

    def __init__(self, buffer: np.ndarray, starts: np.ndarray, lengths: np.ndarray):
        self.buffer, self.starts, self.lengths = buffer, starts, lengths

    @property
    def size(self) -> int:
        return len(self.starts)

    def take(self, rows) -> Texts:
        """The texts ``rows`` (an index, a boolean mask or a slice)."""
        return Texts(self.buffer, self.starts[rows], self.lengths[rows])

    def repeat(self, times: int) -> Texts:
        """Each text ``times`` times in a row (``np.repeat``)."""
        return Texts(self.buffer, np.repeat(self.starts, times), np.repeat(self.lengths, times))

    def tile(self, times: int) -> Texts:
        """All the texts, ``times`` times over (``np.tile``)."""
        return Texts(self.buffer, np.tile(self.starts, times), np.tile(self.lengths, times))

    def tolist(self) -> list[bytes]:
        data = self.buffer.tobytes()
        return [data[start:start + length] for start, length in zip(self.starts.tolist(), self.lengths.tolist())]

    @classmethod
    def of_bytes(cls, texts: Sequence[bytes]) -> Texts:
        """The texts ``texts`` as they are."""
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        return cls(np.frombuffer(b"".join(texts), dtype=np.uint8), np.cumsum(lengths) - lengths, lengths)

    @classmethod
    def of_numbers(cls, values: np.ndarray) -> Texts:
        """Each number of ``values`` (flattened in row order) as JSON text, by one orjson call
        (booleans as ``true`` and ``false``, integers as integers, floats as the shortest text that
        reads back as the same float, ``-0.0`` included); the text between two commas is a number."""
        flat = np.ascontiguousarray(values).ravel()
        if flat.dtype.kind not in "iufb":
            flat = flat.astype(np.float64)
        if not len(flat):
            return cls(np.empty(0, dtype=np.uint8), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
        text = np.frombuffer(orjson.dumps(flat, option=orjson.OPT_SERIALIZE_NUMPY), dtype=np.uint8)
        ends = np.append(np.flatnonzero(text == _COMMA), len(text) - 1)  # after each number: "," or "]"
        starts = np.empty_like(ends)
        starts[0], starts[1:] = 1, ends[:-1] + 1
        return cls(text, starts, ends - starts)

    @classmethod
    def of_strings(cls, texts: list[str]) -> Texts:
        """Each text as a JSON string (its quotes included). Texts without a quote or a comma: by one
        orjson call, cut at each ``","``, which then occurs only between two strings (``\\","`` ends
        the string ``",``, and ``","`` is the string ``,``). Texts with one, or not UTF-8 (held with
        surrogate escapes): one by one, as :func:`~prefeval.io.jsonl.json_bytes` writes them."""
        from prefeval.io.jsonl import json_bytes

        if not texts:
            return cls.of_bytes([])
        joined = "".join(texts)
        if '"' in joined or "," in joined:
            return cls.of_bytes([json_bytes(text) for text in texts])
        try:
            text = np.frombuffer(orjson.dumps(texts), dtype=np.uint8)
        except TypeError:  # not UTF-8
            return cls.of_bytes([json_bytes(text) for text in texts])
        between = np.flatnonzero((text[:-2] == _QUOTE) & (text[1:-1] == _COMMA) & (text[2:] == _QUOTE))
        starts = np.append(1, between + 2)
        return cls(text, starts, np.append(between + 1, len(text) - 1) - starts)


Piece = bytes | Texts
"""A piece of lines: the same bytes in every line, or a column with a text per line."""


def joined_lines(kinds: Sequence[tuple[np.ndarray, Sequence[Piece]]], num_lines: int) -> bytearray:
    """The text of ``num_lines`` lines made of pieces (module docstring). Each kind of line is
    ``(lines, pieces)``: the numbers of its lines among all (in any order) and the pieces each is
    made of, in order (a column with a text per line of ``lines``). A line that no kind names is
    left out."""
    lengths = np.zeros(num_lines, dtype=np.int64)
    for lines, pieces in kinds:
        length = np.full(len(lines), sum(len(piece) for piece in pieces if not isinstance(piece, Texts)))
        for piece in pieces:
            if isinstance(piece, Texts):
                length += piece.lengths
        lengths[lines] = length
    ends = np.cumsum(lengths)
    text = bytearray(int(ends[-1]) if num_lines else 0)
    target = np.frombuffer(text, dtype=np.uint8)
    for lines, pieces in kinds:
        if not len(lines):
            continue
        place = ends[lines] - lengths[lines]
        for piece in pieces:
            if isinstance(piece, Texts):
                _place_texts(target, place, piece)
                place += piece.lengths
            elif piece:
                _windows(target, len(piece))[place] = np.frombuffer(piece, dtype=np.dtype((np.void, len(piece))))[0]
                place += len(piece)
    return text


def _place_texts(target: np.ndarray, places: np.ndarray, texts: Texts) -> None:
    """Copy each text of ``texts`` to ``target[places[i]:]``, the texts of each length at once."""
    lengths = texts.lengths
    if not len(lengths):
        return
    counts = np.bincount(lengths)
    widths = np.flatnonzero(counts)
    if len(widths) == 1:
        groups = [(int(widths[0]), slice(None))]
    else:  # a stable sort of small integers is a radix sort: linear
        narrow = lengths.astype(np.uint8 if widths[-1] < 1 << 8 else np.uint16 if widths[-1] < 1 << 16 else np.int64)
        order = np.argsort(narrow, kind="stable")
        bounds = np.cumsum(counts[widths])
        groups = [(int(width), order[end - int(counts[width]):end]) for width, end in zip(widths, bounds)]
    for width, rows in groups:
        if width:
            _windows(target, width)[places[rows]] = _windows(texts.buffer, width)[texts.starts[rows]]


def _windows(buffer: np.ndarray, width: int) -> np.ndarray:
    """Every run of ``width`` bytes of ``buffer`` as one element (element ``i`` is bytes i .. i + width − 1):
    a view, writable when ``buffer`` is."""
    return np.ndarray((len(buffer) - width + 1,), dtype=np.dtype((np.void, width)), buffer=buffer, strides=(1,))
