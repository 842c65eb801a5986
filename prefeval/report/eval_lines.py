"""The lines of ``prefeval eval``, key for key as pref_eval.py writes them (DESIGN.md).

Per query (with ``-q``), queries in qrels order: for each run i in command-line order, its pair lines
(i, j) for j > i, then its metric line (:func:`line_order`)::

    {"qid":"303","runi":"A","runj":"B","sample":0,"type":"preference","rpp":0.25,...,"ap":0.031,...}
    {"qid":"303","run":"A","sample":0,"type":"metric","ap":0.42,...}

Summary (unless ``-n``): a line per pair with the mean of every pair value (no ``type``, as in the
reference), then a line per run with the mean of every metric (``"type":"metric"``; new in prefeval,
and skipped by pref_aggregate.py, which ignores ``qid`` "all"). With other summary statistics
(``eval --summary``, :mod:`prefeval.measures.summaries`), a second line per run follows, with every
statistic of every metric under its name (``"ap:median"``), statistic by statistic; the mean line is
written only when the mean is among the statistics::

    {"qid":"all","run":"A","sample":0,"type":"metric","ap:median":0.21,"ndcg:median":0.48,"ap:q10":0.01,...}

Under ``--ties range`` (:mod:`prefeval.measures.ties`) every metric line also has the metric's
minimum and maximum over the orders of tied documents (``ap_ties_min``, ``ap_ties_max``; on the
summary line, those of the mean), and every summary pair line has, per measure, the minimum and
maximum of the pair's mean and whether they differ in sign (``rpp_ties_flip``: tie orders could
reverse the pair). Under ``--ties expected`` every value is an expectation, and a summary pair line
has the standard error of each lexicographic preference whose mean holds Monte Carlo estimates
(``lexiprecision_se``). Per-query pair lines never have more keys, so ``aggregate`` reads them as
it reads any (a ``..._ties_min`` key of the metric lines is, for it, one more metric: the worst case).

The keys are those of :mod:`prefeval.io.evallines`, which reads these lines back. Two renderings of
the same computed values share the order and the keys: :func:`evaluation_lines`, the JSON text,
built column by column (each measure's values are serialised by orjson in one call, and the pieces of
all lines joined in one call, so writing costs little more than the bytes written); and
:func:`evaluation_records`, the same lines as dicts, from which the other text formats are made.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache

import numpy as np

from prefeval.engine.evaluation import Block, Evaluation, Summary
from prefeval.io.ids import id_text, id_texts
from prefeval.io.jsonl import json_bytes
from prefeval.io.keys import GROUP, METRIC, PREFERENCE, QID, RUN, RUNI, RUNJ, SAMPLE, SUMMARY_QID, TYPE, WORST_OFF
from prefeval.measures.summaries import MEAN
from prefeval.report.json_columns import Piece, Texts, joined_lines


def evaluation_lines(evaluation: Evaluation, per_query: bool = True, summary: bool = True) -> Iterator[bytes]:
    """The output of ``evaluation`` as JSON-lines text, in order, a block of queries per chunk
    (blocks are computed and written out in the evaluation's ``jobs`` processes)."""
    run_ids = [_json(id_text(run)) for run in evaluation.run_ids]
    pairs = evaluation.pairs

    def render(block: Block) -> list[bytes]:
        return _per_query_lines(block, run_ids, pairs) if per_query else []

    write_means = MEAN in evaluation.summary_statistics
    for result in evaluation.rendered(render):
        if isinstance(result, Summary):
            if summary:
                yield _summary_lines(result, run_ids, pairs, write_means)
                if result.groups:
                    yield b"".join(json_bytes(record) + b"\n" for record in
                                   _group_records(result, evaluation.run_ids, pairs, write_means))
        else:
            yield from result


def evaluation_records(evaluation: Evaluation, per_query: bool = True, summary: bool = True) -> Iterator[dict]:
    """The same lines as dicts, one per line, in the same order, made from the computed values."""
    run_ids, pairs = evaluation.run_ids, evaluation.pairs
    write_means = MEAN in evaluation.summary_statistics
    for result in evaluation.results():
        if isinstance(result, Summary):
            if summary:
                yield from _summary_records(result, run_ids, pairs, write_means)
                yield from _group_records(result, run_ids, pairs, write_means)
        elif per_query:
            yield from _per_query_records(result, run_ids, pairs)


def line_order(num_runs: int, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """One query's lines in output order, as rows (is a metric line, index among its kind): for each
    run, its pairs with the later runs, then its metric line."""
    return _line_order(num_runs, tuple(pairs))


@lru_cache(maxsize=16)
def _line_order(num_runs: int, pairs: tuple[tuple[int, int], ...]) -> np.ndarray:
    order, pair = [], 0
    for run in range(num_runs):
        while pair < len(pairs) and pairs[pair][0] == run:
            order.append((0, pair))
            pair += 1
        order.append((1, run))
    return np.array(order, dtype=np.int64).reshape(-1, 2)


def _pair_runs(pairs: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The first and the second run of every pair."""
    first, second = np.array(pairs, dtype=np.int64).reshape(-1, 2).T
    return first, second


# --- as JSON text ------------------------------------------------------------------------------------
#
# A block's lines are assembled by :func:`~prefeval.report.json_columns.joined_lines` from constant
# pieces (``,"ap":``) and columns of texts (the query ids, the run ids, each measure's numbers
# serialised by one orjson call), each piece of every line written once at its place.

RENDER_BYTES = 1 << 21
"""A block's lines are built a slice of queries at a time, of about this many bytes of lines (2 MiB):
the text of a whole block (hundreds of megabytes for a block of a hundred thousand users' lines with
the item measures) would be memory touched for the first time, a page fault per 4 KiB, and a slice
that fits in a core's cache (2 MiB of L2 here) is assembled faster: ``python benchmarks/render.py``
gave 34, 32, 35, 38 and 47 ns per number for the lines' assembly in slices of 1, 2, 4, 8 and 16 MiB."""


def _per_query_lines(block: Block, run_ids: list[bytes], pairs: list[tuple[int, int]]) -> list[bytearray]:
    """A block's lines, in pieces of about :data:`RENDER_BYTES` (a slice of queries each): a worker
    hands them over as they are (:mod:`prefeval.runtime.transfer`), not joined into one text of
    hundreds of megabytes."""
    num_queries, num_runs, num_pairs = len(block.qids), len(run_ids), len(pairs)
    qids = Texts.of_strings(id_texts(block.qids))
    runs = Texts.of_bytes(run_ids)
    sample = _json(block.sample)
    values = len(block.metrics) + len(block.metric_extras)
    line_bytes = num_pairs * (64 + 24 * len(block.preferences)) + num_runs * (48 + 24 * values)  # a query's
    step = max(RENDER_BYTES // line_bytes, 1)
    pieces = (_query_slice_lines(block, qids, runs, sample, pairs, slice(start, start + step))
              for start in range(0, num_queries, step))
    return [piece for piece in pieces if piece]


def _query_slice_lines(block: Block, qids: Texts, runs: Texts, sample: bytes,
                       pairs: list[tuple[int, int]], queries: slice) -> bytearray:
    """The lines of the queries ``queries`` of ``block`` (``qids``: all the block's, as JSON text),
    each kind's lines at their places among a query's lines (:func:`line_order`)."""
    qids = qids.take(queries)
    num_queries, num_runs, num_pairs = qids.size, runs.size, len(pairs)
    is_metric = line_order(num_runs, pairs)[:, 0].astype(bool)  # a query's lines, in output order
    per_query = len(is_metric)
    kinds = []
    if block.preferences:
        firsts, seconds = (runs.take(side) for side in _pair_runs(pairs))
        kinds.append(_kind(
            [_open(QID), qids.repeat(num_pairs), _key(RUNI), firsts.tile(num_queries), _key(RUNJ),
             seconds.tile(num_queries), _key(SAMPLE) + sample + _key(TYPE) + _json(PREFERENCE)],
            {name: values[:, queries].T for name, values in block.preferences.items()},
            np.flatnonzero(~is_metric), per_query, num_queries,
            _written(block.pair_reported, num_pairs, queries, num_queries)))
    if block.metrics:
        kinds.append(_kind(
            [_open(QID), qids.repeat(num_runs), _key(RUN), runs.tile(num_queries),
             _key(SAMPLE) + sample + _key(TYPE) + _json(METRIC)],
            {name: values[:, queries].T for name, values in (block.metrics | block.metric_extras).items()},
            np.flatnonzero(is_metric), per_query, num_queries,
            _written(block.metric_reported, num_runs, queries, num_queries)))
    return joined_lines(kinds, num_queries * per_query)


def _kind(head: list[Piece], columns: dict[str, np.ndarray], places: np.ndarray, per_query: int,
          num_queries: int, written: np.ndarray | None) -> tuple[np.ndarray, list[Piece]]:
    """One kind of line of a slice of queries, as :func:`joined_lines` takes it: its lines' numbers
    (at ``places`` among each query's ``per_query`` lines) and pieces, only the lines ``written``."""
    lines = (np.arange(num_queries)[:, None] * per_query + places).ravel()
    pieces = _line_pieces(head, columns)
    if written is None:
        return lines, pieces
    return lines[written], [piece.take(written) if isinstance(piece, Texts) else piece for piece in pieces]


def _written(reported: np.ndarray | None, count: int, queries: slice, num_queries: int) -> np.ndarray | None:
    """Which of the lines of one kind of a block's ``queries`` (``num_queries`` of them) are written,
    in their row order (query by query): those of the runs (pairs) reported on the query
    (:attr:`~prefeval.engine.results.Block.metric_reported`); None: all of them."""
    if reported is None:
        return None
    written = reported[:, queries].T.ravel()
    return None if written.all() else written


def _summary_lines(summary: Summary, run_ids: list[bytes], pairs: list[tuple[int, int]],
                   write_means: bool = True) -> bytes:
    runs = Texts.of_bytes(run_ids)
    sample = _json(summary.sample)
    qid = _open(QID) + _json(SUMMARY_QID)
    kinds: list[tuple[list[Piece], dict[str, np.ndarray]]] = []
    if summary.preferences:
        firsts, seconds = (runs.take(side) for side in _pair_runs(pairs))
        kinds.append(([qid + _key(RUNI), firsts, _key(RUNJ), seconds, _key(SAMPLE) + sample],
                      summary.preferences | summary.pair_extras))
    if summary.metrics and write_means:
        kinds.append(([qid + _key(RUN), runs, _key(SAMPLE) + sample + _key(TYPE) + _json(METRIC)],
                      summary.metrics | summary.metric_extras))
    if summary.statistics:
        kinds.append(([qid + _key(RUN), runs, _key(SAMPLE) + sample + _key(TYPE) + _json(METRIC)],
                      summary.statistics))
    stacked, first = [], 0
    for head, columns in kinds:
        count = next(piece.size for piece in head if isinstance(piece, Texts))
        stacked.append((np.arange(first, first + count), _line_pieces(head, columns)))
        first += count
    return bytes(joined_lines(stacked, first))


def _line_pieces(head: Sequence[Piece], columns: dict[str, np.ndarray]) -> list[Piece]:
    """The pieces of lines: those of ``head``, then ``"name":value`` for every column (values in row
    order after flattening, :meth:`Texts.of_numbers`), then ``}`` and the line end."""
    pieces = list(head)
    for name, values in columns.items():
        pieces += [_key(name), Texts.of_numbers(values)]
    pieces.append(b"}\n")
    return pieces


def _json(value) -> bytes:
    return json_bytes(value)


def _open(key: str) -> bytes:
    return b"{" + _json(key) + b":"


def _key(key: str) -> bytes:
    return b"," + _json(key) + b":"


# --- as records -----------------------------------------------------------------------------------------

def _per_query_records(block: Block, run_ids: list[str], pairs: list[tuple[int, int]]) -> Iterator[dict]:
    firsts, seconds = (np.array(run_ids, dtype=object)[side] for side in _pair_runs(pairs))
    preferences = {name: values.T.tolist() for name, values in block.preferences.items()}
    metrics = {name: values.T.tolist() for name, values in (block.metrics | block.metric_extras).items()}
    order = line_order(len(run_ids), pairs).tolist()
    metric_reported, pair_reported = block.metric_reported, block.pair_reported
    for q, qid in enumerate(block.qids):
        for is_metric, index in order:
            reported = metric_reported if is_metric else pair_reported
            if reported is not None and not reported[index, q]:
                continue  # a query the run (or one run of the pair) lacks, under the skip convention
            if is_metric and metrics:
                record = {QID: qid, RUN: run_ids[index], SAMPLE: block.sample, TYPE: METRIC}
                yield record | {name: values[q][index] for name, values in metrics.items()}
            elif not is_metric and preferences:
                record = {QID: qid, RUNI: firsts[index], RUNJ: seconds[index], SAMPLE: block.sample, TYPE: PREFERENCE}
                yield record | {name: values[q][index] for name, values in preferences.items()}


def _summary_records(summary: Summary, run_ids: list[str], pairs: list[tuple[int, int]],
                     write_means: bool = True) -> Iterator[dict]:
    firsts, seconds = (np.array(run_ids, dtype=object)[side] for side in _pair_runs(pairs))
    if summary.preferences:
        means = {name: values.tolist() for name, values in (summary.preferences | summary.pair_extras).items()}
        for p in range(len(pairs)):
            record = {QID: SUMMARY_QID, RUNI: firsts[p], RUNJ: seconds[p], SAMPLE: summary.sample}
            yield record | {name: values[p] for name, values in means.items()}
    for columns in (summary.metrics | summary.metric_extras if write_means else {}, summary.statistics):
        if columns:
            values_of = {name: values.tolist() for name, values in columns.items()}
            for r, run in enumerate(run_ids):
                record = {QID: SUMMARY_QID, RUN: run, SAMPLE: summary.sample, TYPE: METRIC}
                yield record | {name: values[r] for name, values in values_of.items()}


def _group_records(summary: Summary, run_ids: list[str], pairs: list[tuple[int, int]],
                   write_means: bool = True) -> Iterator[dict]:
    """``eval --user-groups`` (:mod:`prefeval.analyses.groups`): each group's summary lines, groups in
    name order, each with its ``group`` after the ``qid``; then, run by run, a worst-off line per
    metric (``"type":"worst-off"``: the group of least value, and that value under the metric's name)."""
    from prefeval.analyses.groups import worst_off

    for group, of_group in summary.groups.items():
        for record in _summary_records(of_group, run_ids, pairs, write_means):
            yield {QID: record.pop(QID), GROUP: group} | record
    worst = worst_off(summary.groups)
    for r, run in enumerate(run_ids):
        for metric, (groups, values) in worst.items():
            yield {QID: SUMMARY_QID, RUN: run, SAMPLE: summary.sample, TYPE: WORST_OFF, GROUP: groups[r],
                   metric: values[r].item()}
