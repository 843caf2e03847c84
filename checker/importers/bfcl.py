"""Berkeley Function Calling Leaderboard (BFCL) data as txcheck cases.

BFCL ships, per category, a question file ``BFCL_v<N>_<category>.json`` and a
possible-answer file ``possible_answer/BFCL_v<N>_<category>.json``, both JSON Lines:

- a question: ``{"id", "question", "function": [{"name", "description", "parameters":
  {"type": "dict", "properties", "required"}}]}``, with BFCL's own type names per language
  (``txcheck.importers.bfcl_schema``) and dotted function names (``math.factorial``);
- a possible answer: ``{"id", "ground_truth": [{"<function>": {"<param>": [v1, v2, ...]}}]}``:
  every listed value is acceptable, and ``""`` in the list marks the parameter optional.

Each question becomes one case: ``tools`` are the functions as OpenAI tools with their
parameters turned into JSON Schema and names made valid (``math.factorial`` ->
``math_factorial``, kept whole up to 64 characters as BFCL sends them; the renaming is
recorded in ``meta.tool_names``); ``expect.calls`` are the ground truth with ``$any`` for
several acceptable values and ``$optional`` for ``""``; parallel calls are order-free, as
in BFCL. Each tool is marked ``repeatable`` in ``x-txcheck``: BFCL's answers may make the
same call twice, which it accepts (txcheck would otherwise take an undescribed tool for a
write, and a keyless repeat for a second effect).

The categories without a possible-answer file are BFCL's relevance checks: in
``irrelevance`` and ``live_irrelevance`` no call is right (``"calls": []``; a question
that offers no function at all gets ``"tools": []``), in ``live_relevance`` any call is
right (``"any_call": true``: BFCL asks only that the model call one of the functions).
The multi-turn, memory, web-search and format-sensitivity categories are judged by BFCL on
what its own Python classes or a live search return, not on data: they are refused by
name (``REFUSED``), never imported as something else.

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

from txcheck.importers.bfcl_schema import (
    NoAnswer,
    convert_parameters,
    convert_schema,
    expected_calls,
    language_of,
)
from txcheck.importers.common import ImportStats, chat_proposal, read_jsonl, tool_names, write_case
from txcheck.models.errors import InputError

__all__ = [
    "CATEGORIES",
    "REFUSED",
    "SUPPORTED",
    "bfcl_cases",
    "check_categories",
    "convert_schema",
    "import_bfcl",
]

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
"""The categories imported when none is named: the single-turn AST categories of Python
functions with function-calling ground truth."""

SUPPORTED = (
    *CATEGORIES,
    "simple_java",
    "simple_javascript",
    "irrelevance",
    "live_irrelevance",
    "live_relevance",
)
"""Every category that can be imported (``--category all`` names them all)."""

_NOT_DATA = "BFCL judges it by the state its own Python classes reach"
REFUSED = {
    "multi_turn_base": f"multi-turn: {_NOT_DATA} after each turn, not by comparing calls",
    "multi_turn_miss_func": f"multi-turn: {_NOT_DATA} after each turn, not by comparing calls",
    "multi_turn_miss_param": f"multi-turn: {_NOT_DATA} after each turn, not by comparing calls",
    "multi_turn_long_context": (f"multi-turn: {_NOT_DATA} after each turn, not by comparing calls"),
    "memory": "agentic: its answer is text checked against remembered facts, not a call",
    "web_search": "agentic: its answer is text found through a live web search, not a call",
    "format_sensitivity": (
        "a list of other categories' ids to re-prompt in other formats, not questions"
    ),
}
"""Categories BFCL ships that are not single-turn function calls, and why."""

_RELEVANCE = {"irrelevance": False, "live_irrelevance": False, "live_relevance": True}
"""Categories without a possible answer: whether a call is expected (any call)."""


def check_categories(categories: Sequence[str]) -> tuple[str, ...]:
    """``categories`` with ``all`` expanded and duplicates dropped; a refused category is
    an ``InputError`` naming it and why."""
    out: list[str] = []
    for category in categories:
        names = SUPPORTED if category == "all" else (category,)
        for name in names:
            if name.startswith("multi_turn") and name not in REFUSED:
                why = f"multi-turn: {_NOT_DATA} after each turn, not by comparing calls"
            else:
                why = REFUSED.get(name, "")
            if why:
                raise InputError(
                    f"BFCL category {name!r} cannot be imported ({why}); importable: "
                    f"{', '.join(SUPPORTED)}",
                    source="--category",
                )
            if name not in out:
                out.append(name)
    return tuple(out)


def _tool(function: Mapping[str, Any], name: str, parameters: Any) -> dict[str, Any]:
    if isinstance(parameters, dict):
        parameters.setdefault("type", "object")
    spec: dict[str, Any] = {"name": name, "parameters": parameters}
    if isinstance(function.get("description"), str):
        spec["description"] = function["description"]
    # BFCL accepts the same call twice (two draws of random_normalvariate with the same
    # arguments): say so, or a keyless repeat would be a duplicate_side_effect
    return {"type": "function", "function": spec, "x-txcheck": {"repeatable": True}}


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
    if category in _RELEVANCE:
        return questions, None
    if not answers.exists():
        raise InputError(
            f"no possible-answer file for category {category!r} (expected "
            f"possible_answer/{questions.name} next to the questions)",
            source=str(data_dir),
        )
    return questions, answers


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


def _answers(path: Path | None) -> dict[str, tuple[int, Any]]:
    """Each possible answer's line and ``ground_truth``, by id."""
    if path is None:
        return {}
    out: dict[str, tuple[int, Any]] = {}
    for number, entry in read_jsonl(path):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise InputError(
                "a possible answer must be an object with an 'id'", source=str(path), line=number
            )
        truth = entry.get("ground_truth", [])
        if not isinstance(truth, list):
            raise InputError(
                f"'ground_truth' must be a list of calls (got {type(truth).__name__})",
                source=str(path),
                line=number,
            )
        out[entry["id"]] = (number, truth)
    return out


def bfcl_cases(
    data_dir: Path,
    categories: Sequence[str] = CATEGORIES,
    *,
    results: Sequence[Path] = (),
    normalize: bool = False,
    stats: ImportStats | None = None,
) -> Iterator[dict[str, Any]]:
    """Every case of ``categories``, in file order (a refused category is an
    ``InputError`` before anything is read)."""
    stats = stats or ImportStats()
    categories = check_categories(categories)
    answers_by_id = _results(results) if results else None
    for category in categories:
        questions, answer_file = _files(data_dir, category)
        answers = _answers(answer_file)
        language = language_of(category)
        for number, question in read_jsonl(questions):
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
            unknown: set[str] = set()
            parameters = {
                old: convert_parameters(f.get("parameters") or {}, language, unknown)
                for old, f in by_name.items()
            }
            expect: dict[str, Any]
            if answer_file is None:
                own: list[tuple[str, dict[str, Any]]] = []
                expect = {"calls": []}
                if _RELEVANCE[category]:
                    expect["any_call"] = True
            else:
                if case_id not in answers:
                    stats.skip("without a possible answer")
                    continue
                line, truth = answers[case_id]
                try:
                    calls, own = expected_calls(truth, parameters, names, case_id)
                except NoAnswer:
                    stats.skip("whose ground truth lists no acceptable value for a parameter")
                    continue
                except ValueError as error:
                    raise InputError(str(error), source=str(answer_file), line=line) from None
                expect = {"calls": calls}
            if answers_by_id is not None:
                if case_id not in answers_by_id:
                    stats.skip("without a model result")
                    continue
                proposal = _result_proposal(answers_by_id[case_id], names)
            else:
                proposal = chat_proposal(own)
            if normalize:
                expect["normalize"] = ["case", "whitespace", "punctuation"]
            for kind in sorted(unknown):
                stats.warn(f"{category}: parameter type {kind!r} is not a JSON type; left open")
            renamed = {new: old for old, new in names.items() if new != old}
            stats.cases += 1
            yield {
                "id": case_id,
                "proposal": proposal,
                "expect": expect,
                "tools": [_tool(by_name[old], new, parameters[old]) for old, new in names.items()],
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
