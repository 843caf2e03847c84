"""The open world: any annotated contract is model-checked without Python, tools nothing
describes fail closed, MCP and bare tool lists load, and nothing runs without behaviour."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from txcheck import (
    Guarded,
    JournalRead,
    Plan,
    Target,
    builtin_policy,
    execute,
    load_contract,
    parse_contract,
    parse_proposal,
    validate,
)
from txcheck.cli import main
from txcheck.exploration.plansets.readiness import check_ready
from txcheck.models.errors import InputError
from txcheck.models.sim.generic import GENERIC, generic_services
from txcheck.models.sim.services import Committed, Rejected

ROOT = Path(__file__).resolve().parent.parent
HOTEL = ROOT / "examples" / "contracts" / "hotel.json"
MCP = ROOT / "examples" / "contracts" / "mcp_tools.json"
OPENAI = ROOT / "examples" / "contracts" / "openai_tools.json"
EXAMPLE_CONTRACTS = sorted(
    [*ROOT.glob("examples/**/contract.json"), *ROOT.glob("examples/contracts/*.json")]
)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("path", EXAMPLE_CONTRACTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_contract_loads(path: Path) -> None:
    contract = load_contract(path)
    assert contract.tools


def test_the_example_contracts_are_the_ones_the_docs_name() -> None:
    names = {str(p.relative_to(ROOT)) for p in EXAMPLE_CONTRACTS}
    page = (ROOT / "docs" / "contract.md").read_text("utf-8")
    for name in ("examples/contracts/hotel.json", "examples/contracts/mcp_tools.json"):
        assert name in names and name in page


# -- a domain txcheck has never seen, with no Python ---------------------------------------


def _explore(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["explore", "--contract", str(HOTEL), "--seed", "1", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_naive_double_books_a_hotel_from_the_annotations_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # naive's first failure on the hotel is a plan it runs without validating (0
    # deviations), reported for its harm (a charge with no booking, the rejected plan
    # listed after it); on a valid booking, it is the double booking
    code, result = _explore(capsys, "--policy", "naive", "--engine", "systematic")
    assert code == 1
    found = result["counterexample"]
    assert found["invariant"] == "no_orphaned_effect"
    assert "rejected_plan_unchanged" in {v["invariant"] for v in found["violations"]}
    booking = tmp_path / "booking.json"
    booking.write_text(json.dumps(_booking()), encoding="utf-8")
    code, result = _explore(
        capsys, "--policy", "naive", "--engine", "systematic", "--plan", str(booking)
    )
    assert code == 1
    found = result["counterexample"]
    assert found["invariant"] == "no_double_effect"
    assert "hold_room" in found["violations"][0]["messages"][0]


def _booking() -> dict[str, Any]:
    """The hotel's book_stay workflow as a model would propose it."""
    calls = [
        (
            "hold_room",
            {"booking_id": "bk_1", "guest_id": "guest_1", "room_type": "double", "nights": 2},
        ),
        ("charge_card", {"booking_id": "bk_1", "guest_id": "guest_1", "amount": 20000}),
        ("send_confirmation", {"booking_id": "bk_1", "guest_id": "guest_1"}),
    ]
    return {
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": n, "arguments": json.dumps(a)},
            }
            for i, (n, a) in enumerate(calls, start=1)
        ]
    }


def test_guarded_keeps_every_invariant_on_the_hotel(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = _explore(
        capsys, "--policy", "guarded", "--engine", "systematic", "--max-faults", "1"
    )
    assert code == 0, result["counterexample"]
    assert result["engines"][0]["complete"]
    assert result["coverage"]["invariants"]["no_double_effect"] > 0


@pytest.mark.slow
def test_guarded_survives_default_explore_on_the_hotel(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = _explore(capsys, "--policy", "guarded")
    assert code == 0, result["counterexample"]


# -- fail closed -----------------------------------------------------------------------------


def _charges(*keys: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {
                    "name": "charge_card",
                    "arguments": json.dumps(
                        {"reservation_id": "r_1", "amount": 300, "idempotency_key": key}
                    ),
                },
            }
            for i, key in enumerate(keys, start=1)
        ],
    }


def test_a_double_charge_under_two_keys_is_not_valid_with_undescribed_tools() -> None:
    contract = load_contract(OPENAI)
    assert len(contract.warnings) == 3
    codes = validate(contract, parse_proposal(_charges("k1", "k2"))).codes()
    assert codes == ["duplicate_side_effect"]
    assert validate(contract, parse_proposal(_charges("k1"))).valid


def test_explore_refuses_tools_without_behaviour(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--contract", str(OPENAI), "--policy", "guarded"]) == 2
    err = capsys.readouterr().err
    assert "tools 'cancel_reservation', 'charge_card', 'get_reservation' have no behaviour" in err
    assert "docs/contract.md" in err and err.count("error:") == 1


def test_mcp_annotations_map_to_effects() -> None:
    tools = load_contract(MCP).tools
    found = {n: (t.effect, t.idempotent, t.declared_by) for n, t in tools.items()}
    assert found == {
        "list_files": ("read", True, "mcp"),
        "write_file": ("write", True, "mcp"),
        "delete_file": ("irreversible", True, "mcp"),
        "send_email": ("irreversible", False, "mcp"),
    }
    assert tools["write_file"].resource == "path"
    assert load_contract(MCP).warnings == ()


def _hotel_document() -> dict[str, Any]:
    return dict(json.loads(HOTEL.read_text("utf-8")))


def test_an_unbuildable_compensation_warns_validates_and_refuses_to_explore(
    capsys: pytest.CaptureFixture[str],
) -> None:
    document = _hotel_document()
    charge = document["tools"][2]
    charge["x-txcheck"]["compensated_by"] = "refund_card"  # refund_card needs a reason
    Path("c.json").write_text(json.dumps(document), "utf-8")
    contract = load_contract("c.json")
    assert contract.tools["charge_card"].compensated_by is not None
    assert contract.tools["charge_card"].compensated_by.unmapped == ("reason",)
    (warning,) = contract.warnings
    assert "compensation 'refund_card' requires 'reason'" in warning
    with pytest.raises(InputError, match="may need its compensation 'refund_card'"):
        check_ready(Target(policy=Guarded(), contract=contract))
    assert main(["explore", "--contract", "c.json", "--policy", "guarded"]) == 2
    err = capsys.readouterr().err
    assert "requires 'reason' that nothing fills" in err


def test_a_list_of_resources_orders_calls_that_share_one() -> None:
    document = _hotel_document()
    for tool in document["tools"]:
        if tool["function"]["name"] in ("hold_room", "charge_card"):
            tool["x-txcheck"]["resource"] = ["booking_id", "guest_id"]
    contract = parse_contract(document)
    assert contract.tools["hold_room"].resources == ("booking_id", "guest_id")


# -- generic behaviour ---------------------------------------------------------------------


def test_generic_services_commit_undo_and_answer_from_the_effect_log() -> None:
    contract = load_contract(HOTEL)
    services = generic_services(contract, served=set())
    assert services is not None and services.name == GENERIC
    state = services.initial_state({})
    hold = services.handlers["hold_room"]
    args = {"booking_id": "b_1", "guest_id": "g_1", "room_type": "single", "nights": 2}
    first = hold(state, args)
    assert isinstance(first, Committed) and first.receipt["effect_id"] == "eff_1"
    again = hold(state, args)
    assert isinstance(again, Committed) and again.receipt["effect_id"] == "eff_2"
    release = services.handlers["release_room"](state, {"booking_id": "b_1"})
    assert isinstance(release, Committed) and release.receipt["undoes"] == "eff_2"
    assert state["effects"]["eff_2"]["status"] == "undone"
    seen = services.handlers["get_booking"](state, {"booking_id": "b_1"})
    assert isinstance(seen, Committed)
    assert [e["effect_id"] for e in seen.receipt["effects"]] == ["eff_1", "eff_2", "eff_3"]


def test_an_irreversible_effect_cannot_be_undone_and_an_idempotent_repeat_commits_nothing() -> None:
    document = _hotel_document()
    document["tools"][3]["x-txcheck"]["compensated_by"] = {
        "tool": "release_room",
        "arguments": {"booking_id": {"$arg": "booking_id"}},
    }
    document["tools"][4]["x-txcheck"]["idempotent"] = True
    contract = parse_contract(document)
    services = generic_services(contract, served=set())
    assert services is not None
    state = services.initial_state({})
    sent = services.handlers["send_confirmation"](state, {"booking_id": "b_1", "guest_id": "g"})
    assert isinstance(sent, Committed)
    undo = services.handlers["release_room"](state, {"booking_id": "b_1"})
    assert isinstance(undo, Rejected) and undo.code == "irreversible"
    release = services.handlers["release_room"]
    first, again = release(state, {"booking_id": "b_9"}), release(state, {"booking_id": "b_9"})
    assert isinstance(first, Committed) and isinstance(again, Committed)
    assert first.receipt == again.receipt and first.events and not again.events
    assert state["count"] == 2  # one confirmation, one (idempotent) release of b_9


def test_registered_services_take_precedence_over_generic_ones() -> None:
    contract = load_contract(ROOT / "examples" / "checkout" / "contract.json")
    assert generic_services(contract, served=set(contract.tools)) is None


NO_CHARGE_MODULE = """
from txcheck.invariants import always


@always(name="no_charge_at_all")
def no_charge_at_all(view):
    \"\"\"A deliberately strict house rule: no order is ever charged.\"\"\"
    for charge_id in sorted(view.world.state["checkout"]["charges"]):
        yield f"{charge_id} was taken"
"""


def test_scenarios_hold_every_run_to_the_users_invariants_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "house_rules.py").write_text(NO_CHARGE_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["scenarios", "--out", "plain", "--json"]
    assert main(argv) == 0
    capsys.readouterr()
    strict = ["scenarios", "--out", "strict", "--invariants", "house_rules:no_charge_at_all"]
    assert main([*strict, "--json"]) == 1  # scenarios that charge now break a rule
    capsys.readouterr()
    rows = [
        json.loads(line)
        for line in (tmp_path / "strict" / "raw_results.jsonl").read_text("utf-8").splitlines()
    ]
    fired = [r["scenario"] for r in rows if "no_charge_at_all" in r["invariants_fired"]]
    assert fired and all(r["kind"] in ("scenario", "control") for r in rows)


def test_two_different_plans_making_the_same_call_are_two_operations() -> None:
    """no_double_effect counts one business operation's calls (a plan, however often
    submitted); two plans that both charge the same booking are two operations. The same
    plan twice under naive is one operation charged twice: a double effect."""
    contract = load_contract(HOTEL)
    calls = [
        (name, dict(arguments))
        for name, arguments in [
            (
                "hold_room",
                {"booking_id": "bk_1", "guest_id": "g_1", "room_type": "double", "nights": 2},
            ),
            ("charge_card", {"booking_id": "bk_1", "guest_id": "g_1", "amount": 20000}),
            ("send_confirmation", {"booking_id": "bk_1", "guest_id": "g_1"}),
        ]
    ]
    first = Plan.of(*calls)
    suite = Plan.of((calls[0][0], {**calls[0][1], "room_type": "suite"}), *calls[1:])
    target = Target(policy=builtin_policy("guarded"), contract=contract)
    both = execute(target, [first, suite])
    assert both.ok, both.first
    charges = [op for op in both.run.world.operations if op["tool"] == "charge_card"]
    assert len(charges) == 2
    twice = execute(attrs.evolve(target, policy=builtin_policy("naive")), [first, first])
    assert twice.failed("no_double_effect")


def _write_json(path: Path, document: Any) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


LAUNCH_CONTRACT = {
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "launch",
                "description": "Launch it.",
                "parameters": {
                    "type": "object",
                    "properties": {"target": {"type": "string"}},
                    "required": ["target"],
                    "additionalProperties": False,
                },
            },
        }
    ]
}
LAUNCH = {
    "tool_calls": [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "launch", "arguments": json.dumps({"target": "moon"})},
        }
    ]
}
WORLD = str(ROOT / "examples" / "checkout" / "world.json")


def test_validate_world_refuses_to_judge_a_tool_without_behaviour(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = _write_json(tmp_path / "c.json", LAUNCH_CONTRACT)
    proposal = _write_json(tmp_path / "p.json", LAUNCH)
    assert main(["validate", contract, proposal]) == 0  # no business level asked for
    err = capsys.readouterr().err
    assert "warning: " in err and "'launch' says nothing about what it does" in err
    assert main(["validate", contract, proposal, "--world", WORLD]) == 2
    err = capsys.readouterr().err
    assert "the business level cannot judge this proposal: tool 'launch' has no behaviour" in err
    assert main(["validate", contract, proposal, proposal, "--world", WORLD]) == 2
    captured = capsys.readouterr()
    assert "0 valid, 0 invalid, 2 bad input" in captured.out
    assert captured.err.count("the business level cannot judge it") == 2


def test_validate_world_runs_the_users_services(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    contract = str(ROOT / "examples" / "custom_service" / "contract.json")
    gift = {
        "order_id": "ord_1",
        "customer_id": "cus_1",
        "amount": 500,
        "currency": "USD",
        "idempotency_key": "key-gift-0001",
    }
    proposal = _write_json(
        tmp_path / "gift.json",
        {
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "send_gift_card", "arguments": json.dumps(gift)},
                }
            ]
        },
    )
    document = json.loads(Path(WORLD).read_text(encoding="utf-8"))
    world = _write_json(
        tmp_path / "w.json", {**document, "services": {"gift_cards": {"budget": 100}}}
    )
    argv = ["validate", contract, proposal, "--world", world, "--json"]
    # generic behaviour from the annotations: the gift card is sent
    assert main(argv) == 0
    capsys.readouterr()
    # the user's service knows the budget: 500 is over it
    assert main([*argv, "--services", "examples.custom_service.gift_cards:GIFT_CARDS"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert [v["code"] for v in verdict["violations"]] == ["budget_exhausted"]
    with pytest.raises(SystemExit) as usage:  # --services needs --world
        main(["validate", contract, proposal, "--services", "x:Y"])
    assert usage.value.code == 2


def _double(contract: Any, name: str, arguments: dict[str, Any], other: dict[str, Any]) -> Any:
    proposal = {
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(a)},
            }
            for i, a in enumerate((arguments, other), start=1)
        ]
    }
    return validate(contract, parse_proposal(proposal))


def test_the_same_keyless_write_twice_is_a_duplicate_side_effect() -> None:
    contract = load_contract(HOTEL)
    charge = {"booking_id": "bk_1", "guest_id": "g_1", "amount": 20000}
    twice = _double(contract, "charge_card", charge, dict(charge))
    assert "duplicate_side_effect" in twice.codes()
    (found,) = [v for v in twice.violations if v.code == "duplicate_side_effect"]
    assert found.call == "call_2" and "no idempotency key" in found.message
    other = _double(contract, "charge_card", charge, {**charge, "amount": 100})
    assert "duplicate_side_effect" not in other.codes()
    # a tool the contract says may repeat (a reboot) is not a duplicate
    document = json.loads(HOTEL.read_text(encoding="utf-8"))
    for tool in document["tools"]:
        if tool["function"]["name"] == "charge_card":
            tool["x-txcheck"]["repeatable"] = True
    repeatable = parse_contract(document)
    assert (
        "duplicate_side_effect"
        not in _double(repeatable, "charge_card", charge, dict(charge)).codes()
    )


GIFT_CONTRACT = {
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "send_gift",
                "description": "Send a gift; names no resource it writes on.",
                "parameters": {
                    "type": "object",
                    "properties": {"recipient": {"type": "string"}, "key": {"type": "string"}},
                    "required": ["recipient", "key"],
                    "additionalProperties": False,
                },
            },
            "x-txcheck": {"effect": "write", "idempotency_key": "key"},
        }
    ]
}


class NeverSends(Guarded):
    """Reads its journal and stops: a fault-free plan that never completes."""

    name = "never-sends"

    def orchestrate(self, ctx: Any) -> Any:
        yield JournalRead()


def test_a_resubmission_attached_to_its_first_submission_is_not_incomplete() -> None:
    """A write tool naming no resource: guarded attaches the same gift sent again under a
    new key to the instance sending it, and commits it once. fault_free_completion took
    the attached plan for one that never completed (a false counterexample)."""
    contract = parse_contract(GIFT_CONTRACT, source="gift.json")
    gift = Plan.of(("send_gift", {"recipient": "r_1", "key": "gift-key-1"}))
    again = Plan.of(("send_gift", {"recipient": "r_1", "key": "gift-key-2"}))
    target = Target(policy=Guarded(), contract=contract)
    both = execute(target, [gift, again], stop_at_first=False)
    assert both.ok, both.failures
    assert [op["owner"] for op in both.run.world.operations] == ["orchestrator-1"]
    # the invariant still holds a lone plan to completing (a positive control)
    lone = execute(attrs.evolve(target, policy=NeverSends()), [gift], stop_at_first=False)
    assert lone.failed("fault_free_completion")
