"""tau2-bench as a txcheck domain: its own tool code as services, its gold database as the
property every run must reach (needs the ``tau2`` package: ``pip install 'txcheck[tau2]'``).

- ``domain_tools(domain)``: the domain's agent tools as tau2 sends them to the model
  (``openai_schema``), with ``x-txcheck`` from tau2's tool types
  (``txcheck.importers.tau2_effects``).
- ``task_world(domain, task)``: a world fixture for one task, made by tau2's own
  environment: the task's initial state applied (``set_state``), then the expected agent
  actions replayed through ``get_response`` as tau2's evaluator does (a call tau2 answers
  with an error changes nothing and the replay goes on). Its ``services.tau2`` section
  holds the domain, the task's slice of the database before (``db``) and after
  (``gold``). Airline and retail keep only the records the task reaches (its actions'
  identifiers, and whatever those records name, transitively, plus records the actions
  create); telecom's database is small and kept whole.
- ``SERVICES``: one ``ServiceSet`` (``tau2``) whose handlers run tau2's tool code
  (``AirlineTools``, ``RetailTools``, ``TelecomTools``) over the fixture's database. A
  call tau2 answers with an error commits nothing and answers ``{"error": ...}``, as tau2
  answers the agent: the plan goes on. Faults (lost responses, timeouts, crashes,
  retries) are txcheck's, around that code.
- ``INVARIANTS``: ``tau2_gold_database`` (at quiescence): the final database equals the
  gold one; its message names the first differing records.

Not modelled: the user's actions and device (telecom's ``requestor: "user"`` steps and its
user database), tau2's conversation checks (``communicate_info``, ``nl_assertions``), and
reads outside the slice (a search sees only the flights in the slice). Telecom's
``refuel_data`` may create a bill under a random id (``uuid4`` in tau2's code): the
adapter renames such ids ``B_NEW_1``, ``B_NEW_2``... in creation order, so runs stay
deterministic.

``python -m txcheck.adapters.tau2 tools DOMAIN`` prints the domain's tools file
(``{"tools": [...], "tool_types": {...}}``) for ``txcheck import tau2 --tools``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from txcheck.importers.tau2_effects import annotate
from txcheck.invariants.base import eventually
from txcheck.models.canonical import canonical_json
from txcheck.models.errors import InputError
from txcheck.models.runner import RunView
from txcheck.models.services import Committed, ServiceSet

__all__ = [
    "DOMAINS",
    "INVARIANTS",
    "SERVICE",
    "SERVICES",
    "UNLESS_REJECTED",
    "domain_tools",
    "gold_order_matters",
    "task_world",
    "tau2_gold_database",
    "tau2_gold_unless_rejected",
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


def _tau2(domain: str) -> tuple[Any, Any, Any]:
    """The domain's environment module, database class and tool kit class."""
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
    environment, _, _ = _tau2(domain)
    return json.dumps(environment.get_environment().tools.db.model_dump(mode="json"))


def domain_tools(domain: str) -> list[dict[str, Any]]:
    """The domain's agent tools with ``x-txcheck`` from their tau2 tool types, by name."""
    environment, _, _ = _tau2(domain)
    kit = environment.get_environment().tools
    schemas = {t.name: t.openai_schema for t in kit.get_tools().values()}
    return [annotate(schemas[n], kit.tool_type(n).value) for n in sorted(schemas)]


def tools_file(domain: str) -> dict[str, Any]:
    """The domain's tools file: the bare schemas and tau2's type of each tool."""
    environment, _, _ = _tau2(domain)
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
    environment, db_class, _ = _tau2(domain)
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
    return _renumbered(env.tools.db.model_dump(mode="json"), db)


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


def _renumbered(db: Any, before: Mapping[str, Any]) -> Any:
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


# -- services -----------------------------------------------------------------------------


def _initial(document: Mapping[str, Any]) -> dict[str, Any]:
    section = document.get("services", {}).get(SERVICE)
    if not isinstance(section, dict) or section.get("domain") not in DOMAINS:
        return {"domain": None, "db": {}, "gold": None}
    return {
        "domain": section["domain"],
        "db": copy.deepcopy(section.get("db", {})),
        "gold": section.get("gold"),
    }


def _plain(value: Any) -> Any:
    """A tool's answer as JSON: pydantic models dumped, everything else as tau2 shows it."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _handler(name: str) -> Any:
    def handle(state: dict[str, Any], arguments: Mapping[str, Any]) -> Committed:
        domain = state["domain"]
        if domain is None:
            return Committed(receipt={"error": "the world fixture has no tau2 database"})
        _, db_class, kit_class = _tau2(domain)
        kit = kit_class(db_class.model_validate(state["db"]))
        if name not in kit.tools:
            return Committed(receipt={"error": f"tool {name!r} is not a {domain} tool"})
        try:
            answer = kit.use_tool(name, **dict(arguments))
        except Exception as error:  # tau2 answers the agent with the error
            return Committed(receipt={"error": f"{type(error).__name__}: {error}"})
        after = _renumbered(kit.db.model_dump(mode="json"), state["db"])
        if after == state["db"]:
            return Committed(receipt={"result": _plain(answer)})
        state["db"] = after
        event = {"type": f"{name}.applied", "tool": name}
        return Committed(receipt={"result": _plain(answer)}, events=(event,))

    return handle


def _all_tool_names() -> list[str]:
    names: set[str] = set()
    for domain in DOMAINS:
        try:
            _, _, kit_class = _tau2(domain)
        except InputError:
            continue
        names.update(kit_class(None).tools)
    return sorted(names)


class _LazyHandlers(Mapping[str, Any]):
    """Every tau2 agent tool's handler, the tool names read from tau2 when first asked
    (so importing this module needs no tau2)."""

    @functools.cached_property
    def _table(self) -> dict[str, Any]:
        return {name: _handler(name) for name in _all_tool_names()}

    def __getitem__(self, name: str) -> Any:
        return self._table[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


SERVICES = ServiceSet(name=SERVICE, initial_state=_initial, handlers=_LazyHandlers())
"""tau2's agent tools, run by tau2's own code over the world fixture's database."""


# -- the gold database --------------------------------------------------------------------


def _differences(now: Mapping[str, Any], gold: Mapping[str, Any]) -> list[str]:
    out = []
    for table in sorted(set(now) | set(gold)):
        a, b = now.get(table), gold.get(table)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    what = "missing" if key not in a else "extra" if key not in b else "differs"
                    out.append(f"{table}.{key} {what}")
        else:
            out.append(f"{table} differs")
    return out


@eventually
def tau2_gold_database(view: RunView) -> Iterator[str]:
    """At quiescence the database is tau2's gold one (when the fixture gives it)."""
    state = view.world.state.get(SERVICE)
    if not isinstance(state, dict) or state.get("gold") is None:
        return
    diffs = _differences(state["db"], state["gold"])
    if diffs:
        shown = ", ".join(diffs[:5]) + (f" and {len(diffs) - 5} more" if len(diffs) > 5 else "")
        yield f"the final database is not tau2's gold database: {shown}"


def _gave_up(view: RunView) -> bool:
    """Whether the policy said it could not finish: a journal ends in MANUAL, or ends
    rolled back with the database as it started (a clean rollback, e.g. its retry budget
    spent on transient errors)."""
    endings = [entries[-1] for entries in view.world.journals.values() if entries]
    if any(e.get("phase") == "MANUAL" for e in endings):
        return True
    start = view.initial_business_state.get(SERVICE, {}).get("db")
    rolled_back = any(e.get("outcome") == "rolled_back" for e in endings)
    return rolled_back and view.world.state[SERVICE]["db"] == start


@eventually
def tau2_gold_unless_rejected(view: RunView) -> Iterator[str]:
    """``tau2_gold_database``, except in a run where a permanent error was injected or the
    policy gave up and said so (MANUAL, or a clean rollback): a call refused for good, or
    failing past the retry budget, cannot reach the gold database, and stopping there,
    said, is an acceptable outcome."""
    if view.history.faults.get("permanent_error") or _gave_up(view):
        return
    yield from tau2_gold_database.check(view)


INVARIANTS = (tau2_gold_database,)
"""Every run must reach tau2's gold database."""

UNLESS_REJECTED = (tau2_gold_unless_rejected,)
"""Every run without an injected permanent error, where the policy did not give up (MANUAL
or a clean rollback), must reach tau2's gold database."""


def main(argv: Sequence[str] | None = None) -> int:
    """``tools DOMAIN``: print the domain's tools file."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] != "tools":
        print("usage: python -m txcheck.adapters.tau2 tools DOMAIN", file=sys.stderr)
        return 2
    try:
        print(json.dumps(tools_file(args[1]), indent=1, sort_keys=True))
    except InputError as error:
        print(f"txcheck.adapters.tau2: error: {error.problem}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
