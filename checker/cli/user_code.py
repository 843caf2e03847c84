"""``--services`` and ``--invariants``: a user's own services and invariants, by import path;
``--invariants-only`` and ``--skip-invariant``: which invariants a run checks, by name.

Shared by every command that runs plans (explore, replay, evaluate, scenarios, and validate
with ``--world``). What they name is imported from the current directory, like a policy.
"""

from __future__ import annotations

import argparse
from typing import Any

import attrs

from txcheck.cli.arguments import positive_seconds
from txcheck.exploration.kernel.description import TargetDescription
from txcheck.exploration.usercode.loading import load_user_code
from txcheck.exploration.usercode.watchdog import DEFAULT_POLICY_TIMEOUT
from txcheck.invariants import Invariant
from txcheck.models.plan.contract import Contract
from txcheck.models.sim.fixture import WorldFixture
from txcheck.models.sim.services import ServiceSet
from txcheck.models.sim.stored import Stores

__all__ = [
    "UserCode",
    "add_invariant_selection",
    "add_user_code_options",
    "user_code",
]


POLICY_TIMEOUT_HELP = (
    "stop a user policy that runs this long without yielding, or a user's service or "
    "invariant that runs this long without returning"
)


def add_rerun_options(parser: Any) -> None:
    """The options of a command that runs a trace again (``replay``, ``report``): the time
    limit of user code, the user's own services and invariants, and ``--trust-trace``
    (``txcheck.cli.replay_target.trusted_target`` reads them)."""
    parser.add_argument(
        "--policy-timeout",
        type=positive_seconds,
        default=DEFAULT_POLICY_TIMEOUT,
        metavar="S",
        help=POLICY_TIMEOUT_HELP,
    )
    add_user_code_options(parser)
    parser.add_argument(
        "--store",
        action="append",
        default=[],
        metavar="KIND=SPEC",
        help="run on this store (KIND journal or idempotency, SPEC sqlite, postgres or "
        "package.module:Class) instead of the one the trace names; repeatable",
    )
    parser.add_argument(
        "--dsn",
        metavar="URL",
        help="the PostgreSQL database a trace recorded on PostgreSQL stores runs on",
    )
    parser.add_argument(
        "--trust-trace",
        action="store_true",
        help="import the policy, services and invariants the trace names",
    )


def add_user_code_options(parser: Any) -> None:
    parser.add_argument(
        "--services",
        action="append",
        default=[],
        metavar="MODULE:NAME",
        help="your own ServiceSet (or a list of them) next to checkout; repeatable",
    )
    parser.add_argument(
        "--invariants",
        action="append",
        default=[],
        metavar="MODULE:NAME",
        help="your own invariant (or a list of them) next to the built-in ones; repeatable",
    )
    add_invariant_selection(parser)


def add_invariant_selection(parser: Any) -> None:
    parser.add_argument(
        "--invariants-only",
        nargs="+",
        default=[],
        metavar="NAME",
        help="check only the invariants named (built-in or your own)",
    )
    parser.add_argument(
        "--skip-invariant",
        nargs="+",
        default=[],
        metavar="NAME",
        help="do not check the invariants named",
    )


@attrs.frozen(kw_only=True)
class UserCode:
    """The services and invariants a command runs with, and the import paths that name
    the user's own (as traces record them)."""

    services: tuple[ServiceSet, ...]
    invariants: tuple[Invariant, ...]
    service_specs: tuple[str, ...] = ()
    invariant_specs: tuple[str, ...] = ()
    only: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()

    @property
    def users(self) -> bool:
        """Whether the user named services or invariants of their own."""
        return bool(self.service_specs or self.invariant_specs)

    def checked(self) -> tuple[str, ...] | None:
        """The names of the invariants checked when a selection narrowed them, else None."""
        if not self.only and not self.skipped:
            return None
        return tuple(i.name for i in self.invariants)

    def describe(
        self,
        policy: str,
        *,
        contract: Contract,
        fixture: WorldFixture,
        stores: Stores | None = None,
    ) -> TargetDescription:
        """The description of the target this command runs: ``policy`` (the spec it
        loaded), the contract and world, this user code and ``stores``, as a trace
        records them."""
        return TargetDescription(
            policy=policy,
            contract=contract,
            fixture=fixture,
            services=self.service_specs,
            invariants=self.invariant_specs,
            invariants_only=self.only,
            skip_invariants=self.skipped,
            stores={} if stores is None else stores.names,
        )


def user_code(args: argparse.Namespace) -> UserCode:
    """Checkout and the user's services; the built-in and the user's invariants, narrowed
    by ``--invariants-only`` and ``--skip-invariant``. The user's code runs under the
    watchdog, with ``--policy-timeout`` (where the command has it) as its limit."""
    services = tuple(args.services or ())
    invariants = tuple(args.invariants or ())
    only = tuple(getattr(args, "invariants_only", None) or ())
    skipped = tuple(getattr(args, "skip_invariant", None) or ())
    timeout = getattr(args, "policy_timeout", None) or DEFAULT_POLICY_TIMEOUT
    loaded_services, checks = load_user_code(
        services, invariants, only=only, skip=skipped, timeout=timeout
    )
    return UserCode(
        services=loaded_services,
        invariants=checks,
        service_specs=services,
        invariant_specs=invariants,
        only=only,
        skipped=skipped,
    )
