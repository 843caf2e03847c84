"""txcheck: validate an LLM's whole tool-call plan, and model-check the policy that runs it.

This module is txcheck's public API (docs/api.md): everything a user needs to write and
check a policy, model a service, declare an invariant, validate and score proposals, and
run the model checker, importable as ``from txcheck import ...``. Names are imported
lazily on first use, so ``import txcheck`` (and ``txcheck.models``) stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from txcheck.exploration.auto import ExploreResult, explore
    from txcheck.exploration.loading import load_policy
    from txcheck.exploration.report import Counterexample, EngineReport
    from txcheck.exploration.schedule import Deviation, Deviations
    from txcheck.exploration.session import ErrorKind, Execution, Failure, Session, execute
    from txcheck.exploration.target import Bounds, Budget, Target
    from txcheck.exploration.verdict import ExploreOutcome, ExploreVerdict, verdict_of
    from txcheck.invariants import (
        DEFAULT_INVARIANTS,
        Invariant,
        Kind,
        Severity,
        always,
        eventually,
    )
    from txcheck.models.checkout import CHECKOUT
    from txcheck.models.choices import Action, Choice, FaultKind, Outcome, Part
    from txcheck.models.contract import ArgRef, Contract, ReceiptRef, Tool, Workflow
    from txcheck.models.contract_loader import default_contract, load_contract, parse_contract
    from txcheck.models.errors import InputError, PolicyError, TxcheckError, UnknownNameError
    from txcheck.models.fixture import WorldFixture, default_fixture, load_world, parse_world
    from txcheck.models.policies import BUILTIN_POLICIES, Guarded, Naive, builtin_policy
    from txcheck.models.policies.base import ActorGen, OrchestratorContext, Policy, undo_arguments
    from txcheck.models.policies.journal import TERMINAL_PHASES, JournalState, Phase
    from txcheck.models.proposal import Call, Plan, plan_from_json, plan_to_json
    from txcheck.models.proposal_parser import load_proposal, parse_proposal
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
        ResultStatus,
        SeenCheck,
        Sleep,
        ToolResult,
    )
    from txcheck.models.runner import RunView, Step
    from txcheck.models.services import Committed, Rejected, ServiceSet
    from txcheck.models.validation import validate
    from txcheck.models.verdict import Verdict, Violation
    from txcheck.models.world import World
    from txcheck.scoring.api import score
    from txcheck.scoring.scorer import ScoreReport
    from txcheck.testing import txcheck_testcase
    from txcheck.traces.document import (
        Trace,
        dumps_trace,
        load_trace,
        replay,
        target_of,
        trace_of,
        write_trace,
    )

_EXPORTS: dict[str, str] = {
    # policies and what they yield
    "Policy": "txcheck.models.policies.base",
    "ActorGen": "txcheck.models.policies.base",
    "OrchestratorContext": "txcheck.models.policies.base",
    "undo_arguments": "txcheck.models.policies.base",
    "JournalState": "txcheck.models.policies.journal",
    "Phase": "txcheck.models.policies.journal",
    "TERMINAL_PHASES": "txcheck.models.policies.journal",
    "Guarded": "txcheck.models.policies",
    "Naive": "txcheck.models.policies",
    "BUILTIN_POLICIES": "txcheck.models.policies",
    "builtin_policy": "txcheck.models.policies",
    "load_policy": "txcheck.exploration.loading",
    **dict.fromkeys(
        (
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
            "OutboxFetch",
            "OutboxMarkPublished",
            "Publish",
            "Reconcile",
            "Request",
            "ResultStatus",
            "SeenCheck",
            "Sleep",
            "ToolResult",
        ),
        "txcheck.models.requests",
    ),
    # invariants
    "always": "txcheck.invariants",
    "eventually": "txcheck.invariants",
    "Invariant": "txcheck.invariants",
    "Kind": "txcheck.invariants",
    "Severity": "txcheck.invariants",
    "DEFAULT_INVARIANTS": "txcheck.invariants",
    "RunView": "txcheck.models.runner",
    "Step": "txcheck.models.runner",
    "Part": "txcheck.models.choices",
    # services and the world
    "ServiceSet": "txcheck.models.services",
    "Committed": "txcheck.models.services",
    "Rejected": "txcheck.models.services",
    "CHECKOUT": "txcheck.models.checkout",
    "World": "txcheck.models.world",
    # contracts, fixtures, proposals, validation
    "Contract": "txcheck.models.contract",
    "Tool": "txcheck.models.contract",
    "ArgRef": "txcheck.models.contract",
    "ReceiptRef": "txcheck.models.contract",
    "Workflow": "txcheck.models.contract",
    "load_contract": "txcheck.models.contract_loader",
    "parse_contract": "txcheck.models.contract_loader",
    "default_contract": "txcheck.models.contract_loader",
    "WorldFixture": "txcheck.models.fixture",
    "load_world": "txcheck.models.fixture",
    "parse_world": "txcheck.models.fixture",
    "default_fixture": "txcheck.models.fixture",
    "Call": "txcheck.models.proposal",
    "Plan": "txcheck.models.proposal",
    "plan_from_json": "txcheck.models.proposal",
    "plan_to_json": "txcheck.models.proposal",
    "load_proposal": "txcheck.models.proposal_parser",
    "parse_proposal": "txcheck.models.proposal_parser",
    "validate": "txcheck.models.validation",
    "Verdict": "txcheck.models.verdict",
    "Violation": "txcheck.models.verdict",
    "ScoreReport": "txcheck.scoring.scorer",
    "score": "txcheck.scoring.api",
    # the model checker
    "Target": "txcheck.exploration.target",
    "Bounds": "txcheck.exploration.target",
    "Budget": "txcheck.exploration.target",
    "Session": "txcheck.exploration.session",
    "Execution": "txcheck.exploration.session",
    "Failure": "txcheck.exploration.session",
    "execute": "txcheck.exploration.session",
    "explore": "txcheck.exploration.auto",
    "ExploreResult": "txcheck.exploration.auto",
    "ExploreVerdict": "txcheck.exploration.verdict",
    "ExploreOutcome": "txcheck.exploration.verdict",
    "ErrorKind": "txcheck.exploration.session",
    "verdict_of": "txcheck.exploration.verdict",
    "Counterexample": "txcheck.exploration.report",
    "EngineReport": "txcheck.exploration.report",
    "Deviation": "txcheck.exploration.schedule",
    "Deviations": "txcheck.exploration.schedule",
    "Action": "txcheck.models.choices",
    "Choice": "txcheck.models.choices",
    "FaultKind": "txcheck.models.choices",
    "Outcome": "txcheck.models.choices",
    "Trace": "txcheck.traces.document",
    "load_trace": "txcheck.traces.document",
    "replay": "txcheck.traces.document",
    "target_of": "txcheck.traces.document",
    "trace_of": "txcheck.traces.document",
    "dumps_trace": "txcheck.traces.document",
    "write_trace": "txcheck.traces.document",
    "txcheck_testcase": "txcheck.testing",
    # errors
    "TxcheckError": "txcheck.models.errors",
    "InputError": "txcheck.models.errors",
    "PolicyError": "txcheck.models.errors",
    "UnknownNameError": "txcheck.models.errors",
}

__all__ = [
    "BUILTIN_POLICIES",
    "CHECKOUT",
    "DEFAULT_INVARIANTS",
    "TERMINAL_PHASES",
    "Ack",
    "Action",
    "ActorGen",
    "ApplyEffect",
    "ArgRef",
    "Bounds",
    "BrokerSend",
    "Budget",
    "Call",
    "Choice",
    "Claim",
    "Committed",
    "Contract",
    "Counterexample",
    "Delivery",
    "Deviation",
    "Deviations",
    "EngineReport",
    "ErrorKind",
    "Execution",
    "ExploreOutcome",
    "ExploreResult",
    "ExploreVerdict",
    "Failure",
    "FaultKind",
    "Guarded",
    "InputError",
    "Invariant",
    "Invoke",
    "JournalAppend",
    "JournalRead",
    "JournalState",
    "KeyLookup",
    "Kind",
    "Lookup",
    "MarkSeen",
    "Naive",
    "OrchestratorContext",
    "OutboxFetch",
    "OutboxMarkPublished",
    "Outcome",
    "Part",
    "Phase",
    "Plan",
    "Policy",
    "PolicyError",
    "Publish",
    "ReceiptRef",
    "Reconcile",
    "Rejected",
    "Request",
    "ResultStatus",
    "RunView",
    "ScoreReport",
    "SeenCheck",
    "ServiceSet",
    "Session",
    "Severity",
    "Sleep",
    "Step",
    "Target",
    "Tool",
    "ToolResult",
    "Trace",
    "TxcheckError",
    "UnknownNameError",
    "Verdict",
    "Violation",
    "Workflow",
    "World",
    "WorldFixture",
    "always",
    "builtin_policy",
    "default_contract",
    "default_fixture",
    "dumps_trace",
    "eventually",
    "execute",
    "explore",
    "load_contract",
    "load_policy",
    "load_proposal",
    "load_trace",
    "load_world",
    "parse_contract",
    "parse_proposal",
    "parse_world",
    "plan_from_json",
    "plan_to_json",
    "replay",
    "score",
    "target_of",
    "trace_of",
    "txcheck_testcase",
    "undo_arguments",
    "validate",
    "verdict_of",
    "write_trace",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'txcheck' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
