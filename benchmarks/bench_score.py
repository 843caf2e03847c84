"""Scoring throughput: ``txcheck score`` per case against bare jsonschema on the same calls.

    python benchmarks/bench_score.py [--cases N] [--repeat R]

Builds N deterministic cases from the bundled checkout contract (full checkouts, single
reads, refunds; right and wrong arguments; all five vendor formats) and times, in one run:

- **score**: the whole strict scorer as ``txcheck score`` runs it, streaming from the
  ``.jsonl`` bytes to the summary (line reading and decoding, case parsing, proposal
  parsing, whole-plan validation at every level, expectation validation, alignment, legacy
  score, the JSON of every result, summary); output is not written;
- **bare jsonschema**: only ``Draft202012Validator.iter_errors`` over every proposed call's
  already-parsed arguments, with one validator per tool compiled beforehand.

Each is timed ``R`` times, alternating, in CPU time of this process (``time.process_time``,
so other load on the machine counts less), and the best run is reported, as cases per
second, with the ratio. Numbers vary by machine; this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import io
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from jsonschema import Draft202012Validator

from txcheck.models.plan.contract_loader import default_contract
from txcheck.scoring.case_contracts import CaseContracts
from txcheck.scoring.cases import LineError, iter_cases
from txcheck.scoring.reading import iter_lines
from txcheck.scoring.scorer import SummaryBuilder, score_cases

Calls = list[tuple[str, dict[str, Any]]]


def _checkout(n: int) -> Calls:
    order = f"ord_{n}"
    return [
        (
            "create_order",
            {
                "order_id": order,
                "customer_id": "cus_1",
                "items": [{"sku": "sku_book", "quantity": 1 + n % 3}],
                "currency": "USD",
                "idempotency_key": f"idem-create-{order}",
            },
        ),
        ("reserve_inventory", {"order_id": order, "idempotency_key": f"idem-reserve-{order}"}),
        (
            "charge_payment",
            {
                "order_id": order,
                "amount": 1250 * (1 + n % 3),
                "currency": "USD",
                "idempotency_key": f"idem-charge-{order}",
            },
        ),
        ("confirm_order", {"order_id": order, "idempotency_key": f"idem-confirm-{order}"}),
    ]


def _variant(n: int) -> tuple[Calls, Calls]:
    """(proposed, expected) for case ``n``: a spread of right and wrong answers."""
    kind = n % 6
    if kind == 0:
        return _checkout(n), _checkout(n)
    if kind == 1:  # a string amount
        wrong = _checkout(n)
        wrong[2] = ("charge_payment", dict(wrong[2][1], amount=str(wrong[2][1]["amount"])))
        return wrong, _checkout(n)
    if kind == 2:  # the confirm step left out
        return _checkout(n)[:3], _checkout(n)
    read: Calls = [("query_logistics", {"order_id": f"ord_{n}"})]
    if kind == 3:
        return read, read
    if kind == 4:  # an unexpected cancel after the read
        cancel = {"order_id": f"ord_{n}", "reason": "fraud", "idempotency_key": f"idem-c-{n}"}
        return [*read, ("cancel_order", cancel)], read
    refund: Calls = [("refund_payment", {"charge_id": f"ch_{n}", "reason": "damaged"})]
    return [("refund_payment", {"charge_id": f"ch_{n}"})], refund


def _proposal(calls: Calls, n: int) -> dict[str, Any]:
    fmt = n % 5
    if fmt == 0:
        tool_calls = [
            {"id": f"c{i}", "type": "function", "function": {"name": t, "arguments": json.dumps(a)}}
            for i, (t, a) in enumerate(calls)
        ]
        return {"role": "assistant", "content": None, "tool_calls": tool_calls}
    if fmt == 1:
        return {"choices": [{"message": _proposal(calls, 0)}]}
    if fmt == 2:
        output = [
            {"type": "function_call", "call_id": f"c{i}", "name": t, "arguments": json.dumps(a)}
            for i, (t, a) in enumerate(calls)
        ]
        return {"output": output}
    if fmt == 3:
        blocks = [
            {"type": "tool_use", "id": f"c{i}", "name": t, "input": a}
            for i, (t, a) in enumerate(calls)
        ]
        return {"role": "assistant", "content": blocks}
    parts = [{"functionCall": {"name": t, "args": a}} for t, a in calls]
    return {"candidates": [{"content": {"role": "model", "parts": parts}}]}


def build(count: int) -> tuple[str, Calls]:
    """The cases file text and every proposed call, for the bare baseline."""
    lines = []
    every_call: Calls = []
    for n in range(count):
        proposed, expected = _variant(n)
        every_call.extend(proposed)
        expect = {"calls": [{"name": t, "arguments": a} for t, a in expected]}
        lines.append(
            json.dumps({"id": f"case-{n}", "proposal": _proposal(proposed, n), "expect": expect})
        )
    return "\n".join(lines) + "\n", every_call


def best_of(repeat: int, *runs: Callable[[], object]) -> list[float]:
    """The best CPU time of each run; the runs alternate, so machine load hits them alike."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeat):
        for run, spent in zip(runs, times, strict=True):
            start = time.process_time()
            run()
            spent.append(time.process_time() - start)
    return [min(spent) for spent in times]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    contract = default_contract()
    text, calls = build(args.cases)
    validators = {
        name: Draft202012Validator(dict(tool.parameters)) for name, tool in contract.tools.items()
    }

    def bare() -> int:
        return sum(len(list(validators[t].iter_errors(a))) for t, a in calls)

    data = text.encode("utf-8")

    def strict() -> object:
        summary = SummaryBuilder()
        lines = iter_cases(iter_lines(io.BytesIO(data)))
        for item in score_cases(lines, CaseContracts(contract), source="bench.jsonl"):
            if not isinstance(item, LineError):
                item.to_json()
                summary.add(item)
        return summary.build(0)

    strict()  # warm caches (compiled contract) before timing either side
    bare()
    score_s, bare_s = best_of(args.repeat, strict, bare)
    score_rate = args.cases / score_s
    bare_rate = args.cases / bare_s
    print(f"cases: {args.cases} ({len(calls)} proposed calls), best CPU time of {args.repeat}")
    print(f"txcheck score:    {score_rate:10.0f} cases/s  ({score_s * 1e3:8.1f} ms)")
    print(f"bare jsonschema:  {bare_rate:10.0f} cases/s  ({bare_s * 1e3:8.1f} ms)")
    print(f"ratio: score is {bare_rate / score_rate:.1f}x slower than bare schema validation")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
