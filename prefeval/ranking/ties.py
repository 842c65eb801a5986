"""Orders of tied documents: where the relevant documents of a tie group can be, and how likely.

A run may give several documents of a query the same score. trec_eval (and ``--ties docid``) orders
them by docid; any other order is as defensible. The positions built with ``ties=True`` say, for
every relevant document, which *tie group* it is in (:class:`~prefeval.ranking.positions.TieGroups`):
n documents at ranks s .. s + n − 1, r of them documents of the segment, which are its elements a + 1
.. a + r (a = the segment's documents ranked above the group) in any order of the group. This module
turns that into what the measures under ``--ties expected`` and ``--ties range`` need
(:mod:`prefeval.measures.ties`).

**Uniformly random orders** (McSherry and Najork, "Computing Information Retrieval Performance
Measures Efficiently in the Presence of Tied Scores", ECIR 2008). When each group is ordered
uniformly at random, independently per run and query, the r documents occupy a uniformly random
r-subset of the n slots; the j-th of them (the element of place j) sits at slot t with probability

    P(t | j) = C(t − 1, j − 1) · C(n − t, r − j) / C(n, r),     t = j .. n − r + j,

(j − 1 of the others in the t − 1 slots above, r − j in the n − t below), so at rank s − 1 + t. Any
one document of the group is the j-th with probability 1/r, and its grade is independent of its
place: the documents' grades are shuffled over the places uniformly. Only ranks within the run's
retrieved list count: a slot beyond it (a group that straddles ``--topk``) is rank ``inf``.

**Extreme orders.** For a measure that values a document by a gain (1 for every relevant document
of a binary measure, the grade, or a gain map's value, negative or not), the best order of a group
sorts its n documents by gain, descending, the n − r documents that are not the segment's having gain
0: positive gains first, largest first, then the gains of 0, then the negative gains, smallest last;
the worst order is the reverse (:func:`extreme_order`). A group's order changes no rank outside the
group, so these orders give each metric's minimum and maximum over all tie orders, each group on its
own, for the metrics for which some order is the best whatever the others are:

* a sum over documents of gain × w(rank), w non-increasing and >= 0 (0 for a document not
  retrieved), over a normalisation the order does not change (DCG, nDCG, CG, nDCG with 2^g − 1,
  RBP, trec_eval's rbp, each DCG(t) of Rndcg): by the rearrangement inequality;
* the cascades pFound and ERR, whose i-th document adds p_i · Π_{j<i} (1 − p_j) · w(x_i), with p
  growing with the grade and w decreasing: two adjacent documents in order of decreasing p add
  (p_a − p_b)(w(x) − w(x + 1)) · Π more than in the other order, so sorting never lowers the value;
* ndcg_rel with gains >= 0 (each ratio DCG(x)/IDCG(x) at a document is >= 0, and grows when a
  larger gain moves above the document) and Compat (a document of higher grade has the smaller rank
  in the ideal ranking it is compared with), by the same exchange of two adjacent documents;
* the binary metrics that are monotone in the ranks of the relevant documents (a relevant document
  moved up never lowers them): AP, P@k, RR, AUC given the number of items, ...

:func:`prefeval.measures.ties.check_measures` refuses the metrics for which no order is best (module
:mod:`prefeval.measures.ties`); the tests check every other one against every order of small random
collections.

**Enumerated and drawn orders** give whole position vectors, for the measures that are not sums
over relevant documents (the lexicographic preferences): :func:`enumerate_orders` lists every
distinct order of a run on a query (only the subset of slots the relevant documents take matters),
:func:`draw_orders` draws them uniformly.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from itertools import combinations
from typing import NamedTuple

import numpy as np

from prefeval.ranking.positions import Positions, TieGroups, segment_cumsum
from prefeval.runtime.memory import STEP_ELEMENTS


def ties_of(positions: Positions) -> TieGroups:
    """The tie groups of ``positions``, which must have been built with ``ties=True``."""
    if positions.ties is None:
        raise ValueError("these positions were built without their tie groups (ties=True)")
    return positions.ties


def retrieved_per_element(positions: Positions) -> np.ndarray:
    """The number of documents the run retrieved for each element's query, R × N."""
    return positions.per_element(positions.num_retrieved[:, positions.query])


def slot_rank(positions: Positions, slot: np.ndarray) -> np.ndarray:
    """The rank of slot ``slot`` (1-based, broadcasting with R × N) of each element's group:
    s − 1 + slot, or ``inf`` beyond the run's retrieved list."""
    ranks = ties_of(positions).start - 1.0 + slot
    return np.where(ranks <= retrieved_per_element(positions), ranks, np.inf)


def width(ties: TieGroups) -> np.ndarray:
    """How many slots the element of each place can take: n − r + 1 (1 for an element in no group,
    or in a group of the segment's documents only)."""
    return ties.size - ties.relevant + 1


@lru_cache(maxsize=4)
def _log_factorials(count: int) -> np.ndarray:
    from scipy.special import gammaln  # here: scipy takes longer to import than most evaluations take

    table = gammaln(np.arange(count + 1, dtype=np.float64) + 1.0)
    table.flags.writeable = False
    return table


def log_binomial(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log C(n, k) for integers 0 <= k <= n (elementwise)."""
    n, k = np.asarray(n, dtype=np.int64), np.asarray(k, dtype=np.int64)
    table = _log_factorials(int(n.max(initial=1)))
    return table[n] - table[k] - table[n - k]


def slot_probability(place: np.ndarray, relevant: np.ndarray, size: np.ndarray, slot: np.ndarray) -> np.ndarray:
    """P(t = slot | j = place) for a group of ``size`` n slots holding ``relevant`` r of the segment's
    documents (module docstring); 0 outside j <= t <= n − r + j. Arguments broadcast."""
    place, relevant, size, slot = np.broadcast_arrays(*(np.asarray(a, dtype=np.int64)
                                                        for a in (place, relevant, size, slot)))
    inside = (slot >= place) & (slot - place <= size - relevant)
    t = np.where(inside, slot, place)
    log_p = (log_binomial(t - 1, place - 1) + log_binomial(size - t, relevant - place)
             - log_binomial(size, relevant))
    return np.where(inside, np.exp(log_p), 0.0)


def extreme_order(positions: Positions, best: bool, split: CutoffSplit | None = None,
                  gains: np.ndarray | None = None) -> Positions:
    """``positions`` with every tie group in its best order or its worst for a measure whose
    documents have ``gains`` (R × N, one per element; None: 1 for each, the binary measures): ranks
    and grades of the elements (module docstring, "Extreme orders").

    The best order sorts the group's n documents by gain, descending, the n − r documents outside
    the segment having gain 0: the elements of positive gain take the first slots, those of gain 0
    the next ones (above the documents outside the segment), those of negative gain the last slots.
    The worst order is the reverse: by gain ascending, negative gains first, then the documents
    outside the segment, then the elements of gain 0 and the positive ones. Within a group, the
    element of place j (after sorting) takes slot j, or j + n − r when it goes below the documents
    outside the segment; elements of equal gain keep their order.

    With a :class:`CutoffSplit` (whose positions these are), a group that straddles the end of the
    list keeps h of its elements within it (the h first after sorting: the h largest gains in the
    best order, the h smallest in the worst), among its n1 slots there, the others out: slot j, or
    j + n1 − h below the documents outside the segment."""
    ties = ties_of(positions)
    gains = np.ones(positions.ranks.shape) if gains is None else np.broadcast_to(gains, positions.ranks.shape)
    # the elements of each group sorted by gain (groups are runs of places 1..r along each row)
    group = np.cumsum((ties.place == 1).ravel())
    order = np.lexsort((-gains.ravel() if best else gains.ravel(), group))
    negative = (gains.ravel()[order] < 0).reshape(positions.ranks.shape)
    below = negative if best else ~negative  # below the group's documents outside the segment
    slot = ties.place + np.where(below, ties.size - ties.relevant, 0)
    if split is not None:
        cut = split.h >= 0
        within_slot = ties.place + np.where(below, split.within - split.h, 0)
        slot = np.where(cut, np.where(ties.place <= split.h, within_slot, np.inf), slot)
    ranks = np.where(ties.size > 1, slot_rank(positions, slot), positions.ranks)
    return with_ranks(positions, ranks)._replace(grades=positions.grades.ravel()[order].reshape(positions.grades.shape))


def with_ranks(positions: Positions, ranks: np.ndarray) -> Positions:
    """``positions`` with other ranks of the same documents; the number of items each run ranks
    (retrieved documents plus unretrieved relevant ones) follows the documents that moved out of
    (or into) the retrieved list, which only a group straddling ``--topk`` allows. A query's documents
    are those of its first segment (all of them, in graded positions)."""
    moved = positions.segment_sum(np.isinf(ranks).astype(np.int64) - np.isinf(positions.ranks))
    first_segment = np.searchsorted(positions.query, np.arange(positions.num_queries))
    return positions._replace(ranks=ranks, num_items=positions.num_items + moved[:, first_segment])


class CutoffSplit(NamedTuple):
    """One-run positions (:meth:`~prefeval.ranking.positions.Positions.gather`) in which every query
    whose last group straddles the end of the retrieved list (``--topk``) is repeated once per value
    of h, the number of the group's relevant documents that fall within the list, so that each
    repetition has a fixed number of ranked items (the retrieved documents plus the unretrieved
    relevant ones, which AUC's shares read).

    ``source[k]``: the query of the gathered positions that query k repeats. Per element: ``h`` of
    its repetition for the elements of the straddling group (−1 elsewhere), ``within`` the number of
    the group's slots within the list, n1 = K − s + 1, and ``weight``, P(h) for the other elements
    of a repeated query (1 elsewhere). The element of place j at slot t <= n1 has the r − j relevant
    documents after it in a uniformly random subset of the n − t slots below it, so

        P(h | j, t) = C(n1 − t, h − j) · C(n − n1, r − h) / C(n − t, r − j),

    and Σ_h P(t | j) P(h | j, t) = P(t | j): over the repetitions, each slot keeps its probability.
    """

    positions: Positions
    source: np.ndarray
    h: np.ndarray
    within: np.ndarray
    weight: np.ndarray

    @classmethod
    def of(cls, gathered: Positions) -> CutoffSplit:
        ties = ties_of(gathered)
        retrieved = retrieved_per_element(gathered)
        cut = ((ties.place == 1) & (ties.size > 1) & (ties.start + ties.size - 1 > retrieved))[0]
        count = len(gathered.length)
        if not cut.any():
            nothing = np.full(gathered.ranks.shape, -1)
            return cls(gathered, np.arange(count), nothing, nothing, np.ones(gathered.ranks.shape))
        straddling = dict(zip(np.repeat(np.arange(count), gathered.length)[cut].tolist(), np.flatnonzero(cut).tolist()))
        sources, splits = [], []
        for query in range(count):
            element = straddling.get(query)
            if element is None:
                sources.append(query)
                splits.append(None)
                continue
            n, r = int(ties.size[0, element]), int(ties.relevant[0, element])
            within = int(retrieved[0, element] - ties.start[0, element] + 1)
            for h in range(max(0, r - (n - within)), min(r, within) + 1):
                sources.append(query)
                chance = np.exp(log_binomial(within, h) + log_binomial(n - within, r - h) - log_binomial(n, r))
                splits.append((element, r, within, h, float(chance)))
        sources = np.array(sources)
        split = gathered.gather(np.zeros(len(sources), dtype=np.int64), sources)
        h = np.full(split.ranks.shape, -1)
        within_list = np.full(split.ranks.shape, -1)
        weight = np.ones(split.ranks.shape)
        for number, details in enumerate(splits):
            if details is None:
                continue
            element, r, within, chosen, chance = details
            q0, q1 = int(split.start[number]), int(split.start[number] + split.length[number])
            e0 = q0 + element - int(gathered.start[sources[number]])
            weight[0, q0:q1] = chance
            weight[0, e0:e0 + r] = 1.0
            h[0, e0:e0 + r], within_list[0, e0:e0 + r] = chosen, within
            # ranks as in one order of the repetition (its first h documents within the list)
            unretrieved_now = int(np.isinf(split.ranks[0, e0:e0 + r]).sum())
            split.ranks[0, e0:e0 + r] = np.where(np.arange(1, r + 1) <= chosen,
                                                 split.ties.start[0, e0] - 1.0 + np.arange(1, r + 1), np.inf)
            split.num_items[0, number] += (r - chosen) - unretrieved_now
        return cls(split, sources, h, within_list, weight)

    def probability(self, elements: np.ndarray, slot: np.ndarray) -> np.ndarray:
        """The factor of the probability of element ``elements[k]`` (numbered along the one run) at
        slot ``slot[k]`` in its repetition: P(h | j, t) in a straddling group (0 beyond the list),
        P(h) or 1 elsewhere."""
        ties = ties_of(self.positions)
        h, within, weight = self.h[0, elements], self.within[0, elements], self.weight[0, elements]
        split = h >= 0
        if not split.any():
            return weight
        place, relevant, size = ties.place[0, elements], ties.relevant[0, elements], ties.size[0, elements]
        h_, within_ = np.where(split, h, place), np.where(split, within, size)
        possible = split & (slot <= within_) & (h_ >= place) & (h_ - place <= within_ - slot)
        possible &= (relevant - h_ <= size - within_)
        # elsewhere any values that keep every binomial defined: t = j, h = r, n1 = n
        t, hh, ww = np.where(possible, slot, place), np.where(possible, h_, relevant), np.where(possible, within_, size)
        chance = np.exp(log_binomial(ww - t, hh - place) + log_binomial(size - ww, relevant - hh)
                        - log_binomial(size - t, relevant - place))
        return np.where(split, np.where(possible, chance, 0.0), weight)


def log_order_counts(positions: Positions) -> np.ndarray:
    """log of the number of distinct position vectors of each run on each segment over all tie
    orders, Π C(n, r) over its groups: (R, S)."""
    ties = ties_of(positions)
    first = (ties.place == 1) & (ties.size > 1)
    counts = np.where(first, log_binomial(ties.size, np.minimum(ties.relevant, ties.size)), 0.0)
    return positions.segment_sum(counts)


def _groups_of_segment(ties: TieGroups, run: int, e0: int, e1: int) -> list[tuple[int, int, int, float]]:
    """The groups of run ``run`` among elements e0..e1 whose order matters: (first element, r, n,
    start), r < n."""
    places = ties.place[run, e0:e1]
    firsts = np.flatnonzero((places == 1) & (ties.relevant[run, e0:e1] < ties.size[run, e0:e1]))
    return [(e0 + int(f), int(ties.relevant[run, e0 + f]), int(ties.size[run, e0 + f]),
             float(ties.start[run, e0 + f])) for f in firsts]


def enumerate_orders(positions: Positions, run: int, segment: int) -> np.ndarray:
    """Every distinct position vector of run ``run`` on segment ``segment`` over the orders of its
    tie groups, (C, m): each group's documents take each r-subset of its n slots once (the order
    among them does not change the vector)."""
    ties = ties_of(positions)
    e0 = int(positions.start[segment])
    e1 = e0 + int(positions.length[segment])
    groups = _groups_of_segment(ties, run, e0, e1)
    retrieved = positions.num_retrieved[run, positions.query[segment]]
    subsets = [np.array(list(combinations(range(1, n + 1), r)), dtype=np.float64).reshape(-1, r)
               for _, r, n, _ in groups]
    count = int(np.prod([len(s) for s in subsets], dtype=np.int64))
    ranks = np.tile(positions.ranks[run, e0:e1], (count, 1))
    stride = count
    for (first, r, _, start), chosen in zip(groups, subsets):
        stride //= len(chosen)
        which = (np.arange(count) // stride) % len(chosen)
        ranks[:, first - e0:first - e0 + r] = start - 1.0 + chosen[which]
    ranks[ranks > retrieved] = np.inf
    return ranks


def draw_orders(rng: np.random.Generator, positions: Positions, runs: np.ndarray, segment: int,
                draws: int) -> np.ndarray:
    """``draws`` position vectors of each run of ``runs`` on segment ``segment``, every group
    ordered uniformly at random (the runs in turn, from one stream): (runs, draws, m)."""
    ties = ties_of(positions)
    e0 = int(positions.start[segment])
    e1 = e0 + int(positions.length[segment])
    width_ = e1 - e0
    ranks = np.repeat(positions.ranks[runs, None, e0:e1], draws, axis=1)
    groups = [(number, *group) for number, run in enumerate(runs) for group in _groups_of_segment(ties, run, e0, e1)]
    if groups:
        number, first, relevant, size, start = (np.array(column) for column in zip(*groups))
        slots = random_subsets(rng, relevant, size, draws)
        columns = np.repeat(number * width_ + first - e0, relevant) + _places(relevant)
        flat = ranks.transpose(1, 0, 2).reshape(draws, -1)
        flat[:, columns] = np.repeat(start, relevant) - 1.0 + slots
        retrieved = positions.num_retrieved[runs, positions.query[segment]].astype(np.float64)
        ranks = flat.reshape(draws, len(runs), width_).transpose(1, 0, 2)
        ranks = np.where(ranks > retrieved[:, None, None], np.inf, ranks)
    return ranks


def _places(relevant: np.ndarray) -> np.ndarray:
    """0, 1, .., r − 1 for each group in turn."""
    return np.arange(int(relevant.sum())) - np.repeat(np.cumsum(relevant) - relevant, relevant)


def random_subsets(rng: np.random.Generator, relevant: np.ndarray, size: np.ndarray, draws: int) -> np.ndarray:
    """For each of G groups, ``draws`` uniformly random ``relevant``-subsets of the slots 1 ..
    ``size``, sorted: (draws, Σ r), the groups' slots side by side.

    Groups where r > n / 2 draw the complement. Each subset is drawn as r independent uniform slots,
    of which every repeated one (all occurrences but the first) is drawn again until none repeats:
    the rule looks only at which draws are equal, never at their values, so the distribution of the
    final set is invariant under any permutation of the slots, which makes it uniform over the
    r-subsets; with r <= n / 2 a redraw repeats with probability below 1/2, so few rounds are needed.
    """
    relevant, size = np.asarray(relevant, dtype=np.int64), np.asarray(size, dtype=np.int64)
    complement = 2 * relevant > size
    drawn = np.where(complement, size - relevant, relevant)
    group = np.repeat(np.arange(len(size)), drawn)
    high = np.repeat(size, drawn)
    slots = rng.integers(0, high, size=(draws, len(high)))
    key_base = group * (int(size.max(initial=1)) + 1)
    while True:
        keys = key_base + slots
        order = np.argsort(keys, axis=1, kind="stable")
        ordered = np.take_along_axis(keys, order, axis=1)
        repeated = np.zeros(slots.shape, dtype=bool)
        repeated[:, 1:] = ordered[:, 1:] == ordered[:, :-1]
        if not repeated.any():
            break
        rows, places = np.nonzero(repeated)
        columns = order[rows, places]
        slots[rows, columns] = rng.integers(0, high[columns])
    if complement.any():
        chosen = np.zeros((draws, int(size.sum())), dtype=bool)
        offset = np.repeat(np.cumsum(size) - size, drawn)
        chosen[np.arange(draws)[:, None], offset + slots] = True
        chosen ^= np.repeat(complement, size)[None, :]  # the complement's groups: the slots not drawn
        _, within = np.nonzero(chosen)
        slot_of = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
        return (slot_of[within].reshape(draws, int(relevant.sum())) + 1).astype(np.float64)
    ordered = np.sort(key_base + slots, axis=1) - key_base
    return (ordered + 1).astype(np.float64)


def expected_signs(positions: Positions, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """E[sgn(y_i − x_i)] for every pair (x: row ``first[p]``, y: row ``second[p]``) and element of
    ``positions`` over uniformly random tie orders, the two runs' orders independent: (P, N)
    (:meth:`RankDistributions.expected_signs`).

    An element's rank distribution has n − r + 1 values, so a query's take Σ over its elements,
    r (n − r + 1) for a group of n documents, r of them relevant: 40 million for 40,000 tied documents
    of which 1,000 are relevant. They are made for blocks of consecutive elements holding at most
    :data:`~prefeval.runtime.memory.STEP_ELEMENTS` values over the runs (an element with more makes
    a block of its own), used, and dropped, and the pairs' sums are taken in blocks of as many terms
    (:meth:`RankDistributions.expected_signs`), so that memory does not grow with the groups. Each
    element's distribution and each (pair, element) sum is computed on its own, in the same order,
    whatever the blocks: the values are those of one block, to the last bit."""
    ties = ties_of(positions)
    retrieved = retrieved_per_element(positions)
    sizes = np.where(ties.size > 1, width(ties), 1).sum(axis=0)
    signs = np.zeros((len(first), positions.ranks.shape[1]))
    for e0, e1 in bounded_ranges(sizes, STEP_ELEMENTS):
        block = RankDistributions.of(ties.columns(e0, e1), positions.ranks[:, e0:e1], retrieved[:, e0:e1])
        signs[:, e0:e1] = block.expected_signs(first, second)
    return signs


def bounded_ranges(sizes: np.ndarray, limit: int) -> Iterator[tuple[int, int]]:
    """Consecutive ranges (start, stop) covering the indices of ``sizes`` in order, each holding
    sizes that add up to at most ``limit``, or a single index whose size alone is larger."""
    ends = np.cumsum(sizes)
    start = 0
    while start < len(ends):
        before = int(ends[start - 1]) if start else 0
        stop = max(int(np.searchsorted(ends, before + limit, side="right")), start + 1)
        yield start, stop
        start = stop


class RankDistributions(NamedTuple):
    """The distribution of every element's rank over uniformly random tie orders, R × N: ranks
    ``low`` + u for u = 0 .. ``width`` − 1 (``inf`` beyond the run's ``retrieved`` list), with
    cumulative probabilities ``cdf[offset + u]`` = P(rank <= low + u). An element in no group, or in
    a group of the segment's documents only, has one rank (width 1, maybe ``inf``)."""

    low: np.ndarray
    width: np.ndarray
    offset: np.ndarray
    cdf: np.ndarray
    retrieved: np.ndarray

    @classmethod
    def of(cls, ties: TieGroups, ranks: np.ndarray, retrieved: np.ndarray) -> RankDistributions:
        """The distributions of elements whose tie groups are ``ties``, ranked at ``ranks`` in
        trec_eval's order, in lists of ``retrieved`` documents (:func:`retrieved_per_element`), R × N'
        each (some or all of the elements of positions: each element's distribution is its own)."""
        grouped = ties.size > 1
        widths = np.where(grouped, width(ties), 1)
        low = np.where(grouped, ties.start - 1.0 + ties.place, ranks)
        total = int(widths.sum())
        offset = (np.cumsum(widths) - widths.ravel()).reshape(widths.shape)
        element = np.repeat(np.arange(widths.size), widths.ravel())
        u = np.arange(total) - offset.ravel()[element]
        flat = (ties.place.ravel()[element], ties.relevant.ravel()[element], ties.size.ravel()[element])
        probability = np.where(grouped.ravel()[element], slot_probability(*flat, flat[0] + u), 1.0)
        # each element's distribution summed on its own (in extended precision, as it always was)
        cdf = segment_cumsum(probability, offset.ravel(), widths.ravel(), np.longdouble).astype(np.float64)
        return cls(low, widths, offset, np.minimum(cdf, 1.0), retrieved)

    def at_most(self, rows: np.ndarray, columns: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """P(rank of element (row, column) <= ``rank``) for finite ``rank``; for ``rank`` = inf, the
        probability that it is retrieved at all. Arguments broadcast."""
        low, retrieved = self.low[rows, columns], self.retrieved[rows, columns]
        span = np.minimum(rank, retrieved) - low
        u = np.clip(np.where(np.isfinite(span), span, -1.0), -1.0, self.width[rows, columns] - 1.0).astype(np.int64)
        values = self.cdf[self.offset[rows, columns] + np.maximum(u, 0)]
        return np.where(u >= 0, values, 0.0)

    def expected_signs(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """E[sgn(y_i − x_i)] for every pair (x: row ``first[p]``, y: row ``second[p]``) and element:
        (P, N), the two runs' tie orders independent.

        For x at rank v: P(y > v) − P(y < v) = 1 − F_y(v) − F_y(v − 1) with F_y(v) = P(y <= v), and
        −P(y retrieved) at v = inf (sgn(inf − inf) = 0). The sum over v runs over the values of the
        element with fewer of them (sgn(x − y) = −sgn(y − x)), so a run without ties costs one term;
        the (pair, element) sums are taken in blocks of at most
        :data:`~prefeval.runtime.memory.STEP_ELEMENTS` terms (one sum with more makes a block of its
        own), each sum over its own terms in order, whatever the blocks.
        """
        num_elements = self.low.shape[1]
        signs = np.zeros((len(first), num_elements))
        x_width, y_width = self.width[first], self.width[second]
        fixed = (x_width == 1) & (y_width == 1)
        x_point = np.where(self.low[first] <= self.retrieved[first], self.low[first], np.inf)
        y_point = np.where(self.low[second] <= self.retrieved[second], self.low[second], np.inf)
        signs[fixed] = ((x_point < y_point).astype(np.float64) - (x_point > y_point))[fixed]
        pair, column = np.nonzero(~fixed)
        if len(pair):
            swap = x_width[pair, column] > y_width[pair, column]
            spread = np.where(swap, second[pair], first[pair])
            other = np.where(swap, first[pair], second[pair])
            terms = self.width[spread, column]
            expected = np.zeros(len(pair))
            for i0, i1 in bounded_ranges(terms, STEP_ELEMENTS):
                expected[i0:i1] = self._expected_sign(spread[i0:i1], other[i0:i1], column[i0:i1], terms[i0:i1])
            signs[pair, column] = np.where(swap, -expected, expected)
        return signs

    def _expected_sign(self, spread: np.ndarray, other: np.ndarray, column: np.ndarray,
                       terms: np.ndarray) -> np.ndarray:
        """E[sgn(b − a)] of the elements (``spread[k]``, ``column[k]``) = a and (``other[k]``,
        ``column[k]``) = b, summed over the ``terms[k]`` values of a (its width)."""
        term = np.repeat(np.arange(len(terms)), terms)
        u = np.arange(int(terms.sum())) - np.repeat(np.cumsum(terms) - terms, terms)
        rows, columns = spread[term], column[term]
        cdf_at = self.offset[rows, columns] + u
        probability = self.cdf[cdf_at] - np.where(u > 0, self.cdf[cdf_at - 1], 0.0)
        value = self.low[rows, columns] + u
        value = np.where(value <= self.retrieved[rows, columns], value, np.inf)
        other_rows = other[term]
        finite = np.isfinite(value)
        beaten = np.where(finite, 1.0 - self.at_most(other_rows, columns, value)
                          - self.at_most(other_rows, columns, value - 1.0),
                          -self.at_most(other_rows, columns, np.inf))
        return np.bincount(term, weights=probability * beaten, minlength=len(terms))
