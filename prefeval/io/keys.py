"""The vocabulary of eval lines (DESIGN.md, "Output format"), defined once for the writer
(:mod:`prefeval.report.eval_lines`), the reader (:mod:`prefeval.io.evallines`) and every format
made from them: the labels of a line, and how the keys that are not plain measures are made from a
measure's name (a statistic over queries, ``ap:median``; the bounds over tie orders, ``ap_ties_min``;
the standard error of an estimate, ``lexiprecision_se``). The analyses' records have theirs in
:mod:`prefeval.io.records`.

A per-query *pair line* holds :data:`PAIR_KEYS` (its ``type`` is :data:`PREFERENCE`), a per-query
*metric line* :data:`METRIC_KEYS` (its ``type`` is :data:`METRIC`); the summary lines have the
``qid`` :data:`SUMMARY_QID` (a pair's has no ``type``). Every other key of a line is a measure, and
the two line types are the two kinds of measure (:mod:`prefeval.measures.base`).
"""

from __future__ import annotations

QID, RUN, RUNI, RUNJ, SAMPLE, TYPE = "qid", "run", "runi", "runj", "sample", "type"
METRIC, PREFERENCE = "metric", "preference"
PAIR_KEYS = (QID, RUNI, RUNJ, SAMPLE, TYPE)
"""A per-query pair line's labels, in the order eval writes them."""
METRIC_KEYS = (QID, RUN, SAMPLE, TYPE)
"""A metric line's labels, in the order eval writes them."""
GROUP, WORST_OFF = "group", "worst-off"
"""``eval --user-groups``: the key naming the user group of a group's summary line, and the
``type`` of a worst-off line (a run's worst-off group for one metric)."""
LABEL_KEYS = frozenset(PAIR_KEYS + METRIC_KEYS + (GROUP,))
"""Every key that is not a measure."""
SUMMARY_QID = "all"
"""The ``qid`` of the summary lines (means over queries)."""

MEAN = "mean"
"""The statistic over queries whose key is the measure's own name."""
STATISTIC_SEPARATOR = ":"
"""Between a metric and a statistic in a name: ``ap:median``."""


def statistic_key(measure: str, statistic: str) -> str:
    """The name of a statistic of a metric over queries (``eval --summary``,
    :mod:`prefeval.measures.summaries`): the metric's own name for the mean, ``ap:median`` otherwise."""
    return measure if statistic == MEAN else f"{measure}{STATISTIC_SEPARATOR}{statistic}"


def bound_keys(name: str) -> tuple[str, str]:
    """The keys of a measure's minimum and maximum over tie orders (``--ties range``,
    :mod:`prefeval.measures.ties`): ``ap_ties_min``, ``ap_ties_max`` (not ``ap_min``, which would
    read as a minimum over queries, like ``eval --summary min``)."""
    return f"{name}_ties_min", f"{name}_ties_max"


def flip_key(name: str) -> str:
    """The key saying whether tie orders could give a pair's mean of the measure either sign."""
    return f"{name}_ties_flip"


def error_key(name: str) -> str:
    """The key of the standard error of a Monte Carlo estimate (``--ties expected``): ``lexiprecision_se``."""
    return f"{name}_se"
