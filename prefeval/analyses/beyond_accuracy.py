"""Beyond-accuracy measures of recommendation lists: coverage, exposure, popularity and novelty.

The input is a run's top-k lists as three aligned arrays (user, item, rank; rank 1 is the top) and,
for popularity and novelty, the training interactions. Two kinds of measure:

- **distributional** (over the whole run): catalogue coverage, user coverage, the Gini index and the
  Shannon entropy of exposure. They are functions of the exposure of each item, a running sum that
  :class:`Exposure` adds block by block, so a streamed run is summarised in memory proportional to
  its items, not its users;
- **per user** (then averaged over users): ARP, APLT, EPC, EFD and mean popularity rank
  (:func:`per_user_popularity`), from the popularity of each item in the training data
  (:class:`Popularity`).

Definitions (n: catalogue size; L_u: the top-k list of user u; e_i: exposure of item i, the number
of lists that hold it, or with the rank discount the sum of 1/log2(1 + rank) over them; p_i =
e_i / Σ_j e_j; φ(i): the number of training interactions of i; U_train: the users of the training
data, pop(i) the number of them who interacted with i):

- catalogue coverage@k = |∪_u L_u ∩ catalogue| / n (Ge, Delgado-Battenfeld and Jannach, RecSys 2010);
- user coverage = the share of users with a non-empty list (Herlocker et al., TOIS 2004);
- Gini@k = (1 / (n − 1)) Σ_{j=1..n} (2j − n − 1) p_(j), p_(j) ascending, unexposed items at 0:
  0 when every item is equally exposed, 1 when one item takes all (Vargas and Castells, RecSys 2011;
  Microsoft Recommenders' ``gini``); 0 when n = 1;
- entropy@k = −Σ_i p_i log2 p_i, in [0, log2 n] (Shannon; Microsoft Recommenders'
  ``distributional_coverage``);
- ARP = mean_u (1/|L_u|) Σ_{i ∈ L_u} φ(i) (Abdollahpouri, Burke and Mobasher, FLAIRS 2019);
- APLT = mean_u |L_u ∩ tail| / |L_u|, the head being the fewest most popular training items whose
  interactions reach ``head_share`` of all (default 0.2) and the tail every other item (same paper);
- EPC = mean_u (1/|L_u|) Σ_{i ∈ L_u} (1 − pop(i)/|U_train|) and EFD = mean_u (1/|L_u|) Σ_{i ∈ L_u}
  −log2(max(pop(i), 1)/|U_train|) (Vargas and Castells, RecSys 2011, without rank discount or
  relevance; an item nobody trained on counts as seen once for EFD, so that it is finite);
- mean popularity rank = mean_u (1/|L_u|) Σ_{i ∈ L_u} rank of φ(i) among the catalogue, 1 the most
  popular, tied items sharing the mean of their ranks.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Exposure:
    """Running sums of exposure per item of a catalogue: :meth:`add` a block of (item index, rank)
    pairs; the distributional measures read the sums. Items are indexes 0..n−1 into the catalogue."""

    def __init__(self, catalogue_size: int, discount: bool = False):
        self.counts = np.zeros(catalogue_size, dtype=np.float64)
        self.discount = discount
        self.users = 0
        self.users_with_list = 0

    def add(self, items: np.ndarray, ranks: np.ndarray, users: int, users_with_list: int) -> None:
        """Count one block: the items of its lists at their ranks, and how many users it holds."""
        weights = 1.0 / np.log2(1.0 + ranks) if self.discount else np.ones(len(items))
        self.counts += np.bincount(items, weights=weights, minlength=len(self.counts))
        self.users += users
        self.users_with_list += users_with_list

    def catalogue_coverage(self) -> float:
        return float(catalogue_coverage(self.counts))

    def user_coverage(self) -> float:
        return self.users_with_list / self.users if self.users else 0.0

    def gini(self) -> float:
        return float(gini(self.counts))

    def entropy(self) -> float:
        return float(entropy(self.counts))


def catalogue_coverage(exposure: np.ndarray) -> np.ndarray:
    """The share of the n items (last axis) with a positive exposure; 0 for an empty catalogue."""
    n = exposure.shape[-1]
    return np.count_nonzero(exposure > 0, axis=-1) / n if n else np.zeros(exposure.shape[:-1])


def gini(exposure: np.ndarray) -> np.ndarray:
    """The Gini index of the exposures e_1..e_n (last axis; module docstring): 0 when n < 2 or
    nothing is exposed."""
    exposure = np.asarray(exposure, dtype=np.float64)
    n = exposure.shape[-1]
    total = exposure.sum(axis=-1, keepdims=True)
    if n < 2:
        return np.zeros(exposure.shape[:-1])
    shares = np.divide(np.sort(exposure, axis=-1), total, out=np.zeros(exposure.shape), where=total > 0)
    j = np.arange(1, n + 1)
    return np.sum((2 * j - n - 1) * shares, axis=-1) / (n - 1)


def entropy(exposure: np.ndarray) -> np.ndarray:
    """The Shannon entropy (bits) of the exposure shares (last axis; module docstring): 0 when
    nothing is exposed."""
    exposure = np.asarray(exposure, dtype=np.float64)
    total = exposure.sum(axis=-1, keepdims=True)
    shares = np.divide(exposure, total, out=np.zeros(exposure.shape), where=total > 0)
    terms = np.where(shares > 0, shares * np.log2(np.where(shares > 0, shares, 1.0)), 0.0)
    return -terms.sum(axis=-1) + 0.0


class Popularity(NamedTuple):
    """The popularity of each catalogue item in the training data: ``interactions`` φ(i), ``users``
    pop(i) (distinct users), ``training_users`` |U_train|, ``tail`` (bool per item), ``rank`` (its
    popularity rank), and the terms that EPC and EFD average over a list, per item: ``complement``
    1 − pop(i)/|U_train| and ``discovery`` −log2(max(pop(i), 1)/|U_train|) (module docstring)."""

    interactions: np.ndarray
    users: np.ndarray
    training_users: int
    tail: np.ndarray
    rank: np.ndarray
    complement: np.ndarray
    discovery: np.ndarray

    @classmethod
    def of(cls, train_users: np.ndarray, train_items: np.ndarray, catalogue_size: int,
           head_share: float = 0.2) -> Popularity:
        """From training interactions (user codes, item indexes into the catalogue; an item outside
        it is left out by the caller)."""
        interactions = np.bincount(train_items, minlength=catalogue_size).astype(np.float64)
        train_items = np.asarray(train_items, dtype=np.int64)
        pairs = _distinct_integers(np.asarray(train_users, dtype=np.int64) * max(catalogue_size, 1) + train_items)
        users = np.bincount(pairs % max(catalogue_size, 1), minlength=catalogue_size).astype(np.float64)
        order = np.argsort(-interactions, kind="stable")
        cumulative = np.cumsum(interactions[order])
        total = cumulative[-1] if len(cumulative) else 0.0
        head_count = int(np.searchsorted(cumulative, head_share * total, side="left")) + 1 if total else 0
        tail = np.ones(catalogue_size, dtype=bool)
        tail[order[:head_count]] = False
        training_users = len(_distinct_integers(np.asarray(train_users, dtype=np.int64)))
        return cls._with_terms(interactions, users, training_users, tail, _average_ranks(-interactions))

    @classmethod
    def _with_terms(cls, interactions: np.ndarray, users: np.ndarray, training_users: int, tail: np.ndarray,
                    rank: np.ndarray) -> Popularity:
        seen = users / max(training_users, 1)
        seen_once = np.maximum(users, 1) / max(training_users, 1)
        return cls(interactions, users, training_users, tail, rank, 1.0 - seen, -np.log2(seen_once))

    def with_unknown(self) -> Popularity:
        """With one more item, an item outside the catalogue: nobody trained on it (popularity 0, in
        the tail), ranked as the catalogue's items of popularity 0 are (n + 1 when there is none)."""
        unpopular = self.rank[self.interactions == 0]
        rank = float(unpopular[0]) if len(unpopular) else float(len(self.rank) + 1)
        return self._with_terms(np.append(self.interactions, 0.0), np.append(self.users, 0.0), self.training_users,
                                np.append(self.tail, True), np.append(self.rank, rank))


def _distinct_integers(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` of integers, by a sort (numpy 2's ``np.unique`` hashes, many times slower
    on millions of widely spread integers)."""
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if len(ordered) else ordered


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """The rank of each value, 1 the smallest, tied values sharing the mean of their ranks
    (``scipy.stats.rankdata(values, method="average")``: (first + last) / 2, exact)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if len(values) else order
    ends = np.append(starts[1:], len(values))  # a tie's ranks are starts + 1 .. ends
    ranks = np.empty(len(values))
    ranks[order] = np.repeat(0.5 * (starts + 1 + ends), ends - starts)
    return ranks


def per_user_popularity(users: np.ndarray, items: np.ndarray, popularity: Popularity, num_users: int,
                        layout: ListLayout | None = None) -> dict:
    """ARP, APLT, EPC, EFD and mean popularity rank of every user: ``{name: values (num_users,)}``,
    from the users' codes 0..num_users−1 and the item indexes of their lists (``layout``: those lists
    laid out already, :class:`ListLayout`); a user with an empty list has 0 for each. A list's terms
    are added in its order, position after position (as ``np.bincount`` adds a user's rows)."""
    lists = layout if layout is not None else ListLayout.of(users, items, num_users)
    by_position = np.ascontiguousarray(lists.items.T)  # positions × lists, −1 past a list's end
    terms = {  # per catalogue item
        "arp": popularity.interactions,
        "aplt": popularity.tail,
        "epc": popularity.complement,
        "efd": popularity.discovery,
        "mean_popularity_rank": popularity.rank,
    }
    out = {}
    for name, of_item in terms.items():
        padded = np.append(of_item.astype(np.float64), 0.0)  # −1 takes the 0 at the end
        total = np.zeros(len(lists.users))
        for position in by_position:
            total += padded[position]
        out[name] = lists.per_user(total / lists.length, num_users)
    return out


def group_shares(exposure: np.ndarray, item_groups: np.ndarray, num_groups: int) -> np.ndarray:
    """Each item group's share of the exposure e_1..e_n (last axis): (…, num_groups).

    ``item_groups``: the group code (0..num_groups−1) of every item, −1 for an item in no group (its
    exposure counts in the total, in no group's share). share_g = Σ_{i ∈ g} e_i / Σ_i e_i; all 0 when
    nothing is exposed."""
    exposure = np.asarray(exposure, dtype=np.float64)
    grouped = item_groups >= 0
    membership = np.zeros((len(item_groups), num_groups))
    membership[np.flatnonzero(grouped), item_groups[grouped]] = 1.0
    sums = exposure @ membership
    total = exposure.sum(axis=-1, keepdims=True)
    return np.divide(sums, total, out=np.zeros(sums.shape), where=total > 0)


def disparity(shares: np.ndarray) -> np.ndarray:
    """max_g share_g − min_g share_g over the groups' shares (last axis), in [0, 1]: 0 when every
    group is equally exposed (Diaz, Mitra, Ekstrand, Biega and Carterette, CIKM 2020, compare groups'
    expected exposure); 0 without groups."""
    if shares.shape[-1] == 0:
        return np.zeros(shares.shape[:-1])
    return shares.max(axis=-1) - shares.min(axis=-1)


def group_exposure(exposure: Exposure, item_groups: np.ndarray, num_groups: int) -> tuple[np.ndarray, float]:
    """Each item group's share of a run's running :class:`Exposure`, and the disparity between
    groups (:func:`group_shares`, :func:`disparity`)."""
    shares = group_shares(exposure.counts, item_groups, num_groups)
    return shares, float(disparity(shares))


class FeatureSets(NamedTuple):
    """The feature set F_i of every item (a category, a genre), as bit sets: ``bits`` (items + 1,
    ⌈m/64⌉) uint64 (feature f: bit f mod 64 of word f // 64), ``sizes`` |F_i| (float64) and
    ``count``, m, the number of features; so that |F_i ∩ F_j| is the count of the bits of the AND of
    two rows (:func:`_popcount`). The last row is of no item and no feature: the row that −1 (past
    the end of a list) picks."""

    bits: np.ndarray
    sizes: np.ndarray
    count: int

    @classmethod
    def of(cls, item_indexes: np.ndarray, feature_codes: np.ndarray, catalogue_size: int,
           num_features: int) -> FeatureSets:
        """From (item index, feature code) pairs; a pair listed twice counts once; an item without a
        pair has no features."""
        width = max(num_features, 1)
        pairs = _distinct_integers(np.asarray(item_indexes, dtype=np.int64) * width + feature_codes)
        items, features = pairs // width, pairs % width
        bits = np.zeros((catalogue_size + 1, max(-(-num_features // 64), 1)), dtype=np.uint64)
        np.bitwise_or.at(bits, (items, features >> 6), np.left_shift(np.uint64(1), (features & 63).astype(np.uint64)))
        return cls(bits, np.bincount(items, minlength=catalogue_size + 1).astype(np.float64), num_features)


SIMILARITIES = ("cosine", "jaccard")
"""The similarities of item feature sets that :func:`intra_list_diversity` takes."""
FEATURE_VALUES = ("ild_cosine", "ild_jaccard", "catcov")
"""The per-list values of the items' features (:func:`list_feature_values`)."""
_SLICE_PAIRS = 1 << 16
"""Lists are taken a slice at a time, of as many lists as hold this many pairs of positions, so that
the arrays of their pairs (512 KiB each) stay in the processor's cache between the steps: twice as
fast as slices of 2²⁰ pairs on a million lists of 10."""

_BYTE_BITS = np.array([bin(byte).count("1") for byte in range(256)], dtype=np.int64)


def _popcount(bits: np.ndarray) -> np.ndarray:
    """The number of bits set in ``bits`` (…, words) uint64, over the last axis (an integer array)."""
    count = getattr(np, "bitwise_count", None)  # numpy >= 2.0
    if count is None:
        return _BYTE_BITS[bits.view(np.uint8)].sum(axis=-1)
    if bits.shape[-1] == 1:  # up to 64 features: one word a set
        return count(bits[..., 0])
    return count(bits).sum(axis=-1, dtype=np.int64)


def list_feature_values(users: np.ndarray, items: np.ndarray, features: FeatureSets, num_users: int,
                        names, layout: ListLayout | None = None) -> dict[str, np.ndarray]:
    """The values ``names`` (of :data:`FEATURE_VALUES`) of every user's list, (num_users,) each, from
    the users' codes 0..num_users−1 and the item indexes of their lists (rows in any order; a list's
    items in their order of rows): ``ild_cosine`` and ``ild_jaccard`` (:func:`intra_list_diversity`)
    and ``catcov`` (:func:`category_coverage`), laid out once for all three (``layout``: by the caller
    already, :class:`ListLayout`)."""
    lists = layout if layout is not None else ListLayout.of(users, items, num_users)
    similarities = [name.removeprefix("ild_") for name in names if name.startswith("ild_")]
    for similarity in similarities:
        if similarity not in SIMILARITIES:
            raise ValueError(f"similarity must be one of {', '.join(SIMILARITIES)}, not {similarity!r}")
    out = {f"ild_{similarity}": ild for similarity, ild in _diversities(lists, features, similarities).items()}
    if "catcov" in names:
        out["catcov"] = _coverage(lists, features)
    return {name: lists.per_user(out[name], num_users) for name in names}


def intra_list_diversity(users: np.ndarray, items: np.ndarray, features: FeatureSets, num_users: int,
                         similarity: str = "cosine") -> np.ndarray:
    """ILD of every user's list: the mean distance 1 − sim(i, j) over the list's unordered pairs of
    rows (Smyth and McClave, ICCBR 2001; Ziegler, McNee, Konstan and Lausen, WWW 2005, whose
    intra-list similarity is the complement). With F_i the feature set of item i: cosine sim =
    |F_i ∩ F_j| / √(|F_i| |F_j|), Jaccard sim = |F_i ∩ F_j| / |F_i ∪ F_j|; the similarity is 0 where
    the denominator is (an item without features is unlike every item). A list of fewer than 2 items
    has no pair: its ILD is 0, as an empty list's. The distances of a list are added pair after pair,
    (1, 2), (1, 3), …, (2, 3), …, however many lists are computed together. Returns (num_users,)."""
    return list_feature_values(users, items, features, num_users, [f"ild_{similarity}"])[f"ild_{similarity}"]


def category_coverage(users: np.ndarray, items: np.ndarray, features: FeatureSets, num_users: int) -> np.ndarray:
    """Category coverage of every user's list: |∪_{i ∈ L_u} F_i| / m, the share of the m categories
    that the list's items cover (the genre coverage of Vargas, Baltrunas, Karatzoglou and Castells,
    RecSys 2014, unweighted). 0 for an empty list, and for every list when there are no categories.
    Returns (num_users,)."""
    return list_feature_values(users, items, features, num_users, ["catcov"])["catcov"]


class ListLayout(NamedTuple):
    """Users' lists laid out for position-by-position arithmetic on their items (their popularity,
    their feature sets): the users with a list (``users``, ascending), their lists' ``length`` and
    ``items`` (lists × longest, −1 past a list's end)."""

    users: np.ndarray
    length: np.ndarray
    items: np.ndarray

    @classmethod
    def of(cls, users: np.ndarray, items: np.ndarray, num_users: int) -> ListLayout:
        """The layout of the rows (``users``, ``items``), sorted by user first unless they are (a ranked
        run's rows are: no sort then, and lists all of one length are the rows reshaped)."""
        if len(users) > 1 and (users[1:] < users[:-1]).any():
            order = np.argsort(users, kind="stable")
            users, items = users[order], items[order]
        length = np.bincount(users, minlength=num_users)
        holders = np.flatnonzero(length != 0)
        held = length[holders]
        longest = int(held.max()) if len(held) else 0
        if len(held) and int(held.min()) == longest:
            return cls(holders, held, items.astype(np.int64).reshape(len(holders), longest))
        layout = np.full((len(holders), longest), -1, dtype=np.int64)
        row = np.repeat(np.arange(len(holders)), held)  # users sorted: the lists' rows one after the other
        layout[row, np.arange(len(users)) - np.repeat(np.cumsum(held) - held, held)] = items
        return cls(holders, held, layout)

    def per_user(self, values: np.ndarray, num_users: int) -> np.ndarray:
        """Values of the lists as values of users 0..num_users−1 (0: a user without a list)."""
        out = np.zeros(num_users)
        out[self.users] = values
        return out

    def slices(self, pairs: int) -> list[slice]:
        """Slices of the lists, each of as many lists as hold about :data:`_SLICE_PAIRS` ``pairs``."""
        step = max(_SLICE_PAIRS // max(pairs, 1), 1)
        return [slice(start, start + step) for start in range(0, len(self.users), step)]


def _diversities(lists: ListLayout, features: FeatureSets, similarities: list[str]) -> dict[str, np.ndarray]:
    """The ILD of every list under each similarity (:func:`intra_list_diversity`): the shared features
    of each pair of positions, counted once for every similarity, and the pair's distance looked up
    in a table of every (shared, |F_i|, |F_j|) (:class:`_DistanceTable`) when that table is small, else
    computed pair by pair; both give the same bits. Arrays are laid out pair by pair (pairs × lists),
    so that a list's distances are added pair after pair, one vector at a time."""
    if not similarities:
        return {}
    bits = features.bits
    table = _DistanceTable.of(features.sizes, similarities)
    first, second = np.triu_indices(lists.items.shape[1], 1)  # the pairs of positions, (1, 2), (1, 3), …
    sums = {similarity: np.zeros(len(lists.users)) for similarity in similarities}
    for rows in lists.slices(len(first)):
        by_position = lists.items[rows].T  # positions × lists
        held_bits = bits[by_position]
        shared = _popcount(held_bits[first] & held_bits[second])
        if table is not None:
            cells = table.cells(shared, by_position, first, second)
            distances = {similarity: table.distances[similarity][cells] for similarity in similarities}
        else:
            held_sizes = features.sizes[by_position]
            past_end = second[:, None] >= lists.length[None, rows]
            distances = {similarity: np.where(past_end, 0.0, _distance(shared, held_sizes[first], held_sizes[second],
                                                                         similarity)) for similarity in similarities}
        for similarity, distance in distances.items():
            total = sums[similarity][rows]  # a view: the lists' running sums
            for pair in distance:
                total += pair
    pairs = lists.length * (lists.length - 1) / 2.0
    return {similarity: np.divide(total, pairs, out=np.zeros(len(total)), where=pairs > 0)
            for similarity, total in sums.items()}


def _distance(shared, size_a, size_b, similarity: str) -> np.ndarray:
    """1 − sim(i, j) from |F_i ∩ F_j|, |F_i| and |F_j| (arrays that broadcast; :func:`intra_list_diversity`):
    1 where the similarity's denominator is 0."""
    shared = np.asarray(shared, dtype=np.float64)
    denominator = np.sqrt(size_a * size_b) if similarity == "cosine" else size_a + size_b - shared
    out = np.zeros(np.broadcast_shapes(shared.shape, np.shape(denominator)))
    return 1.0 - np.divide(shared, denominator, out=out, where=denominator > 0)


_TABLE_CELLS = 1 << 20
"""The largest :class:`_DistanceTable` (cells per similarity): up to about 100 features per item."""


class _DistanceTable(NamedTuple):
    """The distance of every pair of positions as a function of (shared, |F_i|, |F_j|), small integers:
    ``distances[similarity]`` holds :func:`_distance` of every cell, a cell being
    shared · c² + code_i · c + code_j, where an item's code is |F_i| and the blank row's (a position
    past the end of a list) is c − 1 = max |F| + 1, whose cells hold 0 (no pair there)."""

    codes: np.ndarray
    width: int
    distances: dict

    @classmethod
    def of(cls, sizes: np.ndarray, similarities: list[str]) -> _DistanceTable | None:
        """The table of the items' ``sizes`` (the blank row last), None when it would hold more than
        :data:`_TABLE_CELLS` cells."""
        codes = sizes.astype(np.int32)
        largest = int(codes[:-1].max()) if len(codes) > 1 else 0
        width = largest + 2
        if (largest + 1) * width * width > _TABLE_CELLS:
            return None
        codes[-1] = width - 1
        shared, size_a, size_b = np.ogrid[:largest + 1, :width, :width]
        distances = {}
        for similarity in similarities:
            distance = _distance(shared, size_a.astype(np.float64), size_b.astype(np.float64), similarity)
            distance[:, width - 1, :] = distance[:, :, width - 1] = 0.0
            distances[similarity] = distance.ravel()
        return cls(codes, width, distances)

    def cells(self, shared: np.ndarray, by_position: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """The cell of each pair of positions (pairs × lists) of the lists' items ``by_position``."""
        held = self.codes[by_position]
        return (shared.astype(np.int32) * self.width + held[first]) * self.width + held[second]


def _coverage(lists: ListLayout, features: FeatureSets) -> np.ndarray:
    """The category coverage of every list (:func:`category_coverage`)."""
    if features.count == 0:
        return np.zeros(len(lists.users))
    bits = features.bits
    covered = np.zeros((len(lists.users), bits.shape[1]), dtype=np.uint64)
    for rows in lists.slices(lists.items.shape[1]):
        covered[rows] = np.bitwise_or.reduce(bits[lists.items[rows]], axis=1)
    return _popcount(covered) / features.count
