"""The statistics tables of the documentation reproduce from the commands shown beside them (issue 11).

The expected numbers are read from the pages themselves (docs/commands/significance.md,
docs/formats.md), and the commands are the pages' own shell blocks, run by ``sh`` with ``prefeval``
standing for this checkout: documentation and code cannot drift apart. Only formatting is tolerated
(Markdown emphasis, the counts in brackets, spaces).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import orjson
from conftest import ROOT, robust03_or_skip

DOCS = ROOT / "docs"


def section(title: str, page: str) -> str:
    """The text of the section of ``docs/PAGE`` under the heading ``title``, up to the next heading."""
    text = (DOCS / page).read_text(encoding="utf-8")
    match = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#+ |\Z)", text, re.M | re.S)
    assert match, f"docs/{page} has no section {title!r}"
    return match.group(1)


def markdown_table(text: str) -> list[list[str]]:
    """The rows (header first) of the first Markdown table in ``text``, cells stripped."""
    rows = [line for line in text.splitlines() if line.startswith("|")]
    cells = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    return [row for row in cells if not all(re.fullmatch(r":?-+:?", cell) for cell in row)]


def shell_block(text: str) -> str:
    match = re.search(r"```sh\n(.*?)```", text, re.S)
    assert match, "no sh block"
    return match.group(1)


def run_shell(script: str, cwd: Path, tmp_path: Path) -> str:
    """``script`` run by sh in ``cwd``, ``prefeval`` being this checkout's; its stdout."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "prefeval"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m prefeval "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = subprocess.run(["sh", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                             timeout=900)
    assert process.returncode == 0, process.stderr
    return process.stdout


def number(cell: str) -> tuple[str, str | None]:
    """A table cell's number as written, and the count in brackets after it (None without)."""
    match = re.fullmatch(r"\**(-?[0-9.]+)\**(?:\s*\((\d+)\))?", cell)
    assert match, f"not a number: {cell!r}"
    return match.group(1), match.group(2)


def test_the_discriminative_power_table_reproduces(tmp_path):
    """Each cell is the discriminative power to 4 decimals (and, where given, the number of pairs
    that are significant) of the measure (row) under the test (column)."""
    data = robust03_or_skip()
    text = section("Discriminative power on the TREC 2003 Robust track", "commands/significance.md")
    header, *rows = markdown_table(text)
    script = shell_block(text)
    tests = re.search(r"for test in ([^;]+);", script).group(1).split()
    assert header == ["measure", *tests]
    work = tmp_path / "work"
    work.mkdir()
    (work / "robust03").symlink_to(data)
    found = {}
    for line in run_shell(script, work, tmp_path).splitlines():
        record = orjson.loads(line)
        found[record["measure"], record["test"]] = record
    assert {measure for measure, _ in found} == {row[0].strip("`") for row in rows}
    for row in rows:
        measure = row[0].strip("`")
        for test, cell in zip(tests, row[1:]):
            record = found[measure, test]
            written, count = number(cell)
            power = record["discriminative_power"]
            assert written == f"{power:.4f}", (measure, test, written, power)
            if count is not None:
                assert int(count) == round(power * record["pairs"]), (measure, test)


def test_the_section_is_where_the_test_looks():
    assert section("Discriminative power on the TREC 2003 Robust track", "commands/significance.md").strip()
