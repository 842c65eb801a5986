"""The order in which prefeval lists its measure families (``prefeval measures``, the valid names in
an error), written out rather than left to the order in which modules happen to be imported.

It is the order of MEASURES.md: the six preferences in the order of the default measure list, then
the families of the metrics of that list, then the other metrics (the wider literature). It holds
family names only, so that :mod:`prefeval.measures.base` can read it without importing a measure.
Every registered family must be named here exactly once (``tests/test_common.py`` checks it); one
that is not is listed last.
"""

from __future__ import annotations

FAMILY_ORDER: tuple[str, ...] = (
    # the preferences, in the default list's order
    "rpp", "invrpp", "dcgrpp", "lexirecall", "lexiprecision", "rrlexiprecision",
    # the families of the default list's metrics, in its order
    "ap", "rbp", "rr", "ndcg", "rp", "p", "r",
    # the other metrics: where the relevant documents are, then gains discounted by rank
    "f", "success", "auc", "dcg", "ndcg_exp", "cg", "pfound",
)
