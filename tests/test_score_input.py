"""``txcheck score`` input: tools per case, streaming, and hostile files (bad lines, bytes
that are not UTF-8, lines over the size limit, a file with no end)."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from txcheck.cli import main
from txcheck.cli.render_score import ScoreStream
from txcheck.models.plan.contract_loader import load_contract
from txcheck.scoring import case_contracts, reading
from txcheck.scoring.case_contracts import CaseContracts, contract_document
from txcheck.scoring.cases import iter_cases, parse_cases
from txcheck.scoring.reading import LineError, iter_lines
from txcheck.scoring.scorer import CaseResult, score_cases, score_file

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = str(ROOT / "examples/checkout/contract.json")

ADD = {
    "type": "function",
    "function": {
        "name": "add",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "tool_calls": [{"id": "c1", "type": "function", "function": function}],
    }


def _case(case_id: str, tools: Any = None, a: Any = 1, **extra: Any) -> str:
    doc: dict[str, Any] = {
        "id": case_id,
        "proposal": _call("add", {"a": a, "b": 2}),
        "expect": {"calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]},
        **extra,
    }
    if tools is not None:
        doc["tools"] = tools
    return json.dumps(doc)


def _write(tmp_path: Path, data: bytes | str) -> str:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


# -- tools per case ------------------------------------------------------------------------


def test_a_case_carries_its_own_tools_in_either_contract_form() -> None:
    text = "\n".join(
        [_case("bare", [ADD]), _case("object", {"tools": [ADD]}), _case("wrong", [ADD], a="1")]
    )
    report = score_file(None, parse_cases(text, source="t"))
    assert report.errors == ()
    assert [r.strict.passed for r in report.cases] == [True, True, False]
    assert [v.code for v in report.cases[2].strict.violations][:1] == ["type_mismatch"]


def test_case_tools_take_precedence_over_the_contract() -> None:
    text = _case("own", [ADD]) + "\n" + _case("none")
    report = score_file(load_contract(CONTRACT), parse_cases(text, source="t"))
    assert report.cases[0].strict.passed
    # without tools the checkout contract applies, which has no 'add'
    assert [r.id for r in report.cases] == ["own", "none"]
    assert "unknown_tool" in [v.code for v in report.cases[1].strict.violations]


def test_bad_tools_or_no_contract_are_bad_lines_and_the_rest_is_scored() -> None:
    broken = {"type": "function", "function": {"name": "add", "parameters": {"type": "string"}}}
    text = "\n".join(
        [_case("bad", [broken]), _case("ok", [ADD]), _case("none"), _case("bad2", [broken])]
    )
    report = score_file(None, parse_cases(text, source="t"))
    assert [r.id for r in report.cases] == ["ok"]
    assert [e.line for e in report.errors] == [1, 3, 4]
    assert report.errors[0].message.startswith("'tools' at $.tools[0].function.parameters.type:")
    assert report.errors[1].message == "the case has no 'tools' and no CONTRACT was given"
    assert report.errors[2].message == report.errors[0].message


def test_parsed_contracts_are_cached_per_identical_tools_document(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed: list[Any] = []
    real = case_contracts.parse_contract

    def counting(doc: Any, **kwargs: Any) -> Any:
        parsed.append(doc)
        return real(doc, **kwargs)

    monkeypatch.setattr(case_contracts, "parse_contract", counting)
    reordered = {"function": ADD["function"], "type": "function"}  # same document, keys moved
    text = "\n".join(_case(f"c{i}", [ADD] if i % 2 else [reordered]) for i in range(6))
    report = score_file(None, parse_cases(text, source="t"))
    assert report.summary.passed == 6
    assert len(parsed) == 1


def test_the_lru_keeps_at_most_its_limit() -> None:
    contracts = CaseContracts(None, limit=2)
    tools = [[dict(ADD, function=dict(ADD["function"], name=f"t{i}"))] for i in range(4)]
    for t in tools:
        contracts.for_tools(t)
    assert len(contracts._cache) == 2


def test_a_bare_list_is_wrapped_and_an_object_left_alone() -> None:
    assert contract_document([ADD]) == {"tools": [ADD]}
    assert contract_document({"tools": [ADD]}) == {"tools": [ADD]}


def test_score_without_contract_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, _case("a", [ADD]) + "\n" + _case("b") + "\n")
    assert main(["score", path, "--json"]) == 2
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert [c["id"] for c in out["cases"]] == ["a"]
    assert captured.err == (
        f"txcheck score: {path}:2: the case has no 'tools' and no CONTRACT was given\n"
    )


# -- streaming and hostile input ----------------------------------------------------------


def test_a_line_that_is_not_utf8_is_reported_and_the_rest_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = (
        (_case("a", [ADD]) + "\n").encode()
        + b'{"id": "\xff"}\n'
        + (_case("b", [ADD]) + "\n").encode()
    )
    path = _write(tmp_path, data)
    assert main(["score", path, "--json"]) == 2
    captured = capsys.readouterr()
    assert [c["id"] for c in json.loads(captured.out)["cases"]] == ["a", "b"]
    assert captured.err.startswith(
        f"txcheck score: {path}:2: not UTF-8 (byte 9 of the line: invalid start byte)\n"
    )


def test_a_line_over_the_limit_is_a_bad_line_without_being_held() -> None:
    lines = [_case("a", [ADD]), "x" * 5000, _case("b", [ADD])]
    stream = io.BytesIO("\n".join(lines).encode())
    items = list(iter_cases(iter_lines(stream, max_line=4096)))
    assert [getattr(i, "id", None) for i in items] == ["a", None, "b"]
    assert items[1] == LineError(line=2, message="line is longer than 4096 (the limit); not read")


def test_a_line_of_exactly_the_limit_is_read() -> None:
    line = _case("a", [ADD])
    padded = line + " " * (1000 - len(line))
    items = list(iter_lines(io.BytesIO((padded + "\n").encode()), max_line=1000))
    assert [n for n, _ in items] == [1] and isinstance(items[0][1], str)
    [(_, over)] = iter_lines(io.BytesIO((padded + " \n").encode()), max_line=1000)
    assert isinstance(over, LineError)


def test_a_file_with_no_end_stops_with_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "MAX_SKIP_BYTES", 8192)
    monkeypatch.setattr(reading, "_CHUNK", 1024)

    class Zeros(io.RawIOBase):
        """Like /dev/zero: NUL bytes forever, never a newline."""

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            buffer[:] = bytes(len(buffer))
            return len(buffer)

    items = list(iter_lines(io.BufferedReader(Zeros()), max_line=4096))
    assert len(items) == 1
    number, error = items[0]
    assert number == 1 and isinstance(error, LineError)
    assert "has no end within" in error.message and "stopped reading here" in error.message


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_dev_zero_is_refused_unread_not_a_memory_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A device is never read (tests/test_input_files.py: every file slot); a regular file
    with no end of line stops as above."""
    assert main(["score", CONTRACT, "/dev/zero"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("txcheck score: error: /dev/zero: is a character device, not a")
    assert err.count("\n") == 1


def test_each_case_is_scored_before_the_next_line_is_read() -> None:
    """Bounded memory: the scorer pulls one line, scores it and hands it on."""
    pulled: list[int] = []
    text = "\n".join([_case("a", [ADD]), "{oops", _case("b", [ADD])]).encode()

    def lines() -> Iterator[tuple[int, str | LineError]]:
        for number, line in iter_lines(io.BytesIO(text)):
            pulled.append(number)
            yield number, line

    stream = score_cases(iter_cases(lines()), CaseContracts(None), source="cases.jsonl")
    first = next(stream)
    assert isinstance(first, CaseResult) and first.id == "a" and pulled == [1]
    second = next(stream)
    assert isinstance(second, LineError) and second.line == 2 and pulled == [1, 2]
    assert [getattr(i, "id", None) for i in stream] == ["b"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_goes_to_stderr_only_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "\n".join(_case(f"c{i}", [ADD]) for i in range(3)) + "\n")
    assert main(["score", path, "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "cases scored" not in out
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["score", path, "--json"]) == 0
    shown = terminal.getvalue()
    assert "cases scored" in shown and shown.endswith("\r\x1b[K")  # erased before the output
    assert capsys.readouterr().out == out


def test_streamed_json_is_byte_identical_to_the_whole_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [_case(f"c{i}", [ADD], a=1 + i % 2) for i in range(5)] + ["{"]
    path = _write(tmp_path, "\n".join(lines))
    main(["score", path, "--json"])
    streamed = capsys.readouterr().out
    report = score_file(None, parse_cases("\n".join(lines), source=path))
    assert streamed == json.dumps(report.to_json(), sort_keys=True, indent=2) + "\n"


def test_human_output_comes_in_chunks_with_one_header(tmp_path: Path) -> None:
    report = score_file(
        None, parse_cases("\n".join(_case(f"c{i}", [ADD]) for i in range(5)), source="t")
    )
    stream = ScoreStream("t", chunk=2)
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None)
    printed = 0
    for r in report.cases:
        for part in stream.add(r):
            console.print(part)
            printed += 1
    for part in stream.finish(report.errors, report.summary):
        console.print(part)
    text = out.getvalue()
    assert printed == 2  # two full chunks while streaming, the last row at the end
    assert text.count("Scored cases: t") == 1
    assert len(re.findall(r"^\s+case\s+strict\s+veto", text, re.M)) == 1
    assert all(f"c{i} " in text for i in range(5))


def test_hostile_ids_are_printed_as_text_not_markup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, _case("[bold red]x[/] \x1b[2J", [ADD], a=5) + "\n")
    assert main(["score", path]) == 1
    out = capsys.readouterr().out
    assert "[bold red]x[/]" in out
    assert "\x1b" not in out and "\\x1b[2J" in out
