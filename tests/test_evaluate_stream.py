"""``txcheck evaluate`` reads its cases as a stream: case by case, line by line, each line
decoded on its own and capped, progress on a terminal only, and nothing evaluated is
inconclusive (exit 3)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from txcheck.cli import main
from txcheck.evaluate.evaluation import CaseEvaluation, evaluate_cases, evaluate_file
from txcheck.models.plan.contract_loader import default_contract
from txcheck.scoring import reading
from txcheck.scoring.cases import Case, LineError, iter_cases, read_cases, text_lines

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = str(ROOT / "examples/checkout/contract.json")
EXAMPLE = str(ROOT / "examples/evaluate/cases.jsonl")


def _no_call(case_id: str) -> str:
    proposal = {"role": "assistant", "content": "Which order do you mean?"}
    return json.dumps({"id": case_id, "proposal": proposal, "expect": {"calls": []}})


def test_each_case_is_evaluated_before_the_next_line_is_read() -> None:
    pulled: list[int] = []

    def lines() -> Iterator[tuple[int, str | LineError]]:
        for number, line in text_lines("\n".join([_no_call("a"), "{oops", _no_call("b")])):
            pulled.append(number)
            yield number, line

    items: Iterator[Case | LineError] = iter_cases(lines())
    stream = evaluate_cases(default_contract(), items, source="cases.jsonl")
    first = next(stream)
    assert isinstance(first, CaseEvaluation) and first.id == "a" and first.stage2 is not None
    assert pulled == [1]
    second = next(stream)
    assert isinstance(second, LineError) and second.line == 2 and pulled == [1, 2]
    assert [getattr(i, "id", None) for i in stream] == ["b"]


@pytest.mark.parametrize("content", [b"", b"\n  \n\t\n"])
@pytest.mark.parametrize("as_json", [False, True])
def test_an_empty_cases_file_is_inconclusive(
    content: bytes, as_json: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    assert main(["evaluate", CONTRACT, str(path), *(["--json"] * as_json)]) == 3
    out, err = capsys.readouterr()
    assert err == f"txcheck evaluate: {path}: inconclusive: no case was evaluated\n"
    if as_json:
        data = json.loads(out)
        assert data["cases"] == [] and data["errors"] == [] and data["summary"]["cases"] == 0
    else:
        assert out.rstrip().endswith("Exit code 3: inconclusive, no case was evaluated.")


def test_bad_lines_only_is_bad_input_not_inconclusive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("{oops\n")
    assert main(["evaluate", CONTRACT, str(path), "--json"]) == 2
    assert "inconclusive" not in capsys.readouterr().err


def test_a_line_that_is_not_utf8_spoils_that_line_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cases.jsonl"
    bad = _no_call("b").encode().replace(b"Which", b"Wh\xffich")
    path.write_bytes(b"\n".join([_no_call("a").encode(), bad, _no_call("c").encode()]))
    assert main(["evaluate", CONTRACT, str(path), "--json"]) == 2
    out, err = capsys.readouterr()
    assert [c["id"] for c in json.loads(out)["cases"]] == ["a", "c"]
    byte = bad.index(b"\xff") + 1
    assert err == (
        f"txcheck evaluate: {path}:2: not UTF-8 (byte {byte} of the line: invalid start byte)\n"
    )


def test_an_endless_line_is_one_bad_line_not_a_memory_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A regular file with no end of line past the skip limit (sparse: nothing is written
    to the disk); /dev/zero itself is refused unread (tests/test_input_files.py)."""
    monkeypatch.setattr(reading, "MAX_SKIP_BYTES", 8 * 1024 * 1024)  # keep the test quick
    endless = tmp_path / "endless.jsonl"
    with open(endless, "wb") as handle:
        handle.truncate(reading.MAX_LINE_BYTES + 9 * 1024 * 1024)
    assert main(["evaluate", CONTRACT, str(endless), "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["summary"]["errors"] == 1
    assert err.startswith(f"txcheck evaluate: {endless}:1: line is longer than 16 MiB")
    assert "stopped reading here" in err and err.count("\n") == 1


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_goes_to_stderr_only_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(_no_call("a") + "\n" + _no_call("b") + "\n")
    assert main(["evaluate", CONTRACT, str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "cases evaluated" not in out
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["evaluate", CONTRACT, str(path), "--json"]) == 0
    assert "cases evaluated" in terminal.getvalue()
    assert terminal.getvalue().endswith("\r\x1b[K")  # erased before the output
    assert json.loads(capsys.readouterr().out) == json.loads(out)


def test_the_stream_gives_what_a_whole_file_read_gives(
    capsys: pytest.CaptureFixture[str],
) -> None:
    whole = evaluate_file(default_contract(), read_cases(EXAMPLE)).to_json()
    assert main(["evaluate", CONTRACT, EXAMPLE, "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == {**whole, "warnings": []}
