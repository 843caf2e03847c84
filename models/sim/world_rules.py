"""Business rules from a world fixture: the ``business`` validation level.

The rules are the services' own handlers. Each well-formed call runs, in execution order,
against a private copy of the fixture's world, so a rule sees the state as projected
through the plan's earlier calls ("does the order exist *by then*"). A handler's rejection
becomes a ``business`` violation with the handler's stable code (``order_not_found``,
``amount_mismatch``, ``out_of_stock``, ``not_paid``, ``refund_exceeds_charge``, ...).
Nothing real runs: the copy is thrown away.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from txcheck.models.errors import ControlFlow, UserCodeStuck
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.proposal import Call
from txcheck.models.plan.verdict import Violation
from txcheck.models.sim.behaviour import behaviour_problem, served_tools
from txcheck.models.sim.checkout import CHECKOUT
from txcheck.models.sim.choices import Outcome
from txcheck.models.sim.fixture import WorldFixture, load_world, parse_world
from txcheck.models.sim.requests import Invoke, ResultStatus, ToolResult
from txcheck.models.sim.services import ServiceSet
from txcheck.models.sim.world import World

__all__ = [
    "WorldBusinessCheck",
    "business_check_from_doc",
    "business_check_from_file",
    "unread_sections",
]

_GENERIC_ONLY = (
    "no rule reads the world fixture for these calls: their tools run on generic behaviour, "
    "which has no business rules (give the tools' own services with --services)"
)


@attrs.frozen(kw_only=True)
class WorldBusinessCheck:
    """A ``txcheck.models.plan.business.BusinessCheck`` backed by a world fixture and its
    services."""

    fixture: WorldFixture
    services: tuple[ServiceSet, ...] = (CHECKOUT,)

    def unjudged(self, contract: Contract, calls: Sequence[Call]) -> str | None:
        """Why some of ``calls`` cannot be judged (a tool with no behaviour: no service,
        no annotation), or None; a caller must not report the business level as checked
        then (``validate --world`` exits 2)."""
        return behaviour_problem(contract, self.services, [c.name for c in calls])

    def not_applicable(self, contract: Contract, calls: Sequence[Call]) -> str | None:
        """Why the business level has nothing to judge ``calls`` by, or None: no call is
        served by a registered service (generic behaviour has no business rules, so a
        fixture section only such a service reads would go unread)."""
        served = served_tools(contract, self.services)
        if any(call.name in served for call in calls):
            return None
        return _GENERIC_ONLY

    def check(self, contract: Contract, calls: Sequence[Call]) -> Iterator[Violation]:
        world = World(contract=contract, fixture=self.fixture, services=self.services)
        for call in calls:
            if call.arguments is None or not world.serves(call.name):
                continue
            invoke = Invoke(tool=call.name, arguments=call.arguments, call_id=call.id)
            admitted = world.send("validation", invoke)
            result = (
                admitted
                if isinstance(admitted, ToolResult)
                else world.complete(admitted, Outcome.OK)
            )
            if result.status is not ResultStatus.OK:
                yield Violation(
                    code=result.code or "business_rule",
                    level="business",
                    call=call.id,
                    message=f"{call.name}: {result.message} (in {self.fixture.source}, "
                    "after the plan's earlier calls)",
                )


def business_check_from_doc(
    document: Mapping[str, Any],
    *,
    source: str = "<world>",
    services: tuple[ServiceSet, ...] = (CHECKOUT,),
) -> WorldBusinessCheck:
    """A business check from a fixture document (a scorer case's ``world`` field), run on
    ``services``."""
    return WorldBusinessCheck(fixture=parse_world(document, source=source), services=services)


def business_check_from_file(
    path: str | Path, services: Sequence[ServiceSet] = (CHECKOUT,)
) -> WorldBusinessCheck:
    """A business check from a fixture file (``--world FILE``), run on ``services``."""
    return WorldBusinessCheck(fixture=load_world(path), services=tuple(services))


def unread_sections(fixture: WorldFixture, services: Sequence[ServiceSet]) -> list[str]:
    """The fixture's non-empty sections no service reads when it builds its state
    (``catalog``, ``orders``, ``principals``, each ``services.NAME``): data a user wrote
    for rules that are not there (a ledger's accounts, without the ledger service)."""
    document = fixture.document
    read: set[str] = set()
    for service in services:
        try:
            service.initial_state(_Tracked(document, read, ""))
        except (ControlFlow, UserCodeStuck):
            raise  # a real Ctrl-C; a service stopped by its time limit would only hang again
        except BaseException:  # even SystemExit: reported where its state is built for a run
            continue
    unread = []
    for name, value in document.items():
        if name in ("format", "tenant") or not value:
            continue
        if name == "services" and isinstance(value, Mapping):
            unread += [
                f"services.{k}" for k, v in value.items() if v and f"services.{k}" not in read
            ]
        elif name not in read:
            unread.append(name)
    return sorted(unread)


class _Tracked(dict[str, Any]):
    """A fixture document that notes which sections are read (``services`` one level
    down); iterating over a whole level counts as reading all of it."""

    def __init__(self, data: Mapping[str, Any], read: set[str], prefix: str) -> None:
        super().__init__(data)
        self._read = read
        self._prefix = prefix

    def _seen(self, key: object) -> None:
        self._read.add(f"{self._prefix}{key}")

    def _all(self) -> None:
        for key in dict.keys(self):
            self._seen(key)

    def _wrap(self, key: str, value: Any) -> Any:
        if not self._prefix and key == "services" and isinstance(value, Mapping):
            return _Tracked(value, self._read, "services.")
        return value

    def __getitem__(self, key: str) -> Any:
        self._seen(key)
        return self._wrap(key, dict.__getitem__(self, key))

    def get(self, key: str, default: Any = None) -> Any:
        self._seen(key)
        return self._wrap(key, dict.get(self, key, default)) if key in self else default

    def __contains__(self, key: object) -> bool:
        self._seen(key)
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[str]:
        self._all()
        return dict.__iter__(self)

    def items(self) -> Any:
        self._all()
        return dict.items(self)

    def values(self) -> Any:
        self._all()
        return dict.values(self)

    def keys(self) -> Any:
        self._all()
        return dict.keys(self)

    def copy(self) -> dict[str, Any]:
        self._all()
        return dict(self)
