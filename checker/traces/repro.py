"""A counterexample as a few lines of Python a user can paste into a test.

The plans are inlined (``plan_from_json``) and the choices are listed up to the last
deviation: ``execute`` takes the default schedule from there, which is exactly what the
recorded run did. The contract and world are the bundled ones (a ``Target``'s defaults)
when they are, else read back from the trace file, or inlined when no trace file was
written. Only txcheck's public API is imported.
"""

from __future__ import annotations

import pprint
from collections.abc import Sequence

from txcheck.exploration.kernel.description import TargetDescription
from txcheck.exploration.kernel.session import Execution
from txcheck.exploration.usercode.loading import names_a_list
from txcheck.models.canonical import canonical_json
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan, plan_to_json
from txcheck.models.sim.choices import Choice
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import BUILTIN_POLICIES
from txcheck.models.sim.runner import Step

__all__ = ["choices_to_replay", "python_reproduction"]


def choices_to_replay(steps: Sequence[Step]) -> list[Choice]:
    """The recorded choices up to the last deviation (the rest is the default schedule)."""
    last = max((s.index for s in steps if s.deviation), default=-1)
    return [s.choice for s in steps[: last + 1]]


def _choice(choice: Choice) -> str:
    actor, action, outcome = choice.actor, str(choice.action), str(choice.outcome)
    if outcome == "ok":
        return f"Choice({actor!r}, {action!r})"
    return f"Choice({actor!r}, {action!r}, {outcome!r})"


def _import(spec: str, lines: list[str]) -> str:
    """An import line for ``module:NAME`` (a dotted NAME imports its first part); the
    expression naming the object."""
    module, _, attribute = spec.partition(":")
    head = attribute.split(".")[0]
    line = f"from {module} import {head}"
    if line not in lines:
        lines.append(line)
    return attribute


def _spread(spec: str) -> str:
    """``*`` when ``spec`` named a list (``invariants=(*DEFAULT_INVARIANTS, *MINE)``)."""
    return "*" if names_a_list(spec) else ""


def _is_default(document: object, bundled: object) -> bool:
    return canonical_json(document) == canonical_json(bundled)


def _inline(name: str, parse: str, document: object) -> str:
    literal = pprint.pformat(document, width=88, sort_dicts=True).replace("\n", "\n    ")
    return f"{name} = {parse}(\n    {literal}\n)"


def _plans(plans: Sequence[Plan]) -> list[str]:
    """Lines that build ``plans``; the same plan submitted twice stays one object."""
    lines: list[str] = []
    names: list[str] = []
    seen: dict[int, str] = {}
    for plan in plans:
        if id(plan) not in seen:
            seen[id(plan)] = f"plan_{len(seen) + 1}"
            literal = pprint.pformat(plan_to_json(plan), width=88, sort_dicts=True)
            body = literal.replace("\n", "\n    ")
            lines.append(f"{seen[id(plan)]} = plan_from_json(\n    {body}\n)")
        names.append(seen[id(plan)])
    lines.append(f"plans = [{', '.join(names)}]")
    return lines


def python_reproduction(
    description: TargetDescription,
    execution: Execution,
    *,
    trace_path: str | None = None,
    checked: Sequence[str] | None = None,
) -> str:
    """Python that re-executes ``execution`` of the target ``description`` names and
    asserts its first failure. It imports only txcheck's public API, and the user's own
    services and invariants by the import paths the description gives (``module:NAME``,
    a NAME that is a list spread with ``*``); ``checked`` names the invariants the run
    was narrowed to (None: all). The policy is a built-in name or an import path. A
    contract or world that is not the bundled one is read back from ``trace_path``, the
    trace file written for this execution, or inlined when no trace file was written
    (None); the stores are opened on SQLite."""
    policy, contract, fixture = description.policy, description.contract, description.fixture
    services, invariants, stores = description.services, description.invariants, description.stores
    plain_contract = _is_default(contract.document, default_contract().document)
    plain_world = _is_default(fixture.document, default_fixture().document)
    names = {"Target", "execute", "plan_from_json"}
    setup: list[str] = []
    if policy in BUILTIN_POLICIES:
        names.add("builtin_policy")
        arguments = [f"policy=builtin_policy({policy!r})"]
    else:
        names.add("load_policy")
        arguments = [f"policy=load_policy({policy!r}).policy"]
    if not (plain_contract and plain_world) and trace_path is not None:
        names.add("load_trace")
        setup.append(f"trace = load_trace({trace_path!r})")
        if not plain_contract:
            arguments.append("contract=trace.contract")
        if not plain_world:
            arguments.append("fixture=trace.fixture")
    else:  # no trace file to read them back from: inline them
        if not plain_contract:
            names.add("parse_contract")
            setup.append(_inline("contract", "parse_contract", contract.document))
            arguments.append("contract=contract")
        if not plain_world:
            names.add("parse_world")
            setup.append(_inline("fixture", "parse_world", fixture.document))
            arguments.append("fixture=fixture")
    user_imports: list[str] = []
    if services:
        names.add("CHECKOUT")
        found = [_spread(spec) + _import(spec, user_imports) for spec in services]
        arguments.append(f"services=(CHECKOUT, {', '.join(found)})")
    every = "DEFAULT_INVARIANTS"
    if invariants:
        found = [_spread(spec) + _import(spec, user_imports) for spec in invariants]
        every = f"(*DEFAULT_INVARIANTS, {', '.join(found)})"
    if checked is not None:
        names.add("DEFAULT_INVARIANTS")
        wanted = ", ".join(repr(n) for n in sorted(checked))
        arguments.append(f"invariants=tuple(i for i in {every} if i.name in {{{wanted}}})")
    elif invariants:
        names.add("DEFAULT_INVARIANTS")
        arguments.append(f"invariants={every}")
    if stores:  # the stores' classes, on SQLite (a run on PostgreSQL also needs its --dsn)
        names.add("Stores")
        opened = [f"{kind}={_import(spec, user_imports)}" for kind, spec in sorted(stores.items())]
        arguments.append(f"stores=Stores({', '.join(opened)})")
    choices = choices_to_replay(execution.steps)
    if choices:
        names.add("Choice")
    lines = [f"from txcheck import {', '.join(sorted(names))}", *user_imports, "", *setup]
    lines += _plans(execution.run.plans)
    if choices:
        lines += ["choices = [", *(f"    {_choice(c)}," for c in choices), "]"]
    else:
        lines.append("choices: list[Choice] = []  # the default schedule alone fails")
        lines[0] = f"from txcheck import {', '.join(sorted(names | {'Choice'}))}"
    lines += [f"target = Target({', '.join(arguments)})"]
    lines += ["execution = execute(target, plans, choices=choices)"]
    if execution.failures:
        lines.append(f"assert execution.failed({execution.by_harm[0].name!r})")
    elif execution.error:
        lines.append("assert execution.error is not None")
    return "\n".join(lines) + "\n"
