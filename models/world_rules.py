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

from txcheck.models.behaviour import behaviour_problem
from txcheck.models.checkout import CHECKOUT
from txcheck.models.choices import Outcome
from txcheck.models.contract import Contract
from txcheck.models.fixture import WorldFixture, load_world, parse_world
from txcheck.models.proposal import Call
from txcheck.models.requests import Invoke, ToolResult
from txcheck.models.services import ServiceSet
from txcheck.models.verdict import Violation
from txcheck.models.world import World

__all__ = ["WorldBusinessCheck", "business_check_from_doc", "business_check_from_file"]


@attrs.frozen(kw_only=True)
class WorldBusinessCheck:
    """A ``txcheck.models.business.BusinessCheck`` backed by a world fixture and its services."""

    fixture: WorldFixture
    services: tuple[ServiceSet, ...] = (CHECKOUT,)

    def unjudged(self, contract: Contract, calls: Sequence[Call]) -> str | None:
        """Why some of ``calls`` cannot be judged (a tool with no behaviour: no service,
        no annotation), or None; a caller must not report the business level as checked
        then (``validate --world`` exits 2)."""
        return behaviour_problem(contract, self.services, [c.name for c in calls])

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
            if result.status != "ok":
                yield Violation(
                    code=result.code or "business_rule",
                    level="business",
                    call=call.id,
                    message=f"{call.name}: {result.message} (in {self.fixture.source}, "
                    "after the plan's earlier calls)",
                )


def business_check_from_doc(
    document: Mapping[str, Any], *, source: str = "<world>"
) -> WorldBusinessCheck:
    """A business check from a fixture document (a scorer case's ``world`` field)."""
    return WorldBusinessCheck(fixture=parse_world(document, source=source))


def business_check_from_file(
    path: str | Path, services: Sequence[ServiceSet] = (CHECKOUT,)
) -> WorldBusinessCheck:
    """A business check from a fixture file (``--world FILE``), run on ``services``."""
    return WorldBusinessCheck(fixture=load_world(path), services=tuple(services))
