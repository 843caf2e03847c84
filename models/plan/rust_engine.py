"""jsonschema-rs, imported on first use, or ``None`` where it is not installed.

Importing it costs more than checking a few calls with jsonschema, so nothing imports it
until a fast check (``fast_schema``) or a pattern (``schema_regex``) needs it.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["engine"]

_LOADED: list[Any] = []  # [jsonschema-rs or None], once asked for


def engine() -> Any:
    """The ``jsonschema_rs`` module, or ``None`` when it cannot be imported."""
    if not _LOADED:
        try:
            _LOADED.append(importlib.import_module("jsonschema_rs"))
        except ImportError:  # pragma: no cover - exercised where jsonschema-rs is absent
            _LOADED.append(None)
    return _LOADED[0]
