"""One linear pass that proves a plan has no key problem and nothing for its graph to report.

Validation's key rules (``missing_idempotency_key``, ``duplicate_side_effect``,
``duplicate_key_different_intent``) and the plan graph's violations (``dependency_too_early``,
``cycle``, ``incomplete_workflow``) need normalised intents and a graph; most plans break
none of them, which one pass over the calls can show:

- keys: every write call with an idempotency key argument has it, no key value is used
  twice, and no such tool is called twice (an intent starts with the tool's name, so no
  intent repeats); no keyless write tool (not idempotent, not repeatable) is called twice
  (so no identical keyless write repeats);
- graph: no call declares ``depends_on`` (no dependency edge, no cycle); on every resource
  the calls of each workflow's tools are listed in non-decreasing step order (the graph
  looks at a subsequence of them, in order too); and each write call of a workflow tool
  has all the steps of one of its workflows present on its resource (the completeness
  rule, as ``build_plan_graph`` computes it).

``quick_checks`` says which of the two it proved, and whether only completeness is in
doubt; what it cannot prove, validation computes in full, so the violations are always
the same. The step-order and completeness
answer for one sequence of tool names is remembered per contract (``ContractIndex``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from txcheck.models.plan.contract_index import ContractIndex
from txcheck.models.plan.plan_graph import normalised

__all__ = ["CallLike", "QuickChecks", "quick_checks"]


class CallLike(Protocol):
    """What the quick checks read of a call: a ``Call``, or a lighter stand-in for one
    (the scorer checks expected calls this way before it builds any ``Call``)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> Mapping[str, Any] | None: ...
    @property
    def depends_on(self) -> tuple[str, ...]: ...


_GROUPS_LIMIT = 4096


class QuickChecks(NamedTuple):
    """What one pass showed: ``keys_clean``, the key rules find nothing; ``graph_clean``,
    the plan graph reports nothing; ``in_order``, the graph can report only
    ``incomplete_workflow`` (no ``depends_on``, workflow steps in order). ``False`` means
    only "not shown"."""

    keys_clean: bool
    graph_clean: bool
    in_order: bool


def quick_checks(index: ContractIndex, calls: Sequence[CallLike]) -> QuickChecks:
    """What one pass over ``calls`` shows under the contract of ``index``."""
    if len(calls) == 1:
        return _one(index, calls[0])
    roles = index.roles
    keys_clean = graph_clean = True
    keys: set[Hashable] = set()
    keyed: set[str] = set()
    keyless = index.keyless
    ids: set[str] = set()
    groups: dict[tuple[str, Hashable], list[str]] = {}
    for call in calls:
        name, arguments = call.name, call.arguments
        key_argument, resource = roles.get(name, _NO_ROLES)
        if keys_clean and key_argument is not None and arguments is not None:
            value = arguments.get(key_argument)
            key = value if type(value) is str else normalised(value)
            if value is None or name in keyed or key in keys:
                keys_clean = False
            keys.add(key)
            keyed.add(name)
        elif keys_clean and name in keyless:
            if name in keyed:
                keys_clean = False
            keyed.add(name)
        if not graph_clean:
            if not keys_clean:
                break
            continue
        if call.depends_on:
            graph_clean = False
            continue
        if call.id in ids:
            continue  # a later call reusing an id is left out of the graph
        ids.add(call.id)
        if resource is None or arguments is None:
            continue
        value = arguments.get(resource)
        if value is not None:
            # a string stands for itself, another value for its normalised form (a tuple,
            # never equal to a string): calls group exactly as by ``normalised`` alone
            where = value if type(value) is str else normalised(value)
            groups.setdefault((resource, where), []).append(name)
    if not graph_clean:
        return QuickChecks(keys_clean, False, False)
    in_order = True
    for names in groups.values():
        ordered, complete = _group(index, names)
        in_order = in_order and ordered
        graph_clean = graph_clean and ordered and complete
    return QuickChecks(keys_clean, graph_clean, in_order)


_NO_ROLES: tuple[None, None] = (None, None)


def _one(index: ContractIndex, call: CallLike) -> QuickChecks:
    """``quick_checks`` of a plan of one call (a read, a refund: many plans are)."""
    key_argument, resource = index.roles.get(call.name, _NO_ROLES)
    arguments = call.arguments
    if key_argument is None or arguments is None:
        keys_clean = True
    else:
        keys_clean = arguments.get(key_argument) is not None  # one key cannot repeat
    if call.depends_on:
        return QuickChecks(keys_clean, False, False)
    if resource is None or arguments is None or arguments.get(resource) is None:
        return QuickChecks(keys_clean, True, True)
    ordered, complete = _group(index, [call.name])
    return QuickChecks(keys_clean, ordered and complete, ordered)


def _group(index: ContractIndex, names: list[str]) -> tuple[bool, bool]:
    """``(in step order, complete)`` for the tool names on one resource, remembered."""
    sequence = tuple(names)
    found = index.groups.get(sequence)
    if found is None:
        found = (_in_step_order(index, names), _complete(index, names))
        if len(index.groups) >= _GROUPS_LIMIT:
            index.groups.clear()
        index.groups[sequence] = found
    return found


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
