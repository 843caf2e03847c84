"""Work items on Dask: a local cluster of worker processes, or an existing cluster.

``local_workers(n)`` starts ``n`` worker processes on this machine (one thread each, on
the loopback interface) and closes them on exit; ``cluster_workers(address)`` uses the
cluster whose scheduler is at ``address``. Both give a ``DaskWorkers``, the Dask
implementation of ``txcheck.exploration.kernel.workers.Workers``:

- each item runs in a worker as ``fn(item, job)``; a thread beside it sends the job's
  counters back every ``BEAT`` seconds (shown as progress) and watches a Dask ``Event``
  through which the caller asks it to stop (``cancel()``, or an interrupted deadline);
- after an interrupt, running items get ``GRACE`` seconds to return what they found (a
  counterexample being shrunk is still reported), then the rest is cancelled;
- a worker that dies is reported in ``notes`` with the items it held, and those items run
  again (Dask reschedules them; an item Dask gives up on is submitted again here, up to
  ``RETRIES`` times).

Only this module imports Dask; nothing imports it unless ``--workers`` or ``--scheduler``
was given.
"""

from __future__ import annotations

import logging
import queue
import signal
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

import attrs
import dask
import distributed
from distributed.diagnostics.plugin import WorkerPlugin

from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.report import Tally
from txcheck.exploration.kernel.target import Deadline
from txcheck.exploration.kernel.workers import Job
from txcheck.models.errors import InputError

__all__ = ["BEAT", "GRACE", "RETRIES", "DaskWorkers", "cluster_workers", "local_workers"]

Item = TypeVar("Item")
Result = TypeVar("Result")

BEAT = 0.25
"""Seconds between a running item's progress reports and stop checks."""
GRACE = 30.0
"""Seconds running items get, after an interrupt, to send back what they found."""
RETRIES = 3
"""How many times an item Dask gave up on (its workers kept dying) is submitted again."""
_RANDOM_WARNING = "Do not use the `random` module inside strategies"
CONNECT_SECONDS = 5.0
"""How long to wait for an existing cluster's scheduler to answer."""
ONE_ITEM_PER_THREAD = {"distributed.scheduler.worker-saturation": 1.0}
"""A local cluster's scheduler gives each worker thread one item at a time (Dask's default
lets a busy worker queue a second one while another worker is idle)."""


@attrs.frozen
class _Control:
    """What an item needs to talk to the caller: the stop event's and the progress
    topic's names, and the seconds it may run (None: no limit)."""

    stop: str
    topic: str
    seconds: float | None


def _run_item(
    fn: Callable[[Any, Job], Any], item: Any, index: int, control: _Control, common: Any
) -> Any:
    """Run one item on a worker: ``fn(item, job)``, its counters sent back as it goes."""
    job = Job(index=index, deadline=Deadline(control.seconds), common=common)
    worker = distributed.get_worker()
    stop = distributed.Event(control.stop, client=distributed.get_client())
    finished = threading.Event()

    def beat() -> None:
        while not finished.wait(BEAT):
            with suppress(Exception):  # the cluster may be closing: the item goes on
                if stop.is_set():
                    job.deadline.interrupt()
                worker.log_event(control.topic, {"index": index, "tally": job.tally.snapshot()})

    thread = threading.Thread(target=beat, name="txcheck-beat", daemon=True)
    thread.start()
    try:
        with warnings.catch_warnings():
            # Hypothesis warns when the global ``random`` changes during a draw; in a worker
            # Dask's own threads use it, which does not touch what Hypothesis generates.
            warnings.filterwarnings("ignore", message=_RANDOM_WARNING)
            result = fn(item, job)
    finally:
        finished.set()
        thread.join()
    return result, job.tally.snapshot()


class _IgnoreInterrupt(WorkerPlugin):
    """Local workers ignore SIGINT: Ctrl-C at a terminal reaches the whole process group,
    and stopping is the caller's to do (it asks the items to stop, then closes them)."""

    def setup(self, worker: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)


class DaskWorkers:
    """``Workers`` on a Dask ``client``; ``count`` items run at once."""

    def __init__(self, client: distributed.Client, *, count: int, where: str) -> None:
        self.client = client
        self._count = count
        self._where = where
        self._notes: list[str] = []
        self._lock = threading.Lock()
        self._keys: dict[str, int] = {}
        self._live: dict[int, Tally] = {}
        self._progress: Tally | None = None
        self._base = Tally()
        self._common: Any = None
        self._cancelled = False
        client.subscribe_topic("all", self._on_cluster_event)

    @property
    def count(self) -> int:
        return self._count

    @property
    def where(self) -> str:
        return self._where

    @property
    def notes(self) -> list[str]:
        with self._lock:
            return list(self._notes)

    def _on_cluster_event(self, event: tuple[float, Any]) -> None:
        """A worker that leaves unexpectedly: note the items it held (Dask runs them
        again elsewhere)."""
        _, message = event
        if not isinstance(message, dict) or message.get("action") != "remove-worker":
            return
        if message.get("expected"):
            return
        with self._lock:
            held = sorted(
                self._keys[key] for key in message.get("processing-tasks", ()) if key in self._keys
            )
            if held:
                items = ", ".join(str(i + 1) for i in held)
                self._notes.append(
                    f"worker {message.get('worker', '?')} died holding item(s) {items}; "
                    "they were run again"
                )

    def _on_progress(self, event: tuple[float, Any]) -> None:
        _, message = event
        with suppress(KeyError, TypeError, ValueError):
            self._show(int(message["index"]), Tally.of(message["tally"]))

    def _show(self, index: int, tally: Tally) -> None:
        with self._lock:
            self._live[index] = tally
            if self._progress is not None:
                total = Tally.of(self._base.snapshot())
                for part in self._live.values():
                    total.add(part)
                self._progress.set_to(total)

    def _submit(
        self,
        fn: Callable[[Item, Job], Result],
        item: Item,
        index: int,
        control: _Control,
        finished: queue.SimpleQueue[distributed.Future[Any]],
    ) -> distributed.Future[Any]:
        """Submit one item; the future is put on ``finished`` once it is done, failed or
        cancelled."""
        key = f"txcheck-{uuid.uuid4().hex[:12]}-{index}"
        with self._lock:
            self._keys[key] = index
        future: distributed.Future[Any] = self.client.submit(
            _run_item, fn, item, index, control, self._common, key=key, pure=False
        )
        future.add_done_callback(finished.put)
        return future

    def map_unordered(
        self,
        fn: Callable[[Item, Job], Result],
        items: Sequence[Item],
        context: SearchContext,
        *,
        common: Any = None,
    ) -> Iterator[tuple[int, Result]]:
        self._cancelled = False
        deadline, progress = context.deadline, context.tally
        run = uuid.uuid4().hex[:12]
        control = _Control(
            stop=f"txcheck-stop-{run}", topic=f"txcheck-progress-{run}", seconds=deadline.left()
        )
        stop = distributed.Event(control.stop, client=self.client)
        with self._lock:
            self._live = {}
            self._progress = progress
            self._base = Tally.of(progress.snapshot())
            self._notes = []
            self._keys = {}
        # stored once in the cluster (not with each item); a worker fetches it once, when
        # its first item needs it, and keeps it. Not ``broadcast=True``: the scheduler then
        # publishes an event the "all" topic cannot serialize, which drops this client.
        self._common = None if common is None else self.client.scatter(common, hash=False)
        self.client.subscribe_topic(control.topic, self._on_progress)
        # done futures arrive through callbacks: ``distributed.wait`` with a timeout left a
        # pending asyncio task behind at every timeout ("Task was destroyed but it is
        # pending!" on stderr, thousands of times in a long search)
        finished: queue.SimpleQueue[distributed.Future[Any]] = queue.SimpleQueue()
        futures = {self._submit(fn, item, i, control, finished): i for i, item in enumerate(items)}
        lost: dict[int, int] = {}
        asked_to_stop: float | None = None

        def again(index: int, why: str) -> None:
            """Submit item ``index`` once more (its worker, or the common data, was lost)."""
            lost[index] = lost.get(index, 0) + 1
            if lost[index] > RETRIES:
                raise InputError(
                    f"item {index + 1} was lost {lost[index]} times: the workers "
                    "running it keep dying (out of memory?)",
                    source=self._where,
                )
            with self._lock:
                self._notes.append(f"{why}; item {index + 1} was submitted again")
            retry = attrs.evolve(control, seconds=deadline.left())
            futures[self._submit(fn, items[index], index, retry, finished)] = index

        try:
            while futures and not self.is_cancelled():
                if asked_to_stop is None and deadline.interrupted:
                    stop.set()
                    asked_to_stop = time.monotonic()
                if asked_to_stop is not None and time.monotonic() - asked_to_stop > GRACE:
                    break
                done = _drained(finished, BEAT) & futures.keys()
                if not done:
                    continue
                cancelled = [f for f in done if f.status == "cancelled"]
                if cancelled:
                    # the worker holding the common data died: Dask cannot rebuild
                    # scattered data, so send it again and resubmit what waited for it
                    if common is None:
                        cancelled[0].result()  # raises why it was cancelled
                    self._common = self.client.scatter(common, hash=False)
                for future in sorted(done, key=lambda f: futures[f]):
                    index = futures.pop(future)
                    if future.status == "finished":
                        result, snapshot = future.result()
                        self._show(index, Tally.of(snapshot))
                        yield index, result
                        if self.is_cancelled():
                            return
                    elif future.status == "cancelled":
                        again(index, "a worker died holding the data the items share")
                    elif future.status == "error":
                        error = future.exception()
                        if not isinstance(error, distributed.KilledWorker):
                            raise error
                        again(index, f"Dask gave up on item {index + 1} after its workers died")
        finally:
            with suppress(Exception):
                stop.set()
                self.client.cancel(list(futures))
                self.client.unsubscribe_topic(control.topic)
            with self._lock:
                self._progress = None
            self._common = None

    def cancel(self) -> None:
        self._cancelled = True

    def is_cancelled(self) -> bool:
        """Whether ``cancel()`` was called since the current ``map_unordered`` began."""
        return self._cancelled

    def close(self) -> None:
        """Stop listening to the cluster (before the client closes)."""
        with suppress(Exception):
            self.client.unsubscribe_topic("all")


def _drained(finished: queue.SimpleQueue[Any], seconds: float) -> set[Any]:
    """What ``finished`` holds after waiting up to ``seconds`` for its first entry."""
    try:
        done = {finished.get(timeout=seconds)}
    except queue.Empty:
        return set()
    while True:
        try:
            done.add(finished.get_nowait())
        except queue.Empty:
            return done


def _quiet() -> None:
    """Dask's own log lines (a worker restarted, a connection closed) stay off stderr:
    txcheck reports what matters in the engine's notes."""
    for name in ("distributed", "dask", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


@contextmanager
def local_workers(count: int, *, env: Mapping[str, str] | None = None) -> Iterator[DaskWorkers]:
    """``count`` worker processes on this machine, one thread each, in this process's
    current directory and with ``env`` added to their environment; closed on exit."""
    _quiet()
    try:
        with dask.config.set(ONE_ITEM_PER_THREAD):
            cluster = distributed.LocalCluster(
                n_workers=count,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=":0",  # a free port: 8787 may be taken (another cluster)
                silence_logs=logging.CRITICAL + 1,
                env=dict(env or {}),
            )
    except Exception as error:
        raise InputError(
            f"cannot start {count} local Dask workers: {error}", source="--workers"
        ) from None
    try:
        with distributed.Client(cluster) as client:
            client.register_plugin(_IgnoreInterrupt(), name="txcheck-ignore-sigint")
            workers = DaskWorkers(client, count=count, where=f"{count} local worker processes")
            try:
                yield workers
            finally:
                workers.close()
    finally:
        with suppress(Exception):
            cluster.close()


@contextmanager
def cluster_workers(address: str, count: int | None = None) -> Iterator[DaskWorkers]:
    """The existing cluster whose scheduler is at ``address``; ``count`` shares (default:
    its worker threads now)."""
    _quiet()
    try:
        client = distributed.Client(address, timeout=CONNECT_SECONDS)
    except Exception as error:
        raise InputError(
            f"cannot reach a Dask scheduler at {address!r}: {type(error).__name__}: {error}",
            source="--scheduler",
        ) from None
    with client:
        threads = sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values())
        if threads == 0 and count is None:
            raise InputError(
                f"the Dask cluster at {address!r} has no workers", source="--scheduler"
            )
        workers = DaskWorkers(
            client,
            count=count or threads,
            where=f"the cluster at {address} ({threads} worker threads)",
        )
        try:
            yield workers
        finally:
            workers.close()
