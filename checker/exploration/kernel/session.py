"""The stepping session: the one place where invariants are checked.

Every engine, the scenarios, replay and evaluate drive a ``Session``: ``apply(choice)``
takes one step and checks every safety invariant on the new state; ``finish()`` stops
injecting faults, quiesces on the default schedule (still checking safety after every
step) and then checks the liveness invariants. The result is an ``Execution``: the run
(trace and world) and every property failure, with the step at which it first appeared.

A safety invariant that declares what it ``reads`` is not re-evaluated while none of those
parts of the world changed since it last held: its verdict cannot have changed. One that
does not declare is evaluated after every step.

Harm first: when the first failure is only hygiene (a retry under a fresh key, a rejected
plan that wrote), a session that stops at the first failure *settles* instead: it takes no
more deviations, only the default schedule, to quiescence, and stops at once if harm
follows (the retry commits a second charge). The failure a counterexample names is the
first harm, else the first failure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from txcheck.exploration.kernel.target import Target
from txcheck.invariants import Invariant, Kind
from txcheck.models.errors import (
    ControlFlow,
    InvariantError,
    UserCodeError,
    UserCodeStuck,
    raised,
)
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.choices import Choice, FaultKind, Part, Vocabulary, fault_kind
from txcheck.models.sim.deviation_cost import deviation_count
from txcheck.models.sim.runner import Run, Step

__all__ = [
    "Chooser",
    "Divergence",
    "ErrorKind",
    "Execution",
    "Failure",
    "Session",
    "execute",
]

Chooser = Callable[[Run, Sequence[Choice]], "Choice | None"]
"""Picks the next choice from the available ones (the default is first); None hands
the rest of the run to the default schedule."""

_HISTORY = Part.HISTORY.bit
_EVERYTHING = -1


QUIESCENCE = "quiescence"
"""The liveness failure of a run that never quiesces (a livelock or an unbounded retry)."""


@attrs.frozen(kw_only=True)
class Failure:
    """A property that failed, where, and why (one message per offending record)."""

    name: str
    kind: Kind = attrs.field(converter=Kind)
    step: int | None
    messages: tuple[str, ...]
    harm: bool = attrs.field(default=True, eq=False)
    """Observable harm (a double effect, money destroyed), not only hygiene."""

    def to_json(self) -> dict[str, Any]:
        return {
            "invariant": self.name,
            "kind": str(self.kind),
            "step": self.step,
            "messages": list(self.messages),
        }


@attrs.frozen(kw_only=True)
class Divergence:
    """A recorded choice that is not possible at this point of the run."""

    step: int
    wanted: Choice
    available: tuple[Choice, ...]

    def message(self) -> str:
        options = ", ".join(f"{c.actor} {c.action} {c.outcome}" for c in self.available[:8])
        return (
            f"step {self.step}: recorded choice {self.wanted.actor} {self.wanted.action} "
            f"{self.wanted.outcome} is not possible here (possible: {options or 'none'})"
        )


class ErrorKind(Vocabulary):
    """Whose code raised when an execution ends in an error (``Execution.error_kind``,
    ``ExploreVerdict.error_kind``): the values are the ``kind`` of the ``UserCodeError``
    subclasses, and what JSON results carry."""

    POLICY = "policy"
    SERVICE = "service"
    INVARIANT = "invariant"
    STORE = "store"
    USER_CODE = "user code"
    """A ``UserCodeError`` of no more specific kind."""


def _error_kind(value: str | None) -> ErrorKind | None:
    """An error kind from a member or its string; ``None`` and ``""`` (no error) are
    ``None``."""
    return ErrorKind.parse(value) if value else None


@attrs.frozen(kw_only=True)
class Execution:
    """The result of one execution: its run (trace and world) and what failed."""

    run: Run
    failures: tuple[Failure, ...]
    """What failed, each invariant once, in the order the failures appeared."""
    divergence: Divergence | None = None
    quiesced: bool = False
    error: str | None = None
    error_kind: ErrorKind | None = attrs.field(default=None, converter=_error_kind)
    """Whose code raised (None when nothing did)."""
    hung: bool = False
    """The policy ran past its time limit without yielding: running it again would only
    hang again, so engines report this execution as it is (no confirming, no shrinking)."""

    @property
    def steps(self) -> list[Step]:
        return self.run.steps

    @property
    def plans(self) -> tuple[Plan, ...]:
        return self.run.plans

    @property
    def deviations(self) -> int:
        """How many deviations the run took: each step that took a choice other than the
        default, except free repeats of one fault on one retried call
        (``txcheck.models.sim.deviation_cost``)."""
        return deviation_count(self.run.steps)

    @property
    def ok(self) -> bool:
        return not self.failures and self.divergence is None and self.error is None

    def failed(self, name: str) -> bool:
        return any(f.name == name for f in self.failures)

    @property
    def raised(self) -> bool:
        """User code (the policy, a service or an invariant) raised before any invariant
        failed: an error to report (``error_kind`` says whose), not a counterexample."""
        return self.error is not None and not self.failures

    @property
    def harmful(self) -> bool:
        """Whether some failure is harm (not only hygiene)."""
        return any(f.harm for f in self.failures)

    @property
    def by_harm(self) -> tuple[Failure, ...]:
        """The failures harm first (then hygiene), each in the order they appeared: the
        order a report shows them in."""
        return tuple(sorted(self.failures, key=lambda f: not f.harm))

    @property
    def first(self) -> str | None:
        """The name of what a report leads with: the first harm, else the first failure,
        ``policy_error`` or None."""
        if self.failures:
            return self.by_harm[0].name
        return "policy_error" if self.error is not None else None


class Session:
    """One run of ``target`` over ``plans``, checked as it goes.

    ``stop_at_first`` ends the session at the first step where some invariant fails (the
    engines), or, when that failure is only hygiene, settles on the default schedule to see
    whether harm follows (``settle=False``: it stops there too); without it, the run goes
    on and each invariant's first failure is kept (the scenarios show the concrete damage).
    ``track_positions`` lets the run fingerprint its states (the systematic engine). ``run``
    continues a run already under way (a
    ``Run.fork``) instead of starting one; ``plans`` must be its plans.
    """

    def __init__(
        self,
        target: Target,
        plans: Sequence[Plan],
        *,
        stop_at_first: bool = True,
        track_positions: bool = False,
        run: Run | None = None,
        settle: bool = True,
    ) -> None:
        self.target = target
        self.settle = settle
        """On a hygiene failure, go on to see whether harm follows (False: stop at any
        first failure, as traces written before harm came first were recorded)."""
        started = run is not None
        if run is None:
            run = target.run(plans, track_positions=track_positions, start=False)
        self.run = run
        self.stop_at_first = stop_at_first
        self.failures: list[Failure] = []
        self.divergence: Divergence | None = None
        self.error: str | None = None
        self.error_kind: ErrorKind | None = None
        """What raised: ``policy``, ``service`` or ``invariant`` (user code, exit 2)."""
        self.hung = False
        """User code ran past its time limit (``UserCodeStuck``)."""
        self.quiesced = False
        self.safety_checks = 0
        """States at which every safety invariant was checked (evaluated, or skipped
        because nothing it reads had changed)."""
        self.liveness_checks = 0
        self.evaluations = 0
        """Invariant evaluations actually run."""
        self._failed: set[str] = set()
        self._harmed = False
        """Some recorded failure is harm."""
        if started:
            return  # a run under way (``Run.fork``): nothing checked of it yet
        try:
            self.run.start()
        except UserCodeError as error:
            self._raised(error)

    def _raised(self, error: UserCodeError) -> None:
        self.error, self.error_kind = str(error), ErrorKind.parse(error.kind)
        self.hung = isinstance(error, UserCodeStuck)

    # -- state -----------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """Nothing more will happen: a harmful failure (with ``stop_at_first``), a policy
        error, a divergence or quiescence."""
        stops = self._harmed or (bool(self.failures) and not self.settle)
        return (
            (stops and self.stop_at_first)
            or self.error is not None
            or self.divergence is not None
            or self.quiesced
        )

    @property
    def harmful(self) -> bool:
        """Whether some failure recorded so far is harm (not only hygiene)."""
        return self._harmed

    @property
    def settling(self) -> bool:
        """Only hygiene failed so far, and the session stops at the first failure: it takes
        the default schedule alone from here, to see whether harm follows."""
        return self.stop_at_first and self.settle and bool(self.failures) and not self._harmed

    @property
    def steps(self) -> list[Step]:
        return self.run.steps

    def choices(self) -> list[Choice]:
        """What may happen next, the default first (empty: quiescent or done; only the
        default while settling)."""
        if self.done:
            return []
        options = self.run.choices()
        return options[:1] if self.settling else options

    def execution(self) -> Execution:
        """Where the session stands, as a result."""
        return Execution(
            run=self.run,
            failures=tuple(self.failures),
            divergence=self.divergence,
            quiesced=self.quiesced,
            error=self.error,
            error_kind=self.error_kind,
            hung=self.hung,
        )

    # -- stepping --------------------------------------------------------------------------

    def apply(self, choice: Choice, *, check: bool = True) -> Step | None:
        """Take ``choice`` (one of ``choices()``) and, with ``check``, check every safety
        invariant on the new state. None when the policy raised (``error`` says why)."""
        options = self.run.choices()
        kind = fault_kind(choice, options)
        try:
            step = self.run.apply(choice, deviation=kind is not None, kind=kind)
        except UserCodeError as error:
            self._raised(error)
            return None
        if check:
            self.check(step.index)
        return step

    def check(self, step: int) -> list[Failure]:
        """Check the safety invariants on the current state (after ``step``)."""
        self.safety_checks += 1
        found = self._evaluate(self.target.suite.safety, step, self._changes())
        self._record(found)
        return found

    def retake(
        self, choice: Choice, *, kind: FaultKind | None, deviation: bool | None = None
    ) -> Step:
        """Re-take a step that a session of the same target and plans already took and
        checked (a prefix the systematic engine branches from, a recorded run shown step by
        step): nothing is checked again, and the step keeps its kind and deviation flag
        (by default, whether it has a kind)."""
        flag = kind is not None if deviation is None else deviation
        return self.run.apply(choice, deviation=flag, kind=kind)

    def retrace(self, steps: Iterable[Step]) -> None:
        """Re-take each of ``steps`` as recorded (its deviation flag and kind), unchecked."""
        for step in steps:
            self.retake(step.choice, kind=step.kind, deviation=step.deviation)

    def fork(self) -> Session | None:
        """An independent session standing where this one stands, nothing of it checked
        yet (``Run.fork``: the world copied, each actor's generator fed again); None when
        the policy, fed the same responses, asks for something else."""
        forked = self.run.fork()
        if forked is None:
            return None
        return Session(self.target, self.run.plans, run=forked)

    def stuck(self, reason: str) -> None:
        """Record that the run cannot quiesce (``reason`` says why) as a ``quiescence``
        failure at the current step."""
        self._record(
            [
                Failure(
                    name=QUIESCENCE,
                    kind=Kind.LIVENESS,
                    step=len(self.run.steps),
                    messages=(reason,),
                )
            ]
        )

    def over_limit(self) -> bool:
        """Whether the run has used its step bound without quiescing; if so, that is a
        ``quiescence`` failure, recorded here."""
        if len(self.run.steps) < self.target.bounds.max_steps or not self.run.choices():
            return False
        self.stuck(
            f"no quiescence within {self.target.bounds.max_steps} steps "
            "(a livelock or an unbounded retry?)"
        )
        return True

    def follow(self, choices: Sequence[Choice]) -> bool:
        """Take recorded ``choices`` in order, checking as it goes; False when one is not
        possible (``divergence``) or the session ended first."""
        for wanted in choices:
            if self.done:
                return False
            available = self.run.choices()
            if wanted not in available:
                self.divergence = Divergence(
                    step=len(self.run.steps), wanted=wanted, available=tuple(available)
                )
                return False
            self.apply(wanted)
        return not self.done

    def drive(self, chooser: Chooser) -> None:
        """Let ``chooser`` pick until it hands over (None), the run quiesces or ends."""
        while not self.done and (options := self.choices()):
            if self.over_limit():
                return
            picked = chooser(self.run, options)
            if picked is None:
                return
            self.apply(picked)

    def finish(self) -> Execution:
        """Stop injecting faults: take the default choice until nothing is left to do
        (checking safety after every step), then check the liveness invariants."""
        while not self.done and (options := self.run.choices()):
            if self.over_limit():
                break
            self.apply(options[0])
        if not self.done and not self.run.choices():
            self.quiesced = True
            self.liveness_checks += 1
            self._record(self._evaluate(self.target.suite.liveness, None, _EVERYTHING))
        return self.execution()

    # -- the one invariant-checking loop ---------------------------------------------------

    def _changes(self) -> int:
        """The parts changed since the last safety check (flags), and clear the marks."""
        run = self.run
        changed = run.world.changed
        if run.history.changed:
            changed |= _HISTORY
        run.world.changed = 0
        run.history.changed = False
        return changed

    def _evaluate(
        self, checks: Sequence[Invariant], step: int | None, changed: int
    ) -> list[Failure]:
        run = self.run
        view = None
        failures: list[Failure] = []
        if self.error is not None:
            return failures  # user code already failed: the run ends there
        for check in checks:
            mask = check.reads_mask
            if mask != _EVERYTHING and not changed & mask:
                continue  # nothing it declares it reads changed since it last held
            if view is None:
                view = run.view()
            self.evaluations += 1
            try:
                messages = _messages(check, check.check(view))
            except ControlFlow:
                raise  # a real Ctrl-C, a spent budget: not the invariant's doing
            except BaseException as error:  # user code: even SystemExit is reported
                where = f"after step {step}" if step is not None else "at quiescence"
                if not isinstance(error, InvariantError):
                    error = InvariantError(f"invariant {check.name!r} raised {raised(error)}")
                self._raised(type(error)(f"{error} ({where})"))
                return failures
            if messages:
                failures.append(
                    Failure(
                        name=check.name,
                        kind=check.kind,
                        step=step,
                        messages=messages,
                        harm=check.is_harm,
                    )
                )
        return failures

    def _record(self, failures: list[Failure]) -> None:
        for failure in failures:
            if failure.name not in self._failed:
                self._failed.add(failure.name)
                self.failures.append(failure)
                if failure.harm:
                    self._harmed = True


def _messages(check: Invariant, found: object) -> tuple[str, ...]:
    """An invariant's messages: what it returned or yielded, each a string
    (``InvariantError`` saying what was expected and what came instead)."""
    if isinstance(found, (str, bytes, Mapping)) or not isinstance(found, Iterable):
        raise InvariantError(
            f"invariant {check.name!r} returned {_shown(found)}: expected an iterable of "
            "message strings (yield one string per problem, nothing when it holds)"
        )
    messages = tuple(found)
    for message in messages:
        if not isinstance(message, str):
            raise InvariantError(
                f"invariant {check.name!r} yielded {_shown(message)}: expected a message "
                "string (one per problem)"
            )
    return messages


def _shown(value: object) -> str:
    """``value``'s type and a short repr, for an error message."""
    try:
        text = repr(value)
    except ControlFlow:
        raise
    except BaseException:  # a user's object: its repr may raise too
        text = "?"
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


def execute(
    target: Target,
    plans: Sequence[Plan],
    *,
    choices: Sequence[Choice] = (),
    chooser: Chooser | None = None,
    quiesce: bool = True,
    stop_at_first: bool = True,
    settle: bool = True,
) -> Execution:
    """Run ``plans`` under ``target``: take the recorded ``choices``, then let ``chooser``
    pick until it hands over, then (with ``quiesce``) finish on the default schedule.
    A recorded choice that is not possible ends the run as a divergence. ``settle``: see
    ``Session``."""
    session = Session(target, plans, stop_at_first=stop_at_first, settle=settle)
    if not session.follow(choices):
        return session.execution()
    if chooser is not None:
        session.drive(chooser)
    if quiesce:
        return session.finish()
    return session.execution()


__all__ += ["QUIESCENCE"]
