"""The documentation's ``sh`` blocks that need a set-up the docs test cannot give a ``console`` block
(a shell's start-up file, a Dask scheduler), run here as shown (tests/test_docs.py's convention)."""

from __future__ import annotations

import subprocess

import pytest
from conftest import QRELS, ROOT, RUNS

from prefeval.engine.dask import SCHEDULER_HTTP_ADDRESS


def shell(command: str, environment: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=300)


def test_the_shell_completion_commands(shell_environment, tmp_path):
    """docs/shell.md: each line enables click's completion in its shell; bash's defines the completion
    function, zsh's and fish's write their scripts."""
    bash = shell('eval "$(_PREFEVAL_COMPLETE=bash_source prefeval)" && complete -p prefeval', shell_environment)
    assert bash.returncode == 0 and "-F _prefeval_completion prefeval" in bash.stdout, bash.stderr
    zsh = shell('echo "$(_PREFEVAL_COMPLETE=zsh_source prefeval)"', shell_environment)
    assert zsh.stdout.startswith("#compdef prefeval"), zsh.stdout[:200]
    fish_file = tmp_path / "prefeval.fish"
    fish = shell(f"_PREFEVAL_COMPLETE=fish_source prefeval > {fish_file}", shell_environment)
    assert fish.returncode == 0 and "complete --no-files --command prefeval" in fish_file.read_text()


def test_eval_on_a_dask_scheduler(shell_environment, tmp_path):
    """``eval --engine dask --scheduler ADDRESS`` on a running scheduler and worker (in process; the
    cluster of docs/scale-out.md, of separate processes, is tests/test_cluster.py's) writes the bytes
    of the default engine."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None,
                                  scheduler_kwargs={"dashboard_address": SCHEDULER_HTTP_ADDRESS}) as cluster:
        output = tmp_path / "prefs.jsonl"
        done = shell(f"prefeval eval -q -R {QRELS} {RUNS[0]} {RUNS[1]} --engine dask "
                     f"--scheduler {cluster.scheduler_address} -o {output}", shell_environment)
        assert done.returncode == 0, done.stderr
    alone = shell(f"prefeval eval -q -R {QRELS} {RUNS[0]} {RUNS[1]}", shell_environment)
    assert output.read_text() == alone.stdout
