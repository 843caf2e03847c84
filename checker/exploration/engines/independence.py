"""When two choices commute: the partial-order reduction of the systematic engine.

At a state ``s`` the default schedule takes ``default``; ``other`` is a deviation offered
at ``s``. If the two are *independent* — applying ``other`` then ``default`` reaches the
same state as ``default`` then ``other``, and ``default`` is still the default after
``other`` — then branching on ``other`` one step later reaches, with as many deviations
and steps, a state that the branch "``other`` now" reaches too. The engine does not branch
there (a sleep set, in Godefroid's terms). docs/decisions/002-systematic-pruning.md has
the argument.

Independence is read off *footprints*: what a step reads and writes in the world. Each
request type declares its own (``txcheck.models.sim.requests``); the few steps that are not a
request (a completion, a delivery, a wake-up, an idle relay starting) are described here.
Each actor's own state and journal are private to it. The rules are narrow on purpose and
anything undeclared is dependent:

- two moves of different actors commute when their footprints do not conflict (appends
  to the outbox or broker commute with changes to existing rows, not with each other);
- a clock jump commutes with a step that does not read the clock, if nobody else sleeps
  (a jump could wake a sleeper and change the default);
- a late call landing (the service's move) is dependent on everything;
- a crash commutes with a step of an *earlier* actor in schedule order (a restarted later
  actor cannot take the default's place) whose footprint does not conflict with what the
  crash releases (an in-flight call's key, a delivery).
"""

from __future__ import annotations

from collections.abc import Sequence

from txcheck.models.sim.choices import Action, Choice, Footprint, Part, footprint
from txcheck.models.sim.requests import Invoke
from txcheck.models.sim.runner import CLOCK, CONSUMER, SERVICE, Run

__all__ = ["Moment", "step_footprint"]

_WAKE = Footprint()
_START = footprint(reads=(Part.OUTBOX,))  # an idle relay starts with a fetch
_DELIVER = footprint(changes=(Part.BROKER,))
_REQUEUE = footprint(changes=(Part.BROKER,))  # a consumer that ends without an ACK


def step_footprint(run: Run, choice: Choice, sleeping: Sequence[str]) -> tuple[Footprint, bool]:
    """What applying ``choice`` (not a clock move or a crash) reads and writes, and whether
    it changes nothing but its actor's position (read-only)."""
    if choice.action is Action.COMPLETE:
        found = Invoke.completion
        read_only = False
    elif choice.action is Action.DELIVER:
        found, read_only = _DELIVER, False
    elif choice.actor in sleeping:
        found, read_only = _WAKE, True
    else:
        request = run.request_of(choice.actor)
        if request is None:
            found, read_only = _START, False
        else:
            found, read_only = request.footprint, request.read_only
    if choice.actor == CONSUMER:
        found = found | _REQUEUE
    return found, read_only


class Moment:
    """One state on a default continuation: what the default step does there, to ask
    which of the deviations offered there commute with it."""

    def __init__(self, run: Run, options: Sequence[Choice]) -> None:
        self.run = run
        self.options = options
        self.sleeping = run.sleeping()
        self.default = options[0]
        if self.default.actor in (CLOCK, SERVICE) or self.default.action is Action.CRASH:
            self.footprint, self.read_only = Footprint(unknown=True), False
        else:
            self.footprint, self.read_only = step_footprint(run, self.default, self.sleeping)

    def commutes(self, other: Choice) -> bool:
        """Whether ``other`` (offered here) commutes with the default step, the default
        staying the default after ``other``."""
        actor = self.default.actor
        if actor in (CLOCK, other.actor):
            return False
        mine = self.footprint
        if other.action is Action.JUMP:
            return (
                not mine.unknown and Part.CLOCK not in mine.reads and set(self.sleeping) <= {actor}
            )
        if other.actor in (CLOCK, SERVICE):
            return False  # a late call landing: not described, so dependent
        order = self.run.actors
        if order.index(other.actor) < order.index(actor):
            return False  # it would move first after this and take the default's place
        if other.action is Action.CRASH:
            holds_call = any(
                c.actor == other.actor and c.action is Action.COMPLETE for c in self.options
            )
            released = frozenset(
                ({Part.STORE} if holds_call else set())
                | ({Part.BROKER} if other.actor == CONSUMER else set())
            )
            return not mine.conflicts(Footprint(changes=released))
        theirs, _ = step_footprint(self.run, other, self.sleeping)
        return not mine.conflicts(theirs)
