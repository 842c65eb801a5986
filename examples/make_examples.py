"""Write the small example collection of this folder (deterministic; run it to regenerate).

A qrels file with graded judgments (0-3) for 8 queries, one of them without any relevant document,
and four runs of 50 documents per query:

* ``bm25``   a decent lexical run;
* ``dense``  a better run, with many tied (rounded) scores;
* ``hybrid`` the best run, but it has no results for one query;
* ``random`` documents in random order.

    python examples/make_examples.py
"""

from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
QUERIES = [f"q{n}" for n in (101, 102, 103, 104, 105, 106, 107, 108)]
POOL = 120  # documents per query in the collection
DEPTH = 50  # documents per query in a run
MISSING = ("hybrid", "q104")
NO_RELEVANT = "q107"


def main() -> None:
    rng = np.random.default_rng(2023)
    grades = _judgments(rng)
    _write(os.path.join(HERE, "qrels.txt"), _qrels_lines(grades))
    os.makedirs(os.path.join(HERE, "runs"), exist_ok=True)
    for name, skill, decimals in (("bm25", 1.2, 4), ("dense", 2.0, 1), ("hybrid", 2.6, 4), ("random", 0.0, 4)):
        _write(os.path.join(HERE, "runs", name), _run_lines(rng, grades, name, skill, decimals))


def _judgments(rng) -> dict[str, np.ndarray]:
    """Grades of the POOL documents of each query: mostly 0, a few 1-3."""
    grades = {}
    for qid in QUERIES:
        if qid == NO_RELEVANT:
            grades[qid] = np.zeros(POOL, dtype=int)
            continue
        relevant = rng.integers(4, 20)
        values = np.zeros(POOL, dtype=int)
        values[rng.choice(POOL, relevant, replace=False)] = rng.choice([1, 2, 3], relevant, p=[0.5, 0.3, 0.2])
        grades[qid] = values
    return grades


def _qrels_lines(grades) -> list[str]:
    lines = []
    for qid, values in grades.items():
        judged = np.flatnonzero(values > 0).tolist() + list(range(0, POOL, 3))
        for doc in sorted(set(judged)):
            lines.append(f"{qid} 0 {_docid(qid, doc)} {values[doc]}")
    return lines


def _run_lines(rng, grades, name: str, skill: float, decimals: int) -> list[str]:
    """A run scores each document by skill × grade plus noise, and keeps the DEPTH best."""
    lines = []
    for qid, values in grades.items():
        if (name, qid) == MISSING:
            continue
        scores = np.round(skill * values + rng.normal(0.0, 1.5, POOL) + 10.0, decimals)
        best = np.argsort(-scores, kind="stable")[:DEPTH]
        for rank, doc in enumerate(best, start=1):
            lines.append(f"{qid}\tQ0\t{_docid(qid, doc)}\t{rank}\t{scores[doc]:.{decimals}f}\t{name}")
    return lines


def _docid(qid: str, doc: int) -> str:
    return f"DOC-{qid[1:]}-{doc:03d}"


def _write(path: str, lines: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
