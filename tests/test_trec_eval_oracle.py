"""Agreement with trec_eval (through pytrec-eval-terrier) on random collections.

The collections have score ties, graded qrels, queries missing from runs, queries in runs but not in
the qrels, unjudged documents and runs shorter than the cut-offs.
"""

from __future__ import annotations

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from conftest import write_qrels, write_run  # noqa: E402

import prefeval  # noqa: E402

CUTOFFS = (5, 10, 15, 20, 30, 100)
OURS_TO_TREC_EVAL = {"ap": "map", "ndcg": "ndcg", "rr": "recip_rank", "rp": "Rprec"}
for k in CUTOFFS:
    OURS_TO_TREC_EVAL.update({f"ap@{k}": f"map_cut_{k}", f"ndcg@{k}": f"ndcg_cut_{k}", f"p@{k}": f"P_{k}",
                              f"r@{k}": f"recall_{k}"})


def random_collection(seed: int):
    rng = np.random.default_rng(seed)
    qrels, runs = {}, []
    queries = [f"{100 + q}" for q in range(int(rng.integers(3, 12)))]
    for qid in queries:
        pool = int(rng.integers(5, 60))
        grades = rng.choice([0, 0, 0, 1, 1, 2, 3], size=pool)
        qrels[qid] = {f"D{qid}-{d}": int(g) for d, g in enumerate(grades)}
    for _ in range(int(rng.integers(1, 4))):
        run = {}
        for qid in queries + ["999"]:
            if rng.random() < 0.15:
                continue  # query missing from this run
            depth = int(rng.integers(1, 120))
            candidates = [f"D{qid}-{d}" for d in range(80)]  # some never judged
            docs = rng.choice(candidates, size=min(depth, len(candidates)), replace=False)
            if rng.random() < 0.5:
                scores = rng.integers(0, 6, size=len(docs)).astype(float)  # many ties
            else:
                scores = np.round(rng.normal(size=len(docs)), 3)
            if rng.random() < 0.5:  # half of the runs list documents already in ranking order
                order = sorted(range(len(docs)), key=lambda i: (-scores[i], [-ord(c) for c in docs[i]]))
                docs, scores = docs[order], scores[order]
            run[qid] = {str(d): float(s) for d, s in zip(docs, scores)}
        runs.append(run)
    return qrels, runs


@pytest.mark.parametrize("seed", range(25))
def test_metrics_equal_trec_eval_per_query(tmp_path, seed):
    qrels, runs = random_collection(seed)
    qrels_path = write_qrels(tmp_path / "qrels", qrels)
    run_paths = [write_run(tmp_path / f"run{n}", run) for n, run in enumerate(runs)]
    ours = prefeval.evaluate(qrels_path, run_paths, list(OURS_TO_TREC_EVAL))
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "map_cut", "ndcg", "ndcg_cut", "recip_rank", "Rprec",
                                                       "P", "recall"})
    compared = 0
    for n, run in enumerate(runs):
        expected = evaluator.evaluate(run)
        rows = ours[ours["run"] == f"run{n}"].set_index("qid")
        for qid, values in expected.items():
            if qid not in rows.index:
                assert not any(g > 0 for g in qrels[qid].values())  # dropped: no relevant document
                continue
            for name, trec_name in OURS_TO_TREC_EVAL.items():
                assert rows.loc[qid, name] == pytest.approx(values[trec_name], abs=1e-9), (seed, n, qid, name)
                compared += 1
    assert compared > 0
