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
    from txcheck.exploration.kernel.report import Counterexample, EngineReport, ExploreResult
    from txcheck.exploration.kernel.schedule import Deviation, Deviations
    from txcheck.exploration.kernel.session import ErrorKind, Execution, Failure, Session, execute
    from txcheck.exploration.kernel.target import Bounds, Budget, Target
    from txcheck.exploration.kernel.verdict import ExploreOutcome, ExploreVerdict, verdict_of
    from txcheck.exploration.search import explore
    from txcheck.exploration.usercode.loading import load_policy
    from txcheck.invariants import (
        DEFAULT_INVARIANTS,
        Invariant,
        Kind,
        Severity,
        always,
        eventually,
    )
    from txcheck.models.errors import InputError, PolicyError, TxcheckError, UnknownNameError
    from txcheck.models.plan.contract import ArgRef, Contract, ReceiptRef, Tool, Workflow
    from txcheck.models.plan.contract_loader import default_contract, load_contract, parse_contract
    from txcheck.models.plan.proposal import Call, Plan, plan_from_json, plan_to_json
    from txcheck.models.plan.proposal_parser import load_proposal, parse_proposal
    from txcheck.models.plan.validation import validate
    from txcheck.models.plan.verdict import Verdict, Violation
    from txcheck.models.sim.checkout import CHECKOUT
    from txcheck.models.sim.choices import Action, Choice, FaultKind, Outcome, Part
    from txcheck.models.sim.fixture import WorldFixture, default_fixture, load_world, parse_world
    from txcheck.models.sim.policies import BUILTIN_POLICIES, Guarded, Naive, builtin_policy
    from txcheck.models.sim.policies.base import (
        ActorGen,
        OrchestratorContext,
        Policy,
        undo_arguments,
    )
    from txcheck.models.sim.policies.journal import TERMINAL_PHASES, JournalState, Phase
    from txcheck.models.sim.requests import (
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
    from txcheck.models.sim.runner import RunView, Step
    from txcheck.models.sim.services import Committed, Rejected, ServiceSet
    from txcheck.models.sim.world import World
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
    "Policy": "txcheck.models.sim.policies.base",
    "ActorGen": "txcheck.models.sim.policies.base",
    "OrchestratorContext": "txcheck.models.sim.policies.base",
    "undo_arguments": "txcheck.models.sim.policies.base",
    "JournalState": "txcheck.models.sim.policies.journal",
    "Phase": "txcheck.models.sim.policies.journal",
    "TERMINAL_PHASES": "txcheck.models.sim.policies.journal",
    "Guarded": "txcheck.models.sim.policies",
    "Naive": "txcheck.models.sim.policies",
    "BUILTIN_POLICIES": "txcheck.models.sim.policies",
    "builtin_policy": "txcheck.models.sim.policies",
    "load_policy": "txcheck.exploration.usercode.loading",
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
        "txcheck.models.sim.requests",
    ),
    # invariants
    "always": "txcheck.invariants",
    "eventually": "txcheck.invariants",
    "Invariant": "txcheck.invariants",
    "Kind": "txcheck.invariants",
    "Severity": "txcheck.invariants",
    "DEFAULT_INVARIANTS": "txcheck.invariants",
    "RunView": "txcheck.models.sim.runner",
    "Step": "txcheck.models.sim.runner",
    "Part": "txcheck.models.sim.choices",
    # services and the world
    "ServiceSet": "txcheck.models.sim.services",
    "Committed": "txcheck.models.sim.services",
    "Rejected": "txcheck.models.sim.services",
    "CHECKOUT": "txcheck.models.sim.checkout",
    "World": "txcheck.models.sim.world",
    # contracts, fixtures, proposals, validation
    "Contract": "txcheck.models.plan.contract",
    "Tool": "txcheck.models.plan.contract",
    "ArgRef": "txcheck.models.plan.contract",
    "ReceiptRef": "txcheck.models.plan.contract",
    "Workflow": "txcheck.models.plan.contract",
    "load_contract": "txcheck.models.plan.contract_loader",
    "parse_contract": "txcheck.models.plan.contract_loader",
    "default_contract": "txcheck.models.plan.contract_loader",
    "WorldFixture": "txcheck.models.sim.fixture",
    "load_world": "txcheck.models.sim.fixture",
    "parse_world": "txcheck.models.sim.fixture",
    "default_fixture": "txcheck.models.sim.fixture",
    "Call": "txcheck.models.plan.proposal",
    "Plan": "txcheck.models.plan.proposal",
    "plan_from_json": "txcheck.models.plan.proposal",
    "plan_to_json": "txcheck.models.plan.proposal",
    "load_proposal": "txcheck.models.plan.proposal_parser",
    "parse_proposal": "txcheck.models.plan.proposal_parser",
    "validate": "txcheck.models.plan.validation",
    "Verdict": "txcheck.models.plan.verdict",
    "Violation": "txcheck.models.plan.verdict",
    "ScoreReport": "txcheck.scoring.scorer",
    "score": "txcheck.scoring.api",
    # the model checker
    "Target": "txcheck.exploration.kernel.target",
    "Bounds": "txcheck.exploration.kernel.target",
    "Budget": "txcheck.exploration.kernel.target",
    "Session": "txcheck.exploration.kernel.session",
    "Execution": "txcheck.exploration.kernel.session",
    "Failure": "txcheck.exploration.kernel.session",
    "execute": "txcheck.exploration.kernel.session",
    "explore": "txcheck.exploration.search",
    "ExploreResult": "txcheck.exploration.kernel.report",
    "ExploreVerdict": "txcheck.exploration.kernel.verdict",
    "verdict_of": "txcheck.exploration.kernel.verdict",
    "Counterexample": "txcheck.exploration.kernel.report",
    "EngineReport": "txcheck.exploration.kernel.report",
    "Deviation": "txcheck.exploration.kernel.schedule",
    "Deviations": "txcheck.exploration.kernel.schedule",
    "Action": "txcheck.models.sim.choices",
    "Choice": "txcheck.models.sim.choices",
    "FaultKind": "txcheck.models.sim.choices",
    "Outcome": "txcheck.models.sim.choices",
    "ExploreOutcome": "txcheck.exploration.kernel.verdict",
    "ErrorKind": "txcheck.exploration.kernel.session",
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
