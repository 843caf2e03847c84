"""Where a JSON Schema (draft 2020-12) holds schemas, read by structure, never by name.

A key means what its place says: under ``properties`` (or ``patternProperties``, ``$defs``,
``dependentSchemas``) a key is a name and its value a subschema, whatever the name
(``"default"``, ``"format"``, ``"$ref"``); ``enum``, ``const``, ``default`` and
``examples`` hold data; an unknown keyword's value is never evaluated. A local ``$ref``
(``#`` or ``#/json/pointer``) makes its target a schema wherever it stands, even inside
``default``, and ``$dynamicRef: "#name"`` does the same for each ``$dynamicAnchor: name``.

``walk`` lists every such place once (its JSON path inside the schema and its value), the
edges along which a schema is applied to the *same* value (``allOf``, ``not``, ``$ref``,
...: a cycle of those never ends) and each reference that does not resolve this way. The
contract checks (``schema_refs``) and the fast path (``fast_schema``) both read schemas
through it, so neither can be fooled by a name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote

import attrs

from txcheck.models.json_path import PathPart
from txcheck.models.memo import IdentityMemo

__all__ = [
    "APPLICATORS",
    "DATA_KEYWORDS",
    "Edge",
    "Path",
    "SchemaMap",
    "Unresolved",
    "pointer_target",
    "walk",
]

Path = tuple[PathPart, ...]

# Draft 2020-12's applicators, as jsonschema's ``referencing`` reads them.
_ONE = frozenset(
    {
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAPS = frozenset({"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"})
APPLICATORS = _ONE | _LISTS | _MAPS
"""The keywords whose values are (lists or maps of) subschemas."""
_IN_PLACE = frozenset({"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas"})
"""Applied to the value itself, not to a part of it."""
DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
"""Keywords whose values are data (never walked unless a reference points into them)."""

_INDEX = re.compile(r"(?:0|[1-9][0-9]*)\Z")


@attrs.frozen(kw_only=True)
class Edge:
    """``source`` applies ``target`` to the same value; ``via`` is the keyword's path."""

    source: Path
    target: Path
    via: Path


@attrs.frozen(kw_only=True)
class Unresolved:
    """A reference at ``path`` (the ``$ref`` or ``$dynamicRef`` keyword itself) that does
    not resolve inside the schema, and why: ``external``, ``missing``, ``not-a-schema``."""

    path: Path
    keyword: str
    value: Any
    why: str
    found: Any = None


@attrs.frozen(kw_only=True)
class SchemaMap:
    """Every place ``walk`` found: ``positions`` (path -> schema, in document order from the
    root, then reference targets), ``in_place`` edges, and the ``unresolved`` references."""

    positions: dict[Path, Any]
    in_place: tuple[Edge, ...]
    unresolved: tuple[Unresolved, ...]

    def cycle(self) -> Edge | None:
        """An edge that closes a cycle of in-place applications, or ``None``."""
        graph: dict[Path, list[Edge]] = {}
        for edge in self.in_place:
            graph.setdefault(edge.source, []).append(edge)
        state: dict[Path, int] = {}  # 1: on the current path, 2: done
        for start in self.positions:
            if start in state:
                continue
            state[start] = 1
            stack: list[tuple[Path, Iterator[Edge]]] = [(start, iter(graph.get(start, ())))]
            while stack:
                node, edges = stack[-1]
                step = next(edges, None)
                if step is None:
                    state[node] = 2
                    stack.pop()
                elif state.get(step.target) == 1:
                    return step
                elif step.target not in state:
                    state[step.target] = 1
                    stack.append((step.target, iter(graph.get(step.target, ()))))
        return None


def pointer_target(root: Any, ref: str) -> tuple[Path, Any] | None:
    """The path and value a local reference (``#`` or ``#/json/pointer``, percent-decoded
    as jsonschema does) names inside ``root``; ``None`` when it is not such a reference or
    names nothing. List indexes must be plain (``0``, ``12``): anything else is nothing."""
    if not ref.startswith("#"):
        return None
    pointer = unquote(ref[1:])
    if not pointer:
        return (), root
    if not pointer.startswith("/"):
        return None
    node: Any = root
    path: list[PathPart] = []
    for raw in pointer[1:].split("/"):
        if isinstance(node, list):
            if not _INDEX.match(raw) or int(raw) >= len(node):
                return None
            index = int(raw)
            node = node[index]
            path.append(index)
        elif isinstance(node, Mapping):
            token = raw.replace("~1", "/").replace("~0", "~")
            if token not in node:
                return None
            node = node[token]
            path.append(token)
        else:
            return None
    return tuple(path), node


def _children(schema: Mapping[str, Any], path: Path) -> Iterator[tuple[Path, Any, bool]]:
    """``(path, subschema, applied in place)`` for each subschema ``schema`` holds."""
    for key, value in schema.items():
        if key in _ONE:
            yield (*path, key), value, key in _IN_PLACE
        elif key in _LISTS and isinstance(value, list):
            for i, item in enumerate(value):
                yield (*path, key, i), item, key in _IN_PLACE
        elif key in _MAPS and isinstance(value, Mapping):
            for name, item in value.items():
                yield (*path, key, name), item, key in _IN_PLACE


def walk(root: Any) -> SchemaMap:
    """Every place in ``root`` evaluated as a schema (see the module docstring). The map
    of a schema object walked lately is remembered (by identity, the object held so its id
    is not reused): reading a tool, compiling it and choosing its fast check each walk the
    same schema, and a benchmark brings thousands of them."""
    return _WALKED.one(root, _walk)


_WALKED: IdentityMemo[SchemaMap] = IdentityMemo(limit=256)


def _walk(root: Any) -> SchemaMap:
    positions: dict[Path, Any] = {}
    edges: list[Edge] = []
    unresolved: list[Unresolved] = []
    dynamic: list[tuple[Path, str]] = []  # ($dynamicRef position, anchor name)
    queue: list[tuple[Path, Any]] = [((), root)]
    while queue:
        path, schema = queue.pop()
        if path in positions:
            continue
        positions[path] = schema
        if not isinstance(schema, Mapping):
            continue
        found = list(_children(schema, path))
        edges.extend(
            Edge(source=path, target=child_path, via=child_path)
            for child_path, _, in_place in found
            if in_place
        )
        for keyword in ("$ref", "$dynamicRef"):
            ref = schema.get(keyword)
            if not isinstance(ref, str):
                continue
            if keyword == "$dynamicRef" and ref.startswith("#") and ref != "#" and ref[1] != "/":
                dynamic.append((path, ref[1:]))  # "#name": a $dynamicAnchor, found below
                continue
            target = _target(root, ref, path, keyword, unresolved)
            if target is not None:
                edges.append(Edge(source=path, target=target[0], via=(*path, keyword)))
                found.append((target[0], target[1], True))
        queue.extend((p, s) for p, s, _ in reversed(found))
    anchors: dict[str, list[Path]] = {}
    for path, schema in positions.items():
        if isinstance(schema, Mapping) and isinstance(schema.get("$dynamicAnchor"), str):
            anchors.setdefault(schema["$dynamicAnchor"], []).append(path)
    for path, name in dynamic:
        targets = anchors.get(name)
        if not targets:
            ref = positions[path]["$dynamicRef"]
            unresolved.append(
                Unresolved(
                    path=(*path, "$dynamicRef"), keyword="$dynamicRef", value=ref, why="anchor"
                )
            )
        edges.extend(
            Edge(source=path, target=anchored, via=(*path, "$dynamicRef"))
            for anchored in targets or ()
        )
    return SchemaMap(positions=positions, in_place=tuple(edges), unresolved=tuple(unresolved))


def _target(
    root: Any, ref: str, path: Path, keyword: str, unresolved: list[Unresolved]
) -> tuple[Path, Any] | None:
    where = (*path, keyword)
    if not ref.startswith("#") or (len(ref) > 1 and not ref.startswith("#/")):
        why = "external" if not ref.startswith("#") else "anchor"
        unresolved.append(Unresolved(path=where, keyword=keyword, value=ref, why=why))
        return None
    target = pointer_target(root, ref)
    if target is None:
        unresolved.append(Unresolved(path=where, keyword=keyword, value=ref, why="missing"))
        return None
    if not isinstance(target[1], (Mapping, bool)):
        unresolved.append(
            Unresolved(path=where, keyword=keyword, value=ref, why="not-a-schema", found=target[1])
        )
        return None
    return target
