"""Integer codes for arrays of integer keys (the 64-bit keys of ids and of (query, docid) pairs,
:mod:`prefeval.io.fields`), with numpy alone.

* :func:`factorize` numbers the distinct keys 0, 1, ... in order of first appearance, as pandas'
  ``factorize`` does, and says where each first appears;
* :func:`has_repeats` says whether a key occurs twice, and :func:`distinct` gives the distinct values;
* :class:`KeyIndex` finds keys among a set of keys, as pandas' ``Index.get_indexer`` does, and
  :func:`sorted_positions` among keys already sorted (the streamed query index).

They sort where pandas hashes, which spares every evaluation the import of pandas (a quarter of a
second, more than evaluating one run takes). What a sort costs is its order (``argsort``), a stable
one above all: three to six times what sorting the keys alone costs (``np.sort``). The input mostly
spares it: ids come in stretches (the lines of a query), and a key rarely comes back (a document
judged twice, a document twice in a query), which one ``np.sort`` tells.
"""

from __future__ import annotations

import numpy as np

from prefeval.io.fields import stretch_starts


def distinct(values) -> np.ndarray:
    """The distinct values of ``values``, sorted: ``np.unique(values)``, whose plain form imports
    ``numpy.ma`` (numpy 2.3 and later look for a masked array there: 10 ms, a tenth of the start-up of
    evaluating one run) where the form that counts does not."""
    return np.unique(values, return_counts=True)[0]


def factorize(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, first): ``codes[i]`` numbers the key of row i among the distinct keys, in order of
    their first appearance; ``first[c]`` is the row where the key numbered c first appears, so that
    the distinct keys are ``keys[first]``, and ``keys[first][codes]`` is ``keys``.

    A key first appears at the head of a stretch of equal consecutive keys (the lines of a query), so
    only the heads are numbered, and their codes repeated over their stretches. When no key heads two
    stretches (each query's lines together, as in most files) the heads are numbered 0, 1, ... as they
    come; otherwise by sorting them (:func:`_factorize_by_sorting`)."""
    heads = stretch_starts(keys)
    head_keys = keys[heads]
    if has_repeats(head_keys):
        codes, first = _factorize_by_sorting(head_keys)
    else:
        codes = first = np.arange(len(heads))
    return np.repeat(codes, np.diff(np.append(heads, len(keys)))), heads[first]


def _factorize_by_sorting(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`factorize` of any keys (one at least): sorted, the rows of a key are together, its first
    row the least of them (so the sort need not be stable); the keys are then numbered by that row."""
    order = np.argsort(keys)
    ordered = keys[order]
    group_starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    first_rows = np.minimum.reduceat(order, group_starts)
    by_appearance = np.argsort(first_rows)
    code_of_group = np.empty(len(by_appearance), dtype=np.int64)
    code_of_group[by_appearance] = np.arange(len(by_appearance))
    codes = np.empty(len(keys), dtype=np.int64)
    codes[order] = np.repeat(code_of_group, np.diff(np.append(group_starts, len(keys))))
    return codes, first_rows[by_appearance]


def has_repeats(keys: np.ndarray) -> bool:
    """Whether a key occurs more than once (one ``np.sort`` of the keys)."""
    ordered = np.sort(keys)
    return bool((ordered[1:] == ordered[:-1]).any())


_SLICE = 1 << 16
"""A :class:`KeyIndex` looks for keys this many at a time (64 Ki: the search's temporary arrays, a
dozen of 512 KiB, stay in a core's cache and are reused from one slice to the next, where those of
ten million keys, 80 MB each, are memory touched for the first time, a page fault per 4 KiB). Ten
million keys among 100,000, in a fresh process: 0.16 to 0.19 s in slices of 16 Ki to 256 Ki, 0.38 to
1.1 s at once; among 2,000,000: 0.39 s against 1.0 s."""
_WIDEST_BUCKET = 64
"""A :class:`KeyIndex` whose keys put more than this many in one bucket uses ``np.searchsorted``."""
_SENTINEL = np.uint64(2**64 - 1)


class KeyIndex:
    """A set of keys, to find other keys in: :meth:`found` gives the keys looked for that are there
    and their positions in the keys the index was built from (the first, when a key occurs more than
    once); :meth:`positions` the position of every key looked for, -1 where it is not there.

    The keys are sorted once. Keys of ids are hashes (:mod:`prefeval.io.fields`), spread evenly over
    the 64-bit integers, so their top b bits cut the sorted keys into *buckets*, 2ᵇ of them for n
    keys (2ᵇ⁻¹ < n <= 2ᵇ): ``start[v]`` is the first sorted key whose top bits are v (or the next
    bucket's first, where there is none). A key looked for is compared with the keys of its bucket
    alone, from the start, until one is not below it: it is there if that one is it. A bucket holds
    less than one key on average and a handful at most, so finding m keys costs a few passes over
    them, where ``np.searchsorted`` takes log₂ n dependent steps for each, each step a likely cache
    miss: twice to eight times as long (100,000 keys among 11,000; 2,000,000 among 400,000). Keys
    that are not spread so (not uint64, or more than :data:`_WIDEST_BUCKET` in a bucket: small
    integers, keys made to collide) are found by ``np.searchsorted`` instead. Either way the keys are
    looked for :data:`_SLICE` at a time."""

    __slots__ = ("_order", "_sorted", "_padded", "_shift", "_start")

    def __init__(self, keys: np.ndarray):
        order = np.argsort(keys)
        ordered = keys[order]
        if (ordered[1:] == ordered[:-1]).any():  # a repeated key: its first row must come first
            order = np.argsort(keys, kind="stable")
            ordered = keys[order]
        self._order, self._sorted, self._start = order, ordered, None
        if keys.dtype == np.uint64 and len(keys):
            bits = max(len(keys) - 1, 1).bit_length()
            self._shift = np.uint64(64 - bits)
            counts = np.bincount((ordered >> self._shift).view(np.int64), minlength=1 << bits)
            if counts.max() <= _WIDEST_BUCKET:
                self._start = np.concatenate(([0], np.cumsum(counts[:-1])))
                # a walk past the last key stops at the sentinel, which no key is above
                self._padded = np.append(ordered, _SENTINEL)
                self._sorted = self._padded[:-1]

    def __len__(self) -> int:
        return len(self._sorted)

    def found(self, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows, positions): the rows of ``wanted`` whose key the index holds, in no particular
        order, and the position of each one's key among the index's keys (int64 both)."""
        wanted = np.asarray(wanted, dtype=self._sorted.dtype)
        if len(wanted) <= _SLICE:
            return self._found(wanted)
        rows, at = [], []
        for start in range(0, len(wanted), _SLICE):
            slice_rows, slice_at = self._found(wanted[start:start + _SLICE])
            rows.append(slice_rows + start)
            at.append(slice_at)
        return np.concatenate(rows), np.concatenate(at)

    def positions(self, wanted: np.ndarray) -> np.ndarray:
        """For each key of ``wanted``, its position among the index's keys, or -1 (int64)."""
        wanted = np.asarray(wanted, dtype=self._sorted.dtype)
        at = np.empty(len(wanted), dtype=np.int64)
        for start in range(0, len(wanted), _SLICE):
            rows, found = self._found(wanted[start:start + _SLICE])
            part = at[start:start + _SLICE]
            part.fill(-1)  # a slice at a time, as it is found: one pass over the memory, not two
            part[rows] = found
        return at

    def _found(self, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`found` of a slice of keys (of the index's dtype)."""
        if self._start is None:
            at = sorted_positions(self._sorted, wanted)
            rows = np.flatnonzero(at >= 0)
            return rows, self._order[at[rows]]
        candidate = self._start[(wanted >> self._shift).view(np.int64)]
        value = self._padded[candidate]
        rows = [np.flatnonzero(value == wanted)]
        at = [candidate[rows[0]]]
        pending = np.flatnonzero(value < wanted)
        candidate = candidate[pending] + 1
        while len(pending):  # the first equal key of a bucket is the first row of that key
            value, looked_for = self._padded[candidate], wanted[pending]
            hit = value == looked_for
            rows.append(pending[hit])
            at.append(candidate[hit])
            below = value < looked_for
            pending, candidate = pending[below], candidate[below] + 1
        rows, at = np.concatenate(rows), np.concatenate(at)
        inside = at < len(self._sorted)  # not the sentinel (a key equal to it looked for)
        return rows[inside], self._order[at[inside]]


def sorted_positions(sorted_keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each key of ``wanted``, the position of its first occurrence in the ascending
    ``sorted_keys``, or -1 where it does not occur (int64)."""
    wanted = np.asarray(wanted, dtype=sorted_keys.dtype)
    if not len(sorted_keys):
        return np.full(len(wanted), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(sorted_keys, wanted), len(sorted_keys) - 1)
    return np.where(sorted_keys[at] == wanted, at, -1)
