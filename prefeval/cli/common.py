"""What every command shares: the click context, how a command ends (errors, stops, notes), the
input and output options, and colour.

How a command ends (:func:`ending_quietly`, around the whole command line): with exit code 0, or 1
for bad input (or for want of memory, :data:`OUT_OF_MEMORY`), or 2 for a request that cannot be
carried out (click's usage errors included), with exactly one ``prefeval: error: ...`` line on stderr
and never a traceback; stopped by Ctrl-C or SIGTERM, with 130 or 143 and nothing on stderr
(:mod:`prefeval.runtime.signals`). The library's notes are shown once the work has succeeded
(:func:`reported_errors`), and not at all when it fails, so that an error is the only line.

Colour: only the ``error:`` and ``warning:`` labels are coloured, only when the stream they go to is
a terminal (click strips styles otherwise), and never when ``NO_COLOR`` is set to anything but the
empty string (https://no-color.org).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from collections.abc import Iterator
from typing import NoReturn

import click
from click.shell_completion import CompletionItem

from prefeval.errors import InputError, UsageError
from prefeval.io.output import resolve_output
from prefeval.io.source import first_line
from prefeval.runtime.notes import notes_to
from prefeval.runtime.parallel import WorkerDied
from prefeval.runtime.signals import Interrupted

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
FRACTION = click.FloatRange(0.0, 1.0, min_open=True)
LABEL_COLOURS = {"error": "red", "warning": "yellow"}
EXIT_CODES = {InputError: 1, UsageError: 2, WorkerDied: 1}
"""The exit code of each of prefeval's errors (click's carry their own)."""
OUT_OF_MEMORY = ("out of memory: the input needs more memory than this process may take (for eval, --engine stream "
                 "reads files in bounded memory)")
"""The message of a :class:`MemoryError`, which ends a command with exit code 1."""

_EXIT_CODES: contextvars.ContextVar[tuple[tuple[type[Exception], int], ...]] = contextvars.ContextVar("exit_codes",
                                                                                                    default=())


@contextlib.contextmanager
def exit_codes(codes: dict[type[Exception], int]) -> Iterator[None]:
    """Within it, the errors of ``codes`` (prefeval's, or :class:`click.ClickException` for click's)
    end the command with those codes, the first kind that fits taken: a command that is another
    tool's command line keeps that tool's codes (``prefeval trec_eval``)."""
    token = _EXIT_CODES.set(tuple(codes.items()))
    try:
        yield
    finally:
        _EXIT_CODES.reset(token)


def _exit_code(error: Exception, default: int) -> int:
    """The exit code ``error`` ends the command with (:func:`exit_codes`, else :data:`EXIT_CODES`)."""
    for kind, code in (*_EXIT_CODES.get(), *EXIT_CODES.items()):
        if isinstance(error, kind):
            return code
    return default


class _FileParameter(click.ParamType):
    """A file name, completed as such by the shell."""

    name = "file"

    def shell_complete(self, ctx, param, incomplete: str) -> list[CompletionItem]:
        return [CompletionItem(incomplete, type="file")]


class InputFile(_FileParameter):
    """A file to read, ``-`` for stdin: passed on as given (the library reports what is wrong with
    it, naming the file). It must not be the file that ``-o`` replaces (see :class:`OutputFile`)."""

    def convert(self, value, param, ctx) -> str:
        path = os.fspath(value)
        for output in _parsed(ctx, OutputFile):
            resolve_output(output, [path])
        return path


class OutputFile(_FileParameter):
    """The file ``-o`` writes, checked as soon as it is parsed, before any input is read
    (:func:`prefeval.io.output.resolve_output`): a missing or unwritable directory, a directory, or
    one of the command's inputs is refused at once, not after all the work.

    Whichever of ``-o`` and an input comes later on the command line compares itself with the other
    (click converts the parameters in command-line order), so every command with ``-o`` gets the
    check, whatever its inputs are called."""

    def convert(self, value, param, ctx) -> str:
        path = os.fspath(value)
        resolve_output(path, _parsed(ctx, InputFile))
        return path


def _parsed(ctx: click.Context | None, kind: type[click.ParamType]) -> list[str]:
    """The values parsed so far of the command's parameters of type ``kind``, as a flat list."""
    values = []
    for param in ctx.command.params if ctx is not None else ():
        value = ctx.params.get(param.name)
        if isinstance(param.type, kind) and value is not None:
            values.extend(value if isinstance(value, (tuple, list)) else [value])
    return values


INPUT_FILE = InputFile()
OUTPUT_FILE = OutputFile()

output_option = click.option(
    "-o", "--output", type=OUTPUT_FILE, metavar="FILE",
    help="Write to FILE instead of stdout: a file is replaced only once all is written (gzip when FILE ends "
         "in .gz); /dev/stdout, a FIFO or a device is written through.",
)


def user_groups_option(what: str):
    """``--user-groups FILE``: the users' groups (:mod:`prefeval.io.side`), after which ``what`` is
    repeated on each group's users (JSON lines only)."""
    return click.option(
        "--user-groups", "--user_groups", "user_groups", type=click.Path(dir_okay=False), metavar="FILE",
        help="Users' groups: a user and its group a row (CSV or TSV with a header, two fields a line, or "
             f"Parquet): {what} is repeated on each group's users, each record with its group and users "
             "(JSON lines).")


def colour() -> bool | None:
    """click's ``color`` argument: False under ``NO_COLOR``; otherwise None (colour on a terminal only)."""
    return False if os.environ.get("NO_COLOR") else None


def label(kind: str) -> str:
    """``error:`` or ``warning:``, styled (the style is dropped where colour is not wanted)."""
    return click.style(f"{kind}:", fg=LABEL_COLOURS.get(kind), bold=True)


def styled_for(stream, text: str) -> str:
    """``text`` with its styles kept only when ``stream`` is a terminal and ``NO_COLOR`` is unset."""
    keep = colour() is not False and getattr(stream, "isatty", lambda: False)()
    return text if keep else click.unstyle(text)


def echo(message: str, err: bool = False) -> None:
    """Print a line that may hold styled labels, honouring ``NO_COLOR`` and non-terminals."""
    click.echo(message, err=err, color=colour())


def note(message: str) -> None:
    """A message for the user on stderr (never stdout, which carries the data)."""
    click.echo(f"prefeval: note: {message}", err=True)


def fail(message: str, code: int) -> NoReturn:
    """End the command with ``prefeval: error: MESSAGE`` (one line) on stderr and exit ``code``; bytes
    of the input that are not UTF-8 (in an id it quotes) are shown as ``\\xNN``, as in the JSON output."""
    text = " ".join(message.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace").splitlines())
    echo(f"prefeval: {label('error')} {text}", err=True)
    sys.exit(code)


@contextlib.contextmanager
def ending_quietly() -> Iterator[None]:
    """Around a command: every way it can end that is not a bug becomes an exit code and at most one
    line (see the module docstring)."""
    try:
        yield
    except click.ClickException as error:
        fail(_click_message(error), _exit_code(error, error.exit_code))
    except tuple(EXIT_CODES) as error:
        fail(str(error), _exit_code(error, 1))
    except Interrupted as stop:
        _drop_stdout()
        sys.exit(stop.exit_code)
    except (KeyboardInterrupt, click.Abort):  # without the handlers (outside the main thread)
        _drop_stdout()
        sys.exit(130)
    except BrokenPipeError:  # the reader of our stdout went away (``| head``): stop quietly
        _drop_stdout()
        sys.exit(1)
    except MemoryError:  # anywhere, in this process or a worker: the input's size, not a bug
        _drop_stdout()
        fail(OUT_OF_MEMORY, 1)
    except OSError as error:  # the system's refusal (a full disk): not a bug, so no traceback either
        _drop_stdout()
        where = f"{error.filename}: " if error.filename else ""
        fail(f"{where}{(error.strerror or str(error)).lower()}", 1)


@contextlib.contextmanager
def reported_errors() -> Iterator[None]:
    """Run a command's work: errors end it as :func:`ending_quietly` says; the library's notes are
    shown on stderr once the work has succeeded (each once, in the order they came), and not at all
    when it fails, so that an error is the only line."""
    notes: list[str] = []
    with ending_quietly(), notes_to(notes.append):
        yield
    for message in dict.fromkeys(notes):
        note(message)


def _drop_stdout() -> None:
    """Send what is still buffered for stdout to /dev/null: the output is incomplete anyway, and
    flushing it at exit could block (a reader that went away or stopped) or fail a second time."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _click_message(error: click.ClickException) -> str:
    """click's message in prefeval's style (lower case, no final full stop), with a hint when the
    qrels file seems to have been given first, as trec_eval takes it."""
    message = error.format_message().strip().rstrip(".")
    if message[1:2].islower():
        message = message[0].lower() + message[1:]
    return message + _qrels_first_hint(error)


def _qrels_first_hint(error: click.ClickException) -> str:
    """``prefeval eval qrels run`` (trec_eval's order) fails for want of ``-R``: when the first RUN
    reads like qrels (four fields to a line), say how to give it."""
    if not isinstance(error, click.MissingParameter) or error.param is None or error.param.name != "qrels":
        return ""
    runs = error.ctx.params.get("runs") if error.ctx is not None else None
    if not runs:
        return ""
    from prefeval.io.trec import QRELS_FORMAT

    line = first_line(runs[0])
    if line is None or len(line.split()) != QRELS_FORMAT.max_fields:
        return ""
    command = error.ctx.command_path
    rest = " ".join(runs[1:2]) + (" ..." if len(runs) > 2 else "")
    trec_eval = (f", or `prefeval trec_eval {runs[0]} {rest or 'RUN'}` on trec_eval's command line"
                 if error.ctx.command.name == "eval" else "")
    return (f"; {runs[0]} looks like qrels (qid iter docid grade): prefeval takes them with -R, as in "
            f"`{command} -R {runs[0]} {rest or 'RUN...'}`{trec_eval}")
