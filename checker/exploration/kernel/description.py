"""What names a target reproducibly: the one description a trace stores, the command line
builds and workers receive (docs/decisions/014-target-description.md).

A ``Target`` holds live objects (a policy, services with their functions, invariants); a
``TargetDescription`` holds how to make them again: the policy as a built-in name or an
import path, the contract and the world fixture, the user's services and invariants by
their import paths (``module:NAME``), the selection of invariants by name and the real
stores by class path. Those are exactly the fields a ``txcheck-trace/1`` document records
(``record`` gives them, under the keys and in the form a trace has always used), so a
trace, a command line and a worker describe a target in one way and
``txcheck.exploration.spread.shipping.build_target`` makes the runnable ``Target`` from
any of them. How hard to search (plans, bounds, budget) and the watchdog's limits are not
part of it: they are the search's, not the target's name.

A description pickles as documents (the bundled contract and world as None), not as the
parsed objects, so that a worker parses them again with the loaders the command uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from txcheck.models.errors import InputError
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import default_contract, parse_contract
from txcheck.models.sim.fixture import WorldFixture, default_fixture, parse_world

__all__ = ["TargetDescription"]


def _names(value: Sequence[str]) -> tuple[str, ...]:
    """Import paths or names, as a tuple; a bare string is a mistake (its letters are not
    names)."""
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise InputError(
            f"expected a list of strings (got {value!r:.80})", source="TargetDescription"
        )
    return tuple(value)


def _stores(value: Mapping[str, str]) -> Mapping[str, str]:
    return dict(sorted(dict(value).items()))


@attrs.frozen(kw_only=True)
class TargetDescription:
    """A target named so that another process, a trace file or a printed reproduction
    can make it again. ``policy`` is a built-in name, ``package.module:Name`` or an agent
    ``FRAMEWORK:package.module:make_agent``; ``services`` and ``invariants`` are import
    paths (``module:NAME``, or ``module:NAME#i`` for item ``i`` of a list) of the user's
    own, next to checkout and the built-in invariants unless ``defaults`` is False (then
    they name every one, as a Python target sent to workers does); ``invariants_only``
    and ``skip_invariants`` narrow the invariants by name; ``stores`` names the real
    stores by kind (``module:Class``; empty: the in-memory world)."""

    policy: str
    contract: Contract = attrs.field(factory=default_contract, eq=False)
    fixture: WorldFixture = attrs.field(factory=default_fixture, eq=False)
    services: tuple[str, ...] = attrs.field(default=(), converter=_names)
    invariants: tuple[str, ...] = attrs.field(default=(), converter=_names)
    invariants_only: tuple[str, ...] = attrs.field(default=(), converter=_names)
    skip_invariants: tuple[str, ...] = attrs.field(default=(), converter=_names)
    stores: Mapping[str, str] = attrs.field(factory=dict, converter=_stores)
    defaults: bool = True

    @property
    def users(self) -> bool:
        """Whether the description names services or invariants of the user's own."""
        return bool(self.services or self.invariants)

    @property
    def selects(self) -> bool:
        """Whether the invariants are narrowed by name."""
        return bool(self.invariants_only or self.skip_invariants)

    def record(self) -> dict[str, Any]:
        """What a trace records of the description beyond the policy, the contract and
        the world: the import paths, the selection and the stores, each only when there
        are any (so a trace of a plain target has none of these keys)."""
        if not self.defaults:
            raise InputError(
                "a description that names every service and invariant (defaults=False) "
                "cannot be recorded in a trace, which names only the user's own",
                source="TargetDescription",
            )
        data: dict[str, Any] = {}
        if self.services:
            data["services"] = list(self.services)
        if self.invariants:
            data["invariants"] = list(self.invariants)
        if self.invariants_only:
            data["invariants_only"] = list(self.invariants_only)
        if self.skip_invariants:
            data["skip_invariants"] = list(self.skip_invariants)
        if self.stores:
            data["stores"] = dict(self.stores)
        return data

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Pickled as its documents (the bundled contract and world as None), parsed again
        when unpickled; see the module docstring."""
        contract, fixture = self.contract, self.fixture
        state: dict[str, Any] = {
            "policy": self.policy,
            "contract": None if contract is default_contract() else dict(contract.document),
            "contract_source": contract.source,
            "fixture": None if fixture is default_fixture() else dict(fixture.document),
            "fixture_source": fixture.source,
            "services": self.services,
            "invariants": self.invariants,
            "invariants_only": self.invariants_only,
            "skip_invariants": self.skip_invariants,
            "stores": dict(self.stores),
            "defaults": self.defaults,
        }
        return (_unpickle, (state,))


def _unpickle(state: dict[str, Any]) -> TargetDescription:
    """A description from its pickled form (``TargetDescription.__reduce__``): the
    documents parsed again, as the command's loaders parse them."""
    contract = state.pop("contract")
    fixture = state.pop("fixture")
    contract_source = state.pop("contract_source")
    fixture_source = state.pop("fixture_source")
    return TargetDescription(
        contract=(
            default_contract()
            if contract is None
            else parse_contract(dict(contract), source=contract_source)
        ),
        fixture=(
            default_fixture()
            if fixture is None
            else parse_world(dict(fixture), source=fixture_source)
        ),
        **state,
    )
