"""JSON lines: a batched orjson writer and a validating record reader.

Where the lines go (stdout, or an atomically replaced ``-o`` file) is :mod:`prefeval.io.output`;
:func:`output_stream` is also importable from here, where it used to live.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import BinaryIO

import orjson

from prefeval.errors import InputError
from prefeval.io.output import output_stream
from prefeval.io.source import display_name, read_bytes

BATCH_LINES = 8192

__all__ = ["BATCH_LINES", "json_bytes", "numbered_records", "output_stream", "read_records", "write_jsonl"]


def json_bytes(value) -> bytes:
    """``value`` as compact JSON.

    Ids are spelled by :func:`~prefeval.io.ids.id_text` before they get here, which keeps different
    ids different. Any other text read from bytes that are not UTF-8 (a path in a message, held with
    surrogate escapes) cannot be written as it is, JSON being UTF-8: each such byte is written as the
    four characters ``\\xNN``, as error messages show it.
    """
    try:
        return orjson.dumps(value)
    except TypeError:
        return orjson.dumps(_utf8_safe(value))


def _utf8_safe(value):
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {_utf8_safe(key): _utf8_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_utf8_safe(item) for item in value]
    return value


def write_jsonl(records: Iterable[dict], stream: BinaryIO) -> int:
    """Write one compact JSON object per line, in batches; return the number of lines."""
    batch: list[bytes] = []
    count = 0
    for record in records:
        batch.append(json_bytes(record))
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
