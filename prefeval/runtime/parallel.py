"""Mapping a function over items in forked worker processes, results in order.

Workers are forked from the current process, so the function may be a closure over large arrays (a
RankTable, a sample's positions): it is handed to each worker when the worker is forked, and nothing
but the item numbers and the results crosses a process boundary (pickled; the results' arrays and
texts as they are, :mod:`prefeval.runtime.transfer`). Where ``fork`` is not
available, or there is nothing to share out, the map runs in this process.

Stopping (see :mod:`prefeval.runtime.signals`): the workers ignore SIGINT, since Ctrl-C at a
terminal interrupts the whole process group and only the parent should react (it stops the workers,
and the command line ends quietly); they die at once on SIGTERM, which is how the parent stops them
and how a process group is told to end. A worker that dies without reporting (killed, out of memory)
is a :class:`WorkerDied` error in the parent, never a hang; a worker whose parent is gone (killed
with SIGKILL) ends when it next waits for work or hands in a result. At most two items per worker
are in flight, so results wait in memory only until the consumer takes them in order.
"""

from __future__ import annotations

import functools
import numbers
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

from prefeval.errors import UsageError, shown
from prefeval.runtime import transfer
from prefeval.runtime.signals import as_worker, blocked_for_children

if TYPE_CHECKING:  # multiprocessing is imported when work is shared out, not with the command line
    from multiprocessing import Process
    from multiprocessing.connection import Connection

Item = TypeVar("Item")
Result = TypeVar("Result")

IN_FLIGHT_PER_WORKER = 2


class WorkerDied(RuntimeError):
    """A worker process ended before handing in its results (killed, or out of memory)."""

    def __init__(self, exitcode: int | None):
        how = ""
        if exitcode is not None and exitcode < 0:
            how = f" (killed by {signal.Signals(-exitcode).name}"
            how += ", perhaps for lack of memory)" if -exitcode == signal.SIGKILL else ")"
        elif exitcode is not None:
            how = f" (exit code {exitcode})"
        super().__init__(f"a worker process ended unexpectedly{how}")
        self.exitcode = exitcode


class ClusterFailed(WorkerDied):
    """A Dask cluster that failed to run prefeval's work (a worker lost, a scheduler gone, a worker
    whose prefeval or Python differs from the client's): reported in one line, as a worker process
    that died is (:mod:`prefeval.engine.dask`)."""

    def __init__(self, message: str):
        RuntimeError.__init__(self, message)
        self.exitcode = None

    def __reduce__(self):
        return (type(self), (str(self),))


def default_jobs() -> int:
    """The number of processors this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def check_jobs(jobs) -> int:
    """``jobs`` as an int, or a :class:`UsageError` unless it is an integer >= 1."""
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs < 1:
        raise UsageError(f"jobs must be an integer of at least 1, not {shown(jobs)}")
    return int(jobs)


class _Tasks:
    """Item numbers for the workers: one pipe that the parent writes and the workers share for
    reading (a lock makes each message go to one worker). Each worker closes its copy of the writing
    end, so that the pipe ends (and the workers waiting on it) when the parent does."""

    def __init__(self, context):
        self.reader, self.writer = context.Pipe(duplex=False)
        self.lock = context.Lock()

    def put(self, number: int | None) -> None:
        self.writer.send(number)

    def get(self) -> int | None:
        """The next item number; None when there is no more work (or no parent any more)."""
        with self.lock:
            try:
                return self.reader.recv()
            except (EOFError, OSError):
                return None

    def close(self) -> None:
        self.reader.close()
        self.writer.close()


def _unsendable(error: Exception) -> RuntimeError:
    """What a worker hands in instead of a result (or an error) that could not be pickled."""
    return RuntimeError(f"a worker could not send its result: {error!r}")


def shares_out(jobs: int, count: int) -> bool:
    """Whether :func:`fork_map` over ``count`` items with ``jobs`` uses worker processes (else it maps
    in this process): for two items or more, with two jobs or more, where processes can be forked."""
    return jobs > 1 and count >= 2 and hasattr(os, "fork")


def fork_map(function: Callable[[Item], Result], items: Iterable[Item], jobs: int) -> Iterator[Result]:
    """``map(function, items)`` over ``jobs`` forked processes, yielding results in item order.

    An exception raised by ``function`` in a worker is raised here, for the first item (in order)
    that raised it. Closing the iterator early (or an exception, or a stop, in the consumer) stops
    the workers.
    """
    items = list(items)
    if not shares_out(jobs, len(items)):
        yield from map(function, items)
        return
    import multiprocessing  # here: with what it imports, it takes longer than a small evaluation

    context = multiprocessing.get_context("fork")
    tasks = _Tasks(context)
    workers, readers = [], []
    try:
        with blocked_for_children() as mask:
            for _ in range(min(jobs, len(items))):
                reader, writer = context.Pipe(duplex=False)
                transfer.widen(reader)
                worker = context.Process(target=_serve, args=(function, items, tasks, writer, mask), daemon=True)
                worker.start()
                writer.close()
                workers.append(worker)
                readers.append(reader)
        yield from _collect(items, tasks, workers, readers)
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
        for worker in workers:
            worker.join()
        for reader in readers:
            reader.close()
        tasks.close()


def _collect(items: list, tasks: _Tasks, workers: list, readers: list[Connection]) -> Iterator:
    """Hand out item numbers (a few per worker at a time) and yield the results in item order."""
    sent = 0
    for _ in range(min(len(items), IN_FLIGHT_PER_WORKER * len(workers))):
        tasks.put(sent)
        sent += 1
    waiting: dict[int, tuple[bool, object]] = {}
    live = dict(zip(readers, workers))
    for number in range(len(items)):
        while number not in waiting:
            if not live:
                raise WorkerDied(None)
            _receive(live, waiting)
        succeeded, value = waiting.pop(number)
        if not succeeded:
            raise value
        if sent < len(items):
            tasks.put(sent)
            sent += 1
        elif sent == len(items):
            for _ in workers:
                tasks.put(None)
            sent += 1
        yield value


def _receive(live: dict[Connection, Process], waiting: dict) -> None:
    """Wait for the next message of any worker; a worker gone without a word is an error."""
    from multiprocessing.connection import wait

    ready = wait([*live, *(worker.sentinel for worker in live.values())])
    for reader in [r for r in live if r in ready or r.poll()]:
        try:
            number, succeeded, value = transfer.receive(reader)
        except EOFError:  # the worker is gone: done with its work (exit code 0), or killed
            worker = live.pop(reader)
            worker.join()
            if worker.exitcode != 0:
                raise WorkerDied(worker.exitcode) from None
            continue
        waiting[number] = (succeeded, value)


def _serve(function: Callable, items: list, tasks: _Tasks, results: Connection, mask: frozenset) -> None:
    """A worker: compute ``function(items[n])`` for each number n taken from ``tasks`` until None."""
    as_worker(mask)
    tasks.writer.close()
    try:
        while (number := tasks.get()) is not None:
            try:
                outcome = (number, True, function(items[number]))
            except Exception as error:  # handed to the parent, which raises it
                outcome = (number, False, error)
            try:
                transfer.send(results, outcome)
            except (BrokenPipeError, ConnectionResetError):  # the parent is gone
                return
            except Exception as error:  # the result or the error could not be pickled
                transfer.send(results, (number, False, _unsendable(error)))
    finally:
        results.close()


class Served:
    """An object made by ``make()`` in a forked process (in this one when ``fork`` is False or not
    available), whose methods are called in order through a pipe: :meth:`send` hands over a call
    without waiting, :meth:`receive` waits for the result of the oldest call not yet received (and
    raises the exception the call raised). So the caller goes on while the object works, as a
    streamed collection's readers do (:mod:`prefeval.engine.streaming`). Use as a context manager:
    leaving it stops the process. Signals and deaths are handled as in :func:`fork_map`."""

    def __init__(self, make: Callable[[], object], fork: bool = True):
        import multiprocessing

        self._process = self._connection = None
        self._local: list[tuple[bool, object]] = []
        if not fork or "fork" not in multiprocessing.get_all_start_methods():
            self._object = make()
            return
        context = multiprocessing.get_context("fork")
        self._connection, child = context.Pipe()
        try:
            with blocked_for_children() as mask:
                process = context.Process(target=_serve_object, args=(make, child, self._connection, mask),
                                          daemon=True)
                process.start()
                self._process = process
        except BaseException:  # a stop that came while forking, raised at the end of the step: no object
            self.__exit__()    # is returned to be left, so the process is stopped here
            raise
        finally:
            child.close()

    @property
    def forked(self) -> bool:
        """Whether the object lives in a forked process (not in this one)."""
        return self._process is not None

    def send(self, method: str, *args) -> None:
        if self._process is None:
            try:
                self._local.append((True, getattr(self._object, method)(*args)))
            except Exception as error:
                self._local.append((False, error))
            return
        self._connection.send((method, args))

    def receive(self):
        if self._process is None:
            succeeded, value = self._local.pop(0)
        else:
            from multiprocessing.connection import wait

            wait([self._connection, self._process.sentinel])
            try:
                succeeded, value = transfer.receive(self._connection)
            except EOFError:
                self._process.join()
                raise WorkerDied(self._process.exitcode) from None
        if not succeeded:
            raise value
        return value

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc) -> None:
        if self._process is not None:
            if self._process.is_alive():
                self._process.terminate()
            self._process.join()
        if self._connection is not None:
            self._connection.close()


class Background:
    """``make()`` computed in a forked process (:class:`Served`) while this one goes on, and
    :meth:`result` waiting for it (or raising what it raised); in this process, when ``result`` is
    first asked for, where ``fork`` is False. :meth:`close` stops the process if its result was never
    asked for. What ``make`` notes is not shown: give it work that notes nothing."""

    def __init__(self, make: Callable[[], Result], fork: bool = True):
        self._make = make
        self._served = Served(functools.partial(_Made, make)) if fork and hasattr(os, "fork") else None
        if self._served is not None:
            self._served.send("value")
        self._outcome: tuple[bool, object] | None = None

    def result(self) -> Result:
        if self._outcome is None:
            try:
                self._outcome = (True, self._served.receive() if self._served is not None else self._make())
            except Exception as error:  # raised now and at every later call
                self._outcome = (False, error)
            finally:
                self.close()
        succeeded, value = self._outcome
        if not succeeded:
            raise value
        return value

    def close(self) -> None:
        if self._served is not None:
            self._served.__exit__()
            self._served = None


class _Made:
    def __init__(self, make: Callable):
        self._value = make()

    def value(self):
        return self._value


def _serve_object(make: Callable[[], object], connection: Connection, parent_end: Connection,
                  mask: frozenset) -> None:
    """A served object's process: make it, then answer calls until the pipe closes. Its copy of the
    parent's end of the pipe is closed first, so that the pipe closes when the parent is gone."""
    as_worker(mask)
    parent_end.close()
    try:
        try:
            served, failure = make(), None
        except Exception as error:  # every call answers with it
            served, failure = None, error
        while True:
            try:
                method, args = connection.recv()
            except (EOFError, OSError):
                return
            try:
                if failure is not None:
                    raise failure
                outcome = (True, getattr(served, method)(*args))
            except Exception as error:  # handed to the caller, which raises it
                outcome = (False, error)
            try:
                transfer.send(connection, outcome)
            except (BrokenPipeError, ConnectionResetError):
                return
            except Exception as error:
                transfer.send(connection, (False, _unsendable(error)))
    finally:
        connection.close()
