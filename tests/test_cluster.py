"""A real Dask cluster: ``dask scheduler`` and two ``dask worker`` processes started as a user starts
them (:data:`COMMANDS`, which ``docs/scale-out.md`` shows in "On a cluster"), ``prefeval eval
--engine dask --scheduler ADDRESS`` evaluated through them (every worker reading its own partitions
of the files), the bytes checked against ``--engine memory``, and the processes stopped.

Skipped when dask.distributed is not installed (it is in the ``test`` extra).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, benchmark

pytest.importorskip("distributed")

USERS = 20_000
"""Users of the collection: 2 runs × 10 items, 12 MB, cut into 8 partitions or more."""
START_TIMEOUT = 120
COMMANDS = """\
dask scheduler --host 127.0.0.1 --port 0 --no-dashboard --scheduler-file scheduler.json
dask worker $ADDRESS --nthreads 1 --no-dashboard --name worker1
dask worker $ADDRESS --nthreads 1 --no-dashboard --name worker2
prefeval eval -q -R qrels.txt run0 run1 --engine dask --scheduler $ADDRESS -o prefs.jsonl
prefeval eval -q -R qrels.txt run0 run1 --engine dask --scheduler $ADDRESS --parts parts
""".splitlines()
"""What the test runs, as a user types it (``$ADDRESS``: the scheduler's, from ``scheduler.json``), in
the folder of the files (the scheduler and workers in a folder of their own)."""
DOCS = ROOT / "docs" / "scale-out.md"


def _argv(command: str, address: str = "") -> list[str]:
    """A line of :data:`COMMANDS` as it is run: ``dask`` the one beside this Python, ``prefeval`` this
    Python's ``-m prefeval``."""
    words = shlex.split(command.replace("$ADDRESS", address))
    return {"dask": [_dask()], "prefeval": [sys.executable, "-m", "prefeval"]}[words[0]] + words[1:]


def _dask() -> str:
    """The ``dask`` command installed beside this Python (or on the PATH)."""
    here = Path(sys.executable).parent / "dask"
    found = str(here) if here.exists() else shutil.which("dask")
    if found is None:
        pytest.skip("the dask command is not installed")
    return found


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler on 127.0.0.1 and two single-threaded workers, as the README starts them; yields the
    scheduler's address, and stops every process afterwards (SIGTERM, then SIGKILL)."""
    folder = tmp_path_factory.mktemp("cluster")
    scheduler_file = folder / "scheduler.json"
    logs = [open(folder / name, "wb") for name in ("scheduler.log", "worker1.log", "worker2.log")]
    processes = [subprocess.Popen(_argv(COMMANDS[0]), stdout=logs[0], stderr=logs[0], cwd=folder,
                                  start_new_session=True)]
    try:
        address = _address(scheduler_file, processes[0])
        for number in (1, 2):
            processes.append(subprocess.Popen(_argv(COMMANDS[number], address), stdout=logs[number],
                                              stderr=logs[number], cwd=folder, start_new_session=True))
        _wait_for_workers(address, 2)
        yield address
    finally:
        for process in reversed(processes):
            _stop(process)
        for log in logs:
            log.close()


def _address(scheduler_file: Path, scheduler: subprocess.Popen) -> str:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if scheduler.poll() is not None:
            pytest.fail(f"dask scheduler ended with {scheduler.returncode}")
        if scheduler_file.exists():
            try:
                return json.loads(scheduler_file.read_text())["address"]
            except (ValueError, KeyError):
                pass
        time.sleep(0.2)
    pytest.fail("dask scheduler did not start")


def _wait_for_workers(address: str, count: int) -> None:
    from distributed import Client

    with Client(address, timeout="60s") as client:
        client.wait_for_workers(count, timeout=START_TIMEOUT)


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the process's group (a worker's nanny and its worker process), SIGKILL after 30 s."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def collection(tmp_path_factory) -> tuple[str, list[str]]:
    """2 runs × 20,000 users × 10 items (``benchmarks/recommender.py``), named relative to their folder."""
    folder = tmp_path_factory.mktemp("recsys")
    return benchmark("recommender").write_recommender(str(folder), USERS)


def _prefeval(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "prefeval", *map(str, args)], capture_output=True, cwd=cwd or ROOT,
                          timeout=600)


def test_a_real_cluster_writes_the_bytes_of_memory(cluster, collection):
    """Through the scheduler, the files named by relative paths (the workers, started elsewhere, read
    them by absolute ones): memory's bytes and notes, as one file and as parts."""
    qrels, runs = collection
    folder = Path(qrels).parent
    assert [path.name for path in map(Path, (qrels, *runs))] == ["qrels.txt", "run0", "run1"]
    memory = _prefeval("eval", "-q", "-R", "qrels.txt", "--engine", "memory", "run0", "run1", cwd=folder)
    assert memory.returncode == 0, memory.stderr
    dask = subprocess.run(_argv(COMMANDS[3], cluster), capture_output=True, cwd=folder, timeout=600)
    assert dask.returncode == 0, dask.stderr
    assert (folder / "prefs.jsonl").read_bytes() == memory.stdout and dask.stderr == memory.stderr
    dask = subprocess.run(_argv(COMMANDS[4], cluster), capture_output=True, cwd=folder, timeout=600)
    assert dask.returncode == 0, dask.stderr
    files = sorted(os.listdir(folder / "parts"))
    assert len(files) >= 9 and files[-1] == "summary.jsonl"
    assert b"".join((folder / "parts" / name).read_bytes() for name in files) == memory.stdout


def test_the_docs_show_the_commands_run_here():
    """docs/scale-out.md's cluster block, under the comment that names this test's module, is :data:`COMMANDS`."""
    text = DOCS.read_text()
    marker = "<!-- run by tests/test_cluster.py::test_a_real_cluster_writes_the_bytes_of_memory -->\n```sh\n"
    assert marker in text
    block = text.split(marker, 1)[1].split("```", 1)[0]
    assert block.splitlines() == COMMANDS


def test_both_workers_evaluate_partitions(cluster, collection):
    """The partitions are shared out: each of the two workers ran some of them (the scheduler's record
    of the tasks it ran for any client)."""
    from distributed import Client, get_task_stream

    qrels, runs = collection
    with Client(cluster) as client, get_task_stream(client) as stream:
        dask = _prefeval("eval", "-R", qrels, "--engine", "dask", "--scheduler", cluster, *runs)
        assert dask.returncode == 0, dask.stderr
    workers = {entry["worker"] for entry in stream.data if "_chunk_kernel" in str(entry["key"])}
    assert len(workers) == 2, stream.data


def test_a_real_cluster_cuts_parquet_inputs_by_rows(cluster, tmp_path):
    """The collection as Parquet, a file per run and a directory of files per run
    (``benchmarks/recommender.py``), through the scheduler: the workers read their partitions' rows,
    and the bytes and notes are memory's."""
    pytest.importorskip("pyarrow")
    recommender = benchmark("recommender")
    for form in (recommender.PARQUET, recommender.PARTITIONED):
        folder = tmp_path / form
        folder.mkdir()
        qrels, runs = recommender.write_recommender(str(folder), USERS, form=form)
        memory = _prefeval("eval", "-q", "-R", qrels, "--engine", "memory", *runs)
        assert memory.returncode == 0, memory.stderr
        dask = _prefeval("eval", "-q", "-R", qrels, "--engine", "dask", "--scheduler", cluster, *runs)
        assert dask.returncode == 0, dask.stderr
        assert (dask.stdout, dask.stderr) == (memory.stdout, memory.stderr), form
