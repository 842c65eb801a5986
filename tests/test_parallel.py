"""Work in forked processes gives exactly what sequential work gives."""

from __future__ import annotations

import multiprocessing
import os
import signal

import numpy as np
import pytest
from conftest import QRELS, RUNS, write_text

from prefeval import evaluation as evaluation_module
from prefeval.errors import InputError, UsageError
from prefeval.evaluation import Evaluation
from prefeval.report.eval_lines import evaluation_lines
from prefeval.runtime.parallel import fork_map


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
    options = dict(samples=2, query_fraction=0.8, label_fraction=0.9, seed=3)
    sequential = Evaluation.from_files(QRELS, RUNS, jobs=1, **options)
    parallel = Evaluation.from_files(QRELS, RUNS, jobs=2, **options)
    np.testing.assert_array_equal(sequential.table.ranks, parallel.table.ranks)
    one = b"".join(evaluation_lines(sequential))
    two = b"".join(evaluation_lines(parallel))
    assert one == two
    assert one.count(b"\n") == 2 * (5 * 10 + 6 + 4)  # 5 of 7 queries per sample


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
