"""Shell ergonomics: help with examples, completion, stdin, and colour only where it belongs."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES, QRELS, RUNS, run_cli

from prefeval.cli import COMMANDS, main
from prefeval.cli.common import styled_for

RUN = str(EXAMPLES / "runs" / "bm25")
ERROR_LABEL = "\x1b[31m\x1b[1merror:\x1b[0m"


def test_every_command_is_listed_and_importable():
    assert sorted(main.list_commands(None)) == sorted(COMMANDS)
    assert all(main.get_command(None, name).name == name for name in COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_help_with_examples(command):
    result = CliRunner().invoke(main, [command, "--help"], prog_name="prefeval")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"Usage: prefeval {command} [OPTIONS]")
    examples = result.stdout.split("Examples:\n", 1)[1].splitlines()
    assert examples and all(line.strip().startswith(("prefeval ", "zcat ")) for line in examples if line.strip())
    assert any(f"prefeval {command}" in line for line in examples)
    assert CliRunner().invoke(main, [command, "-h"], prog_name="prefeval").stdout == result.stdout


def complete(words: str, cword: int) -> list[str]:
    env = {"_PREFEVAL_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    result = CliRunner().invoke(main, [], env=env, prog_name="prefeval")
    assert result.exit_code == 0
    return result.stdout.splitlines()


def test_shell_completion_of_commands_options_and_files():
    assert complete("prefeval ", 1) == ["plain,aggregate", "plain,check", "plain,eval", "plain,measures",
                                        "plain,ndeval", "plain,null", "plain,plot", "plain,sampled",
                                        "plain,significance", "plain,trec_eval"]
    assert complete("prefeval ch", 1) == ["plain,check"]
    assert "plain,--relevance-level" in complete("prefeval eval --rel", 2)
    assert complete("prefeval eval --qrels ", 3) == ["file,"]  # the shell completes file names
    assert complete("prefeval eval -R q ", 4) == ["file,"]
    assert complete("prefeval aggregate -P ", 3) == ["file,"]
    assert complete("prefeval significance -P ", 3) == ["file,"]
    assert complete("prefeval sampled -R ", 3) == ["file,"]
    assert complete("prefeval null -R q ", 4) == ["file,"]
    assert complete("prefeval plot preferences ", 3) == ["file,"]
    assert complete("prefeval check -R q ", 4) == ["file,"]
    script = CliRunner().invoke(main, [], env={"_PREFEVAL_COMPLETE": "bash_source"}, prog_name="prefeval")
    assert "complete -o nosort -F _prefeval_completion prefeval" in script.stdout


def test_qrels_from_stdin():
    with open(QRELS) as handle:
        result = CliRunner().invoke(main, ["eval", "-R", "-", "-m", "ap", RUN], input=handle.read())
    assert result.exit_code == 0
    from_file = run_cli("eval", "-R", QRELS, "-m", "ap", RUN)
    assert orjson.loads(result.stdout) == orjson.loads(from_file.stdout)


def test_stdin_can_stand_for_one_input_only():
    result = CliRunner().invoke(main, ["eval", "-R", "-", "-"], input="q1 0 a 1\n")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "prefeval: error: standard input (-) can stand for only one of the input files\n"


def test_error_label_is_coloured_on_a_terminal_unless_no_color():
    on_terminal = CliRunner().invoke(main, ["eval", "-R", "absent", RUN], color=True)
    assert on_terminal.stderr == f"prefeval: {ERROR_LABEL} absent: no such file\n"
    no_color = CliRunner().invoke(main, ["eval", "-R", "absent", RUN], color=True, env={"NO_COLOR": "1"})
    assert no_color.stderr == "prefeval: error: absent: no such file\n"
    empty_no_color = CliRunner().invoke(main, ["eval", "-R", "absent", RUN], color=True, env={"NO_COLOR": ""})
    assert empty_no_color.stderr == on_terminal.stderr  # no-color.org: an empty NO_COLOR does not count
    piped = run_cli("eval", "-R", "absent", RUN)
    assert piped.stderr == "prefeval: error: absent: no such file\n"


class FakeStream:
    def __init__(self, tty: bool):
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_report_styles_kept_only_for_a_terminal(monkeypatch):
    text = f"x: {ERROR_LABEL} bad"
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert styled_for(FakeStream(True), text) == text
    assert styled_for(FakeStream(False), text) == "x: error: bad"
    monkeypatch.setenv("NO_COLOR", "1")
    assert styled_for(FakeStream(True), text) == "x: error: bad"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a Linux pseudo-terminal")
@pytest.mark.parametrize("no_color", [False, True])
def test_a_real_terminal_gets_colour_and_no_color_turns_it_off(no_color):
    import pty

    primary, secondary = pty.openpty()
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    if no_color:
        env["NO_COLOR"] = "1"
    try:
        process = subprocess.run([sys.executable, "-m", "prefeval", "eval", "-R", "absent", RUN],
                                 stdout=subprocess.PIPE, stderr=secondary, env=env, timeout=60)
        os.close(secondary)
        written = b""
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the terminal is closed once everything is read
                break
            if not chunk:
                break
            written += chunk
    finally:
        os.close(primary)
    assert process.returncode == 1 and process.stdout == b""
    assert (b"\x1b[" in written) is not no_color
    assert b"absent: no such file" in written


def first_sentence(text: str) -> str:
    """The first sentence of a docstring, on one line."""
    words = " ".join(text.split())
    end = words.find(". ")
    return words if end < 0 else words[: end + 1]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_summary_is_the_first_sentence_of_its_command(command):
    summary = COMMANDS[command][1]
    assert summary == first_sentence(main.get_command(None, command).help)
    assert summary.endswith(".") and summary.count(". ") == 0


def test_the_command_list_shows_whole_summaries():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    listing = " ".join(result.stdout.split("Commands:", 1)[1].split())
    for command, (_, summary) in COMMANDS.items():
        assert f"{command} {summary}" in listing


def test_prefeval_alone_prints_the_help_on_stdout():
    process = subprocess.run([sys.executable, "-m", "prefeval"], capture_output=True, text=True)
    assert process.returncode == 0 and process.stderr == ""
    assert process.stdout.startswith("Usage: ") and "Commands:" in process.stdout
    assert process.stdout == subprocess.run([sys.executable, "-m", "prefeval", "--help"], capture_output=True,
                                            text=True).stdout


def every_module_loaded_by(*args: str) -> set[str]:
    """Every module that ``prefeval ARGS`` imports, in a fresh interpreter."""
    script = f"""
import sys
from prefeval.cli import main
try:
    main({list(args)!r})
except SystemExit:
    pass
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""
    process = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    return set(process.stderr.split())


def modules_loaded_by(*args: str) -> set[str]:
    """The heavy modules (numpy, pandas, scipy, matplotlib) and command modules that ``prefeval ARGS``
    imports, in a fresh interpreter."""
    loaded = every_module_loaded_by(*args)
    heavy = {name.split(".")[0] for name in loaded} & {"numpy", "pandas", "scipy", "matplotlib"}
    return heavy | {name for name in loaded if name.startswith("prefeval.cli.")}


def test_help_imports_no_command_and_no_numerical_library():
    assert modules_loaded_by("--help") == {"prefeval.cli.common"}
    assert modules_loaded_by("--version") == {"prefeval.cli.common"}


def test_the_measure_list_needs_neither_pandas_nor_scipy():
    assert modules_loaded_by("measures") == {"numpy", "prefeval.cli.common", "prefeval.cli.measures"}


def test_evaluating_files_needs_neither_pandas_nor_scipy(tmp_path):
    """Runs and qrels of the common shape are read, ranked and evaluated with numpy alone (importing
    pandas takes longer than evaluating a run); a DataFrame or an odd file brings pandas in."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    run.write_text("q1 Q0 a 1 2.5 t\nq1 Q0 b 2 1.5 t\nq2 Q0 c 1 1 t\n")
    assert modules_loaded_by("eval", "-q", "-R", str(qrels), str(run)) == {
        "numpy", "prefeval.cli.common", "prefeval.cli.evaluate"}
    assert modules_loaded_by("eval", "--format", "trec_eval", "-m", "all_trec", "-R", str(qrels), str(run)) == {
        "numpy", "prefeval.cli.common", "prefeval.cli.evaluate"}
    run.write_text("q1 Q0 a 1 2.5 t\n\nq1  Q0 b 2 1.5\nq2 Q0 c 1 1 t\n")  # a blank line, two spaces
    assert "pandas" in modules_loaded_by("eval", "-q", "-R", str(qrels), str(run))


def test_one_run_imports_only_what_it_uses():
    """Evaluating one run, as a shell loop does, imports neither what shares work out among processes
    (multiprocessing), nor streaming, nor the significance tests and tables, nor trec_eval's and
    ir_measures' own layouts, nor a seed's source of randomness: each takes milliseconds that
    trec_eval's whole run is measured against."""
    loaded = every_module_loaded_by("eval", "--format", "tsv", "-q", "-m", "ap,ndcg", "-R", QRELS, RUNS[0])
    assert "prefeval.engine.evaluation" in loaded
    unused = {"multiprocessing", "secrets", "hashlib", "shutil", "prefeval.engine.streaming", "prefeval.engine.dask",
              "prefeval.analyses.significance", "prefeval.report.runs_table", "prefeval.report.tables",
              "prefeval.report.trec_eval", "prefeval.report.ir_measures"}
    assert loaded & unused == set()


def test_numpy_gets_one_blas_thread_unless_told_otherwise():
    script = "import os, prefeval.cli; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}

    def threads(**chosen) -> str:
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                              env={**environment, **chosen}).stdout.strip()

    assert threads() == "1"
    assert threads(OPENBLAS_NUM_THREADS="2") == "2"
    assert threads(OMP_NUM_THREADS="4") == "None"


def test_version_is_still_shown():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("prefeval, version ")
