"""Text fields kept as 64-bit keys of their bytes, and a splitter for run and qrels files of the
common shape.

Matching a run's documents to the qrels needs only to know which fields are equal, and ranking
needs a document's text only when two documents of a query tie on score. So a run's query ids and
docids (and the qrels') are kept as a :class:`TextColumn`: per row a 64-bit key of the field's bytes
(:func:`byte_keys`), and the text itself on demand, read from the file's bytes. Making one Python
string per field, then hashing it, is what reading a large run used to spend most of its time on.

Keys are equal for equal bytes. Two different fields share a key with probability 2⁻⁶⁴ per pair:
about n² / 2⁶⁵ for n distinct ids, 3·10⁻⁸ for a million. Keys are the same in every process and on
every machine (little-endian words, fixed constants), so that chunks read apart agree.

:func:`split_fields` reads, with numpy and no Python object per line, a file whose every line has
one separator (a space or a tab, the same all through) between non-empty fields, the same number of
fields on every line (as many as its :class:`FieldLayout` allows: 5 or more in a run, 4 in qrels),
no blank or comment line, no control byte, and numbers written as plain decimals (``-12.5``, and
``0,75`` in a run's scores). Any other text returns None, and the reader takes the general
path (:mod:`prefeval.io.trec`), which reads every layout trec_eval reads and names a malformed line.
Both paths give the same rows, keys and numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from prefeval.io.numbers import NUMBER, NUMBER_WITH_COMMA

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_WORD = 8
_PIECE_BYTES = 1 << 20
""":func:`split_fields` works through a file in pieces of about this size, to bound its temporary
arrays: a piece's temporaries take a few times its size, and memory freed by one piece is reused by
the next, where memory touched for the first time costs a page fault per 4 KiB (evaluating one
robust03 run, 7.7 MB with its qrels: 20,800 page faults and a peak of 95 MB in the whole process in
pieces of 4 MiB, 15,100 and 71 MB in pieces of 1 MiB; smaller pieces add more in numpy calls than
they save)."""
_PLAIN_DIGITS = 15
"""Below 10¹⁵ a decimal's digits are an exact float64, so one division by an exact power of ten
rounds it correctly (Clinger's fast path), as ``strtod`` does."""
_POWERS_OF_TEN = 10.0 ** np.arange(23)
_WIDEST_NUMBER = 24
"""Score fields longer than this many bytes are read one by one (:func:`_decimals`)."""


def byte_keys(buffer: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The 64-bit key of each field ``buffer[start:start + length]`` (``buffer``: uint8, with at
    least 8 bytes after the last field, which may be anything).

    h₀ = length · φ (φ = 0x9E3779B97F4A7C15); for each 8-byte word w of the field, read
    little-endian and zero-padded past the field's end: x = (h ⊕ w) · φ, h = x ⊕ (x >> 29); the key
    is h after the finaliser of SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
    number generators", OOPSLA 2014). Arithmetic is modulo 2⁶⁴. Fields shorter than 8 bytes cost
    one word; the loop runs over words, not over rows (every row has a first word; the later words
    are those of the rows long enough).
    """
    keys = lengths.astype(np.uint64) * _GOLDEN
    if len(starts) == 0:
        return keys
    # the 8 bytes from every position, as one little-endian word (an unaligned view, nothing copied)
    words_at = np.ndarray(shape=(len(buffer) - _WORD + 1,), dtype="<u8", buffer=buffer, strides=(1,))
    for offset in range(0, int(lengths.max()), _WORD):
        rows = slice(None) if offset == 0 else np.flatnonzero(lengths > offset)
        left = lengths[rows] - offset
        words = words_at[starts[rows] + offset]
        if int(left.min()) < _WORD:
            words &= _LOW_BYTES[np.minimum(left, _WORD)]
        mixed = (keys[rows] ^ words) * _GOLDEN
        keys[rows] = mixed ^ (mixed >> np.uint64(29))
    return _finalised(keys)


_LOW_BYTES = np.array([(1 << (8 * size)) - 1 for size in range(_WORD + 1)], dtype=np.uint64)
"""The mask of the first ``size`` bytes of a little-endian word."""


def _finalised(keys: np.ndarray) -> np.ndarray:
    keys ^= keys >> np.uint64(30)
    keys *= _MIX_1
    keys ^= keys >> np.uint64(27)
    keys *= _MIX_2
    keys ^= keys >> np.uint64(31)
    return keys


def pair_keys(numbers: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """A 64-bit key of each pair (number, key): the key ⊕ SplitMix64's finaliser of (number + 1) · φ
    (a bijection of the number). Two different pairs share a key with probability 2⁻⁶⁴, as two ids
    do; a document is matched to a query's judgment, or found twice in a query, by one sort of
    these keys instead of numbering the docids first."""
    return keys ^ _finalised((np.asarray(numbers).astype(np.uint64) + np.uint64(1)) * _GOLDEN)


def text_keys(texts: Sequence[str]) -> np.ndarray:
    """:func:`byte_keys` of texts, encoded as the readers decoded them (UTF-8, surrogate escapes
    standing for bytes that are not UTF-8): a text's key is the key of its field in the file."""
    encoded = [text.encode("utf-8", "surrogateescape") for text in texts]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    starts = np.concatenate(([0], np.cumsum(lengths[:-1]))).astype(np.int64) if len(encoded) else lengths
    return byte_keys(np.frombuffer(b"".join(encoded) + bytes(_WORD), np.uint8), starts, lengths)


class TextColumn:
    """A column of text fields: :attr:`keys` (:func:`byte_keys`, uint64), and the texts on demand
    (:meth:`texts`), read from the bytes they came from or kept as given.

    Indexing (a boolean mask, an array of rows, a slice) gives the column of those rows; the bytes
    are shared, not copied. Indexing by one row gives that row's text, as an array gives an element."""

    __slots__ = ("keys", "_data", "_starts", "_lengths", "_texts")

    def __init__(self, keys: np.ndarray, data: bytes | None = None, starts: np.ndarray | None = None,
                 lengths: np.ndarray | None = None, texts: np.ndarray | None = None):
        self.keys = keys
        self._data, self._starts, self._lengths, self._texts = data, starts, lengths, texts

    @classmethod
    def of_texts(cls, texts) -> TextColumn:
        """The column of an array of texts (str)."""
        texts = np.asarray(texts, dtype=object)
        return cls(text_keys(texts.tolist()), texts=texts)

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, rows) -> TextColumn | str:
        if isinstance(rows, (int, np.integer)):
            return self.texts([rows])[0]
        if self._texts is not None:
            return TextColumn(self.keys[rows], texts=self._texts[rows])
        return TextColumn(self.keys[rows], self._data, self._starts[rows], self._lengths[rows])

    def texts(self, rows=None) -> np.ndarray:
        """The texts of ``rows`` (all rows when None), as an object array of str."""
        if self._texts is not None:
            return self._texts if rows is None else self._texts[rows]
        starts = self._starts if rows is None else self._starts[rows]
        ends = starts + (self._lengths if rows is None else self._lengths[rows])
        data = self._data
        found = [data[start:end].decode("utf-8", "surrogateescape")
                 for start, end in zip(starts.tolist(), ends.tolist())]
        return np.array(found, dtype=object) if found else np.empty(0, dtype=object)

    def byte_strings(self, rows) -> np.ndarray:
        """The bytes of ``rows`` as numpy byte strings, which compare and sort as C's ``strcmp``
        compares the fields (trec_eval's order of docids; fields hold no NUL byte, which numpy
        would take for padding)."""
        if self._texts is not None:
            return encoded(self._texts[rows])
        starts, lengths = self._starts[rows], self._lengths[rows]
        width = int(lengths.max(initial=1))
        columns = np.arange(width)
        at = np.minimum(starts[:, None] + columns, len(self._data) - 1)
        matrix = np.frombuffer(self._data, np.uint8)[at]
        matrix[columns >= lengths[:, None]] = 0
        return matrix.view(f"S{width}").ravel()

    def tolist(self) -> list[str]:
        """Every text, as a list."""
        return self.texts().tolist()

    @staticmethod
    def joined(columns: Sequence[TextColumn]) -> TextColumn:
        """The rows of ``columns`` one after the other. Only the bytes their rows span are copied,
        so that rows kept waiting (a streamed chunk's) hold no more than their own bytes."""
        if len(columns) == 1:
            return columns[0]
        keys = np.concatenate([column.keys for column in columns])
        if any(column._texts is not None for column in columns):
            return TextColumn(keys, texts=np.concatenate([column.texts() for column in columns]))
        parts: list[bytes] = []
        starts: list[np.ndarray] = []
        size = 0
        for column in columns:
            if not len(column):
                continue
            low, high = int(column._starts.min()), int((column._starts + column._lengths).max())
            parts.append(column._data[low:high])
            starts.append(column._starts + (size - low))
            size += high - low
        if not parts:
            return TextColumn.of_texts([])
        return TextColumn(keys, b"".join(parts), np.concatenate(starts),
                          np.concatenate([column._lengths for column in columns]))


def encoded(texts) -> np.ndarray:
    """Texts (as the readers decode them: UTF-8, surrogate escapes for other bytes) as numpy byte
    strings of their bytes, which compare and sort as ``strcmp`` compares the fields: code points
    would not, once a text holds a surrogate escape (U+DC80..U+DCFF sort after most characters,
    their bytes 0x80..0xFF before the lead bytes of most)."""
    found = [text.encode("utf-8", "surrogateescape") for text in np.asarray(texts, dtype=object).tolist()]
    return np.array(found, dtype=np.bytes_) if found else np.empty(0, dtype="S1")


def by_stretch(values: np.ndarray, look_up) -> np.ndarray:
    """``look_up`` (an array of values to an array of answers) asked once per stretch of equal
    consecutive ``values`` (the lines of a query), its answers repeated over each stretch."""
    heads = stretch_starts(values)
    return np.repeat(look_up(values[heads]), np.diff(np.append(heads, len(values))))


def stretch_starts(values: np.ndarray) -> np.ndarray:
    """The rows where a stretch of equal consecutive values starts (row 0 first, when there are rows)."""
    if not len(values):
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))


def first_of_each(column: TextColumn) -> np.ndarray:
    """The distinct texts of ``column`` (by key), in the order they first appear."""
    _, first = np.unique(column.keys, return_index=True)
    return column.texts(np.sort(first))


class FieldLayout(NamedTuple):
    """Where :func:`split_fields` finds what it reads: the text fields ``texts`` (their 0-based
    numbers: the query id's and the docid's, then any other, such as a qrels' iter column), the
    number field ``number`` (None: none, as in the side inputs' tables of texts), how many fields a
    line has (from ``min_fields`` to ``max_fields``, None: no limit), and whether a decimal comma
    may stand for the point."""

    texts: tuple[int, ...]
    number: int | None
    min_fields: int
    max_fields: int | None
    decimal_comma: bool


def split_fields(data: bytes, layout: FieldLayout) -> tuple[TextColumn | np.ndarray, ...] | None:
    """(query ids, docids, numbers) of the text ``data`` when it has the common shape of the module
    docstring and the fields of ``layout`` (a column of each text field of the layout, in its order,
    then the numbers: (query ids, docids, iters, numbers); the numbers None when the layout has no
    number field); None otherwise (nothing is wrong then: the general reader decides). Lines of one
    field need no separator."""
    if not data or data[:1] <= b" ":
        return None
    has_space, has_tab = b" " in data, b"\t" in data
    if has_space and has_tab:
        return None
    separator = 32 if has_space else 9
    columns: list[_FieldColumn] = []
    numbers = None
    fields, row, start = None, 0, 0
    while start < len(data):
        stop = data.find(b"\n", min(start + _PIECE_BYTES, len(data)) - 1)
        stop = len(data) if stop < 0 else stop + 1
        piece = _split_piece(data, start, stop, separator, layout)
        if piece is None or fields not in (None, piece[0]):
            return None  # not the common shape, or the number of fields changes between pieces
        if fields is None:  # the first piece has the common shape: the columns of every line
            lines = data.count(b"\n") + (not data.endswith(b"\n"))
            columns = [_FieldColumn(lines) for _ in layout.texts]
            numbers = None if layout.number is None else _swept(lines, np.float64)
        fields = piece[0]
        for column, part in zip(columns, piece[1:-1]):
            column.add(part)
        if numbers is not None:
            numbers[row:row + len(piece[-1])] = piece[-1]
            row += len(piece[-1])
        start = stop
    return (*(column.of(data) for column in columns), numbers)


def _swept(size: int, dtype) -> np.ndarray:
    """An array of ``size`` to be written piece by piece, its memory first written once, in one sweep
    (zeros): the system then maps its pages in order, where pages first written a piece's rows at a
    time, among the pieces' own work, cost more system time (reading a run of ten million lines: 0.2 s
    more, on a machine whose pages are huge pages, 2 MiB each, mapped on first write)."""
    array = np.empty(size, dtype=dtype)
    array.fill(0)
    return array


class TextRows:
    """The keys, starts and lengths of ``size`` texts of one buffer, written a range of rows at a time
    into arrays made once (:func:`_swept`), as a reader that knows its rows ahead meets them: no copy
    of them all at the end, where keeping each piece's to join them touched every row's three arrays
    twice (memory touched for the first time: 480 MB more for the two id fields of a run of ten
    million lines)."""

    def __init__(self, size: int):
        self.arrays = (_swept(size, np.uint64), _swept(size, np.int64), _swept(size, np.int64))
        self.filled = 0

    def __len__(self) -> int:
        return len(self.arrays[0])

    def add(self, values, count: int, indices: np.ndarray | None = None, shift: int = 0) -> None:
        """The next ``count`` rows: ``values``, (keys, starts, lengths), arrays or one of each for every
        row; the rows ``indices`` of those arrays when given (a dictionary's entries); the starts moved
        by ``shift``."""
        first, stop = self.filled, self.filled + count
        for target, value in zip(self.arrays, values):
            if indices is None:
                target[first:stop] = value
            else:
                np.take(value, indices, out=target[first:stop], mode="clip")  # not buffered, as "raise" is
        if shift:
            self.arrays[1][first:stop] += shift
        self.filled = stop

    def column(self, data: bytes) -> TextColumn:
        """The texts of ``data`` written, once every row has been."""
        if self.filled != len(self):
            raise ValueError(f"{self.filled} rows added where {len(self)} were announced")
        keys, starts, lengths = self.arrays
        return TextColumn(keys, data, starts, lengths)


class _FieldColumn:
    """A text field's column, its pieces' parts written at their rows (``rows`` in all) as they come
    (:class:`TextRows`): the pieces' own arrays are then temporaries that the next piece's reuse.
    While every piece so far holds the same bytes on every line (:class:`_Same`), only that is kept:
    a column of them all needs no array per line."""

    def __init__(self, rows: int):
        self.rows, self.count = rows, 0
        self.same: tuple | None = None
        self.written: TextRows | None = None

    def add(self, part: _Same | tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """The next piece's part: a :class:`_Same`, or its (keys, starts, lengths)."""
        same = part[:3] if isinstance(part, _Same) else None
        count = part.count if same is not None else len(part[0])
        if self.written is None and same is not None and self.same in (None, same):
            self.same = same
        else:
            if self.written is None:
                self.written = TextRows(self.rows)
                if self.count:  # the rows before, the same bytes on each
                    self.written.add(self.same, self.count)
            self.written.add(same if same is not None else part, count)
        self.count += count

    def of(self, data: bytes) -> TextColumn:
        """The column of the texts of ``data`` added."""
        if self.written is not None:
            return self.written.column(data)
        key, first, length = self.same  # the same bytes on every line
        return TextColumn(np.full(self.count, key), data, np.broadcast_to(np.int64(first), (self.count,)),
                          np.broadcast_to(np.int64(length), (self.count,)))


class _Same(NamedTuple):
    """A text field of the same bytes on every line of a piece: its key, where the first is in the
    file, its length, and the number of lines."""

    key: np.uint64
    start: int
    length: int
    count: int


def _split_piece(data: bytes, start: int, stop: int, separator: int, layout: FieldLayout):
    """:func:`split_fields` on the lines of ``data[start:stop]`` (whole lines); positions are in ``data``.

    The bytes up to 32 (whitespace and control bytes) are found in one pass; the piece has the common
    shape when they are all separators and line ends, no two adjacent (no empty field, blank line or
    line that starts or ends with a separator), and read line by line as F − 1 separators then a line
    end, F fields to a line: F + 1 of them a line would put a line end among the separators, F − 1
    a separator at a line's end."""
    missing_end = b"" if data.endswith(b"\n", start, stop) else b"\n"
    text = b"".join((memoryview(data)[start:stop], missing_end, bytes(_WIDEST_NUMBER)))
    buffer = np.frombuffer(text, np.uint8)
    size = len(text) - _WIDEST_NUMBER
    breaks = np.flatnonzero(buffer[:size] <= 32)
    kinds = buffer[breaks]
    is_end = kinds == 10
    lines = int(np.count_nonzero(is_end))
    if not lines or len(breaks) % lines or np.count_nonzero(kinds == separator) != len(breaks) - lines:
        return None  # whitespace other than one separator, or fields of a different number on some line
    fields = len(breaks) // lines
    if not layout.min_fields <= fields <= (layout.max_fields or fields):
        return None
    grid = breaks.reshape(lines, fields)  # per line: where each field ends (its separator, then the line end)
    ends = is_end.reshape(lines, fields)
    if not ends[:, -1].all() or breaks[0] == 0 or (np.diff(breaks) == 1).any():  # (no other line end: counted)
        return None
    line_starts = np.concatenate(([0], grid[:-1, -1] + 1))
    if b"#" in text and (buffer[line_starts] == ord("#")).any():
        return None  # a comment line

    def bounds(field: int) -> tuple[np.ndarray, np.ndarray]:
        first = line_starts if field == 0 else grid[:, field - 1] + 1
        return first, grid[:, field] - first

    numbers = None
    if layout.number is not None:
        numbers = _decimals(buffer, text, *bounds(layout.number), decimal_comma=layout.decimal_comma)
        if numbers is None:
            return None
    columns = []
    for place, field in enumerate(layout.texts):  # per text field: (its keys, starts in ``data``, lengths)
        same = _same_field(buffer, grid, field, start) if place >= 2 and field > 0 else None
        if same is None:
            starts, lengths = bounds(field)
            same = (byte_keys(buffer, starts, lengths), starts + start, lengths)
        columns.append(same)
    return (fields, *columns, numbers)


def _same_field(buffer: np.ndarray, grid: np.ndarray, field: int, offset: int) -> _Same | None:
    """Field ``field`` (not the first) as :class:`_Same` when it is one byte, the same on every line
    (a qrels' iter column, ``0`` on every line), so that no key is computed per line; None otherwise.
    ``grid`` says where each line's fields end (:func:`_split_piece`)."""
    first = grid[0, field - 1] + 1
    if grid[0, field] - first != 1 or ((grid[:, field] - grid[:, field - 1]) != 2).any():
        return None
    if (buffer[grid[:, field - 1] + 1] != buffer[first]).any():
        return None
    return _Same(byte_keys(buffer, np.array([first]), np.array([1]))[0], int(first) + offset, 1, len(grid))


def _decimals(buffer: np.ndarray, text: bytes, starts: np.ndarray, lengths: np.ndarray,
              decimal_comma: bool = True) -> np.ndarray | None:
    """The numbers of the fields, each rounded as ``strtod`` rounds it; None when a field is not a
    number.

    A decimal (a sign, digits, one point, or one comma where ``decimal_comma``) is read in numpy, a
    column of characters at a time over all the fields, into its digits m (Horner's rule over its
    digit characters) and the count f of those after the point (the characters after the point,
    every one a digit in a decimal), and is m / 10ᶠ:

    * up to :data:`_PLAIN_DIGITS` digits, m and 10ᶠ are exact doubles and one division rounds
      correctly (Clinger's fast path);
    * up to 19 digits, m and 10ᶠ (f <= 19: the digits after the point are among them) are exact
      in x87 extended precision (64-bit significands), where the division rounds once; rounding
      that to a double rounds correctly unless it lies within one extended unit of halfway between
      two doubles, which those rows (about one in 700) and machines without that precision take
      to numpy's own parser;
    * any other field (exponents, ``nan``, ``inf``, more digits) is matched against
      :data:`~prefeval.io.numbers.NUMBER_WITH_COMMA` and read by ``float``, one by one.
    """
    width = int(min(lengths.max(initial=0), _WIDEST_NUMBER))
    matrix = as_strided(buffer, shape=(len(buffer) - width + 1, width), strides=(1, 1))[starts]
    columns = np.ascontiguousarray(matrix.T)  # a character column of every field, contiguous
    inside = np.arange(width)[:, None] < lengths
    digit = columns - np.uint8(48)
    is_digit = (digit < 10) & inside
    is_point = columns == 46
    if decimal_comma:
        is_point |= columns == 44
    is_point &= inside
    other = inside & ~(is_digit | is_point)
    if width:
        other[0] &= (columns[0] != 45) & (columns[0] != 43)  # a sign may open a number
    digits = np.count_nonzero(is_digit, axis=0)
    points = np.count_nonzero(is_point, axis=0)
    decimal = ~other.any(axis=0) & (points <= 1) & (digits >= 1) & (lengths <= width)
    point_at = (is_point * np.arange(width, dtype=np.uint8)[:, None]).max(axis=0, initial=0)  # of one point
    fraction = np.where(points == 1, lengths - 1 - point_at, 0)
    mantissa = np.zeros(len(starts), dtype=np.uint64)
    for column in range(width):  # m = 10 m + d over the digit characters (modulo 2⁶⁴: beyond 19 digits, unused)
        np.copyto(mantissa, mantissa * np.uint64(10) + digit[column], where=is_digit[column])
    negative = columns[0] == 45 if width else np.zeros(len(starts), dtype=bool)
    plain = decimal & (digits <= _PLAIN_DIGITS)
    numbers = mantissa.astype(np.float64) / _POWERS_OF_TEN[np.where(plain, fraction, 0)]
    long = np.flatnonzero(decimal & ~plain & (digits <= 19))
    if len(long):
        numbers[long], unsure = _long_decimals(mantissa[long], fraction[long])
        if len(unsure):
            rows = long[unsure]
            fields = np.where(np.arange(width) < lengths[rows, None], matrix[rows], 0)
            fields[fields == 44] = 46
            numbers[rows] = np.ascontiguousarray(fields).view(f"S{width}").ravel().astype(np.float64)
            numbers[rows] = np.abs(numbers[rows])
    numbers = np.where(negative, -numbers, numbers)
    for row in np.flatnonzero(~decimal | (digits > 19)).tolist():
        field = text[int(starts[row]):int(starts[row] + lengths[row])]
        if (NUMBER_WITH_COMMA if decimal_comma else NUMBER).fullmatch(field) is None:
            return None
        numbers[row] = float(field.replace(b",", b"."))
    return numbers


_EXTENDED = np.finfo(np.longdouble).nmant >= 63
"""Whether this machine's long double has (at least) x87 extended precision."""
_EXTENDED_POWERS_OF_TEN = (np.cumprod(np.concatenate(([1], np.full(19, 10))).astype(np.longdouble))
                           if _EXTENDED else None)
"""10⁰ .. 10¹⁹, each product exact in extended precision (5¹⁹ < 2⁶⁴)."""
_TWO_TO_64 = np.longdouble(2) ** 64


def _long_decimals(mantissa: np.ndarray, fraction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """m / 10ᶠ for m < 10¹⁹ (:func:`_decimals`), and the rows it may have rounded wrongly."""
    if not _EXTENDED or (fraction >= len(_EXTENDED_POWERS_OF_TEN)).any():
        return np.zeros(len(mantissa)), np.arange(len(mantissa))
    quotient = mantissa.astype(np.longdouble) / _EXTENDED_POWERS_OF_TEN[fraction]
    # the significand in [1/2, 1), times 2⁶⁴: x87's 64-bit significand as an integer (a wider long
    # double's leading 64 bits, whose halfway test is then only more cautious than needed)
    significand, _ = np.frexp(quotient)
    below_double = (significand * _TWO_TO_64).astype(np.uint64) & np.uint64(2047)  # the 11 bits a double drops
    unsure = np.flatnonzero((below_double >= 1023) & (below_double <= 1025))  # halfway is 1024
    return quotient.astype(np.float64), unsure
