"""The lines of ``eval --engine dask -o FILE`` written into the output by the workers
(:class:`prefeval.io.output.InPlace`, :meth:`prefeval.engine.dask.DaskExecutor._fetched`): each
partition's worker writes its lines at the place the output has reached, the client moves on past
them, and the file is the bytes of ``--engine memory``; a worker that cannot open the file hands its
lines over, as to any other output; a failed write names the output.

The cluster is in this process (``LocalCluster(processes=False)``: two single-threaded workers), so
that what the workers write can be recorded; the partitions are small (a summation block of 4
queries, partitions of 1 KiB of input), so that a collection of 60 queries is cut into many.
"""

from __future__ import annotations

import errno
import os

import pytest
from conftest import run_cli
from contract import assert_one_line_error
from test_partitioned import _collection

from prefeval.engine import partitioned, results
from prefeval.io import output

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def scheduler() -> str:
    """The address of a cluster of two single-threaded workers in this process."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                                  scheduler_kwargs={"dashboard_address": None}) as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def small_partitions(monkeypatch) -> None:
    monkeypatch.setattr(results, "SUM_BLOCK", 4)
    monkeypatch.setattr(partitioned, "PARTITION_BYTES", 1 << 10)


@pytest.fixture
def written(monkeypatch) -> list[tuple[str, int, int]]:
    """Records each write in place by a worker: (the path, the offset, the bytes written)."""
    calls: list[tuple[str, int, int]] = []
    write = output.write_in_place

    def recording(path, offset, pieces):
        size = write(path, offset, pieces)
        calls.append((path, offset, size))
        return size

    monkeypatch.setattr(output, "write_in_place", recording)
    return calls


def _dask(scheduler: str, qrels: str, runs, *options):
    return run_cli("eval", "-q", "-R", qrels, *runs, "--engine", "dask", "--scheduler", scheduler, *options)


def _memory(qrels: str, runs) -> bytes:
    result = run_cli("eval", "-q", "-R", qrels, *runs, "--engine", "memory")
    assert result.exit_code == 0, result.stderr
    return result.stdout_bytes


def test_the_workers_write_their_lines_in_order_into_the_output(tmp_path, scheduler, small_partitions, written):
    """Every partition's lines written by its worker, one after the other from the file's start into
    the output's temporary file (beside it), and the file is memory's bytes, its summary after them."""
    qrels, runs = _collection(tmp_path, 3)
    target = tmp_path / "prefs.jsonl"
    result = _dask(scheduler, qrels, runs, "-o", target)
    assert result.exit_code == 0, result.stderr
    expected = _memory(qrels, runs)
    assert target.read_bytes() == expected
    assert len(written) >= 5
    paths = {path for path, _, _ in written}
    assert len(paths) == 1 and os.path.dirname(paths.pop()) == str(tmp_path)
    offsets = [offset for _, offset, _ in written]
    assert offsets[0] == 0 and all(offset == before + size for offset, (_, before, size) in zip(offsets[1:], written))
    end = written[-1][1] + written[-1][2]
    assert b'"qid":"all"' not in expected[:end] and expected[end:].startswith(b'{"qid":"all"')
    assert sorted(os.listdir(tmp_path)) == sorted(["prefs.jsonl", "qrels", *map(os.path.basename, runs)])


def test_workers_that_cannot_open_the_output_hand_their_lines_over(tmp_path, scheduler, small_partitions,
                                                                   monkeypatch):
    """A worker that does not see the output's file (another machine's filesystem) writes nothing:
    the client takes that partition's lines and writes them, and every later one's; memory's bytes."""
    qrels, runs = _collection(tmp_path, 5)
    attempts = []
    monkeypatch.setattr(output, "write_in_place", lambda path, offset, pieces: attempts.append(offset))
    target = tmp_path / "prefs.jsonl"
    result = _dask(scheduler, qrels, runs, "-o", target)
    assert result.exit_code == 0, result.stderr
    assert target.read_bytes() == _memory(qrels, runs)
    assert attempts == [0]


def test_a_failed_write_in_place_names_the_output(tmp_path, scheduler, small_partitions, monkeypatch):
    """A worker's refused write is the output's (as the client's own would be): one line naming the
    file as ``-o`` gave it, and nothing left in its folder."""
    qrels, runs = _collection(tmp_path, 6)

    def full(path, offset, pieces):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(output, "write_in_place", full)
    target = tmp_path / "out" / "prefs.jsonl"
    target.parent.mkdir()
    assert_one_line_error(_dask(scheduler, qrels, runs, "-o", target), 1,
                          f"prefeval: error: {target}: no space left on device")
    assert os.listdir(target.parent) == []


@pytest.mark.parametrize("where", ["stdout", "gzip", "parts"])
def test_only_a_plain_output_file_is_written_in_place(tmp_path, scheduler, small_partitions, written, where):
    """Standard output (held in an anonymous file), a gzip file, and parts (which the workers write
    whole) take no lines written in place; the bytes are memory's."""
    import gzip

    qrels, runs = _collection(tmp_path, 4)
    options = {"stdout": (), "gzip": ("-o", tmp_path / "prefs.jsonl.gz"), "parts": ("--parts", tmp_path / "parts")}
    result = _dask(scheduler, qrels, runs, *options[where])
    assert result.exit_code == 0, result.stderr
    made = {"stdout": lambda: result.stdout_bytes,
            "gzip": lambda: gzip.decompress((tmp_path / "prefs.jsonl.gz").read_bytes()),
            "parts": lambda: b"".join(path.read_bytes() for path in sorted((tmp_path / "parts").iterdir()))}[where]()
    assert made == _memory(qrels, runs)
    assert written == []


def test_write_in_place_writes_an_existing_file_from_an_offset(tmp_path):
    """The pieces one after the other from the offset, the rest of the file as it was; no file is
    created (a path this process does not see is not the output's)."""
    target = tmp_path / "out"
    target.write_bytes(b"0123456789")
    assert output.write_in_place(str(target), 3, [b"ab", b"", b"cde"]) == 5
    assert target.read_bytes() == b"012abcde89"
    assert output.write_in_place(str(target), 12, [b"xy"]) == 2
    assert target.read_bytes() == b"012abcde89\0\0xy"
    assert output.write_in_place(str(tmp_path / "missing"), 0, [b"x"]) is None
    assert not (tmp_path / "missing").exists()


def test_in_place_is_the_temporary_file_of_a_replaced_output(tmp_path):
    """:func:`~prefeval.io.output.in_place` of the stream of ``-o FILE`` names its temporary file; of
    standard output, a gzip file or a held output, None."""
    with output.output_stream(str(tmp_path / "prefs.jsonl")) as stream:
        found = output.in_place(stream)
        assert found is not None and os.path.dirname(found.path) == str(tmp_path)
        stream.write(b"ab")
        assert found.position() == 2
        found.skip(3)
        stream.write(b"c")
    assert (tmp_path / "prefs.jsonl").read_bytes() == b"ab\0\0\0c"
    for path, held in ((None, False), (str(tmp_path / "x.gz"), False), (None, True)):
        with output.output_stream(path, held=held) as stream:
            assert output.in_place(stream) is None
