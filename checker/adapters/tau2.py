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

import copy
import functools
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from txcheck.adapters.tau2_worlds import (
    DOMAINS,
    SERVICE,
    domain_tools,
    gold_order_matters,
    renumbered,
    task_world,
    toolkit,
    tools_file,
)
from txcheck.invariants.base import eventually
from txcheck.models.errors import InputError
from txcheck.models.sim.policies.journal import Phase
from txcheck.models.sim.runner import RunView
from txcheck.models.sim.services import Committed, ServiceSet

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
    "tools_file",
]


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
        _, db_class, kit_class = toolkit(domain)
        kit = kit_class(db_class.model_validate(state["db"]))
        if name not in kit.tools:
            return Committed(receipt={"error": f"tool {name!r} is not a {domain} tool"})
        try:
            answer = kit.use_tool(name, **dict(arguments))
        except Exception as error:  # tau2 answers the agent with the error
            return Committed(receipt={"error": f"{type(error).__name__}: {error}"})
        after = renumbered(kit.db.model_dump(mode="json"), state["db"])
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
            _, _, kit_class = toolkit(domain)
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


def _gold_problems(state: Any) -> Iterator[str]:
    """Why the tau2 state's database is not its gold one (nothing without a gold one)."""
    if not isinstance(state, dict) or state.get("gold") is None:
        return
    diffs = _differences(state["db"], state["gold"])
    if diffs:
        shown = ", ".join(diffs[:5]) + (f" and {len(diffs) - 5} more" if len(diffs) > 5 else "")
        yield f"the final database is not tau2's gold database: {shown}"


@eventually
def tau2_gold_database(view: RunView) -> Iterator[str]:
    """At quiescence the database is tau2's gold one (when the fixture gives it)."""
    yield from _gold_problems(view.world.state.get(SERVICE))


def _gave_up(journals: Mapping[str, Any], db: Any, start: Any) -> bool:
    """Whether the policy said it could not finish: a journal ends in MANUAL, or ends
    rolled back with the database as it started (a clean rollback, e.g. its retry budget
    spent on transient errors)."""
    endings = [entries[-1] for entries in journals.values() if entries]
    if any(e.get("phase") == Phase.MANUAL for e in endings):
        return True
    return any(e.get("outcome") == "rolled_back" for e in endings) and db == start


@eventually
def tau2_gold_unless_rejected(view: RunView) -> Iterator[str]:
    """``tau2_gold_database``, except in a run where a permanent error was injected or the
    policy gave up and said so (MANUAL, or a clean rollback): a call refused for good, or
    failing past the retry budget, cannot reach the gold database, and stopping there,
    said, is an acceptable outcome."""
    state = view.world.state.get(SERVICE)
    if not isinstance(state, dict) or view.history.faults.get("permanent_error"):
        return
    start = view.initial_business_state.get(SERVICE, {}).get("db")
    if not _gave_up(view.world.journals, state["db"], start):
        yield from _gold_problems(state)


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
