"""The deterministic runner: a policy, a contract, plans and a sequence of choices.

Everything nondeterministic is a ``Choice`` made from outside: which actor moves, the
outcome of a tool attempt, crashes, which message is delivered, duplicates, lost ACKs and
clock jumps. ``choices()`` lists what may happen next with the default first; the default
schedule (always the first choice) is the canonical fault-free run, and any other choice
is a deviation. Given the same choices a run is identical, byte for byte.

The runner owns the actors (each policy generator, its request in hand, its call in flight,
its sleep, its delivery); the world (``models.world``) owns and makes every change of
durable state; each request declares how it is performed (``models.sim.requests``).
Checking properties is the exploration kernel's job (``txcheck.exploration.kernel.session``),
not the runner's.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import attrs

from txcheck.models.errors import ControlFlow, PolicyError, UserCodeError, raised
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.plan_verdicts import violation_codes
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.choices import TOOL_OUTCOMES, Action, Choice, FaultKind, Outcome
from txcheck.models.sim.deviation_cost import NO_CHAIN, FaultChain, extend, is_free_repeat
from txcheck.models.sim.digest import chain, digest, serial
from txcheck.models.sim.history import Attempt, History
from txcheck.models.sim.policies.base import ActorGen, OrchestratorContext, Policy
from txcheck.models.sim.requests import Ack, Delivery, Invoke, Request, Sleep, request_problem
from txcheck.models.sim.world import PendingCall, World, fork_value

__all__ = [
    "CLOCK",
    "CONSUMER",
    "RELAY",
    "SERVICE",
    "Run",
    "RunView",
    "Step",
    "Unforkable",
    "close_generator",
]


CLOCK = "clock"
RELAY = "relay"
CONSUMER = "consumer"
SERVICE = "service"
"""Who lands a call still in flight after its caller heard a timeout (``LATE_COMMIT``):
the service, which is not an actor of the run; like the clock, it only makes choices."""

_LATE_OUTCOMES: tuple[Outcome, ...] = (*TOOL_OUTCOMES, Outcome.LATE_COMMIT)


@attrs.frozen(kw_only=True)
class Step:
    """One applied choice and what was observed; a trace is a list of these."""

    index: int
    choice: Choice
    deviation: bool = False
    request: Mapping[str, Any] = attrs.field(factory=dict)
    observed: Mapping[str, Any] = attrs.field(factory=dict)
    kind: FaultKind | None = attrs.field(default=None, eq=False)
    """The kind of deviation this step took (None on the default schedule)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "i": self.index,
            **self.choice.to_json(),
            "deviation": self.deviation,
            "request": dict(self.request),
            "observed": dict(self.observed),
        }


@attrs.frozen(kw_only=True)
class RunView:
    """What properties see: the world, the history and the run's inputs, read-only by
    convention."""

    world: World
    history: History
    plans: tuple[Plan, ...]
    instances: tuple[str, ...]
    policy: Policy
    contract: Contract
    initial_business_state: Mapping[str, Any]
    invalid_plans: Mapping[str, tuple[str, ...]]
    quiescent: bool
    finished: Mapping[str, bool]
    derived: dict[object, object] = attrs.field(factory=dict, eq=False, repr=False)
    """What properties derive from this view and share (several ask for a plan's
    progress); it lives as long as the view, one evaluation of the invariants."""


@attrs.define
class _Actor:
    name: str
    gen: ActorGen | None = None
    request: Request | None = None
    pending: PendingCall | None = None
    wake_at: int | None = None
    delivery: str | None = None
    done: bool = False
    # What built ``gen``, what it asked for and the responses it got since it
    # (re)started, and (when positions are tracked) a running digest of them: a
    # generator's local state is a function of its inputs, so this is enough to build it
    # again where it stands, and to tell if the new one goes another way (``Run.fork``).
    # ``inputs[i]`` answered ``asked[i]``.
    digest: bytes = b""
    make: Callable[[], ActorGen] | None = None
    asked: list[Request] = attrs.field(factory=list)
    inputs: list[Any] = attrs.field(factory=list)


class Run:
    """One run of ``policy`` over ``plans`` (one orchestrator instance per plan)."""

    def __init__(
        self,
        *,
        policy: Policy,
        contract: Contract,
        plans: Sequence[Plan],
        world: World,
        max_steps: int = 2000,
        allow_clock_jumps: bool = True,
        track_positions: bool = False,
        fault_counts: bool = True,
        start: bool = True,
    ) -> None:
        self.policy = policy
        self.contract = contract
        self.plans = tuple(plans)
        self.world = world
        self.history = History()
        self.steps: list[Step] = []
        self._chain: FaultChain = NO_CHAIN  # the fault the last deviation repeated, and how often
        self.max_steps = max_steps
        self.allow_clock_jumps = allow_clock_jumps
        self.track_positions = track_positions
        self.late_commits = bool(getattr(policy, "late_commits", False))
        """Whether a side-effecting call may also end in ``LATE_COMMIT`` (``Policy``)."""
        self._generations: dict[str, int] = {}  # instance -> generation, once restarted
        self._landing: list[tuple[str, PendingCall]] = []
        """Calls whose caller heard a timeout and that are still in flight, by landing id,
        oldest first: each is a choice of ``SERVICE`` until it commits."""
        self.fault_counts = fault_counts
        """Whether a state's identity holds how many faults of each kind were injected (an
        invariant may count them) or only whether any was (all the built-in ones ask)."""
        self._options: list[Choice] | None = None
        self._attempts: dict[tuple[str, str], bytes] = {}  # running digests (fingerprint)
        self._attempts_seen = 0
        self.instances = tuple(f"orchestrator-{i + 1}" for i in range(len(self.plans)))
        self._contexts = {
            name: OrchestratorContext(instance=name, plan=plan, contract=contract)
            for name, plan in zip(self.instances, self.plans, strict=False)
        }
        self._actors = {name: _Actor(name) for name in (*self.instances, RELAY, CONSUMER)}
        self._initial = fork_value(self.world.business_state())
        self.invalid_plans = _invalid_plans(contract, self.instances, self.plans)
        for name in self.instances:
            self.world.open_journal(name)
        if start:
            self.start()

    def start(self) -> None:
        """Start every orchestrator instance (``Run(start=False)`` leaves it to the caller,
        which may then catch a policy that fails to start)."""
        for name in self.instances:
            actor = self._actors[name]
            if actor.gen is None and not actor.done:
                self._start(actor, functools.partial(self.policy.orchestrate, self._contexts[name]))

    # -- what may happen next ---------------------------------------------------------------

    def choices(self) -> list[Choice]:
        """Enabled choices, the default first. Empty means the run is quiescent.

        Computed once per state: the list is cached until the next ``apply``.
        """
        if self._options is None:
            self._options = self._enabled()
        return list(self._options)

    def _enabled(self) -> list[Choice]:
        moves: list[Choice] = []
        for actor in self._actors.values():
            moves.extend(self._moves(actor))
        crashes = [
            _choice(a.name, Action.CRASH)
            for a in self._actors.values()
            if a.gen is not None and not a.done
        ]
        if not moves:
            sleepers = [a for a in self._actors.values() if a.wake_at is not None]
            if sleepers:
                moves.append(_choice(CLOCK, Action.WAIT))
        # a late call lands after everything else could move: by default its caller goes on
        # (retries, looks it up) before it commits, the interleaving that hurts
        moves.extend(_choice(SERVICE, Action.COMPLETE, landing) for landing, _ in self._landing)
        if moves and self.allow_clock_jumps:
            crashes.append(_choice(CLOCK, Action.JUMP))
        return moves + crashes if moves else []

    def _moves(self, actor: _Actor) -> list[Choice]:
        if actor.done:
            return []
        if actor.wake_at is not None:
            if self.world.clock >= actor.wake_at:
                return [_choice(actor.name, Action.STEP)]
            return []
        if actor.pending is not None:
            outcomes = actor.pending.outcomes()
            if self.late_commits and outcomes is TOOL_OUTCOMES:
                outcomes = _LATE_OUTCOMES
            return [_choice(actor.name, Action.COMPLETE, o) for o in outcomes]
        if actor.gen is None:
            if actor.name == RELAY and self.world.unpublished() is not None:
                return [_choice(RELAY, Action.STEP)]
            if actor.name == CONSUMER:
                return [
                    _choice(CONSUMER, Action.DELIVER, d["delivery_id"])
                    for d in self.world.ready_deliveries()
                ]
            return []
        request = actor.request
        step = _choice(actor.name, Action.STEP)
        if request is None or not request.faults:
            return [step]
        return [step, *(_choice(actor.name, Action.STEP, f) for f in request.faults)]

    def current(self, actor: str) -> Mapping[str, Any]:
        """What ``actor`` is about to do: its request's kind, tool and call, if any."""
        state = self._actors.get(actor)
        if state is None:
            return {}
        if state.pending is not None:
            return state.pending.invoke.summary()
        if state.request is not None and state.wake_at is None:
            return state.request.summary()
        return {}

    def request_of(self, actor: str) -> Request | None:
        """The request ``actor`` is about to make (its call in flight, if any); None when it
        is asleep, idle or unknown."""
        state = self._actors.get(actor)
        if state is None or state.wake_at is not None:
            return None
        if state.pending is not None:
            return state.pending.invoke
        return state.request

    def sleeping(self) -> tuple[str, ...]:
        """Actors waiting for the clock (a backoff ``Sleep``), whether due or not."""
        return tuple(a.name for a in self._actors.values() if a.wake_at is not None)

    @property
    def actors(self) -> tuple[str, ...]:
        """Every actor but the clock, in schedule order (the default favours earlier ones)."""
        return tuple(self._actors)

    @property
    def quiescent(self) -> bool:
        if self._options is None:
            self._options = self._enabled()
        return not self._options

    # -- applying a choice ------------------------------------------------------------------

    def apply(
        self, choice: Choice, *, deviation: bool = False, kind: FaultKind | None = None
    ) -> Step:
        """Apply one choice from ``choices()``; the caller is trusted to pick from it and
        says whether it is a deviation (not the first, default choice) and of what kind."""
        self._options = None
        if choice.is_fault:
            self.history.record_fault(choice.fault_name)
        request: dict[str, Any] = {}
        observed: dict[str, Any]
        outcome = choice.outcome if isinstance(choice.outcome, Outcome) else Outcome.OK
        if choice.actor == CLOCK:
            observed = self._clock(choice)
        elif choice.actor == SERVICE:
            request, observed = self._land(choice)
        else:
            actor = self._actors[choice.actor]
            if choice.action is Action.CRASH:
                observed = self._crash(actor)
            elif choice.action is Action.DELIVER:
                delivery_id = str(choice.outcome)
                if actor.gen is not None or not any(
                    d["delivery_id"] == delivery_id for d in self.world.ready_deliveries()
                ):
                    raise self._not_possible(choice)
                delivery = self.world.take(delivery_id)
                actor.delivery = delivery_id
                event = delivery["event"]
                self._start(
                    actor,
                    lambda: self.policy.consume(Delivery(delivery_id=delivery_id, event=event)),
                    origin=(delivery_id, event),
                )
                observed = {"event": delivery["event"]["id"]}
            elif choice.action is Action.COMPLETE:
                pending = actor.pending
                if pending is None:
                    raise self._not_possible(choice)
                actor.pending = None
                result = self.world.complete(pending, outcome)
                request = pending.invoke.summary()
                observed = result.summary()
                if outcome is Outcome.LATE_COMMIT:
                    landing = f"{actor.name}:{pending.invoke.call_id}@{len(self.steps)}"
                    self._landing.append((landing, pending))
                    observed["landing"] = landing
                self._resume(actor, result)
            else:
                if actor.gen is None and actor.name == RELAY:
                    self._start(actor, self.policy.relay)
                if actor.wake_at is not None:
                    actor.wake_at = None
                    request, observed = {"kind": "Wake"}, {}
                    self._resume(actor, None)
                else:
                    if actor.request is None or actor.pending is not None:
                        raise self._not_possible(choice)
                    request = actor.request.summary()
                    observed = self._process(actor, actor.request, outcome)
        step = Step(
            index=len(self.steps),
            choice=choice,
            deviation=deviation,
            request=request,
            observed=observed,
            kind=kind,
        )
        self.steps.append(step)
        if deviation:
            self._chain = extend(self._chain, step)
        return step

    def time_matters(self) -> bool:
        """Whether a clock jump would change more than the time: a live idempotency record
        would expire, or a sleeper would wake."""
        return self.world.time_matters() or any(
            a.wake_at is not None for a in self._actors.values()
        )

    def free_repeat(self, choice: Choice) -> bool:
        """Whether ``choice`` would repeat the run's last deviation (the same fault on the
        same, retried call) and so cost no deviation (``txcheck.models.sim.deviation_cost``)."""
        if choice.action is not Action.COMPLETE:
            return False
        request = self.request_of(choice.actor)
        if not isinstance(request, Invoke):
            return False
        return is_free_repeat(self._chain, choice, request.call_id, request.tool)

    def _clock(self, choice: Choice) -> dict[str, Any]:
        if choice.action is Action.WAIT:
            self.world.wait_until(
                min(a.wake_at for a in self._actors.values() if a.wake_at is not None)
            )
        else:
            self.world.jump_clock()
        return {"clock": self.world.clock}

    def _land(self, choice: Choice) -> tuple[dict[str, Any], dict[str, Any]]:
        """Commit a call still in flight whose caller heard a timeout (``SERVICE``)."""
        for index, (landing, pending) in enumerate(self._landing):
            if landing == choice.outcome:
                del self._landing[index]
                result = self.world.complete(pending, Outcome.OK)
                return {**pending.invoke.summary(), "landing": landing}, result.summary()
        raise self._not_possible(choice)

    def _crash(self, actor: _Actor) -> dict[str, Any]:
        observed: dict[str, Any] = {"lost": type(actor.request).__name__ if actor.request else None}
        if actor.pending is not None:
            self.world.abort(actor.pending)
            actor.pending = None
        if actor.delivery is not None:
            self.world.requeue(actor.delivery)
            actor.delivery = None
        self.world.crashed(actor.name)
        if actor.gen is not None:
            self._close(actor, actor.gen)
        actor.gen, actor.request, actor.wake_at = None, None, None
        if actor.name in self._contexts:
            generation = self._generations[actor.name] = self._generations.get(actor.name, 1) + 1
            context = attrs.evolve(self._contexts[actor.name], generation=generation)
            self._start(actor, lambda: self.policy.orchestrate(context))
            observed["restarted"] = True
        return observed

    def _close(self, actor: _Actor, gen: ActorGen) -> None:
        """Close ``actor``'s generator (it crashed): a policy that yields again instead of
        ending (it ignores ``GeneratorExit``) or raises is the policy's error."""
        problem = close_generator(gen)
        if problem is not None:
            raise PolicyError(
                f"policy {self.policy.name!r}: {actor.name} was crashed at step "
                f"{len(self.steps)} and {problem}"
            )

    def _not_possible(self, choice: Choice) -> PolicyError:
        """A recorded choice that does not fit this run although the same choices led here:
        the policy did something else on the same inputs."""
        return PolicyError(
            f"policy {self.policy.name!r} behaved differently on the same choices: at step "
            f"{len(self.steps)}, {choice.actor} cannot {choice.action} {choice.outcome} (a "
            "policy must be deterministic: no randomness, clock or state kept between runs)"
        )

    def _start(self, actor: _Actor, make: Callable[[], ActorGen], origin: Any = None) -> None:
        """Start ``actor``'s generator (``make`` builds it: a policy method that raises or
        returns something else than a generator is the policy's error)."""
        try:
            gen = make()
        except (ControlFlow, UserCodeError):
            raise  # a real Ctrl-C; an error that already says what went wrong
        except BaseException as error:  # user code: even SystemExit is reported
            raise PolicyError(
                f"policy {self.policy.name!r} raised starting {actor.name}: {raised(error)}"
            ) from None
        if not inspect.isgenerator(gen):
            raise PolicyError(
                f"policy {self.policy.name!r}: {actor.name}'s method must be a generator "
                f"function that yields requests (got {type(gen).__name__})"
            )
        started = cast("ActorGen", gen)
        actor.gen = started
        actor.done = False
        actor.make, actor.asked, actor.inputs = make, [], []
        if self.track_positions:
            actor.digest = chain(b"start", origin)
        self._advance(actor, lambda: next(started))

    def _resume(self, actor: _Actor, response: Any) -> None:
        gen = actor.gen
        assert gen is not None
        actor.inputs.append(response)
        if self.track_positions:  # before the generator sees (and might change) it
            actor.digest = chain(actor.digest, response)
        self._advance(actor, lambda: gen.send(response))

    def _advance(self, actor: _Actor, move: Callable[[], Request]) -> None:
        try:
            request = move()
        except StopIteration:
            actor.gen, actor.request = None, None
            actor.done = actor.name in self._contexts
            if actor.name == CONSUMER and actor.delivery is not None:
                # Finished without an ACK: the visibility timeout hands it back.
                self.world.requeue(actor.delivery)
                actor.delivery = None
        except (ControlFlow, UserCodeError):
            raise  # a real Ctrl-C; already says what went wrong (the watchdog, a service)
        except BaseException as error:  # user code: even SystemExit is reported
            raise PolicyError(
                f"policy {self.policy.name!r} raised in {actor.name} at step "
                f"{len(self.steps)}: {raised(error)}"
            ) from None
        else:
            problem = request_problem(request)
            if problem is not None:
                raise PolicyError(
                    f"policy {self.policy.name!r} yielded {problem} in {actor.name} at step "
                    f"{len(self.steps)}"
                )
            actor.request = request
            actor.asked.append(request)

    def _process(self, actor: _Actor, request: Request, outcome: Outcome) -> dict[str, Any]:
        world = self.world
        if isinstance(request, Invoke):
            tool = self.contract.tool(request.tool)
            key = None
            if tool is not None and tool.idempotency_key is not None:
                value = request.arguments.get(tool.idempotency_key)
                key = None if value is None else str(value)
            self.history.record_attempt(
                Attempt(
                    step=len(self.steps),
                    instance=actor.name,
                    call_id=request.call_id,
                    tool=request.tool,
                    key=key,
                    compensates=request.compensates,
                )
            )
            admitted = world.send(actor.name, request)
            if isinstance(admitted, PendingCall):
                actor.pending = admitted
                return {"admitted": True}
            self._resume(actor, admitted)
            return admitted.summary()
        if isinstance(request, Sleep):
            actor.wake_at = world.clock + max(1, request.ticks)
            return {"until": actor.wake_at}
        response, observed = request.perform(world, actor.name, outcome)
        if isinstance(request, Ack):
            actor.delivery = None
        self._resume(actor, response)
        return observed

    # -- state identity (for engines that deduplicate states) ------------------------------

    def fingerprint(self) -> bytes:
        """A digest (128 bits, ``models.digest``) of everything that decides what can
        happen next and what a property can see: the durable world (``World.fingerprint``);
        the history (each call's attempts with their keys, compensations included, and the
        fault counts, or with ``fault_counts=False`` only whether there was a fault; not
        step numbers); the fault a free repeat would repeat
        (``txcheck.models.sim.deviation_cost``); and each actor's position: the inputs its
        generator got since it last (re)started, its call in flight, sleep and delivery.
        Equal digests mean equal states (up to a hash collision); equal states built
        differently (dict insertion order) may differ, which only costs pruning. Needs
        ``track_positions=True`` (or ``track``).
        """
        if not self.track_positions:
            raise ValueError("fingerprint() needs a Run built with track_positions=True")
        shift = self.world.clock if self.world.relative_time else 0
        actors = [
            (
                a.gen is not None,
                a.done,
                a.digest if a.gen is not None else b"",
                a.pending is not None,
                None if a.wake_at is None else a.wake_at - shift,
                a.delivery,
            )
            for a in self._actors.values()
        ]
        attempts = self._attempts  # every attempt, compensations too; not step numbers
        for a in self.history.attempts[self._attempts_seen :]:
            call = (a.instance, a.call_id)
            attempts[call] = chain(attempts.get(call, b""), (a.tool, a.key, a.compensates))
        self._attempts_seen = len(self.history.attempts)
        faults = self.history.faults
        history = (
            sorted(attempts.items()),
            sorted(faults.items()) if self.fault_counts else bool(faults),
        )
        # calls in flight to land, by what they will do (not by their landing id)
        landing = [
            (p.owner, p.tool.name, p.key, p.intent, p.invoke.summary()) for _, p in self._landing
        ]
        # the fault chain decides what the next deviation costs, so it is part of the state
        return digest(
            serial((self.world.fingerprint(), history, actors, self._chain, landing))
            if landing
            else serial((self.world.fingerprint(), history, actors, self._chain))
        )

    def fork(self) -> Run | None:
        """An independent copy of this run where it stands, as if its choices had been
        replayed from the start, but without running the world again: the world and the
        history are copied, and each actor's generator is built anew and fed the
        responses it got (its local state is a function of them, as ``fingerprint``
        assumes), when the copy first moves that actor. None when an actor cannot be
        built again; ``Unforkable`` from the step that first moves an actor whose new
        generator, fed again, does not ask for what it asked before, or raises: the
        policy is not a function of its inputs, and only a replay recreates the run
        (``tests/test_fork.py`` holds every attribute to a rule)."""
        if not self.world.forkable:
            return None
        twin = Run.__new__(Run)
        twin.__dict__.update(self.__dict__)
        twin.world = self.world.fork()
        twin.history = self.history.fork()
        twin.steps = list(self.steps)
        twin._options = None if self._options is None else list(self._options)
        twin._attempts = dict(self._attempts)
        twin._landing = list(self._landing)
        twin._generations = dict(self._generations)
        twin._actors = {}
        for name, actor in self._actors.items():
            copied = attrs.evolve(actor, asked=list(actor.asked), inputs=list(actor.inputs))
            if actor.gen is not None:
                if actor.make is None or len(actor.asked) != len(actor.inputs) + 1:
                    return None
                copied.gen = cast("ActorGen", _Refed(actor.make, actor.asked, actor.inputs))
            twin._actors[name] = copied
        return twin

    def build_forked(self) -> None:
        """Build every actor a fork left to build when first moved (``Unforkable`` when
        one goes another way): for a forked run kept past its branch, to run on or report
        whatever it meets."""
        for actor in self._actors.values():
            gen: object = actor.gen
            if isinstance(gen, _Refed):
                gen.built()

    def positions(self) -> tuple[bytes, ...]:
        """Each actor's input digest (``track_positions``), to resume tracking elsewhere."""
        if not self.track_positions:
            raise ValueError("positions() needs a Run built with track_positions=True")
        return tuple(a.digest for a in self._actors.values())

    def track(self, positions: Sequence[bytes]) -> None:
        """Start tracking positions mid-run, from ``positions()`` of an identical run at
        this very step: replaying a prefix untracked and then tracking gives the same
        fingerprints as tracking all along, without digesting the prefix again."""
        for actor, position in zip(self._actors.values(), positions, strict=True):
            actor.digest = position
        self.track_positions = True

    def idle_crash(self, choice: Choice) -> bool:
        """Whether ``choice`` crashes an orchestrator that has done nothing since it
        (re)started (``fresh``): only the fault count would move, so searches skip it."""
        return choice.action is Action.CRASH and self.fresh(choice.actor)

    def fresh(self, actor: str) -> bool:
        """True when ``actor`` has an orchestrator that has done nothing since it (re)started:
        crashing it now restarts it exactly where it is (only the fault count moves)."""
        state = self._actors.get(actor)
        return (
            state is not None
            and actor in self._contexts
            and state.gen is not None
            and not state.inputs
            and state.pending is None
            and state.wake_at is None
            and state.delivery is None
        )

    # -- whole runs -------------------------------------------------------------------------

    def view(self) -> RunView:
        return RunView(
            world=self.world,
            history=self.history,
            plans=self.plans,
            instances=self.instances,
            policy=self.policy,
            contract=self.contract,
            initial_business_state=self._initial,
            invalid_plans=self.invalid_plans,
            quiescent=self.quiescent,
            finished={name: self._actors[name].done for name in self.instances},
        )


def _fresh(response: Any) -> Any:
    """A copy of a response that shares nothing mutable with it: the new generator may
    change what it gets without reaching the run it was forked from."""
    kind = type(response)
    if attrs.has(kind):  # a ToolResult, a record: rebuilt field by field
        fields = attrs.fields(kind)
        return kind(**{f.alias: fork_value(getattr(response, f.name)) for f in fields if f.init})
    return fork_value(response)


class Unforkable(ControlFlow):
    """A forked run's actor, built anew and fed the responses its original got, asked for
    something else on the way (or raised): the policy is not a function of its inputs, and
    only a replay from the start recreates the run (the search that forked catches it)."""


class _Refed:
    """A forked run's stand-in for an actor's generator: the new generator is built and fed
    the responses the original had got (``_rebuild``) when the run first moves, closes or
    throws into it, so a branch that ends before an actor moves (a state already covered, a
    violation) never pays for replaying that actor's code. Raises ``Unforkable`` then when
    the new generator goes another way."""

    __slots__ = ("_asked", "_gen", "_inputs", "_make")

    def __init__(
        self, make: Callable[[], ActorGen], asked: Sequence[Request], inputs: Sequence[Any]
    ) -> None:
        self._make: Callable[[], ActorGen] | None = make
        self._asked = tuple(asked)
        # copied now: the original generator may still change what it was given
        self._inputs = tuple(_fresh(response) for response in inputs)
        self._gen: ActorGen | None = None

    def built(self) -> ActorGen:
        """The new generator, built and fed now if it was not yet."""
        if self._gen is None:
            assert self._make is not None
            gen = _rebuild(self._make, self._asked, self._inputs)
            self._make, self._asked, self._inputs = None, (), ()
            if gen is None:
                raise Unforkable
            self._gen = gen
        return self._gen

    def __next__(self) -> Request:
        return next(self.built())

    def send(self, value: Any) -> Request:
        return self.built().send(value)

    def throw(self, error: BaseException) -> Request:
        return self.built().throw(error)

    def close(self) -> None:
        self.built().close()


def _rebuild(
    make: Callable[[], ActorGen], asked: Sequence[Request], inputs: Sequence[Any]
) -> ActorGen | None:
    """A new generator from ``make`` fed ``inputs``, standing where the one that asked
    ``asked`` stood; None when the new one asks for anything else on the way (or
    raises)."""
    gen: Any = None
    try:
        gen = make()
        if next(gen) != asked[0]:
            _discard(gen)
            return None
        for response, request in zip(inputs, asked[1:], strict=True):
            if gen.send(response) != request:
                _discard(gen)
                return None
    except ControlFlow:
        raise
    except BaseException:  # a policy that differs on the way: replay instead
        if inspect.isgenerator(gen):
            _discard(gen)  # the replay reports what it does
        return None
    return cast("ActorGen", gen)


class _Discarded(BaseException):
    """Thrown into a generator that yielded again when closed, to end it after all."""


_UNENDING: list[Any] = []
"""Generators that survived even ``_Discarded``: kept, so that the interpreter never
finalises them (which would print an "Exception ignored" traceback)."""


def close_generator(gen: Any, passes: tuple[type[BaseException], ...] = ()) -> str | None:
    """Close a policy's generator; what went wrong, as the end of a sentence, or None. A
    generator that yields again instead of ending (it catches ``GeneratorExit``) is ended
    by throwing an exception it does not expect; ``passes`` (and ``ControlFlow``) are
    raised as they are."""
    reraised: tuple[type[BaseException], ...] = (ControlFlow, UserCodeError, *passes)
    try:
        gen.close()
        return None
    except reraised:
        raise
    except RuntimeError as error:
        problem = (
            f"its generator did not end when closed ({error}): a policy must let "
            "GeneratorExit end it (catch Exception, never BaseException or GeneratorExit)"
        )
    except BaseException as error:  # user code: even SystemExit is reported
        return f"its generator raised when closed: {raised(error)}"
    for _ in range(3):
        try:
            gen.throw(_Discarded())
        except reraised:
            raise
        except BaseException:
            return problem  # ended at last
    _UNENDING.append(gen)
    return problem


def _discard(gen: Any) -> None:
    """Close a generator built only to compare (``_rebuild``); one that does not end when
    closed is left to the replay, which runs that policy for real and reports it."""
    with contextlib.suppress(UserCodeError):
        close_generator(gen)


_CHOICES: dict[tuple[str, Action, Outcome | str], Choice] = {}


def _choice(actor: str, action: Action, outcome: Outcome | str = Outcome.OK) -> Choice:
    """The runner's choices, built once each: a run offers the same few thousand again
    and again (choices are frozen values, so sharing one is safe)."""
    key = (actor, action, outcome)
    found = _CHOICES.get(key)
    if found is None:
        if len(_CHOICES) >= 65536:
            _CHOICES.clear()
        found = _CHOICES[key] = Choice(actor, action, outcome)
    return found


def _invalid_plans(
    contract: Contract, instances: tuple[str, ...], plans: tuple[Plan, ...]
) -> dict[str, tuple[str, ...]]:
    """Instance -> the violation codes of its plan, for plans that fail validation."""
    invalid: dict[str, tuple[str, ...]] = {}
    for instance, plan in zip(instances, plans, strict=False):
        codes = violation_codes(contract, plan)
        if codes:
            invalid[instance] = codes
    return invalid
