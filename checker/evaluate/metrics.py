"""The per-policy numbers of ``txcheck evaluate``: fault recovery, efficiency and vetoes.

Each is computed from a list of judged runs (``txcheck.evaluate.stage2.RunResult``), so the same
code gives one case's numbers and the whole file's (the runs of every case together).
Percentiles are nearest-rank over integers: deterministic, and always a value some run had.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from txcheck.evaluate.stage2 import VETOES, RunResult
from txcheck.models.sim.choices import FaultKind

__all__ = ["UNKNOWN_KINDS", "Efficiency", "Recovery", "VetoCount", "percentile"]

UNKNOWN_KINDS = frozenset({FaultKind.TIMEOUT_BEFORE_COMMIT, FaultKind.LOST_RESPONSE_AFTER_COMMIT})
"""Faults after which the orchestrator cannot know whether the call committed."""


def percentile(values: Sequence[int], p: int) -> int | None:
    """The nearest-rank ``p``-th percentile (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-p * len(ordered) // 100))
    return ordered[rank - 1]


@attrs.frozen(kw_only=True)
class Recovery:
    """How runs under faults ended.

    ``recovered``: a fault was injected and the run still completed with no invariant
    failed; ``unknown_resolved`` of ``unknown_injected``: runs with a timeout or a lost
    response that no invariant failed; ``compensated``: rolled back cleanly (no invariant
    failed); ``manual``: handed to a person; ``failed_runs``: runs with any failed
    invariant, and per invariant how many runs it failed in.
    """

    runs: int
    faulty: int
    completed: int
    recovered: int
    unknown_injected: int
    unknown_resolved: int
    compensated: int
    manual: int
    failed_runs: int
    failed_by_invariant: Mapping[str, int]

    @classmethod
    def of(cls, runs: Sequence[RunResult]) -> Recovery:
        faulty = [r for r in runs if r.fault is not None]
        unknown = [r for r in faulty if r.fault is not None and r.fault.kind in UNKNOWN_KINDS]
        by_invariant = Counter(name for r in runs for name in r.failed)
        return cls(
            runs=len(runs),
            faulty=len(faulty),
            completed=sum(r.outcome == "completed" for r in runs),
            recovered=sum(r.outcome == "completed" and r.ok for r in faulty),
            unknown_injected=len(unknown),
            unknown_resolved=sum(r.ok for r in unknown),
            compensated=sum(r.outcome == "compensated" and r.ok for r in runs),
            manual=sum(r.outcome == "manual" for r in runs),
            failed_runs=sum(not r.ok for r in runs),
            failed_by_invariant=dict(sorted(by_invariant.items())),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "faulty_runs": self.faulty,
            "completed": self.completed,
            "recovered": self.recovered,
            "unknown_injected": self.unknown_injected,
            "unknown_resolved": self.unknown_resolved,
            "compensated": self.compensated,
            "manual": self.manual,
            "failed_runs": self.failed_runs,
            "failed_by_invariant": dict(self.failed_by_invariant),
        }


_MEASURES = ("clock", "steps", "tool_calls", "retries")


@attrs.frozen(kw_only=True)
class Efficiency:
    """p50 and p95 over runs of: the logical clock at quiescence, scheduler steps, tool
    calls sent (attempts, compensations included) and retries (attempts after a call's
    first)."""

    runs: int
    p50: Mapping[str, int | None]
    p95: Mapping[str, int | None]

    @classmethod
    def of(cls, runs: Sequence[RunResult]) -> Efficiency:
        values = {m: [int(getattr(r, m)) for r in runs] for m in _MEASURES}
        return cls(
            runs=len(runs),
            p50={m: percentile(values[m], 50) for m in _MEASURES},
            p95={m: percentile(values[m], 95) for m in _MEASURES},
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            **{m: {"p50": self.p50[m], "p95": self.p95[m]} for m in _MEASURES},
        }


@attrs.frozen(kw_only=True)
class VetoCount:
    """Vetoes are counted, never averaged: how many runs had one, and per veto how many
    runs it fired in."""

    runs: int
    fired: Mapping[str, int]

    @classmethod
    def of(cls, runs: Sequence[RunResult], names: Sequence[str] = VETOES) -> VetoCount:
        """Count the vetoes in ``names`` (all by default) over ``runs``."""
        fired = Counter(v for r in runs for v in r.vetoes if v in names)
        return cls(
            runs=sum(any(v in names for v in r.vetoes) for r in runs),
            fired={v: fired[v] for v in VETOES if fired[v]},
        )

    @property
    def names(self) -> list[str]:
        return list(self.fired)

    def describe(self) -> str:
        """E.g. ``3 runs: double_charge x1, unauthorised_write x3``; ``-`` for none."""
        if not self.runs:
            return "-"
        fired = ", ".join(f"{name} x{n}" for name, n in self.fired.items())
        return f"{self.runs} run{'s' if self.runs != 1 else ''}: {fired}"

    def to_json(self) -> dict[str, Any]:
        return {"count": self.runs, "fired": self.names, "runs": dict(self.fired)}
