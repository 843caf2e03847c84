"""Detect another project's ``models`` or ``invariants`` package shadowing txcheck's own."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

__all__ = ["ensure_txcheck_packages"]

_HERE = Path(__file__).resolve().parent.parent


def _location(name: str) -> Path | None:
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    if origin is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        origin = spec.origin if spec is not None else None
    return Path(origin).resolve() if origin else None


def ensure_txcheck_packages(*names: str) -> None:
    """Raise ImportError naming both places when ``names`` do not resolve next to txcheck."""
    for name in names:
        expected = _HERE / name / "__init__.py"
        found = _location(name)
        if found != expected:
            raise ImportError(
                f"txcheck needs its own '{name}' package at {expected}, but '{name}' resolves "
                f"to {found if found is not None else 'nothing'}: another '{name}' on sys.path "
                "shadows it. Rename that package or remove its folder from sys.path."
            )
