"""Intra-list diversity and category coverage (prefeval.analyses.beyond_accuracy) by hand and by brute
force over pairs, and the item context (prefeval.ranking.items: ItemContext, run_items) against the pure functions on
generated data with popularity skew, ties and cold-start users."""

import itertools
import math

import numpy as np
import pytest

from prefeval.analyses.beyond_accuracy import (
    Exposure,
    Popularity,
    category_coverage,
    intra_list_diversity,
    item_features_matrix,
    per_user_popularity,
)
from prefeval.errors import InputError, UsageError
from prefeval.io.fields import text_keys
from prefeval.io.side import SideTable
from prefeval.ranking.items import LIST_VALUES, ItemContext, ItemRequest, run_items

# 4 items, 3 features: item 0 {a, b}, item 1 {b}, item 2 {c}, item 3 none
FEATURES = item_features_matrix(np.array([0, 0, 1, 2]), np.array([0, 1, 1, 2]), 4, 3)


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
def test_ild_and_coverage_brute_force(seed):
    rng = np.random.default_rng(seed)
    n_items, n_features, n_users = 30, 6, 40
    pairs = rng.random((n_items, n_features)) < 0.3
    sets = [set(np.flatnonzero(row).tolist()) for row in pairs]
    item_rows, feature_cols = np.nonzero(pairs)
    features = item_features_matrix(item_rows, feature_cols, n_items, n_features)
    lists = [rng.choice(n_items, size=rng.integers(0, 8), replace=False) for _ in range(n_users)]
    users = np.concatenate([np.full(len(items), user) for user, items in enumerate(lists)]).astype(np.int64)
    items = np.concatenate(lists).astype(np.int64)
    shuffle = rng.permutation(len(items))  # rows of a run need not be grouped by user
    for similarity in ("cosine", "jaccard"):
        got = intra_list_diversity(users[shuffle], items[shuffle], features, n_users, similarity)
        assert got == pytest.approx([brute_ild(list(items_of), sets, similarity) for items_of in lists])
    covered = [len(set().union(*(sets[i] for i in items_of))) / n_features for items_of in lists]
    assert category_coverage(users, items, features, n_users) == pytest.approx(covered)


def table(keys, values, source="side.csv"):
    keys, values = np.asarray(keys, dtype=object), np.asarray(values, dtype=object)
    return SideTable(keys, values, np.arange(len(keys)) + 2, source)


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
    names, train, features, groups, users, run_items_, ranks, num_users = generated(seed)
    context = ItemContext.of(items=table(names, names, "items.csv"), train=train, item_features=features,
                             item_groups=groups)
    keys = text_keys(run_items_.tolist())
    items = context.indexes(keys)
    assert (context.items[items] == run_items_).all()  # the catalogue index names the item
    request = ItemRequest(context, tuple((name, None) for name in LIST_VALUES), exposures=(None, 5), by_rank=(5,),
                          providers=(None,))
    blocks = np.array_split(np.arange(num_users), 3)  # in blocks of users, as the streamed engine reads
    values, counts = {}, None
    for block in blocks:
        rows = np.isin(users, block)
        local = run_items(request, users[rows] - block[0], keys[rows], ranks[rows], len(block))
        for key, part in local.queries.values.items():
            values.setdefault(key[0], []).append(part)
        counts = local.counts if counts is None else counts + local.counts
    values = {name: np.concatenate(parts) for name, parts in values.items()}
    # the pure functions on the whole run, with codes made independently of the context
    catalogue = {name: position for position, name in enumerate(sorted(names))}
    whole_items = np.array([catalogue[name] for name in run_items_])
    _, train_users = np.unique(train.keys, return_inverse=True)
    popularity = Popularity.of(train_users, np.array([catalogue[name] for name in train.values]), len(names))
    expected = per_user_popularity(users, whole_items, popularity, num_users)
    expected["poprank"] = expected.pop("mean_popularity_rank")
    feature_names = sorted(set(features.values))
    matrix = item_features_matrix(np.array([catalogue[name] for name in features.keys]),
                                  np.array([feature_names.index(name) for name in features.values]),
                                  len(names), len(feature_names))
    expected["ild_cosine"] = intra_list_diversity(users, whole_items, matrix, num_users, "cosine")
    expected["ild_jaccard"] = intra_list_diversity(users, whole_items, matrix, num_users, "jaccard")
    expected["catcov"] = category_coverage(users, whole_items, matrix, num_users)
    assert set(values) == set(expected)
    for name in expected:
        assert values[name] == pytest.approx(expected[name]), name
    assert values["arp"][0] == 0 and values["ild_cosine"][7] == 0  # cold-start users: empty lists
    whole = Exposure(len(names))
    whole.add(whole_items, ranks, users=num_users, users_with_list=num_users - 5)
    assert counts.exposures[None][:len(names)].tolist() == whole.counts.tolist()
    assert counts.exposures[5].sum() == np.count_nonzero(ranks <= 5)
    assert counts.by_rank[5].sum(axis=1).tolist() == counts.exposures[5].tolist()
    assert context.groups[:len(names)].tolist() == [sorted(set(groups.values)).index(group) for _, group in
                                                    sorted(zip(groups.keys, groups.values))]


def test_catalogue_defaults_and_items_outside_it():
    train = table(["u1", "u2", "u2"], ["b", "d", "b"], "train.csv")
    context = ItemContext.of(train=train)  # the items of the training data
    assert context.items.tolist() == ["b", "d"] and not context.strict
    assert context.popularity.interactions.tolist() == [2, 1, 0]  # and the extra slot of items outside it
    assert context.indexes(text_keys(["a", "b", "c", "d"])).tolist() == [2, 0, 2, 1]
    request = ItemRequest(context, (("arp", None),))
    keys = text_keys(["a", "b", "c"])
    counted = run_items(request, np.array([0, 0, 1]), keys, np.array([1, 2, 1]), 2,
                        item_text=lambda row: ["a", "b", "c"][row])
    assert counted.counts.outside == 2 and counted.counts.example == "a"
    assert counted.queries.values[("arp", None)].tolist() == [1.0, 0.0]
    strict = context._replace(strict=True)

    def refused(row):
        return InputError("run.txt", f"item {['a', 'b', 'c'][row]!r} is not in the catalogue", row + 1)

    with pytest.raises(InputError, match="item 'a' is not in the catalogue"):
        run_items(ItemRequest(strict, (("arp", None),)), np.array([0, 0, 1]), keys, np.array([1, 2, 1]), 2,
                  outside_error=refused)
    with pytest.raises(UsageError, match="need --items, --train"):
        ItemContext.of()
