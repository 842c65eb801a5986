"""Record ndeval's outputs on the cases of ``tests/ndeval_cases.py``, from the binary.

    python tests/data/ndeval/regenerate.py /path/to/ndeval

ndeval 4.5 is ``src/eval/ndeval.c`` of github.com/trec-web/trec-web-2014 (``gcc -o ndeval ndeval.c
-lm``). Each case runs in this folder; its stdout is written to ``expected/NAME.csv``, and the exit
codes of the cases it refuses are checked to be 1.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from ndeval_cases import CASES, ERRORS, NAN_CASES  # noqa: E402


def main(binary: str) -> None:
    expected = HERE / "expected"
    expected.mkdir(exist_ok=True)
    for name, args in {**CASES, **NAN_CASES}.items():
        done = subprocess.run([binary, *args], cwd=HERE, capture_output=True, check=True)
        (expected / f"{name}.csv").write_bytes(done.stdout)
    for name, args in ERRORS.items():
        done = subprocess.run([binary, *args], cwd=HERE, capture_output=True)
        if done.returncode != 1 or done.stdout:
            raise SystemExit(f"{name}: ndeval exited {done.returncode} with {len(done.stdout)} bytes on stdout")


if __name__ == "__main__":
    main(sys.argv[1])
