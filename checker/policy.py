"""What a policy author needs, in one module (as Hypothesis keeps stateful testing in
``hypothesis.stateful``): the ``Policy`` base class, the context ``orchestrate`` gets, the
requests a policy yields and the answers it gets back, the journal's phases, and the
reference policies to read or subclass. docs/policies.md walks through writing one.

Every name here is also exported by ``txcheck`` (tests/test_api_contract.py checks that
they are the same objects). Like ``txcheck.models``, this module is plain deterministic
Python: importing it loads no search engine, Hypothesis or rich.
"""

from __future__ import annotations

from txcheck.models.errors import PolicyError
from txcheck.models.plan.contract import ArgRef, Contract, ReceiptRef, Tool
from txcheck.models.plan.plan_verdicts import plan_verdict
from txcheck.models.plan.proposal import Call, Plan
from txcheck.models.sim.policies import BUILTIN_POLICIES, Guarded, Naive, builtin_policy
from txcheck.models.sim.policies.base import (
    UNDO_SUFFIX,
    ActorGen,
    OrchestratorContext,
    Policy,
    shares_resource,
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

# ruff keeps this list and the imports above equal (F401: imported but not listed; F822:
# listed but not defined).
__all__ = [
    "BUILTIN_POLICIES",
    "TERMINAL_PHASES",
    "UNDO_SUFFIX",
    "Ack",
    "ActorGen",
    "ApplyEffect",
    "ArgRef",
    "BrokerSend",
    "Call",
    "Claim",
    "Contract",
    "Delivery",
    "Guarded",
    "Invoke",
    "JournalAppend",
    "JournalRead",
    "JournalState",
    "KeyLookup",
    "Lookup",
    "MarkSeen",
    "Naive",
    "OrchestratorContext",
    "OutboxFetch",
    "OutboxMarkPublished",
    "Phase",
    "Plan",
    "Policy",
    "PolicyError",
    "Publish",
    "ReceiptRef",
    "Reconcile",
    "Request",
    "ResultStatus",
    "SeenCheck",
    "Sleep",
    "Tool",
    "ToolResult",
    "builtin_policy",
    "plan_verdict",
    "shares_resource",
    "undo_arguments",
]
