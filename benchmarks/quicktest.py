"""trec_eval's own conformance test (its Makefile's ``quicktest``), run with ``prefeval trec_eval``.

    python benchmarks/quicktest.py --trec-eval-src /path/to/trec_eval [--prefeval "prefeval trec_eval"]

trec_eval's checkout has a folder ``test/`` of qrels, runs and expected outputs, and a Makefile whose
target ``quicktest`` runs ``./trec_eval ARGS | diff - test/out.test...`` for each of its command lines.
This script reads those command lines from the Makefile (so that they are trec_eval's, whatever its
version), runs each as ``prefeval trec_eval ARGS`` in the checkout, and compares the output with the
expected file byte for byte. It prints one line per command line, its number, PASS or FAIL (with
prefeval's exit code and first line of stderr, or the first line that differs) and the arguments,
then how many pass; it exits 0 when all pass, 1 otherwise.

trec_eval 10.0 has 15 such command lines; the five of preference judgments and judgment groups
(``-R prefs``, ``-R qrels_prefs``, ``-R qrels_jg``, numbers 9 to 13) need formats prefeval does not
read yet.
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

QUICKTEST = re.compile(r"^\t\./trec_eval\s+(?P<args>.*?)\s*\|\s*diff\s+-\s+(?P<expected>\S+)\s*$")
"""A command line of the ``quicktest`` target: ``./trec_eval ARGS | diff - EXPECTED``."""


class Command(NamedTuple):
    number: int
    args: list[str]
    expected: str


class Outcome(NamedTuple):
    command: Command
    passed: bool
    detail: str


def quicktest_commands(source: Path) -> list[Command]:
    """The command lines of the Makefile's ``quicktest`` target in ``source``, in order."""
    lines = (source / "Makefile").read_text().splitlines()
    start = next((place for place, line in enumerate(lines) if line.startswith("quicktest:")), None)
    if start is None:
        raise SystemExit(f"{source / 'Makefile'}: no quicktest target")
    commands = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        match = QUICKTEST.match(line)
        if match:
            commands.append(Command(len(commands) + 1, shlex.split(match["args"]), match["expected"]))
    return commands


def run(command: Command, source: Path, prefeval: list[str]) -> Outcome:
    """``prefeval ARGS`` in ``source``, compared with the expected output."""
    done = subprocess.run([*prefeval, *command.args], cwd=source, capture_output=True)
    expected = (source / command.expected).read_bytes()
    if done.stdout == expected and done.returncode == 0:
        return Outcome(command, True, "")
    if done.returncode != 0:
        first = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        return Outcome(command, False, f"exit code {done.returncode}: {''.join(first)}")
    ours, theirs = done.stdout.decode().splitlines(), expected.decode().splitlines()
    line = next((n for n, (a, b) in enumerate(zip(ours, theirs), 1) if a != b), min(len(ours), len(theirs)) + 1)
    return Outcome(command, False, f"line {line} differs ({len(ours)} lines, {command.expected} has {len(theirs)})")


def quicktest(source: Path, prefeval: list[str]) -> list[Outcome]:
    """Every command line of the quicktest, run with ``prefeval`` (a command and its first arguments)."""
    return [run(command, source, prefeval) for command in quicktest_commands(source)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval-src", type=Path, required=True,
                        help="a trec_eval checkout: its Makefile and its test/ folder")
    parser.add_argument("--prefeval", default=f"{shlex.quote(sys.executable)} -m prefeval trec_eval",
                        help="the command that takes trec_eval's arguments (default: this Python's "
                             "prefeval trec_eval)")
    args = parser.parse_args()
    outcomes = quicktest(args.trec_eval_src.resolve(), shlex.split(args.prefeval))
    for outcome in outcomes:
        verdict = "PASS" if outcome.passed else "FAIL"
        detail = f" ({outcome.detail})" if outcome.detail else ""
        print(f"{outcome.command.number:2d} {verdict}  trec_eval {shlex.join(outcome.command.args)}{detail}")
    passed = sum(outcome.passed for outcome in outcomes)
    print(f"{passed} of {len(outcomes)} pass")
    sys.exit(0 if passed == len(outcomes) else 1)


if __name__ == "__main__":
    main()
