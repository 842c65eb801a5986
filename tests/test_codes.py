"""Integer codes of keys (prefeval.io.codes) against pandas' factorize and Index.get_indexer."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval.io.codes import KeyIndex, factorize

keys = st.lists(st.integers(0, 12), max_size=40).map(lambda values: np.array(values, dtype=np.uint64))


def test_factorize_numbers_keys_by_first_appearance():
    codes, first = factorize(np.array([7, 3, 7, 9, 3, 3], dtype=np.uint64))
    assert codes.tolist() == [0, 1, 0, 2, 1, 1]
    assert first.tolist() == [0, 1, 3]
    codes, first = factorize(np.empty(0, dtype=np.int64))
    assert codes.tolist() == [] and first.tolist() == []


@settings(max_examples=300, deadline=None)
@given(keys)
def test_factorize_agrees_with_pandas(values):
    codes, first = factorize(values)
    expected_codes, expected_uniques = pd.factorize(values)
    np.testing.assert_array_equal(codes, expected_codes)
    np.testing.assert_array_equal(values[first], expected_uniques)
    assert [int(np.flatnonzero(values == values[row])[0]) for row in first.tolist()] == first.tolist()


@settings(max_examples=300, deadline=None)
@given(keys, keys)
def test_key_index_agrees_with_pandas(indexed, wanted):
    index = KeyIndex(indexed)
    assert len(index) == len(indexed)
    assert index.is_unique == pd.Index(indexed).is_unique
    positions = index.positions(wanted)
    for key, position in zip(wanted.tolist(), positions.tolist()):
        rows = np.flatnonzero(indexed == key)
        assert position == (int(rows[0]) if len(rows) else -1)
    if index.is_unique:
        np.testing.assert_array_equal(positions, pd.Index(indexed).get_indexer(wanted))


def test_key_index_of_signed_keys_finds_negative_ones():
    index = KeyIndex(np.array([5, -1, 2], dtype=np.int64))
    assert index.positions(np.array([-1, 2, 3, 5])).tolist() == [1, 2, -1, 0]
    assert KeyIndex(np.empty(0, dtype=np.int64)).positions(np.array([1])).tolist() == [-1]
