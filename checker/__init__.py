"""txcheck: validate an LLM's whole tool-call plan, and model-check the policy that runs it.

This module is txcheck's public API (docs/api.md): everything a user needs to write and
check a policy, model a service, declare an invariant, validate and score proposals, and
run the model checker, importable as ``from txcheck import ...``; ``txcheck.policy`` gathers
what a policy author needs. Names are imported lazily on first use, so ``import txcheck``
(and ``txcheck.models``) stays light.

Every public name is listed once, in ``_EXPORTS`` below (module -> names); ``__all__`` and
the lazy ``__getattr__`` are derived from it. The ``TYPE_CHECKING`` block, which lets mypy
and editors see the names, is generated from it by ``python tests/api_contract.py --write``
and tests/test_api_contract.py fails when the two differ.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, tuple[str, ...]] = {
    # writing a policy (also ``txcheck.policy``)
    "txcheck.models.sim.policies.base": (
        "Policy",
        "ActorGen",
        "OrchestratorContext",
        "undo_arguments",
        "shares_resource",
        "UNDO_SUFFIX",
    ),
    "txcheck.models.plan.plan_verdicts": ("plan_verdict",),
    "txcheck.models.sim.policies.journal": ("JournalState", "Phase", "TERMINAL_PHASES"),
    "txcheck.models.sim.policies": ("Guarded", "Naive", "BUILTIN_POLICIES", "builtin_policy"),
    "txcheck.models.sim.requests": (
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
    "txcheck.exploration.usercode.loading": (
        "LoadedPolicy",
        "load_policy",
        "load_services",
        "load_invariants",
    ),
    # invariants
    "txcheck.invariants": (
        "always",
        "eventually",
        "Invariant",
        "Kind",
        "Severity",
        "DEFAULT_INVARIANTS",
    ),
    "txcheck.invariants.base": ("Applies", "Decorator", "Property"),
    "txcheck.models.sim.runner": ("Run", "RunView", "Step"),
    "txcheck.models.sim.history": ("History", "Attempt"),
    # services and the world
    "txcheck.models.sim.services": ("ServiceSet", "Committed", "Rejected", "Handler"),
    "txcheck.models.sim.checkout": ("CHECKOUT",),
    "txcheck.models.sim.stored": ("Database", "MemoryDatabase", "StoredWorld", "Stores"),
    "txcheck.models.sim.world": ("World",),
    # contracts, fixtures, proposals, validation, scoring
    "txcheck.models.plan.contract": (
        "Contract",
        "Tool",
        "ArgRef",
        "ReceiptRef",
        "Workflow",
        "Compensation",
        "Effect",
        "DeclaredBy",
    ),
    "txcheck.models.plan.contract_loader": ("load_contract", "parse_contract", "default_contract"),
    "txcheck.models.sim.fixture": ("WorldFixture", "load_world", "parse_world", "default_fixture"),
    "txcheck.models.plan.proposal": (
        "Call",
        "Plan",
        "ProposalFormat",
        "plan_from_json",
        "plan_to_json",
    ),
    "txcheck.models.plan.proposal_parser": ("load_proposal", "parse_proposal"),
    "txcheck.models.plan.business": ("BusinessCheck",),
    "txcheck.models.plan.validation": ("validate",),
    "txcheck.models.plan.verdict": ("Verdict", "Violation", "Level"),
    "txcheck.scoring.api": ("score",),
    "txcheck.scoring.scorer": ("ScoreReport", "CaseResult", "StrictResult"),
    "txcheck.scoring.reading": ("LineError",),
    "txcheck.scoring.summary": ("Summary",),
    # the model checker
    "txcheck.exploration.kernel.target": ("Target", "Bounds", "Budget", "Deadline"),
    "txcheck.exploration.kernel.description": ("TargetDescription",),
    "txcheck.exploration.kernel.session": (
        "Session",
        "Execution",
        "Failure",
        "Divergence",
        "ErrorKind",
        "Chooser",
        "execute",
    ),
    "txcheck.exploration.search": ("explore",),
    "txcheck.exploration.engines.auto": ("Seed",),
    "txcheck.exploration.kernel.context": ("SearchContext", "Tuning", "Observer"),
    "txcheck.exploration.kernel.workers": ("Workers", "InProcess", "Job"),
    "txcheck.exploration.spread.cluster": ("DaskWorkers", "local_workers", "cluster_workers"),
    "txcheck.exploration.kernel.report": (
        "ExploreResult",
        "EngineReport",
        "Counterexample",
        "StopReason",
        "StopKind",
        "PlanBound",
        "Tally",
    ),
    "txcheck.exploration.kernel.verdict": ("ExploreVerdict", "ExploreOutcome", "verdict_of"),
    "txcheck.exploration.kernel.schedule": ("Deviation", "Deviations"),
    "txcheck.models.sim.choices": ("Action", "Choice", "FaultKind", "Outcome", "Part"),
    "txcheck.traces.document": (
        "Trace",
        "TraceError",
        "load_trace",
        "target_of",
        "trace_of",
        "dumps_trace",
        "write_trace",
    ),
    "txcheck.traces.replaying": ("replay",),
    "txcheck.testing": ("txcheck_testcase",),
    # checking a durable store of your own (docs/stores.md)
    "txcheck.conformance": ("conform", "Conformance", "Mismatch"),
    "txcheck.models.stores.protocols": ("StoreBusy",),
    # errors
    "txcheck.models.errors": (
        "TxcheckError",
        "InputError",
        "ContractError",
        "ProposalFormatError",
        "WorldFixtureError",
        "UserCodeError",
        "PolicyError",
        "ServiceError",
        "StoreError",
        "InvariantError",
        "UnknownNameError",
    ),
}

_MODULE_OF: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)  # noqa: PLE0605

# BEGIN generated from _EXPORTS by `python tests/api_contract.py --write`
# isort: off
if TYPE_CHECKING:
    from txcheck.conformance import (
        Conformance as Conformance,
        Mismatch as Mismatch,
        conform as conform,
    )
    from txcheck.exploration.engines.auto import (
        Seed as Seed,
    )
    from txcheck.exploration.kernel.context import (
        Observer as Observer,
        SearchContext as SearchContext,
        Tuning as Tuning,
    )
    from txcheck.exploration.kernel.description import (
        TargetDescription as TargetDescription,
    )
    from txcheck.exploration.kernel.report import (
        Counterexample as Counterexample,
        EngineReport as EngineReport,
        ExploreResult as ExploreResult,
        PlanBound as PlanBound,
        StopKind as StopKind,
        StopReason as StopReason,
        Tally as Tally,
    )
    from txcheck.exploration.kernel.schedule import (
        Deviation as Deviation,
        Deviations as Deviations,
    )
    from txcheck.exploration.kernel.session import (
        Chooser as Chooser,
        Divergence as Divergence,
        ErrorKind as ErrorKind,
        Execution as Execution,
        Failure as Failure,
        Session as Session,
        execute as execute,
    )
    from txcheck.exploration.kernel.target import (
        Bounds as Bounds,
        Budget as Budget,
        Deadline as Deadline,
        Target as Target,
    )
    from txcheck.exploration.kernel.verdict import (
        ExploreOutcome as ExploreOutcome,
        ExploreVerdict as ExploreVerdict,
        verdict_of as verdict_of,
    )
    from txcheck.exploration.kernel.workers import (
        InProcess as InProcess,
        Job as Job,
        Workers as Workers,
    )
    from txcheck.exploration.search import (
        explore as explore,
    )
    from txcheck.exploration.spread.cluster import (
        DaskWorkers as DaskWorkers,
        cluster_workers as cluster_workers,
        local_workers as local_workers,
    )
    from txcheck.exploration.usercode.loading import (
        LoadedPolicy as LoadedPolicy,
        load_invariants as load_invariants,
        load_policy as load_policy,
        load_services as load_services,
    )
    from txcheck.invariants import (
        DEFAULT_INVARIANTS as DEFAULT_INVARIANTS,
        Invariant as Invariant,
        Kind as Kind,
        Severity as Severity,
        always as always,
        eventually as eventually,
    )
    from txcheck.invariants.base import (
        Applies as Applies,
        Decorator as Decorator,
        Property as Property,
    )
    from txcheck.models.errors import (
        ContractError as ContractError,
        InputError as InputError,
        InvariantError as InvariantError,
        PolicyError as PolicyError,
        ProposalFormatError as ProposalFormatError,
        ServiceError as ServiceError,
        StoreError as StoreError,
        TxcheckError as TxcheckError,
        UnknownNameError as UnknownNameError,
        UserCodeError as UserCodeError,
        WorldFixtureError as WorldFixtureError,
    )
    from txcheck.models.plan.business import (
        BusinessCheck as BusinessCheck,
    )
    from txcheck.models.plan.contract import (
        ArgRef as ArgRef,
        Compensation as Compensation,
        Contract as Contract,
        DeclaredBy as DeclaredBy,
        Effect as Effect,
        ReceiptRef as ReceiptRef,
        Tool as Tool,
        Workflow as Workflow,
    )
    from txcheck.models.plan.contract_loader import (
        default_contract as default_contract,
        load_contract as load_contract,
        parse_contract as parse_contract,
    )
    from txcheck.models.plan.plan_verdicts import (
        plan_verdict as plan_verdict,
    )
    from txcheck.models.plan.proposal import (
        Call as Call,
        Plan as Plan,
        ProposalFormat as ProposalFormat,
        plan_from_json as plan_from_json,
        plan_to_json as plan_to_json,
    )
    from txcheck.models.plan.proposal_parser import (
        load_proposal as load_proposal,
        parse_proposal as parse_proposal,
    )
    from txcheck.models.plan.validation import (
        validate as validate,
    )
    from txcheck.models.plan.verdict import (
        Level as Level,
        Verdict as Verdict,
        Violation as Violation,
    )
    from txcheck.models.sim.checkout import (
        CHECKOUT as CHECKOUT,
    )
    from txcheck.models.sim.choices import (
        Action as Action,
        Choice as Choice,
        FaultKind as FaultKind,
        Outcome as Outcome,
        Part as Part,
    )
    from txcheck.models.sim.fixture import (
        WorldFixture as WorldFixture,
        default_fixture as default_fixture,
        load_world as load_world,
        parse_world as parse_world,
    )
    from txcheck.models.sim.history import (
        Attempt as Attempt,
        History as History,
    )
    from txcheck.models.sim.policies import (
        BUILTIN_POLICIES as BUILTIN_POLICIES,
        Guarded as Guarded,
        Naive as Naive,
        builtin_policy as builtin_policy,
    )
    from txcheck.models.sim.policies.base import (
        UNDO_SUFFIX as UNDO_SUFFIX,
        ActorGen as ActorGen,
        OrchestratorContext as OrchestratorContext,
        Policy as Policy,
        shares_resource as shares_resource,
        undo_arguments as undo_arguments,
    )
    from txcheck.models.sim.policies.journal import (
        TERMINAL_PHASES as TERMINAL_PHASES,
        JournalState as JournalState,
        Phase as Phase,
    )
    from txcheck.models.sim.requests import (
        Ack as Ack,
        ApplyEffect as ApplyEffect,
        BrokerSend as BrokerSend,
        Claim as Claim,
        Delivery as Delivery,
        Invoke as Invoke,
        JournalAppend as JournalAppend,
        JournalRead as JournalRead,
        KeyLookup as KeyLookup,
        Lookup as Lookup,
        MarkSeen as MarkSeen,
        OutboxFetch as OutboxFetch,
        OutboxMarkPublished as OutboxMarkPublished,
        Publish as Publish,
        Reconcile as Reconcile,
        Request as Request,
        ResultStatus as ResultStatus,
        SeenCheck as SeenCheck,
        Sleep as Sleep,
        ToolResult as ToolResult,
    )
    from txcheck.models.sim.runner import (
        Run as Run,
        RunView as RunView,
        Step as Step,
    )
    from txcheck.models.sim.services import (
        Committed as Committed,
        Handler as Handler,
        Rejected as Rejected,
        ServiceSet as ServiceSet,
    )
    from txcheck.models.sim.stored import (
        Database as Database,
        MemoryDatabase as MemoryDatabase,
        StoredWorld as StoredWorld,
        Stores as Stores,
    )
    from txcheck.models.sim.world import (
        World as World,
    )
    from txcheck.models.stores.protocols import (
        StoreBusy as StoreBusy,
    )
    from txcheck.scoring.api import (
        score as score,
    )
    from txcheck.scoring.reading import (
        LineError as LineError,
    )
    from txcheck.scoring.scorer import (
        CaseResult as CaseResult,
        ScoreReport as ScoreReport,
        StrictResult as StrictResult,
    )
    from txcheck.scoring.summary import (
        Summary as Summary,
    )
    from txcheck.testing import (
        txcheck_testcase as txcheck_testcase,
    )
    from txcheck.traces.document import (
        Trace as Trace,
        TraceError as TraceError,
        dumps_trace as dumps_trace,
        load_trace as load_trace,
        target_of as target_of,
        trace_of as trace_of,
        write_trace as write_trace,
    )
    from txcheck.traces.replaying import (
        replay as replay,
    )
# isort: on
# END generated


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'txcheck' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_MODULE_OF])
