"""The JSON-line records of ``prefeval eval``, key for key as pref_eval.py writes them (DESIGN.md).

Per query (with ``-q``), queries in qrels order: for each run i in command-line order, its pair lines
(i, j) for j > i, then its metric line::

    {"qid":"303","runi":"A","runj":"B","sample":0,"type":"preference","rpp":0.25,...,"ap":0.031,...}
    {"qid":"303","run":"A","sample":0,"type":"metric","ap":0.42,...}

Summary (unless ``-n``): a line per pair with the mean of every pair value (no ``type``, as in the
reference), then a line per run with the mean of every metric (``"type":"metric"``; new in prefeval,
and skipped by pref_aggregate.py, which ignores ``qid`` "all").
"""

from __future__ import annotations

from typing import Iterator

from prefeval.evaluation import Block, Evaluation, Summary


def evaluation_records(evaluation: Evaluation, per_query: bool = True, summary: bool = True) -> Iterator[dict]:
    """The records of ``evaluation``, in output order."""
    run_ids = evaluation.run_ids
    pairs = evaluation.pairs
    for result in evaluation.results():
        if isinstance(result, Block):
            if per_query:
                yield from _per_query_records(result, run_ids, pairs)
        elif summary:
            yield from _summary_records(result, run_ids, pairs)


def _per_query_records(block: Block, run_ids: list[str], pairs: list[tuple[int, int]]) -> Iterator[dict]:
    metrics = {name: values.tolist() for name, values in block.metrics.items()}
    preferences = {name: values.tolist() for name, values in block.preferences.items()}
    sample = block.sample
    for column, qid in enumerate(block.qids):
        pair = 0
        for i, run in enumerate(run_ids):
            while pair < len(pairs) and pairs[pair][0] == i:
                record = {"qid": qid, "runi": run, "runj": run_ids[pairs[pair][1]], "sample": sample, "type": "preference"}
                for name, values in preferences.items():
                    record[name] = values[pair][column]
                yield record
                pair += 1
            if metrics:
                record = {"qid": qid, "run": run, "sample": sample, "type": "metric"}
                for name, values in metrics.items():
                    record[name] = values[i][column]
                yield record


def _summary_records(summary: Summary, run_ids: list[str], pairs: list[tuple[int, int]]) -> Iterator[dict]:
    preferences = {name: values.tolist() for name, values in summary.preferences.items()}
    metrics = {name: values.tolist() for name, values in summary.metrics.items()}
    if preferences:
        for pair, (i, j) in enumerate(pairs):
            record = {"qid": "all", "runi": run_ids[i], "runj": run_ids[j], "sample": summary.sample}
            for name, values in preferences.items():
                record[name] = values[pair]
            yield record
    if metrics:
        for i, run in enumerate(run_ids):
            record = {"qid": "all", "run": run, "sample": summary.sample, "type": "metric"}
            for name, values in metrics.items():
                record[name] = values[i]
            yield record
