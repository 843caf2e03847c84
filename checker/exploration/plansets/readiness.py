"""Before any run: can the plans be exercised at all?

A search over tools nothing models would execute nothing and pass: every call rejected as
an unknown tool. So a run refuses to start (``InputError``, exit 2) when a tool it could
call has no behaviour (no registered service, no annotation saying what it does), when a
compensation it could need cannot be built (a required argument nothing fills, a receipt
field generic behaviour cannot make to fit the undo's schema), or, when
plans are to be generated, when the contract has nothing to make a plan from (no workflow,
no tool that writes) or a tool's schema admits no argument values txcheck can generate
(``check_generatable``: a contradiction, a ``$ref`` to nothing, a size past the generation
limit). Given plans are checked call by call; without plans, every tool and
workflow of the contract is (plan generation may use any of them).
"""

from __future__ import annotations

from collections.abc import Sequence

from txcheck.exploration.kernel.target import Target
from txcheck.models.errors import InputError
from txcheck.models.json_path import format_path
from txcheck.models.plan.contract import Contract, Tool
from txcheck.models.plan.contract_checks import CONTRACT_DOC
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.schema_limits import generation_problem
from txcheck.models.sim import behaviour
from txcheck.models.sim.generic import receipt_problem

__all__ = [
    "behaviour_problem",
    "check_generatable",
    "check_plannable",
    "check_ready",
    "readiness_problem",
    "served_tools",
    "tools_without_behaviour",
]


def served_tools(target: Target) -> frozenset[str]:
    """The contract's tools a registered service serves."""
    return behaviour.served_tools(target.contract, target.services)


def tools_without_behaviour(target: Target, names: Sequence[str]) -> list[str]:
    """Those of ``names`` no service serves and no annotation describes (sorted)."""
    return behaviour.tools_without_behaviour(target.contract, target.services, names)


def check_ready(target: Target, plan_sets: Sequence[Sequence[Plan]] | None = None) -> None:
    """Raise ``InputError`` when a run of ``plan_sets`` (default: the target's plans, or
    anything the contract allows when it has none) could call a tool without behaviour or
    need a compensation that cannot be built, or (generated plans) when a tool's schema
    admits no value txcheck can generate."""
    sets = target.plans if plan_sets is None else tuple(tuple(p) for p in plan_sets)
    problem = readiness_problem(target, sets)
    if problem is not None:
        raise InputError(problem, source=target.contract.source)
    if not sets:
        check_plannable(target.contract)
        check_generatable(target)


def check_plannable(contract: Contract) -> None:
    """Raise ``InputError`` at ``$.tools`` when the contract gives nothing to generate a plan
    from: no workflow, and no tool that writes (every engine would run nothing)."""
    if contract.workflows or any(t.has_side_effect for t in contract.tools.values()):
        return
    raise InputError(
        "the contract has no workflow and every tool only reads, so there is no plan to "
        f"explore; describe the tools that write ({CONTRACT_DOC}) or give a plan with --plan",
        source=contract.source,
        line=contract.line("$.tools"),
        path="$.tools",
    )


def readiness_problem(target: Target, plan_sets: Sequence[Sequence[Plan]]) -> str | None:
    """Why runs of ``plan_sets`` (none: any plan of the contract) cannot be exercised, or
    None: a tool without behaviour, or a compensation a run may need that cannot be built."""
    contract = target.contract
    if plan_sets:
        names = [c.name for plans in plan_sets for plan in plans for c in plan.calls]
    else:
        names = list(contract.tools)
    problem = behaviour_problem(target, names)
    if problem is not None:
        return problem
    problem = receipt_problem(contract, served_tools(target))
    if problem is not None:
        return problem
    for tool, reason in _unbuildable_compensations(contract, plan_sets):
        assert tool.compensated_by is not None
        return (
            f"tool {tool.name!r}: {reason} may need its compensation "
            f"{tool.compensated_by.tool!r}, which requires "
            f"{', '.join(map(repr, tool.compensated_by.unmapped))} that nothing fills; map "
            f'it in \'compensated_by\': {{"tool": ..., "arguments": {{...}}}} ({CONTRACT_DOC})'
        )
    return None


def behaviour_problem(target: Target, names: Sequence[str]) -> str | None:
    """What is wrong when some of the tools ``names`` has no behaviour, or None."""
    return behaviour.behaviour_problem(target.contract, target.services, names)


def _unbuildable_compensations(
    contract: Contract, sets: Sequence[Sequence[Plan]]
) -> list[tuple[Tool, str]]:
    """Tools whose compensation cannot be built, where a later write could fail and need
    it: in a given plan, or (without plans) in a workflow."""
    found: list[tuple[Tool, str]] = []
    if sets:
        for plans in sets:
            for plan in plans:
                calls = plan.calls
                for index, call in enumerate(calls):
                    tool = contract.tool(call.name)
                    if _unbuildable(tool) and _write_after(
                        contract, [c.name for c in calls[index + 1 :]]
                    ):
                        assert tool is not None
                        found.append(
                            (tool, f"the plan calls it ({call.id}) before another write, so a run")
                        )
        return found[:1]
    for workflow in contract.workflows:
        for index, name in enumerate(workflow.steps):
            tool = contract.tool(name)
            if _unbuildable(tool) and _write_after(contract, list(workflow.steps[index + 1 :])):
                assert tool is not None
                found.append(
                    (tool, f"workflow {workflow.name!r} runs later writes after it, so a run")
                )
    return found[:1]


def _unbuildable(tool: Tool | None) -> bool:
    return (
        tool is not None and tool.compensated_by is not None and bool(tool.compensated_by.unmapped)
    )


def _write_after(contract: Contract, names: Sequence[str]) -> bool:
    return any((t := contract.tool(n)) is not None and t.has_side_effect for n in names)


def check_generatable(target: Target) -> None:
    """Raise ``InputError`` (file, line, JSON path) when a tool's schema admits no
    argument values txcheck can generate: first the static checks of
    ``txcheck.models.plan.schema_limits``, then one real draw per tool (only generated plans
    need it: Hypothesis is imported here, not for a search of given plans)."""
    from txcheck.exploration.plansets.plan_space import PlanSpace  # noqa: PLC0415 (Hypothesis)
    from txcheck.exploration.plansets.schema_draw import first_draw_problem  # noqa: PLC0415

    contract = target.contract
    for name, tool in sorted(contract.tools.items()):
        problem = generation_problem(tool.parameters)
        if problem is not None:
            where, text = problem
            path = tool.schema_path + format_path(where)[1:] if tool.schema_path else None
            raise InputError(
                f"tool {name!r}: {text}; txcheck cannot generate its arguments",
                source=contract.source,
                line=contract.line(path),
                path=path,
            )
    space = PlanSpace(contract, target.fixture)
    for name, tool in sorted(contract.tools.items()):
        failure = first_draw_problem(space.free_arguments(tool, ()))
        if failure is not None:
            path = tool.schema_path or None
            raise InputError(
                f"tool {name!r}: txcheck cannot generate arguments its schema accepts ({failure})",
                source=contract.source,
                line=contract.line(path),
                path=path,
            )
