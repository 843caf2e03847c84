"""What actors ask of the world, and what they get back.

Policies are generators that ``yield`` these requests and are resumed with the response.
Every yield is a point where the checker may schedule another actor, inject a fault or
crash the actor, so a policy's durable progress is exactly what it wrote through requests.

Each request type declares, in one place, everything the checker needs to know about it:
its trace ``summary``, the ``faults`` the checker may inject when it is processed, its
``footprint`` (what it reads and writes in the world, for partial-order reduction),
whether it is ``read_only`` and how it is ``perform``ed against the world. The world makes
every change of state; a request only says which change.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from txcheck.models.sim.choices import (
    UNKNOWN_FOOTPRINT,
    Footprint,
    Outcome,
    Part,
    RequestKind,
    Vocabulary,
    footprint,
)

if TYPE_CHECKING:
    from txcheck.models.sim.world import World

__all__ = [
    "Ack",
    "ApplyEffect",
    "BrokerSend",
    "Claim",
    "Delivery",
    "Invoke",
    "JournalAppend",
    "JournalRead",
    "KeyLookup",
    "Lookup",
    "MarkSeen",
    "ModelTurn",
    "OutboxFetch",
    "OutboxMarkPublished",
    "Publish",
    "Reconcile",
    "Refused",
    "Request",
    "ResultStatus",
    "SeenCheck",
    "Sleep",
    "ToolResult",
    "request_problem",
]

Performed = tuple[Any, dict[str, Any]]
"""What processing a request gives: the response the actor is resumed with, and what the
trace records as observed."""


class Request:
    """Base of every request. Subclasses set the class-level declarations below."""

    kind: ClassVar[RequestKind]
    faults: ClassVar[tuple[Outcome, ...]] = ()
    """Outcomes besides ``OK`` the checker may choose when the actor steps this request."""
    footprint: ClassVar[Footprint] = UNKNOWN_FOOTPRINT
    read_only: ClassVar[bool] = False
    """Changes nothing but the actor's own position: a crash right after it lands where a
    crash right before it does."""

    def summary(self) -> dict[str, Any]:
        """The request as a trace records it."""
        return {"kind": self.kind.value}

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        """Process the request against ``world`` on behalf of ``actor``."""
        raise NotImplementedError(f"{type(self).__name__} is processed by the runner")


class ResultStatus(Vocabulary):
    """How a tool call ended, as ``ToolResult.status``: ``OK`` (committed), ``REJECTED``
    (a permanent business rejection), ``CONFLICT`` (the idempotency key is in flight or
    was used for another request), ``TIMEOUT`` (the outcome is unknown) or ``ERROR`` (a
    transient failure, nothing committed). Members equal their strings (``"ok"``), which
    are what traces record."""

    OK = "ok"
    REJECTED = "rejected"
    CONFLICT = "conflict"
    TIMEOUT = "timeout"
    ERROR = "error"


def _result_status(value: str) -> ResultStatus:
    """``ToolResult.status`` from a member or its string; another string is refused."""
    return ResultStatus.parse(value)


_ADMIT = footprint(reads=(Part.CLOCK, Part.STORE), changes=(Part.STORE,))
_COMPLETE = footprint(
    reads=(Part.CLOCK, Part.STORE, Part.SERVICES, Part.OPERATIONS),
    appends=(Part.OUTBOX,),
    changes=(Part.STORE, Part.SERVICES, Part.OPERATIONS),
)


@attrs.frozen(kw_only=True)
class Invoke(Request):
    """Call a tool. ``call_id`` names the plan call this attempt belongs to; a compensation
    names the call it undoes in ``compensates``.

    Two-phase: stepping it admits the request (``footprint``); completing it with the
    outcome the checker chooses commits or not (``completion``)."""

    kind: ClassVar[RequestKind] = RequestKind.INVOKE
    footprint: ClassVar[Footprint] = _ADMIT
    completion: ClassVar[Footprint] = _COMPLETE

    tool: str
    arguments: Mapping[str, Any] = attrs.field(eq=False)
    call_id: str
    compensates: str | None = None

    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind.value,
            "call": self.call_id,
            "tool": self.tool,
            "arguments": dict(self.arguments),
        }
        if self.compensates:
            data["compensates"] = self.compensates
        return data


@attrs.frozen(kw_only=True)
class ToolResult:
    """A tool's answer.

    ``status`` is a ``ResultStatus`` (a plain string such as ``"ok"`` is accepted and
    converted; an unknown one raises ``UnknownNameError``). ``ok``: committed
    (``replayed`` when the idempotency store returned a stored result); ``rejected``: a
    permanent business rejection; ``conflict``: the key is in flight or was used for
    another request; ``timeout``: the outcome is unknown; ``error``: a transient failure,
    nothing committed.
    """

    status: ResultStatus = attrs.field(converter=_result_status)
    receipt: Mapping[str, Any] | None = attrs.field(default=None, eq=False)
    code: str = ""
    message: str = ""
    replayed: bool = False
    events: tuple[Mapping[str, Any], ...] = attrs.field(default=(), eq=False)

    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = {"status": self.status.value}
        if self.code:
            data["code"] = self.code
        if self.replayed:
            data["replayed"] = True
        if self.receipt is not None:
            data["receipt"] = dict(self.receipt)
        return data


@attrs.frozen(kw_only=True)
class Lookup(Request):
    """Ask the service whether an operation with this intent committed (query the state).

    Answers the committed receipt, or None. It does not depend on the idempotency record,
    so it is safe after the key may have expired. The query itself can fail transiently.
    """

    kind: ClassVar[RequestKind] = RequestKind.LOOKUP
    faults: ClassVar[tuple[Outcome, ...]] = (Outcome.TRANSIENT_ERROR,)
    footprint: ClassVar[Footprint] = footprint(reads=(Part.OPERATIONS,))
    read_only: ClassVar[bool] = True

    tool: str
    arguments: Mapping[str, Any] = attrs.field(eq=False)
    call_id: str

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "call": self.call_id, "tool": self.tool}

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        if outcome is Outcome.TRANSIENT_ERROR:
            result = ToolResult(
                status=ResultStatus.ERROR, code="transient", message="lookup failed"
            )
        else:
            result = ToolResult(
                status=ResultStatus.OK, receipt=world.lookup(self.tool, self.arguments)
            )
        return result, result.summary()


@attrs.frozen(kw_only=True)
class KeyLookup(Request):
    """Ask the idempotency store for a key's live record: its status and stored result,
    or None. Unlike ``Lookup`` it knows nothing once the record has expired."""

    kind: ClassVar[RequestKind] = RequestKind.KEY_LOOKUP
    footprint: ClassVar[Footprint] = footprint(reads=(Part.CLOCK, Part.STORE))
    read_only: ClassVar[bool] = True

    key: str

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        record = world.key_record(self.key)
        if record is None:
            return None, {"record": None}
        return record.to_json(), {"record": record.status}


@attrs.frozen(kw_only=True)
class Reconcile(Request):
    """Check receipts against the services' committed operations; answers the diverging
    records (an empty list when everything matches)."""

    kind: ClassVar[RequestKind] = RequestKind.RECONCILE
    footprint: ClassVar[Footprint] = footprint(reads=(Part.OPERATIONS,))
    read_only: ClassVar[bool] = True

    receipts: Mapping[str, Mapping[str, Any]] = attrs.field(eq=False)

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        diverging = world.reconcile(self.receipts)
        return diverging, {"diverging": list(diverging)}


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """``value`` with every enum in it as its value: the same object when it is, or holds,
    nothing but plain scalars (journal entries are written at every step, so the common
    case is one scan and no copy)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        for k, v in value.items():
            if type(v) not in _SCALARS or type(k) not in _SCALARS:
                break
        else:
            return value
        return {
            k if type(k) in _SCALARS else _plain(k): v if type(v) in _SCALARS else _plain(v)
            for k, v in value.items()
        }
    if kind is list or kind is tuple:
        for v in value:
            if type(v) not in _SCALARS:
                break
        else:
            return value
        return kind(v if type(v) in _SCALARS else _plain(v) for v in value)
    if isinstance(value, Enum):
        return value._value_  # the member's value, without the ``value`` descriptor
    if isinstance(value, Mapping):
        return {_plain(k): _plain(v) for k, v in value.items()}
    return value


def _plain_entry(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    """A journal entry with its enums (``Phase.MANUAL``, a ``ResultStatus`` listed under
    ``"diverging"``) as their strings, so the journal, the trace and state fingerprints
    hold plain JSON whichever a policy wrote. Anything else a policy passes goes on as it
    is, for the request protocol check to refuse."""
    return _plain(entry)  # type: ignore[no-any-return]


@attrs.frozen(kw_only=True)
class JournalAppend(Request):
    """Append an entry to this orchestrator instance's durable journal."""

    kind: ClassVar[RequestKind] = RequestKind.JOURNAL_APPEND
    footprint: ClassVar[Footprint] = footprint(appends=(Part.JOURNALS,))

    entry: Mapping[str, Any] = attrs.field(eq=False, converter=_plain_entry)

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "entry": dict(self.entry)}

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        world.append_journal(actor, self.entry)
        return None, {}


@attrs.frozen(kw_only=True)
class Claim(Request):
    """Claim a durable operation id and, if this instance owns it, append ``entry`` to its
    journal in the same transaction (an insert under a unique key). Answers the owner:
    this instance when the claim is new or its own, another instance when the same
    operation was submitted before (a double click)."""

    kind: ClassVar[RequestKind] = RequestKind.CLAIM

    operation: str
    entry: Mapping[str, Any] = attrs.field(eq=False, converter=_plain_entry)

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "operation": self.operation, "entry": dict(self.entry)}

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        owner = world.claim(self.operation, actor, self.entry)
        return owner, {"owner": owner}


@attrs.frozen(kw_only=True)
class JournalRead(Request):
    """Read this instance's durable journal (a tuple of entries)."""

    kind: ClassVar[RequestKind] = RequestKind.JOURNAL_READ
    footprint: ClassVar[Footprint] = footprint(reads=(Part.JOURNALS,))
    read_only: ClassVar[bool] = True

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        return world.journal(actor), {}


@attrs.frozen(kw_only=True)
class Sleep(Request):
    """Wait ``ticks`` of the logical clock (backoff). The runner puts the actor to sleep."""

    kind: ClassVar[RequestKind] = RequestKind.SLEEP
    footprint: ClassVar[Footprint] = footprint(reads=(Part.CLOCK,))

    ticks: int

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "ticks": self.ticks}


@attrs.frozen(kw_only=True)
class _BrokerWrite(Request):
    """Hand ``event`` to the broker, which may duplicate it: what ``Publish`` (an
    orchestrator's dual write) and ``BrokerSend`` (the outbox relay) share. They differ
    only in ``kind``, which the trace and the fault schedule name."""

    faults: ClassVar[tuple[Outcome, ...]] = (Outcome.DUPLICATE,)
    footprint: ClassVar[Footprint] = footprint(appends=(Part.BROKER,))

    event: Mapping[str, Any] = attrs.field(eq=False)

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "event": self.event["id"]}

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        world.enqueue(self.event, copies=2 if outcome is Outcome.DUPLICATE else 1)
        return None, {}


@attrs.frozen(kw_only=True)
class Publish(_BrokerWrite):
    """Dual write: send an event to the broker directly, outside the tool's transaction.
    The broker may duplicate it."""

    kind: ClassVar[RequestKind] = RequestKind.PUBLISH


@attrs.frozen(kw_only=True)
class OutboxFetch(Request):
    """Relay: the oldest unpublished outbox row, or None."""

    kind: ClassVar[RequestKind] = RequestKind.OUTBOX_FETCH
    footprint: ClassVar[Footprint] = footprint(reads=(Part.OUTBOX,))
    read_only: ClassVar[bool] = True

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        event = world.unpublished()
        return event, {"event": None if event is None else event["id"]}


@attrs.frozen(kw_only=True)
class BrokerSend(_BrokerWrite):
    """Relay: hand an event to the broker, which may duplicate it."""

    kind: ClassVar[RequestKind] = RequestKind.BROKER_SEND


@attrs.frozen(kw_only=True)
class OutboxMarkPublished(Request):
    """Relay: mark an outbox row as published."""

    kind: ClassVar[RequestKind] = RequestKind.OUTBOX_MARK_PUBLISHED
    footprint: ClassVar[Footprint] = footprint(changes=(Part.OUTBOX,))

    event_id: str

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "event": self.event_id}

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        world.mark_published(self.event_id)
        return None, {}


@attrs.frozen(kw_only=True)
class Delivery:
    """One delivery of a message to the consumer; ``delivery_id`` is unique per delivery."""

    delivery_id: str
    event: Mapping[str, Any] = attrs.field(eq=False)

    @property
    def event_id(self) -> str:
        return str(self.event["id"])


@attrs.frozen(kw_only=True)
class SeenCheck(Request):
    """Consumer: has this message already been processed (the dedupe table)?"""

    kind: ClassVar[RequestKind] = RequestKind.SEEN_CHECK
    footprint: ClassVar[Footprint] = footprint(reads=(Part.SEEN,))
    read_only: ClassVar[bool] = True

    event_id: str

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "event": self.event_id}

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        seen = world.has_seen(self.event_id)
        return seen, {"seen": seen}


@attrs.frozen(kw_only=True)
class MarkSeen(Request):
    """Consumer: record the message as processed, on its own."""

    kind: ClassVar[RequestKind] = RequestKind.MARK_SEEN
    footprint: ClassVar[Footprint] = footprint(changes=(Part.SEEN,))

    event_id: str

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "event": self.event_id}

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        world.mark_seen(self.event_id)
        return None, {}


@attrs.frozen(kw_only=True)
class ApplyEffect(Request):
    """Consumer: apply the event's effect; with ``record_seen`` the dedupe record is written
    in the same local transaction: the event id, or ``seen_id`` for a consumer that
    deduplicates on a key of its own (which must then identify one message)."""

    kind: ClassVar[RequestKind] = RequestKind.APPLY_EFFECT
    footprint: ClassVar[Footprint] = footprint(
        reads=(Part.SEEN, Part.EFFECTS), changes=(Part.SEEN, Part.EFFECTS)
    )

    event: Mapping[str, Any] = attrs.field(eq=False)
    record_seen: bool
    seen_id: str | None = None

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "event": self.event["id"]}

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        world.apply_effect(self.event, record_seen=self.record_seen, seen_id=self.seen_id)
        return None, {}


@attrs.frozen(kw_only=True)
class Ack(Request):
    """Consumer: acknowledge a delivery so the broker stops redelivering it; the ACK can be
    lost, and the message is then redelivered."""

    kind: ClassVar[RequestKind] = RequestKind.ACK
    faults: ClassVar[tuple[Outcome, ...]] = (Outcome.ACK_LOST,)
    footprint: ClassVar[Footprint] = footprint(changes=(Part.BROKER,))

    delivery_id: str

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "delivery": self.delivery_id}

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        world.ack(self.delivery_id, lost=outcome is Outcome.ACK_LOST)
        return None, {}


@attrs.frozen(kw_only=True)
class Refused(Request):
    """Not a request for the world: an actor's code used a port of an earlier generation
    of its instance (one that crashed, so its ports are closed), and the call was refused.
    It is stepped like a request so that the trace shows it; it changes nothing."""

    kind: ClassVar[RequestKind] = RequestKind.REFUSED
    footprint: ClassVar[Footprint] = Footprint()
    read_only: ClassVar[bool] = True

    port: str
    generation: int
    reason: str

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "port": self.port, "generation": self.generation}

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        return None, {"refused": self.reason}


@attrs.frozen(kw_only=True)
class ModelTurn(Request):
    """Not a request for the world: a scripted model (``txcheck.agents``), told that its
    tool call ``call_id`` failed (``error``: timeout, error, conflict, rejected), decides
    what its next turn is. The decision is the checker's choice: by default the model
    repeats the call under a fresh idempotency key (what real models do); the deviations
    are repeating it with the same arguments (``RETRY_SAME_ARGUMENTS``) and stopping
    (``MODEL_STOPS``). It touches nothing, so it commutes with every other actor's step.

    Answers ``"fresh_key"``, ``"same_arguments"`` or ``"stop"``."""

    kind: ClassVar[RequestKind] = RequestKind.MODEL_TURN
    faults: ClassVar[tuple[Outcome, ...]] = (Outcome.RETRY_SAME_ARGUMENTS, Outcome.MODEL_STOPS)
    footprint: ClassVar[Footprint] = Footprint()
    read_only: ClassVar[bool] = True

    call_id: str
    tool: str
    attempt: int
    error: str

    def summary(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "call": self.call_id,
            "tool": self.tool,
            "attempt": self.attempt,
            "error": self.error,
        }

    def perform(self, world: World, actor: str, outcome: Outcome) -> Performed:
        decision = _DECISION.get(outcome, "fresh_key")
        return decision, {"decision": decision}


_DECISION: dict[Outcome, str] = {
    Outcome.RETRY_SAME_ARGUMENTS: "same_arguments",
    Outcome.MODEL_STOPS: "stop",
}


def request_problem(value: object) -> str | None:
    """Why ``value`` is not a well-formed request (for a policy that breaks the protocol:
    yields None, a string, or an ``Invoke`` whose fields have the wrong types), or None."""
    if not isinstance(value, Request):
        return (
            f"{value!r}, which is not a request"
            " (expected a request from txcheck.models.sim.requests)"
        )
    fields: Any = value  # a policy may have built it with fields of any type
    if isinstance(value, (Invoke, Lookup)):
        if not isinstance(fields.tool, str) or not isinstance(fields.call_id, str):
            name = type(value).__name__
            return (
                f"{name} with tool {value.tool!r} and call_id {value.call_id!r} "
                "(both must be strings)"
            )
        if not isinstance(fields.arguments, Mapping):
            name = type(value).__name__
            return (
                f"{name} of {value.tool!r} with arguments {value.arguments!r} "
                "(must be a JSON object)"
            )
    if isinstance(value, Sleep) and (
        isinstance(fields.ticks, bool) or not isinstance(fields.ticks, int)
    ):
        return f"Sleep with ticks {value.ticks!r} (must be an integer)"
    return None
