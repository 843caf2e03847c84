"""World fixtures: a documented JSON file of initial state (catalog, stock, orders, principals).

Format ``txcheck-world/1`` (see docs/world-fixture.md)::

    {"format": "txcheck-world/1", "tenant": "acme",
     "catalog": {"sku_book": {"price": 1250, "stock": 10}},
     "orders": {"ord_1": {"customer_id": "cus_1", "currency": "USD",
                          "items": [{"sku": "sku_book", "quantity": 1}],
                          "status": "created"}},
     "principals": {"cus_1": {"tenant": "acme", "roles": ["customer"]}}}

Prices are integers in minor units. Order totals are derived from the catalog.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
import jsonschema

from txcheck.models.errors import WorldFixtureError
from txcheck.models.input_files import read_regular
from txcheck.models.strict_json import StrictJsonError, loads_strict

__all__ = ["FIXTURE_SCHEMA", "WorldFixture", "default_fixture", "load_world", "parse_world"]

_NAME = {"type": "string", "minLength": 1, "maxLength": 128}
_COUNT = {"type": "integer", "minimum": 0, "maximum": 10**12}

FIXTURE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["format"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": "txcheck-world/1"},
        "tenant": _NAME,
        "catalog": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["price"],
                "additionalProperties": False,
                "properties": {"price": _COUNT, "stock": _COUNT},
            },
        },
        "orders": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["customer_id", "items"],
                "additionalProperties": False,
                "properties": {
                    "customer_id": _NAME,
                    "currency": {"type": "string"},
                    "status": {"enum": ["created", "cancelled", "confirmed"]},
                    "items": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["sku", "quantity"],
                            "additionalProperties": False,
                            "properties": {
                                "sku": _NAME,
                                "quantity": {"type": "integer", "minimum": 1},
                            },
                        },
                    },
                },
            },
        },
        "principals": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "properties": {
                    "tenant": _NAME,
                    "roles": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
        "services": {"type": "object"},
    },
}

_VALIDATOR = jsonschema.Draft202012Validator(FIXTURE_SCHEMA)


@attrs.frozen(kw_only=True)
class WorldFixture:
    """A checked fixture document; ``source`` names where it came from."""

    document: Mapping[str, Any] = attrs.field(eq=False)
    source: str = "<world>"

    @property
    def tenant(self) -> str:
        return str(self.document.get("tenant", "default"))


def _json_path(parts: Any) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def parse_world(document: Any, *, source: str = "<world>") -> WorldFixture:
    """Check ``document`` against the fixture format; unknown SKUs in orders are errors too."""
    if not isinstance(document, dict):
        raise WorldFixtureError(
            f"a world fixture must be a JSON object (got {type(document).__name__})",
            source=source,
        )
    error = next(iter(sorted(_VALIDATOR.iter_errors(document), key=lambda e: list(e.path))), None)
    if error is not None:
        raise WorldFixtureError(error.message, source=source, path=_json_path(error.path))
    catalog = document.get("catalog", {})
    for order_id, order in sorted(document.get("orders", {}).items()):
        for index, item in enumerate(order["items"]):
            if item["sku"] not in catalog:
                raise WorldFixtureError(
                    f"sku {item['sku']!r} is not in the catalog",
                    source=source,
                    path=f"$.orders.{order_id}.items[{index}].sku",
                )
    return WorldFixture(document=document, source=source)


def load_world(path: str | Path) -> WorldFixture:
    """Read and check a fixture file; every problem is a one-line ``WorldFixtureError``."""
    source = str(path)
    try:
        data = read_regular(path, error=WorldFixtureError)
    except OSError as error:
        raise WorldFixtureError(
            f"cannot read world fixture ({error.strerror})", source=source
        ) from None
    try:
        document = loads_strict(data)
    except StrictJsonError as error:
        raise WorldFixtureError(str(error.problem), source=source, line=error.line) from None
    return parse_world(document, source=source)


def default_fixture() -> WorldFixture:
    """The bundled checkout world (also examples/checkout/world.json), parsed once; treat
    it as read-only."""
    return _bundled()


@functools.cache
def _bundled() -> WorldFixture:
    text = resources.files("txcheck.models").joinpath("data/checkout_world.json").read_text("utf-8")
    return parse_world(json.loads(text), source="checkout_world.json")
