"""Beyond-accuracy measures (prefeval.analyses.beyond_accuracy) against values computed by hand from
the documented formulas (the papers' and Microsoft Recommenders'), on lists with popularity skew,
ties of popularity and a cold-start user without a list."""

import math

import numpy as np
import pytest

from prefeval.analyses.beyond_accuracy import Exposure, Popularity, per_user_popularity

# catalogue of 5 items; users 0, 1, 3 have lists, user 2 (cold start) none
USERS = np.array([0, 0, 1, 1, 3, 3])
ITEMS = np.array([0, 1, 0, 2, 0, 1])
RANKS = np.array([1, 2, 1, 2, 1, 2])
# training: item 0 four times (by three users), items 1 and 3 once (a tie), items 2 and 4 never
TRAIN_USERS = np.array([0, 1, 2, 0, 1, 2])
TRAIN_ITEMS = np.array([0, 0, 0, 0, 1, 3])


def exposure(discount=False, blocks=1):
    counted = Exposure(5, discount=discount)
    for part in np.array_split(np.arange(len(ITEMS)), blocks):
        counted.add(ITEMS[part], RANKS[part], users=0, users_with_list=0)
    counted.users, counted.users_with_list = 4, 3
    return counted


def test_coverage_gini_entropy_by_hand():
    counted = exposure()
    assert counted.catalogue_coverage() == pytest.approx(3 / 5)
    assert counted.user_coverage() == pytest.approx(3 / 4)
    # shares ascending 0, 0, 1/6, 2/6, 3/6; (2j - n - 1) = -4, -2, 0, 2, 4; over n - 1 = 4
    assert counted.gini() == pytest.approx((2 * 2 / 6 + 4 * 3 / 6) / 4)
    assert counted.entropy() == pytest.approx(-(1 / 2 * math.log2(1 / 2) + 1 / 3 * math.log2(1 / 3)
                                                + 1 / 6 * math.log2(1 / 6)))


def test_rank_discount_and_blocks():
    counted = exposure(discount=True, blocks=3)
    weights = [3.0, 2 / math.log2(3), 1 / math.log2(3)]
    total = sum(weights)
    assert counted.entropy() == pytest.approx(-sum(w / total * math.log2(w / total) for w in weights))
    assert exposure(blocks=4).counts.tolist() == exposure().counts.tolist() == [3, 2, 1, 0, 0]


def test_extremes():
    one = Exposure(4)
    one.add(np.array([2, 2, 2]), np.array([1, 1, 1]), 3, 3)
    assert one.gini() == pytest.approx(1.0) and one.entropy() == 0.0
    even = Exposure(4)
    even.add(np.arange(4), np.ones(4), 4, 4)
    assert even.gini() == pytest.approx(0.0) and even.entropy() == pytest.approx(2.0)


def test_popularity_measures_by_hand():
    popularity = Popularity.of(TRAIN_USERS, TRAIN_ITEMS, 5, head_share=0.2)
    assert popularity.tail.tolist() == [False, True, True, True, True]  # 4 of 6 interactions >= 20%
    values = per_user_popularity(USERS, ITEMS, popularity, 4)
    assert values["arp"].tolist() == [2.5, 2.0, 0.0, 2.5]
    assert values["aplt"].tolist() == [0.5, 0.5, 0.0, 0.5]
    assert values["epc"] == pytest.approx([(0 + 2 / 3) / 2, (0 + 1) / 2, 0, (0 + 2 / 3) / 2])
    assert values["efd"] == pytest.approx([math.log2(3) / 2, math.log2(3) / 2, 0, math.log2(3) / 2])
    # popularity ranks: item 0 first; items 1 and 3 tie at 2.5; items 2 and 4 at 4.5
    assert values["mean_popularity_rank"].tolist() == [1.75, 2.75, 0.0, 1.75]


def test_head_share_one_makes_every_trained_item_head():
    popularity = Popularity.of(TRAIN_USERS, TRAIN_ITEMS, 5, head_share=1.0)
    assert popularity.tail.tolist() == [False, False, True, False, True]


def test_item_group_exposure_share_and_disparity():
    from prefeval.analyses.beyond_accuracy import group_exposure

    # exposure [3, 2, 1, 0, 0]; provider 0 holds items 0 and 3, provider 1 items 1 and 2, item 4 none
    shares, disparity = group_exposure(exposure(), np.array([0, 1, 1, 0, -1]), 2)
    assert shares.tolist() == pytest.approx([3 / 6, 3 / 6]) and disparity == pytest.approx(0.0)
    shares, disparity = group_exposure(exposure(), np.array([0, 1, -1, 1, 1]), 2)
    assert shares.tolist() == pytest.approx([3 / 6, 2 / 6]) and disparity == pytest.approx(1 / 6)


@pytest.mark.parametrize("seed", [0, 1])
def test_popularity_of_each_list_is_its_terms_added_in_row_order(seed):
    """Per-user popularity adds a list's terms position after position: the same bits as adding each
    user's rows in row order (np.bincount), rows in any order, empty lists 0, items outside the
    catalogue (the extra slot) included."""
    rng = np.random.default_rng(seed)
    n, num_users = 300, 500
    popularity = Popularity.of(rng.integers(0, 80, 3000), np.minimum(rng.zipf(1.5, 3000) - 1, n - 1), n).with_unknown()
    users = np.concatenate([np.full(rng.integers(0, 12), user) for user in range(num_users)])
    items = rng.integers(0, n + 1, len(users))
    shuffle = rng.permutation(len(users))
    users, items = users[shuffle], items[shuffle]
    values = per_user_popularity(users, items, popularity, num_users)
    length = np.bincount(users, minlength=num_users).astype(np.float64)
    terms = {"arp": popularity.interactions, "aplt": popularity.tail, "epc": popularity.complement,
             "efd": popularity.discovery, "mean_popularity_rank": popularity.rank}
    for name, of_item in terms.items():
        sums = np.bincount(users, weights=of_item[items], minlength=num_users)
        expected = np.divide(sums, length, out=np.zeros(num_users), where=length > 0)
        assert values[name].tobytes() == expected.tobytes(), name
