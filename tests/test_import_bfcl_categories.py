"""Every BFCL category: relevance and irrelevance, Java and JavaScript, 64-character
names, and the categories refused by name (fixture slices of bfcl-eval's data under
tests/fixtures/bfcl/, copied unchanged)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from txcheck.cli import main
from txcheck.importers.bfcl import REFUSED, SUPPORTED, bfcl_cases
from txcheck.importers.common import chat_proposal, tool_names
from txcheck.scoring.cases import parse_cases
from txcheck.scoring.scorer import CaseResult, score_file

BFCL = Path(__file__).resolve().parent / "fixtures" / "bfcl"


def _score(cases: list[dict[str, Any]]) -> dict[str, CaseResult]:
    report = score_file(None, parse_cases("\n".join(json.dumps(c) for c in cases), source="t"))
    assert report.errors == ()
    return {r.id: r for r in report.cases}


def _codes(result: CaseResult) -> list[str]:
    return [v.code for v in result.strict.violations]


def _calling(case: dict[str, Any], *calls: tuple[str, dict[str, Any]], suffix: str) -> Any:
    return {**case, "id": f"{case['id']}#{suffix}", "proposal": chat_proposal(list(calls))}


def test_live_relevance_expects_a_call_and_any_call_is_right() -> None:
    [case] = bfcl_cases(BFCL, ["live_relevance"])
    assert case["expect"] == {"calls": [], "any_call": True}
    [tool] = case["tools"]
    name = tool["function"]["name"]
    right = _calling(case, (name, {"query": "Hyderabad weather"}), suffix="call")
    results = _score([case, right])
    assert results[right["id"]].strict.passed, results[right["id"]].strict.violations
    assert results[right["id"]].strict.tool_selection == 1.0
    silent = results[case["id"]]  # the ground-truth proposal: no call, which BFCL fails
    assert _codes(silent) == ["missing_call"] and not silent.strict.veto
    assert silent.strict.irrelevance is None


def test_live_relevance_model_results_are_scored_as_bfcl_does(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    results.write_text(
        json.dumps({"id": "live_relevance_2-2-0", "result": [{"search_web": '{"query": "x"}'}]})
        + "\n"
    )
    [case] = bfcl_cases(BFCL, ["live_relevance"], results=[results])
    assert _score([case])["live_relevance_2-2-0"].strict.passed


def test_any_call_still_vetoes_a_forbidden_tool_and_is_checked_when_read() -> None:
    [case] = bfcl_cases(BFCL, ["live_relevance"])
    name = case["tools"][0]["function"]["name"]
    forbidden = _calling(case, (name, {"query": "x"}), suffix="f")
    forbidden["expect"] = {"calls": [], "any_call": True, "forbidden": [name]}
    result = _score([forbidden])[forbidden["id"]]
    assert result.strict.veto and _codes(result) == ["forbidden_tool"]
    bad = [
        {**case, "id": "a", "expect": {"calls": [], "any_call": "yes"}},
        {**case, "id": "b", "expect": {"calls": [{"name": name}], "any_call": True}},
    ]
    report = score_file(None, parse_cases("\n".join(json.dumps(c) for c in bad), source="t"))
    assert [e.message for e in report.errors] == [
        "'expect.any_call' must be true or false (got 'yes')",
        "'expect.any_call' needs 'calls': [] (it means any call is right)",
    ]


def test_live_irrelevance_with_no_function_offered_is_a_case_not_a_bad_line() -> None:
    cases = {c["id"]: c for c in bfcl_cases(BFCL, ["live_irrelevance"])}
    empty = cases["live_irrelevance_120-9-0"]
    assert empty["tools"] == [] and empty["expect"] == {"calls": []}
    call = _calling(empty, ("anything", {}), suffix="call")
    results = _score([*cases.values(), call])
    assert all(results[i].strict.passed for i in cases)
    assert _codes(results[call["id"]]) == ["unknown_tool", "unexpected_call"]


def test_names_up_to_64_characters_are_kept_whole() -> None:
    cases = {c["id"]: c for c in bfcl_cases(BFCL, ["live_multiple"])}
    case = cases["live_multiple_991-222-0"]
    names = sorted(t["function"]["name"] for t in case["tools"])
    assert "website_configuration_api_WebsiteConfigurationApi_rename_website" in names
    assert max(len(n) for n in names) == 64
    # BFCL's function-calling runs send the full name: a result with it is right
    full = "website_configuration_api_WebsiteConfigurationApi_rename_website"
    right = _calling(case, (full, {"websiteId": "1234", "name": "Bob"}), suffix="r")
    assert _score([right])[right["id"]].strict.passed


def test_clashing_long_names_stay_within_64_characters() -> None:
    long = "a" * 70
    out = tool_names([long, "a" * 64 + ".", "b" * 64])
    assert out == {long: "a" * 64, "a" * 64 + ".": "a" * 62 + "_2", "b" * 64: "b" * 64}
    assert all(len(n) <= 64 for n in out.values())


def test_java_and_javascript_load_and_their_ground_truth_passes() -> None:
    cases = list(bfcl_cases(BFCL, ["simple_java", "simple_javascript"]))
    assert [c["id"] for c in cases] == [
        "simple_java_1",
        "simple_java_26",
        "simple_javascript_5",
        "simple_javascript_12",
    ]
    params = cases[1]["tools"][0]["function"]["parameters"]["properties"]
    assert params["concurrency"]["type"] == ["integer", "string"]  # a value or source text
    results = _score(cases)
    assert results["simple_java_1"].strict.passed  # a HashMap's members, one level deep
    assert results["simple_java_26"].strict.passed  # ResultSet.CONCUR_READ_ONLY for an int
    assert results["simple_javascript_12"].strict.passed
    # a nested member is not source text in BFCL's own schema: its ground truth breaks it
    assert set(_codes(results["simple_javascript_5"])) == {"type_mismatch"}


def test_an_unknown_parameter_type_is_left_open_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    (data / "possible_answer").mkdir(parents=True)
    params = {"type": "dict", "properties": {"w": {"type": "Widget"}, "n": {"type": "long"}}}
    question = {"id": "simple_java_0", "function": [{"name": "f", "parameters": params}]}
    (data / "BFCL_v4_simple_java.json").write_text(json.dumps(question) + "\n")
    answer = {"id": "simple_java_0", "ground_truth": [{"f": {"w": ["w1"], "n": [5]}}]}
    (data / "possible_answer" / "BFCL_v4_simple_java.json").write_text(json.dumps(answer))
    out = tmp_path / "c.jsonl"
    argv = ["import", "bfcl", str(data), "--category", "simple_java", "--out", str(out)]
    assert main(argv) == 0
    assert capsys.readouterr().err.splitlines() == [
        "txcheck import bfcl: warning: simple_java: parameter type 'Widget' is not a JSON "
        "type; left open (1 case(s))",
        f"txcheck import bfcl: {out}: 1 case(s) written",
    ]
    [case] = [json.loads(line) for line in out.read_text().splitlines()]
    schema = case["tools"][0]["function"]["parameters"]["properties"]
    assert schema == {"w": {}, "n": {"type": ["integer", "string"]}}


@pytest.mark.parametrize("category", [*REFUSED, "multi_turn_composite"])
def test_categories_that_are_not_call_data_are_refused_by_name(
    category: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "c.jsonl"
    assert main(["import", "bfcl", str(BFCL), "--category", category, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"txcheck import: error: --category: BFCL category {category!r} ")
    assert "cannot be imported (" in err and err.count("\n") == 1
    assert "not valid JSON" not in err and "<input>" not in err
    assert not out.exists()


def test_all_names_every_importable_category(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "possible_answer").mkdir(parents=True)
    for category in SUPPORTED:
        (data / f"BFCL_v4_{category}.json").write_text("")
        (data / "possible_answer" / f"BFCL_v4_{category}.json").write_text("")
    assert list(bfcl_cases(data, ["all", "simple_python"])) == []
    (data / "possible_answer" / "BFCL_v4_multiple.json").unlink()
    with pytest.raises(Exception, match="no possible-answer file for category 'multiple'"):
        list(bfcl_cases(data, ["multiple"]))


def test_a_malformed_possible_answer_names_its_file_and_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "possible_answer").mkdir(parents=True)
    (data / "BFCL_v4_simple_python.json").write_text('{"id": "a", "function": []}\n')
    answers = data / "possible_answer" / "BFCL_v4_simple_python.json"
    answers.write_text('\n{"id": "a", "ground_truth": ["Michael"]}\n')
    with pytest.raises(Exception) as caught:
        list(bfcl_cases(data, ["simple_python"]))
    assert str(caught.value) == (
        f"{answers}:2: a: ground_truth[0] must be {{function: {{param: [values]}}}}"
    )
