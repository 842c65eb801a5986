"""The parse floor: read and tokenise a qrels file and run files with prefeval's own reader, nothing else.

    python benchmarks/floor.py QRELS RUN [RUN ...]

One process, files in sequence: the time any evaluator built on this tokeniser must spend on input.
"""

from __future__ import annotations

import sys

from prefeval.io.source import read_bytes
from prefeval.io.trec import QRELS_FORMAT, RUN_FORMAT, read_columns


def main(qrels: str, runs: list[str]) -> int:
    lines = len(read_columns(read_bytes(qrels), qrels, QRELS_FORMAT)["grade"])
    for path in runs:
        lines += len(read_columns(read_bytes(path), path, RUN_FORMAT)["score"])
    return lines


if __name__ == "__main__":
    print(main(sys.argv[1], sys.argv[2:]))
