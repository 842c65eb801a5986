"""Columnar inputs cut into partitions (:mod:`prefeval.engine.partitioned`): a Parquet file, or a
directory of them, is cut at the rows where the partitions' queries start (found from the query ids of
a few row groups), each partition read from its own row groups, and the bytes are memory's.

The collections are those of ``test_partitioned`` (random runs with foreign and dropped queries, NaN
scores, tags), written as Parquet with small row groups so that queries straddle row groups and
files, and evaluated under the options that change what a partition computes.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_columnar import qrels_table, run_table, write_parquet, write_partitioned
from test_partitioned import (
    OPTIONS,
    _collection,
    _with_block,
    evaluate,
    in_process,  # noqa: F401  (the fixture: --engine dask in this process)
)

from prefeval.engine import partitioned
from prefeval.engine.chunks import PartitionFailed
from prefeval.engine.partitioned import _plan, _RowProber
from prefeval.engine.streaming import index_qrels
from prefeval.errors import InputError
from prefeval.io import columnar
from prefeval.io.columnar import row_groups, table_blocks
from prefeval.io.trec import QRELS_ITER_FORMAT, RUN_FORMAT

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _as_parquet(tmp_path, qrels: str, runs: list[str], form: str, group: int) -> tuple[str, list[str]]:
    """The collection as Parquet: ``file`` (row groups of ``group`` rows) or ``directory`` (3 files of
    them); the qrels stay text for every other run, to mix the two."""
    made = []
    (tmp_path / form).mkdir()
    for number, run in enumerate(runs):
        table = run_table(run)
        path = tmp_path / form / f"run{number}"  # the run ids of the text files
        made.append(write_parquet(table, path, group) if form == "file" else write_partitioned(table, path, 3, group))
    qrels_path = write_parquet(qrels_table(qrels), tmp_path / form / "qrels", group)
    return qrels_path, made


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("form", ["file", "directory"])
def test_columnar_partitions_write_the_bytes_and_notes_of_memory(tmp_path, in_process, monkeypatch, options,  # noqa: F811
                                                                  form):
    failures = []

    class Recorded(PartitionFailed):  # a partition that fails falls back to the streamed reader: none may
        def __init__(self, *args):
            failures.append(args)
            super().__init__(*args)

    monkeypatch.setattr(partitioned, "PartitionFailed", Recorded)
    for seed in range(2):
        folder = tmp_path / f"{seed}"
        folder.mkdir()
        text_qrels, text_runs = _collection(folder, seed)
        qrels, runs = _as_parquet(folder, text_qrels, text_runs, form, group=5 + seed)
        memory = evaluate("memory", text_qrels, text_runs, *options)
        assert memory.exit_code == 0, memory.stderr
        for mixed_qrels in (qrels, text_qrels):
            cut = evaluate("dask", mixed_qrels, runs, *options)
            assert cut.exit_code == 0, cut.stderr
            assert cut.stdout_bytes == memory.stdout_bytes
            assert cut.stderr.replace(f"{form}/", "") == memory.stderr  # the same notes, on the same rows
    assert min(in_process) >= 5 and not failures


def test_the_plan_cuts_columnar_inputs_at_the_rows_where_queries_start(tmp_path):
    """Each span of a Parquet run is a range of rows; the rows of a query the qrels lack or dropped go
    with the next kept query, as lines do; the spans tile the rows, and each holds its queries' rows."""
    lines = ["q1 0 a 1", "q1 0 b 0", "q2 0 c 0", "q3 0 d 2", "q4 0 e 1", "q5 0 f 0", "q6 0 g 1", "q7 0 h 1"]
    qrels = tmp_path / "qrels"
    qrels.write_text("\n".join(lines) + "\n")  # q2, q5 dropped: kept q1 q3 q4 q6 q7 = 0..4
    qids = ["q1", "x", "q3", "q4", "q5", "y", "q6", "q7"]
    table = pa.table({"qid": qids, "docno": list("aadezagh"), "score": [1.0] * 8})
    for group in (1, 2, 3, 8):
        run = write_parquet(table, tmp_path / f"run{group}.parquet", group)
        index = index_qrels(str(qrels))
        partitions = _with_block(1, lambda index=index, run=run: _plan(index, [str(qrels), run]))
        spans = [p.runs[0] for p in partitions]
        assert spans[0][0] == 0 and spans[-1][1] == 8
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
        kept = {"q1": 0, "q3": 1, "q4": 2, "q6": 3, "q7": 4}
        going_with = [next(kept[q] for q in qids[row:] if q in kept) for row in range(len(qids))]
        assert [going_with[start:stop] for start, stop in spans] == \
            [[n for n in going_with if p.first <= n < p.stop] for p in partitions]
        if group == 1:  # a row group per row: a partition per kept query
            assert [qids[start:stop] for start, stop in spans] == [["q1"], ["x", "q3"], ["q4"], ["q5", "y", "q6"],
                                                                    ["q7"]]
        read = [list(block.qids.texts(range(len(block.qids))))
                for start, stop in spans for block in table_blocks(run, RUN_FORMAT, rows=(start, stop))]
        assert [qid for block in read for qid in block] == qids


def test_the_row_prober_reads_few_row_groups(tmp_path, monkeypatch):
    """Planning reads the first rows of row groups (here 16 of 50), and whole the query column of a
    few row groups only (the ones a boundary is in), not every row group of the input."""
    monkeypatch.setattr(partitioned, "HEAD_ROWS", 16)
    monkeypatch.setattr(partitioned, "FIRST_ROWS", 4)
    queries = 400
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"u{n:04d} 0 i{n} 1\n" for n in range(queries)))
    qids = [f"u{n:04d}" for n in range(queries) for _ in range(10)]
    run = write_parquet(pa.table({"qid": qids, "docno": [f"i{n}" for n in range(len(qids))],
                                  "score": np.arange(len(qids), dtype=float)}), tmp_path / "run.parquet", 50)
    index = index_qrels(str(qrels))
    whole = []
    original = columnar.query_keys_of_group

    def counting(path, fmt, group, rows=None):
        assert rows in (None, 16)
        if rows is None:
            whole.append(group.index)
        return original(path, fmt, group, rows)

    monkeypatch.setattr(columnar, "query_keys_of_group", counting)
    prober = _RowProber(run, index, RUN_FORMAT)
    assert len(row_groups(run)) == 80
    assert [prober.boundary(target, 0, prober.size) for target in (1, 100, 399)] == [10, 1000, 3990]
    assert len(whole) <= 3
    assert _RowProber(run, index, RUN_FORMAT).first_kept(995, 4000)[1:] == (99, 996)
    assert prober.cut_offsets(4) == [1000, 2000, 3000]  # row groups' first rows


def test_the_last_shares_of_a_columnar_input_are_partitions_of_their_own(tmp_path, monkeypatch):
    """The plan cuts a columnar input at the row groups' first rows nearest to even shares, and at the
    last two shares' own first rows where no row group starts near them: the last partitions are
    small, whatever the row groups."""
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"u{n:04d} 0 i{n} 1\n" for n in range(400)))
    table = pa.table({"qid": [f"u{n // 10:04d}" for n in range(4000)], "docno": [f"i{n}" for n in range(4000)],
                      "score": np.arange(4000.0)})
    index = index_qrels(str(qrels))
    prober = _RowProber(write_parquet(table, tmp_path / "run.parquet", 1000), index, RUN_FORMAT)
    assert prober.cut_offsets(8) == [1000, 2000, 3000, 3500]  # 3000 is a row group's first row
    assert prober.cut_offsets(4) == [1000, 2000, 3000]
    assert _RowProber(write_parquet(table, tmp_path / "one.parquet", 4000), index, RUN_FORMAT).cut_offsets(4) == \
        [1000, 2000, 3000]  # a row group alone: even shares
    monkeypatch.setattr(partitioned.results, "SUM_BLOCK", 10)
    monkeypatch.setattr(partitioned, "MIN_PARTITIONS", 8)
    partitions = _plan(index, [str(qrels), str(tmp_path / "run.parquet")])
    assert [p.runs[0] for p in partitions] == [(0, 1000), (1000, 2000), (2000, 3000), (3000, 3500), (3500, 4000)]


def test_qrels_as_parquet_are_probed_by_their_query_column(tmp_path):
    table = pa.table({"query_id": ["a", "a", "b", "c"], "doc_id": ["1", "2", "3", "4"], "relevance": [1, 1, 1, 1]})
    path = write_parquet(table, tmp_path / "qrels.parquet", 1)
    index = index_qrels(path)
    prober = _RowProber(path, index, QRELS_ITER_FORMAT)
    assert [prober.boundary(target, 0, prober.size) for target in (1, 2)] == [2, 3]


@pytest.mark.parametrize("group", [1, 2, 3, 100])
def test_the_qrels_index_says_where_each_kept_querys_rows_end(tmp_path, group):
    """Indexing columnar qrels records where each kept query's rows end (the rows of the queries the qrels
    drop after it included): the boundaries the plan takes from it are those its search of the rows
    finds, in a file or a directory, queries straddling row groups and files; text qrels record none."""
    lines = ["q1 0 a 1", "q1 0 b 0", "q2 0 c 0", "q3 0 d 2", "q3 0 e 1", "q3 0 f 0", "q4 0 g 0", "q4 0 h 0",
             "q5 0 i 1", "q6 0 j 0", "q7 0 k 1", "q7 0 l 1"]  # q2, q4, q6 dropped: kept q1 q3 q5 q7 = 0..3
    text = tmp_path / "qrels"
    text.write_text("\n".join(lines) + "\n")
    assert index_qrels(str(text)).ends is None
    table = qrels_table(str(text))
    for path in (write_parquet(table, tmp_path / f"q{group}.parquet", group),
                 write_partitioned(table, tmp_path / f"q{group}", 3, group)):
        index = index_qrels(path)
        assert index.ends.tolist() == [2, 6, 9, 12]
        known = _RowProber(path, index, QRELS_ITER_FORMAT, index.ends)
        searched = _RowProber(path, index, QRELS_ITER_FORMAT)
        for target in range(1, 4):
            for low in range(0, 12):
                found = searched.boundary(target, low, 12)
                assert known.boundary(target, low, 12) == found
                assert found == max(index.ends[target - 1], low)
        assert index_qrels(path, keep_empty=True).ends.tolist() == [2, 3, 6, 8, 9, 10, 12]


def _span(path, start: int, stop: int) -> tuple[list, list, list, list, list]:
    """The query ids, their keys, the document ids, the scores and the rows of a run's rows start..stop-1."""
    blocks = list(table_blocks(path, RUN_FORMAT, rows=(start, stop)))
    return ([q for b in blocks for q in b.qids.texts(range(len(b.qids)))],
            [k for b in blocks for k in b.qids.keys.tolist()],
            [d for b in blocks for d in b.docids.texts(range(len(b.docids)))],
            [v for b in blocks for v in b.values.tolist()], [r for b in blocks for r in b.rows.numbers.tolist()])


def test_any_span_of_rows_reads_as_the_whole_input_sliced(tmp_path):
    """A partition's rows, starting and ending anywhere (inside row groups, where files meet; a row
    group's first rows read plain or as dictionaries, as many of them there are), are the rows of the
    whole input: ids, keys, scores and row numbers."""
    table = pa.table({"qid": [f"q{n // 3}" for n in range(40)], "docno": [f"d{n % 7}" for n in range(40)],
                      "score": np.arange(40.0)})
    for path in (write_parquet(table, tmp_path / "run.parquet", 16), write_partitioned(table, tmp_path / "run", 3, 8)):
        whole = _span(path, 0, 40)
        assert whole[0] == table.column("qid").to_pylist() and whole[4] == list(range(40))
        for start in range(0, 40, 3):
            for stop in range(start + 1, 41, 2):
                assert _span(path, start, stop) == tuple(column[start:stop] for column in whole)


def test_a_bad_id_in_a_row_groups_first_rows_is_the_same_error_read_plain_or_as_dictionaries(tmp_path):
    docids = [f"d{n}" for n in range(32)]
    docids[2] = "d 2"
    table = pa.table({"qid": [f"q{n // 4}" for n in range(32)], "docno": docids, "score": np.arange(32.0)})
    path = write_parquet(table, tmp_path / "run.parquet", 32)
    errors = []
    for stop in (3, 4, 20, 32):  # the first 3 or 4 rows of 32 are read plain, 20 or all as dictionaries
        with pytest.raises(InputError) as raised:
            _span(path, 0, stop)
        errors.append(str(raised.value))
    assert errors == [f"{path}: row 2 (row group 0): the document id 'd 2' in column 'docno' holds a space: an id is "
                      "one word, as in a text file"] * 4


def test_a_partitioned_directory_is_planned_from_its_files_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(partitioned, "MIN_PARTITIONS", 4)
    text_qrels, text_runs = _collection(tmp_path, 3)
    qrels, runs = _as_parquet(tmp_path, text_qrels, text_runs, "directory", group=4)
    index = index_qrels(text_qrels)
    partitions = _with_block(2, lambda: _plan(index, [text_qrels, *runs]))
    for run_number, run in enumerate(runs):
        rows = sum(group.rows for group in row_groups(run))
        spans = [p.runs[run_number] for p in partitions]
        assert spans[0][0] == 0 and spans[-1][1] == rows and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


def test_the_planner_reads_the_query_column_alone(tmp_path, in_process, monkeypatch):  # noqa: F811
    """While the plan is made (in this process here; on a worker of a cluster), the columnar reader
    reads the query column alone (never a run's documents or scores, nor every role column of a row
    group's first rows); the partitions read the rest, with memory's bytes."""
    qrels, runs = _collection(tmp_path, 8, queries=200)
    columnar_qrels, columnar_runs = _as_parquet(tmp_path, qrels, runs, "file", 40)
    planning, read = [False], []
    arrow, head = columnar._Input.arrow, columnar._Input.head

    def spied_arrow(self, file, groups, columns=None):
        if planning[0]:
            read.append((tuple(columns) if columns is not None else None, sum(group.rows for group in groups)))
        return arrow(self, file, groups, columns)

    def spied_head(self, group, rows, columns=None, dictionaries=True):
        if planning[0]:
            read.append((tuple(columns) if columns is not None else None, min(rows, group.rows)))
        return head(self, group, rows, columns, dictionaries)

    def planning_with(function):
        def spied(*args, **kwargs):
            planning[0] = True
            try:
                return function(*args, **kwargs)
            finally:
                planning[0] = False
        return spied

    monkeypatch.setattr(columnar._Input, "arrow", spied_arrow)
    monkeypatch.setattr(columnar._Input, "head", spied_head)
    for name in ("_plan_starts", "_spans"):  # the plan's two searches: the partitions' first queries, their spans
        monkeypatch.setattr(partitioned, name, planning_with(getattr(partitioned, name)))
    memory = evaluate("memory", columnar_qrels, columnar_runs, "-q")
    cut = evaluate("dask", columnar_qrels, columnar_runs, "-q")
    assert (cut.exit_code, cut.stdout_bytes, cut.stderr) == (0, memory.stdout_bytes, memory.stderr)
    assert read and {columns for columns, _ in read} == {("qid",)}


def test_a_bad_row_in_a_late_partition_is_reported_at_its_row(tmp_path, in_process):  # noqa: F811
    """A null document id near the end of a Parquet run: memory's error (file, row, row group), exit 1,
    nothing written."""
    qrels, runs = _collection(tmp_path, 12)
    columnar_qrels, columnar_runs = _as_parquet(tmp_path, qrels, runs, "file", 5)
    table = pq.read_table(columnar_runs[0])
    docids = table.column("docno").to_pylist()
    docids[-3] = None
    write_parquet(table.set_column(1, "docno", pa.array(docids, pa.string())), columnar_runs[0], 5)
    memory = evaluate("memory", columnar_qrels, columnar_runs, "-q")
    cut = evaluate("dask", columnar_qrels, columnar_runs, "-q")
    assert cut.exit_code == 1 and cut.stdout == "" and cut.stderr == memory.stderr
    assert cut.stderr.startswith(f"prefeval: error: {columnar_runs[0]}: row {len(docids) - 3:,} (row group ")
    assert cut.stderr.count("\n") == 1


def test_a_parquet_run_out_of_order_falls_back_as_the_streamed_reader_does(tmp_path, in_process):  # noqa: F811
    """A Parquet run listing a late query early: the streamed reader's note (naming the row), then
    memory's bytes."""
    qrels, runs = _collection(tmp_path, 11)
    columnar_qrels, columnar_runs = _as_parquet(tmp_path, qrels, runs, "file", 5)
    table = pq.read_table(columnar_runs[0])
    qids = table.column("qid").to_pylist()
    relevant = {line.split()[0] for line in open(qrels) if float(line.split()[3]) > 0}
    late = next(qid for qid in reversed(qids) if qid in relevant)
    moved = [row for row, qid in enumerate(qids) if qid == late]
    write_parquet(table.take([*range(4), *moved, *(row for row in range(4, len(qids)) if row not in moved)]),
                  columnar_runs[0], 5)
    stream = evaluate("stream", columnar_qrels, columnar_runs, "-q")
    assert f"row {4 + len(moved):,} (row group " in stream.stderr
    assert "comes after a query that follows it" in stream.stderr
    cut = evaluate("dask", columnar_qrels, columnar_runs, "-q")
    assert (cut.exit_code, cut.stdout_bytes, cut.stderr) == (0, stream.stdout_bytes, stream.stderr)


def test_empty_row_groups_are_read_past(tmp_path, in_process):  # noqa: F811
    """A Parquet run with empty row groups among its groups of 3 rows (at its start, in its middle and
    at its end): memory's bytes, cut into many partitions."""
    qrels, runs = _collection(tmp_path, 5)
    table = run_table(runs[0])
    path = tmp_path / "run0.parquet"
    with pq.ParquetWriter(path, table.schema) as writer:
        for piece in (table.slice(0, 0), table.slice(0, 30), table.slice(0, 0), table.slice(30), table.slice(0, 0)):
            writer.write_table(piece, row_group_size=3)
    counts = [group.rows for group in row_groups(str(path))]
    assert counts.count(0) == 3 and sum(counts) == table.num_rows
    memory = evaluate("memory", qrels, [str(path), *runs[1:]], "-q")
    cut = evaluate("dask", qrels, [str(path), *runs[1:]], "-q")
    assert (cut.exit_code, cut.stdout_bytes, cut.stderr) == (0, memory.stdout_bytes, memory.stderr)
    assert in_process[-1] >= 5
