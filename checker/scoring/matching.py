"""The optimal alignment of proposed calls with expected calls.

The scorer needs two things from a case: whether the proposed calls equal the expected ones
*exactly* (typed values, idempotency keys by presence and uniqueness), and, when they do not,
which proposed call corresponds to which expected call so that a violation can say what went
wrong. The second is an assignment problem: calls are paired only with calls of the same
tool, and the pairing maximises the total argument similarity (an optimal matching from
networkx, never a greedy one), breaking ties towards the listed order. The common case,
each proposed call fully alike the expected call at its position, needs no assignment:
``align`` recognises it in one pass and pairs the calls in order, as the assignment would.

Expected values may hold ``$any`` and ``$optional`` markers (``txcheck.scoring.patterns``), and
a case may declare a string normalisation; both are passed down as ``norm``. How two calls'
arguments compare lives in ``txcheck.scoring.argument_diff``.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import attrs

from txcheck.models.json_path import format_path
from txcheck.models.plan.contract import Contract
from txcheck.scoring.argument_diff import (
    ArgDiff,
    DiffKind,
    argument_similarity,
    diff_arguments,
    fully_similar,
    typed_equal,
)
from txcheck.scoring.patterns import Normalizer
from txcheck.scoring.patterns import to_json as pattern_json

__all__ = [
    "Alignment",
    "ArgDiff",
    "DiffKind",
    "Pair",
    "align",
    "argument_similarity",
    "diff_arguments",
    "identical_alignment",
    "typed_equal",
    "writes_in_order",
]


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
    at = {name: j for j, (name, _) in enumerate(proposed)}
    if len(at) == len(proposed) and len({name for name, _ in expected}) == len(expected):
        # Each tool at most once on each side: its one possible pair, in expected order.
        return [(i, at[name]) for i, (name, _) in enumerate(expected) if name in at]
    return _grouped(expected, proposed, key_args, norm)


def _grouped(
    expected: Sequence[ExpectedCall],
    proposed: Sequence[ProposedCall],
    key_args: Mapping[str, str],
    norm: Normalizer,
) -> list[tuple[int, int]]:
    """``_matching`` tool by tool: an assignment problem per tool."""
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

    if len(es) == 1 and len(ps) == 1:  # one possible pair
        return [(es[0], ps[0])]

    def similarity(i: int, j: int) -> Fraction:
        return argument_similarity(expected[i][1], proposed[j][1], key_arg=key_arg, norm=norm)

    if len(es) == len(ps) and all(
        fully_similar(expected[i][1], proposed[j][1], key_arg=key_arg, norm=norm)
        for i, j in zip(es, ps, strict=True)
    ):
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


def _shown(value: Any) -> str | tuple[str]:
    """A typed canonical form for comparing key values (``1`` and ``"1"`` differ): a
    string stands for itself, anything else is its sorted JSON in a tuple (which never
    equals a string)."""
    if isinstance(value, str):
        return value
    return (json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True),)


def _key_diffs(
    pairs: list[tuple[int, int]],
    expected: Sequence[ExpectedCall],
    proposed: Sequence[ProposedCall],
    key_args: Mapping[str, str],
) -> dict[int, list[ArgDiff]]:
    """Idempotency keys across pairs: distinct expected keys need distinct proposed keys,
    and one expected key (the same operation twice) needs one proposed key."""
    # (proposed index, key arg, expected key shown, proposed key shown, proposed key)
    keyed: list[tuple[int, str, str | tuple[str], str | tuple[str], Any]] = []
    wanted: set[str | tuple[str]] = set()
    given: set[str | tuple[str]] = set()
    for i, j in pairs:
        arg = key_args.get(expected[i][0])
        e_args, p_args = expected[i][1], proposed[j][1]
        if arg is None or p_args is None or arg not in e_args or arg not in p_args:
            continue
        got, want = p_args[arg], e_args[arg]
        exp = want if type(want) is str else _shown(pattern_json(want))
        shown = got if type(got) is str else _shown(got)
        keyed.append((j, arg, exp, shown, got))
        wanted.add(exp)
        given.add(shown)
    out: dict[int, list[ArgDiff]] = {}
    if len(wanted) == len(keyed) == len(given):
        return out  # all expected keys distinct and all proposed keys distinct: as asked
    keyed.sort(key=lambda k: k[0])
    for pos, (j, arg, exp, shown, got) in enumerate(keyed):
        for _j0, _arg0, exp0, shown0, _got0 in keyed[:pos]:
            same_got = shown0 == shown
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
    if all(a < b for a, b in itertools.pairwise(values)):  # already in order (also: empty)
        return set(range(len(values)))
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
    if len(expected) == len(proposed) and all(
        e[0] == p[0] for e, p in zip(expected, proposed, strict=True)
    ):
        alike = [
            fully_similar(e[1], p[1], key_arg=key_args.get(e[0]), norm=norm)
            for e, p in zip(expected, proposed, strict=True)
        ]
        if all(alike) or len({e[0] for e in expected}) == len(expected):
            return _in_order(expected, proposed, key_args, alike, norm)
    return _assigned(expected, proposed, key_args, norm)


def _assigned(
    expected: Sequence[ExpectedCall],
    proposed: Sequence[ProposedCall],
    key_args: Mapping[str, str],
    norm: Normalizer,
) -> Alignment:
    """The alignment found by solving the assignment (``_matching``), for any calls."""
    matched = _matching(expected, proposed, key_args, norm)
    key_diffs = _key_diffs(matched, expected, proposed, key_args)
    pairs = tuple(
        Pair(
            expected=i,
            proposed=j,
            diffs=_differences(expected[i], proposed[j], key_args.get(expected[i][0]), norm)
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


def _differences(
    expected: ExpectedCall, proposed: ProposedCall, key_arg: str | None, norm: Normalizer
) -> tuple[ArgDiff, ...]:
    """``diff_arguments`` of a pair; none when the pair is fully alike (``fully_similar``
    says so in a cheaper pass)."""
    if fully_similar(expected[1], proposed[1], key_arg=key_arg, norm=norm):
        return ()
    return diff_arguments(expected[1], proposed[1], key_arg=key_arg, norm=norm)


def _in_order(
    expected: Sequence[ExpectedCall],
    proposed: Sequence[ProposedCall],
    key_args: Mapping[str, str],
    alike: Sequence[bool],
    norm: Normalizer,
) -> Alignment:
    """The alignment when the k-th proposed call names the k-th expected call's tool, and
    either every such pair is fully alike (``alike``) or no tool is named twice. Then the
    assignment pairs the k-th calls (for each tool: the one possible pair, or the k-th
    calls when they are all alike, as ``_match_tool`` does), nothing is missing, extra or
    out of order, and a pair differs only where it is not fully alike; idempotency keys
    across pairs are still compared."""
    matched = [(k, k) for k in range(len(expected))]
    key_diffs = _key_diffs(matched, expected, proposed, key_args)
    pairs = []
    for k, (same, want, got) in enumerate(zip(alike, expected, proposed, strict=True)):
        diffs = (
            ()
            if same
            else diff_arguments(want[1], got[1], key_arg=key_args.get(want[0]), norm=norm)
        )
        if k in key_diffs:
            diffs += tuple(key_diffs[k])
        pairs.append(Pair(expected=k, proposed=k, diffs=diffs))
    return Alignment(pairs=tuple(pairs), missing=(), extra=(), out_of_order=())


def identical_alignment(count: int) -> Alignment:
    """What ``align`` finds when each of ``count`` proposed calls is identical to the
    expected call at its position (same tool, identical arguments, no marker in the
    expectation): every pair fully alike, in order, nothing missing or extra; and no key
    difference, since identical keys are distinct or shared exactly as the expected ones."""
    pairs = tuple([Pair(expected=k, proposed=k, diffs=()) for k in range(count)])
    return Alignment(pairs=pairs, missing=(), extra=(), out_of_order=())


def writes_in_order(
    alignment: Alignment, expected: Sequence[ExpectedCall], contract: Contract
) -> Alignment:
    """``alignment`` with ``out_of_order`` over the pairs of side-effecting tools only
    (``"ordered": "writes"``): the order of reads does not matter."""
    writes = [
        p
        for p in alignment.pairs
        if (tool := contract.tool(expected[p.expected][0])) is not None and tool.has_side_effect
    ]
    in_order = _longest_increasing([p.proposed for p in writes])
    out = tuple(sorted(p.proposed for k, p in enumerate(writes) if k not in in_order))
    return attrs.evolve(alignment, out_of_order=out)
