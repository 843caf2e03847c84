"""The world: durable services, the idempotency store, outbox, broker, consumer and clock.

Everything here is durable: it survives any actor's crash. Actors' volatile state lives in
their generators, which the runner drops on a crash. Tool calls are two-phase so that
concurrent orchestrators can meet a key that is in flight: ``send`` admits the request (or
answers at once with a replay or a conflict) and ``complete`` finishes it with the outcome
the checker chose.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import attrs
import jsonschema

from txcheck.models.canonical import canonical_json, normalize, stable_hash
from txcheck.models.errors import ControlFlow, ServiceError, UserCodeError, raised
from txcheck.models.memo import IdentityMemo
from txcheck.models.plan.contract import Contract, ReceiptRef, Tool
from txcheck.models.plan.schema_validator import reference_validator
from txcheck.models.sim.checkout import CHECKOUT
from txcheck.models.sim.choices import READ_OUTCOMES, TOOL_OUTCOMES, Outcome, Part
from txcheck.models.sim.digest import chain, digest, plain_json, serial
from txcheck.models.sim.fixture import WorldFixture
from txcheck.models.sim.generic import generic_services
from txcheck.models.sim.idempotency import DEFAULT_TTL, IdempotencyRecord, IdempotencyStore
from txcheck.models.sim.requests import Invoke, ResultStatus, ToolResult
from txcheck.models.sim.services import (
    Committed,
    Handler,
    Rejected,
    ServiceSet,
    merge_service_sets,
    outcome_problem,
)

__all__ = ["PendingCall", "World", "intent_body", "plain_json"]


@attrs.frozen(kw_only=True)
class PendingCall:
    """A request the service has admitted and not yet answered."""

    owner: str
    invoke: Invoke
    tool: Tool
    key: str | None
    intent: str
    resource: str

    def outcomes(self) -> tuple[Outcome, ...]:
        return TOOL_OUTCOMES if self.tool.has_side_effect else READ_OUTCOMES


_VALIDATORS: IdentityMemo[jsonschema.protocols.Validator] = IdentityMemo(limit=512)
"""Compiled argument validators by tool identity: engines build thousands of worlds per
contract."""


@attrs.frozen(kw_only=True)
class Admission:
    """What a tool request's arguments decide before any state is read: why a service
    would refuse them outright (schema problems), and otherwise its idempotency key,
    intent, request hash, resource and customer."""

    problems: tuple[str, ...]
    key: str | None = None
    intent: str = ""
    request_hash: str = ""
    resource: str = ""
    customer: str | None = None


_ADMISSIONS: IdentityMemo[Admission] = IdentityMemo(limit=4096)
"""Admissions by tool identity and the arguments' JSON: a run sends the same calls again
and again, and engines run thousands of runs."""


def admission(tool: Tool, arguments: Mapping[str, Any]) -> Admission:
    """The ``Admission`` of ``arguments`` to ``tool`` (memoised)."""
    try:
        text = json.dumps(arguments, sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        return _admit(tool, arguments)
    return _ADMISSIONS.one(tool, lambda held: _admit(held, arguments), detail=text)


def _admit(tool: Tool, arguments: Mapping[str, Any]) -> Admission:
    try:
        problems = tuple(sorted(e.message for e in _validator(tool).iter_errors(dict(arguments))))
    except RecursionError:
        problems = ("arguments nest too deeply",)
    if problems:
        return Admission(problems=problems)
    key = None
    if tool.idempotency_key is not None and tool.idempotency_key in arguments:
        key = str(arguments[tool.idempotency_key])
    body = intent_body(tool, arguments)
    customer = arguments.get("customer_id")
    return Admission(
        problems=(),
        key=key,
        intent=stable_hash({"tool": tool.name, "arguments": body}),
        request_hash=stable_hash(canonical_json(body)),
        resource=str(arguments.get(tool.resource, "")) if tool.resource else "",
        customer=None if customer is None else str(customer),
    )


def _validator(tool: Tool) -> jsonschema.protocols.Validator:
    return _VALIDATORS.one(tool, _new_validator)


def _new_validator(tool: Tool) -> jsonschema.protocols.Validator:
    return reference_validator(dict(tool.parameters), formats=False)  # fetches nothing


_SHARED = (str, int, float, bool, bytes, type(None))


def fork_value(value: Any) -> Any:
    """A copy of ``value`` (a service's state, a response) that shares nothing mutable
    with it: JSON-like containers copied level by level (fast), anything else by
    ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        return {k: fork_value(v) for k, v in value.items()}
    if kind is list:
        return [fork_value(v) for v in value]
    if kind is tuple:
        return tuple(fork_value(v) for v in value)
    if kind in _SHARED:
        return value
    return copy.deepcopy(value)


def intent_body(tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments that identify the operation (see ``Tool.intent_arguments``)."""
    return tool.intent_arguments(arguments)


_FINGERPRINTED: tuple[Part, ...] = (
    Part.CLOCK,
    Part.SERVICES,
    Part.STORE,
    Part.CLAIMS,
    Part.OPERATIONS,
    Part.OUTBOX,
    Part.BROKER,
    Part.SEEN,
    Part.EFFECTS,
    Part.JOURNALS,
)
"""The parts of the world a state fingerprint covers (everything but the history, which
the run holds)."""


class World:
    """All durable state of one run. Deterministic: no clock, randomness or set order.

    Every change of state goes through a method here, which marks the ``Part`` it changes
    in ``changed`` (a bit mask the checker reads and clears): a property that reads only
    unchanged parts need not be re-evaluated. Read the attributes freely; never assign to
    them from outside.
    """

    def __init__(
        self,
        *,
        contract: Contract,
        fixture: WorldFixture,
        services: tuple[ServiceSet, ...] = (CHECKOUT,),
        outbox: bool = True,
        ttl: int = DEFAULT_TTL,
        check_request_hash: bool = True,
        relative_time: bool = False,
    ) -> None:
        self.contract = contract
        self.relative_time = relative_time
        """Fingerprint times relative to the clock (``fingerprint``): for searches whose
        invariants never read absolute times (``Target.time_blind``)."""
        self.fixture = fixture
        self.outbox_mode = outbox
        self.tenant = fixture.tenant
        self.clock = 0
        self._table: dict[str, tuple[str, Handler]] = merge_service_sets(services)
        generic = generic_services(contract, {t for t in self._table if contract.tool(t)})
        if generic is not None:
            services = (*services, generic)
            self._table = merge_service_sets(services)
        self.services = services
        self.state: dict[str, dict[str, Any]] = {}
        for service in services:
            try:
                self.state[service.name] = service.initial_state(fixture.document)
            except (ControlFlow, UserCodeError):
                raise  # a real Ctrl-C; the time limit (``ServiceStuck``) already says it all
            except BaseException as error:  # user code: even SystemExit is reported
                raise ServiceError(
                    f"service {service.name!r} raised building its state from the world "
                    f"fixture: {raised(error)}"
                ) from None
        self.store = IdempotencyStore(ttl=ttl, check_request_hash=check_request_hash)
        self.operations: list[dict[str, Any]] = []
        self.outbox: list[dict[str, Any]] = []
        self.broker: list[dict[str, Any]] = []
        self.seen: set[str] = set()
        self.effects: dict[str, int] = {}
        self.journals: dict[str, list[dict[str, Any]]] = {}
        self.claims: dict[str, str] = {}
        self.counters = {"event": 0, "delivery": 0}
        self.changed = -1
        """Parts changed since the checker last cleared this mask (all, at first)."""
        self._stale = -1  # parts changed since the last fingerprint
        self._digests = [b""] * len(_FINGERPRINTED)
        self._print = b""
        self._logs: dict[str, tuple[int, bytes]] = {}  # append-only log -> (rows, digest)

    forkable = True
    """Whether ``fork`` can copy this world (a world on PostgreSQL cannot: ``Run.fork``
    then answers None, and engines replay)."""

    def fork(self) -> World:
        """An independent copy of this world at this moment: what the two do from now on
        never reaches the other. Rows of the append-only logs (operations, journals) are
        never changed once written and are shared; outbox and broker rows change, and the
        services' state is theirs to change, so those are copied
        (``tests/test_fork.py`` holds every attribute to one of these)."""
        twin = copy.copy(self)
        twin.state = {name: fork_value(part) for name, part in self.state.items()}
        twin.store = self.store.copy()
        twin.operations = list(self.operations)
        twin.outbox = [dict(row) for row in self.outbox]
        twin.broker = [dict(row) for row in self.broker]
        twin.seen = set(self.seen)
        twin.effects = dict(self.effects)
        twin.journals = {name: list(rows) for name, rows in self.journals.items()}
        twin.claims = dict(self.claims)
        twin.counters = dict(self.counters)
        twin._digests = list(self._digests)
        twin._logs = dict(self._logs)
        return twin

    def serves(self, tool: str) -> bool:
        """Whether a service (registered, or generic for an annotated tool) runs ``tool``."""
        return tool in self._table

    def _touch(self, *parts: Part) -> None:
        for part in parts:
            self.changed |= part.bit
            self._stale |= part.bit

    # -- clock -----------------------------------------------------------------------------

    def wait_until(self, tick: int) -> None:
        """Advance the logical clock to ``tick`` (never backwards)."""
        if tick > self.clock:
            self.clock = tick
            self._touch(Part.CLOCK)

    def jump_clock(self) -> None:
        """A clock jump past the idempotency TTL: every stored record expires."""
        self.clock += self.store.ttl + 1
        self._touch(Part.CLOCK)

    # -- tools -----------------------------------------------------------------------------

    def argument_problems(self, tool: Tool, arguments: Mapping[str, Any] | None) -> list[str]:
        """Why a service would refuse these arguments outright (schema), or nothing."""
        if arguments is None:
            return ["arguments are not a JSON object"]
        return list(admission(tool, arguments).problems)

    def send(self, owner: str, invoke: Invoke) -> PendingCall | ToolResult:
        """Admit a tool request, or answer it at once (unknown tool, bad arguments, replay,
        conflict)."""
        tool = self.contract.tool(invoke.tool)
        if tool is None or invoke.tool not in self._table:
            return ToolResult(
                status=ResultStatus.REJECTED,
                code="unknown_tool",
                message=f"no service for {invoke.tool!r}",
            )
        admitted = admission(tool, invoke.arguments)
        if admitted.problems:
            return ToolResult(
                status=ResultStatus.REJECTED, code="invalid_arguments", message=admitted.problems[0]
            )
        key = admitted.key
        if key is not None and tool.has_side_effect:
            self._touch(Part.STORE)
            begin = self.store.begin(
                tenant=self.tenant,
                key=key,
                user_id=owner if admitted.customer is None else admitted.customer,
                operation_type=tool.name,
                resource_id=admitted.resource,
                intent_hash=admitted.intent,
                request_hash=admitted.request_hash,
                now=self.clock,
                owner=owner,
            )
            if begin.decision == "conflict":
                return ToolResult(
                    status=ResultStatus.CONFLICT, code="idempotency_conflict", message=begin.reason
                )
            if begin.decision == "replay":
                assert begin.record is not None
                stored = dict(begin.record.result_receipt or {})
                if begin.record.status == "rejected":
                    return ToolResult(
                        status=ResultStatus.REJECTED,
                        code=str(stored.get("code", "")),
                        message=str(stored.get("message", "")),
                        replayed=True,
                    )
                return ToolResult(status=ResultStatus.OK, receipt=stored, replayed=True)
        return PendingCall(
            owner=owner,
            invoke=invoke,
            tool=tool,
            key=key,
            intent=admitted.intent,
            resource=admitted.resource,
        )

    def complete(self, pending: PendingCall, outcome: Outcome) -> ToolResult:
        """Finish an admitted request with the outcome the checker chose. ``late_commit``
        answers a timeout and changes nothing: the call is still in flight, and the runner
        completes it again later with ``ok`` (it lands)."""
        if outcome == "late_commit":  # the key stays in flight until the call lands
            return ToolResult(
                status=ResultStatus.TIMEOUT, code="timeout", message="no response in time"
            )
        if outcome in ("timeout_before_commit", "transient_error"):
            self._abort_key(pending)
            if outcome == "transient_error":
                return ToolResult(
                    status=ResultStatus.ERROR, code="transient", message="service unavailable"
                )
            return ToolResult(
                status=ResultStatus.TIMEOUT, code="timeout", message="no response in time"
            )
        if outcome == "permanent_error":
            result = ToolResult(
                status=ResultStatus.REJECTED,
                code="declined",
                message=f"{pending.tool.name} declined by the service",
            )
            self._store_rejection(pending, result)
            return result
        result = self._execute(pending)
        if outcome == "lost_response_after_commit":
            return ToolResult(status=ResultStatus.TIMEOUT, code="timeout", message="response lost")
        return result

    def abort(self, pending: PendingCall) -> None:
        """The caller crashed before the request was processed: nothing commits."""
        self._abort_key(pending)

    def crashed(self, actor: str) -> None:
        """``actor`` crashed (after ``abort`` of its call in flight): nothing here, where
        every record is durable; a world on real stores closes its connections
        (``txcheck.models.sim.stored``)."""

    def _abort_key(self, pending: PendingCall) -> None:
        if pending.key is not None and pending.tool.has_side_effect:
            self._touch(Part.STORE)
            self.store.abort(self.tenant, pending.key)

    def _store_rejection(self, pending: PendingCall, result: ToolResult) -> None:
        if pending.key is not None and pending.tool.has_side_effect:
            self._touch(Part.STORE)
            self.store.finish(
                self.tenant,
                pending.key,
                status="rejected",
                receipt={"code": result.code, "message": result.message},
                now=self.clock,
            )

    def _execute(self, pending: PendingCall) -> ToolResult:
        service, handler = self._table[pending.tool.name]
        self._touch(Part.SERVICES)  # a handler mutates its state only when it commits
        where = f"{pending.tool.name} ({pending.invoke.call_id})"
        try:
            outcome = handler(self.state[service], normalize(dict(pending.invoke.arguments)))
            problem = outcome_problem(outcome)
        except (ControlFlow, UserCodeError):
            raise  # a real Ctrl-C; the time limit (``ServiceStuck``) already says it all
        except BaseException as error:  # user code: even SystemExit is reported
            raise ServiceError(
                f"service {service!r} raised handling {where}: {raised(error)}"
            ) from None
        if problem is not None:
            raise ServiceError(f"service {service!r} handled {where}: {problem}")
        assert isinstance(outcome, (Committed, Rejected))
        if not isinstance(outcome, Committed):
            result = ToolResult(
                status=ResultStatus.REJECTED, code=outcome.code, message=outcome.message
            )
            self._store_rejection(pending, result)
            return result
        receipt = dict(outcome.receipt)
        _check_receipt(service, pending.tool, receipt)
        if not pending.tool.has_side_effect:
            return ToolResult(status=ResultStatus.OK, receipt=receipt)
        events = tuple(self._new_event(e) for e in outcome.events)
        self._touch(Part.OPERATIONS)
        self.operations.append(
            {
                "op": len(self.operations) + 1,
                "tool": pending.tool.name,
                "call_id": pending.invoke.call_id,
                "compensates": pending.invoke.compensates,
                "owner": pending.owner,
                "key": pending.key,
                "intent": pending.intent,
                "resource": pending.resource,
                "receipt": receipt,
                "events": [e["id"] for e in events],
                "at": self.clock,
            }
        )
        if self.outbox_mode and events:
            self._touch(Part.OUTBOX)
            self.outbox.extend({"event": e, "published": False} for e in events)
        if pending.key is not None:
            self._touch(Part.STORE)
            self.store.finish(
                self.tenant, pending.key, status="committed", receipt=receipt, now=self.clock
            )
        return ToolResult(status=ResultStatus.OK, receipt=dict(receipt), events=events)

    def _new_event(self, body: Mapping[str, Any]) -> dict[str, Any]:
        self.counters["event"] += 1
        return {"id": f"evt_{self.counters['event']}", **body}

    @staticmethod
    def intent_of(tool: Tool, arguments: Mapping[str, Any]) -> str:
        """The stable hash that says two requests are the same operation."""
        return stable_hash({"tool": tool.name, "arguments": intent_body(tool, arguments)})

    def lookup(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
        """The receipt of the latest committed operation with this intent, or None."""
        spec = self.contract.tool(tool)
        if spec is None:
            return None
        found = admission(spec, arguments)
        intent = found.intent if not found.problems else self.intent_of(spec, arguments)
        for op in reversed(self.operations):
            if op["tool"] == tool and op["intent"] == intent:
                return dict(op["receipt"])
        return None

    def key_record(self, key: str) -> IdempotencyRecord | None:
        """The idempotency store's live record of ``key`` (None once expired)."""
        return self.store.lookup(self.tenant, key, self.clock)

    def reconcile(self, receipts: Mapping[str, Mapping[str, Any]]) -> list[str]:
        """Receipts that match no committed operation, as readable records."""
        committed = {canonical_json(normalize(op["receipt"])) for op in self.operations}
        return [
            f"{call_id}: receipt {canonical_json(normalize(dict(r)))} matches no committed "
            "operation"
            for call_id, r in sorted(receipts.items())
            if canonical_json(normalize(dict(r))) not in committed
        ]

    # -- journals and operation claims -----------------------------------------------------

    def open_journal(self, instance: str) -> None:
        """Give an orchestrator instance its (empty) durable journal."""
        if instance not in self.journals:
            self._touch(Part.JOURNALS)
            self.journals[instance] = []

    def journal(self, instance: str) -> tuple[dict[str, Any], ...]:
        """A copy of ``instance``'s journal entries."""
        return tuple(dict(e) for e in self.journals[instance])

    def append_journal(self, instance: str, entry: Mapping[str, Any]) -> None:
        self._touch(Part.JOURNALS)
        self.journals[instance].append(dict(entry))

    def claim(self, operation: str, instance: str, entry: Mapping[str, Any]) -> str:
        """Insert ``operation`` under a unique key: the owner, this instance when the claim
        is new (its journal gets ``entry`` in the same transaction) or its own already."""
        owner = self.claims.get(operation)
        if owner is None:
            self._touch(Part.CLAIMS)
            owner = self.claims[operation] = instance
        if owner == instance:
            self.append_journal(instance, entry)
        return owner

    # -- messaging -------------------------------------------------------------------------

    def unpublished(self) -> dict[str, Any] | None:
        for row in self.outbox:
            if not row["published"]:
                return dict(row["event"])
        return None

    def mark_published(self, event_id: str) -> None:
        self._touch(Part.OUTBOX)
        for row in self.outbox:
            if row["event"]["id"] == event_id:
                row["published"] = True

    def enqueue(self, event: Mapping[str, Any], *, copies: int = 1) -> None:
        self._touch(Part.BROKER)
        for _ in range(copies):
            self.counters["delivery"] += 1
            self.broker.append(
                {
                    "delivery_id": f"d_{self.counters['delivery']}",
                    "event": dict(event),
                    "state": "ready",
                }
            )

    def ready_deliveries(self) -> list[dict[str, Any]]:
        return [d for d in self.broker if d["state"] == "ready"]

    def take(self, delivery_id: str) -> dict[str, Any]:
        self._touch(Part.BROKER)
        for delivery in self.broker:
            if delivery["delivery_id"] == delivery_id:
                delivery["state"] = "in_flight"
                return delivery
        raise KeyError(delivery_id)

    def ack(self, delivery_id: str, *, lost: bool) -> None:
        """A lost ACK leaves the message to be redelivered."""
        self._touch(Part.BROKER)
        for index, delivery in enumerate(self.broker):
            if delivery["delivery_id"] == delivery_id:
                if lost:
                    delivery["state"] = "ready"
                else:
                    del self.broker[index]
                return

    def requeue(self, delivery_id: str) -> None:
        """The consumer crashed holding this delivery: the broker redelivers it later."""
        self.ack(delivery_id, lost=True)

    def has_seen(self, event_id: str) -> bool:
        """Whether the consumer's dedupe table holds ``event_id``."""
        return event_id in self.seen

    def mark_seen(self, event_id: str) -> None:
        self._touch(Part.SEEN)
        self.seen.add(event_id)

    def apply_effect(
        self, event: Mapping[str, Any], *, record_seen: bool, seen_id: str | None = None
    ) -> None:
        """The consumer applies an event; with ``record_seen`` the dedupe record (the
        event id, or the consumer's own dedupe key ``seen_id``) commits in the same
        transaction."""
        event_id = str(event["id"])
        self._touch(Part.EFFECTS)
        self.effects[event_id] = self.effects.get(event_id, 0) + 1
        if record_seen:
            self.mark_seen(event_id if seen_id is None else seen_id)

    # -- views -----------------------------------------------------------------------------

    def committed_events(self) -> list[str]:
        return [e for op in self.operations for e in op["events"]]

    def business_state(self) -> dict[str, Any]:
        """The services' state alone: what a rejected plan must leave untouched."""
        return self.state

    def fingerprint(self) -> bytes:
        """A digest (128 bits) of every durable part of the world: what ``snapshot`` holds
        plus the id counters. Only the parts changed since the last call are serialised
        again, and of the append-only logs (operations, journals) only their new rows.

        With ``relative_time`` the digest is of the world *up to a shift in time*: the
        clock itself is left out, an idempotency record's lifetime is what is left of it
        (or "expired"), and an operation's commit time is left out. Nothing in the world
        depends on absolute times (only on expiries and wake-ups relative to the clock),
        so two states that differ by a shift have the same futures, shifted; with
        invariants that read no absolute time, the same verdicts."""
        stale = self._stale
        if stale and self.relative_time and stale & Part.CLOCK.bit:
            stale |= Part.STORE.bit  # remaining lifetimes moved with the clock
        if stale:
            digests = self._digests
            for index, part in enumerate(_FINGERPRINTED):
                if stale & part.bit:
                    digests[index] = self._digest_part(part)
            self._stale = 0
            self._print = digest(b"".join(digests))
        return self._print

    def _digest_part(self, part: Part) -> bytes:
        if part is Part.OPERATIONS:
            rows = self.operations
            if self.relative_time:
                rows = [{k: v for k, v in row.items() if k != "at"} for row in rows]
            return chain(self._log("operations", rows), self.counters["event"])
        if part is Part.JOURNALS:
            logs = [
                (name, self._log(f"journal:{name}", rows)) for name, rows in self.journals.items()
            ]
            return digest(serial(sorted(logs)))
        return digest(serial(self._part_data(part)))

    def _lifetime(self, record: IdempotencyRecord) -> tuple[Any, ...]:
        """A record's times as the fingerprint sees them (``relative_time``: only what is
        left of its lifetime, or None once expired)."""
        if not self.relative_time:
            return (record.created_at, record.expires_at)
        if record.status != "in_flight" and record.expires_at <= self.clock:
            return (None,)
        return (record.expires_at - self.clock,)

    def time_matters(self) -> bool:
        """Whether a clock jump would change more than the time: a stored record that has
        not expired yet (a jump expires it). Sleepers are the runner's to know."""
        return any(
            r.status != "in_flight" and r.expires_at > self.clock for r in self.store.records()
        )

    def _log(self, name: str, rows: list[dict[str, Any]]) -> bytes:
        """The running digest of an append-only list, extended by the rows added since."""
        done, running = self._logs.get(name, (0, b""))
        for row in rows[done:]:
            running = chain(running, row)
        self._logs[name] = (len(rows), running)
        return running

    def _part_data(self, part: Part) -> Any:
        if part is Part.CLOCK:
            return self.store.ttl if self.relative_time else (self.clock, self.store.ttl)
        if part is Part.SERVICES:
            return self.state
        if part is Part.STORE:
            return [
                [
                    r.tenant_id,
                    r.idempotency_key,
                    r.status,
                    *self._lifetime(r),
                    r.operation_type,
                    r.resource_id,
                    r.user_id,
                    r.normalized_intent_hash,
                    r.request_hash,
                    r.owner,
                    r.result_receipt,
                ]
                for r in self.store.records()
            ]
        if part is Part.CLAIMS:
            return sorted(self.claims.items())
        if part is Part.OUTBOX:
            return self.outbox
        if part is Part.BROKER:
            return (self.broker, self.counters["delivery"])
        if part is Part.SEEN:
            return sorted(self.seen)
        return sorted(self.effects.items())  # Part.EFFECTS

    def snapshot(self) -> dict[str, Any]:
        """Every durable part of the world as canonical JSON-ready data."""
        return {
            "clock": self.clock,
            "services": copy.deepcopy(self.state),
            "idempotency": self.store.snapshot(),
            "operations": copy.deepcopy(self.operations),
            "outbox": copy.deepcopy(self.outbox),
            "broker": copy.deepcopy(self.broker),
            "consumer": {"seen": sorted(self.seen), "effects": dict(sorted(self.effects.items()))},
            "journals": copy.deepcopy(self.journals),
            "claims": dict(sorted(self.claims.items())),
        }


def _check_receipt(service: str, tool: Tool, receipt: Mapping[str, Any]) -> None:
    """A receipt must carry every field the tool's compensation takes from it
    (``{"$receipt": FIELD}``): without it the undo can never be built, and a saga that can
    never run would pass as a MANUAL hand-off (``ServiceError``: the service's mistake)."""
    spec = tool.compensated_by
    if spec is None or spec.arguments is None:
        return
    for ref in spec.arguments.values():
        if isinstance(ref, ReceiptRef) and ref.field not in receipt:
            fields = ", ".join(sorted(map(str, receipt))) or "none"
            raise ServiceError(
                f"service {service!r} committed {tool.name} with a receipt that has no "
                f"{ref.field!r} field, which its compensation {spec.tool} takes "
                f"($receipt); the receipt's fields: {fields}"
            )
