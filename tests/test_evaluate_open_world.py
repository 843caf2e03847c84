"""``txcheck evaluate`` on contracts other than checkout: annotated tools run on generic
services, a case's own tools are what stage two runs, ``--services`` adds the user's own,
and a tool nothing gives behaviour to is bad input (exit 2), never a silent pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_open_world import LAUNCH_CONTRACT

from txcheck.cli import main
from txcheck.models.sim.fixture import default_fixture

ROOT = Path(__file__).resolve().parent.parent
HOTEL = ROOT / "examples" / "contracts" / "hotel.json"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))


def _openai(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for i, (name, arguments) in enumerate(calls, 1)
        ]
    }


def _cases(tmp_path: Path, *cases: dict[str, Any]) -> str:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return str(path)


HOLD = (
    "hold_room",
    {"booking_id": "bk_1", "guest_id": "guest_1", "room_type": "double", "nights": 2},
)


def _hotel_plan() -> list[tuple[str, dict[str, Any]]]:
    contract = json.loads(HOTEL.read_text(encoding="utf-8"))
    workflow = contract["workflows"][0]["steps"]
    tools = {t["function"]["name"]: t for t in contract["tools"]}
    calls = []
    for name in workflow:
        schema = tools[name]["function"]["parameters"]
        values = {
            "booking_id": "bk_1",
            "guest_id": "guest_1",
            "room_type": "double",
            "nights": 2,
            "amount": 20000,
            "currency": "USD",
        }
        calls.append((name, {k: values[k] for k in schema["required"]}))
    return calls


def test_a_hotel_case_runs_stage_two_on_generic_services(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = _hotel_plan()
    expect = {"calls": [{"name": n, "arguments": a} for n, a in calls]}
    cases = _cases(tmp_path, {"id": "hotel-1", "proposal": _openai(*calls), "expect": expect})
    code = main(["evaluate", str(HOTEL), cases, "--json"])
    out = json.loads(capsys.readouterr().out)
    case = out["cases"][0]
    assert case["skipped"] is None and case["stage2"] is not None
    guarded = case["stage2"]["guarded"]
    state = guarded["state_consistency"]
    assert state["final_state_match"] is True and state["outcome"] == "completed"
    recovery = guarded["fault_recovery"]
    assert recovery["runs"] > 10 and recovery["faulty_runs"] == recovery["runs"] - 1
    assert recovery["failed_runs"] == 0 and recovery["unknown_injected"] > 0
    assert code == 0  # guarded holds under every fault of the schedule


def test_a_tool_without_behaviour_makes_the_case_a_bad_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps(LAUNCH_CONTRACT), encoding="utf-8")
    call = ("launch", {"target": "moon"})
    expect = {"calls": [{"name": "launch", "arguments": {"target": "moon"}}]}
    cases = _cases(tmp_path, {"id": "c1", "proposal": _openai(call), "expect": expect})
    assert main(["evaluate", str(contract), cases]) == 2
    err = capsys.readouterr().err
    assert "warning: " in err  # the unannotated tool is taken as a write, and said so
    assert "cases.jsonl:1: stage 2 cannot run: tool 'launch' has no behaviour" in err


def _gift_case(tmp_path: Path, *, world: bool) -> list[str]:
    """A case of one gift card of 500 cents; with ``world``, in a world whose gift-card
    budget is 100 (else the bundled world, whose budget is 0): the real service refuses
    it."""
    contract = ROOT / "examples" / "custom_service" / "contract.json"
    send = (
        "send_gift_card",
        {
            "order_id": "ord_1",
            "customer_id": "cus_1",
            "amount": 500,
            "currency": "USD",
            "idempotency_key": "key-gift-0001",
        },
    )
    expect = {"calls": [{"name": send[0], "arguments": send[1]}]}
    case: dict[str, Any] = {"id": "gift", "proposal": _openai(send), "expect": expect}
    if world:
        case["world"] = {**default_fixture().document, "services": {"gift_cards": {"budget": 100}}}
    return [str(contract), _cases(tmp_path, case)]


def _gift_outcome(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    """Stage two's fault-free outcome under guarded for the gift card (no world in the
    case: stage one has no business level, stage two runs on the bundled world)."""
    main(["evaluate", *_gift_case(tmp_path, world=False), "--json", *extra])
    out = json.loads(capsys.readouterr().out)
    stage2 = out["cases"][0]["stage2"]
    assert stage2 is not None, out["cases"][0]["skipped"]
    outcome: str = stage2["guarded"]["state_consistency"]["outcome"]
    return outcome


def test_user_services_reach_stage_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    service = "examples.custom_service.gift_cards:GIFT_CARDS"
    # the user's service checks the budget and refuses; without it, the contract's
    # annotations give the tool a generic behaviour that commits
    assert _gift_outcome(tmp_path, capsys, "--services", service) == "nothing_committed"
    assert _gift_outcome(tmp_path, capsys) == "completed"


def test_user_services_judge_stage_one_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the case's world, the user's service refuses the card already at stage one
    (its business level), so the invalid proposal is not run; without the service, no
    rule reads the world's gift-card section and the level is not applicable."""
    service = "examples.custom_service.gift_cards:GIFT_CARDS"
    arguments = _gift_case(tmp_path, world=True)
    main(["evaluate", *arguments, "--json", "--services", service])
    case = json.loads(capsys.readouterr().out)["cases"][0]
    assert case["stage2"] is None and "budget_exhausted" in case["skipped"]
    main(["evaluate", *arguments, "--json"])
    case = json.loads(capsys.readouterr().out)["cases"][0]
    assert case["stage2"] is not None
    assert "business" not in case["stage1"]["strict"]["levels_checked"]
