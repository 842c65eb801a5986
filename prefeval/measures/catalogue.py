"""The catalogue of measures that ``prefeval measures`` prints: every registered family, described."""

from __future__ import annotations

from prefeval.io.judgments import PREFERENCES
from prefeval.measures.base import Measure, families, family_syntax
from prefeval.measures.foreign import names_of
from prefeval.measures.items import is_item_measure
from prefeval.measures.judgments import JudgmentMetric


def measure_catalogue() -> list[dict]:
    """One record per measure family, in the listing order (:data:`~prefeval.measures.order.FAMILY_ORDER`)::

        {"name": "ap", "syntax": "ap[@k]", "kind": "metric", "relevance": "binary", "aliases": [],
         "parameters": [{"name": "k", "type": "int", "default": 0, "range": "[0, inf]", "meaning": ...}],
         "trec_eval": ["map", "map_cut.k"], "ir_measures": ["AP[@k]"], "description": ...,
         "citation": "Buckley and Voorhees, ..."}

    ``relevance`` is ``binary`` (grade >= the relevance level counts), ``graded`` (every positive
    grade, as a gain or a grade level), ``preferences`` (a measure of preference judgments:
    :mod:`prefeval.measures.judgments`) or ``none`` (the beyond-accuracy measures, which read what the
    items are, not whether they are relevant: :mod:`prefeval.measures.items`); every metric is also
    valid as a preference (its difference).
    """
    return [_describe(family) for family in families()]


def _describe(family: type[Measure]) -> dict:
    others = names_of(family.family)
    return {
        "name": family.family,
        "syntax": family_syntax(family),
        "kind": family.kind,
        "relevance": family.judgments if issubclass(family, JudgmentMetric) and family.judgments == PREFERENCES
        else "none" if is_item_measure(family) else "graded" if family.reads_grades else "binary",
        "aliases": list(family.aliases),
        "parameters": [
            {
                "name": param.name,
                "type": param.type.__name__,
                "default": param.default,
                "range": param.describe_range(),
                "meaning": param.meaning,
            }
            for param in family.parameters
        ],
        **others,
        "description": family.summary,
        "citation": family.cite,
    }
