"""Getting the bytes of an input: a path, a gzip file (detected by its magic bytes) or ``-`` for stdin,
read whole (:func:`read_bytes`) or in blocks of whole lines (:func:`read_blocks`); and telling a
columnar input (Parquet or Arrow, by its magic bytes too, whatever its name) from text:
:func:`columnar_format`, which :mod:`prefeval.io.columnar` reads.

**Columnar inputs.** A Parquet file starts (and ends) with ``PAR1``, an Arrow IPC file (Feather
version 2) with ``ARROW1``. A directory is a columnar input (a partitioned dataset, as Spark, Dask,
pyarrow and polars write them) when its first file is one (:func:`dataset_files`: every file under
it, hidden ones and those whose name starts with ``_`` or ``.`` left out, as those writers' marker
files are, in natural order). Columnar data is read from a path, never as text: given as standard
input or a pipe, or to a reader of text, it is an :class:`InputError` saying so.

**Bounds.** Nothing bounds the size of an input: a recommender's run of ten million users is large
and legitimate, and gzip data may expand a thousandfold. What is bounded is a line: at most
:data:`MAX_LINE_BYTES` bytes before its ``\\n``. Every reader stops as soon as a line is longer (a
line whose end has not come yet included), with an :class:`InputError` naming the file and the
line, so that a gzip bomb, ``/dev/zero`` or any input whose first 32 MiB hold no line end is refused
after reading at most 32 MiB of that line, whatever the engine. Text that is not lines (a binary
file, ``/dev/urandom``) holds a NUL byte, which no input may hold (TREC files and JSON lines
alike): reading for an evaluation stops at the end of the first line that holds one
(``stop_at_nul``), and the reader, which refuses that line, names it, or an earlier bad line as it
would had everything been read; an endless binary input ends there. A regular file that is not gzip
is finite and its size known: it is read whole in one call and then checked (its start first, for a
line end, before the rest is read). Every other input (gzip data, stdin, a FIFO, a device) is read,
and checked, piece by piece (:data:`PIECE_BYTES`). Running out of memory on an input of ordinary
lines is reported by the command line (:mod:`prefeval.cli.common`), in one line.

**Open files.** :func:`read_blocks`, the streamed engine's reader, holds no file open between two
pieces: each piece of a regular file is read by opening the file, reading at the offset where the
last piece ended, and closing it, so that streaming any number of runs at once needs one file
descriptor at a time. A file replaced while it is read (another file under its name) is an error.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import stat
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import NoReturn

from prefeval.errors import InputError, UsageError

GZIP_MAGIC = b"\x1f\x8b"
PARQUET, ARROW = "parquet", "arrow"
COLUMNAR_MAGIC = {b"PAR1": PARQUET, b"ARROW1": ARROW}
"""The first bytes of each columnar format, and its name."""
_MAGIC_BYTES = max(map(len, COLUMNAR_MAGIC))
UTF8_BOM = b"\xef\xbb\xbf"
STDIN = "-"

MAX_LINE_BYTES = 1 << 25
"""32 MiB: the most bytes a line of any input may have before its ``\\n`` (module docstring). TREC lines
take tens of bytes; the longest JSON lines prefeval writes (``sampled``'s discordant pairs,
``aggregate``'s summary of a thousand runs) a few MiB."""
BLOCK_BYTES = 1 << 22
"""How many bytes :func:`read_blocks` reads at a time (a block ends at the last line end in it)."""
PIECE_BYTES = 1 << 20
"""How many bytes are read, or decompressed from gzip data, at a time, where an input is read piece
by piece."""
_PEEK_BYTES = 1 << 16
"""How much of a regular file is read first, for a line end, before the whole file is."""
_GZIP_WINDOW = 16 + zlib.MAX_WBITS
"""zlib's window bits for gzip data: the gzip header and trailer (CRC-32, length) are checked."""
_CORRUPT_GZIP = "truncated or corrupt gzip data"
_LINE_TOO_LONG = (f"a line longer than {MAX_LINE_BYTES >> 20} MiB (the longest line prefeval reads): is this a file "
                  "of text lines?")


def read_bytes(path: str, stop_at_nul: bool = True, check_head: Callable[[bytes], object] | None = None) -> bytes:
    """Return the whole content of ``path`` (``-`` reads stdin), decompressed if it is gzip.

    A UTF-8 byte-order mark at the start is dropped. Anything that keeps the file from being read
    (missing, a directory, no permission, truncated or corrupt gzip data) is an :class:`InputError`,
    as is a line longer than :data:`MAX_LINE_BYTES` (naming it). ``stop_at_nul``: the content ends
    with the first line that holds a NUL byte (module docstring); ``prefeval check``, which reports
    on every line, reads on. ``check_head``: called with the content before a line too long, before
    that line is reported, so that a reader reports an earlier bad line first, as it does when it
    reads the same file in blocks (:func:`read_blocks`, which hands over the blocks before the line).
    """
    name = display_name(path)
    with _reading(name):
        if path == STDIN:
            if sys.stdin is None:  # closed by the caller (``<&-``)
                raise InputError(name, "standard input is closed")
            return _joined(_pieces(_held_chunks(sys.stdin.buffer, PIECE_BYTES), name, stop_at_nul), name, check_head)
        with open(path, "rb") as handle:
            if stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                magic = handle.read(_MAGIC_BYTES)
                handle.seek(0)
                _refuse_columnar(magic, name, regular=True)
                if not magic.startswith(GZIP_MAGIC):
                    return _whole_file(handle, name, check_head)
            return _joined(_pieces(_held_chunks(handle, PIECE_BYTES), name, stop_at_nul), name, check_head)


def read_blocks(path: str, block_bytes: int | None = None,
                span: tuple[int, int] | None = None) -> Iterator[tuple[bytes, int]]:
    """The content of the file ``path`` as :func:`read_bytes` gives it, in blocks of whole lines:
    (block, the 1-based number of its first line). Every block but the last ends with a line end;
    a line longer than ``block_bytes`` makes its block longer. Memory holds one block at a time (and
    the piece being read), gzip data is decompressed as it is read, and a regular file is open only
    while a piece of it is read (module docstring). The errors are those of :func:`read_bytes`.
    Default ``block_bytes``: :data:`BLOCK_BYTES`.

    ``span``: only the bytes ``start..stop-1`` of a regular file that is not gzip (a partition,
    :mod:`prefeval.engine.partitioned`, whose ends are line starts); lines are then numbered from 1
    at ``start``, and a byte-order mark is dropped only at the file's own start."""
    name = display_name(path)
    block_bytes = block_bytes or BLOCK_BYTES
    piece_bytes = min(block_bytes, PIECE_BYTES)
    pending: list[bytes] = []  # the pieces read after the last block, the first starting a line
    size, line, done = 0, 1, 0  # the bytes pending, the number of their first line, the bytes before them
    start, stop = span if span is not None else (0, None)
    with _reading(name):
        try:
            chunks = _file_chunks(path, name, piece_bytes, start, stop)
            for piece in (_pieces(chunks, name, True, piece_bytes) if start == 0 else _bounded(chunks)):
                pending.append(piece)
                size += len(piece)
                if size < block_bytes:
                    continue
                last = next((index for index in range(len(pending) - 1, -1, -1) if b"\n" in pending[index]), None)
                if last is None:
                    continue  # a line longer than a block goes on
                cut = pending[last].rfind(b"\n") + 1
                block = b"".join([*pending[:last], pending[last][:cut]])
                pending = [part for part in (pending[last][cut:], *pending[last + 1:]) if part]
                size -= len(block)
                yield block, line
                line += block.count(b"\n")
                done += len(block)
        except _LongLine as long_line:
            raise InputError(name, _LINE_TOO_LONG, line + b"".join(pending).count(b"\n", 0, long_line.start - done)
                             ) from None
    if pending:
        yield b"".join(pending), line


class _LongLine(Exception):
    """A line longer than :data:`MAX_LINE_BYTES`, starting at byte ``start`` of the content (every
    byte before it has been handed out)."""

    def __init__(self, start: int):
        super().__init__(start)
        self.start = start


def _whole_file(handle, name: str, check_head: Callable[[bytes], object] | None) -> bytes:
    """The content of a regular file that is not gzip: its first :data:`MAX_LINE_BYTES` are looked at
    for a line end (unless one comes in the first :data:`_PEEK_BYTES`), then it is read whole and its
    lines checked (:func:`read_bytes`)."""
    if b"\n" not in handle.read(_PEEK_BYTES):
        handle.seek(0)
        head = handle.read(len(UTF8_BOM) + MAX_LINE_BYTES + 1).removeprefix(UTF8_BOM)
        if len(head) > MAX_LINE_BYTES and b"\n" not in head[:MAX_LINE_BYTES + 1]:
            _line_too_long(name, b"", check_head)
    handle.seek(0)
    data = handle.read().removeprefix(UTF8_BOM)
    start = _first_long_line(data)
    if start is not None:
        _line_too_long(name, data[:start], check_head)
    return data


def _first_long_line(data: bytes) -> int | None:
    """Where the first line of ``data`` longer than :data:`MAX_LINE_BYTES` starts; None when there is
    none.

    Such a line covers a whole window of ``MAX_LINE_BYTES / 2`` bytes that starts at a multiple of
    that size, without a line end in it; so only those windows are searched for a line end (a search
    that stops at the first, a few bytes in), and only the line around a window without one is
    measured."""
    step = MAX_LINE_BYTES // 2
    for window in range(0, len(data), step):
        if data.find(b"\n", window, window + step) >= 0:
            continue
        start = data.rfind(b"\n", 0, window) + 1
        end = data.find(b"\n", window)
        if (len(data) if end < 0 else end) - start > MAX_LINE_BYTES:
            return start
    return None


def _joined(pieces: Iterator[bytes], name: str, check_head: Callable[[bytes], object] | None) -> bytes:
    """The pieces of :func:`_pieces` joined, or the error of the line too long (:func:`read_bytes`)."""
    kept: list[bytes] = []
    try:
        kept.extend(pieces)
    except _LongLine as long_line:
        _line_too_long(name, b"".join(kept)[:long_line.start], check_head)
    return b"".join(kept)


def _line_too_long(name: str, head: bytes, check_head: Callable[[bytes], object] | None) -> NoReturn:
    """Raise the :class:`InputError` of a line too long after ``head``, the content before it, unless
    ``check_head(head)`` raises first."""
    if check_head is not None:
        check_head(head)
    raise InputError(name, _LINE_TOO_LONG, head.count(b"\n") + 1)


def _pieces(chunks: Iterable[bytes], name: str, stop_at_nul: bool, size: int = PIECE_BYTES) -> Iterator[bytes]:
    """The content of an input given as its raw ``chunks``: decompressed when it starts with gzip's
    magic bytes, without a leading byte-order mark, in pieces of at most the size of a chunk (or of
    ``size``, from gzip data), which must not exceed :data:`MAX_LINE_BYTES`: a line is measured where
    it ends, or where a piece ends within it, so that no line longer than that fits in one piece.
    Raises :class:`_LongLine` as soon as a line is longer; with ``stop_at_nul``, ends with the end of
    the first line that holds a NUL byte (module docstring)."""
    chunks = iter(chunks)
    head = b""
    for chunk in chunks:  # enough for the magic bytes (a pipe may hand over one byte at first)
        head += chunk
        if len(head) >= _MAGIC_BYTES:
            break
    _refuse_columnar(head, name, regular=False)
    raw = itertools.chain([head] if head else [], chunks)
    yield from _bounded(_without_mark(_inflated(raw, name, size) if head.startswith(GZIP_MAGIC) else raw),
                        stop_at_nul)


def _refuse_columnar(head: bytes, name: str, regular: bool) -> None:
    """The :class:`InputError` of columnar data (``head``: its first bytes) met where text is read
    (module docstring): a regular file is not text; anything else (standard input, a pipe) is read
    as text, where columnar data would have to be given as a path."""
    found = next((kind for magic, kind in COLUMNAR_MAGIC.items() if head.startswith(magic)), None)
    if found is None:
        return
    label = {PARQUET: "Parquet", ARROW: "Arrow"}[found]
    if regular:
        raise InputError(name, f"is a {label} file, not lines of text")
    raise InputError(name, f"holds {label} data, which is read from a path (a file, or a directory of files), "
                           "not from standard input or a pipe")


def _bounded(pieces: Iterable[bytes], stop_at_nul: bool = True) -> Iterator[bytes]:
    """``pieces`` of text as they come, checked: :class:`_LongLine` as soon as a line is longer than
    :data:`MAX_LINE_BYTES` (a line is measured where it ends, or where a piece ends within it); with
    ``stop_at_nul``, the content ends with the end of the first line that holds a NUL byte. Alone, it
    reads a span that starts within a file (:func:`read_blocks`), where neither gzip nor a byte-order
    mark can be."""
    read = line_start = 0  # the bytes handed out, where the line they end in starts
    for piece in pieces:
        nul = piece.find(b"\0") if stop_at_nul else -1
        if nul >= 0:
            end = piece.find(b"\n", nul)
            piece = piece if end < 0 else piece[:end + 1]
        first_end = piece.find(b"\n")
        if read + (len(piece) if first_end < 0 else first_end) - line_start > MAX_LINE_BYTES:
            raise _LongLine(line_start)
        if first_end >= 0:
            line_start = read + piece.rfind(b"\n") + 1
        read += len(piece)
        yield piece
        if nul >= 0:
            return


def _without_mark(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """``pieces`` without a UTF-8 byte-order mark at their start, and without empty pieces."""
    head = b""
    for piece in pieces:
        head += piece
        if len(head) >= len(UTF8_BOM):
            break
    head = head.removeprefix(UTF8_BOM)
    if head:
        yield head
    yield from (piece for piece in pieces if piece)


def _inflated(chunks: Iterator[bytes], name: str, size: int) -> Iterator[bytes]:
    """The gzip data of ``chunks`` decompressed, in pieces of at most ``size`` bytes: every member
    (gzip files may be concatenated), zero bytes after a member skipped (padding), as :mod:`gzip`
    reads them; each member's CRC-32 and length are checked. Data that ends within a member, or is
    not gzip, is an :class:`InputError`."""
    inflater = None  # between members
    try:
        for chunk in chunks:
            data = chunk
            while True:
                if inflater is None:
                    data = data.lstrip(b"\0")
                    if not data:
                        break
                    inflater = zlib.decompressobj(_GZIP_WINDOW)
                piece = inflater.decompress(data, size)
                if piece:
                    yield piece
                if inflater.eof:
                    data, inflater = inflater.unused_data, None
                elif inflater.unconsumed_tail or len(piece) == size:  # more output is waiting
                    data = inflater.unconsumed_tail
                else:
                    break  # the next chunk is needed
    except zlib.error:
        raise InputError(name, _CORRUPT_GZIP) from None
    if inflater is not None:
        raise InputError(name, _CORRUPT_GZIP)


def _held_chunks(handle, size: int) -> Iterator[bytes]:
    """What ``handle`` reads, ``size`` bytes at a time, to its end."""
    while chunk := handle.read(size):
        yield chunk


def _file_chunks(path: str, name: str, size: int, start: int = 0, stop: int | None = None) -> Iterator[bytes]:
    """The bytes of the file ``path``, ``size`` at a time (of a regular file, those from ``start`` to
    ``stop``, the end by default). A regular file is opened for each chunk and read at the offset
    where the last ended (module docstring: a file replaced meanwhile is an :class:`InputError`);
    anything else (a FIFO, a device) is held open."""
    handle = open(path, "rb", buffering=0)
    status = os.fstat(handle.fileno())
    if not stat.S_ISREG(status.st_mode):
        with handle:
            yield from _held_chunks(handle, size)
        return
    offset = start
    try:
        while True:
            handle.seek(offset)
            chunk = handle.read(size if stop is None else max(min(size, stop - offset), 0))
            handle.close()
            if not chunk:
                return
            offset += len(chunk)
            yield chunk
            handle = open(path, "rb", buffering=0)
            again = os.fstat(handle.fileno())
            if (again.st_dev, again.st_ino) != (status.st_dev, status.st_ino):
                raise InputError(name, "was replaced by another file while it was read")
    finally:
        handle.close()


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


def check_readable(path) -> None:
    """Raise the :class:`InputError` that reading ``path`` would raise when it is missing, a directory
    that is not a columnar input, or a regular file that cannot be opened, without reading it (nor
    opening what is not a regular file: a FIFO would wait for its writer). Standard input, and what
    is not a path, pass."""
    if not isinstance(path, (str, os.PathLike)) or os.fspath(path) == STDIN:
        return
    with _reading(display_name(path)):
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            if _dataset_format(os.fspath(path)) is None:
                raise IsADirectoryError(path)
        elif stat.S_ISREG(mode):
            open(path, "rb").close()


def is_regular_file(path) -> bool:
    """Whether ``path`` names a regular file or a directory of columnar files (which can be read more
    than once), not ``-`` or a pipe."""
    if not isinstance(path, (str, os.PathLike)) or os.fspath(path) == STDIN:
        return False
    return os.path.isfile(path) or os.path.isdir(path) and columnar_format(path) is not None


def columnar_format(path) -> str | None:
    """:data:`PARQUET` or :data:`ARROW` when ``path`` is a columnar file, or a directory whose first
    file is one (:func:`dataset_files`), by their magic bytes (module docstring); None for anything
    else: a text file (gzip too), standard input, a pipe, a path that cannot be read (its reader
    says why). A file is opened and its first bytes read: no cost that a text file would notice."""
    if not isinstance(path, (str, os.PathLike)):
        return None
    path = os.fspath(path)
    if path == STDIN:
        return None
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            return _dataset_format(path)
        if not stat.S_ISREG(mode):
            return None
        with open(path, "rb") as handle:
            head = handle.read(_MAGIC_BYTES)
    except OSError:
        return None
    return next((kind for magic, kind in COLUMNAR_MAGIC.items() if head.startswith(magic)), None)


def dataset_files(path: str) -> list[str]:
    """Every file of the directory ``path`` and its subdirectories, depth first in natural order (in
    each name, runs of digits compared as numbers: ``part.2`` before ``part.10``, as Dask and pyarrow
    number their parts without zeros; the rest by code point), leaving out hidden files and
    directories and those whose name starts with ``_`` (``_SUCCESS``, ``_metadata``, ``.crc`` files).
    Symbolic links to directories are not followed."""
    found = []
    for folder, folders, files in os.walk(path, onerror=_raise):
        folders[:] = [name for name in folders if not name.startswith(_HIDDEN)]
        found.extend(os.path.join(folder, name) for name in files if not name.startswith(_HIDDEN))
    return sorted(found, key=lambda file: [_natural_key(name) for name in os.path.relpath(file, path).split(os.sep)])


_HIDDEN = (".", "_")
_DIGITS = re.compile(r"(\d+)")


def _raise(error: OSError) -> NoReturn:
    raise error


def _natural_key(name: str) -> tuple:
    """The key of a file or directory name in natural order (:func:`dataset_files`): its runs of
    text and of digits, alternately, the digits as numbers; the name itself last (``07`` and ``7``)."""
    parts = _DIGITS.split(name)
    return tuple(int(part) if index % 2 else part for index, part in enumerate(parts)), name


def _dataset_format(path: str) -> str | None:
    """The columnar format of the directory ``path``'s first file (:func:`dataset_files`); None when
    it holds none, or its first file is not columnar. Only the first file is looked at, found
    without listing the whole tree."""
    first = _first_file(path)
    return columnar_format(first) if first is not None else None


def _first_file(path: str) -> str | None:
    """The first file under ``path`` in the order of :func:`dataset_files`, walking down one
    directory at a time (a mistaken path such as ``/`` is not listed whole)."""
    try:
        entries = sorted((entry for entry in os.scandir(path) if not entry.name.startswith(_HIDDEN)),
                         key=lambda entry: _natural_key(entry.name))
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                found = _first_file(entry.path)
                if found is not None:
                    return found
            elif entry.is_file():
                return entry.path
    except OSError:
        return None
    return None


def first_line(path: str, limit: int = 1 << 16) -> bytes | None:
    """The first line of a regular file (decompressed if gzip) that is neither blank nor a comment,
    from its first ``limit`` bytes; None when there is none, or ``path`` is not a regular file.

    For hints only (what a file given in the wrong place looks like): it never reads stdin or a
    FIFO, which could be read only once, and never fails.
    """
    if path == STDIN or not os.path.isfile(path):
        return None
    head = b""
    try:
        with _reading(display_name(path)), contextlib.closing(_pieces(_file_chunks(path, path, limit), path,
                                                                      stop_at_nul=False)) as pieces:
            for piece in pieces:
                head += piece
                if len(head) >= limit:
                    break
    except (InputError, _LongLine):
        return None
    lines = head[:limit].splitlines()
    if len(head) >= limit:  # the last line may be cut short
        lines = lines[:-1]
    return next((line for line in lines if line.strip() and not line.lstrip().startswith(b"#")), None)


def display_name(path: str) -> str:
    """How a source is named in messages: the path as given, or ``<stdin>``."""
    return "<stdin>" if path == STDIN else os.fspath(path)


def check_stdin_used_once(paths) -> None:
    """Standard input can be read only once: ``-`` may stand for one input at most (a usage error)."""
    if sum(1 for path in paths if isinstance(path, str) and path == STDIN) > 1:
        raise UsageError("standard input (-) can stand for only one of the input files")
