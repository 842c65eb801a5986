"""The measure registry (see :mod:`prefeval.measures.base`) and the standard measure lists.

The measures live in :mod:`~prefeval.measures.preferences` (pairwise comparisons),
:mod:`~prefeval.measures.precision_recall` (metrics of where the relevant documents are) and
:mod:`~prefeval.measures.gain_discount` (gains discounted by rank); importing them registers them.
"""

from __future__ import annotations

from collections.abc import Sequence

from prefeval.errors import UsageError
from prefeval.measures import (  # noqa: F401  (registers the measures)
    counts,
    diversity,
    gain_discount,
    gains,
    intent_preferences,
    interpolated,
    items,
    judged,
    judgment_groups,
    precision_recall,
    preferences,
    prefs,
    set_based,
)
from prefeval.measures.base import (
    METRIC,
    PREFERENCE,
    REGISTRY,
    AdditiveMetric,
    Measure,
    Metric,
    Preference,
    families,
)
from prefeval.measures.order import FAMILY_ORDER
from prefeval.measures.request import MeasureRequest, parse_measure, parse_measures, read_request, split_measure_list

PREFERENCE_MEASURES = ("rpp", "invrpp", "dcgrpp", "lexirecall", "lexiprecision", "rrlexiprecision")
"""The six preference measures, added by ``-M preferences``."""

DEFAULT_EVAL_MEASURES = PREFERENCE_MEASURES + ("ap", "rbp", "rr", "ndcg", "rp", "p@1", "p@10", "r@1", "r@10")
"""The default measure list of ``eval`` (MEASURES.md), used with no ``-m`` (the analyses ``null`` and
``sampled`` have default lists of their own)."""

MEASURE_SETS = ("none", "preferences", "all")


def select_measures(names: Sequence[str] | MeasureRequest = (), measure_set: str = "none") -> list[Measure]:
    """The measures asked for by ``-m NAMES`` (names, or their request:
    :func:`~prefeval.measures.request.read_request`) and ``-M MEASURE_SET`` (as pref_eval.py reads them).

    ``none`` uses the names, or the default list when there are none; ``preferences`` adds the six
    preference measures to the names (alone, when there are none); ``all`` adds the default list.
    Names that stand only for lines of trec_eval's layout (``-m runid``) select no measure.
    """
    request = names if isinstance(names, MeasureRequest) else read_request(names)
    chosen = request.measures
    if request.items and not chosen and measure_set == "none":
        return []
    if measure_set == "preferences":
        extra = PREFERENCE_MEASURES
    elif measure_set == "all" or not chosen:
        extra = DEFAULT_EVAL_MEASURES
    else:
        extra = ()
    return list(dict.fromkeys(chosen + parse_measures(extra)))


def select_available(names: Sequence[str], available: Sequence[str], where: str) -> list[str]:
    """Of the measures ``available`` (keys of eval lines, found in ``where``), those asked for by
    ``-m NAMES``: each a key, or any name of its measure (``map`` or ``AP`` for the key ``ap``; lists
    such as ``p@5,10`` or ``P.5,10``). Every available measure when none is asked for; a name that is
    not available is a :class:`UsageError` listing those that are."""
    if not names:
        return list(available)
    chosen = []
    for text in names:
        tokens = [token for token in split_measure_list(text) if token]
        if all(token in available for token in tokens):
            chosen += tokens
            continue
        try:
            chosen += [measure.name for measure in parse_measures([text])]
        except UsageError:
            chosen += tokens
    unknown = [name for name in chosen if name not in available]
    if unknown:
        raise UsageError(f"measure(s) {', '.join(unknown)} not in {where}; found: {', '.join(available)}")
    return list(dict.fromkeys(chosen))


def select_additive_metrics(
    names: Sequence[str | Measure], defaults: Sequence[str], command: str
) -> list[AdditiveMetric]:
    """The metrics asked for by ``-m NAMES`` (measure objects pass through; ``defaults`` without any)
    for an analysis over random ranks, which needs sums over relevant documents (``command`` names
    the analysis in the error about anything else)."""
    measures = [name for name in names if isinstance(name, Measure)]
    texts = [name for name in names if not isinstance(name, Measure)]
    measures += parse_measures(texts or ([] if measures else defaults))
    for measure in measures:
        if measure.reads_judged:
            raise UsageError(f"{command} ranks the relevant documents at random; {measure.name} reads the judged "
                             "documents that are not relevant too")
        if not isinstance(measure, AdditiveMetric):
            kind = "a preference" if not measure.is_metric else "not a sum over relevant documents"
            raise UsageError(f"{command} needs metrics that are sums over relevant documents; {measure.name} is {kind}")
    return list(dict.fromkeys(measures))


__all__ = [
    "DEFAULT_EVAL_MEASURES",
    "FAMILY_ORDER",
    "MEASURE_SETS",
    "METRIC",
    "PREFERENCE",
    "PREFERENCE_MEASURES",
    "REGISTRY",
    "AdditiveMetric",
    "Measure",
    "Metric",
    "Preference",
    "families",
    "parse_measure",
    "parse_measures",
    "read_request",
    "select_additive_metrics",
    "select_available",
    "select_measures",
]
