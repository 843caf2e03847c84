"""``txcheck validate`` on many proposals in one process, ``--version``, and the light
start-up that makes both cheap."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from txcheck.cli import COMMANDS, SUMMARIES, build_parser, main, version

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = str(ROOT / "examples/checkout/contract.json")
EXAMPLES = ROOT / "examples/proposals"
VALID = str(EXAMPLES / "valid_anthropic.json")
INVALID = str(EXAMPLES / "type_mismatch.json")
ADD = {
    "name": "add",
    "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
}


def _read(a: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "add", "input": {"a": a}}],
    }


def _jsonl(tmp_path: Path, lines: list[str | bytes]) -> str:
    path = tmp_path / "proposals.jsonl"
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    return str(path)


def test_many_files_one_result_each_then_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", CONTRACT, VALID, INVALID, VALID, "--json"]) == 1
    out = capsys.readouterr().out.splitlines()
    records = [json.loads(line) for line in out]
    assert [r.get("source") for r in records[:3]] == [VALID, INVALID, VALID]
    assert [r["valid"] for r in records[:3]] == [True, False, True]
    assert records[1]["violations"][0]["code"] == "type_mismatch"
    assert set(records[0]) == {
        "source",
        "line",
        "id",
        "valid",
        "violations",
        "plan",
        "levels_checked",
        "levels_skipped",
    }
    assert records[3] == {"summary": {"proposals": 3, "valid": 2, "invalid": 1, "errors": []}}
    assert all(line == json.dumps(json.loads(line), sort_keys=True) for line in out)


def test_all_valid_is_exit_0_and_the_human_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", CONTRACT, VALID, VALID]) == 0
    out = capsys.readouterr().out
    assert out == (
        f"VALID    {VALID}: 4 call(s)\nVALID    {VALID}: 4 call(s)\n"
        "Validated 2 proposal(s): 2 valid, 0 invalid.\n"
    )


def test_a_bad_file_is_reported_and_the_rest_validated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"role": "assistant",\n "content": [1, }', encoding="utf-8")
    missing = str(tmp_path / "missing.json")
    assert main(["validate", CONTRACT, str(broken), VALID, missing, "--json"]) == 2
    captured = capsys.readouterr()
    records = [json.loads(line) for line in captured.out.splitlines()]
    assert [r.get("source") for r in records[:-1]] == [VALID]
    assert records[-1]["summary"]["proposals"] == 1
    assert len(records[-1]["summary"]["errors"]) == 2
    err = captured.err.splitlines()
    assert err[0].startswith(f"txcheck validate: {broken}:2: ")
    assert err[1].startswith(f"txcheck validate: {missing}: ")
    assert len(err) == 2


def test_jsonl_lines_with_their_own_tools_and_bad_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _jsonl(
        tmp_path,
        [
            json.dumps({"id": "one", "proposal": _read(1), "tools": [ADD]}),
            json.dumps({"id": "two", "proposal": _read("1"), "tools": {"tools": [ADD]}}),
            b'{"proposal": "\xff"}',
            "{not json",
            json.dumps(_read(2)),  # no tools and no CONTRACT
            json.dumps({"proposal": _read(1), "tools": [ADD], "extra": 1}),
        ],
    )
    assert main(["validate", "--jsonl", path, "--json"]) == 2
    captured = capsys.readouterr()
    records = [json.loads(line) for line in captured.out.splitlines()]
    assert [(r["id"], r["line"], r["valid"]) for r in records[:-1]] == [
        ("one", 1, True),
        ("two", 2, False),
    ]
    assert [e["line"] for e in records[-1]["summary"]["errors"]] == [3, 4, 5, 6]
    err = captured.err.splitlines()
    assert err[0].startswith(f"txcheck validate: {path}:3: not UTF-8")
    assert err[1].startswith(f"txcheck validate: {path}:4: not valid JSON")
    assert (
        err[2] == f"txcheck validate: {path}:5: the case has no 'tools' and no CONTRACT was given"
    )
    assert err[3].startswith(f"txcheck validate: {path}:6: unknown key 'extra'")


def test_jsonl_bare_proposals_under_the_contract(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        (EXAMPLES / name).read_text(encoding="utf-8")
        for name in ("valid_gemini.json", "cycle.json")
    ]
    path = _jsonl(tmp_path, [json.dumps(json.loads(text)) for text in lines])
    assert main(["validate", CONTRACT, "--jsonl", path]) == 1
    out = capsys.readouterr().out
    assert out.startswith(
        f"VALID    {path}:1: 4 call(s)\nINVALID  {path}:2: 1 violation(s)\n  plan cycle"
    )


def test_an_empty_jsonl_file_is_inconclusive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", CONTRACT, "--jsonl", _jsonl(tmp_path, [])]) == 3
    assert "inconclusive: no proposal was validated" in capsys.readouterr().err


def test_the_single_proposal_form_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", CONTRACT, INVALID, "--json"]) == 1
    out = capsys.readouterr().out
    data = json.loads(out)
    assert set(data) == {"valid", "violations", "plan", "levels_checked", "levels_skipped"}
    assert out == json.dumps(data, sort_keys=True, indent=2) + "\n"


@pytest.mark.parametrize(
    "argv",
    [["validate"], ["validate", CONTRACT], ["validate", CONTRACT, VALID, "--jsonl", "x"]],
)
def test_usage_mistakes_are_one_line_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"txcheck {version()}\n"
    assert version().count(".") >= 2


def test_summaries_match_what_each_command_registers() -> None:
    full = build_parser()
    choices = next(a for a in full._actions if a.dest == "command")
    helps = {a.dest: a.help for a in choices._choices_actions}  # type: ignore[attr-defined]
    assert helps == {name: SUMMARIES[name] for name in COMMANDS}


def test_validate_and_version_import_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "from txcheck.cli import main\n"
        "try:\n"
        f"    main(['validate', {CONTRACT!r}, {VALID!r}, '--json'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('hypothesis', 'networkx', 'rich', 'txcheck.exploration',\n"
        "    'txcheck.scoring.scorer')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
