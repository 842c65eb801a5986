"""Subsampling of queries and relevance labels, for studies of stability and of incomplete judgments.

Every random choice draws from one ``numpy.random.Generator`` seeded by the user (``--seed``), so the
same inputs and seed give the same selections, sample after sample.
"""

from __future__ import annotations

import secrets

import numpy as np

from prefeval.ranking.positions import Selection
from prefeval.ranking.ranktable import RankTable

LABEL_POLICIES = ("random", "pool")


def draw_seed() -> int:
    """A fresh seed, for when the user gave none (it is reported, so the run can be repeated)."""
    return secrets.randbelow(2**32)


def keep_count(total: np.ndarray | int, fraction: float) -> np.ndarray | int:
    """How many of ``total`` items a fraction keeps: floor(total × fraction), at least one."""
    return np.maximum(np.floor(np.asarray(total) * fraction + 1e-9).astype(np.int64), 1)


def draw_selection(
    table: RankTable,
    rng: np.random.Generator | None,
    query_fraction: float = 1.0,
    label_fraction: float = 1.0,
    label_policy: str = "random",
) -> Selection:
    """Choose the queries and relevant documents of one sample.

    * ``query_fraction`` keeps floor(Q × F) queries (at least one), uniformly without replacement,
      in their qrels order.
    * ``label_fraction`` keeps, per query, floor(m × F) of its m relevant documents (at least one):
      ``random`` uniformly; ``pool`` the documents retrieved (within ``topk``) by the most runs, ties
      broken by docid descending, so the rarest finds are dropped first (as pref_eval.py does).
    """
    if label_policy not in LABEL_POLICIES:
        raise ValueError(f"label policy must be one of {LABEL_POLICIES}, not {label_policy!r}")
    selection = Selection.everything(table)
    if query_fraction < 1.0:
        count = int(keep_count(table.num_queries, query_fraction))
        queries = np.sort(rng.choice(table.num_queries, size=count, replace=False))
        selection = Selection(queries, selection.documents)
    if label_fraction < 1.0:
        selection = Selection(selection.queries, _keep_labels(table, rng, label_fraction, label_policy))
    return selection


def _keep_labels(table: RankTable, rng, fraction: float, policy: str) -> np.ndarray:
    qrels = table.qrels
    query = qrels.query_of_document
    if policy == "random":
        preference_order = np.lexsort((rng.random(len(query)), query))
    else:
        times_retrieved = np.isfinite(table.ranks).sum(axis=0)
        docid_rank = np.unique(qrels.docids.astype(str), return_inverse=True)[1].ravel()
        preference_order = np.lexsort((-docid_rank, -times_retrieved, query))
    place_in_query = np.empty(len(query), dtype=np.int64)
    place_in_query[preference_order] = np.arange(len(query)) - qrels.offsets[query[preference_order]]
    return place_in_query < keep_count(qrels.num_relevant, fraction)[query]
