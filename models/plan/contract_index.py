"""What plan checks look up per tool and workflow, derived once per contract.

Validation asks the same questions of every plan under one contract: which argument names
a tool's resource, which workflows a tool belongs to and at which step. Answering them from
the ``Contract`` each time means scanning its workflows per call; ``contract_index`` answers
them from dictionaries built on first use and kept while the contract object lives (keyed
on identity, like ``compile_contract``: contracts compare by value, not by schemas).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from txcheck.models.memo import WeakIdentityMemo
from txcheck.models.plan.contract import Contract, Workflow

__all__ = ["ContractIndex", "contract_index"]


@attrs.frozen(kw_only=True)
class ContractIndex:
    """Per-contract lookups for plan checks.

    ``resource``: tool name -> the argument naming its resource (tools that have one);
    ``keys``: tool name -> its idempotency-key argument, for tools that write and have one;
    ``roles``: tool name -> ``(key argument, resource argument)`` as in those two (for one
    lookup per call);
    ``side_effect``: the names of tools that write; ``keyless``: those with no idempotency
    key that are neither idempotent nor repeatable (a repeat of one is a second effect);
    ``workflows``: tool name -> the
    workflows that contain it, in contract order (one tuple object per distinct tuple);
    ``steps``: for each workflow (in contract order), tool name -> its first step index.
    ``groups`` remembers, per sequence of tool names on one resource, whether they are in
    step order and complete (see ``txcheck.models.plan.plan_quick``): plans repeat the same few
    sequences.
    """

    resource: Mapping[str, str]
    keys: Mapping[str, str]
    roles: Mapping[str, tuple[str | None, str | None]]
    side_effect: frozenset[str]
    keyless: frozenset[str]
    workflows: Mapping[str, tuple[Workflow, ...]]
    steps: tuple[Mapping[str, int], ...]
    groups: dict[tuple[str, ...], tuple[bool, bool]] = attrs.field(
        factory=dict, eq=False, repr=False
    )

    @classmethod
    def build(cls, contract: Contract) -> ContractIndex:
        tools = contract.tools
        resource = {n: t.resource for n, t in tools.items() if t.resource is not None}
        keys = {
            n: t.idempotency_key
            for n, t in tools.items()
            if t.has_side_effect and t.idempotency_key is not None
        }
        return cls(
            resource=resource,
            keys=keys,
            roles={n: (keys.get(n), resource.get(n)) for n in tools},
            side_effect=frozenset(n for n, t in tools.items() if t.has_side_effect),
            keyless=frozenset(
                n
                for n, t in tools.items()
                if t.has_side_effect
                and t.idempotency_key is None
                and not t.idempotent
                and not t.repeatable
            ),
            workflows=_shared({n: found for n in tools if (found := contract.workflows_with(n))}),
            steps=tuple(
                {name: i for i, name in reversed(list(enumerate(w.steps)))}
                for w in contract.workflows
            ),
        )


def _shared(
    workflows: dict[str, tuple[Workflow, ...]],
) -> dict[str, tuple[Workflow, ...]]:
    """The same map with one tuple object per distinct tuple of workflows, so that tools
    with the same workflows can be told alike by identity."""
    one: dict[tuple[Workflow, ...], tuple[Workflow, ...]] = {}
    return {name: one.setdefault(found, found) for name, found in workflows.items()}


_INDEXES: WeakIdentityMemo[Contract, ContractIndex] = WeakIdentityMemo()


def contract_index(contract: Contract) -> ContractIndex:
    """The index of ``contract``, built on first use and kept while the contract lives."""
    return _INDEXES.one(contract, ContractIndex.build)
