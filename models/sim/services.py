"""Services: what a tool does to durable state, registered per tool.

A handler is a plain function ``(state, arguments) -> Committed | Rejected``. It must either
commit (mutate ``state`` and return the receipt and the events of that change) or reject
without touching ``state``: that is the local transaction the world relies on. Users model
their own tools by registering a ``ServiceSet`` next to the checkout one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from txcheck.models.errors import ControlFlow, ServiceError

__all__ = [
    "Committed",
    "Handler",
    "Rejected",
    "ServiceSet",
    "merge_service_sets",
    "outcome_problem",
]


@attrs.frozen(kw_only=True)
class Committed:
    """A committed change: the receipt the caller gets and the events it emits."""

    receipt: Mapping[str, Any]
    events: tuple[Mapping[str, Any], ...] = ()


@attrs.frozen(kw_only=True)
class Rejected:
    """A permanent business rejection; ``code`` is stable (e.g. ``amount_mismatch``)."""

    code: str
    message: str


Handler = Callable[[dict[str, Any], Mapping[str, Any]], "Committed | Rejected"]


@attrs.frozen(kw_only=True)
class ServiceSet:
    """A group of tools sharing one piece of state.

    ``initial_state`` builds that state from a world fixture (a JSON object); ``handlers``
    maps tool names to handlers. Read tools need a handler too: it returns a receipt and
    commits nothing.
    """

    name: str
    initial_state: Callable[[Mapping[str, Any]], dict[str, Any]]
    handlers: Mapping[str, Handler]


def merge_service_sets(sets: tuple[ServiceSet, ...]) -> dict[str, tuple[str, Handler]]:
    """Tool name -> (service name, handler); a tool served twice, or two sets with one name,
    is a mistake (``ServiceError``)."""
    table: dict[str, tuple[str, Handler]] = {}
    names: set[str] = set()
    for service in sets:
        if service.name in names:
            raise ServiceError(f"two service sets are named {service.name!r}")
        names.add(service.name)
        for tool, handler in service.handlers.items():
            if tool in table:
                raise ServiceError(
                    f"tool {tool!r} is served by both {table[tool][0]!r} and {service.name!r}"
                )
            table[tool] = (service.name, handler)
    return table


def outcome_problem(outcome: object) -> str | None:
    """What is wrong with what a handler returned, as "expected ..., got ...", or None:
    a ``Committed`` whose receipt is a JSON object (string keys, JSON values) and whose
    events are JSON objects, or a ``Rejected`` whose code and message are strings. The
    world records receipts and events in traces and digests them: anything else (None, a
    set, an object) would end the run in a traceback or go unseen."""
    if isinstance(outcome, Rejected):
        fields: Any = outcome  # built by user code: any type may be in any field
        for name in ("code", "message"):
            value = getattr(fields, name)
            if not isinstance(value, str):
                return f"expected a string as Rejected.{name}, got {_kind(value)}"
        return None
    if not isinstance(outcome, Committed):
        return f"expected Committed or Rejected, got {_kind(outcome)}"
    found = _json_problem(outcome.receipt, "the receipt", objects_only=True)
    if found is not None:
        return found
    events: Any = outcome.events
    if not isinstance(events, (tuple, list)):
        return f"expected the events to be a tuple of JSON objects, got {_kind(events)}"
    for index, event in enumerate(events):
        found = _json_problem(event, f"event {index}", objects_only=True)
        if found is not None:
            return found
    return None


_SCALARS = (str, int, float, bool, type(None))


def _kind(value: object) -> str:
    """A short description of ``value`` for an error message: its type and a short repr."""
    try:
        shown = repr(value)
    except ControlFlow:
        raise
    except BaseException:  # a user's object: its repr may raise too
        shown = "?"
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{type(value).__name__} {shown}"


def _json_problem(value: object, where: str, *, objects_only: bool = False) -> str | None:
    """Why ``value`` is not plain JSON (an object, with ``objects_only``), or None."""
    try:
        return _walk(value, where, objects_only)
    except RecursionError:
        return f"expected {where} to be JSON, got one that nests too deeply or contains itself"


def _walk(value: object, where: str, objects_only: bool) -> str | None:
    if objects_only and not isinstance(value, Mapping):
        return f"expected {where} to be a JSON object (a dict), got {_kind(value)}"
    if isinstance(value, _SCALARS):
        if isinstance(value, float) and not math.isfinite(value):
            return f"expected {where} to be JSON, got the number {value!r}"
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"expected the keys of {where} to be strings, got {_kind(key)}"
            found = _walk(item, f"{where}[{key!r}]", False)
            if found is not None:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _walk(item, f"{where}[{index}]", False)
            if found is not None:
                return found
        return None
    return f"expected {where} to be JSON, got {_kind(value)}"
