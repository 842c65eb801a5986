"""Remake the expected outputs in this folder from a trec_eval 10.0 binary.

    python tests/data/trec_eval/regenerate.py --trec-eval /path/to/trec_eval [--robust03 DIR]

For each command line of ``tests/trec_eval_cases.py`` (``CASES``), the collection is written into a
temporary folder (``write_collection``), trec_eval runs there with those arguments, and its standard
output becomes ``NAME.out`` here. With robust03 (default: ``../shared/data/robust03`` beside the
checkout, as the tests find it), trec_eval runs with ``-m all_trec`` and each option set of
``ROBUST03_OPTION_SETS`` on its runs (decompressed, since trec_eval reads plain files), and the outputs,
run after run, become ``robust03/OPTIONS.out.xz`` (xz, which has no time stamp: the same outputs give
the same bytes). trec_eval must end with exit code 0 on every command line.
"""

from __future__ import annotations

import argparse
import gzip
import lzma
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/, for trec_eval_cases

from trec_eval_cases import (  # noqa: E402
    CASES,
    DATA,
    ROBUST03_OPTION_SETS,
    ROBUST03_RUNS_OF,
    ROOT,
    robust03_expected,
    write_collection,
)


def trec_eval_output(binary: str, args: list[str], folder: Path, stdin: str | None = None) -> bytes:
    """trec_eval's standard output for ``args``, run in ``folder``; its stdin is the file ``stdin``."""
    with open(folder / stdin if stdin else os.devnull, "rb") as source:
        done = subprocess.run([binary, *args], cwd=folder, stdin=source, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"trec_eval {' '.join(args)}: exit code {done.returncode}: {done.stderr.decode().strip()}")
    return done.stdout


def regenerate_cases(binary: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        files = write_collection(Path(folder))
        for case in CASES:
            output = trec_eval_output(binary, case.arguments(files), Path(folder),
                                      files[case.stdin] if case.stdin else None)
            (DATA / f"{case.name}.out").write_bytes(output)
            print(f"{case.name}.out: {len(output)} bytes")


def regenerate_robust03(binary: str, robust03: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        plain = {}
        for runs in ROBUST03_RUNS_OF.values():
            for run in runs:
                if run not in plain:
                    plain[run] = Path(folder) / f"input.{run}"
                    plain[run].write_bytes(gzip.decompress((robust03 / "runs" / f"input.{run}.gz").read_bytes()))
        for options in ROBUST03_OPTION_SETS:
            output = b"".join(trec_eval_output(binary, [*options.split(), "-m", "all_trec",
                                                        str(robust03 / "qrels.txt"), str(plain[run])], Path(folder))
                              for run in ROBUST03_RUNS_OF[options])
            target = robust03_expected(options)
            target.parent.mkdir(exist_ok=True)
            target.write_bytes(lzma.compress(output, preset=9 | lzma.PRESET_EXTREME))
            print(f"{target.relative_to(DATA)}: {len(output)} bytes, {target.stat().st_size} compressed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval", required=True, help="the trec_eval 10.0 executable")
    parser.add_argument("--robust03", type=Path, default=ROOT.parent / "shared" / "data" / "robust03",
                        help="the robust03 folder (qrels.txt, runs/input.*.gz); skipped when absent")
    args = parser.parse_args()
    regenerate_cases(args.trec_eval)
    if (args.robust03 / "qrels.txt").exists():
        regenerate_robust03(args.trec_eval, args.robust03)
    else:
        print(f"robust03 not found at {args.robust03}: its outputs are left as they are")


if __name__ == "__main__":
    main()
