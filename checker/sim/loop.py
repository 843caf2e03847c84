"""``SimLoop``: an asyncio event loop whose only inputs are a seed and a checker's choices.

Ordinary asyncio code (tasks, ``gather``, ``wait``, ``wait_for``, ``timeout``, ``Queue``,
``Lock``, ``Event``, cancellation, ``TaskGroup``) runs on it unchanged; what differs from
asyncio's own loop is what it does *not* read from the machine:

- **Ready callbacks run first in, first out**, as on asyncio's loop, one batch per
  iteration.
- **Time is virtual.** ``loop.time()`` starts at 0.0 and moves only when nothing is ready:
  it then jumps to the next timer's deadline (no real sleeping), so ``asyncio.sleep(5)``
  takes five virtual seconds and no real ones. Timers with equal deadlines fire in the order
  they were set.
- **Choice points are explicit.** ``run_until_blocked()`` runs everything that is ready
  without moving time; ``next_timer()`` and ``advance_to(t)`` let a checker decide when time
  moves; ``create_port_future(label)`` makes a future only the checker resolves (a port
  operation in flight), listed by ``pending_ports()``. Between two such choices, the code
  that runs is fixed by the program: nothing else interleaves.
- **Iteration order is numbered.** Tasks and futures the loop creates hash by a per-loop
  number, so sets of them (``asyncio.wait``'s ``done``/``pending``, ``TaskGroup``'s
  cancellations, ``asyncio.all_tasks``) iterate in the same order on every run, whatever
  the memory layout or ``PYTHONHASHSEED``. Default task names count per loop
  (``Task-1``, ...), not per process.
- **The real world is fenced** (``txcheck.sim.fences``): threads, sockets, name
  resolution, pipes, subprocesses, file descriptors and signals raise ``SimulationError``
  naming the call site, and the refusal is sticky: a run that caught it and carried on is
  still stopped, so no run silently depends on the real world.
- **Ambient clock and randomness are virtual** while it runs (``txcheck.sim.ambient``):
  ``time.time``/``monotonic``/``perf_counter`` read the virtual clock, ``random``'s functions,
  ``uuid.uuid4`` and ``os.urandom`` are seeded by the loop's seed, and ``time.sleep`` is
  refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import random
import sys
import threading
import weakref
from asyncio import events
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Generator, Iterator
from contextvars import Context
from typing import Any, NoReturn, TypeVar

from txcheck.models.errors import SimulationError
from txcheck.sim import ambient
from txcheck.sim.fences import FENCED, refusal

__all__ = ["EPOCH", "PortFuture", "SimFuture", "SimLoop", "SimTask", "run"]

_T = TypeVar("_T")

EPOCH = 1_767_225_600.0
"""``time.time()`` at virtual time 0.0 unless a loop is given another: 2026-01-01 00:00 UTC."""

logger = logging.getLogger("txcheck.sim")

_LOOP_SERIALS = itertools.count(1)


class _Numbered:
    """Hashed by a number drawn from the loop's count on first hash, so sets of these
    iterate in an order fixed by the program, not by memory addresses. The loop numbers
    its futures as it makes them; a task is numbered as asyncio registers it in its weak
    set of tasks, which is as it is made. No ``__init__`` of its own keeps a task as cheap
    to make as asyncio's."""

    _txcheck_number: int = 0  # not yet numbered (the loop counts from 1)

    def __hash__(self) -> int:
        loop: SimLoop = self._loop  # type: ignore[attr-defined]
        number = self._txcheck_number
        if not number:  # a class default, not an AttributeError: this runs for every task
            number = self._txcheck_number = next(loop._numbers)
        return number + loop._hash_base

    @property
    def number(self) -> int:
        """This task's or future's number in its loop (one count for both)."""
        hash(self)  # numbers it, if it is not yet
        return self._txcheck_number


class SimFuture(_Numbered, asyncio.Future[_T]):
    """A future of a ``SimLoop``, numbered as it is made."""


class PortFuture(SimFuture[_T]):
    """A port operation in flight: created by the port layer, resolved only by the checker
    (``set_result``/``set_exception``), which reads ``label`` to know what it is."""

    label: str

    def __repr__(self) -> str:
        return f"<PortFuture #{self.number} {self.label!r} {self._state.lower()}>"


class SimTask(_Numbered, asyncio.Task[_T]):
    """A task of a ``SimLoop``, numbered as it is made."""


def _stop_when_done(future: asyncio.Future[Any]) -> None:
    future.get_loop().stop()


def _fence(name: str) -> Callable[..., NoReturn]:
    """A ``SimLoop`` method that refuses ``loop.NAME`` (``FENCED`` says why)."""
    why = FENCED[name]

    def refused(self: SimLoop, *args: object, **kwargs: object) -> NoReturn:
        raise self.refuse(refusal(f"loop.{name}", why, sys._getframe(1)))

    refused.__name__ = name
    refused.__qualname__ = f"SimLoop.{name}"
    refused.__doc__ = f"Refused with ``SimulationError``: {why}."
    return refused


class SimLoop(asyncio.AbstractEventLoop):
    """A deterministic asyncio event loop on a virtual clock (see the module docstring).

    ``seed`` seeds ``random``'s functions, ``uuid4`` and ``os.urandom`` during runs (as
    ``self.random`` and ``self.entropy``); ``epoch`` is ``time.time()`` at virtual 0.0;
    ``virtual=False`` leaves those ambient functions real (the loop itself stays virtual).
    ``keep_tasks`` holds every task the loop makes (``kept_tasks``), so that none is freed
    while its owner keeps the loop: a freed coroutine runs its ``finally`` blocks, which a
    checker must decide when to allow (``txcheck.sim.actors``). ``keep_ambient`` leaves the
    stand-ins swapped in between runs (``ambient.enter(keep=True)``): a checker runs a loop
    step by step, and swapping 32 attributes in and out at every step was most of its
    cost.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        epoch: float = EPOCH,
        virtual: bool = True,
        keep_tasks: bool = False,
        keep_ambient: bool = False,
    ) -> None:
        self.seed = seed
        self.keep_ambient = keep_ambient
        self.kept_tasks: list[asyncio.Task[Any]] | None = [] if keep_tasks else None
        self.epoch = epoch
        self.txcheck_virtual = virtual
        self.random = random.Random(seed)
        self.entropy = random.Random(f"txcheck.sim entropy {seed}")
        self._clock = 0.0
        self._ready: deque[asyncio.Handle] = deque()
        self._timers: list[tuple[float, int, asyncio.TimerHandle]] = []
        self._timer_order = itertools.count()
        self._cancelled_timers = 0
        self._numbers = itertools.count(1)
        # Hashes are the number plus a multiple of 2**40 that differs per loop. A set
        # places them by the low bits, and resolves a collision from the low bits for
        # the first eight probes, so the sets a program makes order its tasks by their
        # numbers alone, whichever loop; while the tasks of thousands of loops (asyncio's
        # process-wide weak set of tasks holds them all) do not pile up on one hash.
        self._hash_base = next(_LOOP_SERIALS) << 40
        self._task_names = itertools.count(1)
        self._ports: list[PortFuture[Any]] = []
        self._closed = False
        self._stopping = False
        self._thread: int | None = None
        self._refused: SimulationError | None = None
        self._debug = False
        self._task_factory: Any = None
        self._exception_handler: Any = None
        self._asyncgens: weakref.WeakKeyDictionary[AsyncGenerator[Any, Any], None] = (
            weakref.WeakKeyDictionary()
        )
        self._asyncgens_shutdown_called = False

    def __repr__(self) -> str:
        state = "closed" if self._closed else "running" if self._thread else "idle"
        return f"<SimLoop t={self._clock} {state} ready={len(self._ready)}>"

    # -- the clock and the choice points ------------------------------------------------

    def time(self) -> float:
        """Virtual seconds since the loop was made."""
        return self._clock

    def next_timer(self) -> float | None:
        """The deadline of the earliest live timer, or ``None`` when no timer is set."""
        timers = self._timers
        while timers and timers[0][2].cancelled():
            heapq.heappop(timers)[2]._scheduled = False  # type: ignore[attr-defined]
            self._cancelled_timers -= 1
        return timers[0][0] if timers else None

    def advance_to(self, when: float) -> int:
        """Move the clock to ``when`` and make every timer due by then ready, earliest
        deadline first (in the order they were set among equal deadlines); returns how
        many. Nothing runs until ``run_until_blocked``. Time never moves back; jumping past
        several deadlines fires their timers late and together, as after a real pause, so
        a faithful step is ``advance_to(next_timer())``."""
        if when < self._clock:
            raise ValueError(f"time moves forward only: {when} < {self._clock}")
        self._clock = when
        return self._fire_due()

    def run_until_blocked(self) -> int:
        """Run ready callbacks (and timers already due) first in, first out, with those
        they make ready, until none is ready; returns how many ran. Time does not move."""
        ran = 0
        with self._running():
            while self._ready or self._has_due():
                ran += self._iterate()
        return ran

    def ready_count(self) -> int:
        """How many callbacks are ready to run."""
        return len(self._ready)

    def create_port_future(self, label: str) -> PortFuture[Any]:
        """A future for a port operation in flight: the awaiting code blocks until the
        checker sets its result or exception. It is listed by ``pending_ports`` until done
        (resolved, or cancelled by its awaiter)."""
        self._check_closed()
        future: PortFuture[Any] = PortFuture(loop=self)
        future._txcheck_number = next(self._numbers)
        future.label = label
        self._ports.append(future)
        return future

    def pending_ports(self) -> tuple[PortFuture[Any], ...]:
        """The port futures not yet done, oldest first."""
        self._ports = [future for future in self._ports if not future.done()]
        return tuple(self._ports)

    @property
    def refused(self) -> SimulationError | None:
        """The first fence this loop's code hit, if any (every later step raises it)."""
        return self._refused

    def refuse(self, error: SimulationError) -> SimulationError:
        """Record a refusal (the first one sticks) and return it to be raised."""
        if self._refused is None:
            self._refused = error
        return error

    # -- running ------------------------------------------------------------------------

    def run_forever(self) -> None:
        """Run until ``stop()``: ready callbacks first in, first out; when none is ready,
        the clock jumps to the next timer. Nothing ready and no timer set raises
        ``SimulationError`` (on asyncio's loop this would hang forever)."""
        with self._running():
            try:
                while True:
                    if not self._ready and not self._stopping:
                        due = self.next_timer()
                        if due is None:
                            raise self._blocked()
                        self._clock = max(self._clock, due)
                    self._iterate()
                    if self._stopping:
                        break
            finally:
                self._stopping = False

    def run_until_complete(self, future: Generator[Any, None, _T] | Awaitable[_T]) -> _T:
        """Run until ``future`` (a coroutine is wrapped in a task) is done; its result."""
        self._check_closed()
        if self._thread is not None:
            raise RuntimeError("This event loop is already running")
        new_task = not asyncio.isfuture(future)
        task = asyncio.ensure_future(future, loop=self)  # type: ignore[arg-type]
        if new_task:
            task._log_destroy_pending = False  # type: ignore[attr-defined]
        task.add_done_callback(_stop_when_done)
        try:
            self.run_forever()
        except BaseException:
            if new_task and task.done() and not task.cancelled():
                task.exception()  # retrieved: the caller sees what stopped the run
            raise
        finally:
            task.remove_done_callback(_stop_when_done)
        if not task.done():
            raise RuntimeError("Event loop stopped before Future completed.")
        return task.result()

    def stop(self) -> None:
        """Stop ``run_forever`` after the current batch of callbacks."""
        self._stopping = True

    def is_running(self) -> bool:
        return self._thread is not None

    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Drop what is scheduled; the loop can no longer run. Tasks still pending are
        abandoned without a word (a refused or blocked run leaves some): asyncio would log
        each as destroyed while pending when it is freed."""
        if self._thread is not None:
            raise RuntimeError("Cannot close a running event loop")
        if self._closed:
            return
        tasks = self.kept_tasks if self.kept_tasks is not None else asyncio.all_tasks(self)
        for task in tasks:  # its own list when it keeps one: all_tasks scans the process
            task._log_destroy_pending = False  # type: ignore[attr-defined]
        self._closed = True
        self._ready.clear()
        self._timers.clear()
        self._ports.clear()

    async def shutdown_asyncgens(self) -> None:
        """Close every asynchronous generator still open, oldest first."""
        self._asyncgens_shutdown_called = True
        closing = list(self._asyncgens)
        self._asyncgens.clear()
        if not closing:
            return
        results = await asyncio.gather(*[gen.aclose() for gen in closing], return_exceptions=True)
        for result, gen in zip(results, closing, strict=True):
            if isinstance(result, Exception):
                self.call_exception_handler(
                    {
                        "message": f"an error occurred during closing of "
                        f"asynchronous generator {gen!r}",
                        "exception": result,
                        "asyncgen": gen,
                    }
                )

    async def shutdown_default_executor(self, timeout: float | None = None) -> None:
        """Nothing to shut down: the loop has no executor (threads are fenced)."""

    # -- scheduling ---------------------------------------------------------------------

    def call_soon(  # type: ignore[override]  # the stubs type *args variadically
        self, callback: Callable[..., object], *args: Any, context: Context | None = None
    ) -> asyncio.Handle:
        self._check_closed()
        handle = asyncio.Handle(callback, args, self, context)
        self._ready.append(handle)
        return handle

    def call_soon_threadsafe(  # type: ignore[override]  # the stubs type *args variadically
        self, callback: Callable[..., object], *args: Any, context: Context | None = None
    ) -> asyncio.Handle:
        """``call_soon`` from the loop's own thread; from another thread, refused."""
        if self._thread is not None and threading.get_ident() != self._thread:
            raise self.refuse(
                refusal(
                    "loop.call_soon_threadsafe",
                    FENCED["run_in_executor"],
                    sys._getframe(1),
                )
            )
        return self.call_soon(callback, *args, context=context)

    def call_later(  # type: ignore[override]  # the stubs type *args variadically
        self,
        delay: float,
        callback: Callable[..., object],
        *args: Any,
        context: Context | None = None,
    ) -> asyncio.TimerHandle:
        if delay is None:
            raise TypeError("delay must not be None")
        return self.call_at(self._clock + delay, callback, *args, context=context)

    def call_at(  # type: ignore[override]  # the stubs type *args variadically
        self,
        when: float,
        callback: Callable[..., object],
        *args: Any,
        context: Context | None = None,
    ) -> asyncio.TimerHandle:
        if when is None:
            raise TypeError("when cannot be None")
        self._check_closed()
        timer = asyncio.TimerHandle(when, callback, args, self, context)
        heapq.heappush(self._timers, (when, next(self._timer_order), timer))
        timer._scheduled = True  # type: ignore[attr-defined]
        return timer

    def _timer_handle_cancelled(self, handle: asyncio.TimerHandle) -> None:
        if handle._scheduled:  # type: ignore[attr-defined]
            self._cancelled_timers += 1

    def create_future(self) -> asyncio.Future[Any]:
        future: SimFuture[Any] = SimFuture(loop=self)
        future._txcheck_number = next(self._numbers)
        return future

    def create_task(
        self,
        coro: Coroutine[Any, Any, _T] | Generator[Any, None, _T],
        *,
        name: str | None = None,
        context: Context | None = None,
    ) -> asyncio.Task[_T]:
        self._check_closed()
        if self._task_factory is not None:
            if context is None:
                task = self._task_factory(self, coro)
            else:
                task = self._task_factory(self, coro, context=context)
            if name is not None:
                task.set_name(name)
            return task  # type: ignore[no-any-return]
        if name is None:
            name = f"Task-{next(self._task_names)}"
        if context is None:
            made: asyncio.Task[_T] = SimTask(coro, loop=self, name=name)
        else:
            made = SimTask(coro, loop=self, name=name, context=context)  # type: ignore[call-arg]
        if self.kept_tasks is not None:
            self.kept_tasks.append(made)
        return made

    def set_task_factory(self, factory: Any) -> None:
        """A factory's tasks are its own: not numbered, so sets of them iterate in memory
        order."""
        if factory is not None and not callable(factory):
            raise TypeError("task factory must be a callable or None")
        self._task_factory = factory

    def get_task_factory(self) -> Any:
        return self._task_factory

    # -- errors and debugging -----------------------------------------------------------

    def get_exception_handler(self) -> Any:
        return self._exception_handler

    def set_exception_handler(self, handler: Any) -> None:
        if handler is not None and not callable(handler):
            raise TypeError(f"A callable object or None is expected, got {handler!r}")
        self._exception_handler = handler

    def default_exception_handler(self, context: dict[str, Any]) -> None:
        """Log it, as asyncio's loop does (to the ``txcheck.sim`` logger)."""
        message = context.get("message") or "Unhandled exception in event loop"
        exception = context.get("exception")
        details = [f"{key}: {context[key]!r}" for key in sorted(context)]
        lines = [message, *(d for d in details if not d.startswith(("message:", "exception:")))]
        exc_info = (type(exception), exception, exception.__traceback__) if exception else None
        logger.error("\n".join(lines), exc_info=exc_info)

    def call_exception_handler(self, context: dict[str, Any]) -> None:
        if self._exception_handler is None:
            self.default_exception_handler(context)
            return
        try:
            self._exception_handler(self, context)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as error:
            self.default_exception_handler(
                {
                    "message": "Unhandled error in exception handler",
                    "exception": error,
                    "context": context,
                }
            )

    def get_debug(self) -> bool:
        return self._debug

    def set_debug(self, enabled: bool) -> None:
        self._debug = enabled

    # -- fences (``txcheck.sim.fences.FENCED``): the real world is refused -------------

    run_in_executor = _fence("run_in_executor")  # type: ignore[assignment]  # variadic in the stubs
    set_default_executor = _fence("set_default_executor")
    getaddrinfo = _fence("getaddrinfo")
    getnameinfo = _fence("getnameinfo")
    create_connection = _fence("create_connection")
    create_server = _fence("create_server")
    create_unix_connection = _fence("create_unix_connection")
    create_unix_server = _fence("create_unix_server")
    connect_accepted_socket = _fence("connect_accepted_socket")
    create_datagram_endpoint = _fence("create_datagram_endpoint")
    sendfile = _fence("sendfile")
    start_tls = _fence("start_tls")
    sock_recv = _fence("sock_recv")
    sock_recv_into = _fence("sock_recv_into")
    sock_recvfrom = _fence("sock_recvfrom")
    sock_recvfrom_into = _fence("sock_recvfrom_into")
    sock_sendall = _fence("sock_sendall")
    sock_sendto = _fence("sock_sendto")
    sock_connect = _fence("sock_connect")
    sock_accept = _fence("sock_accept")
    sock_sendfile = _fence("sock_sendfile")
    connect_read_pipe = _fence("connect_read_pipe")
    connect_write_pipe = _fence("connect_write_pipe")
    subprocess_shell = _fence("subprocess_shell")
    subprocess_exec = _fence("subprocess_exec")
    add_reader = _fence("add_reader")  # type: ignore[assignment]  # variadic in the stubs
    remove_reader = _fence("remove_reader")
    add_writer = _fence("add_writer")  # type: ignore[assignment]  # variadic in the stubs
    remove_writer = _fence("remove_writer")
    add_signal_handler = _fence("add_signal_handler")  # type: ignore[assignment]  # variadic in the stubs
    remove_signal_handler = _fence("remove_signal_handler")

    # -- internals ----------------------------------------------------------------------

    def _check_closed(self) -> None:
        if self._closed:
            raise RuntimeError("Event loop is closed")

    def _has_due(self) -> bool:
        due = self.next_timer()
        return due is not None and due <= self._clock

    def _fire_due(self) -> int:
        """Move the timers due by now to the ready queue, earliest first."""
        timers, ready, now = self._timers, self._ready, self._clock
        fired = 0
        while timers and timers[0][0] <= now:
            timer = heapq.heappop(timers)[2]
            timer._scheduled = False  # type: ignore[attr-defined]
            if timer.cancelled():
                self._cancelled_timers -= 1
                continue
            ready.append(timer)
            fired += 1
        if self._cancelled_timers > 100 and 2 * self._cancelled_timers > len(timers):
            live = [entry for entry in timers if not entry[2].cancelled()]
            for entry in timers:
                if entry[2].cancelled():
                    entry[2]._scheduled = False  # type: ignore[attr-defined]
            heapq.heapify(live)
            self._timers = live
            self._cancelled_timers = 0
        return fired

    def _iterate(self) -> int:
        """One iteration of asyncio's loop at the current time: fire the due timers, then
        run the callbacks ready at the start of the batch; returns how many ran."""
        self._fire_due()
        ready = self._ready
        ran = 0
        for _ in range(len(ready)):
            handle = ready.popleft()
            if handle.cancelled():
                continue
            handle._run()
            ran += 1
            if self._refused is not None:
                self._settle_refused(handle)
                raise self._refused
        return ran

    def _settle_refused(self, handle: asyncio.Handle) -> None:
        """The task whose step hit a fence ended with the refusal; the loop raises it, so
        mark it seen (asyncio would log it as never retrieved when the task is freed)."""
        task = getattr(handle._callback, "__self__", None)  # type: ignore[attr-defined]
        if isinstance(task, asyncio.Future) and task.done() and not task.cancelled():
            task.exception()

    @contextlib.contextmanager
    def _running(self) -> Iterator[None]:
        """This loop as the thread's running loop, with its async generator hooks and the
        virtual ambient functions, for the duration of a run or a step."""
        self._check_closed()
        if self._thread is not None:
            raise RuntimeError("This event loop is already running")
        if events._get_running_loop() is not None:
            raise RuntimeError("Cannot run the event loop while another loop is running")
        if self._refused is not None:
            raise self._refused
        self._thread = threading.get_ident()
        hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook, finalizer=self._asyncgen_finalizer_hook
        )
        events._set_running_loop(self)
        if self.txcheck_virtual:
            ambient.enter(keep=self.keep_ambient)
        try:
            yield
        finally:
            if self.txcheck_virtual:
                ambient.leave()
            events._set_running_loop(None)
            sys.set_asyncgen_hooks(*hooks)
            self._thread = None

    def _blocked(self) -> SimulationError:
        ports = self.pending_ports()
        waiting = (
            f"; {len(ports)} port operation(s) wait for a checker: "
            + ", ".join(f.label for f in ports)
            if ports
            else "; the program waits for something that never happens (a deadlock)"
        )
        return SimulationError(
            f"the simulated loop is blocked at t={self._clock}: no callback is ready and "
            f"no timer is set{waiting}",
            call="loop.run_forever",
        )

    def _asyncgen_firstiter_hook(self, generator: AsyncGenerator[Any, Any]) -> None:
        self._asyncgens[generator] = None

    def _asyncgen_finalizer_hook(self, generator: AsyncGenerator[Any, Any]) -> None:
        self._asyncgens.pop(generator, None)
        if not self._closed:
            self.call_soon_threadsafe(self.create_task, generator.aclose())


def run(
    main: Coroutine[Any, Any, _T], *, seed: int = 0, epoch: float = EPOCH, virtual: bool = True
) -> _T:
    """``asyncio.run`` on a fresh ``SimLoop``: run ``main``, then cancel the tasks left (in
    the order they were made), close async generators and close the loop."""
    if events._get_running_loop() is not None:
        raise RuntimeError("txcheck.sim.run() cannot be called from a running event loop")
    loop = SimLoop(seed=seed, epoch=epoch, virtual=virtual)
    try:
        return loop.run_until_complete(main)
    finally:
        try:
            if loop.refused is None:
                _cancel_all_tasks(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


def _cancel_all_tasks(loop: SimLoop) -> None:
    left = sorted(asyncio.all_tasks(loop), key=lambda task: getattr(task, "number", 0))
    if not left:
        return
    for task in left:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
    for task in left:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {
                    "message": "unhandled exception during txcheck.sim.run() shutdown",
                    "exception": task.exception(),
                    "task": task,
                }
            )
