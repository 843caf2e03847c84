"""A ledger for the bank-transfer contract (``contract.json`` here): accounts, holds, credits.

Pass it to any command that runs plans::

    txcheck explore --contract examples/bank/contract.json --world examples/bank/world.json \\
        --services examples.bank.ledger:LEDGER --policy guarded

Money is integers (minor units). A hold moves an amount from an account's balance to its
held money; capturing the hold sends it away for good (the credit on the other side is what
receives it); releasing it gives it back. ``money_conserved`` checks, once a run is quiet,
that the accounts hold what they opened with.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from txcheck import Committed, Phase, Rejected, RunView, ServiceSet, eventually

__all__ = ["INVARIANTS", "LEDGER", "money_conserved"]


def ledger_state(document: Mapping[str, Any]) -> dict[str, Any]:
    """The fixture's ``services.ledger.accounts``: each account's opening balance."""
    section = document.get("services", {}).get("ledger", {})
    accounts = {
        str(name): {"balance": int(entry["balance"]), "held": 0}
        for name, entry in section.get("accounts", {}).items()
    }
    return {"accounts": accounts, "holds": {}, "credits": {}, "notices": [], "next": 0}


def _next_id(state: dict[str, Any], prefix: str) -> str:
    state["next"] += 1
    return f"{prefix}_{state['next']}"


def hold_funds(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    account = state["accounts"].get(args["from_account"])
    if account is None:
        return Rejected(code="unknown_account", message=f"no account {args['from_account']!r}")
    if account["balance"] < args["amount"]:
        return Rejected(
            code="insufficient_funds",
            message=f"{args['from_account']} has {account['balance']}, {args['amount']} asked",
        )
    hold_id = _next_id(state, "hold")
    account["balance"] -= args["amount"]
    account["held"] += args["amount"]
    state["holds"][hold_id] = {
        "transfer_id": args["transfer_id"],
        "account": args["from_account"],
        "amount": args["amount"],
        "status": "held",
    }
    return Committed(
        receipt={"hold_id": hold_id, "transfer_id": args["transfer_id"]},
        events=({"type": "funds_held", "hold_id": hold_id},),
    )


def release_hold(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    hold = state["holds"].get(args["hold_id"])
    if hold is None:
        return Rejected(code="hold_not_found", message=f"no hold {args['hold_id']!r}")
    if hold["status"] == "captured":
        return Rejected(code="hold_captured", message=f"hold {args['hold_id']} was captured")
    if hold["status"] == "held":
        hold["status"] = "released"
        account = state["accounts"][hold["account"]]
        account["held"] -= hold["amount"]
        account["balance"] += hold["amount"]
    return Committed(receipt={"hold_id": args["hold_id"], "status": "released"})


def credit_account(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    account = state["accounts"].get(args["to_account"])
    if account is None:
        return Rejected(code="unknown_account", message=f"no account {args['to_account']!r}")
    credit_id = _next_id(state, "cr")
    account["balance"] += args["amount"]
    state["credits"][credit_id] = {
        "transfer_id": args["transfer_id"],
        "account": args["to_account"],
        "amount": args["amount"],
        "status": "applied",
    }
    return Committed(
        receipt={"credit_id": credit_id, "transfer_id": args["transfer_id"]},
        events=({"type": "account_credited", "credit_id": credit_id},),
    )


def reverse_credit(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    credit = state["credits"].get(args["credit_id"])
    if credit is None:
        return Rejected(code="credit_not_found", message=f"no credit {args['credit_id']!r}")
    if credit["status"] == "applied":
        credit["status"] = "reversed"
        state["accounts"][credit["account"]]["balance"] -= credit["amount"]
    return Committed(receipt={"credit_id": args["credit_id"], "status": "reversed"})


def capture_hold(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    holds = [
        (hold_id, hold)
        for hold_id, hold in state["holds"].items()
        if hold["transfer_id"] == args["transfer_id"] and hold["status"] == "held"
    ]
    if not holds:
        return Rejected(code="no_hold", message=f"no open hold for {args['transfer_id']}")
    hold_id, hold = holds[0]
    hold["status"] = "captured"
    state["accounts"][hold["account"]]["held"] -= hold["amount"]
    return Committed(
        receipt={"hold_id": hold_id, "status": "captured"},
        events=({"type": "hold_captured", "hold_id": hold_id},),
    )


def notify_customer(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    state["notices"].append(args["transfer_id"])
    return Committed(receipt={"transfer_id": args["transfer_id"], "notified": True})


def get_transfer(state: dict[str, Any], args: Mapping[str, Any]) -> Committed:
    holds = {
        k: h["status"] for k, h in state["holds"].items() if h["transfer_id"] == args["transfer_id"]
    }
    credits = {
        k: c["status"]
        for k, c in state["credits"].items()
        if c["transfer_id"] == args["transfer_id"]
    }
    return Committed(
        receipt={"transfer_id": args["transfer_id"], "holds": holds, "credits": credits}
    )


LEDGER = ServiceSet(
    name="ledger",
    initial_state=ledger_state,
    handlers={
        "get_transfer": get_transfer,
        "hold_funds": hold_funds,
        "release_hold": release_hold,
        "credit_account": credit_account,
        "reverse_credit": reverse_credit,
        "capture_hold": capture_hold,
        "notify_customer": notify_customer,
    },
)


@eventually
def money_conserved(view: RunView) -> Iterator[str]:
    """Once the run is quiet, the accounts (balances and held money) hold what they opened
    with: a transfer moves money, it never creates or destroys it. (In flight, a credit
    may land before its hold is captured, so this is judged at quiescence.) A run handed
    to a person (MANUAL) is theirs to settle."""
    if any(_manual(entries) for entries in view.world.journals.values()):
        return
    now = view.world.state["ledger"]["accounts"]
    opened = view.initial_business_state["ledger"]["accounts"]
    delta = sum(a["balance"] + a["held"] for a in now.values()) - sum(
        a["balance"] + a["held"] for a in opened.values()
    )
    if delta:
        yield f"money {'created' if delta > 0 else 'destroyed'}: {abs(delta)}"


def _manual(entries: list[dict[str, Any]]) -> bool:
    phases = [e["phase"] for e in entries if "phase" in e]
    return bool(phases) and phases[-1] == Phase.MANUAL


INVARIANTS = (money_conserved,)
