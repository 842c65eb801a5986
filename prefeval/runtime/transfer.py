"""Results handed from a forked worker process to its parent through a pipe, without a copy of the
large ones in either process's memory.

``Connection.send`` pickles a result into one buffer, which ``Connection.recv`` reads back through an
``io.BytesIO`` in pieces of the pipe's capacity (64 KiB), each read allocating as much as the rest
of the message, then unpickles into a third copy. A block of a million users' lines is hundreds of
megabytes: the copies are memory mapped afresh and page-faulted each time (1,200,000 page faults in
the parent on 2 runs x 1,000,000 users with the item measures), and the worker waits while the parent
copies.

:func:`send` pickles with protocol 5 (PEP 574): the data of every numpy array, and every text
(``bytes`` or ``bytearray``, in lists and tuples: :func:`_out_of_band`) of :data:`OUT_OF_BAND_BYTES`
or more leave the pickle *out of band* and are written to the pipe as they are, after it;
:func:`receive` reads each straight into a ``bytearray`` of its size and unpickles with those (an
array is then backed by its ``bytearray``: writable; a text arrives as that ``bytearray``). A message
is framed as ``<pickle length, number of buffers>`` (two little-endian uint64), the buffers'
lengths, the pickle, then the buffers; both ends of a pipe must use these two functions. The pipe's
capacity is raised to :data:`PIPE_BYTES` where Linux allows it (:func:`widen`), so that a megabyte
crosses per wake-up of the reader rather than 64 KiB.
"""

from __future__ import annotations

import os
import pickle
import struct
from typing import Any

OUT_OF_BAND_BYTES = 1 << 16
"""Arrays and texts of at least this many bytes cross out of band; smaller ones inside the pickle
(a write each would cost more than the copy)."""
PIPE_BYTES = 1 << 20
"""The capacity :func:`widen` asks for (Linux's default limit for a user, ``/proc/sys/fs/pipe-max-size``)."""

_HEAD = struct.Struct("<QQ")


def _out_of_band(obj, depth: int = 4):
    """``obj`` with each ``bytes`` or ``bytearray`` of :data:`OUT_OF_BAND_BYTES` or more that it holds
    in lists and tuples (``depth`` levels down) wrapped in a ``pickle.PickleBuffer``: pickle writes
    those objects inside the pickle whatever their size (it asks no reducer for them), and a buffer
    out of band."""
    kind = type(obj)
    if kind in (bytes, bytearray):
        return pickle.PickleBuffer(obj) if len(obj) >= OUT_OF_BAND_BYTES else obj
    if depth and kind in (list, tuple):
        return kind(_out_of_band(item, depth - 1) for item in obj)
    return obj


def send(connection, obj: Any) -> None:
    """Write ``obj`` to the pipe of ``connection`` (a ``multiprocessing`` connection, or anything with
    ``fileno()``), framed as the module docstring says. Raises ``BrokenPipeError`` when the reader is
    gone, and what pickling raises."""
    buffers: list[memoryview] = []

    def out_of_band(buffer: pickle.PickleBuffer) -> bool:
        view = buffer.raw()
        if view.nbytes < OUT_OF_BAND_BYTES:
            return True  # in the pickle
        buffers.append(view)
        return False

    data = memoryview(pickle.dumps(_out_of_band(obj), protocol=5, buffer_callback=out_of_band))
    fd = connection.fileno()
    head = _HEAD.pack(data.nbytes, len(buffers)) + struct.pack(f"<{len(buffers)}Q", *(b.nbytes for b in buffers))
    _write_all(fd, memoryview(head))
    _write_all(fd, data)
    for view in buffers:
        _write_all(fd, view)


def receive(connection) -> Any:
    """The next object :func:`send` wrote to the pipe of ``connection``; ``EOFError`` when the writer
    closed it before a whole message."""
    fd = connection.fileno()
    length, count = _HEAD.unpack(_read_exactly(fd, _HEAD.size))
    sizes = struct.unpack(f"<{count}Q", _read_exactly(fd, 8 * count)) if count else ()
    data = _read_exactly(fd, length)
    buffers = [_read_exactly(fd, size) for size in sizes]
    return pickle.loads(data, buffers=buffers)


def widen(connection) -> None:
    """Raise the capacity of the pipe of ``connection`` to :data:`PIPE_BYTES` where the system allows
    it (Linux's ``F_SETPIPE_SZ``); elsewhere, or beyond the user's limits, it stays as it is."""
    try:
        import fcntl

        fcntl.fcntl(connection.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


def _write_all(fd: int, view: memoryview) -> None:
    view = view.cast("B")
    while len(view):
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, size: int) -> bytearray:
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        count = os.readv(fd, [view[got:]])
        if count == 0:
            raise EOFError("the pipe closed in the middle of a message" if got else "the pipe is closed")
        got += count
    return buffer
