"""The contract loader's warnings, and a world fixture's sections no service reads,
printed once per command on stderr (and in ``--json``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from txcheck.cli.safe_text import one_line
from txcheck.models.plan.contract import Contract
from txcheck.models.sim.fixture import WorldFixture
from txcheck.models.sim.services import ServiceSet

__all__ = ["warn_about", "warn_unread"]


def warn_about(command: str, contract: Contract) -> list[str]:
    """Print each of ``contract``'s warnings on stderr, once; return them for ``--json``."""
    warnings = [f"{contract.source}: {w}" for w in contract.warnings]
    for warning in warnings:
        print(f"txcheck {command}: warning: {one_line(warning, 400)}", file=sys.stderr)
    return warnings


def warn_unread(command: str, fixture: WorldFixture, services: Sequence[ServiceSet]) -> list[str]:
    """Warn about each non-empty section of ``fixture`` that none of ``services`` reads (the
    rules that would read it are not there); return the warnings for ``--json``."""
    from txcheck.models.sim.world_rules import unread_sections  # noqa: PLC0415 (start-up)

    warnings = [
        f"{fixture.source}: the world fixture's section {name!r} is read by no service, so "
        "no rule checks it (give the service that reads it with --services)"
        for name in unread_sections(fixture, services)
    ]
    for warning in warnings:
        print(f"txcheck {command}: warning: {one_line(warning, 400)}", file=sys.stderr)
    return warnings
