"""Async code as an actor of a run: the bridge between a ``SimLoop`` and the runner.

``drive`` runs one generation of an actor's asyncio code on its own ``SimLoop`` and speaks
the runner's protocol: it yields one request per port operation and is resumed with the
world's answer, exactly as a generator policy is. So every engine, the Session, traces,
shrinking, replay, forks and state fingerprints treat an async orchestrator like any other:
its position is a function of the answers it got, because the loop is deterministic.

Between two port operations the code runs alone (``run_until_blocked``). When several
operations wait (an ``asyncio.gather`` of calls), the oldest is sent first. When none waits
but a timer is set, time moves: a backoff sleep becomes a ``Sleep`` of the world's clock
(whole ticks, rounded up) so other actors move meanwhile; waiting for a call that will not
answer (a timeout outcome) moves only this loop's clock, to the caller's timer or the port's
``call_timeout``, as a timeout costs a generator policy no tick either.

A crash ends the generation where it stands: its tasks never run again, so no ``finally``
block or ``except`` handler of the crashed code runs during the run. The tasks are kept
(``_KEPT``), since a coroutine that is freed runs its ``finally`` blocks; past
``BURIAL_LIMIT`` ended generations the oldest are closed when a new one starts, where no
simulated loop runs, against ports that refuse every call.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import io
import logging
import math
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from txcheck.models.errors import ControlFlow, PolicyError, SimulationError
from txcheck.models.sim.policies.base import ActorGen
from txcheck.models.sim.requests import Invoke, ResultStatus, Sleep, ToolResult
from txcheck.sim import ambient
from txcheck.sim.loop import PortFuture, SimLoop
from txcheck.sim.ports import Channel, Ports, ToolTimeout

__all__ = ["BURIAL_LIMIT", "drive"]

BURIAL_LIMIT = 2_000
"""Generations kept after they crashed or were dropped with tasks unfinished, their tasks
unfreed (so their ``finally`` blocks unrun); past it, the oldest are closed. Kept objects
cost every full garbage collection a traversal, so the limit stays low."""

_KEPT: dict[Channel, None] = {}
"""Every generation's channel, oldest first: each holds its loop, which holds its tasks
(``SimLoop(keep_tasks=True)``). The garbage collector frees a dropped run's actors in any
order, and would otherwise run a coroutine's ``finally`` blocks at any moment, inside
another run."""

Start = Callable[[Ports], Coroutine[Any, Any, Any]]


def drive(start: Start, *, who: str, generation: int, seed: int, call_timeout: float) -> ActorGen:
    """One generation of an actor: ``start(ports)`` on a fresh ``SimLoop`` seeded with
    ``seed``, as a generator of requests (see the module's docstring)."""
    _close_oldest()
    loop = SimLoop(seed=seed, keep_tasks=True, keep_ambient=True)
    channel = Channel(loop, who=who, generation=generation)
    _KEPT[channel] = None
    ports = Ports(channel, call_timeout=call_timeout)
    coroutine = start(ports)
    if not asyncio.iscoroutine(coroutine):
        raise PolicyError(
            f"{who}'s entry point must be an 'async def' taking the ports "
            f"(got {type(coroutine).__name__})"
        )
    main = loop.create_task(coroutine)
    hanging: dict[PortFuture[Any], tuple[float, Invoke]] = {}
    cancelled_rest = False
    try:
        while True:
            loop.run_until_blocked()
            if loop.refused is not None:
                raise loop.refused
            while channel.refusals:
                yield channel.refusals.pop(0)
            if main.done():
                rest = _unfinished(loop)
                if not rest:
                    break
                if not cancelled_rest:  # as asyncio.run does when its main returns
                    cancelled_rest = True
                    for task in rest:
                        task.cancel()
                    continue
            for future in [f for f in hanging if f.done()]:
                del hanging[future]  # its caller gave up first (cancelled the await)
            waiting = [f for f in loop.pending_ports() if f not in hanging]
            if waiting:
                future = waiting[0]
                request = channel.requests.pop(future)
                response = yield request
                if isinstance(request, Invoke) and _no_answer(response):
                    hanging[future] = (loop.time() + call_timeout, request)
                else:
                    future.set_result(response)
                continue
            timer = loop.next_timer()
            hang = min((t for t, _ in hanging.values()), default=None)
            if timer is None and hang is None:
                if main.done():
                    break  # what is left after the cancellation waits forever: drop it
                raise SimulationError(
                    f"{who} is blocked at t={loop.time():g}: no port operation waits, no "
                    "timer is set, and nothing else can wake it (a deadlock)",
                    call="txcheck.sim.drive",
                )
            if hang is not None and (timer is None or hang < timer):
                loop.advance_to(hang)
                for future, (deadline, invoke) in list(hanging.items()):
                    if deadline <= hang:
                        del hanging[future]
                        future.set_exception(ToolTimeout(invoke.tool, invoke.call_id, call_timeout))
                continue
            assert timer is not None
            if not hanging:  # a sleep: the world's clock moves, others act meanwhile
                ticks = math.ceil(timer - loop.time())
                if ticks > 0:
                    yield Sleep(ticks=ticks)
            loop.advance_to(timer)
    except BaseException:  # crashed, dropped or failed: nothing of it runs again
        _bury(channel)
        raise
    _bury(channel)  # what is left waits forever after its cancellation
    try:
        if main.cancelled():
            raise PolicyError(f"{who}'s entry point was cancelled")
        error = main.exception()
        if error is not None:
            raise error
    finally:
        loop.close()


def _no_answer(response: Any) -> bool:
    return isinstance(response, ToolResult) and response.status is ResultStatus.TIMEOUT


def _unfinished(loop: SimLoop) -> list[asyncio.Task[Any]]:
    """The loop's unfinished tasks, oldest first (from the loop's own list: asyncio's
    ``all_tasks`` scans every task of the process)."""
    return [t for t in loop.kept_tasks or () if not t.done()]


def _bury(channel: Channel) -> None:
    """End ``channel``'s generation: its ports refuse, its unfinished tasks never run
    again (they stay held, see ``_KEPT``) and are not logged as destroyed while pending.
    A generation with nothing left unfinished is let go at once."""
    channel.closed = True
    rest = _unfinished(channel.loop)
    if not rest:
        _KEPT.pop(channel, None)
        return
    for task in rest:
        task._log_destroy_pending = False  # type: ignore[attr-defined]


@atexit.register
def _close_all() -> None:
    """At exit, close what is kept quietly, before the interpreter frees it noisily, and
    put the real clock and randomness back."""
    _close_oldest(limit=0)
    ambient.release()


def _close_oldest(limit: int = BURIAL_LIMIT) -> None:
    """Close ended generations, oldest first, until at most ``limit`` are kept: called
    where no simulated loop runs, so their ``finally`` blocks see closed ports and the real
    clock, and touch no run. A generation still running (its run is alive) is kept."""
    if len(_KEPT) <= limit:
        return
    with _silenced():
        _close_past(limit)


@contextlib.contextmanager
def _silenced() -> Iterator[None]:
    """Nothing a dead generation says while it is closed reaches the user: no log record
    (OpenTelemetry, say, logs a context it cannot detach outside its loop), no print."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        logging.disable(previous)


def _close_past(limit: int) -> None:
    excess = len(_KEPT) - limit
    for channel in list(_KEPT):
        if excess <= 0:
            break
        if not channel.closed:
            continue  # its run is alive: it may run again
        del _KEPT[channel]
        excess -= 1
        loop = channel.loop
        tasks = _unfinished(loop)
        loop.close()
        for task in tasks:
            coroutine = task.get_coro()
            try:
                coroutine.close()
            except ControlFlow:
                raise  # a real Ctrl-C
            except BaseException:  # a dead generation's last words go nowhere
                pass
        loop.kept_tasks = None
