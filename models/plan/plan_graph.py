"""The plan graph: which calls must run before which, and which may run together.

Nodes are call ids (the first call with each id; later calls reusing an id are reported by
validation and left out). Every edge points from an earlier-listed call to a later-listed
one: txcheck reads the listed order as the order the model intends, and a plan is valid only
when that order already satisfies every dependency. So the execution order is the listed
order, and the graph's job is to say what may overlap. Edges come from:

- ``resource``: calls on one resource (the value of the tool's ``resource`` argument, per
  argument name) in list order. Writes are serialised; a read follows the last earlier write
  and precedes the next write, so reads between two writes may run together.
- ``workflow``: consecutive calls of one workflow on one resource, when the listed order
  agrees with the workflow's step order.
- ``depends_on``: ``a`` in a call's ``depends_on`` gives ``a -> call``.

One pair of calls gets one edge, labelled by the first of ``depends_on``, ``workflow``,
``resource`` that gives it.

Violations (level ``plan``):

- ``dependency_too_early`` on a call listed before a call that its workflow runs first on
  the same resource (charge before reserve on one order); on a call whose ``depends_on``
  names a call listed after it (or names no call of the plan).
- ``cycle`` once per cycle of ``depends_on`` edges (a call depending on itself included);
  edges inside such a cycle get no ``dependency_too_early`` of their own.
- ``incomplete_workflow`` when a write call of a workflow tool is on a resource where no
  workflow containing that tool has all its steps; reported once per resource and workflow
  (the one with fewest missing steps), on the first call concerned. Step order is
  ``dependency_too_early``'s business.

Calls that repeat an earlier call exactly (same tool and normalised arguments, with an
idempotency key) are one operation executed once, so workflow checks look only at the first.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs

from txcheck.models.json_path import describe
from txcheck.models.plan.contract import Contract, Tool, Workflow
from txcheck.models.plan.contract_index import contract_index
from txcheck.models.plan.proposal import Call
from txcheck.models.plan.schema_check import MAX_ARGUMENT_DEPTH
from txcheck.models.plan.verdict import Violation

__all__ = [
    "EdgeKind",
    "PlanGraph",
    "build_plan_graph",
    "normalised",
    "plan_graph_violations",
    "resource_of",
    "show_id",
]

EdgeKind = Literal["depends_on", "workflow", "resource"]
_RANK: dict[str, int] = {"depends_on": 0, "workflow": 1, "resource": 2}
_PLAIN_ID = re.compile(r"[\w.:\-\[\]]{1,80}", re.ASCII)


def normalised(value: Any) -> Hashable:
    """A hashable form of a JSON value that is equal exactly when the values are: numbers
    by value (``1 == 1.0``), booleans apart from numbers, object keys in any order. Values
    nested deeper than ``MAX_ARGUMENT_DEPTH`` get a fresh token equal only to itself."""
    try:
        return _normal(value, MAX_ARGUMENT_DEPTH)
    except _TooDeep:
        return object()


class _TooDeep(Exception):
    pass


def _normal(value: Any, room: int) -> Hashable:
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, float) and value.is_integer():
        return ("n", int(value))
    if isinstance(value, (int, float)):
        return ("n", value)
    if value is None:
        return ("z",)
    if room <= 0:
        raise _TooDeep
    if isinstance(value, Mapping):
        pairs = []
        for k, v in value.items():
            pairs.append((str(k), _normal(v, room - 1)))
        return ("o", frozenset(pairs))
    if isinstance(value, (list, tuple)):
        items = []
        for v in value:
            items.append(_normal(v, room - 1))
        return ("a", tuple(items))
    return ("?", repr(value))


def resource_of(tool: Tool | None, call: Call) -> tuple[str, Hashable] | None:
    """The resource a call acts on: ``(argument name, normalised value)``, or ``None``."""
    if tool is None or tool.resource is None or call.arguments is None:
        return None
    value = call.arguments.get(tool.resource)
    return None if value is None else (tool.resource, normalised(value))


def show_id(call_id: str) -> str:
    """A call id as messages show it: plain when plain, else quoted."""
    if _PLAIN_ID.fullmatch(call_id):
        return call_id
    text = json.dumps(call_id)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _show_resource(tool: Tool, call: Call) -> str:
    assert tool.resource is not None and call.arguments is not None
    value = call.arguments[tool.resource]
    if isinstance(value, str):
        text = json.dumps(value)
        return f"{tool.resource} {text if len(text) <= 60 else text[:57] + '...'}"
    return f"{tool.resource} {describe(value)}"


@attrs.frozen(kw_only=True)
class PlanGraph:
    """The graph of a plan's calls, the order and parallel groups it implies, and the
    ``plan``-level violations found while building it (each with its call's list position)."""

    order: tuple[str, ...]
    parallel_groups: tuple[tuple[str, ...], ...]
    edges: tuple[tuple[str, str, EdgeKind], ...]
    violations: tuple[tuple[int, Violation], ...]

    @property
    def graph(self) -> Any:
        """The plan as a ``networkx.DiGraph`` of call ids with edge attribute ``kind``
        (built on demand: validation itself needs no graph library for it)."""
        import networkx as nx  # noqa: PLC0415

        graph = nx.DiGraph()
        graph.add_nodes_from(self.order)
        graph.add_edges_from((a, b, {"kind": kind}) for a, b, kind in self.edges)
        return graph

    def summary(self) -> dict[str, Any]:
        """JSON-ready: ``{"order", "parallel_groups", "edges"}``, all in list order."""
        return {
            "order": list(self.order),
            "parallel_groups": [list(g) for g in self.parallel_groups],
            "edges": [[a, b, kind] for a, b, kind in self.edges],
        }


@attrs.define
class _Builder:
    contract: Contract
    calls: list[Call]  # unique ids, list order
    position: dict[str, int]  # call id -> position in the plan as listed
    kinds: dict[tuple[str, str], EdgeKind] = attrs.field(factory=dict)
    found: list[tuple[int, Violation]] = attrs.field(factory=list)

    def add(self, a: Call, b: Call, kind: EdgeKind) -> None:
        if self.position[a.id] >= self.position[b.id]:
            return  # only forward edges: the graph stays acyclic by construction
        old = self.kinds.get((a.id, b.id))
        if old is None or _RANK[kind] < _RANK[old]:
            self.kinds[(a.id, b.id)] = kind

    def report(self, code: str, call: Call, message: str) -> None:
        violation = Violation(code=code, level="plan", call=call.id, message=message)
        self.found.append((self.position[call.id], violation))

    def tool(self, call: Call) -> Tool | None:
        return self.contract.tool(call.name)


def build_plan_graph(contract: Contract, calls: Sequence[Call]) -> PlanGraph:
    """Build the graph of ``calls`` (a plan's calls, in list order) under ``contract``."""
    builder, resources = _checked(contract, calls)
    _resource_edges(builder, resources)
    unique, position = builder.calls, builder.position

    # Every edge points forward in the list, so the list order is the topological order that
    # breaks ties by list position (what nx.lexicographical_topological_sort would give), and
    # one pass in that order gives each call its generation (the longest path reaching it),
    # which is what nx.topological_generations would group by.
    order = tuple(c.id for c in unique)
    groups = _generations(order, builder.kinds)
    edges = tuple(
        (a, b, kind)
        for (a, b), kind in sorted(
            builder.kinds.items(), key=lambda e: (position[e[0][0]], position[e[0][1]])
        )
    )
    return PlanGraph(
        order=order,
        parallel_groups=groups,
        edges=edges,
        violations=tuple(sorted(builder.found, key=lambda f: f[0])),
    )


def plan_graph_violations(
    contract: Contract, calls: Sequence[Call], *, in_order: bool = False
) -> tuple[tuple[int, Violation], ...]:
    """``build_plan_graph(contract, calls).violations``, without the edges, order and groups
    that only the graph itself needs. ``in_order`` says the caller knows no call has
    ``depends_on`` and every resource's workflow calls are in step order
    (``txcheck.models.plan.plan_quick``), so that only completeness can report."""
    builder, _ = _checked(contract, calls, in_order=in_order)
    return tuple(sorted(builder.found, key=lambda f: f[0]))


def _checked(
    contract: Contract, calls: Sequence[Call], *, in_order: bool = False
) -> tuple[_Builder, dict[str, tuple[str, Hashable] | None]]:
    """A builder over the calls with unique ids, after every pass that reports violations
    (``resource`` edges, which report none, are left to ``build_plan_graph``; with
    ``in_order``, the workflow and dependency passes would report none either)."""
    unique: list[Call] = []
    position: dict[str, int] = {}
    for index, call in enumerate(calls):
        if call.id not in position:
            position[call.id] = index
            unique.append(call)
    builder = _Builder(contract=contract, calls=unique, position=position)
    resources = {c.id: resource_of(builder.tool(c), c) for c in unique}
    if not in_order:
        _workflow_edges(builder, resources)
        _dependency_edges(builder, resources)
    _completeness(builder, resources)
    return builder, resources


def _generations(
    order: Sequence[str], kinds: Mapping[tuple[str, str], EdgeKind]
) -> tuple[tuple[str, ...], ...]:
    """The parallel groups: calls by generation, each group in list order."""
    before: dict[str, list[str]] = {}
    for a, b in kinds:
        before.setdefault(b, []).append(a)
    level: dict[str, int] = {}
    groups: list[list[str]] = []
    for node in order:
        depth = max((level[a] + 1 for a in before.get(node, ())), default=0)
        level[node] = depth
        if depth == len(groups):
            groups.append([])
        groups[depth].append(node)
    return tuple(tuple(g) for g in groups)


def _by_resource(
    calls: Iterable[Call], resources: Mapping[str, tuple[str, Hashable] | None]
) -> dict[tuple[str, Hashable], list[Call]]:
    groups: dict[tuple[str, Hashable], list[Call]] = {}
    for call in calls:
        resource = resources[call.id]
        if resource is not None:
            groups.setdefault(resource, []).append(call)
    return groups


def _resource_edges(b: _Builder, resources: Mapping[str, tuple[str, Hashable] | None]) -> None:
    for members in _by_resource(b.calls, resources).values():
        last_write: Call | None = None
        reads: list[Call] = []
        for call in members:
            tool = b.tool(call)
            assert tool is not None  # only known tools have a resource
            if last_write is not None:
                b.add(last_write, call, "resource")
            if tool.has_side_effect:
                for read in reads:
                    b.add(read, call, "resource")
                last_write, reads = call, []
            else:
                reads.append(call)


def _workflow_members(
    b: _Builder, workflow: Workflow, resources: Mapping[str, tuple[str, Hashable] | None]
) -> dict[tuple[str, Hashable], list[Call]]:
    """Calls of ``workflow``'s tools per resource, exact repeats of a keyed call dropped."""
    # Whole arguments are normalised only when a tool and key value repeat (rare, costly).
    firsts: dict[tuple[str, Hashable], Call] = {}
    intents: dict[tuple[str, Hashable], set[Hashable]] = {}
    kept: list[Call] = []
    for call in b.calls:
        tool = b.tool(call)
        if tool is None or call.name not in workflow.steps or resources[call.id] is None:
            continue
        arguments = call.arguments or {}
        key = arguments.get(tool.idempotency_key) if tool.idempotency_key else None
        if key is not None:
            slot = (call.name, normalised(key))
            first = firsts.setdefault(slot, call)
            if first is not call:
                if slot not in intents:
                    intents[slot] = {normalised(first.arguments)}
                intent = normalised(arguments)
                if intent in intents[slot]:
                    continue
                intents[slot].add(intent)
        kept.append(call)
    return _by_resource(kept, resources)


def _workflow_edges(b: _Builder, resources: Mapping[str, tuple[str, Hashable] | None]) -> None:
    steps = contract_index(b.contract).steps  # per workflow: tool name -> first step
    for workflow, step in zip(b.contract.workflows, steps, strict=True):
        for members in _workflow_members(b, workflow, resources).values():
            for x, y in itertools.pairwise(members):
                if step[x.name] <= step[y.name]:
                    b.add(x, y, "workflow")
            # A call listed before one of a lower step is too early; name the lowest such.
            later: Call | None = None
            for x in reversed(members):
                if later is not None and step[later.name] < step[x.name]:
                    tool = b.tool(x)
                    assert tool is not None
                    b.report(
                        "dependency_too_early",
                        x,
                        f"{x.name} ({show_id(x.id)}) is listed before {later.name} "
                        f"({show_id(later.id)}) on {_show_resource(tool, x)}, but the "
                        f"'{workflow.name}' workflow runs {later.name} first",
                    )
                if later is None or step[x.name] <= step[later.name]:
                    later = x


def _dependency_edges(b: _Builder, resources: Mapping[str, tuple[str, Hashable] | None]) -> None:
    if not any(c.depends_on for c in b.calls):
        return  # no depends_on: no dependency edge, no cycle, nothing for networkx to check
    import networkx as nx  # noqa: PLC0415  (only plans that declare dependencies need it)

    by_id = {c.id: c for c in b.calls}
    deps = nx.DiGraph()
    for call in b.calls:
        for name in dict.fromkeys(call.depends_on):
            if name in by_id:
                deps.add_edge(name, call.id)
            else:
                b.report(
                    "dependency_too_early",
                    call,
                    f"{show_id(call.id)} depends on {show_id(name)}, which is not a call of "
                    "this plan, so it can never have run first",
                )
    in_cycle: dict[str, int] = {}
    components = [c for c in nx.strongly_connected_components(deps) if _cyclic(deps, c)]
    for number, component in enumerate(components):
        first = min(component, key=b.position.__getitem__)
        cycle = nx.find_cycle(deps.subgraph(component), source=first)
        path = " -> ".join(show_id(edge[0]) for edge in cycle)
        b.report(
            "cycle",
            by_id[first],
            f"depends_on forms a cycle: {path} -> {show_id(cycle[-1][1])} (each runs after the "
            "one before it, so none can start)",
        )
        in_cycle.update(dict.fromkeys(component, number))
    for call in b.calls:
        for name in dict.fromkeys(call.depends_on):
            if name not in by_id:
                continue
            if call.id in in_cycle and in_cycle.get(name) == in_cycle[call.id]:
                continue
            before = by_id[name]
            if b.position[before.id] > b.position[call.id]:
                clash = _workflow_clash(b, call, before, resources)
                b.report(
                    "dependency_too_early",
                    call,
                    f"{show_id(call.id)} ({show_id(call.name)}) depends on {show_id(name)} "
                    f"({show_id(before.name)}), which is listed after it; list each call after the "
                    f"calls it depends on{clash}",
                )
            else:
                b.add(before, call, "depends_on")


def _cyclic(graph: Any, component: set[str]) -> bool:
    if len(component) > 1:
        return True
    (node,) = component
    return bool(graph.has_edge(node, node))


def _workflow_clash(
    b: _Builder, call: Call, before: Call, resources: Mapping[str, tuple[str, Hashable] | None]
) -> str:
    """``; the 'w' workflow runs X first`` when ``call`` must in fact precede ``before``."""
    if resources[call.id] is None or resources[call.id] != resources[before.id]:
        return ""
    for workflow in b.contract.workflows:
        steps = workflow.steps
        if (
            call.name in steps
            and before.name in steps
            and steps.index(call.name) < steps.index(before.name)
        ):
            return f"; and the '{workflow.name}' workflow runs {call.name} first"
    return ""


def _completeness(b: _Builder, resources: Mapping[str, tuple[str, Hashable] | None]) -> None:
    workflows_of = contract_index(b.contract).workflows
    for members in _by_resource(b.calls, resources).values():
        present = {c.name for c in members}
        reported: set[str] = set()
        # The workflow a call is judged by depends only on its candidate workflows (and
        # the names present), so it is worked out once per set of candidates (one tuple
        # object per set in the index: keyed by identity, without hashing workflows).
        judged: dict[int, Workflow | None] = {}
        for call in members:
            tool = b.tool(call)
            assert tool is not None
            if not tool.has_side_effect:
                continue
            candidates = workflows_of.get(call.name, ())
            if not candidates:
                continue
            if id(candidates) not in judged:
                judged[id(candidates)] = _incomplete(candidates, present)
            best = judged[id(candidates)]
            if best is None or best.name in reported:
                continue
            reported.add(best.name)
            missing = [s for s in best.steps if s not in present]
            has = [s for s in best.steps if s in present]
            b.report(
                "incomplete_workflow",
                call,
                f"the '{best.name}' workflow on {_show_resource(tool, call)} is missing "
                f"{', '.join(missing)} (the plan has {', '.join(has)}); a plan that starts a "
                "workflow must contain all of its steps",
            )


def _incomplete(candidates: tuple[Workflow, ...], present: set[str]) -> Workflow | None:
    """``None`` when one of ``candidates`` has all its steps ``present``, else the one
    missing the fewest (the first of those)."""
    if any(all(s in present for s in w.steps) for w in candidates):
        return None
    return min(candidates, key=lambda w: sum(s not in present for s in w.steps))
