"""Gain maps, and the gain-based metrics of trec_eval and ir_measures beyond plain nDCG.

A *gain map* gives relevance levels gains other than their grade: ``gains=1:3.5;2:9`` (after the
positional parameters: ``ndcg@10,gains=1:3.5;2:9``) gives grade 1 the gain 3.5 and grade 2 the gain
9; every level it does not mention keeps its grade as its gain, and grade 0 (judged, not relevant)
keeps 0 unless the map names it. It is trec_eval's ``ndcg.1=3.5,2=9`` and ir_measures'
``nDCG(gains={1: 3.5, 2: 9})``. Levels are integers >= 0; gains are any finite numbers, 0 and
negative ones included. The canonical form lists the levels in increasing order and leaves out
those whose gain is their own grade, so that ``gains=2:9;1:3.5;3:3`` and ``gains=1:3.5;2:9`` name
the same measure, and ``gains=1:1`` is no map at all. Documents outside the qrels, and those in it
with a negative grade (in the pool, not judged), have gain 0.

Notation as in :mod:`prefeval.measures.shares`. In addition: the *judged list* of a run on a query
is every judged document with a gain other than 0, ordered by rank (the relevant documents of its
segment, and, where grade 0 has a gain, the judged non-relevant ones of
:attr:`~prefeval.ranking.positions.Positions.others`); DCG(t) is the run's discounted gain within
rank t, Σ_{d : x_d <= t} gain_d / log2(x_d + 1), negative gains included; the *ideal list* holds the
positive gains of the query's judged documents, largest first, n+ of them, and IDCG(t) is its
discounted gain over its first min(t, n+) places.

Families here: ``ndcg_rel``, ``rndcg``, ``gain_shortfall`` and ``binary_gain_shortfall`` (trec_eval's
``ndcg_rel``, ``Rndcg``, ``G`` and ``binG``), ``trec_rbp`` and ``trec_rbp_resid`` (trec_eval's
``rbp`` and ``rbp_resid``) and ``err`` (ir_measures' ``ERR@k``, gdeval's). The gain map of plain
``ndcg`` is :data:`GAINS` on :class:`~prefeval.measures.gain_discount.NDCG`.

trec_eval sorts the levels by gain with a comparison that truncates the difference of two gains to
an integer, so two gains less than 1 apart may be taken in either order when it builds its ideal
list (``ndcg.1=3.5`` with grade 3 present: 3.5 and 3 compare equal). prefeval sorts exactly; the
values agree whenever no two gains of a query differ by less than 1 (integer gains always).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from prefeval.errors import UsageError
from prefeval.io.numbers import INTEGER, NUMBER, is_number
from prefeval.measures.base import AdditiveMetric, Metric, Param, RatioMetric, register
from prefeval.measures.shares import CUTOFF, powers_of, product_of_earlier, query_steps, within
from prefeval.ranking.positions import Positions, segment_cumsum, segment_reduce, sequential_segment_sum

JARVELIN_KEKALAINEN = "Järvelin and Kekäläinen, ACM TOIS 2002, doi:10.1145/582415.582418"
MOFFAT_ZOBEL = "Moffat and Zobel, ACM TOIS 2008, doi:10.1145/1416950.1416952"
TREC_EVAL_EXPERIMENTAL = "Buckley, trec_eval 9.0 (2008), experimental measure; nDCG: " + JARVELIN_KEKALAINEN


# ---------------------------------------------------------------------------------------------- gain maps

class GainMap(NamedTuple):
    """The gains of some relevance levels (integers >= 0); every other level's gain is its grade."""

    levels: tuple[int, ...]
    values: tuple[float, ...]

    def gain(self, grades: np.ndarray) -> np.ndarray:
        """The gain of each grade: the map's, else the grade itself; 0 for a negative grade (in the
        qrels but not judged)."""
        grades = np.asarray(grades, dtype=np.float64)
        gains = np.where(grades < 0, 0.0, grades)
        for level, value in zip(self.levels, self.values):
            gains = np.where(grades == level, value, gains)
        return gains

    @property
    def zero_gain(self) -> float:
        """The gain of grade 0 (judged, not relevant)."""
        return dict(zip(self.levels, self.values)).get(0, 0.0)

    @property
    def has_negative(self) -> bool:
        return any(value < 0 for value in self.values)

    def text(self) -> str:
        return gain_map_text(self)


IDENTITY = GainMap((), ())
"""No map: every grade is its own gain (trec_eval's and ir_measures' default)."""


def parse_gain_map(text: str, measure: str) -> GainMap | None:
    """``L:G;L:G...`` -> a :class:`GainMap`; None when every level keeps its grade (no map).

    Levels are integers >= 0 (ASCII digits), each given once; gains are finite numbers as C's
    ``strtod`` reads them. Entries whose gain is their level's grade are dropped (the default).
    """
    if not text.strip():
        raise UsageError(f"{measure}: gains= needs level:gain pairs, such as gains=1:1;2:3")
    found: dict[int, float] = {}
    for entry in text.split(";"):
        level_text, colon, gain_text = entry.partition(":")
        level_text, gain_text = level_text.strip(), gain_text.strip()
        if not colon or not is_number(level_text, INTEGER) or not is_number(gain_text, NUMBER):
            raise UsageError(
                f"{measure}: gains= takes level:gain pairs separated by ';' (gains=1:3.5;2:9), "
                f"not {entry.strip()[:40]!r}")
        level, gain = int(level_text), float(gain_text)
        if level < 0:
            raise UsageError(f"{measure}: a gain map's levels are grades >= 0, not {level}")
        if not np.isfinite(gain):
            raise UsageError(f"{measure}: the gain of level {level} must be a finite number, not {gain_text}")
        if level in found:
            raise UsageError(f"{measure}: level {level} given twice in gains=")
        found[level] = gain
    kept = sorted((level, gain) for level, gain in found.items() if gain != level)
    if not kept:
        return None
    return GainMap(tuple(level for level, _ in kept), tuple(gain for _, gain in kept))


def gain_map_text(gains: GainMap) -> str:
    """The canonical text of a gain map: ``1:3.5;2:9`` (levels ascending, gains in their shortest
    exact form, integers without ``.0``)."""
    return ";".join(f"{level}:{_gain_text(value)}" for level, value in zip(gains.levels, gains.values))


def _gain_text(value: float) -> str:
    written = repr(float(value))
    return written[:-2] if written.endswith(".0") else written


GAINS = Param(
    "gains", GainMap, None, keyword=True, parser=parse_gain_map, text=gain_map_text,
    meaning="gain of each relevance level, level:gain pairs separated by ';' (gains=1:3.5;2:9); "
            "levels not named keep their grade as gain, grade 0 keeps 0 unless named")
"""The gain map, a keyword parameter (``gains=1:3.5;2:9``); None (the default) is no map."""


def gain_map(measure) -> GainMap:
    """A measure's gain map (:data:`IDENTITY` without one)."""
    gains = measure.param("gains")
    return IDENTITY if gains is None else gains


# ---------------------------------------------------------------------------------------------- lists

class JudgedList(NamedTuple):
    """Per run, the judged documents with a gain other than 0, by rank within each query.

    ``ranks`` and ``gains`` are (R, M); query q holds ``start[q] .. start[q] + length[q] - 1``,
    retrieved documents first (ascending rank), the unretrieved (rank inf) after them.
    """

    ranks: np.ndarray
    gains: np.ndarray
    start: np.ndarray
    length: np.ndarray
    sequential: bool = False
    """Sums add their terms in rank order, as trec_eval's loops do (:attr:`Positions.sequential`)."""

    def query_sum(self, values: np.ndarray) -> np.ndarray:
        """Σ of ``values`` (R, M) over each query's documents: (R, Q); in rank order when
        :attr:`sequential`."""
        if self.sequential:
            return sequential_segment_sum(values, self.start, self.length)
        return segment_reduce(np.add, values, self.start, self.length, 0.0)

    def running_sum(self, values: np.ndarray) -> np.ndarray:
        """Σ of ``values`` over each element and those before it in its query: (R, M)."""
        return _running_sum(values, self.start, self.length)

    def discounted(self) -> np.ndarray:
        """Each document's gain / log2(rank + 1), 0 for those not retrieved: (R, M)."""
        retrieved = np.isfinite(self.ranks)
        return np.where(retrieved, self.gains / np.log2(np.where(retrieved, self.ranks, 1.0) + 1.0), 0.0)


def judged_list(positions: Positions, segment_gains: np.ndarray, zero_gain) -> JudgedList:
    """The judged list of every run (see :class:`JudgedList`): the segment's documents with their
    ``segment_gains`` (R, N), and, where ``zero_gain`` (a number, or one per query) is not 0, the
    documents of grade 0 among ``positions.others`` with that gain."""
    zero_gain = np.broadcast_to(np.asarray(zero_gain, dtype=np.float64), (positions.num_queries,))
    if not zero_gain.any():
        return JudgedList(positions.ranks, segment_gains, positions.start, positions.length, positions.sequential)
    others = _require_others(positions)
    other_query = np.repeat(np.arange(positions.num_queries), others.length)
    other_gains = np.where(others.grades == 0, zero_gain[other_query], 0.0)
    keep = np.concatenate([np.ones(positions.ranks.shape, dtype=bool), other_gains != 0], axis=1)
    ranks = np.concatenate([positions.ranks, others.ranks], axis=1)
    gains = np.concatenate([np.broadcast_to(segment_gains, positions.ranks.shape), other_gains], axis=1)
    query = np.concatenate([np.repeat(np.arange(positions.num_queries), positions.length), other_query])
    finite = np.isfinite(ranks)
    width = float(ranks[finite].max(initial=0.0)) + 2.0
    key = np.where(keep, query * width + np.where(finite, ranks, width - 1.0), np.inf)
    order = np.argsort(key, axis=1, kind="stable")
    kept = int(keep[0].sum())  # the same documents in every row, in another order
    order = order[:, :kept]
    length = positions.length + np.bincount(other_query, weights=(other_gains[0] != 0),
                                            minlength=positions.num_queries).astype(np.int64)
    start = np.concatenate(([0], np.cumsum(length)[:-1])).astype(np.int64)
    return JudgedList(np.take_along_axis(ranks, order, axis=1), np.take_along_axis(gains, order, axis=1),
                      start, length, positions.sequential)


class IdealList(NamedTuple):
    """Per query, the positive gains of its judged documents, largest first (the ideal ranking).

    ``gains`` (M,), query q holding ``start[q] .. start[q] + length[q] - 1`` (length = n+).
    """

    gains: np.ndarray
    start: np.ndarray
    length: np.ndarray
    sequential: bool = False
    """Sums add their terms in place order, as trec_eval's loops do (:attr:`Positions.sequential`)."""

    @property
    def index(self) -> np.ndarray:
        """1-based place of each gain in its query's ideal ranking."""
        return np.arange(len(self.gains)) - np.repeat(self.start, self.length) + 1.0

    def running(self, values: np.ndarray) -> np.ndarray:
        """Σ of ``values`` (M,) over each query's first places: P[start[q] + t - 1] is the sum over
        query q's first t places, each query's sums from its own values alone (:meth:`up_to`)."""
        return segment_cumsum(values, self.start, self.length)

    def up_to(self, running: np.ndarray, depth: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Σ over the first min(depth, n+) places of ``query`` (arrays that broadcast), from
        :meth:`running`; 0 over none."""
        depth = np.clip(np.where(np.isfinite(depth), depth, np.inf), 0, self.length[query]).astype(np.int64)
        if not len(running):
            return np.zeros(depth.shape)
        last = np.clip(self.start[query] + depth - 1, 0, len(running) - 1)
        return np.where(depth > 0, running[last], 0.0)

    def dcg(self) -> np.ndarray:
        """The discounted gain of every place: gain / log2(place + 1)."""
        return self.gains / np.log2(self.index + 1.0)

    def total(self, values: np.ndarray) -> np.ndarray:
        """Σ of ``values`` (M,) per query: (Q,); in place order when :attr:`sequential`."""
        if self.sequential:
            return sequential_segment_sum(values, self.start, self.length)
        return segment_reduce(np.add, values, self.start, self.length, 0.0)


def ideal_list(positions: Positions, gains: GainMap, zero_gain=None) -> IdealList:
    """The ideal list of every query under ``gains``: the positive gains of its relevant documents
    (``positions.ideal``) and, where grade 0's gain (``zero_gain``: a number or one per query;
    by default the map's) is positive, one per judged non-relevant document (grade 0 among
    ``positions.others``)."""
    num_queries = positions.num_queries
    zero_gain = np.broadcast_to(np.asarray(gains.zero_gain if zero_gain is None else zero_gain,
                                           dtype=np.float64), (num_queries,))
    values = [gains.gain(positions.ideal)]
    query = [np.repeat(np.arange(num_queries), positions.length)]
    if (zero_gain > 0).any():
        others = _require_others(positions)
        other_query = np.repeat(np.arange(num_queries), others.length)
        values.append(np.where(others.grades[0] == 0, zero_gain[other_query], 0.0))
        query.append(other_query)
    values, query = np.concatenate(values), np.concatenate(query)
    positive = values > 0
    values, query = values[positive], query[positive]
    order = np.lexsort((-values, query))
    length = np.bincount(query, minlength=num_queries).astype(np.int64)
    start = np.concatenate(([0], np.cumsum(length)[:-1])).astype(np.int64)
    return IdealList(values[order], start, length, positions.sequential)


def ideal_dcg_at(positions: Positions, gains: GainMap, k: int) -> np.ndarray:
    """IDCG@k per query (k = 0: the whole ideal list) under ``gains``: (Q,)."""
    ideal = ideal_list(positions, gains)
    discounted = np.where(within(ideal.index, k), ideal.dcg(), 0.0)
    return ideal.total(discounted)


def _running_sum(values: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Inclusive running sums of ``values`` (..., M) within each block (start, length)."""
    return segment_cumsum(values, start, length)


def _require_others(positions: Positions):
    others = getattr(positions, "others", None)
    if others is None:
        raise ValueError("this measure reads the judged non-relevant documents (reads_judged), "
                         "but the positions carry none")
    return others


def _query_of(block_start: np.ndarray, block_length: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(block_length)), block_length)


class GainMapped(Metric):
    """A metric with a gain map (:data:`GAINS`): it reads the judged non-relevant documents only
    when the map gives grade 0 a gain, and may be negative only when the map has a negative gain."""

    reads_grades = True

    def __init__(self, *texts: str):
        super().__init__(*texts)
        gains = gain_map(self)
        self.reads_judged = gains.zero_gain != 0
        if gains.has_negative:
            self.bounds = (-np.inf, self.bounds[1])

    @property
    def gains(self) -> GainMap:
        return gain_map(self)

    def lists(self, positions: Positions) -> tuple[JudgedList, IdealList]:
        """The run's judged documents with their mapped gains, and the ideal list, per query."""
        gains = self.gains
        return judged_list(positions, gains.gain(positions.grades), gains.zero_gain), ideal_list(positions, gains)


# ---------------------------------------------------------------------------------------------- families

@register
class NDCGOverRelevant(GainMapped):
    """nDCG averaged over the relevant documents (trec_eval's experimental ``ndcg_rel``):

        ndcg_rel = max(0, S) / n+,   S = Σ_{d retrieved, gain_d > 0} DCG(x_d) / IDCG(x_d)
                                       + u · DCG(∞) / IDCG(n+),

    where the sum runs over the judged list, u is the number of documents of positive gain the run
    did not retrieve, and n+ the number of positive gains (a document counts as relevant when its
    gain is positive). 0 when S <= 0 or n+ = 0: a query without relevant documents, an empty run.
    With a gain map (``gains=``) as trec_eval's ``ndcg_rel.1=3.5,2=9``. Equals trec_eval
    ``ndcg_rel`` per query.
    """

    family = "ndcg_rel"
    parameters = (GAINS,)
    summary = "nDCG averaged at each relevant document (trec_eval ndcg_rel)"
    cite = TREC_EVAL_EXPERIMENTAL

    def compute(self, positions: Positions) -> np.ndarray:
        judged, ideal = self.lists(positions)
        retrieved = np.isfinite(judged.ranks)
        discounted = judged.discounted()
        dcg_so_far = judged.running_sum(discounted)
        query = _query_of(judged.start, judged.length)
        running_ideal = ideal.running(ideal.dcg())
        ideal_here = ideal.up_to(running_ideal, judged.ranks, query)
        counted = retrieved & (judged.gains > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            at_relevant = judged.query_sum(np.where(counted, dcg_so_far / ideal_here, 0.0))
        relevant = ideal.length
        unretrieved = relevant - judged.query_sum(counted)
        full_ideal = ideal.total(ideal.dcg())
        dcg = judged.query_sum(discounted)
        with np.errstate(divide="ignore", invalid="ignore"):
            rest = np.where(full_ideal > 0, (unretrieved * dcg) / full_ideal, 0.0)
        total = at_relevant + rest
        return np.divide(total, relevant, out=np.zeros_like(total), where=(total > 0) & (relevant > 0))


@register
class RNDCG(GainMapped):
    """nDCG averaged at the R-levels of the ideal ranking (trec_eval's experimental ``Rndcg``).

    The ideal list changes gain after its places t = t_1 < t_2 < ... < t_L = n+ (the last place of
    each run of equal gains). Rndcg is the mean over those places of DCG(t)/IDCG(t), and, when the
    run retrieved at least n+ + 2 documents, of one more term DCG(∞)/IDCG(n+) (trec_eval's "final
    implied R-level at the number retrieved"):

        Rndcg = (Σ_l DCG(t_l)/IDCG(t_l) [+ DCG(∞)/IDCG(n+)]) / (L [+ 1]).

    DCG counts every gain of the run, negative ones included. 0 for a query without relevant
    documents (m = 0) and when there is no term at all (n+ = 0: every gain <= 0, where trec_eval
    divides 0 by 0), and, as in trec_eval, 0 for a query without a document at the relevance level
    ``-l`` (:attr:`~prefeval.ranking.positions.Positions.num_at_level`). With a gain map (``gains=``) as
    trec_eval's ``Rndcg.1=3.5,2=9``. Equals trec_eval ``Rndcg`` per query.
    """

    family = "rndcg"
    parameters = (GAINS,)
    summary = "nDCG averaged at the ideal ranking's gain changes (trec_eval Rndcg)"
    cite = TREC_EVAL_EXPERIMENTAL

    def compute(self, positions: Positions) -> np.ndarray:
        judged, ideal = self.lists(positions)
        num_runs, num_queries = positions.num_runs, positions.num_queries
        # the places where the ideal gain changes (the last of each run of equal gains)
        last = np.ones(len(ideal.gains), dtype=bool)
        last[:-1] = ideal.gains[1:] != ideal.gains[:-1]
        last[ideal.start[ideal.length > 0] + ideal.length[ideal.length > 0] - 1] = True
        place = ideal.index[last]
        place_query = _query_of(ideal.start, ideal.length)[last]
        # the run's DCG within each such place: how many of its judged documents rank within it
        retrieved = np.isfinite(judged.ranks)
        discounted = judged.discounted()
        running = judged.running_sum(discounted)
        width = max(float(judged.ranks[retrieved].max(initial=0.0)), float(place.max(initial=0.0))) + 2.0
        judged_query = _query_of(judged.start, judged.length)
        keys = (np.arange(num_runs)[:, None] * num_queries + judged_query[None, :]) * width + np.where(
            retrieved, judged.ranks, width - 1.0)
        targets = (np.arange(num_runs)[:, None] * num_queries + place_query[None, :]) * width + place[None, :]
        found = np.searchsorted(keys.ravel(), targets.ravel(), side="right").reshape(targets.shape)
        found -= np.arange(num_runs)[:, None] * keys.shape[1]
        # the sum of the query's judged documents before ``found``, from its own running sums
        within = found > judged.start[place_query][None, :]
        dcg_at = np.where(within, running[np.arange(num_runs)[:, None], np.maximum(found - 1, 0)], 0.0)
        running_ideal = ideal.running(ideal.dcg())
        ideal_at = ideal.up_to(running_ideal, place, place_query)
        terms = np.zeros((num_runs, num_queries))
        np.add.at(terms, (slice(None), place_query), dcg_at / ideal_at)
        count = np.bincount(place_query, minlength=num_queries).astype(np.float64)
        full_ideal = ideal.total(ideal.dcg())
        extra = (positions.num_retrieved >= ideal.length + 2) & (full_ideal > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms += np.where(extra, judged.query_sum(discounted) / full_ideal, 0.0)
        count = count + extra
        at_level = positions.length if positions.num_at_level is None else positions.num_at_level
        return np.divide(terms, count, out=np.zeros_like(terms), where=(count > 0) & (at_level > 0))


@register
class GainShortfall(GainMapped):
    """trec_eval's experimental normalised gain ``G``: each gain discounted by how far the run's
    cumulated gain falls short of the ideal's at its rank,

        G = (1 / Σ I) Σ_{d retrieved, gain_d != 0} gain_d / log2(2 + C(x_d) − S(x_d)),

    where S(x) is the run's cumulated gain within rank x (d included, negative gains included),
    C(x) = Σ_{j <= x} max(I_j, 1) the ideal's cumulated gain with every place costing at least 1
    (I_j the j-th ideal gain, 0 past n+), and Σ I the total of the ideal list. 0 when Σ I = 0 (no
    relevant document) and for an empty run. With binary gains it is ``binary_gain_shortfall``.
    With a gain map (``gains=``) as trec_eval's ``G.1=3.5,2=9``. Equals trec_eval ``G`` per query.
    """

    family = "gain_shortfall"
    parameters = (GAINS,)
    summary = "gains discounted by the cumulated gain's shortfall from the ideal (trec_eval G)"
    cite = TREC_EVAL_EXPERIMENTAL

    def compute(self, positions: Positions) -> np.ndarray:
        judged, ideal = self.lists(positions)
        retrieved = np.isfinite(judged.ranks)
        gained = judged.running_sum(np.where(retrieved, judged.gains, 0.0))
        query = _query_of(judged.start, judged.length)
        running_cost = ideal.running(np.maximum(ideal.gains, 1.0))
        depth = np.where(retrieved, judged.ranks, 0.0)
        cost = ideal.up_to(running_cost, depth, query) + np.maximum(depth - ideal.length[query], 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(retrieved & (judged.gains != 0), judged.gains / np.log2((2.0 + cost) - gained), 0.0)
        total = ideal.total(ideal.gains)
        value = judged.query_sum(terms)
        return np.divide(value, total, out=np.zeros_like(value), where=total > 0)


@register
class BinaryGainShortfall(RatioMetric):
    """trec_eval's experimental ``binG``, G with binary gains: the mean over the m relevant documents
    of 1 / log2(2 + the number of non-relevant documents ranked above it),

        binG = (1/m) Σ_{i : x_i finite} 1 / log2(2 + x_i − i),

    0 for a query without relevant documents and for an empty run. Relevant: grade at the relevance
    level (``-l``). Equals trec_eval ``binG`` per query.
    """

    family = "binary_gain_shortfall"
    summary = "mean over relevant documents of 1/log2(2 + non-relevant above) (trec_eval binG)"
    cite = TREC_EVAL_EXPERIMENTAL

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.where(np.isfinite(ranks), 1.0 / np.log2(2.0 + ranks - positions.index), 0.0)

    def denominator(self, positions: Positions) -> np.ndarray:
        return positions.length.astype(np.float64)


RBP_P = Param("p", float, 0.9, low=0.0, high=1.0, low_open=True, high_open=True,
              meaning="persistence: the probability of going on to the next rank")


@register
class TrecRBP(GainMapped, AdditiveMetric):
    """trec_eval 10's rank-biased precision with graded gains: RBP = (1 − p) Σ_{d retrieved}
    g'_d · p^(x_d − 1), p = 0.9 by default (Moffat and Zobel, 2008).

    The gains are the grades, or a gain map's (``gains=``), brought into [0, 1] per query: the
    query's gains are those of its levels 0 .. L (L its largest grade) and of every level the map
    names; with lo and hi their smallest and largest, when lo < 0 or hi > 1 every gain becomes
    g' = (g − lo) / (hi − lo), and otherwise stays. So grades 0..3 give 0, 1/3, 2/3, 1 on a query
    whose largest grade is 3, and binary grades stay 0 and 1. trec_eval 10.0 compares the gains with
    two variables it never initialises; prefeval does what that code evidently intends, lo and hi
    the smallest and largest gain. A negative gain in the map makes grade 0's scaled gain positive:
    judged non-relevant documents then count (trec_eval gives unjudged ones gain 0 in any case).
    When hi = lo the scaled gains are undefined and count 0.

    prefeval's own ``rbp`` (γ = 0.5, binary gain) is the reference's and differs; ir_measures'
    ``RBP`` (p = 0.8, binary) is ``rbp@0.8``. Equals trec_eval ``rbp`` (``rbp.p=0.95``) per query.
    """

    family = "trec_rbp"
    parameters = (RBP_P, GAINS)
    summary = "rank-biased precision, graded gains scaled to [0, 1], p = 0.9 (trec_eval 10 rbp)"
    cite = MOFFAT_ZOBEL

    def __init__(self, *texts: str):
        super().__init__(*texts)
        gains = self.gains
        self.reads_judged = gains.zero_gain != 0 or gains.has_negative
        self.bounds = (0.0, 1.0)

    def scale(self, positions: Positions) -> tuple[np.ndarray, np.ndarray]:
        """Per query, (lo, hi − lo) when the gains are scaled, (0, 1) when not; a span of 0 where
        hi = lo (the scaled gains count 0)."""
        gains = self.gains
        largest = np.maximum(positions.segment_max(positions.ideal), 0.0)
        mapped = np.asarray(gains.levels, dtype=np.float64)
        top, bottom = largest.copy(), np.zeros_like(largest)
        for _ in range(len(mapped)):  # the largest and smallest levels in 0..L the map leaves alone
            top = np.where(np.isin(top, mapped), top - 1.0, top)
            bottom = np.where(np.isin(bottom, mapped), bottom + 1.0, bottom)
        lo = np.where(top >= 0, np.minimum(bottom, top), np.inf)
        hi = np.where(top >= 0, top, -np.inf)
        if len(mapped):
            lo = np.minimum(lo, min(gains.values))
            hi = np.maximum(hi, max(gains.values))
        scaled = (lo < 0) | (hi > 1)
        span = np.where(scaled, np.where(hi > lo, hi - lo, 0.0), 1.0)
        return np.where(scaled, lo, 0.0), span

    @staticmethod
    def _factor(span: np.ndarray) -> np.ndarray:
        """1 / span, 0 where the span is 0."""
        with np.errstate(divide="ignore"):
            return np.where(span > 0, 1.0 / span, 0.0)

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        offset, span = self.scale(positions)
        gains = (self.gains.gain(positions.grades) - positions.per_element(offset)) * positions.per_element(
            self._factor(span))
        p = self.param("p")
        return np.where(np.isfinite(ranks), (1.0 - p) * gains * p ** (ranks - 1.0), 0.0)

    def compute(self, positions: Positions) -> np.ndarray:
        if positions.sequential:
            return self._as_trec_eval_adds(positions)
        value = positions.segment_sum(self.shares(positions, positions.ranks))
        if not self.reads_judged:
            return value
        offset, span = self.scale(positions)
        zero = (self.gains.zero_gain - offset) * self._factor(span)  # grade 0's scaled gain, per query
        others = _require_others(positions)
        p = self.param("p")
        per_other = np.repeat(zero, others.length)
        judged_zero = (others.grades == 0) & np.isfinite(others.ranks)
        return value + others.query_sum(np.where(judged_zero, (1.0 - p) * per_other * p ** (others.ranks - 1.0), 0.0))

    def _as_trec_eval_adds(self, positions: Positions) -> np.ndarray:
        """RBP in trec_eval's own arithmetic (m_rbp.c; trec_eval's conventions,
        :attr:`~prefeval.ranking.positions.Positions.sequential`), which the shares, equal in reals,
        differ from in the last bit (0.12825 where the shares give 0.12824999999999998): each gain
        scaled by a division, (g − lo) / (hi − lo); p^(x−1) by repeated multiplication
        (:func:`~prefeval.measures.shares.powers_of`); gain · p^(x−1) added in rank order over the
        documents with a gain (the judged list: the relevant ones and, where grade 0's scaled gain
        is not 0, the judged non-relevant ones); then (1 − p) times that sum."""
        offset, span = self.scale(positions)
        element_offset, element_span = positions.per_element(offset), positions.per_element(span)
        with np.errstate(divide="ignore", invalid="ignore"):
            gains = np.where(element_span > 0, (self.gains.gain(positions.grades) - element_offset) / element_span, 0.0)
            zero = np.where(span > 0, (self.gains.zero_gain - offset) / span, 0.0)
        judged = judged_list(positions, gains, zero if self.reads_judged else 0.0)
        retrieved = np.isfinite(judged.ranks)
        p = self.param("p")
        powers = powers_of(p, max(int(judged.ranks[retrieved].max(initial=0.0)), 1))
        terms = np.where(retrieved, judged.gains * powers[np.where(retrieved, judged.ranks, 1.0).astype(np.int64) - 1],
                         0.0)
        return (1.0 - p) * judged.query_sum(terms)


@register
class TrecRBPResidual(Metric):
    """trec_eval 10's ``rbp_resid``: how much RBP (binary, persistence p = 0.9) could still rise if
    every unjudged document the run retrieved were relevant, plus what lies past its end:

        resid = p^n + (1 − p) Σ_{d retrieved, unjudged} p^(x_d − 1)
              = 1 − (1 − p) Σ_{d retrieved, judged} p^(x_d − 1),

    n the number retrieved; unjudged = not in the qrels, or in them with a negative grade; judged =
    in the qrels with a grade >= 0, relevant or not. trec_eval reports it only when the run
    retrieved an unjudged document: 0 otherwise (an empty run, a fully judged list). Equals
    trec_eval ``rbp_resid`` (``rbp_resid.p=0.95``) per query.
    """

    family = "trec_rbp_resid"
    parameters = (RBP_P,)
    reads_judged = True
    summary = "RBP residual: the RBP that unjudged documents and the list's end leave open (trec_eval rbp_resid)"
    cite = MOFFAT_ZOBEL

    def compute(self, positions: Positions) -> np.ndarray:
        others = _require_others(positions)
        p = self.param("p")
        if positions.sequential:
            return self._as_trec_eval_adds(positions, others, p)
        in_segment = np.isfinite(positions.ranks)
        judged_other = (others.grades >= 0) & np.isfinite(others.ranks)
        weight = positions.segment_sum(np.where(in_segment, p ** (positions.ranks - 1.0), 0.0)) + others.query_sum(
            np.where(judged_other, p ** (others.ranks - 1.0), 0.0))
        judged = positions.segment_sum(in_segment) + others.query_sum(judged_other)
        unjudged = positions.num_retrieved - judged
        return np.where(unjudged > 0, 1.0 - (1.0 - p) * weight, 0.0)

    @staticmethod
    def _as_trec_eval_adds(positions: Positions, others, p: float) -> np.ndarray:
        """The first formula in trec_eval's own arithmetic (trec_eval's conventions,
        :attr:`~prefeval.ranking.positions.Positions.sequential`), which the second, exact in
        reals, differs from in the last bit (a summary of 0.78755 prints 0.7876 in trec_eval; m_rbp_resid.c):
        p^i by repeated multiplication (:func:`~prefeval.measures.shares.powers_of`), the unjudged
        documents' p^(x−1) added in rank order, then p^n + (1 − p) · that sum. Queries are taken a
        few at a time (:func:`~prefeval.measures.shares.query_steps`)."""
        retrieved = positions.num_retrieved.astype(np.int64)
        num_runs, num_queries = retrieved.shape
        deepest = int(retrieved.max(initial=0))
        powers = powers_of(p, deepest + 1)
        runs, queries, ranks = _judged_ranks(positions, others)
        values = np.zeros((num_runs, num_queries))
        for first, stop in query_steps(num_runs, num_queries, deepest):
            depth = retrieved[:, first:stop]
            unjudged = np.arange(deepest) < depth[..., None]
            inside = (queries >= first) & (queries < stop)
            unjudged[runs[inside], queries[inside] - first, ranks[inside] - 1] = False
            sums = np.cumsum(np.where(unjudged, powers[:deepest], 0.0), axis=2)
            last = np.take_along_axis(sums, np.maximum(depth - 1, 0)[..., None], axis=2)[..., 0] if deepest else 0.0
            values[:, first:stop] = np.where(unjudged.any(axis=2), powers[depth] + (1.0 - p) * last, 0.0)
        return values


def _judged_ranks(positions: Positions, others) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(run, query, rank) of every judged document a run retrieved (relevant, or in the qrels with a
    grade >= 0), for one-segment-per-query positions."""
    segment_query = np.repeat(positions.query, positions.length)
    relevant_run, relevant = np.nonzero(np.isfinite(positions.ranks))
    other_query = np.repeat(np.arange(len(others.length)), others.length)
    other_run, other = np.nonzero(np.isfinite(others.ranks) & (others.grades >= 0))
    return (np.concatenate((relevant_run, other_run)),
            np.concatenate((segment_query[relevant], other_query[other])),
            np.concatenate((positions.ranks[relevant_run, relevant], others.ranks[other_run, other])).astype(np.int64))


ERR_MAX_GRADE = 4
"""gdeval's largest grade: the probability of stopping at a document of grade g is (2^g − 1) / 2^4."""


@register
class ExpectedReciprocalRank(Metric):
    """ERR@k (Chapelle et al., 2009) with gdeval's grade mapping: a user scans down the list and
    stops at a document of grade g with probability R(g) = (2^g − 1) / 2^4 (gdeval's largest grade
    is 4; larger grades count as 4, where gdeval refuses them), and ERR is the expected reciprocal
    of the rank where they stop:

        ERR@k = Σ_{i : x_i within k} R(g_i) / x_i · Π_{j < i} (1 − R(g_j)).

    Grade 0 and unjudged documents have R = 0. 0 for a query without relevant documents (gdeval
    reports nothing for it) and for an empty run. k = 0: no cut-off (ir_measures requires one).
    Equals ir_measures ``ERR@k`` per query, which gdeval prints rounded to 5 decimals.

    Not a sum of shares that depend on each document's own rank alone (a document's term depends on
    the grades ranked above it, which an order of ties changes): the analyses over random ranks and
    ``--ties expected`` do not take it.
    """

    family = "err"
    parameters = (CUTOFF,)
    reads_grades = True
    summary = "expected reciprocal rank, gdeval's stopping probabilities (ir_measures ERR@k)"
    cite = "Chapelle, Metzler, Zhang and Grinspan, CIKM 2009, doi:10.1145/1645953.1646033"

    def compute(self, positions: Positions) -> np.ndarray:
        grades = np.clip(positions.grades, 0.0, ERR_MAX_GRADE)
        stop = (np.exp2(grades) - 1.0) / 2.0 ** ERR_MAX_GRADE
        going_on = product_of_earlier(positions, 1.0 - stop)
        ranks = positions.ranks
        return positions.segment_sum(np.where(within(ranks, self.param("k")), stop * going_on / ranks, 0.0))
