"""What ``txcheck conform`` applies: operations as values, and per kind how to draw them,
how to read a store's state, which operations clients may race, which cells of the state
each operation touches (the parts the linearizability checker splits a history into) and
how to read each cell at the end of a race."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from hypothesis import strategies as st

from txcheck.models.sim.idempotency import Begin, IdempotencyRecord, IdempotencyStore
from txcheck.models.stores.memory import MemoryInbox, MemoryJournal, MemoryOutbox

__all__ = ["KIND_SPECS", "KindSpec", "Op", "Probe", "answer"]


@attrs.frozen
class Op:
    """One method call: ``method(*args, **kwargs)``, the same on the store and the model."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()

    def apply(self, store: Any) -> Any:
        return getattr(store, self.method)(*self.args, **dict(self.kwargs))

    def __str__(self) -> str:
        words = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        return f"{self.method}({', '.join(words)})"

    @property
    def reads_only(self) -> bool:
        return self.method in _READS


@attrs.frozen
class Probe:
    """A read of one cell of a store's state, through its protocol: the last operations
    of a race's history, so the state the clients left must be one the model allows."""

    label: str
    cells: frozenset[str]
    read: Callable[[Any], Any] = attrs.field(eq=False, repr=False)
    reads_only = True

    def apply(self, store: Any) -> Any:
        return self.read(store)

    def __str__(self) -> str:
        return self.label


_READS = frozenset({"lookup", "entries", "operations", "pending", "seen", "effects"})


def answer(value: Any) -> Any:
    """A method's return value as plain JSON-like data, for comparison and printing."""
    if isinstance(value, Begin):
        record = answer(value.record) if value.record is not None else None
        return {"decision": value.decision, "record": record}
    if isinstance(value, IdempotencyRecord):
        data = value.to_json()
        data["result_receipt"] = answer(data["result_receipt"])
        return data
    if isinstance(value, dict):
        return {str(k): answer(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [answer(v) for v in value]
    return value


Draw = Callable[[st.SearchStrategy[Any]], Any]
"""``data.draw``: operations are drawn piece by piece from strategies built once (building
strategies per draw costs more than the store does)."""
Pick = Callable[[Draw, Any, int], Op]


@attrs.frozen
class KindSpec:
    """How conformance exercises one kind of store."""

    name: str
    model: Callable[[Any], Any]
    """The model for a freshly opened implementation (it may read the store's ``ttl``)."""
    operation: Pick
    """``operation(draw, model, now)``: an operation the model accepts in its current
    state at logical time ``now``."""
    state: Callable[[Any, Any, int], Any]
    """``state(store, model, now)``: what the store holds, read through the protocol."""
    race: Pick | None = None
    """An operation clients may run at once (None: no race is tried); drawn from the
    model before the race, it must be one the model accepts in any later state."""
    clock: bool = False
    cells: Callable[[Op | Probe], frozenset[str] | None] | None = None
    """The cells of the state an operation may read or write (None: all of them): the
    model is the product of its cells, so a race's history is checked per connected part."""
    probes: Callable[[int], Sequence[Op | Probe]] = lambda now: ()
    """``probes(now)``: reads of every cell, applied to the store after a race."""


def _one(values: Sequence[Any]) -> st.SearchStrategy[Any]:
    return _STRATEGIES.setdefault(tuple(values), st.sampled_from(tuple(values)))


_STRATEGIES: dict[tuple[Any, ...], st.SearchStrategy[Any]] = {}
_SMALL = st.integers(0, 3)

# -- idempotency --------------------------------------------------------------------------

TENANTS = ("t1", "t2")
KEYS = ("k1", "k2")


def _idempotency_model(store: Any) -> IdempotencyStore:
    return IdempotencyStore(
        ttl=int(getattr(store, "ttl", 40)),
        check_request_hash=bool(getattr(store, "check_request_hash", True)),
    )


def _begin(draw: Draw, tenants: Sequence[str], now: int) -> Op:
    kind = draw(_one(("charge", "refund")))
    intent = draw(_one(("i1", "i2")))
    return Op(
        "begin",
        kwargs=(
            ("tenant", draw(_one(tenants))),
            ("key", draw(_one(KEYS))),
            ("user_id", "u1"),
            ("operation_type", kind),
            ("resource_id", "r1"),
            ("intent_hash", intent),
            ("request_hash", f"{kind}:{intent}"),
            ("now", now),
            ("owner", draw(_one(("a", "b")))),
        ),
    )


def _idempotency_op(draw: Draw, model: IdempotencyStore, now: int) -> Op:
    held = [(r.tenant_id, r.idempotency_key) for r in model.records() if r.status == "in_flight"]
    method = draw(
        _one(("begin", "abort", "lookup", "finish") if held else ("begin", "abort", "lookup"))
    )
    if method == "begin":
        return _begin(draw, TENANTS, now)
    if method == "finish":
        status = draw(_one(("committed", "rejected")))
        receipt = {"n": draw(_SMALL)}
        return Op(
            "finish", draw(_one(held)), (("status", status), ("receipt", receipt), ("now", now))
        )
    pair = (draw(_one(TENANTS)), draw(_one(KEYS)))
    return Op("abort", pair) if method == "abort" else Op("lookup", (*pair, now))


def _idempotency_state(store: Any, model: Any, now: int) -> Any:
    return {f"{t}/{k}": answer(store.lookup(t, k, now)) for t in TENANTS for k in KEYS}


def _idempotency_cells(op: Op | Probe) -> frozenset[str]:
    """One record per ``(tenant, key)``: every method names it, and touches no other."""
    if isinstance(op, Probe):
        return op.cells
    named = dict(op.kwargs)
    tenant, key = (named["tenant"], named["key"]) if "tenant" in named else op.args[:2]
    return frozenset({f"{tenant}/{key}"})


def _idempotency_probes(now: int) -> list[Op | Probe]:
    return [Op("lookup", (t, k, now)) for t in TENANTS for k in KEYS]


# -- journal ------------------------------------------------------------------------------

INSTANCES = ("a", "b")


def _journal_op(draw: Draw, model: MemoryJournal, now: int) -> Op:
    opened = [i for i in INSTANCES if model.is_open(i)]
    method = draw(_one(("open", "append", "entries", "claim") if opened else ("open",)))
    if method == "open":
        return Op("open", (draw(_one(INSTANCES)),))
    if method == "claim":
        return _claim(draw, opened)
    instance = draw(_one(opened))
    if method == "entries":
        return Op("entries", (instance,))
    return Op("append", (instance, {"step": draw(_SMALL)}))


def _claim(draw: Draw, opened: Sequence[str]) -> Op:
    operation = draw(_one(("op1", "op2")))
    return Op("claim", (operation, draw(_one(opened)), {"claimed": operation}))


def _journal_race(draw: Draw, model: MemoryJournal, now: int) -> Op:
    opened = [i for i in INSTANCES if model.is_open(i)]
    if not opened:
        return Op("open", (draw(_one(INSTANCES)),))
    return _claim(draw, opened)


def _journal_state(store: Any, model: MemoryJournal, now: int) -> Any:
    found = {}
    for instance in INSTANCES:
        entries: Any = []
        with contextlib.suppress(KeyError):
            entries = answer(store.entries(instance))
        found[instance] = entries
    return found


def _journal_cells(op: Op | Probe) -> frozenset[str]:
    """A journal per instance and an owner per claimed operation; a claim touches both
    (the operation's owner, and the claimant's journal), so claims of one operation by
    two instances put both journals in one part."""
    if isinstance(op, Probe):
        return op.cells
    if op.method == "claim":
        return frozenset({f"claim {op.args[0]}", f"journal {op.args[1]}"})
    return frozenset({f"journal {op.args[0]}"})


def _entries(instance: str) -> Callable[[Any], Any]:
    def read(store: Any) -> Any:
        try:
            return answer(store.entries(instance))
        except KeyError:  # never opened: no entries
            return []

    return read


def _journal_probes(now: int) -> list[Op | Probe]:
    return [Probe(f"entries({i!r})", frozenset({f"journal {i}"}), _entries(i)) for i in INSTANCES]


class _ModelJournal(MemoryJournal):
    """The journal model read like a store: an unopened journal reads as empty."""

    def entries(self, instance: str) -> list[dict[str, Any]]:
        return super().entries(instance) if self.is_open(instance) else []

    def copy(self) -> _ModelJournal:
        twin = _ModelJournal()
        twin.__dict__.update(MemoryJournal.copy(self).__dict__)
        return twin


# -- outbox -------------------------------------------------------------------------------


def _outbox_op(draw: Draw, model: MemoryOutbox, now: int) -> Op:
    done = model.operations()
    events = sum(len(op.get("events", [])) for op in done)
    method = draw(
        _one(
            ("record", "pending", "operations", "mark_published")
            if events
            else ("record", "pending", "operations")
        )
    )
    if method == "record":
        name = f"op{len(done) + 1}"
        ids = [f"evt{events + j + 1}" for j in range(draw(_one((0, 1, 2))))]
        return Op("record", ({"id": name, "events": ids}, [{"id": e, "op": name} for e in ids]))
    if method == "mark_published":
        return Op("mark_published", (f"evt{draw(st.integers(1, events))}",))
    return Op(method)


def _outbox_state(store: Any, model: Any, now: int) -> Any:
    return {"operations": answer(store.operations()), "pending": answer(store.pending())}


# -- inbox --------------------------------------------------------------------------------

EVENTS = ("e1", "e2", "e3")


def _delivery(draw: Draw, model: Any, now: int) -> Op:
    return Op("deliver", ({"id": draw(_one(EVENTS)), "amount": 5},))


def _inbox_op(draw: Draw, model: MemoryInbox, now: int) -> Op:
    method = draw(_one(("deliver", "seen", "effects")))
    if method == "deliver":
        return _delivery(draw, model, now)
    if method == "seen":
        return Op("seen", (draw(_one(EVENTS)),))
    return Op("effects")


def _inbox_cells(op: Op | Probe) -> frozenset[str] | None:
    """A dedupe row and an effect count per event id; ``effects()`` reads every one."""
    if isinstance(op, Probe):
        return op.cells
    if op.method == "effects":
        return None
    event = op.args[0]["id"] if op.method == "deliver" else op.args[0]
    return frozenset({str(event)})


def _effect(event: str) -> Callable[[Any], Any]:
    return lambda store: [store.effects().get(event, 0), store.seen(event)]


def _inbox_probes(now: int) -> list[Op | Probe]:
    return [Probe(f"effects[{e!r}], seen({e!r})", frozenset({e}), _effect(e)) for e in EVENTS]


def _inbox_state(store: Any, model: Any, now: int) -> Any:
    return {
        "effects": answer(store.effects()),
        "seen": [e for e in EVENTS if store.seen(e)],
    }


KIND_SPECS: dict[str, KindSpec] = {
    "idempotency": KindSpec(
        name="idempotency",
        model=_idempotency_model,
        operation=_idempotency_op,
        state=_idempotency_state,
        race=lambda draw, model, now: _begin(draw, ("t1",), now),
        clock=True,
        cells=_idempotency_cells,
        probes=_idempotency_probes,
    ),
    "journal": KindSpec(
        name="journal",
        model=lambda store: _ModelJournal(),
        operation=_journal_op,
        state=_journal_state,
        race=_journal_race,
        cells=_journal_cells,
        probes=_journal_probes,
    ),
    "outbox": KindSpec(
        name="outbox",
        model=lambda store: MemoryOutbox(),
        operation=_outbox_op,
        state=_outbox_state,
    ),
    "inbox": KindSpec(
        name="inbox",
        model=lambda store: MemoryInbox(),
        operation=_inbox_op,
        state=_inbox_state,
        race=_delivery,
        cells=_inbox_cells,
        probes=_inbox_probes,
    ),
}
