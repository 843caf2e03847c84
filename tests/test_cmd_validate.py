"""``txcheck validate``: exit codes, ``--json``, the human report, bad input, the examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from rich.console import Console

from tests.strategies import arbitrary_plans, checkout_calls
from txcheck.cli import main
from txcheck.cli.render_verdict import VerdictReport
from txcheck.models.plan.contract_loader import load_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.proposal_parser import load_proposal
from txcheck.models.plan.validation import validate

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = str(ROOT / "examples" / "checkout" / "contract.json")
EXAMPLES = ROOT / "examples" / "proposals"


def chat(*calls: tuple[str, Any], ids: list[str] | None = None) -> dict[str, Any]:
    """An OpenAI chat message; a ``str`` argument is sent as is, anything else as JSON."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": ids[i] if ids else f"call_{i + 1}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for i, (name, args) in enumerate(calls)
        ],
    }


def write(tmp_path: Path, doc: Any, name: str = "proposal.json") -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["validate", *args])
    out, err = capsys.readouterr()
    return code, out, err


# -- the examples -----------------------------------------------------------------------


EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.json"))


def test_there_is_an_example_per_triggerable_code_and_per_vendor_format() -> None:
    assert set(EXAMPLE_FILES) >= {
        f"{code}.json"
        for code in (
            "invalid_json",
            "missing_required",
            "type_mismatch",
            "unknown_argument",
            "enum_violation",
            "out_of_range",
            "unknown_tool",
            "duplicate_call_id",
            "missing_idempotency_key",
            "duplicate_key_different_intent",
            "duplicate_side_effect",
            "dependency_too_early",
            "incomplete_workflow",
            "cycle",
        )
    } | {
        f"valid_{fmt}.json"
        for fmt in ("openai_chat", "openai_completion", "openai_responses", "anthropic", "gemini")
    }
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in readme for name in EXAMPLE_FILES)


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_each_example_gives_exactly_its_named_verdict(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, CONTRACT, str(EXAMPLES / name), "--json")
    verdict = json.loads(out)
    assert err == ""
    if name.startswith("valid_"):
        assert (code, verdict["valid"], verdict["violations"]) == (0, True, [])
        assert len(verdict["plan"]["order"]) >= 4
    else:
        assert code == 1
        assert [v["code"] for v in verdict["violations"]] == [name.removesuffix(".json")]


def test_every_vendor_format_gives_the_same_plan() -> None:
    contract = load_contract(CONTRACT)
    plans = {}
    for fmt in ("openai_completion", "openai_responses", "anthropic", "gemini"):
        plan = load_proposal(EXAMPLES / f"valid_{fmt}.json")
        plans[fmt] = [(c.name, c.arguments) for c in plan.calls]
        assert validate(contract, plan).plan["parallel_groups"] == [[c.id] for c in plan.calls]
    assert len({json.dumps(p, sort_keys=True) for p in plans.values()}) == 1


# -- output -----------------------------------------------------------------------------


def test_json_output_is_exactly_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proposal = write(tmp_path, chat(*checkout_calls("o1")[:3]))
    code, out, _ = run(capsys, CONTRACT, proposal, "--json")
    expected = validate(load_contract(CONTRACT), load_proposal(proposal)).to_json()
    assert code == 1
    assert json.loads(out) == expected
    assert out == json.dumps(expected, sort_keys=True, indent=2) + "\n"
    assert set(expected) == {"valid", "violations", "plan", "levels_checked", "levels_skipped"}


def test_human_output_names_the_problem_and_the_skipped_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proposal = write(tmp_path, chat(*checkout_calls("o1")))
    code, out, err = run(capsys, CONTRACT, proposal)
    assert (code, err) == (0, "")
    assert out.startswith("VALID: 4 calls, no violations\n")
    assert "Skipped: business (no world fixture given (--world FILE))." in " ".join(out.split())


def render(report: VerdictReport) -> str:
    console = Console(color_system=None, width=100)
    with console.capture() as capture:
        console.print(report)
    # Exact text, less the padding rich puts after table titles.
    return "".join(f"{line.rstrip()}\n" for line in capture.get().splitlines())


REPORT = """\
INVALID: 3 violations in 3 calls
Calls
┏━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ # ┃ id     ┃ tool           ┃ effect ┃ resource      ┃ status                             ┃
┡━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│ 1 │ call_1 │ get_order      │ read   │ order_id="o1" │ ok                                 │
│ 2 │ call_2 │ charge_payment │ write  │ order_id="o1" │ type_mismatch, incomplete_workflow │
│ 3 │ [x]    │ nope           │ ?      │ -             │ unknown_tool                       │
└───┴────────┴────────────────┴────────┴───────────────┴────────────────────────────────────┘
Violations
┏━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ level  ┃ code                ┃ call   ┃ message                                                  ┃
┡━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│ schema │ type_mismatch       │ call_2 │ $.amount: expected integer, got the string "12.50"       │
│ plan   │ incomplete_workflow │ call_2 │ the 'checkout' workflow on order_id "o1" is missing      │
│        │                     │        │ create_order, reserve_inventory, confirm_order (the plan │
│        │                     │        │ has charge_payment); a plan that starts a workflow must  │
│        │                     │        │ contain all of its steps                                 │
│ plan   │ unknown_tool        │ [x]    │ "nope" is not a tool of the contract (its tools are      │
│        │                     │        │ cancel_order, charge_payment, confirm_order,             │
│        │                     │        │ create_order, get_order, query_logistics,                │
│        │                     │        │ refund_payment, release_inventory, reserve_inventory)    │
└────────┴─────────────────────┴────────┴──────────────────────────────────────────────────────────┘
Parallel groups: {call_1, [x]} -> {call_2}
Levels checked: json, schema, plan. Skipped: business (no world fixture given (--world FILE)).
"""


def test_report_renders_exactly(tmp_path: Path) -> None:
    doc = chat(
        ("get_order", {"order_id": "o1"}),
        (
            "charge_payment",
            {"order_id": "o1", "amount": "12.50", "currency": "USD", "idempotency_key": "k-123456"},
        ),
        ("nope", {}),
        ids=["call_1", "call_2", "[x]"],
    )
    contract = load_contract(CONTRACT)
    plan = load_proposal(write(tmp_path, doc))
    report = VerdictReport(contract=contract, plan=plan, verdict=validate(contract, plan))
    assert render(report) == REPORT


def test_report_cuts_long_plans_and_says_so(tmp_path: Path) -> None:
    doc = chat(*[("get_order", {"order_id": f"o{i}"}) for i in range(5)])
    contract = load_contract(CONTRACT)
    plan = load_proposal(write(tmp_path, doc))
    verdict = validate(contract, plan)
    text = render(VerdictReport(contract=contract, plan=plan, verdict=verdict, max_rows=2))
    assert "│ 2 │ call_2 │" in text and "│ 3 │" not in text
    assert "... 3 more calls not shown (use --json for all)" in text


LOADED = load_contract(CONTRACT)


@settings(max_examples=50, deadline=None)
@given(arbitrary_plans(LOADED))
def test_any_plan_renders_as_printable_text(plan: Plan) -> None:
    verdict = validate(LOADED, plan)
    text = render(VerdictReport(contract=LOADED, plan=plan, verdict=verdict))
    text.encode("utf-8")  # no lone surrogates from odd ids or names
    assert text.startswith(("VALID: ", "INVALID: "))
    assert text.rstrip().splitlines()[-1].startswith("Levels checked: json, schema, plan.")


# -- bad input: exit 2, one line on stderr, never a traceback ----------------------------


def assert_bad_input(code: int, out: str, err: str, *needles: str) -> None:
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err


def test_invalid_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"role": "assistant", "tool_calls": []}\xff')
    assert_bad_input(*run(capsys, CONTRACT, str(path)), "bad.json", "UTF-8")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[" * 100_000 + "]" * 100_000, "nesting"),
        (
            '{"content": [{"type": "tool_use", "id": "a", "name": "get_order", "input": '
            + '{"order_id": '
            + "9" * 50_000
            + "}}]}",
            "digits",
        ),
        (
            '{"content": [{"type": "tool_use", "id": "a", "name": "get_order", '
            '"input": {"order_id": 1e400}}]}',
            "infinity",
        ),
        (
            '{"content": [{"type": "tool_use", "id": "a", "name": "get_order", '
            '"input": {"order_id": NaN}}]}',
            "NaN",
        ),
        (
            '{"content": [{"type": "tool_use", "id": "a", "name": "get_order", '
            '"input": {"order_id": "a", "order_id": "b"}}]}',
            "duplicate key",
        ),
        ('{"hello": "world"}', "not a recognised proposal"),
        ("[]", "must be a JSON object"),
        ("", "proposal.json"),
    ],
    ids=["deep", "digits", "1e400", "nan", "duplicate-keys", "unrecognised", "array", "empty"],
)
def test_bad_proposal_documents(
    text: str, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_bad_input(*run(capsys, CONTRACT, write(tmp_path, text)), "proposal.json", needle)


def test_missing_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proposal = write(tmp_path, chat())
    assert_bad_input(*run(capsys, CONTRACT, str(tmp_path / "nope.json")), "nope.json")
    assert_bad_input(*run(capsys, str(tmp_path / "c.json"), proposal), "c.json")


def test_missing_arguments_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", CONTRACT])
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ('{"order_id": NaN}', "NaN"),
        ('{"order_id": 1e400}', "infinity"),
        ('{"order_id": "a", "order_id": "b"}', "duplicate key"),
        ('{"order_id": ' + "9" * 50_000 + "}", "digits"),
        ("[" * 100_000 + "]" * 100_000, "nesting"),
        ('{"order_id": "o1"', "JSON"),
        ('["o1"]', "object"),
    ],
    ids=["nan", "1e400", "duplicate-keys", "digits", "deep", "truncated", "not-an-object"],
)
def test_bad_arguments_are_invalid_json_not_bad_input(
    arguments: str, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proposal = write(tmp_path, chat(("get_order", arguments)))
    code, out, err = run(capsys, CONTRACT, proposal, "--json")
    verdict = json.loads(out)
    assert (code, err) == (1, "")
    assert [(v["level"], v["code"]) for v in verdict["violations"]] == [("json", "invalid_json")]
    assert needle in verdict["violations"][0]["message"]


def test_a_twenty_thousand_call_proposal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = [c for n in range(5000) for c in checkout_calls(f"o{n}")]
    proposal = write(tmp_path, chat(*calls))
    code, out, err = run(capsys, CONTRACT, proposal, "--json")
    verdict = json.loads(out)
    assert (code, err, verdict["valid"]) == (0, "", True)
    assert len(verdict["plan"]["order"]) == 20_000
    assert [len(g) for g in verdict["plan"]["parallel_groups"]] == [5000] * 4
