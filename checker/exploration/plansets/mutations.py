"""Near-valid plans: a valid plan with exactly one mutation.

Each mutation is what a model gets slightly wrong: a dropped workflow step, two steps
swapped, an argument of the wrong type, a side effect without its idempotency key, two
calls sharing one key, a tool outside the workflow, a side effect duplicated under a new
key. One mutation keeps the plan valid on purpose: the identical call repeated under the
same key, which must execute once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from txcheck.exploration.plansets.plan_space import Draft, DraftCall, Order, PlanSpace

__all__ = ["MUTATIONS", "mutate"]

MUTATIONS: tuple[str, ...] = (
    "drop_step",
    "swap_steps",
    "wrong_type",
    "missing_key",
    "shared_key",
    "foreign_tool",
    "duplicate_new_key",
    "repeat_same_key",
)


def _keyed(space: PlanSpace, draft: Draft) -> list[int]:
    """Positions of side-effecting calls that carry a pure idempotency key."""
    found = []
    for index, call in enumerate(draft.calls):
        tool = space.contract.tool(call.tool)
        if tool is None or not tool.has_side_effect or not tool.idempotency_key:
            continue
        required = tool.parameters.get("required", ())
        if tool.idempotency_key in call.arguments and tool.idempotency_key not in required:
            found.append(index)
    return found


def _key_name(space: PlanSpace, call: DraftCall) -> str:
    tool = space.contract.tool(call.tool)
    assert tool is not None and tool.idempotency_key is not None
    return tool.idempotency_key


def _with(draft: Draft, calls: list[DraftCall]) -> Draft:
    return Draft(calls=tuple(calls), orders=draft.orders, flows=draft.flows)


def _drop_step(draw: st.DrawFn, space: PlanSpace, draft: Draft) -> Draft:
    steps = [i for i, c in enumerate(draft.calls) if c.flow is not None]
    calls = list(draft.calls)
    del calls[space.pick(draw, steps)]
    return _with(draft, calls)


def _swap_steps(draw: st.DrawFn, space: PlanSpace, draft: Draft) -> Draft:
    pairs = []
    for flow in range(len(draft.flows)):
        positions = [i for i, c in enumerate(draft.calls) if c.flow == flow]
        pairs += [
            (a, b)
            for a, b in itertools.pairwise(positions)
            if draft.calls[a].tool != draft.calls[b].tool
        ]
    a, b = space.pick(draw, pairs)
    calls = list(draft.calls)
    calls[a], calls[b] = calls[b], calls[a]
    return _with(draft, calls)


def _wrong(value: Any) -> Any:
    """A value of another JSON type than ``value``."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return 7
    if isinstance(value, list):
        return {"items": value}
    if isinstance(value, dict):
        return [value]
    return 0


def _wrong_type(draw: st.DrawFn, space: PlanSpace, draft: Draft) -> Draft:
    index = space.pick(draw, [i for i, c in enumerate(draft.calls) if c.arguments])
    call = draft.calls[index]
    name = space.pick(draw, sorted(call.arguments))
    calls = list(draft.calls)
    arguments = {**call.arguments, name: _wrong(call.arguments[name])}
    calls[index] = DraftCall(tool=call.tool, arguments=arguments, flow=call.flow)
    return _with(draft, calls)


def _missing_key(draw: st.DrawFn, space: PlanSpace, draft: Draft) -> Draft:
    index = space.pick(draw, _keyed(space, draft))
    call = draft.calls[index]
    key = _key_name(space, call)
    calls = list(draft.calls)
    arguments = {k: v for k, v in call.arguments.items() if k != key}
    calls[index] = DraftCall(tool=call.tool, arguments=arguments, flow=call.flow)
    return _with(draft, calls)


def _shared_key(draw: st.DrawFn, space: PlanSpace, draft: Draft) -> Draft:
    keyed = _keyed(space, draft)
    first = space.pick(draw, keyed[:-1])
    second = space.pick(draw, [i for i in keyed if i > first])
    source, target = draft.calls[first], draft.calls[second]
    key = _key_name(space, target)
    calls = list(draft.calls)
    calls[second] = DraftCall(
        tool=target.tool,
        arguments={**target.arguments, key: source.arguments[_key_name(space, source)]},
        flow=target.flow,
    )
    return _with(draft, calls)


def _foreign_tool(draw: st.DrawFn, space: PlanSpace, draft: Draft) -> Draft:
    """A tool no workflow of the plan has: one from the contract on an existing resource
    (where the business rules can accept it), or one the contract does not know."""
    options = [t.name for t in space.outside] if space.existing else []
    name = space.pick(draw, [*options, "<unknown>"])
    if name == "<unknown>":
        template = space.pick(draw, draft.calls)
        extra = DraftCall(tool=f"{template.tool}_v2", arguments=dict(template.arguments))
    else:
        tool = space.contract.tool(name)
        assert tool is not None
        order = Order(id=space.pick(draw, space.existing))
        fixed = space.fixed_arguments(tool, order, "key-extra-1")
        free = draw(space.free_arguments(tool, tuple(fixed)))
        extra = DraftCall(tool=name, arguments={**free, **fixed})
    calls = list(draft.calls)
    calls.insert(space.number(draw, 0, len(calls)), extra)
    return _with(draft, calls)


def _duplicate(draw: st.DrawFn, space: PlanSpace, draft: Draft, *, new_key: bool) -> Draft:
    index = space.pick(draw, _keyed(space, draft))
    call = draft.calls[index]
    arguments = dict(call.arguments)
    if new_key:
        key = _key_name(space, call)
        arguments[key] = f"{arguments[key]}-again"
    calls = list(draft.calls)
    calls.insert(index + 1, DraftCall(tool=call.tool, arguments=arguments, flow=call.flow))
    return _with(draft, calls)


def _applicable(name: str, space: PlanSpace, draft: Draft) -> bool:
    steps = [c for c in draft.calls if c.flow is not None]
    keyed = _keyed(space, draft)
    if name == "drop_step":
        return len(steps) >= 2
    if name == "swap_steps":
        return any(
            a.tool != b.tool
            for f in range(len(draft.flows))
            for a, b in zip(
                [c for c in draft.calls if c.flow == f],
                [c for c in draft.calls if c.flow == f][1:],
                strict=False,
            )
        )
    if name == "wrong_type":
        return any(c.arguments for c in draft.calls)
    if name == "shared_key":
        return len(keyed) >= 2
    if name == "foreign_tool":
        return bool(draft.calls)
    return bool(keyed)


_APPLY: dict[str, Callable[[st.DrawFn, PlanSpace, Draft], Draft]] = {
    "drop_step": _drop_step,
    "swap_steps": _swap_steps,
    "wrong_type": _wrong_type,
    "missing_key": _missing_key,
    "shared_key": _shared_key,
    "foreign_tool": _foreign_tool,
    "duplicate_new_key": lambda draw, space, draft: _duplicate(draw, space, draft, new_key=True),
    "repeat_same_key": lambda draw, space, draft: _duplicate(draw, space, draft, new_key=False),
}


def mutate(draw: st.DrawFn, space: PlanSpace, draft: Draft) -> tuple[str, Draft]:
    """One applicable mutation of ``draft`` and its name ("none" when none applies)."""
    names = [m for m in MUTATIONS if _applicable(m, space, draft)]
    if not names:
        return ("none", draft)
    name = space.pick(draw, names)
    return (name, _APPLY[name](draw, space, draft))
