"""Which documents count as relevant, and how deep a run is read: one frozen bundle, made once.

The options travel together from the command line (or the Python API) to the loader and the
evaluation, validated where they are made:

* ``binary_relevance`` G (``-b``): a grade g becomes 1 if g >= G, else 0;
* ``relevance_floor`` F (``-f``): grades below F become 0 (applied after ``-b``, as pref_eval.py does);
* ``relevance_level`` L (``-l``, trec_eval's): binary measures count a document as relevant when its
  grade is >= L; measures that read the grades (nDCG, graded RPP) keep every positive grade;
* ``topk`` K (``--topk``, trec_eval's ``-M``): every run is cut to its first K documents;
* ``keep_empty`` (``--empty-queries keep``, trec_eval's convention): the queries of the qrels without
  a relevant document are kept (every measure is evaluated on them, most score 0), where the
  reference drops them;
* ``judged_only`` (``-J``, trec_eval's): the documents that are not judged are removed from every
  run before ranking.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from prefeval.errors import UsageError


@dataclass(frozen=True)
class RelevanceOptions:
    binary_relevance: float | None = None
    relevance_floor: float | None = None
    relevance_level: float | None = None
    topk: int | None = None
    keep_empty: bool = False
    judged_only: bool = False

    def __post_init__(self):
        for name in ("binary_relevance", "relevance_floor", "relevance_level"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)
                                      or not math.isfinite(value)):
                raise UsageError(f"{name} must be a finite number, not {value!r}")
        if self.relevance_level is not None and not self.relevance_level > 0:
            raise UsageError(
                f"relevance level must be > 0 (a grade <= 0 is never relevant), not {self.relevance_level}")
        if self.topk is not None and (isinstance(self.topk, bool) or not isinstance(self.topk, numbers.Integral)
                                      or self.topk < 1):
            raise UsageError(f"topk must be an integer of at least 1, not {self.topk!r}")


NO_RELEVANCE_OPTIONS = RelevanceOptions()
"""Every grade as it is, every run in full."""


DROP, KEEP = "drop", "keep"
EMPTY_QUERIES = (DROP, KEEP)
"""Queries of the qrels without a relevant document: ``drop`` them (the reference pref_eval.py, the
default) or ``keep`` them (trec_eval and ir_measures: evaluated, most measures 0)."""

WORST, SKIP = "worst", "skip"
MISSING_QUERIES = (WORST, SKIP)
"""Queries of the qrels that a run lacks: score them as ``worst`` (the run retrieved nothing: the
reference, and trec_eval's ``-c``; the default) or ``skip`` them (trec_eval without ``-c``: a run's
lines and means hold only its own queries, a pair's only the queries both runs have)."""


def check_conventions(empty_queries: str, missing_queries: str) -> None:
    """A :class:`UsageError` for a query convention that does not exist."""
    if empty_queries not in EMPTY_QUERIES:
        raise UsageError(f"empty_queries must be one of {', '.join(EMPTY_QUERIES)}, not {empty_queries!r}")
    if missing_queries not in MISSING_QUERIES:
        raise UsageError(f"missing_queries must be one of {', '.join(MISSING_QUERIES)}, not {missing_queries!r}")
