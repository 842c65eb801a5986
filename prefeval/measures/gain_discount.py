"""Gain-and-discount metrics: a user walks down the list and collects a gain at each relevant document,
discounted by its rank. nDCG, DCG and its ideal (nDCG's normaliser), nDCG with exponential gains, CG
(no discount), RBP (binary gain, geometric discount) and pFound (a cascade with abandonment).

Notation and the shared helpers are those of :mod:`prefeval.measures.shares`: x = (x_1 <= ... <= x_m)
the ranks of the query's m relevant documents (inf when not retrieved), i the 1-based index into x,
g_i the grade of the i-th relevant document, "within k" x_i <= k (k = 0: no cut-off). Each metric but
the ideal DCG (the qrels', whatever the run) is the sum of per-document shares
(:class:`~prefeval.measures.base.AdditiveMetric`); the normalised ones sum the discounted gains and divide
by the ideal once (:class:`~prefeval.measures.base.RatioMetric`), as trec_eval does, so that a perfect
ranking scores exactly 1.
"""

from __future__ import annotations

import numpy as np

from prefeval.measures.base import AdditiveMetric, Metric, Param, RatioMetric, register
from prefeval.measures.gains import GAINS, ideal_dcg_at, judged_list
from prefeval.measures.shares import CUTOFF, ideal_dcg, product_of_earlier, within
from prefeval.ranking.positions import Positions

JARVELIN_KEKALAINEN = "Järvelin and Kekäläinen, ACM TOIS 2002, doi:10.1145/582415.582418"


@register
class NDCG(RatioMetric):
    """nDCG@k = DCG@k / ideal DCG@k, with DCG@k = Σ_{i : x_i within k} g_i / log2(x_i + 1).

    The gain g_i is the document's grade (trec_eval's default); the ideal list sorts all m relevant
    grades descending and keeps the first k. Equals trec_eval ``ndcg`` and ``ndcg_cut.k``. Graded: every
    positive grade is a gain, whatever the relevance level (as in trec_eval, whose ``-l`` does not
    change ndcg).

    With a gain map (``ndcg@10,gains=1:3.5;2:9``, :mod:`prefeval.measures.gains`) g_i is the map's
    gain of the document's grade, negative gains included, and the ideal list holds the positive
    gains of the query's judged documents, largest first; a gain for grade 0 makes the judged
    non-relevant documents count (the measure then reads them). Equals trec_eval ``ndcg.1=3.5,2=9``
    (which has no cut-off) and ir_measures ``nDCG(gains={1: 3.5, 2: 9})@k`` where the gains are
    >= 0 (ir_measures turns a negative gain into an unjudged grade: gain 0). 0 when the ideal
    DCG is 0.
    """

    family = "ndcg"
    parameters = (CUTOFF, GAINS)
    reads_grades = True
    summary = "normalised discounted cumulative gain, gain = grade or gains= (trec_eval ndcg, ndcg_cut.k)"
    cite = JARVELIN_KEKALAINEN

    def __init__(self, *texts: str):
        super().__init__(*texts)
        _read_gains(self, (-np.inf, 1.0))

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return _discounted_gains(positions, ranks, self.param("gains"), self.param("k"))

    def denominator(self, positions: Positions) -> np.ndarray:
        return ideal_discounted_gain(positions, self.param("gains"), self.param("k"))

    def compute(self, positions: Positions) -> np.ndarray:
        gains = self.param("gains")
        if gains is None or gains.zero_gain == 0:
            return super().compute(positions)
        total = discounted_gain(positions, gains, self.param("k"))
        denominator = self.denominator(positions)
        return np.divide(total, denominator, out=np.zeros(total.shape), where=denominator > 0)

    def differences(self, positions: Positions, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        if self.reads_judged:
            values = self.compute(positions)
            return values[first] - values[second]
        return super().differences(positions, first, second)


def _read_gains(measure, negative_bounds: tuple[float, float]) -> None:
    """What a measure with a gain map (:data:`~prefeval.measures.gains.GAINS`) learns from it: it reads
    the judged non-relevant documents when grade 0 has a gain, and its range is ``negative_bounds``
    when some gain is negative."""
    gains = measure.param("gains")
    if gains is not None:
        measure.reads_judged = gains.zero_gain != 0
        if gains.has_negative:
            measure.bounds = negative_bounds


def _discounted_gains(positions: Positions, ranks: np.ndarray, gains, k: int) -> np.ndarray:
    """Each relevant document's gain / log2(rank + 1) within k: its grade, or its gain under ``gains``."""
    gained = positions.grades if gains is None else gains.gain(positions.grades)
    return np.where(within(ranks, k), gained / np.log2(ranks + 1.0), 0.0)


def discounted_gain(positions: Positions, gains, k: int) -> np.ndarray:
    """DCG@k per run and query, (R, Q): Σ gain / log2(rank + 1) over the documents within k, the
    relevant ones and, when ``gains`` gives grade 0 a gain, the judged non-relevant ones. Under the
    sequential arithmetic (:attr:`~prefeval.ranking.positions.Positions.sequential`: trec_eval's and
    ir_measures' conventions) the gains of both are added in rank order, as trec_eval's loop adds
    them (``m_ndcg.c``), so that the value is theirs to the last bit."""
    if gains is not None and gains.zero_gain != 0 and positions.sequential:
        judged = judged_list(positions, gains.gain(positions.grades), gains.zero_gain)
        return judged.query_sum(np.where(within(judged.ranks, k), judged.discounted(), 0.0))
    total = positions.segment_sum(_discounted_gains(positions, positions.ranks, gains, k))
    if gains is None or gains.zero_gain == 0:
        return total
    others = positions.others
    counted = (others.grades == 0) & within(others.ranks, k)
    return total + others.query_sum(np.where(counted, gains.zero_gain / np.log2(others.ranks + 1.0), 0.0))


def ideal_discounted_gain(positions: Positions, gains, k: int) -> np.ndarray:
    """The ideal DCG@k per query, (Q,): the query's grades (or positive gains under ``gains``) sorted
    in decreasing order, each over log2(place + 1), over the first k places."""
    if gains is None:
        return ideal_dcg(positions, positions.ideal, k)
    return ideal_dcg_at(positions, gains, k)


@register
class DCG(AdditiveMetric):
    """DCG@k = Σ_{i : x_i within k} g_i / log2(x_i + 1): discounted cumulative gain, gain = grade
    (linear), not normalised, so unbounded above (Järvelin and Kekäläinen, 2002). ``ndcg@k`` is its
    normalised form.

    With a gain map (``dcg@gains=1:3;2:9``, :mod:`prefeval.measures.gains`) g_i is the map's gain of the
    document's grade, negative gains included, and a gain for grade 0 makes the judged non-relevant
    documents within k count too: nDCG's numerator. ``dcg`` (k = 0) equals trec_eval 10's ``dcg``
    and ``dcg.1=3,2=9`` (``m_ndcg.c``: every retrieved document's gain, the gains of the levels its
    pairs leave out their grade).
    """

    family = "dcg"
    reads_grades = True
    parameters = (CUTOFF, GAINS)
    summary = "discounted cumulative gain, gain = grade or gains=, not normalised (trec_eval dcg)"
    cite = JARVELIN_KEKALAINEN + "; trec_eval dcg"
    bounds = (0.0, np.inf)

    def __init__(self, *texts: str):
        super().__init__(*texts)
        _read_gains(self, (-np.inf, np.inf))

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return _discounted_gains(positions, ranks, self.param("gains"), self.param("k"))

    def compute(self, positions: Positions) -> np.ndarray:
        if self.reads_judged:  # grade 0 has a gain: the judged non-relevant documents add theirs
            return discounted_gain(positions, self.param("gains"), self.param("k"))
        return super().compute(positions)


@register
class IdealDCG(Metric):
    """ideal DCG@k = Σ_{j <= min(k, n)} G_j / log2(j + 1), with G_1 >= G_2 >= ... >= G_n the grades of
    the query's n relevant documents (or, with a gain map, the positive gains of its judged documents),
    largest first: the DCG of the best possible ranking, nDCG's denominator. It is the qrels' and
    the same for every run (and for a run that retrieves nothing, or lacks the query). Equals trec_eval
    10's ``ideal_dcg`` (k = 0; ``ideal_dcg.1=3,2=9`` with a gain map).
    """

    family = "ideal_dcg"
    reads_grades = True
    parameters = (CUTOFF, GAINS)
    summary = "ideal discounted cumulative gain: the DCG of the best ranking, nDCG's denominator (trec_eval ideal_dcg)"
    cite = JARVELIN_KEKALAINEN + "; trec_eval ideal_dcg"
    bounds = (0.0, np.inf)

    def compute(self, positions: Positions) -> np.ndarray:
        ideal = ideal_discounted_gain(positions, self.param("gains"), self.param("k"))
        return np.broadcast_to(ideal, (positions.num_runs, len(ideal))).copy()


@register
class ExponentialNDCG(RatioMetric):
    """nDCG_exp@k = DCG_exp@k / ideal DCG_exp@k, with DCG_exp@k = Σ_{i : x_i within k} (2^g_i − 1) /
    log2(x_i + 1) (the gain of Burges et al., 2005). The ideal list sorts all m relevant grades
    descending and keeps the first k. With binary grades (2^1 − 1 = 1) it equals ``ndcg@k``.

    Large grades: 2^g overflows from g = 1024 on, so gains are computed scaled by the same power of
    two within each query (:func:`exponential_gains`), which the ratio does not see.

    The alias ``dcg_exp`` is the name MEASURES.md gives it; the value is normalised all the same.
    """

    family = "ndcg_exp"
    reads_grades = True
    aliases = ("dcg_exp",)
    parameters = (CUTOFF,)
    summary = "normalised discounted cumulative gain, gain = 2^grade - 1"
    cite = "Burges et al., ICML 2005, doi:10.1145/1102351.1102363"

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        gains = exponential_gains(positions, positions.grades)
        return np.where(within(ranks, self.param("k")), gains / np.log2(ranks + 1.0), 0.0)

    def denominator(self, positions: Positions) -> np.ndarray:
        return ideal_dcg(positions, exponential_gains(positions, positions.ideal), self.param("k"))


LARGEST_EXPONENT = 1000
"""Exponential gains are scaled so that no 2^g computed exceeds 2^1000 (float64 ends below 2^1024)."""


def exponential_gains(positions: Positions, grades: np.ndarray) -> np.ndarray:
    """The gains 2^g − 1 of ``grades`` (…, N), each segment's scaled by 2^−s, with s = max(0,
    ⌈largest grade of the segment⌉ − :data:`LARGEST_EXPONENT`): exactly 2^g − 1 for grades up to
    1000, and for larger ones finite gains in the right proportions (a ratio of sums of one segment's
    gains, as nDCG is, is the same)."""
    shift = np.maximum(np.ceil(positions.segment_max(positions.ideal)) - LARGEST_EXPONENT, 0.0)
    if not shift.any():
        return np.exp2(grades) - 1.0
    shift = positions.per_element(shift)
    return np.exp2(grades - shift) - np.exp2(-shift)


@register
class CumulativeGain(AdditiveMetric):
    """CG@k = Σ_{i : x_i within k} g_i: the grades of the relevant documents within k, no discount
    (unbounded above)."""

    family = "cg"
    reads_grades = True
    parameters = (CUTOFF,)
    summary = "cumulative gain: the sum of the grades within k"
    cite = JARVELIN_KEKALAINEN
    bounds = (0.0, np.inf)

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        return np.where(within(ranks, self.param("k")), positions.grades, 0.0)


@register
class RankBiasedPrecision(AdditiveMetric):
    """RBP@γ,k = (1 − γ) Σ_{i : x_i within k} γ^(x_i − 1) (Moffat and Zobel, 2008): a user who goes on
    to the next rank with probability γ, gain 1 for a relevant document; γ = 0.5 by default."""

    family = "rbp"
    parameters = (
        Param("gamma", float, 0.5, low=0.0, high=1.0, low_open=True, high_open=True, meaning="persistence"),
        CUTOFF,
    )
    summary = "rank-biased precision"
    cite = "Moffat and Zobel, ACM TOIS 2008, doi:10.1145/1416950.1416952"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        gamma = self.param("gamma")
        return np.where(within(ranks, self.param("k")), (1.0 - gamma) * gamma ** (ranks - 1.0), 0.0)


@register
class PFound(AdditiveMetric):
    """pFound@k,pbreak (Segalovich, 2010): the probability that a user scanning down the list finds what they need,
    Σ_{ranks j <= k} pLook_j · pRel_j, with pLook_1 = 1, pLook_j = pLook_{j−1} · (1 − pRel_{j−1}) ·
    (1 − pbreak), and pRel = grade / (the largest grade of the qrels), 0 for non-relevant and unjudged
    documents.

    Since only relevant documents have pRel > 0, the user looks at the i-th relevant document with
    probability Π_{j<i} (1 − pRel_j) · (1 − pbreak)^(x_i − 1), and its share is pRel_i times that.
    With binary grades (pRel = 1), pFound = (1 − pbreak)^(x_1 − 1). Defaults: no cut-off, pbreak 0.15.
    """

    family = "pfound"
    reads_grades = True
    parameters = (
        CUTOFF,
        Param("pbreak", float, 0.15, low=0.0, high=1.0, high_open=True,
              meaning="probability of abandoning at each rank"),
    )
    summary = "pFound: probability of finding a relevant document, with abandonment"
    cite = "Segalovich, Machine learning in search quality at Yandex, SIGIR 2010 industry track"

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        k, pbreak = self.param("k"), self.param("pbreak")
        p_rel = positions.grades / positions.max_grade
        unsatisfied = product_of_earlier(positions, 1.0 - p_rel)
        return np.where(within(ranks, k), p_rel * unsatisfied * (1.0 - pbreak) ** (ranks - 1.0), 0.0)
