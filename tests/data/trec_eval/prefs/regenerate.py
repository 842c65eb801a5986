"""Remake the expected outputs in this folder from a trec_eval 10.0 binary.

    python tests/data/trec_eval/prefs/regenerate.py --trec-eval /path/to/trec_eval

For each command line of ``tests/prefs_cases.py`` (``CASES``), prefeval's collection judged by
preferences and by judgment groups is written into a temporary folder (``write_collection``; a
pairwise file also as the prefs file trec_eval reads for it, ``pairs_as_prefs``), trec_eval runs there
with those arguments, and its standard output becomes ``NAME.out`` here. trec_eval must end with exit
code 0 on every command line.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))  # tests/, for prefs_cases

from prefs_cases import CASES, pairs_as_prefs, write_collection  # noqa: E402


def trec_eval_output(binary: str, args: list[str], folder: Path) -> bytes:
    """trec_eval's standard output for ``args``, run in ``folder``."""
    done = subprocess.run([binary, *args], cwd=folder, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"trec_eval {' '.join(args)}: exit code {done.returncode}: {done.stderr.decode().strip()}")
    return done.stdout


def trec_eval_outputs(binary: str) -> dict[str, bytes]:
    """Every case's output, by file name."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        files = write_collection(folder)
        pairs_as_prefs(files["pairs.txt"], folder / "pairs.prefs")
        outputs = {}
        for case in CASES:
            judgments = "pairs.prefs" if case.rel_format == "pairs" else case.judgments
            outputs[f"{case.name}.out"] = trec_eval_output(binary, case.trec_eval_arguments(judgments), folder)
        return outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval", required=True, help="the trec_eval 10.0 binary")
    binary = parser.parse_args().trec_eval
    for name, output in trec_eval_outputs(binary).items():
        (HERE / name).write_bytes(output)
        print(f"{name}: {len(output)} bytes")


if __name__ == "__main__":
    main()
