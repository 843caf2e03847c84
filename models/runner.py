"""The deterministic runner: a policy, a contract, plans and a sequence of choices.

Everything nondeterministic is a ``Choice`` made from outside: which actor moves, the
outcome of a tool attempt, crashes, which message is delivered, duplicates, lost ACKs and
clock jumps. ``choices()`` lists what may happen next with the default first; the default
schedule (always the first choice) is the canonical fault-free run, and any other choice
is a deviation. Given the same choices a run is identical, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from txcheck.models.contract import Contract
from txcheck.models.errors import PolicyError
from txcheck.models.fixture import WorldFixture
from txcheck.models.history import Attempt, History
from txcheck.models.policies.base import ActorGen, OrchestratorContext, Policy
from txcheck.models.proposal import Plan
from txcheck.models.requests import (
    Ack,
    ApplyEffect,
    BrokerSend,
    Claim,
    Delivery,
    Invoke,
    JournalAppend,
    JournalRead,
    KeyLookup,
    Lookup,
    MarkSeen,
    OutboxFetch,
    OutboxMarkPublished,
    Publish,
    Reconcile,
    Request,
    SeenCheck,
    Sleep,
    ToolResult,
)
from txcheck.models.validation import validate
from txcheck.models.world import PendingCall, World, plain_json

__all__ = ["Check", "Choice", "Run", "RunView", "Step", "StepLimitExceeded"]

CLOCK = "clock"
RELAY = "relay"
CONSUMER = "consumer"
FAULT_OUTCOMES = frozenset(
    {
        "timeout_before_commit",
        "lost_response_after_commit",
        "transient_error",
        "permanent_error",
        "duplicate",
        "ack_lost",
    }
)


@attrs.frozen(order=True)
class Choice:
    """One nondeterministic decision: ``actor`` does ``action`` with ``outcome``.

    Actions: ``step`` (process the actor's next request), ``complete`` (answer its tool
    call with ``outcome``), ``deliver`` (``outcome`` is the delivery id), ``crash``,
    ``wait`` (advance the clock to the next wake-up) and ``jump`` (a clock jump past the
    idempotency TTL).
    """

    actor: str
    action: str
    outcome: str = "ok"

    def to_json(self) -> dict[str, str]:
        return {"actor": self.actor, "action": self.action, "outcome": self.outcome}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Choice:
        return cls(str(data["actor"]), str(data["action"]), str(data.get("outcome", "ok")))

    @property
    def is_fault(self) -> bool:
        return self.action in ("crash", "jump") or self.outcome in FAULT_OUTCOMES


@attrs.frozen(kw_only=True)
class Step:
    """One applied choice and what was observed; a trace is a list of these."""

    index: int
    choice: Choice
    deviation: bool = False
    request: Mapping[str, Any] = attrs.field(factory=dict)
    observed: Mapping[str, Any] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "i": self.index,
            **self.choice.to_json(),
            "deviation": self.deviation,
            "request": dict(self.request),
            "observed": dict(self.observed),
        }


class StepLimitExceeded(Exception):
    """Quiescence did not come within the step limit (a livelock or unbounded retry)."""


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


class Check(Protocol):
    """A named property the runner evaluates (``invariants`` provides them)."""

    @property
    def name(self) -> str: ...

    def __call__(self, view: RunView) -> Iterable[str]: ...


def _summary(request: Request) -> dict[str, Any]:
    kind = type(request).__name__
    if isinstance(request, Invoke):
        data: dict[str, Any] = {"call": request.call_id, "tool": request.tool}
        data["arguments"] = dict(request.arguments)
        if request.compensates:
            data["compensates"] = request.compensates
        return {"kind": kind, **data}
    if isinstance(request, Lookup):
        return {"kind": kind, "call": request.call_id, "tool": request.tool}
    if isinstance(request, JournalAppend):
        return {"kind": kind, "entry": dict(request.entry)}
    if isinstance(request, Claim):
        return {"kind": kind, "operation": request.operation, "entry": dict(request.entry)}
    if isinstance(request, Sleep):
        return {"kind": kind, "ticks": request.ticks}
    if isinstance(request, (Publish, BrokerSend, ApplyEffect)):
        return {"kind": kind, "event": request.event["id"]}
    if isinstance(request, (SeenCheck, MarkSeen, OutboxMarkPublished)):
        return {"kind": kind, "event": request.event_id}
    if isinstance(request, Ack):
        return {"kind": kind, "delivery": request.delivery_id}
    return {"kind": kind}


@attrs.define
class _Actor:
    name: str
    gen: ActorGen | None = None
    request: Request | None = None
    pending: PendingCall | None = None
    wake_at: int | None = None
    delivery: str | None = None
    done: bool = False
    # Responses fed to ``gen`` since it (re)started, and (when positions are tracked) a
    # running digest of them: a generator's local state is a function of its inputs.
    fed: int = 0
    digest: bytes = b""


class Run:
    """One run of ``policy`` over ``plans`` (one orchestrator instance per plan)."""

    def __init__(
        self,
        *,
        policy: Policy,
        contract: Contract,
        plans: Sequence[Plan],
        fixture: WorldFixture,
        world_factory: Callable[..., World] = World,
        max_steps: int = 2000,
        allow_clock_jumps: bool = True,
        track_positions: bool = False,
    ) -> None:
        self.policy = policy
        self.contract = contract
        self.plans = tuple(plans)
        self.world = world_factory(contract=contract, fixture=fixture, outbox=policy.uses_outbox)
        self.history = History()
        self.steps: list[Step] = []
        self.max_steps = max_steps
        self.allow_clock_jumps = allow_clock_jumps
        self.track_positions = track_positions
        self._options: list[Choice] | None = None
        self.instances = tuple(f"orchestrator-{i + 1}" for i in range(len(self.plans)))
        self._contexts = {
            name: OrchestratorContext(instance=name, plan=plan, contract=contract)
            for name, plan in zip(self.instances, self.plans, strict=False)
        }
        self._actors = {name: _Actor(name) for name in (*self.instances, RELAY, CONSUMER)}
        self._initial = _deep_copy(self.world.business_state())
        self.invalid_plans = _invalid_plans(contract, self.instances, self.plans)
        for name in self.instances:
            self.world.journals[name] = []
            self._start(self._actors[name], self.policy.orchestrate(self._contexts[name]))

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
            Choice(a.name, "crash")
            for a in self._actors.values()
            if a.gen is not None and not a.done
        ]
        if not moves:
            sleepers = [a for a in self._actors.values() if a.wake_at is not None]
            if sleepers:
                moves.append(Choice(CLOCK, "wait"))
        if moves and self.allow_clock_jumps:
            crashes.append(Choice(CLOCK, "jump"))
        return moves + crashes if moves else []

    def _moves(self, actor: _Actor) -> list[Choice]:
        if actor.done:
            return []
        if actor.wake_at is not None:
            if self.world.clock >= actor.wake_at:
                return [Choice(actor.name, "step")]
            return []
        if actor.pending is not None:
            return [Choice(actor.name, "complete", o) for o in actor.pending.outcomes()]
        if actor.gen is None:
            if actor.name == RELAY and self.world.unpublished() is not None:
                return [Choice(RELAY, "step")]
            if actor.name == CONSUMER:
                return [
                    Choice(CONSUMER, "deliver", d["delivery_id"])
                    for d in self.world.ready_deliveries()
                ]
            return []
        request = actor.request
        if isinstance(request, (BrokerSend, Publish)):
            return [Choice(actor.name, "step"), Choice(actor.name, "step", "duplicate")]
        if isinstance(request, Ack):
            return [Choice(actor.name, "step"), Choice(actor.name, "step", "ack_lost")]
        if isinstance(request, Lookup):
            return [Choice(actor.name, "step"), Choice(actor.name, "step", "transient_error")]
        return [Choice(actor.name, "step")]

    def current(self, actor: str) -> Mapping[str, Any]:
        """What ``actor`` is about to do: its request's kind, tool and call, if any."""
        state = self._actors.get(actor)
        if state is None:
            return {}
        if state.pending is not None:
            return _summary(state.pending.invoke)
        if state.request is not None and state.wake_at is None:
            return _summary(state.request)
        return {}

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

    def apply(self, choice: Choice, *, deviation: bool = False) -> Step:
        """Apply one choice from ``choices()``; the caller is trusted to pick from it and
        says whether it is a deviation (not the first, default choice)."""
        self._options = None
        if choice.is_fault:
            self.history.record_fault(choice.outcome if choice.outcome != "ok" else choice.action)
        request: dict[str, Any] = {}
        observed: dict[str, Any]
        if choice.actor == CLOCK:
            observed = self._clock(choice)
        else:
            actor = self._actors[choice.actor]
            if choice.action == "crash":
                observed = self._crash(actor)
            elif choice.action == "deliver":
                delivery = self.world.take(choice.outcome)
                actor.delivery = choice.outcome
                self._start(
                    actor,
                    self.policy.consume(
                        Delivery(delivery_id=choice.outcome, event=delivery["event"])
                    ),
                    origin=(choice.outcome, delivery["event"]),
                )
                observed = {"event": delivery["event"]["id"]}
            elif choice.action == "complete":
                pending = actor.pending
                assert pending is not None
                actor.pending = None
                result = self.world.complete(pending, choice.outcome)  # type: ignore[arg-type]
                request = _summary(pending.invoke)
                observed = result.summary()
                self._resume(actor, result)
            else:
                if actor.gen is None and actor.name == RELAY:
                    self._start(actor, self.policy.relay())
                if actor.wake_at is not None:
                    actor.wake_at = None
                    request, observed = {"kind": "Wake"}, {}
                    self._resume(actor, None)
                else:
                    assert actor.request is not None
                    request = _summary(actor.request)
                    observed = self._process(actor, actor.request, choice.outcome)
        step = Step(
            index=len(self.steps),
            choice=choice,
            deviation=deviation,
            request=request,
            observed=observed,
        )
        self.steps.append(step)
        return step

    def _clock(self, choice: Choice) -> dict[str, Any]:
        if choice.action == "wait":
            wake = min(a.wake_at for a in self._actors.values() if a.wake_at is not None)
            self.world.clock = max(self.world.clock, wake)
        else:
            self.world.clock += self.world.store.ttl + 1
        return {"clock": self.world.clock}

    def _crash(self, actor: _Actor) -> dict[str, Any]:
        observed: dict[str, Any] = {"lost": type(actor.request).__name__ if actor.request else None}
        if actor.pending is not None:
            self.world.abort(actor.pending)
            actor.pending = None
        if actor.delivery is not None:
            self.world.requeue(actor.delivery)
            actor.delivery = None
        actor.gen, actor.request, actor.wake_at = None, None, None
        if actor.name in self._contexts:
            self._start(actor, self.policy.orchestrate(self._contexts[actor.name]))
            observed["restarted"] = True
        return observed

    def _start(self, actor: _Actor, gen: ActorGen, origin: Any = None) -> None:
        actor.gen = gen
        actor.done = False
        actor.fed = 0
        if self.track_positions:
            actor.digest = _digest(b"start", origin)
        self._advance(actor, lambda: next(gen))

    def _resume(self, actor: _Actor, response: Any) -> None:
        gen = actor.gen
        assert gen is not None
        actor.fed += 1
        if self.track_positions:  # before the generator sees (and might change) it
            actor.digest = _digest(actor.digest, response)
        self._advance(actor, lambda: gen.send(response))

    def _advance(self, actor: _Actor, move: Callable[[], Request]) -> None:
        try:
            actor.request = move()
        except StopIteration:
            actor.gen, actor.request = None, None
            actor.done = actor.name in self._contexts
            if actor.name == CONSUMER and actor.delivery is not None:
                # Finished without an ACK: the visibility timeout hands it back.
                self.world.requeue(actor.delivery)
                actor.delivery = None
        except Exception as error:
            raise PolicyError(
                f"policy {self.policy.name!r} raised in {actor.name} at step "
                f"{len(self.steps)}: {type(error).__name__}: {error}"
            ) from error

    def _process(self, actor: _Actor, request: Request, outcome: str) -> dict[str, Any]:
        world = self.world
        response: Any = None
        if isinstance(request, Invoke):
            tool = self.contract.tool(request.tool)
            key = None
            if tool is not None and tool.idempotency_key is not None:
                value = request.arguments.get(tool.idempotency_key)
                key = None if value is None else str(value)
            self.history.attempts.append(
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
        observed: dict[str, Any] = {}
        if isinstance(request, Lookup):
            if outcome == "transient_error":
                response = ToolResult(status="error", code="transient", message="lookup failed")
            else:
                receipt = world.lookup(request.tool, request.arguments)
                response = ToolResult(status="ok", receipt=receipt)
            observed = response.summary()
        elif isinstance(request, KeyLookup):
            record = world.store.lookup(world.tenant, request.key, world.clock)
            response = None if record is None else record.to_json()
            observed = {"record": None if record is None else record.status}
        elif isinstance(request, Reconcile):
            response = world.reconcile(request.receipts)
            observed = {"diverging": list(response)}
        elif isinstance(request, JournalAppend):
            world.journals[actor.name].append(dict(request.entry))
        elif isinstance(request, Claim):
            response = world.claims.setdefault(request.operation, actor.name)
            if response == actor.name:
                world.journals[actor.name].append(dict(request.entry))
            observed = {"owner": response}
        elif isinstance(request, JournalRead):
            response = tuple(dict(e) for e in world.journals[actor.name])
        elif isinstance(request, (Publish, BrokerSend)):
            world.enqueue(request.event, copies=2 if outcome == "duplicate" else 1)
        elif isinstance(request, OutboxFetch):
            response = world.unpublished()
            observed = {"event": None if response is None else response["id"]}
        elif isinstance(request, OutboxMarkPublished):
            world.mark_published(request.event_id)
        elif isinstance(request, SeenCheck):
            response = request.event_id in world.seen
            observed = {"seen": response}
        elif isinstance(request, MarkSeen):
            world.seen.add(request.event_id)
        elif isinstance(request, ApplyEffect):
            world.apply_effect(request.event, record_seen=request.record_seen)
        elif isinstance(request, Ack):
            world.ack(request.delivery_id, lost=outcome == "ack_lost")
            actor.delivery = None
        else:  # pragma: no cover - the Request union is closed
            raise PolicyError(f"{actor.name} yielded {request!r}, which is not a request")
        self._resume(actor, response)
        return observed

    # -- state identity (for engines that deduplicate states) ------------------------------

    def fingerprint(self) -> bytes:
        """A digest (SHA-256) of everything that decides what can happen next and what a
        property can see: the durable world; the history (each call's attempts with their
        keys, compensations included, and the fault counts, not step numbers); and each
        actor's position: the inputs its generator got since it last (re)started, its
        call in flight, sleep and delivery. Equal digests mean equal states; equal states
        built differently (dict insertion order) may differ, which only costs pruning.
        Needs ``track_positions=True`` (or ``track``).
        """
        if not self.track_positions:
            raise ValueError("fingerprint() needs a Run built with track_positions=True")
        actors = [
            [
                a.gen is not None,
                a.done,
                a.digest if a.gen is not None else b"",
                a.pending is not None,
                a.wake_at,
                a.delivery,
            ]
            for a in self._actors.values()
        ]
        attempts: dict[tuple[str, str], list[tuple[str, str | None, str | None]]] = {}
        for a in self.history.attempts:  # every attempt, compensations too; not step numbers
            attempts.setdefault((a.instance, a.call_id), []).append((a.tool, a.key, a.compensates))
        history = [sorted(attempts.items()), sorted(self.history.faults.items())]
        data = [self.world.fingerprint_data(), history, actors]
        return hashlib.sha256(_serial(data)).digest()

    def positions(self) -> tuple[bytes, ...]:
        """Each actor's input digest (``track_positions``), to resume tracking elsewhere."""
        if not self.track_positions:
            raise ValueError("positions() needs a Run built with track_positions=True")
        return tuple(a.digest for a in self._actors.values())

    def track(self, positions: Sequence[bytes]) -> None:
        """Start tracking positions mid-run, from ``positions()`` of an identical run at
        this very step: replaying a prefix untracked and then tracking gives the same
        fingerprints as tracking all along, without digesting the prefix again."""
        for actor, digest in zip(self._actors.values(), positions, strict=True):
            actor.digest = digest
        self.track_positions = True

    def fresh(self, actor: str) -> bool:
        """True when ``actor`` has an orchestrator that has done nothing since it (re)started:
        crashing it now restarts it exactly where it is (only the fault count moves)."""
        state = self._actors.get(actor)
        return (
            state is not None
            and actor in self._contexts
            and state.gen is not None
            and state.fed == 0
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

    def quiesce(self, *, after_each: Callable[[Step], bool] | None = None) -> bool:
        """Stop injecting faults: take the default choice until nothing is left to do.

        ``after_each`` sees every step and may stop the run early by returning True; the
        result says whether the run reached quiescence.
        """
        while True:
            options = self.choices()
            if not options:
                return True
            if len(self.steps) >= self.max_steps:
                raise StepLimitExceeded(
                    f"no quiescence within {self.max_steps} steps (a livelock or an "
                    "unbounded retry?)"
                )
            step = self.apply(options[0])
            if after_each is not None and after_each(step):
                return False


_CODES: dict[tuple[int, int], tuple[Contract, Plan, tuple[str, ...]]] = {}
"""Validation codes by (contract, plan) identity: engines build thousands of runs of one
plan. The entry keeps both objects alive, so their ids cannot be reused."""


def _plan_codes(contract: Contract, plan: Plan) -> tuple[str, ...]:
    entry = _CODES.get((id(contract), id(plan)))
    if entry is not None and entry[0] is contract and entry[1] is plan:
        return entry[2]
    codes = tuple(sorted(set(validate(contract, plan).codes())))
    if len(_CODES) >= 256:
        _CODES.clear()
    _CODES[(id(contract), id(plan))] = (contract, plan, codes)
    return codes


def _invalid_plans(
    contract: Contract, instances: tuple[str, ...], plans: tuple[Plan, ...]
) -> dict[str, tuple[str, ...]]:
    """Instance -> the violation codes of its plan, for plans that fail validation."""
    invalid: dict[str, tuple[str, ...]] = {}
    for instance, plan in zip(instances, plans, strict=False):
        codes = _plan_codes(contract, plan)
        if codes:
            invalid[instance] = codes
    return invalid


def _serial(value: Any) -> bytes:
    """Bytes that determine ``value``: equal bytes mean equal values. A pickle (fast);
    canonical JSON when the value does not pickle. Equal values built differently (dict
    insertion order, shared objects) may give different bytes: a finer key, never a
    wrong merge."""
    try:
        return pickle.dumps(value, protocol=5)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=plain_json)
        return b"json:" + text.encode("utf-8")


def _digest(previous: bytes, value: Any) -> bytes:
    return hashlib.sha256(previous + _serial(value)).digest()


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value
