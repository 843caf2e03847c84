"""What txcheck asks of a tool's schema beyond being valid JSON Schema (draft 2020-12).

- **References stay inside the schema.** ``$ref`` is ``#`` or a JSON pointer ``#/...``
  naming a schema in the tool's own schema; ``$dynamicRef`` is that, or ``#name`` for a
  ``$dynamicAnchor`` in it. Anything else (an ``http://`` or ``file://`` URI, a relative
  URI, an anchor) would need a fetch, and txcheck never fetches: the validators' registry
  refuses every retrieval, and the contract is refused here first, with the path.
- **No ``$id`` below the root**: it would give the references under it another base URI.
- **No loop of in-place applications** (``$ref``, ``allOf``, ``not``, ...) that returns to
  a schema without descending into the value: checking anything against it never ends
  (jsonschema runs out of stack, jsonschema-rs gives up quietly: two verdicts).
- **Patterns the linear-time engine runs** (``schema_regex``).

Only the places the validators evaluate are read (``schema_walk``): a ``$ref`` inside
``default`` or under an unknown keyword is data, unless a reference points there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from txcheck.models.json_path import describe
from txcheck.models.memo import IdentityMemo
from txcheck.models.plan.schema_regex import pattern_problem
from txcheck.models.plan.schema_walk import Path, SchemaMap, Unresolved, walk

__all__ = ["rule_problem"]

_INSIDE = "txcheck resolves references only inside the tool's schema ('#' or '#/$defs/...')"


def rule_problem(schema: Any) -> tuple[Path, str] | None:
    """The first place (path inside ``schema``) breaking a rule above, and why; or ``None``.
    The answer for a schema object asked about lately is remembered (by identity, the
    object held): a tool's schema is asked about when read and again when compiled."""
    return _ANSWERED.one(schema, _rule_problem)


_ANSWERED: IdentityMemo[tuple[Path, str] | None] = IdentityMemo(limit=256)


def _rule_problem(schema: Any) -> tuple[Path, str] | None:
    found = walk(schema)
    unresolved: dict[Path, list[Unresolved]] = {}
    for ref in found.unresolved:
        unresolved.setdefault(ref.path[:-1], []).append(ref)
    for path, node in found.positions.items():
        if not isinstance(node, Mapping):
            continue
        if path and "$id" in node:
            return (*path, "$id"), (
                f"'$id' {node['$id']!r} below the schema's root gives the schema under it "
                f"another base URI: {_INSIDE}, against its root; remove it"
            )
        for ref in unresolved.get(path, ()):
            return ref.path, _unresolved_text(ref)
        problem = _patterns(node, path)
        if problem is not None:
            return problem
    return _loop(found)


def _unresolved_text(ref: Unresolved) -> str:
    said = f"{ref.keyword!r} {ref.value!r}"
    if ref.why == "external":
        return f"{said} is outside this schema: {_INSIDE} and never fetches one"
    if ref.why == "missing":
        return f"{said} does not resolve: it points at nothing inside the tool's schema"
    if ref.why == "not-a-schema":
        return f"{said} points at {describe(ref.found)}, not a schema"
    if ref.keyword == "$dynamicRef":
        return f"{said} names no '$dynamicAnchor' inside the tool's schema"
    return f"{said} is not a JSON pointer: {_INSIDE}; anchors are not followed"


def _patterns(node: Mapping[str, Any], path: Path) -> tuple[Path, str] | None:
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        problem = pattern_problem(pattern)
        if problem is not None:
            return (*path, "pattern"), problem
    keys = node.get("patternProperties")
    if isinstance(keys, Mapping):
        for key in keys:
            problem = pattern_problem(key)
            if problem is not None:
                return (*path, "patternProperties", key), problem
    return None


def _loop(found: SchemaMap) -> tuple[Path, str] | None:
    edge = found.cycle()
    if edge is None:
        return None
    keyword = edge.via[-1]
    if keyword in ("$ref", "$dynamicRef"):
        said = f"{keyword!r} {found.positions[edge.source][keyword]!r}"
    else:
        said = "this subschema"
    return edge.via, (
        f"{said} loops: it applies a schema to the same value it is applied from, without "
        "descending into the value, so checking any value against it would never end"
    )
