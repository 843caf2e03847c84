"""Throughput of whole-plan validation against bare JSON Schema validation.

Run from the repository root, in the project's virtual environment::

    python benchmarks/bench_validate.py                 # 2000 proposals, best of 5 rounds
    python benchmarks/bench_validate.py --proposals 500 --rounds 3

It builds a fixed, seeded mix of checkout proposals (valid checkouts, invalid ones with one
defect each, read-only lookups), then times, on the same proposals:

- ``validate``: every level txcheck runs without a world (json, schema, plan graph);
- bare jsonschema: each call's arguments against its tool's pre-compiled Draft 2020-12
  validator (with the format checker), collecting all errors, and nothing else.

Both figures are proposals per second (best round); the ratio is the cost of everything
txcheck checks beyond the schema. Parsing the proposal documents is not timed.
"""

from __future__ import annotations

import argparse
import copy
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.schema_check import compile_contract
from txcheck.models.plan.validation import validate

__all__ = ["build_mix", "main"]


def _checkout(order: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        (
            "create_order",
            {
                "order_id": order,
                "customer_id": "cus_1",
                "items": [{"sku": "sku_book", "quantity": 2}, {"sku": "sku_pen", "quantity": 1}],
                "currency": "USD",
                "idempotency_key": f"{order}-create",
            },
        ),
        ("reserve_inventory", {"order_id": order, "idempotency_key": f"{order}-reserve"}),
        (
            "charge_payment",
            {
                "order_id": order,
                "amount": 2800,
                "currency": "USD",
                "idempotency_key": f"{order}-charge",
            },
        ),
        ("confirm_order", {"order_id": order, "idempotency_key": f"{order}-confirm"}),
    ]


def _defect(calls: list[tuple[str, dict[str, Any]]], rng: random.Random) -> None:
    """One defect of the kinds the examples show, in place."""
    kind = rng.choice(["type", "missing", "unknown", "enum", "range", "order", "key", "drop"])
    charge = calls[2][1]
    if kind == "type":
        charge["amount"] = "28.00"
    elif kind == "missing":
        del charge["currency"]
    elif kind == "unknown":
        charge["force"] = True
    elif kind == "enum":
        charge["currency"] = "GBP"
    elif kind == "range":
        calls[0][1]["items"][0]["quantity"] = 0
    elif kind == "order":
        calls[1], calls[2] = calls[2], calls[1]
    elif kind == "key":
        del charge["idempotency_key"]
    else:
        calls.pop()


def build_mix(count: int, seed: int = 0) -> list[Plan]:
    """``count`` proposals: half valid checkouts, a quarter with one defect, a quarter reads."""
    rng = random.Random(seed)
    plans: list[Plan] = []
    for n in range(count):
        order = f"ord_{n:06d}"
        roll = n % 4
        if roll in (0, 1):
            calls = _checkout(order)
            if rng.random() < 0.5:
                calls.append(("query_logistics", {"order_id": f"ord_{rng.randrange(count):06d}"}))
        elif roll == 2:
            calls = copy.deepcopy(_checkout(order))
            _defect(calls, rng)
        else:
            calls = [
                (rng.choice(["get_order", "query_logistics"]), {"order_id": f"ord_{i:06d}"})
                for i in rng.sample(range(count), rng.randint(1, 3))
            ]
        plans.append(Plan.of(*calls))
    return plans


def _best(rounds: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def _bare(contract: Contract, plans: Sequence[Plan]) -> Callable[[], object]:
    validators = compile_contract(contract).validators

    def run() -> int:
        errors = 0
        for plan in plans:
            for call in plan.calls:
                validator = validators.get(call.name)
                if validator is not None and call.arguments is not None:
                    errors += len(list(validator.iter_errors(call.arguments)))
        return errors

    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proposals", type=int, default=2000, help="proposals in the mix")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds; the best counts")
    args = parser.parse_args(argv)

    contract = default_contract()
    plans = build_mix(args.proposals)
    calls = sum(len(p.calls) for p in plans)
    invalid = sum(not validate(contract, p).valid for p in plans)  # also warms the caches

    full = _best(args.rounds, lambda: [validate(contract, p) for p in plans])
    bare = _best(args.rounds, _bare(contract, plans))

    print("run: python benchmarks/bench_validate.py [--proposals N] [--rounds R]")
    print(f"python {platform.python_version()} on {platform.machine()}")
    print(f"mix: {len(plans)} proposals, {calls} calls, {invalid} invalid; best of {args.rounds}")
    print(f"txcheck validate : {len(plans) / full:10.0f} proposals/s  ({calls / full:.0f} calls/s)")
    print(f"bare jsonschema  : {len(plans) / bare:10.0f} proposals/s  ({calls / bare:.0f} calls/s)")
    print(f"ratio            : {full / bare:10.2f}x the time of bare schema validation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
