"""Linearizability of a concurrent store history against the model, part by part.

A history is operations with a call and a return (Porcupine's format): each ran on some
client, and its outcome is what the store answered, or none when it was in flight at a
crash and never returned (Jepsen's indeterminate ``info``: it may have taken effect or
not). The history is linearizable when some order of its operations (1) respects real time
(an operation that returned before another was called comes first), (2) gives every
determinate operation its outcome when the model (the sequential specification) applies
them in that order, an indeterminate one taking effect at any point after its call or
never.

The search is Wing & Gong's, with Lowe's memoisation as Porcupine does it: a
depth-first walk over the calls that may go next, remembering each (set of operations
placed, model state) already explored so that no state is searched twice. Its work is
bounded by a step budget (one step: the model applying one operation); a search that
spends it answers ``unknown``, never a pass.

Linearizability is local (Herlihy & Wing): a history is linearizable exactly when the
sub-history of every independent object is. When the caller says which cells of the
state each operation may touch (an idempotency record per tenant and key, a dedupe row
per event id), the history is split into parts, the connected components of operations
sharing a cell, and each part is searched alone: the search is exponential in the
overlapping operations of one part, not of the whole history.

A failure is explained with the shortest failing sub-history: the shortest prefix (by
return event) that is already not linearizable, the operations in flight at the cut
counted as indeterminate, then without each read-only operation that is not needed for
the failure. Both cuts keep it a certificate: a prefix and a history without a read only
allow more orders, so if they fail, so does the whole.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Literal

import attrs

__all__ = [
    "DEFAULT_BUDGET",
    "UNKNOWN",
    "History",
    "Linearizability",
    "Operation",
    "Part",
    "Recorder",
    "Specification",
    "check",
]

DEFAULT_BUDGET = 100_000
"""Model steps one ``check`` may spend (a history of a few dozen overlapping operations
per part is decided in far fewer)."""


class _Unknown:
    """The outcome of an operation that never returned."""

    def __repr__(self) -> str:
        return "unknown"


UNKNOWN: Any = _Unknown()
"""The outcome of an operation in flight at a crash: it may or may not have taken effect."""

Verdict = Literal["linearizable", "not linearizable", "unknown"]


@attrs.frozen
class Operation:
    """One operation of a history: ``step`` (anything with ``apply(model)``, shown with
    ``str``) called by ``client`` at event ``call``, returned at event ``ret`` with
    ``outcome``; ``ret`` None is an operation that never returned (indeterminate)."""

    client: int
    step: Any
    call: int
    ret: int | None
    outcome: Any = UNKNOWN

    @property
    def indeterminate(self) -> bool:
        return self.ret is None

    @property
    def reads_only(self) -> bool:
        return bool(getattr(self.step, "reads_only", False))

    def __str__(self) -> str:
        told = "unknown (in flight)" if self.indeterminate else repr(self.outcome)
        return f"client {self.client}: {self.step} -> {told}"


@attrs.frozen
class History:
    """Operations with their call and return events (each event number used once)."""

    operations: tuple[Operation, ...]

    def events(self) -> list[str]:
        """The history as Jepsen prints one: invoke, ok and (for the indeterminate) info
        events, in event order."""
        timed: list[tuple[float, str]] = []
        for op in self.operations:
            timed.append((op.call, f"client {op.client} invoke {op.step}"))
            if op.ret is None:
                timed.append((math.inf, f"client {op.client} info {op.step} (in flight)"))
            else:
                timed.append((op.ret, f"client {op.client} ok {op.step} -> {op.outcome!r}"))
        return [line for _time, line in sorted(timed, key=lambda t: t[0])]

    def to_json(self) -> list[dict[str, Any]]:
        return [
            {
                "client": op.client,
                "op": str(op.step),
                "call": op.call,
                "return": op.ret,
                "outcome": "unknown" if op.indeterminate else op.outcome,
            }
            for op in self.operations
        ]


class Recorder:
    """Numbers call and return events as clients report them (the caller serialises the
    reports: the conformance race holds its stepper's lock)."""

    def __init__(self) -> None:
        self._clock = 0
        self._open: dict[int, tuple[int, Any, int]] = {}
        self._done: list[Operation] = []
        self._handles = 0

    def _tick(self) -> int:
        self._clock += 1
        return self._clock

    def invoke(self, client: int, step: Any) -> int:
        """A call: the handle to ``returned`` it with."""
        self._handles += 1
        self._open[self._handles] = (client, step, self._tick())
        return self._handles

    def returned(self, handle: int, outcome: Any) -> None:
        client, step, call = self._open.pop(handle)
        self._done.append(Operation(client, step, call, self._tick(), outcome))

    def forget(self, handle: int) -> None:
        """A call that is known not to have taken effect (the store said busy)."""
        del self._open[handle]

    def history(self) -> History:
        """Every operation so far; those still open never returned (indeterminate)."""
        pending = [Operation(c, s, call, None) for c, s, call in self._open.values()]
        return History(tuple(sorted(self._done + pending, key=lambda op: op.call)))


def _fingerprint(model: Any) -> Hashable:
    return repr(vars(model))


def _answer(model: Any, step: Any) -> Any:
    return step.apply(model)


@attrs.frozen
class Specification:
    """The sequential specification: the model in its state before the history, how a
    step is applied to it (the outcome), how to tell two model states apart (equal states
    may differ, never two different states alike) and which cells a step may touch."""

    initial: Any
    """A model with ``copy()``; never changed here."""
    apply: Callable[[Any, Any], Any] = _answer
    fingerprint: Callable[[Any], Hashable] = _fingerprint
    cells: Callable[[Any], Iterable[Hashable] | None] | None = None
    """The cells a step may read or write (None for the step, or no function: all)."""


@attrs.frozen
class Part:
    """One independent part of the history and what its search found."""

    cells: tuple[str, ...]
    operations: tuple[int, ...]
    """Indices into the history."""
    verdict: Verdict
    order: tuple[int, ...] = ()
    """A linearization (indices into the history) when linearizable; an indeterminate
    operation left out did not take effect."""
    steps: int = 0


@attrs.frozen
class Linearizability:
    """What ``check`` found: the verdict, each part's, and for a failure the shortest
    failing sub-history and why."""

    verdict: Verdict
    parts: tuple[Part, ...]
    steps: int
    budget: int
    failing: tuple[int, ...] = ()
    """The shortest failing sub-history (indices into the history, by call)."""
    explanation: str = ""

    @property
    def linearizable(self) -> bool:
        return self.verdict == "linearizable"

    @property
    def order(self) -> tuple[int, ...]:
        """A linearization of the whole history: the parts' one after the other (they
        touch no common cell, so any interleaving of them is one too)."""
        return tuple(i for part in self.parts for i in part.order)


@attrs.frozen
class _Search:
    verdict: Verdict
    order: tuple[int, ...]
    steps: int
    tried: dict[int, list[Any]]
    """For each operation, the outcomes the model gave it that did not match."""


def _search(ops: Sequence[Operation], spec: Specification, budget: int) -> _Search:
    """Wing & Gong / Lowe over ``ops``: the calls and returns as a doubly linked list in
    event order; a call is lifted out (with its return) when its operation is placed next,
    and put back on backtracking; a return met before its operation was placed means the
    order so far cannot be extended."""
    n = len(ops)
    head, tail = 0, 2 * n + 1
    timed = sorted(
        [(op.call, 0, i) for i, op in enumerate(ops)]
        + [(math.inf if op.ret is None else op.ret, 1, i) for i, op in enumerate(ops)]
    )
    node_op = [-1] * (2 * n + 2)
    is_call = [False] * (2 * n + 2)
    partner = [0] * (2 * n + 2)
    calls: dict[int, int] = {}
    for node, (_time, kind, i) in enumerate(timed, 1):
        node_op[node] = i
        is_call[node] = kind == 0
        if kind == 0:
            calls[i] = node
        else:
            partner[calls[i]] = node
    nxt = [*range(1, 2 * n + 2), tail]
    prv = [head, *range(0, 2 * n + 1)]

    def lift(node: int) -> None:
        for gone in (node, partner[node]):
            nxt[prv[gone]] = nxt[gone]
            prv[nxt[gone]] = prv[gone]

    def unlift(node: int) -> None:
        for back in (partner[node], node):
            nxt[prv[back]] = back
            prv[nxt[back]] = back

    remaining = sum(not op.indeterminate for op in ops)
    tried: dict[int, list[Any]] = {}
    seen: set[tuple[int, Hashable]] = set()
    stack: list[tuple[int, Any]] = []
    state, placed, steps = spec.initial, 0, 0
    entry = nxt[head]
    while remaining:
        # (the tail is never reached while an operation is unplaced: its return comes
        # first; were it reached, backtracking is the safe answer)
        if entry != tail and is_call[entry]:
            i = node_op[entry]
            op = ops[i]
            steps += 1
            if steps > budget:
                return _Search("unknown", (), steps - 1, tried)
            after = state.copy()
            try:
                got = spec.apply(after, op.step)
                fits = op.indeterminate or got == op.outcome
            except Exception as error:  # the model refuses it here
                got, fits = f"raised {type(error).__name__}: {error}", False
            if fits:
                key = (placed | 1 << i, spec.fingerprint(after))
                if key not in seen:
                    seen.add(key)
                    stack.append((entry, state))
                    state, placed = after, placed | 1 << i
                    remaining -= not op.indeterminate
                    lift(entry)
                    entry = nxt[head]
                    continue
            elif not op.indeterminate and got not in tried.setdefault(i, []):
                tried[i].append(got)
            entry = nxt[entry]
        else:
            if not stack:
                return _Search("not linearizable", (), steps, tried)
            entry, state = stack.pop()
            i = node_op[entry]
            placed &= ~(1 << i)
            remaining += not ops[i].indeterminate
            unlift(entry)
            entry = nxt[entry]
    return _Search("linearizable", tuple(node_op[e] for e, _s in stack), steps, tried)


def _parts(history: History, spec: Specification) -> list[tuple[tuple[str, ...], list[int]]]:
    """The connected components of operations sharing a cell (one part without cells)."""
    ops = history.operations
    every = list(range(len(ops)))
    if spec.cells is None:
        return [((), every)]
    touched: list[list[Hashable]] = []
    for op in ops:
        cells = spec.cells(op.step)
        if cells is None:
            return [((), every)]
        touched.append(list(cells))
    root: dict[Hashable, Hashable] = {}

    def find(cell: Hashable) -> Hashable:
        root.setdefault(cell, cell)
        while root[cell] != cell:
            root[cell] = root[root[cell]]
            cell = root[cell]
        return cell

    for cells in touched:
        for cell in cells[1:]:
            root[find(cell)] = find(cells[0])
        if cells:
            find(cells[0])
    groups: dict[Hashable, tuple[set[str], list[int]]] = {}
    loose: list[int] = []
    for i, cells in enumerate(touched):
        if not cells:
            loose.append(i)  # touches nothing: a part of its own
            continue
        names, members = groups.setdefault(find(cells[0]), (set(), []))
        names.update(str(c) for c in cells)
        members.append(i)
    found = [(tuple(sorted(names)), members) for names, members in groups.values()]
    found += [((), [i]) for i in loose]
    return sorted(found, key=lambda part: part[1][0])


def _prefix(ops: Sequence[Operation], cut: int) -> list[Operation]:
    """The history up to event ``cut``: later calls dropped, operations not yet returned
    at the cut indeterminate."""
    kept = []
    for op in ops:
        if op.call > cut:
            continue
        pending = op.ret is not None and op.ret > cut
        kept.append(attrs.evolve(op, ret=None, outcome=UNKNOWN) if pending else op)
    return kept


def _shortest_failure(
    ops: list[Operation], spec: Specification, budget: int
) -> tuple[list[Operation], _Search | None, Operation | None]:
    """The shortest failing sub-history of a failing ``ops``, the search that failed on
    it and the operation whose return made it fail (None when a search ran out of
    budget: the cut so far is kept, still failing)."""
    cuts = sorted(op.ret for op in ops if op.ret is not None)
    low, high = 0, len(cuts) - 1  # the last cut (the whole history) fails
    while low < high:  # linearizability is prefix-closed: failing prefixes form a suffix
        middle = (low + high) // 2
        found = _search(_prefix(ops, cuts[middle]), spec, budget)
        if found.verdict == "unknown":
            return ops, None, None
        if found.verdict == "not linearizable":
            high = middle
        else:
            low = middle + 1
    cut = cuts[high]
    kept = _prefix(ops, cut)
    culprit = next(op for op in kept if op.ret == cut)
    for op in [op for op in kept if op.reads_only and op is not culprit]:
        fewer = [other for other in kept if other is not op]
        if _search(fewer, spec, budget).verdict == "not linearizable":
            kept = fewer
    return kept, _search(kept, spec, budget), culprit


def check(
    history: History, spec: Specification, *, budget: int = DEFAULT_BUDGET
) -> Linearizability:
    """Whether ``history`` is linearizable under ``spec``, part by part, within ``budget``
    model steps: a linearization, or the shortest failing sub-history and why, or
    ``unknown`` when the budget ran out before a part was decided (and no part failed).
    Explaining a failure takes a few more searches of at most ``budget`` steps each (one
    per cut of the binary search for the prefix, one per read tried without): they are
    not counted in ``steps``."""
    ops = history.operations
    parts: list[Part] = []
    spent = 0
    failing: tuple[int, ...] = ()
    explanation = ""
    for cells, members in _parts(history, spec):
        found = _search([ops[i] for i in members], spec, max(budget - spent, 0))
        spent += found.steps
        order = tuple(members[j] for j in found.order)
        parts.append(Part(cells, tuple(members), found.verdict, order, found.steps))
        if found.verdict == "not linearizable" and not failing:
            failing, explanation = _explain(history, members, spec, budget)
    verdicts = {part.verdict for part in parts}
    verdict: Verdict = (
        "not linearizable"
        if "not linearizable" in verdicts
        else "unknown"
        if "unknown" in verdicts
        else "linearizable"
    )
    if verdict == "unknown":
        undecided = sum(part.verdict == "unknown" for part in parts)
        explanation = (
            f"unknown: budget spent ({budget} model steps) before {undecided} of "
            f"{len(parts)} parts was decided; this is not a pass"
        )
    return Linearizability(verdict, tuple(parts), spent, budget, failing, explanation)


def _explain(
    history: History, members: list[int], spec: Specification, budget: int
) -> tuple[tuple[int, ...], str]:
    ops = [history.operations[i] for i in members]
    kept, failed, culprit = _shortest_failure(ops, spec, budget)
    by_call = {op.call: i for i, op in zip(members, ops, strict=True)}
    failing = tuple(by_call[op.call] for op in kept)
    lines = "; ".join(f"[{i}] {op}" for i, op in zip(failing, kept, strict=True))
    why = ""
    if culprit is not None and failed is not None:
        position = next(j for j, op in enumerate(kept) if op.call == culprit.call)
        answers = failed.tried.get(position, [])
        where = (
            "where the model answers " + " or ".join(repr(a) for a in answers)
            if answers
            else "and no order places it before it returned"
        )
        why = f"; [{failing[position]}] answered {culprit.outcome!r}, {where}"
    text = (
        f"no order of these {len(kept)} operations that respects real time gives their "
        f"answers under the model (the shortest failing sub-history): {lines}{why}"
    )
    return failing, text
