"""JSON lines: a batched orjson writer and a validating record reader.

Where the lines go (stdout, or an atomically replaced ``-o`` file) is :mod:`prefeval.io.output`;
:func:`output_stream` is also importable from here, where it used to live.

Every number read is finite: JSON has no infinity nor NaN, and orjson refuses ``Infinity``, ``NaN``
and a number too large for a double (``1e400``, ``-1e999``, a 400-digit integer). Such a value is
reported as what it is, ``FILE:LINE: value of 'ap' is not a finite number (1e400)``
(:func:`non_finite_message`), not as malformed JSON; readers that take numbers from elsewhere (a
DataFrame, a faster parser) refuse non-finite ones with the same message.
"""

from __future__ import annotations

import math
import re
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
    """(line number, object) for every non-blank line; a line that is not a JSON object, or holds a
    number that is not finite (module docstring), is an :class:`InputError` naming ``source`` and the
    line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            message = _non_finite(line, error.pos) or f"malformed JSON ({error.args[0] if error.args else error})"
            raise InputError(source, message, number) from None
        if not isinstance(record, dict):
            raise InputError(source, "expected a JSON object", number)
        yield number, record


def non_finite_message(key: str | None, value) -> str:
    """How a number that is not finite is refused: the value of ``key`` (None: within a list or at the
    top), as it was written (``value``)."""
    where = f"value of {key!r}" if key is not None else "a value"
    return f"{where} is not a finite number ({value})"


_NUMBER = re.compile(r"[-+]?(?:[0-9.]+(?:[eE][-+]?[0-9]+)?|inf(?:inity)?|nan)", re.IGNORECASE)
_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:')


def _non_finite(line: bytes, position: int) -> str | None:
    """The refusal of a line that orjson stopped reading at ``position`` (a character index, after a
    sign it stopped at), when what is there is a number that is not finite (``1e400``, ``-Infinity``,
    ``NaN``, ``+inf``); None when it is something else."""
    text = line.decode("utf-8", "surrogateescape")
    start = position - 1 if 0 < position <= len(text) and text[position - 1] in "+-" else position
    token = _NUMBER.match(text, start)
    try:
        if token is None or math.isfinite(float(token.group())):
            return None
    except ValueError:  # digits and dots that are no number ("1.2.3"): malformed, not infinite
        return None
    keys = _KEY.findall(text, 0, start)
    key = orjson.loads(f'"{keys[-1]}"'.encode("utf-8", "surrogateescape")) if keys else None
    return non_finite_message(key, token.group())
