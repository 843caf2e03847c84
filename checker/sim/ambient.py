"""Seeded, virtual stand-ins for the clock and randomness that code reaches without the loop.

While a ``SimLoop`` runs (and was made with ``virtual=True``, the default), these module
attributes answer from the loop instead of the machine:

- ``time.monotonic``, ``time.perf_counter`` (and their ``_ns`` forms): ``loop.time()``;
- ``time.time`` (and ``time_ns``): ``loop.epoch + loop.time()``;
- the functions of the ``random`` module (``random.random``, ``randint``, ``choice``,
  ``shuffle``, ``seed``, ...): the loop's own ``random.Random(seed)``;
- ``uuid.uuid4`` and ``os.urandom``: bytes from a second generator seeded from the same seed;
- ``time.sleep`` is refused (``SimulationError``): it would block the one thread the whole
  simulation runs on while virtual time stands still; use ``await asyncio.sleep``.

Virtual rather than refused, because ordinary orchestration code stamps times, jitters its
backoff and mints ids, and a checker should run it unchanged. The stand-ins answer from the
loop only in the thread that is running a ``SimLoop`` (they look up the running loop); any
other thread, and the process outside a run, get the real functions. The attributes are
swapped in when the first loop starts running and restored when the last one stops.

Not covered: names bound before the run (``from time import monotonic``,
``from random import random``), ``datetime.now()``, a ``random.Random()`` made without a
seed, ``random.SystemRandom`` and ``secrets`` (they read the machine in C or through their
own bound references).
"""

from __future__ import annotations

import functools
import os
import random
import sys
import threading
import time
import uuid
from asyncio import events
from collections.abc import Callable
from random import Random
from types import ModuleType
from typing import Any, Protocol

from txcheck.models.errors import SimulationError
from txcheck.sim.fences import refusal

__all__ = [
    "RANDOM_FUNCTIONS",
    "Ambient",
    "enter",
    "leave",
    "release",
]


class Ambient(Protocol):
    """What the stand-ins read from the running loop (``SimLoop`` provides it)."""

    txcheck_virtual: bool
    epoch: float
    random: Random
    entropy: Random

    def time(self) -> float: ...

    def refuse(self, error: SimulationError) -> SimulationError: ...


RANDOM_FUNCTIONS: tuple[str, ...] = tuple(
    sorted(
        name
        for name in dir(random)
        if not name.startswith("_")
        and getattr(getattr(random, name), "__self__", None) is getattr(random, "_inst", None)
    )
)
"""The ``random`` module's functions: bound methods of its hidden shared instance."""

_lock = threading.Lock()
_depth = 0
_kept = False  # stay swapped in after the last loop stops (``enter(keep=True)``)
_saved: list[tuple[ModuleType, str, Any, Any]] = []


def _sim() -> Ambient | None:
    """The ``SimLoop`` running in this thread, if it wants virtual ambient values."""
    loop = events._get_running_loop()
    return loop if getattr(loop, "txcheck_virtual", False) else None  # type: ignore[return-value]


def _clock(real: Callable[[], float], offset: bool) -> Callable[[], float]:
    def virtual() -> float:
        loop = _sim()
        if loop is None:
            return real()
        return loop.epoch + loop.time() if offset else loop.time()

    virtual.__name__ = real.__name__
    virtual.__doc__ = f"Virtual under txcheck.sim: {real.__doc__}"
    return virtual


def _clock_ns(real: Callable[[], int], offset: bool) -> Callable[[], int]:
    def virtual() -> int:
        loop = _sim()
        if loop is None:
            return real()
        seconds = loop.epoch + loop.time() if offset else loop.time()
        return round(seconds * 1_000_000_000)

    virtual.__name__ = real.__name__
    virtual.__doc__ = f"Virtual under txcheck.sim: {real.__doc__}"
    return virtual


def _sleep(real: Callable[[float], None]) -> Callable[[float], None]:
    def refused(seconds: float) -> None:
        loop = _sim()
        if loop is None:
            return real(seconds)
        raise loop.refuse(
            refusal(
                "time.sleep",
                "a blocking sleep stops the whole simulation while virtual time stands "
                "still; use await asyncio.sleep",
                sys._getframe(1),
            )
        )

    refused.__name__ = "sleep"
    return refused


def _random(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def seeded(*args: Any, **kwargs: Any) -> Any:
        loop = _sim()
        if loop is None:
            return real(*args, **kwargs)
        return getattr(loop.random, name)(*args, **kwargs)

    seeded.__name__ = name
    seeded.__doc__ = f"Seeded by the loop under txcheck.sim: {real.__doc__}"
    return seeded


def _uuid4(real: Callable[[], uuid.UUID]) -> Callable[[], uuid.UUID]:
    def seeded() -> uuid.UUID:
        loop = _sim()
        if loop is None:
            return real()
        return uuid.UUID(bytes=loop.entropy.randbytes(16), version=4)

    seeded.__name__ = "uuid4"
    return seeded


def _urandom(real: Callable[[int], bytes]) -> Callable[[int], bytes]:
    def seeded(size: int) -> bytes:
        loop = _sim()
        if loop is None:
            return real(size)
        return loop.entropy.randbytes(size)

    seeded.__name__ = "urandom"
    return seeded


_FACTORIES: list[tuple[ModuleType, str, Callable[[Any], Any]]] = [
    (time, "monotonic", lambda real: _clock(real, False)),
    (time, "perf_counter", lambda real: _clock(real, False)),
    (time, "time", lambda real: _clock(real, True)),
    (time, "monotonic_ns", lambda real: _clock_ns(real, False)),
    (time, "perf_counter_ns", lambda real: _clock_ns(real, False)),
    (time, "time_ns", lambda real: _clock_ns(real, True)),
    (time, "sleep", _sleep),
    (uuid, "uuid4", _uuid4),
    (os, "urandom", _urandom),
    *[(random, name, functools.partial(_random, name)) for name in RANDOM_FUNCTIONS],
]
"""What each swapped attribute's stand-in is made from (the function it stands in for)."""

_MADE: dict[tuple[str, str], tuple[Any, Any]] = {}
"""(module, name) -> (the function, its stand-in), made once: a checker enters and leaves
the loop at every step, and the stand-ins read the running loop, not their maker."""


def _replacements() -> list[tuple[ModuleType, str, Any]]:
    swaps: list[tuple[ModuleType, str, Any]] = []
    for module, name, make in _FACTORIES:
        current = getattr(module, name)
        made = _MADE.get((module.__name__, name))
        if made is None or made[0] is not current:
            made = _MADE[(module.__name__, name)] = (current, make(current))
        swaps.append((module, name, made[1]))
    return swaps


def enter(*, keep: bool = False) -> None:
    """Swap the stand-ins in (the first of nested or concurrent runs does it). With
    ``keep`` they stay in when the last loop stops, until ``release``: a checker enters
    and leaves a loop at every step of every run, and a stand-in with no loop running in
    its thread answers as the real function does."""
    global _depth, _kept  # noqa: PLW0603  (one process-wide count of running loops)
    with _lock:
        _depth += 1
        _kept = _kept or keep
        if _saved:  # in already (a running loop, or kept)
            return
        for module, name, stand_in in _replacements():
            _saved.append((module, name, getattr(module, name), stand_in))
            setattr(module, name, stand_in)


def leave() -> None:
    """Restore the real functions when the last running loop stops (unless kept). An
    attribute someone else replaced meanwhile (a test's monkeypatch) is left as they set
    it."""
    global _depth  # noqa: PLW0603
    with _lock:
        _depth -= 1
        if _depth > 0 or _kept:
            return
        _restore()


def release() -> None:
    """Restore the real functions kept in by ``enter(keep=True)``, if no loop runs."""
    global _kept  # noqa: PLW0603
    with _lock:
        _kept = False
        if _depth == 0:
            _restore()


def _restore() -> None:
    for module, name, real, stand_in in reversed(_saved):
        if getattr(module, name) is stand_in:
            setattr(module, name, real)
    _saved.clear()
