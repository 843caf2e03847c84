"""``txcheck import bfcl`` and ``txcheck import tau2`` on small fixtures shaped like the
real files (tests/fixtures/), and the imported cases scored end to end."""

from __future__ import annotations

import copy
import io
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from txcheck.cli import main
from txcheck.importers.bfcl import bfcl_cases, convert_schema
from txcheck.importers.common import is_imported_cases, tool_names
from txcheck.importers.tau2 import tau2_cases
from txcheck.scoring.cases import parse_cases
from txcheck.scoring.scorer import CaseResult, score_file

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BFCL = FIXTURES / "bfcl"
CATEGORIES = ("simple_python", "parallel", "live_multiple")


def _score(cases: list[dict[str, Any]]) -> dict[str, CaseResult]:
    text = "\n".join(json.dumps(c) for c in cases)
    report = score_file(None, parse_cases(text, source="imported"))
    assert report.errors == ()
    return {r.id: r for r in report.cases}


def _codes(result: CaseResult) -> list[str]:
    return [v.code for v in result.strict.violations]


def _proposal_args(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(c["function"]["arguments"]) for c in case["proposal"]["tool_calls"]]


def _with_args(case: dict[str, Any], *args: dict[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(case)
    for call, arguments in zip(changed["proposal"]["tool_calls"], args, strict=True):
        call["function"]["arguments"] = json.dumps(arguments)
    return changed


BFCL_CASES = list(bfcl_cases(BFCL, CATEGORIES))
BY_ID = {c["id"]: c for c in BFCL_CASES}


def test_bfcl_shapes_tools_and_expectations() -> None:
    case = BY_ID["simple_python_2"]
    [tool] = case["tools"]
    assert tool["function"]["name"] == "weather_get"
    assert case["meta"] == {
        "source": "bfcl",
        "category": "simple_python",
        "tool_names": {"weather_get": "weather.get"},
    }
    params = tool["function"]["parameters"]
    assert params["type"] == "object"
    assert params["properties"]["days"]["type"] == "number"
    assert "type" not in params["properties"]["extra"]
    assert case["expect"]["calls"] == [
        {
            "name": "weather_get",
            "arguments": {
                "city": {"$any": ["Boston", "Boston, MA"]},
                "unit": "celsius",
                "days": {"$optional": 1.0},
                "extra": {"$optional": ""},
            },
        }
    ]
    nested = BY_ID["live_multiple_0-0-0"]["expect"]["calls"][0]["arguments"]
    assert nested["new_preferences"] == {
        "size": "large",
        "milk_type": {"$any": ["coconut", "coconut milk"]},
        "sweetness_level": {"$optional": "regular"},
    }


def test_convert_schema_maps_bfcl_types_everywhere() -> None:
    schema = {
        "type": "dict",
        "properties": {
            "t": {"type": "tuple", "items": {"type": "float"}},
            "d": {"type": "dict", "properties": {"a": {"type": "any"}}},
        },
    }
    assert convert_schema(schema) == {
        "type": "object",
        "properties": {
            "t": {"type": "array", "items": {"type": "number"}},
            "d": {"type": "object", "properties": {"a": {}}},
        },
    }


def test_tool_names_are_valid_and_unique() -> None:
    assert tool_names(["a.b", "a_b", "c d", "ok-1"]) == {
        "a.b": "a_b",
        "a_b": "a_b_2",
        "c d": "c_d",
        "ok-1": "ok-1",
    }


def test_the_ground_truth_passes_on_every_schema_valid_case() -> None:
    results = _score(BFCL_CASES)
    for case_id, result in results.items():
        if result.strict.schema_valid:
            assert result.strict.passed, (case_id, result.strict.violations)
    broken = results["simple_python_3"]  # its ground truth gives a string for an integer
    assert not broken.strict.schema_valid and _codes(broken) == ["type_mismatch"]
    assert sum(r.strict.passed for r in results.values()) == len(results) - 1


def test_another_acceptable_value_or_a_left_out_optional_passes() -> None:
    weather = BY_ID["simple_python_2"]
    other = _with_args(weather, {"city": "Boston, MA", "unit": "celsius"})  # days left out
    triangle = _with_args(BY_ID["simple_python_0"], {"base": 10, "height": 5})  # unit left out
    parallel = _with_args(
        BY_ID["parallel_0"],
        {"artist": "Maroon5", "duration": 15},  # the other listed spelling, and reordered
        {"artist": "Taylor Swift", "duration": 20},
    )
    results = _score([other, triangle, parallel])
    assert all(r.strict.passed for r in results.values()), results


def test_the_same_call_twice_is_an_accepted_bfcl_answer() -> None:
    """BFCL accepts two identical calls (two random draws); the imported tools say so
    (``repeatable``), so a keyless repeat is not a duplicate side effect."""
    case = BY_ID["parallel_0"]
    assert all(t.get("x-txcheck") == {"repeatable": True} for t in case["tools"])
    same = {"artist": "Taylor Swift", "duration": 20}
    twice = copy.deepcopy(case)
    twice["id"] = "twice"
    twice["expect"]["calls"] = [
        {"name": twice["expect"]["calls"][0]["name"], "arguments": same}
    ] * 2
    twice = _with_args(twice, same, same)
    result = _score([twice])["twice"]
    assert "duplicate_side_effect" not in _codes(result)
    assert result.strict.passed, result.strict.violations
    undescribed = copy.deepcopy(twice)
    for tool in undescribed["tools"]:
        del tool["x-txcheck"]
    assert "duplicate_side_effect" in _codes(_score([undescribed])["twice"])


def test_a_proposal_breaking_the_schema_fails_with_its_code() -> None:
    weather = BY_ID["simple_python_2"]
    results = _score(
        [
            _with_args(weather, {"city": "Boston", "unit": "kelvin"}),
            {**_with_args(BY_ID["simple_python_0"], {"base": "10", "height": 5}), "id": "t"},
            {**_with_args(weather, {"city": "Boston", "unit": "celsius", "x": 1}), "id": "u"},
        ]
    )
    assert _codes(results["simple_python_2"])[0] == "enum_violation"
    assert _codes(results["t"])[0] == "type_mismatch"
    assert _codes(results["u"])[0] == "wrong_arguments"  # bfcl tools are not strict


def test_bfcl_model_results_become_the_proposals() -> None:
    cases = list(bfcl_cases(BFCL, CATEGORIES, results=[BFCL / "results.json"]))
    assert [c["id"] for c in cases] == [
        "simple_python_0",
        "simple_python_1",
        "simple_python_2",
        "parallel_0",
        "live_multiple_0-0-0",
    ]  # simple_python_3 has no result
    results = _score(cases)
    assert results["simple_python_0"].strict.passed
    assert results["simple_python_1"].strict.passed  # dotted name given as BFCL's underscore form
    assert _codes(results["simple_python_2"])[0] == "enum_violation"
    assert results["parallel_0"].strict.passed
    assert _codes(results["live_multiple_0-0-0"]) == ["missing_call"]


def test_normalize_is_declared_when_asked_for() -> None:
    [case] = list(bfcl_cases(BFCL, ("parallel",), normalize=True))
    assert case["expect"]["normalize"] == ["case", "whitespace", "punctuation"]
    loose = _with_args(
        case, {"artist": "taylor swift", "duration": 20}, {"artist": "MAROON-5", "duration": 15}
    )
    assert _score([loose])["parallel_0"].strict.passed


def test_import_command_writes_deterministic_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cases.jsonl"
    argv = ["import", "bfcl", str(BFCL), "--out", str(out)]
    assert main([*argv, *(x for c in CATEGORIES for x in ("--category", c))]) == 0
    first = out.read_bytes()
    assert main([*argv, *(x for c in CATEGORIES for x in ("--category", c))]) == 0
    assert out.read_bytes() == first
    assert first.count(b"\n") == 7
    assert str(tmp_path) not in first.decode()
    assert "7 case(s) written" in capsys.readouterr().err
    assert main(["score", str(out), "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert (summary["cases"], summary["passed"], summary["errors"]) == (7, 6, 0)


def test_import_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    (data / "possible_answer").mkdir(parents=True)
    (data / "BFCL_v4_simple_python.json").write_text('{"id": "a", "function": []}\n{oops\n')
    (data / "possible_answer" / "BFCL_v4_simple_python.json").write_text("")
    out = tmp_path / "cases.jsonl"
    assert (
        main(["import", "bfcl", str(data), "--out", str(out), "--category", "simple_python"]) == 2
    )
    err = capsys.readouterr().err
    assert err.startswith(f"txcheck import: error: {data / 'BFCL_v4_simple_python.json'}:2: ")
    assert err.count("\n") == 1
    assert not out.exists() and list(tmp_path.iterdir()) == [data]
    assert main(["import", "bfcl", str(data), "--out", str(out), "--category", "nope"]) == 2
    assert "no question file BFCL_v*_nope.json" in capsys.readouterr().err


# -- tau2-bench ----------------------------------------------------------------------------


def test_tau2_tasks_become_cases_with_the_domain_tools() -> None:
    cases = list(tau2_cases(FIXTURES / "tau2" / "shop"))
    assert [c["id"] for c in cases] == ["shop:0", "shop:1", "shop:2"]
    nothing = cases.pop(0)  # no agent action: nothing is written (the tools are bare writes)
    assert nothing["expect"] == {
        "calls": [],
        "forbidden": ["exchange_items", "find_user", "transfer_to_human"],
    }
    first = cases[0]
    assert [c["name"] for c in first["expect"]["calls"]] == ["find_user", "exchange_items"]
    assert first["expect"]["calls"][1]["arguments"]["note"] == {"$optional": "size"}
    assert first["meta"] == {"source": "tau2", "domain": "shop", "task_id": "1"}
    results = _score(cases)
    assert results["shop:1"].strict.passed
    assert _codes(results["shop:2"])[0] == "type_mismatch"  # its ground truth breaks the schema


def test_tau2_needs_the_tool_schemas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tasks.json").write_text("[]")
    assert main(["import", "tau2", str(tmp_path), "--out", str(tmp_path / "o.jsonl")]) == 2
    assert "no tools.json" in capsys.readouterr().err
    tools = FIXTURES / "tau2" / "shop" / "tools.json"
    out = tmp_path / "o.jsonl"
    assert main(["import", "tau2", str(tmp_path), "--tools", str(tools), "--out", str(out)]) == 0
    assert out.read_text() == ""


def test_tau2_import_then_validate_in_one_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cases.jsonl"
    assert main(["import", "tau2", str(FIXTURES / "tau2" / "shop"), "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    batch = tmp_path / "proposals.jsonl"
    batch.write_text(
        "".join(
            json.dumps({"id": c["id"], "proposal": c["proposal"], "tools": c["tools"]}) + "\n"
            for c in lines
        )
    )
    capsys.readouterr()
    assert main(["validate", "--jsonl", str(batch), "--json"]) == 1
    records = [json.loads(x) for x in io.StringIO(capsys.readouterr().out)]
    assert [r.get("valid") for r in records[:-1]] == [True, True, False]


def test_an_output_that_cannot_be_written_is_one_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "taken"
    folder.mkdir()
    shop = str(FIXTURES / "tau2" / "shop")
    assert main(["import", "tau2", shop, "--out", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err == f"txcheck import: error: {folder}: is a folder\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
    assert main(["import", "tau2", shop, "--out", str(tmp_path / "no" / "c.jsonl")]) == 2
    assert f"the folder {tmp_path / 'no'} does not exist" in capsys.readouterr().err


# -- what --out may replace (hostile corpus) ------------------------------------------------

SHOP = str(FIXTURES / "tau2" / "shop")


def _refused(out: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert main(["import", "tau2", SHOP, "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"txcheck import: error: {out}: "), err
    return err


def test_out_refuses_a_named_pipe_and_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "cases.jsonl"
    os.mkfifo(fifo)
    for extra in ((), ("--force",)):
        assert "is a named pipe, not a regular file" in _refused(fifo, capsys, *extra)
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["cases.jsonl"]  # no temporary file left


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_out_refuses_a_device_and_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As root, --out /dev/null used to replace the device with a regular file: here a
    copy of /dev/null's node (1, 3) of the test's own stands for it."""
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    for extra in ((), ("--force",)):
        assert "is a character device, not a regular file" in _refused(null, capsys, *extra)
        assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_out_keeps_an_unrelated_file_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": true}\n')
    err = _refused(notes, capsys)
    assert "exists and is not a cases file txcheck import wrote" in err and "--force" in err
    assert notes.read_text() == '{"mine": true}\n'
    hand_written = tmp_path / "cases.jsonl"  # a scorer cases file, but not an import's
    hand_written.write_text(json.dumps({"id": "a", "proposal": {}, "expect": {}}) + "\n")
    _refused(hand_written, capsys)
    assert main(["import", "tau2", SHOP, "--out", str(notes), "--force"]) == 0
    assert [json.loads(x)["id"] for x in notes.read_text().splitlines()] == [
        "shop:0",
        "shop:1",
        "shop:2",
    ]


def test_out_replaces_its_own_previous_output_and_an_empty_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cases.jsonl"
    out.write_text("")
    assert main(["import", "tau2", SHOP, "--out", str(out)]) == 0
    first = out.read_bytes()
    assert main(["import", "bfcl", str(BFCL), "--category", "parallel", "--out", str(out)]) == 0
    assert out.read_bytes() != first and b'"source":"bfcl"' in out.read_bytes()
    assert is_imported_cases(out) and is_imported_cases(tmp_path / "empty.jsonl") is False


def test_out_refuses_a_symbolic_link_and_force_replaces_the_link_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside.jsonl"
    assert main(["import", "tau2", SHOP, "--out", str(outside)]) == 0
    before = outside.read_bytes()
    capsys.readouterr()
    link = tmp_path / "link.jsonl"
    link.symlink_to(outside)
    assert "is a symbolic link" in _refused(link, capsys)
    argv = ["import", "bfcl", str(BFCL), "--category", "parallel", "--out", str(link)]
    assert main([*argv, "--force"]) == 0
    assert not link.is_symlink() and outside.read_bytes() == before
