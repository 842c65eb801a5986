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

from collections.abc import Iterator, Sequence
from functools import lru_cache

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
    rows = []
    if block.preferences:
        first, second = (np.array(side) for side in zip(*pairs))
        rows.append(_cells(
            [b'{"qid":', np.repeat(qids, num_pairs), b',"runi":', np.tile(runs[first], num_queries),
             b',"runj":', np.tile(runs[second], num_queries), b',"sample":' + sample + b',"type":"preference"'],
            {name: values.T for name, values in block.preferences.items()},
        ))
    if block.metrics:
        rows.append(_cells(
            [b'{"qid":', np.repeat(qids, num_runs), b',"run":', np.tile(runs, num_queries),
             b',"sample":' + sample + b',"type":"metric"'],
            {name: values.T for name, values in block.metrics.items()},
        ))
    if len(rows) == 2:  # pair and metric lines interleaved: per query, each run's pairs, then its metrics
        rows = [_stack_rows(rows)[_query_order(num_queries, num_runs, pairs)]]
    return b"".join(rows[0].ravel().tolist()) if rows else b""


def _summary_lines(summary: Summary, run_ids: list[bytes], pairs: list[tuple[int, int]]) -> bytes:
    runs = np.array(run_ids, dtype=object)
    sample = str(summary.sample).encode()
    rows = []
    if summary.preferences:
        first, second = (np.array(side) for side in zip(*pairs))
        rows.append(_cells([b'{"qid":"all","runi":', runs[first], b',"runj":', runs[second], b',"sample":' + sample],
                           summary.preferences))
    if summary.metrics:
        rows.append(_cells([b'{"qid":"all","run":', runs, b',"sample":' + sample + b',"type":"metric"'],
                           summary.metrics))
    return b"".join(_stack_rows(rows).ravel().tolist()) if rows else b""


def _cells(head: Sequence[bytes | np.ndarray], columns: dict[str, np.ndarray]) -> np.ndarray:
    """The pieces of one JSON line per row, as a (rows, pieces) object array of bytes: the ``head``
    pieces (constant bytes, or one piece per row), ``"name":value`` for every column (values in row
    order after flattening), and ``}`` with the line end."""
    pieces = list(head)
    for name, values in columns.items():
        pieces += [b"," + _json(name) + b":", _json_numbers(values)]
    pieces.append(b"}\n")
    rows = next(len(p) for p in pieces if not isinstance(p, bytes))
    cells = np.empty((rows, len(pieces)), dtype=object)
    for column, piece in enumerate(pieces):
        cells[:, column] = piece
    return cells


def _stack_rows(cells: list[np.ndarray]) -> np.ndarray:
    """Stack the rows of cell arrays, padding the narrower ones with empty pieces."""
    width = max(c.shape[1] for c in cells)
    padded = [np.hstack([c, np.full((len(c), width - c.shape[1]), b"", dtype=object)]) for c in cells]
    return np.vstack(padded)


@lru_cache(maxsize=16)
def _template(num_runs: int, pairs: tuple[tuple[int, int], ...]) -> np.ndarray:
    """One query's lines in output order, as (is a metric line, index among its kind)."""
    template, pair = [], 0
    for run in range(num_runs):
        while pair < len(pairs) and pairs[pair][0] == run:
            template.append((0, pair))
            pair += 1
        template.append((1, run))
    return np.array(template)


def _query_order(num_queries: int, num_runs: int, pairs: list[tuple[int, int]]) -> np.ndarray:
    """Rows of ``pair cells + metric cells`` in output order: per query, each run's pairs and then
    its metric line."""
    num_pairs = len(pairs)
    is_metric, index = _template(num_runs, tuple(pairs)).T
    query = np.arange(num_queries)[:, None]
    order = np.where(is_metric, num_queries * num_pairs + query * num_runs, query * num_pairs) + index
    return order.ravel()


def _json(value: str) -> bytes:
    return orjson.dumps(value)


def _json_numbers(values: np.ndarray) -> np.ndarray:
    """Each number of ``values`` (flattened in row order) as JSON text, via one orjson call."""
    flat = np.ascontiguousarray(values).ravel()
    if flat.dtype.kind not in "iuf":
        flat = flat.astype(np.float64)
    text = orjson.dumps(flat, option=orjson.OPT_SERIALIZE_NUMPY)
    return np.array(text[1:-1].split(b","), dtype=object) if len(flat) else np.empty(0, dtype=object)
