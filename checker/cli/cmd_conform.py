"""``txcheck conform KIND --impl module:Class``: check a store against the model.

A Hypothesis state machine applies the same operations to the implementation and to the
model (``txcheck.models.sim.idempotency`` and ``txcheck.models.stores.memory``) and compares
every answer; for a store exposing its ``sqlite3`` or ``psycopg`` connection, an operation
may also crash at a statement boundary (in a child process, then the store is reopened) or
race a second client statement by statement. With ``--dsn URL`` the store is PostgreSQL's:
``Class(DSN)`` is called with a DSN whose ``search_path`` starts with a fresh schema per
history (dropped afterwards), so runs never see each other's rows. Each race (``--clients
N``, default 2) is a history checked for linearizability against the model
(``txcheck.conformance.linearizable``). Exit 0 with what was exercised, 1 with the shortest
failing history as numbered operations, 2 on bad input, 3 when the checker spent its step
budget on a race's history (undecided: not a pass).
Importing ``--impl`` runs the user's code, as ``--policy`` does.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from txcheck.cli import EXIT_FOUND, EXIT_INCONCLUSIVE, EXIT_OK
from txcheck.cli.arguments import positive_int

__all__ = ["register", "run"]

KIND_CHOICES = ("idempotency", "journal", "outbox", "inbox")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "conform",
        help="check a store implementation against the model, with crashes and races",
        description=(
            "Check a store implementation (Class(path) opens it on a fresh SQLite file path) "
            "against txcheck's model of the record: exit 0 when every answer and every "
            "state after a crash or a race of clients is one the model allows, 1 with the "
            "shortest failing history, 2 on bad input, 3 when a race's history was left "
            "undecided by the linearizability checker's budget."
        ),
    )
    parser.add_argument("kind", choices=KIND_CHOICES, help="which record the store keeps")
    parser.add_argument(
        "--impl",
        required=True,
        metavar="MODULE:CLASS",
        help="the store class (or factory) to check, called with one path (or DSN) argument",
    )
    parser.add_argument(
        "--dsn",
        metavar="URL",
        help="a PostgreSQL database to check the store on (each history in a fresh schema, "
        "dropped afterwards); needs psycopg: pip install 'txcheck[postgres]'",
    )
    parser.add_argument(
        "--examples", type=positive_int, default=100, metavar="N", help="histories to try"
    )
    parser.add_argument(
        "--steps", type=positive_int, default=20, metavar="N", help="operations per history"
    )
    parser.add_argument("--no-crashes", action="store_true", help="inject no crash points")
    parser.add_argument("--no-races", action="store_true", help="run no races between clients")
    parser.add_argument(
        "--clients",
        type=_clients,
        default=2,
        metavar="N",
        help="clients in each race, 2 to 16 (default 2); each history is checked for "
        "linearizability against the model",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(run=run)


def _clients(text: str) -> int:
    """How many clients race: 2 to 16."""
    number = positive_int(text)
    if not 2 <= number <= 16:
        raise argparse.ArgumentTypeError(f"expected an integer from 2 to 16 (got {text!a})")
    return number


def _factory(spec: str, kind: str, dsn: str | None = None) -> Any:
    """A callable ``path -> store`` that turns any failure to open into ``StoreError``
    (with ``dsn``, a DSN is never repeated: it may hold a password)."""
    from txcheck.exploration.usercode.loading import check_import_path, resolve_import_path
    from txcheck.models.errors import ControlFlow, StoreError, raised
    from txcheck.models.stores import protocols

    found = resolve_import_path(check_import_path(spec, "--impl", "store"), "store", StoreError)
    if not callable(found):
        raise StoreError(f"{spec} is not a class or a callable")
    protocol = {
        "idempotency": protocols.IdempotencyStoreProtocol,
        "journal": protocols.JournalProtocol,
        "outbox": protocols.OutboxProtocol,
        "inbox": protocols.InboxProtocol,
    }[kind]

    def open_store(path: str) -> Any:
        try:
            store = found(path)
        except ControlFlow:
            raise
        except BaseException as error:  # user code: even SystemExit is reported
            shown = "DSN" if dsn is not None else repr(path)
            raise StoreError(f"{spec}({shown}) raised {raised(error)}") from None
        missing = [
            name
            for name in sorted(vars(protocol))
            if not name.startswith("_") and not callable(getattr(store, name, None))
        ]
        if missing:
            raise StoreError(
                f"{spec} does not implement {protocol.__name__}: it has no {', '.join(missing)}"
            )
        return store

    if dsn is not None:
        from txcheck.conformance.postgres import Schemas

        schemas = Schemas(dsn)  # an unreachable server: StoreError, before any search
        try:
            _open_and_close(open_store, schemas.fresh())
        finally:
            schemas.close()
        return open_store
    with tempfile.TemporaryDirectory(prefix="txcheck-conform-") as folder:
        _open_and_close(open_store, str(Path(folder) / "store.sqlite3"))
    return open_store


def _open_and_close(open_store: Any, path: str) -> None:
    """Open one store (fail before any search), then close it."""
    close = getattr(open_store(path), "close", None)
    if callable(close):
        close()


def run(args: argparse.Namespace) -> int:
    from txcheck.conformance import conform

    factory = _factory(args.impl, args.kind, args.dsn)
    report = conform(
        args.kind,
        factory,
        examples=args.examples,
        steps=args.steps,
        crashes=not args.no_crashes,
        races=not args.no_races,
        clients=args.clients,
        dsn=args.dsn,
    )
    if args.json:
        sys.stdout.write(json.dumps({"impl": args.impl, **report.to_json()}, indent=2) + "\n")
        return (
            EXIT_OK if report.passed else EXIT_INCONCLUSIVE if report.inconclusive else EXIT_FOUND
        )
    who = "two-client" if args.clients == 2 else f"{args.clients}-client"
    exercised = (
        f"{report.examples} examples, {report.operations} operations compared, "
        f"{report.crash_points} crash points ({report.crashes} crashed mid-operation), "
        f"{report.races} {who} races ({report.race_steps} statements stepped)"
    )
    if report.passed:
        print(f"CONFORMS  {args.impl} ({args.kind}): every answer and state the model allows")
        print(f"  {exercised}")
        if not (report.crash_points or report.races) and not (args.no_crashes and args.no_races):
            print(
                "  no crash point or race was tried: they need the store's sqlite3.Connection "
                "(or psycopg.Connection) as its `connection` attribute"
            )
        return EXIT_OK
    if report.inconclusive:
        print(f"UNDECIDED  {args.impl} ({args.kind}): not a pass")
    else:
        print(f"MISMATCH  {args.impl} ({args.kind})")
    print(f"  {report.problem}")
    count = len(report.history)
    if count:
        print(f"Shortest failing history ({count} step{'' if count == 1 else 's'}):")
    for number, line in enumerate(report.history, 1):
        print(f"  {number}. {line}")
    print(f"  ({exercised})")
    return EXIT_INCONCLUSIVE if report.inconclusive else EXIT_FOUND
