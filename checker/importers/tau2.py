"""tau2-bench tasks as txcheck cases: each task's ground-truth actions become expected calls.

A tau2-bench domain folder holds ``tasks.json``: a list of tasks ``{"id",
"evaluation_criteria": {"actions": [{"action_id", "requestor"?, "name", "arguments",
"compare_args"?}]}}``. The agent's tools are defined in tau2-bench's Python code; their
OpenAI schemas (what tau2-bench sends to the model, ``tool.openai_schema``) are read from
``tools.json`` in the same folder or from ``--tools FILE``: a list of tools or
``{"tools": [...]}``. Nothing is executed.

Each task with at least one agent action (``requestor`` ``"assistant"``, the default)
becomes a case whose ``tools`` are the domain's tools and whose expected calls are those
actions, order-free (tau2-bench checks that each expected action was taken). Arguments
outside an action's ``compare_args`` are not compared by tau2-bench; here they become
``$optional`` (left out is fine, present must match), which is stricter. Actions by the
user (``requestor: "user"``, the telecom domain's device steps) are not the agent's calls
and are left out. The proposal is the ground truth itself.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from txcheck.importers.common import ImportStats, chat_proposal, read_json, write_case
from txcheck.models.errors import InputError

__all__ = ["import_tau2", "tau2_cases"]


def _tools(domain_dir: Path, tools_file: Path | None) -> list[Any]:
    path = tools_file if tools_file is not None else domain_dir / "tools.json"
    if not path.exists():
        raise InputError(
            "no tools.json: export the domain's tool schemas (tau2-bench's "
            "tool.openai_schema for each tool) there, or give --tools FILE",
            source=str(domain_dir),
        )
    value = read_json(path)
    tools = value.get("tools") if isinstance(value, dict) else value
    if not isinstance(tools, list) or not tools:
        raise InputError('expected a list of tools or {"tools": [...]}', source=str(path))
    return tools


def tau2_cases(
    domain_dir: Path, *, tools_file: Path | None = None, stats: ImportStats | None = None
) -> Iterator[dict[str, Any]]:
    """Every task with agent actions, as a case, in file order."""
    stats = stats or ImportStats()
    tools = _tools(domain_dir, tools_file)
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
        if not actions:
            stats.skip("without agent actions")
            continue
        calls, own = _calls(actions, f"{tasks_path}: task {task['id']!r}")
        stats.cases += 1
        yield {
            "id": f"{domain}:{task['id']}",
            "proposal": chat_proposal(own),
            "expect": {"calls": calls},
            "tools": tools,
            "meta": {"source": "tau2", "domain": domain, "task_id": str(task["id"])},
        }


def _calls(
    actions: Sequence[dict[str, Any]], where: str
) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    calls, own = [], []
    for action in actions:
        name, arguments = action.get("name"), action.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise InputError(f"{where}: an action needs a 'name' and an 'arguments' object")
        compared = action.get("compare_args")
        expected = {
            k: v if compared is None or k in compared else {"$optional": v}
            for k, v in arguments.items()
        }
        calls.append({"name": name, "arguments": expected})
        own.append((name, arguments))
    return calls, own


def import_tau2(domain_dir: Path, out: IO[str], *, tools_file: Path | None = None) -> ImportStats:
    """Write the cases to ``out``; returns what was written and skipped."""
    if not domain_dir.is_dir():
        raise InputError(
            "not a directory (expected a tau2-bench domain folder)", source=str(domain_dir)
        )
    stats = ImportStats()
    for case in tau2_cases(domain_dir, tools_file=tools_file, stats=stats):
        write_case(out, case)
    return stats
