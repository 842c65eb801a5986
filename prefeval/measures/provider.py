"""Worst-off provider first: a lexicographic preference over the exposure of item (provider) groups.

Each item belongs to one provider group g ∈ {0, …, G−1} (``--item-groups``). A run's list for user
(query) u gives group g the exposure

    e_u(g) = Σ_{i ∈ L_u, group(i) = g, rank(i) <= k} 1 / log2(1 + rank(i))

(rank 1 is the top; no cut-off when k is None): the position-based attention of DCG, the exposure of
Singh and Joachims (KDD 2018, "Fairness of Exposure in Rankings", doi:10.1145/3219819.3220088) and of
the expected exposure of Diaz, Mitra, Ekstrand, Biega and Carterette (CIKM 2020). Every item of the
group in the list counts, not only its best-placed one, so a run that shows a provider twice gives it
more than a run that shows it once. Items in no group (code −1) count in no group.

**Which groups count:** all G groups of the item-group table, whether or not the user's list (or
either run's list) holds one of their items. A group missing from a list has exposure 0 and is then the
list's worst-off provider: dropping it would reward a run for leaving a provider out.

**The comparison** of runs x and y for a user sorts each run's G exposures ascending (worst-off
first), s(x) = sort(e_u^x), s(y) = sort(e_u^y), and compares the sorted vectors lexicographically:

    pref(x, y) = sgn(s_j(x) − s_j(y)) at the first j with |s_j(x) − s_j(y)| > τ;  0 if there is none

(+1: x is preferred, as lexiprecision's sign convention). This is the leximin order of social choice
(maximise the worst-off group's exposure, then the second worst-off's, …) applied in the spirit of
lexicographic recall, which compares runs on their worst-off relevant item first and motivates recall
as the utility of the worst-off user or provider (Diaz, Ekstrand and Mitra, "Recall, Robustness, and
Lexicographic Evaluation", ACM TORS 4(1), 2025, doi:10.1145/3728373). The comparison is anonymous: it
asks how well the worst-off provider fares, not which provider it is, so two lists that swap two
providers' places tie. τ (default 1e-9) absorbs the rounding of sums added in another order; with
τ = 0, or when no two exposures lie within τ of each other without being equal, the comparison is
antisymmetric and transitive. A user with an empty list (or a list of ungrouped items) gives every
group 0: it ties with another such list and loses to any list that exposes a group.

**Run level:** the same comparison of the two runs' total exposure per group over all users,
E(g) = Σ_u e_u(g) (:func:`run_exposure`), gives one sign per pair of runs.

**How it plugs in:** for a block of Q users, build per run the flat arrays of
its retrieved items (query index in 0..Q−1, the item's group code from ``read_side(..., ITEM_GROUPS)``
mapped to 0..G−1 or −1, and rank) and call :func:`group_exposure`; stack the runs' matrices into
(R, Q, G) and call :func:`compare_pairs` for the pairs of runs to get the (P, Q) per-user preferences.
For the run level, add each block's ``matrix.sum(axis=0)`` into a running (R, G) total (bounded
memory) and compare the totals with :func:`compare_pairs` on a (R, 1, G) array.
"""

from __future__ import annotations

import numpy as np

CITE = "Diaz, Ekstrand and Mitra, ACM TORS 2025, doi:10.1145/3728373"
DEFAULT_TOLERANCE = 1e-9
"""Two exposures within this absolute distance are equal (sums of the same terms in another order)."""


def exposure_weight(ranks: np.ndarray) -> np.ndarray:
    """The exposure 1/log2(1 + rank) of an item at each (1-based) rank: integer ranks (no more
    distinct ones than rows) looked up in a table of the formula's values at 0..max rank, the same
    bits as computing it per row."""
    ranks = np.asarray(ranks)
    if ranks.dtype.kind in "iu" and len(ranks) and ranks.min() >= 1 and ranks.max() < len(ranks):
        table = np.zeros(int(ranks.max()) + 1)  # at 0, no rank
        table[1:] = _weights_of(np.arange(1, len(table)))
        return table[ranks]
    return _weights_of(ranks)


def _weights_of(ranks: np.ndarray) -> np.ndarray:
    return 1.0 / np.log2(1.0 + np.asarray(ranks, dtype=np.float64))


def group_exposure(queries: np.ndarray, groups: np.ndarray, ranks: np.ndarray, num_queries: int,
                   num_groups: int, k: int | None = None) -> np.ndarray:
    """The (num_queries, num_groups) matrix of e_u(g) for one run's block of users.

    ``queries``, ``groups`` and ``ranks`` are aligned, one entry per retrieved item: the user's index
    (0..num_queries−1), the item's group code (0..num_groups−1, −1 for no group) and its rank (1 is the
    top). Items ranked below ``k`` (when given) and items of no group add nothing; a user with no
    entry has a row of zeros."""
    queries = np.asarray(queries, dtype=np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    ranks = np.asarray(ranks)
    kept = groups >= 0
    if k is not None:
        kept &= ranks <= k
    if not kept.all():
        queries, groups, ranks = queries[kept], groups[kept], ranks[kept]
    cells = queries * num_groups + groups
    sums = np.bincount(cells, weights=exposure_weight(ranks), minlength=num_queries * num_groups)
    return sums.reshape(num_queries, num_groups)


def run_exposure(exposure: np.ndarray) -> np.ndarray:
    """E(g) = Σ_u e_u(g): the run's total exposure per group, (…, Q, G) -> (…, G)."""
    return exposure.sum(axis=-2)


def worst_off_first(exposure: np.ndarray) -> np.ndarray:
    """Each row of exposures sorted ascending: the worst-off group first."""
    return np.sort(exposure, axis=-1)


def compare_sorted(x: np.ndarray, y: np.ndarray, tolerance: float = DEFAULT_TOLERANCE) -> np.ndarray:
    """sgn(x_j − y_j) at the first j (last axis) where |x_j − y_j| > tolerance, 0 if none, as int8.

    ``x`` and ``y`` are exposure vectors already sorted worst-off first (:func:`worst_off_first`);
    their leading axes broadcast."""
    difference = x - y
    differs = np.abs(difference) > tolerance
    if difference.shape[-1] == 0:
        return np.zeros(difference.shape[:-1], dtype=np.int8)
    first = np.argmax(differs, axis=-1)[..., None]
    sign = np.sign(np.take_along_axis(difference, first, axis=-1)[..., 0])
    return np.where(np.take_along_axis(differs, first, axis=-1)[..., 0], sign, 0).astype(np.int8)


def compare_pairs(exposures: np.ndarray, pairs: np.ndarray,
                  tolerance: float = DEFAULT_TOLERANCE) -> np.ndarray:
    """The worst-off-first preference of every pair of runs on every user: (P, Q) int8.

    ``exposures``: (R, Q, G), run r's :func:`group_exposure` matrix; ``pairs``: (P, 2) run indices
    (x, y); +1 where x is preferred. Each run is sorted once, however many pairs it is in."""
    ordered = worst_off_first(np.asarray(exposures, dtype=np.float64))
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return compare_sorted(ordered[pairs[:, 0]], ordered[pairs[:, 1]], tolerance)
