"""Typed comparison of proposed calls with expected calls, and their optimal alignment.

The scorer needs two things from a case: whether the proposed calls equal the expected ones
*exactly* (typed values, idempotency keys by presence and uniqueness), and, when they do not,
which proposed call corresponds to which expected call so that a violation can say what went
wrong. The second is an assignment problem: calls are paired only with calls of the same
tool, and the pairing maximises the total argument similarity (an optimal matching from
networkx, never a greedy one), breaking ties towards the listed order.

Expected values may hold ``$any`` and ``$optional`` markers (``txcheck.scoring.patterns``), and
a case may declare a string normalisation; both are passed down as ``norm``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, Literal

import attrs

from txcheck.models.json_path import PathPart, describe, format_path
from txcheck.scoring.patterns import AnyOf, Normalizer, OptionalMember, describe_expected, matches
from txcheck.scoring.patterns import to_json as pattern_json

__all__ = [
    "Alignment",
    "ArgDiff",
    "DiffKind",
    "Pair",
    "align",
    "argument_similarity",
    "diff_arguments",
    "typed_equal",
]

DiffKind = Literal["value", "missing", "extra", "unparsed", "key_reused", "key_split"]


def typed_equal(a: Any, b: Any) -> bool:
    """JSON equality with types: ``1 == 1.0``, but ``1 != "1"``, ``True != 1``, ``None`` only
    equals ``None``; objects compare key by key and arrays element by element."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(typed_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(typed_equal(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is None and b is None
    return False


@attrs.frozen(kw_only=True)
class ArgDiff:
    """One way a proposed call's arguments differ from the expected call's.

    ``path`` names the argument (``$.amount``, ``$.items[0].quantity``); ``kind`` says how it
    differs: a different value, missing, extra (not expected), the whole argument object did
    not parse, or an idempotency key shared where distinct keys were expected
    (``key_reused``) or split where one key was expected (``key_split``).
    """

    path: str
    kind: DiffKind
    expected: Any = None
    got: Any = None

    def describe(self) -> str:
        """One clause for a ``wrong_arguments`` message, types spelled out."""
        if self.kind == "value":
            return (
                f"{self.path} expected {describe_expected(self.expected)}, got {describe(self.got)}"
            )
        if self.kind == "missing":
            return f"{self.path} expected {describe_expected(self.expected)}, got nothing"
        if self.kind == "extra":
            return f"{self.path} not expected, got {describe(self.got)}"
        if self.kind == "unparsed":
            return "the arguments did not parse, so no argument can match"
        if self.kind == "key_reused":
            return (
                f"{self.path} idempotency key {describe(self.got)} is reused, but the expected "
                "calls are distinct operations that need distinct keys"
            )
        return (
            f"{self.path} idempotency key {describe(self.got)} differs from the key of a call "
            "that the expectation treats as the same operation"
        )


def _show(value: Any) -> str:
    """A typed canonical text for comparing key values (``1`` and ``"1"`` differ)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True)


def _diff_values(
    expected: Any, got: Any, parts: tuple[PathPart, ...], out: list[ArgDiff], norm: Normalizer
) -> None:
    if isinstance(expected, OptionalMember):
        expected = expected.value
    if (
        isinstance(expected, AnyOf)
        and len(expected.options) == 1
        and not matches(expected, got, norm)
    ):
        expected = expected.options[0]  # one option: say precisely where it differs
    if isinstance(expected, Mapping) and isinstance(got, Mapping):
        for key in sorted(set(expected) | set(got)):
            sub = (*parts, key)
            if key not in got:
                if not isinstance(expected[key], OptionalMember):
                    out.append(
                        ArgDiff(path=format_path(sub), kind="missing", expected=expected[key])
                    )
            elif key not in expected:
                out.append(ArgDiff(path=format_path(sub), kind="extra", got=got[key]))
            else:
                _diff_values(expected[key], got[key], sub, out, norm)
    elif (
        isinstance(expected, (list, tuple))
        and isinstance(got, (list, tuple))
        and len(expected) == len(got)
    ):
        for i, (x, y) in enumerate(zip(expected, got, strict=True)):
            _diff_values(x, y, (*parts, i), out, norm)
    elif not matches(expected, got, norm):
        out.append(ArgDiff(path=format_path(parts), kind="value", expected=expected, got=got))


def diff_arguments(
    expected: Mapping[str, Any],
    got: Mapping[str, Any] | None,
    *,
    key_arg: str | None,
    norm: Normalizer = None,
) -> tuple[ArgDiff, ...]:
    """Every difference between expected and proposed arguments, by argument path.

    The idempotency-key argument ``key_arg`` matches by presence only: its value is the
    model's to choose (uniqueness across calls is checked by ``align``).
    """
    if got is None:
        return (ArgDiff(path="$", kind="unparsed", expected=dict(expected)),)
    out: list[ArgDiff] = []
    if key_arg is not None:
        path = format_path((key_arg,))
        required_key = key_arg in expected and not isinstance(expected[key_arg], OptionalMember)
        if required_key and key_arg not in got:
            out.append(ArgDiff(path=path, kind="missing", expected=expected[key_arg]))
        elif key_arg in got and key_arg not in expected:
            out.append(ArgDiff(path=path, kind="extra", got=got[key_arg]))
        expected = {k: v for k, v in expected.items() if k != key_arg}
        got = {k: v for k, v in got.items() if k != key_arg}
    _diff_values(expected, got, (), out, norm)
    return tuple(sorted(out, key=lambda d: d.path))


def argument_similarity(
    expected: Mapping[str, Any],
    got: Mapping[str, Any] | None,
    *,
    key_arg: str | None,
    norm: Normalizer = None,
) -> Fraction:
    """The share of top-level argument names (union of both sides) whose values are
    acceptable (an optional argument left out counts as acceptable); 1 when neither side
    has arguments, 0 when the proposed arguments did not parse."""
    if got is None:
        return Fraction(0)
    names = set(expected) | set(got)
    if not names:
        return Fraction(1)
    same = 0
    for n in names:
        if n not in expected:
            continue
        if n not in got:
            same += isinstance(expected[n], OptionalMember)
        elif n == key_arg or matches(expected[n], got[n], norm):
            same += 1
    return Fraction(same, len(names))


@attrs.frozen(kw_only=True)
class Pair:
    """An expected call (index into the expectation) aligned with a proposed call (index
    into the plan), with the differences between their arguments."""

    expected: int
    proposed: int
    diffs: tuple[ArgDiff, ...]

    @property
    def exact(self) -> bool:
        return not self.diffs


@attrs.frozen(kw_only=True)
class Alignment:
    """The optimal pairing of expected and proposed calls.

    ``missing`` are expected calls left unpaired, ``extra`` proposed calls left unpaired,
    ``out_of_order`` the proposed indices of pairs outside a longest in-order run (only a
    failure when the case is ordered).
    """

    pairs: tuple[Pair, ...]
    missing: tuple[int, ...]
    extra: tuple[int, ...]
    out_of_order: tuple[int, ...]

    @property
    def exact(self) -> bool:
        return not self.missing and not self.extra and all(p.exact for p in self.pairs)


ExpectedCall = tuple[str, Mapping[str, Any]]
ProposedCall = tuple[str, Mapping[str, Any] | None]


def _matching(
    expected: Sequence[ExpectedCall],
    proposed: Sequence[ProposedCall],
    key_args: Mapping[str, str],
    norm: Normalizer,
) -> list[tuple[int, int]]:
    """Maximum-cardinality, maximum-similarity pairing of same-name calls.

    Calls of different tools are never paired, so each tool is an independent assignment
    problem over the complete bipartite graph of its expected and proposed calls.
    """
    groups: dict[str, tuple[list[int], list[int]]] = {}
    for i, (name, _) in enumerate(expected):
        groups.setdefault(name, ([], []))[0].append(i)
    for j, (name, _) in enumerate(proposed):
        if name in groups:
            groups[name][1].append(j)
    pairs: list[tuple[int, int]] = []
    for name, (es, ps) in groups.items():
        if ps:
            pairs.extend(_match_tool(es, ps, expected, proposed, key_args.get(name), norm=norm))
    return sorted(pairs)


def _match_tool(
    es: Sequence[int],
    ps: Sequence[int],
    expected: Sequence[ExpectedCall],
    proposed: Sequence[ProposedCall],
    key_arg: str | None,
    *,
    norm: Normalizer,
) -> list[tuple[int, int]]:
    """The optimal pairing of one tool's expected calls ``es`` with its proposed calls ``ps``.

    Similarities are made integers over a common denominator; each is scaled above the sum
    of all tie-breaks, so the tie-break (pair the k-th expected call of the tool with its
    k-th proposed call) never outweighs similarity. With one call on either side the best
    pair is simply the maximum; when both sides are as long and the k-th calls are all
    exactly alike, that pairing has the highest possible weight and is the only one to
    have it; otherwise networkx finds the optimal assignment.
    """

    def similarity(i: int, j: int) -> Fraction:
        return argument_similarity(expected[i][1], proposed[j][1], key_arg=key_arg, norm=norm)

    if len(es) == len(ps) and all(similarity(i, j) == 1 for i, j in zip(es, ps, strict=True)):
        return list(zip(es, ps, strict=True))
    edges = [
        (i, j, similarity(i, j), abs(a - b)) for a, i in enumerate(es) for b, j in enumerate(ps)
    ]
    if len(es) == 1 or len(ps) == 1:  # distances along the longer side are all distinct
        i, j, _, _ = max(edges, key=lambda e: (e[2], -e[3]))
        return [(i, j)]
    import networkx as nx  # noqa: PLC0415  (only here: most cases never need a solver)

    denominator = math.lcm(*(sim.denominator for _, _, sim, _ in edges))
    n = max(len(es), len(ps))
    scale = n * (n + 1) + 1
    graph = nx.Graph()
    for i, j, sim, distance in edges:
        weight = (int(sim * denominator) + 1) * scale + (n - distance)
        graph.add_edge(("e", i), ("p", j), weight=weight)
    pairs = []
    for u, v in nx.max_weight_matching(graph, maxcardinality=True):
        e, p = (u, v) if u[0] == "e" else (v, u)
        pairs.append((e[1], p[1]))
    return pairs


def _key_diffs(
    pairs: list[tuple[int, int]],
    expected: Sequence[ExpectedCall],
    proposed: Sequence[ProposedCall],
    key_args: Mapping[str, str],
) -> dict[int, list[ArgDiff]]:
    """Idempotency keys across pairs: distinct expected keys need distinct proposed keys,
    and one expected key (the same operation twice) needs one proposed key."""
    keyed: list[tuple[int, str, str, Any]] = []  # (proposed index, key arg, exp, got)
    for i, j in pairs:
        arg = key_args.get(expected[i][0])
        p_args = proposed[j][1]
        if arg is None or p_args is None or arg not in expected[i][1] or arg not in p_args:
            continue
        keyed.append((j, arg, _show(pattern_json(expected[i][1][arg])), p_args[arg]))
    keyed.sort(key=lambda k: k[0])
    out: dict[int, list[ArgDiff]] = {}
    for pos, (j, arg, exp, got) in enumerate(keyed):
        for _j0, _arg0, exp0, got0 in keyed[:pos]:
            same_got = _show(got0) == _show(got)
            if exp0 != exp and same_got:
                diff = ArgDiff(path=format_path((arg,)), kind="key_reused", got=got)
                out.setdefault(j, []).append(diff)
                break
            if exp0 == exp and not same_got:
                diff = ArgDiff(path=format_path((arg,)), kind="key_split", got=got)
                out.setdefault(j, []).append(diff)
                break
    return out


def _longest_increasing(values: Sequence[int]) -> set[int]:
    """Positions of one longest strictly increasing subsequence (the earliest-ending)."""
    if not values:
        return set()
    best = [1] * len(values)
    prev = [-1] * len(values)
    for i in range(len(values)):
        for k in range(i):
            if values[k] < values[i] and best[k] + 1 > best[i]:
                best[i], prev[i] = best[k] + 1, k
    i = max(range(len(values)), key=lambda x: (best[x], -x))
    keep = set()
    while i != -1:
        keep.add(i)
        i = prev[i]
    return keep


def align(
    expected: Sequence[ExpectedCall],
    proposed: Sequence[ProposedCall],
    *,
    key_args: Mapping[str, str],
    norm: Normalizer = None,
) -> Alignment:
    """Pair expected ``(name, arguments)`` calls with proposed ``(name, arguments or None)``
    calls. ``key_args`` maps each tool to its idempotency-key argument; ``norm`` is the
    case's string normalisation, if it declares one."""
    matched = _matching(expected, proposed, key_args, norm)
    key_diffs = _key_diffs(matched, expected, proposed, key_args)
    pairs = tuple(
        Pair(
            expected=i,
            proposed=j,
            diffs=diff_arguments(
                expected[i][1], proposed[j][1], key_arg=key_args.get(expected[i][0]), norm=norm
            )
            + tuple(key_diffs.get(j, ())),
        )
        for i, j in matched
    )
    in_order = _longest_increasing([p.proposed for p in pairs])
    paired_expected = {p.expected for p in pairs}
    paired_proposed = {p.proposed for p in pairs}
    return Alignment(
        pairs=pairs,
        missing=tuple(i for i in range(len(expected)) if i not in paired_expected),
        extra=tuple(j for j in range(len(proposed)) if j not in paired_proposed),
        out_of_order=tuple(sorted(p.proposed for k, p in enumerate(pairs) if k not in in_order)),
    )
