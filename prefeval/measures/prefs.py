"""Measures of preference judgments: trec_eval 10.0's fourteen ``prefs_*`` measures.

They read preference judgments (``--rel-format prefs``, ``qrels_prefs`` or ``pairs``:
:mod:`prefeval.io.prefs`), the preferences "a is preferred to b" (a ≻ b) of each judgment group of a
query, closed transitively within the group, and count, for each run, which of them it fulfils
(Carterette, Bennett, Chickering and Dumais, *Here or There: Preference Judgments for Relevance*,
ECIR 2008; trec_eval's ``form_prefs_counts.c`` and ``m_prefs_*.c``). The run's order is trec_eval's
for preferences (:mod:`prefeval.ranking.preferences`: equal scores by docid ascending, cut at
``--topk``). Notation, for one run, query and judgment group g of the query's G groups, over g's
preferences a ≻ b:

* A1 (both retrieved, a above b: fulfilled), A2 (both retrieved, b above a), A3 (a retrieved, b not:
  fulfilled by implication), A4 (b retrieved, a not), A5 (neither retrieved);
* R_g, N_g: g's documents of value > 0 (relevant in its judge's opinion) and of value 0;
  R_g^ret, N_g^ret: those the run retrieved;
* C[a, b]: the number of groups preferring a to b (trec_eval's counts array), over every pair of
  documents some group orders; for such a pair, a the document the run puts first (a retrieved
  one above an unretrieved one, two unretrieved ones in docid order), s(a, b) = C[a, b] / (C[a, b] +
  C[b, a]) the share of the groups ordering them that agree with the run.

Sums over groups run over the query's groups in order (by id), one term after the other, as trec_eval
adds them; a ratio whose denominator is 0 is 0 (trec_eval leaves its value at 0). The counts
(``prefs_num_prefs_*``) add up over queries on the summary; the others are averaged over queries as
every measure is (trec_eval's mean over the queries evaluated). The ``_ret`` variants count only
preferences between two retrieved documents (for collections that change under the runs), the
``_imp`` variants ignore those between two unretrieved ones, the plain ones count every preference
(two unretrieved documents: not fulfilled).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING

import numpy as np

from prefeval.io.judgments import PREFERENCES
from prefeval.measures.aggregators import SUM
from prefeval.measures.base import register
from prefeval.measures.judgments import JudgedRuns, JudgmentMetric

if TYPE_CHECKING:  # the counts are made where the runs are ranked (prefeval.ranking.preferences)
    from prefeval.ranking.preferences import PreferenceCounts

HERE_OR_THERE = "Carterette, Bennett, Chickering and Dumais, ECIR 2008, doi:10.1007/978-3-540-78646-7_5"


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (never a warning)."""
    numerator, denominator = np.broadcast_arrays(np.asarray(numerator, dtype=np.float64),
                                                 np.asarray(denominator, dtype=np.float64))
    return np.divide(numerator, denominator, out=np.zeros(numerator.shape), where=denominator != 0)


def _group_sum(terms: np.ndarray) -> np.ndarray:
    """Σ over the groups (the last axis) of (R, G) terms, added one after the other (as the rows of
    the transposed matrix, which numpy reduces in order): (R,)."""
    return np.add.reduce(terms.T, axis=0) if terms.shape[1] else np.zeros(terms.shape[0])


def _group_average(terms: np.ndarray) -> np.ndarray:
    """(1/G) Σ_g terms[:, g], and 0 where that sum is not > 0 (trec_eval sets the value only then;
    a NaN term, 0/0, makes the sum NaN, and the value 0)."""
    total = _group_sum(terms)
    groups = terms.shape[1]
    with np.errstate(invalid="ignore"):
        positive = total > 0
    return np.where(positive, np.divide(total, max(groups, 1), out=np.zeros_like(total), where=positive), 0.0)


class _Preferences(JudgmentMetric):
    """A measure of preference judgments: its value per query from the query's
    :class:`~prefeval.ranking.preferences.PreferenceCounts`."""

    judgments = PREFERENCES

    def compute(self, judged: JudgedRuns) -> np.ndarray:
        return judged.per_query(self.of_query)

    @abstractmethod
    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        """The value of every run on one query: (R,)."""


class _Count(_Preferences):
    aggregator = SUM
    counts = True
    bounds = (0.0, np.inf)


def _fulfilled(counts: PreferenceCounts) -> np.ndarray:
    return counts.a1 + counts.a3


def _possible(counts: PreferenceCounts) -> np.ndarray:
    return counts.a1 + counts.a2 + counts.a3 + counts.a4 + counts.a5


@register
class PrefsNumPrefsPoss(_Count):
    """prefs_num_prefs_poss = Σ_g (A1 + A2 + A3 + A4 + A5): the number of preferences of the
    query's groups (a preference two groups state counts twice), whatever the run. Equals trec_eval
    ``prefs_num_prefs_poss``; the summary is the sum over queries."""

    family = "prefs_num_prefs_poss"
    summary = "number of judged preferences (trec_eval prefs_num_prefs_poss; summary: sum)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_num_prefs_poss.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        return _group_sum(_possible(counts)).astype(np.float64)


@register
class PrefsNumPrefsFul(_Count):
    """prefs_num_prefs_ful = Σ_g (A1 + A3): the preferences the run fulfils, both documents
    retrieved in the preferred order or only the preferred one retrieved. Equals trec_eval
    ``prefs_num_prefs_ful``; the summary is the sum over queries."""

    family = "prefs_num_prefs_ful"
    summary = "number of preferences fulfilled (trec_eval prefs_num_prefs_ful; summary: sum)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_num_prefs_ful.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        return _group_sum(_fulfilled(counts)).astype(np.float64)


@register
class PrefsNumPrefsFulRet(_Count):
    """prefs_num_prefs_ful_ret = Σ_g A1: the preferences the run fulfils with both documents
    retrieved. Equals trec_eval ``prefs_num_prefs_ful_ret``; the summary is the sum over queries."""

    family = "prefs_num_prefs_ful_ret"
    summary = "number of preferences fulfilled, both documents retrieved (trec_eval prefs_num_prefs_ful_ret)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_num_prefs_ful_ret.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        return _group_sum(counts.a1).astype(np.float64)


@register
class PrefsSimp(_Preferences):
    """prefs_simp = Σ_g (A1 + A3) / Σ_g (A1 + A2 + A3 + A4 + A5): the fraction of the judged
    preferences the run fulfils (Carterette et al.'s ppref over every judged pair), each preference
    of every group counting once; 0 without preferences. Equals trec_eval ``prefs_simp``."""

    family = "prefs_simp"
    summary = "fraction of the judged preferences fulfilled (trec_eval prefs_simp)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_simp.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        return _ratio(_group_sum(_fulfilled(counts)), _group_sum(_possible(counts)))


@register
class PrefsSimpRet(_Preferences):
    """prefs_simp_ret = Σ_g A1 / Σ_g (A1 + A2): prefs_simp over the preferences between two
    retrieved documents; 0 without such. Equals trec_eval ``prefs_simp_ret``."""

    family = "prefs_simp_ret"
    summary = "fraction of the preferences between retrieved documents fulfilled (trec_eval prefs_simp_ret)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_simp_ret.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        return _ratio(_group_sum(counts.a1), _group_sum(counts.a1 + counts.a2))


@register
class PrefsSimpImp(_Preferences):
    """prefs_simp_imp = Σ_g (A1 + A3) / Σ_g (A1 + A2 + A3 + A4): prefs_simp without the preferences
    between two unretrieved documents; 0 without others. Equals trec_eval ``prefs_simp_imp``."""

    family = "prefs_simp_imp"
    summary = "fraction of the preferences with a retrieved document fulfilled (trec_eval prefs_simp_imp)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_simp_imp.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        return _ratio(_group_sum(_fulfilled(counts)), _group_sum(counts.a1 + counts.a2 + counts.a3 + counts.a4))


@register
class PrefsPair(_Preferences):
    """prefs_pair = (1/K) Σ s(a, b) over the K pairs of documents some group orders, the sum over
    those with at least one document retrieved (a pair of two unretrieved documents adds 0): each
    pair counts once, however many groups order it, and adds the share of those groups the run
    agrees with (a pair some groups order one way and some the other adds a fraction); 0 when K = 0.
    The terms are added in trec_eval's order (pairs of two retrieved documents by the place of the
    first, then of the second; then pairs of one). Equals trec_eval ``prefs_pair``."""

    family = "prefs_pair"
    summary = "mean over judged pairs of documents of the share of groups the run agrees with (trec_eval prefs_pair)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_pair.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        return _ratio(counts.pair_sum, counts.pairs)


@register
class PrefsPairRet(_Preferences):
    """prefs_pair_ret = (1/K_ret) Σ s(a, b) over the K_ret pairs of two retrieved documents that some
    group orders; 0 when K_ret = 0. Equals trec_eval ``prefs_pair_ret``."""

    family = "prefs_pair_ret"
    summary = "prefs_pair over pairs of two retrieved documents (trec_eval prefs_pair_ret)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_pair_ret.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        return _ratio(counts.pair_sum_ret, counts.pairs_ret)


@register
class PrefsPairImp(_Preferences):
    """prefs_pair_imp = (1/K_imp) Σ s(a, b) over the K_imp pairs of at least one retrieved document
    that some group orders; 0 when K_imp = 0. Equals trec_eval ``prefs_pair_imp``."""

    family = "prefs_pair_imp"
    summary = "prefs_pair over pairs with a retrieved document (trec_eval prefs_pair_imp)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_pair_imp.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        return _ratio(counts.pair_sum, counts.pairs_imp)


@register
class PrefsAvgjg(_Preferences):
    """prefs_avgjg = (1/G) Σ_g (A1 + A3) / (A1 + A2 + A3 + A4 + A5): prefs_simp of each group,
    averaged over the groups, so that every judge (group) weighs the same however many preferences
    it states; a group without preferences adds 0 but counts in G. Equals trec_eval ``prefs_avgjg``."""

    family = "prefs_avgjg"
    summary = "fraction of preferences fulfilled, averaged over judgment groups (trec_eval prefs_avgjg)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_avgjg.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        return _group_average(_ratio(_fulfilled(counts), _possible(counts)))


@register
class PrefsAvgjgRet(_Preferences):
    """prefs_avgjg_ret = (1/G) Σ_g A1 / (A1 + A2): prefs_simp_ret of each group averaged over the
    groups (a group without a preference between retrieved documents adds 0). Equals trec_eval
    ``prefs_avgjg_ret``."""

    family = "prefs_avgjg_ret"
    summary = "prefs_simp_ret averaged over judgment groups (trec_eval prefs_avgjg_ret)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_avgjg_ret.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        return _group_average(_ratio(counts.a1, counts.a1 + counts.a2))


@register
class PrefsAvgjgImp(_Preferences):
    """prefs_avgjg_imp = (1/G) Σ_g (A1 + A3) / (A1 + A2 + A3 + A4): prefs_simp_imp of each group
    averaged over the groups. Equals trec_eval ``prefs_avgjg_imp``."""

    family = "prefs_avgjg_imp"
    summary = "prefs_simp_imp averaged over judgment groups (trec_eval prefs_avgjg_imp)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_avgjg_imp.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        return _group_average(_ratio(_fulfilled(counts), counts.a1 + counts.a2 + counts.a3 + counts.a4))


def _ratios(fulfilled: np.ndarray, possible: np.ndarray) -> np.ndarray:
    """fulfilled / possible, NaN where both are 0 (trec_eval divides regardless: see _group_average)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(fulfilled, dtype=np.float64) / np.asarray(possible, dtype=np.float64)


def _below(kept: np.ndarray, retrieved: np.ndarray) -> np.ndarray:
    """Σ_{k < kept} min(k, retrieved), elementwise: the pairs (x, y) of non-relevant documents, y
    among the first ``kept`` of them and x any, with x retrieved and above y (of ``retrieved``
    retrieved ones, which come first)."""
    both = np.minimum(kept, retrieved)
    return both * (both - 1) // 2 + np.maximum(kept - retrieved, 0) * retrieved


@register
class PrefsAvgjgRnonrel(_Preferences):
    """prefs_avgjg_Rnonrel = (1/G) Σ_g F_g / P_g, prefs_avgjg with each group's non-relevant documents
    (value 0) made as many as its relevant ones (R_g), so that adding judged non-relevant documents
    does not swamp the preferences among relevant ones (akin to bpref with one group of two classes):

    * R_g >= N_g: R_g − N_g non-relevant documents are added, each below every relevant one, never
      retrieved: F_g = A1 + A3 + R_g^ret (R_g − N_g), P_g = A1 + ... + A5 + R_g (R_g − N_g);
    * R_g < N_g: only the first R_g non-relevant documents in the run's order are kept (retrieved ones
      by rank, then the unretrieved ones by docid): F_g and P_g are A1 + A3 and A1 + ... + A5 over
      the preferences whose less preferred document is relevant or kept; and, in a group of one
      sub-group, trec_eval's recalculation (``m_prefs_avgjg_Rnonrel.c``) also pairs every
      non-relevant document x of the group (itself included) with every kept one y as if x were
      preferred: P_g += N_g R_g, and F_g += Σ_{k < R_g} min(k, N_g^ret) (the pairs with x retrieved
      above y). prefeval counts these as trec_eval does, so that its values are trec_eval's.

    A group with no relevant document and a non-relevant one gives 0/0, which (as in trec_eval,
    where the sum becomes NaN) makes the query's value 0; so does a sum not above 0. Equals trec_eval
    ``prefs_avgjg_Rnonrel``."""

    family = "prefs_avgjg_rnonrel"
    summary = "prefs_avgjg with as many non-relevant documents as relevant ones (trec_eval prefs_avgjg_Rnonrel)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_avgjg_Rnonrel.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        relevant, nonrelevant = counts.relevant[None, :], counts.nonrelevant[None, :]
        extra = relevant - nonrelevant
        enough = extra >= 0
        single = counts.single[None, :]
        fulfilled = np.where(enough, _fulfilled(counts) + counts.relevant_retrieved * extra,
                             counts.kept_fulfilled + np.where(single, _below(relevant, counts.nonrelevant_retrieved),
                                                              0))
        possible = np.where(enough, _possible(counts) + relevant * extra,
                            counts.kept_possible + np.where(single, nonrelevant * relevant, 0))
        return _group_average(_ratios(fulfilled, possible))


@register
class PrefsAvgjgRnonrelRet(_Preferences):
    """prefs_avgjg_Rnonrel_ret = (1/G) Σ_g F_g / P_g, prefs_avgjg_Rnonrel on the retrieved documents:
    with R = R_g^ret and N = N_g^ret,

    * R >= N: F_g = A1 + R (R − N), P_g = A1 + A2 + R_g (R − N) (trec_eval multiplies by all of
      the group's relevant documents, R_g, there);
    * R < N: over the preferences between two retrieved documents whose less preferred one is
      relevant or among the first K retrieved non-relevant ones, F_g = A1, P_g = A1 + A2, with K = R
      in a group of one sub-group and K = R_g in one of several (trec_eval's two representations of
      a group keep so many); and, in a group of one sub-group, trec_eval's recalculation
      (``m_prefs_avgjg_Rnonrel_ret.c``) pairs every retrieved non-relevant document with every kept
      one: P_g += N R, F_g += R (R − 1) / 2.

    A group none of whose documents the run retrieved gives 0/0, which makes the query's value 0
    (trec_eval's sum becomes NaN); so does a sum not above 0. Equals trec_eval
    ``prefs_avgjg_Rnonrel_ret``."""

    family = "prefs_avgjg_rnonrel_ret"
    summary = "prefs_avgjg_Rnonrel over retrieved documents (trec_eval prefs_avgjg_Rnonrel_ret)"
    cite = HERE_OR_THERE + "; trec_eval m_prefs_avgjg_Rnonrel_ret.c"

    def of_query(self, counts: PreferenceCounts) -> np.ndarray:
        relevant, nonrelevant = counts.relevant_retrieved, counts.nonrelevant_retrieved
        extra = relevant - nonrelevant
        enough = extra >= 0
        single = counts.single[None, :]
        fulfilled = np.where(enough, counts.a1 + relevant * extra,
                             counts.kept_ret_fulfilled + np.where(single, relevant * (relevant - 1) // 2, 0))
        possible = np.where(enough, counts.a1 + counts.a2 + counts.relevant[None, :] * extra,
                            counts.kept_ret_possible + np.where(single, nonrelevant * relevant, 0))
        return _group_average(_ratios(fulfilled, possible))
