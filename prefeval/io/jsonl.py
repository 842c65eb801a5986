"""JSON lines: a batched orjson writer with atomic file output, and a validating record reader."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from typing import BinaryIO

import orjson

from prefeval.errors import InputError
from prefeval.io.source import display_name, read_bytes

BATCH_LINES = 8192


@contextlib.contextmanager
def output_stream(path: str | None) -> Iterator[BinaryIO]:
    """Where output goes: stdout (``None`` or ``-``), or ``path`` written atomically.

    A file is written to a temporary sibling and renamed over ``path`` only when the block
    completes, so a failure never leaves half a file (nor touches an existing one).
    """
    if path is None or path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    handle = tempfile.NamedTemporaryFile("wb", dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                         delete=False)
    try:
        with handle:
            yield handle
        os.chmod(handle.name, _new_file_mode())
        os.replace(handle.name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(handle.name)
        raise


def _new_file_mode() -> int:
    """The mode an ordinary new file gets (0666 less the umask); temporary files start private."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_jsonl(records: Iterable[dict], stream: BinaryIO) -> int:
    """Write one compact JSON object per line, in batches; return the number of lines."""
    batch: list[bytes] = []
    count = 0
    for record in records:
        batch.append(orjson.dumps(record))
        if len(batch) >= BATCH_LINES:
            count += _flush(batch, stream)
    count += _flush(batch, stream)
    return count


def _flush(batch: list[bytes], stream: BinaryIO) -> int:
    if not batch:
        return 0
    stream.write(b"\n".join(batch) + b"\n")
    count = len(batch)
    batch.clear()
    return count


def read_records(path: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every non-blank line of ``path`` (gzip and ``-`` accepted)."""
    return numbered_records(read_bytes(path).split(b"\n"), display_name(path))


def numbered_records(lines: Iterable[bytes], source: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every non-blank line; a line that is not a JSON object is an
    :class:`InputError` naming ``source`` and the line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            raise InputError(source, f"malformed JSON ({error.args[0] if error.args else error})", number) from None
        if not isinstance(record, dict):
            raise InputError(source, "expected a JSON object", number)
        yield number, record
