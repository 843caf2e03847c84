"""The target a trace is re-run under, for ``replay`` and ``report``.

A trace is data: ``trusted_target`` refuses (``check_trust``) to import a policy, services
or invariants the trace names and the user did not, then builds the target
(``build_target``) from the trace's description: its contract and world, the chosen
policy, the user's services and the invariants narrowed as the trace (or the command
line) says.
"""

from __future__ import annotations

import argparse

import attrs

from txcheck.cli.store_options import load_stores, untrusted
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.spread.shipping import build_target
from txcheck.models.errors import InputError
from txcheck.models.sim.stored import Stores
from txcheck.traces.document import Trace
from txcheck.traces.replaying import check_trust

__all__ = ["trusted_target"]


def trusted_target(trace: Trace, args: argparse.Namespace) -> Target:
    """The target of ``trace`` under ``args.policy`` (or the recorded one), with the
    options every re-running command takes (``add_user_code_options``,
    ``--trust-trace``, ``--policy-timeout``)."""
    check_trust(
        trace,
        policy=args.policy,
        services=args.services,
        invariants=args.invariants,
        trust=args.trust_trace,
        source=args.trace,
    )
    description = attrs.evolve(
        trace.description,
        policy=args.policy or trace.policy,
        services=args.services or (trace.services if args.trust_trace else ()),
        invariants=args.invariants or (trace.invariants if args.trust_trace else ()),
        # names are data: no trust needed
        invariants_only=args.invariants_only or trace.invariants_only,
        skip_invariants=args.skip_invariant or trace.skip_invariants,
    )
    target = build_target(
        description, policy_timeout=args.policy_timeout, user_timeout=args.policy_timeout
    )
    return attrs.evolve(target, stores=_stores(trace, args))  # opened after the user code


def _stores(trace: Trace, args: argparse.Namespace) -> Stores | None:
    """The stores ``--store`` names, else the ones the trace recorded: those of
    ``txcheck.models.stores`` freely, a user's class only with ``--trust-trace``."""
    given = list(getattr(args, "store", []) or [])
    dsn = getattr(args, "dsn", None)
    if given:
        return load_stores(given, dsn)
    foreign = untrusted(trace.stores)
    if foreign and not args.trust_trace:
        option = " ".join(f"--store {kind}={spec}" for kind, spec in sorted(trace.stores.items()))
        raise InputError(
            f"the trace was recorded on the stores {', '.join(foreign)}; replay imports "
            f"them only when you pass the same: {option} (or --trust-trace)",
            source=args.trace,
        )
    return load_stores(trace.stores, dsn)
