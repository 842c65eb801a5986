"""Metrics that read more of the qrels than the relevant documents: bpref, gm_bpref, infAP, the number of
judged non-relevant documents retrieved, the unjudged and judged fractions of the top k, and
ir_measures' Compat and Accuracy.

Notation (that of :mod:`prefeval.measures.shares`): the query's m relevant documents (grade at the
relevance level) sit at ranks x_1 <= ... <= x_m (inf: not retrieved), i is the 1-based index into x,
n the number of documents the run retrieved for the query. The qrels split every other document into

* judged non-relevant: in the qrels with a grade >= 0 below the relevance level (N of them per query);
* unjudged in the pool: in the qrels with a negative grade (trec_eval's "unjudged in pool"; sampled
  pools, infAP's, mark them -1 or -2, and any negative grade is read the same way);
* not in the pool: retrieved, but not in the qrels at all.

Above x_i there are x_i - 1 documents: i - 1 relevant ones, b_i judged non-relevant ones, u_i unjudged
ones of the pool, and the rest not in the pool. The measures that need b_i, u_i or N read the
positions' :attr:`~prefeval.ranking.positions.Positions.others` (``reads_judged``). None of these metrics
is a sum of per-document shares that depend on the document's own rank alone, so none is an
:class:`~prefeval.measures.base.AdditiveMetric`: the analyses over random ranks do not take them.

A query without relevant documents (kept under trec_eval's convention) has value 0 for every metric
here except unj@k, judged@k and num_nonrel_judged_ret, which count whatever the run retrieved. A query
the run did not answer (an empty list, or trec_eval's ``-c``) has n = 0: every value is 0.
"""

from __future__ import annotations

import numpy as np

from prefeval.errors import UsageError
from prefeval.measures.aggregators import GEOMETRIC, SUM
from prefeval.measures.base import Metric, Param, register
from prefeval.measures.shares import CUTOFF, MAX_CUTOFF, per_document, powers_of, query_steps, within
from prefeval.ranking.positions import Positions

BPREF_PAPER = "Buckley and Voorhees, SIGIR 2004, doi:10.1145/1008992.1009000"
INFAP_PAPER = "Yilmaz and Aslam, CIKM 2006, doi:10.1145/1183614.1183633"
IR_MEASURES_PAPER = "MacAvaney, Macdonald and Ounis, ECIR 2022, doi:10.1007/978-3-030-99739-7_38"
COMPAT_PAPER = "Clarke, Vtyurina and Smucker, ACM TOIS 2021, doi:10.1145/3451161"

INFAP_EPSILON = 1e-5
"""The smoothing constant of trec_eval's infAP (INFAP_EPSILON of its trec_eval.h)."""

UNJUDGED_DEPTH = Param("k", int, 10, low=0, high=MAX_CUTOFF, meaning="rank cut-off; 0 means the whole list")
"""unj's cut-off: 10 by default, the middle one of trec_eval's default list 5, 10, 20."""


def _divide(numerator: np.ndarray, denominator) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (never a warning)."""
    shape = np.broadcast_shapes(np.shape(numerator), np.shape(denominator))
    return np.divide(numerator, denominator, out=np.zeros(shape), where=np.asarray(denominator) > 0)


def _depth(positions: Positions, k: int) -> np.ndarray:
    """min(k, n) per run and query (k = 0: n), (R, Q)."""
    retrieved = positions.num_retrieved.astype(np.float64)
    return retrieved if k == 0 else np.minimum(float(k), retrieved)


class _Judged(Metric):
    """A metric that reads the query's judged non-relevant and unjudged documents."""

    reads_judged = True


@register
class Bpref(_Judged):
    """bpref = (1/m) Σ_{i : x_i finite} (1 − min(b_i, m) / min(N, m)), where b_i is the number of
    judged non-relevant documents ranked above the i-th relevant one and N the number of judged
    non-relevant documents of the query (retrieved or not); a relevant document with b_i = 0 adds 1.

    Equals trec_eval ``bpref`` and ir_measures ``Bpref`` (computed by pytrec_eval) per query: only
    judged documents count; unjudged documents of the pool (negative grades) and documents outside
    the qrels are skipped wherever they are. A document judged with a grade below the relevance
    level (``-l``, or ``rel=``) is judged non-relevant. m = 0 (no relevant document, a query kept
    under trec_eval's convention) gives 0, and so does an empty list. The fraction is 1 − min(b_i, m)
    / min(N, m) as trec_eval writes it (b_i > 0 implies N > 0 and m > 0: no division by 0).
    """

    family = "bpref"
    summary = "binary preference: the judged non-relevant documents ranked above each relevant one (trec_eval bpref)"
    cite = BPREF_PAPER + "; trec_eval bpref"

    def compute(self, positions: Positions) -> np.ndarray:
        others = positions.others
        judged_nonrelevant = others.grades >= 0
        m = positions.length.astype(np.float64)
        above = others.count_above(positions, positions.ranks, judged_nonrelevant).astype(np.float64)
        pool = np.minimum(others.query_sum(judged_nonrelevant.astype(np.float64)), m)
        cap = per_document(positions, pool)
        fraction = _divide(np.minimum(above, per_document(positions, m)), cap)
        terms = np.where(np.isfinite(positions.ranks), np.where(above > 0, 1.0 - fraction, 1.0), 0.0)
        return _divide(positions.segment_sum(terms), m)


@register
class GeometricBpref(Bpref):
    """gm_bpref: bpref per query (see ``bpref``), summarised by the geometric mean over queries,
    exp(mean(log(max(bpref, 1e-5)))), as trec_eval's ``gm_bpref``.

    trec_eval prints gm_bpref on the summary line only; its per-query value, as pytrec_eval returns
    it, is log(max(bpref, 1e-5)). prefeval's per-query value is bpref itself (so that per-query lines
    and differences between runs read as bpref); only the summary differs.
    """

    family = "gm_bpref"
    summary = "bpref with the geometric mean over queries (trec_eval gm_bpref)"
    cite = BPREF_PAPER + "; trec_eval gm_bpref"
    aggregator = GEOMETRIC


@register
class InferredAP(_Judged):
    """infAP = (1/m) Σ_{i : x_i finite} t_i, the inferred average precision of trec_eval, where with
    a = i − 1 relevant, b = b_i judged non-relevant and u = u_i unjudged (in the pool) documents
    above x_i, and ε = 1e-5,

        t_i = 1                                                                   if x_i = 1,
        t_i = 1/x_i + ((x_i − 1)/x_i) · ((a + b + u)/(x_i − 1)) · ((a + ε)/(a + b + 2ε))   otherwise.

    The expected precision at x_i: the document itself, plus the documents above it that were in the
    pool, with the relevant fraction of the judged ones among them (smoothed by ε) as the chance each
    is relevant; those above it outside the pool count as non-relevant. Computed with the operations in
    trec_eval's order, so the values agree with trec_eval ``infAP`` and ir_measures ``infAP``
    (pytrec_eval) per query, to the last bits. Unjudged documents of the pool are those of negative
    grade in the qrels (-1 or -2 in sampled pools). m = 0 or an empty list gives 0.
    """

    family = "infap"
    summary = "inferred average precision over a sampled pool (trec_eval infAP)"
    cite = INFAP_PAPER + "; trec_eval infAP"

    def compute(self, positions: Positions) -> np.ndarray:
        others = positions.others
        judged = others.grades >= 0
        ranks = positions.ranks
        nonrelevant = others.count_above(positions, ranks, judged).astype(np.float64)
        unjudged = others.count_above(positions, ranks, ~judged).astype(np.float64)
        relevant = np.broadcast_to(positions.index - 1.0, ranks.shape)
        finite = np.isfinite(ranks)
        later = finite & (ranks > 1)
        above = np.where(later, ranks - 1.0, 1.0)  # trec_eval's j, the 0-based rank (1 where unused)
        in_pool = relevant + nonrelevant + unjudged
        precision = (relevant + INFAP_EPSILON) / (relevant + nonrelevant + 2 * INFAP_EPSILON)
        estimate = 1.0 / (above + 1.0) + (above / (above + 1.0)) * (in_pool / above) * precision
        terms = np.where(later, estimate, np.where(finite, 1.0, 0.0))
        return _divide(positions.segment_sum(terms), positions.length.astype(np.float64))


@register
class NonRelevantJudgedRetrieved(_Judged):
    """num_nonrel_judged_ret = the number of retrieved documents judged non-relevant (in the qrels
    with a grade >= 0 below the relevance level). Equals trec_eval ``num_nonrel_judged_ret``: a count
    per query, summed (not averaged) over queries on the summary line. 0 for an empty list."""

    family = "num_nonrel_judged_ret"
    summary = "number of judged non-relevant documents retrieved (trec_eval num_nonrel_judged_ret)"
    cite = "trec_eval num_nonrel_judged_ret (m_num_nonrel_judged_ret.c)"
    bounds = (0.0, np.inf)
    counts = True
    aggregator = SUM

    def compute(self, positions: Positions) -> np.ndarray:
        others = positions.others
        return others.count_within(0, others.grades >= 0).astype(np.float64)


@register
class Unjudged(_Judged):
    """unj@k = (the number of unjudged documents among the first k retrieved) / k, where unjudged
    means outside the qrels or in them with a negative grade (unjudged in the pool). Equals trec_eval
    ``unj.k`` (printed ``unj_k``): a list shorter than k is taken as padded with judged documents
    (the denominator stays k).

    k = 10 by default (trec_eval's ``-m unj`` computes unj at 5, 10 and 20; ask for ``unj@5,10,20`` or
    ``unj.5,10,20``).
    k = 0 is the fraction of the whole list (0 for an empty list); trec_eval has no counterpart.
    ``judged@k`` is the ir_measures view of the same question, with two differences (see there).
    """

    family = "unj"
    parameters = (UNJUDGED_DEPTH,)
    summary = "fraction of the top k that is unjudged, k as denominator (trec_eval unj.k)"
    cite = "trec_eval unj (m_unjudged.c)"

    def compute(self, positions: Positions) -> np.ndarray:
        k = self.param("k")
        others = positions.others
        unjudged = positions.unjudged_within(k) + others.count_within(k, others.grades < 0)
        return _divide(unjudged.astype(np.float64), float(k) if k else positions.num_retrieved.astype(np.float64))


@register
class Judged(_Judged):
    """judged@k = (the number of the first min(k, n) retrieved documents that are in the qrels) /
    min(k, n): the fraction of the top k that has a judgment. Equals ir_measures ``Judged@k``; k = 0,
    the default, is the whole list, as ir_measures' ``Judged`` without a cut-off (so its plain name
    reads as the same measure in prefeval).

    As ir_measures counts them, every document in the qrels is judged, whatever its grade, negative
    ones included; trec_eval's ``unj`` counts negative grades as unjudged. And the denominator is the
    length of the list when it is shorter than k, where unj keeps k. So judged@k = 1 − unj@k exactly
    when the qrels have no negative grade and the run retrieved at least k documents. An empty list
    gives 0 (ir_measures reports nothing for a query the run did not answer).
    """

    family = "judged"
    parameters = (CUTOFF,)
    summary = "fraction of the top k (at most the list) that is in the qrels (ir_measures Judged@k)"
    cite = IR_MEASURES_PAPER + "; ir_measures Judged"

    def compute(self, positions: Positions) -> np.ndarray:
        k = self.param("k")
        depth = _depth(positions, k)
        return _divide(depth - positions.unjudged_within(k), depth)


def _parse_flag(text: str, measure: str) -> int:
    """A yes/no parameter: 1 or 0, as ir_measures writes it True or False too."""
    value = {"1": 1, "0": 0, "true": 1, "false": 0}.get(text.strip().lower())
    if value is None:
        raise UsageError(f"{measure}: normalize must be 1 or 0 (True or False), not {text.strip()[:40]!r}")
    return value


@register
class Compatibility(Metric):
    """Compat@p,normalize: compatibility, the rank-biased overlap (RBO) of the run's list with the
    ideal ranking, as ir_measures ``Compat(p=p, normalize=True)`` computes it.

    The ideal ranking I holds the query's documents of positive grade (all of them, whatever the
    relevance level: ir_measures reads grade > 0), by grade descending, equal grades in the order of
    the run (retrieved ones by rank, then the unretrieved ones). With the run's list L of length n,
    depth D = max(n, m), and A_d the number of documents in both L[:d] and I[:d],

        RBO = Σ_{d=1}^{D} p^{d−1} A_d / d  /  Σ_{d=1}^{D} p^{d−1},

    and Compat = RBO(L, I) / RBO(I, I) with ``normalize`` = 1 (the default), RBO(L, I) with 0. A
    document of positive grade at rank x in L and y in I counts in A_d for d >= max(x, y), so the
    numerator is Σ_{retrieved} Σ_{d=max(x,y)}^{D} p^{d−1}/d (and RBO(I, I)'s the same with x = y = its
    ideal rank): both are read off one running sum of p^{d−1}/d. p = 0.95 by default, as ir_measures'.

    Edge cases: no document of positive grade gives 0 (ir_measures: 0); an empty list gives 0
    (ir_measures reports nothing). Differences from ir_measures: it orders tied scores by docid
    ascending, prefeval (trec_eval) descending; and it orders an ideal's equally graded documents by
    the run's score with 0 for the unretrieved ones, so a run with negative scores has its relevant
    documents behind the unretrieved ones there; prefeval keeps the paper's tie-break, the run's
    order with the unretrieved last. Both agree when scores are positive and distinct.
    """

    family = "compat"
    aliases = ("compatibility",)
    parameters = (
        Param("p", float, 0.95, low=0.0, high=1.0, meaning="persistence of the rank-biased overlap"),
        Param("normalize", int, 1, low=0, high=1, parser=_parse_flag, text=str,
              meaning="1: divide by the ideal ranking's own overlap (True, False accepted)"),
    )
    summary = "compatibility: rank-biased overlap with the ideal ranking (ir_measures Compat)"
    cite = COMPAT_PAPER + "; ir_measures Compat"
    reads_grades = True

    def compute(self, positions: Positions) -> np.ndarray:
        if positions.sequential:
            return self._as_ir_measures_adds(positions)
        p, normalize = self.param("p"), self.param("normalize")
        ranks = positions.ranks
        num_runs, width = ranks.shape
        m = positions.length
        depth = np.maximum(positions.num_retrieved, m[None, :]).astype(np.int64)  # (R, Q)
        deepest = int(depth.max(initial=0))
        steps = np.arange(1, deepest + 1, dtype=np.float64)
        running = np.zeros(deepest + 1)  # running[d] = Σ_{e <= d} p^(e-1) / e
        np.cumsum(p ** (steps - 1.0) / steps, out=running[1:])
        ideal = _ideal_ranks(positions)
        last = per_document(positions, depth)
        meet = np.maximum(ranks, ideal)
        meets = np.isfinite(meet)
        at = np.where(meets, meet, 1.0).astype(np.int64) - 1
        overlap = positions.segment_sum(np.where(meets, running[last] - running[at], 0.0))
        if normalize:
            best = positions.segment_sum(running[last] - running[positions.index.astype(np.int64) - 1])
            return _divide(overlap, best)
        weights = np.zeros(deepest + 1)
        np.cumsum(p ** (steps - 1.0), out=weights[1:])
        return _divide(overlap, weights[depth])

    def _as_ir_measures_adds(self, positions: Positions) -> np.ndarray:
        """Compat in the arithmetic of ir_measures' compat provider (compat_provider.py, ``rbo``;
        the tools' conventions, :attr:`~prefeval.ranking.positions.Positions.sequential`), which the
        running sums above, equal in reals, differ from in the last bit: depth by depth,
        score += (w_d · A_d) / d and normalizer += w_d, with w_d by repeated multiplication
        (:func:`~prefeval.measures.shares.powers_of`); RBO = score / normalizer; and with
        ``normalize``, RBO(L, I) / RBO(I, I) where RBO(I, I) > 0 (A_d = min(d, m) for I against itself).
        Queries are taken a few at a time (:func:`~prefeval.measures.shares.query_steps`)."""
        p, normalize = self.param("p"), self.param("normalize")
        depth = np.maximum(positions.num_retrieved, positions.length[None, :]).astype(np.int64)  # D, (R, Q)
        num_runs, num_queries = depth.shape
        deepest = int(depth.max(initial=0))
        values = np.zeros((num_runs, num_queries))
        if not deepest:
            return values
        weights = powers_of(p, deepest)
        steps = np.arange(1, deepest + 1, dtype=np.float64)
        normalizers = np.cumsum(weights)
        meet = np.maximum(positions.ranks, _ideal_ranks(positions))  # the depth from which a document is in A_d
        run, element = np.nonzero(np.isfinite(meet))
        query = np.repeat(np.arange(num_queries), positions.length)[element]
        at = meet[run, element].astype(np.int64) - 1
        for first, stop in query_steps(num_runs, num_queries, deepest):
            last = np.maximum(depth[:, first:stop] - 1, 0)[..., None]  # d = D, (R, Qb, 1)
            inside = (query >= first) & (query < stop)
            joined = np.zeros((num_runs, stop - first, deepest))
            np.add.at(joined, (run[inside], query[inside] - first, at[inside]), 1.0)
            scores = np.cumsum(weights * np.cumsum(joined, axis=2) / steps, axis=2)
            normalizer = normalizers[last[..., 0]]
            rbo = np.take_along_axis(scores, last, axis=2)[..., 0] / normalizer
            if normalize:  # RBO(I, I): A_d = min(d, m)
                itself = np.cumsum(weights * np.minimum(steps, positions.length[first:stop, None]) / steps, axis=1)
                best = np.take_along_axis(np.broadcast_to(itself, scores.shape), last, axis=2)[..., 0] / normalizer
                rbo = np.divide(rbo, best, out=rbo, where=best > 0)
            values[:, first:stop] = rbo
        return values


def _ideal_ranks(positions: Positions) -> np.ndarray:
    """Each element's rank in its query's ideal ranking (R, N): grade descending, then the run's order
    (the elements of a segment are in rank order, the unretrieved last)."""
    num_runs, width = positions.ranks.shape
    segment = np.broadcast_to(np.repeat(np.arange(len(positions.length)), positions.length), (num_runs, width))
    place = np.broadcast_to(np.arange(width), (num_runs, width))
    grades = np.broadcast_to(positions.grades, (num_runs, width))
    order = np.lexsort((place, -grades, segment), axis=-1)
    ideal = np.empty((num_runs, width))
    np.put_along_axis(ideal, order, place - np.repeat(positions.start, positions.length) + 1.0, axis=-1)
    return ideal


@register
class Accuracy(Metric):
    """accuracy@k: among the first min(k, n) retrieved documents (k = 0: the whole list), the fraction
    of (relevant, non-relevant) pairs in which the relevant document ranks higher, as ir_measures
    ``Accuracy@k`` computes it. Non-relevant is every retrieved document that is not relevant:
    judged below the relevance level, unjudged, or outside the qrels. With h relevant documents
    within the list cut at k and M = min(k, n) − h non-relevant ones, the i-th relevant having
    x_i − i non-relevant ones above it,

        accuracy@k = 1 − Σ_{i : x_i within k} (x_i − i) / (M · h).

    Edge cases. M = 0 (every document within the cut is relevant): no pair is misordered, and the
    value is 1; ir_measures divides by zero there (a ZeroDivisionError) on such a list. h = 0 (no
    relevant document retrieved, or none in the qrels, or an empty list): 0; ir_measures reports no
    value for that query. Tied scores: ir_measures keeps the file's order, prefeval trec_eval's
    (docid descending); they agree when scores are distinct.
    """

    family = "accuracy"
    parameters = (CUTOFF,)
    summary = "fraction of retrieved (relevant, non-relevant) pairs ranked correctly (ir_measures Accuracy)"
    cite = IR_MEASURES_PAPER + "; ir_measures Accuracy"

    def compute(self, positions: Positions) -> np.ndarray:
        k = self.param("k")
        ranks = positions.ranks
        counted = within(ranks, k)
        found = positions.segment_sum(counted.astype(np.float64))
        nonrelevant = _depth(positions, k) - found
        misordered = positions.segment_sum(np.where(counted, ranks - positions.index, 0.0))
        pairs = nonrelevant * found
        value = 1.0 - _divide(misordered, pairs)
        return np.where(found > 0, value, 0.0)
