"""The intent-aware (novelty and diversity) measures of ndeval: ERR-IA and nERR-IA, α-DCG and α-nDCG,
NRBP and nNRBP, MAP-IA, P-IA and subtopic recall.

**Notation.** A query has S subtopics (intents) with a relevant document: those of its subtopic
qrels (:mod:`prefeval.io.subtopics`) where a judgment reaches the relevance level, or, on ad hoc
qrels, one subtopic of all its relevant documents. Relevance per subtopic is binary, J(d, s) = 1 when
document d is judged relevant to subtopic s (ndeval reads every positive grade as 1). For a ranking,
d_r is the document at rank r and c_s(r) = Σ_{r' < r} J(d_r', s) counts the documents above rank r
relevant to s. With a redundancy intolerance α ∈ [0, 1], the novelty-discounted gain at rank r is

    G(r) = Σ_s J(d_r, s) · (1 − α)^(c_s(r)),

a document earning less for each subtopic that the documents above it already covered. Every value
is 0 on a query with S = 0 (no relevant document) and on a run that retrieves no relevant document.

* **α-DCG@k** (Clarke et al., SIGIR 2008) with ndeval's collection-independent normalisation by the
  "ideal ideal" ranking, whose every document is relevant to every subtopic:
  Σ_{r <= k} G(r) / log2(r + 1)  /  Σ_{r <= k} S (1 − α)^(r − 1) / log2(r + 1).
* **ERR-IA@k** (Chapelle et al., CIKM 2009, made intent-aware as Agrawal et al., WSDM 2009; α is the
  probability that a relevant document satisfies the user): with the same normalisation,
  Σ_{r <= k} G(r) / r  /  Σ_{r <= k} S (1 − α)^(r − 1) / r.
* **α-nDCG@k**, **nERR-IA@k**: the two above divided by their value on the **ideal ranking**, which
  ndeval builds greedily (the best ranking is NP-hard to find): at each rank, the document of largest
  G among those not yet placed, ties going to the larger docid (as bytes, C's ``strcmp``); 0 where
  the run's value is 0. A run can beat the greedy ideal, so that their values can exceed 1.
* **NRBP** (Clarke, Kolla and Vechtomova, ICTIR 2009), with patience β ∈ [0, 1]:
  (1 − (1 − α) β) / S · Σ_r G(r) β^(r − 1), over the whole ranking; **nNRBP** divides it by its value
  on the ideal ranking (0 where that is 0: α = 0 with β = 1, where ndeval prints NaN).
* **MAP-IA** (Agrawal et al., WSDM 2009): (1/S) Σ_s AP_s, AP_s the average precision of the
  documents relevant to s (m_s of them: Σ_i i / x_i over the finite ranks x_1 < x_2 < ... of those
  documents, divided by m_s), over the whole ranking.
* **P-IA@k**: (1/S) Σ_s P_s@k = Σ_{r <= k} Σ_s J(d_r, s) / (k S).
* **strec@k**, subtopic recall (Zhai, Cohen and Lafferty, SIGIR 2003): the fraction of the S
  subtopics with a relevant document within rank k.

**ndeval's arithmetic, to the last bit.** The values are ndeval 4.5's (and pyndeval's, its Python
binding that ir_measures calls), computed in its order of operations so that ``prefeval ndeval``
prints its digits: (1 − α)^c and β^(r − 1) by repeated multiplication, G(r) added in the order of
the subtopics, the terms of a sum added rank by rank, the normalisations ndeval's (the ideal ideal's
S (1 − α)^(r − 1) by repeated multiplication from S; α-nDCG the ratio of the two normalised values),
the logarithms those of C (``log(2) / log(r + 1)``). One difference, on purpose: ndeval leaves the
value at the first rank unnormalised (its loop of normalisation starts at the second rank), so that
its α-DCG@1 is G(1) and its ERR-IA@1 is G(1), which can exceed 1; prefeval normalises them as at
every other cut-off (G(1) / S).

The measures read the judgments per subtopic of :class:`~prefeval.ranking.intents.IntentPositions`
(:attr:`~prefeval.ranking.positions.Positions.intents`), or each query as one intent when the
positions carry none; what is computed once for several measures (the ranked gains of the runs and
the ideal ranking, per α) is kept in the intents' memo.
"""

from __future__ import annotations

import functools
import math
from abc import abstractmethod

import numpy as np

from prefeval.io.codes import distinct
from prefeval.measures.base import Metric, Param, register
from prefeval.ranking.intents import IntentPositions, intent_view
from prefeval.ranking.positions import Positions, segment_cumsum

CLARKE_2008 = "Clarke et al., SIGIR 2008, doi:10.1145/1390334.1390446"
CHAPELLE_2009 = "Chapelle et al., CIKM 2009, doi:10.1145/1645953.1646033; Agrawal et al., WSDM 2009, " \
                "doi:10.1145/1498759.1498766"
CLARKE_2009 = "Clarke, Kolla and Vechtomova, ICTIR 2009 (LNCS 5766)"
AGRAWAL_2009 = "Agrawal et al., WSDM 2009, doi:10.1145/1498759.1498766"
ZHAI_2003 = "Zhai, Cohen and Lafferty, SIGIR 2003, doi:10.1145/860435.860440"

DEFAULT_ALPHA = DEFAULT_BETA = 0.5
"""ndeval's defaults of α and β."""
DEFAULT_DEPTH = 20
"""The cut-off of the measures at k when none is given: ndeval's deepest (its ``DEPTH``)."""

MAX_DEPTH = 10**6
"""The deepest cut-off: the normalisations sum a term per rank up to k (the ideal ideal's, of every
rank, however short the runs)."""
DEPTH = Param("k", int, DEFAULT_DEPTH, low=1, high=MAX_DEPTH, meaning="rank cut-off")
ALPHA = Param("alpha", float, DEFAULT_ALPHA, low=0.0, high=1.0,
              meaning="redundancy intolerance: a subtopic's gain is (1 - alpha)^(documents above relevant to it)")
BETA = Param("beta", float, DEFAULT_BETA, low=0.0, high=1.0, meaning="patience: the weight of rank r is beta^(r - 1)")


# --- ndeval's arithmetic --------------------------------------------------------------------------

def powers(base: float, count: int, first: float = 1.0) -> np.ndarray:
    """first, first·base, first·base·base, ... (``count`` values), each by one more multiplication,
    as ndeval's loops multiply (``gain *= 1 - alpha``), not by ``pow``."""
    values = np.full(max(count, 0), base, dtype=np.float64)
    if count:
        values[0] = first
    return np.multiply.accumulate(values)


@functools.lru_cache(maxsize=16)
def discounts(count: int) -> np.ndarray:
    """ndeval's discount of ranks 1 .. ``count``: log(2) / log(r + 1), with C's ``log``."""
    values = np.array([math.log(2.0) / math.log(rank + 1.0) for rank in range(1, count + 1)], dtype=np.float64)
    values.flags.writeable = False
    return values


class RankedGains:
    """For rankings of the intent documents (``doc_ranks``, (R, D), one row per run, or the ideal's
    one row): each query's documents sorted by rank (``ranks``, ``inf`` last) and the gain G(r) of
    each at its rank (``gains``), for one α (module docstring); and per judgment, the 1-based place
    of its document among the documents of its subtopic (``place``), and its rank (``judged``)."""

    def __init__(self, intents: IntentPositions, doc_ranks: np.ndarray, alpha: float):
        self.intents = intents
        judged = intents.ranks(doc_ranks)  # (R, J): the rank of each judgment's document
        finite = np.isfinite(judged)
        deepest = float(judged[finite].max(initial=0.0)) + 1.0
        segment = intents.element_segment
        order = np.argsort(segment * (deepest + 1.0) + np.where(finite, judged, deepest), axis=-1, kind="stable")
        place = np.empty(judged.shape, dtype=np.int64)
        within = np.arange(judged.shape[-1]) - np.repeat(intents.start, intents.length)
        np.put_along_axis(place, order, np.broadcast_to(within, judged.shape), axis=-1)
        gain = np.where(finite, powers(1.0 - alpha, max(int(intents.length.max(initial=0)), 1))[place], 0.0)
        self.place = place + 1
        self.judged = judged
        # G per document: its judgments' gains added in the order of its subtopics
        by_document = np.argsort(intents.element_doc, kind="stable")
        counts = np.bincount(intents.element_doc, minlength=doc_ranks.shape[-1])
        first = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        scores = np.zeros(doc_ranks.shape, dtype=np.float64)
        for step in range(int(counts.max(initial=0))):
            documents = np.flatnonzero(counts > step)
            scores[..., documents] += gain[..., by_document[first[documents] + step]]
        doc_finite = np.isfinite(doc_ranks)
        doc_deepest = float(doc_ranks[doc_finite].max(initial=0.0)) + 1.0
        key = intents.doc_query * (doc_deepest + 1.0) + np.where(doc_finite, doc_ranks, doc_deepest)
        by_rank = np.argsort(key, axis=-1, kind="stable")
        self.ranks = np.take_along_axis(doc_ranks, by_rank, axis=-1)
        self.gains = np.take_along_axis(scores, by_rank, axis=-1)

    def total(self, terms: np.ndarray) -> np.ndarray:
        """(R, Q): Σ of ``terms`` (shaped as :attr:`ranks`) over each query's documents, added in rank
        order one after the other (ndeval's loops)."""
        return last_of_segments(segment_cumsum(terms, self.intents.doc_start, self.intents.doc_length),
                                self.intents.doc_start, self.intents.doc_length)

    def discounted(self, weights: np.ndarray, k: int | None, divide: bool = False) -> np.ndarray:
        """(R, Q): Σ_{r <= k} G(r) · weights[r − 1], or G(r) / weights[r − 1] when ``divide`` (k None:
        every rank; ``weights`` must cover the ranks counted)."""
        counted = np.isfinite(self.ranks) if k is None else self.ranks <= k
        weight = weights[np.where(counted, self.ranks, 1.0).astype(np.int64) - 1]
        terms = self.gains / weight if divide else self.gains * weight
        return self.total(np.where(counted, terms, 0.0))

    @property
    def deepest(self) -> int:
        """The deepest finite rank of a relevant document (0 when none is retrieved)."""
        finite = self.ranks[np.isfinite(self.ranks)]
        return int(finite.max(initial=0.0))


def last_of_segments(running: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The last value of each segment of running sums (..., N): (..., S), 0 for an empty segment."""
    out = np.zeros(running.shape[:-1] + (len(length),))
    filled = length > 0
    out[..., filled] = running[..., (start + length - 1)[filled]]
    return out


def ranked_gains(intents: IntentPositions, alpha: float) -> RankedGains:
    """The runs' :class:`RankedGains` at α, made once per intents."""
    return intents.remembered(("runs", alpha), lambda: RankedGains(intents, intents.doc_ranks, alpha))


def ideal_gains(intents: IntentPositions, alpha: float) -> RankedGains:
    """The ideal ranking's :class:`RankedGains` at α (one row), made once per intents."""
    return intents.remembered(("ideal", alpha),
                              lambda: RankedGains(intents, ideal_ranks(intents, alpha)[None, :], alpha))


def ideal_ranks(intents: IntentPositions, alpha: float) -> np.ndarray:
    """(D,): the rank of every intent document in ndeval's greedy ideal ranking of its query (module
    docstring), for all queries at once: at each step, each query places the document of largest gain
    among those not yet placed (a gain added in the order of its subtopics), ties to the larger docid.
    Documents of gain 0 once nothing else is left (α = 1) follow in any order: they add nothing."""
    num_queries = intents.num_queries
    doc_query = intents.doc_query
    local_doc = np.arange(len(doc_query)) - intents.doc_start[doc_query]
    segment_query = intents.query
    first_segment = np.searchsorted(segment_query, np.arange(num_queries))
    local_subtopic = np.arange(len(segment_query)) - first_segment[segment_query]
    width, depth = int(intents.doc_length.max(initial=0)), int(intents.num_intents.max(initial=0))
    ranks = local_doc + 1.0  # a query of one subtopic: any order of its documents is ideal
    several = intents.num_intents >= 2
    if not several.any():
        return ranks
    member = np.zeros((num_queries, width, depth), dtype=bool)
    element_segment = intents.element_segment
    member[segment_query[element_segment], local_doc[intents.element_doc], local_subtopic[element_segment]] = True
    tie = np.full((num_queries, width), -1, dtype=np.int64)  # larger wins; -1: no document there
    if intents.docids is not None and len(doc_query):
        _, byte_rank = np.unique(intents.docids.byte_strings(np.arange(len(doc_query))), return_inverse=True)
        tie[doc_query, local_doc] = byte_rank.ravel()
    else:
        tie[doc_query, local_doc] = len(doc_query) - np.arange(len(doc_query))  # the first document first
    gains = np.ones((num_queries, depth))
    open_ = tie >= 0
    step_rank = np.zeros((num_queries, width))
    active = np.flatnonzero(open_.any(axis=1) & several)
    factor = 1.0 - alpha
    for step in range(1, width + 1):
        if not len(active):
            break
        scores = np.zeros((len(active), width))
        for subtopic in range(depth):  # in the order of the subtopics, as ndeval adds them
            scores += np.where(member[active, :, subtopic], gains[active, subtopic, None], 0.0)
        candidate = open_[active]
        scores = np.where(candidate, scores, -1.0)
        best = scores.max(axis=1)
        chosen = np.argmax(np.where(scores == best[:, None], tie[active], -2), axis=1)
        placing = best > 0.0
        rows, picked = active[placing], chosen[placing]
        step_rank[rows, picked] = step
        open_[rows, picked] = False
        covered = member[rows, picked]
        gains[rows] = np.where(covered, gains[rows] * factor, gains[rows])
        active = rows[open_[rows].any(axis=1)]
    greedy = several[doc_query]
    placed = step_rank[doc_query, local_doc]
    ranks[greedy] = placed[greedy]
    # the documents of gain 0 (alpha = 1) once every other is placed: after them, in any order
    left = np.flatnonzero(greedy & (placed == 0))
    if len(left):
        query = doc_query[left]
        placed_count = np.bincount(doc_query[greedy & (placed > 0)], minlength=num_queries)
        ranks[left] = placed_count[query] + 1 + (np.arange(len(left)) - np.searchsorted(query, query))
    return ranks


def ideal_ideal(num_intents: np.ndarray, alpha: float, weights: np.ndarray, k: int, divide: bool = False,
                ) -> np.ndarray:
    """(Q,): ndeval's "ideal ideal" normaliser at cut-off k, Σ_{r <= k} S (1 − α)^(r − 1) · weights[r − 1]
    (or divided by them, ``divide``), S (1 − α)^(r − 1) by repeated multiplication from S, the terms
    added rank by rank (0 where S = 0)."""
    out = np.zeros(len(num_intents))
    for count in distinct(num_intents[num_intents > 0]):
        gains = powers(1.0 - alpha, k, float(count))
        terms = gains / weights[:k] if divide else gains * weights[:k]
        out[num_intents == count] = np.cumsum(terms)[-1]
    return out


def _divided(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, broadcast, 0 where the denominator is 0 (never a warning)."""
    shape = np.broadcast_shapes(np.shape(numerator), np.shape(denominator))
    return np.divide(numerator, denominator, out=np.zeros(shape), where=np.asarray(denominator) != 0)


# --- the measures ---------------------------------------------------------------------------------

class IntentAwareMetric(Metric):
    """A metric over the subtopics of a query (module docstring); binary relevance per subtopic."""

    reads_intents = True

    def compute(self, positions: Positions) -> np.ndarray:
        return self.of_intents(intent_view(positions))

    @abstractmethod
    def of_intents(self, intents: IntentPositions) -> np.ndarray:
        """Values (R, Q) from the positions per intent."""


class _CascadeAtK(IntentAwareMetric):
    """α-DCG@k and ERR-IA@k, normalised by the ideal ideal; their n- forms by the greedy ideal."""

    parameters = (DEPTH, ALPHA)
    ideal_normalised = False
    divide = False
    """Whether a rank's gain is divided by its weight (ERR's G(r) / r) rather than multiplied (DCG's)."""

    @abstractmethod
    def weights(self, k: int) -> np.ndarray:
        """The weight of each rank 1..k (DCG's discount, ERR's rank)."""

    def normalised(self, gains: RankedGains, intents: IntentPositions) -> np.ndarray:
        k, alpha = self.param("k"), self.param("alpha")
        weights = self.weights(k)
        return _divided(gains.discounted(weights, k, self.divide),
                        ideal_ideal(intents.num_intents, alpha, weights, k, self.divide))

    def of_intents(self, intents: IntentPositions) -> np.ndarray:
        alpha = self.param("alpha")
        values = self.normalised(ranked_gains(intents, alpha), intents)
        if not self.ideal_normalised:
            return values
        ideal = self.normalised(ideal_gains(intents, alpha), intents)[0]
        return np.where(values != 0, _divided(values, ideal), 0.0)


class _DCGWeights:
    @staticmethod
    def weights(k: int) -> np.ndarray:
        return discounts(k)


class _ERRWeights:
    divide = True

    @staticmethod
    def weights(k: int) -> np.ndarray:
        return np.arange(1.0, k + 1.0)


@register
class AlphaDCG(_DCGWeights, _CascadeAtK):
    """α-DCG@k: Σ_{r <= k} G(r) / log2(r + 1), divided by ndeval's ideal ideal Σ_{r <= k} S (1 − α)^(r − 1)
    / log2(r + 1); G(r) = Σ_s J(d_r, s) (1 − α)^(c_s(r)) (module docstring). ndeval's alpha-DCG@k
    (k = 5, 10, 20), ir_measures' alpha_DCG(alpha=α)@k. In [0, 1]."""

    family = "alpha_dcg"
    summary = "alpha-DCG: novelty-discounted DCG over subtopics, normalised by the ideal ideal (ndeval)"
    cite = CLARKE_2008


@register
class AlphaNDCG(_DCGWeights, _CascadeAtK):
    """α-nDCG@k: α-DCG@k divided by its value on ndeval's greedy ideal ranking (module docstring); 0
    where α-DCG@k is 0. ndeval's alpha-nDCG@k, ir_measures' alpha_nDCG(alpha=α)@k. >= 0; above 1 when
    a run beats the greedy ideal."""

    family = "alpha_ndcg"
    ideal_normalised = True
    bounds = (0.0, np.inf)
    summary = "alpha-nDCG: alpha-DCG over its value on the greedy ideal ranking (ndeval)"
    cite = CLARKE_2008


@register
class ERRIA(_ERRWeights, _CascadeAtK):
    """ERR-IA@k: Σ_{r <= k} G(r) / r, divided by ndeval's ideal ideal Σ_{r <= k} S (1 − α)^(r − 1) / r; a
    document relevant to a subtopic satisfies its user with probability α (module docstring).
    ndeval's ERR-IA@k, ir_measures' ERR_IA@k (α = 0.5). In [0, 1]."""

    family = "err_ia"
    summary = "intent-aware expected reciprocal rank, normalised by the ideal ideal (ndeval)"
    cite = CHAPELLE_2009


@register
class NERRIA(_ERRWeights, _CascadeAtK):
    """nERR-IA@k: ERR-IA@k divided by its value on ndeval's greedy ideal ranking; 0 where ERR-IA@k is
    0. ndeval's nERR-IA@k, ir_measures' nERR_IA@k (α = 0.5). >= 0; above 1 when a run beats the
    greedy ideal."""

    family = "nerr_ia"
    ideal_normalised = True
    bounds = (0.0, np.inf)
    summary = "intent-aware ERR over its value on the greedy ideal ranking (ndeval)"
    cite = CHAPELLE_2009


class _NoveltyRBP(IntentAwareMetric):
    parameters = (ALPHA, BETA)
    ideal_normalised = False

    def of_gains(self, gains: RankedGains, intents: IntentPositions) -> np.ndarray:
        alpha, beta = self.param("alpha"), self.param("beta")
        decay = powers(beta, max(gains.deepest, 1))
        total = gains.discounted(decay, None)
        factor = _divided(np.array(1.0 - (1.0 - alpha) * beta), intents.num_intents.astype(np.float64))
        return total * factor

    def of_intents(self, intents: IntentPositions) -> np.ndarray:
        alpha = self.param("alpha")
        values = self.of_gains(ranked_gains(intents, alpha), intents)
        if not self.ideal_normalised:
            return values
        return _divided(values, self.of_gains(ideal_gains(intents, alpha), intents)[0])


@register
class NRBP(_NoveltyRBP):
    """NRBP: (1 − (1 − α) β) / S · Σ_r G(r) β^(r − 1), over the whole ranking (module docstring).
    ndeval's NRBP, ir_measures' NRBP(alpha=α, beta=β). In [0, 1]."""

    family = "nrbp"
    summary = "novelty- and rank-biased precision over subtopics (ndeval)"
    cite = CLARKE_2009


@register
class NNRBP(_NoveltyRBP):
    """nNRBP: NRBP divided by its value on ndeval's greedy ideal ranking; 0 where that is 0 (α = 0
    with β = 1; ndeval prints NaN there). ndeval's nNRBP, ir_measures' nNRBP(alpha=α, beta=β). >= 0;
    above 1 when a run beats the greedy ideal."""

    family = "nnrbp"
    ideal_normalised = True
    bounds = (0.0, np.inf)
    summary = "NRBP over its value on the greedy ideal ranking (ndeval)"
    cite = CLARKE_2009


@register
class APIA(IntentAwareMetric):
    """MAP-IA: (1/S) Σ_s AP_s, with AP_s = (Σ_i i / x_i) / m_s over the finite ranks x_1 < x_2 < ... of
    the m_s documents relevant to subtopic s, over the whole ranking; the terms added rank by rank, the
    subtopics in their order, then divided by S (ndeval's order). ndeval's MAP-IA, ir_measures'
    AP_IA (alias MAP_IA). In [0, 1]."""

    family = "ap_ia"
    aliases = ("map_ia",)
    summary = "intent-aware average precision: the mean over subtopics of their AP (ndeval MAP-IA)"
    cite = AGRAWAL_2009

    def of_intents(self, intents: IntentPositions) -> np.ndarray:
        ranks = intents.sorted_ranks()
        index = np.arange(ranks.shape[-1]) - np.repeat(intents.start, intents.length) + 1.0
        terms = np.where(np.isfinite(ranks), index / ranks, 0.0)
        per_subtopic = last_of_segments(segment_cumsum(terms, intents.start, intents.length),
                                        intents.start, intents.length) / np.maximum(intents.length, 1)
        num_intents = intents.num_intents
        first = np.concatenate(([0], np.cumsum(num_intents)[:-1])).astype(np.int64)
        totals = last_of_segments(segment_cumsum(per_subtopic, first, num_intents), first, num_intents)
        return _divided(totals, num_intents.astype(np.float64))


@register
class PIA(IntentAwareMetric):
    """P-IA@k: (1/S) Σ_s P_s@k = (number of pairs (r, s) with r <= k and J(d_r, s) = 1) / (k S),
    however few documents the run retrieved (ndeval's P-IA@k, ir_measures' P_IA@k). In [0, 1]."""

    family = "p_ia"
    parameters = (DEPTH,)
    summary = "intent-aware precision at k: the mean over subtopics of their P@k (ndeval)"
    cite = AGRAWAL_2009

    def of_intents(self, intents: IntentPositions) -> np.ndarray:
        k = self.param("k")
        within = intents.ranks() <= k
        counts = _query_sums(within, intents)
        return _divided(counts, (k * intents.num_intents).astype(np.float64))


@register
class SubtopicRecall(IntentAwareMetric):
    """strec@k, subtopic recall: the fraction of the S subtopics that have a relevant document within
    rank k (ndeval's strec@k, ir_measures' StRecall@k). In [0, 1]."""

    family = "strec"
    parameters = (DEPTH,)
    summary = "subtopic recall at k: the fraction of the subtopics covered within k (ndeval)"
    cite = ZHAI_2003

    def of_intents(self, intents: IntentPositions) -> np.ndarray:
        k = self.param("k")
        within = intents.ranks() <= k
        covered = _segment_any(within, intents)
        counts = _sum_by_query(covered, intents)
        return _divided(counts, intents.num_intents.astype(np.float64))


def _segment_any(values: np.ndarray, intents: IntentPositions) -> np.ndarray:
    """(R, G): whether any judgment of each subtopic segment has ``values``."""
    out = np.zeros(values.shape[:-1] + (len(intents.length),))
    if len(intents.length):
        out = np.logical_or.reduceat(values, intents.start, axis=-1).astype(np.float64)
    return out


def _sum_by_query(per_segment: np.ndarray, intents: IntentPositions) -> np.ndarray:
    """(R, Q): per-segment values (R, G) added up per query (an integer count: any order)."""
    out = np.zeros(per_segment.shape[:-1] + (intents.num_queries,))
    np.add.at(out.T, intents.query, per_segment.T)
    return out


def _query_sums(values: np.ndarray, intents: IntentPositions) -> np.ndarray:
    """(R, Q): per-judgment counts (R, J) added up per query."""
    return _sum_by_query(_segment_sums(values, intents), intents)


def _segment_sums(values: np.ndarray, intents: IntentPositions) -> np.ndarray:
    out = np.zeros(values.shape[:-1] + (len(intents.length),))
    if len(intents.length):
        out = np.add.reduceat(values.astype(np.float64), intents.start, axis=-1)
    return out
