"""When two choices commute: the partial-order reduction of the systematic engine.

At a state ``s`` the default schedule takes ``default``; ``other`` is a deviation offered
at ``s``. If the two are *independent* — applying ``other`` then ``default`` reaches the
same state as ``default`` then ``other``, and ``default`` is still the default after
``other`` — then branching on ``other`` one step later reaches, with as many deviations
and steps, a state that the branch "``other`` now" reaches too. The engine does not branch
there (a sleep set, in Godefroid's terms). docs/decisions/002-systematic-pruning.md has
the argument.

Independence is read off *footprints*: what a step reads and writes in the world. Each
actor's own state and journal are private to it. The rules are narrow on purpose and
anything unlisted is dependent:

- two moves of different actors commute when their footprints do not conflict (appends
  to the outbox or broker commute with changes to existing rows, not with each other);
- a clock jump commutes with a step that does not read the clock, if nobody else sleeps
  (a jump could wake a sleeper and change the default);
- a crash commutes with a step of an *earlier* actor in schedule order (a restarted later
  actor cannot take the default's place) whose footprint does not conflict with what the
  crash releases (an in-flight call's key, a delivery).
"""

from __future__ import annotations

from collections.abc import Sequence

from txcheck.models.runner import Choice, Run

__all__ = ["READ_ONLY", "Moment", "footprint", "step_kind"]

CLOCK = "clock"
CONSUMER = "consumer"

Footprint = tuple[frozenset[str], frozenset[str]]
"""(reads, writes). Writes ending in ``+`` append new rows; ``~`` changes existing ones."""

_EMPTY: frozenset[str] = frozenset()
_FOOTPRINTS: dict[str, Footprint] = {
    "JournalAppend": (_EMPTY, _EMPTY),  # the actor's own journal
    "JournalRead": (_EMPTY, _EMPTY),
    "Wake": (_EMPTY, _EMPTY),
    "Invoke": (frozenset({"clock", "store"}), frozenset({"store"})),
    "Complete": (
        frozenset({"clock", "store", "services", "ops"}),
        frozenset({"store", "services", "ops", "outbox+"}),
    ),
    "Lookup": (frozenset({"ops"}), _EMPTY),
    "KeyLookup": (frozenset({"clock", "store"}), _EMPTY),
    "Reconcile": (frozenset({"ops"}), _EMPTY),
    "Sleep": (frozenset({"clock"}), _EMPTY),
    "Publish": (_EMPTY, frozenset({"broker+"})),
    "BrokerSend": (_EMPTY, frozenset({"broker+"})),
    "OutboxFetch": (frozenset({"outbox"}), _EMPTY),
    "Start": (frozenset({"outbox"}), _EMPTY),  # an idle relay starts with a fetch
    "OutboxMarkPublished": (_EMPTY, frozenset({"outbox~"})),
    "SeenCheck": (frozenset({"seen"}), _EMPTY),
    "MarkSeen": (_EMPTY, frozenset({"seen"})),
    "ApplyEffect": (frozenset({"seen", "effects"}), frozenset({"seen", "effects"})),
    "Ack": (_EMPTY, frozenset({"broker~"})),
    "Deliver": (_EMPTY, frozenset({"broker~"})),
}
_UNKNOWN: Footprint = (frozenset({"*"}), frozenset({"*"}))

READ_ONLY = frozenset(
    {"JournalRead", "Wake", "Lookup", "KeyLookup", "Reconcile", "OutboxFetch", "SeenCheck"}
)
"""Steps that change nothing but their actor's position: a crash right after one lands
where a crash right before it does."""


def step_kind(run: Run, choice: Choice, sleeping: Sequence[str]) -> str:
    """What applying ``choice`` does: ``Complete``, ``Deliver``, ``Crash``, ``Clock``,
    ``Wake``, ``Start`` (an idle relay) or the kind of the request the actor makes."""
    if choice.actor == CLOCK:
        return "Clock"
    if choice.action != "step":
        return choice.action.capitalize()
    if choice.actor in sleeping:
        return "Wake"
    return str(run.current(choice.actor).get("kind", "Start"))


def footprint(actor: str, kind: str) -> Footprint:
    """What a step of ``kind`` by ``actor`` reads and writes in the world."""
    reads, writes = _FOOTPRINTS.get(kind, _UNKNOWN)
    if actor == CONSUMER:  # a consumer that ends without an ACK gets its delivery requeued
        writes = writes | {"broker~"}
    return reads, writes


def _conflict(a: Footprint, b: Footprint) -> bool:
    if "*" in a[0] or "*" in b[0]:
        return True
    if a[1] & b[1]:
        return True
    written_a = {w.rstrip("+~") for w in a[1]}
    written_b = {w.rstrip("+~") for w in b[1]}
    return bool(written_a & b[0] or written_b & a[0])


class Moment:
    """One state on a default continuation: what the default step does there, to ask
    which of the deviations offered there commute with it."""

    def __init__(self, run: Run, options: Sequence[Choice]) -> None:
        self.run = run
        self.options = options
        self.sleeping = run.sleeping()
        self.default = options[0]
        self.kind = step_kind(run, self.default, self.sleeping)

    def commutes(self, other: Choice) -> bool:
        """Whether ``other`` (offered here) commutes with the default step, the default
        staying the default after ``other``."""
        actor = self.default.actor
        if actor in (CLOCK, other.actor):
            return False
        mine = footprint(actor, self.kind)
        if other.action == "jump":
            return "clock" not in mine[0] and "*" not in mine[0] and set(self.sleeping) <= {actor}
        if other.actor == CLOCK:
            return False
        order = self.run.actors
        if order.index(other.actor) < order.index(actor):
            return False  # it would move first after this and take the default's place
        if other.action == "crash":
            holds_call = any(
                c.actor == other.actor and c.action == "complete" for c in self.options
            )
            released = ({"store"} if holds_call else set()) | (
                {"broker~"} if other.actor == CONSUMER else set()
            )
            return not _conflict(mine, (_EMPTY, frozenset(released)))
        theirs = footprint(other.actor, step_kind(self.run, other, self.sleeping))
        return not _conflict(mine, theirs)
