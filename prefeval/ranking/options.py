"""Which documents count as relevant, and how deep a run is read: one frozen bundle, made once.

The options travel together from the command line (or the Python API) to the loader and the
evaluation, validated where they are made:

* ``binary_relevance`` G (``-b``): a grade g becomes 1 if g >= G, else 0;
* ``relevance_floor`` F (``-f``): grades below F become 0 (applied after ``-b``, as pref_eval.py does);
* ``relevance_level`` L (``-l``, trec_eval's): binary measures count a document as relevant when its
  grade is >= L; measures that read the grades (nDCG, graded RPP) keep every positive grade;
* ``topk`` K (``--topk``, trec_eval's ``-M``): every run is cut to its first K documents;
* ``judged_only`` (``-J``, trec_eval's): the documents that are not judged are removed from every
  run before ranking.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from prefeval.errors import UsageError, shown


@dataclass(frozen=True)
class RelevanceOptions:
    binary_relevance: float | None = None
    relevance_floor: float | None = None
    relevance_level: float | None = None
    topk: int | None = None
    judged_only: bool = False

    def __post_init__(self):
        for name in ("binary_relevance", "relevance_floor", "relevance_level"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)
                                      or not math.isfinite(value)):
                raise UsageError(f"{name} must be a finite number, not {shown(value)}")
        if self.relevance_level is not None and not self.relevance_level > 0:
            raise UsageError(
                f"relevance level must be > 0 (a grade <= 0 is never relevant), not {self.relevance_level}")
        if self.topk is not None and (isinstance(self.topk, bool) or not isinstance(self.topk, numbers.Integral)
                                      or self.topk < 1):
            raise UsageError(f"topk must be an integer of at least 1, not {shown(self.topk)}")


NO_RELEVANCE_OPTIONS = RelevanceOptions()
"""Every grade as it is, every run in full."""
