"""The strict scorer: one result per case, plus a summary over every case.

Per case the whole plan is validated (every level that can run, every call), then the
proposed calls are aligned with the expected ones (``txcheck.scoring.matching``). A case passes only
when the plan is valid, the calls match exactly (typed values, no extras, no omissions, the
order when ``ordered``) and no forbidden tool is called. Partial credit lives in named
sub-metrics. The audited (legacy) score is computed next to it, for comparison.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import attrs

from txcheck.models.canonical import canonical_json
from txcheck.models.errors import InputError, ProposalFormatError
from txcheck.models.plan.business import NO_WORLD, BusinessCheck
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.proposal import Call, Plan
from txcheck.models.plan.proposal_parser import parse_proposal
from txcheck.models.plan.validation import proven_valid, validate
from txcheck.models.plan.verdict import LEVELS, Level, Violation
from txcheck.models.sim.checkout import CHECKOUT
from txcheck.models.sim.services import ServiceSet
from txcheck.models.sim.world_rules import business_check_from_doc
from txcheck.scoring.argument_diff import identical
from txcheck.scoring.case_contracts import CaseContracts, ScoringContext
from txcheck.scoring.cases import Case, CaseFile, ExpectedCall, LineError
from txcheck.scoring.expectations import any_call_violations, scorer_violations
from txcheck.scoring.legacy import legacy_score
from txcheck.scoring.matching import align, writes_in_order
from txcheck.scoring.patterns import normalizer
from txcheck.scoring.patterns import to_json as pattern_json
from txcheck.scoring.summary import Summary, SummaryBuilder

__all__ = [
    "CaseResult",
    "ScoreReport",
    "StrictResult",
    "Summary",
    "SummaryBuilder",
    "score_case",
    "score_cases",
    "score_file",
]


@attrs.frozen(kw_only=True)
class StrictResult:
    """The strict verdict on one case and the sub-metrics that explain it."""

    passed: bool
    veto: bool
    violations: tuple[Violation, ...]
    vetoes: tuple[str, ...] = ()
    tool_selection: float | None = None
    schema_valid: bool = False
    exact_arguments: float | None = None
    order: bool | None = None
    irrelevance: bool | None = None
    levels_checked: tuple[str, ...] = ()
    levels_skipped: Mapping[str, str] = attrs.field(factory=dict)
    alignment: tuple[tuple[int, str], ...] = ()

    @property
    def score(self) -> float:
        return 1.0 if self.passed else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "pass": self.passed,
            "score": 1.0 if self.passed else 0.0,
            "veto": self.veto,
            "violations": [v.to_json() for v in self.violations] if self.violations else [],
            "vetoes": list(self.vetoes),
            "tool_selection": self.tool_selection,
            "schema_valid": self.schema_valid,
            "exact_arguments": self.exact_arguments,
            "order": self.order,
            "irrelevance": self.irrelevance,
            "levels_checked": list(self.levels_checked),
            "levels_skipped": dict(self.levels_skipped),
            "alignment": [{"expected": i, "call": c} for i, c in self.alignment],
        }


@attrs.frozen(kw_only=True)
class CaseResult:
    """One scored case: strict result, legacy score and warnings about the case itself."""

    id: str
    line: int
    strict: StrictResult
    legacy: float
    warnings: tuple[Violation, ...] = ()
    normalize: tuple[str, ...] = ()

    @property
    def unreadable(self) -> bool:
        """True when the proposal was none of the recognised formats."""
        return any(v.code == "unreadable_proposal" for v in self.strict.violations)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "line": self.line,
            "strict": self.strict.to_json(),
            "legacy": {"score": self.legacy},
            "warnings": [w.to_json() for w in self.warnings] if self.warnings else [],
            "normalize": list(self.normalize),
        }


@attrs.frozen(kw_only=True)
class ScoreReport:
    """Everything ``txcheck score`` reports: scored cases, bad lines and the summary."""

    source: str
    cases: tuple[CaseResult, ...]
    errors: tuple[LineError, ...]
    summary: Summary

    @property
    def exit_code(self) -> int:
        """2 when any line was bad, else 3 when no case was scored (inconclusive), else 1
        when any case fails, else 0."""
        return exit_code(self.summary)

    def to_json(self) -> dict[str, Any]:
        return {
            "cases": [r.to_json() for r in self.cases],
            "errors": [e.to_json() for e in self.errors],
            "summary": self.summary.to_json(),
        }


def exit_code(summary: Summary) -> int:
    """2 when any line was bad, else 3 when no case was scored (inconclusive: nothing was
    shown to be right), else 1 when any case fails, else 0."""
    if summary.errors:
        return 2
    if not summary.cases:
        return 3
    return 0 if summary.passed == summary.cases else 1


_NO_WORLD = "no world fixture in the case (its 'world' field)"


def _business(case: Case, services: Sequence[ServiceSet]) -> BusinessCheck | None:
    """The business checker for the case's world fixture, run on ``services`` (``None``
    without a fixture: the level is skipped). A malformed fixture raises
    ``WorldFixtureError`` (the line becomes a bad line)."""
    if case.world is None:
        return None
    return business_check_from_doc(
        case.world, source=f"line {case.line} world", services=tuple(services)
    )


def _levels(
    checked: tuple[Level, ...], skipped: Mapping[str, str]
) -> tuple[tuple[str, ...], dict[str, str]]:
    """The levels checked and skipped, with the scorer's reason when business is skipped."""
    if skipped.get("business") == NO_WORLD:
        return checked, {**skipped, "business": _NO_WORLD}
    return checked, dict(skipped)


ExpectCache = dict[str, tuple[Violation, ...]]


def _expect_warnings(
    context: ScoringContext,
    case: Case,
    business: BusinessCheck | None,
    vouched: bool = False,
) -> tuple[Violation, ...]:
    """``expect_invalid`` when the expected calls, validated as a plan, are invalid.

    ``vouched`` says a valid proposal makes exactly the expected calls (``_repeats``), so
    the expectation is valid too. Most other expectations are shown valid by one linear
    pass. The rest (and those checked against a world) have a verdict that depends only on
    the contract, the expected calls and the world, so it is computed once per contract
    (several samples of one task, pass^k style, or one task asked of several models), not
    once per case.
    """
    calls = case.expect.calls
    if business is None:
        if vouched:
            return ()
        expected = [_Expected(_expect_id(i), c.name, c.example) for i, c in enumerate(calls)]
        if proven_valid(context.contract, expected):
            return ()
    key = canonical_json([[[c.name, pattern_json(c.arguments)] for c in calls], case.world])
    hit = context.expect_cache.get(key)
    if hit is None:
        plan = Plan(
            calls=tuple(
                Call(
                    id=_expect_id(i),
                    name=c.name,
                    index=i,
                    raw_arguments=c.example,
                    arguments=c.example,
                )
                for i, c in enumerate(calls)
            )
        )
        hit = _validate_expectation(context.contract, plan, business)
        context.remember(key, hit)
    return hit


class _Expected(NamedTuple):
    """An expected call as ``proven_valid`` reads it: lighter than a ``Call``, built for
    every case (a ``Call`` is built only when the expectation needs a closer look)."""

    id: str
    name: str
    arguments: Mapping[str, Any]
    depends_on: tuple[str, ...] = ()


def _repeats(plan: Plan, calls: tuple[ExpectedCall, ...]) -> bool:
    """Whether ``plan`` makes exactly the expected ``calls``: the same tools in the same
    order, arguments identical to expected arguments that hold no marker. Then alignment
    pairs them in order without a difference (``identical_alignment``), and, when the plan
    is valid and has no ``depends_on``, validation judges the expected plan alike (its
    ids differ, but both sides' are unique)."""
    if len(plan.calls) != len(calls):
        return False
    for call, want in zip(plan.calls, calls, strict=True):
        if call.name != want.name or not want.exact or not identical(call.arguments, want.example):
            return False
    return True


def _expect_id(index: int) -> str:
    return f"expect.calls[{index}]"


def _validate_expectation(
    contract: Contract, plan: Plan, business: BusinessCheck | None
) -> tuple[Violation, ...]:
    violations = validate(contract, plan, business=business, summary=False).violations
    if not violations:
        return ()
    detail = "; ".join(f"{v.call or 'plan'}: {v.code} ({v.message})" for v in violations)
    message = f"the expected calls are themselves invalid under the contract: {detail}"
    return (Violation(code="expect_invalid", level="scorer", call=None, message=message),)


def _unreadable(
    case: Case, error: ProposalFormatError, warnings: tuple[Violation, ...]
) -> CaseResult:
    """A case whose proposal is none of the recognised formats: kept, with score 0."""
    where = "$.proposal" + (error.path or "$")[1:]
    text = f"{where}: {error.problem}"
    violation = Violation(code="unreadable_proposal", level="json", call=None, message=text)
    skipped: dict[str, str] = dict.fromkeys(LEVELS[1:], "the proposal could not be read")
    no_calls = not case.expect.calls and not case.expect.any_call
    strict = StrictResult(
        passed=False,
        veto=False,
        violations=(violation,),
        tool_selection=None if no_calls else 0.0,
        order=False if case.expect.ordered else None,
        irrelevance=False if no_calls else None,
        levels_checked=("json",),
        levels_skipped=skipped,
    )
    return CaseResult(
        id=case.id,
        line=case.line,
        strict=strict,
        legacy=0.0,
        warnings=warnings,
        normalize=case.expect.normalize,
    )


def score_case(
    contract: Contract,
    case: Case,
    *,
    source: str = "<cases>",
    expect_cache: ExpectCache | None = None,
) -> CaseResult:
    """Score one case under ``contract`` (the case's own ``tools`` are not consulted here:
    ``score_cases`` resolves them). A malformed world fixture raises ``InputError``."""
    context = ScoringContext.of(contract)
    if expect_cache is not None:
        context.expect_cache = expect_cache
    return _score(context, case, source)


_SCHEMA_LEVELS = ("json", "schema")


def _score(
    context: ScoringContext, case: Case, source: str, services: Sequence[ServiceSet] = (CHECKOUT,)
) -> CaseResult:
    contract = context.contract
    business = _business(case, services)
    try:
        plan = parse_proposal(case.proposal, source=f"{source}:{case.line}")
    except ProposalFormatError as error:
        return _unreadable(case, error, _expect_warnings(context, case, business))
    verdict = validate(contract, plan, business=business, summary=False)
    found = verdict.violations
    # A proposal whose arguments break their schema rarely repeats the expectation; when it
    # does, the general road below gives the same result, so it is not looked for.
    schema_valid = not (found and any(v.level in _SCHEMA_LEVELS for v in found))
    repeats = schema_valid and _repeats(plan, case.expect.calls)
    vouched = repeats and not found and not any(c.depends_on for c in plan.calls)
    warnings = _expect_warnings(context, case, business, vouched)
    levels_checked, levels_skipped = _levels(verdict.levels_checked, verdict.levels_skipped)
    expected = [(c.name, c.arguments) for c in case.expect.calls]
    calls = plan.calls
    ordered = case.expect.ordered
    scorer: list[Violation]
    vetoes: list[str]
    aligned: tuple[tuple[int, str], ...]
    if case.expect.any_call:
        # a relevance question: any call is right, so nothing is paired or compared
        scorer, vetoes = any_call_violations(case.expect, plan)
        paired = exact = 0
        all_exact, out_of_order = True, False
        aligned = ()
    elif repeats:
        # The calls are the expected ones, in order: ``align`` would pair each with its own
        # (``identical_alignment``) and the scorer would find nothing to say about them.
        scorer, vetoes = [], []
        paired = exact = len(calls)
        all_exact, out_of_order = True, False
        aligned = tuple([(k, call.id) for k, call in enumerate(calls)])
    else:
        alignment = align(
            expected,
            [(c.name, c.arguments) for c in calls],
            key_args=context.key_args,
            norm=normalizer(case.expect.normalize),
        )
        if ordered and case.expect.writes_only:
            alignment = writes_in_order(alignment, expected, contract)
        scorer, vetoes = scorer_violations(contract, case.expect, plan, alignment)
        pairs = alignment.pairs
        paired, exact = len(pairs), [p.exact for p in pairs].count(True)
        all_exact, out_of_order = alignment.exact, bool(alignment.out_of_order)
        aligned = tuple([(p.expected, calls[p.proposed].id) for p in pairs])
    json_problems = tuple(
        [
            Violation(code="invalid_json", level="json", call=None, message=p)
            for p in case.json_problems
        ]
    )
    violations = json_problems + found + tuple(scorer) if scorer or json_problems else found
    ordered_ok = not (ordered and out_of_order)
    strict = StrictResult(
        passed=not violations and all_exact and ordered_ok,
        veto=bool(vetoes),
        violations=violations,
        vetoes=tuple(vetoes),
        tool_selection=_tool_selection(case, paired, bool(calls)),
        schema_valid=not json_problems and schema_valid,
        exact_arguments=exact / paired if paired else None,
        order=ordered_ok if ordered else None,
        irrelevance=(not calls) if not expected and not case.expect.any_call else None,
        levels_checked=levels_checked,
        levels_skipped=levels_skipped,
        alignment=aligned,
    )
    return CaseResult(
        id=case.id,
        line=case.line,
        strict=strict,
        legacy=legacy_score(plan, [(c.name, c.example) for c in case.expect.calls]),
        warnings=warnings,
        normalize=case.expect.normalize,
    )


def _tool_selection(case: Case, paired: int, called: bool) -> float | None:
    """Expected calls paired / expected calls; for ``any_call``, whether a call was made;
    ``None`` when no call is expected."""
    if case.expect.any_call:
        return 1.0 if called else 0.0
    expected = len(case.expect.calls)
    return paired / expected if expected else None


def score_cases(
    items: Iterable[Case | LineError],
    contracts: CaseContracts,
    *,
    source: str,
    services: Sequence[ServiceSet] = (CHECKOUT,),
) -> Iterator[CaseResult | LineError]:
    """Score cases as they come (a generator: nothing is held), passing bad lines through;
    a case's world fixture is judged by ``services`` (checkout's, and a user's own).

    A case whose ``tools`` are not a valid contract, or whose world fixture is malformed,
    becomes a bad line; the others are still scored.
    """
    for item in items:
        if isinstance(item, LineError):
            yield item
            continue
        try:
            context = contracts.for_tools(item.tools)
        except InputError as error:
            yield LineError(line=item.line, message=error.problem)
            continue
        try:
            yield _score(context, item, source, services)
        except InputError as error:
            yield LineError(line=item.line, message=f"'world': {error.problem}")


def score_file(
    contract: Contract | None, cases: CaseFile, services: Sequence[ServiceSet] = (CHECKOUT,)
) -> ScoreReport:
    """Score every case of a file (each under its own ``tools`` when it has them, else
    ``contract``); a case whose tools or world fixture is malformed becomes a bad line."""
    results: list[CaseResult] = []
    errors = list(cases.errors)
    scored = score_cases(
        cases.cases, CaseContracts(contract), source=cases.source, services=services
    )
    for item in scored:
        if isinstance(item, LineError):
            errors.append(item)
        else:
            results.append(item)
    errors.sort(key=lambda e: e.line)
    return ScoreReport(
        source=cases.source,
        cases=tuple(results),
        errors=tuple(errors),
        summary=Summary.of(results, len(errors)),
    )
