"""Conformance throughput: the SQLite and PostgreSQL reference stores against the in-memory
models.

    python benchmarks/bench_stores.py [--examples N] [--steps N] [--rounds N] [--dsn URL]

For each kind, ``txcheck.conformance.conform`` runs the same histories (derandomized:
same examples, same steps) with the in-memory model itself as the implementation, then
with the SQLite reference store, then (with ``--dsn``) with the PostgreSQL one, and
reports steps per CPU second and the ratio to the model, in the same run: the rows of a
kind are interleaved for ``--rounds`` rounds, each figure is the median over the rounds
and each ratio the median of the per-round ratios. CPU is this process plus its forked
children, plus for PostgreSQL the server's (the postmaster's own and its exited children's,
read from /proc: every backend of a run has exited when it ends; shown as ``n/a`` when the
server is not on this machine or its data directory cannot be read, and then left out).
The "crashes + races" rows add the crash points and two-client races; their rate counts
steps (operations compared, crash points and races). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from txcheck.conformance import conform
from txcheck.models.sim.idempotency import IdempotencyStore
from txcheck.models.stores import MemoryInbox, MemoryJournal, MemoryOutbox
from txcheck.models.stores.postgres import (
    PostgresIdempotencyStore,
    PostgresInbox,
    PostgresJournal,
    PostgresOutbox,
)
from txcheck.models.stores.sqlite import (
    SqliteIdempotencyStore,
    SqliteInbox,
    SqliteJournal,
    SqliteOutbox,
)

Factory = Callable[[str], Any]
STORES: dict[str, tuple[Factory, Factory, Factory]] = {
    "idempotency": (
        lambda path: IdempotencyStore(),
        SqliteIdempotencyStore,
        PostgresIdempotencyStore,
    ),
    "journal": (lambda path: MemoryJournal(), SqliteJournal, PostgresJournal),
    "outbox": (lambda path: MemoryOutbox(), SqliteOutbox, PostgresOutbox),
    "inbox": (lambda path: MemoryInbox(), SqliteInbox, PostgresInbox),
}


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _server_cpu(dsn: str) -> Callable[[], float] | None:
    """A reader of the PostgreSQL server's CPU seconds (postmaster and exited children),
    or None when the server's process cannot be read here."""
    import psycopg  # noqa: PLC0415 - only with --dsn

    try:
        with psycopg.connect(dsn, autocommit=True) as connection:
            row = connection.execute("SHOW data_directory").fetchone()
        pid = int((Path(str(row[0])) / "postmaster.pid").read_text().split()[0]) if row else 0
        stat = Path(f"/proc/{pid}/stat")
        stat.read_text()
    except (psycopg.Error, OSError, ValueError, IndexError):
        return None
    tick = os.sysconf("SC_CLK_TCK")

    def read() -> float:
        fields = stat.read_text().rsplit(")", 1)[1].split()
        return sum(int(fields[i]) for i in (11, 12, 13, 14)) / tick  # utime stime cutime cstime

    return read


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dsn", help="a PostgreSQL database: adds the PostgreSQL rows")
    parser.add_argument("--kinds", nargs="*", default=list(STORES), choices=list(STORES))
    args = parser.parse_args(argv)
    server = _server_cpu(args.dsn) if args.dsn else None
    print(f"examples {args.examples}, steps {args.steps}, rounds {args.rounds} (medians)")
    print(
        f"{'kind':<12} {'implementation':<28} {'ops':>6} {'crash pts':>9} {'races':>6} "
        f"{'CPU s':>7} {'server s':>8} {'steps/CPU s':>11} {'vs model':>9}"
    )
    for kind in args.kinds:
        model, sqlite, postgres = STORES[kind]
        rows: list[tuple[str, Factory, bool, str | None]] = [
            ("in-memory model", model, False, None),
            ("SQLite", sqlite, False, None),
            ("SQLite, crashes + races", sqlite, True, None),
        ]
        if args.dsn:
            rows += [
                ("PostgreSQL", postgres, False, args.dsn),
                ("PostgreSQL, crashes + races", postgres, True, args.dsn),
            ]
        seen: dict[str, list[tuple[Any, float, float | None, float]]] = {r[0]: [] for r in rows}
        for _round in range(args.rounds):
            base = None
            for name, factory, faults, dsn in rows:
                before = _cpu(), (server() if server and dsn else None)
                report = conform(
                    kind, factory, examples=args.examples, steps=args.steps,
                    crashes=faults, races=faults, dsn=dsn,
                )  # fmt: skip
                cpu = _cpu() - before[0]
                served = server() - before[1] if server and before[1] is not None else None
                assert report.passed, report.problem
                steps = report.operations + report.crash_points + report.races
                total = cpu + (served or 0.0)
                rate = steps / total if total else float("inf")
                base = rate if base is None else base
                seen[name].append((report, cpu, served, rate / base))
        for name, _factory, _faults, dsn in rows:
            runs = seen[name]
            report = runs[-1][0]
            cpu = statistics.median(r[1] for r in runs)
            served_runs = [r[2] for r in runs if r[2] is not None]
            served = statistics.median(served_runs) if served_runs else None
            shown = f"{served:>8.2f}" if served is not None else f"{'n/a' if dsn else '-':>8}"
            steps = report.operations + report.crash_points + report.races
            rate = steps / (cpu + (served or 0.0))
            ratio = statistics.median(r[3] for r in runs)
            print(
                f"{kind:<12} {name:<28} {report.operations:>6} {report.crash_points:>9} "
                f"{report.races:>6} {cpu:>7.2f} {shown} {rate:>11.0f} {ratio:>8.2f}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
