"""What an engine reports: what it covered (``Tally``), what it found (``Counterexample``)
and, for the systematic engine, the bound it proved. Engines share this shape, so
``txcheck explore`` puts them behind one command, one summary and one trace format."""

from __future__ import annotations

import enum
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs

from txcheck.exploration.kernel.session import Execution, Session
from txcheck.exploration.kernel.target import Deadline
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.choices import FaultKind

__all__ = [
    "TOOL_FAULTS",
    "Counterexample",
    "EngineReport",
    "ExploreResult",
    "PlanBound",
    "StopKind",
    "StopReason",
    "Tally",
    "outcome_of",
]


@attrs.frozen(kw_only=True)
class Counterexample:
    """A failing execution, the plans it ran, how many deviations it took, which engine
    (or scenario seed) first found the bug and which search, if any, shortened it."""

    found_by: str
    plans: tuple[Plan, ...] = attrs.field(eq=False)
    execution: Execution = attrs.field(eq=False)
    shortened_by: str | None = None

    @property
    def deviations(self) -> int:
        return self.execution.deviations

    @property
    def invariant(self) -> str:
        return self.execution.first or "divergence"

    def shortened(self, by: str, execution: Execution) -> Counterexample:
        """The same bug, as the shorter ``execution`` another search found."""
        return attrs.evolve(self, plans=execution.plans, execution=execution, shortened_by=by)

    def to_json(self) -> dict[str, Any]:
        return {
            "found_by": self.found_by,
            "shortened_by": self.shortened_by,
            "invariant": self.invariant,
            "deviations": self.deviations,
            "steps": len(self.execution.steps),
        }


def outcome_of(session: Session) -> str:
    """How one run ended, for coverage: the last journal phase of each instance."""
    phases = []
    run = session.run
    for instance in run.instances:
        entries = [e for e in run.world.journals.get(instance, []) if "phase" in e]
        last = entries[-1] if entries else {}
        phase = str(last.get("phase", "no-journal"))
        phases.append(f"{phase}:{last['outcome']}" if "outcome" in last else phase)
    return "+".join(phases)


@attrs.define
class Tally:
    """Counters across the runs of one search: runs and steps, deviations taken by kind
    (faults are the deviations that are not scheduling choices), states at which each
    invariant was checked, and how runs ended."""

    runs: int = 0
    steps: int = 0
    deviations: Counter[str] = attrs.field(factory=Counter)
    invariants: Counter[str] = attrs.field(factory=Counter)
    outcomes: Counter[str] = attrs.field(factory=Counter)
    evaluations: int = 0
    writes: int = 0
    """Operations committed across the runs (a search that committed none exercised
    nothing of what a policy does)."""
    started: float = attrs.field(factory=time.monotonic, eq=False)
    first_failure: float | None = attrs.field(default=None, eq=False)
    """When the first failing run ended (``time.monotonic``), for measurements only."""

    def deviation(self, kind: FaultKind | str) -> None:
        self.deviations[str(kind)] += 1

    def session(self, session: Session, *, outcome: bool = False) -> None:
        """Count one ended session's steps and checks (and, with ``outcome``, how it ended);
        ``runs`` is the engine's to count."""
        self.steps += len(session.steps)
        self.writes += len(session.run.world.operations)
        suite = session.target.suite
        for check in suite.safety:
            self.invariants[check.name] += session.safety_checks
        for check in suite.liveness:
            self.invariants[check.name] += session.liveness_checks
        self.evaluations += session.evaluations
        if self.first_failure is None and (session.failures or session.error is not None):
            self.first_failure = time.monotonic()
        if outcome and session.quiesced:
            self.outcomes[outcome_of(session)] += 1

    def add(self, other: Tally) -> None:
        """Add ``other``'s counts to these (work spread over workers, summed)."""
        self.runs += other.runs
        self.steps += other.steps
        self.deviations.update(other.deviations)
        self.invariants.update(other.invariants)
        self.outcomes.update(other.outcomes)
        self.evaluations += other.evaluations
        self.writes += other.writes

    def snapshot(self) -> dict[str, Any]:
        """The counts as plain data (what a worker sends back as progress)."""
        return {
            "runs": self.runs,
            "steps": self.steps,
            "deviations": dict(self.deviations),
            "invariants": dict(self.invariants),
            "outcomes": dict(self.outcomes),
            "evaluations": self.evaluations,
            "writes": self.writes,
        }

    @classmethod
    def of(cls, snapshot: Mapping[str, Any]) -> Tally:
        """The counts of a ``snapshot``."""
        return cls(
            runs=int(snapshot["runs"]),
            steps=int(snapshot["steps"]),
            deviations=Counter(snapshot["deviations"]),
            invariants=Counter(snapshot["invariants"]),
            outcomes=Counter(snapshot["outcomes"]),
            evaluations=int(snapshot["evaluations"]),
            writes=int(snapshot["writes"]),
        )

    def set_to(self, other: Tally) -> None:
        """Make these counts equal to ``other``'s (a live total, recomputed)."""
        self.runs = other.runs
        self.steps = other.steps
        self.deviations = Counter(other.deviations)
        self.invariants = Counter(other.invariants)
        self.outcomes = Counter(other.outcomes)
        self.evaluations = other.evaluations
        self.writes = other.writes

    def coverage(self) -> dict[str, dict[str, int]]:
        faults = {k: n for k, n in self.deviations.items() if FaultKind(k).is_fault}
        data = {
            "faults": dict(sorted(faults.items())),
            "deviations": dict(sorted(self.deviations.items())),
            "invariants": dict(sorted(self.invariants.items())),
        }
        if self.outcomes:
            data["outcomes"] = dict(sorted(self.outcomes.items()))
        return data


TOOL_FAULTS: tuple[FaultKind, ...] = (
    FaultKind.TIMEOUT_BEFORE_COMMIT,
    FaultKind.LOST_RESPONSE_AFTER_COMMIT,
    FaultKind.TRANSIENT_ERROR,
    FaultKind.PERMANENT_ERROR,
)
"""The faults a search injects into every call of a write: a plan set that committed
writes under a search of one deviation or more saw each of them, or something is wrong."""


class StopKind(enum.Enum):
    """Why a search stopped short of the bound it promised."""

    INTERRUPTED = "interrupted"
    TIME = "time"
    STATES = "states"


@attrs.frozen
class StopReason:
    """A search that stopped short: why (``kind``, for code) and how that is said to users
    (``said``, in notes and verdicts)."""

    kind: StopKind
    said: str

    @classmethod
    def at_deadline(cls, deadline: Deadline) -> StopReason:
        """The time ran out, or the user interrupted the search."""
        if deadline.interrupted:
            return cls(StopKind.INTERRUPTED, "interrupted")
        return cls(StopKind.TIME, "time budget exhausted")

    def note(self) -> str:
        """The line an engine report's notes carry for it."""
        return f"stopped early: {self.said}"

    def __str__(self) -> str:
        return self.said


class PlanCounters(Protocol):
    """What a plan set's systematic search counts as it goes (``PlanBound.of``)."""

    @property
    def label(self) -> str: ...

    @property
    def reached(self) -> int | None: ...

    @property
    def states(self) -> int: ...

    @property
    def stopped(self) -> str: ...

    @property
    def runs(self) -> int: ...

    @property
    def writes(self) -> int: ...

    @property
    def faults(self) -> Mapping[str, int]: ...

    @property
    def safety_checks(self) -> int: ...

    @property
    def liveness_checks(self) -> int: ...


@attrs.frozen(kw_only=True)
class PlanBound:
    """How far the systematic search got on one plan set: the last deviation bound it
    finished (None: not even zero), its distinct states, why it stopped short, and what it
    exercised: runs, writes committed (summed over runs) and faults injected by kind.
    ``expects_writes``: its plans are valid and the world's rules accept them, so a run
    that commits nothing exercised nothing (a plan set meant to be refused, a near-valid
    plan, is exercised by being refused)."""

    label: str
    reached: int | None
    states: int
    stopped: str = ""
    runs: int = 0
    writes: int = 0
    faults: Mapping[str, int] = attrs.field(factory=dict)
    expects_writes: bool = False
    problem: str = ""
    """The first violation of its plans (empty: valid), said when it committed nothing."""
    safety_checks: int = 0
    """States of its runs at which every safety invariant was checked."""
    liveness_checks: int = 0
    """Ends of its runs at which every liveness invariant was checked."""
    directed: int | None = None
    """The last level a directed search finished on it without a counterexample (not a
    bound: from 2 deviations on it tries only related deviations, ADR 013); None: none."""

    @classmethod
    def of(cls, search: PlanCounters, expected: tuple[bool, str]) -> PlanBound:
        """The bound of one plan set's search as its counters stand (in one process or over
        workers), with whether its plans should commit writes and their first violation
        (``expected``)."""
        return cls(
            label=search.label,
            reached=search.reached,
            states=search.states,
            stopped=search.stopped,
            runs=search.runs,
            writes=search.writes,
            faults=dict(search.faults),
            safety_checks=search.safety_checks,
            liveness_checks=search.liveness_checks,
            expects_writes=expected[0],
            problem=expected[1],
        )

    def unexercised(self) -> str | None:
        """Why no bound may be claimed for this plan set, or None: its plans should commit
        and no run did, or runs committed but a tool fault was never injected although a
        level with deviations was searched."""
        if not self.expects_writes or not self.runs:
            return None
        if not self.writes:
            why = (
                f"its plans do not pass validation: {self.problem}"
                if self.problem
                else "the policy refused or failed every run"
            )
            return f"plan set {self.label!r}: no run committed a write ({why})"
        if self.reached is not None and self.reached >= 1:
            missing = [str(k) for k in TOOL_FAULTS if not self.faults.get(str(k))]
            if missing:
                return f"plan set {self.label!r}: never injected {', '.join(missing)}"
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "plans": self.label,
            "exhaustive_bound": self.reached,
            "states": self.states,
            "stopped": self.stopped or None,
            "runs": self.runs,
            "writes": self.writes,
            "faults": dict(sorted(self.faults.items())),
            "checks": {"safety": self.safety_checks, "liveness": self.liveness_checks},
            "expects_writes": self.expects_writes,
            "problem": self.problem or None,
            "directed_to": self.directed,
        }


@attrs.frozen(kw_only=True)
class EngineReport:
    """What an engine covered and what it found.

    ``exhaustive_bound`` is the largest deviation bound for which every run was explored
    (systematic engine only); ``complete`` says the bound asked for was reached;
    ``coverage`` counts deviations by kind and the states each invariant was checked at;
    ``seconds`` is wall time for humans and is kept out of JSON results that must be
    reproducible.
    """

    engine: str
    runs: int
    steps: int
    counterexample: Counterexample | None = None
    states: int | None = None
    exhaustive_bound: int | None = None
    complete: bool = False
    coverage: Mapping[str, Mapping[str, int]] = attrs.field(factory=dict)
    seconds: float = 0.0
    notes: tuple[str, ...] = ()
    writes: int = 0
    bound: int | None = None
    """The deviation bound the engine was asked to search (the systematic engine)."""
    plans: tuple[PlanBound, ...] = ()
    """The bound reached on each plan set (the systematic engine)."""
    stopped: StopReason | None = None
    """Why the search stopped short of ``bound`` (the systematic engine), if it did."""

    @classmethod
    def tallied(
        cls,
        engine: str,
        tally: Tally,
        *,
        started: float,
        counterexample: Counterexample | None = None,
        notes: Sequence[str] = (),
        **only_some: Any,
    ) -> EngineReport:
        """The report of an engine that counted its work in ``tally`` (runs, steps,
        coverage, writes) since ``started`` (``time.monotonic()``), as every engine ends;
        ``only_some`` are the fields only some engines fill (states, bounds, plan sets)."""
        return cls(
            engine=engine,
            runs=tally.runs,
            steps=tally.steps,
            counterexample=counterexample,
            coverage=tally.coverage(),
            writes=tally.writes,
            seconds=time.monotonic() - started,
            notes=tuple(notes),
            **only_some,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "runs": self.runs,
            "steps": self.steps,
            "states": self.states,
            "exhaustive_bound": self.exhaustive_bound,
            "bound": self.bound,
            "complete": self.complete,
            "writes": self.writes,
            "plans": [p.to_json() for p in self.plans],
            "coverage": {k: dict(sorted(v.items())) for k, v in sorted(self.coverage.items())},
            "found": None if self.counterexample is None else self.counterexample.to_json(),
            "notes": list(self.notes),
        }


@attrs.frozen(kw_only=True)
class ExploreResult:
    """Every engine's report, in order, and the counterexample that stopped the search."""

    reports: tuple[EngineReport, ...]
    counterexample: Counterexample | None = None

    @property
    def found(self) -> bool:
        return self.counterexample is not None

    def coverage(self) -> dict[str, dict[str, int]]:
        """Coverage summed over the engines."""
        total: dict[str, dict[str, int]] = {}
        for report in self.reports:
            for section, counts in report.coverage.items():
                merged = total.setdefault(section, {})
                for key, count in counts.items():
                    merged[key] = merged.get(key, 0) + count
        return {s: dict(sorted(c.items())) for s, c in sorted(total.items())}
