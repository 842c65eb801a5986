"""Work in forked processes gives exactly what sequential work gives."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import QRELS, RUNS, write_text

from prefeval.engine import evaluation as evaluation_module
from prefeval.engine.evaluation import Evaluation
from prefeval.errors import InputError, UsageError
from prefeval.report.eval_lines import evaluation_lines
from prefeval.runtime.parallel import WorkerDied, fork_map
from prefeval.runtime.signals import stopping_quietly


def test_fork_map_keeps_order_and_closures():
    offset = np.arange(5) * 10
    assert list(fork_map(lambda i: int(offset[i]) + i, range(5), jobs=2)) == [0, 11, 22, 33, 44]


def test_errors_in_workers_reach_the_caller_intact():
    def fail(i):
        if i == 3:
            raise InputError("some/file", "bad thing", 7)
        return i

    with pytest.raises(InputError) as caught:
        list(fork_map(fail, range(5), jobs=2))
    assert (caught.value.source, caught.value.message, caught.value.line) == ("some/file", "bad thing", 7)


def test_parallel_output_is_byte_identical(monkeypatch):
    monkeypatch.setattr(evaluation_module, "BLOCK_ELEMENTS", 200)  # many small blocks
    monkeypatch.setattr(evaluation_module, "SHARED_VALUES", 0)  # shared out however few
    options = dict(samples=2, query_fraction=0.8, label_fraction=0.9, seed=3)
    sequential = Evaluation.from_files(QRELS, RUNS, jobs=1, **options)
    parallel = Evaluation.from_files(QRELS, RUNS, jobs=2, **options)
    np.testing.assert_array_equal(sequential.table.ranks, parallel.table.ranks)
    one = b"".join(evaluation_lines(sequential))
    two = b"".join(evaluation_lines(parallel))
    assert one == two
    assert one.count(b"\n") == 2 * (5 * 10 + 6 + 4)  # 5 of 7 queries per sample


def test_a_small_sample_is_evaluated_in_one_process(monkeypatch):
    """Forking workers costs more than a small sample's blocks take: they are shared out only from
    SHARED_VALUES values on, and the lines are the same either way."""
    jobs_used = []

    def recording_fork_map(function, items, jobs):
        jobs_used.append(jobs)
        return fork_map(function, items, jobs)

    monkeypatch.setattr(evaluation_module, "fork_map", recording_fork_map)
    evaluation = Evaluation.from_files(QRELS, RUNS, jobs=2)
    assert evaluation.num_runs * 7 * len(evaluation.measures) < evaluation_module.SHARED_VALUES
    alone = b"".join(evaluation_lines(evaluation))
    assert jobs_used == [1]
    monkeypatch.setattr(evaluation_module, "SHARED_VALUES", 10 * 7 * len(evaluation.measures))  # 4 runs + 6 pairs
    assert b"".join(evaluation_lines(Evaluation.from_files(QRELS, RUNS, jobs=2))) == alone
    assert jobs_used == [1, 2]


def test_a_worker_that_dies_is_an_error_not_a_hang():
    def die(i):
        if i == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return i

    with pytest.raises(RuntimeError, match="ended unexpectedly"):
        list(fork_map(die, range(8), jobs=2))


def test_closing_the_map_early_stops_the_workers():
    results = fork_map(lambda i: i, range(100), jobs=2)
    assert [next(results), next(results)] == [0, 1]
    results.close()
    assert not multiprocessing.active_children()


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True])
def test_jobs_must_be_a_positive_integer(jobs):
    with pytest.raises(UsageError, match="jobs must be an integer of at least 1"):
        Evaluation.from_files(QRELS, RUNS, jobs=jobs)


def test_a_bad_run_in_a_worker_is_reported(tmp_path):
    bad = write_text(tmp_path / "bad", ["q101 Q0 a 1 1.0 t", "q101 Q0 a 2 0.5 t"])
    with pytest.raises(InputError, match="appears twice") as caught:
        Evaluation.from_files(QRELS, [*RUNS, bad], jobs=2)
    assert (caught.value.source, caught.value.line) == (bad, 2)


def test_a_killed_worker_is_named_in_one_line():
    def die(i):
        if i == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return i

    with pytest.raises(WorkerDied, match=r"^a worker process ended unexpectedly \(killed by SIGKILL, perhaps for "
                                         r"lack of memory\)$"):
        list(fork_map(die, range(4), jobs=2))


def test_workers_ignore_ctrl_c_and_die_on_sigterm_whatever_the_parent_does():
    def dispositions(i):
        return signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM), signal.pthread_sigmask(
            signal.SIG_BLOCK, [])

    with stopping_quietly():  # the command line's handlers, which the workers must not run
        seen = list(fork_map(dispositions, range(4), jobs=2))
    assert {(sigint, sigterm) for sigint, sigterm, _ in seen} == {(signal.SIG_IGN, signal.SIG_DFL)}
    assert all(not ({signal.SIGINT, signal.SIGTERM} & blocked) for _, _, blocked in seen)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
def test_workers_end_when_their_parent_is_killed(tmp_path):
    script = f"""
import os, time
from prefeval.runtime.parallel import WorkerDied, fork_map
from prefeval.runtime.signals import stopping_quietly

def work(i):
    open(os.path.join({str(tmp_path)!r}, f"worker-{{os.getpid()}}"), "w").close()
    time.sleep(0.5)
    return i

for _ in fork_map(work, range(100), jobs=2):
    pass
"""
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 30
    while len(os.listdir(tmp_path)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    parent.kill()
    parent.wait()
    workers = [int(name.split("-")[1]) for name in os.listdir(tmp_path)]
    assert len(workers) == 2
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{pid}") and "Z" not in _state_of(pid) for pid in workers):
        assert time.monotonic() < deadline, "the workers outlived their parent"
        time.sleep(0.05)


def _state_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def _side_work(value):
    if value is None:
        raise InputError("side.tsv", "a bad line", 3)
    return {"pid": os.getpid(), "values": np.arange(value)}


@pytest.mark.parametrize("fork", [True, False])
def test_background_work_gives_its_result_or_raises_its_error(fork):
    """Background: the result of make(), made in a forked process (or here, when asked for, without
    fork); its error raised where the result is asked for, every time."""
    from prefeval.runtime.parallel import Background

    background = Background(lambda: _side_work(70_000), fork=fork)
    result = background.result()
    assert result["values"].tolist() == list(range(70_000)) and background.result() is result
    assert (result["pid"] != os.getpid()) == fork
    failing = Background(lambda: _side_work(None), fork=fork)
    for _ in range(2):
        with pytest.raises(InputError, match="side.tsv:3: a bad line"):
            failing.result()


def test_background_work_never_asked_for_is_stopped():
    from prefeval.runtime.parallel import Background

    background = Background(lambda: time.sleep(60))
    process = background._served._process
    assert process.is_alive()
    background.close()
    assert not process.is_alive()


def test_side_inputs_read_in_the_background_give_the_same_lines_and_errors(tmp_path):
    """With several jobs the item measures' side inputs are read in a process of their own while the
    qrels are read: the same lines as in one process, and a bad side input the same error."""
    train = write_text(tmp_path / "train.tsv", ["user\titem", "u1\tDOC-101-001", "u2\tDOC-101-001", "u2\tDOC-102-003"])
    lines = [b"".join(evaluation_lines(Evaluation.from_files(QRELS, RUNS, ["arp@10", "epc@10", "ap"], jobs=jobs,
                                                              train=train)))
             for jobs in (1, 2)]
    assert lines[0] == lines[1] and b'"arp@10"' in lines[0]
    bad = write_text(tmp_path / "bad.tsv", ["user\titem", "u1\tDOC-101-001", "u2"])
    for jobs in (1, 2):
        with pytest.raises(InputError, match="bad.tsv:3: column 'item' is missing a value"):
            Evaluation.from_files(QRELS, RUNS, ["arp@10"], jobs=jobs, train=bad)
