"""Services: what a tool does to durable state, registered per tool.

A handler is a plain function ``(state, arguments) -> Committed | Rejected``. It must either
commit (mutate ``state`` and return the receipt and the events of that change) or reject
without touching ``state``: that is the local transaction the world relies on. Users model
their own tools by registering a ``ServiceSet`` next to the checkout one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from txcheck.models.errors import ServiceError

__all__ = ["Committed", "Handler", "Rejected", "ServiceSet", "merge_service_sets"]


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
