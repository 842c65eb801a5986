"""Streamed evaluation (``eval --engine stream|dask|auto``, :mod:`prefeval.engine.streaming`,
:mod:`prefeval.engine`): every engine writes the bytes of ``--engine memory``, notes and errors
included, however the files are cut into blocks (``prefeval.io.source.BLOCK_BYTES`` is made small
here so that a file is read in many blocks and evaluated in many chunks); a run out of the qrels'
order falls back to memory; what cannot be streamed is a usage error. Then the pieces it rests on:
:class:`prefeval.results.FixedOrderSum` and :func:`prefeval.io.source.read_blocks`.

The tests under "bugs found" pin down, on minimal inputs, the bugs that this file found when it was
written: a value of a query that depended on the queries evaluated with it (and so on the chunks),
and crashes on chunks without a relevant document.
"""

from __future__ import annotations

import functools
import gzip
import resource
import subprocess
import sys

import numpy as np
import orjson
import pytest
from conftest import (
    QRELS,
    ROOT,
    RUNS,
    random_runs,
    robust03_or_skip,
    run_cli,
    write_qrels,
    write_run,
    write_text,
)
from contract import assert_one_line_error
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prefeval.engine import streaming
from prefeval.engine.results import SUM_BLOCK, FixedOrderSum
from prefeval.engine.streaming import StreamedCollection
from prefeval.errors import InputError
from prefeval.io import fields, source
from prefeval.io.source import read_blocks, read_bytes
from prefeval.ranking.conventions import REFERENCE_CONVENTIONS
from prefeval.ranking.options import NO_RELEVANCE_OPTIONS

ROBUST03_RUNS = ("NLPR03vb10", "humR03dc", "rutcor03100")
"""Three robust03 runs, of 1,004, 10,000 and 100,000 lines: quick to evaluate, all in the qrels' order."""

"""The default measures but invrpp and dcgrpp, whose per-query values depend on the chunks (see
:func:`test_weighted_rpp_of_a_query_does_not_depend_on_the_queries_beside_it`): what the tests over
many chunks use, so that they check everything else."""

FALLBACK_NOTE = "streaming needs every run in the qrels' query order; evaluated in memory instead"


# --- helpers -----------------------------------------------------------------------------------------


@pytest.fixture
def robust03() -> tuple[str, list[str]]:
    """The robust03 qrels and the runs of :data:`ROBUST03_RUNS` (skipped when the data is absent)."""
    data = robust03_or_skip()
    return str(data / "qrels.txt"), [str(data / "runs" / f"input.{name}.gz") for name in ROBUST03_RUNS]


@pytest.fixture
def chunks(monkeypatch) -> list[int]:
    """Counts the chunks of every streamed collection evaluated in the test, one entry per collection:
    proof that the stream engine really streamed (the qrels could have sent it to memory)."""
    counts: list[int] = []
    tables = StreamedCollection.tables

    def counting(self):
        counts.append(0)
        for chunk in tables(self):
            counts[-1] += 1
            yield chunk

    monkeypatch.setattr(StreamedCollection, "tables", counting)
    return counts


def evaluate(engine: str, qrels: str, runs, *options, input=None, jobs: int | None = 1):
    """``prefeval eval -R QRELS --engine ENGINE --jobs JOBS OPTIONS... RUNS...``, in-process (so that
    a monkeypatched ``BLOCK_BYTES`` applies; reader processes are forked, so they inherit it). One
    process by default (on small collections processes cost more than the work); ``jobs=None``: one
    per processor, as by default."""
    jobs_option = [] if jobs is None else ["--jobs", jobs]
    return run_cli("eval", "-R", qrels, "--engine", engine, *jobs_option, *options, *runs, input=input)


@functools.cache
def memory_output(qrels: str, runs: tuple[str, ...], options: tuple[str, ...]) -> tuple[bytes, str]:
    """stdout and stderr of ``--engine memory``, which reads whole files (``BLOCK_BYTES`` does not
    touch it): computed once per robust03 invocation, for the tests that compare several streams
    with it."""
    result = evaluate("memory", qrels, runs, *options, jobs=None)
    assert result.exit_code == 0, result.stderr
    return result.stdout_bytes, result.stderr


def assert_stream_is_memory(qrels: str, runs, *options) -> bytes:
    """``--engine stream`` exits 0 with the stdout bytes and the stderr of ``--engine memory``; the
    bytes."""
    stdout, stderr = memory_output(qrels, tuple(runs), tuple(options))
    streamed = evaluate("stream", qrels, runs, *options, jobs=None)
    assert streamed.exit_code == 0, streamed.stderr
    assert streamed.stdout_bytes == stdout
    assert streamed.stderr == stderr
    return stdout


def small_collection(tmp_path, queries: int = 8, depth: int = 6) -> tuple[str, str]:
    """Qrels and one run of ``queries`` queries ``q00``.. with ``depth`` judged (grades 0, 1, 2) and
    retrieved documents each, the run in the qrels' order: one line is about 20 bytes."""
    qrels = write_qrels(tmp_path / "qrels", {f"q{q:02d}": {f"d{q}-{d}": d % 3 for d in range(depth)}
                                             for q in range(queries)})
    run = write_run(tmp_path / "run", {f"q{q:02d}": {f"d{q}-{d}": float(depth - d) for d in range(depth)}
                                       for q in range(queries)})
    return qrels, run


# --- 1. byte identity on robust03 ---------------------------------------------------------------------


def test_robust03_stream_writes_the_bytes_of_memory(robust03, chunks):
    """Default measures, per-query lines, the default block size: the stream engine's bytes are the
    memory engine's (and it did stream)."""
    qrels, runs = robust03
    output = assert_stream_is_memory(qrels, runs, "-q")
    assert chunks and chunks[-1] >= 1
    assert output.count(b"\n") == 100 * (3 + 3) + 3 + 3  # per query and summary: 3 pairs, 3 runs


def test_robust03_default_measures_in_many_chunks(robust03, chunks, monkeypatch):
    """Blocks of 4 KiB: the qrels and runs are read in hundreds of blocks and evaluated in one chunk
    per query, with the bytes of memory (invrpp and dcgrpp once differed in the last bit on queries
    436, 605, ...: :func:`test_weighted_rpp_of_a_query_does_not_depend_on_the_queries_beside_it`)."""
    monkeypatch.setattr(source, "BLOCK_BYTES", 4096)
    qrels, runs = robust03
    stdout, stderr = memory_output(qrels, tuple(runs), ("-q",))
    streamed = evaluate("stream", qrels, runs, "-q", jobs=None)
    assert streamed.exit_code == 0 and streamed.stderr == stderr
    assert chunks[-1] > 50
    assert streamed.stdout_bytes == stdout



MANY_CHUNK_OPTIONS = {
    "defaults": [],
    "ties range": ["--ties", "range"],
    "missing queries skipped": ["--missing-queries", "skip"],
    "median summary": ["--summary", "median"],
    "mean, gini and q10 summaries": ["--summary", "mean", "--summary", "gini", "--summary", "q10"],
    "judged measures": ["-m", "bpref,infap,judged@10,unj@10,num_nonrel_judged_ret"],
    "judged only (-J)": ["-J", "-m", "ap,bpref,ndcg,rpp,lexiprecision"],
    "topk 10": ["--topk", "10"],
    "tsv": ["--format", "tsv"],
    "binary relevance, 57 queries dropped": ["-b", "2"],
    "table with a baseline": ["--format", "markdown", "--baseline", "humR03dc"],
    "relevance level 2": ["-l", "2"],
    "empty queries kept, floor 2": ["--empty-queries", "keep", "-f", "2"],
}


@pytest.mark.parametrize("case", list(MANY_CHUNK_OPTIONS))
def test_robust03_options_in_many_chunks(robust03, chunks, monkeypatch, case):
    """Blocks of 64 KiB (from 30 to 90 chunks) under each option: the bytes and notes of memory
    (``-l 2`` and ``--empty-queries keep -f 2`` have chunks without a relevant document)."""
    options = MANY_CHUNK_OPTIONS[case]
    if "--format" not in options:
        options = ["-q", *options]
    monkeypatch.setattr(source, "BLOCK_BYTES", 1 << 16)
    qrels, runs = robust03
    assert_stream_is_memory(qrels, runs, *options)
    assert chunks[-1] > 30


def test_robust03_ties_expected_at_the_default_block_size(robust03, chunks):
    """``--ties expected`` at the default block size (8 MiB: every file is one block, and the last
    query a chunk of its own): the bytes of memory (rpp, invrpp and dcgrpp once differed in the last
    bits on queries 649 and 650)."""
    qrels, runs = robust03
    assert_stream_is_memory(qrels, runs, "-q", "-m", "rpp,invrpp,dcgrpp", "--ties", "expected", "--seed", "3")
    assert chunks[-1] >= 2


# --- 2. random collections -----------------------------------------------------------------------------


def _scored(rng, docs):
    """Half of the runs tie a lot (integer scores 0..3), half have rounded normal scores."""
    if rng.random() < 0.5:
        return docs, rng.integers(0, 4, size=len(docs)).astype(float)
    return docs, np.round(rng.normal(size=len(docs)), 2)


def random_collection(folder, seed: int) -> tuple[str, list[str]]:
    """A small random collection in ``folder``: 2 to 8 queries judged with grades 0, 1 and 2 (so
    some have no relevant document), and conftest's random runs (queries missing, the foreign query
    ``999`` at the end, ties) in the qrels' order, with up to six more lines inserted anywhere: lines
    of foreign queries and nan-scored lines of the query they follow."""
    rng = np.random.default_rng(seed)
    queries = [f"q{q}" for q in range(int(rng.integers(2, 9)))]
    judgments = {qid: {f"D{qid}-{d}": int(g) for d, g in enumerate(rng.choice([0, 0, 1, 1, 2],
                                                                              size=int(rng.integers(1, 12))))}
                 for qid in queries}
    qrels = write_qrels(folder / "qrels", judgments)
    runs = []
    for number, scores in enumerate(random_runs(rng, queries, 14, 14, _scored)):
        path = folder / f"run{number}"
        write_run(path, scores)
        lines = path.read_text().splitlines()
        for _ in range(int(rng.integers(0, 7))):
            at = int(rng.integers(0, len(lines) + 1))
            if rng.random() < 0.5:
                lines.insert(at, f"zz{at} Q0 X 1 1.0 t")
            else:
                qid = lines[at - 1].split()[0] if at else "q0"
                lines.insert(at, f"{qid} Q0 NAN{at} 1 nan t")
        runs.append(write_text(path, lines))
    return qrels, runs


RANDOM_OPTIONS = [[], ["--missing-queries", "skip"], ["--ties", "range"],
                  ["-J", "-m", "ap,bpref,infap,ndcg,rpp"], ["--topk", "3", "--summary", "median"]]


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), block_bytes=st.integers(16, 128), options=st.sampled_from(RANDOM_OPTIONS))
def test_random_collections_stream_as_in_memory(tmp_path_factory, seed, block_bytes, options):
    """Random small collections (queries missing from a run, foreign queries anywhere, queries of the
    qrels without a relevant document, nan scores, tied scores) read in blocks of 16 to 128 bytes: the
    stdout and the stderr notes of memory, default measures, under a few options. Not ``--empty-queries
    keep``, which crashes (:func:`test_a_chunk_without_a_relevant_document`)."""
    qrels, runs = random_collection(tmp_path_factory.mktemp("random"), seed)
    memory = evaluate("memory", qrels, runs, "-q", *options)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source, "BLOCK_BYTES", block_bytes)
        streamed = evaluate("stream", qrels, runs, "-q", *options)
    assert (streamed.exit_code, streamed.stderr) == (memory.exit_code, memory.stderr)
    assert streamed.stdout_bytes == memory.stdout_bytes


def test_random_collection_notes_are_those_of_memory(tmp_path, monkeypatch):
    """One random collection whose notes are all there (a dropped query, missing queries, foreign
    queries): a check that the property above compares notes that exist."""
    qrels, runs = random_collection(tmp_path, 5)
    memory = evaluate("memory", qrels, runs, "-q")
    monkeypatch.setattr(source, "BLOCK_BYTES", 32)
    streamed = evaluate("stream", qrels, runs, "-q")
    assert streamed.stderr == memory.stderr
    assert "without relevant documents" in memory.stderr
    assert "queries missing" in memory.stderr
    assert "not in the qrels, ignored" in memory.stderr
    assert streamed.stdout_bytes == memory.stdout_bytes


# --- 3. falling back to memory ----------------------------------------------------------------------


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_run_out_of_the_qrels_order_is_evaluated_in_memory(tmp_path, monkeypatch, jobs):
    """Qrels q1, q2, q3 and a run listing q3 then q1, in blocks of 16 bytes (chunks written, held,
    before the disorder is read): exit 0, the file written is memory's, and one more note, naming the
    run and the line of the first query out of order (read here, or by a reader process)."""
    qrels = write_qrels(tmp_path / "qrels", {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1, "e": 2}})
    ordered = write_run(tmp_path / "ordered", {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}, "q3": {"e": 3.0}})
    disordered = write_run(tmp_path / "disordered", {"q3": {"d": 2.0, "e": 1.0}, "q1": {"b": 2.0, "a": 1.0}})
    memory = evaluate("memory", qrels, [ordered, disordered], "-q")
    monkeypatch.setattr(source, "BLOCK_BYTES", 16)
    output = tmp_path / "out.jsonl"
    streamed = evaluate("stream", qrels, [ordered, disordered], "-q", "-o", output, jobs=jobs)
    assert streamed.exit_code == 0, streamed.stderr
    assert streamed.stdout == ""
    assert output.read_bytes() == memory.stdout_bytes
    note = f"prefeval: note: {disordered}:3: query 'q1' comes after a query that follows it in the qrels: " \
           + FALLBACK_NOTE
    assert streamed.stderr.splitlines() == [note, *memory.stderr.splitlines()]
    assert "run disordered: 1 of 3 queries missing" in memory.stderr


def test_auto_streams_where_streaming_is_estimated_faster(tmp_path, monkeypatch, chunks):
    """``--engine auto`` (the default) reads the inputs in memory where that is estimated faster (no
    chunk, no note), and streams them where streaming is (:mod:`prefeval.engine.costs`), so falls back
    as ``stream`` does; the bytes are memory's."""
    from prefeval.engine import costs

    qrels = write_qrels(tmp_path / "qrels", {"q1": {"a": 1}, "q2": {"b": 1}})
    ordered = write_run(tmp_path / "ordered", {"q1": {"a": 1.0}, "q2": {"b": 1.0}})
    disordered = write_run(tmp_path / "disordered", {"q2": {"b": 1.0}, "q1": {"a": 1.0}})
    memory = evaluate("memory", qrels, [ordered, disordered], "-q")
    auto = run_cli("eval", "-q", "-R", qrels, ordered, disordered)
    assert (auto.exit_code, auto.stderr, chunks) == (0, "", [])
    assert auto.stdout_bytes == memory.stdout_bytes
    monkeypatch.setattr(costs, "STREAM_START", -1.0)  # streaming estimated cheaper than anything
    auto = run_cli("eval", "-q", "-R", qrels, ordered, disordered)
    assert auto.exit_code == 0 and len(chunks) == 1  # streaming began
    assert auto.stdout_bytes == memory.stdout_bytes
    assert auto.stderr == f"prefeval: note: {disordered}:2: query 'q1' comes after a query that follows it in the " \
                          f"qrels: {FALLBACK_NOTE}\n"


def test_auto_estimates_from_sizes_processes_and_the_output(tmp_path, monkeypatch):
    """The estimates grow with the bytes (a gzip file's as its trailer records them), ``auto`` reads a
    small collection in memory, and streams one that memory is not estimated to hold; per-query lines
    make streaming, whose main process writes them alone, comparatively dearer."""
    import gzip

    from prefeval.engine import costs

    text = b"q1 Q0 d 1 1.0 t\n" * 1000
    (tmp_path / "plain").write_bytes(text)
    (tmp_path / "packed").write_bytes(gzip.compress(text))
    assert costs.read_size(tmp_path / "plain") == costs.read_size(tmp_path / "packed") == len(text)
    small = costs.InputShape(10_000, (100_000, 100_000), 2)
    large = costs.InputShape(40 << 20, (400 << 20, 400 << 20), 2)
    assert costs.costs(small, True)["memory"] < costs.costs(small, True)["stream"]
    for shape in (small, large):
        per_query, summary = costs.costs(shape, True), costs.costs(shape, False)
        assert per_query["stream"] - summary["stream"] >= per_query["memory"] - summary["memory"] > 0
    assert costs.memory_fits(large, available=16 << 30) and not costs.memory_fits(large, available=4 << 30)
    monkeypatch.setattr(costs, "available_memory", lambda: 4 << 30)
    assert costs.costs(large, True)["memory"] == float("inf") > costs.costs(large, True)["stream"]


def test_qrels_not_grouped_by_query_are_read_in_memory(tmp_path, monkeypatch, chunks):
    """Qrels whose query q1 has lines before and after q2's (in one block, and across blocks): the
    collection is read in memory, with memory's output and notes (none about the fallback)."""
    qrels = write_text(tmp_path / "qrels", ["q1 0 a 1", "q2 0 c 1", "q1 0 b 0", "q3 0 d 1", "q3 0 e 2", "q2 0 f 2"])
    run = write_run(tmp_path / "run", {"q1": {"a": 2.0, "b": 1.0}, "q2": {"f": 1.0, "c": 2.0}, "q3": {"e": 3.0}})
    memory = evaluate("memory", qrels, [run], "-q")
    for block_bytes in (1 << 24, 16):
        monkeypatch.setattr(source, "BLOCK_BYTES", block_bytes)
        streamed = evaluate("stream", qrels, [run], "-q")
        assert (streamed.exit_code, streamed.stderr) == (0, memory.stderr)
        assert streamed.stdout_bytes == memory.stdout_bytes
    assert chunks == []  # never streamed
    assert streaming.index_qrels(qrels) is None


def test_key_collisions_read_alike_in_memory_and_streamed(tmp_path, monkeypatch):
    """Ids are matched by 64-bit keys of their bytes (:mod:`prefeval.io.fields`), here made to
    collide (zz keyed as q1, q3 as q2). Both engines read a run's zz as q1, wherever its lines are,
    and the qrels' q3 as q2 (the query named by its first line), so they write the same bytes."""
    real_keys = fields.byte_keys

    def key_of(text: bytes) -> int:
        return int(real_keys(np.frombuffer(text + bytes(8), np.uint8), np.array([0]), np.array([len(text)]))[0])

    twins = {key_of(b"zz"): key_of(b"q1"), key_of(b"q3"): key_of(b"q2")}

    def colliding(buffer, starts, lengths):
        keys = real_keys(buffer, starts, lengths)
        for key, twin in twins.items():
            keys[keys == np.uint64(key)] = np.uint64(twin)
        return keys

    monkeypatch.setattr(fields, "byte_keys", colliding)
    monkeypatch.setattr(source, "BLOCK_BYTES", 32)
    lines = [f"q{q} Q0 d{q}-{d} {d} {9 - d} t" for q in range(4) for d in range(4)]
    beside = write_text(tmp_path / "beside", lines[:8] + ["zz Q0 dz 1 50 t"] + lines[8:])
    four = write_qrels(tmp_path / "four", {f"q{q}": {f"d{q}-{d}": d % 3 for d in range(4)} for q in range(4)})
    assert streaming.index_qrels(four).num_queries == 3  # q2 and q3 read as one query
    memory = evaluate("memory", four, [beside], "-q")
    assert memory.exit_code == 0 and memory.stderr == ""
    assert {line["qid"] for line in map(orjson.loads, memory.stdout.splitlines())} == {"q0", "q1", "q2", "all"}
    streamed = evaluate("stream", four, [beside], "-q")
    assert (streamed.stdout_bytes, streamed.stderr) == (memory.stdout_bytes, memory.stderr)

    three = write_qrels(tmp_path / "three", {f"q{q}": {f"d{q}-{d}": d % 3 for d in range(4)} for q in range(3)})
    memory = evaluate("memory", three, [beside], "-q")
    assert memory.exit_code == 0
    assert memory.stderr == ""  # the run's q3 reads as q2 (and zz as q1): no query is foreign
    streamed = evaluate("stream", three, [beside], "-q")
    assert (streamed.stdout_bytes, streamed.stderr) == (memory.stdout_bytes, memory.stderr)


# --- 4. errors in later blocks ----------------------------------------------------------------------


def _line_of_a_later_block(path: str, line: int) -> None:
    """``line`` of ``path`` is read in a block other than the first (the test reaches a later block)."""
    starts = [first for _, first in read_blocks(path)]
    assert starts[0] == 1 and len(starts) > 5
    assert max(first for first in starts if first <= line) > 1


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("which, bad, fragment", [
    ("run", "q09 Q0 x 1", "expected at least 5 fields"),
    ("run", "q09 Q0 x 1 high t", "score 'high' is not a number"),
    ("qrels", "q09 0 x", "expected 4 fields"),
    ("qrels", "q09 0 x high", "grade 'high' is not a number"),
])
def test_a_bad_line_in_a_later_block_is_named_by_its_line(tmp_path, monkeypatch, which, bad, fragment, jobs):
    """Blocks of 64 bytes; line 57 of the run (or the qrels) is malformed: one line on stderr naming
    ``FILE:57``, exit 1, nothing on stdout, as memory says it; read here (``--jobs 1``) or in a
    reader process, whence the error comes back whole."""
    qrels, run = small_collection(tmp_path, queries=10)
    path = run if which == "run" else qrels
    lines = open(path).read().splitlines()
    lines[56] = bad
    write_text(tmp_path / which, lines)
    memory = evaluate("memory", qrels, [run], "-q")
    monkeypatch.setattr(source, "BLOCK_BYTES", 64)
    _line_of_a_later_block(path, 57)
    streamed = evaluate("stream", qrels, [run], "-q", jobs=jobs)
    message = assert_one_line_error(streamed, 1, fragment)
    assert message.startswith(f"{path}:57: ")
    assert streamed.stderr == memory.stderr


@pytest.mark.parametrize("first, second", [(40, 41), (37, 42)])
def test_a_document_twice_names_both_lines(tmp_path, monkeypatch, first, second):
    """Blocks of 16 bytes (the two lines in different blocks): a document listed twice for a query
    names the second line and the first, in memory's words."""
    qrels, run = small_collection(tmp_path, queries=10)
    lines = open(run).read().splitlines()
    lines[second - 1] = lines[first - 1]
    write_text(tmp_path / "run", lines)
    memory = evaluate("memory", qrels, [run], "-q")
    monkeypatch.setattr(source, "BLOCK_BYTES", 16)
    _line_of_a_later_block(run, first)
    streamed = evaluate("stream", qrels, [run], "-q")
    message = assert_one_line_error(streamed, 1, f"(first on line {first})")
    assert message.startswith(f"{run}:{second}: document 'd6-")
    assert streamed.stderr == memory.stderr


@pytest.mark.parametrize("qrels_lines, run_lines, fragment", [
    (None, ["# nothing here", ""], "no run lines"),
    (None, ["z1 Q0 a 1 1 t", "z2 Q0 b 1 1 t"], "no query id of this run is in the qrels"),
    (["q05 0 a 0", "q06 0 b 0"], None, "no query has a relevant document"),
    (["q05 0 a 1", "all 0 b 1"], None, "a query is named 'all'"),
])
def test_whole_file_errors_are_those_of_memory(tmp_path, monkeypatch, qrels_lines, run_lines, fragment):
    """Errors about a whole file (found at its end, or on a line of a later block), streamed in
    blocks of 16 bytes: memory's message, one line."""
    qrels, run = small_collection(tmp_path, queries=3)
    if qrels_lines:
        write_text(tmp_path / "qrels", [f"q{q:02d} 0 k{q} 0" for q in range(5)] + qrels_lines)
    if run_lines:
        write_text(tmp_path / "run", run_lines)
    memory = evaluate("memory", qrels, [run])
    monkeypatch.setattr(source, "BLOCK_BYTES", 16)
    if qrels_lines:  # the stream's own reading of the qrels finds it
        with pytest.raises(InputError, match=fragment):
            streaming.index_qrels(qrels)
    streamed = evaluate("stream", qrels, [run])
    assert_one_line_error(streamed, 1, fragment)
    assert streamed.stderr == memory.stderr


# --- 5. gzip ------------------------------------------------------------------------------------------


def test_gzip_runs_and_qrels_stream_as_in_memory(tmp_path, monkeypatch, chunks):
    """A gzip qrels and gzip runs (one of two gzip members) in blocks of 50 bytes: memory's bytes."""
    qrels, run = small_collection(tmp_path, queries=12)
    text = open(run, "rb").read()
    (tmp_path / "qrels.gz").write_bytes(gzip.compress(open(qrels, "rb").read()))
    (tmp_path / "one.gz").write_bytes(gzip.compress(text))
    half = text.index(b"q06")
    (tmp_path / "two.gz").write_bytes(gzip.compress(text[:half]) + gzip.compress(text[half:]))
    gz_qrels, runs = str(tmp_path / "qrels.gz"), [str(tmp_path / "one.gz"), str(tmp_path / "two.gz"), run]
    memory = evaluate("memory", gz_qrels, runs, "-q")
    assert memory.exit_code == 0, memory.stderr
    monkeypatch.setattr(source, "BLOCK_BYTES", 50)
    streamed = evaluate("stream", gz_qrels, runs, "-q")
    assert (streamed.exit_code, streamed.stderr) == (0, memory.stderr)
    assert streamed.stdout_bytes == memory.stdout_bytes
    assert chunks == [12]


# --- 6. usage ---------------------------------------------------------------------------------------


def test_stream_from_stdin_is_a_usage_error_and_auto_reads_it_in_memory():
    """``--engine stream`` (or dask) cannot read a run from stdin: exit 2, one line; ``auto`` reads it
    in memory, with the bytes of the same run given as a file."""
    text = open(RUNS[0]).read()
    for engine in ("stream", "dask"):
        assert_one_line_error(evaluate(engine, QRELS, ["-"], "-q", input=text), 2,
                              f"--engine {engine} streams the collection", "standard input")
    auto = evaluate("auto", QRELS, ["-"], "-q", input=text)
    from_file = evaluate("memory", QRELS, [RUNS[0]], "-q")
    assert auto.exit_code == 0, auto.stderr
    assert auto.stdout.replace('"run":"stdin"', '"run":"bm25"') == from_file.stdout != ""
    assert auto.stderr == from_file.stderr


@pytest.mark.parametrize("options, fragment", [
    (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler names the Dask scheduler of --engine dask"),
    (["--engine", "stream", "--scheduler", "tcp://127.0.0.1:1"], "--scheduler names the Dask scheduler"),
    (["--engine", "stream", "--format", "trec_eval"], "trec_eval conventions list the queries in trec_eval's order"),
    (["--engine", "dask", "--conventions", "trec_eval"], "which needs the whole collection"),
    (["--engine", "stream", "--samples", "2"], "subsampling draws from the whole collection"),
    (["--engine", "dask", "--query_fraction", "0.5"], "subsampling draws from the whole collection"),
])
def test_what_cannot_be_streamed_is_a_usage_error(options, fragment):
    """Impossible requests of the engines: exit 2, one line, before any input is read."""
    assert_one_line_error(run_cli("eval", "-R", QRELS, *options, RUNS[0]), 2, fragment)


def test_stdin_qrels_cannot_be_streamed():
    """Qrels from stdin cannot be read twice: ``--engine stream`` refuses, ``auto`` reads in memory."""
    qrels = open(QRELS).read()
    assert_one_line_error(evaluate("stream", "-", [RUNS[0]], input=qrels), 2, "standard input")
    auto = evaluate("auto", "-", [RUNS[0]], "-q", input=qrels)
    assert auto.exit_code == 0 and auto.stdout.count("\n") > 0


@pytest.mark.parametrize("engine", ["memory", "stream", "dask"])
@pytest.mark.parametrize("case", ["missing run", "run is a directory", "missing qrels", "qrels is a directory"])
def test_a_file_that_cannot_be_read_is_named_whatever_the_engine(tmp_path, engine, case):
    """A missing file or a directory is the same one-line error, exit 1, under every engine: not a
    refusal to stream what is no file (issue 24, item 15)."""
    absent, folder = str(tmp_path / "nosuch"), str(tmp_path)
    qrels, run, message = {
        "missing run": (QRELS, absent, f"{absent}: no such file"),
        "run is a directory": (QRELS, folder, f"{folder}: is a directory, not a file"),
        "missing qrels": (absent, RUNS[0], f"{absent}: no such file"),
        "qrels is a directory": (folder, RUNS[0], f"{folder}: is a directory, not a file"),
    }[case]
    assert assert_one_line_error(evaluate(engine, qrels, [RUNS[1], run]), 1) == message


def test_many_runs_stream_with_few_file_descriptors(tmp_path):
    """300 runs (half of them gzip) under a limit of 64 open files: ``--engine stream`` (one reader, and two) writes the
    bytes of memory, where it stopped with "Too many open files" (issue 24, item 17); a streamed file
    is open only while a piece of it is read."""
    text = open(RUNS[0], "rb").read()
    runs = []
    for number in range(300):
        run = tmp_path / f"run{number:04d}"
        run.write_bytes(text if number % 2 else gzip.compress(text, mtime=0))
        runs.append(str(run))
    args = [sys.executable, "-m", "prefeval", "eval", "-m", "ap", "-R", QRELS, *runs]

    def few_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    memory = subprocess.run([*args, "--engine", "memory"], capture_output=True, preexec_fn=few_files, timeout=300)
    assert memory.returncode == 0, memory.stderr
    for jobs in ("1", "2"):
        streamed = subprocess.run([*args, "--engine", "stream", "--jobs", jobs], capture_output=True,
                                  preexec_fn=few_files, timeout=300)
        assert (streamed.returncode, streamed.stderr) == (0, memory.stderr)
        assert streamed.stdout == memory.stdout and memory.stdout.count(b"\n") == 300 * 299 // 2 + 300


# --- 7. Dask ------------------------------------------------------------------------------------------


def _prefeval_process(*args, block_bytes: int | None = None) -> subprocess.CompletedProcess:
    """``prefeval ARGS...`` in a process of its own (dask's worker processes are spawned), with
    ``BLOCK_BYTES`` set first when given."""
    code = "import sys\nfrom prefeval.cli import main\n"
    if block_bytes is not None:
        code += f"import prefeval.io.source\nprefeval.io.source.BLOCK_BYTES = {block_bytes}\n"
    code += "main(sys.argv[1:], prog_name='prefeval')\n"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, cwd=ROOT, timeout=300)


def test_dask_writes_the_bytes_of_memory(robust03):
    """``--engine dask`` on a local cluster of two workers (``--jobs 2``): memory's bytes and notes."""
    pytest.importorskip("distributed")
    qrels, runs = robust03
    stdout, stderr = memory_output(qrels, tuple(runs), ("-q",))
    dask = _prefeval_process("eval", "-q", "-R", qrels, "--engine", "dask", "--jobs", "2", *runs)
    assert dask.returncode == 0, dask.stderr
    assert dask.stdout == stdout
    assert dask.stderr.decode() == stderr


def test_dask_over_many_chunks_writes_the_bytes_of_stream(robust03):
    """Blocks of 1 MiB: more chunks than the four a two-worker cluster keeps in flight, taken back in
    query order: the bytes and notes of the stream engine on the same chunks."""
    pytest.importorskip("distributed")
    qrels, runs = robust03
    args = ["eval", "-q", "-R", qrels, "--jobs", "2", *runs]
    stream = _prefeval_process(*args, "--engine", "stream", block_bytes=1 << 20)
    dask = _prefeval_process(*args, "--engine", "dask", block_bytes=1 << 20)
    assert (stream.returncode, dask.returncode) == (0, 0), dask.stderr
    assert dask.stdout == stream.stdout and dask.stdout.count(b"\n") == 606
    assert dask.stderr == stream.stderr


def test_dask_in_process_writes_the_bytes_of_memory(robust03):
    """``--engine dask`` called in-process (the command line under click's test runner, as from the
    Python API): the evaluation sent to the workers holds no stream (a progress line looked up
    ``sys.stderr`` when made, which click's runner replaces with an object that cannot be pickled)."""
    pytest.importorskip("distributed")
    qrels, runs = robust03
    result = evaluate("dask", qrels, runs[:2], "-q", jobs=2)
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == memory_output(qrels, tuple(runs[:2]), ("-q",))[0]


# --- 8. FixedOrderSum ---------------------------------------------------------------------------------


def _random_split(rng, width: int) -> list[int]:
    """Cut points 0 < ... < width of a random split of ``width`` columns (pieces of 1 to 1500)."""
    cuts, at = [0], 0
    while at < width:
        at = min(width, at + int(rng.integers(1, 1500)))
        cuts.append(at)
    return cuts


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 4), width=st.integers(0, 5000))
def test_fixed_order_sums_do_not_depend_on_the_split(seed, rows, width):
    """The same (rows, n) values added in two random column splits give bit-identical sums; up to
    :data:`SUM_BLOCK` columns, numpy's own sum of them."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(rows, width)) * 10.0 ** rng.integers(-8, 9, size=(rows, width))
    results = []
    for _ in range(2):
        total = FixedOrderSum(rows)
        cuts = _random_split(rng, width)
        for start, stop in zip(cuts, cuts[1:]):
            total.add(values[:, start:stop])
        results.append(total.result())
    assert results[0].tobytes() == results[1].tobytes()
    whole = FixedOrderSum(rows)
    whole.add(values)
    assert whole.result().tobytes() == results[0].tobytes()
    if width <= SUM_BLOCK:
        assert results[0].tobytes() == values.sum(axis=1).tobytes()


def test_fixed_order_sum_adds_block_sums_in_order():
    """Beyond :data:`SUM_BLOCK` columns the sum is that of the blocks of SUM_BLOCK columns, each summed
    by numpy, added one after the other (counted from the first column), which here differs from
    numpy's sum of all the columns."""
    rng = np.random.default_rng(0)
    values = rng.normal(size=(1, 3000)) * 10.0 ** rng.integers(-8, 9, size=(1, 3000))
    total = FixedOrderSum(1)
    for start, stop in [(0, 7), (7, 1500), (1500, 1500), (1500, 3000)]:
        total.add(values[:, start:stop])
    blocks = [values[:, start:start + SUM_BLOCK].sum(axis=1) for start in range(0, 3000, SUM_BLOCK)]
    expected = np.zeros(1) + blocks[0] + blocks[1] + blocks[2]
    assert total.result().tobytes() == expected.tobytes()
    assert expected.tobytes() != values.sum(axis=1).tobytes()


def test_fixed_order_sum_of_no_rows():
    """No rows (no pair of runs): the sums are an empty array, however many columns arrive. It once failed:
    ``reshape(0, -1, SUM_BLOCK)`` of an empty array raises ValueError once a whole block has arrived."""
    total = FixedOrderSum(0)
    total.add(np.zeros((0, SUM_BLOCK + 1)))
    assert total.result().shape == (0,)


# --- 9. read_blocks ---------------------------------------------------------------------------------


CONTENTS = {
    "lines": b"q1 0 a 1\nq1 0 b 0\n\n# a comment\nq2 0 c 2\n",
    "no final newline": b"q1 0 a 1\nq2 0 b 1",
    "a long line": b"q1 0 a 1\n" + b"x" * 5000 + b"\nq2 0 b 1\n",
    "crlf": b"q1 0 a 1\r\nq2 0 b 1\r\n",
    "empty": b"",
    "one newline": b"\n",
}


def _check_blocks(path: str, block_bytes: int) -> None:
    """read_blocks(path) concatenates to read_bytes(path); every block but the last ends a line, and
    each block's number is the line it starts on."""
    blocks = list(read_blocks(path, block_bytes))
    assert b"".join(block for block, _ in blocks) == read_bytes(path)
    assert all(block.endswith(b"\n") for block, _ in blocks[:-1])
    assert all(block for block, _ in blocks)
    line = 1
    for block, first in blocks:
        assert first == line
        line += block.count(b"\n")


@pytest.mark.parametrize("content", list(CONTENTS))
@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("block_bytes", [1, 7, 4096])
def test_read_blocks_gives_the_bytes_and_line_numbers(tmp_path, content, compressed, block_bytes):
    """Plain and gzip files, with and without a final newline, in blocks of 1, 7 and 4096 bytes."""
    data = CONTENTS[content]
    path = tmp_path / "file"
    path.write_bytes(gzip.compress(data) if compressed else data)
    _check_blocks(str(path), block_bytes)


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("block_bytes", [4, 7, 4096])
def test_read_blocks_drops_a_byte_order_mark(tmp_path, compressed, block_bytes):
    """A UTF-8 byte-order mark at the start is dropped, as read_bytes drops it (blocks of 4 bytes or more)."""
    data = source.UTF8_BOM + b"q1 0 a 1\nq2 0 b 1\n"
    path = tmp_path / "file"
    path.write_bytes(gzip.compress(data) if compressed else data)
    assert read_bytes(str(path)) == b"q1 0 a 1\nq2 0 b 1\n"
    _check_blocks(str(path), block_bytes)


@pytest.mark.parametrize("block_bytes", [1, 2, 3])
def test_read_blocks_drops_a_byte_order_mark_in_blocks_shorter_than_it(tmp_path, block_bytes):
    """Blocks of 1 to 3 bytes, the file starting with a byte-order mark: read_bytes' content. It once failed:
    with 1 or 2 bytes the mark is kept (the first read holds only part of it); with 3 the first read
    is the mark alone, empty once stripped, which read_blocks takes for the end of the file: nothing."""
    path = tmp_path / "file"
    path.write_bytes(source.UTF8_BOM + b"q1 0 a 1\nq2 0 b 1\n")
    assert b"".join(block for block, _ in read_blocks(str(path), block_bytes)) == b"q1 0 a 1\nq2 0 b 1\n"


@pytest.mark.parametrize("block_bytes", [7, 4096])
def test_read_blocks_of_truncated_gzip_is_an_input_error(tmp_path, block_bytes):
    """Gzip data cut short: the InputError of read_bytes, naming the file."""
    path = tmp_path / "run.gz"
    path.write_bytes(gzip.compress(b"q1 Q0 a 1 2.5 t\n" * 2000)[:80])
    with pytest.raises(InputError, match="truncated or corrupt gzip data") as error:
        list(read_blocks(str(path), block_bytes))
    assert error.value.source == str(path)
    with pytest.raises(InputError, match="truncated or corrupt gzip data"):
        read_bytes(str(path))


def test_read_blocks_of_a_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list(read_blocks(str(tmp_path / "absent")))


def test_read_blocks_of_a_file_replaced_while_it_is_read_is_an_input_error(tmp_path):
    """A streamed file is opened anew for each piece: another file put under its name meanwhile is an
    error naming it, not its content read on from the offset where the first ended."""
    path = tmp_path / "run"
    path.write_bytes(b"q1 Q0 a 1 2.5 t\n" * 1000)
    blocks = read_blocks(str(path), 4096)
    assert next(blocks)[1] == 1
    replacement = tmp_path / "replacement"
    replacement.write_bytes(b"q2 Q0 b 1 2.5 t\n" * 1000)
    replacement.replace(path)
    with pytest.raises(InputError, match="was replaced by another file while it was read") as error:
        list(blocks)
    assert error.value.source == str(path)


# --- bugs found: minimal inputs -------------------------------------------------------------------------


def _stream_and_memory(qrels: str, runs, *options, block_bytes: int = 64):
    """(memory, stream) results; the stream's files read in blocks of ``block_bytes``."""
    memory = evaluate("memory", qrels, runs, *options)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source, "BLOCK_BYTES", block_bytes)
        streamed = evaluate("stream", qrels, runs, *options)
    return memory, streamed


def _blocked_collection(folder, seed: int, big: int, small: int, grades, scores) -> tuple[str, list[str]]:
    """16 queries of ``big`` relevant documents but q08 (``small`` of them) and q09 (judged
    ``grades``), small enough that memory evaluates q08, q09 and q10 in one block of queries (at least
    eight blocks of about equal numbers of documents), where the stream has them in chunks of their
    own; three runs retrieving every judged document and 20 others, ``scores(rng, n)`` the scores."""
    rng = np.random.default_rng(seed)
    sizes = [big] * 8 + [small, len(grades)] + [big] * 6
    judgments, runs = {}, [{}, {}, {}]
    for q, size in enumerate(sizes):
        qid = f"q{q:02d}"
        judgments[qid] = {f"d{q}-{d}": (grades[d] if q == 9 else 1) for d in range(size)}
        for run in runs:
            docs = rng.permutation(size + 20)
            run[qid] = {f"d{q}-{d}": float(s) for d, s in zip(docs, scores(rng, len(docs)))}
    return (write_qrels(folder / "qrels", judgments),
            [write_run(folder / f"run{n}", run) for n, run in enumerate(runs)])


def test_weighted_rpp_of_a_query_does_not_depend_on_the_queries_beside_it(tmp_path):
    """invrpp and dcgrpp of a query judged with one grade: the same whether the query is evaluated
    beside a query of two grades (memory puts q08, q09 and q10 in one block of queries) or not (the
    stream, one chunk per query). It once failed in the last bit (e.g. dcgrpp of q08, run0 vs run1,
    -0.44793733409852104 in memory, -0.4479373340985211 streamed):
    ``RecallPairedPreference.compare`` (prefeval/measures/preferences.py) returns a level's T/N
    directly when every query of the block has one grade level (one segment per query), and
    ``(T/N · m) / m`` otherwise, which rounds differently; so per-query values depend on the block and
    chunk boundaries (also in memory, on ``BLOCK_ELEMENTS``)."""
    for seed in range(2):
        folder = tmp_path / str(seed)
        folder.mkdir()
        qrels, runs = _blocked_collection(folder, seed, 100, 20, [1, 2, 1, 2, 1], lambda rng, n: np.arange(n, 0, -1.0))
        memory, streamed = _stream_and_memory(qrels, runs, "-q", "-m", "invrpp,dcgrpp")
        assert streamed.exit_code == 0
        assert streamed.stdout_bytes == memory.stdout_bytes, seed


def test_expected_rpp_of_a_query_does_not_depend_on_the_queries_before_it(tmp_path):
    """``--ties expected`` rpp of a query with many ties: the same whether the query follows another
    in its block of queries (memory) or starts its chunk (stream). It once failed in the last bits (e.g. q09,
    0.10571088435374129 in memory, 0.10571088435374128 streamed): ``RankDistributions.of``
    (prefeval/ranking/ties.py) makes the cumulative probabilities of every tie group from one running
    sum over all elements of the block, less its value before the group, so their rounding depends on
    the elements before the group (extended precision narrows that, does not remove it)."""
    for seed in range(2):
        folder = tmp_path / str(seed)
        folder.mkdir()
        qrels, runs = _blocked_collection(folder, seed, 400, 50, [1] * 10, lambda rng, n: rng.integers(0, 3, size=n))
        memory, streamed = _stream_and_memory(qrels, runs, "-q", "-m", "rpp", "--ties", "expected", "--seed", "1",
                                              block_bytes=1024)
        assert streamed.exit_code == 0
        assert streamed.stdout_bytes == memory.stdout_bytes, seed


@pytest.mark.parametrize("measure", ["err", "ndcg_rel", "rndcg"])
def test_running_sum_measures_do_not_depend_on_the_queries_before(tmp_path, measure):
    """err, ndcg_rel and rndcg of the second of two queries: the same after the first query (memory)
    and alone in its chunk (stream). It once failed in the last bits for most random collections (e.g. err of
    q1 0.5384066423482761 in memory, 0.5384066423482762 streamed): ``product_of_earlier`` /
    ``_exclusive_segment_cumsum`` (prefeval/measures/shares.py), ``IdealList.running`` and
    ``_running_sum`` (prefeval/measures/gains.py) take one cumulative sum over every query of the
    table and subtract its value at the query's start, so a query's value depends on the queries
    before it in the table, which is a chunk when streaming."""
    differ = []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        judgments = {f"q{q}": {f"d{q}-{d}": int(g) for d, g in enumerate(rng.integers(0, 4, size=30))}
                     for q in range(2)}
        scores = {f"q{q}": {f"d{q}-{d}": float(30 - r) for r, d in enumerate(rng.permutation(30))} for q in range(2)}
        qrels = write_qrels(tmp_path / f"qrels{seed}", judgments)
        run = write_run(tmp_path / f"run{seed}", scores)
        memory, streamed = _stream_and_memory(qrels, [run], "-q", "-m", measure)
        if streamed.stdout_bytes != memory.stdout_bytes:
            differ.append(seed)
    assert differ == []


def test_pfound_uses_the_largest_grade_of_the_qrels(tmp_path):
    """pFound's pRel = grade / (the largest grade of the whole qrels): q2's only document, grade 1 at
    rank 1, scores 0.5 since q1 has a grade 2. It once failed: the stream evaluates q2 in a chunk of its own,
    whose largest grade is 1 (``_positions`` in prefeval/ranking/positions.py takes
    ``table.qrels.grades.max()`` of the chunk's table), and writes 1.0."""
    qrels = write_qrels(tmp_path / "qrels", {"q1": {"a": 2}, "q2": {"b": 1}})
    run = write_run(tmp_path / "run", {"q1": {"a": 1.0}, "q2": {"b": 1.0}})
    memory, streamed = _stream_and_memory(qrels, [run], "-q", "-m", "pfound", block_bytes=8)
    assert '{"qid":"q2","run":"run","sample":0,"type":"metric","pfound":0.5}' in memory.stdout
    assert streamed.stdout_bytes == memory.stdout_bytes


@pytest.mark.parametrize("options, note", [
    (["-l", "2"], "1 query (q2) without a document of grade >= 2"),
    (["--empty-queries", "keep"], None),
])
def test_a_chunk_without_a_relevant_document(tmp_path, options, note):
    """q2 has no document of grade 2 (``-l 2``), q3 no relevant document (kept by ``--empty-queries
    keep``): memory scores their binary measures 0 and their preferences ties. It once failed: the stream's
    chunk holding q2 (or q3) alone has no query with a relevant document (at the level), and
    ``_with_relevant`` (prefeval/evaluation.py) calls ``binary_positions`` on an empty selection of
    queries, whose ``_positions`` (prefeval/ranking/positions.py) raises "operands could not be
    broadcast together with shape (1,) (0,)" (``np.repeat(start, length)``, start [0], no length):
    exit 1 with a traceback. Any collection with such a query alone in a chunk, which small chunks
    make likely (robust03 with ``-l 2`` and 64 KiB blocks; random collections with ``--empty-queries
    keep``)."""
    qrels = write_qrels(tmp_path / "qrels", {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {"d": 0}})
    run = write_run(tmp_path / "run", {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}, "q3": {"d": 1.0}})
    other = write_run(tmp_path / "other", {"q2": {"c": 1.0}, "q3": {"d": 1.0}})
    memory, streamed = _stream_and_memory(qrels, [run, other], "-q", *options, block_bytes=8)
    assert memory.exit_code == 0 and (note is None or note in memory.stderr)
    assert (streamed.exit_code, streamed.stderr) == (0, memory.stderr)
    assert streamed.stdout_bytes == memory.stdout_bytes


@pytest.mark.parametrize("grades, options", [([1, 2], ["-l", "3"]), ([0, 0], ["--empty-queries", "keep"])])
def test_no_relevant_document_anywhere_in_memory(tmp_path, grades, options):
    """The same in memory, where no query has a relevant document (at the level): ``-l 3`` on grades
    1 and 2, or ``--empty-queries keep`` on grades 0 only, once crashed. The binary preferences are
    ties (the graded ones, under ``-l``, keep every positive grade)."""
    qrels = write_qrels(tmp_path / "qrels", {"q1": {"a": grades[0]}, "q2": {"c": grades[1]}})
    run = write_run(tmp_path / "run", {"q1": {"a": 2.0}, "q2": {"c": 1.0}})
    other = write_run(tmp_path / "other", {"q2": {"c": 1.0}})
    result = evaluate("memory", qrels, [run, other], "-q", *options)
    assert result.exit_code == 0, result.stderr
    summary = orjson.loads([line for line in result.stdout.splitlines() if '"qid":"all","runi"' in line][0])
    assert summary["lexirecall"] == summary["lexiprecision"] == 0.0
    if "--empty-queries" in options:
        assert summary["rpp"] == 0.0


def test_queries_dropped_late_in_the_qrels_are_noted(tmp_path):
    """1,010 queries with a relevant document, then two without: memory notes ``dropped 2 queries
    (z0, z1)``. It once failed: ``index_qrels`` (prefeval/ranking/streaming.py) keeps the text of the first
    HINT_QIDS + SHOWN (1,005) query ids only, so the dropped ids after them have no name, and
    ``note_dropped`` writes nothing without names: the stream loses the note (the count is known)."""
    qrels = write_text(tmp_path / "qrels", [f"q{q:04d} 0 d 1" for q in range(1010)] + ["z0 0 d 0", "z1 0 d 0"])
    run = write_text(tmp_path / "run", [f"q{q:04d} Q0 d 1 1 t" for q in range(1010)])
    memory, streamed = _stream_and_memory(qrels, [run], "-m", "ap", block_bytes=1 << 24)
    assert memory.stderr == f"prefeval: note: {qrels}: dropped 2 queries (z0, z1) without relevant documents\n"
    assert streamed.stderr == memory.stderr


def test_a_collection_streams_again_after_its_readers_took_the_query_index(monkeypatch, robust03):
    """With reader processes, the main process lets go of the query lookup (the readers hold it); a
    second pass indexes the qrels again and gives the same tables."""
    qrels, runs = robust03
    monkeypatch.setattr(source, "BLOCK_BYTES", 1 << 16)
    collection = StreamedCollection.open(qrels, runs, NO_RELEVANCE_OPTIONS, REFERENCE_CONVENTIONS, jobs=2)

    def passed() -> list[tuple[int, list[float]]]:
        return [(start, table.ranks.ravel().tolist()) for start, table in collection.tables()]

    first = passed()
    assert collection.index.sorted_hashes is None and collection.num_queries == 100
    assert len(first) > 5 and passed() == first


def test_dask_takes_large_results_in_pieces(robust03):
    """Results over ``FETCH_BYTES`` (here 16 KiB, where a chunk's lines are megabytes) stay on their
    worker and are taken piece by piece (:class:`prefeval.engine.dask.Held`): memory's bytes and notes."""
    pytest.importorskip("distributed")
    qrels, runs = robust03
    stdout, stderr = memory_output(qrels, tuple(runs[:3]), ("-q",))
    code = ("import sys\nimport prefeval.engine.dask\nprefeval.engine.dask.FETCH_BYTES = 1 << 14\n"
            "from prefeval.cli import main\nmain(sys.argv[1:], prog_name='prefeval')\n")
    dask = subprocess.run([sys.executable, "-c", code, "eval", "-q", "-R", qrels, "--engine", "dask", "--jobs", "2",
                           *runs[:3]], capture_output=True, cwd=ROOT, timeout=300)
    assert dask.returncode == 0, dask.stderr
    assert dask.stdout == stdout
    assert dask.stderr.decode() == stderr


def test_pieces_of_results_are_taken_once():
    """The pieces' bounds cover the results in order, each piece about the limit (one result at least);
    a piece taken is no longer held, and the last one taken drops the key (as a stop drops them all)."""
    from prefeval.engine import dask as engine

    results = [b"x" * 100] * 10 + [b"y" * 1000] + [b"z" * 10] * 3
    bounds = engine._pieces(results, 350)
    assert bounds[0][0] == 0 and bounds[-1][1] == len(results)
    assert all(stop == start for (_, stop), (start, _) in zip(bounds, bounds[1:]))
    assert (10, 11) in bounds  # a result larger than the limit is a piece alone
    engine._HELD["k"] = [results[start:stop] for start, stop in bounds]
    taken = [engine._take("k", index) for index in range(len(bounds))]
    assert [row for piece in taken for row in piece] == results and "k" not in engine._HELD
    engine._HELD["k2"] = [[1], [2]]
    assert engine._take("k2", 0) == [1] and engine._HELD["k2"] == [None, [2]]
    engine._drop("k2")
    assert "k2" not in engine._HELD
