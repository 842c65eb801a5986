"""Where a command's output goes: standard output, or the file that ``-o`` names.

:func:`resolve_output` decides, before any work is done, what writing ``-o PATH`` means, and
refuses what cannot or must not be done (one line each, a :class:`~prefeval.errors.UsageError`):

* a regular file, or a new one, is replaced atomically: written to a temporary file beside it and
  renamed over it only once everything is written, so that a failure or a stop never leaves half a
  file nor touches an existing one. Through a symbolic link, the file replaced is the link's target
  (the link stays);
* anything else (``/dev/null``, ``/dev/stdout`` and the other names of open descriptors, a FIFO, a
  character device) is written through, as the shell's ``>`` would: replacing it would put a
  regular file in its place (or, as root, replace ``/dev/null``), and a temporary file cannot be
  created in ``/dev``;
* a directory, a missing or unwritable directory, and a file that is also one of the command's
  inputs (which the replacement would destroy) are refused;
* a name ending in ``.gz`` is written gzip-compressed, with reproducible bytes (no time stamp and no
  file name in the header), so that the same output gives the same file.

:func:`output_stream` then writes there. On standard output, when it is a terminal, the progress line
(:mod:`prefeval.runtime.progress`) is cleared before each write, so data never starts after it.

The system's refusal to write (a full disk, ``/dev/full``, a quota, an I/O error) is an ``OSError``
that names what was being written, as the command line reports it (``prefeval: error: /dev/full: no
space left on device``): the file as ``-o`` gave it, :data:`STANDARD_OUTPUT`, or the temporary file
that holds a ``held`` output. The system itself names no file for a failed write.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
import weakref
from collections.abc import Iterable, Iterator
from typing import BinaryIO, NamedTuple

from prefeval.errors import UsageError
from prefeval.io.source import STDIN
from prefeval.runtime.progress import clear_progress_line
from prefeval.runtime.signals import deferred, ignore_stops

STDOUT = "-"
STANDARD_OUTPUT = "standard output"
"""How errors name standard output."""
GZIP_SUFFIX = ".gz"
GZIP_LEVEL = 6
"""gzip's own default: nearly the size of level 9 at a fraction of its time."""

_DESCRIPTOR_DIRECTORY = re.compile(r"/proc/[^/]+/fd")
"""Where the names of open descriptors lead (``/dev/stdout`` -> ``/proc/self/fd/1``)."""
_MAX_LINKS = 40


class OutputTarget(NamedTuple):
    """What writing ``-o path`` means: the ``file`` written (``path`` with its symbolic links
    resolved), whether it is replaced atomically (a regular or new file) or written through, and
    whether the output is gzip-compressed."""

    path: str
    file: str
    replace: bool
    compress: bool


def resolve_output(path: str | os.PathLike | None, inputs: Iterable = ()) -> OutputTarget | None:
    """Where ``-o path`` writes (None: standard output, for no path or ``-``), checked before any work.

    ``inputs`` are the command's input paths: a regular file among them is refused as the output.
    Anything that keeps the output from being written is a :class:`UsageError` naming ``path``.
    """
    if path is None:
        return None
    path = os.fspath(path)
    if path == STDOUT:
        return None
    if not path:
        raise UsageError("the output file name is empty")
    compress = path.endswith(GZIP_SUFFIX)
    if _names_a_descriptor(path):
        return OutputTarget(path, path, replace=False, compress=compress)
    file = os.path.realpath(path)
    try:
        status = os.stat(file)
    except (FileNotFoundError, NotADirectoryError):
        if path.endswith(os.sep):
            raise UsageError(f"{path}: cannot be written: there is no directory {path}") from None
        _check_directory(path, file)
        return OutputTarget(path, file, replace=True, compress=compress)
    except OSError as error:
        raise UsageError(f"{path}: cannot be written ({_reason(error)})") from None
    if stat.S_ISDIR(status.st_mode):
        raise UsageError(f"{path}: is a directory, not a file")
    if stat.S_ISSOCK(status.st_mode):
        raise UsageError(f"{path}: is a socket, not a file")
    if not os.access(file, os.W_OK):
        raise UsageError(f"{path}: cannot be written (permission denied)")
    if not stat.S_ISREG(status.st_mode):
        return OutputTarget(path, path, replace=False, compress=compress)
    _check_not_an_input(path, status, inputs)
    _check_directory(path, file)
    return OutputTarget(path, file, replace=True, compress=compress)


def _check_not_an_input(path: str, status: os.stat_result, inputs: Iterable) -> None:
    """Same file, whatever the name it goes by (a symbolic or hard link, ``./``, a relative path)."""
    for source in inputs:
        source = os.fspath(source)
        if source == STDIN:
            continue
        try:
            same = os.path.samestat(status, os.stat(source))
        except OSError:  # the input's own problem, reported when it is read
            continue
        if same:
            raise UsageError(f"{path}: is also an input ({source}); writing the output there would destroy it")


def _check_directory(path: str, file: str) -> None:
    """The directory that will hold ``file`` (and its temporary sibling) exists and may be written."""
    directory = os.path.dirname(file)
    given = os.path.dirname(path) or os.curdir
    shown = given if os.path.realpath(given) == directory else directory
    if not os.path.isdir(directory):
        missing = not os.path.lexists(directory)
        raise UsageError(f"{path}: cannot be written: " +
                         (f"there is no directory {shown}" if missing else f"{shown} is not a directory"))
    if not os.access(directory, os.W_OK | os.X_OK):
        raise UsageError(f"{path}: cannot be written (permission denied in {shown})")


def _names_a_descriptor(path: str) -> bool:
    """Whether ``path`` leads, link by link, through ``/proc/*/fd`` (``/dev/stdout``, ``/dev/fd/3``):
    such a name stands for a file already open (often a pipe, or the file that a shell's ``>>``
    appends to), which must be written through, never replaced."""
    current = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        directory = os.path.realpath(os.path.dirname(current))
        if _DESCRIPTOR_DIRECTORY.fullmatch(directory):
            return True
        if not os.path.islink(current):
            return False
        current = os.path.join(directory, os.readlink(current))
    return False


def _reason(error: OSError) -> str:
    return "permission denied" if isinstance(error, PermissionError) else (error.strerror or str(error)).lower()


@contextlib.contextmanager
def output_stream(path: str | os.PathLike | None, inputs: Iterable = (), held: bool = False) -> Iterator[BinaryIO]:
    """Where output goes: standard output (``None`` or ``-``), or ``path`` as :func:`resolve_output`
    decides (replaced atomically only when the block completes, or written through; gzip for a
    name ending in ``.gz``).

    ``held``: what is written through (standard output, a pipe, a device) is first written to an
    anonymous temporary file and copied out only when the block completes, so that an error found
    late (a streamed evaluation reads its inputs as it writes) leaves nothing half written there
    either; a replaced file is held anyway.

    A file written through is opened for appending: a name such as ``/dev/stdout`` reopens the file
    behind the descriptor, and when a shell opened that file with ``>>`` (or has written to it
    already), the output must continue it, not truncate it; a FIFO or a device is the same either way.
    """
    target = resolve_output(path, inputs)
    if held and (target is None or not target.replace):
        with _held() as spool:
            yield spool
            spool.seek(0)
            with output_stream(path, inputs) as stream:
                while block := spool.read(1 << 20):
                    stream.write(block)
        return
    if target is None:
        if sys.stdout is None:  # closed by the caller (``>&-``)
            raise UsageError("standard output is closed: name an output file with -o")
        stdout = sys.stdout.buffer
        yield _NamedStream(stdout, STANDARD_OUTPUT, terminal=sys.stdout.isatty())
        with _named(STANDARD_OUTPUT):
            stdout.flush()
        return
    with _replaced(target.file) if target.replace else _written_through(target.path) as handle:
        if not target.compress:
            yield handle
            return
        import gzip  # here, not with the command line's start-up (as tempfile below)

        with gzip.GzipFile(filename="", mode="wb", fileobj=handle, compresslevel=GZIP_LEVEL, mtime=0) as packed:
            yield packed


@contextlib.contextmanager
def _replaced(file: str) -> Iterator[BinaryIO]:
    """A temporary file beside ``file``, renamed over it when the block completes, removed otherwise.

    Creating the temporary file and renaming it are each done whole (:func:`deferred`), so a stop
    never leaves it behind; once the file is in place, a stop comes too late (:func:`ignore_stops`).
    The system's refusals name ``file``, never the temporary file the user did not ask for.
    """
    import tempfile

    handle = None
    try:
        with deferred():
            handle = tempfile.NamedTemporaryFile("wb", dir=os.path.dirname(file),
                                                 prefix=f".{os.path.basename(file)}.", suffix=".tmp", delete=False)
        _REPLACING.add(handle)
        with handle:
            yield handle
        with deferred():
            os.chmod(handle.name, _mode_for(file))
            os.replace(handle.name, file)
            ignore_stops()
    except BaseException as error:
        if handle is not None:
            with contextlib.suppress(OSError):
                os.unlink(handle.name)
        if isinstance(error, OSError) and error.filename in (None, getattr(handle, "name", None)):
            raise OSError(error.errno, error.strerror, file) from None
        raise


_REPLACING: weakref.WeakSet = weakref.WeakSet()
"""The temporary files of the outputs being replaced (:func:`_replaced`): files of their own, written
from their start, that other processes may write parts of (:func:`in_place`)."""


class InPlace(NamedTuple):
    """An output file that other processes (the workers of ``--engine dask``) write parts of at the
    place the output has reached, under ``path`` (:func:`write_in_place`), where the process writing the
    rest of it (``stream``) then moves on past them (:meth:`skip`): the lines of a partition never pass
    through the process that writes the output."""

    path: str
    stream: BinaryIO

    def position(self) -> int:
        """Where the next bytes go: everything written before them is in the file."""
        self.stream.flush()
        return self.stream.tell()

    def skip(self, size: int) -> None:
        """Move on past ``size`` bytes that another process wrote at :meth:`position`."""
        self.stream.seek(size, os.SEEK_CUR)


def in_place(stream) -> InPlace | None:
    """``stream`` as an :class:`InPlace`, when it is the temporary file of an output being replaced
    (``-o FILE``, uncompressed); None for any other stream (standard output, an output held or written
    through, a gzip stream), which only this process writes."""
    return InPlace(stream.name, stream) if stream in _REPLACING else None


def write_in_place(path: str, offset: int, pieces: Iterable[bytes]) -> int | None:
    """Write ``pieces`` one after the other into the file ``path``, which exists, from byte ``offset``
    on (the part of an :class:`InPlace` output that this process writes); the bytes written, or None
    (nothing written) when no such file can be opened for writing here: the output of a process on
    another machine, whose filesystem this one does not share, or of a user that this one is not."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CLOEXEC)  # not created: the output's own file alone
    except OSError:
        return None
    start = offset
    try:
        for data in pieces:
            view = memoryview(data)
            while len(view):
                written = os.pwrite(descriptor, view, offset)
                offset += written
                view = view[written:]
    finally:
        os.close(descriptor)
    return offset - start


@contextlib.contextmanager
def _written_through(path: str) -> Iterator[BinaryIO]:
    """``path`` opened for appending (see :func:`output_stream`), its errors naming it, closed at the end
    (where what is still buffered is written: a failure there is the output's too)."""
    handle = open(path, "ab")
    try:
        yield _NamedStream(handle, path)
    except BaseException:
        with contextlib.suppress(OSError):  # the error on the way out is the one to report
            handle.close()
        raise
    with _named(path):
        handle.close()


@contextlib.contextmanager
def _held() -> Iterator[BinaryIO]:
    """An anonymous temporary file (in ``$TMPDIR``), gone when closed, whatever happens; its errors
    name it as "a temporary file in $TMPDIR"."""
    import tempfile

    with tempfile.TemporaryFile("w+b") as spool:
        yield _NamedStream(spool, f"a temporary file in {tempfile.gettempdir()}")


@contextlib.contextmanager
def _named(name: str) -> Iterator[None]:
    """Within the block, an ``OSError`` that names no file (a write's) names ``name``. A broken pipe is
    left as it is: the command line ends quietly when the reader of its output goes away."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as error:
        if error.filename is not None or error.errno is None:
            raise
        raise OSError(error.errno, error.strerror, name) from None


def _mode_for(file: str) -> int:
    """The permissions of the file replaced, or those an ordinary new file gets (0666 less the umask):
    temporary files start private."""
    with contextlib.suppress(FileNotFoundError):
        return stat.S_IMODE(os.stat(file).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


class _NamedStream:
    """A stream whose failures to write name it (:func:`_named`). On a ``terminal`` (standard output),
    each write first clears the progress line (drawn on stderr, most likely the same terminal), and is
    flushed at once, so that the two never share a line."""

    def __init__(self, stream: BinaryIO, name: str, terminal: bool = False):
        self._stream = stream
        self._name = name
        self._terminal = terminal

    def write(self, data) -> int:
        if self._terminal:
            clear_progress_line()
        with _named(self._name):
            written = self._stream.write(data)
            if self._terminal:
                self._stream.flush()
        return written

    def flush(self) -> None:
        with _named(self._name):
            self._stream.flush()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


# --- parts: a directory of part files (``eval --parts DIR``) -------------------------------------------

PART_SUFFIX = ".jsonl"
SUMMARY_PART = "summary" + PART_SUFFIX
"""The part that holds the summary lines: it sorts after every ``part-NNNNN.jsonl``, so that ``cat
DIR/*`` is the single output's bytes."""


def part_name(number: int) -> str:
    """The file name of part ``number``: ``part-00000.jsonl``, numbered from 0 (five digits, more past
    99,999, so that names sort as their numbers do up to there)."""
    return f"part-{number:05d}{PART_SUFFIX}"


def check_parts_directory(path: str | os.PathLike, inputs: Iterable = ()) -> str:
    """``path`` as ``--parts`` may write it, checked before any work (a :class:`UsageError` naming
    it): a new directory, or an empty one, whose parent exists and may be written; not an input."""
    path = os.fspath(path)
    if not path:
        raise UsageError("the parts directory name is empty")
    directory = os.path.realpath(path)
    if os.path.lexists(directory):
        if not os.path.isdir(directory):
            raise UsageError(f"{path}: is not a directory; --parts writes a new (or empty) directory")
        if os.listdir(directory):
            raise UsageError(f"{path}: is not empty; --parts writes a new (or empty) directory")
    for source in inputs:
        if isinstance(source, (str, os.PathLike)) and os.fspath(source) != STDIN and \
                os.path.realpath(os.fspath(source)).startswith(directory + os.sep):
            raise UsageError(f"{path}: holds an input ({os.fspath(source)}); --parts writes a new directory")
    _check_directory(path.rstrip(os.sep) or path, directory)
    return directory


class PartsDirectory(NamedTuple):
    """Where the parts of one output are written while it is made: ``staging``, a hidden directory
    beside the target ``directory``, renamed to it when everything is written."""

    directory: str
    staging: str

    def part(self, number: int) -> str:
        """The path of part ``number`` (in the staging directory, where the workers write it)."""
        return os.path.join(self.staging, part_name(number))

    @property
    def summary(self) -> str:
        return os.path.join(self.staging, SUMMARY_PART)


@contextlib.contextmanager
def parts_output(path: str | os.PathLike, inputs: Iterable = ()) -> Iterator[PartsDirectory]:
    """A directory of parts (``eval --parts DIR``): made as a hidden staging directory beside ``path``
    (the processes that write parts must see it: a shared filesystem for a cluster's workers), which
    replaces ``path`` (new, or an empty directory) only when the block completes; removed otherwise,
    so that a failure leaves no partial directory (or, when it cannot be removed, an error that
    names it)."""
    import shutil
    import tempfile

    directory = check_parts_directory(path, inputs)
    staging = None
    try:
        with deferred():
            staging = tempfile.mkdtemp(dir=os.path.dirname(directory), prefix=f".{os.path.basename(directory)}.",
                                       suffix=".tmp")
        yield PartsDirectory(directory, staging)
        with deferred():
            os.chmod(staging, _mode_for_directory())
            os.rename(staging, directory)  # over an empty directory too (checked before the work)
            ignore_stops()
    except BaseException:
        if staging is not None and os.path.exists(staging):
            shutil.rmtree(staging, ignore_errors=True)
            if os.path.exists(staging):
                raise OSError(f"{os.fspath(path)}: the parts could not be written, and {staging} (parts "
                              "written so far) could not be removed") from None
        raise


def write_part(path: str, data: bytes) -> None:
    """Write one part file whole: to a temporary name beside it, renamed when written (a worker that
    is stopped, or whose task is run again, leaves no half part under the part's name)."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, _mode_for(path))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _mode_for_directory() -> int:
    """The permissions a new directory gets (0777 less the umask): mkdtemp's are private."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o777 & ~umask


class PartWriter:
    """The part written here, in order, of an output whose parts are not written by workers (the
    readers ``memory`` and ``stream``: one part, ``part-00000.jsonl``); created at the first bytes."""

    def __init__(self, parts: PartsDirectory):
        self.parts = parts
        self._handle = None

    def write(self, data: bytes) -> None:
        if not data:
            return
        if self._handle is None:
            self._handle = _NamedStream(open(self.parts.part(0), "wb"), self.parts.part(0))
        self._handle.write(data)

    def close(self) -> None:
        if self._handle is not None:
            with _named(self.parts.part(0)):
                self._handle.close()
