"""Small random diversity collections, and the intent-aware measures computed the plain way, for the
tests of :mod:`prefeval.measures.diversity` and of the preferences over intents.

A collection: queries with subtopics and documents judged on them (a document relevant to several
subtopics, another to none), runs that rank some of the documents and some unjudged ones, with
distinct scores (so that every tool orders them alike). :func:`plain_values` computes each measure
from its definition, one rank after the other (the module docstring of
:mod:`prefeval.measures.diversity`), with nothing shared with the vectorised code.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np


def random_collection(rng: np.random.Generator, num_queries: int = 4, num_runs: int = 3, depth: int = 25):
    """(qrels lines, {run name: run lines}): each query has 1 to 5 subtopics (ids 1, 2, ... with gaps),
    up to 14 judged documents, each relevant to a random set of subtopics (grades 0 to 3, a grade of
    0 also written), and each run ranks up to ``depth`` documents, judged or not, scores distinct."""
    qrels, runs = [], {f"r{n}": [] for n in range(num_runs)}
    for q in range(num_queries):
        qid = str(101 + q)
        subtopics = sorted(rng.choice(np.arange(1, 9), size=int(rng.integers(1, 6)), replace=False).tolist())
        docs = [f"d{q}-{d:02d}" for d in range(int(rng.integers(1, 15)))]
        for doc in docs:
            for subtopic in subtopics:
                if rng.random() < 0.45:
                    qrels.append(f"{qid} {subtopic} {doc} {int(rng.integers(1, 4))}")
                elif rng.random() < 0.3:
                    qrels.append(f"{qid} {subtopic} {doc} 0")
        if not any(line.startswith(qid + " ") for line in qrels):
            qrels.append(f"{qid} {subtopics[0]} {docs[0]} 1")
        pool = docs + [f"u{q}-{u}" for u in range(10)]
        for lines in runs.values():
            if rng.random() < 0.1:
                continue  # a query missing from the run
            chosen = rng.permutation(pool)[: int(rng.integers(1, min(depth, len(pool)) + 1))]
            scores = np.sort(rng.random(len(chosen)))[::-1] + 1.0
            lines += [f"{qid} Q0 {doc} {rank} {float(score)!r} run" for rank, (doc, score) in
                      enumerate(zip(chosen, scores), start=1)]
    return qrels, {name: lines for name, lines in runs.items() if lines}


def write_collection(directory: Path, qrels: list[str], runs: dict[str, list[str]]) -> tuple[str, list[str]]:
    """Write the collection's files: (the qrels' path, the runs' paths)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "qrels").write_text("".join(line + "\n" for line in qrels))
    paths = []
    for name, lines in runs.items():
        (directory / name).write_text("".join(line + "\n" for line in lines))
        paths.append(str(directory / name))
    return str(directory / "qrels"), paths


def parse(qrels: list[str], run: list[str], level: float = 1.0):
    """{qid: {subtopic: set of relevant docids}} (grade >= level) and {qid: [docids by score]}."""
    judged: dict[str, dict[int, set[str]]] = {}
    for line in qrels:
        qid, subtopic, doc, grade = line.split()
        judged.setdefault(qid, {})
        if float(grade) >= level:
            judged[qid].setdefault(int(subtopic), set()).add(doc)
    ranked: dict[str, list[tuple[float, str]]] = {}
    for line in run:
        qid, _, doc, _, score, *_ = line.split()
        ranked.setdefault(qid, []).append((float(score), doc))
    return judged, {qid: [doc for _, doc in sorted(pairs, key=lambda pair: -pair[0])]  # scores are distinct
                    for qid, pairs in ranked.items()}


def gains(ranking: list[str], subtopics: dict[int, set[str]], alpha: float) -> list[float]:
    """G(r) at every rank: Σ_s J(d_r, s) (1 − α)^(c_s(r)), the subtopics in order."""
    seen = dict.fromkeys(subtopics, 0)
    values = []
    for doc in ranking:
        value = 0.0
        for subtopic in sorted(subtopics):
            if doc in subtopics[subtopic]:
                value += (1.0 - alpha) ** seen[subtopic]
                seen[subtopic] += 1
        values.append(value)
    return values


def greedy_ideal(subtopics: dict[int, set[str]], alpha: float) -> list[str]:
    """ndeval's greedy ideal ranking: at each rank the document of largest gain, ties to the larger
    docid (as bytes)."""
    left = sorted(set().union(*subtopics.values())) if subtopics else []
    seen = dict.fromkeys(subtopics, 0)
    ranking = []
    while left:
        def gain(doc):
            return sum((1.0 - alpha) ** seen[s] for s in sorted(subtopics) if doc in subtopics[s])
        best = max(left, key=lambda doc: (gain(doc), doc.encode()))
        if gain(best) <= 0:
            break
        ranking.append(best)
        left.remove(best)
        for subtopic in subtopics:
            if best in subtopics[subtopic]:
                seen[subtopic] += 1
    return ranking


def plain_values(subtopics: dict[int, set[str]], ranking: list[str], alpha: float = 0.5, beta: float = 0.5,
                 k: int = 20) -> dict[str, float]:
    """Every measure of :mod:`prefeval.measures.diversity` on one query, by its definition."""
    subtopics = {s: docs for s, docs in subtopics.items() if docs}
    count = len(subtopics)
    names = ("err_ia", "nerr_ia", "alpha_dcg", "alpha_ndcg", "nrbp", "nnrbp", "ap_ia", "p_ia", "strec")
    if not count:
        return dict.fromkeys(names, 0.0)

    def cascade(order: list[str]) -> dict[str, float]:
        g = gains(order, subtopics, alpha)
        return {
            "dcg": sum(g[r] / math.log2(r + 2) for r in range(min(k, len(g)))),
            "err": sum(g[r] / (r + 1) for r in range(min(k, len(g)))),
            "rbp": sum(g[r] * beta ** r for r in range(len(g))) * (1 - (1 - alpha) * beta) / count,
        }

    ideal_ideal_dcg = sum(count * (1 - alpha) ** r / math.log2(r + 2) for r in range(k))
    ideal_ideal_err = sum(count * (1 - alpha) ** r / (r + 1) for r in range(k))
    run, ideal = cascade(ranking), cascade(greedy_ideal(subtopics, alpha))
    average_precisions = []
    for docs in subtopics.values():
        ranks = [r + 1 for r, doc in enumerate(ranking) if doc in docs]
        average_precisions.append(sum(i / rank for i, rank in enumerate(ranks, start=1)) / len(docs))
    top = ranking[:k]
    return {
        "alpha_dcg": run["dcg"] / ideal_ideal_dcg,
        "alpha_ndcg": run["dcg"] / ideal["dcg"] if run["dcg"] else 0.0,
        "err_ia": run["err"] / ideal_ideal_err,
        "nerr_ia": run["err"] / ideal["err"] if run["err"] else 0.0,
        "nrbp": run["rbp"],
        "nnrbp": run["rbp"] / ideal["rbp"] if ideal["rbp"] else 0.0,
        "ap_ia": sum(average_precisions) / count,
        "p_ia": sum(doc in docs for doc in top for docs in subtopics.values()) / (k * count),
        "strec": sum(any(doc in docs for doc in top) for docs in subtopics.values()) / count,
    }
