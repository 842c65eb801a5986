"""Integer codes of keys (prefeval.io.codes) against pandas' factorize and a plain scan."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval.io.codes import KeyIndex, factorize, has_repeats
from prefeval.io.fields import text_keys

LARGEST = 2**64 - 1

keys = st.lists(st.integers(0, 12), max_size=40).map(lambda values: np.array(values, dtype=np.uint64))
stretched = st.lists(st.tuples(st.integers(0, 5), st.integers(1, 4)), max_size=12).map(
    lambda pairs: np.repeat(np.array([key for key, _ in pairs], dtype=np.uint64),
                            [count for _, count in pairs]))
"""Keys in stretches (the lines of a query), a key coming back after others now and then."""
hashed = st.lists(st.one_of(st.integers(0, 12).map(str), st.just(LARGEST)), max_size=40).map(
    lambda values: np.array([value if isinstance(value, int) else int(text_keys([value])[0]) for value in values],
                            dtype=np.uint64))
"""Keys as the readers make them (hashes of ids, spread over the 64-bit integers), and the largest."""


def test_factorize_numbers_keys_by_first_appearance():
    codes, first = factorize(np.array([7, 3, 7, 9, 3, 3], dtype=np.uint64))
    assert codes.tolist() == [0, 1, 0, 2, 1, 1]
    assert first.tolist() == [0, 1, 3]
    codes, first = factorize(np.array([7, 7, 3, 3, 7, 9, 9], dtype=np.uint64))
    assert codes.tolist() == [0, 0, 1, 1, 0, 2, 2]
    assert first.tolist() == [0, 2, 5]
    codes, first = factorize(np.array([4, 4, 1, 2, 2], dtype=np.uint64))  # no key comes back
    assert codes.tolist() == [0, 0, 1, 2, 2]
    assert first.tolist() == [0, 2, 3]
    codes, first = factorize(np.empty(0, dtype=np.int64))
    assert codes.tolist() == [] and first.tolist() == []


@settings(max_examples=300, deadline=None)
@given(st.one_of(keys, stretched, hashed))
def test_factorize_agrees_with_pandas(values):
    codes, first = factorize(values)
    expected_codes, expected_uniques = pd.factorize(values)
    np.testing.assert_array_equal(codes, expected_codes)
    np.testing.assert_array_equal(values[first], expected_uniques)
    assert [int(np.flatnonzero(values == values[row])[0]) for row in first.tolist()] == first.tolist()


@settings(max_examples=200, deadline=None)
@given(st.one_of(keys, stretched, hashed))
def test_has_repeats(values):
    assert has_repeats(values) == (len(set(values.tolist())) < len(values))


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.tuples(keys, keys), st.tuples(hashed, hashed)))
def test_key_index_finds_the_first_row_of_each_key(indexed_and_wanted):
    indexed, wanted = indexed_and_wanted
    index = KeyIndex(indexed)
    assert len(index) == len(indexed)
    positions = index.positions(wanted)
    for key, position in zip(wanted.tolist(), positions.tolist()):
        rows = np.flatnonzero(indexed == key)
        assert position == (int(rows[0]) if len(rows) else -1)
    if pd.Index(indexed).is_unique:
        np.testing.assert_array_equal(positions, pd.Index(indexed).get_indexer(wanted))
    rows, found = index.found(wanted)
    assert sorted(zip(rows.tolist(), found.tolist())) == [(row, position) for row, position
                                                         in enumerate(positions.tolist()) if position >= 0]


def test_key_index_of_the_largest_key_and_of_crowded_keys():
    spread = text_keys(["a", "b", "c"])
    assert KeyIndex(spread).positions(np.array([LARGEST, spread[2]], dtype=np.uint64)).tolist() == [-1, 2]
    with_largest = np.append(spread, np.uint64(LARGEST))
    assert KeyIndex(with_largest).positions(np.array([LARGEST, spread[0]], dtype=np.uint64)).tolist() == [3, 0]
    # keys that are not hashes share their top bits: more than a bucket takes, found by bisection
    crowded = np.arange(0, 600, 3, dtype=np.uint64)[::-1]
    positions = KeyIndex(crowded).positions(np.array([597, 0, 1, 300, LARGEST], dtype=np.uint64))
    assert positions.tolist() == [0, 199, -1, 99, -1]


@pytest.mark.parametrize("hashes", [True, False])
def test_key_index_looks_for_many_keys_a_slice_at_a_time(hashes):
    """More keys than a slice (codes._SLICE): every slice's rows are counted from the whole array's
    start, found and positions agree with pandas, hashed keys and crowded ones alike."""
    from prefeval.io import codes

    rng = np.random.default_rng(3)
    indexed = text_keys([f"i{n}" for n in range(5000)]) if hashes else np.arange(0, 15000, 3, dtype=np.uint64)
    wanted = np.concatenate([indexed[rng.integers(0, len(indexed), 2 * codes._SLICE + 17)],
                             np.arange(1, 3001, 3, dtype=np.uint64) * np.uint64(7919)])
    rng.shuffle(wanted)
    expected = pd.Index(indexed).get_indexer(wanted)
    index = KeyIndex(indexed)
    np.testing.assert_array_equal(index.positions(wanted), expected)
    rows, found = index.found(wanted)
    order = np.argsort(rows)
    np.testing.assert_array_equal(rows[order], np.flatnonzero(expected >= 0))
    np.testing.assert_array_equal(found[order], expected[rows[order]])


def test_key_index_of_signed_keys_finds_negative_ones():
    index = KeyIndex(np.array([5, -1, 2], dtype=np.int64))
    assert index.positions(np.array([-1, 2, 3, 5])).tolist() == [1, 2, -1, 0]
    assert KeyIndex(np.empty(0, dtype=np.int64)).positions(np.array([1])).tolist() == [-1]
    assert KeyIndex(np.empty(0, dtype=np.uint64)).positions(np.array([1], dtype=np.uint64)).tolist() == [-1]
