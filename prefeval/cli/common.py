"""What every command shares: the click context, error reporting, notes on stderr, output options
and colour.

Colour: only the ``error:`` and ``warning:`` labels are coloured, only when the stream they go to is
a terminal (click strips styles otherwise), and never when ``NO_COLOR`` is set to anything but the
empty string (https://no-color.org).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

import click
from click.shell_completion import CompletionItem

from prefeval.errors import InputError, UsageError
from prefeval.runtime.notes import notes_to

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
FRACTION = click.FloatRange(0.0, 1.0, min_open=True)
LABEL_COLOURS = {"error": "red", "warning": "yellow"}

output_option = click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write to this file (atomically) instead of stdout."
)


class InputFile(click.ParamType):
    """A file to read, ``-`` for stdin: passed on as given (the library reports what is wrong with
    it, naming the file), and completed as a file name by the shell."""

    name = "file"

    def convert(self, value, param, ctx) -> str:
        return os.fspath(value)

    def shell_complete(self, ctx, param, incomplete: str) -> list[CompletionItem]:
        return [CompletionItem(incomplete, type="file")]


INPUT_FILE = InputFile()


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


@contextlib.contextmanager
def reported_errors() -> Iterator[None]:
    """Run a command's work: bad input and impossible requests become one line on stderr and an exit
    code (1 for bad input, 2 for a request that cannot be carried out, as click does for usage
    errors); the library's notes are shown on stderr once the work has succeeded (each once, in the
    order they came), and not at all when it fails, so that an error is the only line."""
    notes: list[str] = []
    try:
        with notes_to(notes.append):
            yield
    except InputError as error:
        echo(f"prefeval: {label('error')} {error}", err=True)
        sys.exit(1)
    except UsageError as error:
        echo(f"prefeval: {label('error')} {error}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        # the reader of our stdout went away (``| head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    for message in dict.fromkeys(notes):
        note(message)
