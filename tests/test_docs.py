"""Every command the documentation shows is run, and the site builds without a warning (issue 29).

The convention, over README.md and every page under docs/ (pages added later included):

* a fenced block of info string ``console`` holds lines ``$ COMMAND``, each followed by its exact
  expected output (up to the next ``$ `` line or the block's end). Each command is run by bash from
  the repository root, in order within its block, ``prefeval`` being this checkout's, and must end
  with exit code 0 and print exactly what is shown (show a failure as ``COMMAND 2>&1 || echo
  "exit $?"``). A line ending with a backslash continues the command on the next line;
* a fenced block of info string ``sh`` is shown, not run here: the line right before its fence is
  ``<!-- run by tests/test_FILE.py::test_NAME -->``, naming an existing test that runs those
  commands, or ``<!-- benchmark: COMMAND -->``, naming the benchmark command (an existing script of
  the repository) that regenerates the figures the block shows;
* a ``python`` block is run as a script from the repository root (and must not fail), unless the
  line before it names the test that runs it, as for ``sh``;
* every other block says what it holds (``text``, ``json``, ``toml``): a block without an info
  string, or with ``bash`` or ``shell``, is refused, and so is a ``$ prefeval`` line outside a
  ``console`` block, so that no command is shown untested.

And ``mkdocs build --strict`` (mkdocs.yml: every link, anchor and page checked) builds the site into
a temporary folder without a warning.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+)(?P<info>[^`\n]*)$")
SHOWN = {"sh", "python"}
"""Info strings of blocks that a test names, or (python) the docs test runs."""
DESCRIPTIVE = {"text", "json", "toml", "yaml"}
RUN_BY = re.compile(r"^<!-- run by (tests/test_\w+\.py)::(test_\w+) -->$")
BENCHMARK = re.compile(r"^<!-- benchmark: (.+) -->$")


class Block(NamedTuple):
    page: Path
    line: int
    """The line of the opening fence, 1-based."""
    info: str
    text: str
    before: str
    """The line right before the opening fence, stripped."""

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown page, their indentation (in a list item) removed."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        assert end < len(lines), f"{page.name}:{index + 1}: a fence that is never closed"
        text = "\n".join(line[indent:] for line in lines[index + 1:end])
        before = lines[index - 1].strip() if index else ""
        found.append(Block(page, index + 1, opening["info"].strip(), text + "\n" if text else "", before))
        index = end + 1
    return found


ALL_BLOCKS = [block for page in PAGES for block in blocks(page)]
CONSOLE = [block for block in ALL_BLOCKS if block.info == "console"]


def sessions(block: Block) -> list[tuple[str, str]]:
    """A console block's (command, expected stdout) pairs."""
    pairs: list[tuple[str, str]] = []
    lines = block.text.splitlines()
    assert lines and lines[0].startswith("$ "), f"{block.name}: a console block starts with a '$ ' line"
    index = 0
    while index < len(lines):
        command = lines[index][2:]
        while command.endswith("\\"):
            index += 1
            command = command + "\n" + lines[index]
        index += 1
        output = []
        while index < len(lines) and not lines[index].startswith("$ "):
            output.append(lines[index])
            index += 1
        pairs.append((command, "".join(line + "\n" for line in output)))
    return pairs


@pytest.mark.parametrize("block", CONSOLE, ids=[block.name for block in CONSOLE])
def test_console_block_prints_what_it_shows(block, shell_environment):
    for command, expected in sessions(block):
        done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=shell_environment,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{block.name}: `{command}` ended with {done.returncode}: {done.stderr}"
        assert done.stdout == expected, f"{block.name}: `{command}` printed something else"


def test_there_are_console_blocks():
    """The convention is in use: the README's example and the getting-started page hold some."""
    pages = {block.page.name for block in CONSOLE}
    assert {"README.md", "getting-started.md"} <= pages


def named_test_exists(path: str, test: str) -> bool:
    file = ROOT / path
    return file.is_file() and re.search(rf"^def {test}\(", file.read_text(encoding="utf-8"), re.M) is not None


def benchmark_script_exists(command: str) -> bool:
    scripts = [word for word in command.split() if word.endswith((".py", ".sh"))]
    return bool(scripts) and all((ROOT / script).is_file() for script in scripts)


SHOWN_BLOCKS = [block for block in ALL_BLOCKS if block.info == "sh"]


@pytest.mark.parametrize("block", SHOWN_BLOCKS, ids=[block.name for block in SHOWN_BLOCKS])
def test_shown_block_names_its_test_or_benchmark(block):
    run_by, benchmark = RUN_BY.match(block.before), BENCHMARK.match(block.before)
    assert run_by or benchmark, (f"{block.name}: an sh block is preceded by <!-- run by tests/...::test_... --> "
                                 f"or <!-- benchmark: ... -->, not {block.before!r}")
    if run_by:
        assert named_test_exists(*run_by.groups()), f"{block.name}: no test {run_by.group(1)}::{run_by.group(2)}"
    else:
        assert benchmark_script_exists(benchmark.group(1)), f"{block.name}: no script in {benchmark.group(1)!r}"


PYTHON = [block for block in ALL_BLOCKS if block.info == "python"]


@pytest.mark.parametrize("block", PYTHON, ids=[block.name for block in PYTHON])
def test_python_block_runs(block, shell_environment):
    run_by = RUN_BY.match(block.before)
    if run_by:
        assert named_test_exists(*run_by.groups()), f"{block.name}: no test {run_by.group(1)}::{run_by.group(2)}"
        return
    done = subprocess.run([sys.executable, "-c", block.text], cwd=ROOT, env=shell_environment,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{block.name}: {done.stderr}"


def test_every_block_says_what_it_holds():
    known = SHOWN | DESCRIPTIVE | {"console"}
    wrong = [f"{block.name}: {block.info or '(no info string)'}" for block in ALL_BLOCKS if block.info not in known]
    assert not wrong, "blocks must be console, sh, python or " + ", ".join(sorted(DESCRIPTIVE))
    untested = [block.name for block in ALL_BLOCKS
                if block.info != "console" and re.search(r"^\$ prefeval", block.text, re.M)]
    assert not untested, "a '$ prefeval' line belongs in a console block"


def test_the_site_builds_strictly(tmp_path):
    """``mkdocs build --strict``: a broken link or anchor, a page missing from the files, a failing
    hook (docs/hooks.py: the commands' help, the measures reference) or a docstring mkdocstrings
    cannot read is a failure."""
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        if not _importable(module):
            pytest.fail(f"{module} is not installed: the docs extras are test dependencies (pip install '.[test]')")
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1",
                   "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    reference = (tmp_path / "site" / "reference" / "measures" / "index.html").read_text(encoding="utf-8")
    from prefeval.measures.catalogue import measure_catalogue
    assert all(f"<code>{record['name']}</code>" in reference for record in measure_catalogue())
    help_page = (tmp_path / "site" / "commands" / "eval" / "index.html").read_text(encoding="utf-8")
    assert "Usage: prefeval eval [OPTIONS] RUN..." in help_page


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def heading_anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as the site's table of contents (Python-Markdown) makes them."""
    from markdown.extensions.toc import slugify

    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {slugify(title.replace("`", ""), "-") for title in re.findall(r"^#+ (.*)$", text, re.M)}


def test_the_readme_links_into_the_docs():
    """The README is not part of the site, so the strict build does not check its links: every relative
    link names an existing file, and an anchor one of that page's headings."""
    links = re.findall(r"\]\(([^)#]+)(?:#([^)]+))?\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert links
    for target, anchor in links:
        if target.startswith(("http://", "https://")):
            continue
        assert (ROOT / target).is_file(), target
        if anchor:
            assert anchor in heading_anchors(ROOT / target), f"{target}#{anchor}"
