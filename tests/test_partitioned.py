"""The partitioned reader (``eval --engine dask``, :mod:`prefeval.engine.partitioned`) and the parts
output (``eval --parts DIR``): every partition evaluated where it is read writes, merged, the bytes
and notes of ``--engine memory``; a bad line, or a run out of the qrels' order, is reported where
every engine reports it; what cannot be cut (gzip) is streamed; ``cat DIR/*`` is the single output.

The partitions are evaluated in this process here: ``--engine dask`` is made the partitioned reader
with the local executor (:func:`in_process`), and the partitions small (a summation block of 4
queries, so that a collection of 60 queries is cut into many partitions, and their sums are made of
whole blocks as on a large collection). A real cluster is in ``tests/test_cluster.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import QRELS, ROOT, RUNS, random_runs, run_cli, write_qrels, write_run, write_text
from contract import assert_one_line_error
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval import engine as engines
from prefeval.engine import partitioned, results
from prefeval.engine.partitioned import PartitionedCollection, _plan
from prefeval.engine.results import FixedOrderSum, SequentialSum
from prefeval.engine.streaming import index_qrels

OPTIONS = [
    ("-q",),
    ("-q", "--summary", "median", "--summary", "mean"),
    ("-q", "-l", "2"),
    ("-q", "--empty-queries", "keep"),
    ("-q", "-b", "2", "-m", "ap,ndcg@5,rpp,lexiprecision"),
    ("-q", "--ties", "expected", "--seed", "3", "-m", "ap,rpp,lexiprecision"),
    ("-q", "-J", "-m", "ap,bpref,p@5"),
    ("-q", "--topk", "3"),
    ("-q", "--missing-queries", "skip"),
    ("-q", "-m", "ap,alpha_ndcg@5,err_ia@5,strec@3,rpp_ia,worst_intent"),  # ad hoc qrels: each query one intent
    (),
]


@pytest.fixture
def in_process(monkeypatch) -> list[int]:
    """``--engine dask`` as the partitioned reader with the local executor, partitions of a few
    queries (a summation block of 4, at least 8 partitions); returns the numbers of partitions of
    the collections planned."""
    monkeypatch.setitem(engines.ENGINES, "dask", engines.Engine("dask", engines.PARTITIONED, engines.LOCAL_NAME, ""))
    monkeypatch.setattr(results, "SUM_BLOCK", 4)
    monkeypatch.setattr(partitioned, "PARTITION_BYTES", 1 << 10)
    planned: list[int] = []
    rest = partitioned._planned_rest

    def counting(first, request):
        partitions = rest(first, request)
        planned.append(len(partitions))
        return partitions

    monkeypatch.setattr(partitioned, "_planned_rest", counting)
    return planned


def evaluate(engine: str, qrels: str, runs, *options, **kwargs):
    return run_cli("eval", "-R", qrels, "--engine", engine, "--jobs", "1", *options, *runs, **kwargs)


def _collection(tmp_path, seed: int, queries: int = 60) -> tuple[str, list[str]]:
    """Qrels of ``queries`` queries (some without a relevant document, grades 0 to 3) and 1 to 3 random
    runs in the qrels' order (queries missing, a query the qrels lack, nan scores, tags)."""
    rng = np.random.default_rng(seed)
    qids = [f"q{n:03d}" for n in range(queries)]
    judgments = {}
    for qid in qids:
        docs = rng.choice(12, size=int(rng.integers(1, 8)), replace=False)
        grades = rng.integers(0, 4, size=len(docs)) if rng.random() > 0.1 else np.zeros(len(docs), dtype=int)
        judgments[qid] = {f"D{qid}-{d}": int(g) for d, g in zip(docs, grades)}
    qrels = write_qrels(tmp_path / "qrels", judgments)

    def scored(rng, docs):
        scores = np.round(rng.random(len(docs)), 1)
        scores[rng.random(len(docs)) < 0.05] = np.nan
        return docs, scores

    runs = []
    for number, run in enumerate(random_runs(rng, qids, 9, 14, scored)):
        ordered = {qid: run[qid] for qid in [*qids[:queries // 3], "999", *qids[queries // 3:]] if qid in run}
        runs.append(write_run(tmp_path / f"run{number}", ordered, tag=f"tag{number}"))
    return qrels, runs


@pytest.mark.parametrize("options", OPTIONS)
def test_partitions_write_the_bytes_and_notes_of_memory(tmp_path, in_process, options):
    """Many partitions of random collections, under every option that changes what a partition
    computes or notes: memory's stdout and stderr (and the streamed reader's, which partitions read)."""
    for seed in range(4):
        qrels, runs = _collection(tmp_path, seed)
        memory = evaluate("memory", qrels, runs, *options)
        assert memory.exit_code == 0, memory.stderr
        for engine in ("stream", "dask"):
            cut = evaluate(engine, qrels, runs, *options)
            assert cut.exit_code == 0, cut.stderr
            assert (cut.stdout_bytes, cut.stderr) == (memory.stdout_bytes, memory.stderr), engine
    assert min(in_process) >= 5


def test_the_partitions_do_not_change_the_bytes(tmp_path, in_process, monkeypatch):
    """One partition, 3, 8, 20: the same bytes each time (the same summation blocks)."""
    qrels, runs = _collection(tmp_path, 7, queries=90)
    outputs = set()
    monkeypatch.setattr(partitioned, "PARTITION_BYTES", 1 << 30)
    for count in (1, 3, 8, 20):
        monkeypatch.setattr(partitioned, "MIN_PARTITIONS", count)
        cut = evaluate("dask", qrels, runs, "-q")
        assert cut.exit_code == 0, cut.stderr
        outputs.add(cut.stdout_bytes)
    assert len(outputs) == 1 and in_process[0] == 1 and len(set(in_process)) == 4


def test_the_plan_cuts_every_file_at_the_same_query_boundaries(tmp_path):
    """Each partition's span of a file starts at a line start; its lines are those of its queries,
    the lines of a query the qrels lack or dropped going with the next kept query."""
    lines = ["q1 0 a 1", "q1 0 b 0", "q2 0 c 0", "q3 0 d 2", "q4 0 e 1", "q5 0 f 0", "q6 0 g 1", "q7 0 h 1"]
    qrels = write_text(tmp_path / "qrels", lines)  # q2, q5 dropped: kept q1 q3 q4 q6 q7 = 0..4
    run = write_text(tmp_path / "run", ["q1 Q0 a 1 1 t", "x Q0 a 1 1 t", "q3 Q0 d 1 1 t", "q4 Q0 e 1 1 t",
                                        "q5 Q0 z 1 1 t", "y Q0 a 1 1 t", "q6 Q0 g 1 1 t", "q7 Q0 h 1 1 t"])
    index = index_qrels(qrels)
    for block in (1, 2):
        partitions = _with_block(block, lambda: _plan(index, [qrels, run]))
        assert [p.first for p in partitions][0] == 0 and partitions[-1].stop == 5
        for path, spans in ((qrels, [p.qrels for p in partitions]), (run, [p.runs[0] for p in partitions])):
            data = open(path, "rb").read()
            assert spans[0][0] == 0 and spans[-1][1] == len(data)
            assert all(a[1] == b[0] and (b[0] == 0 or data[b[0] - 1:b[0]] == b"\n") for a, b in zip(spans, spans[1:]))
        if block == 1:
            texts = [open(run, "rb").read()[start:stop].decode() for start, stop in (p.runs[0] for p in partitions)]
            assert texts == ["q1 Q0 a 1 1 t\n", "x Q0 a 1 1 t\nq3 Q0 d 1 1 t\n", "q4 Q0 e 1 1 t\n",
                             "q5 Q0 z 1 1 t\ny Q0 a 1 1 t\nq6 Q0 g 1 1 t\n", "q7 Q0 h 1 1 t\n"]


class _OnDemand:
    """An executor that computes a handle's value when it is first asked for (as a cluster would
    have computed it meanwhile), noting which function's value was asked for, in order."""

    def __init__(self):
        self.asked: list[str] = []

    def submit(self, function, *args):
        return _Handle(self, function, args)

    def result(self, handle, function=None):
        value = handle.value()
        return value if function is None else function(value)


class _Handle:
    def __init__(self, executor: _OnDemand, function, args):
        self.executor, self.function, self.args, self.computed = executor, function, args, None

    def value(self):
        if self.computed is None:
            self.executor.asked.append(self.function.__name__)
            self.computed = (self.function(*(a.value() if isinstance(a, _Handle) else a for a in self.args)),)
        return self.computed[0]


@pytest.mark.parametrize("sent", [False, True])
def test_the_first_partition_is_handed_over_before_the_rest_is_planned(tmp_path, sent, monkeypatch):
    """The first part of the plan (the index, every partition's first query, the first partition's
    spans) is taken, the first partition handed over, and only then the rest of the plan, whose
    partitions are those of the plan made at once; where the first part was sent to another process
    (``sent``), its probers arrive empty and are made again, to the same partitions."""
    import pickle

    from prefeval.ranking.conventions import REFERENCE_CONVENTIONS
    from prefeval.ranking.options import NO_RELEVANCE_OPTIONS

    qrels, runs = _collection(tmp_path, 9, queries=90)
    made = []
    if sent:
        planned, plan = partitioned._planned, partitioned._plan

        def _planned(request):
            return pickle.loads(pickle.dumps(planned(request)))

        def counted_plan(*args):
            made.append(args)
            return plan(*args)

        monkeypatch.setattr(partitioned, "_planned", _planned)
        monkeypatch.setattr(partitioned, "_plan", counted_plan)
    executor = _OnDemand()
    expected = _with_block(4, lambda: _plan(index_qrels(qrels), [qrels, *runs]))
    collection = _with_block(4, lambda: PartitionedCollection.open(qrels, runs, NO_RELEVANCE_OPTIONS,
                                                                   REFERENCE_CONVENTIONS, executor=executor))
    [(_, _, chunks)] = collection.samples(None)
    first = next(chunks)
    assert executor.asked == ["_planned"] and first.partition == expected[0]
    rest = [chunk.partition for chunk in chunks]
    assert executor.asked == ["_planned", "_planned_rest"] and [first.partition, *rest] == expected
    assert len(expected) >= 8 and len(made) == sent  # probers made again only where they were sent


def _with_block(block: int, make):
    saved, saved_min = results.SUM_BLOCK, partitioned.MIN_PARTITIONS
    results.SUM_BLOCK, partitioned.MIN_PARTITIONS = block, 100
    try:
        return make()
    finally:
        results.SUM_BLOCK, partitioned.MIN_PARTITIONS = saved, saved_min


def test_a_run_out_of_order_falls_back_as_the_streamed_reader_does(tmp_path, in_process):
    """A run that lists a late query early: the note of ``--engine stream`` (the first line out of
    order, numbered in the file), then memory's bytes and notes."""
    qrels, runs = _collection(tmp_path, 11)
    lines = open(runs[0]).read().splitlines()
    relevant = {line.split()[0] for line in open(qrels) if float(line.split()[3]) > 0}
    late = next(line.split()[0] for line in reversed(lines) if line.split()[0] in relevant)  # not a dropped query,
    # whose lines may come anywhere
    moved = [line for line in lines if line.startswith(late + " ")]
    write_text(tmp_path / "run0", lines[:4] + moved + [line for line in lines[4:] if line not in moved])
    stream = evaluate("stream", qrels, runs, "-q")
    assert f"{runs[0]}:{5 + len(moved)}: query 'q001' comes after a query that follows it" in stream.stderr
    cut = evaluate("dask", qrels, runs, "-q")
    assert (cut.exit_code, cut.stdout_bytes, cut.stderr) == (0, stream.stdout_bytes, stream.stderr)


def test_a_bad_line_in_a_late_partition_is_reported_at_its_line_in_the_file(tmp_path, in_process):
    """A malformed line near the end of a run: the error of every engine, ``run:LINE``, exit 1, and
    nothing written."""
    qrels, runs = _collection(tmp_path, 12)
    lines = open(runs[0]).read().splitlines()
    lines[-3] = lines[-3].replace(" Q0 ", " Q0 x y z ")
    write_text(tmp_path / "run0", lines)
    memory = evaluate("memory", qrels, runs, "-q")
    cut = evaluate("dask", qrels, runs, "-q")
    message = assert_one_line_error(cut, 1, f"{runs[0]}:{len(lines) - 2}:")
    assert memory.stderr == f"prefeval: error: {message}\n"
    assert cut.stdout == ""


def test_gzip_files_are_streamed(tmp_path, in_process):
    """A gzip file cannot be read from its middle: the collection is streamed, with memory's bytes."""
    import gzip

    qrels, runs = _collection(tmp_path, 13)
    packed = tmp_path / "run0.gz"
    packed.write_bytes(gzip.compress(open(runs[0], "rb").read()))
    memory = evaluate("memory", qrels, [str(packed), *runs[1:]], "-q")
    cut = evaluate("dask", qrels, [str(packed), *runs[1:]], "-q")
    assert (cut.exit_code, cut.stdout_bytes, cut.stderr) == (0, memory.stdout_bytes, memory.stderr)
    assert in_process == []


def test_subtopic_qrels_are_read_whole(tmp_path, in_process):
    """Qrels judging a query on several subtopics (two iter values) are read in memory, as the streamed
    reader reads them: nothing is planned, and the bytes and notes are memory's."""
    qrels, runs = _collection(tmp_path, 19)
    lines = open(qrels).read().splitlines()
    late = len(lines) * 2 // 3
    qid, _, doc, _ = lines[late].split()
    lines[late + 1:late + 1] = [f"{qid} 1 {doc} 1", f"{qid} 2 {doc}-other 2"]  # one query, late, on 3 subtopics
    write_text(tmp_path / "qrels", lines)
    options = ("-q", "-m", "ap,alpha_ndcg@5,rpp_ia")
    memory = evaluate("memory", qrels, runs, *options)
    assert memory.exit_code == 0 and "1 of 51 queries judged on several subtopics" in memory.stderr, memory.stderr
    cut = evaluate("dask", qrels, runs, *options)
    assert (cut.exit_code, cut.stdout_bytes, cut.stderr) == (0, memory.stdout_bytes, memory.stderr)
    assert in_process == []


def test_judgments_of_other_kinds_are_refused_as_by_stream(tmp_path, in_process):
    """Preferences (``--rel-format prefs``) are read in memory: ``--engine dask``, like ``stream``, says so
    (exit 2) before reading anything; ``auto`` reads them in memory."""
    prefs = write_text(tmp_path / "prefs", ["q1 0 0 a 1", "q1 0 0 b 2", "q1 0 0 c 2"])
    run = write_text(tmp_path / "run", ["q1 Q0 a 1 3 r", "q1 Q0 b 2 2 r", "q1 Q0 c 3 1 r"])
    for engine in ("stream", "dask"):
        assert_one_line_error(evaluate(engine, prefs, [run], "--rel-format", "prefs", "-m", "prefs_simp"), 2,
                              f"--engine {engine} streams the collection, which it cannot do here: --rel-format "
                              "prefs is read in memory")
    auto = evaluate("auto", prefs, [run], "--rel-format", "prefs", "-m", "prefs_simp")
    assert auto.exit_code == 0 and auto.stdout == evaluate("memory", prefs, [run], "--rel-format", "prefs",
                                                            "-m", "prefs_simp").stdout
    assert in_process == []


@pytest.mark.filterwarnings("ignore::prefeval.runtime.notes.Note")
def test_relative_paths_are_read_as_absolute_ones(tmp_path, in_process, monkeypatch):
    """Workers run elsewhere: the partitions name the files by absolute paths (messages name them as given)."""
    qrels, runs = _collection(tmp_path, 14)
    monkeypatch.chdir(tmp_path)
    collection = PartitionedCollection.open("qrels", [os.path.basename(run) for run in runs],
                                            *_defaults())
    source = collection.for_workers()
    assert source.qrels == str(tmp_path / "qrels") and all(os.path.isabs(run) for run in source.runs)
    assert collection.index.source == "qrels"


def _defaults():
    from prefeval.ranking.conventions import REFERENCE_CONVENTIONS
    from prefeval.ranking.options import NO_RELEVANCE_OPTIONS

    return NO_RELEVANCE_OPTIONS, REFERENCE_CONVENTIONS


# --- parts ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["memory", "stream", "dask"])
def test_parts_concatenated_are_the_single_output(tmp_path, in_process, engine):
    """``--parts DIR``: part files then ``summary.jsonl``, whose concatenation in name order is the
    single output's bytes; a partitioned reader writes a part per partition."""
    qrels, runs = _collection(tmp_path, 15)
    single = evaluate("memory", qrels, runs, "-q")
    parts = tmp_path / "parts"
    result = evaluate(engine, qrels, runs, "-q", "--parts", str(parts))
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", single.stderr)
    names = sorted(os.listdir(parts))
    assert names[-1] == "summary.jsonl" and all(name.startswith("part-") for name in names[:-1])
    assert b"".join((parts / name).read_bytes() for name in names) == single.stdout_bytes
    if engine == "dask":
        assert len(names) - 1 == in_process[-1]
    assert [entry for entry in os.listdir(tmp_path) if entry.startswith(".parts")] == []


def test_parts_into_an_empty_directory_and_not_into_a_full_one(tmp_path, in_process):
    qrels, runs = _collection(tmp_path, 16)
    parts = tmp_path / "parts"
    parts.mkdir()
    assert evaluate("dask", qrels, runs, "--parts", str(parts)).exit_code == 0
    assert os.listdir(parts) == ["summary.jsonl"]  # no -q: no per-query line, no part
    assert_one_line_error(evaluate("dask", qrels, runs, "--parts", str(parts)), 2, "is not empty")


@pytest.mark.parametrize("options, fragment", [
    (["-o", "out.jsonl"], "give one or the other"),
    (["--format", "tsv"], "--parts writes JSON lines"),
    (["--samples", "2", "--seed", "1"], "one sample"),
    (["--parts", "missing/parts"], "there is no directory"),
])
def test_parts_refusals(tmp_path, options, fragment, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = options if options[0] == "--parts" else ["--parts", "parts", *options]
    assert_one_line_error(run_cli("eval", "-R", QRELS, *args, RUNS[0]), 2, fragment)
    assert os.listdir(tmp_path) == []


def test_parts_that_fail_leave_no_directory(tmp_path, in_process):
    """A bad line: an error, and neither the directory nor its staging directory is left."""
    qrels, runs = _collection(tmp_path, 17)
    lines = open(runs[0]).read().splitlines()
    lines[-1] = lines[-1].replace(" tag0", "x tag0")  # a score that is not a number
    write_text(tmp_path / "run0", lines)
    result = evaluate("dask", qrels, runs, "-q", "--parts", str(tmp_path / "parts"))
    assert_one_line_error(result, 1, f"{runs[0]}:{len(lines)}")
    assert not [entry for entry in os.listdir(tmp_path) if "parts" in entry]


def test_parts_of_a_stopped_command_leave_no_directory(tmp_path):
    """SIGTERM while the parts are written: nothing under the directory's name, no staging left."""
    qrels, runs = _collection(tmp_path, 18, queries=3000)
    code = "import sys\nfrom prefeval.cli import main\nmain(sys.argv[1:], prog_name='prefeval')\n"
    process = subprocess.Popen([sys.executable, "-c", code, "eval", "-q", "-R", qrels, "--engine", "stream",
                                "--parts", str(tmp_path / "parts"), *runs, *runs, *runs], cwd=ROOT,
                               stderr=subprocess.PIPE)
    try:
        process.wait(timeout=0.8)
    except subprocess.TimeoutExpired:
        process.terminate()
        process.wait(timeout=30)
    assert not [entry for entry in os.listdir(tmp_path) if "parts" in entry] or (tmp_path / "parts").is_dir() and \
        (tmp_path / "parts" / "summary.jsonl").exists()


# --- partial sums ----------------------------------------------------------------------------------


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 3), blocks=st.lists(st.integers(1, 4), max_size=5),
       tail=st.integers(0, 3000), sequential=st.booleans())
def test_partial_sums_merged_are_the_sums_added(seed, rows, blocks, tail, sequential):
    """Partitions of whole summation blocks (and a last one of any width), each summed partially in
    random pieces and merged in order: the bits of adding every column to one sum."""
    rng = np.random.default_rng(seed)
    widths = [count * results.SUM_BLOCK for count in blocks] + [tail]
    values = rng.normal(size=(rows, sum(widths))) * 10.0 ** rng.integers(-8, 9, size=(rows, sum(widths)))
    kind = SequentialSum if sequential else FixedOrderSum
    whole, merged = kind(rows), kind(rows)
    whole.add(values)
    start = 0
    for width in widths:
        partial = kind(rows, partial=True)
        at = start
        while at < start + width:
            step = int(rng.integers(1, 1500))
            partial.add(values[:, at:min(at + step, start + width)])
            at += step
        merged.merge(partial)
        start += width
    assert whole.result().tobytes() == merged.result().tobytes()
