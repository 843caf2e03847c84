"""``txcheck score``: output formats, exit codes, bad lines reported while the rest is scored."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from txcheck.cli import main
from txcheck.cli.render_score import ScoreView
from txcheck.models.plan.contract_loader import default_contract
from txcheck.scoring.cases import parse_cases
from txcheck.scoring.scorer import score_file

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = str(ROOT / "examples/checkout/contract.json")
READ = {"name": "query_logistics", "arguments": {"order_id": "ord_1"}}


def _chat(arguments: str) -> dict[str, Any]:
    function = {"name": "query_logistics", "arguments": arguments}
    return {
        "role": "assistant",
        "tool_calls": [{"id": "call_1", "type": "function", "function": function}],
    }


LINES = [
    json.dumps(
        {"id": "right", "proposal": _chat('{"order_id": "ord_1"}'), "expect": {"calls": [READ]}}
    ),
    json.dumps(
        {"id": "wrong-order-id", "proposal": _chat('{"order_id": 1}'), "expect": {"calls": [READ]}}
    ),
    "not json",
    json.dumps({"id": "unreadable", "proposal": {"answer": 42}, "expect": {"calls": [READ]}}),
]

HUMAN = """\
                         Scored cases: cases.jsonl

  case             strict   veto   violations            warnings   legacy
 ──────────────────────────────────────────────────────────────────────────
  right            pass 1   -      -                     -            1.00
  wrong-order-id   FAIL 0   -      type_mismatch         -            0.50
                                   wrong_arguments
  unreadable       FAIL 0   -      unreadable_proposal   -            0.00

                                      Violations and warnings

wrong-order-id
  type_mismatch   call_1: $.order_id: expected string, got the number 1
  wrong_arguments call_1: 'query_logistics' against expect.calls[0]: $.order_id expected the string
                  "ord_1", got the number 1

unreadable
  unreadable_proposal $.proposal: not a recognised proposal: expected an OpenAI chat message
                      ('tool_calls' or 'content'), an OpenAI completion ('choices'), OpenAI
                      Responses output ('output'), an Anthropic message ('content' list) or a Gemini
                      response ('candidates') (got an object with keys "answer")

                  Bad lines (not scored)

  line   problem
 ────────────────────────────────────────────────────────
     3   not valid JSON: column 1: expected a JSON value

                    Summary

  cases scored                              3
  strict pass rate                 0.33 (1/3)
  cases with a veto                         0
  unreadable proposals (score 0)            1
  legacy mean                            0.50
  mean tool_selection                    0.67
  mean schema_valid                      0.33
  mean exact_arguments                   0.50
  mean order                                -
  mean irrelevance                          -
  expect_invalid warnings                   0
  bad lines                                 1

Level business skipped in 2 of 3 cases: no world fixture in the case (its 'world' field).
1 bad line(s) were not scored; exit code 2.
"""


def test_human_output() -> None:
    report = score_file(default_contract(), parse_cases("\n".join(LINES), source="cases.jsonl"))
    out = io.StringIO()
    Console(file=out, color_system=None, width=100).print(ScoreView(report))
    assert "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n" == HUMAN


def _write(tmp_path: Path, lines: list[str]) -> str:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_bad_lines_are_reported_and_the_rest_is_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = _write(tmp_path, LINES)
    assert main(["score", CONTRACT, cases, "--json"]) == 2
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert captured.out == json.dumps(out, sort_keys=True, indent=2) + "\n"
    assert [c["id"] for c in out["cases"]] == ["right", "wrong-order-id", "unreadable"]
    assert [c["line"] for c in out["cases"]] == [1, 2, 4]
    assert [c["strict"]["pass"] for c in out["cases"]] == [True, False, False]
    assert [c["legacy"]["score"] for c in out["cases"]] == [1.0, 0.5, 0.0]
    assert out["errors"] == [
        {"line": 3, "message": "not valid JSON: column 1: expected a JSON value"}
    ]
    assert out["summary"]["cases"] == 3 and out["summary"]["errors"] == 1
    assert out["summary"]["pass_rate"] == pytest.approx(1 / 3)
    assert (
        captured.err
        == f"txcheck score: {cases}:3: not valid JSON: column 1: expected a JSON value\n"
    )


def test_the_strict_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", CONTRACT, _write(tmp_path, LINES[:1]), "--json"]) == 0
    [case] = json.loads(capsys.readouterr().out)["cases"]
    assert case == {
        "id": "right",
        "line": 1,
        "legacy": {"score": 1.0},
        "warnings": [],
        "normalize": [],
        "strict": {
            "pass": True,
            "score": 1.0,
            "veto": False,
            "violations": [],
            "vetoes": [],
            "tool_selection": 1.0,
            "schema_valid": True,
            "exact_arguments": 1.0,
            "order": None,
            "irrelevance": None,
            "levels_checked": ["json", "schema", "plan"],
            "levels_skipped": {"business": "no world fixture in the case (its 'world' field)"},
            "alignment": [{"expected": 0, "call": "call_1"}],
        },
    }


@pytest.mark.parametrize(("lines", "code"), [(LINES[:1], 0), (LINES[:2], 1)])
def test_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str], code: int
) -> None:
    assert main(["score", CONTRACT, _write(tmp_path, lines)]) == code
    captured = capsys.readouterr()
    assert "Summary" in captured.out
    assert captured.err == ""


@pytest.mark.parametrize("lines", [[], ["", "  "]])
def test_no_case_scored_is_inconclusive_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str]
) -> None:
    cases = _write(tmp_path, lines)
    assert main(["score", CONTRACT, cases]) == 3
    captured = capsys.readouterr()
    assert "Inconclusive: no case was scored; exit code 3." in captured.out
    assert captured.err == f"txcheck score: {cases}: inconclusive: no case was scored\n"
    assert main(["score", CONTRACT, cases, "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out == {"cases": [], "errors": [], "summary": out["summary"]}
    assert out["summary"]["cases"] == 0


def test_unreadable_inputs_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "missing.jsonl")
    assert main(["score", CONTRACT, missing]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"txcheck score: error: {missing}: cannot read the cases file: No such file or directory\n"
    )
    bad_contract = tmp_path / "contract.json"
    bad_contract.write_text("{}", encoding="utf-8")
    assert main(["score", str(bad_contract), _write(tmp_path, LINES[:1])]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"txcheck score: error: {bad_contract}") and err.count("\n") == 1


def test_the_audit_example_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", CONTRACT, str(ROOT / "examples/audit/cases.jsonl"), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [c["legacy"]["score"] for c in out["cases"]] == [1.0, 0.75, 1.0, 0.9, 0.5]
    assert [c["strict"]["score"] for c in out["cases"]] == [0.0] * 5
    assert out["summary"]["vetoes"] == 1
