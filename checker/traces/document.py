"""Traces (``txcheck-trace/1``): a run as a self-contained, replayable JSON file.

A trace embeds the contract, the world fixture and the plans, then lists one entry per
choice the checker made (actor, action, outcome, the request and what was observed), and
the violations. No timestamps, no absolute paths, sorted keys: the same run writes the
same bytes. Replaying one (``txcheck.traces.replaying.replay``) feeds the recorded choices
back through the one runner; under another policy ``first_difference`` reports the first
step where the recorded choice is no longer possible.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from txcheck.exploration.kernel.description import TargetDescription
from txcheck.exploration.kernel.schedule import Deviation
from txcheck.exploration.kernel.session import Execution
from txcheck.exploration.kernel.target import Target
from txcheck.models.canonical import canonical_json, printable_json
from txcheck.models.errors import InputError
from txcheck.models.input_files import MAX_TRACE_BYTES, read_regular
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import parse_contract
from txcheck.models.plan.proposal import Plan, plan_from_json, plan_to_json
from txcheck.models.sim.choices import Choice
from txcheck.models.sim.fixture import WorldFixture, parse_world
from txcheck.models.sim.policies.base import Policy
from txcheck.models.strict_json import StrictJsonError, loads_strict
from txcheck.traces.atomic import write_atomically
from txcheck.traces.destination import Output, OutputPathError, check_destination
from txcheck.traces.trace_schema import check_structure

__all__ = [
    "STOPS_AT_HARM",
    "TRACE_FORMAT",
    "Trace",
    "TraceError",
    "TraceOutError",
    "check_writable",
    "content_digest",
    "dumps_trace",
    "is_trace_file",
    "load_trace",
    "target_of",
    "trace_of",
    "translate_deviations",
    "write_trace",
]

TRACE_FORMAT = "txcheck-trace/1"

STOPS_AT_HARM = "harm"
"""``stops_at`` of a trace whose run went on past a hygiene failure to the harm it led to
(harm first); a trace without it stopped at its first failure, and replays so."""


class TraceError(InputError):
    """A trace file that is not a readable ``txcheck-trace/1`` document."""


@attrs.frozen(kw_only=True)
class Trace:
    """A loaded trace: everything needed to re-execute the run."""

    policy: str
    contract: Contract
    fixture: WorldFixture
    plans: tuple[Plan, ...]
    choices: tuple[Choice, ...]
    document: Mapping[str, Any] = attrs.field(eq=False, repr=False)
    services: tuple[str, ...] = ()
    """The import paths of the user's services the run used (``module:NAME``)."""
    invariants: tuple[str, ...] = ()
    """The import paths of the user's invariants the run checked."""
    invariants_only: tuple[str, ...] = ()
    """The invariants the run was narrowed to, by name (empty: all)."""
    settles: bool = False
    """The run went on past a hygiene failure to see the harm (``stops_at: "harm"``);
    else it stopped at its first failure, and a replay must too."""
    skip_invariants: tuple[str, ...] = ()
    """The invariants the run did not check, by name."""
    stores: Mapping[str, str] = attrs.field(factory=dict)
    """The real stores the run kept records in, by kind (``journal``, ``idempotency``):
    ``module:Class`` each; empty for the in-memory world."""

    @property
    def violations(self) -> list[Mapping[str, Any]]:
        return list(self.document.get("violations", []))

    @property
    def description(self) -> TargetDescription:
        """The target the trace names: its policy, contract and world, the user's
        services and invariants, the selection and the stores, as recorded."""
        return TargetDescription(
            policy=self.policy,
            contract=self.contract,
            fixture=self.fixture,
            services=self.services,
            invariants=self.invariants,
            invariants_only=self.invariants_only,
            skip_invariants=self.skip_invariants,
            stores=self.stores,
        )


def trace_of(
    execution: Execution,
    *,
    target: TargetDescription | None = None,
    plans: Sequence[Plan],
    extra: Mapping[str, Any] | None = None,
    policy: str | None = None,
    contract: Contract | None = None,
    fixture: WorldFixture | None = None,
) -> dict[str, Any]:
    """The ``txcheck-trace/1`` document of an execution of the target ``target``
    describes (its import paths, selection and stores recorded with it) and ``extra``.
    ``policy``, ``contract`` and ``fixture`` instead of ``target`` still name a target
    by its parts, as before descriptions (no services, invariants or stores recorded
    but those ``extra`` gives)."""
    if target is None:
        if policy is None or contract is None or fixture is None:
            raise InputError(
                "give the target's description (target=), or policy=, contract= and fixture=",
                source="trace_of",
            )
        target = TargetDescription(policy=policy, contract=contract, fixture=fixture)
    elif policy is not None or contract is not None or fixture is not None:
        raise InputError(
            "give target= or policy=, contract= and fixture=, not both: the description "
            "names the policy, the contract and the world",
            source="trace_of",
        )
    document: dict[str, Any] = {
        "format": TRACE_FORMAT,
        "policy": target.policy,
        "contract": dict(target.contract.document),
        "world": dict(target.fixture.document),
        "plan": plan_to_json(plans[0]) if plans else None,
        "plans": [plan_to_json(p) for p in plans],
        "steps": [s.to_json() for s in execution.steps],
        "violations": [f.to_json() for f in execution.failures],
        "stops_at": STOPS_AT_HARM,
    }
    if execution.error:
        document["error"] = execution.error
    if extra:
        document.update(extra)
    document.update(target.record())
    document["digest"] = content_digest(document)
    return document


def content_digest(document: Mapping[str, Any]) -> str:
    """``sha256:`` and the SHA-256 of the document's canonical JSON, its digest left out:
    a trace edited after it was written no longer matches its digest."""
    body = {k: v for k, v in document.items() if k != "digest"}
    return "sha256:" + hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def dumps_trace(document: Mapping[str, Any]) -> str:
    return printable_json(json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False)) + "\n"


def write_trace(document: Mapping[str, Any], path: str | Path, *, force: bool = False) -> None:
    """Write the trace whole or not at all (``txcheck.traces.atomic``), after
    ``check_writable``: an existing file that is not a trace is replaced only with
    ``force``. Raises ``TraceOutError`` for such a path, ``OSError`` when writing fails."""
    check_writable(path, force=force)
    write_atomically(path, dumps_trace(document).encode("utf-8"))


class TraceOutError(OutputPathError):
    """A path a trace cannot or must not be written to."""


def is_trace_file(path: str | Path) -> bool:
    """Whether ``path`` holds a ``txcheck-trace/1`` document (a file larger than
    ``MAX_TRACE_BYTES`` is not read to find out)."""
    try:
        document = json.loads(read_regular(path, limit=MAX_TRACE_BYTES))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("format") == TRACE_FORMAT


TRACE_OUTPUT = Output(
    what="the trace", kind=f"{TRACE_FORMAT} file", option="--trace-out", ours=is_trace_file
)


def check_writable(path: str | Path, *, force: bool = False) -> None:
    """Raise ``TraceOutError`` (one line naming ``path``) unless a trace can be written
    there (``txcheck.traces.destination``): a non-empty file path in an existing folder
    that accepts new files, and no existing file other than a trace (any regular file
    with ``force``)."""
    check_destination(path, TRACE_OUTPUT, force=force, error=TraceOutError)


def _need(document: Mapping[str, Any], key: str, kind: type, source: str) -> Any:
    value = document.get(key)
    if not isinstance(value, kind):
        raise TraceError(
            f"'{key}' must be a {kind.__name__} (got {type(value).__name__})",
            source=source,
            path=f"$.{key}",
        )
    return value


def load_trace(path: str | Path) -> Trace:
    """Read a trace file; a malformed one is a one-line ``TraceError``: not strict JSON, not
    matching its digest, or (the digest being unkeyed, anyone can recompute it) not of the
    ``txcheck-trace/1`` structure (``txcheck.traces.trace_schema``), with its JSON path."""
    source = str(path)
    try:
        data = read_regular(path, limit=MAX_TRACE_BYTES, error=TraceError)
    except OSError as error:
        raise TraceError(f"cannot read trace ({error.strerror})", source=source) from None
    try:
        document = loads_strict(data)
    except StrictJsonError as error:
        raise TraceError(error.problem, source=source, line=error.line) from None
    if not isinstance(document, dict) or document.get("format") != TRACE_FORMAT:
        got = document.get("format") if isinstance(document, dict) else type(document).__name__
        raise TraceError(f"expected a {TRACE_FORMAT} document (got {got!r})", source=source)
    if "digest" not in document:
        raise TraceError(
            "the trace has no 'digest', so it cannot be told apart from an edited one "
            "(write it again with txcheck explore)",
            source=source,
        )
    if document["digest"] != content_digest(document):
        raise TraceError(
            "the trace does not match its digest: it was edited or damaged after it was written",
            source=source,
            path="$.digest",
        )
    check_structure(document, source=source, error=TraceError)  # the digest is unkeyed
    policy = _need(document, "policy", str, source)
    contract = parse_contract(_need(document, "contract", dict, source), source=source)
    fixture = parse_world(_need(document, "world", dict, source), source=source)
    try:
        plans = tuple(plan_from_json(p) for p in _need(document, "plans", list, source))
        choices = tuple(Choice.from_json(s) for s in _need(document, "steps", list, source))
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise TraceError(f"malformed plan or step ({error})", source=source) from None
    return Trace(
        policy=policy,
        contract=contract,
        fixture=fixture,
        plans=plans,
        choices=choices,
        document=document,
        services=_names(document, "services", source),
        invariants=_names(document, "invariants", source),
        invariants_only=_names(document, "invariants_only", source),
        skip_invariants=_names(document, "skip_invariants", source),
        stores=dict(document.get("stores", {})),
        settles=document.get("stops_at") == STOPS_AT_HARM,
    )


def _names(document: Mapping[str, Any], key: str, source: str) -> tuple[str, ...]:
    value = document.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TraceError(
            f"'{key}' must be a list of strings (got {type(value).__name__})",
            source=source,
            path=f"$.{key}",
        )
    return tuple(value)


def target_of(trace: Trace, policy: Policy, **settings: Any) -> Target:
    """The target a trace describes (its contract and world), under ``policy``."""
    return Target(policy=policy, contract=trace.contract, fixture=trace.fixture, **settings)


def translate_deviations(document: Mapping[str, Any]) -> list[Deviation]:
    """The trace's deviations as descriptions another policy can meet.

    Recorded choices are policy-specific: another policy's run has other steps, so raw
    replay diverges at once. A fault is not: "the charge's response is lost after commit",
    "the consumer crashes before applying an event", "the clock jumps" mean the same under
    any policy. Each deviating step becomes a ``Deviation`` on the same actor, action,
    outcome and request (tool and call, or request kind), applied in the recorded order.
    """
    deviations: list[Deviation] = []
    for step in document.get("steps", []):
        if not step.get("deviation"):
            continue
        action, actor, outcome = step["action"], step["actor"], step.get("outcome", "ok")
        request = step.get("request") or {}
        if action == "complete":
            deviations.append(
                Deviation(
                    action=action,
                    outcome=outcome,
                    actor=actor,
                    tool=request.get("tool"),
                    call=request.get("call"),
                )
            )
        elif action == "crash":
            lost = (step.get("observed") or {}).get("lost")
            deviations.append(Deviation(action=action, actor=actor, kind=lost))
        elif action in ("deliver", "jump", "wait"):
            deviations.append(Deviation(action=action, actor=actor))
        else:
            deviations.append(
                Deviation(
                    action=action,
                    outcome=outcome,
                    actor=actor,
                    kind=request.get("kind"),
                    tool=request.get("tool"),
                )
            )
    return deviations
