"""Getting the bytes of an input: a path, a gzip file (detected by its magic bytes) or ``-`` for stdin."""

from __future__ import annotations

import contextlib
import gzip
import os
import sys
import zlib
from collections.abc import Iterator

from prefeval.errors import InputError, UsageError

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
STDIN = "-"


BLOCK_BYTES = 1 << 22
"""How many bytes :func:`read_blocks` reads at a time (a block ends at the last line end in it)."""


def read_bytes(path: str) -> bytes:
    """Return the whole content of ``path`` (``-`` reads stdin), decompressed if it is gzip.

    A UTF-8 byte-order mark at the start is dropped. Anything that keeps the file from being read
    (missing, a directory, no permission, truncated or corrupt gzip data) is an :class:`InputError`.
    """
    name = display_name(path)
    with _reading(name):
        if path == STDIN:
            if sys.stdin is None:  # closed by the caller (``<&-``)
                raise InputError(name, "standard input is closed")
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                data = handle.read()
    if data.startswith(GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error):
            raise InputError(name, "truncated or corrupt gzip data") from None
    return data.removeprefix(UTF8_BOM)


def read_blocks(path: str, block_bytes: int | None = None) -> Iterator[tuple[bytes, int]]:
    """The content of the file ``path`` as :func:`read_bytes` gives it, in blocks of whole lines:
    (block, the 1-based number of its first line). Every block but the last ends with a line end;
    a line longer than ``block_bytes`` makes its block longer. Memory holds one block at a time, and
    gzip data is decompressed as it is read. The errors are those of :func:`read_bytes`. Default
    ``block_bytes``: :data:`BLOCK_BYTES`."""
    name = display_name(path)
    block_bytes = block_bytes or BLOCK_BYTES
    with _reading(name), open(path, "rb") as raw:
        compressed = raw.read(len(GZIP_MAGIC)) == GZIP_MAGIC
        raw.seek(0)
        handle = gzip.GzipFile(fileobj=raw) if compressed else raw
        rest, line, first = b"", 1, True
        while True:
            try:
                data = handle.read(block_bytes + len(UTF8_BOM) if first else block_bytes)
            except (EOFError, OSError, zlib.error):
                if not compressed:
                    raise
                raise InputError(name, "truncated or corrupt gzip data") from None
            if first:
                read, data, first = len(data), data.removeprefix(UTF8_BOM), False
                if read and not data:  # the mark alone, so far
                    continue
            if not data:
                if rest:
                    yield rest, line
                return
            data = rest + data
            cut = data.rfind(b"\n") + 1
            block, rest = data[:cut], data[cut:]
            if block:
                yield block, line
                line += block.count(b"\n")


@contextlib.contextmanager
def _reading(name: str) -> Iterator[None]:
    """The system's refusals to read a file, as :class:`InputError` s naming it."""
    try:
        yield
    except FileNotFoundError:
        raise InputError(name, "no such file") from None
    except IsADirectoryError:
        raise InputError(name, "is a directory, not a file") from None
    except PermissionError:
        raise InputError(name, "permission denied") from None
    except OSError as error:
        raise InputError(name, f"cannot be read ({error.strerror or error})") from None


def is_regular_file(path) -> bool:
    """Whether ``path`` names a regular file (which can be read more than once), not ``-`` or a pipe."""
    return isinstance(path, (str, os.PathLike)) and os.fspath(path) != STDIN and os.path.isfile(path)


def first_line(path: str, limit: int = 1 << 16) -> bytes | None:
    """The first line of a regular file (decompressed if gzip) that is neither blank nor a comment,
    from its first ``limit`` bytes; None when there is none, or ``path`` is not a regular file.

    For hints only (what a file given in the wrong place looks like): it never reads stdin or a
    FIFO, which could be read only once, and never fails.
    """
    try:
        if path == STDIN or not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            head = handle.read(limit)
            if head.startswith(GZIP_MAGIC):
                handle.seek(0)
                with gzip.GzipFile(fileobj=handle) as unpacked:
                    head = unpacked.read(limit)
    except (OSError, EOFError, zlib.error):
        return None
    lines = head.removeprefix(UTF8_BOM).splitlines()
    if len(head) == limit:  # the last line may be cut short
        lines = lines[:-1]
    return next((line for line in lines if line.strip() and not line.lstrip().startswith(b"#")), None)


def display_name(path: str) -> str:
    """How a source is named in messages: the path as given, or ``<stdin>``."""
    return "<stdin>" if path == STDIN else os.fspath(path)


def check_stdin_used_once(paths) -> None:
    """Standard input can be read only once: ``-`` may stand for one input at most (a usage error)."""
    if sum(1 for path in paths if isinstance(path, str) and path == STDIN) > 1:
        raise UsageError("standard input (-) can stand for only one of the input files")
