"""The command line's process ends without taking the interpreter apart, and loses nothing by it."""

from __future__ import annotations

import subprocess
import sys

from conftest import QRELS, RUNS, run_cli


def ended_by(body: str) -> subprocess.CompletedProcess:
    """A fresh interpreter that runs ``body`` and then ``end_process``."""
    script = "import atexit, sys, threading, time\nfrom prefeval.runtime.ending import end_process\n" + body
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)


def test_exit_handlers_run_and_buffered_output_is_flushed():
    done = ended_by("atexit.register(lambda: print('handler'))\nsys.stdout.write('buffered, ')\nend_process(3)")
    assert (done.returncode, done.stdout, done.stderr) == (3, "buffered, handler\n", "")


def test_a_thread_that_is_not_a_daemon_is_waited_for():
    done = ended_by("threading.Thread(target=lambda: (time.sleep(0.2), print('finished'))).start()\nend_process(0)")
    assert (done.returncode, done.stdout) == (0, "finished\n")


def test_an_exit_code_that_is_not_a_number_ends_the_usual_way():
    done = ended_by("end_process('a message')")
    assert (done.returncode, done.stderr) == (1, "a message\n")


def test_the_command_line_in_its_own_process_writes_what_it_writes_in_process():
    args = ["eval", "-q", "-R", QRELS, *RUNS]
    done = subprocess.run([sys.executable, "-m", "prefeval", *args], capture_output=True, text=True, timeout=120)
    in_process = run_cli(*args)
    assert done.returncode == 0 and done.stdout == in_process.stdout and done.stderr == in_process.stderr
    assert done.stderr.count("prefeval: note: ") == 2 and done.stdout.count("\n") == 7 * (4 + 6) + 4 + 6
