"""The contract loader's warnings, printed once per command on stderr (and in ``--json``)."""

from __future__ import annotations

import sys

from txcheck.cli.safe_text import one_line
from txcheck.models.contract import Contract

__all__ = ["warn_about"]


def warn_about(command: str, contract: Contract) -> list[str]:
    """Print each of ``contract``'s warnings on stderr, once; return them for ``--json``."""
    warnings = [f"{contract.source}: {w}" for w in contract.warnings]
    for warning in warnings:
        print(f"txcheck {command}: warning: {one_line(warning, 400)}", file=sys.stderr)
    return warnings
