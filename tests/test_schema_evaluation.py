"""Schema evaluation is bounded and exact on hostile model output (tests/hostile_schemas.py):
patterns run on a linear-time engine, ``uniqueItems`` hashes each item once, and
``multipleOf`` is exact decimal arithmetic. Each test asserts the verdict, and that the
quadratic or backtracking path (jsonschema's own ``re.search`` and ``uniq``) was never
taken: work done, not wall time."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import attrs
import jsonschema._format
import jsonschema._keywords
import jsonschema._utils
import pytest

from tests.hostile_schemas import CORPUS, Hostile
from tests.strategies import call
from txcheck.cli import main
from txcheck.models.errors import ContractError
from txcheck.models.plan import schema_errors
from txcheck.models.plan.contract import Contract, Tool
from txcheck.models.plan.contract_loader import parse_contract
from txcheck.models.plan.schema_check import compile_contract

ROOT = Path(__file__).resolve().parent.parent


class _NoBacktracking:
    """Stands in for the ``re`` module inside jsonschema and the error mapper: any call
    means a pattern met model output on Python's backtracking engine."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"re.{name} was used on model output")


@pytest.fixture
def linear_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's ``re`` and jsonschema's quadratic ``uniq`` are off limits."""
    for module in (jsonschema._keywords, jsonschema._utils, jsonschema._format, schema_errors):
        monkeypatch.setattr(module, "re", _NoBacktracking())

    def quadratic(*args: Any) -> Any:
        raise AssertionError("jsonschema's pairwise uniq was used")

    monkeypatch.setattr(jsonschema._keywords, "uniq", quadratic)


def _found(violations: Any) -> tuple[tuple[str, str], ...]:
    return tuple((v.code, v.message.split(":", 1)[0]) for v in violations)


@pytest.mark.parametrize("hostile", CORPUS, ids=lambda h: h.name)
@pytest.mark.usefixtures("linear_only")
def test_hostile_arguments_get_the_right_verdict_on_every_path(hostile: Hostile) -> None:
    contract = Contract(tools={"t": Tool(name="t", parameters=hostile.schema)})
    compiled = compile_contract(contract)
    one = call("c1", "t", hostile.arguments)
    first = compiled.check(one)  # jsonschema alone
    assert _found(first) == hostile.expected
    assert compiled.check(one) == first  # later calls: jsonschema-rs where it is used
    assert attrs.evolve(compiled, fast={}).check(one) == first


@pytest.mark.usefixtures("linear_only")
def test_hostile_arguments_through_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole corpus as one contract and one plan, through the command."""
    tools = [
        {"type": "function", "function": {"name": f"t{i}", "parameters": h.schema}}
        for i, h in enumerate(CORPUS)
    ]
    calls = [
        {
            "id": f"{turn}{i}",
            "type": "function",
            "function": {"name": f"t{i}", "arguments": json.dumps(h.arguments)},
        }
        for turn in ("first", "later")
        for i, h in enumerate(CORPUS)
    ]
    (tmp_path / "contract.json").write_text(json.dumps({"tools": tools}), "utf-8")
    plan = {"role": "assistant", "tool_calls": calls}
    (tmp_path / "plan.json").write_text(json.dumps(plan), "utf-8")
    argv = ["validate", str(tmp_path / "contract.json"), str(tmp_path / "plan.json"), "--json"]
    assert main(argv) == 1
    violations = json.loads(capsys.readouterr().out)["violations"]
    for i, hostile in enumerate(CORPUS):
        for call_id in (f"first{i}", f"later{i}"):
            got = tuple(
                (v["code"], v["message"].split(":", 1)[0])
                for v in violations
                if v["call"] == call_id and v["level"] == "schema"
            )
            assert got == hostile.expected, (hostile.name, call_id)


def test_the_posix_class_pattern_loads_without_a_warning() -> None:
    """``[[:digit:]]`` is no POSIX class in ECMA-262: a class of ``[:digt`` then ``]``.
    Python's ``re`` would warn (a FutureWarning, an error under pytest) and read it the
    same way; txcheck never hands it to Python's ``re``."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        contract = parse_contract(
            {"tools": [{"name": "t", "input_schema": _pattern("[[:digit:]]")}]}, source="c.json"
        )
        compiled = compile_contract(contract)
        assert [v.code for v in compiled.check(call("c1", "t", {"s": "5"}))] == ["out_of_range"]
        assert compiled.check(call("c1", "t", {"s": "d]"})) == []


def _pattern(pattern: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("^(?=.*[A-Z]).{8,}$", "look-around"),
        ("(?<!x)y", "look-around"),
        ("^(a)\\1$", "backreference"),
        ("^(?<n>a)\\k<n>$", "backreference"),
        ("^[\\d-z]$", "is not a regular expression"),  # ECMA-262 allows it; the engine not
        ("(", "is not a regular expression"),
    ],
)
def test_patterns_the_linear_engine_cannot_run_are_refused_at_load(pattern: str, says: str) -> None:
    with pytest.raises(ContractError) as caught:
        parse_contract(
            {"tools": [{"name": "t", "input_schema": _pattern(pattern)}]}, source="c.json"
        )
    error = caught.value
    assert error.path == "$.tools[0].input_schema.properties.s.pattern"
    assert says in error.problem, error.problem
    assert repr(pattern) in error.problem or json.dumps(pattern) in error.problem


def test_a_pattern_properties_key_the_engine_cannot_run_is_refused_at_load() -> None:
    schema = {"type": "object", "patternProperties": {"^(?!x)": {}}}
    with pytest.raises(ContractError) as caught:
        parse_contract({"tools": [{"name": "t", "input_schema": schema}]}, source="c.json")
    assert caught.value.path == '$.tools[0].input_schema.patternProperties["^(?!x)"]'
    assert "look-around" in caught.value.problem


def test_the_regex_format_is_judged_without_python_re(linear_only: None) -> None:
    """``format: regex`` on model output: valid ECMA-262 or not, decided by the Rust
    engine's parser (no matching), never by compiling the model's text with ``re``."""
    schema = {"type": "object", "properties": {"r": {"type": "string", "format": "regex"}}}
    compiled = compile_contract(Contract(tools={"t": Tool(name="t", parameters=schema)}))
    assert compiled.check(call("c1", "t", {"r": "[[:digit:]]"})) == []
    assert compiled.check(call("c1", "t", {"r": "^(?=a)b$"})) == []  # valid ECMA-262
    assert [v.code for v in compiled.check(call("c1", "t", {"r": "(" * 3}))] == ["out_of_range"]


def test_python_re_is_really_what_the_fixture_stops() -> None:
    """Positive control: the fixture's stand-in does catch a backtracking search."""
    with pytest.raises(AssertionError, match=r"re\.search"):
        _NoBacktracking().search("a", "a")
    assert re.search(NESTED_CONTROL, "a" * 5)


NESTED_CONTROL = "^(a+)+$"


def test_explore_draws_for_an_ecma_class_pattern_without_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """hypothesis-jsonschema draws pattern strings with Python's ``re``, which warns on
    ``[[:alnum:]]`` (an error under pytest, a stray line on the user's terminal)."""
    hotel = json.loads((ROOT / "examples/contracts/hotel.json").read_text("utf-8"))
    for tool in hotel["tools"]:
        guest = tool["function"]["parameters"]["properties"].get("guest_id")
        if guest is not None:
            guest["pattern"] = "^[[:alnum:]]g[0-9]+$"
    contract = tmp_path / "hotel.json"
    contract.write_text(json.dumps(hotel), "utf-8")
    argv = ["explore", "--contract", str(contract), "--policy", "guarded", "--seed", "1"]
    assert main([*argv, "--engine", "hypothesis", "--max-examples", "5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["coverage"]["invariants"]["acceptable_outcome"] > 0
