"""The closed vocabularies of a run, each with one home: actions, outcomes, fault kinds,
request kinds and the parts of the world a step reads or writes.

They are string enums that hash and compare like their values, so a trace's ``"ok"`` and
``Outcome.OK`` are the same key; traces and JSON results carry the plain values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, TypeVar

import attrs

from txcheck.models.errors import UnknownNameError

__all__ = [
    "MODEL_KINDS",
    "OPT_IN_KINDS",
    "READ_OUTCOMES",
    "TOOL_OUTCOMES",
    "UNKNOWN_FOOTPRINT",
    "Action",
    "Choice",
    "FaultKind",
    "Footprint",
    "Outcome",
    "Part",
    "RequestKind",
    "Vocabulary",
    "fault_kind",
    "fault_kinds",
    "footprint",
    "part_mask",
]

_V = TypeVar("_V", bound="Vocabulary")


class Vocabulary(str, Enum):
    """A closed set of names: an enum whose members hash, compare and print as strings."""

    __hash__ = str.__hash__

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def parse(cls: type[_V], value: str) -> _V:
        """The member whose value is ``value`` (a member is returned as it is): where users
        hand in plain strings, so a typo fails here, naming the allowed values, and not
        later as a comparison that is silently never true."""
        if isinstance(value, cls):
            return value
        member = cls._value2member_map_.get(value) if isinstance(value, str) else None
        if member is None:
            allowed = ", ".join(repr(m.value) for m in cls)
            raise UnknownNameError(f"unknown {cls.__name__} {value!r}: expected one of {allowed}")
        return member  # type: ignore[return-value]


class Action(Vocabulary):
    """What a choice does: ``step`` (process the actor's next request), ``complete`` (answer
    its tool call), ``deliver`` (hand the consumer a message), ``crash``, ``wait`` (advance
    the clock to the next wake-up) or ``jump`` (a clock jump past the idempotency TTL)."""

    STEP = "step"
    COMPLETE = "complete"
    DELIVER = "deliver"
    CRASH = "crash"
    WAIT = "wait"
    JUMP = "jump"


class Outcome(Vocabulary):
    """How a step turns out. ``OK`` is the default; the others are faults."""

    OK = "ok"
    TIMEOUT_BEFORE_COMMIT = "timeout_before_commit"
    LOST_RESPONSE_AFTER_COMMIT = "lost_response_after_commit"
    TRANSIENT_ERROR = "transient_error"
    PERMANENT_ERROR = "permanent_error"
    DUPLICATE = "duplicate"
    ACK_LOST = "ack_lost"
    LATE_COMMIT = "late_commit"
    """The caller hears nothing (a timeout, as ``TIMEOUT_BEFORE_COMMIT``), but the call is
    still in flight and commits later: cancelling a call does not undo its side effect.
    Offered only to policies that ask for it (``Policy.late_commits``)."""
    RETRY_SAME_ARGUMENTS = "retry_same_arguments"
    """A scripted model, told a tool call failed, repeats it with the same arguments (the
    same idempotency key); its default is to repeat it under a fresh key, as real models
    do (``ModelTurn``). Offered only to policies that ask (``Policy.model_turns``)."""
    MODEL_STOPS = "model_stops"
    """A scripted model, told a tool call failed, stops calling tools (``ModelTurn``)."""

    @property
    def is_fault(self) -> bool:
        return self is not Outcome.OK


_OUTCOMES: dict[str, Outcome] = {o.value: o for o in Outcome}

_DECISIONS = frozenset({Outcome.RETRY_SAME_ARGUMENTS, Outcome.MODEL_STOPS})
"""Outcomes that are a scripted model's decisions, not faults of the world."""

TOOL_OUTCOMES: tuple[Outcome, ...] = (
    Outcome.OK,
    Outcome.TIMEOUT_BEFORE_COMMIT,
    Outcome.LOST_RESPONSE_AFTER_COMMIT,
    Outcome.TRANSIENT_ERROR,
    Outcome.PERMANENT_ERROR,
)
"""How a call to a side-effecting tool can end (and ``LATE_COMMIT``, for a policy that
asks for late commits)."""

READ_OUTCOMES: tuple[Outcome, ...] = (
    Outcome.OK,
    Outcome.TIMEOUT_BEFORE_COMMIT,
    Outcome.TRANSIENT_ERROR,
)
"""How a call to a read-only tool can end (nothing commits, so no response is lost after it)."""


class FaultKind(Vocabulary):
    """Every kind of deviation from the default schedule, in the order shrinking prefers
    (earlier is simpler): a tool outcome, a crash, a broker duplicate, a lost ACK, a
    reordered delivery, another actor moving first, or a clock jump."""

    TIMEOUT_BEFORE_COMMIT = "timeout_before_commit"
    LOST_RESPONSE_AFTER_COMMIT = "lost_response_after_commit"
    TRANSIENT_ERROR = "transient_error"
    PERMANENT_ERROR = "permanent_error"
    CRASH = "crash"
    DUPLICATE = "duplicate"
    ACK_LOST = "ack_lost"
    REORDER = "reorder"
    INTERLEAVE = "interleave"
    JUMP = "jump"
    LATE_COMMIT = "late_commit"
    RETRY_SAME_ARGUMENTS = "retry_same_arguments"
    MODEL_STOPS = "model_stops"

    @property
    def is_fault(self) -> bool:
        """A fault injected into the world (not a scheduling choice, nor a scripted model's
        decision)."""
        return self not in _NOT_FAULTS


_NOT_FAULTS = frozenset(
    {
        FaultKind.REORDER,
        FaultKind.INTERLEAVE,
        FaultKind.RETRY_SAME_ARGUMENTS,
        FaultKind.MODEL_STOPS,
    }
)

MODEL_KINDS: frozenset[FaultKind] = frozenset(
    {FaultKind.RETRY_SAME_ARGUMENTS, FaultKind.MODEL_STOPS}
)
"""A scripted model's decisions after a failed tool call (``ModelTurn``), offered only to
policies that ask for them (``model_turns``)."""

OPT_IN_KINDS: frozenset[FaultKind] = frozenset({FaultKind.LATE_COMMIT}) | MODEL_KINDS
"""Deviation kinds a run offers only when its policy asks for them (``late_commits``,
``model_turns``); listed last, so that adding one changes nothing for a policy that does
not."""


def fault_kinds(*, late_commits: bool, model_turns: bool = False) -> tuple[FaultKind, ...]:
    """The deviation kinds a run of a policy can take, in the order shrinking prefers."""
    return tuple(
        k
        for k in FaultKind
        if k not in OPT_IN_KINDS
        or (k is FaultKind.LATE_COMMIT and late_commits)
        or (k in MODEL_KINDS and model_turns)
    )


class RequestKind(Vocabulary):
    """The requests actors yield, named as in traces (``step.request.kind``)."""

    INVOKE = "Invoke"
    LOOKUP = "Lookup"
    KEY_LOOKUP = "KeyLookup"
    RECONCILE = "Reconcile"
    CLAIM = "Claim"
    JOURNAL_APPEND = "JournalAppend"
    JOURNAL_READ = "JournalRead"
    SLEEP = "Sleep"
    PUBLISH = "Publish"
    OUTBOX_FETCH = "OutboxFetch"
    BROKER_SEND = "BrokerSend"
    OUTBOX_MARK_PUBLISHED = "OutboxMarkPublished"
    SEEN_CHECK = "SeenCheck"
    MARK_SEEN = "MarkSeen"
    APPLY_EFFECT = "ApplyEffect"
    ACK = "Ack"
    REFUSED = "Refused"
    MODEL_TURN = "ModelTurn"


class Part(Vocabulary):
    """A part of the durable world (plus the monitor's history). Requests declare which
    parts they read and write (partial-order reduction); the world marks the parts each
    step changes (so an invariant is not re-evaluated while nothing it reads has changed).
    ``bit`` is the part's flag in such a mark."""

    CLOCK = "clock"
    SERVICES = "services"
    STORE = "store"
    OPERATIONS = "operations"
    OUTBOX = "outbox"
    BROKER = "broker"
    SEEN = "seen"
    EFFECTS = "effects"
    JOURNALS = "journals"
    CLAIMS = "claims"
    HISTORY = "history"

    @property
    def bit(self) -> int:
        return _BITS[self]


_BITS: dict[Part, int] = {part: 1 << index for index, part in enumerate(Part)}


def part_mask(parts: frozenset[Part] | None) -> int:
    """The flags of ``parts`` (every flag for None: unknown reads see every change)."""
    if parts is None:
        return -1
    mask = 0
    for part in parts:
        mask |= part.bit
    return mask


def _action(value: Action | str) -> Action:
    if type(value) is Action:  # the runner's own choices: no enum lookup
        return value
    return Action(value)


def _outcome(value: Outcome | str) -> Outcome | str:
    """An outcome's enum member; a delivery id (the outcome of ``deliver``) stays a string."""
    if type(value) is Outcome:
        return value
    text = str(value)
    return _OUTCOMES.get(text, text)


@attrs.frozen(order=True)
class Choice:
    """One nondeterministic decision: ``actor`` does ``action`` with ``outcome`` (for
    ``deliver``, the outcome is the delivery id)."""

    actor: str
    action: Action = attrs.field(converter=_action)
    outcome: Outcome | str = attrs.field(default=Outcome.OK, converter=_outcome)

    def to_json(self) -> dict[str, str]:
        return {"actor": self.actor, "action": str(self.action), "outcome": str(self.outcome)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Choice:
        """A recorded choice; an unknown action is a ``ValueError``."""
        return cls(str(data["actor"]), str(data["action"]), str(data.get("outcome", "ok")))

    @property
    def is_fault(self) -> bool:
        """A crash, a clock jump or a faulty outcome: the world saw something go wrong."""
        action = self.action
        if action is Action.CRASH or action is Action.JUMP:
            return True
        outcome = self.outcome
        return outcome is not Outcome.OK and type(outcome) is Outcome and outcome not in _DECISIONS

    @property
    def fault_name(self) -> str:
        """The name the history counts this fault under."""
        return str(self.outcome) if self.outcome != Outcome.OK else str(self.action)


def fault_kind(choice: Choice, options: Sequence[Choice]) -> FaultKind | None:
    """The kind of deviation ``choice`` is among ``options`` (default first); None for the
    default."""
    if not options or choice == options[0]:
        return None
    if choice.action is Action.CRASH:
        return FaultKind.CRASH
    if choice.action is Action.JUMP:
        return FaultKind.JUMP
    if isinstance(choice.outcome, Outcome) and choice.outcome.is_fault:
        return FaultKind(choice.outcome.value)
    if choice.action is Action.DELIVER:
        oldest = next(c for c in options if c.action is Action.DELIVER)
        if choice != oldest:
            return FaultKind.REORDER
    return FaultKind.INTERLEAVE


@attrs.frozen
class Footprint:
    """What a step reads and writes in the world: ``appends`` adds new rows (two appends
    to one part commute with changes to its existing rows, not with each other),
    ``changes`` modifies existing state. ``JOURNALS`` is each actor's own journal: it is
    private, so it never conflicts with another actor's step. ``unknown`` conflicts with
    everything (the sound default for a step nobody described)."""

    reads: frozenset[Part] = frozenset()
    appends: frozenset[Part] = frozenset()
    changes: frozenset[Part] = frozenset()
    unknown: bool = False

    @property
    def writes(self) -> frozenset[Part]:
        return self.appends | self.changes

    def conflicts(self, other: Footprint) -> bool:
        """Whether the order of two steps of *different* actors can matter."""
        if self.unknown or other.unknown:
            return True
        shared = (self.appends & other.appends) | (self.changes & other.changes)
        shared |= (self.writes & other.reads) | (other.writes & self.reads)
        return bool(shared - {Part.JOURNALS})

    def __or__(self, other: Footprint) -> Footprint:
        return Footprint(
            reads=self.reads | other.reads,
            appends=self.appends | other.appends,
            changes=self.changes | other.changes,
            unknown=self.unknown or other.unknown,
        )


def footprint(
    *,
    reads: tuple[Part, ...] = (),
    appends: tuple[Part, ...] = (),
    changes: tuple[Part, ...] = (),
) -> Footprint:
    """A ``Footprint`` from tuples of parts (for declarations)."""
    return Footprint(frozenset(reads), frozenset(appends), frozenset(changes))


UNKNOWN_FOOTPRINT = Footprint(unknown=True)
