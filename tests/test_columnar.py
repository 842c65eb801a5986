"""Columnar inputs (Parquet, Arrow IPC, directories of them, pyarrow Tables): :mod:`prefeval.io.columnar`,
the alias table of :mod:`prefeval.io.columns`, the streamed block source, the API and the options.

The central check: a collection written as TREC text and as Parquet (or Arrow, or a partitioned
directory, or with integer ids, or under recommender toolkits' column names) gives the same bytes
from ``prefeval eval`` in every format, with and without ``-q``, read whole and streamed.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import QRELS, RUNS, run_cli
from contract import assert_one_line_error
from hypothesis import given
from hypothesis import strategies as st
from test_shell import every_module_loaded_by

import prefeval
from prefeval.errors import InputError, UsageError
from prefeval.io.columnar import BLOCK_ROWS, read_table, read_table_run, row_groups, table_blocks
from prefeval.io.columns import ALIASES, parse_columns, resolve_columns
from prefeval.io.source import columnar_format, dataset_files
from prefeval.io.trec import RUN_FORMAT, read_run
from prefeval.report.formats import EVALUATION, formats_for

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
feather = pytest.importorskip("pyarrow.feather")

QRELS_NAMES = ("qid", "iteration", "docno", "rel")
RUN_NAMES = ("qid", "Q0", "docno", "rank", "score", "tag")


def text_rows(path) -> list[list[bytes]]:
    """The fields of every line of a TREC text file (bytes)."""
    return [line.split() for line in Path(path).read_bytes().splitlines() if line.strip()]


def id_array(values: list[bytes], integers: bool = False):
    """Ids as Arrow: integers, text (UTF-8) or, for bytes that are not UTF-8, binary."""
    if integers:
        return pa.array([int(value) for value in values], pa.int64())
    try:
        return pa.array([value.decode("utf-8") for value in values], pa.string())
    except UnicodeDecodeError:
        return pa.array(values, pa.binary())


def number(text: bytes, null_nan: bool) -> float | None:
    value = float(text.replace(b",", b"."))
    return None if null_nan and math.isnan(value) else value


def qrels_table(path, names=("qid", "docno", "rel"), integers: bool = False):
    rows = text_rows(path)
    return pa.table({names[0]: id_array([row[0] for row in rows], integers),
                     "iteration": pa.array([row[1].decode() for row in rows]),
                     names[1]: id_array([row[2] for row in rows], integers),
                     names[2]: pa.array([int(float(row[3])) for row in rows], pa.int64())})


def run_table(path, names=("qid", "docno", "score"), integers: bool = False, null_nan: bool = True):
    rows = text_rows(path)
    columns = {names[0]: id_array([row[0] for row in rows], integers),
               names[1]: id_array([row[2] for row in rows], integers),
               "rank": pa.array([int(row[3]) for row in rows], pa.int32()),
               names[2]: pa.array([number(row[4], null_nan) for row in rows], pa.float64())}
    if all(len(row) > 5 for row in rows):
        columns["tag"] = pa.array([row[5].decode() for row in rows])
    return pa.table(columns)


def integer_qids(table, text_path):
    """``table`` with its query ids (its first column) as integers."""
    return table.set_column(0, table.column_names[0], id_array([row[0] for row in text_rows(text_path)], True))


def write_parquet(table, path: Path, row_group_size: int = 4) -> str:
    pq.write_table(table, path, row_group_size=row_group_size)
    return str(path)


def write_partitioned(table, folder: Path, parts: int, row_group_size: int = 3) -> str:
    """``table`` cut into ``parts`` files ``part-0.parquet`` ... (numbered without zeros, so that only
    natural order reads them in order), with a marker file and a hidden file beside them."""
    folder.mkdir()
    bounds = np.linspace(0, table.num_rows, parts + 1).astype(int)
    for number, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:])):
        pq.write_table(table.slice(start, stop - start), folder / f"part-{number}.parquet",
                       row_group_size=row_group_size)
    (folder / "_SUCCESS").write_bytes(b"")
    (folder / ".part-0.parquet.crc").write_bytes(b"crc")
    return str(folder)


@pytest.fixture(scope="module")
def collection(tmp_path_factory) -> dict[str, tuple[str, list[str]]]:
    """A collection as text, and the same as Parquet files, Arrow files, partitioned directories, with
    integer ids, and under recommender names: (qrels, runs) of each form."""
    folder = tmp_path_factory.mktemp("columnar")
    text = folder / "text"
    text.mkdir()
    (text / "qrels").write_bytes(
        b"301 0 d1 2\n301 0 d2 1\n301 0 d3 0\n301 0 d20 1\n"
        b"42 0 d7 1\n42 0 d1 -1\n"
        b"7 0 d4 0\n"  # no relevant document: dropped
        b"1000 0 d9 1\n1000 0 d10 2\n1000 0 d11 1\n1000 0 d12 1\n"
        b"55 0 d5 1\n55 0 d6 1\n")
    (text / "alpha").write_bytes(  # ties broken by docid, as bytes; a query the qrels lack
        b"301 Q0 d2 1 1.5 alpha\n301 Q0 d20 2 1.5 alpha\n301 Q0 d1 3 1.5 alpha\n301 Q0 d3 4 0.5 alpha\n"
        b"42 Q0 d7 1 -2 alpha\n42 Q0 d1 2 -2 alpha\n"
        b"999 Q0 d1 1 3 alpha\n"
        b"1000 Q0 d10 1 inf alpha\n1000 Q0 d9 2 nan alpha\n1000 Q0 d11 3 7 alpha\n1000 Q0 d12 4 7 alpha\n"
        b"55 Q0 d5 1 0.25 alpha\n")
    (text / "beta").write_bytes(  # a query missing (55); a tie at the top
        b"301 Q0 d3 1 9 beta\n301 Q0 d1 2 9 beta\n301 Q0 d2 3 1 beta\n"
        b"42 Q0 d1 1 5 beta\n42 Q0 d7 2 4.75 beta\n42 Q0 d8 3 4.5 beta\n"
        b"1000 Q0 d12 1 1 beta\n1000 Q0 d11 2 1 beta\n1000 Q0 d10 3 1 beta\n1000 Q0 d9 4 1 beta\n")
    (text / "gamma").write_bytes(  # every query, deep; scores with many digits
        b"301 Q0 d20 1 0.123456789012345678 gamma\n301 Q0 d2 2 0.1234567890123456 gamma\n"
        b"42 Q0 d7 1 1e-300 gamma\n"
        b"7 Q0 d4 1 1 gamma\n"
        b"1000 Q0 d11 1 3 gamma\n1000 Q0 d9 2 2 gamma\n"
        b"55 Q0 d6 1 10 gamma\n55 Q0 d5 2 9 gamma\n")
    names = ["alpha", "beta", "gamma"]
    forms = {"text": (str(text / "qrels"), [str(text / name) for name in names])}

    parquet = folder / "parquet"
    parquet.mkdir()
    forms["parquet"] = (write_parquet(qrels_table(text / "qrels"), parquet / "qrels.parquet"),
                        [write_parquet(run_table(text / name), parquet / f"{name}.parquet") for name in names])
    integers = folder / "integers"
    integers.mkdir()
    forms["integers"] = (  # query ids as integers, docids as text
        write_parquet(integer_qids(qrels_table(text / "qrels"), text / "qrels"), integers / "q.parquet"),
        [write_parquet(integer_qids(run_table(text / name), text / name), integers / f"{name}.parquet")
         for name in names])
    arrow = folder / "arrow"
    arrow.mkdir()
    for name in names:
        feather.write_feather(run_table(text / name, null_nan=False), arrow / f"{name}.feather", chunksize=3)
    feather.write_feather(qrels_table(text / "qrels"), arrow / "qrels.arrow", chunksize=5)
    forms["arrow"] = (str(arrow / "qrels.arrow"), [str(arrow / f"{name}.feather") for name in names])
    partitioned = folder / "partitioned"
    partitioned.mkdir()
    forms["partitioned"] = (write_partitioned(qrels_table(text / "qrels"), partitioned / "qrels", 12),
                            [write_partitioned(run_table(text / name), partitioned / name, 3) for name in names])
    recommender = folder / "recommender"
    recommender.mkdir()
    forms["recommender"] = (  # LensKit's test set, Microsoft Recommenders' predictions
        write_parquet(qrels_table(text / "qrels", ("user", "item", "rating")), recommender / "test.parquet"),
        [write_parquet(run_table(text / name, ("userID", "itemID", "prediction")), recommender / f"{name}.parquet")
         for name in names])
    return forms


FORMAT_OPTIONS = {"ir_measures": ("-m", "AP nDCG@10 P@5 RR R@3"), "trec_eval": ("-m", "all_trec")}
"""What a format needs to write something (ir_measures needs measures)."""
TABLES = ("table", "markdown", "latex")
"""The formats that write the summary alone (-q is refused)."""


def outputs(qrels: str, runs: list[str], *options: str) -> dict[tuple, tuple]:
    """What ``eval`` gives (exit code, stdout) in every format, with and without -q, read whole and
    streamed (trec_eval's order of queries is not streamed)."""
    found = {}
    for fmt in formats_for(EVALUATION):
        for per_query in (("-q",), ()):
            for engine in ("memory",) if fmt == "trec_eval" else ("memory", "stream"):
                result = run_cli("eval", *per_query, "--format", fmt, *FORMAT_OPTIONS.get(fmt, ()), "--engine",
                                 engine, "--jobs", "1", *options, "-R", qrels, *runs)
                found[fmt, per_query, engine] = (result.exit_code, result.stdout_bytes)
    return found


@pytest.fixture(scope="module")
def text_outputs(collection):
    return outputs(*collection["text"])


@pytest.mark.parametrize("form", ["parquet", "integers", "arrow", "partitioned"])
def test_a_collection_as_text_and_as_columns_gives_the_same_bytes_in_every_format(collection, text_outputs, form):
    qrels, runs = collection[form]
    found = outputs(qrels, runs)
    assert {key: code for key, (code, _) in text_outputs.items() if code} == {
        (fmt, ("-q",), engine): 2 for fmt in TABLES for engine in ("memory", "stream")}
    for key, expected in text_outputs.items():
        assert found[key] == expected, key


def test_recommender_names_and_named_columns_give_the_same_bytes(collection, text_outputs):
    qrels, runs = collection["recommender"]
    key = ("jsonl", ("-q",), "stream")
    assert outputs(qrels, runs)[key] == text_outputs[key]  # user, item, rating; userID, itemID, prediction
    renamed = Path(qrels).parent / "renamed"
    renamed.mkdir()
    qrels_named = write_parquet(pq.read_table(qrels).rename_columns(["u", "iteration", "i", "r"]),
                                renamed / "qrels.parquet")
    runs_named = [write_parquet(pq.read_table(run).rename_columns(["U", "I", "rank", "S", "tag"]),
                                renamed / os.path.basename(run)) for run in runs]
    found = outputs(qrels_named, runs_named, "--qrels-columns", "qid=u,docid=i,grade=r",
                    "--run-columns", "qid=U, docid=I, score=S")
    assert found == text_outputs


def test_mixed_text_and_columnar_runs_read_alike(collection, text_outputs):
    qrels, runs = collection["text"]
    mixed = [collection["parquet"][1][0], runs[1], collection["partitioned"][1][2]]
    assert outputs(qrels, mixed)[("jsonl", ("-q",), "stream")] == text_outputs[("jsonl", ("-q",), "stream")]


def test_every_engine_and_every_reader_count(collection, text_outputs):
    """--jobs 2 (forked readers and rankers, pyarrow in each) and the Dask executor."""
    qrels, runs = collection["parquet"]
    expected = text_outputs[("jsonl", ("-q",), "stream")][1]
    for engine in ("memory", "stream"):
        result = run_cli("eval", "-q", "--engine", engine, "--jobs", "2", "-R", qrels, *runs)
        assert (result.exit_code, result.stdout_bytes) == (0, expected)
    for qrels, runs in (collection["parquet"], collection["partitioned"]):  # cut into partitions of rows
        process = subprocess.run([sys.executable, "-m", "prefeval", "eval", "-q", "--engine", "dask", "--jobs", "2",
                                  "-R", qrels, *runs], capture_output=True)
        assert (process.returncode, process.stdout) == (0, expected), process.stderr


def test_the_notes_name_the_columnar_files_as_the_text_ones(collection):
    text, columnar = (run_cli("eval", "-R", qrels, *runs) for qrels, runs in
                      (collection["text"], collection["parquet"]))
    assert text.stderr.replace(collection["text"][0], "QRELS") == columnar.stderr.replace(collection["parquet"][0],
                                                                                           "QRELS")
    assert "run beta: 1 of 4 queries missing" in columnar.stderr


def test_subtopic_qrels_as_columns_keep_their_subtopics(tmp_path):
    """The iter column (``iteration``, ``iter``, ``subtopic_id`` or named ``iter=``) of a diversity
    qrels is read from a table as from text: the intent-aware measures and the note agree, on every
    engine."""
    data = Path(__file__).parent / "data" / "ndeval"
    qrels, run = str(data / "web2012.qrels"), str(data / "ql.run")
    table = qrels_table(qrels)
    as_integers = table.set_column(1, "subtopic_id", pa.array([int(s) for s in table.column(1).to_pylist()]))
    forms = {
        "iteration": (write_parquet(table, tmp_path / "iteration.parquet", 500), ()),
        "subtopic_id": (write_parquet(as_integers, tmp_path / "integers.parquet", 500), ()),
        "named": (write_parquet(table.rename_columns(["qid", "aspect", "docno", "rel"]), tmp_path / "named.parquet",
                                500), ("--qrels-columns", "iter=aspect")),
    }
    measures = ("-m", "alpha_ndcg@20", "-m", "err_ia@20", "-m", "ap")
    for engine in ("memory", "stream"):
        text = run_cli("eval", "-q", "--engine", engine, *measures, "-R", qrels, run)
        assert text.exit_code == 0 and b'"alpha_ndcg@20":0.' in text.stdout_bytes
        for name, (path, options) in forms.items():
            columnar = run_cli("eval", "-q", "--engine", engine, *measures, *options, "-R", path, run)
            assert (columnar.exit_code, columnar.stdout_bytes) == (0, text.stdout_bytes), name
            assert columnar.stderr.replace(path, "QRELS") == text.stderr.replace(qrels, "QRELS"), name
    ad_hoc = run_cli("eval", "-q", *measures, "-R", write_parquet(table.drop_columns("iteration"),
                                                                  tmp_path / "ad_hoc.parquet", 500), run)
    assert ad_hoc.exit_code == 0 and ad_hoc.stdout_bytes != text.stdout_bytes  # each query one intent
    assert "read each query as one intent" in ad_hoc.stderr


def test_the_judgments_of_other_kinds_take_no_column_names(collection):
    qrels, runs = collection["parquet"]
    assert_one_line_error(run_cli("eval", "--rel-format", "prefs", "-m", "prefs_simp", "--qrels-columns",
                                  "grade=rel", "-R", qrels, *runs), 2,
                          "--qrels-columns (qrels_columns=) names the columns of a table of qrels",
                          "--rel-format prefs are read from text")


# what the readers give


def test_columnar_ids_are_the_keys_and_texts_of_the_same_ids_as_text(collection):
    for form in ("parquet", "integers", "arrow", "partitioned"):
        for text_run, run in zip(collection["text"][1], collection[form][1]):
            expected, found = read_run(text_run), read_run(run)
            assert found.run_id == expected.run_id and found.tag == expected.tag
            assert np.array_equal(found.qids.keys, expected.qids.keys)
            assert np.array_equal(found.docids.keys, expected.docids.keys)
            assert found.qids.tolist() == expected.qids.tolist() and found.docids.tolist() == expected.docids.tolist()
            assert np.array_equal(found.scores, expected.scores)
            rows = np.arange(len(found.scores))
            assert found.docids.byte_strings(rows).tolist() == expected.docids.byte_strings(rows).tolist()


def test_ids_of_every_arrow_type(tmp_path):
    texts = ["q1", "q1", "é", "42", "-7"]
    expected = read_table(write_parquet(pa.table({"qid": texts, "docno": texts, "score": [1.0] * 5}),
                                        tmp_path / "plain.parquet"), RUN_FORMAT)
    for kind in (pa.large_string(), pa.binary(), pa.large_binary(), pa.string_view(), pa.binary_view()):
        table = pa.table({"qid": pa.array(texts).cast(kind), "docno": pa.array(texts).dictionary_encode(),
                          "score": pa.array([1, 1, 1, 1, 1], pa.int8())})
        feather.write_feather(table, tmp_path / "ids.arrow", compression="uncompressed")
        found = read_table(str(tmp_path / "ids.arrow"), RUN_FORMAT)
        assert np.array_equal(found.qids.keys, expected.qids.keys), kind
        assert found.docids.tolist() == texts and found.values.tolist() == [1.0] * 5
    for kind in (pa.int8(), pa.uint16(), pa.int32(), pa.uint64()):
        numbers = [1, 1, 42, 0, 127]
        table = pa.table({"user": pa.array(numbers, kind), "item": pa.array(numbers, kind).dictionary_encode(),
                          "score": [0.5] * 5})
        found = read_table(write_parquet(table, tmp_path / "int.parquet"), RUN_FORMAT)
        assert found.qids.tolist() == found.docids.tolist() == [str(n) for n in numbers]


def test_a_run_with_null_and_nan_scores_skips_them_as_nan_lines(tmp_path):
    table = pa.table({"qid": ["q", "q", "q", "q"], "docno": ["a", "b", "c", "d"],
                      "score": pa.array([1.0, None, float("nan"), 0.5])})
    run = read_table_run(write_parquet(table, tmp_path / "run.parquet", 2), "run")
    assert run.docids.tolist() == ["a", "d"] and run.lines.of([0, 1]).tolist() == [0, 3]


def test_row_groups_list_their_rows_and_query_ranges(tmp_path):
    table = pa.table({"qid": ["a", "a", "b", "c", "c", "d", "e"], "docno": list("1234567"), "score": [1.0] * 7})
    path = write_parquet(table, tmp_path / "run.parquet", 3)
    groups = row_groups(path)
    assert [(group.index, group.rows, group.first_row, group.qids) for group in groups] == [
        (0, 3, 0, ("a", "b")), (1, 3, 3, ("c", "d")), (2, 1, 6, ("e", "e"))]
    numbers = pa.table({"user": pa.array([10, 9, 200], pa.int64()), "item": ["x", "y", "z"], "score": [1.0] * 3})
    assert row_groups(write_parquet(numbers, tmp_path / "n.parquet", 2))[0].qids == ("9", "10")
    folder = Path(write_partitioned(table, tmp_path / "dir", 2, row_group_size=2))
    groups = row_groups(str(folder))
    assert [(os.path.basename(g.file), g.index, g.rows, g.first_row, g.file_row) for g in groups] == [
        ("part-0.parquet", 0, 2, 0, 0), ("part-0.parquet", 1, 1, 2, 2),
        ("part-1.parquet", 0, 2, 3, 0), ("part-1.parquet", 1, 2, 5, 2)]
    part = read_table(str(folder), RUN_FORMAT, [groups[3], groups[1]])
    assert part.qids.tolist() == ["d", "e", "b"] and part.rows.of([0, 2]).tolist() == [5, 2]
    assert read_table(path, RUN_FORMAT, [2]).docids.tolist() == ["7"]
    feather.write_feather(table, tmp_path / "run.arrow", chunksize=4)
    assert [(g.rows, g.qids) for g in row_groups(str(tmp_path / "run.arrow"))] == [(4, None), (3, None)]
    with pytest.raises(InputError, match="has no row group 5"):
        read_table(path, RUN_FORMAT, [5])
    broken = write_parquet(table.set_column(1, "docno", pa.array(["1", "2", "3", "4", None, "6", "7"])),
                           tmp_path / "broken.parquet", 3)
    with pytest.raises(InputError, match=r"broken.parquet: row 4 \(row group 1\): column 'docno' has no document id"):
        read_table(broken, RUN_FORMAT, [2, 1, 0])


def test_blocks_of_a_large_row_group_hold_at_most_block_rows(tmp_path):
    rows = BLOCK_ROWS + 10
    table = pa.table({"qid": np.repeat(np.arange(rows // 10 + 1), 10)[:rows].astype(str),
                      "docno": np.arange(rows).astype(str), "score": np.ones(rows)})
    path = write_parquet(table, tmp_path / "big.parquet", rows)
    blocks = list(table_blocks(path, RUN_FORMAT))
    assert [len(block.values) for block in blocks] == [BLOCK_ROWS, 10]
    assert blocks[1].rows.of([0]).tolist() == [BLOCK_ROWS]
    whole = read_table(path, RUN_FORMAT)
    assert np.array_equal(np.concatenate([block.docids.keys for block in blocks]), whole.docids.keys)


# the alias table and named columns


@pytest.mark.parametrize("tool, qrels_columns, run_columns", [
    ("TREC", ("qid", "docno", "rel"), ("qid", "docno", "score")),
    ("ir_measures", ("query_id", "doc_id", "relevance"), ("query_id", "doc_id", "score")),
    ("ranx", ("q_id", "doc_id", "score"), ("q_id", "doc_id", "score")),
    ("PyTerrier", ("qid", "docno", "label"), ("qid", "docno", "score")),
    ("LensKit", ("user", "item", "rating"), ("user", "item", "score")),
    ("RecBole", ("user_id", "item_id", "label"), ("user_id", "item_id", "score")),
    ("Microsoft Recommenders", ("userID", "itemID", "rating"), ("userID", "itemID", "prediction")),
    ("MovieLens", ("userId", "itemId", "rating"), ("userId", "itemId", "prediction")),
])
def test_each_toolkits_names_are_found(tool, qrels_columns, run_columns):
    assert resolve_columns(["timestamp", *qrels_columns], "qrels", {}, "x") == dict(
        zip(("qid", "docid", "grade"), qrels_columns))
    assert resolve_columns([*run_columns, "rank"], "run", {}, "x") == dict(zip(("qid", "docid", "score"), run_columns))


def test_pyterriers_docno_comes_before_its_internal_docid():
    columns = ["qid", "docid", "docno", "rank", "score", "query"]
    assert resolve_columns(columns, "run", {}, "x") == {"qid": "qid", "docid": "docno", "score": "score"}
    assert resolve_columns(columns, "run", {"docid": "docid"}, "x")["docid"] == "docid"
    assert ALIASES["docid"].index("docno") < ALIASES["docid"].index("docid")


def test_missing_and_named_columns_are_errors_that_list_the_columns():
    with pytest.raises(InputError, match=r"q: no query id column \('qid' or .*; its columns: 'user_name', 'docno'"):
        resolve_columns(["user_name", "docno", "score"], "run", {}, "q")
    with pytest.raises(InputError, match="no column 'stars', named for the grades"):
        resolve_columns(["qid", "docno", "rel"], "qrels", {"grade": "stars"}, "q")
    assert resolve_columns(["qid", "docno", "run"], "run", {"score": "run"}, "r") == {
        "qid": "qid", "docid": "docno", "score": "run"}
    assert resolve_columns(["qid", "docno", "score", "tag"], "run", {}, "r")["tag"] == "tag"


def test_the_missing_grade_error(tmp_path):
    path = write_parquet(pa.table({"qid": ["q"], "docno": ["d"], "weight": [1]}), tmp_path / "q.parquet")
    message = assert_one_line_error(run_cli("eval", "-R", path, RUNS[0]), 1)
    assert message == (f"{path}: no grade column ('rel' or 'relevance' or 'label' or 'grade' or 'rating' or 'score'); "
                       "its columns: 'qid', 'docno', 'weight'. Name it with --qrels-columns grade=COLUMN "
                       "(qrels_columns= in the Python API)")


@pytest.mark.parametrize("spec, kind, message", [
    ("qid=user,grade", "qrels", "'grade' is not ROLE=COLUMN"),
    ("query=user", "qrels", "unknown role 'query'; the roles of a qrels are qid, docid, grade"),
    ("score=s", "qrels", "unknown role 'score'"),
    ("grade=s", "run", "unknown role 'grade'; the roles of a run are qid, docid, score, tag"),
    ("qid=a,qid=b", "run", "'qid' is named twice"),
    ("qid=a,docid=a", "run", "column 'a' is named for two roles"),
    ("qid=", "run", "the column of 'qid' must be a non-empty name"),
])
def test_column_names_are_read_strictly(spec, kind, message):
    with pytest.raises(UsageError, match=message):
        parse_columns(spec, kind)


def test_naming_columns_of_text_inputs_is_a_usage_error(collection):
    qrels, runs = collection["text"]
    assert_one_line_error(run_cli("eval", "--qrels-columns", "grade=rating", "-R", qrels, *runs), 2,
                          "--qrels-columns (qrels_columns=) names the columns of a table", "a text file")
    assert_one_line_error(run_cli("eval", "--run-columns", "score=x", "-R", qrels, *runs), 2, "no run is one")
    assert_one_line_error(run_cli("eval", "--run-columns", "rank=x", "-R", qrels, *runs), 2, "unknown role 'rank'")


# errors: one line, naming the file, the row (and row group) and the column


def error_of(tmp_path, table, kind="run", **write) -> str:
    path = write_parquet(table, tmp_path / f"bad-{kind}.parquet", **write)
    args = ["-R", path, RUNS[0]] if kind == "qrels" else ["-R", QRELS, path]
    messages = {assert_one_line_error(run_cli("eval", "--engine", engine, *args), 1) for engine in ("memory", "stream")}
    assert len(messages) == 1, messages  # the same whatever the engine
    return messages.pop().removeprefix(path + ": ")


def test_bad_rows_are_named_by_row_row_group_and_column(tmp_path):
    table = pa.table({"qid": ["q101", "q101", "q102", None], "docno": ["a", "b", "c", "d"], "score": [1.0, 2, 3, 4]})
    assert error_of(tmp_path, table, row_group_size=3) == "row 3 (row group 1): column 'qid' has no query id (null)"
    table = pa.table({"qid": ["q101"] * 3, "docno": ["a", None, "c"], "score": [1.0, 2, 3]})
    assert error_of(tmp_path, table) == "row 1 (row group 0): column 'docno' has no document id (null)"
    table = pa.table({"qid": ["q101"] * 3, "docno": ["a", "b c", "d"], "score": [1.0, 2, 3]})
    assert error_of(tmp_path, table) == ("row 1 (row group 0): the document id 'b c' in column 'docno' holds a space: "
                                         "an id is one word, as in a text file")
    table = pa.table({"qid": ["q101", ""], "docno": ["a", "b"], "score": [1.0, 2]})
    assert error_of(tmp_path, table) == "row 1 (row group 0): the query id '' in column 'qid' is empty"
    table = pa.table({"qid": ["q101"] * 3, "docno": ["a", "b\x00", "c"], "score": [1.0, 2, 3]})
    assert "holds a NUL byte" in error_of(tmp_path, table)
    table = pa.table({"qid": ["q101"] * 5, "docno": ["a", "b", "c", "a", "e"], "score": [1.0, 2, 3, 4, 5]})
    assert error_of(tmp_path, table, row_group_size=2) == (
        "row 3 (row group 1): document 'a' appears twice for query 'q101'; first on row 0 (row group 0)")
    table = pa.table({"qid": ["q101"], "docno": ["a"], "score": ["1.5"]})
    assert error_of(tmp_path, table) == ("column 'score' holds text, not scores: scores must be numbers (integers or "
                                         "floating point)")
    table = pa.table({"qid": [101.0], "docno": ["a"], "score": [1.5]})
    assert error_of(tmp_path, table) == "column 'qid' holds double values, not query ids: ids must be text or integers"


def test_bad_qrels_rows_are_named_too(tmp_path):
    table = pa.table({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "c"], "rel": [1, None, 2]})
    assert error_of(tmp_path, table, "qrels") == "row 1 (row group 0): column 'rel' has no grade (null)"
    table = pa.table({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "c"], "rel": [1, float("nan"), 2]})
    assert error_of(tmp_path, table, "qrels") == "row 1 (row group 0): grade nan in column 'rel' is not a number"
    table = pa.table({"qid": ["q1", "q2"], "docno": ["a", "b"], "rel": [1, 1e300]})
    assert error_of(tmp_path, table, "qrels") == (
        "row 1 (row group 0): grade 1e+300 in column 'rel' is out of range: grades must be finite and at most 2^53 in "
        "magnitude")
    table = pa.table({"qid": ["q1", "all"], "docno": ["a", "b"], "rel": [1, 1]})
    assert error_of(tmp_path, table, "qrels").startswith("row 1 (row group 0): a query is named 'all'")
    table = pa.table({"qid": ["q101", "q102"], "docno": ["a", "b"], "rel": [True, False]})
    assert run_cli("eval", "-R", write_parquet(table, tmp_path / "labels.parquet"), RUNS[0]).exit_code == 0


def test_a_partitioned_directory_names_the_file_of_a_bad_row(tmp_path):
    table = pa.table({"qid": ["q101", "q101", "q102", "q102"], "docno": ["a", "b", "c", None],
                      "score": [1.0, 2, 3, 4]})
    folder = write_partitioned(table, tmp_path / "run", 2, row_group_size=1)
    message = assert_one_line_error(run_cli("eval", "-R", QRELS, folder), 1)
    assert message == f"{folder}: part-1.parquet, row 1 (row group 1): column 'docno' has no document id (null)"
    other = tmp_path / "mixed"
    other.mkdir()
    pq.write_table(table.slice(0, 2), other / "part-0.parquet")
    pq.write_table(table.slice(0, 2).rename_columns(["qid", "doc_id", "score"]), other / "part-1.parquet")
    (other / "part-2.parquet").write_bytes(b"q101 Q0 a 1 1\n")
    assert_one_line_error(run_cli("eval", "-R", QRELS, other), 1,
                          f"{other / 'part-1.parquet'}: its document ids are in column 'doc_id', those of the first")
    pq.write_table(table.slice(0, 2).rename_columns(["qid", "docno", "score"]), other / "part-1.parquet")
    assert_one_line_error(run_cli("eval", "-R", QRELS, other), 1,
                          f"{other / 'part-2.parquet'}: is not a Parquet file, as the first file of {other} is")


def test_files_that_are_not_what_they_seem(tmp_path):
    truncated = tmp_path / "truncated.parquet"
    good = write_parquet(pa.table({"qid": ["q101"], "docno": ["a"], "score": [1.0]}), tmp_path / "good.parquet")
    truncated.write_bytes(Path(good).read_bytes()[:-20])
    assert_one_line_error(run_cli("eval", "-R", QRELS, truncated), 1, f"{truncated}: cannot be read as Parquet (")
    named = tmp_path / "text.parquet"  # a text run named .parquet is text: the magic bytes decide
    named.write_bytes(Path(RUNS[0]).read_bytes())
    assert run_cli("eval", "-R", QRELS, named).exit_code == 0
    assert columnar_format(named) is None and columnar_format(good) == "parquet"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_one_line_error(run_cli("eval", "-R", QRELS, empty), 1, f"{empty}: is a directory, not a file")
    prefs = tmp_path / "prefs.parquet"
    prefs.write_bytes(Path(good).read_bytes())
    assert_one_line_error(run_cli("aggregate", "-P", prefs), 1, f"{prefs}: is a Parquet file, not lines of text")


def test_columnar_data_on_standard_input_is_refused_with_its_reason(tmp_path):
    good = write_parquet(pa.table({"qid": ["q101"], "docno": ["a"], "score": [1.0]}), tmp_path / "good.parquet")
    result = run_cli("eval", "-R", QRELS, "-", input=Path(good).read_bytes())
    assert_one_line_error(result, 1, "<stdin>: holds Parquet data, which is read from a path")


def test_without_pyarrow_a_columnar_input_names_the_install_command(collection):
    qrels, runs = collection["parquet"]
    script = ("import sys; sys.modules['pyarrow'] = None\nfrom prefeval.__main__ import main\n"
              f"sys.argv = ['prefeval', 'eval', '-R', {qrels!r}, *{runs!r}]\nmain()")
    process = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert_one_line_error(process, 1)
    assert process.stderr == (f"prefeval: error: {qrels}: is Parquet data, which needs pyarrow to be read; install it: "
                              "pip install 'prefeval[columnar]'\n")


def test_the_text_path_never_imports_pyarrow(collection):
    loaded = every_module_loaded_by("eval", "-q", "-R", QRELS, *RUNS)
    assert "pyarrow" not in loaded and "prefeval.io.columnar" not in loaded
    loaded = every_module_loaded_by("eval", "-q", "--engine", "stream", "-R", QRELS, *RUNS)
    assert "pyarrow" not in loaded and "prefeval.io.columnar" not in loaded
    qrels, runs = collection["parquet"]
    assert "pyarrow" in every_module_loaded_by("eval", "-q", "-R", qrels, *runs)


def page_blocks(test_name: str) -> list[tuple[str, str]]:
    """(info string, text) of each fenced block of docs/columnar.md that the page says ``test_name`` runs."""
    page = (Path(__file__).parent.parent / "docs" / "columnar.md").read_text(encoding="utf-8")
    found = re.findall(rf"<!-- run by tests/test_columnar.py::{test_name} -->\n```(\w+)\n(.*?)^```", page, re.M | re.S)
    assert found, f"docs/columnar.md names no block run by {test_name}"
    return found


def test_the_pages_commands_and_api_example_run(tmp_path):
    """docs/columnar.md's commands and its Python example, on the bundled collection written as LensKit
    writes its files, give what the same collection gives as text."""
    text = tmp_path / "text"
    text.mkdir()
    for name, run in zip(("als", "bpr", "recs"), RUNS):
        (text / name).write_bytes(Path(run).read_bytes())
    lenskit = ("user", "item", "rating")
    write_parquet(qrels_table(QRELS, lenskit), tmp_path / "test.parquet", 100)
    write_parquet(qrels_table(QRELS, ("user", "item", "stars")), tmp_path / "ratings.parquet", 100)
    write_parquet(run_table(RUNS[0], ("user", "item", "score")), tmp_path / "als.parquet", 100)
    write_parquet(run_table(RUNS[1], ("user", "item", "score")), tmp_path / "bpr.parquet", 100)
    write_partitioned(run_table(RUNS[2], ("user", "item", "score")), tmp_path / "recs", 3)
    environment = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    (_, commands), (_, example) = page_blocks("test_the_pages_commands_and_api_example_run")
    outputs = []
    for command in commands.splitlines():
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=environment, capture_output=True)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    first = run_cli("eval", "-q", "-R", QRELS, text / "als", text / "bpr")
    assert (tmp_path / "prefs.jsonl").read_bytes() == first.stdout_bytes and outputs[0] == b""
    second = run_cli("eval", "-m", "ndcg@10", "-m", "rr", "-R", QRELS, text / "als", text / "recs")
    assert outputs[1] == second.stdout_bytes
    done = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, env=environment, capture_output=True)
    assert done.returncode == 0, done.stderr


# streaming


def test_an_out_of_order_columnar_run_is_evaluated_in_memory_with_a_note_naming_its_row(collection, tmp_path):
    qrels, runs = collection["text"]
    table = run_table(runs[0])
    rows = text_rows(runs[0])
    order = [index for index, row in enumerate(rows) if row[0] == b"42"] + \
            [index for index, row in enumerate(rows) if row[0] != b"42"]
    shuffled = write_parquet(table.take(order), tmp_path / "alpha.parquet", 3)
    result = run_cli("eval", "-q", "--engine", "stream", "-R", qrels, shuffled, *runs[1:])
    assert result.exit_code == 0
    assert result.stdout_bytes == run_cli("eval", "-q", "-R", qrels, *runs).stdout_bytes
    assert f"{shuffled}: row 2 (row group 0): query '301' comes after a query that follows it in the qrels" \
        in result.stderr


def test_natural_order_and_marker_files(tmp_path):
    folder = tmp_path / "d"
    (folder / "sub2").mkdir(parents=True)
    (folder / "sub").mkdir()
    for name in ("part.10.parquet", "part.2.parquet", "sub/part.1.parquet", "sub2/a", "_SUCCESS", ".hidden"):
        (folder / name).write_bytes(b"")
    (folder / "_temporary").mkdir()
    (folder / "_temporary" / "x").write_bytes(b"")
    assert [os.path.relpath(path, folder) for path in dataset_files(str(folder))] == [
        "part.2.parquet", "part.10.parquet", "sub/part.1.parquet", "sub2/a"]


# the Python API


def test_the_api_takes_frames_and_tables_under_any_alias(collection):
    qrels, runs = collection["text"]
    expected = prefeval.evaluate(qrels, runs, ["ap", "ndcg@10", "rr"])
    pyterrier = qrels_table(qrels, ("qid", "docno", "label")).to_pandas()
    frames = {os.path.basename(run): run_table(run).to_pandas().assign(docid=lambda frame: np.arange(len(frame)))
              for run in runs}  # PyTerrier's internal docid beside its docno
    assert prefeval.evaluate(pyterrier, frames, ["ap", "ndcg@10", "rr"]).equals(expected)
    recommender = {os.path.basename(run): run_table(run, ("user_id", "item_id", "score")) for run in runs}
    assert prefeval.evaluate(qrels_table(qrels, ("user_id", "item_id", "label")), recommender,
                             ["ap", "ndcg@10", "rr"]).equals(expected)
    named = {name: table.rename_columns(["u", "i", "rank", "s", "tag"]) for name, table in recommender.items()}
    assert prefeval.evaluate(qrels_table(qrels, ("U", "I", "G")).to_pandas(), named, ["ap", "ndcg@10", "rr"],
                             qrels_columns={"qid": "U", "docid": "I", "grade": "G"},
                             run_columns="qid=u,docid=i,score=s").equals(expected)
    assert prefeval.evaluate(collection["parquet"][0], collection["parquet"][1], ["ap", "ndcg@10", "rr"]).equals(
        expected)
    recs = collection["recommender"]
    assert prefeval.compare(recs[0], recs[1], ["rpp"]).equals(prefeval.compare(qrels, runs, ["rpp"]))


def test_the_api_reports_bad_tables_by_row():
    table = pa.table({"qid": ["q101", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match=r"<run r>: row 1: column 'qid' has no query id \(null\)"):
        prefeval.evaluate(QRELS, {"r": table}, ["ap"])
    with pytest.raises(UsageError, match=r"\(qrels_columns=\) names the columns of a table .*: the qrels are a dict"):
        prefeval.evaluate({"q1": {"d": 1}}, RUNS, ["ap"], qrels_columns={"qid": "user"})


# a property: any collection, as text and as Parquet, evaluates alike


_MAGIC = (b"\x1f\x8b", b"PAR1", b"\xef\xbb\xbf")
_ID_BYTES = st.binary(min_size=1, max_size=4).filter(
    lambda b: not (set(b) & {0, 9, 10, 11, 12, 13, 32, 35}) and not b.startswith(_MAGIC))
"""Ids a text file can hold, and that do not make the text file's first bytes gzip's or Parquet's magic or
a byte order mark (which the text reader skips)."""


@given(st.data())
def test_any_collection_evaluates_alike_as_text_and_as_parquet(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("property")
    qids = data.draw(st.lists(_ID_BYTES, min_size=1, max_size=4, unique=True))
    docids = data.draw(st.lists(_ID_BYTES, min_size=2, max_size=8, unique=True))
    judgments = [(q, d, data.draw(st.integers(-1, 3))) for q in qids for d in docids if data.draw(st.booleans())]
    judgments.append((qids[0], docids[0], 1))
    scores = st.one_of(st.sampled_from([0.0, 1.0, 2.5, float("nan")]), st.floats(-5, 5, allow_nan=False))
    run = [(q, d, data.draw(scores)) for q in qids for d in docids if data.draw(st.booleans())]
    if not run:
        run = [(qids[0], docids[0], 1.0)]
    (folder / "qrels").write_bytes(b"".join(q + b" 0 " + d + b" %d\n" % g for q, d, g in judgments))
    (folder / "run").write_bytes(b"".join(q + b" Q0 " + d + b" 1 " + repr(s).encode() + b" t\n" for q, d, s in run))
    qrels = write_parquet(qrels_table(folder / "qrels"), folder / "qrels.parquet")
    parquet = write_parquet(run_table(folder / "run", null_nan=data.draw(st.booleans())), folder / "run.parquet", 3)
    text = run_cli("eval", "-q", "-M", "all", "-R", folder / "qrels", folder / "run")
    columnar = run_cli("eval", "-q", "-M", "all", "-R", qrels, parquet)
    assert (columnar.exit_code, columnar.stdout_bytes) == (text.exit_code, text.stdout_bytes)


def test_ids_that_are_not_utf8_survive_pandas_beside_pyarrow(tmp_path):
    """With pyarrow installed (as the columnar extra installs it), pandas 3 stores its inferred ``str``
    dtype as Arrow strings, which cannot hold an id whose bytes are not UTF-8: the API's frames and
    ``check`` keep such ids as Python objects, and every other id as pandas infers it."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_bytes(b"q\xff1 0 d1 1\nq2 0 d1 1\n")
    run.write_bytes(b"q\xff1 Q0 d1 1 1.0 t\nq2 Q0 d2 1 1.0 t\n")
    frame = prefeval.evaluate(str(qrels), [str(run)], ["ap"])
    assert frame["qid"].tolist() == ["q\udcff1", "q2"] and frame["ap"].tolist() == [1.0, 0.0]
    assert str(prefeval.evaluate(QRELS, RUNS[:1], ["ap"])["qid"].dtype) == str(pd.Series(["q"]).dtype)
    assert run_cli("check", "-R", qrels, run).exit_code == 0


def test_ids_written_in_place_are_the_ids_joined_at_the_end():
    """A column of ids whose rows are known ahead (a file's row groups) is written into arrays made
    once for every row; the same chunks joined at the end give the same keys, texts and places:
    dictionaries shared by chunks and met again after another, plain text and integers."""
    pa = pytest.importorskip("pyarrow")
    from prefeval.io.columnar import _TextParts

    shared = pa.array(["u1", "u22", "u1", "u333"]).dictionary_encode()
    chunks = [shared, pa.array(["a", "bb", "a"]), shared.slice(1, 2), pa.array(["x", "y"]).dictionary_encode(),
              pa.array([7, 70, 700]), shared]
    rows = sum(len(chunk) for chunk in chunks)

    def column(announced):
        parts = _TextParts({}, rows if announced else None)
        for chunk in chunks:
            parts.add(pa, chunk, lambda *problem: AssertionError(problem))
        return parts.column()

    joined, in_place = column(False), column(True)
    expected = ["u1", "u22", "u1", "u333", "a", "bb", "a", "u22", "u1", "x", "y", "7", "70", "700",
                "u1", "u22", "u1", "u333"]
    assert list(in_place.texts(np.arange(rows))) == list(joined.texts(np.arange(rows))) == expected
    assert in_place.keys.tolist() == joined.keys.tolist()
    assert in_place.keys[0] == in_place.keys[2] == in_place.keys[8] != in_place.keys[1]
    with pytest.raises(ValueError, match="2 rows added where 3 were announced"):
        parts = _TextParts({}, 3)
        parts.add(pa, pa.array(["a", "b"]), None)
        parts.column()
