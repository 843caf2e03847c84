"""``--services`` and ``--invariants``: a user's own services and invariants, by import path.

Shared by every command that runs plans (explore, replay, evaluate, scenarios, and validate
with ``--world``). What they name is imported from the current directory, like a policy.
"""

from __future__ import annotations

import argparse
from typing import Any

import attrs

from txcheck.exploration.loading import load_invariants, load_services
from txcheck.invariants import DEFAULT_INVARIANTS, Invariant
from txcheck.models.checkout import CHECKOUT
from txcheck.models.services import ServiceSet

__all__ = ["UserCode", "add_user_code_options", "user_code"]


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


@attrs.frozen(kw_only=True)
class UserCode:
    """The services and invariants a command runs with, and the import paths that name
    the user's own (as traces record them)."""

    services: tuple[ServiceSet, ...]
    invariants: tuple[Invariant, ...]
    service_specs: tuple[str, ...] = ()
    invariant_specs: tuple[str, ...] = ()

    def record(self) -> dict[str, Any]:
        """What a trace records: the import paths, only when there are any."""
        data: dict[str, Any] = {}
        if self.service_specs:
            data["services"] = list(self.service_specs)
        if self.invariant_specs:
            data["invariants"] = list(self.invariant_specs)
        return data


def user_code(args: argparse.Namespace) -> UserCode:
    """Checkout and the user's services; the built-in and the user's invariants."""
    services = tuple(args.services or ())
    invariants = tuple(args.invariants or ())
    return UserCode(
        services=(CHECKOUT, *load_services(services)),
        invariants=(*DEFAULT_INVARIANTS, *load_invariants(invariants)),
        service_specs=services,
        invariant_specs=invariants,
    )
