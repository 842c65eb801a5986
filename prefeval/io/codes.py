"""Integer codes for arrays of integer keys (the 64-bit keys of ids and of (query, docid) pairs,
:mod:`prefeval.io.fields`), with numpy alone.

* :func:`factorize` numbers the distinct keys 0, 1, ... in order of first appearance, as pandas'
  ``factorize`` does, and says where each first appears;
* :class:`KeyIndex` finds keys among a set of keys, as pandas' ``Index.get_indexer`` does, and
  :func:`sorted_positions` among keys already sorted (the streamed query index).

Both sort (O(n log n)) where pandas hashes (O(n)). Sorting 64-bit integers is fast enough that the
difference does not show next to reading the lines the keys come from, and it spares every
evaluation the import of pandas (a quarter of a second, more than evaluating one run takes).
"""

from __future__ import annotations

import numpy as np


def factorize(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, first): ``codes[i]`` numbers the key of row i among the distinct keys, in order of
    their first appearance; ``first[c]`` is the row where the key numbered c first appears, so that
    the distinct keys are ``keys[first]``, and ``keys[first][codes]`` is ``keys``."""
    if not len(keys):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    heads = np.concatenate(([True], ordered[1:] != ordered[:-1]))
    first_in_sorted_order = order[heads]  # the sort is stable: a key's first row comes first
    by_appearance = np.argsort(first_in_sorted_order, kind="stable")
    code_of_group = np.empty(len(by_appearance), dtype=np.int64)
    code_of_group[by_appearance] = np.arange(len(by_appearance))
    codes = np.empty(len(keys), dtype=np.int64)
    codes[order] = code_of_group[np.cumsum(heads) - 1]
    return codes, first_in_sorted_order[by_appearance]


class KeyIndex:
    """A set of keys, to find other keys in: :meth:`positions` gives, for each key looked for, its
    position in the keys the index was built from (the first, when a key occurs more than once), or
    -1 where it is not there."""

    __slots__ = ("_order", "_sorted")

    def __init__(self, keys: np.ndarray):
        self._order = np.argsort(keys, kind="stable")
        self._sorted = keys[self._order]

    def __len__(self) -> int:
        return len(self._sorted)

    @property
    def is_unique(self) -> bool:
        """Whether no key occurs twice."""
        return not (self._sorted[1:] == self._sorted[:-1]).any()

    def positions(self, wanted: np.ndarray) -> np.ndarray:
        """For each key of ``wanted``, its position among the index's keys, or -1 (int64)."""
        at = sorted_positions(self._sorted, wanted)
        found = at >= 0
        at[found] = self._order[at[found]]
        return at


def sorted_positions(sorted_keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each key of ``wanted``, the position of its first occurrence in the ascending
    ``sorted_keys``, or -1 where it does not occur (int64)."""
    wanted = np.asarray(wanted, dtype=sorted_keys.dtype)
    if not len(sorted_keys):
        return np.full(len(wanted), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(sorted_keys, wanted), len(sorted_keys) - 1)
    return np.where(sorted_keys[at] == wanted, at, -1)
