"""The plan graph's violations, without building the graph when there are none to find.

``build_plan_graph`` reports three kinds of ``plan`` violations: ``dependency_too_early``
and ``cycle`` (from ``depends_on`` and from workflow order) and ``incomplete_workflow``.
Most plans have none, and callers that need only the violations (the scorer) need no
edges, groups or order. ``graph_violations`` first makes one linear pass that can prove
there is nothing to report:

- no call declares ``depends_on`` (so no dependency edge, no cycle);
- on every resource, the calls of each workflow's tools are listed in non-decreasing step
  order (so none is listed too early; ``build_plan_graph`` looks at a subsequence of
  these calls, which then is in order too);
- on every resource, each write call of a workflow tool has all the steps of one of its
  workflows present (the completeness rule, computed exactly as ``build_plan_graph`` does).

When the pass proves nothing, the graph is built and its violations returned, so the
answer is always ``build_plan_graph(contract, calls).violations``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from txcheck.models.contract import Contract
from txcheck.models.contract_index import ContractIndex, contract_index
from txcheck.models.plan_graph import build_plan_graph, normalised
from txcheck.models.proposal import Call
from txcheck.models.verdict import Violation

__all__ = ["graph_is_clean", "graph_violations"]


def graph_violations(
    contract: Contract, calls: Sequence[Call]
) -> tuple[tuple[int, Violation], ...]:
    """``build_plan_graph(contract, calls).violations``: each violation with its call's
    position, in position order."""
    if graph_is_clean(contract, calls):
        return ()
    return build_plan_graph(contract, calls).violations


def graph_is_clean(contract: Contract, calls: Sequence[Call]) -> bool:
    """True when one linear pass shows the plan graph of ``calls`` has no violation;
    ``False`` means only "not shown"."""
    return _nothing_to_report(contract_index(contract), calls)


def _nothing_to_report(index: ContractIndex, calls: Sequence[Call]) -> bool:
    """True when the plan graph of ``calls`` certainly has no violation."""
    seen: set[str] = set()
    groups: dict[tuple[str, Hashable], list[str]] = {}
    for call in calls:
        if call.depends_on:
            return False
        if call.id in seen:
            continue  # a later call reusing an id is left out of the graph
        seen.add(call.id)
        argument = index.resource.get(call.name)
        if argument is None or call.arguments is None:
            continue
        value = call.arguments.get(argument)
        if value is None:
            continue
        # Strings stand for themselves; other values by their normalised form (a tuple,
        # never equal to a string), so calls group exactly as by ``normalised`` alone.
        resource = (argument, value if type(value) is str else normalised(value))
        groups.setdefault(resource, []).append(call.name)
    for names in groups.values():
        if not _in_step_order(index, names) or not _complete(index, names):
            return False
    return True


def _in_step_order(index: ContractIndex, names: list[str]) -> bool:
    for steps in index.steps:
        last = -1
        for name in names:
            step = steps.get(name)
            if step is None:
                continue
            if step < last:
                return False
            last = step
    return True


def _complete(index: ContractIndex, names: list[str]) -> bool:
    present = set(names)
    for name in present:
        if name not in index.side_effect:
            continue
        candidates = index.workflows.get(name, ())
        if candidates and not any(all(s in present for s in w.steps) for w in candidates):
            return False
    return True
