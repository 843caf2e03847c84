"""Conformance throughput: the SQLite reference stores against the in-memory models.

    python benchmarks/bench_stores.py [--examples N] [--steps N]

For each kind, ``txcheck.conformance.conform`` runs the same histories (derandomized:
same examples, same steps) with the in-memory model itself as the implementation, then
with the SQLite reference store, and reports steps per CPU second (this
process plus its forked children) and the ratio, in the same run. A last row per kind
adds the crash points and two-client races; its rate counts steps (operations compared,
crash points and races). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable, Sequence
from typing import Any

from txcheck.conformance import Conformance, conform
from txcheck.models.sim.idempotency import IdempotencyStore
from txcheck.models.stores import MemoryInbox, MemoryJournal, MemoryOutbox
from txcheck.models.stores.sqlite import (
    SqliteIdempotencyStore,
    SqliteInbox,
    SqliteJournal,
    SqliteOutbox,
)

STORES: dict[str, tuple[Callable[[str], Any], Callable[[str], Any]]] = {
    "idempotency": (lambda path: IdempotencyStore(), SqliteIdempotencyStore),
    "journal": (lambda path: MemoryJournal(), SqliteJournal),
    "outbox": (lambda path: MemoryOutbox(), SqliteOutbox),
    "inbox": (lambda path: MemoryInbox(), SqliteInbox),
}


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(run: Callable[[], Conformance]) -> tuple[Conformance, float, float]:
    cpu, wall = _cpu(), time.perf_counter()
    report = run()
    return report, _cpu() - cpu, time.perf_counter() - wall


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"examples {args.examples}, steps {args.steps}")
    print(
        f"{'kind':<12} {'implementation':<24} {'ops':>6} {'crash pts':>9} {'races':>6} "
        f"{'CPU s':>7} {'steps/CPU s':>11} {'vs model':>9}"
    )
    for kind, (model, sqlite) in STORES.items():
        base = None
        runs = [
            ("in-memory model", model, False),
            ("SQLite", sqlite, False),
            ("SQLite, crashes + races", sqlite, True),
        ]
        for name, factory, faults in runs:
            report, cpu, _wall = _timed(
                lambda k=kind, f=factory, x=faults: conform(
                    k, f, examples=args.examples, steps=args.steps, crashes=x, races=x
                )
            )
            assert report.passed, report.problem
            steps = report.operations + report.crash_points + report.races
            rate = steps / cpu if cpu else float("inf")
            base = rate if base is None else base
            print(
                f"{kind:<12} {name:<24} {report.operations:>6} {report.crash_points:>9} "
                f"{report.races:>6} {cpu:>7.2f} {rate:>11.0f} {rate / base:>8.2f}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
