"""Intra-list diversity and category coverage (prefeval.analyses.beyond_accuracy) by hand and by brute
force over pairs, and the item context (prefeval.ranking.items) against the pure functions on
generated data with popularity skew, ties and cold-start users."""

import itertools
import math

import numpy as np
import pytest

from prefeval.analyses.beyond_accuracy import (
    FeatureSets,
    Popularity,
    category_coverage,
    intra_list_diversity,
    list_feature_values,
    per_user_popularity,
)
from prefeval.errors import InputError, UsageError
from prefeval.io.fields import text_keys
from prefeval.io.side import SideTable
from prefeval.ranking.items import LIST_VALUES, ItemContext, ItemRequest, QueryItems, RankCounts
from prefeval.ranking.items import run_items as run_items_of

# 4 items, 3 features: item 0 {a, b}, item 1 {b}, item 2 {c}, item 3 none
FEATURES = FeatureSets.of(np.array([0, 0, 1, 2]), np.array([0, 1, 1, 2]), 4, 3)


def test_ild_and_category_coverage_by_hand():
    # user 0: items 0, 1, 2; user 1: item 3 alone; user 2: no list; user 3: items 0, 3
    users, items = np.array([0, 0, 0, 1, 3, 3]), np.array([0, 1, 2, 3, 0, 3])
    cosine = intra_list_diversity(users, items, FEATURES, 4, "cosine")
    # pairs of user 0: (0,1) 1 - 1/sqrt(2), (0,2) 1, (1,2) 1; item 3 has no features: distance 1
    assert cosine == pytest.approx([(3 - 1 / math.sqrt(2)) / 3, 0, 0, 1])
    jaccard = intra_list_diversity(users, items, FEATURES, 4, "jaccard")
    assert jaccard == pytest.approx([(3 - 1 / 2) / 3, 0, 0, 1])
    assert category_coverage(users, items, FEATURES, 4) == pytest.approx([1, 0, 0, 2 / 3])


def test_unknown_similarity():
    with pytest.raises(ValueError, match="cosine, jaccard"):
        intra_list_diversity(np.array([0]), np.array([0]), FEATURES, 1, "dice")


def brute_ild(user_items, sets, similarity):
    pairs = list(itertools.combinations(user_items, 2))
    if not pairs:
        return 0.0
    total = 0.0
    for i, j in pairs:
        a, b = sets[i], sets[j]
        if similarity == "cosine":
            denominator = math.sqrt(len(a) * len(b))
        else:
            denominator = len(a | b)
        total += 1 - (len(a & b) / denominator if denominator else 0.0)
    return total / len(pairs)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n_features", [6, 130])  # feature sets of one 64-bit word, and of three
def test_ild_and_coverage_brute_force(seed, n_features):
    rng = np.random.default_rng(seed)
    n_items, n_users = 30, 40
    pairs = rng.random((n_items, n_features)) < (0.3 if n_features < 64 else 0.05)
    sets = [set(np.flatnonzero(row).tolist()) for row in pairs]
    item_rows, feature_cols = np.nonzero(pairs)
    features = FeatureSets.of(item_rows, feature_cols, n_items, n_features)
    lists = [rng.choice(n_items, size=rng.integers(0, 8), replace=False) for _ in range(n_users)]
    users = np.concatenate([np.full(len(items), user) for user, items in enumerate(lists)]).astype(np.int64)
    items = np.concatenate(lists).astype(np.int64)
    shuffle = rng.permutation(len(items))  # rows of a run need not be grouped by user
    for similarity in ("cosine", "jaccard"):
        got = intra_list_diversity(users[shuffle], items[shuffle], features, n_users, similarity)
        assert got == pytest.approx([brute_ild(list(items_of), sets, similarity) for items_of in lists])
    covered = [len(set().union(*(sets[i] for i in items_of))) / n_features for items_of in lists]
    assert category_coverage(users, items, features, n_users) == pytest.approx(covered)


@pytest.mark.parametrize("seed", [0, 1])
def test_list_values_are_the_same_bits_however_the_lists_are_cut(seed, monkeypatch):
    """A list's ILD is added pair after pair and its coverage is its own: the same bits whether it is
    computed with the other lists or alone, among lists longer or shorter, in slices or not (the
    engines cut a run's users into chunks and partitions as they read), their distances looked up in
    a table or computed."""
    import prefeval.analyses.beyond_accuracy as beyond_accuracy

    rng = np.random.default_rng(seed)
    n_items, n_features, n_users = 40, 9, 25
    features = FeatureSets.of(rng.integers(0, n_items, 90), rng.integers(0, n_features, 90), n_items, n_features)
    lists = [rng.choice(n_items, size=rng.integers(0, 14), replace=False) for _ in range(n_users)]
    users = np.concatenate([np.full(len(items), user) for user, items in enumerate(lists)]).astype(np.int64)
    items = np.concatenate(lists).astype(np.int64)
    names = ["ild_cosine", "ild_jaccard", "catcov"]
    whole = list_feature_values(users, items, features, n_users, names)
    for user, items_of in enumerate(lists):
        alone = list_feature_values(np.zeros(len(items_of), dtype=np.int64), items_of, features, 1, names)
        for name in names:
            assert alone[name][0].tobytes() == whole[name][user].tobytes(), (name, user)
    for setting, value in (("_SLICE_PAIRS", 50), ("_TABLE_CELLS", 0)):  # slices of a list or two; no table
        with monkeypatch.context() as patched:
            patched.setattr(beyond_accuracy, setting, value)
            again = list_feature_values(users, items, features, n_users, names)
        for name in names:
            assert again[name].tobytes() == whole[name].tobytes(), (setting, name)


@pytest.mark.parametrize("largest", [3, 120])  # the distances looked up in a table, or computed (too many sizes)
def test_ild_of_lists_of_one_length_in_user_order_as_of_the_rows_shuffled(largest):
    """Rows in user order with lists all of one length (a ranked run's) are laid out without a sort,
    and give the same bits as the same lists' rows interleaved; items of 0 to ``largest`` features."""
    import prefeval.analyses.beyond_accuracy as beyond_accuracy

    rng = np.random.default_rng(largest)
    n_items, n_users, n_features = 60, 40, 130
    sizes = rng.integers(0, largest + 1, n_items)
    feature_items = np.repeat(np.arange(n_items), sizes)
    feature_codes = np.concatenate([rng.choice(n_features, size, replace=False) for size in sizes])
    features = FeatureSets.of(feature_items, feature_codes, n_items, n_features)
    assert (beyond_accuracy._DistanceTable.of(features.sizes, ["cosine"]) is None) == (largest > 100)
    users = np.repeat(np.arange(n_users), 6)
    items = np.concatenate([rng.choice(n_items, 6, replace=False) for _ in range(n_users)])
    names = ["ild_cosine", "ild_jaccard", "catcov"]
    in_order = list_feature_values(users, items, features, n_users, names)
    draws = rng.random(len(users))  # the lists interleaved, each list's items in their order
    shuffle = np.argsort(draws[np.lexsort((draws, users))])
    assert (users[shuffle][1:] < users[shuffle][:-1]).any()
    shuffled = list_feature_values(users[shuffle], items[shuffle], features, n_users, names)
    lists = [list(items[users == user]) for user in range(n_users)]
    sets = [set(feature_codes[feature_items == item].tolist()) for item in range(n_items)]
    for similarity in ("cosine", "jaccard"):
        assert in_order[f"ild_{similarity}"] == pytest.approx([brute_ild(held, sets, similarity) for held in lists])
    for name in names:
        assert in_order[name].tobytes() == shuffled[name].tobytes(), name


def joined(run):
    """A run's per-query values, its slices laid end to end (as a table of this run alone holds them)."""
    stacked = QueryItems.stacked([run.queries])
    return QueryItems({key: value[0] for key, value in stacked.values.items()},
                      {k: value[0] for k, value in stacked.providers.items()})


def table(keys, values, source="side.csv"):
    return SideTable.of_texts(keys, values, np.arange(len(keys)) + 2, source)


def generated(seed):
    """Training data with a popularity skew (Zipf) and ties, runs whose lists leave cold-start users
    empty, features and item groups."""
    rng = np.random.default_rng(seed)
    names = np.array([f"i{number}" for number in range(50)], dtype=object)
    train_items = np.minimum(rng.zipf(1.6, 400) - 1, 49)
    train_users = rng.integers(0, 60, 400)
    train = table([f"u{user}" for user in train_users], names[train_items], "train.csv")
    feature_items = rng.integers(0, 50, 120)
    features = table(names[feature_items], [f"g{code}" for code in rng.integers(0, 7, 120)], "features.csv")
    groups = table(names, [f"p{code}" for code in rng.integers(0, 3, 50)], "groups.csv")
    num_users = 30
    lists = [rng.choice(50, size=0 if user % 7 == 0 else 10, replace=False) for user in range(num_users)]
    users = np.concatenate([np.full(len(items), user) for user, items in enumerate(lists)]).astype(np.int64)
    ranks = np.concatenate([np.arange(1, len(items) + 1) for items in lists])
    run_items = names[np.concatenate(lists).astype(np.int64)]
    return names, train, features, groups, users, run_items, ranks, num_users


@pytest.mark.parametrize("seed", [0, 1])
def test_context_agrees_with_the_pure_functions(seed):
    """What every run's ranking computes for the item measures (run_items), block of users by block as
    the streamed engine reads them, against the pure functions on the whole run with codes made
    independently of the context; exposure counts add up to the whole run's, exactly."""
    names, train, features, groups, users, run_items, ranks, num_users = generated(seed)
    context = ItemContext.of(items=table(names, names, "items.csv"), train=train, item_features=features,
                             item_groups=groups)
    items = context.indexes(text_keys(run_items.tolist()))
    assert (context.items[items] == run_items).all()  # the catalogue index names the item
    lists = tuple((name, None) for name in LIST_VALUES)
    request = ItemRequest(context, lists, exposures=(None, 5), by_rank=(3,), providers=(None,))
    blocks = np.array_split(np.arange(num_users), 3)
    values, counts = {}, None
    for block in blocks:
        rows = np.isin(users, block)
        part = run_items_of(request, users[rows] - block[0], text_keys(run_items[rows].tolist()), ranks[rows],
                            len(block))
        for key, value in joined(part).values.items():
            values.setdefault(key[0], []).append(value)
        counts = part.counts if counts is None else counts + part.counts
    values = {name: np.concatenate(parts) for name, parts in values.items()}
    catalogue = {name: position for position, name in enumerate(sorted(names))}
    whole_items = np.array([catalogue[name] for name in run_items])
    _, train_users = np.unique(train.keys.tolist(), return_inverse=True)
    popularity = Popularity.of(train_users, np.array([catalogue[name] for name in train.values.tolist()]), len(names))
    expected = per_user_popularity(users, whole_items, popularity, num_users)
    expected["poprank"] = expected.pop("mean_popularity_rank")
    feature_names = sorted(set(features.values.tolist()))
    matrix = FeatureSets.of(np.array([catalogue[name] for name in features.keys.tolist()]),
                            np.array([feature_names.index(name) for name in features.values.tolist()]),
                            len(names), len(feature_names))
    expected["ild_cosine"] = intra_list_diversity(users, whole_items, matrix, num_users, "cosine")
    expected["ild_jaccard"] = intra_list_diversity(users, whole_items, matrix, num_users, "jaccard")
    expected["catcov"] = category_coverage(users, whole_items, matrix, num_users)
    assert set(values) == set(expected)
    for name in expected:
        assert values[name] == pytest.approx(expected[name]), name
    assert values["arp"][0] == 0 and values["ild_cosine"][7] == 0  # cold-start users: empty lists
    assert counts.exposures[None][:len(names)].tolist() == np.bincount(whole_items, minlength=len(names)).tolist()
    assert counts.exposures[5].sum() == np.count_nonzero(ranks <= 5)
    top = ranks <= 3
    expected_discounted = np.bincount(whole_items[top], weights=1 / np.log2(1 + ranks[top]), minlength=len(names))
    [discounted] = counts.by_rank[3]
    assert discounted.discounted(len(names)) == pytest.approx(expected_discounted, rel=1e-15)
    assert int(discounted.counts.sum()) == int(top.sum())
    assert int(counts.outside) == 0 and int(counts.trained) == int(np.sum(popularity.interactions[whole_items] > 0))
    group_names = sorted(set(groups.values.tolist()))
    assert context.groups[:len(names)].tolist() == [group_names.index(group) for _, group in
                                                    sorted(zip(groups.keys.tolist(), groups.values.tolist()))]


@pytest.mark.parametrize("seed", [0, 1])
def test_a_run_computed_in_slices_of_users_gives_the_same_values_and_counts(monkeypatch, seed):
    """A run's rows are given to the item measures in slices of whole users (items.ITEM_ROWS): slices
    of a few rows give exactly the values and counts of one slice of every row, users without a list
    among them (between slices and at the end), with user groups and counts per rank."""
    from prefeval.ranking import items as items_module

    names, train, features, groups, users, run_items, ranks, num_users = generated(seed)
    context = ItemContext.of(items=table(names, names, "items.csv"), train=train, item_features=features,
                             item_groups=groups)
    lists = tuple((name, None) for name in LIST_VALUES) + (("arp", 3),)
    request = ItemRequest(context, lists, exposures=(None, 5), by_rank=(None, 3), providers=(None, 2),
                          group_names=("a", "b", "c"))
    query_groups = np.random.default_rng(seed).integers(-1, 3, num_users + 2)
    keys = text_keys(run_items.tolist())

    def computed(rows_at_a_time):
        monkeypatch.setattr(items_module, "ITEM_ROWS", rows_at_a_time)
        return run_items_of(request, users, keys, ranks, num_users + 2, query_groups=query_groups)

    whole, sliced = computed(10**9), computed(7)
    assert len(items_module._query_slices(users, num_users + 2)) > 20
    assert len(whole.queries) == 1 and len(sliced.queries) > 20
    for key, value in joined(whole).values.items():
        assert joined(sliced).values[key].tobytes() == value.tobytes(), key
    for key, value in joined(whole).providers.items():
        assert joined(sliced).providers[key].tobytes() == value.tobytes(), key

    def flat(counts):
        return ({k: v.tolist() for k, v in counts.exposures.items()},
                {k: [(part.keys.tolist(), part.counts.tolist()) for part in v] for k, v in counts.by_rank.items()},
                int(counts.outside), int(counts.trained), [flat(group) for group in counts.groups])

    assert flat(sliced.counts) == flat(whole.counts)
    assert len(whole.counts.groups) == 3 and int(whole.counts.trained) > 0


def test_items_outside_the_catalogue_are_found_slice_by_slice(monkeypatch):
    """The items are found in the catalogue a slice of users at a time: outside a strict catalogue the
    error names the first such row of the run, in whichever slice it is; outside another the count
    and the example (the first one) are those of one slice of every row."""
    from prefeval.ranking import items as items_module

    users = np.repeat(np.arange(6), 3)
    names = [f"i{at % 4}" for at in range(len(users))]
    names[10], names[16] = "x10", "x16"  # users 3 and 5: the fourth and the sixth slice of 3 rows
    keys, ranks = text_keys(names), np.tile([1.0, 2.0, 3.0], 6)
    catalogue = table(["i0", "i1", "i2", "i3"], ["i0", "i1", "i2", "i3"], "items.csv")
    lenient = ItemContext.of(items=catalogue, strict=False)

    def computed(rows_at_a_time, context):
        monkeypatch.setattr(items_module, "ITEM_ROWS", rows_at_a_time)
        return run_items_of(ItemRequest(context, (), exposures=(None,)), users, keys, ranks, 6,
                            lambda row: InputError("run.txt", f"row {row} outside"), lambda row: names[row])

    for rows_at_a_time, slices in ((3, 6), (10**9, 1)):
        part = computed(rows_at_a_time, lenient)
        assert len(items_module._query_slices(users, 6)) == slices
        assert int(part.counts.outside) == 2 and part.counts.example == "x10"
        assert part.counts.exposures[None].tolist() == [4, 5, 3, 4, 2]  # rows 0-17 cycle i0..i3; 10 (i2), 16 (i0) out
        with pytest.raises(InputError, match="row 10 outside"):
            computed(rows_at_a_time, lenient._replace(strict=True))


def test_catalogue_defaults_and_items_outside_it():
    """The catalogue: --items, else the side inputs' items; outside a strict one an item is an error
    (the caller's, naming the run's line), outside the others it is the extra slot: popularity 0, in
    the tail, ranked with the items of popularity 0, no features, no group."""
    with pytest.raises(UsageError):
        ItemContext.of()
    train = table(["u1", "u2", "u2", "u3"], ["b", "d", "b", "e"], "train.csv")
    context = ItemContext.of(train=train)
    assert context.items.tolist() == ["b", "d", "e"] and not context.strict
    assert context.popularity.interactions.tolist() == [2, 1, 1, 0]
    assert context.popularity.tail.tolist()[-1] and context.popularity.rank[-1] == 4.0
    keys = text_keys(["a", "b", "z"])
    assert context.indexes(keys).tolist() == [3, 0, 3]
    request = ItemRequest(context, (("arp", None),), exposures=(None,))
    part = run_items_of(request, np.array([0, 0, 1]), keys, np.array([1.0, 2.0, 1.0]), 2,
                        item_text=lambda row: ["a", "b", "z"][row])
    assert joined(part).values[("arp", None)].tolist() == [1.0, 0.0]
    assert int(part.counts.outside) == 2 and part.counts.example == "a"
    strict = context._replace(strict=True)

    def outside(row):
        return InputError("run.txt", f"row {row} outside")

    with pytest.raises(InputError, match="row 0 outside"):
        run_items_of(ItemRequest(strict, (("arp", None),)), np.array([0]), keys[:1], np.array([1.0]), 1, outside)
    features = table(["b", "q"], ["g1", "g2"], "features.csv")
    assert ItemContext.of(item_features=features).items.tolist() == ["b", "q"]


@pytest.mark.parametrize("seed", range(5))
def test_rank_counts_add_up_as_counting_all_rows_at_once(seed):
    """RankCounts + RankCounts (a streamed run adds a chunk's at a time) equals the counts of both
    chunks' rows together, whichever side is larger, with pairs in one, in the other and in both."""
    rng = np.random.default_rng(seed)
    chunks = [(rng.integers(0, 25, size), rng.integers(1, 7, size)) for size in rng.integers(0, 60, 6)]
    total = RankCounts.of(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
    for items, ranks in chunks:
        total = RankCounts.of(items, ranks) + total if seed % 2 else total + RankCounts.of(items, ranks)
    items, ranks = (np.concatenate(column) for column in zip(*chunks))
    expected = RankCounts.of(items, ranks)
    assert total.keys.tolist() == expected.keys.tolist() and total.counts.tolist() == expected.counts.tolist()
    assert total.counts.dtype == np.int64 and int(total.counts.sum()) == len(items)
    keys, counts = np.unique((items.astype(np.int64) << 32) | (ranks.astype(np.int64) - 1), return_counts=True)
    assert expected.keys.tolist() == keys.tolist() and expected.counts.tolist() == counts.tolist()


def test_rank_counts_of_many_possible_pairs_sort_the_rows():
    """Counted by sorting the pairs when there are far more possible pairs than rows (a catalogue of
    millions): the same counts as counting every possible pair."""
    import prefeval.ranking.items as ranking_items

    items, ranks = np.array([5_000_000, 3, 5_000_000, 3, 7]), np.array([2, 1, 2, 4, 1])
    sorted_counts = RankCounts.of(items, ranks)
    saved = ranking_items._DENSE_PAIRS
    ranking_items._DENSE_PAIRS = 1 << 40
    try:
        dense = RankCounts.of(items, ranks)
    finally:
        ranking_items._DENSE_PAIRS = saved
    assert sorted_counts.keys.tolist() == dense.keys.tolist() == [3 << 32, (3 << 32) | 3, 7 << 32,
                                                                  (5_000_000 << 32) | 1]
    assert sorted_counts.counts.tolist() == dense.counts.tolist() == [1, 1, 1, 2]


@pytest.mark.parametrize("queries", [np.arange(5), np.arange(1, 4), np.array([2]), np.array([0, 2, 3]),
                                     np.array([3, 2, 1]), np.array([1, 1, 2]), np.array([], dtype=np.int64),
                                     np.array([True, False, True, True, False]), slice(1, 3)])
def test_query_columns_are_views_for_a_range_and_copies_otherwise(queries):
    """Every query of a table (the usual selection) is taken without a copy; any other index gives
    the same values numpy's indexing gives."""
    values = np.arange(10.0).reshape(2, 5)
    providers = np.arange(30).reshape(2, 5, 3)
    taken = QueryItems({("arp", 10): values}, {10: providers}).columns(queries)
    np.testing.assert_array_equal(taken.values[("arp", 10)], values[..., queries])
    np.testing.assert_array_equal(taken.providers[10], providers[..., queries, :])
    consecutive = isinstance(queries, slice) or (queries.dtype.kind == "i" and len(queries) > 0
                                                  and (np.diff(queries) == 1).all())
    assert np.shares_memory(taken.values[("arp", 10)], values) == consecutive
    assert np.shares_memory(taken.providers[10], providers) == consecutive


def test_runs_stacked_from_their_slices_of_queries():
    """Each run's slices of queries (as many as its reader made) laid end to end, the runs stacked:
    what numpy's concatenate and stack give, in one array per value."""
    values = np.arange(12.0).reshape(2, 6)
    providers = np.arange(36.0).reshape(2, 6, 3)
    cuts = [(0, 2, 5, 6), (0, 6)]  # the first run in three slices, the second in one
    runs = [[QueryItems({("arp", 10): values[run, a:b]}, {10: providers[run, a:b]}) for a, b in zip(cut, cut[1:])]
            for run, cut in enumerate(cuts)]
    stacked = QueryItems.stacked(runs)
    assert stacked.values[("arp", 10)].tolist() == values.tolist()
    assert stacked.providers[10].tolist() == providers.tolist() and stacked.providers[10].dtype == np.float64
