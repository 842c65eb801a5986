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
