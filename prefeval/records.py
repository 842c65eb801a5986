"""The JSON lines of ``prefeval eval``, key for key as pref_eval.py writes them (DESIGN.md).

Per query (with ``-q``), queries in qrels order: for each run i in command-line order, its pair lines
(i, j) for j > i, then its metric line::

    {"qid":"303","runi":"A","runj":"B","sample":0,"type":"preference","rpp":0.25,...,"ap":0.031,...}
    {"qid":"303","run":"A","sample":0,"type":"metric","ap":0.42,...}

Summary (unless ``-n``): a line per pair with the mean of every pair value (no ``type``, as in the
reference), then a line per run with the mean of every metric (``"type":"metric"``; new in prefeval,
and skipped by pref_aggregate.py, which ignores ``qid`` "all").

Lines are built column by column: each measure's values are serialised by orjson in one call, and
the pieces of all lines are joined in one call, so writing costs little more than the bytes written.
"""

from __future__ import annotations

import operator
from typing import Iterator, Sequence

import numpy as np
import orjson

from prefeval.evaluation import Block, Evaluation, Summary


def evaluation_lines(evaluation: Evaluation, per_query: bool = True, summary: bool = True, jobs: int = 1) -> Iterator[bytes]:
    """The output of ``evaluation`` as JSON-lines text, in order, a block of queries per chunk;
    blocks are computed and written out in ``jobs`` processes."""
    run_ids = [_json(run) for run in evaluation.run_ids]
    pairs = evaluation.pairs

    def render(block: Block) -> bytes:
        return _per_query_lines(block, run_ids, pairs) if per_query else b""

    for result in evaluation.rendered(render, jobs):
        if isinstance(result, Summary):
            if summary:
                yield _summary_lines(result, run_ids, pairs)
        elif result:
            yield result


def evaluation_records(evaluation: Evaluation, per_query: bool = True, summary: bool = True) -> Iterator[dict]:
    """The same output as dicts, one per line."""
    for chunk in evaluation_lines(evaluation, per_query, summary):
        for line in chunk.splitlines():
            yield orjson.loads(line)


def _per_query_lines(block: Block, run_ids: list[bytes], pairs: list[tuple[int, int]]) -> bytes:
    num_queries, num_runs, num_pairs = len(block.qids), len(run_ids), len(pairs)
    qids = np.array([_json(qid) for qid in block.qids], dtype=object)
    runs = np.array(run_ids, dtype=object)
    sample = str(block.sample).encode()
    pair_lines = metric_lines = []
    if block.preferences:
        first, second = (np.array(side) for side in zip(*pairs))
        pair_lines = _lines(
            [b'{"qid":', np.repeat(qids, num_pairs), b',"runi":', np.tile(runs[first], num_queries),
             b',"runj":', np.tile(runs[second], num_queries), b',"sample":' + sample + b',"type":"preference"'],
            {name: values.T for name, values in block.preferences.items()},
        )
    if block.metrics:
        metric_lines = _lines(
            [b'{"qid":', np.repeat(qids, num_runs), b',"run":', np.tile(runs, num_queries),
             b',"sample":' + sample + b',"type":"metric"'],
            {name: values.T for name, values in block.metrics.items()},
        )
    if not metric_lines or not pair_lines:
        return b"".join(pair_lines or metric_lines)
    return b"".join(_pick(pair_lines + metric_lines, _query_order(num_queries, num_runs, pairs)))


def _summary_lines(summary: Summary, run_ids: list[bytes], pairs: list[tuple[int, int]]) -> bytes:
    runs = np.array(run_ids, dtype=object)
    sample = str(summary.sample).encode()
    lines = []
    if summary.preferences:
        first, second = (np.array(side) for side in zip(*pairs))
        lines += _lines([b'{"qid":"all","runi":', runs[first], b',"runj":', runs[second], b',"sample":' + sample],
                        summary.preferences)
    if summary.metrics:
        lines += _lines([b'{"qid":"all","run":', runs, b',"sample":' + sample + b',"type":"metric"'], summary.metrics)
    return b"".join(lines)


def _lines(head: Sequence[bytes | np.ndarray], columns: dict[str, np.ndarray]) -> list[bytes]:
    """One JSON line per row: the ``head`` pieces (constant bytes, or one piece per row), then
    ``"name":value`` for every column (values in row order after flattening), then ``}``."""
    pieces = list(head)
    for name, values in columns.items():
        pieces += [b"," + _json(name) + b":", _json_numbers(values)]
    pieces.append(b"}\n")
    rows = next(len(p) for p in pieces if not isinstance(p, bytes))
    cells = np.empty((rows, len(pieces)), dtype=object)
    for column, piece in enumerate(pieces):
        cells[:, column] = piece
    return b"".join(cells.ravel().tolist()).splitlines(keepends=True)


def _query_order(num_queries: int, num_runs: int, pairs: list[tuple[int, int]]) -> list[int]:
    """Positions in ``pair_lines + metric_lines`` in output order: per query, each run's pairs and
    then its metric line."""
    num_pairs = len(pairs)
    template = []
    pair = 0
    for run in range(num_runs):
        while pair < num_pairs and pairs[pair][0] == run:
            template.append(pair)
            pair += 1
        template.append(num_queries * num_pairs + run)
    template = np.array(template)
    is_metric = template >= num_queries * num_pairs
    query = np.arange(num_queries)[:, None]
    order = template[None, :] + np.where(is_metric, query * num_runs, query * num_pairs)
    return order.ravel().tolist()


def _pick(items: list[bytes], order: list[int]) -> list[bytes]:
    picked = operator.itemgetter(*order)(items)
    return list(picked) if len(order) > 1 else [picked]


def _json(value: str) -> bytes:
    return orjson.dumps(value)


def _json_numbers(values: np.ndarray) -> np.ndarray:
    """Each number of ``values`` (flattened in row order) as JSON text, via one orjson call."""
    flat = np.ascontiguousarray(values).ravel()
    if flat.dtype.kind not in "iuf":
        flat = flat.astype(np.float64)
    text = orjson.dumps(flat, option=orjson.OPT_SERIALIZE_NUMPY)
    return np.array(text[1:-1].split(b","), dtype=object) if len(flat) else np.empty(0, dtype=object)
