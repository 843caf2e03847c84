"""The contract each case is scored under: its own ``tools``, else the one given to ``score``.

Benchmarks such as BFCL give every case its own tools, and repeat the same tools document
across many cases, so parsed contracts are cached per identical document (canonical JSON),
in a bounded LRU: a file of any length is scored in bounded memory. Each cached entry also
carries what scoring derives from its contract once: the idempotency-key arguments and the
verdicts on expectations already validated under it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import attrs

from txcheck.models.canonical import canonical_json
from txcheck.models.errors import ContractError, InputError
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import parse_contract
from txcheck.models.plan.schema_check import compile_contract
from txcheck.models.plan.verdict import Violation

__all__ = ["CaseContracts", "ScoringContext", "contract_document"]

NO_CONTRACT = "the case has no 'tools' and no CONTRACT was given"


def contract_document(tools: Any) -> Any:
    """A case's ``tools`` as a contract document: a bare list of tools becomes
    ``{"tools": [...]}``. (Drop once ``parse_contract`` reads bare lists itself.)"""
    return {"tools": tools} if isinstance(tools, list) else tools


@attrs.define
class ScoringContext:
    """A contract and what scoring derives from it once: the idempotency-key argument of
    each tool, and the ``expect_invalid`` verdicts on expectations seen under it (keyed by
    the canonical JSON of the expected calls and world)."""

    contract: Contract
    key_args: Mapping[str, str]
    expect_cache: dict[str, tuple[Violation, ...]] = attrs.field(factory=dict)

    @classmethod
    def of(cls, contract: Contract) -> ScoringContext:
        keys = {n: t.idempotency_key for n, t in contract.tools.items() if t.idempotency_key}
        return cls(contract=contract, key_args=keys)

    def remember(self, key: str, verdict: tuple[Violation, ...]) -> None:
        """Cache an expectation's verdict, keeping at most ``EXPECT_LIMIT`` of them."""
        if len(self.expect_cache) >= EXPECT_LIMIT:
            self.expect_cache.pop(next(iter(self.expect_cache)))
        self.expect_cache[key] = verdict


EXPECT_LIMIT = 4096
CONTRACT_LIMIT = 256


class CaseContracts:
    """Resolves each case's contract: its own ``tools`` when it has them, else ``default``."""

    def __init__(self, default: Contract | None, *, limit: int = CONTRACT_LIMIT) -> None:
        self.default = None if default is None else ScoringContext.of(default)
        self.limit = limit
        self._cache: OrderedDict[str, ScoringContext | str] = OrderedDict()

    def for_tools(self, tools: Any) -> ScoringContext:
        """The context for a case's tools; ``InputError`` (a bad line, its message without
        a location) when they are not a valid contract, or there are none and no default."""
        if tools is None:
            if self.default is None:
                raise InputError(NO_CONTRACT)
            return self.default
        key = canonical_json(tools)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._parse(tools)
            self._cache[key] = hit
            if len(self._cache) > self.limit:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        if isinstance(hit, str):
            raise InputError(hit)
        return hit

    @staticmethod
    def _parse(tools: Any) -> ScoringContext | str:
        """The context, or the problem with the tools (cached too: a bad tools document
        repeated on many lines is read once)."""
        if tools in ([], {"tools": []}):
            # no tool on offer (a benchmark's irrelevance question): every call is unknown
            return ScoringContext.of(Contract(tools={}, source="<case tools>", document=tools))
        try:
            contract = parse_contract(contract_document(tools), source="<case tools>")
            compile_contract(contract, eager=True)
        except ContractError as error:
            at = f" at {error.path}" if error.path else ""
            return f"'tools'{at}: {' '.join(error.problem.split())}"
        except RecursionError:
            return "'tools' nests too deeply to read"
        return ScoringContext.of(contract)
