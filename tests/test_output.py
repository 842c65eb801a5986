"""``-o``: checked before any work, written through where replacing would be wrong, never onto an
input, gzip for ``.gz``, atomic for regular files, in every command."""

from __future__ import annotations

import errno
import gzip
import os
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from conftest import QRELS, json_lines, run_cli
from contract import OTHER_RUN, RUN, WITHOUT_OUTPUT_FILE, assert_one_line_error, command_lines, files_in, inputs_of

from prefeval.cli import COMMANDS, main
from prefeval.errors import UsageError
from prefeval.io.output import output_stream, resolve_output
from prefeval.runtime.progress import Progress

pytest.importorskip("matplotlib")  # plot is one of the commands


@pytest.fixture(scope="module")
def commands(tmp_path_factory) -> dict[str, tuple[list[str], str]]:
    return command_lines(tmp_path_factory.mktemp("inputs"))


def test_every_command_is_covered(commands):
    assert sorted(commands) == sorted(COMMANDS)


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - WITHOUT_OUTPUT_FILE))
def test_a_missing_directory_is_refused_before_any_input_is_read(tmp_path, commands, command):
    args, suffix = commands[command]
    missing_input = [arg if arg not in inputs_of(args) else str(tmp_path / "absent-input") for arg in args]
    target = tmp_path / "no" / "such" / f"out{suffix}"
    result = run_cli(*missing_input, "-o", target)
    message = assert_one_line_error(result, 2, "there is no directory")
    assert message.startswith(f"{target}: cannot be written")  # the output, not the absent input
    assert files_in(tmp_path) == []


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - WITHOUT_OUTPUT_FILE))
def test_a_directory_is_refused_in_one_line(tmp_path, commands, command):
    args, _ = commands[command]
    assert_one_line_error(run_cli(*args, "-o", tmp_path), 2, f"{tmp_path}: is a directory, not a file")
    assert files_in(tmp_path) == []


def test_a_file_for_a_directory_and_a_trailing_slash(tmp_path):
    (tmp_path / "file").write_text("x")
    assert_one_line_error(run_cli("eval", "-R", QRELS, RUN, "-o", tmp_path / "file" / "out"), 2,
                          "file is not a directory")
    assert_one_line_error(run_cli("eval", "-R", QRELS, RUN, "-o", f"{tmp_path}/new/"), 2, "there is no directory")
    assert files_in(tmp_path) == ["file"]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes whatever the permissions")
def test_a_read_only_directory_or_file_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    assert_one_line_error(run_cli("eval", "-R", QRELS, RUN, "-o", locked / "out.jsonl"), 2, "permission denied")
    read_only = tmp_path / "read-only.jsonl"
    read_only.write_text("kept\n")
    read_only.chmod(0o444)
    assert_one_line_error(run_cli("eval", "-R", QRELS, RUN, "-o", read_only), 2, "permission denied")
    assert read_only.read_text() == "kept\n"


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"plot"} - WITHOUT_OUTPUT_FILE))  # plot: an image
def test_dev_null_is_written_through(tmp_path, commands, command):
    args, _ = commands[command]
    before = os.stat("/dev/null")
    result = run_cli(*args, "-o", "/dev/null")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and os.path.samestat(before, after)
    assert not [name for name in os.listdir("/dev") if name.startswith(".null.")]


def test_dev_stdout_is_written_through_and_appends_as_the_shell_asked(tmp_path):
    log = tmp_path / "log"
    log.write_text("earlier\n")
    with open(log, "a") as handle:
        process = subprocess.run([sys.executable, "-m", "prefeval", "eval", "-R", QRELS, "-m", "ap", RUN,
                                  "-o", "/dev/stdout"], stdout=handle, stderr=subprocess.PIPE, text=True)
    assert process.returncode == 0, process.stderr
    lines = log.read_text().splitlines()
    assert lines[0] == "earlier" and json_lines("\n".join(lines[1:]))[0]["run"] == "bm25"
    assert files_in(tmp_path) == ["log"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = run_cli("eval", "-R", QRELS, "-m", "ap", RUN, "-o", fifo)
    reader.join(timeout=30)
    assert result.exit_code == 0, result.stderr
    assert json_lines(received[0])[0]["run"] == "bm25"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and files_in(tmp_path) == ["fifo"]


def test_a_symlink_stays_and_its_target_is_replaced(tmp_path):
    target = tmp_path / "results" / "eval.jsonl"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    result = run_cli("eval", "-R", QRELS, "-m", "ap", RUN, "-o", link)
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json_lines(target.read_text())[0]["run"] == "bm25"
    assert files_in(target.parent) == ["eval.jsonl"]
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "results" / "new.jsonl")
    assert run_cli("eval", "-R", QRELS, "-m", "ap", RUN, "-o", dangling).exit_code == 0
    assert dangling.is_symlink() and json_lines(dangling.read_text())[0]["run"] == "bm25"


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    target.chmod(0o640)
    assert run_cli("eval", "-R", QRELS, "-m", "ap", RUN, "-o", target).exit_code == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"measures"} - WITHOUT_OUTPUT_FILE))
@pytest.mark.parametrize("order", ["output first", "output last"])
def test_an_input_is_never_the_output(tmp_path, commands, command, order):
    args, suffix = commands[command]
    for source in inputs_of(args):
        copy = tmp_path / f"input{suffix}"  # plot wants an image suffix: the input is given one
        copy.write_bytes(Path(source).read_bytes())
        own = [str(copy) if arg == source else arg for arg in args]
        for name in (copy, tmp_path / "link", tmp_path / "hard"):
            if name.name == "link" and not name.exists():
                name.symlink_to(copy)
            if name.name == "hard" and not name.exists():
                os.link(copy, name)
            output = ["-o", str(name)]
            result = run_cli(*(own[:1] + output + own[1:] if order == "output first" else own + output))
            assert_one_line_error(result, 2, "is also an input", "would destroy it")
            assert copy.read_bytes() == Path(source).read_bytes()
        for name in ("link", "hard"):
            (tmp_path / name).unlink()


def test_gzip_output_is_compressed_and_reproducible(tmp_path):
    args = ["eval", "-q", "-R", QRELS, RUN, OTHER_RUN]
    plain = run_cli(*args).stdout_bytes
    first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    assert run_cli(*args, "-o", first).exit_code == 0
    assert run_cli(*args, "-o", second).exit_code == 0
    packed = first.read_bytes()
    assert packed == second.read_bytes() and gzip.decompress(packed) == plain
    assert packed[:4] == b"\x1f\x8b\x08\x00"  # no flags: no file name in the header
    assert packed[4:8] == b"\x00\x00\x00\x00"  # no time stamp
    aggregated = run_cli("aggregate", "-P", first)  # the readers take it back
    assert aggregated.exit_code == 0 and json_lines(aggregated.stdout)
    assert files_in(tmp_path) == ["a.jsonl.gz", "b.jsonl.gz"]


def test_gzip_output_is_still_atomic(tmp_path):
    target = tmp_path / "out.jsonl.gz"
    target.write_bytes(b"previous")
    bad = tmp_path / "bad"
    bad.write_text("q101 Q0 a 1 oops t\n")
    assert_one_line_error(run_cli("eval", "-R", QRELS, bad, "-o", target), 1, "is not a number")
    assert target.read_bytes() == b"previous" and files_in(tmp_path) == ["bad", "out.jsonl.gz"]


def test_resolve_output_kinds(tmp_path):
    assert resolve_output(None) is None and resolve_output("-") is None
    new = resolve_output(tmp_path / "new.jsonl.gz")
    assert (new.replace, new.compress, new.file) == (True, True, str(tmp_path / "new.jsonl.gz"))
    for name in ("/dev/null", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        if os.path.exists(name):
            assert resolve_output(name).replace is False, name
    with pytest.raises(UsageError, match="the output file name is empty"):
        resolve_output("")


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="needs Unix sockets")
def test_a_socket_is_refused(tmp_path):
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(UsageError, match="is a socket"):
            resolve_output(path)


def test_output_stream_refuses_what_the_option_refuses(tmp_path):
    with pytest.raises(UsageError, match="there is no directory"), output_stream(tmp_path / "a" / "b"):
        pass


class Screen:
    """A terminal that stdout and stderr share: every write, text or bytes, in order."""

    def __init__(self):
        self.writes: list[str] = []

    def write(self, data) -> int:
        self.writes.append(data.decode() if isinstance(data, bytes) else data)
        return len(data)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def test_data_on_a_terminal_never_starts_on_the_progress_line(monkeypatch):
    screen = Screen()
    monkeypatch.setattr(sys, "stdout", SimpleNamespace(buffer=screen, isatty=lambda: True))
    progress = Progress(enabled=True, stream=screen)
    progress.start("queries", 2)
    with output_stream(None) as stream:
        stream.write(b'{"qid":"1"}\n')
        progress.advance(2)
        stream.write(b'{"qid":"2"}\n')
    progress.finish()
    assert screen.writes == ["\r\033[Kprefeval: queries 0/2", "\r\033[K", '{"qid":"1"}\n',
                             "\r\033[Kprefeval: queries 2/2", "\r\033[K", '{"qid":"2"}\n']


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a Linux pseudo-terminal")
def test_on_a_real_terminal_progress_and_data_never_share_a_line(tmp_path):
    import pty

    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q{q} 0 d{d} 1\n" for q in range(400) for d in range(0, 30, 3)))
    runs = []
    for r in range(3):
        run = tmp_path / f"run{r}"
        run.write_text("".join(f"q{q} Q0 d{(7 * d + 11 * r) % 30} {d + 1} {30 - d} t\n"
                               for q in range(400) for d in range(30)))
        runs.append(str(run))
    primary, secondary = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "prefeval", "eval", "-q", "--jobs", "1", "-m", "ap,rpp",
                                "-R", str(qrels), *runs], stdout=secondary, stderr=secondary)
    os.close(secondary)
    screen = b""
    while True:
        try:
            chunk = os.read(primary, 1 << 16)
        except OSError:  # the terminal is closed once everything is read
            break
        if not chunk:
            break
        screen += chunk
    os.close(primary)
    assert process.wait(timeout=60) == 0
    assert b"prefeval: evaluating" in screen  # the progress line was drawn
    for segment in screen.split(b"\r\x1b[K"):
        if segment.startswith(b"prefeval: "):
            assert b"{" not in segment, segment[:200]
    assert screen.count(b'{"qid":"q') == 400 * (3 + 3)


def test_help_of_the_output_option():
    result = CliRunner().invoke(main, ["eval", "--help"])
    assert "-o, --output FILE" in result.stdout and ".gz" in result.stdout


def test_a_refusal_while_writing_names_the_output_not_the_temporary_file(tmp_path):
    target = tmp_path / "out.jsonl"
    with pytest.raises(OSError) as refused, output_stream(target) as stream:
        stream.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert refused.value.filename == str(target) and refused.value.errno == errno.ENOSPC
    assert files_in(tmp_path) == []


def test_a_refusal_while_writing_is_one_line(tmp_path, monkeypatch):
    def full(records, stream):
        stream.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("prefeval.io.jsonl.write_jsonl", full)
    target = tmp_path / "out.jsonl"
    assert_one_line_error(run_cli("measures", "--json", "-o", target), 1, f"{target}: no space left on device")
    assert files_in(tmp_path) == []


FULL = "/dev/full"
"""A device on which every write fails: "no space left on device"."""
needs_dev_full = pytest.mark.skipif(not os.path.exists(FULL), reason=f"needs {FULL}")


@needs_dev_full
def test_dev_full_is_named(tmp_path):
    """The issue's case: the system names no file for a failed write, and the error said only "no
    space left on device"."""
    assert_one_line_error(run_cli("eval", "-R", QRELS, RUN, "-o", FULL), 1,
                          f"prefeval: error: {FULL}: no space left on device")


@needs_dev_full
@pytest.mark.parametrize("command", sorted(set(COMMANDS) - WITHOUT_OUTPUT_FILE))
def test_a_full_device_is_named_by_every_command(tmp_path, commands, command):
    """Every command's refused write names its output, as ``-o`` gave it (here a link to the device,
    with the suffix the command wants)."""
    args, suffix = commands[command]
    full = tmp_path / f"full{suffix}"
    full.symlink_to(FULL)
    assert_one_line_error(run_cli(*args, "-o", full), 1, f"prefeval: error: {full}: no space left on device")
    assert files_in(tmp_path) == [full.name]


@needs_dev_full
@pytest.mark.parametrize("command", [*sorted(set(COMMANDS) - {"plot"}), "eval --engine stream"])
def test_a_full_standard_output_is_named_by_every_command(commands, command):
    """``prefeval ... > /dev/full``: the error names standard output; a streamed evaluation (which
    holds its output until it is whole) too."""
    name, *options = command.split()
    args, _ = commands[name]
    with open(FULL, "wb") as full:
        ended = subprocess.run([sys.executable, "-m", "prefeval", *args, *options], stdout=full,
                               stderr=subprocess.PIPE, timeout=120)
    ended.stdout = b""
    assert_one_line_error(ended, 1, "prefeval: error: standard output: no space left on device")


def test_a_refusal_of_the_held_output_names_its_temporary_file(monkeypatch):
    """Held output (a streamed evaluation's) goes to a temporary file first: a refusal there names it."""
    import io
    import tempfile

    class Full(io.BytesIO):
        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", lambda *args, **kwargs: Full())
    with pytest.raises(OSError) as refused, output_stream(None, held=True) as stream:
        stream.write(b"partial")
    assert refused.value.filename == f"a temporary file in {tempfile.gettempdir()}"
    assert refused.value.errno == errno.ENOSPC
