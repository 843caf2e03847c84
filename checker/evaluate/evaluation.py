"""``txcheck evaluate``: the model and the orchestration, scored separately.

Stage one is the strict score of ``txcheck.scoring.scorer``, unchanged. Stage two takes each
proposal that is *valid* (no violation at any validation level that ran; scorer-only
codes such as ``wrong_arguments`` do not stop it) and runs it in the sandbox under
``naive`` and under ``guarded``, over the fixed fault schedule of
``txcheck.evaluate.fault_schedule``. An invalid proposal is a stage-one failure and is not run; the
report says it was skipped and why. The reference for the final state is the case's
expected calls run under ``guarded`` with no fault (``txcheck.evaluate.stage2``).

The report keeps the two apart: *model errors* are stage-one failures; *orchestration
failures* are failed runs under a policy for proposals the model got right. ``naive`` is
expected to fail under faults (that is the comparison), so the exit code looks at stage
one and at ``guarded`` only.

Cases are evaluated as they are read (``evaluate_cases``): each one is scored, run and
handed on before the next line is read, and only its results are kept (not its proposal
or tools), so reading a file takes bounded memory.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from txcheck.evaluate.metrics import Efficiency, Recovery, VetoCount
from txcheck.evaluate.stage2 import (
    RECOVERY_VETOES,
    STATE_VETOES,
    Reference,
    RunResult,
    ScheduleResult,
    reference_of,
    run_schedule,
)
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.plansets.readiness import readiness_problem
from txcheck.invariants import DEFAULT_INVARIANTS, Invariant
from txcheck.models.canonical import canonical_json
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.proposal_parser import parse_proposal
from txcheck.models.sim.checkout import CHECKOUT
from txcheck.models.sim.fixture import WorldFixture, default_fixture, parse_world
from txcheck.models.sim.policies import Guarded
from txcheck.models.sim.services import ServiceSet
from txcheck.scoring.case_contracts import CaseContracts
from txcheck.scoring.cases import Case, CaseFile, LineError
from txcheck.scoring.scorer import CaseResult, ScoreReport, Summary, score_cases
from txcheck.traces.json_diff import json_diff

__all__ = [
    "GATE_POLICY",
    "POLICIES",
    "CaseEvaluation",
    "EvaluationReport",
    "PolicyEvaluation",
    "Sandbox",
    "evaluate_cases",
    "evaluate_file",
    "report_of",
    "skip_reason",
]

POLICIES: tuple[str, ...] = ("naive", "guarded")
GATE_POLICY = "guarded"
"""The policy whose failed runs fail the evaluation (exit 1); naive's are the baseline."""


@attrs.frozen(kw_only=True)
class PolicyEvaluation:
    """One proposal under one policy: the schedule's judged runs (fault-free run first)
    and the fault-free run's final state against the reference."""

    policy: str
    schedule: ScheduleResult
    final_state_match: bool | None
    state_diff: tuple[Mapping[str, Any], ...]
    reference_problem: str | None

    @property
    def runs(self) -> tuple[RunResult, ...]:
        return self.schedule.runs

    @property
    def fault_free(self) -> RunResult:
        return self.schedule.runs[0]

    @property
    def recovery(self) -> Recovery:
        return Recovery.of(self.runs)

    @property
    def efficiency(self) -> Efficiency:
        return Efficiency.of(self.runs)

    @property
    def vetoes(self) -> VetoCount:
        return VetoCount.of(self.runs)

    @property
    def failed(self) -> bool:
        return any(not r.ok for r in self.runs)

    def to_json(self) -> dict[str, Any]:
        clean = self.fault_free
        return {
            "schedule": {
                "default_steps": self.schedule.default_steps,
                "runs": len(self.runs),
                "faults": dict(self.schedule.faults),
            },
            "state_consistency": {
                "outcome": clean.outcome,
                "final_state_match": self.final_state_match,
                "reference_problem": self.reference_problem,
                "state_diff": [dict(d) for d in self.state_diff],
                "invariant_failures": list(clean.failed),
                "unexpected_side_effects": (
                    None if clean.unexpected is None else [e.to_json() for e in clean.unexpected]
                ),
                "vetoes": VetoCount.of(self.runs, STATE_VETOES).to_json(),
            },
            "fault_recovery": {
                **self.recovery.to_json(),
                "vetoes": VetoCount.of(self.runs, RECOVERY_VETOES).to_json(),
            },
            "efficiency": self.efficiency.to_json(),
            "flagged_runs": [r.to_json() for r in self.runs if r.failed or r.vetoes],
        }


@attrs.frozen(kw_only=True)
class CaseEvaluation:
    """One case: its stage-one result, and stage two per policy or why it was skipped."""

    id: str
    line: int
    stage1: CaseResult
    stage2: Mapping[str, PolicyEvaluation] | None
    skipped: str | None = None

    @property
    def model_error(self) -> bool:
        return not self.stage1.strict.passed

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "line": self.line,
            "stage1": self.stage1.to_json(),
            "stage2": (
                None
                if self.stage2 is None
                else {name: p.to_json() for name, p in self.stage2.items()}
            ),
            "skipped": self.skipped,
        }


def skip_reason(result: CaseResult) -> str | None:
    """Why stage two does not run this proposal (a violation at a validation level), or
    None when it is valid at every level that ran."""
    found = list(
        dict.fromkeys(
            f"{v.code} ({v.call})" if v.call else v.code
            for v in result.strict.violations
            if v.level != "scorer"
        )
    )
    if not found:
        return None
    if result.unreadable:
        return "the proposal could not be read (unreadable_proposal)"
    levels = sorted({v.level for v in result.strict.violations if v.level != "scorer"})
    return f"invalid at level {', '.join(levels)}: {', '.join(found)}"


@attrs.frozen(kw_only=True)
class Sandbox:
    """What stage two runs proposals with, besides the case's contract and world: the
    services that give tools behaviour and the invariants every run is held to."""

    services: tuple[ServiceSet, ...] = (CHECKOUT,)
    invariants: tuple[Invariant, ...] = DEFAULT_INVARIANTS


def _policy_evaluation(
    name: str,
    *,
    contract: Contract,
    plan: Plan,
    fixture: WorldFixture,
    ref: Reference,
    sandbox: Sandbox,
) -> PolicyEvaluation:
    schedule = run_schedule(
        name,
        contract=contract,
        plan=plan,
        fixture=fixture,
        reference=ref,
        services=sandbox.services,
        invariants=sandbox.invariants,
    )
    if ref.problem is not None:
        return PolicyEvaluation(
            policy=name,
            schedule=schedule,
            final_state_match=None,
            state_diff=(),
            reference_problem=ref.problem,
        )
    diff = json_diff(ref.state, schedule.final_state)
    return PolicyEvaluation(
        policy=name,
        schedule=schedule,
        final_state_match=not diff,
        state_diff=tuple(diff),
        reference_problem=None,
    )


ReferenceCache = OrderedDict[str, Reference]
_REFERENCES_KEPT = 256
"""References kept for reuse (least recently used dropped), so memory stays bounded."""


def _evaluate_case(
    contract: Contract,
    case: Case,
    *,
    result: CaseResult,
    source: str,
    cache: ReferenceCache,
    sandbox: Sandbox,
) -> CaseEvaluation | LineError:
    """Stage two of one case under ``contract`` (the case's own tools, or the file's);
    a bad line when its plans call a tool nothing gives behaviour to."""
    reason = skip_reason(result)
    if reason is not None:
        return CaseEvaluation(
            id=case.id, line=case.line, stage1=result, stage2=None, skipped=reason
        )
    fixture = (
        default_fixture()
        if case.world is None
        else parse_world(case.world, source=f"{source}:{case.line} world")
    )
    plan = parse_proposal(case.proposal, source=f"{source}:{case.line}")
    expected = [(c.name, c.example) for c in case.expect.calls]  # one accepted instance
    probe = Target(policy=Guarded(), contract=contract, fixture=fixture, services=sandbox.services)
    problem = readiness_problem(probe, [[plan], [Plan.of(*expected)]])
    if problem is not None:
        return LineError(line=case.line, message=f"stage 2 cannot run: {problem}")
    key = canonical_json([[[n, a] for n, a in expected], case.world, case.tools])
    if key in cache:
        cache.move_to_end(key)
    else:
        cache[key] = reference_of(contract, expected, fixture, sandbox.services)
        if len(cache) > _REFERENCES_KEPT:
            cache.popitem(last=False)
    stage2 = {
        name: _policy_evaluation(
            name, contract=contract, plan=plan, fixture=fixture, ref=cache[key], sandbox=sandbox
        )
        for name in POLICIES
    }
    return CaseEvaluation(id=case.id, line=case.line, stage1=result, stage2=stage2)


def _tables(cases: Sequence[CaseEvaluation], score: ScoreReport) -> dict[str, Any]:
    """The four tables over the whole file; the last three per policy."""
    s = score.summary
    stage1_vetoes = Counter(code for c in cases for code in c.stage1.strict.vetoes)
    tables: dict[str, Any] = {
        "call_accuracy": {
            "cases": s.cases,
            "passed": s.passed,
            "pass_rate": s.pass_rate,
            **dict(s.means),
            "vetoes": {"count": s.vetoes, "fired": dict(sorted(stage1_vetoes.items()))},
        },
        "state_consistency": {},
        "fault_recovery": {},
        "efficiency": {},
    }
    executed = [c for c in cases if c.stage2 is not None]
    for name in POLICIES:
        evals = [c.stage2[name] for c in executed if c.stage2 is not None and name in c.stage2]
        runs = [r for e in evals for r in e.runs]
        failing = Counter(n for e in evals for n in e.fault_free.failed)
        state_vetoes = VetoCount.of(runs, STATE_VETOES)
        recovery_vetoes = VetoCount.of(runs, RECOVERY_VETOES)
        tables["state_consistency"][name] = {
            "cases": len(evals),
            "compared": sum(e.final_state_match is not None for e in evals),
            "final_state_match": sum(e.final_state_match is True for e in evals),
            "invariant_failures": dict(sorted(failing.items())),
            "unexpected_side_effects": sum(bool(e.fault_free.unexpected) for e in evals),
            "vetoes": {
                "cases": sum(bool(VetoCount.of(e.runs, STATE_VETOES).runs) for e in evals),
                **state_vetoes.to_json(),
            },
        }
        tables["fault_recovery"][name] = {
            **Recovery.of(runs).to_json(),
            "vetoes": {
                "cases": sum(bool(VetoCount.of(e.runs, RECOVERY_VETOES).runs) for e in evals),
                **recovery_vetoes.to_json(),
            },
        }
        tables["efficiency"][name] = Efficiency.of(runs).to_json()
    return tables


@attrs.frozen(kw_only=True)
class EvaluationReport:
    """Everything ``txcheck evaluate`` reports."""

    source: str
    cases: tuple[CaseEvaluation, ...]
    errors: tuple[LineError, ...]
    score: ScoreReport = attrs.field(eq=False, repr=False)

    def failures(self, policy: str, *, model_right: bool) -> tuple[int, int]:
        """(cases, runs) with a failed run under ``policy``, among the executed proposals
        the model got right (``model_right``) or wrong."""
        evals = [
            c.stage2[policy]
            for c in self.cases
            if c.stage2 is not None and policy in c.stage2 and c.model_error != model_right
        ]
        return sum(e.failed for e in evals), sum(not r.ok for e in evals for r in e.runs)

    @property
    def exit_code(self) -> int:
        """2 when any line was bad; else 3 when no case was evaluated (inconclusive); else 1
        when any case fails stage one or ``guarded`` fails any run; else 0. naive's failed
        runs never change it."""
        if self.errors:
            return 2
        if not self.cases:
            return 3
        if any(c.model_error for c in self.cases):
            return 1
        gate = [c.stage2[GATE_POLICY] for c in self.cases if c.stage2 is not None]
        return 1 if any(e.failed for e in gate) else 0

    def summary(self) -> dict[str, Any]:
        executed = sum(c.stage2 is not None for c in self.cases)
        model_errors = sum(c.model_error for c in self.cases)

        def split(model_right: bool) -> dict[str, Any]:
            out = {}
            for name in POLICIES:
                cases, runs = self.failures(name, model_right=model_right)
                out[name] = {"cases": cases, "runs": runs}
            return out

        return {
            "cases": len(self.cases),
            "stage1_passed": len(self.cases) - model_errors,
            "model_errors": model_errors,
            "executed": executed,
            "skipped": len(self.cases) - executed,
            "orchestration_failures": split(True),
            "failures_on_model_errors": split(False),
            "errors": len(self.errors),
        }

    def tables(self) -> dict[str, Any]:
        return _tables(self.cases, self.score)

    def to_json(self) -> dict[str, Any]:
        return {
            "cases": [c.to_json() for c in self.cases],
            "tables": self.tables(),
            "errors": [e.to_json() for e in self.errors],
            "summary": self.summary(),
        }


def evaluate_cases(
    contract: Contract | None,
    items: Iterable[Case | LineError],
    *,
    source: str,
    sandbox: Sandbox | None = None,
) -> Iterator[CaseEvaluation | LineError]:
    """Evaluate cases as they come (a generator): each case is scored, then run, and
    yielded before the next item is taken. Bad lines pass through; a case whose tools or
    world fixture is malformed, or whose plans call a tool without behaviour, becomes one.
    A case with its own ``tools`` is scored and run under them, else under ``contract``."""
    contracts = CaseContracts(contract)
    chosen = sandbox or Sandbox()
    cache: ReferenceCache = OrderedDict()
    for item in items:
        if isinstance(item, LineError):
            yield item
            continue
        for result in score_cases((item,), contracts, source=source, services=chosen.services):
            if isinstance(result, LineError):
                yield result
                continue
            own = contracts.for_tools(item.tools).contract  # scoring resolved it already
            yield _evaluate_case(
                own, item, result=result, source=source, cache=cache, sandbox=chosen
            )


def report_of(source: str, items: Iterable[CaseEvaluation | LineError]) -> EvaluationReport:
    """The report over evaluated cases and bad lines (``evaluate_cases``' output)."""
    cases: list[CaseEvaluation] = []
    errors: list[LineError] = []
    for item in items:
        if isinstance(item, LineError):
            errors.append(item)
        else:
            cases.append(item)
    errors.sort(key=lambda e: e.line)
    stage1 = tuple(c.stage1 for c in cases)
    score = ScoreReport(
        source=source,
        cases=stage1,
        errors=tuple(errors),
        summary=Summary.of(stage1, len(errors)),
    )
    return EvaluationReport(source=source, cases=tuple(cases), errors=tuple(errors), score=score)


def evaluate_file(
    contract: Contract | None, cases: CaseFile, sandbox: Sandbox | None = None
) -> EvaluationReport:
    """Stage one, then stage two, on every case of a file read whole."""
    evaluated = evaluate_cases(contract, cases.cases, source=cases.source, sandbox=sandbox)
    return report_of(cases.source, [*evaluated, *cases.errors])
