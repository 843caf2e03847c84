"""Level 2: each call's arguments against its tool's JSON Schema, with stable violation codes.

Validators are Draft 2020-12 with a format checker (``schema_validator``: nothing fetched,
patterns in linear time, exact ``multipleOf``), compiled once per contract
(``compile_contract`` caches on the contract object itself) and never per call. When
jsonschema-rs is installed, a call it accepts is valid without asking jsonschema
(``txcheck.models.plan.fast_schema`` says when that is safe); every other call is checked by
jsonschema, which alone reports violations (mapped onto codes by
``txcheck.models.plan.schema_errors``). Types are never coerced: ``"1"`` is not ``1`` and
``true`` is not ``1`` (jsonschema's own type checker already keeps booleans out of
``integer`` and ``number``).

A tool with ``strict: true`` is checked against a *closed* copy of its schema, derived at
compile time: every object-shaped subschema that says nothing about extra properties gets
``additionalProperties: false``, or ``unevaluatedProperties: false`` when it combines other
subschemas in place (``allOf``, ``anyOf``, ``oneOf``, ``$ref``, ``if``), so unknown
arguments are rejected at every nesting level. An explicit ``additionalProperties`` or
``unevaluatedProperties`` is the schema author's word and left alone, as is anything
under ``not``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import attrs
from jsonschema.exceptions import SchemaError

from txcheck.models.errors import ContractError
from txcheck.models.json_path import PathPart, format_path
from txcheck.models.memo import WeakIdentityMemo
from txcheck.models.plan.contract import Contract, Tool
from txcheck.models.plan.fast_schema import SAFE_INTEGER, FastCheck, fast_validator
from txcheck.models.plan.proposal import Call
from txcheck.models.plan.schema_errors import describe_value, map_errors, schema_violation
from txcheck.models.plan.schema_rules import rule_problem
from txcheck.models.plan.schema_validator import reference_validator
from txcheck.models.plan.tool_schema import check_schema

if TYPE_CHECKING:
    from txcheck.models.plan.plan_quick import CallLike
from txcheck.models.plan.verdict import Violation

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "CompiledContract",
    "closed_schema",
    "compile_contract",
    "nesting_depth",
]

MAX_ARGUMENT_DEPTH = 256
"""Arguments nested deeper than this get one violation instead of a schema check."""

_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("if", "then", "else")
_IN_PLACE_MAPS = ("dependentSchemas", "$defs", "definitions")
_CHILD_MAPS = ("properties", "patternProperties")
_CHILD_ONE = (
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
)
# Python will not print an integer of more than 4300 digits (jsonschema's messages would try);
# flag integers from about 4275 digits (14201 bits) so that none of those slips through.
_HUGE_DIGITS = 4275
_HUGE_BITS = int(_HUGE_DIGITS / 0.30103)


# -- closing a strict schema ------------------------------------------------------------


def closed_schema(schema: Any) -> Any:
    """A copy of ``schema`` that rejects unknown properties at every nesting level."""
    return _close(schema, location=True)


def _close(schema: Any, *, location: bool) -> Any:
    if not isinstance(schema, Mapping):
        return schema
    out = dict(schema)
    for key in _CHILD_MAPS:
        if isinstance(out.get(key), Mapping):
            out[key] = {k: _close(v, location=True) for k, v in out[key].items()}
    for key in _CHILD_ONE:
        if isinstance(out.get(key), list):  # pre-2020 tuple form of ``items``
            out[key] = [_close(s, location=True) for s in out[key]]
        elif key in out:
            out[key] = _close(out[key], location=True)
    if isinstance(out.get("prefixItems"), list):
        out["prefixItems"] = [_close(s, location=True) for s in out["prefixItems"]]
    for key in _IN_PLACE_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_close(s, location=False) for s in out[key]]
    for key in _IN_PLACE_ONE:
        if key in out:
            out[key] = _close(out[key], location=False)
    for key in _IN_PLACE_MAPS:
        if isinstance(out.get(key), Mapping):
            out[key] = {k: _close(v, location=False) for k, v in out[key].items()}
    if (
        location
        and "additionalProperties" not in out
        and "unevaluatedProperties" not in out
        and _shapes_object(out)
    ):
        in_place = any(k in out for k in (*_IN_PLACE_LISTS, *_IN_PLACE_ONE, "$ref", "$dynamicRef"))
        out["unevaluatedProperties" if in_place else "additionalProperties"] = False
    return out


def _shapes_object(schema: Any) -> bool:
    """Whether ``schema`` (or a subschema applied in place) describes an object's keys."""
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind):
        return True
    if any(k in schema for k in ("properties", "patternProperties", "required", "$ref")):
        return True
    branches = [s for k in _IN_PLACE_LISTS if isinstance(schema.get(k), list) for s in schema[k]]
    branches += [schema[k] for k in _IN_PLACE_ONE if k in schema]
    return any(_shapes_object(s) for s in branches)


# -- compiling ------------------------------------------------------------------------


_UNSET: Any = object()


class _Validators(Mapping[str, Any]):
    """The jsonschema validator of each tool, built when first asked for from the schema
    checked (and, for ``strict`` tools, closed) at compile time: a batch whose calls the
    fast check accepts never builds one."""

    def __init__(self, schemas: Mapping[str, Any]) -> None:
        self.schemas = schemas
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        built = self._built.get(name)
        if built is None:
            schema = self.schemas[name]
            built = reference_validator(schema)  # its rules were checked when read
            self._built[name] = built
        return built

    def __contains__(self, name: object) -> bool:
        return name in self.schemas  # without building a validator

    def __iter__(self) -> Iterator[str]:
        return iter(self.schemas)

    def __len__(self) -> int:
        return len(self.schemas)


class _FastValidators(Mapping[str, "FastCheck | None"]):
    """The jsonschema-rs check of each tool (``None`` where there is none), compiled when
    first asked for."""

    def __init__(self, validators: Mapping[str, Any]) -> None:
        self._validators = validators
        self._built: dict[str, FastCheck | None] = {}

    def __getitem__(self, name: str) -> FastCheck | None:
        if name not in self._built:
            validators = self._validators
            schema = (
                validators.schemas[name]
                if isinstance(validators, _Validators)
                else validators[name].schema
            )
            self._built[name] = fast_validator(schema)
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._validators)

    def __len__(self) -> int:
        return len(self._validators)


@attrs.frozen(kw_only=True)
class CompiledContract:
    """One validator per tool, built once; ``check`` maps each call's errors to violations.

    ``fast`` holds each tool's jsonschema-rs check (compiled when first asked for). A tool's
    first call is checked by jsonschema alone: compiling a fast check, and importing
    jsonschema-rs at all, costs more than that one call, so validating one small proposal
    never pays for it; from a tool's second call on, the fast check is used.
    """

    validators: Mapping[str, Any]  # tool name -> jsonschema validator
    fast: Mapping[str, FastCheck | None] = attrs.field(factory=dict)  # name -> rs is_valid
    eager: bool = False
    """Use the fast check from a tool's first call (a batch: jsonschema-rs is loaded
    anyway, and a benchmark's tools are often called once each)."""
    _ready: dict[str, FastCheck | None] = attrs.field(init=False, factory=dict, eq=False)
    _asked: set[str] = attrs.field(init=False, factory=set, eq=False)

    @classmethod
    def build(cls, contract: Contract, *, eager: bool = False) -> CompiledContract:
        validators = _Validators({n: _schema(contract, t) for n, t in contract.tools.items()})
        return cls(validators=validators, fast=_FastValidators(validators), eager=eager)

    def _fast_for(self, name: str) -> FastCheck | None:
        """The fast check for a call to ``name``: none for the tool's first call, unless
        ``eager``."""
        fast = self._ready.get(name, _UNSET)
        if fast is not _UNSET:
            return fast  # type: ignore[no-any-return]
        if not self.eager and name not in self._asked:  # first call: jsonschema alone
            self._asked.add(name)
            return None
        fast = self._ready[name] = self.fast.get(name)
        return fast

    def accepts(self, call: CallLike) -> bool:
        """True when jsonschema-rs alone shows ``call`` has no schema violation (a known
        tool, parsed arguments of plain JSON values); ``False`` means only "not shown"."""
        fast = self._fast_for(call.name)
        arguments = call.arguments
        return (
            fast is not None
            and type(arguments) is dict
            and _plain(arguments, 1)
            and _accepts(fast, call)
        )

    def check(self, call: Call) -> list[Violation]:
        """Violations of ``call``'s parsed arguments; an unknown tool or unparsed call has
        none here (those fail at other levels)."""
        arguments = call.arguments
        if arguments is None or call.name not in self.validators:
            return []
        fast = self._fast_for(call.name)
        if fast is not None and type(arguments) is dict and _plain(arguments, 1):
            # within the depth limit, no huge integer, every number exact: as _scan says
            try:
                if fast(arguments):
                    return []
            except Exception:  # jsonschema-rs cannot take the value: ask jsonschema
                pass
        else:
            depth, huge, exact = _scan(call.arguments)
            if fast is not None and exact and depth <= MAX_ARGUMENT_DEPTH and _accepts(fast, call):
                return []
            if depth > MAX_ARGUMENT_DEPTH:
                text = (
                    f"arguments nest {depth} levels deep; at most {MAX_ARGUMENT_DEPTH} are checked"
                )
                return [schema_violation("schema_violation", call, [], text)]
            if huge is not None:
                got = describe_value(huge[1])
                text = f"expected a number of at most {_HUGE_DIGITS} digits, got {got}"
                return [schema_violation("out_of_range", call, huge[0], text)]
        validator = self.validators[call.name]  # built only for a call the fast check left
        try:
            return list(map_errors(validator.iter_errors(call.arguments), call))
        except RecursionError:
            # jsonschema ran out of stack on a deep value; jsonschema-rs, where it is safe,
            # still answers, and must: a later call of the tool would be decided by it.
            fast = self.fast.get(call.name)
            if fast is not None and _scan(call.arguments)[2] and _accepts(fast, call):
                return []
            text = "arguments nest too deeply for this schema to be checked"
            return [schema_violation("schema_violation", call, [], text)]


def _accepts(fast: FastCheck, call: CallLike) -> bool:
    """jsonschema-rs's verdict; ``False`` (ask jsonschema) when it cannot take the value."""
    try:
        return fast(call.arguments)
    except Exception:
        return False


def _schema(contract: Contract, tool: Tool) -> Any:
    """The schema a tool's calls are checked against: its parameters, checked, and closed
    when the tool is ``strict``."""
    schema: Any = tool.parameters
    try:
        check_schema(schema)
        if tool.strict:
            schema = closed_schema(schema)
        problem = rule_problem(schema)  # what building its validator later would refuse
        if problem is not None:
            raise ContractError(problem[1], path=format_path(problem[0]))
    except SchemaError as error:
        raise ContractError(
            f"tool '{tool.name}': parameters must be a valid JSON Schema (draft 2020-12): "
            f"{error.message} at {format_path(error.absolute_path)}",
            source=contract.source,
        ) from None
    except ContractError as error:  # schema_rules: a reference, a loop, a pattern
        raise ContractError(
            f"tool '{tool.name}': parameters: {error.problem}",
            source=contract.source,
            path=error.path,
        ) from None
    except RecursionError:
        raise ContractError(
            f"tool '{tool.name}': parameters nest too deeply to compile", source=contract.source
        ) from None
    return schema


_COMPILED: WeakIdentityMemo[Contract, CompiledContract] = WeakIdentityMemo()


def compile_contract(contract: Contract, *, eager: bool = False) -> CompiledContract:
    """The compiled validators of ``contract``, built on first use and kept while the
    contract object lives (keyed on identity: contracts compare by value, not schemas).
    ``eager`` (for a contract built to score a batch) uses the fast check from each tool's
    first call."""
    if eager:
        return _COMPILED.one(contract, _build_eager)
    return _COMPILED.one(contract, CompiledContract.build)


def _build_eager(contract: Contract) -> CompiledContract:
    return CompiledContract.build(contract, eager=True)


_SAFE = SAFE_INTEGER


def _plain(value: Any, depth: int) -> bool:
    """True when ``value`` (a dict or list at nesting ``depth``) holds only JSON types,
    nests at most ``MAX_ARGUMENT_DEPTH`` deep and every number is exact as a double: then
    ``_scan`` would find the depth allowed, no huge integer, and every number exact. A
    quick recursive pass for the common case; ``False`` sends the value to ``_scan``."""
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not -_SAFE <= item <= _SAFE:
                return False
        elif kind is float:
            if item - item != 0:  # inf or nan
                return False
        elif kind is dict or kind is list:
            if depth >= MAX_ARGUMENT_DEPTH or not _plain(item, depth + 1):
                return False
        else:
            return False
    return True


def nesting_depth(value: Any) -> int:
    """How deeply objects and arrays nest in ``value`` (a scalar is 0), without recursion."""
    return _scan(value)[0]


def _scan(value: Any) -> tuple[int, tuple[tuple[PathPart, ...], int] | None, bool]:
    """Nesting depth; the path and value of the first integer too long to print (Python
    refuses to turn one into text, and jsonschema's messages would try); and whether every
    number is exact as a double (integers within +-2**53, finite floats), which the fast
    path needs. Without recursion; paths are kept as parent links, so a deep value costs
    linear time."""
    deepest = 0
    exact = True
    huge: tuple[tuple[PathPart, ...], int] | None = None
    Link = tuple[PathPart, Any] | None  # (key, parent link)
    stack: list[tuple[Any, int, Link]] = [(value, 0, None)]
    while stack:
        item, depth, link = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.items()
        elif isinstance(item, (list, tuple)):
            children = enumerate(item)
        else:
            if isinstance(item, float):
                exact = exact and item - item == 0  # false for inf and nan
            elif isinstance(item, int) and not -SAFE_INTEGER <= item <= SAFE_INTEGER:
                exact = False
            if huge is None and isinstance(item, int) and item.bit_length() > _HUGE_BITS:
                path: list[PathPart] = []
                while link is not None:
                    path.append(link[0])
                    link = link[1]
                huge = (tuple(reversed(path)), item)
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1, (key, link)) for key, child in children)
    return deepest, huge, exact
