"""Deterministic synthetic TREC collections for the benchmarks.

A collection has ``queries`` queries; each has a set of candidate documents, ``relevant`` of them
relevant on average (Poisson, at least one) with grades 1..``max_grade``, and a fraction
``judged_nonrelevant`` of the others judged non-relevant. Each of ``runs`` runs returns ``depth``
documents per query from the candidates (shared by all runs, so runs overlap and retrieve the same
relevant documents at different ranks), scored by skill × grade plus noise; a fraction
``tied_runs`` of the runs round their scores to one decimal, which ties many of them, and list
equal scores by docid ascending, as robust03's runs do (trec_eval's order is descending). Docids are
TREC-like and distinct per query, or, with ``catalogue`` N (recommender style), item ids drawn from
one catalogue of N items. Files are written space-separated, one line per document.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Collection:
    runs: int
    queries: int
    depth: int
    relevant: float = 50.0
    max_grade: int = 2
    tied_runs: float = 0.2
    judged_nonrelevant: float = 0.3
    catalogue: int = 0
    seed: int = 1

    @property
    def name(self) -> str:
        """The folder of its files in the cache: every parameter that changes their bytes is in it."""
        items = f"-{self.catalogue}items" if self.catalogue else ""
        return (f"synthetic-v3-{self.runs}runs-{self.queries}q-{self.depth}d-{self.relevant:g}rel-{self.max_grade}g"
                f"-{self.tied_runs:g}tied-{self.judged_nonrelevant:g}nonrel{items}-seed{self.seed}")

    @property
    def lines(self) -> int:
        return self.runs * self.queries * self.depth


def write_collection(collection: Collection, folder: str) -> tuple[str, list[str]]:
    """Write the qrels and runs of ``collection`` under ``folder`` once; return their paths."""
    target = os.path.join(folder, collection.name)
    qrels_path = os.path.join(target, "qrels.txt")
    run_paths = [os.path.join(target, "runs", f"run{r:03d}") for r in range(collection.runs)]
    done = os.path.join(target, "complete")
    if os.path.exists(done):
        return qrels_path, run_paths
    os.makedirs(os.path.join(target, "runs"), exist_ok=True)
    rng = np.random.default_rng(collection.seed)
    candidates = max(2 * collection.depth, 50)
    relevant = np.maximum(rng.poisson(collection.relevant, collection.queries), 1)
    relevant = np.minimum(relevant, candidates // 2)
    grades = np.zeros((collection.queries, candidates), dtype=np.int64)
    for q in range(collection.queries):
        chosen = rng.choice(candidates, relevant[q], replace=False)
        grades[q, chosen] = rng.integers(1, collection.max_grade + 1, relevant[q])
    if collection.catalogue:
        items = np.stack([rng.choice(collection.catalogue, candidates, replace=False)
                          for _ in range(collection.queries)])
    else:
        items = np.arange(collection.queries * candidates).reshape(collection.queries, candidates)
    judged = (grades > 0) | (rng.random(grades.shape) < collection.judged_nonrelevant)
    q_index, d_index = np.nonzero(judged)
    _write_rows(qrels_path, q_index, items[q_index, d_index], grades[q_index, d_index], None, None)
    for r, path in enumerate(run_paths):
        skill = rng.uniform(0.5, 3.0)
        scores = skill * grades + rng.normal(0.0, 1.0, grades.shape)
        decimals = 1 if r < round(collection.tied_runs * collection.runs) else 6
        scores = np.round(scores, decimals)
        # by score descending, equal scores by docid ascending (as robust03's runs list them)
        top = np.lexsort((items, -scores), axis=1)[:, : collection.depth]
        top_scores = np.take_along_axis(scores, top, axis=1).ravel()
        q_index = np.repeat(np.arange(collection.queries), collection.depth)
        ranks = np.tile(np.arange(1, collection.depth + 1), collection.queries)
        _write_rows(path, q_index, items[q_index, top.ravel()], np.round(top_scores, decimals), ranks, f"run{r:03d}")
    with open(os.path.join(target, "collection.txt"), "w") as handle:
        handle.write(repr(asdict(collection)) + "\n")
    open(done, "w").close()
    return qrels_path, run_paths


def _write_rows(path, queries, items, values, ranks, tag, chunk=1 << 20) -> None:
    """Write qrels lines ``qid 0 docid grade`` (``tag`` None) or run lines ``qid Q0 docid rank score
    tag``, in chunks; docids look like TREC's (``FT934-0012345``)."""
    with open(path, "w") as handle:
        for start in range(0, len(queries), chunk):
            part = slice(start, start + chunk)
            qid = (queries[part] + 1).astype(str)
            docid = np.char.add("FT934-", np.char.zfill(items[part].astype(str), 7))
            if tag is None:
                columns = {"qid": qid, "iter": "0", "docid": docid, "grade": values[part]}
            else:
                columns = {"qid": qid, "Q0": "Q0", "docid": docid, "rank": ranks[part], "score": values[part],
                           "tag": tag}
            pd.DataFrame(columns).to_csv(handle, sep=" ", header=False, index=False)
