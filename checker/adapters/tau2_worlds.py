"""tau2-bench's own code, for ``txcheck.adapters.tau2``: each domain's tools, and each task's
world (its database before and after its expected agent actions, replayed by tau2's
environment), sliced to what the task reaches. Needs the ``tau2`` package when called;
importing this module does not.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from txcheck.importers.tau2_effects import annotate
from txcheck.models.canonical import canonical_json
from txcheck.models.errors import InputError

__all__ = [
    "DOMAINS",
    "SERVICE",
    "domain_tools",
    "gold_order_matters",
    "renumbered",
    "task_world",
    "toolkit",
    "tools_file",
]

DOMAINS = {
    "airline": ("tau2.domains.airline", "FlightDB", "AirlineTools"),
    "retail": ("tau2.domains.retail", "RetailDB", "RetailTools"),
    "telecom": ("tau2.domains.telecom", "TelecomDB", "TelecomTools"),
}
"""The domains the adapter runs: module, database class, tool kit class."""

SERVICE = "tau2"
_SLICED = ("airline", "retail")
_NEW_BILL = re.compile(r"\bB[0-9a-f]{8}\b")


def toolkit(domain: str) -> tuple[Any, Any, Any]:
    """The domain's environment module, database class and tool kit class; an
    ``InputError`` for another domain, or when tau2 is not installed."""
    if domain not in DOMAINS:
        raise InputError(
            f"tau2 domain must be one of {', '.join(sorted(DOMAINS))} (got {domain!r})"
        )
    package, db_class, kit_class = DOMAINS[domain]
    with contextlib.suppress(ImportError):  # its debug and .env lines
        importlib.import_module("loguru").logger.disable("tau2")
    try:
        environment = importlib.import_module(f"{package}.environment")
        data_model = importlib.import_module(f"{package}.data_model")
        tools = importlib.import_module(f"{package}.tools")
    except ImportError as error:
        raise InputError(
            f"the tau2 package is needed for this (pip install 'txcheck[tau2]'): {error}"
        ) from None
    return environment, getattr(data_model, db_class), getattr(tools, kit_class)


@functools.cache
def _full_db(domain: str) -> str:
    """The domain's whole database as JSON text (loaded once)."""
    environment, _, _ = toolkit(domain)
    return json.dumps(environment.get_environment().tools.db.model_dump(mode="json"))


def domain_tools(domain: str) -> list[dict[str, Any]]:
    """The domain's agent tools with ``x-txcheck`` from their tau2 tool types, by name."""
    environment, _, _ = toolkit(domain)
    kit = environment.get_environment().tools
    schemas = {t.name: t.openai_schema for t in kit.get_tools().values()}
    return [annotate(schemas[n], kit.tool_type(n).value) for n in sorted(schemas)]


def tools_file(domain: str) -> dict[str, Any]:
    """The domain's tools file: the bare schemas and tau2's type of each tool."""
    environment, _, _ = toolkit(domain)
    kit = environment.get_environment().tools
    tools = [t.openai_schema for t in sorted(kit.get_tools().values(), key=lambda t: t.name)]
    return {"tools": tools, "tool_types": {n: kit.tool_type(n).value for n in sorted(kit.tools)}}


# -- worlds -------------------------------------------------------------------------------


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _reached(db: Mapping[str, Any], seeds: set[str]) -> dict[str, set[str]]:
    """The keys of each table (a JSON object of records) reached from ``seeds``: a record
    is reached when its key is a seed or a string inside a reached record."""
    tables = {name: t for name, t in db.items() if isinstance(t, dict)}
    kept: dict[str, set[str]] = {name: set() for name in tables}
    frontier = set(seeds)
    while frontier:
        found: set[str] = set()
        for name, table in tables.items():
            for key in frontier:
                if key in table and key not in kept[name]:
                    kept[name].add(key)
                    found.update(_strings(table[key]))
        frontier = found
    return kept


def _slice(db: Mapping[str, Any], keys: Mapping[str, set[str]]) -> dict[str, Any]:
    return {
        name: {k: table[k] for k in sorted(keys[name]) if k in table} if name in keys else table
        for name, table in db.items()
    }


def _actions(task: Mapping[str, Any]) -> list[dict[str, Any]]:
    criteria = task.get("evaluation_criteria") or {}
    return [
        a
        for a in criteria.get("actions") or []
        if isinstance(a, dict) and a.get("requestor", "assistant") in (None, "assistant")
    ]


def _environment(domain: str, db: Mapping[str, Any]) -> Any:
    """tau2's environment of ``domain`` over the database ``db`` (a JSON object)."""
    environment, db_class, _ = toolkit(domain)
    return environment.get_environment(db=db_class.model_validate(db))


def _replay(domain: str, db: Mapping[str, Any], calls: Sequence[Mapping[str, Any]]) -> Any:
    """The database after ``calls`` replayed by tau2's environment as its evaluator does:
    an error is an answer, and the replay goes on."""
    message = importlib.import_module("tau2.data_model.message")
    env = _environment(domain, db)
    for i, call in enumerate(calls):
        tool_call = message.ToolCall(
            id=f"gold_{i}", name=call["name"], arguments=call.get("arguments") or {}
        )
        env.get_response(tool_call)
    return renumbered(env.tools.db.model_dump(mode="json"), db)


def _initial_db(domain: str, task: Mapping[str, Any]) -> dict[str, Any]:
    """The domain's database with the task's initial state applied (``set_state``)."""
    full: dict[str, Any] = json.loads(_full_db(domain))
    tasks = importlib.import_module("tau2.data_model.tasks")
    initial = tasks.Task.model_validate(task).initial_state
    if initial is None or (
        initial.initialization_data is None and not initial.initialization_actions
    ):
        return full
    env = _environment(domain, full)
    env.set_state(initial.initialization_data, initial.initialization_actions, [])
    db: dict[str, Any] = env.tools.db.model_dump(mode="json")
    return db


def _task_db(domain: str, task: Mapping[str, Any]) -> dict[str, Any]:
    """The task's database before its actions: sliced for airline and retail."""
    db = _initial_db(domain, task)
    if domain not in _SLICED:
        return db
    seeds = {s for a in _actions(task) for s in _strings(a.get("arguments") or {})}
    return _slice(db, _reached(db, seeds))


def task_world(domain: str, task: Mapping[str, Any]) -> dict[str, Any]:
    """The world fixture of one task: its database slice before and after the expected
    agent actions, replayed by tau2's own environment."""
    before = _task_db(domain, task)
    after = _replay(domain, before, _actions(task))
    section = {"domain": domain, "task": str(task.get("id")), "db": before, "gold": after}
    return {"format": "txcheck-world/1", "services": {SERVICE: section}}


def gold_order_matters(domain: str, task: Mapping[str, Any], writes: set[str]) -> bool:
    """Whether replaying the task's expected writes in reverse order gives tau2 another
    final database (then the case keeps its writes in order)."""
    actions = _actions(task)
    positions = [i for i, a in enumerate(actions) if a.get("name") in writes]
    if len(positions) < 2:
        return False
    reordered = list(actions)
    for i, j in zip(positions, reversed(positions), strict=True):
        reordered[i] = actions[j]
    before = _task_db(domain, task)
    forward, backward = _replay(domain, before, actions), _replay(domain, before, reordered)
    return canonical_json(forward) != canonical_json(backward)


def renumbered(db: Any, before: Mapping[str, Any]) -> Any:
    """``db`` with bill ids that tau2 drew at random (``B`` and 8 hex digits) and that
    ``before`` does not hold renamed ``B_NEW_1``, ``B_NEW_2``... in order of appearance."""
    text = json.dumps(db)
    if not _NEW_BILL.search(text):
        return db
    known = set(_NEW_BILL.findall(json.dumps(before)))
    fresh: dict[str, str] = {}
    for found in _NEW_BILL.findall(text):
        if found not in known and found not in fresh:
            fresh[found] = f"B_NEW_{len(fresh) + 1}"
    for old, new in fresh.items():
        text = text.replace(old, new)
    return json.loads(text)
