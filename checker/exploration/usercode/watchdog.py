"""The watchdog: a user's code runs under a time limit, and stops cleanly past it.

Every resume of a user policy's generator, and every call of a user's service or invariant,
runs under a wall-clock alarm (``signal.setitimer`` / SIGALRM in the main thread), which
costs two system calls per step and nothing at all for the trusted built-ins. In another
thread (a Dask worker runs its items in one) the alarm is a watcher thread that raises the
same exception in the user code's thread (``PyThreadState_SetAsyncExc``) once its time is up.

What the limit counts is the time the user code had (``UserClock``): the wall-clock time
since it started, less the time its thread waited for a CPU (Linux's scheduler statistics)
and the time the garbage collector ran (txcheck's heap, not the user's code). On a busy
machine a policy step of milliseconds can take seconds of wall-clock time; it is not
stopped for that. When the alarm fires early by that measure, it is set again for the rest.
Code that sleeps, blocks or loops is charged in full.
"""

from __future__ import annotations

import ctypes
import gc
import inspect
import math
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple, cast

import attrs

from txcheck.invariants import Invariant
from txcheck.models.errors import (
    ControlFlow,
    InputError,
    InvariantStuck,
    PolicyError,
    PolicyStuck,
    ServiceStuck,
    UserCodeError,
    UserCodeStuck,
    raised,
)
from txcheck.models.sim.policies.base import ActorGen, OrchestratorContext, Policy
from txcheck.models.sim.requests import Delivery
from txcheck.models.sim.runner import close_generator
from txcheck.models.sim.services import ServiceSet

__all__ = [
    "DEFAULT_POLICY_TIMEOUT",
    "IN_USER_CODE",
    "MAX_TIMEOUT",
    "MIN_TIMEOUT",
    "USER_CODE_NAME",
    "Bounded",
    "UserClock",
    "WatchedPolicy",
    "bounded_invariant",
    "bounded_services",
    "monotonic",
    "policy_timeout",
    "user_timeout",
    "watchdog_available",
]

DEFAULT_POLICY_TIMEOUT = 5.0
"""Seconds a user policy may run between two yields before it is stopped."""
MIN_TIMEOUT = 0.001
MAX_TIMEOUT = 1_000_000_000.0

monotonic = time.monotonic
"""The real clock, taken when this module is imported (before any simulated loop runs):
a ``txcheck.sim`` loop swaps ``time.monotonic`` for its virtual clock while it runs, and
a watchdog must measure real time even then."""


def _waited(thread: int) -> float:
    """Seconds thread ``thread`` (a native id) has waited for a CPU, runnable but not
    running, since it started (0.0 where the kernel does not say)."""
    try:
        with open(f"/proc/self/task/{thread}/schedstat", "rb") as stats:
            return int(stats.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


class _Collections:
    """How long the garbage collector has run in this process (``gc.callbacks``), a
    collection under way included."""

    def __init__(self) -> None:
        self.total = 0.0
        self._since: float | None = None
        gc.callbacks.append(self._on_collect)

    def _on_collect(self, phase: str, info: Mapping[str, int]) -> None:
        if phase == "start":
            self._since = monotonic()
        elif self._since is not None:
            self.total += monotonic() - self._since
            self._since = None

    def seconds(self) -> float:
        since = self._since
        return self.total + (0.0 if since is None else monotonic() - since)


_COLLECTIONS = _Collections()


_RESAMPLE = 0.25
"""Seconds a thread's wait for a CPU, as last read, serves as its wait when user code
starts: the kernel's figure costs a file read (tens of microseconds), a policy's step can
cost less."""

_SAMPLES: dict[int, tuple[float, float]] = {}
"""Per thread (native id): when its wait for a CPU was last read, and what it was."""


class UserClock(NamedTuple):
    """When user code started, on three clocks: ``charged()`` is the time it has had since
    (wall-clock time, less its thread's wait for a CPU and the garbage collector's runs).
    The wait at the start is the thread's last reading, at most ``_RESAMPLE`` seconds old:
    a wait in that interval is taken off too, so the time charged can fall short of what
    the code had by that much, never exceed it (a limit is never reached early). (A named
    tuple, not an attrs class: one is made at every step of user code; 5x cheaper.)"""

    thread: int
    wall: float
    waited: float
    collecting: float

    @classmethod
    def start(cls) -> UserClock:
        thread = threading.get_native_id()
        now = monotonic()
        sample = _SAMPLES.get(thread)
        if sample is None or now - sample[0] > _RESAMPLE:
            sample = _SAMPLES[thread] = (now, _waited(thread))
        return cls(thread, now, sample[1], _COLLECTIONS.seconds())

    def charged(self) -> float:
        wall = monotonic() - self.wall
        waited = _waited(self.thread) - self.waited
        collecting = _COLLECTIONS.seconds() - self.collecting
        return max(0.0, wall - waited - collecting)


class _Stuck(BaseException):
    """Raised by the alarm inside a user policy (a BaseException, so a policy's own
    ``except Exception`` cannot swallow it)."""


def watchdog_available() -> bool:
    """Whether the SIGALRM watchdog can run here (POSIX, main thread)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _async_raise(thread: int, error: type[BaseException] | None) -> None:
    """Raise ``error`` in ``thread`` at its next bytecode (None: take back a pending one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread), ctypes.py_object(error) if error is not None else None
    )


class _ThreadAlarms:
    """The watchdog outside the main thread: one watcher thread, started on first use,
    raises ``_Stuck`` in each thread whose policy has run past its time. An alarm that
    fired after its policy yielded (a race of microseconds) is taken back on exit."""

    TICK = 0.02

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._due: dict[int, tuple[UserClock, float]] = {}
        self._fired: set[int] = set()
        self._watcher: threading.Thread | None = None

    def _watch(self) -> None:
        while True:
            time.sleep(self.TICK)
            now = monotonic()
            with self._lock:
                for thread, (clock, seconds) in list(self._due.items()):
                    if now - clock.wall >= seconds and clock.charged() >= seconds:
                        del self._due[thread]
                        self._fired.add(thread)
                        _async_raise(thread, _Stuck)

    @contextmanager
    def alarm(self, seconds: float) -> Iterator[None]:
        thread = threading.get_ident()
        with self._lock:
            if self._watcher is None:
                self._watcher = threading.Thread(
                    target=self._watch, name="txcheck-policy-watchdog", daemon=True
                )
                self._watcher.start()
            self._due[thread] = (UserClock.start(), seconds)
        try:
            yield
        finally:
            with self._lock:
                self._due.pop(thread, None)
                if thread in self._fired:
                    self._fired.discard(thread)
                    _async_raise(thread, None)


_THREAD_ALARMS = _ThreadAlarms()


_EARLIEST = 0.05
"""Seconds at least before an alarm that fired early (by the charged time) fires again."""


def _on_alarm_after(clock: UserClock, seconds: float) -> Callable[[int, Any], None]:
    """The SIGALRM handler of one limit: past ``seconds`` of charged time it stops the
    code; before (the machine was busy, or the collector ran) it sets the alarm again for
    the rest."""

    def on_alarm(signum: int, frame: Any) -> None:
        left = seconds - clock.charged()
        if left > 0:
            signal.setitimer(signal.ITIMER_REAL, max(left, _EARLIEST))
            return
        raise _Stuck

    return on_alarm


IN_USER_CODE: list[UserClock | None] = [None]
"""Since when user code (a policy, a service, an invariant) has been running
(``UserClock``), or None when it is not: a hard deadline outside its reach
(``txcheck.cli.stopping``) reads it, and ``USER_CODE_NAME`` for what it is."""
USER_CODE_NAME: list[str] = [""]
"""What user code runs (or last ran): ``policy 'NAME'``, ``service 'NAME'``..."""


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _on_alarm_after(UserClock.start(), seconds))
    if previous is None:  # a handler not installed from Python (at interpreter exit, say)
        previous = signal.SIG_DFL
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _watched(
    gen: ActorGen, *, policy: str, where: str, seconds: float, problems: list[str]
) -> ActorGen:
    """``gen``, with every resume bounded by ``seconds`` of wall-clock time, and anything
    it raises (``SystemExit``, ``KeyboardInterrupt``, its own ``BaseException``) reported
    as the policy's error instead of obeyed: user code must not end or interrupt txcheck.
    Closed (a crash, or the end of a run), it closes ``gen`` under the same limit; what
    went wrong then goes to ``problems`` (raising from a close the garbage collector makes
    would only print a traceback), and the policy's next generator reports it."""
    response: Any = None
    first = True
    alarm = _alarm if watchdog_available() else _THREAD_ALARMS.alarm
    who = f"policy {policy!r}"
    while True:
        IN_USER_CODE[0] = UserClock.start()
        USER_CODE_NAME[0] = who
        try:
            with alarm(seconds):
                request = next(gen) if first else gen.send(response)
        except StopIteration:
            return
        except _Stuck:
            raise PolicyStuck(
                f"policy {policy!r} ran {seconds:g}s in {where} without yielding a request "
                "(an endless loop?)"
            ) from None
        except ControlFlow:
            raise
        except (SystemExit, KeyboardInterrupt, GeneratorExit) as error:
            raise PolicyError(
                f"policy {policy!r} raised {type(error).__name__}({error}) in {where}: a "
                "policy may not end or interrupt the checker"
            ) from None
        except Exception:
            raise  # the runner reports it, with the step
        except BaseException as error:  # a custom BaseException subclass
            raise PolicyError(f"policy {policy!r} raised in {where}: {raised(error)}") from None
        finally:
            IN_USER_CODE[0] = None
        first = False
        try:
            response = yield request
        except GeneratorExit:
            problem = _close_watched(gen, seconds, who)
            if problem is not None and not problems:
                problems.append(f"policy {policy!r}: {where} was closed and {problem}")
            raise


def _close_watched(gen: ActorGen, seconds: float, who: str) -> str | None:
    """Close a user policy's generator under the watchdog; what went wrong, or None. The
    garbage collector may close one while other user code runs (an asyncio actor's loop
    is in cycles that are freed at any moment): it is then closed under that code's own
    limit, which a second alarm would cancel."""
    if IN_USER_CODE[0] is not None:
        try:
            return close_generator(gen, passes=(_Stuck,))
        except UserCodeError as error:
            return str(error)
    alarm = _alarm if watchdog_available() else _THREAD_ALARMS.alarm
    IN_USER_CODE[0] = UserClock.start()
    USER_CODE_NAME[0] = who
    try:
        with alarm(seconds):
            return close_generator(gen, passes=(_Stuck,))
    except _Stuck:
        return f"its generator ran {seconds:g}s without ending when closed (an endless loop?)"
    except UserCodeError as error:
        return str(error)
    finally:
        IN_USER_CODE[0] = None


class Bounded:
    """A user's function (a service's handler or state builder, an invariant's check)
    whose every call is bounded by ``seconds`` of wall-clock time, as a policy's resumes
    are: past it the watchdog stops it with ``stuck`` (``ServiceStuck``,
    ``InvariantStuck``). ``collect`` runs an invariant's generator to its end inside the
    limit (calling a generator function runs none of its code). What else it raises is
    contained where it is called (``World``, ``Session``), with the step."""

    def __init__(
        self,
        inner: Callable[..., Any],
        *,
        seconds: float,
        who: str,
        stuck: type[UserCodeStuck],
        collect: bool = False,
    ) -> None:
        self.inner = inner
        self.seconds = seconds
        self.who = who
        self.stuck = stuck
        self.collect = collect
        self.__module__ = getattr(inner, "__module__", __name__)
        self.__name__ = getattr(inner, "__name__", type(inner).__name__)
        self.__doc__ = getattr(inner, "__doc__", None)

    def __call__(self, *args: Any) -> Any:
        alarm = _alarm if watchdog_available() else _THREAD_ALARMS.alarm
        IN_USER_CODE[0] = UserClock.start()
        USER_CODE_NAME[0] = self.who
        try:
            with alarm(self.seconds):
                found = self.inner(*args)
                if self.collect and _iterable(found):
                    found = list(found)
            return found
        except _Stuck:
            raise self.stuck(
                f"{self.who} ran {self.seconds:g}s without returning (an endless loop?)"
            ) from None
        finally:
            IN_USER_CODE[0] = None

    def __repr__(self) -> str:
        return f"<{self.who} (bounded to {self.seconds:g}s)>"


def _iterable(value: object) -> bool:
    """Whether an invariant's result is a collection of messages to run to its end here
    (a string, a mapping or a non-iterable is left for ``Session`` to refuse)."""
    return not isinstance(value, (str, bytes, Mapping)) and isinstance(value, Iterable)


_BUILT_IN = ("txcheck.models.", "txcheck.invariants.")
"""Where txcheck's own services and invariants live: plain, trusted code that a worker
loads by import path too, and that runs unbounded (the watchdog costs system calls)."""


def _built_in(*functions: object) -> bool:
    return all(getattr(f, "__module__", "").startswith(_BUILT_IN) for f in functions)


def bounded_services(service: ServiceSet, seconds: float) -> ServiceSet:
    """``service`` with its state builder and every handler bounded (``Bounded``); one of
    txcheck's own as it is."""
    if _built_in(service.initial_state, *service.handlers.values()):
        return service
    who = f"service {service.name!r}"
    return ServiceSet(
        name=service.name,
        initial_state=Bounded(
            service.initial_state,
            seconds=seconds,
            who=f"{who} building its state",
            stuck=ServiceStuck,
        ),
        handlers={
            tool: Bounded(
                handler, seconds=seconds, who=f"{who} handling {tool}", stuck=ServiceStuck
            )
            for tool, handler in service.handlers.items()
        },
    )


def bounded_invariant(invariant: Invariant, seconds: float) -> Invariant:
    """``invariant`` with its check bounded (``Bounded``), run to its end in the limit;
    one of txcheck's own as it is."""
    if _built_in(invariant.check):
        return invariant
    return attrs.evolve(
        invariant,
        check=Bounded(
            invariant.check,
            seconds=seconds,
            who=f"invariant {invariant.name!r}",
            stuck=InvariantStuck,
            collect=True,
        ),
    )


def user_timeout(services: Sequence[ServiceSet], invariants: Sequence[Invariant]) -> float | None:
    """The time limit the user's services and invariants were loaded with, or None when
    none of them is bounded."""
    functions: list[object] = [i.check for i in invariants]
    for service in services:
        functions += [service.initial_state, *service.handlers.values()]
    return next((f.seconds for f in functions if isinstance(f, Bounded)), None)


class WatchedPolicy(Policy):
    """A user policy whose generators run under the watchdog; everything else delegates."""

    def __init__(
        self, inner: Policy, *, seconds: float = DEFAULT_POLICY_TIMEOUT, name: str | None = None
    ) -> None:
        self.inner = inner
        self.seconds = seconds
        self.name = inner.name if name is None else name
        """What messages call the policy: the spec the user gave (a subclass of a built-in
        policy inherits its ``name``, which would blame the built-in)."""
        self.uses_outbox = inner.uses_outbox
        self.max_attempts = inner.max_attempts
        self.late_commits = inner.late_commits
        self.model_turns = inner.model_turns
        self.problems: list[str] = []
        """What went wrong closing one of its generators (``_watched``): reported when
        the policy next starts a generator."""

    def _watch(self, gen: ActorGen, where: str) -> ActorGen:
        if self.problems:
            raise PolicyError(self.problems[0])
        if not inspect.isgenerator(gen):
            return gen  # not a generator: the runner says so
        return _watched(
            cast(ActorGen, gen),
            policy=self.name,
            where=where,
            seconds=self.seconds,
            problems=self.problems,
        )

    def orchestrate(self, ctx: OrchestratorContext) -> ActorGen:
        return self._watch(self.inner.orchestrate(ctx), f"orchestrate ({ctx.instance})")

    def relay(self) -> ActorGen:
        return self._watch(self.inner.relay(), "relay")

    def consume(self, delivery: Delivery) -> ActorGen:
        return self._watch(self.inner.consume(delivery), "consume")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"<policy {self.name} (watched)>"


def policy_timeout(seconds: object) -> float:
    """``seconds`` as a policy time limit: a finite number from 1 ms to ``MAX_TIMEOUT``
    (0, a negative number, NaN or infinity would switch the watchdog off or overflow
    its timer, and a policy would then be blamed for it)."""
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, (int, float))
        or not math.isfinite(seconds)
        or not MIN_TIMEOUT <= seconds <= MAX_TIMEOUT
    ):
        raise InputError(
            f"the policy time limit must be a finite number of seconds from {MIN_TIMEOUT:g} "
            f"to {MAX_TIMEOUT:g} (got {seconds!r})",
            source="--policy-timeout",
        )
    return float(seconds)
