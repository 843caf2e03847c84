"""tau2-bench tasks as txcheck cases: each task's ground-truth actions become expected calls.

A tau2-bench domain folder holds ``tasks.json``: a list of tasks ``{"id",
"evaluation_criteria": {"actions": [{"action_id", "requestor"?, "name", "arguments",
"compare_args"?}]}}``. The agent's tools are defined in tau2-bench's Python code; their
OpenAI schemas (what tau2-bench sends to the model, ``tool.openai_schema``) and their tool
types are read from ``tools.json`` in the same folder or from ``--tools FILE``:
``{"tools": [...], "tool_types": {"<name>": "read"|"write"|"think"|"generic"}}`` (or a
bare list of tools, each carrying its own ``x-txcheck``). ``txcheck.importers.tau2_effects``
turns the types into ``x-txcheck``. With the tau2 package installed, ``tau2_tools`` in
``txcheck.adapters.tau2`` writes that file from tau2's own code. Nothing is executed here.

Each task becomes a case whose ``tools`` are the domain's tools:

- a task with agent actions (``requestor`` ``"assistant"``, the default) expects those
  actions; tau2-bench checks that each was taken, in any order, and compares the final
  database, so the calls are order-free, except that writes naming the same identifier
  value keep their order (``"ordered": "writes"``);
- a task with none ("nothing written": tau2 expects the database unchanged) expects no
  call and forbids the domain's writes.

Arguments outside an action's ``compare_args`` are not compared by tau2-bench; here a
required one is compared as given and an optional one becomes ``$optional`` (left out is
fine, present must match): stricter than tau2. Actions by the user (``requestor:
"user"``, the telecom domain's device steps) are not the agent's calls and are left out;
the device state they change is not modelled. The proposal is the ground truth itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from txcheck.importers.common import ImportStats, chat_proposal, read_json, write_case
from txcheck.importers.tau2_effects import annotate, tool_name, writes_conflict
from txcheck.models.errors import InputError

__all__ = ["OrderCheck", "WorldMaker", "import_tau2", "read_tools", "tau2_cases"]

WorldMaker = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]
"""A task -> its world fixture (``txcheck.adapters.tau2``), or ``None`` for none."""

OrderCheck = Callable[[Mapping[str, Any], set[str]], bool]
"""A task and the domain's write tools -> whether the order of its writes changes tau2's
final database (``txcheck.adapters.tau2.gold_order_matters``)."""


def read_tools(path: Path, stats: ImportStats | None = None) -> list[Any]:
    """The tools of a tools file, each with ``x-txcheck`` from ``tool_types`` where the
    file gives one; a tool described by neither is counted as a warning."""
    value = read_json(path)
    tools = value.get("tools") if isinstance(value, dict) else value
    if not isinstance(tools, list) or not tools:
        raise InputError('expected a list of tools or {"tools": [...]}', source=str(path))
    types = value.get("tool_types", {}) if isinstance(value, dict) else {}
    if not isinstance(types, dict):
        raise InputError("'tool_types' must map tool names to tau2 tool types", source=str(path))
    out = []
    for index, raw in enumerate(tools):
        name = tool_name(raw)
        if name is None:
            raise InputError(f"tools[{index}] has no name", source=str(path))
        tool = raw
        if name in types:
            try:
                tool = annotate(raw, types[name])
            except ValueError as error:
                raise InputError(f"tool_types.{name}: {error}", source=str(path)) from None
        elif "x-txcheck" not in raw and stats is not None:
            stats.warn(
                f"tool {name!r} has no tau2 tool type: it is taken for a keyless write "
                "(give 'tool_types' in the tools file)"
            )
        out.append(tool)
    return out


def _tools(domain_dir: Path, tools_file: Path | None, stats: ImportStats) -> list[Any]:
    path = tools_file if tools_file is not None else domain_dir / "tools.json"
    if not path.exists():
        raise InputError(
            "no tools.json: export the domain's tool schemas and types there (with tau2 "
            "installed: python -m txcheck.adapters.tau2 tools DOMAIN), or give --tools FILE",
            source=str(domain_dir),
        )
    return read_tools(path, stats)


def tau2_cases(
    domain_dir: Path,
    *,
    tools_file: Path | None = None,
    tools: Sequence[Any] | None = None,
    worlds: WorldMaker | None = None,
    order: OrderCheck | None = None,
    stats: ImportStats | None = None,
) -> Iterator[dict[str, Any]]:
    """Every task, as a case, in file order. ``tools`` (already annotated) replace the
    tools file; ``worlds`` gives each case its world fixture; ``order`` decides whether
    its writes keep their order (else: whether two writes name the same identifier)."""
    stats = stats or ImportStats()
    tools = list(tools) if tools is not None else _tools(domain_dir, tools_file, stats)
    by_name = {str(tool_name(t)): t for t in tools}
    writes = sorted(
        str(name)
        for name, t in by_name.items()
        if t.get("x-txcheck", {}).get("effect", "write") != "read"
    )
    tasks_path = domain_dir / "tasks.json"
    tasks = read_json(tasks_path)
    if not isinstance(tasks, list):
        raise InputError("expected a list of tasks", source=str(tasks_path))
    domain = domain_dir.name
    for index, task in enumerate(tasks):
        if not isinstance(task, dict) or "id" not in task:
            raise InputError(f"task {index} must be an object with an 'id'", source=str(tasks_path))
        criteria = task.get("evaluation_criteria") or {}
        actions = [
            a
            for a in (criteria.get("actions") or [])
            if isinstance(a, dict) and a.get("requestor", "assistant") in (None, "assistant")
        ]
        where = f"task {index} ({task['id']!r})"
        try:
            calls, own = _calls(actions, by_name)
        except ValueError as error:
            raise InputError(f"{where}: {error}", source=str(tasks_path)) from None
        expect: dict[str, Any] = {"calls": calls}
        if not calls:
            expect["forbidden"] = writes
        elif order(task, set(writes)) if order is not None else writes_conflict(own, by_name):
            expect["ordered"] = "writes"
        case: dict[str, Any] = {
            "id": f"{domain}:{task['id']}",
            "proposal": chat_proposal(own),
            "expect": expect,
            "tools": tools,
            "meta": {"source": "tau2", "domain": domain, "task_id": str(task["id"])},
        }
        if worlds is not None:
            world = worlds(task)
            if world is not None:
                case["world"] = world
        stats.cases += 1
        yield case


def _required(tool: Mapping[str, Any] | None) -> set[str]:
    function = tool.get("function", tool) if tool is not None else {}
    schema = function.get("parameters", function.get("input_schema")) if function else None
    required = schema.get("required") if isinstance(schema, dict) else None
    return set(required) if isinstance(required, list) else set()


def _calls(
    actions: Sequence[dict[str, Any]], tools: Mapping[str, Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    calls, own = [], []
    for action in actions:
        name, arguments = action.get("name"), action.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise ValueError("an action needs a 'name' and an 'arguments' object")
        compared = action.get("compare_args")
        required = _required(tools.get(name))
        expected = {
            k: v if compared is None or k in compared or k in required else {"$optional": v}
            for k, v in arguments.items()
        }
        calls.append({"name": name, "arguments": expected})
        own.append((name, arguments))
    return calls, own


def import_tau2(
    domain_dir: Path,
    out: IO[str],
    *,
    tools_file: Path | None = None,
    tools: Sequence[Any] | None = None,
    worlds: WorldMaker | None = None,
    order: OrderCheck | None = None,
) -> ImportStats:
    """Write the cases to ``out``; returns what was written and skipped."""
    if not domain_dir.is_dir():
        raise InputError(
            "not a directory (expected a tau2-bench domain folder)", source=str(domain_dir)
        )
    stats = ImportStats()
    cases = tau2_cases(
        domain_dir, tools_file=tools_file, tools=tools, worlds=worlds, order=order, stats=stats
    )
    for case in cases:
        write_case(out, case)
    return stats
