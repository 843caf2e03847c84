"""Reading scorer cases: valid lines become cases, bad lines become numbered errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from txcheck.models.errors import InputError
from txcheck.scoring.cases import parse_cases, read_cases

GOOD = {
    "id": "a",
    "proposal": {"role": "assistant", "content": "hi"},
    "expect": {"calls": []},
}


def _line(**changes: object) -> str:
    doc = dict(GOOD, **changes)
    return json.dumps({k: v for k, v in doc.items() if v is not ...})


def test_a_valid_case_with_defaults() -> None:
    text = json.dumps(
        {
            "id": "x",
            "proposal": {"content": []},
            "expect": {"calls": [{"name": "get_order"}], "forbidden": ["cancel_order"]},
            "world": {"format": "txcheck-world/1"},
        }
    )
    [case] = parse_cases(text, source="f").cases
    assert case.id == "x" and case.line == 1
    assert case.expect.calls[0].name == "get_order"
    assert dict(case.expect.calls[0].arguments) == {}
    assert case.expect.ordered is False
    assert case.expect.forbidden == ("cancel_order",)
    assert case.world == {"format": "txcheck-world/1"}
    assert case.json_problems == ()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"id": "a", ',
            "not valid JSON: column 13: Expecting property name enclosed in double quotes",
        ),
        ("[1, 2]", "a case must be a JSON object (got [1, 2])"),
        (_line(id=...), "'id' must be a non-empty string (got None)"),
        (_line(id=7), "'id' must be a non-empty string (got 7)"),
        (_line(proposal=...), "the case has no 'proposal'"),
        (_line(expect=...), "the case has no 'expect'"),
        (_line(expect={}), "'expect' must have 'calls' (a list; [] when no call is right)"),
        (_line(expect={"calls": {}}), "'expect.calls' must be a list (got {})"),
        (
            _line(expect={"calls": [{"arguments": {}}]}),
            "'expect.calls[0].name' must be a non-empty string (got None)",
        ),
        (
            _line(expect={"calls": [{"name": "t", "arguments": "{}"}]}),
            "'expect.calls[0].arguments' must be an object (got '{}')",
        ),
        (
            _line(expect={"calls": [], "ordered": "yes"}),
            "'expect.ordered' must be true, false or \"writes\" (got 'yes')",
        ),
        (
            _line(expect={"calls": [], "forbidden": "cancel_order"}),
            "'expect.forbidden' must be a list of tool names (got 'cancel_order')",
        ),
        (
            _line(expect={"calls": [], "forbiden": []}),
            "'expect' has unknown key 'forbiden' (expected only calls, ordered, forbidden, "
            "normalize, any_call)",
        ),
        (
            _line(expect={"calls": [{"name": "t"}], "forbidden": ["t"]}),
            "'t' is both expected and forbidden",
        ),
        (
            _line(model="gpt"),
            "the case has unknown key 'model' (expected only id, proposal, expect, world, tools, "
            "meta)",
        ),
        (_line(world=[]), "'world' must be a world fixture object (got [])"),
        (
            _line().replace('"calls": []', '"calls": [], "calls": []'),
            'not valid JSON: column 89: duplicate key "calls" in an object',
        ),
        (
            _line(expect={"calls": [{"name": "t", "arguments": {"n": "X"}}]}).replace('"X"', "NaN"),
            "not valid JSON: column 119: NaN is not JSON (RFC 8259 has no NaN or Infinity)",
        ),
    ],
)
def test_bad_lines_are_errors_with_their_line_number(line: str, message: str) -> None:
    cases = parse_cases("\n".join([_line(id="first"), "", line, _line(id="last")]), source="f")
    assert [c.id for c in cases.cases] == ["first", "last"]
    assert [c.line for c in cases.cases] == [1, 4]
    assert [(e.line, e.message) for e in cases.errors] == [(3, message)]


def test_duplicate_ids_keep_the_first() -> None:
    cases = parse_cases("\n".join([_line(), _line(), _line()]), source="f")
    assert [c.line for c in cases.cases] == [1]
    assert [(e.line, e.message) for e in cases.errors] == [
        (2, "duplicate case id 'a' (first on line 1)"),
        (3, "duplicate case id 'a' (first on line 1)"),
    ]


def test_strict_json_problems_inside_the_proposal_keep_the_case() -> None:
    proposal = {
        "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {"a": "X", "b": "Y"}}]
    }
    text = _line(proposal=proposal).replace('"X"', "Infinity").replace('"Y"', "1e999")
    [case] = parse_cases(text, source="f").cases
    assert case.json_problems == (
        "$.proposal.content[0].input.a: Infinity is not JSON (RFC 8259 has no NaN or Infinity)",
        "$.proposal.content[0].input.b: the number 1e999 overflows to infinity",
    )


def test_lines_split_only_on_newline() -> None:
    text = _line(proposal={"role": "assistant", "content": "a\u2028b\u0085c"}) + "\r\n"
    [case] = parse_cases(text, source="f").cases
    assert case.proposal["content"] == "a\u2028b\u0085c"


def test_an_unreadable_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InputError) as error:
        read_cases(tmp_path / "nope.jsonl")
    assert str(error.value).endswith(
        "nope.jsonl: cannot read the cases file: No such file or directory"
    )


def test_a_line_that_is_not_utf8_is_one_bad_line(tmp_path: Path) -> None:
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(_line(id="a").encode() + b'\n{"id": "\xe9"}\n' + _line(id="b").encode())
    cases = read_cases(latin)
    assert [c.id for c in cases.cases] == ["a", "b"]
    [error] = cases.errors
    assert (error.line, error.message) == (
        2,
        "not UTF-8 (byte 9 of the line: invalid continuation byte)",
    )
