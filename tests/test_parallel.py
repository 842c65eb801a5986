"""Work in forked processes gives exactly what sequential work gives."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLES, write_text

from prefeval import evaluation as evaluation_module
from prefeval.errors import InputError
from prefeval.evaluation import Evaluation
from prefeval.report.eval_lines import evaluation_lines
from prefeval.runtime.parallel import fork_map

QRELS = str(EXAMPLES / "qrels.txt")
RUNS = [str(EXAMPLES / "runs" / name) for name in ("bm25", "dense", "hybrid", "random")]


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
    one = b"".join(evaluation_lines(sequential, jobs=1))
    two = b"".join(evaluation_lines(parallel, jobs=2))
    assert one == two
    assert one.count(b"\n") == 2 * (5 * 10 + 6 + 4)  # 5 of 7 queries per sample


def test_a_bad_run_in_a_worker_is_reported(tmp_path):
    bad = write_text(tmp_path / "bad", ["q101 Q0 a 1 1.0 t", "q101 Q0 a 2 0.5 t"])
    with pytest.raises(InputError, match="appears twice") as caught:
        Evaluation.from_files(QRELS, [*RUNS, bad], jobs=2)
    assert (caught.value.source, caught.value.line) == (bad, 2)
