"""Subsampling of queries and relevance labels, for studies of stability and of incomplete judgments.

Every random choice draws from one ``numpy.random.Generator`` seeded by the user (``--seed``; one is
drawn and reported when none is given, :mod:`prefeval.runtime.seeds`), so the same inputs and seed
give the same selections, sample after sample. The ``pool`` label policy draws nothing.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from prefeval.errors import UsageError, shown
from prefeval.ranking.positions import Selection
from prefeval.ranking.ranktable import RankTable

LABEL_POLICIES = ("random", "pool")


@dataclass(frozen=True)
class SubsamplingOptions:
    """How many samples to evaluate and what each keeps (see :func:`draw_selection`): ``samples``
    repetitions, numbered from 0, each keeping ``query_fraction`` of the queries and
    ``label_fraction`` of each query's relevant documents chosen by ``label_policy``; ``seed`` for
    the random choices."""

    samples: int = 1
    query_fraction: float = 1.0
    label_fraction: float = 1.0
    label_policy: str = "random"
    seed: int | None = None

    def __post_init__(self):
        if isinstance(self.samples, bool) or not isinstance(self.samples, numbers.Integral) or self.samples < 1:
            raise UsageError(f"samples must be an integer of at least 1, not {shown(self.samples)}")
        for name in ("query_fraction", "label_fraction"):
            fraction = getattr(self, name)
            if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real) or not 0.0 < fraction <= 1.0:
                raise UsageError(f"{name} must be in (0, 1], not {shown(fraction)}")
        if self.label_policy not in LABEL_POLICIES:
            raise UsageError(f"label policy must be one of {', '.join(LABEL_POLICIES)}, not {shown(self.label_policy)}")

    @property
    def draws_at_random(self) -> bool:
        """Whether any choice is random (and so needs a seed): only ``pool`` is deterministic."""
        return self.query_fraction < 1.0 or (self.label_fraction < 1.0 and self.label_policy == "random")


def keep_count(total: np.ndarray | int, fraction: float) -> np.ndarray | int:
    """How many of ``total`` items a fraction keeps: floor(total × fraction), at least one."""
    return np.maximum(np.floor(np.asarray(total) * fraction + 1e-9).astype(np.int64), 1)


def draw_selection(table: RankTable, rng: np.random.Generator | None, options: SubsamplingOptions) -> Selection:
    """Choose the queries and relevant documents of one sample.

    * ``query_fraction`` keeps floor(Q × F) queries (at least one), uniformly without replacement,
      in their qrels order.
    * ``label_fraction`` keeps, per query, floor(m × F) of its m relevant documents (at least one):
      ``random`` uniformly; ``pool`` the documents retrieved (within ``topk``) by the most runs, ties
      broken by docid descending, so the rarest finds are dropped first (as pref_eval.py does).
    """
    selection = Selection.everything(table)
    if options.query_fraction < 1.0:
        count = int(keep_count(table.num_queries, options.query_fraction))
        queries = np.sort(rng.choice(table.num_queries, size=count, replace=False))
        selection = Selection(queries, selection.documents)
    if options.label_fraction < 1.0:
        documents = _keep_labels(table, rng, options.label_fraction, options.label_policy)
        selection = Selection(selection.queries, documents)
    return selection


def _keep_labels(table: RankTable, rng, fraction: float, policy: str) -> np.ndarray:
    qrels = table.qrels
    query = qrels.query_of_document
    if policy == "random":
        preference_order = np.lexsort((rng.random(len(query)), query))
    else:
        times_retrieved = np.isfinite(table.ranks).sum(axis=0)
        docid_rank = np.unique(qrels.docids.byte_strings(np.arange(len(query))), return_inverse=True)[1].ravel()
        preference_order = np.lexsort((-docid_rank, -times_retrieved, query))
    place_in_query = np.empty(len(query), dtype=np.int64)
    place_in_query[preference_order] = np.arange(len(query)) - qrels.offsets[query[preference_order]]
    return place_in_query < keep_count(qrels.num_relevant, fraction)[query]
