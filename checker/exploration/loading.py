"""Loading a policy by name: a built-in, or a user's ``package.module:Name``.

A user policy is untrusted code. Each way it can go wrong is reported as such, in one
line: the import fails, the name is missing, the object is not a policy, its constructor
raises (``PolicyError``), or the spec itself is malformed (``InputError``). While it runs,
a policy that raises is reported by the runner (``Execution.error``); one that loops
without yielding is stopped by a watchdog: every resume of a user policy's generator runs
under a wall-clock alarm (``signal.setitimer`` / SIGALRM in the main thread), which costs
two system calls per step and nothing at all for the trusted built-ins. In another thread
(a Dask worker runs its items in one) the alarm is a watcher thread that raises the same
exception in the policy's thread (``PyThreadState_SetAsyncExc``) once its time is up.
"""

from __future__ import annotations

import ctypes
import importlib
import inspect
import math
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import attrs

from txcheck.invariants import Invariant
from txcheck.models.errors import (
    InputError,
    InvariantError,
    PolicyError,
    PolicyStuck,
    ServiceError,
    UserCodeError,
)
from txcheck.models.policies import BUILTIN_POLICIES, builtin_policy
from txcheck.models.policies.base import ActorGen, OrchestratorContext, Policy
from txcheck.models.requests import Delivery
from txcheck.models.services import ServiceSet

__all__ = [
    "DEFAULT_POLICY_TIMEOUT",
    "MAX_TIMEOUT",
    "MIN_TIMEOUT",
    "LoadedPolicy",
    "WatchedPolicy",
    "import_path",
    "load_invariants",
    "load_policy",
    "load_services",
    "names_a_list",
    "origin",
    "watchdog_available",
]

_Loaded = TypeVar("_Loaded", ServiceSet, Invariant)

DEFAULT_POLICY_TIMEOUT = 5.0
"""Seconds a user policy may run between two yields before it is stopped."""
MIN_TIMEOUT = 0.001
MAX_TIMEOUT = 1_000_000_000.0

_SPEC = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


@attrs.frozen(kw_only=True)
class LoadedPolicy:
    """A policy ready to run, with the spec that names it in traces (``spec``)."""

    spec: str
    policy: Policy = attrs.field(eq=False)
    builtin: bool


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
        self._due: dict[int, float] = {}
        self._fired: set[int] = set()
        self._watcher: threading.Thread | None = None

    def _watch(self) -> None:
        while True:
            time.sleep(self.TICK)
            now = time.monotonic()
            with self._lock:
                for thread, due in list(self._due.items()):
                    if now >= due:
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
            self._due[thread] = time.monotonic() + seconds
        try:
            yield
        finally:
            with self._lock:
                self._due.pop(thread, None)
                if thread in self._fired:
                    self._fired.discard(thread)
                    _async_raise(thread, None)


_THREAD_ALARMS = _ThreadAlarms()


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Stuck


IN_USER_CODE: list[float | None] = [None]
"""Since when (``time.monotonic``) a user policy's code has been running, or None when it
is not: a hard deadline outside the policy's reach (``txcheck.cli.stopping``) reads it."""


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _watched(gen: ActorGen, *, policy: str, where: str, seconds: float) -> ActorGen:
    """``gen``, with every resume bounded by ``seconds`` of wall-clock time, and anything
    it raises (``SystemExit`` and ``KeyboardInterrupt`` too) reported as the policy's
    error instead of obeyed: user code must not end or interrupt txcheck."""
    response: Any = None
    first = True
    alarm = _alarm if watchdog_available() else _THREAD_ALARMS.alarm
    while True:
        IN_USER_CODE[0] = time.monotonic()
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
        except GeneratorExit:
            raise
        except (SystemExit, KeyboardInterrupt) as error:
            raise PolicyError(
                f"policy {policy!r} raised {type(error).__name__}({error}) in {where}: a "
                "policy may not end or interrupt the checker"
            ) from None
        finally:
            IN_USER_CODE[0] = None
        first = False
        response = yield request


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

    def _watch(self, gen: ActorGen, where: str) -> ActorGen:
        if not inspect.isgenerator(gen):
            return gen  # not a generator: the runner says so
        return _watched(cast(ActorGen, gen), policy=self.name, where=where, seconds=self.seconds)

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


@contextmanager
def _cwd_on_path() -> Iterator[None]:
    """Import user modules from the current directory too, as ``python -m`` would."""
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        yield
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def _resolve(spec: str, what: str = "policy", error: type[UserCodeError] = PolicyError) -> Any:
    """The object at ``package.module:Name`` (the current directory is importable)."""
    module_name, _, attribute = spec.partition(":")
    with _cwd_on_path():
        try:
            module = importlib.import_module(module_name)
        except ImportError as problem:
            raise error(f"cannot import {what} module {module_name!r}: {problem}") from None
        except BaseException as problem:  # user code: even SystemExit is reported, not obeyed
            raise error(
                f"importing {what} module {module_name!r} raised "
                f"{type(problem).__name__}: {problem}"
            ) from None
    found: Any = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise error(f"module {module_name!r} has no attribute {attribute!r}")
        found = getattr(found, part)
    return found


def _spec(spec: str, option: str, what: str) -> str:
    if not _SPEC.match(spec):
        raise InputError(
            f"{what} must be an import path 'package.module:NAME' (got {spec!r})", source=option
        )
    return spec


_ORIGINS: dict[int, tuple[object, str]] = {}
"""Where each loaded service set and invariant came from (by ``id``, the object kept so the
id stays its own): ``module:NAME``, or ``module:NAME#i`` for item ``i`` of a list."""


def _remember(spec: str, value: object, items: Sequence[object]) -> None:
    if items is value:
        _LISTS.add(spec)
    for index, item in enumerate(items):
        _ORIGINS[id(item)] = (item, spec if item is value else f"{spec}#{index}")


_LISTS: set[str] = set()


def names_a_list(spec: str) -> bool:
    """Whether ``spec`` (``module:NAME``, loaded by ``load_services`` or
    ``load_invariants``) named a list of them rather than one."""
    return spec in _LISTS


def origin(obj: object) -> str | None:
    """The import path ``obj`` was loaded from by ``load_services`` or ``load_invariants``
    (``module:NAME`` or ``module:NAME#i``), or None."""
    found = _ORIGINS.get(id(obj))
    return found[1] if found is not None and found[0] is obj else None


def load_services(specs: Sequence[str]) -> tuple[ServiceSet, ...]:
    """The ``ServiceSet``s ``--services`` names (each NAME a set or a list of them)."""
    return tuple(
        _load_all(
            specs,
            ServiceSet,
            ("--services", "a service set", "service", ServiceError),
            "a ServiceSet or a list of them",
        )
    )


def load_invariants(specs: Sequence[str]) -> tuple[Invariant, ...]:
    """The invariants ``--invariants`` names (each NAME one made with @always or
    @eventually, or a list of them)."""
    return tuple(
        _load_all(
            specs,
            Invariant,
            ("--invariants", "an invariant", "invariant", InvariantError),
            "an invariant made with @always or @eventually, or a list of them",
        )
    )


def _load_all(
    specs: Sequence[str],
    kind: type[_Loaded],
    option: tuple[str, str, str, type[UserCodeError]],
    wanted: str,
) -> list[_Loaded]:
    """Every ``kind`` the ``specs`` name, each NAME one of them or a list of them;
    ``option`` is the flag, what it names, the kind's word and its error class."""
    flag, what, word, error = option
    found: list[_Loaded] = []
    for spec in specs:
        value = _resolve(_spec(spec, flag, what), word, error)
        items = value if isinstance(value, (list, tuple)) else [value]
        _remember(spec, value, items)
        for item in items:
            if not isinstance(item, kind):
                raise error(f"{spec!r} must be {wanted} (got {type(item).__name__})")
            found.append(item)
    return found


def _instantiate(spec: str, found: Any) -> Policy:
    if isinstance(found, Policy):
        return found
    if isinstance(found, type) and issubclass(found, Policy):
        try:
            return found()
        except BaseException as error:  # user code: even SystemExit is reported, not obeyed
            raise PolicyError(
                f"creating policy {spec!r} raised {type(error).__name__}: {error}"
            ) from None
    raise PolicyError(
        f"{spec!r} must be a Policy subclass or instance (got {type(found).__name__})"
    )


def load_policy(
    spec: str | Policy | type[Policy], *, timeout: float | None = DEFAULT_POLICY_TIMEOUT
) -> LoadedPolicy:
    """The policy ``spec`` names: a built-in name or ``package.module:Name``; a Policy
    instance or subclass is taken as is, and named by its import path when it has one
    (so traces and printed reproductions can load it again). User policies run under the
    watchdog unless ``timeout`` is None."""
    if isinstance(spec, Policy) or (isinstance(spec, type) and issubclass(spec, Policy)):
        policy = _instantiate(repr(spec), spec)
        cls = spec if isinstance(spec, type) else type(spec)
        builtin = BUILTIN_POLICIES.get(policy.name) is cls
        name = policy.name if builtin else import_path(cls) or policy.name
        if builtin:
            return LoadedPolicy(spec=name, policy=policy, builtin=True)
    else:
        builtin = spec in BUILTIN_POLICIES
        if builtin:
            found = builtin_policy(spec)
            assert found is not None
            return LoadedPolicy(spec=spec, policy=found, builtin=True)
        if not _SPEC.match(spec):
            known = ", ".join(sorted(BUILTIN_POLICIES))
            raise InputError(
                f"policy must be a built-in name ({known}) or an import path "
                f"'package.module:Name' (got {spec!r})",
                source="--policy",
            )
        policy = _instantiate(spec, _resolve(spec))
        name = spec
    if timeout is not None:
        policy = WatchedPolicy(policy, seconds=_timeout(timeout), name=name)
    return LoadedPolicy(spec=name, policy=policy, builtin=builtin)


def import_path(cls: type) -> str | None:
    """``module:QualName`` of a class that can be imported back from it (not one from
    ``__main__`` or defined inside a function), else None."""
    module, qualname = cls.__module__, cls.__qualname__
    if module == "__main__" or "<locals>" in qualname:
        return None
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return f"{module}:{qualname}" if found is cls else None


def _timeout(seconds: object) -> float:
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
