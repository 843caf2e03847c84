"""The custom-service example runs, and its gift cards behave as its README says."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "custom_service" / "gift_cards.py"


@pytest.fixture(scope="module")
def gift_cards() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gift_cards_example", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_runs_as_documented() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0].split() == [
        "scenario",
        "policy",
        "active",
        "gift",
        "cards",
        "invariants",
        "that",
        "failed",
    ]
    assert lines[-1] == "as expected"
    rows = {tuple(line.split()[:5]): line for line in lines[1:-1]}
    lost = rows[("gift", "card", "response", "lost", "naive")]
    assert "gc_1, gc_2" in lost and "one_gift_card_per_order" in lost
    guarded = [line for line in lines[1:-1] if line[31:39].strip() == "guarded"]
    assert len(guarded) == 4 and all(line.endswith(" ok") for line in guarded)
    readme = (SCRIPT.parent / "README.md").read_text(encoding="utf-8")
    assert done.stdout in readme, "the README shows another output: paste the new one"


def test_guarded_voids_the_gift_card_first_when_confirm_is_declined(gift_cards: ModuleType) -> None:
    execution = gift_cards.run("guarded", gift_cards.SCENARIOS["confirm declined"])
    assert execution.ok and execution.quiesced
    undo = [op["tool"] for op in execution.run.world.operations if op["compensates"]]
    assert undo == ["void_gift_card", "refund_payment", "release_inventory", "cancel_order"]
    state = execution.run.world.state["gift_cards"]
    assert state["budget"] == 2000 and state["cards"]["gc_1"]["status"] == "void"


def test_the_new_invariants_catch_a_broken_gift_card_world(gift_cards: ModuleType) -> None:
    execution = gift_cards.run("guarded", ())
    view = execution.run.view()
    assert gift_cards.one_gift_card_per_order(view) == []
    assert gift_cards.gift_budget_conserved(view) == []
    cards = execution.run.world.state["gift_cards"]["cards"]
    cards["gc_9"] = {**cards["gc_1"], "amount": 100}
    assert gift_cards.one_gift_card_per_order(view) == [
        "order ord_1 has 2 active gift cards: gc_1, gc_9"
    ]
    assert gift_cards.gift_budget_conserved(view) == [
        "gift budget 1500 + active cards 600 != 2000 granted"
    ]


def test_a_handler_rejection_leaves_the_gift_card_state_alone(gift_cards: ModuleType) -> None:
    state = gift_cards.gift_card_state({"services": {"gift_cards": {"budget": 100}}})
    before = {**state, "cards": dict(state["cards"])}
    answer = gift_cards.send_gift_card(
        state, {"order_id": "o", "customer_id": "c", "amount": 500, "currency": "USD"}
    )
    assert answer.code == "budget_exhausted"
    assert state == before
