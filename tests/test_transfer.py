"""Results handed from a worker process to its parent (prefeval.runtime.transfer): what is sent is
what is received, the large arrays and texts out of band, whatever the sizes around the threshold."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from prefeval.runtime import transfer


class _End:
    def __init__(self, fd: int):
        self.fd = fd

    def fileno(self) -> int:
        return self.fd


def _through_a_pipe(obj):
    """``obj`` sent by one thread through a pipe and received by another (a pipe holds less than a
    large message: both ends must work at once, as a worker and its parent do)."""
    read_end, write_end = os.pipe()
    errors = []

    def write():
        try:
            transfer.send(_End(write_end), obj)
        except Exception as error:  # noqa: BLE001 - handed to the test
            errors.append(error)
        finally:
            os.close(write_end)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        received = transfer.receive(_End(read_end))
    finally:
        writer.join()
        os.close(read_end)
    assert not errors
    return received


@pytest.mark.parametrize("size", [0, 1, transfer.OUT_OF_BAND_BYTES - 1, transfer.OUT_OF_BAND_BYTES, 3_000_001])
def test_arrays_and_texts_arrive_as_sent(size):
    rng = np.random.default_rng(size)
    values = rng.random(size // 8 + 1)
    text = bytes(rng.integers(0, 256, size, dtype=np.uint8))
    sent = (7, True, {"values": values, "codes": np.arange(size % 1000, dtype=np.int32), "lines": [text, b"end\n"],
                      "strided": values[::2], "name": "sample"})
    number, succeeded, received = _through_a_pipe(sent)
    assert (number, succeeded, received["name"]) == (7, True, "sample")
    assert received["values"].tobytes() == values.tobytes() and received["values"].dtype == values.dtype
    assert received["codes"].tolist() == list(range(size % 1000))
    assert bytes(received["lines"][0]) == text and received["lines"][1] == b"end\n"
    assert received["strided"].tolist() == values[::2].tolist()
    received["values"][0] = -1.0  # arrays received are the parent's own, writable


@pytest.mark.parametrize("size", [transfer.OUT_OF_BAND_BYTES - 1, transfer.OUT_OF_BAND_BYTES])
def test_large_arrays_and_texts_leave_the_pickle(size):
    """From OUT_OF_BAND_BYTES on, an array's data and a bytearray follow the pickle as buffers of their
    own (the message's head counts them), a bytes object in a list or a tuple too."""
    import struct

    read_end, write_end = os.pipe()
    transfer.widen(_End(write_end))  # a pipe of 1 MiB holds the whole message
    transfer.send(_End(write_end), [np.zeros(size, dtype=np.uint8), (bytearray(size), bytes(size))])
    os.close(write_end)
    length, count = struct.unpack("<QQ", os.read(read_end, 16))
    os.close(read_end)
    large = size >= transfer.OUT_OF_BAND_BYTES
    assert count == (3 if large else 0)
    assert (length < 2 * size) if large else (length > 3 * size)


def test_a_closed_pipe_is_the_end_of_the_results():
    read_end, write_end = os.pipe()
    os.close(write_end)
    with pytest.raises(EOFError):
        transfer.receive(_End(read_end))
    os.close(read_end)
    read_end, write_end = os.pipe()
    os.write(write_end, b"\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00")  # a message cut short by the writer's end
    os.close(write_end)
    with pytest.raises(EOFError, match="middle of a message"):
        transfer.receive(_End(read_end))
    os.close(read_end)
