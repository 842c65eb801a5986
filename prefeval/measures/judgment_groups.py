"""Measures of judgment groups: trec_eval 10.0's ``map_avgjg``, ``P_avgjg`` and ``Rprec_mult_avgjg``.

They read judgment groups (``--rel-format qrels_jg``: :mod:`prefeval.io.judgment_groups`), the
grades of several groups (assessors) for a query, and average a measure of grades over the groups:

    measure_avgjg(run, query) = (1/G) Σ_g measure(run, the query's documents graded by group g),

a group's relevant documents being those it grades >= the relevance level (> 0 by default, ``-l``),
the sum over the groups in order (by id), one term after the other, as trec_eval's ``m_*_avgjg.c``
add them; a group that finds no document relevant adds 0 and counts in G
(:mod:`prefeval.ranking.judgment_groups`). Each takes the parameters of the measure it averages, and
``rel=``, its own relevance level.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from prefeval.errors import UsageError
from prefeval.io.judgments import GROUPS
from prefeval.measures.base import Metric, register
from prefeval.measures.judgments import JudgedRuns, JudgmentMetric
from prefeval.measures.precision_recall import AveragePrecision, Precision
from prefeval.measures.set_based import RPrecisionMultiple

TREC_BOOK = "Buckley and Voorhees, in TREC: Experiment and Evaluation in Information Retrieval, MIT Press 2005"


class _GroupAverage(JudgmentMetric):
    """The mean over the judgment groups of :attr:`averaged`, with its parameters."""

    judgments = GROUPS
    averaged: ClassVar[type[Metric]]

    def __init__(self, *texts: str):
        super().__init__(*texts)
        if self.judged_only:
            raise UsageError(f"{self.family}: judged_only ranks the judged documents of one qrels; a judgment group "
                             "judges its own")
        self.of_group = self.averaged(*texts)

    def compute(self, judged: JudgedRuns) -> np.ndarray:
        return judged.group_average(self.of_group)


@register
class AveragePrecisionOverGroups(_GroupAverage):
    """ap_avgjg = (1/G) Σ_g AP_g, AP_g = (1/m_g) Σ over the ranks x_i of g's m_g relevant documents
    that the run retrieved (within k, ``ap_avgjg@k``) of i / x_i, 0 when m_g = 0: AP (``ap``)
    averaged over the judgment groups. Equals trec_eval ``map_avgjg`` (and, with one group, ``map``)."""

    family = "ap_avgjg"
    averaged = AveragePrecision
    parameters = AveragePrecision.parameters
    summary = "average precision averaged over judgment groups (trec_eval map_avgjg)"
    cite = TREC_BOOK + "; trec_eval m_map_avgjg.c"


@register
class PrecisionOverGroups(_GroupAverage):
    """p_avgjg@k = (1/G) Σ_g #{relevant documents of g within rank k} / k: P@k (``p@k``) averaged
    over the judgment groups (a run shorter than k counts the missing ranks as non-relevant). Equals
    trec_eval ``P_avgjg.k`` (printed ``P_avgjg_5``; trec_eval's defaults 5, 10, 15, 20, 30, 100, 200,
    500, 1000)."""

    family = "p_avgjg"
    averaged = Precision
    parameters = Precision.parameters
    summary = "precision at k averaged over judgment groups (trec_eval P_avgjg)"
    cite = TREC_BOOK + "; trec_eval m_P_avgjg.c"


@register
class RPrecisionMultipleOverGroups(_GroupAverage):
    """rp_mult_avgjg@f = (1/G) Σ_g h_c / c with c = ⌊f · m_g + 0.9⌋ and h_c the relevant documents of
    g within rank c (0 when c = 0): precision at f times each group's number of relevant documents
    (``rp_mult@f``), averaged over the judgment groups. Equals trec_eval ``Rprec_mult_avgjg.f``
    (printed ``Rprec_mult_avgjg_0.20``; trec_eval's defaults 0.2, 0.4, ..., 2.0; prefeval's default
    f is 1, R-precision)."""

    family = "rp_mult_avgjg"
    averaged = RPrecisionMultiple
    parameters = RPrecisionMultiple.parameters
    summary = "precision at f times R averaged over judgment groups (trec_eval Rprec_mult_avgjg)"
    cite = TREC_BOOK + "; trec_eval m_Rprec_mult_avgjg.c"
