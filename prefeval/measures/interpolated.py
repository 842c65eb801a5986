"""Measures read off the precision-recall curve: interpolated precision at a recall level (trec_eval's
iprec_at_recall), its mean over several levels (11pt_avg), the area under the curve
(trapezoidal), and the largest recall reached at a given precision.

Notation as in :mod:`prefeval.measures.shares`: the query's m relevant documents at ranks
x_1 <= ... <= x_m (inf: not retrieved), i the 1-based index. After the i-th relevant document the run
has recall i/m and precision P_i = i / x_i. Interpolated precision at recall r is the best precision
at recall r or beyond: IP(r) = max{P_i : i/m >= r}. Precision is highest right at a relevant
document, so maxima over all cut-offs are maxima over the P_i.
"""

from __future__ import annotations

import numpy as np

from prefeval.errors import UsageError
from prefeval.io.numbers import INTEGER, is_number
from prefeval.measures.base import Metric, Param, RatioMetric, register
from prefeval.ranking.positions import Positions

TREC_BOOK = "Buckley and Voorhees, in TREC: Experiment and Evaluation in Information Retrieval, MIT Press 2005"
SALTON_MCGILL = "Salton and McGill, Introduction to Modern Information Retrieval, McGraw-Hill 1983"


def _precisions(positions: Positions) -> np.ndarray:
    """P_i = i / x_i for each relevant document, 0 where it is not retrieved: (R, N)."""
    return np.divide(positions.index, positions.ranks, out=np.zeros(positions.ranks.shape),
                     where=np.isfinite(positions.ranks))


def _later_maximum(positions: Positions, values: np.ndarray) -> np.ndarray:
    """max_{j >= i} values_j within each segment, for every element i: (R, N), exact.

    The values are replaced by their integer order (np.unique), each segment's offset by a multiple
    of the number of distinct values, so that one running maximum over the reversed row restarts at
    every segment; the result is mapped back to the values themselves."""
    if values.shape[-1] == 0:
        return values.copy()
    distinct, order = np.unique(values, return_inverse=True)
    reversed_order = order.reshape(values.shape)[:, ::-1]
    segment = np.repeat(np.arange(len(positions.length), dtype=np.int64), positions.length)
    # along the reversed row the segments come last first: number them up from 0 in that order
    block = (len(positions.length) - 1 - segment[::-1]) * len(distinct)
    running = np.maximum.accumulate(reversed_order + block, axis=-1)
    return distinct[(running - block)[:, ::-1]]


def _cut_index(positions: Positions, recall: float, round_from: float) -> np.ndarray:
    """j = max(c, 1) per query, the index of the first relevant document counted at recall level
    ``recall``, where c is recall · m made a whole number of documents, rounded up from the fraction
    ``round_from``: 0.5 rounds half away from zero, exactly as C's lround (trec_eval 10); otherwise
    c = ⌊recall · m + (1 − round_from)⌋ in float64 (0.1: trec_eval 9's ⌊recall · m + 0.9⌋, which
    pytrec_eval and so ir_measures compute)."""
    scaled = recall * positions.length.astype(np.float64)
    whole = np.floor(scaled)
    if round_from == 0.5:
        rounded = np.where(scaled - whole >= 0.5, whole + 1.0, whole)
    else:
        rounded = np.floor(scaled + (1.0 - round_from))
    return np.maximum(rounded, 1.0).astype(np.int64)


def _at_index(positions: Positions, per_element: np.ndarray, j: np.ndarray) -> np.ndarray:
    """per_element at the j-th element (1-based) of each segment, 0 where the segment is shorter: (R, Q)."""
    reached = j <= positions.length
    if not reached.any():
        return np.zeros((positions.num_runs, len(positions.length)))
    where = np.where(reached, positions.start + j - 1, 0)
    return np.where(reached, per_element[:, where], 0.0)


def interpolated_precision(positions: Positions, recall: float, round_from: float = 0.1,
                           later: np.ndarray | None = None) -> np.ndarray:
    """IP(recall) for every run and query, (R, Q): max{i / x_i : i >= j, x_i finite}, 0 when there is
    none, j from :func:`_cut_index`. ``later``: :func:`_later_maximum` of the precisions, if known."""
    if later is None:
        later = _later_maximum(positions, _precisions(positions))
    return _at_index(positions, later, _cut_index(positions, recall, round_from))


RECALL_LEVEL = Param("recall", float, 0.0, low=0.0, high=1.0, meaning="recall level")
ROUND_FROM = Param(
    "round_from", float, 0.1, low=0.0, high=1.0, low_open=True,
    meaning="fraction of a document from which recall * R rounds up: 0.1 (trec_eval 9, pytrec_eval, ir_measures) "
            "or 0.5 (trec_eval 10)")
"""How a recall level becomes a number of relevant documents. trec_eval 9, and the trec_eval inside
pytrec_eval that ir_measures runs, take ⌊r · m + 0.9⌋ (the default, so that ir_measures' ``IPrec@r``,
which reads as prefeval's ``iprec@r``, means the same); trec_eval 10 rounds r · m to the nearest (lround).
They differ where the fraction of r · m lies in [0.1, 0.5): with m = 3, IP@0.4 is P at the 1st relevant
document for trec_eval 10 (1.2 → 1) and at the 2nd for pytrec_eval (1.2 → 2)."""


@register
class InterpolatedPrecision(Metric):
    """IP@r = max{P_i : i >= j, x_i finite}, j = max(c, 1), and 0 when no relevant document from the
    j-th on is retrieved (or m = 0): the highest precision the run reaches at recall r or beyond,
    P_i = i / x_i. The level r is first made a whole number of relevant documents c: by default
    ⌊r · m + 0.9⌋, as trec_eval 9 does and pytrec_eval (hence ir_measures) still does; with
    round_from = 0.5, lround(r · m), to the nearest, half away from zero, as trec_eval 10 does. r = 0
    (the default) is the best precision anywhere in the list (the "initial precision" of TREC's
    recall-precision tables).

    Equals ir_measures ``IPrec@r`` and pytrec_eval's ``iprec_at_recall``, and with round_from = 0.5
    (``iprec@r,0.5``) trec_eval 10's ``iprec_at_recall.r`` (printed ``iprec_at_recall_0.50``; by
    default trec_eval prints the 11 levels 0.0, 0.1, ..., 1.0). A run that retrieves nothing scores 0
    (trec_eval computes 0/0 there and gives nan at level 0, if it evaluates such a query at all); a
    query the run does not contain scores 0, as trec_eval -c scores it.
    """

    family = "iprec"
    parameters = (RECALL_LEVEL, ROUND_FROM)
    summary = "interpolated precision at recall level r (trec_eval iprec_at_recall.r)"
    cite = SALTON_MCGILL + "; " + TREC_BOOK + "; trec_eval iprec_at_recall"

    def compute(self, positions: Positions) -> np.ndarray:
        return interpolated_precision(positions, self.param("recall"), self.param("round_from"))


def _parse_levels(text: str, measure: str) -> int | tuple[float, ...]:
    """``iprec_avg``'s levels: an integer n >= 2 (n equally spaced recall levels), or recall levels
    in [0, 1] separated by ``;`` (``0.2;0.5;0.8``; one level is written as a number that is not an
    integer, ``0.5`` or ``1.0``), kept in increasing order (duplicates kept: each counts)."""
    written = text.strip()
    if is_number(written, INTEGER):
        count = int(written)
        if count < 2:
            raise UsageError(f"{measure}: levels must be a number of levels >= 2 or recall levels separated by "
                             f"';' (0.2;0.5;0.8), not {written}")
        return count
    levels = []
    for part in written.split(";"):
        level = RECALL_LEVEL.parse(part, measure)
        levels.append(float(level))
    return tuple(sorted(levels))


def _levels_text(levels: int | tuple[float, ...]) -> str:
    return str(levels) if isinstance(levels, int) else ";".join(repr(level) for level in levels)


LEVELS = Param("levels", int, 11, parser=_parse_levels, text=_levels_text,
               meaning="n equally spaced recall levels (n >= 2), or the recall levels themselves, separated by ';' "
                       "(0.2;0.5;0.8)")
"""The recall levels of ``iprec_avg``: a number of equally spaced levels, or the levels themselves."""


def recall_levels(levels: int | tuple[float, ...]) -> tuple[float, ...]:
    """The recall levels of ``levels`` (:data:`LEVELS`), in increasing order: l / (n − 1) for l = 0 .. n − 1
    for a number n, the levels themselves otherwise."""
    if isinstance(levels, int):
        return tuple(level / (levels - 1) for level in range(levels))
    return levels


@register
class InterpolatedPrecisionAverage(Metric):
    """IPavg = (1/n) Σ_{l ∈ L} IP(l): interpolated precision (``iprec``) averaged over n recall levels
    L, by default the 11 equally spaced levels 0.0, 0.1, ..., 1.0 (``iprec_avg@n``: n equally
    spaced levels, l / (n − 1)), or the levels given (``iprec_avg@0.2;0.5;0.8``, a level given twice
    counted twice).

    Equals pytrec_eval's ``11pt_avg`` and, with round_from = 0.5 (``iprec_avg@11,0.5``), trec_eval 10's
    (see ``iprec``), adding up the levels from the highest down as trec_eval does (``m_11pt_avg.c``)
    and dividing once, so that the value is the same to the last bit. trec_eval's ``11pt_avg.l,...``
    is ``iprec_avg@l;...,0.5`` (``11pt_avg.0.2,0.5,0.8``, the 3-point average of trec_eval 8). trec_eval
    10.0's loop assumes its levels in increasing order and gives another number for levels listed
    otherwise (``11pt_avg.0.75,0.5,0.25``); prefeval averages over the levels whatever their order, as
    trec_eval's own description of the measure says. 0 for a run without relevant documents
    retrieved, an empty run (trec_eval: nan) or a query without relevant documents.
    """

    family = "iprec_avg"
    parameters = (LEVELS, ROUND_FROM)
    summary = "interpolated precision averaged over 11 recall levels, or those given (trec_eval 11pt_avg)"
    cite = SALTON_MCGILL + "; trec_eval 11pt_avg"

    def compute(self, positions: Positions) -> np.ndarray:
        levels = recall_levels(self.param("levels"))
        later = _later_maximum(positions, _precisions(positions))
        total = np.zeros((positions.num_runs, len(positions.length)))
        for level in reversed(levels):
            total = total + interpolated_precision(positions, level, self.param("round_from"), later)
        return total / len(levels)


@register
class PrecisionRecallArea(RatioMetric):
    """PR-AUC: the area under the precision-recall curve of the ranking, without interpolation, by the
    trapezoidal rule. The curve goes through (R@k, P@k) for every cut-off k = 1 .. n, starting at
    recall 0 with precision 1 (which only matters when x_1 = 1). Recall grows only at a relevant
    document, so only the segment into each retrieved relevant document has width, 1/m; it joins the
    precision just above it, (i − 1)/(x_i − 1) (1 when x_i = 1), to P_i = i / x_i:

        PR-AUC = (1/(2m)) Σ_{i : x_i finite} ((i − 1)/(x_i − 1) + i/x_i).

    Relation to AP = (1/m) Σ i/x_i, the step (right-endpoint) estimate of the same area: PR-AUC is the
    mean of AP and of the same sum taken at the precision just above each relevant document, and

        AP − PR-AUC = (1/(2m)) Σ_{i : x_i finite} (x_i − i) / (x_i (x_i − 1)) >= 0,

    so PR-AUC <= AP, with equality exactly when the retrieved relevant documents fill the top ranks.
    This is the lower trapezoid estimate of Boyd et al. (2013). Beyond the last relevant document
    retrieved the curve does not reach, so unretrieved relevant documents add nothing (as in AP).
    0 when m = 0 and for an empty run. Neither trec_eval nor ir_measures has it.
    """

    family = "prauc"
    summary = "area under the (non-interpolated) precision-recall curve, trapezoidal"
    cite = ("Boyd, Eng and Page, ECML PKDD 2013, doi:10.1007/978-3-642-40994-3_29; "
            "Davis and Goadrich, ICML 2006, doi:10.1145/1143844.1143874")

    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        index = np.broadcast_to(positions.index, ranks.shape)
        retrieved = np.isfinite(ranks)
        above = np.divide(index - 1.0, ranks - 1.0, out=np.ones(ranks.shape), where=retrieved & (ranks > 1.0))
        at = np.divide(index, ranks, out=np.zeros(ranks.shape), where=retrieved)
        return np.where(retrieved, above + at, 0.0)

    def denominator(self, positions: Positions) -> np.ndarray:
        return 2 * positions.length


@register
class RecallAtPrecision(Metric):
    """R@P≥p = max{i/m : x_i finite, i/x_i >= p}, 0 when there is none: the largest recall the run
    reaches at a cut-off where its precision is at least p. Recall only grows at a relevant document,
    where precision is at its highest for that recall, so the cut-offs at relevant documents suffice.
    p = 0 gives the recall of the whole list (``r@0``); p = 1 the share of relevant documents ranked
    above every non-relevant one. 0 when m = 0 and for an empty run. Neither trec_eval nor ir_measures
    has it.
    """

    family = "recall_at_precision"
    aliases = ("r_at_p",)
    parameters = (Param("p", float, 0.5, low=0.0, high=1.0, meaning="the precision to keep"),)
    summary = "the largest recall reached at precision >= p"
    cite = "Eban et al., Scalable Learning of Non-Decomposable Objectives, AISTATS 2017 (PMLR 54)"

    def compute(self, positions: Positions) -> np.ndarray:
        kept = np.isfinite(positions.ranks) & (_precisions(positions) >= self.param("p"))
        deepest = np.maximum(positions.segment_max(np.where(kept, positions.index, 0.0)), 0.0)
        return np.divide(deepest, positions.length, out=np.zeros(deepest.shape), where=positions.length > 0)
