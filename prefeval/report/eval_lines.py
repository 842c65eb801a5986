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
import orjson

from prefeval.engine.evaluation import Block, Evaluation, Summary
from prefeval.io.codes import distinct
from prefeval.io.ids import id_text, id_texts
from prefeval.io.jsonl import json_bytes
from prefeval.io.keys import GROUP, METRIC, PREFERENCE, QID, RUN, RUNI, RUNJ, SAMPLE, SUMMARY_QID, TYPE, WORST_OFF
from prefeval.measures.summaries import MEAN


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


def _pair_labels(runs: np.ndarray, pairs: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The labels (``runs``, one per run) of the first and of the second run of every pair."""
    first, second = (np.array(side, dtype=np.int64) for side in zip(*pairs)) if pairs else ([], [])
    return runs[first], runs[second]


# --- as JSON text ------------------------------------------------------------------------------------
#
# A block's lines are built as a byte matrix, a row per line: each piece of a line (a constant such
# as ``,"ap":``, or a column of numbers or ids as JSON text) fills columns of its own, the text of a
# column's values padded with NUL bytes to its longest; the NULs are then deleted from the whole
# matrix at once (``bytes.translate``). JSON text never holds a NUL byte (orjson writes U+0000 as
# ``\u0000``), so deleting them leaves exactly the lines. No Python object is made per value.

RENDER_BYTES = 1 << 23
"""A block's lines are built a slice of queries at a time, of about this many bytes of line matrix
(8 MiB): the matrices of a whole block (hundreds of megabytes for a block of a hundred thousand
users' lines with the item measures) would be memory touched for the first time, a page fault per
4 KiB, where each slice reuses the memory of the one before."""


def _per_query_lines(block: Block, run_ids: list[bytes], pairs: list[tuple[int, int]]) -> list[bytes]:
    """A block's lines, in pieces of about :data:`RENDER_BYTES` (a slice of queries each): a worker
    hands them over as they are (:mod:`prefeval.runtime.transfer`), not joined into one text of
    hundreds of megabytes."""
    num_queries, num_runs, num_pairs = len(block.qids), len(run_ids), len(pairs)
    qids = _json_strings(id_texts(block.qids))
    runs = _json_texts(run_ids)
    sample = _json(block.sample)
    columns = len(block.preferences) + len(block.metrics) + len(block.metric_extras)
    line_bytes = (num_pairs + num_runs) * (96 + 24 * columns)  # about a query's lines, padded
    step = max(RENDER_BYTES // line_bytes, 1)
    pieces = (_query_slice_lines(block, qids, runs, sample, pairs, slice(start, start + step))
              for start in range(0, num_queries, step))
    return [piece for piece in pieces if piece]


def _query_slice_lines(block: Block, qids: np.ndarray, runs: np.ndarray, sample: bytes,
                       pairs: list[tuple[int, int]], queries: slice) -> bytes:
    """The lines of the queries ``queries`` of ``block`` (``qids``: all the block's, as JSON text),
    each kind's pieces written straight into its lines' places among a query's lines
    (:func:`line_order`)."""
    qids = qids[queries]
    num_queries, num_runs, num_pairs = len(qids), len(runs), len(pairs)
    is_metric = line_order(num_runs, pairs)[:, 0].astype(bool)  # a query's lines, in output order
    kinds = []  # per kind of line: its pieces, its places among a query's lines, which are written
    if block.preferences:
        firsts, seconds = _pair_labels(runs, pairs)
        kinds.append((_line_pieces(
            [_open(QID), np.repeat(qids, num_pairs), _key(RUNI), np.tile(firsts, num_queries),
             _key(RUNJ), np.tile(seconds, num_queries), _key(SAMPLE) + sample + _key(TYPE) + _json(PREFERENCE)],
            {name: values[:, queries].T for name, values in block.preferences.items()},
        ), np.flatnonzero(~is_metric), _written(block.pair_reported, num_pairs, queries, num_queries)))
    if block.metrics:
        kinds.append((_line_pieces(
            [_open(QID), np.repeat(qids, num_runs), _key(RUN), np.tile(runs, num_queries),
             _key(SAMPLE) + sample + _key(TYPE) + _json(METRIC)],
            {name: values[:, queries].T for name, values in (block.metrics | block.metric_extras).items()},
        ), np.flatnonzero(is_metric), _written(block.metric_reported, num_runs, queries, num_queries)))
    if not kinds:
        return b""
    per_query = sum(len(places) for _, places, _ in kinds)
    lines = np.zeros((num_queries, per_query, max(_width(pieces) for pieces, _, _ in kinds)), dtype=np.uint8)
    shown = np.ones((num_queries, per_query), dtype=bool)
    for pieces, places, written in kinds:
        places = places if len(kinds) > 1 else slice(None)
        _fill(lines, places, pieces)
        shown[:, places] = written.reshape(num_queries, -1)
    lines = lines.reshape(-1, lines.shape[2])
    return _text(lines if shown.all() else lines[shown.ravel()])


def _written(reported: np.ndarray | None, count: int, queries: slice, num_queries: int) -> np.ndarray:
    """Which of the lines of one kind of a block's ``queries`` (``num_queries`` of them) are written,
    in their row order (query by query): those of the runs (pairs) reported on the query
    (:attr:`~prefeval.engine.results.Block.metric_reported`)."""
    if reported is None:
        return np.ones(count * num_queries, dtype=bool)
    return reported[:, queries].T.ravel()


def _summary_lines(summary: Summary, run_ids: list[bytes], pairs: list[tuple[int, int]],
                   write_means: bool = True) -> bytes:
    runs = _json_texts(run_ids)
    sample = _json(summary.sample)
    qid = _open(QID) + _json(SUMMARY_QID)
    rows = []
    if summary.preferences:
        firsts, seconds = _pair_labels(runs, pairs)
        rows.append(_line_matrix([qid + _key(RUNI), firsts, _key(RUNJ), seconds, _key(SAMPLE) + sample],
                                 summary.preferences | summary.pair_extras))
    if summary.metrics and write_means:
        rows.append(_line_matrix([qid + _key(RUN), runs, _key(SAMPLE) + sample + _key(TYPE) + _json(METRIC)],
                                 summary.metrics | summary.metric_extras))
    if summary.statistics:
        rows.append(_line_matrix([qid + _key(RUN), runs, _key(SAMPLE) + sample + _key(TYPE) + _json(METRIC)],
                                 summary.statistics))
    return _text(_stack_rows(rows)) if rows else b""


def _line_matrix(head: Sequence[bytes | np.ndarray], columns: dict[str, np.ndarray]) -> np.ndarray:
    """The lines of :func:`_line_pieces` as a (rows, bytes) uint8 matrix padded with NULs (module comment)."""
    pieces = _line_pieces(head, columns)
    rows = next(len(p) for p in pieces if not isinstance(p, bytes))
    matrix = np.zeros((rows, _width(pieces)), dtype=np.uint8)
    _fill(matrix[:, None, :], slice(None), pieces)
    return matrix


def _line_pieces(head: Sequence[bytes | np.ndarray], columns: dict[str, np.ndarray]) -> list[bytes | np.ndarray]:
    """The pieces of lines: those of ``head`` (constant bytes, or a JSON text per row:
    :func:`_json_texts`), then ``"name":value`` for every column (values in row order after
    flattening), then ``}`` and the line end."""
    pieces = list(head)
    for name, values in columns.items():
        pieces += [_key(name), _json_numbers(values)]
    pieces.append(b"}\n")
    return pieces


def _width(pieces: Sequence[bytes | np.ndarray]) -> int:
    """The bytes of a line of ``pieces``, padding included."""
    return sum(len(piece) if isinstance(piece, bytes) else piece.dtype.itemsize for piece in pieces)


def _fill(lines: np.ndarray, places, pieces: Sequence[bytes | np.ndarray]) -> None:
    """Write ``pieces`` side by side into the lines ``lines[:, places]`` ((queries, lines of a query,
    bytes) uint8): a piece of texts holds them query by query, then place by place."""
    if not isinstance(places, slice) and len(places) and (np.diff(places) == 1).all():
        places = slice(int(places[0]), int(places[-1]) + 1)  # a range: a view, no index array
    count = lines[:1, places].shape[1]
    column = 0
    for piece in pieces:
        if isinstance(piece, bytes):
            width = len(piece)
            lines[:, places, column:column + width] = np.frombuffer(piece, dtype=np.uint8)
        else:
            width = piece.dtype.itemsize
            lines[:, places, column:column + width] = piece.view(np.uint8).reshape(-1, count, width)
        column += width


def _stack_rows(matrices: list[np.ndarray]) -> np.ndarray:
    """Stack the rows of line matrices, padding the narrower ones with NULs."""
    width = max(m.shape[1] for m in matrices)
    return np.vstack([np.pad(m, ((0, 0), (0, width - m.shape[1]))) for m in matrices])


def _text(matrix: np.ndarray) -> bytes:
    """The lines of a line matrix, NULs deleted."""
    return np.ascontiguousarray(matrix).tobytes().translate(None, b"\0")


def _json(value) -> bytes:
    return json_bytes(value)


def _open(key: str) -> bytes:
    return b"{" + _json(key) + b":"


def _key(key: str) -> bytes:
    return b"," + _json(key) + b":"


def _json_texts(texts: Sequence[bytes]) -> np.ndarray:
    """JSON texts as a fixed-width bytes array (padded with NULs)."""
    return np.array(texts, dtype=np.bytes_) if len(texts) else np.empty(0, dtype="S1")


REPEATS_SAMPLE = 1024
"""How many values :func:`_json_numbers` looks at to guess whether a column repeats its values."""
REPEATS_SHARE = 0.75
"""A column whose first :data:`REPEATS_SAMPLE` values hold at most this share of distinct values has
each distinct value written once (:func:`_json_numbers`): finding them costs a sort, about a quarter
of writing every value, and the per-user columns of the item measures repeat most of theirs (in a
slice of 8,000 lines of 2 runs x 200,000 users, ARP holds 6% distinct values, ILD 33%)."""


def _json_strings(texts: list[str]) -> np.ndarray:
    """Each text as a JSON string, in a fixed-width bytes array: one orjson call for all of them, cut
    at the ``","`` between two strings (inside a JSON string a quote is always escaped, so the three
    bytes occur nowhere else); a text that is not UTF-8 is written as :func:`json_bytes` writes it."""
    try:
        joined = orjson.dumps(texts)
    except TypeError:
        return _json_texts([_json(text) for text in texts])
    if not texts:
        return _json_texts([])
    inner = _json_texts(joined[2:-2].split(b'","'))
    return np.char.add(np.char.add(b'"', inner), b'"')


def _json_numbers(values: np.ndarray) -> np.ndarray:
    """Each number of ``values`` (flattened in row order) as JSON text, via one orjson call
    (booleans as ``true`` and ``false``), in a fixed-width bytes array. A column that repeats its
    values (P@10 over a million users takes eleven; :data:`REPEATS_SHARE`) has each distinct value
    written once: values are told apart by their bits, so that -0.0 stays ``-0.0``."""
    flat = np.ascontiguousarray(values).ravel()
    if flat.dtype.kind not in "iufb":
        flat = flat.astype(np.float64)
    if len(flat) > REPEATS_SAMPLE and flat.dtype == np.float64:
        if len(distinct(flat[:REPEATS_SAMPLE].view(np.uint64))) <= REPEATS_SHARE * REPEATS_SAMPLE:
            bits, inverse = np.unique(flat.view(np.uint64), return_inverse=True)
            return _json_values(bits.view(np.float64))[inverse]
    return _json_values(flat)


def _json_values(flat: np.ndarray) -> np.ndarray:
    """Each value of the flat array ``flat`` as JSON text (:func:`_json_numbers`), one by one."""
    text = orjson.dumps(flat, option=orjson.OPT_SERIALIZE_NUMPY)
    return _json_texts(text[1:-1].split(b",") if len(flat) else [])


# --- as records -----------------------------------------------------------------------------------------

def _per_query_records(block: Block, run_ids: list[str], pairs: list[tuple[int, int]]) -> Iterator[dict]:
    firsts, seconds = _pair_labels(np.array(run_ids, dtype=object), pairs)
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
    firsts, seconds = _pair_labels(np.array(run_ids, dtype=object), pairs)
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
