"""The Dask executor: the chunks of an evaluation evaluated on a Dask cluster (``eval --engine dask``).

The process that runs ``prefeval eval`` (the client) reads the qrels and runs chunk by chunk (its
reader, :data:`prefeval.engine.READERS`) and reduces each chunk to its RankTable: the ranks of the
relevant documents, kilobytes to megabytes. Each chunk is then a Dask task, run by a worker:
the same kernel as on one machine (:meth:`prefeval.engine.evaluation.Evaluation.chunk_results`), which
computes every measure on the chunk's queries and writes their lines. The client takes the
results back in query order, adds them to the summary (in its fixed order, :mod:`prefeval.engine.results`)
and writes them out: the bytes are those of the default engine.

So the inputs are read where the client runs (a local disk is enough: workers never open a file),
and workers need only prefeval installed, the same version as the client's. At most
:data:`IN_FLIGHT_PER_WORKER` chunks per worker are submitted ahead of the one being written, and a
chunk's results stay on its worker until the client writes them, fetched in pieces of about
:data:`FETCH_BYTES` (:meth:`DaskExecutor._fetched`), so the client's memory stays bounded whatever a
chunk's size (a partition of a columnar input starts at a row group: 100,000 users of lines, 60 MB).
When the lines go to a file (``-o FILE``) that the workers see (a filesystem they share with the
client), they never reach the client: each chunk's worker writes them into the file at the place the
output has reached, and the client moves on past them (:meth:`DaskExecutor._placed`). On 2 runs x 1M
users the lines are 700 MB, which cost the client and the scheduler (which relays what ``Client.run``
returns) a second of CPU each, taken from the workers' cores.

The cluster is dask.distributed's: a scheduler at ``scheduler`` (``tcp://host:8786``, as
``dask scheduler`` prints it), or, when none is given, a ``LocalCluster`` of ``jobs`` single-threaded
worker processes started for the evaluation and stopped after it. The local cluster has no dashboard
(its scheduler's HTTP routes listen on a free port of this machine: :data:`SCHEDULER_HTTP_ADDRESS`);
its workers ignore Ctrl-C, which reaches the whole process group, so that only the client decides
(it stops the cluster and ends quietly: :mod:`prefeval.runtime.signals`), and it is started as one
step, so that a stop during its start stops it once it is up rather than leaving its workers behind.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from prefeval.engine.chunks import Chunk
from prefeval.engine.executors import ChunkEvaluator
from prefeval.errors import UsageError
from prefeval.runtime.parallel import ClusterFailed
from prefeval.runtime.signals import ignored_by_spawned_children

IN_FLIGHT_PER_WORKER = 3
FETCH_BYTES = 1 << 23
"""A chunk's results are taken from its worker in pieces of about this many bytes (8 MiB; a piece
holds one result at least): what the client holds of a chunk at a time, besides one result being
written. Measured on 2 runs x 1M users as Parquet (partitions of 60 MB of lines): the client's peak
fell from 225 MiB (a partition taken whole) to the text path's (docs/scale-out.md, "Performance")."""
SCHEDULER_HTTP_ADDRESS = "127.0.0.1:0"
"""Where the local cluster's scheduler serves HTTP (its health and metrics routes; no dashboard is
started): a port the system chooses, on this machine only. Dask's default, port 8787, made it warn
when that port was taken (another cluster's dashboard) and move elsewhere anyway."""


QUIET_LOGGERS = ("asyncio", "distributed", "tornado")
"""The loggers of the client's event loop and of Dask, silenced while the executor is open: the
cluster's own tasks that a stop (or an error) cuts short log their failures there ("Task exception
was never retrieved", a worker lost while the cluster closes), which are not the command's to show
(what fails the evaluation reaches it as an exception)."""


@contextlib.contextmanager
def _quiet_loggers() -> Iterator[None]:
    """:data:`QUIET_LOGGERS` at level CRITICAL within the block, as they were after it."""
    loggers = [logging.getLogger(name) for name in QUIET_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


@contextlib.contextmanager
def _cluster_failures() -> Iterator[None]:
    """Within the block, what the cluster raises of its own (a worker lost, a task that could not be
    unpickled where it was sent, a connection closed) is a :class:`~prefeval.runtime.parallel.ClusterFailed`
    naming it in one line; prefeval's own errors, raised by a task, pass as they are."""
    try:
        yield
    except Exception as error:
        if type(error).__module__.startswith("prefeval.") or isinstance(error, MemoryError):
            raise
        text = (str(error).strip().splitlines() or [""])[0]
        hint = " (the scheduler and the workers need the Python packages of this client: prefeval's version " \
               "among them)" if "deserializ" in text.lower() or isinstance(error, (AttributeError, ImportError)) \
            else ""
        raise ClusterFailed(f"the Dask cluster failed: {type(error).__name__}{': ' + text if text else ''}{hint}"
                            ) from None


def _chunk_kernel(evaluation: ChunkEvaluator, render: Callable, chunk: Chunk, fetch_bytes: int,
                  in_place: bool = False) -> list[tuple[Any, Any]] | Held:
    """What a worker runs: the rendered blocks of one chunk, with the blocks' values (in memory kept
    for reuse: :func:`_keep_freed_memory`); results of more than ``fetch_bytes`` are held here in
    pieces, which the client takes one by one (:class:`Held`), and so are results with lines to write
    when the output is ``in_place`` (the worker writes them there: :func:`_place`)."""
    _keep_freed_memory()
    results = list(evaluation.chunk_results(chunk, render))
    lines = _lines_bytes(results) if in_place else None
    bounds = _pieces(results, fetch_bytes)
    if len(bounds) == 1 and not lines:
        return results
    from distributed import get_worker

    key = uuid.uuid4().hex
    _HELD[key] = [results[start:stop] for start, stop in bounds]
    return Held(key, get_worker().address, len(bounds), lines)


def _lines_bytes(results: list[tuple[Any, Any]]) -> int | None:
    """The bytes of the lines among a chunk's results, when every output is lines (a list of bytes or
    bytearrays, or None); None otherwise (blocks, which the client renders)."""
    size = 0
    for output, _ in results:
        if output is None:
            continue
        if not isinstance(output, list) or not all(isinstance(data, (bytes, bytearray)) for data in output):
            return None
        size += sum(map(len, output))
    return size


class Held(NamedTuple):
    """A chunk's results held by the worker at ``address`` in ``count`` pieces under ``key``
    (:data:`_HELD`), taken by the client with ``Client.run`` (:func:`_take`): run by the worker's event
    loop, not by its one thread, which goes on with the next chunk meanwhile (a task that took a piece
    would wait for it)."""

    key: str
    address: str
    count: int
    lines: int | None = None
    """The bytes of the chunk's lines, when its outputs are lines that the worker may write in place
    (:func:`_place`); None otherwise."""


_HELD: dict[str, list] = {}
"""In a worker: the pieces of the chunks' results not taken yet (:class:`Held`)."""


def _pieces(results: list, limit: int) -> list[tuple[int, int]]:
    """The bounds (start, stop) of consecutive pieces of ``results`` of about ``limit`` bytes each
    (:func:`dask.sizeof.sizeof`), one result at least."""
    from dask.sizeof import sizeof

    bounds, start, size = [], 0, 0
    for at, item in enumerate(results):
        item_size = sizeof(item)
        if at > start and size + item_size > limit:
            bounds.append((start, at))
            start, size = at, 0
        size += item_size
    bounds.append((start, len(results)))
    return bounds


def _take(key: str, index: int) -> list:
    """In a worker (``Client.run``): piece ``index`` of the results held under ``key``, no longer held;
    after the last, the key is dropped."""
    pieces = _HELD[key]
    piece, pieces[index] = pieces[index], None
    if index == len(pieces) - 1:
        del _HELD[key]
    return piece


def _place(key: str, path: str, offset: int) -> list | tuple[int, str] | None:
    """In a worker (``Client.run``): the lines of the results held under ``key`` written into the file
    ``path`` from ``offset`` on (:func:`~prefeval.io.output.write_in_place`), and the results no longer
    held; returns the blocks, each without its output (None), which the client takes instead. None
    (everything still held) when this worker cannot open the file (not on a filesystem it shares with
    the client); (errno, message) when writing failed, which the client reports as its own failure."""
    from prefeval.io.output import write_in_place

    pieces = _HELD[key]
    lines = (data for piece in pieces for output, _ in piece if output is not None for data in output)
    try:
        written = write_in_place(path, offset, lines)
    except OSError as error:
        _HELD.pop(key, None)
        return error.errno, error.strerror
    if written is None:
        return None
    del _HELD[key]
    return [(None, block) for piece in pieces for _, block in piece if block is not None]


def _drop(key: str) -> None:
    """In a worker (``Client.run``): the results held under ``key`` dropped (the client stopped)."""
    _HELD.pop(key, None)


WARM_MODULES = ("prefeval.engine.partitioned", "prefeval.report.eval_lines", "prefeval.io.columnar", "pyarrow.parquet",
                "pandas")
"""What every worker imports as the client connects (:func:`_warm_up`), while one of them plans: the
modules that reading and evaluating a partition needs (pyarrow and pandas take 0.6 s), which the
first task of each worker would otherwise import, one worker after the plan's."""


async def _warm_up() -> None:
    """Import :data:`WARM_MODULES` (those that are installed) where this runs: on every worker (a
    coroutine, which ``Client.run`` starts without waiting for it)."""
    import importlib

    for name in WARM_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _keep_freed_memory() -> None:
    """The worker's process keeps freed memory for reuse, as the command line's does
    (:func:`~prefeval.runtime.memory.keep_freed_memory`), from the first prefeval task it runs on:
    reading a partition makes and drops arrays of megabytes, which glibc, as Dask's nanny sets it
    (``MALLOC_TRIM_THRESHOLD_``), would hand back to the system and page-fault afresh each time."""
    global _KEEPING
    if not _KEEPING:
        from prefeval.runtime.memory import keep_freed_memory

        _KEEPING = keep_freed_memory() or True


_KEEPING = False
"""Whether this (worker) process keeps freed memory already (:func:`_keep_freed_memory`)."""


def _kept_memory(function: Callable) -> Callable:
    """``function``, run after :func:`_keep_freed_memory`."""
    return functools.partial(_run_keeping, function)


def _run_keeping(function: Callable, *args) -> Any:
    _keep_freed_memory()
    return function(*args)


def _emptied(results: list) -> Iterator:
    """The items of ``results`` in order, each dropped from the list as it is taken."""
    results.reverse()
    while results:
        yield results.pop()


class DaskExecutor:
    """Chunks as tasks of a dask.distributed ``Client`` (module docstring): an
    :class:`~prefeval.engine.executors.Executor`."""

    def __init__(self, client, workers: int, fetch_bytes: int | None = None):
        self.client = client
        self.workers = max(workers, 1)
        self.fetch_bytes = FETCH_BYTES if fetch_bytes is None else fetch_bytes
        self._in_place = None  # the output that workers write lines into, while chunks are mapped

    @classmethod
    @contextlib.contextmanager
    def connect(cls, scheduler: str | None, jobs: int) -> Iterator[DaskExecutor]:
        """An executor on the scheduler at ``scheduler``, or on a local cluster of ``jobs`` workers."""
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise UsageError("--engine dask needs dask.distributed: pip install 'prefeval[dask]'") from None
        with contextlib.ExitStack() as stack:
            stack.enter_context(_quiet_loggers())
            if scheduler is None:
                with ignored_by_spawned_children():  # Ctrl-C is this process's to handle, not the workers'
                    cluster = stack.enter_context(LocalCluster(
                        n_workers=jobs, threads_per_worker=1, processes=True, silence_logs=logging.CRITICAL,
                        dashboard_address=None, scheduler_kwargs={"dashboard_address": SCHEDULER_HTTP_ADDRESS}))
                    client = stack.enter_context(Client(cluster))
            else:
                try:
                    client = stack.enter_context(Client(scheduler, timeout="30s"))
                except OSError as error:
                    raise UsageError(f"--scheduler {scheduler}: cannot connect ({error})") from None
            workers = len(client.scheduler_info().get("workers", {})) or jobs
            with _cluster_failures():
                client.run(_warm_up, wait=False)
            yield cls(client, workers)

    def submit(self, function: Callable, *args) -> Any:
        """A future of ``function(*args)`` run by a worker, whose value stays there while the future is held."""
        with _cluster_failures():
            return self.client.submit(_kept_memory(function), *args, pure=False)

    def result(self, handle: Any, function: Callable | None = None) -> Any:
        """The value of the future ``handle``, or ``function(value)`` computed by the worker that holds it."""
        with _cluster_failures():
            if function is None:
                return handle.result()
            return self.client.submit(function, handle, pure=False).result()

    def map_chunks(self, evaluation: ChunkEvaluator, chunks: Iterable[Chunk], render: Callable) -> Iterator[Iterable]:
        """The results of every chunk in order, computed by the cluster's workers; when the lines go to
        a file that the workers may write (``evaluation.in_place``: :class:`~prefeval.io.output.InPlace`),
        each worker writes its chunks' lines there itself (:meth:`_fetched`)."""
        with _cluster_failures():
            [shared] = self.client.scatter([evaluation.for_workers()], broadcast=True)
        self._in_place = getattr(evaluation, "in_place", None)
        waiting: deque = deque()
        limit = IN_FLIGHT_PER_WORKER * self.workers
        try:
            for chunk in chunks:
                with _cluster_failures():
                    waiting.append(self.client.submit(_chunk_kernel, shared, render, chunk, self.fetch_bytes,
                                                      self._in_place is not None, pure=False))
                if len(waiting) >= limit:
                    yield self._fetched(waiting.popleft())
            while waiting:
                yield self._fetched(waiting.popleft())
        finally:
            for future in waiting:
                future.cancel()

    def _fetched(self, future: Any) -> Iterator:
        """The results of a chunk's task (``future``) in order: its list, or what its worker holds
        (:class:`Held`): its lines written into the output by the worker where the output has reached
        (when the output is in place and the worker sees its file: then only the blocks come here), or
        taken piece by piece, each when the one before it has been handed on."""
        with _cluster_failures():
            results = future.result()
        del future
        if not isinstance(results, Held):
            yield from _emptied(results)
            return
        if results.lines and self._in_place is not None:
            placed = self._placed(results)
            if placed is not None:
                yield from _emptied(placed)
                return
        taken = 0
        try:
            for index in range(results.count):
                with _cluster_failures():
                    piece = self.client.run(_take, results.key, index, workers=[results.address])[results.address]
                taken += 1
                yield from _emptied(piece)
        finally:
            if taken < results.count:
                with contextlib.suppress(Exception):
                    self.client.run(_drop, results.key, workers=[results.address])

    def _placed(self, held: Held) -> list | None:
        """The blocks of the chunk ``held``, its lines written by its worker at the output's place
        (:func:`_place`), the output then moved on past them; None (the lines still held) when that
        worker cannot open the output's file, after which no other chunk is written in place."""
        output = self._in_place
        offset = output.position()
        with _cluster_failures():
            placed = self.client.run(_place, held.key, output.path, offset, workers=[held.address])[held.address]
        if placed is None:
            self._in_place = None
            return None
        if isinstance(placed, tuple):
            raise OSError(*placed)
        output.skip(held.lines)
        return placed
