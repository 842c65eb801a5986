"""Hostile requests to the runtime: counts of draws, resamples and permutations far beyond what any
analysis needs, output that cannot be written, a Dask cluster beside another one, and values that are
not finite numbers. Each ends as the error contract says (:mod:`contract`) or writes what it should,
and never with a traceback, a Python warning, or ``null`` where a number belongs.

Signals under every engine are in ``test_signals.py``.
"""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from conftest import QRELS, RUNS

DASK_DASHBOARD_PORT = 8787


def prefeval_process(*args) -> subprocess.CompletedProcess:
    """``prefeval ARGS...`` in a process of its own (Dask's workers are spawned processes)."""
    return subprocess.run([sys.executable, "-m", "prefeval", *map(str, args)], capture_output=True, timeout=300)


@pytest.fixture
def dashboard_port_taken():
    """Port 8787 (Dask's dashboard) held by someone else, as by another cluster's dashboard; when it is
    taken already, it is taken."""
    with socket.socket() as holder:
        try:
            holder.bind(("127.0.0.1", DASK_DASHBOARD_PORT))
            holder.listen()
        except OSError:
            pass
        yield


def test_dask_starts_no_dashboard_and_says_nothing_when_its_port_is_taken(dashboard_port_taken):
    """``--engine dask`` warned "Port 8787 is already in use" (distributed's UserWarning) when another
    cluster had the dashboard's port: the local cluster starts without one, quietly."""
    pytest.importorskip("distributed")
    memory = prefeval_process("eval", "-R", QRELS, RUNS[0])
    dask = prefeval_process("eval", "--engine", "dask", "--jobs", "2", "-R", QRELS, RUNS[0])
    assert dask.returncode == 0, dask.stderr
    assert dask.stdout == memory.stdout and dask.stderr == memory.stderr
    assert b"arning" not in dask.stderr


def _frame_qrels():
    import pandas as pd

    return pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})


def _frame_run(scores):
    import pandas as pd

    return pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": scores},
                        index=pd.Index([7, 9]))


def _numpy_requests():
    """API calls given numpy numbers where a message quotes the value, and the value it must show."""
    import numpy as np

    import prefeval
    from prefeval.analyses.significance import compare_pairs
    from prefeval.measures.summaries import summarise
    from prefeval.report.plots.common import PlotRequest

    run = {"A": _frame_run([1.0, 0.5])}
    return {
        "seed": (lambda: prefeval.evaluate(_frame_qrels(), run, samples=2, query_fraction=0.5,
                                           seed=np.int64(-1)), "-1"),
        "samples": (lambda: prefeval.evaluate(_frame_qrels(), run, samples=np.int64(0)), "0"),
        "query_fraction": (lambda: prefeval.evaluate(_frame_qrels(), run, query_fraction=np.float64(1.5)), "1.5"),
        "jobs": (lambda: prefeval.evaluate(_frame_qrels(), run, jobs=np.int64(0)), "0"),
        "draws": (lambda: prefeval.evaluate(_frame_qrels(), run, ties="expected", draws=np.int64(1)), "1"),
        "relevance_level": (lambda: prefeval.evaluate(_frame_qrels(), run, relevance_level=np.float64(np.inf)),
                            "inf"),
        "alpha": (lambda: compare_pairs(np.zeros((1, 3)), alpha=np.float64(2.0)), "2.0"),
        "bootstrap": (lambda: compare_pairs(np.zeros((1, 3)), bootstrap=np.int64(0)), "0"),
        "gini": (lambda: summarise("gini", np.array([[-1.0], [2.0]])), "-1.0"),
        "dpi": (lambda: PlotRequest("x", (), None, dpi=np.float32(5.0)), "5.0"),
        "score row": (lambda: prefeval.evaluate(_frame_qrels(), {"A": _frame_run([1.0, "x"])}), "(row 9)"),
    }


@pytest.mark.parametrize("request_name", list(_numpy_requests()))
def test_messages_show_numbers_as_numbers(request_name):
    """A value given as a numpy number is quoted as the number it is: numpy 2 writes np.float64(-1.0)
    (the gini refusal showed it so, and every check of the API's numeric options)."""
    from prefeval.errors import InputError, UsageError

    call, shown = _numpy_requests()[request_name]
    with pytest.raises((UsageError, InputError)) as refused:
        call()
    message = str(refused.value)
    assert "np." not in message and "numpy" not in message, message
    assert shown in message, message
