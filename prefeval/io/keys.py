"""The vocabulary of eval lines (DESIGN.md, "Output format"), defined once for the writer
(:mod:`prefeval.report.eval_lines`), the reader (:mod:`prefeval.io.evallines`) and every format
made from them.

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
LABEL_KEYS = frozenset(PAIR_KEYS + METRIC_KEYS)
"""Every key that is not a measure."""
SUMMARY_QID = "all"
"""The ``qid`` of the summary lines (means over queries)."""
