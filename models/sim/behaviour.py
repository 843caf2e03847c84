"""Which tools have behaviour: a registered service serves them, or the contract says what
they do (``x-txcheck`` or MCP annotations, run on generic services).

A run of a tool with neither would be refused as an unknown tool on every attempt, and a
check built on running it (exploration, evaluation, ``validate --world``) would pass
without having judged anything. So those commands refuse such a tool first, with
``behaviour_problem``'s message.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_checks import CONTRACT_DOC
from txcheck.models.sim.services import ServiceSet

__all__ = ["behaviour_problem", "served_tools", "tools_without_behaviour"]


def served_tools(contract: Contract, services: Iterable[ServiceSet]) -> frozenset[str]:
    """The contract's tools a registered service serves."""
    return frozenset(
        name for service in services for name in service.handlers if contract.tool(name)
    )


def tools_without_behaviour(
    contract: Contract, services: Iterable[ServiceSet], names: Iterable[str]
) -> list[str]:
    """Those of ``names`` (tools of ``contract``) no service serves and no annotation
    describes, sorted."""
    served = served_tools(contract, services)
    return sorted(
        {
            name
            for name in names
            if (tool := contract.tool(name)) is not None
            and name not in served
            and not tool.annotated
        }
    )


def behaviour_problem(
    contract: Contract, services: Iterable[ServiceSet], names: Iterable[str]
) -> str | None:
    """What is wrong when some of the tools ``names`` has no behaviour, or None."""
    missing = tools_without_behaviour(contract, services, names)
    if not missing:
        return None
    one = len(missing) == 1
    return (
        f"{_listed(missing)} no behaviour: no service serves {'it' if one else 'them'} and "
        f"the contract does not say what {'it does' if one else 'they do'}; describe "
        f"{'it' if one else 'them'} in 'x-txcheck' (an 'effect') or MCP 'annotations', or "
        f"pass --services ({CONTRACT_DOC})"
    )


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(repr(n) for n in names)
    return f"tool {shown} has" if len(names) == 1 else f"tools {shown} have"
