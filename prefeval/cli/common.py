"""What every command shares: the click context, error reporting, notes on stderr, output options."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Iterator

import click

from prefeval.errors import InputError, UsageError

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
FRACTION = click.FloatRange(0.0, 1.0, min_open=True)

output_option = click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write to this file (atomically) instead of stdout."
)


def note(message: str) -> None:
    """A message for the user on stderr (never stdout, which carries the data)."""
    click.echo(f"prefeval: note: {message}", err=True)


@contextlib.contextmanager
def reported_errors() -> Iterator[None]:
    """Turn bad input and impossible requests into one line on stderr and an exit code:
    1 for bad input, 2 for a request that cannot be carried out (as click does for usage errors)."""
    try:
        yield
    except InputError as error:
        click.echo(f"prefeval: error: {error}", err=True)
        sys.exit(1)
    except UsageError as error:
        click.echo(f"prefeval: error: {error}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        # the reader of our stdout went away (``| head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
