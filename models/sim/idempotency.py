"""The idempotency store: one record per business operation key, per tenant.

The rules follow Stripe's idempotency keys and the IETF Idempotency-Key draft:

- only committed results and permanent business rejections are stored; timeouts and
  transient errors never are (the in-flight marker is dropped instead);
- the same key with the same intent replays the stored outcome;
- the same key with a different request is a conflict, and so is any request while the
  same key is in flight;
- a record expires ``ttl`` ticks of the logical clock after its outcome was stored (an
  in-flight marker never expires); a same-key request after that executes again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

__all__ = [
    "DEFAULT_TTL",
    "Begin",
    "IdempotencyRecord",
    "IdempotencyStore",
]

DEFAULT_TTL = 40
"""Ticks of the logical clock a record lives. Backoff sleeps are 1-8 ticks, so only a
deliberate clock jump (or a very long outage) outlives a key."""

RecordStatus = Literal["in_flight", "committed", "rejected"]


@attrs.frozen(kw_only=True)
class IdempotencyRecord:
    """The fields an idempotency record binds (tenant, key, operation, resource, user, intent)."""

    tenant_id: str
    user_id: str
    operation_type: str
    resource_id: str
    normalized_intent_hash: str
    idempotency_key: str
    request_hash: str
    created_at: int
    expires_at: int
    status: RecordStatus
    result_receipt: Mapping[str, Any] | None = None
    owner: str = ""

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        data["result_receipt"] = dict(self.result_receipt) if self.result_receipt else None
        return data


@attrs.frozen(kw_only=True)
class Begin:
    """What the store says when a keyed request arrives.

    ``proceed``: execute it (an in-flight marker is now held); ``replay``: return
    ``record``'s stored outcome; ``conflict``: refuse, ``reason`` says why.
    """

    decision: Literal["proceed", "replay", "conflict"]
    record: IdempotencyRecord | None = None
    reason: str = ""


def answer_to_live(
    record: IdempotencyRecord,
    *,
    key: str,
    operation_type: str,
    intent_hash: str,
    check_request_hash: bool,
) -> Begin:
    """What ``begin`` answers when a live ``record`` already holds ``key``: a conflict for
    another request under the key or for one still in flight, else a replay of its
    outcome. One rule for the model and every store held to it."""
    same = record.normalized_intent_hash == intent_hash and (
        record.operation_type == operation_type
    )
    if check_request_hash and not same:
        return Begin(
            decision="conflict",
            record=record,
            reason=f"key {key!r} was used for a different request "
            f"({record.operation_type}); refuse rather than guess",
        )
    if record.status == "in_flight":
        return Begin(
            decision="conflict",
            record=record,
            reason=f"key {key!r} is in flight (held by {record.owner})",
        )
    return Begin(decision="replay", record=record)


class IdempotencyStore:
    """Durable key -> record map; ``(tenant, key)`` identifies an operation across tools."""

    def __init__(self, *, ttl: int = DEFAULT_TTL, check_request_hash: bool = True) -> None:
        self.ttl = ttl
        self.check_request_hash = check_request_hash
        self._records: dict[tuple[str, str], IdempotencyRecord] = {}

    def copy(self) -> IdempotencyStore:
        twin = IdempotencyStore(ttl=self.ttl, check_request_hash=self.check_request_hash)
        twin._records = dict(self._records)
        return twin

    def lookup(self, tenant: str, key: str, now: int) -> IdempotencyRecord | None:
        """The live record for ``key``, or None when there is none or it has expired."""
        record = self._records.get((tenant, key))
        if record is None:
            return None
        if record.status != "in_flight" and record.expires_at <= now:
            return None
        return record

    def begin(
        self,
        *,
        tenant: str,
        key: str,
        user_id: str,
        operation_type: str,
        resource_id: str,
        intent_hash: str,
        request_hash: str,
        now: int,
        owner: str,
    ) -> Begin:
        record = self.lookup(tenant, key, now)
        if record is not None:
            return answer_to_live(
                record,
                key=key,
                operation_type=operation_type,
                intent_hash=intent_hash,
                check_request_hash=self.check_request_hash,
            )
        self._records[(tenant, key)] = IdempotencyRecord(
            tenant_id=tenant,
            user_id=user_id,
            operation_type=operation_type,
            resource_id=resource_id,
            normalized_intent_hash=intent_hash,
            idempotency_key=key,
            request_hash=request_hash,
            created_at=now,
            expires_at=now + self.ttl,
            status="in_flight",
            owner=owner,
        )
        return Begin(decision="proceed")

    def finish(
        self,
        tenant: str,
        key: str,
        *,
        status: Literal["committed", "rejected"],
        receipt: Mapping[str, Any],
        now: int,
    ) -> None:
        """Store the outcome of an in-flight request: a commit or a permanent rejection.
        The record lives ``ttl`` ticks from now: an in-flight marker never expires, so a
        request that is still being processed cannot be duplicated by a late retry."""
        record = self._records[(tenant, key)]
        self._records[(tenant, key)] = attrs.evolve(
            record, status=status, result_receipt=dict(receipt), expires_at=now + self.ttl
        )

    def abort(self, tenant: str, key: str) -> None:
        """Drop an in-flight marker: nothing committed (timeout, transient error, crash)."""
        record = self._records.get((tenant, key))
        if record is not None and record.status == "in_flight":
            del self._records[(tenant, key)]

    def records(self) -> list[IdempotencyRecord]:
        return [self._records[k] for k in sorted(self._records)]

    def snapshot(self) -> dict[str, Any]:
        return {f"{t}/{k}": self._records[(t, k)].to_json() for t, k in sorted(self._records)}
