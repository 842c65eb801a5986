"""Measures over the orders of tied documents: ``eval --ties expected`` and ``--ties range``.

By default (``docid``) equal scores are ordered by docid, as trec_eval orders them. The other two
policies consider every order of every tie group (:mod:`prefeval.ranking.ties` for the groups, the
rank distributions and the extreme orders):

**expected**: each measure's expectation when every group is ordered uniformly at random,
independently per run and query (McSherry and Najork, "Computing Information Retrieval Performance
Measures Efficiently in the Presence of Tied Scores", ECIR 2008). Exact for

* every additive metric (:class:`~prefeval.measures.base.AdditiveMetric`): value = Σ_i share_i, so
  E[value] = Σ over the documents outside groups of their share, plus, for each group (start s, n
  documents, r of them relevant, a relevant ones above it), Σ_j Σ_t P(t | j) · mean over the group's
  documents d of share(index a + j, rank s − 1 + t, grade g_d): a document is the j-th of its group
  with probability 1/r whatever its grade. The mean over grades is taken level by level (the weight
  of grade g is the share of the group's documents that have it), and only for metrics that read
  the grades. The shares are the metric's own (:meth:`~prefeval.measures.base.AdditiveMetric.shares`),
  evaluated at every slot;
* pFound, whose share depends on the grades of the documents above: derived in closed form (see
  :func:`_expected_pfound`), not enumerated;
* the three RPP measures: RPP = Σ_i w_i sgn(y_i − x_i) is linear in the signs, the two runs are
  independent, so E[RPP] is RPP of the expected signs E[sgn(y_i − x_i)], from the two marginal
  distributions of the i-th relevant rank (:func:`~prefeval.ranking.ties.expected_signs`);
  graded RPP per grade level, with r counted per level.

The lexicographic preferences depend on the whole position vectors. For a pair and query whose
joint number of orders (Π C(n, r) over both runs' groups) is at most ``draws``, every joint order is
enumerated and the expectation is exact; otherwise it is the mean over ``draws`` joint orders drawn
uniformly (each run's groups independently), with its standard error sqrt(s² / draws) (s² the
variance of the draws, ddof = 1). Draws come from a generator per sample and query seeded from the
evaluation's seed, so they do not depend on how queries are split among processes. Metric deltas on
pair lines are differences of expectations.

**range**: each measure's minimum and maximum over all tie orders. A metric takes them in the best
and the worst order of every group for its gains (:func:`order_gains`,
:func:`~prefeval.ranking.ties.extreme_order`): the group's documents sorted by the metric's gain
(its gain map's, the grade, or 1 for a binary metric; the documents that are not relevant having
gain 0, so that a negative gain goes below them in the best order and above them in the worst), and
min and max of the two values are taken. This holds for every metric that some order of a group
maximises whatever the other groups are (:mod:`prefeval.ranking.ties` says which and why);
:func:`check_measures` refuses the others (:func:`_no_extreme_orders`). RPP, lexiprecision and
lexirecall are monotone in each run's ranks (worse ranks for x never raise the preference for x), so
their minimum is at x worst and y best, their maximum at x best and y worst, both attained.
rrlexiprecision is not monotone (x = (9, 10) against y = (10, 100) gives 1/9 − 1/10, but x = (10,
11) gives 1/11 − 1/100): its extremes come from :func:`rr_lexiprecision_bounds`. A pair's metric
delta ranges over [min x − max y, max x − min y]. Orders are independent per run and query, so the
bounds of a mean over queries are the means of the bounds, attained together, and a run's worst
order is the same in all of its pairs.

**A group across the cut-off** (``--topk K``, a group that holds rank K): the documents an order
puts beyond K are not retrieved, which every measure reads as rank inf. AUC also reads how many items
the run ranks (its retrieved documents plus the unretrieved relevant ones), which then depends on
the order; both policies condition on how many of the group's relevant documents stay within K
(:class:`~prefeval.ranking.ties.CutoffSplit`), which keeps them exact, and ``range`` takes the
extremes given that number, then over it (AUC is not monotone across K).

The tests compare both policies with every order of every group, on small random collections.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from prefeval.errors import UsageError, shown
from prefeval.io.codes import distinct
from prefeval.io.keys import bound_keys, error_key, flip_key
from prefeval.measures.base import AdditiveMetric, Measure, Metric, Preference
from prefeval.measures.gain_discount import PFound
from prefeval.measures.gains import GAINS, GainShortfall, NDCGOverRelevant, gain_map
from prefeval.measures.judged import Accuracy
from prefeval.measures.judgments import JudgmentMetric
from prefeval.measures.preferences import (
    Comparison,
    LexiPrecision,
    LexiRecall,
    RecallPairedPreference,
    RRLexiPrecision,
)
from prefeval.measures.shares import product_of_earlier, within
from prefeval.ranking.positions import Positions
from prefeval.ranking.ties import (
    CutoffSplit,
    draw_orders,
    enumerate_orders,
    expected_signs,
    extreme_order,
    log_binomial,
    log_order_counts,
    retrieved_per_element,
    slot_probability,
    ties_of,
    width,
)
from prefeval.runtime.memory import MAX_TIE_DRAWS, STEP_ELEMENTS, check_count

DOCID, EXPECTED, RANGE = "docid", "expected", "range"
TIE_POLICIES = (DOCID, EXPECTED, RANGE)
"""``--ties``: trec_eval's docid order (the default), the expectation over random orders, the range."""

DEFAULT_DRAWS = 200
"""Monte Carlo draws per pair and query for the lexicographic preferences under ``--ties expected``
(and the most joint orders enumerated instead). With 200, the standard error of a mean preference
over robust03's 100 queries stays below 0.004, and ``--ties expected`` within twice the time of the
default (docs/ties.md)."""


MONOTONE_PREFERENCES = (RecallPairedPreference, LexiPrecision, LexiRecall)
"""Preferences whose extremes over tie orders are at (x worst, y best) and (x best, y worst)."""


def check_policy(ties: str, draws: int) -> None:
    """A :class:`UsageError` unless ``ties`` is a policy and ``draws`` an integer of at least 2."""
    if ties not in TIE_POLICIES:
        raise UsageError(f"ties must be one of {', '.join(TIE_POLICIES)}, not {shown(ties)}")
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 2:
        raise UsageError(f"draws must be an integer of at least 2 (for a standard error), not {shown(draws)}")
    check_count("--draws", int(draws), MAX_TIE_DRAWS, "a query's random tie orders are held at once, 8 bytes × runs "
                "× relevant documents × draws, twice: 840 MB for robust03's 17 runs at the bound")


def check_measures(ties: str, measures: Sequence[Measure]) -> None:
    """A :class:`UsageError` for a measure that ``ties`` cannot handle."""
    for measure in measures:
        if ties != DOCID and isinstance(measure, JudgmentMetric):
            raise UsageError(f"--ties {ties} does not apply to {measure.name}, which reads {measure.judgments}: "
                             "documents of equal scores are ordered as trec_eval orders them; use --ties docid")
        if ties != DOCID and measure.reads_intents:
            raise UsageError(f"--ties {ties} does not apply to {measure.name}, which reads the judgments per subtopic; "
                             "use --ties docid")
        if ties != DOCID and measure.reads_items is not None:
            raise UsageError(f"--ties {ties} does not apply to {measure.name}, which reads the items of the lists "
                             "as trec_eval orders them; use --ties docid")
        if ties != DOCID and (measure.reads_judged or measure.judged_only):
            raise UsageError(f"--ties {ties} does not apply to {measure.name}, which reads the judged documents "
                             "that are not relevant; use --ties docid")
        if ties == EXPECTED and isinstance(measure, Metric) and not isinstance(measure, AdditiveMetric):
            raise UsageError(f"--ties expected needs metrics that are sums over relevant documents; "
                             f"{measure.name} is not")
        if ties == RANGE and isinstance(measure, Preference) and not isinstance(
                measure, (*MONOTONE_PREFERENCES, RRLexiPrecision)):
            raise UsageError(f"--ties range does not know the extremes of {measure.name}")
        reason = _no_extreme_orders(measure) if ties == RANGE else None
        if reason:
            raise UsageError(f"--ties range does not know the extremes of {measure.name}: {reason}; "
                             "use --ties docid")


def _no_extreme_orders(measure: Measure) -> str | None:
    """Why no order of a tie group is the best (or the worst) for ``measure`` whatever the others,
    so that :func:`metric_bounds` would not bound it; None for the metrics it bounds (module
    docstring). Found against every order of small random collections (``tests/test_ties_bounds``):

    * trec_eval's G divides a gain by log2(2 + C(x) − S(x)), the shortfall of the run's cumulated
      gain from the ideal's at its rank: a larger gain above a document shrinks the shortfall, and
      can lower the total;
    * ndcg_rel with a negative gain: its ratio DCG(x)/IDCG(x) at a document of positive gain is
      negative below a negative gain, and moving that document up to a rank of smaller ideal DCG
      makes it more negative;
    * accuracy@k divides by the pairs within k: from k = 3 on, a relevant document pushed beyond k
      can leave fewer pairs misordered (relevant, non-relevant, relevant within 3 is 1/2; with the
      last one beyond 3, 1). Up to k = 2 it is monotone in the ranks."""
    if isinstance(measure, GainShortfall):
        return ("G discounts each gain by the cumulated gain's shortfall, for which no order of tied documents "
                "is always the best")
    if isinstance(measure, NDCGOverRelevant) and gain_map(measure).has_negative:
        return "with a negative gain, ndcg_rel is not monotone in the ranks"
    if isinstance(measure, Accuracy) and measure.param("k") >= 3:
        return "from a cut-off of 3 on, accuracy@k is not monotone in the ranks across it"
    return None


# --- metrics ---------------------------------------------------------------------------------------

def expected_metrics(measures: Sequence[AdditiveMetric], positions: Positions) -> dict[str, np.ndarray]:
    """E[metric] over uniformly random tie orders, (R, Q) per metric, from one-segment-per-query
    positions built with their tie groups (module docstring). Queries without ties keep their value;
    the others are gathered, one run at a time, and summed slot by slot (:func:`over_slots`), every
    metric in the same pass."""
    values = {measure.name: measure.compute(positions) for measure in measures}
    ties = ties_of(positions)
    runs, queries = np.nonzero(positions.segment_max(ties.size > 1) > 0)  # (an empty segment: -inf)
    if len(runs) == 0 or not measures:
        return values
    order = np.argsort(positions.segment_max(width(ties))[runs, queries], kind="stable")
    runs, queries = runs[order], queries[order]
    split = CutoffSplit.of(positions.gather(runs, queries))
    makers = [_pfound_decay(m) if isinstance(m, PFound) else functools.partial(_shares_at, m) for m in measures]
    for measure, per_element in zip(measures, over_slots(split, makers)):
        if isinstance(measure, PFound):
            per_element = _expected_pfound(split.positions, per_element)
        totals = split.positions.segment_sum(per_element)[0]
        values[measure.name][runs, queries] = np.bincount(split.source, weights=totals, minlength=len(runs))
    return values


def _shares_at(measure: AdditiveMetric, block: Positions) -> Callable[[np.ndarray], np.ndarray]:
    """The metric's shares at given ranks, each grouped document's grade averaged over its group's
    grades (level by level, weighted by the fraction of the group at the level) when the metric
    reads grades and a group mixes grades."""
    ties = ties_of(block)
    grouped = (ties.size > 1).ravel()
    group = np.cumsum((ties.place == 1).ravel()) - 1
    grades = block.grades.ravel()
    first = np.flatnonzero((ties.place == 1).ravel())
    if not measure.reads_grades or not (grouped & (grades != grades[first][group])).any():
        return lambda ranks: measure.shares(block, ranks)
    variants = []
    for level in distinct(grades):
        count = np.bincount(group, weights=grades == level, minlength=len(first))
        weight = np.where(grouped, count[group] / ties.relevant.ravel(), grades == level).reshape(block.grades.shape)
        level_grades = np.where(grouped, level, grades).reshape(block.grades.shape)
        variants.append((block._replace(grades=level_grades), weight))
    return lambda ranks: sum(weight * measure.shares(variant, ranks) for variant, weight in variants)


def over_slots(split: CutoffSplit, makers: Sequence[Callable[[Positions], Callable[[np.ndarray], np.ndarray]]],
               ) -> list[np.ndarray]:
    """E[value] of every element of ``split.positions`` (one run; its queries in increasing order
    of the most slots an element of theirs can take), 1 × N, for each way of valuing ranks: Σ_t
    P(t | j) · value(rank s − 1 + t) over the slots of the element's group (its own rank, with
    probability 1, for an element in no group), each repetition of a query split at the cut-off
    taking its share of the probability. ``maker(block)(ranks)`` gives the values of ranks shaped
    (slots, 1, elements of the block); the ranks and probabilities of a chunk of queries and slots
    are computed once for all of them, for the (slot, element) pairs that exist."""
    gathered = split.positions
    widest = gathered.segment_max(width(ties_of(gathered)))[0]
    results = [np.zeros(gathered.ranks.shape) for _ in makers]
    first = 0
    count = len(widest)
    while first < count:
        stop, elements = first + 1, int(gathered.length[first])
        while stop < count and (elements + gathered.length[stop]) * widest[stop] <= STEP_ELEMENTS:
            elements += int(gathered.length[stop])
            stop += 1
        block = gathered.query_block(first, stop)
        e0 = int(gathered.start[first])
        ties = ties_of(block)
        slots = width(ties)[0]
        retrieved = retrieved_per_element(block)[0]
        values = [make(block) for make in makers]
        totals = [np.zeros(block.ranks.shape) for _ in makers]
        step = max(STEP_ELEMENTS // max(elements, 1), 1)
        most = int(widest[first:stop].max())
        for offset in range(0, most, step):
            sheets = min(step, most - offset)
            u, element = np.nonzero(np.arange(offset, offset + sheets)[:, None] < slots)
            slot = ties.place[0, element] + offset + u
            probability = np.zeros((sheets, 1, len(slots)))
            ranks = np.full((sheets, 1, len(slots)), np.inf)
            probability[u, 0, element] = (slot_probability(ties.place[0, element], ties.relevant[0, element],
                                                           ties.size[0, element], slot)
                                          * split.probability(e0 + element, slot))
            rank = ties.start[0, element] - 1.0 + slot
            ranks[u, 0, element] = np.where(rank <= retrieved[element], rank, np.inf)
            for value, total in zip(values, totals):
                total += (probability * value(ranks)).sum(axis=0)
        for result, total in zip(results, totals):
            result[:, e0:e0 + total.shape[1]] = total
        first = stop
    return results


def _pfound_decay(measure: PFound) -> Callable[[Positions], Callable[[np.ndarray], np.ndarray]]:
    """pFound's discount of a rank within its cut-off, δ^(x − 1) (δ = 1 − pbreak): the A_j of
    :func:`_expected_pfound`, once summed over the slots."""
    k, pbreak = measure.param("k"), measure.param("pbreak")
    return lambda block: lambda ranks: np.where(within(ranks, k), (1.0 - pbreak) ** (ranks - 1.0), 0.0)


def _expected_pfound(gathered: Positions, a: np.ndarray) -> np.ndarray:
    """E[share] of every element of pFound, exactly, given the expected discounts ``a`` of its
    elements (positions of one run, as :func:`over_slots` takes them).

    pFound's i-th relevant document has share p_i · Π_{k<i} q_k · δ^(x_i − 1) within the cut-off,
    with p = grade / max grade, q = 1 − p and δ = 1 − pbreak. For a group G (r documents, start s)
    the documents above it contribute Q_above = Π q, whatever the order within earlier groups. The
    document at place j is any of G with probability 1/r; the j − 1 above it within G are then a
    uniform (j − 1)-subset of the others, independent of its slot t. So the group's expected total is

        Q_above · (1/r) · Σ_j A_j · B_j,    A_j = Σ_t P(t | j) · δ^(s + t − 2) · [s − 1 + t within k],
        B_j = Σ_{d ∈ G} p_d · e_{j−1}(q_{G∖d}) / C(r − 1, j − 1)
            = ((r − j + 1) e_{j−1}(q_G) − j e_j(q_G)) / C(r − 1, j − 1),

    e_k the elementary symmetric polynomials (Σ_d e_k(q_{G∖d}) = (r − k) e_k(q_G) and
    Σ_d q_d e_k(q_{G∖d}) = (k + 1) e_{k+1}(q_G)). The element of place j carries Q_above · A_j · B_j / r.
    """
    ties = ties_of(gathered)
    q = 1.0 - gathered.grades / gathered.max_grade
    above = _product_before(gathered, q)
    starts = (ties.place == 1).ravel()
    group = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    most = int(ties.relevant.max())
    factors = np.zeros((len(first), most))
    factors[group, ties.place.ravel() - 1] = q.ravel()
    symmetric = np.zeros((len(first), most + 1))
    symmetric[:, 0] = 1.0
    for column in range(most):
        symmetric[:, 1:] = symmetric[:, 1:] + factors[:, column:column + 1] * symmetric[:, :-1]
    j = ties.place.ravel()
    r = ties.relevant.ravel()
    b = ((r - j + 1) * symmetric[group, j - 1] - j * symmetric[group, j]) / np.exp(log_binomial(r - 1, j - 1))
    expected = above.ravel()[first][group] * a.ravel() * b / r
    return expected.reshape(gathered.ranks.shape)


def _product_before(positions: Positions, factors: np.ndarray) -> np.ndarray:
    """Π_{k<i} factors_k within each segment (1 for a segment's first element), factors in [0, 1]
    (:func:`~prefeval.measures.shares.product_of_earlier`)."""
    return product_of_earlier(positions, factors)


def order_gains(measure: Metric, grades: np.ndarray) -> np.ndarray | None:
    """The gains by which ``measure`` values the documents of ``grades`` when it orders a tie group
    (:func:`~prefeval.ranking.ties.extreme_order`): the measure's gain map's (``gains=``, negative
    gains included) for a measure that has one, the grades for the other measures that read them
    (their gains, 2^g − 1, pRel = g / max, ERR's stopping probability, grow with the grade), None
    (1 for every relevant document) for the binary ones."""
    if not measure.reads_grades:
        return None
    if any(param is GAINS for param in measure.all_parameters()):
        return gain_map(measure).gain(grades)
    return grades


def metric_bounds(measures: Sequence[Metric], positions: Positions) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each metric's minimum and maximum over all tie orders, (R, Q) each, by name in the order of
    ``measures`` (module docstring): its values in each group's best and worst order for its gains
    (:func:`order_gains`), made once for the metrics that share them.

    A group that straddles the end of the retrieved list (``--topk``) changes how many items the
    run ranks with how many of its relevant documents stay within it, and AUC, which reads that
    number, is not monotone across it (a relevant document pushed out of the list puts a non-relevant
    one below the others). So such queries are split by that number h (:class:`CutoffSplit`), the
    extreme orders taken given h, and the extremes over h kept."""
    bounds = dict.fromkeys(measure.name for measure in measures)  # in the order of ``measures``
    if not measures:
        return bounds
    ties = ties_of(positions)
    beyond = (ties.size > 1) & (ties.start + ties.size - 1 > retrieved_per_element(positions))
    runs, queries = np.nonzero(positions.segment_max(beyond) > 0)
    split = CutoffSplit.of(positions.gather(runs, queries)) if len(runs) else None
    for sharing in _by_order_gains(measures, positions):
        extremes = [extreme_order(positions, best, gains=order_gains(sharing[0], positions.grades))
                    for best in (True, False)]
        for measure in sharing:
            high, low = (measure.compute(extreme) for extreme in extremes)
            bounds[measure.name] = np.minimum(low, high), np.maximum(low, high)
        if split is None:
            continue
        split_gains = order_gains(sharing[0], split.positions.grades)
        extremes = [extreme_order(split.positions, best, split, split_gains) for best in (True, False)]
        for measure in sharing:
            high, low = (measure.compute(extreme)[0] for extreme in extremes)
            lowest, highest = np.full(len(runs), np.inf), np.full(len(runs), -np.inf)
            np.minimum.at(lowest, split.source, np.minimum(low, high))
            np.maximum.at(highest, split.source, np.maximum(low, high))
            bounds[measure.name][0][runs, queries] = lowest
            bounds[measure.name][1][runs, queries] = highest
    return bounds


def _by_order_gains(measures: Sequence[Metric], positions: Positions) -> list[list[Metric]]:
    """The metrics grouped by the gains they order documents by on ``positions`` (:func:`order_gains`),
    so that the extreme orders are made once for each group."""
    groups: dict = {}
    for measure in measures:
        gains = order_gains(measure, positions.grades)
        groups.setdefault(None if gains is None else gains.tobytes(), []).append(measure)
    return list(groups.values())


# --- preferences -------------------------------------------------------------------------------------

@dataclass(eq=False)
class _ExpectedSigns(Comparison):
    """A comparison whose signs are the expectations E[sgn(y_i − x_i)] (for measures linear in them)."""

    expected: np.ndarray | None = None

    @property
    def signs(self) -> np.ndarray:
        return self.expected


@dataclass(eq=False)
class PairValues:
    """A preference's expectations on P pairs × Q queries, and the ``variance`` of each Monte Carlo
    estimate (0 where the value is exact), or None when every value is exact."""

    values: np.ndarray
    variance: np.ndarray | None = None


def expected_preferences(measures: Sequence[Preference], positions: Positions, first: np.ndarray, second: np.ndarray,
                         draws: int, generator: Callable[[int], np.random.Generator] | None) -> dict[str, PairValues]:
    """E[preference] over random tie orders for the pairs (``first[p]``, ``second[p]``) on the
    segments of ``positions`` (module docstring); ``generator(q)`` gives the random numbers of the
    Monte Carlo draws of query column q."""
    results = {}
    linear = [m for m in measures if isinstance(m, RecallPairedPreference)]
    if linear:
        signs = expected_signs(positions, first, second)
        comparison = _ExpectedSigns(positions, positions.ranks[first], positions.ranks[second], expected=signs)
        results.update({m.name: PairValues(m.compare(comparison)) for m in linear})
    others = [m for m in measures if not isinstance(m, RecallPairedPreference)]
    if others:
        results.update(_expected_by_orders(others, positions, first, second, draws, generator))
    return results


def needs_draws(measures: Sequence[Preference], positions: Positions, first: np.ndarray, second: np.ndarray,
                draws: int) -> bool:
    """Whether :func:`expected_preferences` will draw orders at random (and so needs a seed)."""
    if all(isinstance(m, RecallPairedPreference) for m in measures) or not len(first):
        return False
    counts = log_order_counts(positions)
    return bool((counts[first] + counts[second] > np.log(draws) + 1e-9).any())


def _expected_by_orders(measures: Sequence[Preference], positions: Positions, first: np.ndarray, second: np.ndarray,
                        draws: int, generator: Callable[[int], np.random.Generator] | None) -> dict[str, PairValues]:
    """Expectations over enumerated or drawn joint orders, query by query (one segment per query)."""
    docid = Comparison(positions, positions.ranks[first], positions.ranks[second])
    values = {m.name: m.compare(docid).astype(np.float64) for m in measures}
    variance = {m.name: np.zeros(values[m.name].shape) for m in measures}
    counts = log_order_counts(positions)
    joint = counts[first] + counts[second]
    varies = joint > 1e-9
    exact = varies & (joint <= np.log(draws) + 1e-9)
    sampled = varies & ~exact
    for q in np.flatnonzero(varies.any(axis=0)):
        query = positions.query_block(q, q + 1)
        pairs = np.flatnonzero(exact[:, q])
        if len(pairs):
            orders = {run: enumerate_orders(query, run, 0) for run in np.union1d(first[pairs], second[pairs])}
            rows = np.array([len(orders[first[p]]) * len(orders[second[p]]) for p in pairs])
            comparison = Comparison(
                query,
                np.concatenate([np.repeat(orders[first[p]], len(orders[second[p]]), axis=0) for p in pairs]),
                np.concatenate([np.tile(orders[second[p]], (len(orders[first[p]]), 1)) for p in pairs]))
            for measure in measures:
                sums = np.add.reduceat(measure.compare(comparison)[:, 0].astype(np.float64),
                                       np.cumsum(rows) - rows)
                values[measure.name][pairs, q] = sums / rows
        pairs = np.flatnonzero(sampled[:, q])
        if len(pairs):
            runs, where = np.unique(np.concatenate([first[pairs], second[pairs]]), return_inverse=True)
            drawn = draw_orders(generator(q), query, runs, 0, draws)
            length = drawn.shape[2]
            chunk = max(STEP_ELEMENTS // (draws * length), 1)
            for start in range(0, len(pairs), chunk):
                part = slice(start, start + chunk)
                x, y = drawn[where[:len(pairs)][part]], drawn[where[len(pairs):][part]]
                comparison = Comparison(query, x.reshape(-1, length), y.reshape(-1, length))
                for measure in measures:
                    estimates = measure.compare(comparison)[:, 0].astype(np.float64).reshape(len(x), draws)
                    values[measure.name][pairs[part], q] = estimates.mean(axis=1)
                    variance[measure.name][pairs[part], q] = estimates.var(axis=1, ddof=1) / draws
    return {m.name: PairValues(values[m.name], variance[m.name] if sampled.any() else None) for m in measures}


def preference_bounds(measure: Preference, positions: Positions, first: np.ndarray,
                      second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The preference's minimum and maximum over all tie orders of the two runs, (P, Q) each."""
    if isinstance(measure, RRLexiPrecision):
        return rr_lexiprecision_bounds(positions, first, second)
    best = extreme_order(positions, best=True).ranks
    worst = extreme_order(positions, best=False).ranks
    low = measure.compare(Comparison(positions, worst[first], best[second]))
    high = measure.compare(Comparison(positions, best[first], worst[second]))
    return low, high


def rr_lexiprecision_bounds(positions: Positions, first: np.ndarray,
                            second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """rrlexiprecision's minimum and maximum over all tie orders, (P, Q) each, exactly.

    rrLP(x, y) = 1/x_i − 1/y_i at the first i where x_i ≠ y_i (0 when x = y). Given that the first
    i relevant documents of both runs sit at the same ranks, the last at rank u, the (i + 1)-th of
    run x can take any rank of an interval [lo_x(u), hi_x]: with its place c among the r relevant
    documents of its group (start s, n documents), lo_x(u) = max(s + c − 1, u + 1) and hi_x = s + n
    − 1 − (r − c) (room for the r − c after it), a rank beyond the run's retrieved list being ``inf``
    (which then holds for every later one). So the ranks the two runs can share for their (i + 1)-th
    document form the interval [max(lo_x, lo_y), min(hi_x, hi_y)], whose lower end grows with u and
    upper end does not depend on it: the ranks reachable with a common prefix of length i are an
    interval, and the smallest of them, u_i, is the best start for both extremes (it leaves the most
    room below). Scanning i = 0 .. m − 1, the extremes are those of 1/a − 1/b over a ≠ b, a in x's
    interval and b in y's from u_i (the smallest a with the largest b for the maximum, and the
    reverse for the minimum, or the next ones when those two coincide), and 0 when both vectors can
    be equal to the end.
    """
    docid = RRLexiPrecision().compare(Comparison(positions, positions.ranks[first], positions.ranks[second]))
    low, high = docid.copy(), docid.copy()
    counts = log_order_counts(positions)
    pair, column = np.nonzero(counts[first] + counts[second] > 1e-9)
    if len(pair) == 0:
        return low, high
    ties = ties_of(positions)
    runs = (first[pair], second[pair])
    segment = column if positions.one_segment_per_query else None
    if segment is None:
        raise ValueError("rrlexiprecision takes one segment per query")
    length, start = positions.length[segment], positions.start[segment]
    retrieved = [positions.num_retrieved[run, positions.query[segment]].astype(np.float64) for run in runs]
    common = np.zeros(len(pair))  # u_i, the smallest rank reachable with a common prefix (0: none yet)
    alive = np.ones(len(pair), dtype=bool)
    equal = np.zeros(len(pair), dtype=bool)
    best, worst = np.full(len(pair), -np.inf), np.full(len(pair), np.inf)
    for i in range(int(length.max())):
        active = alive & (i < length)
        element = start + np.minimum(i, length - 1)
        sides = []
        for run, limit in zip(runs, retrieved):
            s, n = ties.start[run, element], ties.size[run, element]
            r, c = ties.relevant[run, element], ties.place[run, element]
            lowest = np.maximum(s + c - 1.0, common + 1.0)
            highest = s + n - 1.0 - (r - c)
            finite_high = np.minimum(highest, limit)
            sides.append(_RankInterval(lowest, finite_high, highest > limit))
        x, y = sides
        for value, keep, better in ((_extreme_gap(x, y, largest=True), best, np.maximum),
                                    (_extreme_gap(x, y, largest=False), worst, np.minimum)):
            keep[active] = better(keep[active], value[active])
        equal |= active & x.infinite & y.infinite
        shared_low, shared_high = np.maximum(x.low, y.low), np.minimum(x.high, y.high)
        matched = active & (shared_low <= shared_high)
        alive = np.where(active, matched, alive)  # a query whose vectors have ended stays as it was
        common = np.where(matched, shared_low, common)
    equal |= alive  # both vectors matched to the end
    best = np.where(equal, np.maximum(best, 0.0), best)
    worst = np.where(equal, np.minimum(worst, 0.0), worst)
    low[pair, column], high[pair, column] = worst, best
    return low, high


class _RankInterval(NamedTuple):
    """The ranks a run's next relevant document can take: ``low`` .. ``high`` (empty when low >
    high) and, when ``infinite``, ``inf`` (not retrieved)."""

    low: np.ndarray
    high: np.ndarray
    infinite: np.ndarray

    def smallest(self, above: np.ndarray | None = None) -> np.ndarray:
        """The smallest value, or the smallest above ``above`` (NaN when there is none)."""
        floor = self.low if above is None else np.maximum(self.low, above + 1.0)
        infinite = self.infinite if above is None else self.infinite & np.isfinite(above)
        return np.where(floor <= self.high, floor, np.where(infinite, np.inf, np.nan))

    def largest(self, below: np.ndarray | None = None) -> np.ndarray:
        """The largest value, or the largest below ``below`` (NaN when there is none)."""
        if below is None:
            return np.where(self.infinite, np.inf, np.where(self.low <= self.high, self.high, np.nan))
        ceiling = np.where(np.isinf(below), self.high, np.minimum(self.high, below - 1.0))
        return np.where(self.low <= ceiling, ceiling, np.nan)


def _extreme_gap(x: _RankInterval, y: _RankInterval, largest: bool) -> np.ndarray:
    """The largest (or smallest) 1/a − 1/b over a from ``x`` and b from ``y`` with a ≠ b (NaN-free:
    −inf or +inf when there is no such pair)."""
    if not largest:
        return -_extreme_gap(y, x, largest=True)
    a, b = x.smallest(), y.largest()
    value = _gap(a, b)
    clash = a == b
    if clash.any():
        alternatives = np.fmax(_gap(a, y.largest(b)), _gap(x.smallest(a), b))
        value = np.where(clash, alternatives, value)
    return np.where(np.isnan(value), -np.inf, value)


def _gap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """1/a − 1/b (1/inf = 0), NaN where either is NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / a - 1.0 / b


# --- what an evaluation writes under each policy ---------------------------------------------------

FLIP_TOLERANCE = 1e-9
"""A bound within this of 0 counts as 0 (MEASURES.md: scores within 1e-9 are equal)."""


def metrics_under(ties: str, measures: Sequence[Metric], positions: Positions,
                  ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Metrics' values under the tie policy, (R, Q) per metric, and the extra keys of their metric
    lines: their bounds under ``range``."""
    if ties == EXPECTED:
        return expected_metrics(measures, positions), {}
    values = {measure.name: measure.compute(positions) for measure in measures}
    extras = {}
    if ties == RANGE:
        for name, bounds in metric_bounds(measures, positions).items():
            extras.update(zip(bound_keys(name), bounds))
    return values, extras


def metric_deltas(name: str, values: np.ndarray, extras: dict[str, np.ndarray], first: np.ndarray,
                  second: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A metric's deltas on P pairs, value(first) − value(second), and the bounds of the delta when
    the metric has bounds: [low(first) − high(second), high(first) − low(second)]."""
    deltas = values[first] - values[second]
    low_key, high_key = bound_keys(name)
    if low_key not in extras:
        return deltas, {}
    low, high = extras[low_key], extras[high_key]
    return deltas, {low_key: low[first] - high[second], high_key: high[first] - low[second]}


def preferences_under(ties: str, measures: Sequence[Preference], positions: Positions, first: np.ndarray,
                      second: np.ndarray, draws: int = DEFAULT_DRAWS,
                      generator: Callable[[int], np.random.Generator] | None = None,
                      ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Preferences under the tie policy, (P, Q) per measure, and the pair values kept for the
    summary: under ``range`` the bounds, under ``expected`` the variances of Monte Carlo estimates
    (under the keys of their standard errors; :func:`summary_extras`)."""
    if ties == EXPECTED:
        results = expected_preferences(measures, positions, first, second, draws, generator)
        extras = {error_key(name): result.variance for name, result in results.items() if result.variance is not None}
        return {m.name: results[m.name].values for m in measures}, extras
    comparison = Comparison(positions, positions.ranks[first], positions.ranks[second], first, second)
    values = {m.name: m.compare(comparison) for m in measures}
    extras = {}
    if ties == RANGE:
        for measure in measures:
            extras.update(zip(bound_keys(measure.name), preference_bounds(measure, positions, first, second)))
    return values, extras


def preferences_on_ties(ties: str, measures: Sequence[Preference], pairs: int, width: int,
                        ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """What :func:`preferences_under` gives on ``width`` queries without a relevant document (none
    at the relevance level), where every order of every group leaves the two runs equal: every
    value 0, (P, width), and under ``range`` bounds of 0, so that the keys of the lines do not
    depend on whether a query has one (under ``expected`` the values are exact: no standard error)."""
    values = {m.name: np.zeros((pairs, width), dtype=m.value_type) for m in measures}
    extras = {}
    if ties == RANGE:
        for measure in measures:
            extras.update(dict.fromkeys(bound_keys(measure.name), np.zeros((pairs, width))))
    return values, extras


def summary_extras(names: Sequence[str], totals: dict[str, np.ndarray], count: int) -> dict[str, np.ndarray]:
    """The extra keys of the summary pair lines, measure by measure in the order of ``names``, from
    the sums over queries of the pair values :func:`preferences_under` and :func:`metric_deltas`
    keep: under ``range`` the bounds of the mean (the means of the bounds: orders are independent
    per query) and whether they hold both signs (``ap_ties_flip``: tie orders could reverse the
    pair's mean); under ``expected`` the standard error of the mean of the Monte Carlo estimates,
    sqrt(Σ_q se_q²) / Q (0 for a pair every query of which was exact)."""
    extras = {}
    for name in names:
        low_key, high_key = bound_keys(name)
        if low_key in totals:
            low, high = totals[low_key] / count, totals[high_key] / count
            extras.update({low_key: low, high_key: high,
                           flip_key(name): (low < -FLIP_TOLERANCE) & (high > FLIP_TOLERANCE)})
        if error_key(name) in totals:
            extras[error_key(name)] = np.sqrt(totals[error_key(name)]) / count
    return extras
