"""The documentation's commands on the TREC 2003 Robust track (the shared data, not bundled) run, and
the Markdown tables they print are the tables the pages show.

Each ``sh`` block preceded by ``<!-- run by tests/test_docs_robust03.py::test_robust03_block_runs -->``
(tests/test_docs.py's convention) is run by bash in a temporary folder holding ``robust03`` (the
data), and, for the blocks written to run inside it, its ``qrels.txt`` and ``runs``; ``prefeval`` is
this checkout's. It must end with exit code 0; when a ``text`` block follows it (blank lines apart),
it prints exactly that block; otherwise, when it prints table rows (lines starting with ``|``), they
must be, in order, the rows of the first Markdown table after the block on the page (all of them, or
those under its header).
"""

from __future__ import annotations

import subprocess

import pytest
from conftest import robust03_or_skip
from test_docs import ALL_BLOCKS, RUN_BY

BLOCKS = [block for block in ALL_BLOCKS if block.info == "sh" and (match := RUN_BY.match(block.before))
          and match.groups() == ("tests/test_docs_robust03.py", "test_robust03_block_runs")]


def text_after(block) -> str | None:
    """The text of the ``text`` block right after ``block`` (blank lines apart), if there is one."""
    following = [other for other in ALL_BLOCKS if other.page == block.page and other.line > block.line]
    if not following or following[0].info != "text":
        return None
    lines = block.page.read_text(encoding="utf-8").splitlines()
    closing = block.line + block.text.count("\n")  # the 0-based index of the closing fence
    between = lines[closing + 1:following[0].line - 1]
    return following[0].text if not any(line.strip() for line in between) else None


def table_after(block) -> list[str]:
    """The rows of the first Markdown table after ``block`` on its page."""
    lines = block.page.read_text(encoding="utf-8").splitlines()[block.line:]
    start = next(index for index, line in enumerate(lines) if line.startswith("```") and index > 0) + 1
    rows = []
    for line in lines[start:]:
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    return rows


@pytest.mark.parametrize("block", BLOCKS, ids=[block.name for block in BLOCKS])
def test_robust03_block_runs(block, shell_environment, tmp_path):
    data = robust03_or_skip()
    (tmp_path / "robust03").symlink_to(data)
    (tmp_path / "qrels.txt").symlink_to(data / "qrels.txt")
    (tmp_path / "runs").symlink_to(data / "runs")
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=tmp_path, env=shell_environment,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{block.name}: {done.stderr}"
    expected = text_after(block)
    if expected is not None:
        assert done.stdout == expected, block.name
        return
    printed = [line for line in done.stdout.splitlines() if line.startswith("|")]
    if printed:
        shown = [row.strip() for row in table_after(block)]
        printed = [row.strip() for row in printed]
        assert printed in (shown, shown[2:]), block.name  # the whole table, or its rows under the header


def test_there_are_such_blocks():
    assert BLOCKS
