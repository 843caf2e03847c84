"""Berkeley Function Calling Leaderboard (BFCL) data as txcheck cases.

BFCL ships, per category, a question file ``BFCL_v<N>_<category>.json`` and a
possible-answer file ``possible_answer/BFCL_v<N>_<category>.json``, both JSON Lines:

- a question: ``{"id", "question", "function": [{"name", "description", "parameters":
  {"type": "dict", "properties", "required"}}]}``, with BFCL's own type names (``dict``,
  ``float``, ``tuple``, ``any``) and dotted function names (``math.factorial``);
- a possible answer: ``{"id", "ground_truth": [{"<function>": {"<param>": [v1, v2, ...]}}]}``:
  every listed value is acceptable, and ``""`` in the list marks the parameter optional.
  A ``dict`` parameter's values are objects whose members list their own acceptable
  values; an array of ``dict`` items is a list of such objects.

Each question becomes one case: ``tools`` are the functions as OpenAI tools with their
parameters turned into JSON Schema (``dict`` -> ``object``, ``float`` -> ``number``,
``tuple`` -> ``array``, ``any`` -> no type) and names made valid (``math.factorial`` ->
``math_factorial``; the renaming is recorded in ``meta.tool_names``); ``expect.calls`` are
the ground truth with ``$any`` for several acceptable values and ``$optional`` for ``""``;
parallel calls are order-free, as in BFCL. Each tool is marked ``repeatable`` in
``x-txcheck``: BFCL's answers may make the same call twice, which it accepts (txcheck
would otherwise take an undescribed tool for a write, and a keyless repeat for a second
effect). A category with no possible-answer file (``irrelevance``) expects no call.

The proposal is a BFCL model-result entry (``--results``: ``{"id", "result": [{"<name>":
"<arguments JSON>"}, ...]}`` for function-calling models, or text when the model made no
call), else the ground truth itself (first listed value; an optional parameter whose first
listed value is ``""`` left out), so the ground truth can be checked against the schemas.
BFCL compares strings after removing spaces and ``,./-_*^`` and lower-casing; txcheck stays
exact unless ``normalize`` is asked for, which the cases then declare.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from txcheck.importers.common import ImportStats, chat_proposal, read_jsonl, tool_names, write_case
from txcheck.models.errors import InputError

__all__ = ["CATEGORIES", "bfcl_cases", "convert_schema", "import_bfcl"]

CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
"""The categories imported when none is named: the single-turn AST categories with
function-calling ground truth (Java and JavaScript ones pass arguments as source text)."""

_TYPES = {"dict": "object", "float": "number", "tuple": "array"}
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def convert_schema(node: Any) -> Any:
    """A BFCL parameter schema as JSON Schema: its type names mapped, everything else kept."""
    if not isinstance(node, dict):
        return node
    out = dict(node)
    kind = out.get("type")
    if kind == "any":
        del out["type"]
    elif isinstance(kind, str):
        out["type"] = _TYPES.get(kind, kind)
    elif isinstance(kind, list):
        out["type"] = [_TYPES.get(k, k) for k in kind if k != "any"] if "any" not in kind else None
        if out["type"] is None:
            del out["type"]
    for key in _SUBSCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {k: convert_schema(v) for k, v in out[key].items()}
    for key in _SUBSCHEMA_ONE:
        if isinstance(out.get(key), dict):
            out[key] = convert_schema(out[key])
    for key in _SUBSCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [convert_schema(s) for s in out[key]]
    return out


def _tool(function: Mapping[str, Any], name: str) -> dict[str, Any]:
    parameters = convert_schema(function.get("parameters") or {"type": "object"})
    if isinstance(parameters, dict):
        parameters.setdefault("type", "object")
    spec: dict[str, Any] = {"name": name, "parameters": parameters}
    if isinstance(function.get("description"), str):
        spec["description"] = function["description"]
    # BFCL accepts the same call twice (two draws of random_normalvariate with the same
    # arguments): say so, or a keyless repeat would be a duplicate_side_effect
    return {"type": "function", "function": spec, "x-txcheck": {"repeatable": True}}


def _properties(schema: Any) -> Mapping[str, Any]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _bfcl_type(schema: Any) -> str:
    kind = schema.get("type") if isinstance(schema, dict) else None
    return kind if isinstance(kind, str) else ""


def _members(option: Mapping[str, Any], schema: Any) -> dict[str, Any]:
    """A ``dict`` parameter's acceptable object: each member lists its own values (one
    level deep, as BFCL's checker reads it)."""
    props = _properties(schema)
    return {
        key: _acceptable(values, props.get(key), nested=False)
        if isinstance(values, list)
        else values
        for key, values in option.items()
    }


def _option(option: Any, schema: Any, *, nested: bool) -> Any:
    kind = _bfcl_type(schema)
    if nested and kind == "dict" and isinstance(option, dict):
        return _members(option, schema)
    items = schema.get("items") if isinstance(schema, dict) else None
    if (
        nested
        and kind in ("array", "tuple")
        and _bfcl_type(items) == "dict"
        and isinstance(option, list)
        and all(isinstance(o, dict) for o in option)
    ):
        return [_members(o, items) for o in option]
    return option


def _acceptable(values: list[Any], schema: Any, *, nested: bool = True) -> Any:
    """The expected value for BFCL's list of acceptable values: one value, ``$any`` of
    several, wrapped in ``$optional`` when ``""`` is among them."""
    optional = "" in values
    options = [_option(v, schema, nested=nested) for v in values if v != ""]
    if not options:
        pattern: Any = ""  # only "" listed: absent, or present as ""
    elif len(options) == 1:
        pattern = options[0]
    else:
        pattern = {"$any": options}
    return {"$optional": pattern} if optional else pattern


def _first(values: list[Any], schema: Any, *, nested: bool = True) -> Any:
    """The ground truth's own answer for a parameter: its first listed value (``_SKIP``
    when that is ``""``, the optional parameter left out)."""
    if not values or values[0] == "":
        return _SKIP
    value = values[0]
    kind = _bfcl_type(schema)
    if nested and kind == "dict" and isinstance(value, dict):
        return _first_members(value, schema)
    items = schema.get("items") if isinstance(schema, dict) else None
    if (
        nested
        and kind in ("array", "tuple")
        and _bfcl_type(items) == "dict"
        and isinstance(value, list)
    ):
        return [_first_members(v, items) if isinstance(v, dict) else v for v in value]
    return value


def _first_members(value: Mapping[str, Any], schema: Any) -> dict[str, Any]:
    props = _properties(schema)
    out = {}
    for key, values in value.items():
        chosen = (
            _first(values, props.get(key), nested=False) if isinstance(values, list) else values
        )
        if chosen is not _SKIP:
            out[key] = chosen
    return out


_SKIP: Any = object()


class _NoAnswer(Exception):
    """A parameter whose list of acceptable values is empty: nothing can pass (BFCL's own
    checker fails every answer too), so the case is skipped and counted."""


def _expected_calls(
    truth: Sequence[Any],
    functions: Mapping[str, Mapping[str, Any]],
    names: Mapping[str, str],
    where: str,
) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    """``expect.calls`` and the ground truth's own calls (for a proposal)."""
    calls: list[dict[str, Any]] = []
    own: list[tuple[str, dict[str, Any]]] = []
    for i, entry in enumerate(truth):
        if not isinstance(entry, dict) or len(entry) != 1:
            raise ValueError(
                f"{where}: ground_truth[{i}] must be {{function: {{param: [values]}}}}"
            )
        ((function, params),) = entry.items()
        if not isinstance(params, dict):
            raise ValueError(f"{where}: ground_truth[{i}].{function} must be an object")
        props = _properties(functions.get(function, {}).get("parameters"))
        name = names.get(function, function)
        arguments, mine = {}, {}
        for param, values in params.items():
            if not isinstance(values, list):
                raise ValueError(f"{where}: ground_truth[{i}].{function}.{param} must list values")
            if not values:
                raise _NoAnswer
            arguments[param] = _acceptable(values, props.get(param))
            chosen = _first(values, props.get(param))
            if chosen is not _SKIP:
                mine[param] = chosen
        calls.append({"name": name, "arguments": arguments})
        own.append((name, mine))
    return calls, own


def _result_proposal(result: Any, names: Mapping[str, str]) -> dict[str, Any]:
    """A BFCL model-result ``result`` as an OpenAI chat message: a list of ``{name:
    arguments}`` (arguments as JSON text or an object), or text when no call was made."""
    if isinstance(result, str):
        return chat_proposal([], text=result)
    if isinstance(result, dict):
        result = [result]
    if not isinstance(result, list):
        return chat_proposal([], text=json.dumps(result))
    calls: list[tuple[str, Any]] = []
    for item in result:
        if isinstance(item, dict):
            for name, args in item.items():
                calls.append((names.get(name, name), args))
        else:
            return chat_proposal([], text=json.dumps(result))
    return chat_proposal(calls)


def _files(data_dir: Path, category: str) -> tuple[Path, Path | None]:
    exact = re.compile(rf"BFCL_v(\d+)_{re.escape(category)}\.json")
    found = sorted(
        (p for p in data_dir.glob("BFCL_v*.json") if exact.fullmatch(p.name)),
        key=lambda p: int(exact.fullmatch(p.name).group(1)),  # type: ignore[union-attr]
    )
    if not found:
        raise InputError(
            f"no question file BFCL_v*_{category}.json for category {category!r}",
            source=str(data_dir),
        )
    questions = found[-1]
    answers = data_dir / "possible_answer" / questions.name
    return questions, answers if answers.exists() else None


def _results(paths: Sequence[Path]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for path in paths:
        for number, entry in read_jsonl(path):
            if (
                not isinstance(entry, dict)
                or not isinstance(entry.get("id"), str)
                or "result" not in entry
            ):
                raise InputError(
                    'a model result must be {"id", "result"}', source=str(path), line=number
                )
            results[entry["id"]] = entry["result"]
    return results


def bfcl_cases(
    data_dir: Path,
    categories: Sequence[str] = CATEGORIES,
    *,
    results: Sequence[Path] = (),
    normalize: bool = False,
    stats: ImportStats | None = None,
) -> Iterator[dict[str, Any]]:
    """Every case of ``categories``, in file order."""
    stats = stats or ImportStats()
    answers_by_id = _results(results) if results else None
    for category in categories:
        questions, answer_file = _files(data_dir, category)
        answers = (
            {a.get("id"): (n, a) for n, a in read_jsonl(answer_file) if isinstance(a, dict)}
            if answer_file is not None
            else {}
        )
        for number, question in read_jsonl(questions):
            where = f"{questions}:{number}"
            if not isinstance(question, dict) or not isinstance(question.get("id"), str):
                raise InputError(
                    "a question must be an object with an 'id'", source=str(questions), line=number
                )
            case_id = question["id"]
            functions_value = question.get("function", [])
            functions = functions_value if isinstance(functions_value, list) else [functions_value]
            by_name = {
                f["name"]: f
                for f in functions
                if isinstance(f, dict) and isinstance(f.get("name"), str)
            }
            names = tool_names(list(by_name))
            if answer_file is not None and case_id not in answers:
                stats.skip("without a possible answer")
                continue
            truth = answers[case_id][1].get("ground_truth", []) if answer_file is not None else []
            try:
                calls, own = _expected_calls(truth, by_name, names, where)
            except _NoAnswer:
                stats.skip("whose ground truth lists no acceptable value for a parameter")
                continue
            except ValueError as error:
                raise InputError(str(error)) from None
            if answers_by_id is not None:
                if case_id not in answers_by_id:
                    stats.skip("without a model result")
                    continue
                proposal = _result_proposal(answers_by_id[case_id], names)
            else:
                proposal = chat_proposal(own)
            expect: dict[str, Any] = {"calls": calls}
            if normalize:
                expect["normalize"] = ["case", "whitespace", "punctuation"]
            renamed = {new: old for old, new in names.items() if new != old}
            stats.cases += 1
            yield {
                "id": case_id,
                "proposal": proposal,
                "expect": expect,
                "tools": [_tool(by_name[old], new) for old, new in names.items()],
                "meta": {"source": "bfcl", "category": category, "tool_names": renamed},
            }


def import_bfcl(
    data_dir: Path,
    out: IO[str],
    categories: Sequence[str] = CATEGORIES,
    *,
    results: Sequence[Path] = (),
    normalize: bool = False,
) -> ImportStats:
    """Write the cases to ``out``; returns what was written and skipped."""
    if not data_dir.is_dir():
        raise InputError("not a directory (expected BFCL's data folder)", source=str(data_dir))
    stats = ImportStats()
    for case in bfcl_cases(data_dir, categories, results=results, normalize=normalize, stats=stats):
        write_case(out, case)
    return stats
