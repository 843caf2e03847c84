"""The linearizability checker against the serial-order check it replaced, on histories of
growing size.

    python benchmarks/bench_linearizable.py [--sizes 2 4 6 8] [--histories N] [--seed S]

Each history is ``size`` clients' operations on the idempotency store, drawn the way
``txcheck conform`` draws a race's (``begin`` on tenant t1, keys k1 and k2), run serially
on the model at random points and given overlapping intervals (all of them concurrent, as
in a race where every client is called before any returns), then closed with a read of
each record. Half of them get one outcome tampered (not linearizable). Both checks run on
the same histories in the same run:

- ``serial``: what conformance did before, generalised to n operations: try every order
  of the operations under the model (n! orders), compare the answers and the final state;
- ``WGL``: ``txcheck.conformance.linearizable.check``, per key, memoised.

CPU seconds per history (median over the histories) and the ratio. The serial check is
skipped above ``--serial-max`` operations (its orders grow as n!). A measurement, not a
test.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

from txcheck.conformance.linearizable import History, Operation, Specification, check
from txcheck.conformance.operations import KIND_SPECS, Op, answer
from txcheck.models.sim.idempotency import IdempotencyStore

SPEC = KIND_SPECS["idempotency"]


def _apply(model: Any, step: Any) -> Any:
    return answer(step.apply(model))


def _draw(rng: random.Random) -> Any:
    def draw(strategy: Any) -> Any:
        # the race draws only from sampled_from strategies: pick among their elements
        return rng.choice(list(strategy.elements))

    return draw


def history(size: int, rng: random.Random, *, tamper: bool) -> History:
    model = IdempotencyStore()
    ops: list[Operation] = []
    draw = _draw(rng)
    for point in range(size):
        op = SPEC.race(draw, model, 0) if SPEC.race else Op("lookup")
        outcome = _apply(model, op)
        ops.append(Operation(point, op, point + 1, size + 1 + point, outcome))
    if tamper:
        victim = rng.randrange(size)
        ops[victim] = Operation(victim, ops[victim].step, ops[victim].call, ops[victim].ret, "x")
    rng.shuffle(ops)  # which client ran what: the intervals all overlap
    ops = [Operation(i, op.step, i + 1, 2 * size - i, op.outcome) for i, op in enumerate(ops)]
    last = 2 * size
    for j, probe in enumerate(SPEC.probes(0)):
        ops.append(
            Operation(size + j, probe, last + 1 + 2 * j, last + 2 + 2 * j, _apply(model, probe))
        )
    return History(tuple(ops))


def serial(history: History) -> bool:
    """The old check, for n operations: some order of all of them gives every answer, and
    the final reads (applied last, in their order) give theirs."""
    racing = [op for op in history.operations if not op.reads_only]
    finals = [op for op in history.operations if op.reads_only]
    for order in itertools.permutations(racing):
        model = IdempotencyStore()
        if all(_apply(model, op.step) == op.outcome for op in order) and all(
            _apply(model, op.step) == op.outcome for op in finals
        ):
            return True
    return False


def _cpu(work: Any) -> tuple[float, Any]:
    start = time.process_time()
    found = work()
    return time.process_time() - start, found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[2, 3, 4, 5, 6, 7, 8, 12, 16])
    parser.add_argument("--histories", type=int, default=20)
    parser.add_argument("--serial-max", type=int, default=7)
    parser.add_argument("--seed", type=int, default=26)
    args = parser.parse_args(argv)
    spec = Specification(initial=IdempotencyStore(), apply=_apply, cells=SPEC.cells)
    print(f"{args.histories} histories per size (half tampered), seed {args.seed}; medians")
    print(
        f"{'ops':>4} {'serial ms':>10} {'WGL ms':>9} {'WGL steps':>10} {'serial/WGL':>11} "
        f"{'agree':>6}"
    )
    for size in args.sizes:
        rng = random.Random(args.seed * 1000 + size)
        serial_cpu: list[float] = []
        wgl_cpu: list[float] = []
        steps: list[int] = []
        agree = 0
        for n in range(args.histories):
            made = history(size, rng, tamper=n % 2 == 1)
            cpu, found = _cpu(lambda made=made: check(made, spec))
            wgl_cpu.append(cpu)
            steps.append(found.steps)
            assert found.verdict != "unknown"
            assert found.linearizable == (n % 2 == 0), found.explanation
            if size <= args.serial_max:
                cpu, passed = _cpu(lambda made=made: serial(made))
                serial_cpu.append(cpu)
                agree += passed == found.linearizable
        wgl = statistics.median(wgl_cpu) * 1000
        if serial_cpu:
            old = statistics.median(serial_cpu) * 1000
            shown = f"{old:>10.3f} {wgl:>9.3f} {statistics.median(steps):>10.0f} "
            shown += f"{old / wgl:>10.1f}x {agree:>3}/{args.histories}"
        else:
            shown = f"{'-':>10} {wgl:>9.3f} {statistics.median(steps):>10.0f} {'-':>11} {'-':>6}"
        print(f"{size:>4} {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
