"""Freed memory kept in the process (prefeval.runtime.memory): a block freed is reused without page
faults, where glibc's default would hand it back and fault again; only where the C library is glibc."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

GLIBC = bool(getattr(os, "confstr", lambda name: None)("CS_GNU_LIBC_VERSION"))

FAULTS_OF_A_REUSED_BLOCK = """
import resource, numpy as np
from prefeval.runtime.memory import keep_freed_memory
if {keep}:
    assert keep_freed_memory()
first = np.ones(3 << 20, np.uint8)  # 3 MiB: mapped apart by glibc's default (over 128 KiB)
del first
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
second = np.ones(2 << 20, np.uint8)  # 2 MiB, written: 512 pages of 4 KiB unless reused
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def faults_of_a_reused_block(keep: bool) -> int:
    done = subprocess.run([sys.executable, "-c", FAULTS_OF_A_REUSED_BLOCK.format(keep=keep)],
                          capture_output=True, text=True, timeout=60, check=True)
    return int(done.stdout)


@pytest.mark.skipif(not GLIBC, reason="the thresholds are glibc's")
def test_a_freed_block_is_reused_without_faulting():
    assert faults_of_a_reused_block(keep=False) >= 400  # glibc's default: 512 fresh pages (and a few more)
    assert faults_of_a_reused_block(keep=True) < 100


def test_the_command_line_keeps_freed_memory_only_for_its_own_process(monkeypatch):
    """Called with arguments (a test, a program embedding prefeval), the command line leaves the
    process's memory settings alone."""
    from prefeval import cli

    calls = []
    monkeypatch.setattr(cli, "keep_freed_memory", lambda: calls.append(True))
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert calls == []
