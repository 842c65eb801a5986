"""The pytrec_eval side of ``benchmarks/compare.py``: parse qrels and runs, evaluate six metrics per query.

    python benchmarks/pytrec_eval_runs.py QRELS RUN [RUN ...]

Parsing is plain Python (pytrec_eval takes dicts), the way its users read TREC files; the metrics are
those of ``compare.py``'s ``metrics`` scenario: map, ndcg, recip_rank, P_10, recall_100, Rprec.
"""

from __future__ import annotations

import sys
from collections import defaultdict

import pytrec_eval

MEASURES = {"map", "ndcg", "recip_rank", "P_10", "recall_100", "Rprec"}


def read(path: str, value_column: int, convert) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = defaultdict(dict)
    with open(path) as handle:
        for line in handle:
            fields = line.split()
            if fields:
                table[fields[0]][fields[2]] = convert(fields[value_column])
    return table


def main(qrels_path: str, runs: list[str]) -> int:
    evaluator = pytrec_eval.RelevanceEvaluator(read(qrels_path, 3, int), MEASURES)
    values = 0
    for path in runs:
        values += sum(len(per_query) for per_query in evaluator.evaluate(read(path, 4, float)).values())
    return values


if __name__ == "__main__":
    print(main(sys.argv[1], sys.argv[2:]))
