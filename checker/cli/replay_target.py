"""The target a trace is re-run under, for ``replay`` and ``report``.

A trace is data: ``trusted_target`` refuses (``check_trust``) to import a policy, services
or invariants the trace names and the user did not, then builds the target from the
trace's contract and world, the chosen policy, the user's services and the invariants
narrowed as the trace (or the command line) says.
"""

from __future__ import annotations

import argparse

from txcheck.cli.store_options import load_stores, untrusted
from txcheck.cli.user_code import select_invariants
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.usercode.loading import load_invariants, load_policy, load_services
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.errors import InputError
from txcheck.models.sim.checkout import CHECKOUT
from txcheck.models.sim.stored import Stores
from txcheck.traces.document import Trace, target_of
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
    policy = args.policy or trace.policy
    loaded = load_policy(policy, timeout=args.policy_timeout)
    services = args.services or (list(trace.services) if args.trust_trace else [])
    invariants = args.invariants or (list(trace.invariants) if args.trust_trace else [])
    only = args.invariants_only or list(trace.invariants_only)  # names are data: no trust
    skipped = args.skip_invariant or list(trace.skip_invariants)
    timeout = args.policy_timeout
    checks = (*DEFAULT_INVARIANTS, *load_invariants(invariants, timeout=timeout))
    return target_of(
        trace,
        loaded.policy,
        policy_name=loaded.spec,
        services=(CHECKOUT, *load_services(services, timeout=timeout)),
        invariants=select_invariants(checks, only, skipped),
        stores=_stores(trace, args),
    )


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
