"""Preferences: pairwise comparisons of two runs on a query, for all pairs and queries at once.

x and y are the position vectors of the first and second run (MEASURES.md); a value > 0 means x is
preferred. sgn(y_i − x_i) is computed by comparison, never subtraction, so that two unretrieved
documents (inf, inf) compare as equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from prefeval.measures.base import Preference, register
from prefeval.measures.shares import reciprocal_difference
from prefeval.ranking.positions import Positions

LEXIPRECISION = "Diaz, EVIA 2023, arXiv:2306.07908"
"""Where lexiprecision and rrlexiprecision (its sgnLP and rrLP) are defined."""


def sign_of_difference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """sgn(y − x) elementwise, as int8, with sgn(inf − inf) = 0 and sgn(inf − finite) = +1."""
    return (x < y).view(np.int8) - (x > y).view(np.int8)


@dataclass(eq=False)
class Comparison:
    """The position vectors of the first (``x``) and second (``y``) run of P pairs, (P, N) each, on
    the segments of ``positions``; the signs sgn(y_i − x_i) are computed once for all measures.
    ``first`` and ``second``: the runs of the pairs (P each), which a preference over intents reads
    its own positions of (:mod:`prefeval.measures.intent_preferences`); None where not given."""

    positions: Positions
    x: np.ndarray
    y: np.ndarray
    first: np.ndarray | None = None
    second: np.ndarray | None = None

    @cached_property
    def signs(self) -> np.ndarray:
        return sign_of_difference(self.x, self.y)


class RecallPairedPreference(Preference):
    """RPP (Diaz and Ferraro, SIGIR 2022): Σ_i w_i · sgn(y_i − x_i), with Σ_i w_i = 1.

    Graded: when a query has several positive grades, RPP is the average over the distinct positive
    grades g of the query of RPP(x^(g), y^(g)), weighted by m_g (the number of documents of grade >=
    g). With binary relevance this is plain RPP.

    Computed as weighted sums of the signs divided once. With r(i) the unnormalised weight, N(m) =
    Σ_{i<=m} r(i) (summed in the same order as the signs), and T_g = Σ_i r(i) · sgn(y_i − x_i) on
    grade level g, a level's value is T_g / N(m_g), exactly ±1 when every sign agrees, and graded RPP
    is Σ_g (T_g / N(m_g)) · m_g / Σ_g m_g, exactly ±1 when every level is. With uniform weights
    (``rpp``) T_g / N(m_g) · m_g is T_g itself, so RPP is the sum of the integer signs of every level
    divided by Σ_g m_g: a preference that cancels is exactly 0, never a residue such as 2.8e-17.
    """

    reads_grades = True
    per_grade_level = True
    uniform = False
    """Whether every weight is 1 (the signs then sum to integers)."""
    cite = "Diaz and Ferraro, SIGIR 2022, doi:10.1145/3477495.3532033"

    @staticmethod
    def raw_weight(i: np.ndarray) -> np.ndarray:
        """The unnormalised weight r(i) of index i (1-based)."""
        return np.ones_like(i)

    def compare(self, comparison: Comparison) -> np.ndarray:
        positions = comparison.positions
        raw = self.raw_weight(positions.index)
        weighted = positions.segment_sum(comparison.signs * raw)
        if self.uniform:
            level_totals = weighted
        else:
            per_level = weighted / positions.segment_sum(raw)
            if positions.one_segment_per_query:
                return per_level
            level_totals = per_level * positions.length
        if positions.one_segment_per_query:
            return level_totals / positions.length
        first_level = np.searchsorted(positions.query, np.arange(positions.num_queries))
        combined = np.add.reduceat(level_totals, first_level, axis=-1) / np.add.reduceat(positions.length, first_level)
        if self.uniform:
            return combined
        # a query of one level: its level's value, as with one segment per query, whatever its block
        one_level = np.diff(np.append(first_level, len(positions.length))) == 1
        combined[..., one_level] = per_level[..., first_level[one_level]]
        return combined


@register
class UniformRPP(RecallPairedPreference):
    __doc__ = RecallPairedPreference.__doc__ + "\n    Uniform weights: w_i = 1/m."
    family = "rpp"
    uniform = True
    summary = "recall-paired preference, uniform weights over recall levels"


@register
class InverseRPP(RecallPairedPreference):
    __doc__ = RecallPairedPreference.__doc__ + "\n    Weights w_i ∝ 1/i."
    family = "invrpp"
    summary = "recall-paired preference, weights 1/i (top-heavy)"

    @staticmethod
    def raw_weight(i: np.ndarray) -> np.ndarray:
        return 1.0 / i


@register
class DCGRPP(RecallPairedPreference):
    __doc__ = RecallPairedPreference.__doc__ + "\n    Weights w_i ∝ 1/log2(i + 1)."
    family = "dcgrpp"
    summary = "recall-paired preference, weights 1/log2(i+1)"

    @staticmethod
    def raw_weight(i: np.ndarray) -> np.ndarray:
        return 1.0 / np.log2(i + 1.0)


class Lexicographic(Preference):
    """Shared machinery: the first and last index where x and y differ, per pair and query."""

    @staticmethod
    def first_difference(positions: Positions, signs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(index of the first i with x_i ≠ y_i, whether there is one), per pair and segment."""
        flat_index = _element_index(signs.shape[-1])
        first = positions.segment_min(np.where(signs != 0, flat_index, signs.shape[-1]))
        return first, first < positions.start + positions.length

    @staticmethod
    def last_difference(positions: Positions, signs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(index of the last i with x_i ≠ y_i, whether there is one), per pair and segment."""
        flat_index = _element_index(signs.shape[-1])
        last = positions.segment_max(np.where(signs != 0, flat_index, -1))
        return last, last >= positions.start


@register
class LexiPrecision(Lexicographic):
    """Lexicographic precision (Diaz, EVIA 2023): sgn(y_i − x_i) at the first i where x_i ≠ y_i; 0
    if x = y. Binary relevance (grade > 0). Its sign agrees with ΔRR whenever RR differs."""

    family = "lexiprecision"
    value_type = np.int8
    aliases = ("sgnLP",)
    summary = "lexicographic precision: who ranks the first differing relevant document higher"
    cite = LEXIPRECISION

    def compare(self, comparison: Comparison) -> np.ndarray:
        signs = comparison.signs
        first, found = self.first_difference(comparison.positions, signs)
        values = np.take_along_axis(signs, np.minimum(first, signs.shape[-1] - 1), axis=-1)
        return np.where(found, values, 0).astype(np.int8)


@register
class RRLexiPrecision(Lexicographic):
    """Reciprocal-rank lexicographic precision (Diaz, EVIA 2023): 1/x_i − 1/y_i at the first i where
    x_i ≠ y_i; 0 if x = y. Equals ΔRR whenever RR differs, and breaks RR's ties by the next relevant
    documents."""

    family = "rrlexiprecision"
    aliases = ("rrLP",)
    summary = "lexicographic precision, valued by the reciprocal ranks at the first difference"
    cite = LEXIPRECISION

    def compare(self, comparison: Comparison) -> np.ndarray:
        signs = comparison.signs
        first, found = self.first_difference(comparison.positions, signs)
        at = np.minimum(first, signs.shape[-1] - 1)
        return np.where(found, reciprocal_difference(np.take_along_axis(comparison.x, at, axis=-1),
                                                     np.take_along_axis(comparison.y, at, axis=-1)), 0.0)



@register
class LexiRecall(Lexicographic):
    """Lexicographic recall (Diaz, Ekstrand and Mitra, TORS 2025): +1 if rr(x) > rr(y) relevant
    documents are retrieved, −1 if fewer; otherwise sgn(y_i − x_i) at the largest i <= rr(x) where
    x_i ≠ y_i; 0 if x = y. Both cases are the sign at the last index where x and y differ."""

    family = "lexirecall"
    value_type = np.int8
    aliases = ("LR", "sgnLR")
    summary = "lexicographic recall: who retrieves more relevant documents, then who ranks the last higher"
    cite = "Diaz, Ekstrand and Mitra, ACM TORS 2025, doi:10.1145/3728373"

    def compare(self, comparison: Comparison) -> np.ndarray:
        signs = comparison.signs
        last, found = self.last_difference(comparison.positions, signs)
        values = np.take_along_axis(signs, np.maximum(last, 0), axis=-1)
        return np.where(found, values, 0).astype(np.int8)


@lru_cache(maxsize=8)
def _element_index(n: int) -> np.ndarray:
    index = np.arange(n)
    index.flags.writeable = False
    return index
