"""Sending a ``Target`` to other processes: its description, which workers build again.

A target holds live objects (a policy, services with their functions, invariants); what
travels is its ``TargetDescription`` (``txcheck.exploration.kernel.description``): the
policy as a built-in name or an import path (``package.module:Name``; a policy object is
named by its class's or its own module-level name), the contract and world fixture
documents, each service set and invariant by the import path of the module-level name
that holds it; beside it go the search's own parts (the plans, the bounds, the budget).
``build_target`` makes the runnable target from a description, with the loaders
``txcheck explore`` uses (the current directory is importable, so a user's modules load
as they do for the command): workers, the command line and ``replay`` build targets with
it. Anything that cannot be named that way (a class defined in ``__main__`` or inside a
function, a lambda invariant) is refused before any work is sent, in one line
(``ShippingError``).
"""

from __future__ import annotations

import hashlib
import pickle
import sys
from collections.abc import Iterable
from typing import Any

import attrs

from txcheck.exploration.kernel.description import TargetDescription
from txcheck.exploration.kernel.target import Bounds, Budget, Target
from txcheck.exploration.usercode.loading import (
    import_path,
    load_policy,
    load_user_code,
    origin,
)
from txcheck.exploration.usercode.watchdog import (
    DEFAULT_POLICY_TIMEOUT,
    WatchedPolicy,
    user_timeout,
)
from txcheck.invariants import Invariant
from txcheck.models.errors import InputError
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.policies import BUILTIN_POLICIES
from txcheck.models.sim.policies.base import Policy
from txcheck.models.sim.services import ServiceSet

__all__ = [
    "ShippingError",
    "TargetSpec",
    "build_target",
    "describe",
    "description_of",
    "rebuild",
]


class ShippingError(InputError):
    """Part of a target cannot be named so that another process can make it again."""


@attrs.frozen(kw_only=True)
class TargetSpec:
    """What a worker receives: the target's ``description`` and the search's own parts.
    ``policy_name`` is the name the target gives its policy (a Python caller may have
    chosen it apart from the import path that loads it); ``policy_timeout`` the
    watchdog's limit on the policy (None: not watched); ``key`` identifies everything but
    the budget, so a worker rebuilds a target once however many items it runs."""

    description: TargetDescription
    policy_name: str
    policy_timeout: float | None
    plans: tuple[tuple[Plan, ...], ...]
    bounds: Bounds
    budget: Budget
    user_timeout: float | None = None
    """The time limit of the user's services and invariants (``watchdog.Bounded``); they
    are loaded again under it, or under the default limit when they were not bounded."""
    key: str = ""


def _module_name(module: str, obj: object) -> str | None:
    """``module:NAME`` of a module-level name bound to ``obj`` itself, or None."""
    if module == "__main__":
        return None
    found = sys.modules.get(module)
    if found is None:
        return None
    for name, value in sorted(vars(found).items()):
        if value is obj and name.isidentifier():
            return f"{module}:{name}"
    return None


def _first(candidates: Iterable[str | None]) -> str | None:
    return next((c for c in candidates if c is not None), None)


def _policy(policy: Policy) -> tuple[str, float | None]:
    timeout = None
    inner = policy
    if isinstance(policy, WatchedPolicy):
        timeout, inner = policy.seconds, policy.inner
    entry_path = getattr(inner, "import_path", None)  # an asyncio orchestrator's entry
    if hasattr(inner, "entry"):
        if entry_path is None:
            raise ShippingError(
                f"policy {inner.name!r} cannot be sent to workers: its entry point is not "
                "importable (define it at the top of a module, not in __main__ or inside a "
                "function)",
                source="--workers",
            )
        return str(entry_path), timeout
    cls = type(inner)
    builtin = BUILTIN_POLICIES.get(inner.name) is cls
    instance = None if builtin else _module_name(cls.__module__, inner)
    spec = str(inner.name) if builtin else _first([instance, import_path(cls)])
    if spec is None:
        raise ShippingError(
            f"policy {inner.name!r} cannot be sent to workers: its class "
            f"{cls.__qualname__!r} is not importable (define it at the top of a module, "
            "not in __main__ or inside a function)",
            source="--workers",
        )
    if instance is None and vars(inner) != vars(cls()):
        raise ShippingError(
            f"policy {inner.name!r} cannot be sent to workers: it was configured after it "
            f"was made (its attributes differ from {cls.__qualname__}()); give the workers "
            "a module-level instance or a class",
            source="--workers",
        )
    return spec, timeout


def _service(service: ServiceSet) -> str:
    functions = [service.initial_state, *service.handlers.values()]
    modules = dict.fromkeys(getattr(f, "__module__", None) for f in functions)
    spec = _first([origin(service), *(_module_name(m, service) for m in modules if m is not None)])
    if spec is None:
        raise ShippingError(
            f"service set {service.name!r} cannot be sent to workers: no module-level name "
            "holds it in the module of its functions (define it at the top of that module)",
            source="--workers",
        )
    return spec


def _invariant(invariant: Invariant) -> str:
    module = getattr(invariant.check, "__module__", None)
    spec = _first([origin(invariant), None if module is None else _module_name(module, invariant)])
    if spec is None:
        raise ShippingError(
            f"invariant {invariant.name!r} cannot be sent to workers: it is not a "
            "module-level name of an importable module (define it with @always or "
            "@eventually at the top of a module)",
            source="--workers",
        )
    return spec


def _check_documents(target: Target) -> None:
    """A contract that was not read from a document cannot be made again elsewhere."""
    contract: Contract = target.contract
    if contract is not default_contract() and not contract.document:
        raise ShippingError(
            f"contract {contract.source!r} cannot be sent to workers: it was not read from "
            "a document (load it with load_contract or parse_contract)",
            source="--workers",
        )


def description_of(target: Target) -> TargetDescription:
    """``target`` named so that a worker can make it again: every service and invariant
    by its import path (``defaults=False``); ``ShippingError`` names the first part that
    cannot be named."""
    policy, _ = _policy(target.policy)
    _check_documents(target)
    return TargetDescription(
        policy=policy,
        contract=target.contract,
        fixture=target.fixture,
        services=tuple(_service(s) for s in target.services),
        invariants=tuple(_invariant(i) for i in target.invariants),
        defaults=False,
    )


def describe(target: Target) -> TargetSpec:
    """How to make ``target`` again in a worker; ``ShippingError`` names the first part
    that cannot be named. The description is checked by rebuilding it here once."""
    _, timeout = _policy(target.policy)
    spec = TargetSpec(
        description=description_of(target),
        policy_name=target.policy_name,
        policy_timeout=timeout,
        plans=target.plans,
        bounds=target.bounds,
        budget=target.budget,
        user_timeout=user_timeout(target.services, target.invariants),
    )
    digest = hashlib.sha256(pickle.dumps(attrs.evolve(spec, budget=Budget()))).hexdigest()
    spec = attrs.evolve(spec, key=digest)
    again = _build(spec)
    same = (
        [s.name for s in again.services] == [s.name for s in target.services]
        and [i.name for i in again.invariants] == [i.name for i in target.invariants]
        and again.policy_name == target.policy_name
    )
    if not same:  # pragma: no cover - a module-level name that loads as something else
        raise ShippingError(
            "the target rebuilt from its description differs from the target",
            source="--workers",
        )
    return spec


def build_target(
    description: TargetDescription,
    *,
    policy_timeout: float | None = DEFAULT_POLICY_TIMEOUT,
    user_timeout: float | None = None,
    **settings: Any,
) -> Target:
    """The runnable target ``description`` names: its policy loaded under the watchdog
    with ``policy_timeout`` (None: not watched), its services and invariants with
    ``user_timeout`` (None: the default limit), named ``settings`` (plans, bounds, budget,
    stores, policy_name) passed to ``Target``. The stores a description names are opened
    by the caller (``stores=``): where and on which database is the command's choice."""
    loaded = load_policy(description.policy, timeout=policy_timeout)
    services, invariants = load_user_code(
        description.services,
        description.invariants,
        only=description.invariants_only,
        skip=description.skip_invariants,
        timeout=user_timeout,
        defaults=description.defaults,
    )
    settings.setdefault("policy_name", loaded.spec)
    return Target(
        policy=loaded.policy,
        contract=description.contract,
        fixture=description.fixture,
        services=services,
        invariants=invariants,
        **settings,
    )


def _build(spec: TargetSpec) -> Target:
    return build_target(
        spec.description,
        policy_timeout=spec.policy_timeout,
        user_timeout=spec.user_timeout,
        policy_name=spec.policy_name,
        plans=spec.plans,
        bounds=spec.bounds,
        budget=spec.budget,
    )


_BUILT: dict[str, Target] = {}
"""Targets this process has rebuilt, by ``TargetSpec.key`` (a worker runs many items)."""


def rebuild(spec: TargetSpec) -> Target:
    """The target ``spec`` describes, made once per process and given ``spec``'s budget."""
    built = _BUILT.get(spec.key) if spec.key else None
    if built is None:
        built = _build(spec)
        if spec.key:
            _BUILT.clear()  # one target at a time: the last one is the one in use
            _BUILT[spec.key] = built
    return attrs.evolve(built, budget=spec.budget)
