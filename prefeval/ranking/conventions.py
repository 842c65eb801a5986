"""Query conventions: which queries an evaluation holds, in which order, and how its sums are added.

Evaluators agree on the measures and disagree on the queries (MEASURES.md, "Query conventions"). A
:class:`Conventions` bundles every such choice, made once and given to the evaluation; the output
formats render what the evaluation holds and decide nothing. Three named profiles
(:data:`PROFILES`) are the conventions of the tools prefeval answers for:

=============  ===============  ====================  ==================  ==========  =============
profile        empty queries    missing queries       query order         arithmetic  summary order
=============  ===============  ====================  ==================  ==========  =============
reference      drop             worst                 qrels               pairwise    queries
trec_eval      keep             skip (``-c``: worst)  trec_eval (sorted)  sequential  queries
ir_measures    keep             zero                  qrels               sequential  listed
=============  ===============  ====================  ==================  ==========  =============

* ``empty_queries``: the queries of the qrels without a relevant document are dropped (the reference
  pref_eval.py, with a note) or kept (every measure is evaluated on them; most score 0).
* ``missing_queries``: a query of the qrels that a run lacks is scored as retrieving nothing
  (``worst``: the reference, trec_eval's ``-c``), left out of the run's lines and summary (``skip``:
  trec_eval without ``-c``; a pair's lines and means hold the queries both runs have), or written
  with every metric 0, counts included (``zero``: ir_measures, whose ``NumRel`` and ``NumQ`` are 0 on
  a query the run lacks, where ``worst`` counts its relevant documents and the query).
* ``query_order``: the qrels' order of first appearance, or trec_eval's: query ids compared as
  bytes (C's ``strcmp``), which orders per-query lines and the additions of the summary.
* ``arithmetic``: ``pairwise`` adds a query's terms and the summary's per-query values as numpy
  does (pairwise, in fixed blocks: :mod:`prefeval.engine.results`); ``sequential`` computes a
  query's value in the order of operations of the tool's own code (the measure's docstring cites
  it: trec_eval's ``m_*.c`` loops add the terms one after the other in rank order, and ir_measures
  computes most of its measures with that code, through pytrec_eval) and adds the summary's values
  one after the other, as trec_eval's ``meas_avg.c`` and ir_measures' ``MeanAgg`` do (the sum, then
  one division), so that a value on the edge of a rounding digit rounds as the tool's does.
* ``summary_order``: the order in which the summary adds a run's values: the queries' (``queries``:
  the order above), or the order in which the run's file first lists its queries, those it lacks
  last (``listed``): ir_measures' ``MeanAgg`` adds the values as its providers yield them, query by
  query in the run's order (pytrec_eval, judged, compat, msmarco, accuracy: ``for qid in run``),
  then the defaults of the queries the run lacks (0, which changes no sum); gdeval's come in
  numeric order of the query ids, but rounded to five decimals anyway. A reader that streams the
  runs needs them in the qrels' order, which is then each run's own. Pairs add in the queries' order.
* ``qrels_num_rel``: the summary of ``num_rel`` is the number of documents of grade > 0 in the
  whole qrels, whatever the relevance level: what trec_eval prints with ``-c`` (its ``m_num_rel.c``
  goes back to the qrels for the summary), set by :meth:`Conventions.complete` on the trec_eval
  profile.
* ``judged_once``: a document judged on two lines of a query (a qrels of subtopics, which judges a
  document once per subtopic) is an error, as trec_eval stops on it (``duplicate docs``): the trec_eval
  profile's, so that its layout never reads such a qrels; the others read each document's largest
  grade, and the subtopics for the measures that read them (:mod:`prefeval.io.subtopics`).

``-c`` (trec_eval's "complete") is a modifier of a profile: :meth:`Conventions.complete`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from prefeval.errors import UsageError, shown

DROP, KEEP = "drop", "keep"
EMPTY_QUERIES = (DROP, KEEP)
WORST, SKIP, ZERO = "worst", "skip", "zero"
MISSING_QUERIES = (WORST, SKIP, ZERO)
QRELS_ORDER, TREC_EVAL_ORDER = "qrels", "trec_eval"
QUERY_ORDERS = (QRELS_ORDER, TREC_EVAL_ORDER)
PAIRWISE, SEQUENTIAL = "pairwise", "sequential"
ARITHMETIC = (PAIRWISE, SEQUENTIAL)
QUERIES, LISTED = "queries", "listed"
SUMMARY_ORDERS = (QUERIES, LISTED)

REFERENCE, TREC_EVAL, IR_MEASURES = "reference", "trec_eval", "ir_measures"


class Conventions(NamedTuple):
    """The query conventions of an evaluation (module docstring); ``profile`` names where they come
    from, for messages."""

    profile: str = REFERENCE
    empty_queries: str = DROP
    missing_queries: str = WORST
    query_order: str = QRELS_ORDER
    arithmetic: str = PAIRWISE
    qrels_num_rel: bool = False
    summary_order: str = QUERIES
    judged_once: bool = False

    @property
    def keep_empty(self) -> bool:
        return self.empty_queries == KEEP

    @property
    def skip_missing(self) -> bool:
        return self.missing_queries == SKIP

    @property
    def sequential(self) -> bool:
        return self.arithmetic == SEQUENTIAL

    def ordered(self, queries: np.ndarray, qids: Sequence[str]) -> np.ndarray:
        """``queries`` (indexes into ``qids``, in the qrels' order) in these conventions' order: as
        they are, or trec_eval's (their ids compared as bytes; a stable sort)."""
        if self.query_order == QRELS_ORDER:
            return queries
        keys = [qids[q].encode("utf-8", "surrogateescape") for q in queries]
        return queries[np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)]

    def complete(self) -> Conventions:
        """These conventions with trec_eval's ``-c``: a query a run lacks is scored as retrieving
        nothing (and, on the trec_eval profile, ``num_rel``'s summary counts the whole qrels)."""
        return self._replace(missing_queries=WORST, qrels_num_rel=self.profile == TREC_EVAL)

    def check(self) -> Conventions:
        """These conventions, or a :class:`UsageError` for a value that does not exist."""
        for name, allowed in (("empty_queries", EMPTY_QUERIES), ("missing_queries", MISSING_QUERIES),
                              ("query_order", QUERY_ORDERS), ("arithmetic", ARITHMETIC),
                              ("summary_order", SUMMARY_ORDERS)):
            if getattr(self, name) not in allowed:
                raise UsageError(f"{name} must be one of {', '.join(allowed)}, not {shown(getattr(self, name))}")
        return self


REFERENCE_CONVENTIONS = Conventions(REFERENCE)
"""The reference's conventions (pref_eval.py): the default of prefeval's own formats."""

PROFILES: dict[str, Conventions] = {
    REFERENCE: REFERENCE_CONVENTIONS,
    TREC_EVAL: Conventions(TREC_EVAL, KEEP, SKIP, TREC_EVAL_ORDER, SEQUENTIAL, judged_once=True),
    IR_MEASURES: Conventions(IR_MEASURES, KEEP, ZERO, QRELS_ORDER, SEQUENTIAL, summary_order=LISTED),
}
"""The named profiles (module docstring), by name."""


def conventions(profile: str | Conventions = REFERENCE, *, complete: bool = False, empty_queries: str | None = None,
                missing_queries: str | None = None) -> Conventions:
    """The conventions of ``profile`` (a name of :data:`PROFILES`, or conventions already made),
    with ``complete`` (trec_eval's ``-c``) and any of ``empty_queries`` and ``missing_queries``
    given in place of the profile's; a :class:`UsageError` for an unknown value, or for ``complete``
    with ``missing_queries`` other than ``worst`` (they contradict each other)."""
    if isinstance(profile, Conventions):
        chosen = profile
    elif profile in PROFILES:
        chosen = PROFILES[profile]
    else:
        raise UsageError(f"unknown conventions {profile!r}; choose one of {', '.join(PROFILES)}")
    if complete and missing_queries not in (None, WORST):
        raise UsageError(f"-c scores missing queries as retrieving nothing, missing queries {missing_queries} "
                         "does not: give one or the other")
    if complete:
        chosen = chosen.complete()
    if empty_queries is not None:
        chosen = chosen._replace(empty_queries=empty_queries)
    if missing_queries is not None:
        chosen = chosen._replace(missing_queries=missing_queries)
    return chosen.check()
