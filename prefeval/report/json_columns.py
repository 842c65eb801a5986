"""Lines of JSON text assembled column by column, each piece written once at its exact place.

A column of texts (:class:`Texts`) holds its texts back to back in one byte buffer, with each one's
start and length: a column of numbers is orjson's serialisation of the whole array in one call
(:meth:`Texts.of_numbers`, each number found between two commas), a column of strings likewise
(:meth:`Texts.of_strings`). Selecting, repeating or tiling a column's texts moves only their starts
and lengths.

:func:`joined_lines` writes lines whose pieces are constant bytes (``,"ap":``) and columns, a text of
each column per line. Each line's length is the sum of its pieces' lengths, so each line's place in
the output, and each piece's place in its line, is known before a byte is written. The pieces are
then written from each line's last to its first, a piece of every line by one numpy assignment: a
text of ℓ bytes is one element of a ``V{ℓ}`` view of a buffer whose elements start at every byte
(:func:`_windows`), and a column's texts are all copied as long as its longest, with the bytes that
precede each in its buffer, which the pieces before it in the line then overwrite
(:func:`_place_texts`). No Python object is made per value, and nothing is padded or deleted
afterwards: ``python benchmarks/render.py`` gives about 50 ns per number for its text and 35 for
its place in the lines, where cutting orjson's text into a list of ``bytes``, making a fixed-width
array of it, padding every line to the widest and deleting the padding took about 250 ns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import orjson

__all__ = ["Texts", "joined_lines"]

_COMMA, _QUOTE = ord(","), ord('"')

LEAD = 32
"""Bytes before the first text of a column's buffer (zeros): room for :func:`_place_texts` to copy a
text with the bytes before it (up to 32: a float's text has at most 24)."""


def _led(text: bytes) -> np.ndarray:
    """``text`` as bytes after :data:`LEAD` zeros."""
    buffer = np.zeros(LEAD + len(text), dtype=np.uint8)
    buffer[LEAD:] = np.frombuffer(text, dtype=np.uint8)
    return buffer


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
        return cls(_led(b"".join(texts)), LEAD + np.cumsum(lengths) - lengths, lengths)

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
        text = _led(orjson.dumps(flat, option=orjson.OPT_SERIALIZE_NUMPY))
        ends = np.append(np.flatnonzero(text == _COMMA), len(text) - 1)  # after each number: "," or "]"
        starts = np.empty_like(ends)
        starts[0], starts[1:] = LEAD + 1, ends[:-1] + 1
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
            text = _led(orjson.dumps(texts))
        except TypeError:  # not UTF-8
            return cls.of_bytes([json_bytes(text) for text in texts])
        between = np.flatnonzero((text[:-2] == _QUOTE) & (text[1:-1] == _COMMA) & (text[2:] == _QUOTE))
        starts = np.append(LEAD + 1, between + 2)
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
    windows = _Windows(np.frombuffer(text, dtype=np.uint8))
    for lines, pieces in kinds:
        if not len(lines):
            continue
        end = ends[lines]  # where the piece being written ends, from the last piece back
        line_start = end - lengths[lines]
        for piece in reversed(pieces):
            if isinstance(piece, Texts):
                _place_texts(windows, end, line_start, piece)
                end -= piece.lengths
            elif piece:
                end -= len(piece)
                windows.of(len(piece))[end] = np.frombuffer(piece, dtype=np.dtype((np.void, len(piece))))[0]
    return text


class _Windows:
    """The :func:`_windows` of one buffer, made once per width."""

    def __init__(self, buffer: np.ndarray):
        self.buffer, self._of = buffer, {}

    def of(self, width: int) -> np.ndarray:
        view = self._of.get(width)
        if view is None:
            view = self._of[width] = _windows(self.buffer, width)
        return view


def _place_texts(target: _Windows, ends: np.ndarray, line_starts: np.ndarray, texts: Texts) -> None:
    """Copy each text of ``texts`` to end at ``ends[i]`` in its line, which starts at ``line_starts[i]``.

    A line's pieces are written from the last to the first, so the bytes before a text in its line
    are written later: each text is copied with as many bytes before it as make it as long as the
    longest (one assignment for all of them), those bytes to be overwritten by the pieces before it.
    A text too near its line's start for that (or its buffer's: :data:`LEAD`) is copied exactly, the
    texts of each length at once."""
    lengths = texts.lengths
    if not len(lengths):
        return
    width = int(lengths.max())
    if not width:
        return
    source = texts.starts + lengths - width
    roomy = (ends - width >= line_starts) & (source >= 0)
    if roomy.all():
        target.of(width)[ends - width] = _windows(texts.buffer, width)[source]
        return
    target.of(width)[ends[roomy] - width] = _windows(texts.buffer, width)[source[roomy]]
    tight = np.flatnonzero(~roomy)
    for size in np.unique(lengths[tight]).tolist():
        rows = tight[lengths[tight] == size]
        if size:
            target.of(size)[ends[rows] - size] = _windows(texts.buffer, size)[texts.starts[rows]]


def _windows(buffer: np.ndarray, width: int) -> np.ndarray:
    """Every run of ``width`` bytes of ``buffer`` as one element (element ``i`` is bytes i .. i + width − 1):
    a view, writable when ``buffer`` is."""
    return np.ndarray((len(buffer) - width + 1,), dtype=np.dtype((np.void, width)), buffer=buffer, strides=(1,))
